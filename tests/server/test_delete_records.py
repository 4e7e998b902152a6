"""DeleteRecords on replica managers in one process, on a ``MockTime``: the leader moves its log start
offset at once, the followers when their fetch carries the leader's, and the answer waits in the
purgatory for the low watermark (Kafka 0.11's ``DelayedDeleteRecords``)."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import Errors
from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.time import MockTime
from kafka_lite.server.replica_manager import FetchMetadata, FetchPartitionRequest, ReplicaManager
from kafka_lite.testing.in_process_replicas import append_fetched, replicated_partition
from kafka_lite.testing.mock_timer import MockTimer
from kafka_lite.utils.delayed_operation import DelayedOperationPurgatory

pytestmark = pytest.mark.unit
TP = ("orders", 0)


def _records(*values: bytes) -> MemoryRecords:
    return MemoryRecords.with_records([(1000, None, v) for v in values])


def _fetch_as_follower(leader: ReplicaManager, follower: ReplicaManager) -> None:
    """One round of the follower's fetcher, as ``ReplicaFetcherThread`` does it with Fetch v5: it says
    where its log starts, and takes the leader's log start from the answer."""
    log = follower.get_partition(TP).log
    request = FetchPartitionRequest(log.log_end_offset, 1 << 20, log.log_start_offset)
    got = {}
    leader.fetch_messages(FetchMetadata(1, 1 << 20, follower.broker_id, {TP: request}), got.update)
    append_fetched(follower, TP, got[TP])
    log.maybe_increment_log_start_offset(got[TP].log_start_offset)


@pytest.fixture
def brokers(tmp_path):
    time = MockTime()
    with replicated_partition(tmp_path, time, TP) as managers:
        leader = managers[0]
        # a purgatory on the mock clock, so that its timeout is the test's to advance
        leader.delayed_delete_records_purgatory.shutdown()
        leader.delayed_delete_records_purgatory = DelayedOperationPurgatory(
            "DeleteRecords", time, MockTimer(time), reaper_enabled=False
        )
        answers: list = []
        leader.append_records(
            1000, 1, False, {TP: _records(*[b"v%d" % i for i in range(10)])}, answers.append
        )
        for _ in range(2):  # the followers fetch the records, then fetch again: the HW reaches 10
            for follower in managers[1:]:
                _fetch_as_follower(leader, follower)
        assert leader.get_partition(TP).high_watermark() == 10
        yield time, managers


def _delete(leader: ReplicaManager, offset: int, timeout_ms: int = 5000) -> list:
    answers: list = []
    leader.delete_records(timeout_ms, {TP: offset}, answers.append)
    return answers


def test_the_answer_waits_until_every_replica_has_moved_its_log_start(brokers):
    _, (leader, f1, f2) = brokers
    answers = _delete(leader, 4)
    assert leader.get_partition(TP).log.log_start_offset == 4
    assert answers == [], "the followers still hold the records below 4"
    assert leader.delayed_delete_records_purgatory.delayed() == 1

    _fetch_as_follower(leader, f1)  # f1 learns 4; says so in its next fetch
    _fetch_as_follower(leader, f1)
    assert answers == [] and f1.get_partition(TP).log.log_start_offset == 4
    _fetch_as_follower(leader, f2)
    _fetch_as_follower(leader, f2)
    [result] = answers
    assert (result[TP].error, result[TP].low_watermark) == (Errors.NONE, 4)
    assert leader.get_partition(TP).low_watermark_if_leader() == 4


def test_a_timeout_answers_request_timed_out_and_the_leader_keeps_its_new_start(brokers):
    time, (leader, _, _) = brokers
    answers = _delete(leader, 3, timeout_ms=500)
    time.sleep(501)
    leader.delayed_delete_records_purgatory.advance_clock(0)
    [result] = answers
    assert result[TP].error is Errors.REQUEST_TIMED_OUT
    assert leader.get_partition(TP).log.log_start_offset == 3


def test_refused_requests_are_answered_at_once_and_move_nothing(brokers):
    _, (leader, f1, _) = brokers
    log = leader.get_partition(TP).log
    [result] = _delete(leader, 11)  # beyond the high watermark
    assert result[TP].error is Errors.OFFSET_OUT_OF_RANGE and result[TP].low_watermark == -1
    [result] = _delete(f1, 2)  # a follower is not the leader
    assert result[TP].error is Errors.NOT_LEADER_FOR_PARTITION
    answers: list = []
    leader.delete_records(1000, {("unknown", 0): 1}, answers.append)
    assert answers[0][("unknown", 0)].error is Errors.UNKNOWN_TOPIC_OR_PARTITION
    assert log.log_start_offset == 0 and f1.get_partition(TP).log.log_start_offset == 0


def test_a_compacted_topic_refuses_delete_records(brokers):
    _, (leader, _, _) = brokers
    log = leader.get_partition(TP).log
    log.config = type(log.config)({"cleanup.policy": "compact"})
    [result] = _delete(leader, 2)
    assert result[TP].error is Errors.POLICY_VIOLATION
    assert log.log_start_offset == 0


def test_minus_one_deletes_up_to_the_high_watermark(brokers):
    _, (leader, _, _) = brokers
    answers = _delete(leader, -1)
    assert leader.get_partition(TP).log.log_start_offset == 10
    assert answers == []  # waiting for the followers, as for any offset
