"""Replication on one MockTime: three replica managers in one process, the test playing each follower's
fetcher (a fetch to the leader, then an append of what came back). No sockets, no ZooKeeper, no sleeps."""

from __future__ import annotations

import threading

import pytest

from kafka_lite.common.errors import Errors
from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.time import MockTime
from kafka_lite.server.replica_fetcher_manager import ReplicaFetcherManager
from kafka_lite.server.replica_manager import ReplicaManager
from kafka_lite.testing.in_process_replicas import (
    InProcessFetcherThread,
    follower_fetch,
    in_process_replica_manager,
    leader_and_isr,
    new_leader_without_the_old_leaders_tail,
    played_fetcher,
    replicate,
    replicated_partition,
    restarted_follower,
)
from kafka_lite.testing.logs import read_all

TP = ("orders", 0)
LAG_MS = 10_000


def records(*values: bytes) -> MemoryRecords:
    return MemoryRecords.with_records([(1000, None, v) for v in values])


@pytest.fixture
def brokers(tmp_path):
    """Broker 0 leads ``TP``; brokers 1 and 2 follow; all three in the ISR."""
    time = MockTime()
    with replicated_partition(tmp_path, time, TP, **{"replica.lag.time.max.ms": LAG_MS}) as managers:
        yield time, managers


def produce(leader: ReplicaManager, acks: int, *values: bytes, timeout_ms: int = 1000) -> list:
    answers = []
    leader.append_records(timeout_ms, acks, False, {TP: records(*values)}, answers.append)
    return answers


def test_the_high_watermark_is_the_smallest_leo_in_the_isr(brokers):
    _, (leader, f1, f2) = brokers
    produce(leader, 1, b"a", b"b", b"c")
    partition = leader.get_partition(TP)
    assert partition.get_replica().log_end_offset == 3
    assert partition.high_watermark() == 0, "no follower has the records yet"
    assert replicate(leader, f1, TP) == 3
    assert replicate(leader, f1, TP) == 3  # the fetch from 3 tells the leader follower 1 has 0..2
    assert partition.high_watermark() == 0, "follower 2 still has nothing"
    replicate(leader, f2, TP)
    replicate(leader, f2, TP)
    assert partition.high_watermark() == 3
    # the followers learn the HW from the leader's answers
    replicate(leader, f1, TP)
    assert f1.get_partition(TP).high_watermark() == 3


def test_consumers_read_below_the_hw_and_followers_up_to_the_leo(brokers):
    _, (leader, _, _) = brokers
    produce(leader, 1, b"a", b"b")
    consumer = follower_fetch(leader, -1, TP, 0)
    assert consumer.size == 0 and consumer.high_watermark == 0
    follower = follower_fetch(leader, 1, TP, 0)
    assert follower.size > 0


def test_acks_all_waits_for_every_isr_member(brokers):
    _, (leader, f1, f2) = brokers
    answers = produce(leader, -1, b"x")
    assert answers == [], "acks=all answers only when the ISR has the batch"
    replicate(leader, f1, TP)
    replicate(leader, f1, TP)
    assert answers == []
    replicate(leader, f2, TP)
    replicate(leader, f2, TP)  # this fetch moves the HW past the batch
    assert len(answers) == 1 and answers[0][TP].error is Errors.NONE and answers[0][TP].base_offset == 0


def test_acks_all_times_out_when_a_follower_does_not_fetch(brokers):
    _, (leader, f1, _) = brokers
    answers = produce(leader, -1, b"x", timeout_ms=500)
    replicate(leader, f1, TP)
    replicate(leader, f1, TP)
    leader.delayed_produce_purgatory.advance_clock(499)
    assert answers == []
    leader.delayed_produce_purgatory.advance_clock(2)
    assert answers[0][TP].error is Errors.REQUEST_TIMED_OUT


def test_a_stuck_follower_leaves_the_isr_and_returns_once_caught_up(brokers):
    time, (leader, f1, f2) = brokers
    partition = leader.get_partition(TP)
    produce(leader, 1, b"a")
    for _ in range(2):
        replicate(leader, f1, TP)
    time.sleep(LAG_MS // 2)
    leader.maybe_shrink_isr()
    assert partition.isr == [0, 1, 2], "within replica.lag.time.max.ms everyone stays"
    replicate(leader, f1, TP)  # follower 1 keeps fetching; follower 2 is stuck
    time.sleep(LAG_MS // 2 + 1)
    leader.maybe_shrink_isr()
    assert partition.isr == [0, 1]
    assert partition.high_watermark() == 1, "with the laggard out, the HW moves to the slowest remaining"
    assert leader.metrics["isr-shrinks"] == 1
    # follower 2 comes back: it rejoins once its fetch offset reaches the HW
    produce(leader, 1, b"b")
    replicate(leader, f1, TP)
    replicate(leader, f2, TP)
    assert partition.isr == [0, 1], "at offset 0 it is below the HW"
    replicate(leader, f2, TP)
    assert partition.isr == [0, 1, 2]


def test_the_isr_check_runs_every_half_of_replica_lag_time_max_ms(brokers):
    """Kafka 0.11's period: a stuck follower is out within one and a half times the lag bound (0.10.1
    checked every whole bound, so a laggard could stay in for up to twice it)."""
    _, (leader, f1, _) = brokers
    partition = leader.get_partition(TP)
    produce(leader, 1, b"a")
    for _ in range(2):
        replicate(leader, f1, TP)  # follower 1 is caught up; follower 2 never fetches
    for _ in range(2):
        leader.scheduler.advance(LAG_MS // 2)  # the broker's own task, on its scheduler
        replicate(leader, f1, TP)
    assert partition.isr == [0, 1, 2], "caught up within replica.lag.time.max.ms: everyone stays"
    leader.scheduler.advance(LAG_MS // 2)
    assert partition.isr == [0, 1], "the check at one and a half times the bound drops follower 2"


def test_a_new_leader_starts_its_followers_lag_clocks_afresh(brokers):
    """A follower made leader has no fetch history of the others: it counts their lag from its election
    (Kafka 0.10.2, KAFKA-4485), not from whenever it last saw them, so the ISR it was given stays."""
    time, (b0, b1, b2) = brokers
    produce(b0, 1, b"a")
    for follower in (b1, b2):
        replicate(b0, follower, TP)
        replicate(b0, follower, TP)
    time.sleep(3 * LAG_MS)  # a long while later, broker 1 is elected
    for m in (b0, b1, b2):
        m.become_leader_or_follower(
            leader_and_isr(TP, leader=1, isr=[0, 1, 2], replicas=[0, 1, 2], leader_epoch=2)
        )
    partition = b1.get_partition(TP)
    b1.maybe_shrink_isr()
    assert partition.isr == [0, 1, 2], "the followers' clocks start at the election"
    time.sleep(LAG_MS + 1)  # then they must fetch like any follower
    b1.maybe_shrink_isr()
    assert partition.isr == [1]


def test_followers_of_an_idle_partition_stay_in_the_isr(brokers):
    """A fetch that brings nothing still renews the follower's catch-up time: partitions with no
    writes (most of ``__consumer_offsets``) keep their ISR however long they stay idle."""
    time, (leader, f1, f2) = brokers
    partition = leader.get_partition(TP)
    produce(leader, 1, b"a")
    for follower in (f1, f2):
        replicate(leader, follower, TP)
        replicate(leader, follower, TP)
    assert partition.high_watermark() == 1
    for _ in range(6):  # three times replica.lag.time.max.ms with nothing new to fetch
        time.sleep(LAG_MS // 2)
        for follower in (f1, f2):
            assert replicate(leader, follower, TP) == 1
        leader.maybe_shrink_isr()
        assert partition.isr == [0, 1, 2]
    assert leader.metrics["isr-shrinks"] == 0


def test_min_insync_replicas(tmp_path):
    time = MockTime()
    leader = in_process_replica_manager(tmp_path, 0, time, **{"min.insync.replicas": 2})
    leader.become_leader_or_follower(leader_and_isr(TP, leader=0, isr=[0], replicas=[0, 1]))
    answers = produce(leader, -1, b"x")
    assert answers[0][TP].error is Errors.NOT_ENOUGH_REPLICAS
    assert leader.get_partition(TP).get_replica().log_end_offset == 0, "nothing was appended"
    assert produce(leader, 1, b"y")[0][TP].error is Errors.NONE, "acks=1 does not ask for replicas"


def test_a_new_follower_truncates_what_its_new_leader_does_not_have(brokers):
    _, (leader, f1, f2) = brokers
    # a, b committed, c at offset 2 on broker 0 only; broker 1 becomes leader; broker 0 follows it
    # and must drop offset 2, which 1 never had
    new_leader_without_the_old_leaders_tail([leader, f1, f2], TP)
    assert leader.get_partition(TP).get_replica().log_end_offset == 3
    assert leader.replica_fetcher_manager.added[TP].broker_id == 1
    played_fetcher(leader, f1).maybe_truncate()
    assert leader.get_partition(TP).get_replica().log_end_offset == 2
    assert [r.value for r in read_all(leader.get_partition(TP).log)] == [b"a", b"b"]


@pytest.mark.parametrize(
    ("version", "kept"),
    [("0.10.1", 0), ("0.11.0", 2)],
    ids=["0.10-truncates-to-the-hw", "0.11-truncates-by-leader-epoch"],
)
def test_a_restarted_follower_keeps_committed_records_only_with_leader_epochs(tmp_path, version, kept):
    """KIP-101's first case: a follower learns the HW one fetch late, so its HW lags its LEO. Restarted,
    0.10 truncates to that HW and throws away records every replica has (they are lost for good if the
    leader then fails and this follower takes over). 0.11 asks the leader where the follower's
    latest epoch ends, and keeps them."""
    leader, restarted, managers = restarted_follower(
        tmp_path, MockTime(), TP, **{"inter.broker.protocol.version": version}
    )
    replica = restarted.get_partition(TP).get_replica()
    assert (replica.log_end_offset, replica.high_watermark) == (2, 0)
    played_fetcher(restarted, leader).maybe_truncate()
    assert replica.log_end_offset == kept
    for m in managers:
        m.shutdown(checkpoint_hw=False)
        m.log_manager.shutdown()


def test_after_two_quick_elections_a_follower_truncates_to_where_the_new_leaders_epoch_starts(tmp_path):
    """Broker 2 holds a record of epoch 2 that broker 0, elected next (uncleanly: broker 1 died at
    once), never had. Broker 0 recorded at its election that epoch 3 starts at its LEO (Kafka 2.1), so
    it answers "where does epoch 2 end?" with that offset, and broker 2 cuts the record instead of
    keeping it where broker 0 writes another (0.11, recording an epoch only at its first append, says
    "unknown", and the follower would fall back to its HW, above the record)."""
    time = MockTime()
    b0, b1, b2 = (in_process_replica_manager(tmp_path, i, time) for i in range(3))
    for m in (b0, b1, b2):
        m.become_leader_or_follower(leader_and_isr(TP, leader=0, isr=[0, 1, 2], replicas=[0, 1, 2]))
    produce(b0, 1, b"a", b"b")
    for follower in (b1, b2):
        replicate(b0, follower, TP)
        replicate(b0, follower, TP)
    # Epoch 2: broker 1 leads while broker 0 is away; broker 2 copies c and learns it is committed.
    epoch_2 = leader_and_isr(TP, leader=1, isr=[1, 2], replicas=[0, 1, 2], leader_epoch=2)
    for m in (b1, b2):
        m.become_leader_or_follower(epoch_2)
    played_fetcher(b2, b1).maybe_truncate()
    produce(b1, 1, b"c")
    for _ in range(3):
        replicate(b1, b2, TP)
    assert b2.get_partition(TP).get_replica().high_watermark == 3
    # Epoch 3: broker 1 dies; broker 0, which never had c, is elected; broker 2 follows it.
    epoch_3 = leader_and_isr(TP, leader=0, isr=[0, 2], replicas=[0, 1, 2], leader_epoch=3)
    for m in (b0, b2):
        m.become_leader_or_follower(epoch_3)
    played_fetcher(b2, b0).maybe_truncate()
    assert [r.value for r in read_all(b2.get_partition(TP).log)] == [b"a", b"b"]
    produce(b0, 1, b"d")
    replicate(b0, b2, TP)
    for m in (b0, b2):
        assert [r.value for r in read_all(m.get_partition(TP).log)] == [b"a", b"b", b"d"]
    for m in (b0, b1, b2):
        m.shutdown(checkpoint_hw=False)
        m.log_manager.shutdown()


@pytest.mark.parametrize(
    ("version", "diverged"),
    [("0.10.1", True), ("0.11.0", False)],
    ids=["0.10-replicas-diverge", "0.11-replicas-agree"],
)
def test_after_a_power_failure_the_replicas_diverge_only_without_leader_epochs(tmp_path, version, diverged):
    """KIP-101's second case. Broker 0 leads, broker 1 follows; both hold m1 and m2, committed (broker
    0's HW, checkpointed, is 2). Power fails on both. Broker 1 loses m2, still in its page cache (the
    fault this test injects: its log cut back to offset 1, and no checkpoint written), comes back
    first, is elected and takes m3 at offset 1. Broker 0 comes back as its follower. Under 0.10 it
    truncates to its HW, 2, keeps m2 at offset 1, and fetches from 2, where its leader has nothing:
    the two logs now hold different records at offset 1, for good. Under 0.11 it asks where its
    latest epoch (1) ends on the leader, 1, cuts m2, and fetches m3."""
    time = MockTime()
    props = {"inter.broker.protocol.version": version}
    a, b = (in_process_replica_manager(tmp_path, i, time, **props) for i in (0, 1))
    for m in (a, b):
        m.become_leader_or_follower(leader_and_isr(TP, leader=0, isr=[0, 1], replicas=[0, 1]))
    produce(a, 1, b"m1")
    produce(a, 1, b"m2")  # a batch of its own: a log is cut at batch boundaries
    replicate(a, b, TP)
    replicate(a, b, TP)
    assert a.get_partition(TP).high_watermark() == 2
    b.get_partition(TP).log.truncate_to(1)  # the page cache lost with the power: m2 never reached the disk
    b.shutdown(checkpoint_hw=False)
    a.shutdown(checkpoint_hw=True)
    for m in (a, b):
        m.log_manager.shutdown()

    b = in_process_replica_manager(tmp_path, 1, time, **props)
    b.become_leader_or_follower(leader_and_isr(TP, leader=1, isr=[1], replicas=[0, 1], leader_epoch=2))
    produce(b, 1, b"m3")
    a = in_process_replica_manager(tmp_path, 0, time, **props)
    a.become_leader_or_follower(leader_and_isr(TP, leader=1, isr=[1], replicas=[0, 1], leader_epoch=2))
    played_fetcher(a, b).maybe_truncate()
    for _ in range(2):
        replicate(b, a, TP)
    logs = {m.config.broker_id: [r.value for r in read_all(m.get_partition(TP).log)] for m in (a, b)}
    assert logs[1] == [b"m1", b"m3"]
    if diverged:
        assert logs[0] == [b"m1", b"m2"], "0.10: the follower kept m2, where its leader has m3"
    else:
        assert logs[0] == logs[1], (
            "0.11: the follower cut m2 where epoch 1 ends on the leader, and fetched m3"
        )
    for m in (a, b):
        m.shutdown(checkpoint_hw=False)
        m.log_manager.shutdown()


def test_the_high_watermark_survives_a_restart(brokers, tmp_path):
    time, (leader, f1, f2) = brokers
    produce(leader, 1, b"a", b"b")
    for follower in (f1, f2):
        replicate(leader, follower, TP)
        replicate(leader, follower, TP)
    produce(leader, 1, b"c")  # offset 2, above the HW
    leader.shutdown()  # writes the checkpoint
    leader.log_manager.shutdown()
    text = (leader.config.log_dirs[0] / "replication-offset-checkpoint").read_text()
    assert text.splitlines()[2:] == ["orders 0 2"]
    # Restarted, broker 0's replica starts from the checkpointed HW, not from 0 (a follower without
    # leader epochs truncates to it).
    restarted = in_process_replica_manager(tmp_path, 0, time)
    restarted.become_leader_or_follower(
        leader_and_isr(TP, leader=1, isr=[1, 2], replicas=[0, 1, 2], leader_epoch=2)
    )
    assert restarted.get_partition(TP).get_replica().high_watermark == 2
    restarted.shutdown(checkpoint_hw=False)
    restarted.log_manager.shutdown()


def test_a_follower_that_fetches_but_never_catches_up_leaves_the_isr(brokers):
    time, (leader, f1, _) = brokers
    partition = leader.get_partition(TP)
    for _ in range(6):  # follower 2 keeps fetching from offset 0 as records keep coming
        produce(leader, 1, b"r")
        replicate(leader, f1, TP)
        follower_fetch(leader, 2, TP, 0)
        time.sleep(LAG_MS // 4)
        leader.maybe_shrink_isr()
    assert partition.isr == [0, 1], "fetching is not enough: a follower must reach the leader's LEO"


def test_a_follower_fetching_behind_a_moving_leo_stays_in_sync(brokers):
    """Under steady load a fetch rarely starts exactly at the leader's LEO; reaching the LEO the leader
    had at the previous fetch counts as caught up as of that fetch."""
    time, (leader, f1, f2) = brokers
    partition = leader.get_partition(TP)
    for _ in range(8):
        produce(leader, 1, b"r")  # the LEO moves before every fetch
        replicate(leader, f1, TP)
        replicate(leader, f2, TP)
        time.sleep(LAG_MS // 4)
        leader.maybe_shrink_isr()
    assert partition.isr == [0, 1, 2]


def test_a_follower_told_of_a_dead_leader_fetches_once_the_same_leader_is_back(tmp_path):
    """A new controller first sends the state it finds in ZooKeeper: after a whole cluster restarts,
    the broker that wins the election hears that broker 0, not yet up, leads. Once broker 0 is back,
    the controller elects it again, with a new epoch: the follower must start fetching then, although
    the leader's id is the one it heard before."""
    time = MockTime()
    follower = in_process_replica_manager(tmp_path, 2, time)
    try:
        stale = leader_and_isr(TP, leader=0, isr=[0, 1], replicas=[0, 2, 1], leader_epoch=4)
        stale["live_leaders"] = []  # broker 0 is not alive yet
        error, errors = follower.become_leader_or_follower(stale)
        assert (error, errors[TP]) == (Errors.NONE, Errors.NONE)
        assert follower.get_partition(TP).get_replica() is not None, (
            "its replica exists, for the HW checkpoint"
        )
        assert follower.replica_fetcher_manager.added == {}, "nothing to fetch from"
        elected = leader_and_isr(TP, leader=0, isr=[0, 1], replicas=[0, 2, 1], leader_epoch=5)
        follower.become_leader_or_follower(elected)
        assert follower.replica_fetcher_manager.added[TP].broker_id == 0
        assert follower.get_partition(TP).leader_replica_id == 0
    finally:
        follower.shutdown(checkpoint_hw=False)
        follower.log_manager.shutdown()


def test_a_pause_waits_out_the_fetch_already_under_way(brokers):
    """A paused follower copies nothing produced after the pause: ``pause`` returns only once the
    round already under way (a fetch the leader may hold for ``replica.fetch.wait.max.ms``) has
    appended what it brought back."""
    _, (leader, f1, _) = brokers
    in_round, answered = threading.Event(), threading.Event()

    class HeldFetcher(InProcessFetcherThread):
        def process_fetch_request(self, fetch_request):  # the fetch held at the leader until answered
            in_round.set()
            answered.wait()
            replicate(leader, f1, TP)

    manager = ReplicaFetcherManager(f1.config, f1, f1.time, f1.quota_manager)
    thread = HeldFetcher(f1, leader)
    thread.unpaused = manager._unpaused
    thread.add_partitions({TP: 0})
    manager.fetcher_thread_map[(leader.broker_id, 0)] = thread
    thread.start()
    try:
        assert in_round.wait(10), "the fetcher never sent its first fetch"
        produce(leader, 1, b"a")  # reaches the leader while the fetch is held
        answer = threading.Timer(0.05, answered.set)
        answer.start()
        manager.pause()
        assert f1.get_partition(TP).get_replica().log_end_offset == 1, "pause returned mid-round"
    finally:
        manager.resume()
        thread.shutdown()
