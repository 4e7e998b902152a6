"""The transaction coordinator on a MockTime, over a real in-process replica manager leading every
__transaction_state partition: InitProducerId and fencing, AddPartitionsToTxn, EndTxn through the
marker manager to CompleteCommit / CompleteAbort, the retries of markers, the timeout sweep, and a
new coordinator loading the log (after Kafka 0.11's TransactionCoordinatorTest,
TransactionStateManagerTest and TransactionMarkerChannelManagerTest). The marker manager's send
thread is not started: each test drains its requests and answers them itself, as a leader would."""

from __future__ import annotations

import itertools

import pytest

from kafka_lite.clients.network_client import ClientRequest, ClientResponse
from kafka_lite.common.errors import Errors, IllegalStateException
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.time import MockTime
from kafka_lite.coordinator.transaction import transaction_log
from kafka_lite.coordinator.transaction.transaction_coordinator import TransactionCoordinator
from kafka_lite.coordinator.transaction.transaction_log import TRANSACTION_STATE_TOPIC_NAME
from kafka_lite.coordinator.transaction.transaction_marker_channel_manager import (
    TransactionMarkerChannelManager,
)
from kafka_lite.coordinator.transaction.transaction_metadata import (
    SHORT_MAX,
    TV_0,
    TV_2,
    TransactionMetadata,
    TransactionState,
)
from kafka_lite.coordinator.transaction.transaction_state_manager import (
    TransactionConfig,
    TransactionStateManager,
    TxnMetadataCacheEntry,
)
from kafka_lite.server.metadata_cache import MetadataCache
from kafka_lite.testing.in_process_replicas import in_process_brokers, leader_and_isr
from kafka_lite.testing.logs import read_all
from kafka_lite.utils.scheduler import MockScheduler

pytestmark = pytest.mark.unit

TxnState = TransactionState
PARTITIONS = 4
TP0, TP1 = ("orders", 0), ("orders", 1)
ABORT_INTERVAL_MS = 1000
TXN = "txn-a"


class FakeProducerIdManager:
    def __init__(self) -> None:
        self._ids = itertools.count(1000)

    def generate_producer_id(self) -> int:
        return next(self._ids)


class FakeNetworkClient:
    """Only what the manager calls outside its send thread."""

    def wakeup(self) -> None:
        pass


class Coordinator:
    def __init__(self, replica_manager, time: MockTime, epoch: int = 1) -> None:
        self.replica_manager = replica_manager
        self.time = time
        self.metadata_cache = MetadataCache(0)
        live = [{"id": 0, "end_points": [{"port": 9092, "host": "127.0.0.1", "listener_name": "PLAINTEXT",
                                          "security_protocol_type": 0}], "rack": None}]  # fmt: skip
        states = [
            {"topic": t, "partition": p, "controller_epoch": 1, "leader": 0, "leader_epoch": 1, "isr": [0],
             "zk_version": 0, "replicas": [0]}
            for t, p in (TP0, TP1)
        ]  # fmt: skip
        self.metadata_cache.update_cache(0, 1, {"live_brokers": live, "partition_states": states}, 3)
        self.scheduler = MockScheduler(time)
        self.scheduler.startup()
        config = TransactionConfig(
            transaction_log_num_partitions=PARTITIONS, transaction_max_timeout_ms=60_000
        )
        self.state_manager = TransactionStateManager(0, self.scheduler, replica_manager, config, time)
        self.markers = TransactionMarkerChannelManager(
            0, self.metadata_cache, FakeNetworkClient(), self.state_manager, time
        )
        self.coordinator = TransactionCoordinator(
            0, self.scheduler, FakeProducerIdManager(), self.state_manager, self.markers, time
        )
        self.coordinator.scheduler.schedule(
            "transaction-abort", self.coordinator.abort_timed_out_transactions,
            delay_ms=ABORT_INTERVAL_MS, period_ms=ABORT_INTERVAL_MS,
        )  # fmt: skip
        for p in range(PARTITIONS):
            self.coordinator.handle_txn_immigration(p, epoch)
        self.scheduler.tick()

    def init(self, txn: str = TXN, timeout_ms: int = 10_000):
        answers: list = []
        self.coordinator.handle_init_producer_id(txn, timeout_ms, answers.append)
        assert len(answers) == 1
        return answers[0]

    def add(self, pid: int, epoch: int, partitions=(TP0, TP1), txn: str = TXN) -> Errors:
        answers: list = []
        self.coordinator.handle_add_partitions_to_transaction(txn, pid, epoch, partitions, answers.append)
        assert len(answers) == 1
        return answers[0]

    def end(self, pid: int, epoch: int, commit: bool, txn: str = TXN) -> Errors:
        return self.end_with(pid, epoch, commit, txn=txn)[0]

    def end_with(self, pid: int, epoch: int, commit: bool, version: int = TV_0, txn: str = TXN):
        """EndTxn's whole answer: (error, producer id, producer epoch)."""
        answers: list = []
        self.coordinator.handle_end_transaction(
            txn, pid, epoch, commit, lambda *answer: answers.append(answer), version
        )
        assert len(answers) == 1
        return answers[0]

    def metadata(self, txn: str = TXN):
        error, epoch_and_metadata = self.state_manager.get_transaction_state(txn)
        assert error is Errors.NONE
        return epoch_and_metadata.transaction_metadata

    def drain(self) -> list:
        return self.markers.drain_queued_transaction_markers()

    def logged_states(self, txn: str = TXN) -> list[TxnState]:
        partition = self.replica_manager.get_partition(
            (TRANSACTION_STATE_TOPIC_NAME, self.coordinator.partition_for(txn))
        )
        return [
            transaction_log.read_txn_record_value(txn, r.value).state
            for r in read_all(partition.log)
            if transaction_log.read_txn_record_key(r.key).transactional_id == txn
        ]


def answer(request, errors: dict | None = None, disconnected: bool = False) -> None:
    """Answer a drained WriteTxnMarkers as a leader would: NONE for each partition unless ``errors``."""
    errors = errors or {}
    body = {
        "transaction_markers": [
            {
                "producer_id": m["producer_id"],
                "topics": [
                    {"topic": t["topic"], "partitions": [
                        {"partition": p, "error_code": errors.get((t["topic"], p), Errors.NONE).code}
                        for p in t["partitions"]
                    ]}
                    for t in m["topics"]
                ],
            }
            for m in request.body["transaction_markers"]
        ]
    }  # fmt: skip
    client_request = ClientRequest(str(request.destination), ApiKeys.WRITE_TXN_MARKERS, 0, request.body)
    request.handler(ClientResponse(client_request, 0, None if disconnected else body, disconnected))


def marked_partitions(request) -> set:
    return {
        (t["topic"], p)
        for m in request.body["transaction_markers"]
        for t in m["topics"]
        for p in t["partitions"]
    }


@pytest.fixture
def c(tmp_path):
    time = MockTime()
    with in_process_brokers(tmp_path, time, count=1) as (replica_manager,):
        for p in range(PARTITIONS):
            replica_manager.become_leader_or_follower(
                leader_and_isr((TRANSACTION_STATE_TOPIC_NAME, p), 0, [0], [0])
            )
        for tp in (TP0, TP1):
            replica_manager.become_leader_or_follower(leader_and_isr(tp, 0, [0], [0]))
        yield Coordinator(replica_manager, time)


def test_init_producer_id_gives_epoch_0_then_bumps_it_and_fences_the_old_epoch(c):
    first = c.init()
    assert first.error is Errors.NONE and first.producer_epoch == 0
    second = c.init()
    assert (second.error, second.producer_id, second.producer_epoch) == (Errors.NONE, first.producer_id, 1)
    assert c.add(first.producer_id, 0) is Errors.INVALID_PRODUCER_EPOCH
    assert c.add(first.producer_id + 1, 1) is Errors.INVALID_PRODUCER_ID_MAPPING
    assert c.metadata().state is TxnState.EMPTY and c.metadata().topic_partitions == set()
    assert c.logged_states() == [TxnState.EMPTY, TxnState.EMPTY]


def test_bad_init_requests_are_refused(c):
    assert c.init(timeout_ms=60_001).error is Errors.INVALID_TRANSACTION_TIMEOUT
    assert c.init(timeout_ms=0).error is Errors.INVALID_TRANSACTION_TIMEOUT
    assert c.init(txn="").error is Errors.INVALID_REQUEST
    plain = c.init(txn=None)
    assert plain.error is Errors.NONE and plain.producer_epoch == 0
    assert c.add(1, 0, txn="never-initialized") is Errors.INVALID_PRODUCER_ID_MAPPING
    assert c.end(1, 0, True, txn="never-initialized") is Errors.INVALID_PRODUCER_ID_MAPPING


def test_a_commit_writes_markers_to_every_partition_then_complete_commit(c):
    pid = c.init().producer_id
    assert c.add(pid, 0) is Errors.NONE and c.metadata().state is TxnState.ONGOING
    assert c.end(pid, 0, True) is Errors.NONE  # answered once PrepareCommit is in the log
    assert c.metadata().state is TxnState.PREPARE_COMMIT
    (request,) = c.drain()
    (marker,) = request.body["transaction_markers"]
    assert request.destination == 0
    assert (marker["producer_id"], marker["producer_epoch"], marker["transaction_result"]) == (pid, 0, True)
    assert marker["coordinator_epoch"] == 1 and marked_partitions(request) == {TP0, TP1}
    answer(request)
    assert c.metadata().state is TxnState.COMPLETE_COMMIT and c.metadata().topic_partitions == set()
    assert c.logged_states() == [
        TxnState.EMPTY,
        TxnState.ONGOING,
        TxnState.PREPARE_COMMIT,
        TxnState.COMPLETE_COMMIT,
    ]
    # a retried EndTxn(commit) is answered NONE; an abort of it is an invalid state
    assert c.end(pid, 0, True) is Errors.NONE
    assert c.end(pid, 0, False) is Errors.INVALID_TXN_STATE


def test_kip_890_part_2_an_end_txn_of_version_2_bumps_the_epoch_its_markers_carry_and_fences_the_old(c):
    pid = c.init().producer_id
    assert c.add(pid, 0) is Errors.NONE
    # the answer names the epoch the next transaction takes
    assert c.end_with(pid, 0, False, TV_2) == (Errors.NONE, pid, 1)
    assert (c.metadata().state, c.metadata().producer_epoch) == (TxnState.PREPARE_ABORT, 1)
    (request,) = c.drain()
    (marker,) = request.body["transaction_markers"]
    assert (marker["producer_epoch"], marker["transaction_result"]) == (1, False), "the markers fence epoch 0"
    answer(request)
    assert (c.metadata().state, c.metadata().producer_epoch) == (TxnState.COMPLETE_ABORT, 1)
    # A retry of that EndTxn (epoch 0) is recognised and told the new epoch; a commit of it is not one.
    assert c.end_with(pid, 0, False, TV_2) == (Errors.NONE, pid, 1)
    assert c.end_with(pid, 0, True, TV_2)[0] is Errors.INVALID_TXN_STATE
    # The next transaction is epoch 1's; once it is open, an EndTxn still carrying epoch 0 (delayed
    # in the network, under 0.11's rule the same epoch and so this transaction's end) is fenced.
    assert c.add(pid, 0) is Errors.INVALID_PRODUCER_EPOCH
    assert c.add(pid, 1) is Errors.NONE
    assert c.end_with(pid, 0, False, TV_2) == (Errors.INVALID_PRODUCER_EPOCH, -1, -1)
    assert c.end_with(pid, 1, True, TV_2) == (Errors.NONE, pid, 2)
    assert c.logged_states() == [TxnState.EMPTY, TxnState.ONGOING, TxnState.PREPARE_ABORT, TxnState.COMPLETE_ABORT,
                                 TxnState.ONGOING, TxnState.PREPARE_COMMIT]  # fmt: skip


def test_kip_890_part_2_a_retry_while_the_markers_are_written_is_concurrent_and_version_0_keeps_the_epoch(c):
    pid = c.init().producer_id
    c.add(pid, 0)
    assert c.end_with(pid, 0, True, TV_2) == (Errors.NONE, pid, 1)
    assert c.end_with(pid, 0, True, TV_2)[0] is Errors.CONCURRENT_TRANSACTIONS  # markers not yet written
    assert c.end_with(pid, 1, True, TV_2)[0] is Errors.INVALID_PRODUCER_EPOCH  # no EndTxn has epoch 1 yet
    answer(c.drain()[0])
    # a producer of transaction version 0 (EndTxn v4 or older) keeps Kafka 0.11's rule
    assert c.add(pid, 1) is Errors.NONE
    assert c.end_with(pid, 1, True, TV_0) == (Errors.NONE, pid, 1)
    answer(c.drain()[0])
    assert c.metadata().producer_epoch == 1
    assert c.end_with(pid, 1, True, TV_0) == (Errors.NONE, pid, 1)  # its retry, as 0.11 answers it


def test_kip_890_part_2_an_end_txn_for_a_transaction_the_timeout_aborted_is_fenced(c):
    """The sweep aborts under 0.11's rule, keeping the epoch; a version 2 EndTxn for that
    transaction is no retry of one of the producer's, and a NONE would make it reuse the epoch."""
    pid = c.init().producer_id
    c.add(pid, 0)
    c.time.sleep(c.metadata().txn_timeout_ms + 1)
    c.coordinator.abort_timed_out_transactions()
    answer(c.drain()[0])
    assert (c.metadata().state, c.metadata().producer_epoch) == (TxnState.COMPLETE_ABORT, 0)
    assert c.end_with(pid, 0, False, TV_2) == (Errors.INVALID_PRODUCER_EPOCH, -1, -1)
    assert c.end_with(pid, 0, False, TV_0)[0] is Errors.NONE  # 0.11's answer, to 0.11's producer


def test_kip_890_part_2_the_last_epoch_gives_the_producer_a_new_id_when_its_transaction_completes(c):
    pid = c.init().producer_id
    metadata = c.metadata()
    metadata.producer_epoch = SHORT_MAX - 1  # as many transactions later
    c.add(pid, SHORT_MAX - 1)
    error, new_pid, epoch = c.end_with(pid, SHORT_MAX - 1, True, TV_2)
    assert (error, epoch) == (Errors.NONE, 0) and new_pid != pid
    assert metadata.producer_epoch == SHORT_MAX, "the markers carry the epoch no producer is given"
    (request,) = c.drain()
    assert request.body["transaction_markers"][0]["producer_epoch"] == SHORT_MAX
    answer(request)
    assert (metadata.producer_id, metadata.producer_epoch, metadata.previous_producer_id) == (new_pid, 0, pid)
    retried = c.end_with(pid, SHORT_MAX - 1, True, TV_2)
    assert retried == (Errors.NONE, new_pid, 0), "the retry learns the new id"


def test_markers_are_retried_on_not_leader_and_on_a_disconnect(c):
    pid = c.init().producer_id
    c.add(pid, 0)
    c.end(pid, 0, False)
    (request,) = c.drain()
    answer(request, {TP1: Errors.NOT_LEADER_FOR_PARTITION})
    assert c.metadata().state is TxnState.PREPARE_ABORT and c.metadata().topic_partitions == {TP1}
    (retry,) = c.drain()
    assert marked_partitions(retry) == {TP1}
    answer(retry, disconnected=True)
    (again,) = c.drain()
    assert marked_partitions(again) == {TP1} and c.metadata().state is TxnState.PREPARE_ABORT
    answer(again)
    assert c.metadata().state is TxnState.COMPLETE_ABORT
    assert c.drain() == []


def test_a_marker_for_a_leader_not_alive_waits_in_the_unknown_broker_queue(c):
    pid = c.init().producer_id
    c.add(pid, 0)
    c.metadata_cache.update_cache(0, 1, {"live_brokers": [], "partition_states": []}, 3)
    c.end(pid, 0, True)
    assert c.markers.queued_markers(-1) == 1
    assert c.drain() == [] and c.markers.queued_markers(-1) == 1  # still no leader alive
    assert c.metadata().state is TxnState.PREPARE_COMMIT


def test_init_during_an_open_transaction_fences_it_aborts_it_and_answers_concurrent_transactions(c):
    pid = c.init().producer_id
    c.add(pid, 0)
    retry = c.init()
    assert retry.error is Errors.CONCURRENT_TRANSACTIONS
    m = c.metadata()
    assert (m.state, m.producer_epoch) == (TxnState.PREPARE_ABORT, 1)  # the old producer's epoch 0 is fenced
    assert c.end(pid, 0, True) is Errors.INVALID_PRODUCER_EPOCH
    assert c.init().error is Errors.CONCURRENT_TRANSACTIONS  # while the abort completes
    (request,) = c.drain()
    (marker,) = request.body["transaction_markers"]
    assert (marker["producer_epoch"], marker["transaction_result"]) == (1, False)
    answer(request)
    assert c.metadata().state is TxnState.COMPLETE_ABORT
    done = c.init()
    assert (done.error, done.producer_id, done.producer_epoch) == (Errors.NONE, pid, 2)


def test_the_sweep_aborts_a_transaction_open_beyond_its_timeout(c):
    pid = c.init(timeout_ms=5000).producer_id
    c.add(pid, 0)
    c.scheduler.advance(5000)  # the sweep ran at 1, 2, 3, 4 and 5 s: not yet beyond the timeout
    assert c.metadata().state is TxnState.ONGOING
    c.scheduler.advance(ABORT_INTERVAL_MS)
    assert c.metadata().state is TxnState.PREPARE_ABORT
    (request,) = c.drain()
    answer(request)
    assert c.metadata().state is TxnState.COMPLETE_ABORT
    assert c.end(pid, 0, True) is Errors.INVALID_TXN_STATE  # the producer learns its commit came too late


def test_a_new_coordinator_loads_the_log_and_completes_a_prepared_commit(c):
    pid = c.init().producer_id
    c.add(pid, 0)
    c.end(pid, 0, True)
    other = "txn-b"
    other_pid = c.init(txn=other).producer_id
    c.add(other_pid, 0, [TP0], txn=other)
    # the partitions move away before any marker is written...
    for p in range(PARTITIONS):
        c.coordinator.handle_txn_emigration(p, 1)
    assert c.state_manager.get_transaction_state(TXN)[0] is Errors.NOT_COORDINATOR
    c.scheduler.tick()
    # ...and a new coordinator (leader epoch 2) takes over from the same log
    new = Coordinator(c.replica_manager, c.time, epoch=2)
    m = new.metadata()
    assert (m.producer_id, m.state, m.topic_partitions) == (pid, TxnState.PREPARE_COMMIT, {TP0, TP1})
    ongoing = new.metadata(other)
    assert (ongoing.state, ongoing.topic_partitions) == (TxnState.ONGOING, {TP0})
    (request,) = new.drain()  # it sent the prepared commit's markers again, at its own epoch
    (marker,) = request.body["transaction_markers"]
    assert (marker["producer_id"], marker["coordinator_epoch"], marker["transaction_result"]) == (
        pid,
        2,
        True,
    )
    answer(request)
    assert new.metadata().state is TxnState.COMPLETE_COMMIT
    assert new.end(other_pid, 0, False, txn=other) is Errors.NONE


def test_a_load_in_progress_answers_coordinator_load_in_progress(c):
    c.coordinator.handle_txn_emigration(c.coordinator.partition_for(TXN), 1)
    c.scheduler.tick()
    c.coordinator.handle_txn_immigration(c.coordinator.partition_for(TXN), 2)
    assert c.init().error is Errors.COORDINATOR_LOAD_IN_PROGRESS
    c.scheduler.tick()
    assert c.init().error is Errors.NONE


def test_idle_transactional_ids_expire(c):
    pid = c.init().producer_id
    c.add(pid, 0)
    c.time.sleep(8 * 24 * 3600 * 1000)
    c.state_manager.remove_expired_transactional_ids()
    assert c.metadata().state is TxnState.ONGOING  # an open transaction never expires
    c.end(pid, 0, False)
    answer(c.drain()[0])
    c.state_manager.remove_expired_transactional_ids()
    assert c.metadata().state is TxnState.COMPLETE_ABORT  # updated just now
    c.time.sleep(8 * 24 * 3600 * 1000)
    c.state_manager.remove_expired_transactional_ids()
    assert c.state_manager.get_transaction_state(TXN) == (Errors.NONE, None)
    assert c.init().producer_id != pid  # a new producer id for the id now


def test_expiry_borrows_kafka_3_0s_guards(c):
    """``may_expire`` skips an id whose transition is still being written (0.11.0 calls
    ``prepareDead`` on it, which raises and ends the whole pass); ``expiration_written`` clears the
    pending Dead after a failed tombstone (0.11.0 leaves it, and the id answers
    CONCURRENT_TRANSACTIONS from then on)."""
    now = 8 * 24 * 3600 * 1000
    m = TransactionMetadata("idle", 7, 0, 10_000, TxnState.EMPTY, txn_last_update_timestamp=0)
    assert c.state_manager.may_expire(m, now)
    m.prepare_increment_producer_epoch(10_000, now)  # an InitProducerId being written
    assert not c.state_manager.may_expire(m, now)
    with pytest.raises(IllegalStateException):
        m.prepare_dead()  # what 0.11.0's pass would run into
    m.pending_state = None

    entry = TxnMetadataCacheEntry(3, {"idle": m})
    transit = m.prepare_dead()
    assert not TransactionStateManager.expiration_written(Errors.NOT_ENOUGH_REPLICAS, entry, 3, m, transit)
    assert m.pending_state is None, "a failed tombstone leaves the id as it was"
    transit = m.prepare_dead()
    assert not TransactionStateManager.expiration_written(Errors.NONE, entry, 4, m, transit)
    assert m.pending_state is None, "a coordinator epoch that moved on keeps the id too"
    transit = m.prepare_dead()
    assert TransactionStateManager.expiration_written(Errors.NONE, entry, 3, m, transit)


@pytest.mark.parametrize("epoch", [1, 2], ids=["same-epoch", "next-epoch"])
def test_an_election_while_leading_reloads_the_partition(c, epoch):
    """KRaft's publisher elects the coordinator again, without a resignation first, when a record
    names the leader of a partition led here again (the next epoch); Kafka 3.3's did so on every
    ISR change too (the same epoch). The reload replaces the cache, as Kafka 2.5's does; 0.11.0's
    refused it and left the partition loading for good: every request answered
    COORDINATOR_LOAD_IN_PROGRESS, and open transactions never ended."""
    pid = c.init(timeout_ms=5000).producer_id
    c.add(pid, 0)  # left open, as by a producer that died
    other = "txn-b"
    other_pid = c.init(txn=other).producer_id
    c.add(other_pid, 0, [TP0], txn=other)
    assert c.end(other_pid, 0, True, txn=other) is Errors.NONE  # its markers queued, not yet sent
    for p in range(PARTITIONS):
        c.coordinator.handle_txn_immigration(p, epoch)
    assert c.init(txn="txn-c").error is Errors.COORDINATOR_LOAD_IN_PROGRESS
    c.scheduler.tick()
    assert c.init(txn="txn-c").error is Errors.NONE
    # the prepared commit's markers are queued once: the reload's, the earlier ones dropped
    (request,) = c.drain()
    (marker,) = request.body["transaction_markers"]
    assert (marker["producer_id"], marker["coordinator_epoch"], marker["transaction_result"]) == (
        other_pid,
        epoch,
        True,
    )
    answer(request)
    assert c.metadata(other).state is TxnState.COMPLETE_COMMIT
    # and the sweep still aborts the transaction left open
    c.scheduler.advance(5000 + ABORT_INTERVAL_MS)
    assert c.metadata().state is TxnState.PREPARE_ABORT
    answer(c.drain()[0])
    assert c.metadata().state is TxnState.COMPLETE_ABORT
