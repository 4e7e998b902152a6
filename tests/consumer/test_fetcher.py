"""Fetcher against the session's real three-broker cluster: records written by confluent-kafka (an
independent producer, with headers, timestamps and compression) and read back by the Fetcher driving
a real ConsumerNetworkClient and Metadata.

Every wait is a condition with a deadline."""

from __future__ import annotations

import time

import pytest

from kafka_lite.clients.metadata import Metadata
from kafka_lite.clients.network_client import NetworkClient
from kafka_lite.common.errors import ConfigException, Errors, IllegalArgumentException, KafkaException
from kafka_lite.common.record.compression import CompressionType
from kafka_lite.common.record.constants import TimestampType
from kafka_lite.common.record.default_record import Header
from kafka_lite.common.record.memory_records import MemoryRecords
from kafka_lite.common.time import SYSTEM
from kafka_lite.consumer.deserialization import SerializationException, StringDeserializer
from kafka_lite.consumer.internals.consumer_network_client import ConsumerNetworkClient
from kafka_lite.consumer import (
    NoOffsetForPartitionException,
    OffsetAndTimestamp,
    OffsetOutOfRangeException,
)
from kafka_lite.consumer.internals.fetcher import Fetcher
from kafka_lite.consumer.internals.subscription_state import SubscriptionState
from kafka_lite.consumer.offset_reset_strategy import OffsetResetStrategy
from kafka_lite.network.selector import Selector
from tests.support.topics import topic_name
from tests.support.waiting import wait_until

pytestmark = pytest.mark.integration
T0 = 1_600_000_000_000  # the records' CreateTime: T0 + 1000 * i


def produce(cluster, topic: str, partition: int, values: list[bytes], compression: str = "none") -> None:
    """Write ``values`` to one partition in one batch (confluent-kafka, lingering so the batch fills):
    record i has key k<i>, header ("i", b"<i>") and timestamp T0 + 1000 * i."""
    from confluent_kafka import Producer

    producer = Producer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "linger.ms": 200,
            "compression.type": compression,
            "api.version.request": True,
        }
    )
    errors = []
    for i, value in enumerate(values):
        producer.produce(
            topic,
            value=value,
            key=f"k{i}".encode(),
            partition=partition,
            headers=[("i", str(i).encode())],
            timestamp=T0 + 1000 * i,
            on_delivery=lambda err, _msg: errors.append(err) if err else None,
        )
    assert producer.flush(15) == 0, "confluent-kafka did not deliver every record within 15 s"
    assert not errors, errors


@pytest.fixture
def make(cluster):
    """Builds a Fetcher over a real ConsumerNetworkClient whose metadata knows ``topic``'s leaders."""
    made: list[ConsumerNetworkClient] = []

    def build(
        topic: str,
        partitions: int,
        strategy: OffsetResetStrategy = OffsetResetStrategy.EARLIEST,
        max_poll_records: int = 500,
        value_deserializer: object = None,
        **settings: int,
    ) -> tuple[Fetcher, ConsumerNetworkClient, SubscriptionState]:
        metadata = Metadata(refresh_backoff_ms=50, time=SYSTEM)
        metadata.bootstrap([("127.0.0.1", s.port) for s in cluster.servers], SYSTEM.milliseconds())
        network = NetworkClient(
            Selector(), client_id="fetcher-test", request_timeout_ms=30_000, time=SYSTEM, metadata=metadata
        )
        client = ConsumerNetworkClient(network, metadata, SYSTEM, 100, 30_000)
        made.append(client)
        metadata.add(topic)
        wait_until(
            lambda: (
                client.await_metadata_update(1000)
                and all(metadata.cluster.leader_for(topic, p) is not None for p in range(partitions))
            ),
            what=f"the leaders of {topic} in the consumer's metadata",
        )
        subscriptions = SubscriptionState(strategy)
        settings = {
            "min_bytes": 1,
            "max_wait_ms": 100,
            "max_bytes": 50 * 1024 * 1024,
            "max_partition_fetch_bytes": 1024 * 1024,
            **settings,
        }
        fetcher = Fetcher(
            client,
            **settings,
            max_poll_records=max_poll_records,
            key_deserializer=StringDeserializer(),
            value_deserializer=value_deserializer,
            metadata=metadata,
            subscriptions=subscriptions,
            time=SYSTEM,
            retry_backoff_ms=100,
        )
        return fetcher, client, subscriptions

    yield build
    for client in made:
        client.close()


def fetch_until(fetcher: Fetcher, client: ConsumerNetworkClient, count: int, timeout_s: float = 15) -> list:
    """Send fetches and poll until ``count`` records came back (all partitions, in order received)."""
    got: list = []

    def enough() -> bool:
        fetcher.send_fetches()
        client.poll(100)
        for records in fetcher.fetched_records().values():
            got.extend(records)
        return len(got) >= count

    wait_until(enough, timeout_s, what=f"{count} records (have {len(got)})")
    return got


def await_completed_fetch(fetcher: Fetcher, client: ConsumerNetworkClient) -> None:
    """Send fetches and poll until a response has filled the completed-fetch queue."""

    def arrived() -> bool:
        fetcher.send_fetches()
        client.poll(100)
        return fetcher.has_completed_fetches()

    wait_until(arrived, what="a completed fetch")


def await_no_pending(client: ConsumerNetworkClient) -> None:
    def done() -> bool:
        client.poll(50)
        return client.pending_request_count() == 0

    wait_until(done, what="every request answered")


def test_records_come_back_in_order_with_keys_values_headers_and_timestamps(cluster, make):
    topic = topic_name("fetch-order")
    cluster.create_topic(topic, partitions=1)
    values = [f"v{i}".encode() for i in range(10)]
    produce(cluster, topic, 0, values)
    fetcher, client, subscriptions = make(topic, 1, value_deserializer=bytes.decode)
    subscriptions.assign_from_user([(topic, 0)])
    fetcher.update_fetch_positions([(topic, 0)])
    assert subscriptions.position((topic, 0)) == 0

    records = fetch_until(fetcher, client, 10)

    assert [r.offset for r in records] == list(range(10))
    assert [r.key for r in records] == [f"k{i}" for i in range(10)]
    assert [r.value for r in records] == [f"v{i}" for i in range(10)]
    assert [r.headers for r in records] == [(Header("i", str(i).encode()),) for i in range(10)]
    assert [r.timestamp for r in records] == [T0 + 1000 * i for i in range(10)]
    assert {(r.topic, r.partition, r.timestamp_type) for r in records} == {
        (topic, 0, TimestampType.CREATE_TIME)
    }
    assert records[0].serialized_key_size == 2 and records[0].serialized_value_size == 2
    assert records[0].checksum is None  # a v2 record has no CRC of its own
    assert repr(records[1]) == (
        f"ConsumerRecord(topic = {topic}, partition = 0, offset = 1, CreateTime = {T0 + 1000}, "
        f"serialized key size = 2, serialized value size = 2, headers = (Header(key='i', value=b'1'),), "
        f"key = 'k1', value = 'v1')"
    )
    assert subscriptions.position((topic, 0)) == 10


def test_max_poll_records_splits_one_fetch_over_several_polls(cluster, make):
    topic = topic_name("fetch-max-poll")
    cluster.create_topic(topic, partitions=1)
    produce(cluster, topic, 0, [f"v{i}".encode() for i in range(10)])
    fetcher, client, subscriptions = make(topic, 1, max_poll_records=3)
    tp = (topic, 0)
    subscriptions.assign_from_user([tp])
    subscriptions.seek(tp, 0)
    await_completed_fetch(fetcher, client)

    # One fetch holds all ten records; no more network I/O from here on.
    sizes, positions = [], []
    for _ in range(5):
        sizes.append(sum(len(rs) for rs in fetcher.fetched_records().values()))
        positions.append(subscriptions.position(tp))
    assert sizes == [3, 3, 3, 1, 0]
    assert positions == [3, 6, 9, 10, 10]


def test_records_of_a_fetch_older_than_a_seek_are_dropped(cluster, make):
    topic = topic_name("fetch-stale")
    cluster.create_topic(topic, partitions=1)
    produce(cluster, topic, 0, [f"v{i}".encode() for i in range(10)])
    fetcher, client, subscriptions = make(topic, 1, max_poll_records=3)
    tp = (topic, 0)
    subscriptions.assign_from_user([tp])

    # A seek after the fetch was sent: the whole completed fetch is stale.
    subscriptions.seek(tp, 0)
    await_completed_fetch(fetcher, client)
    subscriptions.seek(tp, 5)
    assert fetcher.fetched_records() == {}
    assert subscriptions.position(tp) == 5

    # A seek while the fetch's records are being returned: the rest of them are dropped.
    await_no_pending(client)
    await_completed_fetch(fetcher, client)
    assert [r.offset for r in fetcher.fetched_records()[tp]] == [5, 6, 7]
    subscriptions.seek(tp, 1)
    assert fetcher.fetched_records() == {}
    assert subscriptions.position(tp) == 1
    assert [r.offset for r in fetch_until(fetcher, client, 3)] == [1, 2, 3]


def test_a_partition_with_buffered_records_is_not_fetched_again_until_drained(cluster, make):
    topic = topic_name("fetch-pipeline")
    cluster.create_topic(topic, partitions=2)
    produce(cluster, topic, 0, [f"a{i}".encode() for i in range(10)])
    produce(cluster, topic, 1, [f"b{i}".encode() for i in range(2)])
    fetcher, client, subscriptions = make(topic, 2, max_poll_records=3)
    p0, p1 = (topic, 0), (topic, 1)
    subscriptions.assign_from_user([p0])
    subscriptions.seek(p0, 0)

    # A node with a fetch pending gets no second one.
    assert fetcher.send_fetches() == 1
    assert fetcher.send_fetches() == 0
    await_completed_fetch(fetcher, client)
    await_no_pending(client)

    assert [r.offset for r in fetcher.fetched_records()[p0]] == [0, 1, 2]
    # p0's records are still being returned (7 left): it is not fetched, though its node is free.
    assert fetcher.send_fetches() == 0

    # Another partition is fetched meanwhile: the fetch is pipelined with the records being returned.
    subscriptions.assign_from_user([p0, p1])
    subscriptions.seek(p1, 0)
    assert fetcher.send_fetches() == 1
    wait_until(
        lambda: client.poll(100) or any(c.partition == p1 for c in fetcher.completed_fetches),
        what="the fetch of the other partition",
    )
    assert {c.partition for c in fetcher.completed_fetches} == {p1}

    drained = []
    while True:
        batch = fetcher.fetched_records()
        if not batch:
            break
        drained.extend((tp, r.offset) for tp, rs in batch.items() for r in rs)
    assert drained == [(p0, o) for o in range(3, 10)] + [(p1, 0), (p1, 1)]
    await_no_pending(client)
    # Drained: p0 (and p1) are fetched again, from their new positions.
    assert fetcher.send_fetches() >= 1
    assert subscriptions.position(p0) == 10 and subscriptions.position(p1) == 2


def test_a_caught_up_partition_is_not_fetched_alone_while_its_brokers_other_partitions_are_buffered(
    cluster, make
):
    # Two partitions with the same leader: a (2 records) is read to its end while b's records are
    # still buffered. A fetch for a alone would wait fetch.max.wait.ms at the broker, and b's next
    # fetch would wait behind it (one fetch per node); so none goes until b's records are read.
    topic = topic_name("fetch-caught-up")
    cluster.create_topic(topic, partitions=4)
    fetcher, client, subscriptions = make(topic, 4, max_poll_records=3, max_wait_ms=30_000)
    leaders = {p: fetcher.metadata.cluster.leader_for(topic, p) for p in range(4)}
    a, b = next((x, y) for x in range(4) for y in range(x + 1, 4) if leaders[x] == leaders[y])
    produce(cluster, topic, a, [f"a{i}".encode() for i in range(2)])
    produce(cluster, topic, b, [f"b{i}".encode() for i in range(10)])
    ta, tb = (topic, a), (topic, b)
    subscriptions.assign_from_user([ta, tb])
    subscriptions.seek(ta, 0)
    subscriptions.seek(tb, 0)
    assert subscriptions.partition_lag(ta) is None, "no high watermark before the first response"

    assert fetcher.send_fetches() == 1  # both partitions, one request to their leader
    wait_until(lambda: client.poll(100) or len(fetcher.completed_fetches) == 2, what="both partitions' data")
    await_no_pending(client)
    assert subscriptions.partition_lag(ta) == 2 and subscriptions.partition_lag(tb) == 10

    first = fetcher.fetched_records()
    assert [r.offset for r in first[ta]] == [0, 1] and [r.offset for r in first[tb]] == [0]
    assert subscriptions.partition_lag(ta) == 0, "a is read to its high watermark"
    assert fetcher.send_fetches() == 0, "a alone would only wait at the broker while b is buffered"
    assert client.pending_request_count() == 0

    while fetcher.fetched_records():
        pass
    assert subscriptions.position(tb) == 10
    # Nothing buffered: the caught-up partitions are fetched together and wait for new records there.
    assert fetcher.send_fetches() == 1
    produce(cluster, topic, b, [b"late"])
    records = fetch_until(fetcher, client, 1)
    assert [(r.partition, r.offset, r.value) for r in records] == [(b, 10, b"late")]


def test_a_paused_partition_is_not_fetched(cluster, make):
    topic = topic_name("fetch-paused")
    cluster.create_topic(topic, partitions=2)
    produce(cluster, topic, 0, [b"a0", b"a1"])
    produce(cluster, topic, 1, [b"b0", b"b1"])
    fetcher, client, subscriptions = make(topic, 2)
    p0, p1 = (topic, 0), (topic, 1)
    subscriptions.assign_from_user([p0, p1])
    subscriptions.seek(p0, 0)
    subscriptions.seek(p1, 0)
    subscriptions.pause(p0)

    records = fetch_until(fetcher, client, 2)
    await_no_pending(client)
    assert {(r.partition, r.offset) for r in records} == {(1, 0), (1, 1)}
    assert not fetcher.has_completed_fetches()
    assert subscriptions.position(p0) == 0

    subscriptions.resume(p0)
    records = fetch_until(fetcher, client, 2)
    assert [(r.partition, r.offset) for r in records] == [(0, 0), (0, 1)]
    # Each partition that returned bytes went last in the fetch order: p1, then p0.
    assert list(subscriptions.all_consumed()) == [p1, p0]


def test_a_fetch_from_a_broker_that_no_longer_leads_refreshes_the_metadata(cluster, make):
    topic = topic_name("fetch-moved")
    cluster.create_topic(topic, partitions=1, replication_factor=2)
    produce(cluster, topic, 0, [b"v0", b"v1"])
    fetcher, client, subscriptions = make(topic, 1)
    tp = (topic, 0)
    subscriptions.assign_from_user([tp])
    subscriptions.seek(tp, 0)
    assert [r.offset for r in fetch_until(fetcher, client, 2)] == [0, 1]
    await_no_pending(client)
    old = fetcher.metadata.cluster.leader_for(*tp).id
    new = cluster.move_leader(topic, 0)
    assert new != old

    # The consumer's metadata still names the old leader, which refuses the fetch.
    await_completed_fetch(fetcher, client)
    assert Errors.for_code(fetcher.completed_fetches[0].error_code).name in (
        "NOT_LEADER_FOR_PARTITION",
        "UNKNOWN_TOPIC_OR_PARTITION",
    )
    assert fetcher.fetched_records() == {}
    assert fetcher.metadata.need_update

    produce(cluster, topic, 0, [b"v2"])
    records = fetch_until(fetcher, client, 1)
    assert [(r.offset, r.value) for r in records] == [(2, b"v2")]
    assert fetcher.metadata.cluster.leader_for(*tp).id == new


@pytest.mark.parametrize(
    ("strategy", "expected"), [(OffsetResetStrategy.EARLIEST, 0), (OffsetResetStrategy.LATEST, 4)]
)
def test_an_out_of_range_position_is_reset_by_the_strategy(cluster, make, strategy, expected):
    topic = topic_name("fetch-reset")
    cluster.create_topic(topic, partitions=1)
    produce(cluster, topic, 0, [b"0", b"1", b"2", b"3"])
    fetcher, client, subscriptions = make(topic, 1, strategy=strategy)
    tp = (topic, 0)
    subscriptions.assign_from_user([tp])
    subscriptions.seek(tp, 1000)

    await_completed_fetch(fetcher, client)
    assert fetcher.fetched_records() == {}
    assert subscriptions.is_offset_reset_needed(tp)
    assert subscriptions.position(tp) is None

    fetcher.update_fetch_positions([tp])
    assert subscriptions.position(tp) == expected


def test_an_out_of_range_position_with_no_reset_policy_raises(cluster, make):
    topic = topic_name("fetch-oor")
    cluster.create_topic(topic, partitions=1)
    produce(cluster, topic, 0, [b"0"])
    fetcher, client, subscriptions = make(topic, 1, strategy=OffsetResetStrategy.NONE)
    tp = (topic, 0)
    subscriptions.assign_from_user([tp])
    with pytest.raises(NoOffsetForPartitionException, match=f"{topic}-0"):
        fetcher.update_fetch_positions([tp])
    subscriptions.seek(tp, 1000)

    await_completed_fetch(fetcher, client)
    with pytest.raises(OffsetOutOfRangeException) as raised:
        fetcher.fetched_records()
    assert raised.value.offset_out_of_range_partitions == {tp: 1000}
    assert f"{topic}-0=1000" in str(raised.value)
    assert subscriptions.position(tp) == 1000


def test_offsets_for_times_and_beginning_and_end_offsets(cluster, make):
    topic = topic_name("fetch-times")
    cluster.create_topic(topic, partitions=2)
    produce(cluster, topic, 0, [f"v{i}".encode() for i in range(10)])
    fetcher, _client, _subscriptions = make(topic, 2)
    p0, p1 = (topic, 0), (topic, 1)

    found = fetcher.get_offsets_by_times({p0: T0 + 3500, p1: T0}, 10_000)
    assert found == {p0: OffsetAndTimestamp(4, T0 + 4000), p1: None}
    assert fetcher.get_offsets_by_times({p0: T0 + 10_000_000}, 10_000) == {p0: None}
    assert fetcher.beginning_offsets([p0, p1], 10_000) == {p0: 0, p1: 0}
    assert fetcher.end_offsets([p0, p1], 10_000) == {p0: 10, p1: 0}
    # A topic the consumer's metadata does not know yet: it is added, and the lookup retried.
    other = topic_name("fetch-times-other")
    cluster.create_topic(other, partitions=1)
    assert (other, 0) not in fetcher.metadata.cluster.partitions
    assert fetcher.end_offsets([(other, 0)], 10_000) == {(other, 0): 0}
    with pytest.raises(IllegalArgumentException, match="cannot be negative"):
        fetcher.get_offsets_by_times({p0: -5}, 10_000)


def test_a_fetch_from_inside_a_compressed_batch_skips_its_earlier_records(cluster, make):
    topic = topic_name("fetch-gzip")
    cluster.create_topic(topic, partitions=1)
    produce(cluster, topic, 0, [f"v{i}".encode() for i in range(10)], compression="gzip")
    fetcher, client, subscriptions = make(topic, 1)
    tp = (topic, 0)
    subscriptions.assign_from_user([tp])
    subscriptions.seek(tp, 4)

    await_completed_fetch(fetcher, client)
    (batch, *_) = fetcher.completed_fetches[0].records.batches()
    # The broker returns the whole compressed batch, from offset 0.
    assert batch.compression_type == CompressionType.GZIP
    assert batch.base_offset == 0 and batch.last_offset == 9

    records = fetcher.fetched_records()[tp]
    assert [r.offset for r in records] == list(range(4, 10))
    assert [r.key for r in records] == [f"k{i}" for i in range(4, 10)]
    assert subscriptions.position(tp) == 10


def test_a_deserializer_that_raises_names_the_partition_and_offset(cluster, make):
    topic = topic_name("fetch-deser")
    cluster.create_topic(topic, partitions=1)
    produce(cluster, topic, 0, [b"ok", b"\xff\xfe", b"ok"])
    fetcher, client, subscriptions = make(topic, 1, value_deserializer=StringDeserializer())
    tp = (topic, 0)
    subscriptions.assign_from_user([tp])
    subscriptions.seek(tp, 0)

    await_completed_fetch(fetcher, client)
    with pytest.raises(SerializationException, match=rf"partition {topic}-0 at offset 1\b") as raised:
        fetcher.fetched_records()
    assert isinstance(raised.value.__cause__, UnicodeDecodeError)
    # The position stays at the fetch: the consumer may seek past the bad record.
    assert subscriptions.position(tp) == 0
    subscriptions.seek(tp, 2)
    records = fetch_until(fetcher, client, 1)
    assert [(r.offset, r.value) for r in records] == [(2, "ok")]


def test_bad_fetch_settings_are_refused(cluster, make):
    topic = topic_name("fetch-config")
    cluster.create_topic(topic, partitions=1)
    fetcher, client, subscriptions = make(topic, 1)
    with pytest.raises(
        IllegalArgumentException, match=r"max\.poll\.records must be an integer of at least 1, not 0"
    ):
        Fetcher(client, 1, 100, 1, 1, 0, None, None, fetcher.metadata, subscriptions, SYSTEM, 100)

    with pytest.raises(ConfigException, match="value_deserializer"):
        Fetcher(client, 1, 100, 1, 1, 1, None, b"not callable", fetcher.metadata, subscriptions, SYSTEM, 100)


@pytest.mark.parametrize("check_crcs", [True, False])
def test_a_corrupt_batch_is_refused_when_crcs_are_checked(cluster, make, check_crcs):
    topic = topic_name("fetch-crc")
    cluster.create_topic(topic, partitions=1)
    produce(cluster, topic, 0, [b"aaaa"])
    fetcher, client, subscriptions = make(topic, 1)
    fetcher.check_crcs = check_crcs
    tp = (topic, 0)
    subscriptions.assign_from_user([tp])
    subscriptions.seek(tp, 0)
    await_completed_fetch(fetcher, client)

    # Flip the value's bytes in the fetched batch (its last bytes are the value, then an empty header count).
    completed = fetcher.completed_fetches[0]
    raw = bytearray(completed.records.buffer())
    at = bytes(raw).rindex(b"aaaa")
    raw[at : at + 4] = b"bbbb"
    completed.records = MemoryRecords(bytes(raw))

    if check_crcs:
        with pytest.raises(KafkaException, match=rf"partition {topic}-0 at offset 0 is invalid"):
            fetcher.fetched_records()
        assert subscriptions.position(tp) == 0
    else:
        assert [r.value for r in fetcher.fetched_records()[tp]] == [b"bbbb"]


def test_a_deserializer_with_kafkas_deserialize_method_is_used(cluster, make):
    class Upper:
        def deserialize(self, topic, data):
            return data.decode().upper()

    topic = topic_name("fetch-kafka-deser")
    cluster.create_topic(topic, partitions=1)
    produce(cluster, topic, 0, [b"hello"])
    fetcher, client, subscriptions = make(topic, 1, value_deserializer=Upper())
    subscriptions.assign_from_user([(topic, 0)])
    subscriptions.seek((topic, 0), 0)
    assert [r.value for r in fetch_until(fetcher, client, 1)] == ["HELLO"]


def test_the_fetch_sizes_and_wait_go_into_the_request(cluster, make):
    topic = topic_name("fetch-sizes")
    cluster.create_topic(topic, partitions=2)
    for i in range(3):  # three batches
        produce(cluster, topic, 0, [f"v{i}".encode()])
    fetcher, client, subscriptions = make(topic, 2, max_partition_fetch_bytes=1, max_wait_ms=700)
    p0, p1 = (topic, 0), (topic, 1)
    subscriptions.assign_from_user([p0])
    subscriptions.seek(p0, 0)

    # max.partition.fetch.bytes of 1: each fetch brings the first batch only (whole, as KIP-74 says).
    for expected in range(3):
        await_completed_fetch(fetcher, client)
        assert len(list(fetcher.completed_fetches[0].records.batches())) == 1
        assert [r.offset for r in fetcher.fetched_records()[p0]] == [expected]
        await_no_pending(client)

    # fetch.max.wait.ms: with nothing to return, the broker holds the fetch that long.
    subscriptions.assign_from_user([p1])
    subscriptions.seek(p1, 0)
    started = time.monotonic()
    await_completed_fetch(fetcher, client)
    assert time.monotonic() - started >= 0.6


def test_records_drained_before_a_deserializer_fails_are_returned_and_the_failure_comes_next(cluster, make):
    topic = topic_name("fetch-deser-later")
    cluster.create_topic(topic, partitions=2)
    produce(cluster, topic, 0, [b"good0", b"good1"])
    produce(cluster, topic, 1, [b"\xff"])
    fetcher, client, subscriptions = make(topic, 2, value_deserializer=StringDeserializer())
    p0, p1 = (topic, 0), (topic, 1)
    subscriptions.assign_from_user([p0])
    subscriptions.seek(p0, 0)
    await_completed_fetch(fetcher, client)
    await_no_pending(client)
    subscriptions.assign_from_user([p0, p1])
    subscriptions.seek(p1, 0)

    def both_queued() -> bool:
        fetcher.send_fetches()  # p1 only: p0's records are buffered
        client.poll(100)
        return len(fetcher.completed_fetches) == 2

    wait_until(both_queued, what="p1's fetch queued behind p0's")
    assert [c.partition for c in fetcher.completed_fetches] == [p0, p1]

    # p0's records come back; p1's failure is kept for the next call.
    assert {tp: [r.value for r in rs] for tp, rs in fetcher.fetched_records().items()} == {
        p0: ["good0", "good1"]
    }
    with pytest.raises(SerializationException, match=rf"partition {topic}-1 at offset 0\b"):
        fetcher.fetched_records()
    assert subscriptions.position(p0) == 2 and subscriptions.position(p1) == 0


def test_fetch_min_bytes_holds_a_fetch_that_has_fewer_bytes(cluster, make):
    topic = topic_name("fetch-min-bytes")
    cluster.create_topic(topic, partitions=1)
    produce(cluster, topic, 0, [b"small"])
    fetcher, client, subscriptions = make(topic, 1, min_bytes=100_000, max_wait_ms=700)
    tp = (topic, 0)
    subscriptions.assign_from_user([tp])
    subscriptions.seek(tp, 0)

    # One small record is there, but less than fetch.min.bytes: the broker waits out fetch.max.wait.ms.
    started = time.monotonic()
    await_completed_fetch(fetcher, client)
    assert time.monotonic() - started >= 0.6
    assert [r.value for r in fetcher.fetched_records()[tp]] == [b"small"]
