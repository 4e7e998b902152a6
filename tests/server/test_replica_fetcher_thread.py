"""The follower's answer to OFFSET_OUT_OF_RANGE (``ReplicaFetcherThread.handle_offset_out_of_range``),
one test per branch of Kafka's: ahead of the leader (truncate to its end, or refuse without unclean
election), behind the leader's log start (start afresh there), between (fetch from its own end,
keeping its log). Two replica managers on one MockTime; the fetcher's ListOffsets reach the leader
by a call."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from kafka_lite.common.errors import Errors
from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.time import MockTime
from kafka_lite.server.replica_fetcher_thread import LogTruncationNotAllowedException
from kafka_lite.server.replica_manager import ReplicaManager
from kafka_lite.testing.in_process_replicas import (
    in_process_brokers,
    leader_and_isr,
    played_fetcher,
    replicate,
)
from kafka_lite.testing.logs import read_all

TP = ("orders", 0)


def produce(leader: ReplicaManager, *values: bytes) -> None:
    """One batch per value, so that a truncation can fall between any two of them."""
    for value in values:
        answers = []
        leader.append_records(
            1000, 1, False, {TP: MemoryRecords.with_records([(1000, None, value)])}, answers.append
        )
        assert answers[0][TP].error is Errors.NONE


def log_end_offset(manager: ReplicaManager) -> int:
    return manager.get_partition(TP).get_replica().log_end_offset


def values(manager: ReplicaManager) -> list[bytes]:
    return [r.value for r in read_all(manager.get_partition(TP).log)]


@contextmanager
def follower_ahead_of_its_leader(tmp_path, **props) -> Iterator[tuple[ReplicaManager, ReplicaManager]]:
    """Broker 0 led epoch 1 alone and wrote a..e; broker 1, which had fetched nothing, was elected
    uncleanly in epoch 2 and wrote x, y. Broker 0 now follows broker 1: its LEO 5 is past the
    leader's 2. Yields (follower, leader)."""
    with in_process_brokers(tmp_path, MockTime(), count=2, **props) as (old, new):
        for manager in (old, new):
            manager.become_leader_or_follower(leader_and_isr(TP, leader=0, isr=[0], replicas=[0, 1]))
        produce(old, b"a", b"b", b"c", b"d", b"e")
        epoch_2 = leader_and_isr(TP, leader=1, isr=[1], replicas=[0, 1], leader_epoch=2)
        new.become_leader_or_follower(epoch_2)
        produce(new, b"x", b"y")
        old.become_leader_or_follower(epoch_2)
        yield old, new


def test_a_follower_ahead_of_its_leader_truncates_to_the_leaders_end(tmp_path):
    with follower_ahead_of_its_leader(tmp_path, **{"unclean.leader.election.enable": True}) as (
        follower,
        leader,
    ):
        assert played_fetcher(follower, leader).handle_offset_out_of_range(TP) == 2
        assert log_end_offset(follower) == 2
        # as in Kafka, the two logs may differ below the leader's end: a, b here, x, y there
        assert values(follower) == [b"a", b"b"]


def test_without_unclean_election_a_follower_ahead_of_its_leader_keeps_its_log_and_stops_fetching(tmp_path):
    with follower_ahead_of_its_leader(tmp_path) as (follower, leader):  # unclean election off: the default
        fetcher = played_fetcher(follower, leader)
        with pytest.raises(
            LogTruncationNotAllowedException, match="latest offset 2 is less than replica 0's latest offset 5"
        ):
            fetcher.handle_offset_out_of_range(TP)
        assert log_end_offset(follower) == 5, "nothing may be truncated"
        # the fetcher's loop, given OFFSET_OUT_OF_RANGE for the partition, stops fetching it
        fetcher.partition_states[TP].truncating_log = False
        fetcher.fetch = lambda request: {
            TP: {"partition_header": {"error_code": Errors.OFFSET_OUT_OF_RANGE.code}, "record_set": b""}
        }
        fetcher.process_fetch_request({TP: fetcher.partition_states[TP].fetch_offset})
        assert TP not in fetcher.partition_states
        assert values(follower) == [b"a", b"b", b"c", b"d", b"e"]


@pytest.fixture
def leader_and_follower(tmp_path):
    """Broker 0 leads; broker 1 follows and has copied a, b, c (LEO 3)."""
    with in_process_brokers(tmp_path, MockTime(), count=2) as (leader, follower):
        for manager in (leader, follower):
            manager.become_leader_or_follower(leader_and_isr(TP, leader=0, isr=[0, 1], replicas=[0, 1]))
        produce(leader, b"a", b"b", b"c")
        replicate(leader, follower, TP)
        assert log_end_offset(follower) == 3
        yield leader, follower


def test_a_follower_behind_the_leaders_log_start_starts_afresh_there(leader_and_follower):
    leader, follower = leader_and_follower
    # as if retention had deleted everything below offset 10 while the follower was away
    leader.get_partition(TP).truncate_fully_and_start_at(10)
    produce(leader, b"k", b"l")
    assert played_fetcher(follower, leader).handle_offset_out_of_range(TP) == 10
    log_ = follower.get_partition(TP).log
    assert (log_.log_start_offset, log_.log_end_offset) == (10, 10)
    assert values(follower) == []


def test_a_follower_past_the_leaders_log_start_fetches_from_its_own_end_and_keeps_its_log(
    leader_and_follower,
):
    leader, follower = leader_and_follower
    # the leader's log now starts at 2 and ends at 5: the follower's end (3) lies between
    leader.get_partition(TP).truncate_fully_and_start_at(2)
    produce(leader, b"m", b"n", b"o")
    assert played_fetcher(follower, leader).handle_offset_out_of_range(TP) == 3
    log_ = follower.get_partition(TP).log
    assert (log_.log_start_offset, log_.log_end_offset) == (0, 3), "nothing truncated"
    assert values(follower) == [b"a", b"b", b"c"]
