"""StreamsConfig: Kafka's names and defaults, the settings of the three clients a thread builds, and
a clear error for a setting that is missing or unknown."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import ConfigException
from kafka_lite.streams.processor.timestamp_extractor import ConsumerRecordTimestampExtractor
from kafka_lite.streams.streams_config import StreamsConfig

pytestmark = pytest.mark.unit

BASE = {"application.id": "wordcount", "bootstrap.servers": "127.0.0.1:9092"}


def test_the_consumer_joins_the_application_s_group_and_commits_by_hand():
    config = StreamsConfig({**BASE, "consumer.session.timeout.ms": 3000, "producer.acks": "all"})
    consumer = config.get_consumer_configs("wordcount-1-StreamThread-1")
    assert consumer["group.id"] == "wordcount"
    assert consumer["client.id"] == "wordcount-1-StreamThread-1-consumer"
    assert consumer["enable.auto.commit"] is False
    assert consumer["auto.offset.reset"] == "earliest"
    assert consumer["allow.auto.create.topics"] is False
    assert consumer["session.timeout.ms"] == 3000  # the consumer. prefix
    assert "acks" not in consumer
    restore = config.get_restore_consumer_configs("t")
    assert "group.id" not in restore and restore["client.id"] == "t-restore-consumer"
    producer = config.get_producer_configs("t")
    assert producer["linger.ms"] == 100 and producer["acks"] == "all"


def test_defaults_are_kafka_s():
    config = StreamsConfig(BASE)
    assert config["commit.interval.ms"] == 30_000
    assert config["num.stream.threads"] == 1
    assert config["num.standby.replicas"] == 0
    assert config["state.dir"] == "/tmp/kafka-streams"


def test_class_valued_settings_reach_the_tasks():
    config = StreamsConfig({**BASE, "timestamp.extractor": ConsumerRecordTimestampExtractor})
    assert config.task_config()["timestamp.extractor"] is ConsumerRecordTimestampExtractor


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"bootstrap.servers": "b:1"}, "Missing required configuration 'application.id'"),
        ({**BASE, "application.id": ""}, "The application id must not be empty"),
        (
            {**BASE, "num.threads": 2},
            "Unknown configuration 'num.threads' (did you mean num.stream.threads?)",
        ),
        ({**BASE, "num.stream.threads": 0}, "num.stream.threads"),
    ],
)
def test_a_bad_setting_is_named(props, message):
    with pytest.raises(ConfigException) as e:
        StreamsConfig(props)
    assert message in str(e.value)
