"""Fetcher against the session's real three-broker cluster: records written by confluent-kafka (an
independent producer, with headers, timestamps and compression) and read back by the Fetcher driving
a real ConsumerNetworkClient and Metadata. Only what needs a broker is here (what it returns, a
leader that moves, ListOffsets, how long a fetch is held); the fetcher's own rules are checked
without one in ``test_fetcher_logic.py``.

Every wait is a condition with a deadline."""

from __future__ import annotations

import time

import pytest

from kafka_lite.clients.metadata import Metadata
from kafka_lite.clients.network_client import NetworkClient
from kafka_lite.common.errors import Errors, IllegalArgumentException
from kafka_lite.common.record.compression import CompressionType
from kafka_lite.common.record.constants import TimestampType
from kafka_lite.common.record.default_record import Header
from kafka_lite.common.time import SYSTEM
from kafka_lite.consumer import (
    OffsetAndTimestamp,
)
from kafka_lite.consumer.deserialization import StringDeserializer
from kafka_lite.consumer.internals.consumer_network_client import ConsumerNetworkClient
from kafka_lite.consumer.internals.fetcher import Fetcher
from kafka_lite.consumer.internals.subscription_state import SubscriptionState
from kafka_lite.consumer.offset_reset_strategy import OffsetResetStrategy
from kafka_lite.network.selector import Selector
from tests.support.topics import topic_name
from tests.support.waiting import wait_until

pytestmark = pytest.mark.integration
# Past the default 7-day retention: the tests' topics keep records forever (retention.ms=-1), or the
# broker's retention check, every 5 minutes, would delete them at a moment no test chooses.
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
    cluster.create_topic(topic, partitions=1, retention_ms=-1)
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


def test_a_fetch_from_a_broker_that_no_longer_leads_refreshes_the_metadata(cluster, make):
    topic = topic_name("fetch-moved")
    cluster.create_topic(topic, partitions=1, replication_factor=2, retention_ms=-1)
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
    error = Errors.for_code(fetcher.completed_fetches[0].error_code)
    assert error is Errors.NOT_LEADER_FOR_PARTITION or error is Errors.UNKNOWN_TOPIC_OR_PARTITION, error
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
    cluster.create_topic(topic, partitions=1, retention_ms=-1)
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


def test_offsets_for_times_and_beginning_and_end_offsets(cluster, make):
    topic = topic_name("fetch-times")
    cluster.create_topic(topic, partitions=2, retention_ms=-1)
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
    cluster.create_topic(other, partitions=1, retention_ms=-1)
    assert (other, 0) not in fetcher.metadata.cluster.partitions
    assert fetcher.end_offsets([(other, 0)], 10_000) == {(other, 0): 0}
    with pytest.raises(IllegalArgumentException, match="cannot be negative"):
        fetcher.get_offsets_by_times({p0: -5}, 10_000)


def test_a_fetch_from_inside_a_compressed_batch_skips_its_earlier_records(cluster, make):
    topic = topic_name("fetch-gzip")
    cluster.create_topic(topic, partitions=1, retention_ms=-1)
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


def test_the_fetch_sizes_and_wait_go_into_the_request(cluster, make):
    topic = topic_name("fetch-sizes")
    cluster.create_topic(topic, partitions=2, retention_ms=-1)
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


def test_fetch_min_bytes_holds_a_fetch_that_has_fewer_bytes(cluster, make):
    topic = topic_name("fetch-min-bytes")
    cluster.create_topic(topic, partitions=1, retention_ms=-1)
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
