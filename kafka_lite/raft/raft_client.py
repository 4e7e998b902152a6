"""What a state machine sees of the Raft quorum: append in its epoch, be told what is committed and
who leads.

Mirrors: org.apache.kafka.raft.RaftClient and RaftClient.Listener, LeaderAndEpoch, Batch,
         org.apache.kafka.raft.errors.NotLeaderException
         (raft/src/main/java/org/apache/kafka/raft/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: ``handle_commit`` gets a list of ``Batch``, and the client counts it read when it hands it
         over. Kafka's listener gets a ``BatchReader`` and must close it: only the close moves the
         listener's acknowledged offset, and a new leader's ``handle_leader_change`` waits for
         that offset to reach its epoch's start. What this costs: no back-pressure (Kafka sends a
         listener no more log until it has closed a reader whose end it could not know beforehand;
         here a slow state machine's own queue grows instead), and the leader's promise below
         holds only for a listener that applies its callbacks in the order it gets them. Records
         are whatever the serde gives back.

The listener's three callbacks all run on the Raft thread, in log order:

* ``handle_commit(batches)``: batches now below the high watermark, each once, in offset order;
* ``handle_snapshot(reader)``: the listener is behind the log start, so it loads the latest snapshot
  (a ``RecordsSnapshotReader``: batches of the state machine's records) before any further commit;
  a leader never gets one, since it has applied everything up to its epoch's start before it leads;
* ``handle_leader_change(leader)``: a new leader or epoch. For this node's own election it fires
  only once the listener has been handed everything up to the epoch's start, so a state machine
  that applies its callbacks in order (on the Raft thread, or queued in order to a thread of its
  own, as the quorum controller and the broker's metadata listener do) has applied everything
  committed before it starts writing as leader.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Protocol

from kafka_lite.common.errors import KafkaException


class NotLeaderException(KafkaException):
    """An append to a node that is not (or no longer) the leader of the epoch given."""


@dataclass(frozen=True)
class LeaderAndEpoch:
    leader_id: int | None
    epoch: int

    def is_leader(self, node_id: int) -> bool:
        return self.leader_id == node_id


@dataclass(frozen=True)
class Batch:
    """Committed records as the state machine reads them; a control batch has no records."""

    base_offset: int
    epoch: int
    append_timestamp: int
    last_offset: int
    records: list[Any] = field(default_factory=list)
    is_control: bool = False


class RecordSerde(Protocol):
    def serialize(self, record: Any) -> bytes: ...

    def deserialize(self, data: bytes) -> Any: ...


class Listener(ABC):
    @abstractmethod
    def handle_commit(self, batches: list[Batch]) -> None: ...

    @abstractmethod
    def handle_snapshot(self, reader: Any) -> None: ...

    def handle_leader_change(self, leader: LeaderAndEpoch) -> None:  # noqa: B027 - optional, as Kafka's default
        pass

    def begin_shutdown(self) -> None:  # noqa: B027 - optional, as Kafka's default
        pass


class RaftClient(ABC):
    @abstractmethod
    def initialize(self) -> None: ...

    @abstractmethod
    def register(self, listener: Listener) -> None: ...

    @abstractmethod
    def leader_and_epoch(self) -> LeaderAndEpoch: ...

    def high_watermark(self) -> int | None:
        """The high watermark this node knows, None before it knows one (Kafka's ``OptionalLong``)."""
        return None

    @abstractmethod
    def schedule_append(self, epoch: int, records: list[Any]) -> int: ...

    @abstractmethod
    def schedule_atomic_append(self, epoch: int, records: list[Any]) -> int:
        """As ``schedule_append``, all in one batch: committed together or not at all (the quorum
        controller appends each result this way, so no reader sees half of one)."""

    @abstractmethod
    def resign(self, epoch: int) -> None: ...

    @abstractmethod
    def create_snapshot(self, snapshot_id: Any, last_contained_log_time: int) -> Any:
        """A ``RecordsSnapshotWriter`` for the state up to ``snapshot_id`` (an ``OffsetAndEpoch``:
        the first offset not contained, and the epoch of the last contained), or None if it exists."""

    @abstractmethod
    def shutdown(self, timeout_ms: int) -> Any: ...
