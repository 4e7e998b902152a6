"""How far a read of the replicated log may go: to the high watermark, or to the log end.

Mirrors: org.apache.kafka.raft.Isolation (raft/src/main/java/org/apache/kafka/raft/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)

A follower fetching from the leader reads UNCOMMITTED: it must copy entries before they can be
committed. The state machine above Raft (the controller, the brokers' metadata cache) reads
COMMITTED, since only entries below the high watermark survive any leader change.
"""

from __future__ import annotations

import enum


class Isolation(enum.Enum):
    COMMITTED = "COMMITTED"
    UNCOMMITTED = "UNCOMMITTED"
