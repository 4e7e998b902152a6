"""What the notebook ``replication.ipynb`` plays: each follower's fetcher thread, a producer and a
consumer of the leader, and a table of the replicas of one partition, over three in-process
``ReplicaManager``s on one ``MockTime``.

No Kafka twin: notebook tooling over ``kafka_lite.server.replica_manager`` (Kafka's
``ReplicaManager``; one round of ``follower_fetches`` is what ``ReplicaFetcherThread``'s
``processPartitionData`` does with one fetch's answer). Book: chapter 6, 6.2 (replication).
"""

from __future__ import annotations

import logging
import sys

from rich.console import Console
from rich.table import Table

from kafka_lite.common.errors import Errors
from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.time import MockTime
from kafka_lite.server.replica_manager import FetchMetadata, FetchPartitionRequest, ReplicaManager

console = Console(width=100, force_jupyter=False, force_terminal=True, color_system="standard")


def show_isr_changes() -> None:
    """Print the partition's log lines under the cells: it logs its ISR changes as Kafka's does
    ("Shrinking ISR for partition ...")."""
    partition_log = logging.getLogger("kafka_lite.server.partition")
    partition_log.setLevel(logging.INFO)
    partition_log.addHandler(logging.StreamHandler(sys.stdout))


def raw(records) -> bytes:
    """A fetch's records as bytes: a slice of a segment file (``FileRecords``), or empty ``MemoryRecords``."""
    return bytes(records.buffer()) if isinstance(records, MemoryRecords) else records.read_bytes()


def offsets_in(records) -> list[int]:
    """The offsets of the records in a fetch's answer."""
    data = raw(records)
    return [
        o for batch in MemoryRecords(data).batches() for o in range(batch.base_offset, batch.last_offset + 1)
    ]


class ReplicationSteps:
    """Requests to the leader of ``tp``, the first of ``brokers`` (the others follow it), as the
    notebook sends them: a follower's fetch and what its fetcher does with the answer, a consumer's
    fetch, a produce. The produce answers go to ``answers``, in the order they come."""

    def __init__(self, tp: tuple[str, int], time: MockTime, brokers: list[ReplicaManager]) -> None:
        self.tp, self.time, self.brokers = tp, time, brokers
        self.leader = brokers[0]
        self.answers: list[dict] = []

    def fetch(self, replica_id: int, offset: int):
        """A Fetch to the leader from ``offset`` that does not wait: replica_id -1 is a consumer, a
        broker id a follower. Returns the partition's LogReadResult."""
        got = {}
        self.leader.fetch_messages(
            FetchMetadata(1, 1 << 20, replica_id, {self.tp: FetchPartitionRequest(offset, 1 << 20)}),
            got.update,
        )
        return got[self.tp]

    def follower_fetches(self, follower: ReplicaManager) -> list[int]:
        """One round of a follower's fetcher: fetch from its LEO, append what came with the leader's
        offsets, and take the leader's HW (capped by its own LEO). Returns the offsets it got."""
        partition = follower.get_partition(self.tp)
        replica = partition.get_replica()
        result = self.fetch(follower.broker_id, replica.log_end_offset)
        assert result.error is Errors.NONE, result.error
        got = offsets_in(result.records)
        if got:
            partition.append_records_to_follower(MemoryRecords(raw(result.records)))
        replica.high_watermark = min(replica.log_end_offset, result.high_watermark)
        return got

    def produce(self, acks: int, *values: bytes) -> None:
        """A Produce to the leader; the answer, when it comes, is appended to ``answers``."""
        records = MemoryRecords.with_records([(self.time.milliseconds(), None, v) for v in values])
        self.leader.append_records(30_000, acks, False, {self.tp: records}, self.answers.append)

    def replicas(self) -> None:
        """Each replica: its own log's LEO, the LEO the leader has learnt, the ISR, and its own HW."""
        partition = self.leader.get_partition(self.tp)
        table = Table(
            "broker", "role", "LEO (own log)", "LEO the leader knows", "in ISR", "caught up", "HW (own)"
        )
        for manager in self.brokers:
            replica = partition.get_replica(manager.broker_id)
            own = manager.get_partition(self.tp).get_replica()
            ago = self.time.milliseconds() - replica.last_caught_up_time_ms
            known = "unknown" if replica.log_end_offset < 0 else str(replica.log_end_offset)  # no fetch yet
            table.add_row(
                str(manager.broker_id),
                "leader" if manager is self.leader else "follower",
                str(own.log_end_offset),
                "(its own)" if manager is self.leader else known,
                "yes" if replica in partition.in_sync_replicas else "no",
                "-" if manager is self.leader else f"{ago:,} ms ago",
                str(own.high_watermark),
            )
        console.print(table)
