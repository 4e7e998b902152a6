"""The transactional producer's sender against a scripted broker on loopback: the order its requests
go out in (FindCoordinator, InitProducerId, AddPartitionsToTxn before the partition's first batch,
AddOffsetsToTxn then TxnOffsetCommit, EndTxn after the last batch's response), what each carries,
and a fenced producer's batches failing."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import Errors, ProducerFencedException
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.requests import encode_response
from kafka_lite.common.record.memory_records import MemoryRecords
from kafka_lite.consumer.offset_and_metadata import OffsetAndMetadata
from kafka_lite.producer.transaction_manager import State, TransactionManager
from tests.producer.support import ScriptedBroker
from tests.producer.test_sender import Setup

pytestmark = pytest.mark.unit


class TransactionalBroker(ScriptedBroker):
    """Node 0, the coordinator of every transactional id and group: answers the transaction APIs
    with NONE (or ``errors[api]`` once), and logs every request as (api, body)."""

    def __init__(self) -> None:
        self.log: list[tuple[ApiKeys, dict]] = []
        self.errors: dict[ApiKeys, int] = {}
        super().__init__()

    def answer(self, header, body):
        api = ApiKeys(header.api_key)
        if api is not ApiKeys.METADATA:
            self.log.append((api, body))
        error = self.errors.pop(api, 0)
        c = header.correlation_id
        if api is ApiKeys.FIND_COORDINATOR:
            node = {"node_id": 0, "host": "127.0.0.1", "port": self.port}
            return encode_response(api, 1, c, {"throttle_time_ms": 0, "error_code": error, "error_message": None,
                                               "coordinator": node})  # fmt: skip
        if api is ApiKeys.INIT_PRODUCER_ID:
            return encode_response(api, 0, c, {"throttle_time_ms": 0, "error_code": error, "producer_id": 4000,
                                               "producer_epoch": 2})  # fmt: skip
        if api is ApiKeys.ADD_PARTITIONS_TO_TXN:
            errors = [{"topic": t["topic"], "partition_errors": [{"partition": p, "error_code": error}
                                                                 for p in t["partitions"]]} for t in body["topics"]]  # fmt: skip
            return encode_response(api, 0, c, {"throttle_time_ms": 0, "errors": errors})
        if api in (ApiKeys.ADD_OFFSETS_TO_TXN, ApiKeys.END_TXN):
            return encode_response(api, 0, c, {"throttle_time_ms": 0, "error_code": error})
        if api is ApiKeys.TXN_OFFSET_COMMIT:
            topics = [{"topic": t["topic"], "partitions": [{"partition": p["partition"], "error_code": error}
                                                           for p in t["partitions"]]} for t in body["topics"]]  # fmt: skip
            return encode_response(api, 0, c, {"throttle_time_ms": 0, "topics": topics})
        if api is ApiKeys.PRODUCE and error:
            self.script.append(error)
        return super().answer(header, body)

    def apis(self) -> list[ApiKeys]:
        return [api for api, _ in self.log]


@pytest.fixture
def broker():
    server = TransactionalBroker()
    yield server
    server.close()


def transactional(broker) -> Setup:
    s = Setup(broker, retries=3, acks=-1, idempotent=True)
    tm = TransactionManager("txn-a", 60_000, retry_backoff_ms=100)
    s.transaction_manager = s.accumulator.transaction_manager = s.sender.transaction_manager = tm
    s.accumulator._is_transactional = True
    return s


def init(s: Setup):
    result = s.transaction_manager.initialize_transactions()
    s.run_until(result.is_completed, "init_transactions")
    result.await_result(0)


def in_transaction(broker) -> tuple[Setup, TransactionManager]:
    """A producer past init_transactions, in a transaction that t-0 is joining."""
    s = transactional(broker)
    init(s)
    s.transaction_manager.begin_transaction()
    s.transaction_manager.maybe_add_partition_to_transaction(("t", 0))
    return s, s.transaction_manager


def test_a_committed_transaction_sends_its_requests_in_kafkas_order(broker):
    s = transactional(broker)
    tm = s.transaction_manager
    init(s)
    assert broker.apis() == [ApiKeys.FIND_COORDINATOR, ApiKeys.INIT_PRODUCER_ID]
    find, init_pid = broker.log[0][1], broker.log[1][1]
    assert find == {"coordinator_key": "txn-a", "coordinator_type": 1}
    assert init_pid == {"transactional_id": "txn-a", "transaction_timeout_ms": 60_000}

    tm.begin_transaction()
    tm.maybe_add_partition_to_transaction(("t", 0))
    future = s.send(b"a")
    s.run_until(future.is_done, "the record's response")
    assert broker.apis()[2:] == [ApiKeys.ADD_PARTITIONS_TO_TXN, ApiKeys.PRODUCE], "the partition joins first"
    produce = broker.log[3][1]
    assert produce["transactional_id"] == "txn-a" and produce["acks"] == -1
    (batch,) = MemoryRecords(broker.produce_requests[0]["batches"][("t", 0)]).batches()
    assert batch.is_transactional and (batch.producer_id, batch.producer_epoch) == (4000, 2)

    offsets = tm.send_offsets_to_transaction({("in", 0): OffsetAndMetadata(5)}, "group-g")
    s.run_until(offsets.is_completed, "send_offsets_to_transaction")
    offsets.await_result(0)
    assert broker.apis()[4:] == [
        ApiKeys.ADD_OFFSETS_TO_TXN,
        ApiKeys.FIND_COORDINATOR,
        ApiKeys.TXN_OFFSET_COMMIT,
    ]
    assert broker.log[5][1] == {"coordinator_key": "group-g", "coordinator_type": 0}
    assert broker.log[6][1]["topics"] == [
        {"topic": "in", "partitions": [{"partition": 0, "offset": 5, "metadata": ""}]}
    ]

    commit = tm.begin_commit()
    s.run_until(commit.is_completed, "commit_transaction")
    commit.await_result(0)
    assert broker.apis()[7:] == [ApiKeys.END_TXN]
    assert broker.log[7][1] == {"transactional_id": "txn-a", "producer_id": 4000, "producer_epoch": 2,
                                "transaction_result": True}  # fmt: skip
    assert tm.current_state is State.READY
    assert not s.accumulator.flush_in_progress(), "the flush begun for the commit has ended"
    s.close()


def test_end_txn_waits_for_the_last_batch_to_be_answered(broker):
    s, tm = in_transaction(broker)
    broker.script = ["hold"]
    future = s.send(b"a")
    s.run_until(lambda: ApiKeys.PRODUCE in broker.apis(), "the produce request")
    commit = tm.begin_commit()
    s.run_rounds(5)
    assert ApiKeys.END_TXN not in broker.apis(), "EndTxn before the batch is answered could commit without it"
    broker.release.set()
    s.run_until(commit.is_completed, "the commit")
    assert future.is_done() and broker.apis()[-1] is ApiKeys.END_TXN
    s.close()


def test_a_first_add_partitions_refused_while_the_last_transaction_completes_goes_again_after_20_ms(broker):
    """Kafka 0.11's sender sleeps a retried request's own back-off (``retryBackoffMs()``): for a
    transaction's first AddPartitionsToTxn refused with CONCURRENT_TRANSACTIONS, 20 ms, not
    retry.backoff.ms (100 here); so the round's poll must not wait longer than that."""
    s, tm = in_transaction(broker)
    broker.errors[ApiKeys.ADD_PARTITIONS_TO_TXN] = Errors.CONCURRENT_TRANSACTIONS.code
    waits: list[int] = []
    poll = s.client.poll

    def recorded_poll(timeout_ms: int, now: int | None = None):
        waits.append(timeout_ms)
        return poll(timeout_ms, now)

    s.client.poll = recorded_poll
    adds = lambda: broker.apis().count(ApiKeys.ADD_PARTITIONS_TO_TXN)  # noqa: E731
    s.run_until(lambda: adds() == 1 and not tm.has_in_flight_request(), "the refusal")
    waits.clear()
    s.step()
    assert adds() == 1 and waits == [20], f"backing off, the sender's poll waited up to {waits} ms"
    s.clock.advance(20)
    s.run_until(lambda: adds() == 2, "the AddPartitionsToTxn again, 20 ms later")
    s.close()


def test_abort_fails_the_batches_not_yet_sent_and_ends_the_transaction(broker):
    s, tm = in_transaction(broker)
    s.sender._maybe_send_transactional_request(s.clock.milliseconds())  # AddPartitionsToTxn only
    future = s.send(b"never sent")
    abort = tm.begin_abort()
    s.run_until(abort.is_completed, "the abort")
    assert future.is_done() and "transaction was aborted" in str(future.exception)
    assert ApiKeys.PRODUCE not in broker.apis()
    assert broker.log[-1] == (ApiKeys.END_TXN, {"transactional_id": "txn-a", "producer_id": 4000,
                                                "producer_epoch": 2, "transaction_result": False})  # fmt: skip
    s.close()


def test_a_fenced_produce_is_fatal_and_fails_the_commit(broker):
    s, tm = in_transaction(broker)
    broker.errors[ApiKeys.PRODUCE] = Errors.INVALID_PRODUCER_EPOCH.code
    future = s.send(b"a")
    s.run_until(future.is_done, "the fenced response")
    assert isinstance(future.exception, ProducerFencedException)
    assert tm.has_fatal_error()
    with pytest.raises(ProducerFencedException):
        tm.begin_commit()
    s.close()
