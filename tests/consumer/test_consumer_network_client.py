"""ConsumerNetworkClient against a real peer (a scripted server on loopback, a real NetworkClient and
selector): futures completed by responses, requests queued while a node connects, disconnects and
timeouts failing futures, poll_future's two ends, wakeup from another thread, and metadata updates.

Mock time drives every timeout; a call that blocks runs in a thread joined with a real deadline, so a
broken client fails the test instead of hanging it."""

from __future__ import annotations

import threading

import pytest

from kafka_lite.clients.metadata import Metadata, Node
from kafka_lite.clients.network_client import NetworkClient
from kafka_lite.common.errors import (
    CoordinatorNotAvailableException,
    DisconnectException,
    IllegalStateException,
    TimeoutException,
    WakeupException,
)
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.requests import encode_response
from kafka_lite.common.time import MockTime
from kafka_lite.consumer.internals.consumer_network_client import ConsumerNetworkClient
from kafka_lite.consumer.internals.request_future import RequestFuture, RequestFutureAdapter
from kafka_lite.network.selector import Selector
from tests.support.scripted_broker import CLOSE_CONNECTION, ScriptedServer
from tests.support.waiting import wait_until

pytestmark = pytest.mark.unit
DEADLINE_S = 10
REQUEST_TIMEOUT_MS = 30_000


class Broker(ScriptedServer):
    """Answers Metadata (a one-broker cluster: itself, as node 0) and, as ``mode`` says, ApiVersions:
    "answer" responds, "silent" never does, "close" drops the connection."""

    def __init__(self, mode: str = "answer", answer_metadata: bool = True) -> None:
        self.mode = mode
        self.answer_metadata = answer_metadata
        self.requests: list[tuple[ApiKeys, int]] = []  # (api, correlation id), as they arrived
        super().__init__()

    def answer(self, header, body):
        self.requests.append((header.api_key, header.correlation_id))
        if header.api_key == ApiKeys.METADATA:
            if not self.answer_metadata:
                return None
            return encode_response(ApiKeys.METADATA, 1, header.correlation_id, self.metadata_body("orders"))
        if self.mode == "silent":
            return None
        if self.mode == "close":
            return CLOSE_CONNECTION
        body = {"error_code": 0, "api_versions": [{"api_key": 18, "min_version": 0, "max_version": 2}]}
        return encode_response(ApiKeys.API_VERSIONS, 0, header.correlation_id, body)

    def api_versions_requests(self) -> list[int]:
        return [correlation for api, correlation in self.requests if api == ApiKeys.API_VERSIONS]


@pytest.fixture
def clock() -> MockTime:
    return MockTime()


@pytest.fixture
def make(clock):
    """Builds a broker and a ConsumerNetworkClient bootstrapped from it; closes both at the end."""
    made: list[tuple[Broker, ConsumerNetworkClient]] = []

    def build(mode="answer", max_in_flight=5, request_timeout_ms=REQUEST_TIMEOUT_MS, time=None, **broker):
        time = time or clock
        server = Broker(mode, **broker)
        metadata = Metadata(refresh_backoff_ms=100, time=time)
        metadata.bootstrap([("127.0.0.1", server.port)], time.milliseconds())
        network = NetworkClient(
            Selector(),
            client_id="consumer-test",
            max_in_flight_requests_per_connection=max_in_flight,
            reconnect_backoff_ms=1000,
            request_timeout_ms=REQUEST_TIMEOUT_MS,
            time=time,
            metadata=metadata,
        )
        client = ConsumerNetworkClient(network, metadata, time, 100, request_timeout_ms)
        made.append((server, client))
        return server, client

    yield build
    for server, client in made:
        client.wakeup()  # a poll left blocked by a failed test gives the lock back
        client.close()
        server.close()


def in_thread(call, what: str):
    """Run ``call`` in a thread and return what it returns (or raise what it raises); fail if it has
    not finished within the deadline."""
    outcome: dict = {}

    def run():
        try:
            outcome["value"] = call()
        except BaseException as e:  # handed back to the test below
            outcome["error"] = e

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(DEADLINE_S)
    assert not thread.is_alive(), f"{what} did not finish within {DEADLINE_S} s"
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def broker_node(client: ConsumerNetworkClient) -> Node:
    """Node 0, the broker as its Metadata response names it (fetched first if not yet known)."""
    if 0 not in client.metadata.cluster.nodes:
        assert in_thread(lambda: client.await_metadata_update(60_000), "the first metadata update")
    return client.metadata.cluster.nodes[0]


def send_api_versions(client: ConsumerNetworkClient, node: Node):
    return client.send(node, ApiKeys.API_VERSIONS, 0, {})


# -- metadata -------------------------------------------------------------------------------------------------


def test_await_metadata_update_polls_until_the_metadata_response_lands(make):
    server, client = make()
    assert client.metadata.cluster.is_bootstrap and client.metadata.version == 0
    assert client.least_loaded_node() == Node(-1, "127.0.0.1", server.port), (
        "only the bootstrap server is known"
    )
    assert in_thread(lambda: client.await_metadata_update(60_000), "await_metadata_update") is True
    assert client.metadata.version == 1
    assert client.metadata.cluster.nodes == {0: Node(0, "127.0.0.1", server.port)}
    assert [api for api, _ in server.requests] == [ApiKeys.METADATA]
    assert client.least_loaded_node() == Node(0, "127.0.0.1", server.port)


def test_await_metadata_update_gives_up_at_its_timeout(make):
    ticking = MockTime(auto_tick_ms=50)  # every reading of the clock moves it on: the wait can end
    _, client = make(time=ticking, answer_metadata=False)
    start = ticking.milliseconds()
    assert in_thread(lambda: client.await_metadata_update(300), "await_metadata_update") is False
    assert ticking.milliseconds() - start >= 300
    assert client.metadata.version == 0


def test_ensure_fresh_metadata_waits_only_when_a_refresh_is_asked_for(make, clock):
    server, client = make()
    broker_node(client)
    in_thread(client.ensure_fresh_metadata, "ensure_fresh_metadata")  # fresh: returns without asking
    assert client.metadata.version == 1
    client.metadata.request_update()  # e.g. a NOT_LEADER_FOR_PARTITION error was seen
    clock.advance(100)  # retry.backoff.ms since the last refresh: a new one may go out
    in_thread(client.ensure_fresh_metadata, "ensure_fresh_metadata")
    assert client.metadata.version == 2 and not client.metadata.need_update
    assert [api for api, _ in server.requests] == [ApiKeys.METADATA, ApiKeys.METADATA]


# -- requests and their futures ---------------------------------------------------------------------------------


def test_a_requests_future_completes_with_its_response(make):
    server, client = make()
    node = broker_node(client)
    future = send_api_versions(client, node)
    assert not future.is_done() and client.pending_request_count(node) == 1
    assert in_thread(lambda: client.poll_future(future), "poll_future") is True
    assert future.succeeded()
    response = future.value()
    assert response.request.api == ApiKeys.API_VERSIONS and not response.disconnected
    assert response.body["api_versions"] == [{"api_key": 18, "min_version": 0, "max_version": 2}]
    assert server.api_versions_requests() == [response.request.correlation_id]
    assert client.pending_request_count() == 0


def test_requests_queued_while_the_node_connects_go_out_in_order_once_it_is_ready(make):
    server, client = make()
    node = broker_node(client)  # known from metadata; no connection to it yet
    assert not client.client.is_ready(node.id_string, client.time.milliseconds())
    futures = [send_api_versions(client, node) for _ in range(3)]
    # send does no I/O: all three wait in unsent until a poll finds the node ready.
    assert len(client.unsent[node]) == 3 and client.client.in_flight_request_count() == 0
    assert client.pending_request_count(node) == 3
    assert server.api_versions_requests() == []
    in_thread(lambda: client.await_pending_requests(node), "await_pending_requests")
    assert all(f.succeeded() for f in futures)
    correlations = [f.value().request.correlation_id for f in futures]
    assert correlations == sorted(correlations)
    assert server.api_versions_requests() == correlations
    assert client.pending_request_count(node) == 0


def test_a_disconnect_fails_the_in_flight_and_the_unsent_requests_futures_as_retriable(make):
    # One request in flight at a time: the second waits in unsent when the broker drops the first.
    server, client = make(mode="close", max_in_flight=1)
    node = broker_node(client)
    in_flight, unsent = send_api_versions(client, node), send_api_versions(client, node)
    assert in_thread(lambda: client.poll_future(unsent), "poll_future") is True
    for future in (in_flight, unsent):
        assert future.failed() and isinstance(future.exception(), DisconnectException)
        assert future.is_retriable()
    assert len(server.api_versions_requests()) == 1, "the second request was failed before it went out"
    assert client.pending_request_count(node) == 0
    assert client.connection_failed(node)


def test_requests_to_a_node_that_cannot_be_reached_fail_with_a_disconnect(make):
    server, client = make()
    node = broker_node(client)
    server.close()  # nothing listens on the port any more: the connection is refused
    future = send_api_versions(client, node)
    assert in_thread(lambda: client.poll_future(future), "poll_future") is True
    assert isinstance(future.exception(), DisconnectException) and future.is_retriable()
    assert client.pending_request_count() == 0


def test_an_in_flight_request_that_times_out_fails(make, clock):
    server, client = make(mode="silent")
    node = broker_node(client)
    future = send_api_versions(client, node)
    wait_until(lambda: client.poll(10) or server.api_versions_requests(), DEADLINE_S, "the request to arrive")
    clock.advance(REQUEST_TIMEOUT_MS)
    client.poll(0)
    assert not future.is_done(), "not before request.timeout.ms has passed"
    clock.advance(1)
    client.poll(0)
    assert future.failed() and isinstance(future.exception(), DisconnectException)
    assert client.pending_request_count() == 0


def test_an_unsent_request_fails_once_it_is_older_than_the_request_timeout(make, clock):
    # The node takes one request at a time and never answers it, so the second can never be sent.
    # (The consumer's own timeout for unsent requests is shorter here than the NetworkClient's for
    # in-flight ones, so only the unsent request expires.)
    server, client = make(mode="silent", max_in_flight=1, request_timeout_ms=10_000)
    node = broker_node(client)
    first, second = send_api_versions(client, node), send_api_versions(client, node)
    wait_until(
        lambda: client.poll(10) or server.api_versions_requests(), DEADLINE_S, "the first request to arrive"
    )
    assert len(client.unsent[node]) == 1
    clock.advance(10_000)
    client.poll(0)
    assert not second.is_done(), "exactly request.timeout.ms old is not expired yet"
    clock.advance(1)
    client.poll(0)
    assert second.failed() and isinstance(second.exception(), TimeoutException)
    assert str(second.exception()) == "Failed to send request after 10000 ms."
    assert not first.is_done(), "the request in flight is the NetworkClient's to time out"
    assert node not in client.unsent
    assert client.pending_request_count(node) == 1


def test_fail_unsent_requests_fails_what_waits_for_the_node_at_once(make):
    server, client = make()
    node = broker_node(client)
    futures = [send_api_versions(client, node) for _ in range(2)]
    error = CoordinatorNotAvailableException()
    client.fail_unsent_requests(node, error)
    assert [f.exception() for f in futures] == [error, error]
    assert client.pending_request_count(node) == 0
    client.poll(0)
    assert server.api_versions_requests() == []


def test_send_refuses_a_destination_that_is_not_a_node(make):
    _, client = make()
    with pytest.raises(TypeError, match="as a Node, not '0'"):
        client.send("0", ApiKeys.API_VERSIONS, 0, {})


# -- polling --------------------------------------------------------------------------------------------------


def test_poll_future_with_a_timeout_returns_true_once_the_future_is_done(make, clock):
    _, client = make()
    node = broker_node(client)
    future = send_api_versions(client, node)
    start = clock.milliseconds()
    assert in_thread(lambda: client.poll_future(future, 60_000), "poll_future") is True
    assert future.succeeded()
    assert clock.milliseconds() == start, "it returned for the response, not at the timeout"


def test_poll_future_returns_false_at_the_timeout(make):
    ticking = MockTime(auto_tick_ms=50)  # every reading of the clock moves it on: the wait can end
    _, client = make(mode="silent", time=ticking)
    node = broker_node(client)
    future = send_api_versions(client, node)
    start = ticking.milliseconds()
    assert in_thread(lambda: client.poll_future(future, 300), "poll_future") is False
    assert ticking.milliseconds() - start >= 300
    assert not future.is_done() and client.pending_request_count(node) == 1


def test_a_listener_that_sends_another_request_gets_it_sent(make):
    # Listeners run outside the lock, after the network poll: one may send the next request at once.
    server, client = make()
    node = broker_node(client)

    class ThenAnother(RequestFutureAdapter):
        def on_success(self, value, future: RequestFuture):
            send_api_versions(client, node).chain(future)

    second = send_api_versions(client, node).compose(ThenAnother())
    assert in_thread(lambda: client.poll_future(second), "poll_future") is True
    assert second.succeeded() and len(server.api_versions_requests()) == 2
    assert second.value().request.correlation_id == server.api_versions_requests()[1]


def test_wakeup_from_another_thread_makes_a_blocked_poll_raise_once(make):
    server, client = make(mode="silent")
    node = broker_node(client)
    future = send_api_versions(client, node)
    outcome: dict = {}

    def blocked_poll():
        try:
            client.poll_future(future)  # the broker never answers: only a wakeup ends this
        except WakeupException as e:
            outcome["error"] = e

    thread = threading.Thread(target=blocked_poll, daemon=True)
    thread.start()
    wait_until(lambda: server.api_versions_requests(), DEADLINE_S, "the poll to send the request")
    client.wakeup()
    thread.join(DEADLINE_S)
    assert not thread.is_alive(), "the blocked poll did not wake up"
    assert isinstance(outcome.get("error"), WakeupException)
    client.poll(0)  # once: the next poll does not raise again
    assert not future.is_done() and client.pending_request_count(node) == 1


def test_poll_no_wakeup_keeps_a_wakeup_for_the_next_poll(make):
    _, client = make()
    broker_node(client)
    client.wakeup()
    client.poll_no_wakeup()  # the heartbeat thread's poll never raises the consumer's wakeup
    with pytest.raises(WakeupException):
        client.poll(0)
    client.poll(0)


def test_enable_wakeups_without_disable_is_illegal(make):
    _, client = make()
    with pytest.raises(IllegalStateException, match="never disabled"):
        client.enable_wakeups()
