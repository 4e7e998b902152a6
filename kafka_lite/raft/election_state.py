"""What a voter must remember across a restart: the epoch, and whom it elected or voted for in it.

Mirrors: org.apache.kafka.raft.ElectionState
         (raft/src/main/java/org/apache/kafka/raft/ElectionState.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: ``leader_id_opt``/``voted_id_opt`` are ``int | None`` where Kafka has ``OptionalInt``.

Raft's safety rests on two facts surviving a crash (the paper's Figure 2, "persistent state on all
servers"): ``currentTerm`` (Kafka's epoch) and ``votedFor``. A voter that forgot its vote could vote
twice in one epoch and let two leaders be elected. Kafka adds the known leader, so that a node
restarts as a follower of it, and the voter set, so that a node started with a different
``controller.quorum.voters`` notices. Every epoch state hands one of these to ``QuorumState``, which
writes it to the ``quorum-state`` file before the state takes effect.

Equality compares the epoch, the leader and the vote, not the voters, as Kafka's ``equals`` does.
"""

from __future__ import annotations

from collections.abc import Set

from kafka_lite.common.errors import IllegalArgumentException, IllegalStateException


class ElectionState:
    def __init__(
        self, epoch: int, leader_id_opt: int | None, voted_id_opt: int | None, voters: Set[int]
    ) -> None:
        self.epoch = epoch
        self.leader_id_opt = leader_id_opt
        self.voted_id_opt = voted_id_opt
        self._voters = frozenset(voters)

    @classmethod
    def with_voted_candidate(cls, epoch: int, voted_id: int, voters: Set[int]) -> ElectionState:
        if voted_id < 0:
            raise IllegalArgumentException(f"Illegal voted Id {voted_id}: must be non-negative")
        if voted_id not in voters:
            raise IllegalArgumentException(
                f"Voted candidate with id {voted_id} is not among the valid voters"
            )
        return cls(epoch, None, voted_id, voters)

    @classmethod
    def with_elected_leader(cls, epoch: int, leader_id: int, voters: Set[int]) -> ElectionState:
        if leader_id < 0:
            raise IllegalArgumentException(f"Illegal leader Id {leader_id}: must be non-negative")
        if leader_id not in voters:
            raise IllegalArgumentException(f"Leader with id {leader_id} is not among the valid voters")
        return cls(epoch, leader_id, None, voters)

    @classmethod
    def with_unknown_leader(cls, epoch: int, voters: Set[int]) -> ElectionState:
        return cls(epoch, None, None, voters)

    def is_leader(self, node_id: int) -> bool:
        if node_id < 0:
            raise IllegalArgumentException(f"Invalid negative nodeId: {node_id}")
        return self.leader_id_opt == node_id

    def is_voted_candidate(self, node_id: int) -> bool:
        if node_id < 0:
            raise IllegalArgumentException(f"Invalid negative nodeId: {node_id}")
        return self.voted_id_opt == node_id

    def leader_id(self) -> int:
        if self.leader_id_opt is None:
            raise IllegalStateException("Attempt to access nil leaderId")
        return self.leader_id_opt

    def voted_id(self) -> int:
        if self.voted_id_opt is None:
            raise IllegalStateException("Attempt to access nil votedId")
        return self.voted_id_opt

    def voters(self) -> frozenset[int]:
        return self._voters

    def has_leader(self) -> bool:
        return self.leader_id_opt is not None

    def has_voted(self) -> bool:
        return self.voted_id_opt is not None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ElectionState):
            return NotImplemented
        return (self.epoch, self.leader_id_opt, self.voted_id_opt) == (
            other.epoch,
            other.leader_id_opt,
            other.voted_id_opt,
        )

    def __hash__(self) -> int:
        return hash((self.epoch, self.leader_id_opt, self.voted_id_opt))

    def __repr__(self) -> str:
        return (
            f"Election(epoch={self.epoch}, leaderIdOpt={self.leader_id_opt}, votedIdOpt={self.voted_id_opt})"
        )
