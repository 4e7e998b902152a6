"""KafkaConsumer: its configs and their errors; assign-mode consumption against the session's real
three-broker cluster (records written by kafka_lite's producer), with seeks, pauses, offsets by time,
the reset strategies, max_poll_records, iteration and poll's pipelined fetch; and, with the broker's
group coordinator, consumer groups end to end.

Every wait is a condition with a deadline."""

from __future__ import annotations

import re
import threading
from typing import ClassVar

import pytest

from kafka_lite import KafkaConsumer
from kafka_lite.common.errors import (
    ConfigException,
    IllegalArgumentException,
    IllegalStateException,
    InvalidGroupIdException,
    WakeupException,
)
from kafka_lite.consumer import NoOffsetForPartitionException, OffsetAndTimestamp
from kafka_lite.consumer.consumer_rebalance_listener import ConsumerRebalanceListener
from kafka_lite.consumer.kafka_consumer import ConcurrentModificationException
from kafka_lite.consumer.offset_and_metadata import OffsetAndMetadata
from kafka_lite.consumer.round_robin_assignor import RoundRobinAssignor
from tests.support.topics import topic_name
from tests.support.waiting import wait_until

# Past the default 7-day retention: the tests' topics keep records forever (retention.ms=-1), or the
# broker's retention check, every 5 minutes, would delete them at a moment no test chooses.
T0 = 1_600_000_000_000  # record i of a produced batch has timestamp T0 + 1000 * i
NOWHERE = "127.0.0.1:1"  # a bootstrap server for consumers that never reach the network


def consumer(**configs) -> KafkaConsumer:
    return KafkaConsumer(bootstrap_servers=NOWHERE, **configs)


# -- configs (no broker) ---------------------------------------------------------------------------------------


@pytest.mark.unit
def test_an_unknown_config_is_refused_with_the_closest_names():
    with pytest.raises(ConfigException, match=r"Unknown configuration 'session_timeout'.*session.timeout.ms"):
        consumer(session_timeout=6000)


@pytest.mark.unit
@pytest.mark.parametrize(
    "configs, named",
    [
        ({"max_poll_records": 0}, "max.poll.records"),
        ({"auto_offset_reset": "smallest"}, "auto.offset.reset"),
        ({"fetch_min_bytes": -1}, "fetch.min.bytes"),
        ({"session_timeout_ms": "soon"}, "session.timeout.ms"),
        ({"enable_auto_commit": "maybe"}, "enable.auto.commit"),
        ({"heartbeat_interval_ms": 10_000}, "heartbeat.interval.ms"),
        ({"request_timeout_ms": 10_000}, "request.timeout.ms"),
        ({"partition_assignment_strategy": ["sticky"]}, "partition.assignment.strategy"),
        ({"partition_assignment_strategy": [42]}, "partition.assignment.strategy"),
        ({"enable_auto_commit": True}, "enable.auto.commit"),  # without a group.id
    ],
)
def test_a_bad_config_value_is_refused_naming_the_config(configs, named):
    with pytest.raises(ConfigException, match=re.escape(named)):
        consumer(**configs)


@pytest.mark.unit
def test_the_hold_back_is_ours_and_off_unless_asked_for():
    with consumer() as kafkas_rule, consumer(fetch_hold_back_caught_up=True) as held:
        assert kafkas_rule.fetcher.hold_back_caught_up is False, "Kafka's fetch rule by default"
        assert held.fetcher.hold_back_caught_up is True


@pytest.mark.unit
def test_bootstrap_servers_is_required():
    with pytest.raises(ConfigException, match=r"bootstrap\.servers"):
        KafkaConsumer()


@pytest.mark.unit
def test_assignors_are_taken_by_name_class_or_object_and_default_to_range_then_roundrobin():
    c = consumer(group_id="g")
    assert [a.name() for a in c.coordinator.assignors] == ["range", "roundrobin"]
    c.close()
    c = consumer(group_id="g", partition_assignment_strategy=["roundrobin", RoundRobinAssignor])
    assert [a.name() for a in c.coordinator.assignors] == ["roundrobin", "roundrobin"]
    c.close()


@pytest.mark.unit
def test_without_a_group_id_group_apis_raise_and_auto_commit_is_off():
    c = consumer()
    assert c.coordinator is None
    with pytest.raises(InvalidGroupIdException, match=r"must provide a valid group\.id"):
        c.subscribe(["t"])
    with pytest.raises(InvalidGroupIdException):
        c.commit()
    with pytest.raises(InvalidGroupIdException):
        c.commit_async()
    with pytest.raises(InvalidGroupIdException):
        c.committed(("t", 0))
    c.close()


@pytest.mark.unit
def test_poll_without_a_subscription_or_assignment_raises():
    with consumer() as c, pytest.raises(IllegalStateException, match="not subscribed to any topics"):
        c.poll()


@pytest.mark.unit
def test_a_poll_that_cannot_find_the_coordinator_returns_nothing_after_its_timeout():
    """The search for the group's coordinator counts against poll's timeout (Kafka 2.0, KIP-266):
    against brokers that are down, a poll of 200 ms returns nothing rather than waiting on."""
    c = consumer(group_id="g")
    c.subscribe(["t"])
    polled = []
    thread = threading.Thread(target=lambda: polled.append(c.poll(timeout_ms=200)), daemon=True)
    thread.start()
    thread.join(20)
    assert polled == [{}] and c.assignment() == set()
    c.close(timeout_ms=1000)


@pytest.mark.unit
def test_subscribe_needs_exactly_one_of_topics_and_pattern_and_a_list_of_topics():
    with consumer(group_id="g") as c:
        with pytest.raises(IllegalStateException, match="exactly one"):
            c.subscribe(["a"], pattern="a.*")
        with pytest.raises(IllegalStateException, match="exactly one"):
            c.subscribe()
        with pytest.raises(IllegalArgumentException, match=r"write \['orders'\] for one topic"):
            c.subscribe("orders")
        c.subscribe(pattern="orders-.*")
        with pytest.raises(IllegalStateException, match="mutually exclusive"):
            c.assign([("orders-1", 0)])
        c.unsubscribe()
        c.assign([("orders-1", 0)])
        assert c.assignment() == {("orders-1", 0)}
        with pytest.raises(IllegalArgumentException, match="You can only check the position"):
            c.position(("orders-1", 1))
        with pytest.raises(IllegalArgumentException, match="seek offset must not be a negative number"):
            c.seek(("orders-1", 0), -1)
        with pytest.raises(IllegalArgumentException, match="seek offset must be a whole number, not '5'"):
            c.seek(("orders-1", 0), "5")
        with pytest.raises(IllegalArgumentException, match="offset to commit for partition"):
            c.commit({("orders-1", 0): -5})


@pytest.mark.unit
def test_topics_given_to_the_constructor_are_subscribed():
    with consumer(group_id="g") as c2:
        assert c2.subscription() == set()
    with KafkaConsumer("a", "b", bootstrap_servers=NOWHERE, group_id="g") as c:
        assert c.subscription() == {"a", "b"}


@pytest.mark.unit
def test_a_second_thread_is_refused_while_one_is_inside():
    c = consumer()
    c._acquire()  # as if this thread were inside poll
    try:
        errors = []

        def other():
            try:
                c.assign([("t", 0)])
            except ConcurrentModificationException as e:
                errors.append(e)

        thread = threading.Thread(target=other)
        thread.start()
        thread.join(10)
        assert errors and "not safe for multi-threaded access" in str(errors[0])
    finally:
        c._release()
    c.close()
    with pytest.raises(IllegalStateException, match="already been closed"):
        c.poll()


# -- assign mode on the real cluster ------------------------------------------------------------------------------


def produce(cluster, topic: str, partition: int, count: int, start: int = 0) -> None:
    """Records ``start``..``start+count-1`` into one partition with kafka_lite's producer: key k<i>,
    value v<i>, timestamp T0 + 1000 * i."""
    from kafka_lite import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, linger_ms=20)
    try:
        futures = [
            producer.send(
                topic, f"v{i}".encode(), key=f"k{i}".encode(), partition=partition, timestamp_ms=T0 + 1000 * i
            )
            for i in range(start, start + count)
        ]
        for future in futures:
            future.get(timeout=15)
    finally:
        producer.close()


@pytest.fixture
def make(cluster):
    made: list[KafkaConsumer] = []

    def build(**configs) -> KafkaConsumer:
        configs = {"fetch_max_wait_ms": 100, "request_timeout_ms": 30_000, **configs}
        c = KafkaConsumer(bootstrap_servers=cluster.bootstrap_servers, **configs)
        made.append(c)
        return c

    yield build
    for c in made:
        c.close(timeout_ms=5000)


def poll_until(c: KafkaConsumer, count: int, timeout_s: float = 15, **poll_args) -> list:
    got: list = []

    def enough() -> bool:
        for records in c.poll(timeout_ms=100, **poll_args).values():
            got.extend(records)
        return len(got) >= count

    wait_until(enough, timeout_s, what=f"{count} records (have {len(got)})")
    return got


@pytest.fixture(scope="module")
def filled(cluster):
    """A 2-partition topic with 10 records in each partition."""
    topic = topic_name("consumer-assign")
    cluster.create_topic(topic, partitions=2, retention_ms=-1)
    produce(cluster, topic, 0, 10)
    produce(cluster, topic, 1, 10)
    return topic


@pytest.mark.integration
def test_assigned_partitions_are_read_from_the_beginning_in_order_with_deserializers(make, filled):
    c = make(key_deserializer=bytes.decode, value_deserializer=bytes.decode)
    c.assign([(filled, 0), (filled, 1)])
    c.seek_to_beginning()
    records = poll_until(c, 20)
    by_partition = {p: [r for r in records if r.partition == p] for p in (0, 1)}
    for p in (0, 1):
        assert [r.offset for r in by_partition[p]] == list(range(10))
        assert [r.value for r in by_partition[p]] == [f"v{i}" for i in range(10)]
        assert [r.key for r in by_partition[p]] == [f"k{i}" for i in range(10)]
        assert [r.timestamp for r in by_partition[p]] == [T0 + 1000 * i for i in range(10)]
    assert c.position((filled, 0)) == 10 and c.position((filled, 1)) == 10


@pytest.mark.integration
def test_poll_sends_the_next_fetch_before_it_returns_records(make, filled):
    c = make()
    c.assign([(filled, 0)])
    c.seek((filled, 0), 0)
    records = poll_until(c, 1, max_records=1)
    assert [r.offset for r in records] == [0]
    # The rest of the first fetch is buffered; with nothing buffered for the partition a fetch would
    # be in flight. Drain the buffer, then the pipelined fetch is out as poll returns.
    poll_until(c, 9, max_records=9)
    assert c.client.pending_request_count() >= 1, "poll returned records without sending the next fetch"


@pytest.mark.integration
def test_max_poll_records_and_max_records_bound_each_poll(make, filled):
    c = make(max_poll_records=3)
    c.assign([(filled, 0)])
    c.seek((filled, 0), 0)
    sizes = []

    def all_read() -> bool:
        for records in c.poll(timeout_ms=100).values():
            sizes.append(len(records))
        return sum(sizes) >= 10

    wait_until(all_read, what="the partition's ten records")
    assert max(sizes) == 3 and sum(sizes) == 10
    c.seek((filled, 0), 0)
    got = poll_until(c, 1, max_records=2)
    assert len(got) <= 2


@pytest.mark.integration
def test_seek_position_and_seek_to_end(make, filled):
    c = make(value_deserializer=bytes.decode)
    c.assign([(filled, 0)])
    c.seek((filled, 0), 7)
    assert c.position((filled, 0)) == 7
    assert [r.value for r in poll_until(c, 3)] == ["v7", "v8", "v9"]
    c.seek_to_beginning((filled, 0))
    assert c.position((filled, 0)) == 0
    c.seek_to_end((filled, 0))
    assert c.position((filled, 0)) == 10
    assert c.poll(timeout_ms=200) == {}


@pytest.mark.integration
def test_a_paused_partition_is_not_fetched_until_resumed(make, filled):
    c = make()
    c.assign([(filled, 0), (filled, 1)])
    c.seek_to_beginning()
    c.pause((filled, 1))
    assert c.paused() == {(filled, 1)}
    records = poll_until(c, 10)
    assert {r.partition for r in records} == {0}
    assert c.poll(timeout_ms=300) == {}
    c.resume((filled, 1))
    assert c.paused() == set()
    assert {r.partition for r in poll_until(c, 10)} == {1}


@pytest.mark.integration
def test_offsets_for_times_and_beginning_and_end_offsets(make, filled):
    c = make()
    tps = [(filled, 0), (filled, 1)]
    assert c.beginning_offsets(tps) == {(filled, 0): 0, (filled, 1): 0}
    assert c.end_offsets(tps) == {(filled, 0): 10, (filled, 1): 10}
    found = c.offsets_for_times({(filled, 0): T0 + 3500, (filled, 1): T0 + 100_000})
    assert found == {(filled, 0): OffsetAndTimestamp(4, T0 + 4000), (filled, 1): None}


@pytest.mark.integration
@pytest.mark.parametrize("reset, first", [("earliest", 0), ("latest", None)])
def test_auto_offset_reset_starts_a_partition_without_a_position(make, filled, reset, first):
    c = make(auto_offset_reset=reset)
    c.assign([(filled, 1)])
    assert c.position((filled, 1)) == (0 if first == 0 else 10)
    if first is None:
        assert c.poll(timeout_ms=200) == {}
    else:
        assert poll_until(c, 1)[0].offset == 0


@pytest.mark.integration
def test_auto_offset_reset_none_raises(make, filled):
    c = make(auto_offset_reset="none")
    c.assign([(filled, 0)])
    with pytest.raises(NoOffsetForPartitionException, match=f"{filled}-0"):
        c.poll(timeout_ms=100)


@pytest.mark.integration
def test_iteration_yields_records_and_stops_after_consumer_timeout_ms(make, filled):
    c = make(consumer_timeout_ms=500, value_deserializer=bytes.decode)
    c.assign([(filled, 0)])
    c.seek((filled, 0), 5)
    assert [r.value for r in c] == ["v5", "v6", "v7", "v8", "v9"]


@pytest.mark.integration
def test_wakeup_makes_the_next_or_the_blocked_poll_raise(make, filled):
    c = make()
    c.assign([(filled, 0)])
    c.seek_to_end()
    c.wakeup()  # no poll is blocked: the next one raises
    with pytest.raises(WakeupException):
        c.poll(timeout_ms=10_000)
    assert c.poll(timeout_ms=0) == {}  # raised once per wakeup

    outcome: list = []

    def blocked_poll() -> None:
        try:
            outcome.append(c.poll(timeout_ms=60_000))
        except WakeupException as e:
            outcome.append(e)

    thread = threading.Thread(target=blocked_poll)
    thread.start()
    wait_until(lambda: c._current_thread != -1, what="the poll to start")
    c.wakeup()
    thread.join(15)
    assert not thread.is_alive() and isinstance(outcome[0], WakeupException)


@pytest.mark.integration
def test_topics_and_partitions_for(make, filled):
    c = make()
    assert filled in c.topics()
    assert c.partitions_for_topic(filled) == {0, 1}
    assert [p.partition for p in c.partitions_for(filled)] == [0, 1]
    assert c.partitions_for_topic(topic_name("no-such-topic")) is None


# -- consumer groups on the real cluster -------------------------------------------------------------------------

GROUP_TIMEOUTS = {"session_timeout_ms": 6000, "heartbeat_interval_ms": 300, "request_timeout_ms": 30_000}


class RecordingListener(ConsumerRebalanceListener):
    def __init__(self) -> None:
        self.events: list[tuple[str, set]] = []

    def on_partitions_revoked(self, partitions):
        self.events.append(("revoked", set(partitions)))

    def on_partitions_assigned(self, partitions):
        self.events.append(("assigned", set(partitions)))


class Member:
    """A consumer in a group, polling in a thread of its own (a member blocked in a rebalance must
    not keep another member from rejoining), keeping every record it reads."""

    def __init__(self, cluster, group: str, topics=None, pattern=None, **configs) -> None:
        configs = {"auto_offset_reset": "earliest", "fetch_max_wait_ms": 100, **GROUP_TIMEOUTS, **configs}
        self.consumer = KafkaConsumer(bootstrap_servers=cluster.bootstrap_servers, group_id=group, **configs)
        self.listener = RecordingListener()
        self.consumer.subscribe(topics, pattern=pattern, listener=self.listener)
        self.records: list = []
        self.polling = threading.Event()
        self.polling.set()
        self.error: BaseException | None = None
        self._stop = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            while not self._stop:
                if not self.polling.is_set():
                    self.polling.wait(0.05)  # paused by the test: no poll at all
                    continue
                for records in self.consumer.poll(timeout_ms=50).values():
                    self.records.extend(records)
        except BaseException as e:  # surfaced by the test through assignment()/close()
            self.error = e

    def assignment(self) -> set:
        assert self.error is None, f"the member's poll loop failed: {self.error!r}"
        return self.consumer.assignment()

    def read(self) -> set:
        return {(r.partition, r.offset) for r in self.records}

    def close(self) -> None:
        self._stop = True
        self.polling.set()
        self.thread.join(15)
        assert not self.thread.is_alive(), "the member's poll loop did not stop"
        self.consumer.close(timeout_ms=5000)
        assert self.error is None, f"the member's poll loop failed: {self.error!r}"


@pytest.fixture
def members(cluster):
    made: list[Member] = []

    def build(group: str, topics=None, **configs) -> Member:
        m = Member(cluster, group, topics, **configs)
        made.append(m)
        return m

    yield build
    for m in made:
        if m.thread.is_alive() or not m.consumer._closed:
            m._stop = True
            m.polling.set()
            m.thread.join(15)
            m.consumer.close(timeout_ms=5000)


def owners_partition_the_topic(topic: str, partitions: int, *group: Member) -> bool:
    """Every partition is owned by exactly one of ``group``, and each has a share."""
    owned = [tp for m in group for tp in m.assignment()]
    return sorted(owned) == [(topic, p) for p in range(partitions)] and all(m.assignment() for m in group)


def filled_topic(cluster, prefix: str, partitions: int = 4, per_partition: int = 10) -> str:
    topic = topic_name(prefix)
    cluster.create_topic(topic, partitions=partitions, retention_ms=-1)
    for p in range(partitions):
        produce(cluster, topic, p, per_partition)
    return topic


def all_offsets(partitions: int, per_partition: int) -> set:
    return {(p, o) for p in range(partitions) for o in range(per_partition)}


@pytest.mark.integration
def test_two_consumers_in_a_group_share_a_four_partition_topic(cluster, members):
    topic = filled_topic(cluster, "group-share")
    group = topic_name("g-share")
    a = members(group, [topic])
    wait_until(
        lambda: owners_partition_the_topic(topic, 4, a), what="the first member to own all four partitions"
    )
    b = members(group, [topic])
    wait_until(
        lambda: owners_partition_the_topic(topic, 4, a, b), what="the two members to split the partitions"
    )
    assert len(a.assignment()) == len(b.assignment()) == 2
    wait_until(lambda: a.read() | b.read() >= all_offsets(4, 10), what="every record read by one of the two")
    assert a.read() | b.read() == all_offsets(4, 10)


@pytest.mark.integration
def test_a_member_that_only_ever_polls_with_timeout_zero_joins_and_reads(cluster, make):
    """poll(0) never waits, yet each one moves the search for the coordinator on (the
    FindCoordinator request stays in flight between polls), so the member finds it and joins."""
    topic = filled_topic(cluster, "group-poll-zero", partitions=2, per_partition=3)
    c = make(group_id=topic_name("g-poll-zero"), auto_offset_reset="earliest", **GROUP_TIMEOUTS)
    c.subscribe([topic])
    read: set = set()

    def poll_zero() -> bool:
        for records in c.poll(timeout_ms=0).values():
            read.update((r.partition, r.offset) for r in records)
        return read == all_offsets(2, 3)

    wait_until(poll_zero, 30, what="every record, read by polls of 0 ms")
    assert c.assignment() == {(topic, 0), (topic, 1)}


@pytest.mark.integration
def test_a_rebalance_calls_the_listener_with_the_revoked_then_the_assigned_partitions(cluster, members):
    topic = filled_topic(cluster, "group-listener", per_partition=1)
    group = topic_name("g-listener")
    a = members(group, [topic])
    wait_until(lambda: owners_partition_the_topic(topic, 4, a), what="the first member's assignment")
    assert a.listener.events == [("revoked", set()), ("assigned", {(topic, p) for p in range(4)})]
    b = members(group, [topic])
    wait_until(lambda: owners_partition_the_topic(topic, 4, a, b), what="the rebalance")
    assert a.listener.events[2] == ("revoked", {(topic, p) for p in range(4)})
    assert a.listener.events[-1] == ("assigned", a.assignment())
    assert b.listener.events[-1] == ("assigned", b.assignment())


@pytest.mark.integration
def test_a_member_that_closes_leaves_and_the_group_rebalances_at_once(cluster, members):
    topic = filled_topic(cluster, "group-close", per_partition=1)
    group = topic_name("g-close")
    # A session timeout far longer than the wait below: only the LeaveGroup can explain the rebalance.
    a = members(group, [topic], session_timeout_ms=60_000, request_timeout_ms=90_000)
    b = members(group, [topic], session_timeout_ms=60_000, request_timeout_ms=90_000)
    wait_until(lambda: owners_partition_the_topic(topic, 4, a, b), 30, what="two members sharing the topic")
    b.close()
    wait_until(
        lambda: owners_partition_the_topic(topic, 4, a),
        15,
        what="the remaining member to take every partition",
    )


@pytest.mark.integration
def test_commit_and_committed_and_a_new_consumer_resumes_from_the_committed_offsets(cluster, make):
    topic = filled_topic(cluster, "group-commit", partitions=1)
    group = topic_name("g-commit")
    first = make(group_id=group, enable_auto_commit=False, auto_offset_reset="earliest", **GROUP_TIMEOUTS)
    first.subscribe([topic])
    records = poll_until(first, 4, max_records=4)
    assert [r.offset for r in records] == [0, 1, 2, 3]
    assert first.committed((topic, 0)) is None
    first.commit()
    assert first.committed((topic, 0)) == 4
    first.commit({(topic, 0): OffsetAndMetadata(6, "six")})
    assert first.committed((topic, 0), metadata=True) == OffsetAndMetadata(6, "six")
    first.close()

    second = make(group_id=group, enable_auto_commit=False, auto_offset_reset="earliest", **GROUP_TIMEOUTS)
    second.subscribe([topic])
    assert [r.offset for r in poll_until(second, 4)] == [6, 7, 8, 9]


class EvenOffsetsOnly:
    """Keeps the records of even offsets, and notes every commit it hears of."""

    commits: ClassVar[list] = []

    def on_consume(self, records):
        return {tp: [r for r in rs if r.offset % 2 == 0] for tp, rs in records.items()}

    def on_commit(self, offsets):
        EvenOffsetsOnly.commits.append(dict(offsets))


@pytest.mark.integration
def test_interceptors_see_what_poll_returns_and_every_acknowledged_commit(cluster, make):
    topic = filled_topic(cluster, "group-intercept", partitions=1, per_partition=6)
    EvenOffsetsOnly.commits.clear()
    c = make(group_id=topic_name("g-intercept"), enable_auto_commit=False, auto_offset_reset="earliest",
             interceptor_classes=[EvenOffsetsOnly], **GROUP_TIMEOUTS)  # fmt: skip
    c.subscribe([topic])
    assert [r.offset for r in poll_until(c, 3)] == [0, 2, 4]
    assert c.position((topic, 0)) == 6, "a record an interceptor drops is consumed all the same"
    c.commit()
    assert EvenOffsetsOnly.commits == [{(topic, 0): OffsetAndMetadata(6)}]
    c.commit_async({(topic, 0): OffsetAndMetadata(5, "five")})
    wait_until(lambda: c.poll(timeout_ms=50) == {} and len(EvenOffsetsOnly.commits) == 2, what="on_commit")
    assert EvenOffsetsOnly.commits[1] == {(topic, 0): OffsetAndMetadata(5, "five")}
    assert c.committed((topic, 0)) == 5


@pytest.mark.integration
def test_metrics_count_the_fetches_records_rebalance_commits_and_heartbeats(cluster, make):
    topic = filled_topic(cluster, "group-metrics", partitions=1, per_partition=6)
    c = make(group_id=topic_name("g-metrics"), enable_auto_commit=False, auto_offset_reset="earliest",
             **GROUP_TIMEOUTS)  # fmt: skip
    c.subscribe([topic])
    records = poll_until(c, 4, max_records=4)
    m = c.metrics()
    assert m["records-consumed-total"] == len(records) == 4
    assert m["records-lag-max"] == 2, "the high watermark is 6, the position 4"
    assert m["assigned-partitions"] == 1
    assert m["fetch-total"] >= 1 and m["fetch-latency-max"] >= m["fetch-latency-avg"] >= 0
    batch_bytes = sum(r.serialized_value_size for r in records)  # at least the values' bytes came
    assert m["bytes-consumed-total"] >= batch_bytes and m["fetch-size-max"] >= m["fetch-size-avg"] > 0
    assert (m["join-total"], m["sync-total"], m["commit-total"]) == (1, 1, 0)
    poll_until(c, 2)
    c.commit()
    m = c.metrics()
    assert (m["records-consumed-total"], m["records-lag-max"], m["commit-total"]) == (6, 0, 1)
    assert m["commit-latency-max"] >= m["commit-latency-avg"] >= 0
    # GROUP_TIMEOUTS heartbeat every 300 ms: a heartbeat answer arrives within a few seconds.
    wait_until(lambda: c.metrics()["heartbeat-total"] >= 1, what="a heartbeat's answer")
    assert 0 <= c.metrics()["last-heartbeat-seconds-ago"] < 15


@pytest.mark.unit
def test_a_consumer_without_a_group_has_only_the_fetch_managers_metrics():
    with consumer() as c:
        m = c.metrics()
    assert m["fetch-total"] == m["records-consumed-total"] == m["assigned-partitions"] == 0
    assert "commit-total" not in m and "heartbeat-total" not in m


@pytest.mark.integration
def test_commit_async_calls_back_on_a_later_poll(cluster, make):
    topic = filled_topic(cluster, "group-async", partitions=1, per_partition=3)
    group = topic_name("g-async")
    c = make(group_id=group, enable_auto_commit=False, auto_offset_reset="earliest", **GROUP_TIMEOUTS)
    c.subscribe([topic])
    poll_until(c, 3)
    done: list = []
    c.commit_async(callback=lambda offsets, e: done.append((offsets, e)))
    wait_until(lambda: c.poll(timeout_ms=50) == {} and done, what="the commit's callback")
    assert done == [({(topic, 0): OffsetAndMetadata(3)}, None)]
    assert c.committed((topic, 0)) == 3


@pytest.mark.integration
def test_auto_commit_commits_the_positions_on_close(cluster, make):
    topic = filled_topic(cluster, "group-autocommit", partitions=1, per_partition=5)
    group = topic_name("g-auto")
    c = make(group_id=group, auto_commit_interval_ms=60_000, auto_offset_reset="earliest", **GROUP_TIMEOUTS)
    c.subscribe([topic])
    poll_until(c, 5)
    c.close()
    other = make(group_id=group, enable_auto_commit=False, **GROUP_TIMEOUTS)
    assert other.committed((topic, 0)) == 5


@pytest.mark.integration
def test_a_pattern_subscription_takes_matching_topics_including_new_ones(cluster, members):
    prefix = topic_name("pat")
    for suffix in ("a", "b"):
        cluster.create_topic(f"{prefix}-{suffix}", partitions=2, retention_ms=-1)
    cluster.create_topic(f"not-{prefix}", partitions=1, retention_ms=-1)
    m = members(topic_name("g-pattern"), pattern=re.escape(prefix) + "-.*", metadata_max_age_ms=300)
    expected = {(f"{prefix}-{s}", p) for s in ("a", "b") for p in range(2)}
    wait_until(lambda: m.assignment() == expected, what="the two matching topics' partitions")
    assert m.consumer.subscription() == {f"{prefix}-a", f"{prefix}-b"}
    cluster.create_topic(f"{prefix}-c", partitions=1, retention_ms=-1)
    wait_until(
        lambda: m.assignment() == expected | {(f"{prefix}-c", 0)}, what="the new matching topic's partition"
    )


@pytest.mark.integration
def test_the_heartbeat_thread_keeps_a_member_that_does_not_poll_for_longer_than_the_session(cluster, members):
    topic = filled_topic(cluster, "group-alive", per_partition=1)
    group = topic_name("g-alive")
    timeouts = {"session_timeout_ms": 1500, "heartbeat_interval_ms": 200, "max_poll_interval_ms": 60_000}
    a = members(group, [topic], **timeouts)
    b = members(group, [topic], **timeouts)
    wait_until(lambda: owners_partition_the_topic(topic, 4, a, b), 30, what="two members sharing the topic")
    generation, members_before = broker_view(cluster, group)
    assert len(members_before) == 2
    events_before = len(b.listener.events)
    a.polling.clear()  # a stops polling; its heartbeat thread goes on
    stopped = time_ms()
    # Three session timeouts without a poll from a: the coordinator must still count both members,
    # in the same generation.
    wait_until(lambda: time_ms() - stopped > 3 * 1500, what="three session timeouts")
    assert broker_view(cluster, group) == (generation, members_before), "the coordinator dropped a member"
    assert len(b.listener.events) == events_before, "the group rebalanced while a's heartbeats flowed"
    assert owners_partition_the_topic(topic, 4, a, b)
    a.polling.set()


@pytest.mark.integration
def test_a_member_that_does_not_poll_within_max_poll_interval_leaves_the_group(cluster, members):
    topic = filled_topic(cluster, "group-stuck", per_partition=1)
    group = topic_name("g-stuck")
    timeouts = {"session_timeout_ms": 20_000, "heartbeat_interval_ms": 200, "max_poll_interval_ms": 2000}
    a = members(group, [topic], **timeouts)
    b = members(group, [topic], **timeouts)
    wait_until(lambda: owners_partition_the_topic(topic, 4, a, b), 30, what="two members sharing the topic")
    a.polling.clear()  # a's application is stuck: after max.poll.interval.ms its heartbeat thread leaves
    wait_until(lambda: owners_partition_the_topic(topic, 4, b), 20, what="b to take every partition")
    a.polling.set()  # a polls again: it rejoins
    wait_until(lambda: owners_partition_the_topic(topic, 4, a, b), 30, what="a to rejoin")


def broker_view(cluster, group: str) -> tuple[int, set[str]]:
    """The group's generation and member ids as its coordinator (a broker of the cluster) holds them."""
    for server in cluster.servers:
        coordinator = server.group_coordinator if server.running else None
        found = coordinator.group_manager.get_group(group) if coordinator is not None else None
        if found is not None:
            return found.generation_id, found.all_members()
    raise AssertionError(f"no broker coordinates group {group}")


def time_ms() -> int:
    import time

    return time.monotonic_ns() // 1_000_000


@pytest.mark.integration
def test_a_kafka_lite_and_a_kafka_python_consumer_share_a_topic_in_one_group(cluster, members):
    import kafka

    topic = filled_topic(cluster, "group-mixed")
    group = topic_name("g-mixed")
    ours = members(group, [topic])
    theirs = kafka.KafkaConsumer(
        bootstrap_servers=cluster.bootstrap_servers,
        group_id=group,
        auto_offset_reset="earliest",
        session_timeout_ms=6000,
        heartbeat_interval_ms=300,
        api_version=(0, 11),
    )
    # the topic's metadata before subscribing (tests/server/test_group_apis.py says why)
    assert theirs.partitions_for_topic(topic), f"no metadata for {topic}"
    theirs.subscribe([topic])
    read: set = set()
    stop = threading.Event()

    def poll_theirs() -> None:
        while not stop.is_set():
            for records in theirs.poll(timeout_ms=50).values():
                read.update((r.partition, r.offset) for r in records)

    thread = threading.Thread(target=poll_theirs, daemon=True)
    thread.start()
    try:

        def shared() -> bool:
            mine = ours.assignment()
            other = {(tp.topic, tp.partition) for tp in theirs.assignment()}
            return len(mine) == len(other) == 2 and sorted(mine | other) == [(topic, p) for p in range(4)]

        wait_until(shared, 30, what="the two clients' consumers to split the four partitions")
        wait_until(
            lambda: ours.read() | read >= all_offsets(4, 10), what="every record read by one of the two"
        )
    finally:
        stop.set()
        thread.join(15)
        theirs.close()


@pytest.mark.integration
def test_an_assigned_consumer_with_a_group_id_commits_outside_any_generation(cluster, make):
    topic = filled_topic(cluster, "group-assign-commit", partitions=1, per_partition=5)
    group = topic_name("g-assign")
    first = make(group_id=group, enable_auto_commit=False, auto_offset_reset="earliest")
    first.assign([(topic, 0)])
    assert [r.offset for r in poll_until(first, 3, max_records=3)] == [0, 1, 2]
    first.commit()
    assert first.committed((topic, 0)) == 3
    first.close()
    second = make(group_id=group, enable_auto_commit=False, auto_offset_reset="earliest")
    second.assign([(topic, 0)])
    # No position given: the group's committed offset is where it starts.
    assert second.position((topic, 0)) == 3
    assert [r.offset for r in poll_until(second, 2)] == [3, 4]
