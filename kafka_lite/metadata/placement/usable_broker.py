"""A broker a replica may be placed on.

Mirrors: org.apache.kafka.metadata.placement.UsableBroker
         (metadata/src/main/java/org/apache/kafka/metadata/placement/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)

"Usable" means registered and not in controlled shutdown: a fenced broker is still usable for a
follower replica (it may come back), never for a new partition's leader.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class UsableBroker:
    id: int
    rack: str | None
    fenced: bool
