"""NetworkClient against a real peer: a scripted server that answers ApiVersions one byte at a
time, or drops the connection, so partial reads, request/response matching, failed in-flight
requests and the reconnect back-off are all exercised on loopback."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from kafka_lite.clients.admin import KafkaAdminClient, NewTopic
from kafka_lite.clients.metadata import Cluster, Metadata, Node
from kafka_lite.clients.network_client import ClientRequest, NetworkClient
from kafka_lite.common.errors import KafkaException, TimeoutException, TopicExistsException
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.requests import encode_response
from kafka_lite.common.time import MockTime
from kafka_lite.network.selector import Selector
from tests.support.scripted_broker import CLOSE_CONNECTION, ScriptedServer

pytestmark = pytest.mark.unit
DEADLINE_S = 10


class AnswerServer(ScriptedServer):
    """Answers ApiVersions requests, writing each response one byte per send; with ``drop_after``,
    closes the connection on that request (counted from the server's start) without answering it."""

    def __init__(self, drop_after: int | None = None) -> None:
        self.drop_after = drop_after
        self.requests: list[int] = []  # correlation ids, in the order requests arrived
        super().__init__()

    def answer(self, header, body):
        self.requests.append(header.correlation_id)
        if len(self.requests) == self.drop_after:
            return CLOSE_CONNECTION  # close without answering: the client must fail this request
        if header.api_key == ApiKeys.METADATA:
            # A one-broker cluster (this server, as node 0) with one topic of two partitions.
            return encode_response(ApiKeys.METADATA, 1, header.correlation_id, self.metadata_body("orders"))
        if header.api_key == ApiKeys.CREATE_TOPICS:
            return encode_response(ApiKeys.CREATE_TOPICS, 2, header.correlation_id, _created(body))
        versions = [{"api_key": 18, "min_version": 0, "max_version": 2}]
        body = {"error_code": 0, "api_versions": versions}
        return encode_response(ApiKeys.API_VERSIONS, 0, header.correlation_id, body)

    def write_response(self, conn: socket.socket, frame: bytes) -> None:
        for byte in frame:
            conn.sendall(bytes([byte]))  # the client sees the response arrive in many reads


def _created(request: dict) -> dict:
    """Every topic is created, except one called "exists" (TOPIC_ALREADY_EXISTS, 36)."""
    errors = [
        {"topic": t["topic"], "error_code": 36 if t["topic"] == "exists" else 0,
         "error_message": "Topic 'exists' already exists." if t["topic"] == "exists" else None}
        for t in request["create_topic_requests"]
    ]  # fmt: skip
    return {"throttle_time_ms": 0, "topic_errors": errors}


def _client(server: AnswerServer, clock: MockTime) -> NetworkClient:
    client = NetworkClient(Selector(), client_id="test", reconnect_backoff_ms=1000, time=clock)
    client.set_node("0", "127.0.0.1", server.port)
    return client


def _poll_until(client, clock, condition, what):
    responses = []
    end = time.monotonic() + DEADLINE_S
    while time.monotonic() < end:
        responses += client.poll(20, clock.milliseconds())
        if condition(responses):
            return responses
    raise AssertionError(f"timed out waiting for {what}: {responses}")


def _connect(client, clock):
    end = time.monotonic() + DEADLINE_S
    while not client.ready("0", clock.milliseconds()):
        assert time.monotonic() < end, "never connected"
        client.poll(20, clock.milliseconds())


def test_requests_are_matched_to_responses_in_order():
    server, clock = AnswerServer(), MockTime()
    client = _client(server, clock)
    try:
        _connect(client, clock)
        requests = [ClientRequest("0", ApiKeys.API_VERSIONS, 0, {}) for _ in range(3)]
        responses = []
        for r in requests:
            assert client.is_ready("0", clock.milliseconds()), "max.in.flight (5) not reached yet"
            client.send(r, clock.milliseconds())
            # The next send must wait until this one is fully written (one send per channel at a time);
            # responses may already arrive meanwhile, so keep them.
            responses += _poll_until(client, clock, lambda _, r=r: r.send.completed(), "the send to go out")
        responses += _poll_until(client, clock, lambda rs: len(responses) + len(rs) == 3, "three responses")
        assert [resp.request for resp in responses] == requests
        assert [resp.body["api_versions"][0]["api_key"] for resp in responses] == [18, 18, 18]
        assert server.requests == [r.correlation_id for r in requests]
        assert client.in_flight.count() == 0
    finally:
        client.close_all()
        server.close()


def test_a_dropped_connection_fails_in_flight_requests_and_reconnects_after_the_backoff():
    server, clock = AnswerServer(drop_after=1), MockTime()
    client = _client(server, clock)
    try:
        _connect(client, clock)
        failed = []
        request = ClientRequest("0", ApiKeys.API_VERSIONS, 0, {}, callback=failed.append)
        client.send(request, clock.milliseconds())
        responses = _poll_until(client, clock, lambda rs: rs, "the dropped connection")
        assert responses[0].disconnected and responses[0].request is request and failed == responses
        assert not client.ready("0", clock.milliseconds()), "blacked out right after the disconnect"
        assert client.connection_delay("0", clock.milliseconds()) == 1000
        clock.advance(999)
        assert not client.ready("0", clock.milliseconds())
        clock.advance(1)
        _connect(client, clock)  # the back-off has passed: a new connection is made
        end = time.monotonic() + DEADLINE_S
        while server.connections < 2 and time.monotonic() < end:  # the server thread counts it
            client.poll(20, clock.milliseconds())
        assert server.connections == 2
    finally:
        client.close_all()
        server.close()


def test_a_node_the_metadata_stops_listing_is_reconnected_where_it_was_chosen():
    """A broker restarting: the client chose node 0 from the metadata and its first connection failed;
    the next refresh comes from a broker that has not yet heard node 0 is back and lists no node 0. The
    reconnection after the back-off goes to node 0's address still, as Kafka's Node carries it."""
    server, clock = AnswerServer(), MockTime()
    metadata = Metadata(refresh_backoff_ms=100, metadata_expire_ms=60_000, time=clock)
    metadata.update(Cluster({0: Node(0, "127.0.0.1", server.port)}), clock.milliseconds())
    client = NetworkClient(Selector(), reconnect_backoff_ms=1000, time=clock, metadata=metadata)
    try:
        _connect(client, clock)
        client.close("0")
        metadata.update(Cluster({1: Node(1, "127.0.0.1", 1)}), clock.milliseconds())
        clock.advance(1000)
        _connect(client, clock)
        end = time.monotonic() + DEADLINE_S
        while server.connections < 2 and time.monotonic() < end:  # the server thread counts it
            client.poll(20, clock.milliseconds())
        assert server.connections == 2
        with pytest.raises(RuntimeError, match="no address known for node 7"):
            client.ready("7", clock.milliseconds())  # a node never known is still a caller's mistake
    finally:
        client.close_all()
        server.close()


def test_a_request_with_no_response_completes_when_sent():
    server, clock = AnswerServer(), MockTime()
    client = _client(server, clock)
    try:
        _connect(client, clock)
        request = ClientRequest("0", ApiKeys.API_VERSIONS, 0, {}, expect_response=False)
        client.send(request, clock.milliseconds())
        responses = _poll_until(client, clock, lambda rs: rs, "the send to complete")
        assert responses[0].request is request and responses[0].body is None and not responses[0].disconnected
        with pytest.raises(RuntimeError, match="not ready"):
            client.send(ClientRequest("9", ApiKeys.API_VERSIONS, 0, {}), clock.milliseconds())
    finally:
        client.close_all()
        server.close()


def test_metadata_is_fetched_from_the_bootstrap_server_and_refreshed_on_age():
    server, clock = AnswerServer(), MockTime()
    metadata = Metadata(refresh_backoff_ms=100, metadata_expire_ms=60_000, time=clock)
    metadata.bootstrap([("127.0.0.1", server.port)], clock.milliseconds())
    client = NetworkClient(Selector(), time=clock, metadata=metadata)
    try:
        end = time.monotonic() + DEADLINE_S
        while metadata.version == 0 and time.monotonic() < end:
            client.poll(20, clock.milliseconds())
        assert metadata.version == 1, "no metadata from the bootstrap server"
        cluster = metadata.cluster
        assert cluster.nodes[0].port == server.port and cluster.controller == cluster.nodes[0]
        assert [p.partition for p in cluster.partitions_for_topic("orders")] == [0, 1]
        assert cluster.leader_for("orders", 1) == cluster.nodes[0]
        assert metadata.time_to_next_update(clock.milliseconds()) == 60_000
        clock.advance(60_000)  # the view is now as old as metadata.max.age.ms: refresh it
        end = time.monotonic() + DEADLINE_S
        while metadata.version == 1 and time.monotonic() < end:
            client.poll(20, clock.milliseconds())
        assert metadata.version == 2
    finally:
        client.close_all()
        server.close()


def test_metadata_refresh_waits_for_the_backoff_and_await_update_times_out_on_mock_time():
    clock = MockTime(start_ms=0)
    metadata = Metadata(refresh_backoff_ms=100, metadata_expire_ms=60_000, time=clock)
    metadata.update(Cluster(), now=0)
    version = metadata.request_update()
    assert metadata.time_to_next_update(50) == 50, "an urgent refresh still waits for retry.backoff.ms"
    assert metadata.time_to_next_update(100) == 0
    metadata.failed_update(now=100)
    assert metadata.time_to_next_update(150) == 50
    outcome = []

    def wait():
        try:
            metadata.await_update(version, max_wait_ms=1_000)
            outcome.append("updated")
        except TimeoutException as e:
            outcome.append(str(e))

    waiter = threading.Thread(target=wait)
    waiter.start()
    end = time.monotonic() + DEADLINE_S
    while waiter.is_alive() and time.monotonic() < end:
        clock.advance(250)  # mock time passes only when the test says so
        waiter.join(0.01)
    assert outcome == ["Failed to update metadata after 1000 ms."]


def test_admin_client_describes_lists_and_creates_through_the_controller():
    server = AnswerServer()
    admin = KafkaAdminClient(f"127.0.0.1:{server.port}", request_timeout_ms=10_000)
    try:
        cluster = admin.describe_cluster()
        assert cluster.controller.port == server.port and list(cluster.nodes) == [0]
        assert admin.list_topics() == ["orders"]
        admin.create_topics(
            [
                NewTopic(
                    "clicks", num_partitions=3, replication_factor=1, configs={"cleanup.policy": "compact"}
                )
            ]
        )
        with pytest.raises(TopicExistsException, match="exists: Topic 'exists' already exists"):
            admin.create_topics([NewTopic("exists", 1, 1)])
    finally:
        admin.close()
        server.close()


def test_bad_bootstrap_servers_are_named():
    with pytest.raises(KafkaException, match="Invalid bootstrap server 'nohost'"):
        KafkaAdminClient("nohost")


LONG_TIMEOUT_MS = 1000  # what a caller with nothing to send asks poll for


class RecordingSelector(Selector):
    """The real selector, noting the timeout of every poll."""

    def __init__(self) -> None:
        super().__init__()
        self.timeouts: list[int] = []

    def poll(self, timeout_ms):
        self.timeouts.append(timeout_ms)
        return super().poll(timeout_ms)


class SlowSelector(Selector):
    """The real selector, each of whose polls takes 40 ms of the mock clock."""

    def __init__(self, clock: MockTime) -> None:
        super().__init__()
        self.clock = clock

    def poll(self, timeout_ms):
        self.clock.sleep(40)
        return super().poll(timeout_ms)


def test_a_responses_latency_counts_the_wait_in_the_poll_that_received_it():
    """Kafka's ``NetworkClient.poll`` stamps what completed with the time after the selector's wait
    (``updatedNow``): a latency counts that wait, and is never negative."""
    server, clock = AnswerServer(), MockTime()
    client = NetworkClient(SlowSelector(clock), client_id="test", reconnect_backoff_ms=1000, time=clock)
    client.set_node("0", "127.0.0.1", server.port)
    try:
        _connect(client, clock)
        request = ClientRequest("0", ApiKeys.API_VERSIONS, 0, {})
        client.send(request, clock.milliseconds())
        sent_ms = clock.milliseconds()
        (response,) = _poll_until(client, clock, lambda rs: len(rs) == 1, "the response")
        assert response.received_ms == clock.milliseconds()
        assert response.request_latency_ms == clock.milliseconds() - sent_ms >= 40
    finally:
        client.close_all()
        server.close()


def test_with_every_broker_down_a_due_refresh_waits_the_reconnect_backoff_not_zero():
    """The metadata is due for a refresh and the only broker refuses connections: each poll starts
    a connection when the back-off allows and otherwise waits for it, rather than returning at once,
    round after round, as a producer's sender thread would then spin."""
    clock = MockTime()
    metadata = Metadata(refresh_backoff_ms=100, metadata_expire_ms=60_000, time=clock)
    with socket.socket() as s:  # a port that was free a moment ago: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    metadata.bootstrap([("127.0.0.1", port)], clock.milliseconds())
    selector = RecordingSelector()
    client = NetworkClient(selector, reconnect_backoff_ms=50, time=clock, metadata=metadata)
    try:
        end = time.monotonic() + DEADLINE_S
        while not client.connection_states.is_blacked_out("-1", clock.milliseconds()):
            assert time.monotonic() < end, "the refused connection was never noticed"
            client.poll(LONG_TIMEOUT_MS, clock.milliseconds())
        selector.timeouts.clear()
        client.poll(LONG_TIMEOUT_MS, clock.milliseconds())  # blacked out: no node to ask
        clock.advance(50)
        client.poll(LONG_TIMEOUT_MS, clock.milliseconds())  # the back-off is over: connect again
        assert selector.timeouts == [50, 50], "a due refresh with no broker to ask never polls for 0 ms"
    finally:
        client.close_all()
