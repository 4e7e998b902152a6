"""Whether a partition's leader is still recovering from an unclean election (KIP-704).

Mirrors: org.apache.kafka.metadata.LeaderRecoveryState
         (metadata/src/main/java/org/apache/kafka/metadata/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)

A leader elected from outside the ISR (``unclean.leader.election.enable``) may lack records the old
ISR had acknowledged. Kafka 3.2 marks such a partition RECOVERING until its leader says it has
recovered, and refuses to grow the ISR meanwhile, so that no follower is counted in sync with a log
that may yet be truncated. A clean election leaves it RECOVERED. In a PartitionChangeRecord, -1
(``NO_CHANGE``, the field's default) means the state did not change.
"""

from __future__ import annotations

import enum


class LeaderRecoveryState(enum.IntEnum):
    RECOVERED = 0  # elected from the ISR, or recovered from an unclean election
    RECOVERING = 1  # elected uncleanly and still recovering

    # A PartitionChangeRecord's "did not change"; not a state of its own.
    NO_CHANGE = enum.nonmember(-1)

    @staticmethod
    def of(value: int) -> LeaderRecoveryState:
        state = LeaderRecoveryState.optional_of(value)
        if state is None:
            raise ValueError(f"Value {value} is not a valid leader recovery state")
        return state

    @staticmethod
    def optional_of(value: int) -> LeaderRecoveryState | None:
        try:
            return LeaderRecoveryState(value)
        except ValueError:
            return None

    def change_to(self, value: int) -> LeaderRecoveryState:
        """The state after a PartitionChangeRecord's ``leader_recovery_state`` (-1: this one)."""
        if value == LeaderRecoveryState.NO_CHANGE:
            return self
        return LeaderRecoveryState.of(value)
