"""A position in a Raft log named the way Raft names it: an offset and the epoch of the leader that
wrote the entry there.

Mirrors: org.apache.kafka.raft.OffsetAndEpoch (raft/src/main/java/org/apache/kafka/raft/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)

Two of these compare as Raft's "at least as up-to-date" does (the paper's 5.4.1): the later epoch
wins, and only within one epoch does the larger offset. A voter grants its vote to a candidate whose
last entry is not older than its own by this order, and a snapshot's id is one of these (the offset
it ends at and the epoch of the entry before it).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import total_ordering


@total_ordering
@dataclass(frozen=True)
class OffsetAndEpoch:
    offset: int
    epoch: int

    def __lt__(self, other: OffsetAndEpoch) -> bool:
        # Epoch first: an entry of a later leader is newer whatever its offset.
        if self.epoch == other.epoch:
            return self.offset < other.offset
        return self.epoch < other.epoch
