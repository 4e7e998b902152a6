"""``send(..., callback=...)``: Java's ``send(record, callback)``. The callback is kept in the record's
thunk in its batch and runs once, on the I/O thread, when the batch completes: records of a partition
in the order they were sent, after the interceptors' ``on_acknowledgement`` and before the callbacks
added to the future. A record ``send`` fails at once calls it on the caller's thread. A callback that
raises is logged; the other records' callbacks still run."""

from __future__ import annotations

import logging
import threading
from typing import ClassVar

import pytest

from kafka_lite import KafkaProducer
from kafka_lite.common.errors import Errors, InvalidTopicException, KafkaException
from tests.producer.support import ScriptedBroker

pytestmark = pytest.mark.unit


class Calls:
    """A callback that notes every call: the metadata, the exception and the thread it ran on."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def __call__(self, metadata, exception) -> None:
        self.calls.append((metadata, exception, threading.current_thread()))


@pytest.fixture
def broker():
    broker = ScriptedBroker()
    yield broker
    broker.close()


def test_the_callback_gets_the_metadata_on_the_io_thread_before_get_returns(broker):
    callback = Calls()
    with KafkaProducer(bootstrap_servers=f"127.0.0.1:{broker.port}") as producer:
        future = producer.send("t", b"v", partition=1, callback=callback)
        metadata = future.get(10)
        # The batch runs the thunks before it releases get(): the call is already there.
        assert callback.calls == [(metadata, None, producer.io_thread)]
    assert (metadata.topic, metadata.partition, metadata.offset) == ("t", 1, 0)


def test_a_record_the_broker_refuses_calls_back_with_the_error_and_no_metadata():
    broker = ScriptedBroker([Errors.INVALID_TOPIC_EXCEPTION.code])
    callback = Calls()
    try:
        with KafkaProducer(bootstrap_servers=f"127.0.0.1:{broker.port}", retries=0) as producer:
            future = producer.send("t", b"v", partition=0, callback=callback)
            with pytest.raises(InvalidTopicException):
                future.get(10)
            ((metadata, exception, thread),) = callback.calls
            assert metadata is None
            assert exception is future.exception
            assert thread is producer.io_thread
    finally:
        broker.close()


def test_a_record_send_fails_at_once_calls_back_on_the_callers_thread():
    callback = Calls()
    producer = KafkaProducer(bootstrap_servers="127.0.0.1:9")  # never contacted
    try:
        future = producer.send("bad/topic", b"v", callback=callback)
        ((metadata, exception, thread),) = callback.calls
        assert metadata is None
        assert isinstance(exception, InvalidTopicException)
        assert exception is future.exception
        assert thread is threading.current_thread()
    finally:
        producer.close(0)


def test_a_closed_producer_raises_and_does_not_call_back():
    callback = Calls()
    producer = KafkaProducer(bootstrap_servers="127.0.0.1:9")
    producer.close(0)
    with pytest.raises(KafkaException, match="Cannot send after the producer is closed"):
        producer.send("t", b"v", callback=callback)
    assert callback.calls == []


def test_callbacks_of_a_partition_run_in_the_order_the_records_were_sent(broker):
    order: list[tuple[bytes, int]] = []
    # A small batch.size spreads the records over several batches, drained in order.
    with KafkaProducer(bootstrap_servers=f"127.0.0.1:{broker.port}", batch_size=64, linger_ms=5) as producer:
        values = [b"record-%02d" % i for i in range(12)]
        futures = [
            producer.send("t", value, partition=0, callback=lambda m, e, v=value: order.append((v, m.offset)))
            for value in values
        ]
        producer.flush()
    assert len({f.get(0).offset for f in futures}) == len(values)
    assert order == [(value, offset) for offset, value in enumerate(values)]


def test_a_callback_that_raises_is_logged_and_the_next_records_still_called_back(broker, caplog):
    called = Calls()

    def raising(metadata, exception):
        raise RuntimeError("the application's bug")

    with KafkaProducer(bootstrap_servers=f"127.0.0.1:{broker.port}", linger_ms=60_000) as producer:
        first = producer.send("t", b"a", partition=0, callback=raising)
        second = producer.send("t", b"b", partition=0, callback=called)
        with caplog.at_level(logging.ERROR, logger="kafka_lite.producer.producer_batch"):
            producer.flush()
        assert (first.get(0).offset, second.get(0).offset) == (0, 1)
    assert [(m.offset, e) for m, e, _ in called.calls] == [(1, None)]
    assert "Error executing user-provided callback on message for topic-partition" in caplog.text
    assert "the application's bug" in caplog.text


def test_a_callback_that_raises_when_send_fails_is_logged_not_raised(caplog):
    def raising(metadata, exception):
        raise RuntimeError("the application's bug")

    producer = KafkaProducer(bootstrap_servers="127.0.0.1:9")
    try:
        with caplog.at_level(logging.ERROR, logger="kafka_lite.producer.kafka_producer"):
            future = producer.send("bad/topic", b"v", callback=raising)
        assert isinstance(future.exception, InvalidTopicException)
        assert "the application's bug" in caplog.text
    finally:
        producer.close(0)


class Recording:
    events: ClassVar[list] = []

    def on_send(self, record):
        return record

    def on_acknowledgement(self, metadata, exception):
        self.events.append(("interceptor", metadata.offset, exception))


def test_interceptors_first_then_the_send_callback_then_the_futures_callbacks(broker):
    Recording.events = events = []
    with KafkaProducer(
        bootstrap_servers=f"127.0.0.1:{broker.port}", linger_ms=60_000, interceptor_classes=[Recording]
    ) as producer:
        future = producer.send(
            "t", b"v", partition=0, callback=lambda m, e: events.append(("send callback", m.offset, e))
        )
        future.add_callback(lambda m: events.append(("future callback", m.offset, None)))
        producer.flush()
    assert events == [("interceptor", 0, None), ("send callback", 0, None), ("future callback", 0, None)]


def test_with_interceptors_a_failed_send_calls_back_before_they_hear_of_it():
    Recording.events = events = []
    producer = KafkaProducer(bootstrap_servers="127.0.0.1:9", interceptor_classes=[Recording])
    try:
        producer.send("bad/topic", b"v", callback=lambda m, e: events.append(("send callback", m, type(e))))
        assert events == [
            ("send callback", None, InvalidTopicException),
            ("interceptor", -1, events[1][2]),
        ]
        assert isinstance(events[1][2], InvalidTopicException)
    finally:
        producer.close(0)


def test_with_interceptors_the_callback_of_a_refused_record_gets_no_metadata():
    Recording.events = events = []
    broker = ScriptedBroker([Errors.INVALID_TOPIC_EXCEPTION.code])
    try:
        with KafkaProducer(
            bootstrap_servers=f"127.0.0.1:{broker.port}", retries=0, interceptor_classes=[Recording]
        ) as producer:
            future = producer.send("t", b"v", partition=0, callback=lambda m, e: events.append(("cb", m, e)))
            with pytest.raises(InvalidTopicException):
                future.get(10)
        # The interceptor sees Kafka's placeholder metadata; the application's callback sees None.
        assert events == [("interceptor", -1, future.exception), ("cb", None, future.exception)]
    finally:
        broker.close()
