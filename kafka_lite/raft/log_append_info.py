"""What an append to the replicated log did: the first and last offsets it wrote.

Mirrors: org.apache.kafka.raft.LogAppendInfo (raft/src/main/java/org/apache/kafka/raft/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)

The Raft layer needs no more than the offsets: the leader moves its own fetch position to
``last_offset + 1`` and waits for the voters to fetch past it. The broker's richer
``kafka_lite.log.log.LogAppendInfo`` stays inside the log.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LogAppendInfo:
    first_offset: int
    last_offset: int
