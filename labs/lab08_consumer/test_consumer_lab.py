"""Lab 8 graded tests: the consumer's fetched records (``Fetcher._parse_completed_fetch`` and
``Fetcher._append``), then the heartbeat clock (``Heartbeat``'s three timing methods), then the
member's side of a rebalance (``ConsumerCoordinator.on_join_prepare`` and ``on_join_complete``).

Stage 1 drives a real ``Fetcher`` over a real ``SubscriptionState``: each test files the
``CompletedFetch``es a fetch response would have queued (real record batches, built with
``MemoryRecords.with_records``) and calls ``fetched_records`` as ``KafkaConsumer.poll`` does. No
request goes out, so the fetcher's network client points nowhere. Stage 2 calls a ``Heartbeat`` with
the timestamps a clock would give. Stage 3 calls a real ``ConsumerCoordinator``'s two methods as
``join_group_if_needed`` does; with auto-commit on, its commit goes over a real socket to a small
scripted coordinator in this file, which answers FindCoordinator and OffsetCommit and records them.

Failure messages print what the consumer holds: each partition's position, whether it waits for a
reset, and the order the fetcher visits the partitions in.
"""

from __future__ import annotations

import socket
import struct
import threading

import pytest

from kafka_lite.clients.metadata import Metadata
from kafka_lite.clients.network_client import NetworkClient
from kafka_lite.common.errors import Errors, IllegalStateException, WakeupException
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.requests import encode_response, parse_request
from kafka_lite.common.record.compression import CompressionType
from kafka_lite.common.time import SYSTEM, MockTime
from kafka_lite.consumer import OffsetOutOfRangeException
from kafka_lite.consumer.consumer_rebalance_listener import ConsumerRebalanceListener
from kafka_lite.consumer.internals.abstract_coordinator import Generation, MemberState
from kafka_lite.consumer.internals.consumer_coordinator import ConsumerCoordinator
from kafka_lite.consumer.internals.consumer_network_client import ConsumerNetworkClient
from kafka_lite.consumer.internals.consumer_protocol import Assignment, serialize_assignment
from kafka_lite.consumer.internals.fetcher import Fetcher
from kafka_lite.consumer.internals.heartbeat import Heartbeat
from kafka_lite.consumer.internals.subscription_state import SubscriptionState
from kafka_lite.consumer.offset_reset_strategy import OffsetResetStrategy
from kafka_lite.consumer.range_assignor import RangeAssignor
from kafka_lite.network.selector import Selector
from kafka_lite.testing.fetcher_harness import (
    NOWHERE,
    complete_fetch,
    describe_positions,
    fetcher_without_network,
    offsets_by_partition,
    record_batch,
)

pytestmark = [pytest.mark.lab(8), pytest.mark.timeout(20)]

TOPIC = "orders"
T0, T1 = (TOPIC, 0), (TOPIC, 1)


# -- stage 1: the fetched records ------------------------------------------------------------------------


def _fetcher(partitions=(T0,), reset="earliest", max_poll_records=500) -> Fetcher:
    return fetcher_without_network(partitions, reset, max_poll_records=max_poll_records)


def _check_poll(fetcher: Fetcher, expected: dict, why: str) -> dict:
    got = fetcher.fetched_records()
    assert offsets_by_partition(got) == expected, (
        f"{why}\n  expected offsets by partition: {expected}\n  fetched_records returned: {offsets_by_partition(got)}\n"
        f"  the consumer now:\n{describe_positions(fetcher)}"
    )
    return got


@pytest.mark.stage(1)
@pytest.mark.points(3)
def test_a_fetchs_records_are_returned_and_the_position_moves_past_the_last():
    fetcher = _fetcher()
    fetcher.subscriptions.seek(T0, 0)
    complete_fetch(fetcher, T0, 0, record_batch(0, 5))
    got = _check_poll(fetcher, {T0: [0, 1, 2, 3, 4]}, "a fetch from the position returns all its records")
    assert [r.value for r in got[T0]] == ["v0", "v1", "v2", "v3", "v4"], "values deserialized"
    assert fetcher.subscriptions.position(T0) == 5, (
        f"the position is the offset of the next record to fetch: 5 after offsets 0-4\n{describe_positions(fetcher)}"
    )
    _check_poll(fetcher, {}, "nothing is left: a second call returns nothing")


@pytest.mark.stage(1)
@pytest.mark.points(3)
def test_max_poll_records_splits_one_fetch_over_several_polls():
    fetcher = _fetcher(max_poll_records=2)
    fetcher.subscriptions.seek(T0, 10)
    complete_fetch(fetcher, T0, 10, record_batch(10, 5))
    for expected, position in (([10, 11], 12), ([12, 13], 14), ([14], 15)):
        _check_poll(fetcher, {T0: expected}, "max.poll.records = 2: two records per poll, in order")
        assert fetcher.subscriptions.position(T0) == position, (
            f"after offsets {expected} the position is {position}\n{describe_positions(fetcher)}"
        )


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_max_poll_records_counts_across_partitions():
    fetcher = _fetcher(partitions=(T0, T1), max_poll_records=4)
    for tp in (T0, T1):
        fetcher.subscriptions.seek(tp, 0)
        complete_fetch(fetcher, tp, 0, record_batch(0, 3))
    _check_poll(fetcher, {T0: [0, 1, 2], T1: [0]}, "4 records: orders-0's three, then the first of orders-1")
    _check_poll(fetcher, {T1: [1, 2]}, "then the rest of orders-1")
    assert fetcher.subscriptions.position(T1) == 3, describe_positions(fetcher)


@pytest.mark.stage(1)
@pytest.mark.points(3)
def test_records_below_the_position_in_a_compressed_batch_are_skipped():
    fetcher = _fetcher()
    fetcher.subscriptions.seek(T0, 3)
    # A fetch from offset 3 returns the whole compressed batch 0-5 (the broker does not split it).
    complete_fetch(fetcher, T0, 3, record_batch(0, 6, CompressionType.GZIP))
    _check_poll(
        fetcher,
        {T0: [3, 4, 5]},
        "a compressed batch comes back whole: the records below the fetch offset (0-2) are skipped",
    )
    assert fetcher.subscriptions.position(T0) == 6, describe_positions(fetcher)


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_a_fetch_older_than_a_seek_is_dropped():
    fetcher = _fetcher()
    fetcher.subscriptions.seek(T0, 0)
    complete_fetch(fetcher, T0, 0, record_batch(0, 5))
    fetcher.subscriptions.seek(T0, 40)  # the application seeks while the fetch is in flight
    _check_poll(
        fetcher, {}, "the fetch was sent from offset 0, the position is now 40: the records are stale"
    )
    assert fetcher.subscriptions.position(T0) == 40, (
        f"a stale fetch leaves the position\n{describe_positions(fetcher)}"
    )


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_a_seek_between_two_polls_drops_the_rest_of_the_fetch():
    fetcher = _fetcher(max_poll_records=2)
    fetcher.subscriptions.seek(T0, 0)
    complete_fetch(fetcher, T0, 0, record_batch(0, 5))
    _check_poll(fetcher, {T0: [0, 1]}, "the first two records")
    fetcher.subscriptions.seek(T0, 0)  # read again from the start
    _check_poll(
        fetcher,
        {},
        "the records left (2-4) were fetched for position 2; the position is now 0, so they are dropped",
    )
    assert fetcher.subscriptions.position(T0) == 0, describe_positions(fetcher)
    complete_fetch(fetcher, T0, 0, record_batch(0, 5))  # the next fetch, from the new position
    _check_poll(fetcher, {T0: [0, 1]}, "a fetch from the new position is returned")


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_a_paused_or_unassigned_partitions_records_are_not_returned():
    fetcher = _fetcher(partitions=(T0, T1))
    for tp in (T0, T1):
        fetcher.subscriptions.seek(tp, 0)
        complete_fetch(fetcher, tp, 0, record_batch(0, 2))
    fetcher.subscriptions.pause(T1)
    _check_poll(fetcher, {T0: [0, 1]}, "orders-1 was paused after its fetch was sent: its records wait")
    assert fetcher.subscriptions.position(T1) == 0, (
        f"a paused partition keeps its position\n{describe_positions(fetcher)}"
    )

    fetcher = _fetcher(max_poll_records=1)
    fetcher.subscriptions.seek(T0, 0)
    complete_fetch(fetcher, T0, 0, record_batch(0, 3))
    _check_poll(fetcher, {T0: [0]}, "one record")
    fetcher.subscriptions.assign_from_user([T1])  # orders-0 is no longer assigned
    _check_poll(fetcher, {}, "the rest of orders-0's fetch is dropped once orders-0 is unassigned")


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_offset_out_of_range_resets_the_position_by_auto_offset_reset():
    fetcher = _fetcher(reset="latest")
    fetcher.subscriptions.seek(T0, 500)
    complete_fetch(fetcher, T0, 500, error=Errors.OFFSET_OUT_OF_RANGE)
    _check_poll(fetcher, {}, "an out-of-range fetch has no records")
    s = fetcher.subscriptions
    assert s.is_offset_reset_needed(T0) and s.reset_strategy(T0) is OffsetResetStrategy.LATEST, (
        f"OFFSET_OUT_OF_RANGE at the position: the partition should wait for a reset by auto.offset.reset "
        f"(latest here), and it does not\n{describe_positions(fetcher)}"
    )
    assert s.position(T0) is None

    s.seek(T0, 7)
    complete_fetch(fetcher, T0, 500, error=Errors.OFFSET_OUT_OF_RANGE)
    _check_poll(fetcher, {}, "a stale out-of-range answer")
    assert not s.is_offset_reset_needed(T0) and s.position(T0) == 7, (
        f"an OFFSET_OUT_OF_RANGE for an offset that is no longer the position changes nothing\n{describe_positions(fetcher)}"
    )


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_offset_out_of_range_without_a_reset_policy_raises():
    fetcher = _fetcher(reset="none")
    fetcher.subscriptions.seek(T0, 500)
    complete_fetch(fetcher, T0, 500, error=Errors.OFFSET_OUT_OF_RANGE)
    with pytest.raises(OffsetOutOfRangeException) as raised:
        fetcher.fetched_records()
    assert raised.value.offset_out_of_range_partitions == {T0: 500}, (
        "the exception should tell the application which partition's offset is out of range, and which "
        f"offset ({{('orders', 0): 500}}); it names {raised.value.offset_out_of_range_partitions}"
    )


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_a_leader_error_asks_for_metadata_and_the_partition_goes_last():
    fetcher = _fetcher(partitions=(T0, T1))
    for tp in (T0, T1):
        fetcher.subscriptions.seek(tp, 0)
    assert fetcher.subscriptions.fetchable_partitions() == [T0, T1]
    fetcher.metadata.need_update = False
    complete_fetch(fetcher, T0, 0, error=Errors.NOT_LEADER_FOR_PARTITION)
    _check_poll(fetcher, {}, "NOT_LEADER_FOR_PARTITION: no records")
    assert fetcher.metadata.need_update, (
        "after NOT_LEADER_FOR_PARTITION no metadata update is pending: the consumer would go on fetching "
        "orders-0 from a broker that no longer leads it"
    )
    assert fetcher.subscriptions.fetchable_partitions() == [T1, T0], (
        f"orders-0's fetch answered an error, and orders-0 is still first in the fetch order: it would "
        f"take the next response's bytes before orders-1 again\n{describe_positions(fetcher)}"
    )
    assert fetcher.subscriptions.position(T0) == 0, "an error moves no position"


@pytest.mark.stage(1)
@pytest.mark.points(1)
def test_a_partition_goes_last_only_when_it_kept_records():
    fetcher = _fetcher(partitions=(T0, T1))
    fetcher.subscriptions.seek(T0, 3)
    fetcher.subscriptions.seek(T1, 0)
    complete_fetch(fetcher, T0, 3, record_batch(0, 3))
    _check_poll(fetcher, {}, "a response whose records are all below the position: no records")
    assert fetcher.subscriptions.fetchable_partitions() == [T0, T1], (
        "a partition whose answer had bytes but no record at or past the position keeps its place in "
        f"the fetch order (Kafka 0.10.1 counts the bytes of the records it kept)\n{describe_positions(fetcher)}"
    )
    complete_fetch(fetcher, T0, 3, record_batch(0, 5))
    _check_poll(fetcher, {T0: [3, 4]}, "the records at or past the position")
    assert fetcher.subscriptions.fetchable_partitions() == [T1, T0], (
        f"orders-0 kept records and is still first in the fetch order: a busy partition would keep "
        f"orders-1 out of size-limited responses\n{describe_positions(fetcher)}"
    )


# -- stage 2: the heartbeat clock ------------------------------------------------------------------------

SESSION, INTERVAL, MAX_POLL, BACKOFF = 10_000, 3_000, 300_000, 100


def _heartbeat(reset_at: int = 1_000) -> Heartbeat:
    heartbeat = Heartbeat(SESSION, INTERVAL, MAX_POLL, BACKOFF)
    heartbeat.reset_timeouts(reset_at)
    return heartbeat


def _clock(heartbeat: Heartbeat) -> str:
    h = heartbeat
    return (
        f"\n  the clock: last heartbeat sent {h.last_heartbeat_send}, last answered "
        f"{h.last_heartbeat_receive}, last session reset {h.last_session_reset}, last poll "
        f"{h.last_poll}, last heartbeat failed {h.heartbeat_failed}\n  session.timeout.ms {SESSION}, "
        f"heartbeat.interval.ms {INTERVAL}, max.poll.interval.ms {MAX_POLL}, retry.backoff.ms {BACKOFF}"
    )


@pytest.mark.stage(2)
@pytest.mark.points(3)
def test_the_first_heartbeat_is_due_one_interval_after_the_reset():
    h = _heartbeat(reset_at=1_000)
    for now, expected in ((1_000, 3_000), (2_500, 1_500), (3_999, 1), (4_000, 0), (9_000, 0)):
        assert h.time_to_next_heartbeat(now) == expected, (
            f"time_to_next_heartbeat({now}) should be {expected}{_clock(h)}"
        )
    assert not h.should_heartbeat(3_999) and h.should_heartbeat(4_000)


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_the_next_heartbeat_is_due_one_interval_after_the_last_one_sent():
    h = _heartbeat(reset_at=1_000)
    h.sent_heartbeat(5_000)
    for now, expected in ((5_000, 3_000), (7_000, 1_000), (8_000, 0)):
        assert h.time_to_next_heartbeat(now) == expected, (
            f"time_to_next_heartbeat({now}) should be {expected}: counted from the heartbeat sent at "
            f"5000, the later of it and the reset{_clock(h)}"
        )
    h.reset_timeouts(7_000)  # a new coordinator found: the interval counts from the reset
    assert h.time_to_next_heartbeat(7_000) == 3_000, f"counted from the reset at 7000{_clock(h)}"


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_a_failed_heartbeat_is_retried_after_the_back_off():
    h = _heartbeat(reset_at=1_000)
    h.sent_heartbeat(5_000)
    h.fail_heartbeat()
    for now, expected in ((5_000, 100), (5_060, 40), (5_100, 0)):
        assert h.time_to_next_heartbeat(now) == expected, (
            f"time_to_next_heartbeat({now}) after a failed heartbeat should be {expected}: the retry "
            f"back-off, not the interval{_clock(h)}"
        )
    h.sent_heartbeat(5_100)  # the retry goes out: the interval applies again
    assert h.time_to_next_heartbeat(5_200) == 2_900, f"sent_heartbeat clears the failure{_clock(h)}"


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_the_session_expires_a_session_after_the_later_of_the_last_answer_and_the_reset():
    h = _heartbeat(reset_at=1_000)
    for now, expired in ((11_000, False), (11_001, True)):
        assert h.session_timeout_expired(now) is expired, (
            f"session_timeout_expired({now}) should be {expired}: more than {SESSION} ms since the "
            f"reset at 1000{_clock(h)}"
        )
    h.receive_heartbeat(9_000)
    for now, expired in ((19_000, False), (19_001, True)):
        assert h.session_timeout_expired(now) is expired, (
            f"session_timeout_expired({now}) should be {expired}: counted from the answer at 9000{_clock(h)}"
        )
    h.reset_timeouts(15_000)
    assert not h.session_timeout_expired(25_000) and h.session_timeout_expired(25_001), (
        f"a reset at 15000, later than the last answer, starts the session again{_clock(h)}"
    )


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_the_poll_timeout_expires_max_poll_interval_after_the_last_poll():
    h = _heartbeat(reset_at=0)
    assert not h.poll_timeout_expired(MAX_POLL) and h.poll_timeout_expired(MAX_POLL + 1), (
        f"max.poll.interval.ms counts from the reset at 0 until the first poll{_clock(h)}"
    )
    h.poll(200_000)
    h.receive_heartbeat(450_000)  # heartbeats keep flowing: they do not count as polls
    for now, expired in ((500_000, False), (500_001, True)):
        assert h.poll_timeout_expired(now) is expired, (
            f"poll_timeout_expired({now}) should be {expired}: more than {MAX_POLL} ms since the poll "
            f"at 200000, whatever the heartbeats{_clock(h)}"
        )


# -- stage 3: the member's side of a rebalance ---------------------------------------------------------------

GROUP, MEMBER = "billing", "consumer-1-lab8"
AUTO_COMMIT_INTERVAL = 5_000


class Coordinator:
    """A scripted group coordinator on a loopback socket: one broker (node 0) that leads ``orders``
    and coordinates the group. It answers Metadata, FindCoordinator and OffsetCommit, records every
    commit, and answers commits with ``commit_error``."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.commits: list[dict] = []
        self.commit_error = Errors.NONE
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        with conn:
            try:
                while size := _read(conn, 4):
                    header, body = parse_request(_read(conn, struct.unpack(">i", size)[0]))
                    payload = encode_response(header.api, header.api_version, header.correlation_id,
                                              self._answer(header.api, body))  # fmt: skip
                    conn.sendall(struct.pack(">i", len(payload)) + payload)
            except OSError:
                pass

    def _answer(self, api: ApiKeys, body: dict) -> dict:
        if api == ApiKeys.METADATA:
            partition = {"partition_error_code": 0, "leader": 0, "replicas": [0], "isr": [0]}
            return {
                "brokers": [{"node_id": 0, "host": "127.0.0.1", "port": self.port, "rack": None}],
                "controller_id": 0,
                "topic_metadata": [{"topic_error_code": 0, "topic": TOPIC, "is_internal": False,
                                    "partition_metadata": [{**partition, "partition_id": p} for p in range(4)]}],
            }  # fmt: skip
        if api == ApiKeys.FIND_COORDINATOR:
            return {"error_code": 0, "coordinator": {"node_id": 0, "host": "127.0.0.1", "port": self.port}}
        if api == ApiKeys.OFFSET_COMMIT:
            self.commits.append(body)
            return {
                "responses": [
                    {"topic": t["topic"], "partition_responses": [
                        {"partition": p["partition"], "error_code": self.commit_error.code} for p in t["partitions"]]}
                    for t in body["topics"]
                ]
            }  # fmt: skip
        raise AssertionError(f"the scripted coordinator got an unexpected {api.api_name} request")

    def committed_offsets(self) -> dict:
        return {
            (t["topic"], p["partition"]): p["offset"]
            for body in self.commits
            for t in body["topics"]
            for p in t["partitions"]
        }

    def close(self) -> None:
        try:
            self.listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.listener.close()
        self._thread.join(5)


def _read(conn: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            return b""
        data += chunk
    return data


class Listener(ConsumerRebalanceListener):
    """Records every call; ``at_revoke`` runs inside on_partitions_revoked, ``fail`` is raised there."""

    def __init__(self, fail: BaseException | None = None, at_revoke=None) -> None:
        self.events: list[tuple[str, set]] = []
        self.fail = fail
        self.at_revoke = at_revoke

    def on_partitions_revoked(self, partitions):
        self.events.append(("revoked", set(partitions)))
        if self.at_revoke is not None:
            self.at_revoke()
        if self.fail is not None:
            raise self.fail

    def on_partitions_assigned(self, partitions):
        self.events.append(("assigned", set(partitions)))
        if self.fail is not None:
            raise self.fail


@pytest.fixture
def make():
    made = []

    def build(listener=None, auto_commit=False, time=None, server=None):
        time = time or SYSTEM
        metadata = Metadata(refresh_backoff_ms=50, time=time)
        metadata.bootstrap([("127.0.0.1", server.port) if server else NOWHERE], time.milliseconds())
        metadata.topics = {TOPIC}
        network = NetworkClient(
            Selector(time=time), "lab8", request_timeout_ms=30_000, time=time, metadata=metadata
        )
        client = ConsumerNetworkClient(network, metadata, time, 50, 30_000)
        subscriptions = SubscriptionState(OffsetResetStrategy.EARLIEST)
        subscriptions.subscribe([TOPIC], listener or Listener())
        coordinator = ConsumerCoordinator(
            client, GROUP, 60_000, 10_000, 3_000, [RangeAssignor()], metadata, subscriptions, time, 50,
            auto_commit, AUTO_COMMIT_INTERVAL,
        )  # fmt: skip
        made.append(client)
        return coordinator

    yield build
    for client in made:
        client.close()


@pytest.fixture
def coordinator_server():
    server = Coordinator()
    yield server
    server.close()


def _assignment(*partitions) -> bytes:
    return serialize_assignment(Assignment(list(partitions)))


def _in_generation(c: ConsumerCoordinator, generation: int) -> None:
    """The member as it stands after a completed join of ``generation``: what join_group_if_needed
    leaves before the next rebalance calls on_join_prepare."""
    c._generation = Generation(generation, MEMBER, "range")
    c.state = MemberState.STABLE
    c.rejoin_needed = False


@pytest.mark.stage(3)
@pytest.mark.points(3)
def test_the_assignment_is_taken_and_the_listener_told(make):
    listener = Listener()
    c = make(listener)
    c.subscriptions.commits_refreshed()
    c.on_join_complete(1, MEMBER, "range", _assignment(T0, (TOPIC, 2)))
    s = c.subscriptions
    assert s.assigned_partitions() == {T0, (TOPIC, 2)}, (
        f"the SyncGroup assigned orders-0 and orders-2; the consumer has {sorted(s.assigned_partitions())}"
    )
    assert s.position(T0) is None and s.refresh_commits_needed(), (
        f"new partitions should start without a position (orders-0's is {s.position(T0)}) and from committed "
        f"offsets fetched again (a refresh pending: {s.refresh_commits_needed()})"
    )
    assert listener.events == [("assigned", {T0, (TOPIC, 2)})], (
        f"the listener hears of the new partitions once: {listener.events}"
    )


@pytest.mark.stage(3)
@pytest.mark.points(2)
def test_a_new_assignment_replaces_the_old_one(make):
    listener = Listener()
    c = make(listener)
    c.on_join_complete(1, MEMBER, "range", _assignment(T0, T1))
    c.subscriptions.seek(T0, 42)
    c.on_join_complete(2, MEMBER, "range", _assignment(T1, (TOPIC, 3)))
    s = c.subscriptions
    assert s.assigned_partitions() == {T1, (TOPIC, 3)}, sorted(s.assigned_partitions())
    assert s.position(T1) is None, "every partition of a new assignment starts afresh, a kept one too"
    assert listener.events[-1] == ("assigned", {T1, (TOPIC, 3)}), listener.events


@pytest.mark.stage(3)
@pytest.mark.points(2)
def test_the_next_auto_commit_is_a_full_interval_after_the_join(make):
    time = MockTime()
    c = make(auto_commit=True, time=time)
    time.sleep(12_345)
    c.on_join_complete(1, MEMBER, "range", _assignment(T0))
    assert c.next_auto_commit_deadline == time.milliseconds() + AUTO_COMMIT_INTERVAL, (
        f"joined at {time.milliseconds()} with auto.commit.interval.ms {AUTO_COMMIT_INTERVAL}: the next "
        f"auto-commit is due at {c.next_auto_commit_deadline}"
    )


@pytest.mark.stage(3)
@pytest.mark.points(2)
def test_a_listener_that_raises_does_not_stop_the_join_but_a_wakeup_does(make):
    c = make(Listener(fail=RuntimeError("the application's bug")))
    c.on_join_complete(1, MEMBER, "range", _assignment(T0))  # logged, not raised
    assert c.subscriptions.assigned_partitions() == {T0}
    c = make(Listener(fail=WakeupException("woken")))
    with pytest.raises(WakeupException):
        c.on_join_complete(1, MEMBER, "range", _assignment(T0))


@pytest.mark.stage(3)
@pytest.mark.points(2)
def test_a_follower_forgets_the_partition_count_snapshot_and_a_wrong_protocol_is_refused(make):
    c = make()
    snapshot = c.metadata_snapshot
    c.is_leader, c.assignment_snapshot = True, snapshot
    c.on_join_complete(1, MEMBER, "range", _assignment(T0))
    assert c.assignment_snapshot is snapshot, "the leader keeps the snapshot it assigned from"
    c.is_leader = False
    c.on_join_complete(2, MEMBER, "range", _assignment(T0))
    assert c.assignment_snapshot is None, (
        "a follower still holds the leader's metadata snapshot (assignment_snapshot): partition counts "
        "are the leader's to watch"
    )
    with pytest.raises(IllegalStateException, match="invalid assignment protocol: sticky"):
        c.on_join_complete(3, MEMBER, "sticky", _assignment(T1))
    assert c.subscriptions.assigned_partitions() == {T0}, "a refused assignment is not taken"


@pytest.mark.stage(3)
@pytest.mark.points(3)
def test_before_a_rejoin_the_partitions_are_revoked_and_leadership_given_up(make):
    listener = Listener()
    c = make(listener)
    c.on_join_complete(1, MEMBER, "range", _assignment(T0, T1))
    c.is_leader = True
    c.subscriptions.group_subscribe({"payments"})  # the leader learned the others' topics
    _in_generation(c, 1)
    c.on_join_prepare(1, MEMBER)
    assert listener.events[-1] == ("revoked", {T0, T1}), (
        f"the listener hears that every assigned partition is revoked: {listener.events}"
    )
    assert not c.is_leader, "before the join, nobody knows who leads, yet the member still says it leads"
    assert c.subscriptions.group_subscription() == {TOPIC}, (
        f"the group subscription is still the leader's {sorted(c.subscriptions.group_subscription())}, "
        f"not this member's own topics ['{TOPIC}']"
    )
    c = make(Listener(fail=WakeupException("woken")))
    with pytest.raises(WakeupException):
        c.on_join_prepare(1, MEMBER)


@pytest.mark.stage(3)
@pytest.mark.points(3)
def test_with_auto_commit_the_positions_are_committed_before_the_revoke(make, coordinator_server):
    committed_at_revoke = []
    listener = Listener(at_revoke=lambda: committed_at_revoke.append(coordinator_server.committed_offsets()))
    c = make(listener, auto_commit=True, server=coordinator_server)
    c.on_join_complete(1, MEMBER, "range", _assignment(T0, T1))
    c.subscriptions.seek(T0, 17)
    c.subscriptions.seek(T1, 4)
    _in_generation(c, 1)
    c.on_join_prepare(1, MEMBER)
    assert committed_at_revoke == [{T0: 17, T1: 4}], (
        "with enable.auto.commit the positions are committed synchronously, and the commit is answered "
        "before the listener hears of the revoke (so the partitions' next owner starts where this member "
        f"stopped); committed when the listener ran: {committed_at_revoke}"
    )
    (body,) = coordinator_server.commits
    assert (body["group_generation_id"], body["member_id"]) == (1, MEMBER), "committed in generation 1"


@pytest.mark.stage(3)
@pytest.mark.points(2)
def test_a_failed_auto_commit_does_not_stop_the_rebalance(make, coordinator_server):
    coordinator_server.commit_error = Errors.OFFSET_METADATA_TOO_LARGE
    listener = Listener()
    c = make(listener, auto_commit=True, server=coordinator_server)
    c.on_join_complete(1, MEMBER, "range", _assignment(T0))
    c.subscriptions.seek(T0, 5)
    _in_generation(c, 1)
    c.on_join_prepare(1, MEMBER)  # the commit fails: logged, and the rebalance goes on
    assert len(coordinator_server.commits) == 1, "the commit was sent"
    assert listener.events[-1] == ("revoked", {T0}), listener.events
    c = make(Listener(), auto_commit=False, server=coordinator_server)
    c.on_join_complete(1, MEMBER, "range", _assignment(T0))
    c.subscriptions.seek(T0, 9)
    _in_generation(c, 1)
    c.on_join_prepare(1, MEMBER)
    assert len(coordinator_server.commits) == 1, "without auto-commit nothing is committed"
