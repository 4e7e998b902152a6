"""KafkaProducer's configs (every bad one named), and its close: against the scripted broker."""

from __future__ import annotations

import time as real_time

import pytest

from kafka_lite import KafkaProducer
from kafka_lite.common.errors import ConfigException, InvalidTopicException, KafkaException
from tests.producer.support import HOLD, ScriptedBroker
from tests.support.waiting import wait_until

pytestmark = pytest.mark.unit
BOOTSTRAP = "127.0.0.1:9"  # never contacted: these configs fail before the producer starts


@pytest.mark.parametrize(
    "configs,message",
    [
        ({"linger_msx": 5}, r"Unknown configuration 'linger_msx' \(did you mean linger.ms"),
        ({"linger_ms": "soon"}, r"Invalid value 'soon' for configuration linger.ms: Expected value to be a 64-bit integer"),
        ({"linger_ms": -1}, r"Invalid value -1 for configuration linger.ms: Value must be at least 0"),
        ({"acks": 2}, r"Invalid value '2' for configuration acks: String must be one of: all, -1, 0, 1"),
        ({"compression_type": "brotli"}, r"configuration compression.type: String must be one of"),
        ({"max_in_flight_requests_per_connection": 0}, r"max.in.flight.requests.per.connection: Value must be at least 1"),
        ({"retries": True}, r"configuration retries: Expected value to be a 32-bit integer"),
        ({"enable_idempotence": "yes"}, r"enable.idempotence: Expected value to be either true or false"),
    ],
)  # fmt: skip
def test_an_unknown_or_ill_typed_config_is_an_error_naming_it(configs, message):
    with pytest.raises(ConfigException, match=message):
        KafkaProducer(bootstrap_servers=BOOTSTRAP, **configs)


def test_bootstrap_servers_is_required():
    with pytest.raises(ConfigException, match=r"Missing required configuration 'bootstrap\.servers'"):
        KafkaProducer()


def test_a_serializer_must_be_callable():
    with pytest.raises(ConfigException, match="configuration value_serializer: Expected a callable"):
        KafkaProducer(bootstrap_servers=BOOTSTRAP, value_serializer="utf-8")


@pytest.mark.parametrize(
    "configs,message",
    [
        ({"acks": 1}, "Must set acks to all in order to use the idempotent producer"),
        ({"acks": "all", "retries": 3, "max_in_flight_requests_per_connection": 6}, "at most 5"),
        ({"retries": 0}, "Must set retries to non-zero when using the idempotent producer"),
    ],
)
def test_enable_idempotence_is_validated_as_kafka_does(configs, message):
    with pytest.raises(ConfigException, match=message):
        KafkaProducer(bootstrap_servers=BOOTSTRAP, enable_idempotence=True, **configs)


def test_enable_idempotence_defaults_acks_to_all_and_retries_to_the_maximum():
    producer = KafkaProducer(bootstrap_servers=BOOTSTRAP, enable_idempotence=True)
    try:
        assert (producer.acks, producer.config["retries"]) == (-1, 2**31 - 1)
        assert producer.transaction_manager is not None
    finally:
        producer.close(0)


def test_kafka_python_spellings_of_values_are_accepted():
    producer = KafkaProducer(bootstrap_servers=[BOOTSTRAP], acks=0, compression_type=None, client_id="me")
    try:
        assert (producer.acks, producer.compression_type.config_name, producer.client_id) == (0, "none", "me")
        assert producer.config["linger.ms"] == 0 and producer.config["batch.size"] == 16384
    finally:
        producer.close(0)


def test_a_bad_topic_fails_its_future_without_touching_the_network():
    producer = KafkaProducer(bootstrap_servers=BOOTSTRAP)
    try:
        future = producer.send("a" * 250, b"v")
        with pytest.raises(InvalidTopicException, match="can't be longer than 249 characters"):
            future.get(0)
        with pytest.raises(InvalidTopicException, match="Topic name must be a str, got int"):
            producer.send(42, b"v").get(0)
        with pytest.raises(InvalidTopicException, match="Topic name must be a str, got list"):
            producer.send(["t"], b"v").get(0)
    finally:
        producer.close(0)
    with pytest.raises(KafkaException, match="Cannot send after the producer is closed"):
        producer.send("t", b"v")


def test_close_0_with_a_batch_in_flight_returns_at_once_and_fails_its_future():
    broker = ScriptedBroker([HOLD])
    try:
        producer = KafkaProducer(bootstrap_servers=f"127.0.0.1:{broker.port}")
        in_flight = producer.send("t", b"held", partition=0)
        wait_until(lambda: broker.produce_requests, what="the request to reach the broker")
        started = real_time.monotonic()
        producer.close(0)
        assert real_time.monotonic() - started < 2, "close(0) must not wait for the held response"
        with pytest.raises(KafkaException, match="Producer is closed forcefully"):
            in_flight.get(0)
        assert not producer.io_thread.is_alive()
    finally:
        broker.close()


def test_close_sends_what_is_buffered_first():
    broker = ScriptedBroker()
    try:
        producer = KafkaProducer(bootstrap_servers=f"127.0.0.1:{broker.port}", linger_ms=60_000)
        futures = [producer.send("t", b"v", partition=p) for p in (0, 1, 0)]
        producer.close()
        assert [(f.get(0).partition, f.get(0).offset) for f in futures] == [(0, 0), (1, 0), (0, 1)]
    finally:
        broker.close()


def test_partitions_for_waits_for_metadata_and_metrics_count_what_was_sent():
    broker = ScriptedBroker()
    try:
        with KafkaProducer(bootstrap_servers=f"127.0.0.1:{broker.port}") as producer:
            partitions = producer.partitions_for("t")
            assert [(p.topic, p.partition, p.leader.id) for p in partitions] == [("t", 0, 0), ("t", 1, 0)]
            producer.send("t", b"v", partition=1).get(10)
            metrics = producer.metrics()
            assert (
                metrics["record-send-total"],
                metrics["request-total"],
                metrics["record-error-total"],
            ) == (1, 1, 0)
            assert metrics["buffer-available-bytes"] == metrics["buffer-total-bytes"] == 32 * 1024 * 1024
            assert not [name for name in metrics if name.endswith("-rate")], "counters, not rates"
            with pytest.raises(InvalidTopicException, match="illegal"):
                producer.partitions_for("no/slashes")
    finally:
        broker.close()
