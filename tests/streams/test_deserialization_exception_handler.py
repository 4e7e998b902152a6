"""KIP-161's deserialization exception handler, through the test driver: a record the source's
deserializers cannot read fails the task (LogAndFail, the default) naming the record's place, or is
logged and skipped (LogAndContinue) while the records around it are processed and committed."""

from __future__ import annotations

import logging

import pytest

from kafka_lite.common.errors import ConfigException
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.streams.deserialization_exception_handler import (
    DeserializationExceptionHandler,
    DeserializationHandlerResponse,
    LogAndContinueExceptionHandler,
    LogAndFailExceptionHandler,
)
from kafka_lite.streams.errors import StreamsException
from kafka_lite.streams.kstream import KStreamBuilder
from kafka_lite.streams.serialization import Serdes
from kafka_lite.streams.test_utils import TopologyTestDriver

pytestmark = pytest.mark.unit

CONFIG_KEY = "default.deserialization.exception.handler"
LONG = Serdes.Long()
GOOD, BAD = LONG.serializer().serialize("in", 7), b"\x00\x01\x02"  # a long is 8 bytes, not 3
INPUT = TopicPartition("in", 0)


def _driver(**config) -> TopologyTestDriver:
    builder = KStreamBuilder()
    builder.stream("in", value_serde=LONG).map_values(lambda v: v * 6).to("out", value_serde=LONG)
    return TopologyTestDriver(builder, {"application.id": "app", **config})


def _outputs(driver: TopologyTestDriver) -> list[int]:
    values = []
    while (record := driver.read_output("out", value_deserializer=LONG.deserializer())) is not None:
        values.append(record.value)
    return values


def _committed(driver: TopologyTestDriver) -> int | None:
    offset = driver.consumer.committed(INPUT)
    return None if offset is None else offset.offset


@pytest.mark.parametrize(
    "setting",
    [None, LogAndFailExceptionHandler, "org.apache.kafka.streams.errors.LogAndFailExceptionHandler"],
    ids=["default", "class", "kafka-class-name"],
)
def test_log_and_fail_stops_the_task_naming_the_record(setting, caplog):
    driver = _driver() if setting is None else _driver(**{CONFIG_KEY: setting})
    driver.pipe_input("in", None, GOOD)
    with caplog.at_level(logging.ERROR), pytest.raises(StreamsException) as failure:
        driver.pipe_input("in", None, BAD)
    message = str(failure.value)
    assert "topic=in, partition=0, offset=1" in message
    assert "set to fail upon a deserialization error" in message
    assert CONFIG_KEY in message, "the message says which setting to change"
    assert failure.value.__cause__ is not None, "the deserializer's own error is the cause"
    assert (
        "Exception caught during Deserialization, taskId: 0_0, topic: in, partition: 0, offset: 1"
        in caplog.text
    )
    assert _outputs(driver) == [42]
    assert _committed(driver) == 1, "nothing after the good record is committed"


@pytest.mark.parametrize(
    "setting",
    [
        LogAndContinueExceptionHandler,
        LogAndContinueExceptionHandler(),
        "org.apache.kafka.streams.errors.LogAndContinueExceptionHandler",
    ],
    ids=["class", "instance", "kafka-class-name"],
)
def test_log_and_continue_skips_the_record_and_goes_on(setting, caplog):
    driver = _driver(**{CONFIG_KEY: setting})
    driver.pipe_input("in", None, GOOD)
    with caplog.at_level(logging.WARNING):
        driver.pipe_input("in", None, BAD)
    assert (
        "Exception caught during Deserialization, taskId: 0_0, topic: in, partition: 0, offset: 1"
        in caplog.text
    )
    # Kafka 1.0: the skipped record is not processed, so its offset is not committed by itself ...
    assert _committed(driver) == 1
    driver.pipe_input("in", None, LONG.serializer().serialize("in", 1))
    # ... but the next record of the partition moves the committed offset past it.
    assert _committed(driver) == 3
    assert _outputs(driver) == [42, 6]


class Recording(DeserializationExceptionHandler):
    """A handler of the application's own: remembers what it was handed, and skips."""

    def __init__(self):
        self.calls = []
        self.configs = None

    def configure(self, configs):
        self.configs = configs

    def handle(self, context, record, exception):
        self.calls.append((str(context.task_id()), record.offset, record.value, type(exception)))
        return DeserializationHandlerResponse.CONTINUE


def test_a_handler_gets_the_task_the_raw_record_and_the_error():
    handler = Recording()
    driver = _driver(**{CONFIG_KEY: handler})
    driver.pipe_input("in", None, BAD)
    (call,) = handler.calls
    assert call[:3] == ("0_0", 0, BAD), "the raw bytes, as the consumer returned them"
    assert issubclass(call[3], Exception)
    assert _outputs(driver) == []


def test_a_handler_class_is_made_and_configured_with_the_application_config():
    driver = _driver(**{CONFIG_KEY: Recording})
    handler = driver.task.partition_group.partition_queues[
        INPUT
    ].record_deserializer.deserialization_exception_handler
    assert isinstance(handler, Recording) and handler.configs["application.id"] == "app"


def test_a_handler_that_raises_fails_the_task():
    class Broken(DeserializationExceptionHandler):
        def handle(self, context, record, exception):
            raise RuntimeError("handler bug")

    driver = _driver(**{CONFIG_KEY: Broken})
    with pytest.raises(StreamsException, match="Fatal user code error in deserialization error callback"):
        driver.pipe_input("in", None, BAD)


@pytest.mark.parametrize("setting", ["LogAndSkip", 42])
def test_a_setting_that_names_no_handler_is_refused(setting):
    with pytest.raises(ConfigException, match=CONFIG_KEY):
        _driver(**{CONFIG_KEY: setting})
