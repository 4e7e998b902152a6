"""The replication throttle (KIP-73) in one process, on MockTime: the quota manager's rate and marks;
the leader's read returning nothing for a throttled out-of-sync follower, but everything for an
in-sync one; the DelayedFetch counting throttled bytes apart; and the follower's fetcher leaving a
throttled partition out of its fetch while over its quota."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import Errors
from kafka_lite.common.quota import Quota
from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.time import MockTime
from kafka_lite.server.replica_manager import FetchMetadata, FetchPartitionRequest, ReplicaManager
from kafka_lite.server.replication_quota_manager import (
    ALL_REPLICAS,
    QuotaType,
    ReplicationQuotaManager,
    ReplicationQuotaManagerConfig,
)
from kafka_lite.testing.in_process_replicas import (
    in_process_brokers,
    leader_and_isr,
    played_fetcher,
    replicate,
)

pytestmark = pytest.mark.unit

TP = ("orders", 0)
OTHER = ("orders", 1)


def quota_manager(time: MockTime, bound: int) -> ReplicationQuotaManager:
    manager = ReplicationQuotaManager(ReplicationQuotaManagerConfig(), QuotaType.LEADER_REPLICATION, time)
    manager.update_quota(Quota.upper_bound(bound))
    return manager


def test_the_quota_is_exceeded_while_the_recorded_rate_is_over_the_bound_and_not_after():
    time = MockTime()
    manager = quota_manager(time, 1000)
    assert not manager.is_quota_exceeded()
    manager.record(800)
    assert not manager.is_quota_exceeded()
    manager.record(800)  # 1600 B in the first second: over; recorded all the same
    assert manager.is_quota_exceeded()
    time.sleep(1500)  # 1600 B over 1.5 s
    assert manager.is_quota_exceeded()
    time.sleep(200)  # 1600 B over 1.7 s
    assert not manager.is_quota_exceeded()
    manager.record(50_000)
    assert manager.is_quota_exceeded()
    time.sleep(11_000)  # all eleven one-second windows have passed: the rate starts afresh
    assert not manager.is_quota_exceeded()
    assert manager.byte_rate() == 0.0


def test_a_new_bound_applies_to_the_rate_measured_so_far():
    time = MockTime()
    manager = quota_manager(time, 1000)
    manager.record(5000)
    assert manager.is_quota_exceeded()
    manager.update_quota(Quota.upper_bound(10_000))
    assert not manager.is_quota_exceeded()
    assert manager.upper_bound() == 10_000


def test_partitions_are_marked_per_topic_and_replaced_or_removed_whole():
    manager = quota_manager(MockTime(), 1000)
    manager.mark_throttled("orders", [0, 2])
    assert [manager.is_throttled(("orders", p)) for p in range(3)] == [True, False, True]
    manager.mark_throttled("orders", [1])
    assert [manager.is_throttled(("orders", p)) for p in range(3)] == [False, True, False]
    manager.mark_throttled("payments", ALL_REPLICAS)
    assert manager.is_throttled(("payments", 7))
    manager.remove_throttle("orders")
    assert not any(manager.is_throttled(("orders", p)) for p in range(3))
    assert manager.is_throttled(("payments", 0))


# -- the leader's read path --------------------------------------------------------------------------------------


def produce(leader: ReplicaManager, tp, size: int) -> None:
    records = MemoryRecords.with_records([(1000, None, b"x" * size)])
    answers = []
    leader.append_records(1000, 1, False, {tp: records}, answers.append)
    assert answers[0][tp].error is Errors.NONE


def fetch(leader: ReplicaManager, replica_id: int, offsets: dict, quota) -> dict:
    got = {}
    request = {tp: FetchPartitionRequest(offset, 1 << 20) for tp, offset in offsets.items()}
    leader.fetch_messages(FetchMetadata(1, 1 << 20, replica_id, request), got.update, quota)
    return got


def test_the_leader_reads_nothing_for_a_throttled_follower_out_of_the_isr_but_all_for_one_in_it(tmp_path):
    time = MockTime()
    with in_process_brokers(tmp_path, time, count=3) as (leader, in_sync, joining):
        # broker 2 is a new replica (a reassignment's), not yet in the ISR
        for manager in (leader, in_sync, joining):
            for tp in (TP, OTHER):
                manager.become_leader_or_follower(leader_and_isr(tp, 0, [0, 1], [0, 1, 2]))
        for tp in (TP, OTHER):
            produce(leader, tp, 2000)
            replicate(leader, in_sync, tp)
            replicate(leader, in_sync, tp)  # the leader learns broker 1's LEO: the HW is 1
        quota = quota_manager(time, 1000)
        quota.mark_throttled("orders", [0])

        # within the quota: the joining replica reads (from 0, below the HW: it stays out of the ISR)
        assert fetch(leader, 2, {TP: 0}, quota)[TP].size > 0
        quota.record(5000)  # over the quota now
        results = fetch(leader, 2, {TP: 0, OTHER: 0}, quota)
        assert results[TP].error is Errors.NONE and results[TP].size == 0, "throttled: nothing read"
        assert results[OTHER].size > 0, "a partition that is not throttled is read as usual"
        assert fetch(leader, 1, {TP: 0}, quota)[TP].size > 0, "an in-sync follower is never throttled"

        assert leader.get_partition(TP).isr == [0, 1]
        time.sleep(11_000)  # the windows have aged out: the joining replica reads again
        assert fetch(leader, 2, {TP: 0}, quota)[TP].size > 0


def test_a_waiting_follower_fetch_completes_on_throttled_bytes_only_within_the_quota(tmp_path):
    time = MockTime()
    with in_process_brokers(tmp_path, time, count=3) as (leader, _in_sync, _joining):
        leader.become_leader_or_follower(leader_and_isr(TP, 0, [0, 1], [0, 1, 2]))
        quota = quota_manager(time, 1000)
        quota.mark_throttled("orders", ALL_REPLICAS)
        quota.record(5000)
        got = {}
        request = FetchMetadata(1, 1 << 20, 2, {TP: FetchPartitionRequest(0, 1 << 20)}, max_wait_ms=500)
        leader.fetch_messages(request, got.update, quota)
        assert got == {}, "nothing to read yet: the fetch waits"
        produce(leader, TP, 100)
        assert got == {}, "throttled bytes over the quota do not complete it"
        time.sleep(11_000)  # within the quota again
        leader.try_complete_delayed_fetch(TP)
        assert got[TP].size > 0


# -- the follower's fetch ---------------------------------------------------------------------------------------


def test_the_follower_leaves_a_throttled_partition_out_of_its_fetch_while_over_its_quota(tmp_path):
    time = MockTime()
    with in_process_brokers(tmp_path, time, count=2) as (leader, follower):
        for manager in (leader, follower):
            for tp in (TP, OTHER):
                manager.become_leader_or_follower(leader_and_isr(tp, 0, [0], [0, 1]))
        for tp in (TP, OTHER):
            produce(leader, tp, 2000)
        fetcher = played_fetcher(follower, leader)
        fetcher.quota = quota = quota_manager(time, 1000)
        fetcher.maybe_truncate()
        quota.mark_throttled("orders", [0])
        now = time.milliseconds()
        assert set(fetcher.build_fetch_request(now)) == {TP, OTHER}, "within the quota: both fetched"

        # what process_partition_data records: the bytes of the throttled partition only
        data = {
            "partition_header": {"error_code": 0, "high_watermark": 1, "log_start_offset": 0},
            "record_set": leader.get_partition(TP).log.read(0, 1 << 20).records.read_bytes(),
        }
        fetcher.process_partition_data(TP, 0, data)
        assert quota.is_quota_exceeded(), f"{len(data['record_set'])} bytes recorded in one second"
        assert set(fetcher.build_fetch_request(now)) == {OTHER}, "over the quota: the throttled one left out"

        # caught up with the leader (no lag at its last fetch), a replica is fetched whatever the quota
        fetcher.fetcher_lag[TP] = 0
        assert set(fetcher.build_fetch_request(now)) == {TP, OTHER}
        fetcher.fetcher_lag[TP] = 1
        assert set(fetcher.build_fetch_request(now)) == {OTHER}
        time.sleep(11_000)
        assert set(fetcher.build_fetch_request(time.milliseconds())) == {TP, OTHER}
