"""Message timestamps end to end (book 10.2) on the session's 3-broker cluster: CreateTime kept per
record, ``message.timestamp.difference.max.ms`` refusing a record with INVALID_TIMESTAMP, a
LogAppendTime topic answering the broker's time in the produce response, the fetched records and
ListOffsets by time, and bad timestamp settings refused with a message naming them."""

from __future__ import annotations

import time

import pytest

from kafka_lite import KafkaAdminClient, KafkaConsumer, KafkaProducer
from kafka_lite.cli.main import main
from kafka_lite.clients.admin import ConfigResource, ConfigResourceType, NewTopic
from kafka_lite.common.errors import Errors, InvalidTimestampException, KafkaException
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.record.constants import TimestampType
from tests.support.topics import read_topic, topic_name
from tests.support.waiting import wait_until
from tests.support.wire import WireClient, partition_response, produce_body

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("cluster")]

HOUR_MS = 3_600_000


def now_ms() -> int:
    return int(time.time() * 1000)


def _batch(*timestamps: int) -> bytes:
    return bytes(
        MemoryRecords.with_records([(ts, None, b"v%d" % i) for i, ts in enumerate(timestamps)]).buffer()
    )


def _produce(cluster, topic: str, records: bytes) -> dict:
    """One Produce v3 request straight to partition 0's leader; its partition response."""
    client = WireClient(cluster.server(cluster.leader_of(topic, 0)).port)
    try:
        return partition_response(client.call(ApiKeys.PRODUCE, 3, produce_body(topic, 0, records)))
    finally:
        client.close()


def partition_response_error(response: dict) -> Errors:
    return Errors.for_code(response["error_code"])


def _log_end_offset(cluster, topic: str) -> int:
    leader = cluster.server(cluster.leader_of(topic, 0))
    return leader.replica_manager.get_partition((topic, 0)).log.log_end_offset


def test_create_time_timestamps_are_kept_per_record(cluster):
    topic = topic_name("ts-create")
    cluster.create_topic(topic, partitions=1)
    # out of order and far from the clock: a CreateTime topic with the default maximum keeps them all
    stamps = [now_ms(), 1_000, now_ms() - 48 * HOUR_MS, now_ms() + HOUR_MS]
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, linger_ms=50)
    try:
        futures = [producer.send(topic, b"v", partition=0, timestamp_ms=ts) for ts in stamps]
        producer.flush()
        assert [f.get(10).timestamp for f in futures] == stamps  # no log_append_time in the response
    finally:
        producer.close()
    records = read_topic(cluster.bootstrap_servers, topic)
    assert [(r.timestamp, r.timestamp_type) for r in records] == [
        (ts, TimestampType.CREATE_TIME) for ts in stamps
    ]


def test_a_record_too_far_from_the_brokers_clock_is_refused_and_nothing_is_written(cluster):
    topic = topic_name("ts-maxdiff")
    cluster.create_topic(topic, partitions=1, message_timestamp_difference_max_ms=HOUR_MS)
    assert partition_response_error(_produce(cluster, topic, _batch(now_ms()))) is Errors.NONE
    # the old record is the second of its batch: the header's first and max timestamps are recent
    response = _produce(cluster, topic, _batch(now_ms(), now_ms() - 2 * HOUR_MS, now_ms()))
    assert (partition_response_error(response), response["base_offset"]) == (Errors.INVALID_TIMESTAMP, -1)
    assert _log_end_offset(cluster, topic) == 1
    # a future record too, through kafka_lite's producer: the application sees the error (not retried)
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, retries=3)
    try:
        future = producer.send(topic, b"late", partition=0, timestamp_ms=now_ms() + 2 * HOUR_MS)
        with pytest.raises(InvalidTimestampException):
            future.get(10)
        assert producer.send(topic, b"on time", partition=0).get(10).offset == 1
    finally:
        producer.close()
    assert [r.value for r in read_topic(cluster.bootstrap_servers, topic)] == [b"v0", b"on time"]


def test_log_append_time_topic_answers_and_stores_the_brokers_time(cluster):
    topic = topic_name("ts-append")
    cluster.create_topic(topic, partitions=1, message_timestamp_type="LogAppendTime")
    before = now_ms()
    response = _produce(cluster, topic, _batch(1_000, 2_000))  # the producer's times do not matter
    first_time = response["log_append_time"]
    assert partition_response_error(response) is Errors.NONE and before <= first_time <= now_ms()
    wait_until(lambda: now_ms() > first_time, what="the broker's clock to pass the first append")
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers)
    try:
        metadata = producer.send(topic, b"later", partition=0, timestamp_ms=5).get(10)
    finally:
        producer.close()
    second_time = metadata.timestamp  # RecordMetadata takes the response's log_append_time
    assert (metadata.offset, first_time < second_time <= now_ms()) == (2, True)
    records = read_topic(cluster.bootstrap_servers, topic)
    assert [(r.timestamp, r.timestamp_type) for r in records] == [
        (first_time, TimestampType.LOG_APPEND_TIME),
        (first_time, TimestampType.LOG_APPEND_TIME),
        (second_time, TimestampType.LOG_APPEND_TIME),
    ]
    assert records[0].timestamp_type == 1  # as kafka-python's ConsumerRecord gives it
    # ListOffsets by time searches the broker's times, through the time index
    consumer = KafkaConsumer(bootstrap_servers=cluster.bootstrap_servers)
    try:
        tp = (topic, 0)
        found = consumer.offsets_for_times({tp: first_time})
        assert (found[tp].offset, found[tp].timestamp) == (0, first_time)
        found = consumer.offsets_for_times({tp: first_time + 1})
        assert (found[tp].offset, found[tp].timestamp) == (2, second_time)
        assert consumer.offsets_for_times({tp: second_time + 1})[tp] is None
    finally:
        consumer.close()


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"message.timestamp.type": "BrokerTime"}, "String must be one of: CreateTime, LogAppendTime"),
        ({"message.timestamp.difference.max.ms": "-1"}, "Value must be at least 0"),
        ({"message.timestamp.difference.max.ms": "an hour"}, "Expected value to be a 64-bit integer"),
    ],
)
def test_bad_timestamp_settings_are_refused_by_create_topics_alter_configs_and_the_cli(
    cluster, capsys, config, message
):
    (name,) = config
    admin = KafkaAdminClient(cluster.bootstrap_servers)
    try:
        refused = topic_name("ts-bad")
        with pytest.raises(KafkaException, match=f"configuration {name}: {message}"):
            admin.create_topics([NewTopic(refused, 1, 1, {}, config)])
        assert refused not in admin.list_topics()
        topic = topic_name("ts-alter")
        cluster.create_topic(topic, partitions=1)
        with pytest.raises(KafkaException, match=f"configuration {name}: {message}"):
            admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, topic, config)])
    finally:
        admin.close()
    (value,) = config.values()
    code = main(
        ["configs", "--bootstrap-server", cluster.bootstrap_servers, "--alter", "--entity-type", "topics",
         "--entity-name", topic, "--add-config", f"{name}={value}"]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code != 0 and f"configuration {name}: {message}" in err.replace("\n", "")
