"""What the controller answers a broker's heartbeat with, before it becomes the RPC's response.

Mirrors: org.apache.kafka.metadata.BrokerHeartbeatReply
         (metadata/src/main/java/org/apache/kafka/metadata/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BrokerHeartbeatReply:
    is_caught_up: bool  # the broker has replayed the metadata log up to the controller's committed offset
    is_fenced: bool  # the broker is still fenced (it may not lead or be in an ISR)
    in_controlled_shutdown: bool  # its leaderships are being moved away before it stops
    should_shut_down: bool  # it has nothing left to lead: it may stop now
