"""Replication on the session's real 3-broker cluster, with replication factor 3: followers fetching over
sockets, the ISR in ZooKeeper, acks=all, min.insync.replicas, and consumers held below the HW.

Followers are paused with the replica fetcher manager's test hook (the broker keeps running, as a
slow or stuck follower would). Every wait is on a condition with a deadline."""

from __future__ import annotations

import threading
import time

import pytest

from kafka_lite.common.errors import Errors
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.requests import parse_response
from kafka_lite.common.record import MemoryRecords
from kafka_lite.testing.logs import read_all
from tests.support.topics import topic_name
from tests.support.waiting import wait_until
from tests.support.wire import WireClient, fetch_body, fetched, partition_response, produce_body

pytestmark = pytest.mark.integration


def batch(*values: bytes) -> bytes:
    # Timestamps of now: records from 1970 would be older than retention.ms, and the broker's
    # retention check, which runs every few minutes of the session's cluster, would delete them.
    now = int(time.time() * 1000)
    return bytes(MemoryRecords.with_records([(now, None, v) for v in values]).buffer())


class Rf3:
    """One partition replicated on the three brokers, and ways to look at each replica."""

    def __init__(self, cluster, **configs) -> None:
        self.cluster = cluster
        self.topic = topic_name("repl")
        self.tp = (self.topic, 0)
        cluster.create_topic(self.topic, partitions=1, replication_factor=3, **configs)
        self.leader = cluster.leader_of(self.topic, 0)
        self.followers = [s.broker_id for s in cluster.servers if s.broker_id != self.leader]
        wait_until(lambda: self.isr() == [0, 1, 2], what="all three replicas in the ISR")

    def partition(self, broker_id: int):
        return self.cluster.server(broker_id).replica_manager.get_partition(self.tp)

    def isr(self) -> list[int]:
        return self.partition(self.leader).isr

    def leo(self, broker_id: int) -> int:
        return self.partition(broker_id).get_replica().log_end_offset

    def leader_view_of_leo(self, broker_id: int) -> int:
        """What the leader knows of a replica's LEO (from its fetches)."""
        return self.partition(self.leader).get_replica(broker_id).log_end_offset

    def hw(self) -> int:
        return self.partition(self.leader).high_watermark()

    def client(self) -> WireClient:
        return WireClient(self.cluster.server(self.leader).port)

    def produce(self, acks: int, *values: bytes) -> dict:
        return partition_response(
            self.client().call(ApiKeys.PRODUCE, 3, produce_body(self.topic, 0, batch(*values), acks))
        )

    def waiting_produces(self) -> list:
        """The produces the leader holds for this partition: those watched under its own key (the
        session's cluster holds other partitions' too)."""
        return self.cluster.server(self.leader).replica_manager.delayed_produce_purgatory.watched_operations(
            self.tp
        )

    def waiting_consumer_fetches(self) -> list:
        """The consumers' fetches the leader holds for this partition (a paused follower's fetch
        may still be parked there too)."""
        purgatory = self.cluster.server(self.leader).replica_manager.delayed_fetch_purgatory
        return [op for op in purgatory.watched_operations(self.tp) if not op.fetch_metadata.is_from_follower]

    def pause(self, *broker_ids: int, wait: bool = True) -> None:
        for b in broker_ids:
            self.cluster.server(b).replica_manager.replica_fetcher_manager.pause(wait)

    def keep_isr(self, monkeypatch) -> None:
        """The leader keeps its ISR for the rest of the test. Paused followers leave it once
        replica.lag.time.max.ms (2 s here) has passed, and the high watermark then jumps to the log
        end; a loaded machine can take that long over a test's requests. A test about what the HW
        hides, not about the ISR, keeps it."""
        monkeypatch.setattr(self.partition(self.leader), "maybe_shrink_isr", lambda lag_ms: None)

    def resume(self) -> None:
        for s in self.cluster.servers:
            s.replica_manager.replica_fetcher_manager.resume()


@pytest.fixture
def rf3(cluster):
    partition = Rf3(cluster)
    yield partition
    partition.resume()


def test_acks_all_returns_only_when_every_isr_member_has_the_batch(rf3, monkeypatch):
    answer = rf3.produce(-1, b"a", b"b")
    assert answer["error_code"] == 0
    end = answer["base_offset"] + 2
    assert all(rf3.leo(b) >= end for b in (0, 1, 2)), "every in-sync replica had the batch before the answer"
    assert all(rf3.leader_view_of_leo(b) >= end for b in rf3.followers), "and the leader knew it"
    # With one follower paused (but still in the ISR), the answer waits for it.
    slow = rf3.followers[0]
    # At once, not after the follower's held fetch returns: the follower stays in the ISR only
    # replica.lag.time.max.ms after its last fetch, and the check below must come within that.
    rf3.keep_isr(monkeypatch)  # a member it waits for, however slow the machine
    rf3.pause(slow, wait=False)
    client = rf3.client()
    client.send(ApiKeys.PRODUCE, 3, produce_body(rf3.topic, 0, batch(b"c"), acks=-1))
    wait_until(lambda: rf3.waiting_produces(), what="the produce to wait in the purgatory")
    # (the fetch in flight when the pause began may still bring the batch to the follower, but the
    # leader learns it only from the follower's next fetch)
    assert rf3.leader_view_of_leo(slow) < end + 1 and slow in rf3.isr()
    rf3.resume()
    _, response = parse_response(ApiKeys.PRODUCE, 3, client.read_frame())
    assert partition_response(response)["error_code"] == 0
    assert rf3.leader_view_of_leo(slow) >= end + 1 and rf3.leo(slow) >= end + 1


def test_a_paused_follower_leaves_the_isr_and_returns_after_catching_up(rf3):
    slow = rf3.followers[0]
    rf3.pause(slow)
    rf3.produce(1, b"x")
    wait_until(lambda: slow not in rf3.isr(), what=f"broker {slow} to leave the ISR")
    zk_state = rf3.cluster.servers[0].zk.get_partition_state(*rf3.tp)
    assert slow not in zk_state.leader_and_isr.isr, "the shrunk ISR is in ZooKeeper"
    # acks=all now needs only the remaining ISR
    assert rf3.produce(-1, b"y")["error_code"] == 0
    rf3.resume()
    wait_until(lambda: slow in rf3.isr(), what=f"broker {slow} to rejoin the ISR")
    assert rf3.leo(slow) >= rf3.hw()
    wait_until(
        lambda: slow in rf3.cluster.servers[0].zk.get_partition_state(*rf3.tp).leader_and_isr.isr,
        what="the expanded ISR in ZooKeeper",
    )


def test_below_min_insync_replicas_acks_all_fails_and_nothing_becomes_readable(cluster):
    strict = Rf3(cluster, min_insync_replicas=3)
    try:
        assert strict.produce(-1, b"ok")["error_code"] == 0
        hw_before = strict.hw()
        strict.pause(strict.followers[0])
        wait_until(lambda: len(strict.isr()) == 2, what="the ISR to shrink to two")
        answer = strict.produce(-1, b"refused")
        assert Errors.for_code(answer["error_code"]) is Errors.NOT_ENOUGH_REPLICAS
        assert strict.leo(strict.leader) == hw_before, "nothing was appended"
        header, records = fetched(strict.client().call(ApiKeys.FETCH, 5, fetch_body(strict.topic)))
        assert header["high_watermark"] == hw_before
        assert [r.value for r in MemoryRecords(records).records()] == [b"ok"], (
            f"fetch from {strict.leader} at hw {hw_before}: {header}, {len(records)} bytes; "
            f"leos {[strict.leo(b) for b in (strict.leader, *strict.followers)]}, isr {strict.isr()}, "
            f"leader now {strict.cluster.leader_of(strict.topic, 0)}"
        )
    finally:
        strict.resume()


def test_consumers_never_see_records_above_the_high_watermark(rf3, monkeypatch):
    rf3.produce(-1, b"committed")
    rf3.keep_isr(monkeypatch)
    rf3.pause(*rf3.followers)
    answer = rf3.produce(1, b"u1", b"u2")  # acks=1: the leader alone has them
    assert answer["error_code"] == 0
    hw = rf3.hw()
    assert rf3.leo(rf3.leader) == hw + 2
    header, records = fetched(rf3.client().call(ApiKeys.FETCH, 5, fetch_body(rf3.topic)))
    assert header["high_watermark"] == hw
    assert [r.value for r in MemoryRecords(records).records()] == [b"committed"]
    # A follower may read above the HW (it must, to move it).
    _, follower_view = fetched(
        rf3.client().call(ApiKeys.FETCH, 5, fetch_body(rf3.topic, offset=hw, replica_id=rf3.followers[0]))
    )
    assert [r.value for r in MemoryRecords(follower_view).records()] == [b"u1", b"u2"]
    # A consumer waiting at the HW is woken by the HW moving, not by the leader's append.
    waiting = rf3.client()
    waiting.send(ApiKeys.FETCH, 5, fetch_body(rf3.topic, offset=hw, max_wait=20_000, min_bytes=1))
    wait_until(lambda: rf3.waiting_consumer_fetches(), what="the consumer's fetch to wait")
    rf3.resume()
    header, records = fetched(parse_response(ApiKeys.FETCH, 5, waiting.read_frame())[1])
    assert header["high_watermark"] == hw + 2
    assert [r.value for r in MemoryRecords(records).records()] == [b"u1", b"u2"]


def test_a_fetch_with_min_bytes_waits_for_replicated_bytes_or_max_wait(rf3):
    rf3.produce(-1, b"first")
    hw = rf3.hw()
    client = rf3.client()
    started = time.monotonic()
    header, records = fetched(
        client.call(ApiKeys.FETCH, 5, fetch_body(rf3.topic, offset=hw, max_wait=300, min_bytes=1))
    )
    waited = time.monotonic() - started
    assert records == b"" and header["error_code"] == 0, "no data: answered empty at max_wait"
    # the timer never fires early: the broker held the fetch its whole max_wait (a lower bound only)
    assert waited >= 0.299, f"answered after {waited * 1000:.0f} ms, before max_wait (300 ms)"
    waiting = rf3.client()
    waiting.send(ApiKeys.FETCH, 5, fetch_body(rf3.topic, offset=hw, max_wait=20_000, min_bytes=1))
    wait_until(lambda: rf3.waiting_consumer_fetches(), what="the fetch to wait")
    threading.Thread(target=rf3.produce, args=(-1, b"second"), daemon=True).start()
    header, records = fetched(parse_response(ApiKeys.FETCH, 5, waiting.read_frame())[1])
    assert [r.value for r in MemoryRecords(records).records()] == [b"second"]


def test_replicas_converge_to_the_same_batches_at_the_same_offsets(rf3):
    def load(n: int) -> None:
        for i in range(n):
            rf3.produce(1, b"v%d" % i, b"w%d" % i)

    load(10)
    lagging = rf3.followers[1]
    rf3.pause(lagging)  # one follower misses the rest of the load and catches up after
    writers = [threading.Thread(target=load, args=(20,)) for _ in range(3)]
    for w in writers:
        w.start()
    for w in writers:
        w.join()
    # A fetch already parked on the leader may still bring the first of them; no more than that.
    assert rf3.leo(lagging) < rf3.leo(rf3.leader) - 60, "the paused follower missed most of the load"
    rf3.resume()
    end = rf3.leo(rf3.leader)
    wait_until(
        lambda: all(rf3.leo(b) == end for b in (0, 1, 2)) and rf3.hw() == end,
        what="every replica at the leader's LEO",
    )

    def contents(broker_id: int) -> list:
        return [(r.offset, r.value) for r in read_all(rf3.partition(broker_id).log)]

    leader = contents(rf3.leader)
    assert len(leader) == 140
    assert all(contents(f) == leader for f in rf3.followers)


def test_list_offsets_keeps_consumers_below_the_hw_and_lets_a_debugging_consumer_ask_a_follower(
    rf3, monkeypatch
):
    """ListOffsets as Kafka 0.10.1 answers it: a consumer (replica id -1) hears of nothing above the
    HW, a latest or a lookup by time alike; a broker or the debugging consumer (-2) gets the log end,
    and only the debugging consumer may ask a follower, of that follower's own replica."""

    t0 = int(time.time() * 1000) - 60_000  # recent: older records would fall to time retention (see batch)

    def timed(ts: int, value: bytes) -> bytes:
        return bytes(MemoryRecords.with_records([(t0 + ts, None, value)]).buffer())

    def list_offset(broker_id: int, replica_id: int, timestamp: int) -> dict:
        body = {"replica_id": replica_id, "topics": [{"topic": rf3.topic, "partitions": [{"partition": 0, "timestamp": timestamp}]}]}  # fmt: skip
        return partition_response(
            WireClient(rf3.cluster.server(broker_id).port).call(ApiKeys.LIST_OFFSETS, 1, body)
        )

    client = rf3.client()
    committed = partition_response(
        client.call(ApiKeys.PRODUCE, 3, produce_body(rf3.topic, 0, timed(1000, b"c"), -1))
    )
    wait_until(
        lambda: all(rf3.leo(b) == committed["base_offset"] + 1 for b in (0, 1, 2)), what="the replicas"
    )
    rf3.keep_isr(monkeypatch)  # this test is about ListOffsets
    rf3.pause(*rf3.followers)
    for ts in (5000, 6000):  # acks=1: on the leader alone, above the HW
        assert (
            partition_response(client.call(ApiKeys.PRODUCE, 3, produce_body(rf3.topic, 0, timed(ts, b"u"))))[
                "error_code"
            ]
            == 0
        )
    hw, leo = rf3.hw(), rf3.leo(rf3.leader)
    assert leo == hw + 2
    leader = rf3.leader
    assert list_offset(leader, -1, t0 + 500)["offset"] == committed["base_offset"], (
        "a committed record, found by time"
    )
    assert list_offset(leader, -1, t0 + 5500)["offset"] == -1, (
        "the record at 6000 is above the HW: not for a consumer"
    )
    assert list_offset(leader, rf3.followers[0], t0 + 5500)["offset"] == leo - 1, "a broker may know of it"
    assert list_offset(leader, -1, -1)["offset"] == hw
    assert list_offset(leader, -2, -1)["offset"] == leo, "the debugging consumer gets the log end"
    follower = rf3.followers[0]
    assert Errors.for_code(list_offset(follower, -1, -1)["error_code"]) is Errors.NOT_LEADER_FOR_PARTITION
    answer = list_offset(follower, -2, -1)
    assert (answer["error_code"], answer["offset"]) == (0, rf3.leo(follower)), "the follower's own replica"
