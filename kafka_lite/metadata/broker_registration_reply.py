"""What the controller answers a broker's registration with: the broker epoch it was given.

Mirrors: org.apache.kafka.metadata.BrokerRegistrationReply
         (metadata/src/main/java/org/apache/kafka/metadata/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)

The epoch is the offset of the broker's RegisterBrokerRecord in the metadata log, so each
registration of a broker id has a larger one than the last; a heartbeat or an AlterPartition carrying
an older epoch comes from a process that has since been replaced, and is refused (STALE_BROKER_EPOCH).
In ZooKeeper mode Kafka 2.2 (KIP-380) takes the broker epoch from the zxid that created the broker's
ephemeral znode; the record's offset plays the same part here.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BrokerRegistrationReply:
    epoch: int
