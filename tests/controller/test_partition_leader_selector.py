"""The five leader selectors against a controller context: each one's choice of leader, ISR and
recipients, and each refusal with Kafka 0.10.1's exception and message."""

from __future__ import annotations

import pytest

from kafka_lite.controller.kafka_controller import ControllerContext
from kafka_lite.controller.partition_leader_selector import (
    ControlledShutdownLeaderSelector,
    LeaderElectionNotNeededException,
    NoOpLeaderSelector,
    NoReplicaOnlineException,
    OfflinePartitionLeaderSelector,
    PreferredReplicaPartitionLeaderSelector,
    ReassignedPartitionLeaderSelector,
    ReassignedPartitionsContext,
    StateChangeFailedException,
)
from kafka_lite.zk.zk_utils import Broker, LeaderAndIsr

pytestmark = pytest.mark.unit

TP = ("t", 0)


def _context(live: list[int], assigned: list[int], current: LeaderAndIsr) -> ControllerContext:
    ctx = ControllerContext()
    ctx.live_brokers_by_id = {b: Broker(b, "127.0.0.1", 9000 + b) for b in live}
    ctx.partition_replica_assignment[TP] = assigned
    ctx.partition_leadership[TP] = (current, 1)
    return ctx


def test_offline_elects_the_first_live_assigned_replica_in_the_isr():
    current = LeaderAndIsr(1, 4, [1, 3, 2], 7)
    ctx = _context([2, 3], [1, 2, 3], current)
    selector = OfflinePartitionLeaderSelector(ctx, lambda topic: pytest.fail("read only without a live ISR"))
    # Assignment order decides among the live in-sync replicas, not ISR order.
    assert selector.select_leader(TP, current) == (LeaderAndIsr(2, 5, [3, 2], 8), [2, 3])


def test_offline_without_a_live_isr_refuses_unless_the_topic_allows_unclean_election():
    current = LeaderAndIsr(-1, 4, [1], 7)
    ctx = _context([2, 3], [1, 2, 3], current)
    with pytest.raises(NoReplicaOnlineException) as e:
        OfflinePartitionLeaderSelector(ctx, lambda topic: False).select_leader(TP, current)
    assert (
        str(e.value)
        == "No broker in ISR for partition [t,0] is alive. Live brokers are: [2,3], ISR brokers are: [1]"
    )
    unclean = OfflinePartitionLeaderSelector(ctx, lambda topic: topic == "t")
    assert unclean.select_leader(TP, current) == (LeaderAndIsr(2, 5, [2], 8), [2, 3])


def test_offline_with_no_live_replica_at_all_refuses_even_unclean():
    current = LeaderAndIsr(-1, 4, [1], 7)
    ctx = _context([4], [1, 2], current)
    with pytest.raises(NoReplicaOnlineException) as e:
        OfflinePartitionLeaderSelector(ctx, lambda topic: True).select_leader(TP, current)
    assert (
        str(e.value)
        == "No replica for partition [t,0] is alive. Live brokers are: [4], Assigned replicas are: [1,2]"
    )


def test_reassigned_elects_a_live_in_sync_new_replica_and_keeps_the_isr():
    current = LeaderAndIsr(1, 2, [1, 2, 4, 3], 5)
    ctx = _context([1, 2, 3, 4], [1, 2, 3, 4], current)
    ctx.partitions_being_reassigned[TP] = ReassignedPartitionsContext([3, 4])
    selector = ReassignedPartitionLeaderSelector(ctx)
    assert selector.select_leader(TP, current) == (LeaderAndIsr(3, 3, [1, 2, 4, 3], 6), [3, 4])

    behind = LeaderAndIsr(1, 2, [1, 2], 5)
    with pytest.raises(
        NoReplicaOnlineException, match=r"None of the reassigned replicas for partition \[t,0\] are in-sync"
    ):
        selector.select_leader(TP, behind)
    ctx.partitions_being_reassigned[TP] = ReassignedPartitionsContext([])
    with pytest.raises(
        NoReplicaOnlineException, match=r"List of reassigned replicas for partition  \[t,0\] is empty"
    ):
        selector.select_leader(TP, behind)


def test_preferred_moves_leadership_to_the_first_assigned_replica_only_when_it_can_lead():
    current = LeaderAndIsr(2, 3, [2, 1], 9)
    ctx = _context([1, 2], [1, 2], current)
    selector = PreferredReplicaPartitionLeaderSelector(ctx)
    assert selector.select_leader(TP, current) == (LeaderAndIsr(1, 4, [2, 1], 10), [1, 2])

    out_of_sync = LeaderAndIsr(2, 3, [2], 9)
    with pytest.raises(StateChangeFailedException) as e:
        selector.select_leader(TP, out_of_sync)
    assert str(e.value).startswith(
        "Preferred replica 1 for partition [t,0] is either not alive or not in the isr."
    )

    ctx.partition_leadership[TP] = (LeaderAndIsr(1, 4, [2, 1], 10), 1)
    with pytest.raises(LeaderElectionNotNeededException) as e:
        selector.select_leader(TP, LeaderAndIsr(1, 4, [2, 1], 10))
    assert str(e.value) == "Preferred replica 1 is already the current leader for partition [t,0]"


def test_controlled_shutdown_elects_outside_the_shutting_down_brokers_and_drops_them_from_the_isr():
    current = LeaderAndIsr(1, 6, [1, 2, 3], 2)
    ctx = _context([1, 2, 3], [1, 3, 2], current)
    ctx.shutting_down_broker_ids = {1}
    selector = ControlledShutdownLeaderSelector(ctx)
    # The shutting-down broker still hears the LeaderAndIsr (it is live or shutting down).
    assert selector.select_leader(TP, current) == (LeaderAndIsr(3, 7, [2, 3], 3), [1, 3, 2])

    alone = LeaderAndIsr(1, 6, [1], 2)
    with pytest.raises(StateChangeFailedException) as e:
        selector.select_leader(TP, alone)
    assert str(e.value) == "No other replicas in ISR 1 for [t,0] besides shutting down brokers 1"


def test_no_op_keeps_the_leader_and_isr():
    current = LeaderAndIsr(2, 3, [2, 1], 9)
    ctx = _context([1, 2], [1, 2], current)
    assert NoOpLeaderSelector(ctx).select_leader(TP, current) == (current, [1, 2])
