"""Producer interceptors: on_send before serialization, on_acknowledgement on completion (before the
application's callbacks), every interceptor's failure logged and swallowed, as Kafka's are."""

from __future__ import annotations

import dataclasses
import logging
from typing import ClassVar

import pytest

from kafka_lite import KafkaProducer
from kafka_lite.common.errors import ConfigException, InvalidTopicException
from kafka_lite.common.record.memory_records import MemoryRecords
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.producer.future_record_metadata import RecordMetadata
from kafka_lite.producer.producer_interceptors import ProducerInterceptors
from kafka_lite.producer.producer_record import ProducerRecord
from tests.producer.support import ScriptedBroker

pytestmark = pytest.mark.unit
BOOTSTRAP = "127.0.0.1:9"  # never contacted


class Appending:
    """Appends its tag to the value (bytes) and notes every acknowledgement."""

    tag = b"+a"
    events: ClassVar[list] = []

    def configure(self, configs):
        self.client_id = configs["client.id"]

    def on_send(self, record):
        Appending.events.append(("send", type(self).__name__, record.value))
        return dataclasses.replace(record, value=record.value + self.tag)

    def on_acknowledgement(self, metadata, exception):
        Appending.events.append(("ack", type(self).__name__, metadata, exception))


class AppendingB(Appending):
    tag = b"+b"


class Failing:
    def on_send(self, record):
        raise RuntimeError("on_send is broken")

    def on_acknowledgement(self, metadata, exception):
        raise RuntimeError("on_acknowledgement is broken")

    def close(self):
        raise RuntimeError("close is broken")


class ReturnsNone:
    def on_send(self, record):
        return None

    def on_acknowledgement(self, metadata, exception):
        pass


@pytest.fixture(autouse=True)
def _clear_events():
    Appending.events = []


def test_each_on_send_gets_what_the_one_before_returned():
    interceptors = ProducerInterceptors([Appending(), AppendingB()])
    record = interceptors.on_send(ProducerRecord("t", b"v"))
    assert record == ProducerRecord("t", b"v+a+b")
    assert [e[2] for e in Appending.events] == [b"v", b"v+a"]


def test_a_failing_interceptor_is_logged_and_skipped(caplog):
    interceptors = ProducerInterceptors([Appending(), Failing(), ReturnsNone(), AppendingB()])
    with caplog.at_level(logging.WARNING):
        record = interceptors.on_send(ProducerRecord("t", b"v", partition=1))
        interceptors.on_acknowledgement(
            RecordMetadata("t", 1, TopicPartition("t", 1), 5, 0, None, -1, 1, -1), None
        )
        interceptors.close()
    # The failing ones leave the record as the interceptor before them returned it.
    assert record.value == b"v+a+b"
    messages = [r.getMessage() for r in caplog.records]
    assert messages.count("Error executing interceptor onSend callback for topic: t, partition: 1") == 2
    assert "Error executing interceptor onAcknowledgement callback" in messages
    assert "Failed to close producer interceptor " in messages
    assert [e[1] for e in Appending.events if e[0] == "ack"] == ["Appending", "AppendingB"]


def test_no_interceptor_classes_means_no_interceptors_at_all():
    assert ProducerInterceptors.from_config([], {}) is None
    producer = KafkaProducer(bootstrap_servers=BOOTSTRAP)
    try:
        assert producer.interceptors is None
    finally:
        producer.close(0)


def test_interceptor_classes_are_created_and_configured_with_the_producer_configs():
    interceptors = ProducerInterceptors.from_config([Appending, AppendingB], {"client.id": "p-1"})
    assert [type(i).__name__ for i in interceptors.interceptors] == ["Appending", "AppendingB"]
    assert interceptors.interceptors[0].client_id == "p-1"


class NeedsArguments(Appending):
    def __init__(self, x):
        self.x = x


@pytest.mark.parametrize(
    "spec,message",
    [
        ("tests.producer.test_producer_interceptors.Appending", r"Expected a class with on_send and on_acknowledgement methods"),
        (42, r"Expected a class with on_send and on_acknowledgement methods"),
        (dict, r"dict is not a ProducerInterceptor: it has no on_send method"),
        (NeedsArguments, r"NeedsArguments cannot be created without arguments"),
    ],
)  # fmt: skip
def test_a_bad_interceptor_class_is_an_error_naming_the_config(spec, message):
    with pytest.raises(ConfigException, match=r"configuration interceptor.classes: " + message):
        KafkaProducer(bootstrap_servers=BOOTSTRAP, interceptor_classes=[spec])


def test_the_producer_sends_what_on_send_returned_and_acknowledges_before_the_callbacks():
    broker = ScriptedBroker()
    try:
        with KafkaProducer(
            bootstrap_servers=f"127.0.0.1:{broker.port}", interceptor_classes=[Appending, AppendingB]
        ) as producer:
            future = producer.send("t", b"v", partition=1)
            future.add_callback(lambda metadata: Appending.events.append(("callback", metadata.offset)))
            metadata = future.get(10)
        (request,) = broker.produce_requests
        (record,) = MemoryRecords(request["batches"][("t", 1)]).records()
        assert record.value == b"v+a+b"
        assert metadata.serialized_value_size == len(b"v+a+b")
        assert [e[:2] for e in Appending.events] == [
            ("send", "Appending"),
            ("send", "AppendingB"),
            ("ack", "Appending"),
            ("ack", "AppendingB"),
            ("callback", 0),
        ]
        assert Appending.events[2][2:] == (metadata, None)
    finally:
        broker.close()


def test_a_send_that_fails_at_once_is_acknowledged_with_its_error():
    producer = KafkaProducer(bootstrap_servers=BOOTSTRAP, interceptor_classes=[Appending])
    try:
        future = producer.send("bad/topic", b"v")
        with pytest.raises(InvalidTopicException):
            future.get(0)
        (ack,) = [e for e in Appending.events if e[0] == "ack"]
        _, _, metadata, exception = ack
        assert (metadata.topic, metadata.partition, metadata.offset) == ("bad/topic", -1, -1)
        assert exception is future.exception
    finally:
        producer.close(0)
