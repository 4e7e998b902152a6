"""The transactional half of the TransactionManager without a network: the state table, the
application's calls that move it, the request queue's order, and how each handler sorts the
errors its response may carry (retry, fatal, abortable)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from kafka_lite import KafkaProducer
from kafka_lite.clients.network_client import ClientResponse
from kafka_lite.common.errors import (
    ConfigException,
    Errors,
    IllegalStateException,
    KafkaException,
    ProducerFencedException,
    TimeoutException,
    TopicAuthorizationException,
)
from kafka_lite.consumer.offset_and_metadata import OffsetAndMetadata
from kafka_lite.producer.transaction_manager import VALID_PREVIOUS_STATES, State, TransactionManager
from kafka_lite.producer.txn_request_handlers import (
    AddOffsetsToTxnHandler,
    AddPartitionsToTxnHandler,
    CoordinatorType,
    EndTxnHandler,
    FindCoordinatorHandler,
    InitProducerIdHandler,
    TxnOffsetCommitHandler,
)

pytestmark = pytest.mark.unit
TP0, TP1 = ("t", 0), ("t", 1)
BOOTSTRAP = "127.0.0.1:1"  # nothing listens: these producers never reach a broker


def manager() -> TransactionManager:
    return TransactionManager("txn-a", 60_000, retry_backoff_ms=100)


def respond(tm: TransactionManager, handler, body: dict | None, now: int = 0) -> None:
    """Answer ``handler`` as the NetworkClient would, as if it were the request in flight."""
    tm.set_in_flight_request_correlation_id(7)
    request = SimpleNamespace(correlation_id=7, destination="0")
    handler.on_complete(ClientResponse(request, now, body, disconnected=body is None))  # type: ignore[arg-type]


def in_transaction() -> TransactionManager:
    """A manager that has its producer id (42, epoch 3) and has begun a transaction."""
    tm = manager()
    tm.initialize_transactions()
    handler = tm.next_request_handler(False)
    respond(tm, handler, {"error_code": 0, "producer_id": 42, "producer_epoch": 3, "throttle_time_ms": 0})
    tm.begin_transaction()
    return tm


def answer_add_partition(tm: TransactionManager, error: Errors, now: int = 0):
    """Ask to add t-0 and answer the AddPartitionsToTxn with ``error``; the handler."""
    tm.maybe_add_partition_to_transaction(TP0)
    handler = tm.next_request_handler(False)
    errors = [{"topic": "t", "partition_errors": [{"partition": 0, "error_code": error.code}]}]
    respond(tm, handler, {"throttle_time_ms": 0, "errors": errors}, now=now)
    return handler


def add_partitions(tm: TransactionManager, *tps) -> None:
    for tp in tps:
        tm.maybe_add_partition_to_transaction(tp)
    handler = tm.next_request_handler(False)
    assert isinstance(handler, AddPartitionsToTxnHandler)
    errors = [{"topic": "t", "partition_errors": [{"partition": p, "error_code": 0} for _, p in tps]}]
    respond(tm, handler, {"throttle_time_ms": 0, "errors": errors})


# -- the state table ---------------------------------------------------------------------------------


@pytest.mark.parametrize("source", list(State))
@pytest.mark.parametrize("target", list(State))
def test_every_transition_is_allowed_exactly_when_the_table_says(source, target):
    tm = manager()
    tm.current_state = source
    error = KafkaException("boom") if target in (State.ABORTABLE_ERROR, State.FATAL_ERROR) else None
    if source in VALID_PREVIOUS_STATES[target]:
        tm.transition_to(target, error)
        assert tm.current_state is target
    else:
        with pytest.raises(KafkaException, match=f"Invalid transition attempted from state {source.name} to "
                                                 f"state {target.name}"):  # fmt: skip
            tm.transition_to(target, error)
        assert tm.current_state is source


def test_fatal_error_is_reachable_from_everywhere_and_leads_nowhere():
    assert VALID_PREVIOUS_STATES[State.FATAL_ERROR] == frozenset(State)
    assert all(
        State.FATAL_ERROR not in sources
        for sources in VALID_PREVIOUS_STATES.values()
        if sources != set(State)
    )


def test_an_error_state_needs_its_error():
    tm = in_transaction()
    with pytest.raises(IllegalStateException):
        tm.transition_to(State.ABORTABLE_ERROR)


# -- the application's calls --------------------------------------------------------------------------


def test_init_transactions_queues_init_producer_id_with_the_transactional_id_and_timeout():
    tm = manager()
    result = tm.initialize_transactions()
    assert tm.current_state is State.INITIALIZING
    handler = tm.next_request_handler(False)
    assert isinstance(handler, InitProducerIdHandler)
    assert handler.request_body() == {"transactional_id": "txn-a", "transaction_timeout_ms": 60_000}
    assert handler.coordinator_type is CoordinatorType.TRANSACTION and handler.coordinator_key == "txn-a"
    respond(tm, handler, {"error_code": 0, "producer_id": 42, "producer_epoch": 3, "throttle_time_ms": 0})
    assert result.is_completed() and result.is_successful()
    assert tm.current_state is State.READY and tm.producer_id_and_epoch.producer_id == 42


def test_send_before_begin_transaction_or_before_init_is_refused():
    tm = manager()
    with pytest.raises(IllegalStateException, match="before completing a call to init_transactions"):
        tm.maybe_add_partition_to_transaction(TP0)
    tm = in_transaction()
    tm.current_state = State.READY
    with pytest.raises(IllegalStateException, match="Cannot call send in state READY"):
        tm.maybe_add_partition_to_transaction(TP0)


def test_a_non_transactional_manager_refuses_transactional_calls():
    with pytest.raises(IllegalStateException, match="non-transactional producer"):
        TransactionManager().begin_transaction()


def test_a_partition_is_drained_only_once_added_to_the_transaction():
    tm = in_transaction()
    tm.maybe_add_partition_to_transaction(TP0)
    assert tm.is_partition_pending_add(TP0) and not tm.is_send_to_partition_allowed(TP0)
    handler = tm.next_request_handler(False)
    assert isinstance(handler, AddPartitionsToTxnHandler)
    assert handler.request_body() == {
        "transactional_id": "txn-a", "producer_id": 42, "producer_epoch": 3,
        "topics": [{"topic": "t", "partitions": [0]}],
    }  # fmt: skip
    assert not tm.is_send_to_partition_allowed(TP0), "still pending while the request is out"
    respond(tm, handler, {"throttle_time_ms": 0, "errors": [{"topic": "t", "partition_errors": [
        {"partition": 0, "error_code": 0}]}]})  # fmt: skip
    assert tm.is_send_to_partition_allowed(TP0) and tm.transaction_started


def test_end_txn_waits_for_the_batches_and_goes_after_everything_else():
    tm = in_transaction()
    add_partitions(tm, TP0)
    result = tm.begin_commit()
    assert tm.next_request_handler(has_incomplete_batches=True) is None, "batches still out: no EndTxn yet"
    tm.lookup_coordinator(CoordinatorType.TRANSACTION, "txn-a")  # queued after EndTxn, goes first
    assert isinstance(tm.next_request_handler(True), FindCoordinatorHandler)
    handler = tm.next_request_handler(False)
    assert isinstance(handler, EndTxnHandler) and handler.request_body()["transaction_result"] is True
    respond(tm, handler, {"throttle_time_ms": 0, "error_code": 0})
    assert result.is_successful() and result.is_completed()
    assert tm.current_state is State.READY and not tm.partitions_in_transaction


def test_a_transaction_nothing_joined_ends_without_an_end_txn():
    tm = in_transaction()
    result = tm.begin_abort()
    assert tm.next_request_handler(False) is None
    assert result.is_completed() and tm.current_state is State.READY


def test_send_offsets_adds_the_group_then_commits_the_offsets_at_the_groups_coordinator():
    tm = in_transaction()
    result = tm.send_offsets_to_transaction({TP0: OffsetAndMetadata(10, "m")}, "group-g")
    handler = tm.next_request_handler(False)
    assert isinstance(handler, AddOffsetsToTxnHandler)
    assert handler.request_body()["consumer_group_id"] == "group-g"
    respond(tm, handler, {"throttle_time_ms": 0, "error_code": 0})
    assert not result.is_completed(), "complete only once the TxnOffsetCommit is answered"
    commit = tm.next_request_handler(False)
    assert isinstance(commit, TxnOffsetCommitHandler)
    assert commit.coordinator_type is CoordinatorType.GROUP and commit.coordinator_key == "group-g"
    assert commit.request_body()["topics"] == [
        {"topic": "t", "partitions": [{"partition": 0, "offset": 10, "metadata": "m"}]}
    ]
    respond(
        tm,
        commit,
        {
            "throttle_time_ms": 0,
            "topics": [{"topic": "t", "partitions": [{"partition": 0, "error_code": 0}]}],
        },
    )
    assert result.is_completed() and result.is_successful() and not tm.pending_txn_offset_commits


# -- errors -------------------------------------------------------------------------------------------


def test_not_coordinator_finds_the_coordinator_again_and_retries_after_the_backoff():
    tm = manager()
    tm.initialize_transactions()
    handler = tm.next_request_handler(False)
    respond(tm, handler, {"error_code": Errors.NOT_COORDINATOR.code, "producer_id": -1, "producer_epoch": -1,
                          "throttle_time_ms": 0}, now=1000)  # fmt: skip
    assert tm.transaction_coordinator is None
    assert isinstance(tm.next_request_handler(False), FindCoordinatorHandler), (
        "the coordinator is looked up first"
    )
    again = tm.next_request_handler(False)
    assert again is handler and again.is_retry and again.ready_at == 1100
    assert tm.current_state is State.INITIALIZING and not handler.result.is_completed()


def test_a_disconnect_retries_and_looks_the_coordinator_up_again():
    tm = in_transaction()
    tm.maybe_add_partition_to_transaction(TP0)
    handler = tm.next_request_handler(False)
    respond(tm, handler, None)
    assert isinstance(tm.next_request_handler(False), FindCoordinatorHandler)
    assert tm.next_request_handler(False) is handler


def test_a_fenced_epoch_is_fatal_and_every_later_call_says_fenced():
    tm = in_transaction()
    add_partitions(tm, TP0)
    result = tm.begin_commit()
    handler = tm.next_request_handler(False)
    respond(tm, handler, {"throttle_time_ms": 0, "error_code": Errors.INVALID_PRODUCER_EPOCH.code})
    assert isinstance(result.error, ProducerFencedException)
    with pytest.raises(ProducerFencedException):
        result.await_result(0)
    assert tm.has_fatal_error() and tm.fatal_error is result.error
    with pytest.raises(ProducerFencedException):
        tm.maybe_add_partition_to_transaction(TP1)
    with pytest.raises(ProducerFencedException):
        tm.begin_abort()


def test_an_unauthorized_topic_is_abortable_and_abort_transaction_recovers():
    tm = in_transaction()
    answer_add_partition(tm, Errors.TOPIC_AUTHORIZATION_FAILED)
    assert tm.has_abortable_error() and isinstance(tm.last_error, TopicAuthorizationException)
    with pytest.raises(KafkaException, match="error state"):
        tm.begin_commit()
    result = tm.begin_abort()
    assert tm.current_state is State.ABORTING_TRANSACTION
    assert tm.next_request_handler(False) is None and result.is_completed(), "nothing joined: no EndTxn"
    assert tm.current_state is State.READY
    tm.begin_transaction()


def test_concurrent_transactions_on_the_first_partition_retries_sooner():
    tm = in_transaction()
    handler = answer_add_partition(tm, Errors.CONCURRENT_TRANSACTIONS, now=500)
    again = tm.next_request_handler(False)
    assert again is handler and again.ready_at == 520, "the last transaction is still ending: 20 ms, not 100"


def test_a_response_that_is_not_the_one_in_flight_is_fatal():
    tm = in_transaction()
    tm.maybe_add_partition_to_transaction(TP0)
    handler = tm.next_request_handler(False)
    tm.set_in_flight_request_correlation_id(99)
    request = SimpleNamespace(correlation_id=7, destination="0")
    handler.on_complete(ClientResponse(request, 0, {"throttle_time_ms": 0, "errors": []}))  # type: ignore[arg-type]
    assert tm.has_fatal_error()


def test_a_transactional_producer_never_resets_its_producer_id():
    tm = in_transaction()
    with pytest.raises(
        IllegalStateException, match="Cannot reset producer state for a transactional producer"
    ):
        tm.reset_producer_id()


# -- the producer's rules (KafkaProducer's transactional configuration and calls) -------------------


def test_a_transactional_id_implies_idempotence_acks_all_and_the_default_timeout():
    producer = KafkaProducer(bootstrap_servers=BOOTSTRAP, transactional_id="txn-a")
    try:
        assert producer.config["enable.idempotence"] and producer.acks == -1
        tm = producer.transaction_manager
        assert tm.is_transactional() and (tm.transactional_id, tm.transaction_timeout_ms) == ("txn-a", 60_000)
    finally:
        producer.close(0)


@pytest.mark.parametrize(
    ("configs", "message"),
    [
        ({"enable_idempotence": False}, "Cannot set a transactional.id without also enabling idempotence"),
        ({"acks": 1}, "Must set acks to all"),
    ],
)
def test_a_transactional_id_refuses_settings_that_break_it(configs, message):
    with pytest.raises(ConfigException, match=message):
        KafkaProducer(bootstrap_servers=BOOTSTRAP, transactional_id="txn-a", **configs)


def test_send_outside_a_transaction_raises_and_transactional_calls_need_a_transactional_id():
    producer = KafkaProducer(bootstrap_servers=BOOTSTRAP, transactional_id="txn-a", max_block_ms=0)
    try:
        with pytest.raises(IllegalStateException, match="init_transactions"):
            producer.send("t", b"v")
    finally:
        producer.close(0)
    plain = KafkaProducer(bootstrap_servers=BOOTSTRAP)
    try:
        with pytest.raises(IllegalStateException, match="transactional_id"):
            plain.begin_transaction()
    finally:
        plain.close(0)


def test_init_transactions_waits_no_longer_than_max_block_ms():
    """No coordinator answers (nothing listens): the call gives up after ``max_block_ms``, as a
    kafka-python producer's blocking calls do, rather than waiting without a bound."""
    producer = KafkaProducer(bootstrap_servers=BOOTSTRAP, transactional_id="txn-a", max_block_ms=0)
    try:
        with pytest.raises(TimeoutException, match="after 0 ms"):
            producer.init_transactions()
    finally:
        producer.close(0)
