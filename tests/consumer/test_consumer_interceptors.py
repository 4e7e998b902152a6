"""Consumer interceptors: on_consume sees (and may change) what poll returns, each interceptor getting
what the one before returned; on_commit hears every acknowledged commit; every interceptor's failure
is logged and swallowed, as Kafka's are. The consumer on the real cluster is in test_kafka_consumer."""

from __future__ import annotations

import logging
from typing import ClassVar

import pytest

from kafka_lite import KafkaConsumer
from kafka_lite.common.errors import ConfigException
from kafka_lite.common.record.constants import TimestampType
from kafka_lite.consumer.consumer_interceptors import ConsumerInterceptors
from kafka_lite.consumer.consumer_record import ConsumerRecord
from kafka_lite.consumer.offset_and_metadata import OffsetAndMetadata

pytestmark = pytest.mark.unit
BOOTSTRAP = "127.0.0.1:9"  # never contacted


def record(offset: int, value: bytes | None) -> ConsumerRecord:
    return ConsumerRecord("t", 0, -1, offset, 0, TimestampType.CREATE_TIME, None, value, (), None, -1, 0, -1)


class DropsTombstones:
    events: ClassVar[list] = []

    def configure(self, configs):
        self.group_id = configs["group.id"]

    def on_consume(self, records):
        DropsTombstones.events.append(("consume", type(self).__name__, sum(map(len, records.values()))))
        return {tp: [r for r in rs if r.value is not None] for tp, rs in records.items()}

    def on_commit(self, offsets):
        DropsTombstones.events.append(("commit", type(self).__name__, dict(offsets)))


class KeepsFirst(DropsTombstones):
    def on_consume(self, records):
        DropsTombstones.events.append(("consume", type(self).__name__, sum(map(len, records.values()))))
        return {tp: rs[:1] for tp, rs in records.items()}


class Failing:
    def on_consume(self, records):
        raise RuntimeError("on_consume is broken")

    def on_commit(self, offsets):
        raise RuntimeError("on_commit is broken")

    def close(self):
        raise RuntimeError("close is broken")


class ReturnsNone:
    def on_consume(self, records):
        return None

    def on_commit(self, offsets):
        pass


@pytest.fixture(autouse=True)
def fresh_events():
    DropsTombstones.events.clear()


RECORDS = {("t", 0): [record(0, None), record(1, b"a"), record(2, b"b")]}


def test_each_on_consume_gets_what_the_one_before_returned():
    interceptors = ConsumerInterceptors([DropsTombstones(), KeepsFirst()])
    assert interceptors.on_consume(RECORDS) == {("t", 0): [record(1, b"a")]}
    assert DropsTombstones.events == [("consume", "DropsTombstones", 3), ("consume", "KeepsFirst", 2)]


def test_a_failing_interceptor_is_logged_and_the_next_gets_the_records_before_it(caplog):
    interceptors = ConsumerInterceptors([Failing(), ReturnsNone(), DropsTombstones()])
    with caplog.at_level(logging.WARNING, logger="kafka_lite.consumer.consumer_interceptors"):
        assert interceptors.on_consume(RECORDS) == {("t", 0): [record(1, b"a"), record(2, b"b")]}
        interceptors.on_commit({("t", 0): OffsetAndMetadata(3)})
        interceptors.close()
    messages = [r.getMessage() for r in caplog.records]
    assert messages.count("Error executing interceptor onConsume callback") == 2  # Failing, ReturnsNone
    assert "on_consume returned NoneType, not a dict of partition to records" in caplog.text
    assert "Error executing interceptor onCommit callback" in messages
    assert "Failed to close consumer interceptor " in messages
    assert DropsTombstones.events[-1] == ("commit", "DropsTombstones", {("t", 0): OffsetAndMetadata(3)})


def test_no_interceptor_classes_means_no_interceptors_at_all():
    assert ConsumerInterceptors.from_config([], {}) is None
    with KafkaConsumer(bootstrap_servers=BOOTSTRAP) as consumer:
        assert consumer.interceptors is None


def test_interceptor_classes_are_created_and_configured_with_the_consumer_configs():
    with KafkaConsumer(
        bootstrap_servers=BOOTSTRAP, group_id="g-1", interceptor_classes=[DropsTombstones, KeepsFirst]
    ) as consumer:
        interceptors = consumer.interceptors.interceptors
        assert [type(i).__name__ for i in interceptors] == ["DropsTombstones", "KeepsFirst"]
        assert interceptors[0].group_id == "g-1"
        assert consumer.coordinator.interceptors is consumer.interceptors, "commits reach them too"


class NeedsArguments(DropsTombstones):
    def __init__(self, x):
        self.x = x


class NoCommit:
    def on_consume(self, records):
        return records


@pytest.mark.parametrize(
    "spec,message",
    [
        ("tests.consumer.test_consumer_interceptors.DropsTombstones", "Expected a class with on_consume and on_commit methods"),
        (NoCommit, "NoCommit is not a ConsumerInterceptor: it has no on_commit method"),
        (NeedsArguments, "NeedsArguments cannot be created without arguments"),
    ],
)  # fmt: skip
def test_a_bad_interceptor_class_is_an_error_naming_the_config(spec, message):
    with pytest.raises(ConfigException, match=r"configuration interceptor.classes: " + message):
        KafkaConsumer(bootstrap_servers=BOOTSTRAP, interceptor_classes=[spec])
