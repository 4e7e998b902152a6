"""The sender against a scripted broker on loopback: it answers each ProduceRequest as the test says
(an error code, silence, or only when released), so retries, back-off, metadata refreshes, muting,
acks=0, request timeouts and idempotence (sequences, in-order resends) are all checked on a real
socket, with MockTime."""

from __future__ import annotations

import threading
import time as real_time

import pytest

from kafka_lite.clients.metadata import Cluster, Metadata
from kafka_lite.clients.network_client import NetworkClient
from kafka_lite.common.errors import (
    NetworkException,
    NotLeaderForPartitionException,
    RecordTooLargeException,
    TimeoutException,
)
from kafka_lite.common.record.compression import CompressionType
from kafka_lite.common.record.memory_records import MemoryRecords
from kafka_lite.common.time import MockTime
from kafka_lite.network.selector import Selector
from kafka_lite.producer.record_accumulator import RecordAccumulator
from kafka_lite.producer.sender import Sender
from kafka_lite.producer.transaction_manager import TransactionManager
from tests.producer.support import (
    DEADLINE_S,
    DUPLICATE_SEQUENCE_NUMBER,
    HOLD,
    MESSAGE_TOO_LARGE,
    NOT_LEADER_FOR_PARTITION,
    OUT_OF_ORDER_SEQUENCE_NUMBER,
    SILENT,
    ScriptedBroker,
)
from tests.support.waiting import wait_until

pytestmark = pytest.mark.unit


@pytest.fixture
def broker():
    server = ScriptedBroker()
    yield server
    server.close()


class BoundedPollClient(NetworkClient):
    """The real NetworkClient, but no poll waits more than 20 ms of real time. Under MockTime a poll's
    wait for a linger or a response would otherwise be spent in real time, with nothing to end it."""

    def poll(self, timeout_ms: int, now: int | None = None):
        return super().poll(min(timeout_ms, 20), now)


class Setup:
    def __init__(
        self,
        broker: ScriptedBroker,
        retries=0,
        acks=1,
        max_in_flight=5,
        request_timeout_ms=30_000,
        idempotent=False,
    ):
        self.clock = MockTime()
        self.metadata = Metadata(time=self.clock)
        self.metadata.update(
            Cluster.from_metadata_response(broker.metadata_body()), self.clock.milliseconds()
        )
        self.client = BoundedPollClient(
            Selector(time=self.clock),
            "test-producer",
            max_in_flight_requests_per_connection=max_in_flight,
            request_timeout_ms=request_timeout_ms,
            time=self.clock,
            metadata=self.metadata,
        )
        self.transaction_manager = TransactionManager() if idempotent else None
        self.accumulator = RecordAccumulator(
            16384,
            1 << 20,
            CompressionType.NONE,
            0,
            100,
            self.clock,
            transaction_manager=self.transaction_manager,
        )
        self.sender = Sender(
            self.client, self.metadata, self.accumulator, guarantee_message_order=max_in_flight == 1,
            max_request_size=1 << 20, acks=acks, retries=retries, time=self.clock,
            request_timeout_ms=request_timeout_ms, retry_backoff_ms=100,
            transaction_manager=self.transaction_manager,
        )  # fmt: skip

    def send(self, value: bytes, partition: int = 0):
        tp = ("t", partition)
        return self.accumulator.append(tp, self.clock.milliseconds(), None, value, (), 0).future

    def step(self) -> None:
        """One sender round (Kafka's ``Sender.run(now)``)."""
        self.sender.run_once(self.clock.milliseconds())

    def run_until(self, condition, what: str) -> None:
        """Sender rounds until ``condition()``; fail after a real-time deadline."""
        end = real_time.monotonic() + DEADLINE_S
        while not condition():
            assert real_time.monotonic() < end, f"timed out waiting for {what}"
            self.step()

    def run_rounds(self, n: int) -> None:
        for _ in range(n):
            self.step()

    def close(self) -> None:
        self.client.close_all()


def test_records_are_sent_and_their_futures_get_the_offsets(broker):
    s = Setup(broker)
    futures = [s.send(b"a"), s.send(b"b"), s.send(b"c", partition=1)]
    s.run_until(lambda: all(f.is_done() for f in futures), "the responses")
    assert [(f.get(0).partition, f.get(0).offset) for f in futures] == [(0, 0), (0, 1), (1, 0)]
    assert len(broker.produce_requests) == 1, "both partitions' batches went in one request to node 0"
    s.close()


def test_a_retriable_error_resends_the_same_batch_after_the_backoff_and_refreshes_metadata(broker):
    broker.script = [NOT_LEADER_FOR_PARTITION]
    s = Setup(broker, retries=1)
    future = s.send(b"a")
    s.run_until(lambda: s.metadata.need_update, "the NOT_LEADER response to ask for metadata")
    s.run_rounds(3)
    assert len(broker.produce_requests) == 1, "no resend before retry.backoff.ms has passed"
    assert not future.is_done()
    s.clock.advance(100)
    s.run_until(future.is_done, "the retry's response")
    assert future.get(0).offset == 0
    first, retry = (r["batches"][("t", 0)] for r in broker.produce_requests)
    assert first == retry, "the retry sends the very same batch"
    s.run_until(lambda: broker.metadata_requests >= 1, "the metadata refresh NOT_LEADER asked for")
    s.close()


def test_a_retriable_error_fails_the_send_once_retries_are_used_up(broker):
    broker.script = [NOT_LEADER_FOR_PARTITION]
    s = Setup(broker, retries=0)
    future = s.send(b"a")
    s.run_until(future.is_done, "the response")
    with pytest.raises(
        NotLeaderForPartitionException, match=r"t-0: [^.]*, after 1 attempt \(retries is 0\)$"
    ):
        future.get(0)
    s.close()


def test_with_one_request_in_flight_the_partition_is_muted_until_its_response(broker):
    broker.script = [HOLD]
    s = Setup(broker, max_in_flight=1)
    first = s.send(b"a")
    s.run_until(lambda: len(broker.produce_requests) == 1, "the first request")
    second = s.send(b"b")
    s.run_rounds(3)
    assert s.client.in_flight_request_count("0") == 1, "t-0 is muted while its batch is in flight"
    assert ("t", 0) in s.accumulator.muted
    broker.release.set()
    s.run_until(second.is_done, "the second response")
    assert (first.get(0).offset, second.get(0).offset) == (0, 1)
    assert not s.accumulator.muted
    s.close()


def test_acks_0_completes_once_the_request_is_written_without_an_offset(broker):
    s = Setup(broker, acks=0)
    future = s.send(b"a")
    s.run_until(future.is_done, "the request to be written")
    assert future.get(0).offset == -1
    wait_until(lambda: broker.produce_requests, what="the broker to read the request")
    assert broker.produce_requests[0]["acks"] == 0
    s.close()


def test_a_request_unanswered_for_request_timeout_ms_fails_with_a_clear_error(broker):
    broker.script = [SILENT]
    s = Setup(broker, request_timeout_ms=200)
    future = s.send(b"a")
    s.run_until(lambda: len(broker.produce_requests) == 1, "the request")
    s.run_rounds(2)
    assert not future.is_done()
    s.clock.advance(201)
    s.run_until(future.is_done, "the request to time out")
    with pytest.raises(NetworkException, match=r"t-0: Node 0 disconnected .*request\.timeout\.ms is 200"):
        future.get(0)
    s.close()


# -- idempotence (Kafka 1.0's: up to five requests in flight, retried batches resent in order) ----------------


def batch_header(records: bytes):
    (batch,) = list(MemoryRecords(records).batches())
    return batch.producer_id, batch.producer_epoch, batch.base_sequence


def sent_sequences(broker: ScriptedBroker, tp=("t", 0)) -> list[tuple]:
    return [batch_header(r["batches"][tp]) for r in broker.produce_requests if tp in r["batches"]]


def test_an_idempotent_producer_gets_an_id_then_numbers_each_partitions_batches(broker):
    s = Setup(broker, retries=3, acks=-1, idempotent=True)
    first = [s.send(b"a"), s.send(b"b"), s.send(b"c", partition=1)]
    s.run_until(lambda: all(f.is_done() for f in first), "the first batches")
    second = [s.send(b"d")]
    s.run_until(second[0].is_done, "the second batch")
    assert broker.producer_ids_given == 1
    assert sent_sequences(broker, ("t", 0)) == [(1000, 0, 0), (1000, 0, 2)], "the second batch starts at 2"
    assert sent_sequences(broker, ("t", 1)) == [(1000, 0, 0)], "each partition counts on its own"
    assert s.transaction_manager.last_acked_sequence == {("t", 0): 2, ("t", 1): 0}
    s.close()


def test_batches_in_flight_behind_a_failed_one_are_resent_after_it_in_sequence_order(broker):
    # Two requests for t-0 in flight: the first fails (NOT_LEADER), so the broker refuses the second
    # as out of order. Both come back to the deque; the first goes out again alone, then the second.
    broker.script = [(HOLD, NOT_LEADER_FOR_PARTITION), OUT_OF_ORDER_SEQUENCE_NUMBER, HOLD]
    s = Setup(broker, retries=3, acks=-1, idempotent=True)
    first = s.send(b"a")
    s.run_until(lambda: len(broker.produce_requests) == 1, "the first request")
    second = s.send(b"b")
    s.run_rounds(3)  # the broker is still holding the first request: the second waits in its socket
    broker.release.set()
    s.run_until(lambda: len(s.accumulator.batches[("t", 0)]) == 2, "both batches to come back")
    assert [b.base_sequence for b in s.accumulator.batches[("t", 0)]] == [0, 1]
    broker.release.clear()  # the broker holds the first retry
    s.clock.advance(100)  # retry.backoff.ms
    s.run_until(lambda: len(broker.produce_requests) == 3, "the first retry")
    s.run_rounds(3)
    assert [b.base_sequence for b in s.accumulator.batches[("t", 0)]] == [1], (
        "the second batch waits in its deque until the first retry completes"
    )
    broker.release.set()
    s.run_until(second.is_done, "both retries")
    assert sent_sequences(broker) == [(1000, 0, 0), (1000, 0, 1), (1000, 0, 0), (1000, 0, 1)]
    assert (first.get(0).offset, second.get(0).offset) == (0, 1)
    s.close()


def test_a_duplicate_sequence_is_a_success_without_an_offset(broker):
    broker.script = [DUPLICATE_SEQUENCE_NUMBER]
    s = Setup(broker, retries=3, acks=-1, idempotent=True)
    future = s.send(b"a")
    s.run_until(future.is_done, "the response")
    assert future.get(0).offset == -1
    s.close()


def test_out_of_order_for_the_next_expected_batch_fails_it_and_resets_the_producer_id(broker):
    broker.script = [OUT_OF_ORDER_SEQUENCE_NUMBER]
    s = Setup(broker, retries=3, acks=-1, idempotent=True)
    lost = s.send(b"a")
    s.run_until(lost.is_done, "the response")
    with pytest.raises(Exception, match="t-0: ") as failure:
        lost.get(0)
    assert type(failure.value).__name__ == "OutOfOrderSequenceException"
    after = s.send(b"b")
    s.run_until(after.is_done, "the next batch, under a new producer id")
    assert sent_sequences(broker) == [(1000, 0, 0), (1001, 0, 0)]
    s.close()


def test_a_batch_that_fails_for_good_resets_the_producer_id_for_the_batches_behind_it(broker):
    # NOT_LEADER with no retry left: the broker may or may not hold the batch's sequences, so the next
    # batch starts again from sequence 0 under a new id. Kafka 0.11 resets only on OUT_OF_ORDER (above).
    broker.script = [NOT_LEADER_FOR_PARTITION]
    s = Setup(broker, retries=0, acks=-1, idempotent=True)
    lost = s.send(b"a")
    s.run_until(lost.is_done, "the response")
    with pytest.raises(NotLeaderForPartitionException):
        lost.get(0)
    after = s.send(b"b")
    s.run_until(after.is_done, "the next batch, under a new producer id")
    assert sent_sequences(broker) == [(1000, 0, 0), (1001, 0, 0)]
    assert broker.producer_ids_given == 2
    s.close()


def test_without_a_producer_id_batches_still_expire_after_request_timeout(broker):
    s = Setup(broker, retries=3, acks=-1, idempotent=True, request_timeout_ms=1000)
    broker.close()  # no broker will hand out a producer id
    future = s.send(b"a")
    s.run_rounds(3)
    assert not future.is_done() and not s.transaction_manager.has_producer_id()
    s.clock.advance(1001)
    s.run_until(future.is_done, "the batch to expire")
    with pytest.raises(
        TimeoutException, match=r"Expiring 1 record\(s\) for t-0: 1001 ms has passed since batch creation"
    ):
        future.get(0)
    s.close()


# -- splitting a batch the broker refuses as too large (Kafka 0.11's split) ---------------------------------


def sent_values(broker: ScriptedBroker, tp=("t", 0)) -> list[list[bytes]]:
    """The values of each ProduceRequest's batch for ``tp``, request by request."""
    return [
        [record.value for record in MemoryRecords(r["batches"][tp]).records()]
        for r in broker.produce_requests
        if tp in r["batches"]
    ]


def test_a_batch_too_large_for_the_broker_is_split_and_resent_in_order_keeping_each_future(broker):
    broker.script = [MESSAGE_TOO_LARGE]
    s = Setup(broker, retries=0)  # a split does not use up a retry
    values = [b"%d" % i * 100 for i in range(6)]
    futures = [s.send(v) for v in values]
    answered = []
    for f in futures:
        f.add_callback(lambda md: answered.append(md.offset))
    # Threads already waiting before the split, on a record's future and in a flush, are answered
    # once the pieces are.
    waiter_result, flushed = [], []
    waiter = threading.Thread(target=lambda: waiter_result.append(futures[4].get(DEADLINE_S)))
    waiter.start()
    s.accumulator.begin_flush()

    def flush():
        completed = s.accumulator.await_flush_completion(DEADLINE_S * 1000)
        flushed.append((completed, all(f.is_done() for f in futures)))

    flusher = threading.Thread(target=flush)
    flusher.start()
    s.run_until(lambda: all(f.is_done() for f in futures), "every record of the split batch")
    waiter.join(DEADLINE_S)
    flusher.join(DEADLINE_S)
    assert flushed == [(True, True)], "the flush waited for the pieces"
    requests = sent_values(broker)
    assert requests[0] == values, "the first request carried the whole batch"
    assert len(requests) > 2 and all(0 < len(r) < len(values) for r in requests[1:]), requests
    assert [v for r in requests[1:] for v in r] == values, "the pieces carry the records in order"
    assert [f.get(0).offset for f in futures] == [0, 1, 2, 3, 4, 5]
    assert answered == [0, 1, 2, 3, 4, 5], "each record's callback ran once, with its own offset"
    assert [md.offset for md in waiter_result] == [4]
    assert s.sender.metrics.batch_splits == 1
    assert s.accumulator.free.available_memory() == 1 << 20, "the pieces took no memory from the pool"
    s.close()


def test_a_split_idempotent_batch_hands_its_sequences_on_to_the_pieces(broker):
    broker.script = [MESSAGE_TOO_LARGE]
    s = Setup(broker, retries=3, acks=-1, idempotent=True)
    futures = [s.send(b"%d" % i * 100) for i in range(6)]
    s.run_until(lambda: all(f.is_done() for f in futures), "every record of the split batch")
    sizes = [len(r) for r in sent_values(broker)]
    expected, sequence = [(1000, 0, 0)], 0
    for size in sizes[1:]:
        expected.append((1000, 0, sequence))
        sequence += size
    assert sent_sequences(broker) == expected, "the pieces cover the big batch's sequences, in order"
    assert [f.get(0).offset for f in futures] == [0, 1, 2, 3, 4, 5]
    assert s.transaction_manager.last_acked_sequence == {("t", 0): 5}
    assert broker.producer_ids_given == 1, "a split is not a failure: the producer id stays"
    s.close()


def test_splitting_ends_with_single_records_that_fail_with_a_clear_error(broker):
    broker.script = [MESSAGE_TOO_LARGE] * 20  # the broker takes none of it
    s = Setup(broker)
    futures = [s.send(b"%d" % i * 100) for i in range(4)]
    s.run_until(lambda: all(f.is_done() for f in futures), "every record to fail")
    assert all(len(r) == 1 for r in sent_values(broker)[-4:]), "split down to one record per batch"
    for f in futures:
        with pytest.raises(RecordTooLargeException, match=r"t-0: the broker rejected a batch of \d+ bytes"):
            f.get(0)
    s.close()
