"""KafkaConsumer: its configs and their errors; assign-mode consumption against the session's real
three-broker cluster (records written by kafka_lite's producer), with seeks, pauses, offsets by time,
the reset strategies, max_poll_records, iteration and poll's pipelined fetch; and, with the broker's
group coordinator, consumer groups end to end.

Every wait is a condition with a deadline."""

from __future__ import annotations

import re
import threading

import pytest

from kafka_lite import KafkaConsumer
from kafka_lite.common.errors import (
    ConfigException,
    IllegalArgumentException,
    IllegalStateException,
    InvalidGroupIdException,
    WakeupException,
)
from kafka_lite.consumer.internals.fetcher import NoOffsetForPartitionException, OffsetAndTimestamp
from kafka_lite.consumer.kafka_consumer import ConcurrentModificationException
from kafka_lite.consumer.round_robin_assignor import RoundRobinAssignor
from tests.support.topics import topic_name
from tests.support.waiting import wait_until

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
    cluster.create_topic(topic, partitions=2)
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
