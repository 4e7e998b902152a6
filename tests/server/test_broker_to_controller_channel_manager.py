"""BrokerToControllerChannelManager over real sockets: tiny controllers in the test read each frame
with the controller's RPC schemas and answer as the test says. A request reaches the active
controller and its answer comes back; NOT_CONTROLLER or a dropped connection sends it again to
whichever node the provider names next; with no controller it times out; answers come in order.
RaftControllerNodeProvider maps the Raft leader's id to its voter address. And the lifecycle manager
over the channel, on its own KafkaEventQueue, through a broker's whole life."""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Callable

import pytest

from kafka_lite.clients.metadata import Node
from kafka_lite.common.errors import Errors
from kafka_lite.common.protocol.controller_messages import (
    ControllerApiKeys,
    encode_controller_response,
    parse_controller_request,
)
from kafka_lite.common.time import SYSTEM
from kafka_lite.metadata.broker_state import BrokerState
from kafka_lite.queue.kafka_event_queue import KafkaEventQueue
from kafka_lite.raft.raft_config import InetAddressSpec, RaftConfig
from kafka_lite.raft.tools.raft_manager import KafkaRaftManager
from kafka_lite.raft.tools.test_raft_server import ByteArraySerde
from kafka_lite.server.broker_lifecycle_manager import BrokerLifecycleManager
from kafka_lite.server.broker_to_controller_channel_manager import (
    BrokerToControllerChannelManager,
    ControllerNodeProvider,
    ControllerRequestCompletionHandler,
    RaftControllerNodeProvider,
)
from kafka_lite.server.kafka_config import KafkaConfig
from kafka_lite.utils.ports import free_ports
from tests.support.waiting import wait_until

HEARTBEAT_API = ControllerApiKeys.BROKER_HEARTBEAT

pytestmark = pytest.mark.integration

_SIZE = struct.Struct(">i")
HEARTBEAT = {
    "broker_id": 1, "broker_epoch": 1000, "current_metadata_offset": 42, "want_fence": False, "want_shut_down": False,
}  # fmt: skip


def _answer(error: Errors = Errors.NONE, **fields) -> dict:
    body = {"throttle_time_ms": 0, "error_code": error.code, "is_caught_up": True, "is_fenced": False}
    return {**body, "should_shut_down": False, **fields}


class TinyController:
    """A listener that decodes each request frame with the controller's schemas and answers with what
    ``respond(body)`` returns; None closes the connection instead of answering."""

    def __init__(self, node_id: int, port: int, respond: Callable[[dict], dict | None]) -> None:
        self.node = Node(node_id, "127.0.0.1", port)
        self.respond = respond
        self.received: list[dict] = []
        self._server = socket.create_server(("127.0.0.1", port))
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self._server.accept()
            except OSError:
                return
            threading.Thread(target=self._serve_connection, args=(connection,), daemon=True).start()

    def _serve_connection(self, connection: socket.socket) -> None:
        with connection:
            while (size := _read_exactly(connection, 4)) is not None:
                header, body = parse_controller_request(_read_exactly(connection, _SIZE.unpack(size)[0]))
                self.received.append(body)
                answer = self.respond(body)
                if answer is None:
                    return
                payload = encode_controller_response(
                    header.api_key, header.api_version, header.correlation_id, answer
                )
                connection.sendall(_SIZE.pack(len(payload)) + payload)

    def close(self) -> None:
        self._server.close()


def _read_exactly(connection: socket.socket, n: int) -> bytes | None:
    data = b""
    while len(data) < n:
        chunk = connection.recv(n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


class SettableNodeProvider(ControllerNodeProvider):
    def __init__(self, node: Node | None = None) -> None:
        self.node = node

    def get(self) -> Node | None:
        return self.node


class Recorder:
    """A completion handler that keeps what it heard."""

    def __init__(self) -> None:
        self.answers: list[dict] = []
        self.timeouts = 0
        self.handler = ControllerRequestCompletionHandler(
            on_complete=lambda response: self.answers.append(response.body), on_timeout=self._timed_out
        )

    def _timed_out(self) -> None:
        self.timeouts += 1


@pytest.fixture
def controllers():
    port = free_ports(2)
    made: list[TinyController] = []

    def make(node_id: int, respond: Callable[[dict], dict | None]) -> TinyController:
        made.append(TinyController(node_id, port + len(made), respond))
        return made[-1]

    yield make
    for controller in made:
        controller.close()


@pytest.fixture
def channel_for():
    channels: list[BrokerToControllerChannelManager] = []

    def make(
        provider: ControllerNodeProvider, retry_timeout_ms: int = 10_000
    ) -> BrokerToControllerChannelManager:
        channel = BrokerToControllerChannelManager(provider, SYSTEM, 1, "heartbeat", retry_timeout_ms, 5_000)
        channel.start()
        channels.append(channel)
        return channel

    yield make
    for channel in channels:
        channel.shutdown()


def test_a_request_reaches_the_active_controller_and_its_answer_comes_back(controllers, channel_for):
    controller = controllers(3000, lambda body: _answer(is_caught_up=body["current_metadata_offset"] >= 40))
    channel = channel_for(SettableNodeProvider(controller.node))
    recorder = Recorder()
    channel.send_request(HEARTBEAT_API, HEARTBEAT, recorder.handler)
    wait_until(lambda: recorder.answers, 10, "the controller's answer")
    assert controller.received == [HEARTBEAT]
    assert recorder.answers == [_answer(is_caught_up=True)]
    assert channel.request_thread.active_controller_address() == controller.node


def test_answers_come_back_in_the_order_the_requests_were_sent(controllers, channel_for):
    controller = controllers(3000, lambda body: _answer(is_caught_up=body["broker_epoch"] == 2))
    channel = channel_for(SettableNodeProvider(controller.node))
    recorder = Recorder()
    for epoch in (1, 2, 3):
        channel.send_request(HEARTBEAT_API, {**HEARTBEAT, "broker_epoch": epoch}, recorder.handler)
    wait_until(lambda: len(recorder.answers) == 3, 10, "three answers")
    assert [body["broker_epoch"] for body in controller.received] == [1, 2, 3]
    assert [answer["is_caught_up"] for answer in recorder.answers] == [False, True, False]


def test_not_controller_sends_the_request_to_the_new_controller(controllers, channel_for):
    provider = SettableNodeProvider()
    new_controller = controllers(3001, lambda body: _answer(is_caught_up=False))

    def resigned(body: dict) -> dict:
        provider.node = new_controller.node  # the quorum has elected 3001 by the time 3000 answers
        return _answer(Errors.NOT_CONTROLLER)

    old_controller = controllers(3000, resigned)
    provider.node = old_controller.node
    channel = channel_for(provider)
    recorder = Recorder()
    channel.send_request(HEARTBEAT_API, HEARTBEAT, recorder.handler)
    wait_until(lambda: recorder.answers, 10, "the new controller's answer")
    # The caller hears only the new controller's answer; NOT_CONTROLLER stayed inside the channel.
    assert recorder.answers == [_answer(is_caught_up=False)]
    assert old_controller.received == [HEARTBEAT] and new_controller.received == [HEARTBEAT]
    assert channel.request_thread.active_controller_address() == new_controller.node


def test_a_dropped_connection_sends_the_request_again_to_whoever_is_controller(controllers, channel_for):
    provider = SettableNodeProvider()
    new_controller = controllers(3001, lambda body: _answer())

    def crashed(body: dict) -> None:
        provider.node = new_controller.node
        return None  # the connection closes with the request unanswered

    old_controller = controllers(3000, crashed)
    provider.node = old_controller.node
    channel = channel_for(provider)
    recorder = Recorder()
    channel.send_request(HEARTBEAT_API, HEARTBEAT, recorder.handler)
    wait_until(lambda: recorder.answers, 10, "the answer after the resend")
    assert recorder.answers == [_answer()] and recorder.timeouts == 0
    assert old_controller.received == [HEARTBEAT] and new_controller.received == [HEARTBEAT]


def test_a_dropped_connection_to_a_controller_still_active_reconnects_to_it(controllers, channel_for):
    answers = iter([None, _answer(is_fenced=True)])  # drop the first request, answer the second
    controller = controllers(3000, lambda body: next(answers))
    channel = channel_for(SettableNodeProvider(controller.node))
    recorder = Recorder()
    channel.send_request(HEARTBEAT_API, HEARTBEAT, recorder.handler)
    wait_until(lambda: recorder.answers, 10, "the answer on the new connection")
    assert recorder.answers == [_answer(is_fenced=True)]
    assert controller.received == [HEARTBEAT, HEARTBEAT]


def test_with_no_controller_the_request_times_out_after_the_retry_timeout(channel_for):
    channel = channel_for(SettableNodeProvider(None), retry_timeout_ms=200)
    recorder = Recorder()
    channel.send_request(HEARTBEAT_API, HEARTBEAT, recorder.handler)
    wait_until(lambda: recorder.timeouts, 10, "the request's timeout")
    assert recorder.timeouts == 1 and recorder.answers == []
    assert channel.request_thread.queue_size() == 0


def test_a_request_before_start_is_refused():
    channel = BrokerToControllerChannelManager(SettableNodeProvider(None), SYSTEM, 1)
    with pytest.raises(RuntimeError, match="Cannot enqueue a request if the request thread is not running"):
        channel.send_request(HEARTBEAT_API, HEARTBEAT, Recorder().handler)


def _raft_voter(tmp_path, node_id: int, voters: dict[int, int]) -> KafkaRaftManager:
    """A real Raft voter of ``voters`` (id -> port), started."""
    connections = {i: InetAddressSpec("127.0.0.1", port) for i, port in voters.items()}
    config = RaftConfig(connections, 2_000, 20, 60_000, 60_000, 60_000, 5)
    manager = KafkaRaftManager(node_id, tmp_path / f"voter-{node_id}", config, ByteArraySerde())
    manager.startup()
    return manager


def test_raft_provider_names_the_raft_leaders_voter_address(tmp_path):
    port = free_ports(3)
    quorum_voters = [f"{i}@127.0.0.1:{port + i - 1}" for i in (1, 2, 3)]
    voter_nodes = RaftControllerNodeProvider.voter_nodes(quorum_voters)
    assert voter_nodes == [Node(i, "127.0.0.1", port + i - 1) for i in (1, 2, 3)]
    # Voter 1 of three, alone: no election can succeed, so there is no controller to name.
    lonely = _raft_voter(tmp_path / "three", 1, {i: port + i - 1 for i in (1, 2, 3)})
    try:
        provider = RaftControllerNodeProvider(lonely.client, voter_nodes, "CONTROLLER")
        assert lonely.client.leader_and_epoch().leader_id is None
        assert provider.get() is None
    finally:
        lonely.shutdown(timeout_ms=50)
    # Voter 2 as the only voter of its quorum elects itself: the provider names voter 2's address.
    sole = _raft_voter(tmp_path / "one", 2, {2: port + 1})
    try:
        provider = RaftControllerNodeProvider(sole.client, voter_nodes, "CONTROLLER")
        assert wait_until(provider.get, 10, "the Raft leader") == Node(2, "127.0.0.1", port + 1)
    finally:
        sole.shutdown(timeout_ms=200)


class TinyQuorumController:
    """Answers a broker as the quorum controller would, reduced to its decisions: registration gives
    epoch 7; a heartbeat is caught up from metadata offset 10, fenced while it asks to be, and may
    shut down as soon as it asks to."""

    def register(self, body: dict) -> dict:
        return {"throttle_time_ms": 0, "error_code": 0, "broker_epoch": 7}

    def heartbeat(self, body: dict) -> dict:
        return _answer(
            is_caught_up=body["current_metadata_offset"] >= 10,
            is_fenced=body["want_fence"],
            should_shut_down=body["want_shut_down"],
        )

    def respond(self, body: dict) -> dict:
        return self.register(body) if "incarnation_id" in body else self.heartbeat(body)


def test_a_brokers_life_over_the_channel_on_its_own_event_queue(controllers):
    """The lifecycle manager on a real KafkaEventQueue, its answers coming back on the channel's thread."""
    controller = controllers(3000, TinyQuorumController().respond)
    config = KafkaConfig({
        "process.roles": "broker", "node.id": 1, "log.dirs": "/tmp/foo",
        "controller.quorum.voters": "3000@127.0.0.1:9093", "controller.listener.names": "CONTROLLER",
        "listeners": "PLAINTEXT://localhost:9092",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        "broker.heartbeat.interval.ms": 20,
    })  # fmt: skip
    manager = BrokerLifecycleManager(config, SYSTEM, KafkaEventQueue(SYSTEM, "broker-1-lifecycle-"))
    channel = BrokerToControllerChannelManager(SettableNodeProvider(controller.node), SYSTEM, 1)
    offset = [0]
    listeners = [{"name": "PLAINTEXT", "host": "localhost", "port": 9092, "security_protocol": 0}]
    try:
        manager.start(lambda: offset[0], channel, "x4AJGXQSRnephtTZzujw4w", listeners, {})
        wait_until(lambda: manager.broker_epoch == 7, 10, "the broker epoch")
        assert manager.state == BrokerState.STARTING  # offset 0: not caught up
        offset[0] = 12
        manager.initial_catch_up_future.result(timeout=10)
        assert manager.state == BrokerState.RECOVERY
        manager.set_ready_to_unfence().result(timeout=10)
        assert manager.state == BrokerState.RUNNING
        manager.begin_controlled_shutdown()
        manager.controlled_shutdown_future.result(timeout=10)
        assert manager.state == BrokerState.SHUTTING_DOWN
        # Registration first, then heartbeats wanting fence until ready, and the last wanting to stop.
        assert "incarnation_id" in controller.received[0]
        heartbeats = controller.received[1:]
        assert (
            heartbeats[0]["want_fence"]
            and not heartbeats[-1]["want_fence"]
            and heartbeats[-1]["want_shut_down"]
        )
    finally:
        manager.close()
    assert not channel.request_thread.is_alive()
