"""BrokerLifecycleManager on a MockTime and a deterministic event queue, with a channel manager that
records each request and answers as the test says (Kafka's BrokerLifecycleManagerTest and its
MockBrokerToControllerChannelManager): registration retried until answered, the state through
STARTING, RECOVERY and RUNNING, want_fence until the broker is ready, a controlled shutdown's
want_shut_down until should_shut_down, heartbeats at the interval and no faster. Then the same
manager against the QuorumController itself, through a channel that hands each request to the
active controller in-process."""

from __future__ import annotations

import random
import uuid
from concurrent.futures import Future
from dataclasses import dataclass

import pytest

from kafka_lite.clients.network_client import ClientRequest, ClientResponse
from kafka_lite.common.errors import Errors
from kafka_lite.common.protocol.controller_messages import ControllerApiKeys
from kafka_lite.common.time import MockTime
from kafka_lite.metadata.broker_state import BrokerState
from kafka_lite.metadata.version_range import VersionRange
from kafka_lite.server.broker_lifecycle_manager import BrokerLifecycleManager, ExponentialBackoff
from kafka_lite.server.broker_to_controller_channel_manager import (
    ControllerRequestCompletionHandler,
)
from kafka_lite.server.kafka_config import KafkaConfig
from kafka_lite.testing.deterministic_event_queue import DeterministicEventQueue
from kafka_lite.testing.quorum_controller_test_env import CLUSTER_ID as ENV_CLUSTER_ID
from kafka_lite.testing.quorum_controller_test_env import QuorumControllerTestEnv

REGISTRATION_API = ControllerApiKeys.BROKER_REGISTRATION
HEARTBEAT_API = ControllerApiKeys.BROKER_HEARTBEAT

pytestmark = pytest.mark.unit

CLUSTER_ID = "x4AJGXQSRnephtTZzujw4w"
LISTENERS = [{"name": "PLAINTEXT", "host": "localhost", "port": 9092, "security_protocol": 0}]
HEARTBEAT_INTERVAL_MS = 2000
SESSION_TIMEOUT_MS = 9000
REGISTRATION_TIMEOUT_MS = 300_000


@dataclass
class SentRequest:
    api: object
    body: dict
    handler: ControllerRequestCompletionHandler


class MockChannelManager:
    """Records what the manager sends; the test answers each request (or lets it time out)."""

    def __init__(self) -> None:
        self.sent: list[SentRequest] = []
        self.started = False
        self.shut_down = False

    def start(self) -> None:
        self.started = True

    def shutdown(self) -> None:
        self.shut_down = True

    def send_request(self, api, body: dict, handler: ControllerRequestCompletionHandler) -> None:
        self.sent.append(SentRequest(api, body, handler))

    def take(self, api) -> dict:
        """The one request sent since the last take, which must be of ``api``; it stays to be answered."""
        assert len(self.sent) == 1, f"expected one request of {api.name} waiting, found {self.sent}"
        assert self.sent[0].api == api, f"expected {api.name}, the manager sent {self.sent[0].api.name}"
        return self.sent[0].body

    def answer(self, **body) -> None:
        request = self.sent.pop(0)
        client_request = ClientRequest("3000", request.api, 0, request.body)
        request.handler.on_complete(ClientResponse(client_request, 0, {"throttle_time_ms": 0, **body}))

    def time_out(self) -> None:
        self.sent.pop(0).handler.on_timeout()


class Context:
    def __init__(self) -> None:
        self.time = MockTime()
        self.queue = DeterministicEventQueue(self.time)
        self.channel = MockChannelManager()
        self.highest_metadata_offset = 0
        self.manager_config = KafkaConfig({
            "process.roles": "broker", "node.id": 1, "broker.rack": "rack-a", "log.dirs": "/tmp/foo",
            "controller.quorum.voters": "2@localhost:9093", "controller.listener.names": "CONTROLLER",
            "listeners": "PLAINTEXT://localhost:9092",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "initial.broker.registration.timeout.ms": REGISTRATION_TIMEOUT_MS,
            "broker.heartbeat.interval.ms": HEARTBEAT_INTERVAL_MS,
            "broker.session.timeout.ms": SESSION_TIMEOUT_MS,
        })  # fmt: skip
        # Jitter drawn from a seeded generator: the backoffs below are checked against their bounds.
        self.manager = BrokerLifecycleManager(self.manager_config, self.time, self.queue, random.Random(7))

    def start(self) -> None:
        self.manager.start(lambda: self.highest_metadata_offset, self.channel, CLUSTER_ID, LISTENERS, {})
        self.queue.run_pending()

    def advance(self, ms: int) -> None:
        self.time.sleep(ms)
        self.queue.run_pending()

    def answer(self, **body) -> None:
        self.channel.answer(error_code=0, **body)
        self.queue.run_pending()

    def register(self, epoch: int = 1000) -> None:
        self.start()
        self.channel.take(REGISTRATION_API)
        self.answer(broker_epoch=epoch)

    def heartbeat(
        self, *, is_caught_up: bool = False, is_fenced: bool = True, should_shut_down: bool = False
    ) -> dict:
        body = self.channel.take(HEARTBEAT_API)
        self.answer(is_caught_up=is_caught_up, is_fenced=is_fenced, should_shut_down=should_shut_down)
        return body

    def to_running(self) -> None:
        self.register()
        self.heartbeat(is_caught_up=True)
        self.advance(10)
        self.heartbeat(is_caught_up=True, is_fenced=False)
        assert self.manager.state == BrokerState.RUNNING

    def nothing_sent_until(self, ms: int) -> None:
        """Advance to one ms before ``ms`` from now and check that nothing went out; then advance the
        last ms."""
        self.advance(ms - 1)
        assert self.channel.sent == [], (
            f"a request went out {ms - 1} ms after the last answer: {self.channel.sent}"
        )
        self.advance(1)


@pytest.fixture
def context() -> Context:
    return Context()


def test_broker_state_values_are_kafkas_and_an_unknown_value_is_unknown():
    assert [(s.name, s.value) for s in BrokerState] == [
        ("NOT_RUNNING", 0), ("STARTING", 1), ("RECOVERY", 2), ("RUNNING", 3),
        ("PENDING_CONTROLLED_SHUTDOWN", 6), ("SHUTTING_DOWN", 7), ("UNKNOWN", 127),
    ]  # fmt: skip
    assert BrokerState.from_value(3) is BrokerState.RUNNING
    assert BrokerState.from_value(4) is BrokerState.UNKNOWN


def test_exponential_backoff_doubles_up_to_the_maximum_within_its_jitter():
    exact = ExponentialBackoff(100, 2, 9000, 0.0)
    assert [exact.backoff(n) for n in range(8)] == [100, 200, 400, 800, 1600, 3200, 6400, 9000]
    jittered = ExponentialBackoff(100, 2, 9000, 0.02, random.Random(1))
    draws = [jittered.backoff(3) for _ in range(50)]
    assert all(784 <= d <= 816 for d in draws) and len(set(draws)) > 1
    assert ExponentialBackoff(500, 2, 100, 0.02).backoff(5) == 500  # no room to grow: a constant


def test_create_start_and_close(context):
    assert context.manager.state == BrokerState.NOT_RUNNING
    context.start()
    assert context.manager.state == BrokerState.STARTING
    assert context.channel.started
    context.manager.close()
    assert context.manager.state == BrokerState.SHUTTING_DOWN
    assert context.channel.shut_down
    assert context.manager.controlled_shutdown_future.done()
    assert context.manager.initial_catch_up_future.cancelled()
    assert context.manager.initial_unfence_future.cancelled()


def test_registration_carries_the_broker_and_a_fresh_incarnation(context):
    context.start()
    body = context.channel.take(REGISTRATION_API)
    assert body == {
        "broker_id": 1, "cluster_id": CLUSTER_ID, "incarnation_id": context.manager.incarnation_id,
        "listeners": LISTENERS, "features": [], "rack": "rack-a",
    }  # fmt: skip
    assert isinstance(body["incarnation_id"], uuid.UUID)
    assert Context().manager.incarnation_id != context.manager.incarnation_id


def test_registration_lists_the_features_the_broker_supports(context):
    features = {"metadata.version": VersionRange(1, 7), "other.feature": VersionRange(0, 2)}
    context.manager.start(lambda: 0, context.channel, CLUSTER_ID, LISTENERS, features)
    context.queue.run_pending()
    assert context.channel.take(REGISTRATION_API)["features"] == [
        {"name": "metadata.version", "min_supported_version": 1, "max_supported_version": 7},
        {"name": "other.feature", "min_supported_version": 0, "max_supported_version": 2},
    ]


def test_registration_is_retried_with_backoff_until_answered(context):
    context.start()
    context.channel.take(REGISTRATION_API)
    context.channel.answer(error_code=Errors.DUPLICATE_BROKER_REGISTRATION.code, broker_epoch=-1)
    context.queue.run_pending()
    # The first retry after 100 ms give or take 2%, the second after 200 ms: only then a new request.
    context.nothing_sent_until(98)
    context.advance(4)
    context.channel.take(REGISTRATION_API)
    context.channel.time_out()  # the channel could not reach a controller in time
    context.queue.run_pending()
    context.nothing_sent_until(196)
    context.advance(8)
    context.channel.take(REGISTRATION_API)
    assert context.manager.broker_epoch == -1 and context.manager.state == BrokerState.STARTING
    context.answer(broker_epoch=1000)
    assert context.manager.broker_epoch == 1000
    # Registered: the first heartbeat goes at once, carrying the epoch.
    assert context.channel.take(HEARTBEAT_API)["broker_epoch"] == 1000


def test_without_an_epoch_in_time_the_manager_shuts_down(context):
    context.start()
    for _ in range(40):  # the controller keeps refusing; each retry waits longer, up to 9 s
        context.channel.answer(error_code=Errors.DUPLICATE_BROKER_REGISTRATION.code, broker_epoch=-1)
        context.queue.run_pending()
        context.advance(SESSION_TIMEOUT_MS + 200)
        if context.manager.state != BrokerState.STARTING:
            break
    assert context.time.nanoseconds() >= REGISTRATION_TIMEOUT_MS * 1_000_000
    assert context.manager.state == BrokerState.SHUTTING_DOWN
    assert context.manager.initial_catch_up_future.cancelled()
    assert context.manager.broker_epoch == -1
    assert context.channel.shut_down


def test_the_state_moves_starting_recovery_running_on_the_controllers_answers(context):
    context.register()
    context.heartbeat(is_caught_up=False)
    assert context.manager.state == BrokerState.STARTING
    assert not context.manager.initial_catch_up_future.done()
    # While STARTING the next heartbeat goes after 10 ms, not the interval.
    context.nothing_sent_until(10)
    context.heartbeat(is_caught_up=True)
    assert context.manager.state == BrokerState.RECOVERY
    assert context.manager.initial_catch_up_future.done()
    context.advance(10)
    context.heartbeat(is_caught_up=True, is_fenced=True)
    assert context.manager.state == BrokerState.RECOVERY
    context.nothing_sent_until(HEARTBEAT_INTERVAL_MS)
    context.heartbeat(is_caught_up=True, is_fenced=False)
    assert context.manager.state == BrokerState.RUNNING
    assert context.manager.initial_unfence_future.done()


def test_heartbeats_want_fence_until_the_broker_is_ready_to_unfence(context):
    context.highest_metadata_offset = 42
    context.register()
    first = context.heartbeat(is_caught_up=True)
    assert first == {
        "broker_id": 1, "broker_epoch": 1000, "current_metadata_offset": 42, "want_fence": True,
        "want_shut_down": False,
    }  # fmt: skip
    context.advance(10)
    assert context.heartbeat(is_caught_up=True)["want_fence"] is True
    # Ready: a heartbeat goes at once (not at the interval), and no longer asks to stay fenced.
    context.highest_metadata_offset = 57
    unfenced = context.manager.set_ready_to_unfence()
    context.queue.run_pending()
    body = context.channel.take(HEARTBEAT_API)
    assert body["want_fence"] is False and body["current_metadata_offset"] == 57
    assert not unfenced.done()
    context.answer(is_caught_up=True, is_fenced=False)
    assert unfenced.done()


def test_heartbeats_go_at_the_interval_and_no_faster(context):
    context.to_running()
    for _ in range(3):
        context.nothing_sent_until(HEARTBEAT_INTERVAL_MS)
        context.heartbeat(is_caught_up=True, is_fenced=False)
    # While a heartbeat waits for its answer, no second one goes, however long the wait.
    context.advance(HEARTBEAT_INTERVAL_MS)
    context.channel.take(HEARTBEAT_API)
    context.advance(5 * HEARTBEAT_INTERVAL_MS)
    assert len(context.channel.sent) == 1


def test_a_refused_heartbeat_is_retried_with_backoff_under_the_same_epoch(context):
    context.to_running()
    context.advance(HEARTBEAT_INTERVAL_MS)
    context.channel.take(HEARTBEAT_API)
    context.channel.answer(error_code=Errors.STALE_BROKER_EPOCH.code)
    context.queue.run_pending()
    # Kafka 3.3 does not register again: it keeps its epoch and heartbeats after the backoff.
    context.nothing_sent_until(98)
    context.advance(4)
    assert context.channel.take(HEARTBEAT_API)["broker_epoch"] == 1000
    assert context.manager.state == BrokerState.RUNNING


def test_controlled_shutdown_wants_shut_down_until_the_controller_says_should_shut_down(context):
    context.to_running()
    context.manager.begin_controlled_shutdown()
    context.queue.run_pending()
    assert context.manager.state == BrokerState.PENDING_CONTROLLED_SHUTDOWN
    # The heartbeat goes at once, asking to shut down.
    assert context.heartbeat(should_shut_down=False, is_fenced=False)["want_shut_down"] is True
    # The first "not yet" is followed by a heartbeat after 50 ms, later ones after the interval.
    context.nothing_sent_until(50)
    assert context.heartbeat(should_shut_down=False, is_fenced=False)["want_shut_down"] is True
    context.nothing_sent_until(HEARTBEAT_INTERVAL_MS)
    assert not context.manager.controlled_shutdown_future.done()
    context.heartbeat(should_shut_down=True, is_fenced=True)
    assert context.manager.state == BrokerState.SHUTTING_DOWN
    assert context.manager.controlled_shutdown_future.done()
    assert context.channel.shut_down
    context.advance(10 * HEARTBEAT_INTERVAL_MS)
    assert context.channel.sent == []


def test_a_controlled_shutdown_before_running_shuts_down_at_once(context):
    context.register()
    context.heartbeat(is_caught_up=False)
    context.manager.begin_controlled_shutdown()
    context.queue.run_pending()
    assert context.manager.state == BrokerState.SHUTTING_DOWN
    assert context.manager.controlled_shutdown_future.done()
    assert context.manager.initial_catch_up_future.cancelled()


class InProcessControllerChannel:
    """The broker's channel, in one process: each request goes to the active QuorumController's
    operation, and the reply comes back as the controller's listener would encode it (Kafka's
    ControllerApis turns a BrokerRegistrationReply into a broker epoch, a BrokerHeartbeatReply into
    is_caught_up, is_fenced and should_shut_down, an exception into its error code)."""

    def __init__(self, env: QuorumControllerTestEnv) -> None:
        self._env = env
        self.sent: list[dict] = []
        self.answers: list[dict] = []

    def start(self) -> None:
        pass

    def shutdown(self) -> None:
        pass

    def send_request(self, api, body: dict, handler: ControllerRequestCompletionHandler) -> None:
        self.sent.append(body)
        controller = self._env.active()
        if api == REGISTRATION_API:
            future = controller.register_broker(body)

            def answer(reply) -> dict:
                return {"broker_epoch": reply.epoch}
        else:
            future = controller.process_broker_heartbeat(body)

            def answer(reply) -> dict:
                return {"is_caught_up": reply.is_caught_up, "is_fenced": reply.is_fenced,
                        "should_shut_down": reply.should_shut_down}  # fmt: skip

        def done(f: Future) -> None:
            exc = f.exception()
            error = Errors.NONE if exc is None else Errors.for_exception(exc)
            fields = answer(f.result()) if exc is None else {}
            response = {"throttle_time_ms": 0, "error_code": error.code, **fields}
            self.answers.append(response)
            handler.on_complete(ClientResponse(ClientRequest("0", api, 0, body), 0, response))

        future.add_done_callback(done)


def test_a_brokers_life_against_the_quorum_controller():
    """Registration, catching up, unfencing and a controlled shutdown, each answer the quorum
    controller's own decision, on one MockTime."""
    env = QuorumControllerTestEnv(3)
    controller = env.elect(0)
    queue = DeterministicEventQueue(env.time)
    config = KafkaConfig({
        "process.roles": "broker", "node.id": 5, "log.dirs": "/tmp/foo",
        "controller.quorum.voters": "0@127.0.0.1:9093", "controller.listener.names": "CONTROLLER",
        "listeners": "PLAINTEXT://localhost:9092",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
    })  # fmt: skip
    manager = BrokerLifecycleManager(config, env.time, queue)
    channel = InProcessControllerChannel(env)
    applied = [-1]  # the metadata offset the broker has replayed

    def run(ms: int = 0) -> None:
        env.time.sleep(ms)
        while env.poll() + queue.run_pending():
            pass

    features = {"metadata.version": VersionRange(1, 7)}
    manager.start(lambda: applied[0], channel, ENV_CLUSTER_ID, LISTENERS, features)
    run()
    # The broker epoch is the offset of the broker's RegisterBrokerRecord.
    registration = controller.cluster_control.registration(5)
    assert manager.broker_epoch == registration.epoch > 0
    assert channel.sent[0]["incarnation_id"] == registration.incarnation_id
    # Behind its own registration, the broker is not caught up: STARTING, heartbeating every 10 ms.
    run(10)
    assert manager.state == BrokerState.STARTING
    applied[0] = controller.last_committed_offset()
    run(10)
    assert manager.state == BrokerState.RECOVERY
    assert not controller.cluster_control.unfenced(5)  # it still asks to stay fenced
    manager.set_ready_to_unfence()
    run()  # the heartbeat without want_fence goes at once; the controller unfences the broker
    run(HEARTBEAT_INTERVAL_MS)
    assert controller.cluster_control.unfenced(5)
    assert manager.state == BrokerState.RUNNING
    manager.begin_controlled_shutdown()
    run()
    for _ in range(3):  # leading nothing, the broker may go as soon as it has seen its own fencing
        applied[0] = controller.last_committed_offset()
        run(HEARTBEAT_INTERVAL_MS)
    assert channel.sent[-1]["want_shut_down"] is True
    assert manager.state == BrokerState.SHUTTING_DOWN
    assert manager.controlled_shutdown_future.done()


def test_a_broker_of_another_cluster_is_refused_and_keeps_trying():
    env = QuorumControllerTestEnv(1)
    env.elect(0)
    queue = DeterministicEventQueue(env.time)
    manager = BrokerLifecycleManager(Context().manager_config, env.time, queue)
    channel = InProcessControllerChannel(env)
    manager.start(lambda: 0, channel, CLUSTER_ID, LISTENERS, {"metadata.version": VersionRange(1, 7)})
    for ms in (0, SESSION_TIMEOUT_MS, SESSION_TIMEOUT_MS, SESSION_TIMEOUT_MS):
        env.time.sleep(ms)
        while env.poll() + queue.run_pending():
            pass
    # INCONSISTENT_CLUSTER_ID every time: registrations only, never an epoch.
    assert len(channel.sent) == 4 and all("cluster_id" in body for body in channel.sent)
    assert {a["error_code"] for a in channel.answers} == {Errors.INCONSISTENT_CLUSTER_ID.code}
    assert manager.broker_epoch == -1 and manager.state == BrokerState.STARTING
