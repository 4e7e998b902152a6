"""RequestFuture as Kafka 0.10.1's: one result set once, listeners told once (at once if added late),
compose through an adapter, chain into another future, and the ready-made failures."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import (
    ApiException,
    CoordinatorNotAvailableException,
    DisconnectException,
    Errors,
    IllegalArgumentException,
    IllegalStateException,
    InvalidMetadataException,
    KafkaException,
    LeaderNotAvailableException,
    RetriableException,
    UnknownServerException,
    WakeupException,
)
from kafka_lite.consumer.internals.request_future import (
    NoAvailableBrokersException,
    RequestFuture,
    RequestFutureAdapter,
    RequestFutureListener,
    StaleMetadataException,
)

pytestmark = pytest.mark.unit


class Recorder(RequestFutureListener):
    def __init__(self) -> None:
        self.events: list[tuple[str, object]] = []

    def on_success(self, value) -> None:
        self.events.append(("success", value))

    def on_failure(self, e) -> None:
        self.events.append(("failure", e))


def test_a_new_future_is_not_done_and_has_neither_value_nor_exception():
    future = RequestFuture()
    assert not future.is_done() and not future.succeeded() and not future.failed()
    assert future.should_block()
    with pytest.raises(IllegalStateException, match="hasn't successfully completed"):
        future.value()
    with pytest.raises(IllegalStateException, match="hasn't failed"):
        future.exception()
    with pytest.raises(IllegalStateException):
        future.is_retriable()


def test_complete_sets_the_value_and_tells_each_listener_once():
    future, first, second = RequestFuture(), Recorder(), Recorder()
    future.add_listener(first)
    future.add_listener(second)
    future.complete("response")
    assert future.is_done() and future.succeeded() and not future.failed()
    assert not future.should_block()
    assert future.value() == "response"
    assert first.events == second.events == [("success", "response")]
    with pytest.raises(IllegalStateException, match="hasn't failed"):
        future.exception()


def test_none_is_a_value():
    future = RequestFuture.void_success()
    assert future.succeeded() and future.value() is None


def test_raise_sets_the_exception_and_tells_the_listeners():
    future, listener = RequestFuture(), Recorder()
    future.add_listener(listener)
    error = DisconnectException()
    future.raise_(error)
    assert future.is_done() and future.failed() and not future.succeeded()
    assert future.exception() is error
    assert future.is_retriable()
    assert listener.events == [("failure", error)]
    with pytest.raises(IllegalStateException, match="hasn't successfully completed"):
        future.value()


def test_raise_with_an_errors_entry_uses_its_exception():
    future = RequestFuture()
    future.raise_(Errors.NOT_LEADER_FOR_PARTITION)
    assert type(future.exception()).__name__ == "NotLeaderForPartitionException"
    assert future.is_retriable()


def test_a_non_retriable_failure_is_not_retriable():
    future = RequestFuture.failure(UnknownServerException())
    assert future.failed() and not future.is_retriable()


@pytest.mark.parametrize("second", ["complete", "raise"])
@pytest.mark.parametrize("first", ["complete", "raise"])
def test_completing_twice_is_illegal_and_keeps_the_first_result(first, second):
    future = RequestFuture()
    finish = {"complete": lambda: future.complete(1), "raise": lambda: future.raise_(DisconnectException())}
    finish[first]()
    result = future.value() if first == "complete" else future.exception()
    with pytest.raises(IllegalStateException, match="already complete"):
        finish[second]()
    assert (future.value() if first == "complete" else future.exception()) is result


def test_an_exception_cannot_be_a_value_and_none_cannot_be_raised():
    future = RequestFuture()
    with pytest.raises(IllegalArgumentException, match="can not be an instance of RuntimeException"):
        future.complete(DisconnectException())
    with pytest.raises(IllegalArgumentException, match="must not be null"):
        future.raise_(None)
    with pytest.raises(IllegalArgumentException, match="not 'oops'"):
        future.raise_("oops")
    assert not future.is_done()


def test_a_listener_added_after_completion_fires_at_once_and_only_once():
    done, failed = RequestFuture(), RequestFuture()
    done.complete(7)
    error = DisconnectException()
    failed.raise_(error)
    late_success, late_failure = Recorder(), Recorder()
    done.add_listener(late_success)
    failed.add_listener(late_failure)
    assert late_success.events == [("success", 7)]
    assert late_failure.events == [("failure", error)]
    done.add_listener(Recorder())  # firing for a new listener does not fire the old ones again
    assert late_success.events == [("success", 7)]


def test_listeners_fire_in_the_order_they_were_added():
    future, order = RequestFuture(), []

    class Named(RequestFutureListener):
        def __init__(self, name):
            self.name = name

        def on_success(self, value):
            order.append(self.name)

        def on_failure(self, e):
            raise AssertionError("not failed")

    for name in "abc":
        future.add_listener(Named(name))
    future.complete(None)
    assert order == ["a", "b", "c"]


class Length(RequestFutureAdapter):
    """Succeeds with the length of the value; fails a value of "" with an error of its own."""

    def on_success(self, value, future):
        if value == "":
            future.raise_(Errors.UNKNOWN)
        else:
            future.complete(len(value))


def test_compose_adapts_a_value_into_the_new_futures_value():
    future = RequestFuture()
    adapted = future.compose(Length())
    assert not adapted.is_done()
    future.complete("four")
    assert adapted.succeeded() and adapted.value() == 4


def test_compose_lets_the_adapter_fail_a_successful_result():
    future = RequestFuture()
    adapted = future.compose(Length())
    future.complete("")
    assert adapted.failed() and isinstance(adapted.exception(), UnknownServerException)


def test_compose_passes_a_failure_through_unchanged_by_default():
    future = RequestFuture()
    adapted = future.compose(Length())
    error = DisconnectException()
    future.raise_(error)
    assert adapted.exception() is error


def test_compose_lets_the_adapter_handle_a_failure_its_own_way():
    class Recovering(Length):
        def on_failure(self, e, future):
            future.complete(0)  # e.g. treat "no such group" as "no offsets"

    adapted = RequestFuture.failure(DisconnectException()).compose(Recovering())
    assert adapted.succeeded() and adapted.value() == 0


def test_composed_futures_chain_further():
    future = RequestFuture()

    class Double(RequestFutureAdapter):
        def on_success(self, value, future):
            future.complete(value * 2)

    doubled = future.compose(Length()).compose(Double())
    future.complete("abc")
    assert doubled.value() == 6


def test_chain_completes_the_other_future_with_the_value_or_the_exception():
    source, target = RequestFuture(), RequestFuture()
    source.chain(target)
    source.complete("v")
    assert target.value() == "v"
    source, target = RequestFuture(), RequestFuture()
    source.chain(target)
    error = DisconnectException()
    source.raise_(error)
    assert target.exception() is error


def test_chain_to_an_already_completed_future_is_illegal():
    source, target = RequestFuture(), RequestFuture.void_success()
    source.chain(target)
    with pytest.raises(IllegalStateException, match="already complete"):
        source.complete(1)


@pytest.mark.parametrize(
    ("make", "error_type"),
    [
        (RequestFuture.coordinator_not_available, CoordinatorNotAvailableException),
        (RequestFuture.leader_not_available, LeaderNotAvailableException),
        (RequestFuture.no_brokers_available, NoAvailableBrokersException),
        (RequestFuture.stale_metadata, StaleMetadataException),
    ],
)
def test_the_ready_made_failures_are_retriable_with_kafkas_exceptions(make, error_type):
    future = make()
    assert future.failed() and type(future.exception()) is error_type
    assert future.is_retriable()
    assert str(future.exception())  # every one says what went wrong


def test_the_metadata_failures_ask_for_a_metadata_refresh():
    for make in (
        RequestFuture.no_brokers_available,
        RequestFuture.stale_metadata,
        RequestFuture.leader_not_available,
    ):
        assert isinstance(make().exception(), InvalidMetadataException)
    assert isinstance(RequestFuture.coordinator_not_available().exception(), RetriableException)
    assert not isinstance(RequestFuture.coordinator_not_available().exception(), InvalidMetadataException)


def test_a_disconnect_is_retriable_and_a_wakeup_is_no_api_error():
    # Kafka's DisconnectException is a RetriableException with no error code of its own; its
    # WakeupException is a plain KafkaException (a consumer-side interruption, never on the wire).
    assert isinstance(DisconnectException(), RetriableException) and str(DisconnectException())
    assert Errors.for_exception(DisconnectException()) is Errors.UNKNOWN
    assert isinstance(WakeupException(), KafkaException)
    assert not isinstance(WakeupException(), ApiException)
