"""Blocks of producer ids, handed to brokers through the metadata log.

Mirrors: org.apache.kafka.controller.ProducerIdControlManager and
         org.apache.kafka.server.common.ProducerIdsBlock (metadata/ and server-common/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft); the idempotent producer's ids (KIP-98) are chapter 2's
Differs: none in what it does.

An idempotent or transactional producer needs a producer id no other producer has (KIP-98). In
ZooKeeper mode each broker claims a block of 1000 ids by a conditional write to the
``/latest_producer_id_block`` znode (kafka_lite's server/producer_id_manager.py). In KRaft a broker
asks the controller (AllocateProducerIds, KIP-730), which writes a ``ProducerIdsRecord`` holding the
first id of the *next* block: the log is the counter, so a new controller continues where the last
one stopped and no id is handed out twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kafka_lite.common.errors import Errors
from kafka_lite.common.metadata import ProducerIdsRecord
from kafka_lite.common.metadata.api_message_and_version import ApiMessageAndVersion
from kafka_lite.metadata.controller.controller_result import ControllerResult
from kafka_lite.metadata.timeline import LATEST_EPOCH, SnapshotRegistry, TimelineLong, TimelineObject

PRODUCER_ID_BLOCK_SIZE = 1000
LONG_MAX = 2**63 - 1


@dataclass(frozen=True)
class ProducerIdsBlock:
    """``size`` ids from ``first_producer_id``, assigned to one broker."""

    assigned_broker_id: int
    first_producer_id: int
    size: int

    def last_producer_id(self) -> int:
        return self.first_producer_id + self.size - 1

    def next_block_first_id(self) -> int:
        return self.first_producer_id + self.size


ProducerIdsBlock.EMPTY = ProducerIdsBlock(-1, 0, 0)  # type: ignore[attr-defined]


class ProducerIdControlManager:
    def __init__(self, cluster_control: Any, snapshot_registry: SnapshotRegistry) -> None:
        self._cluster_control = cluster_control
        # The block last handed out; its first id is where the next block starts.
        self._next_producer_block: TimelineObject = TimelineObject(snapshot_registry, ProducerIdsBlock.EMPTY)
        self._broker_epoch = TimelineLong(snapshot_registry)

    # --8<-- [start:generate_next_producer_id]
    def generate_next_producer_id(
        self, broker_id: int, broker_epoch: int
    ) -> ControllerResult[ProducerIdsBlock]:
        # A broker from a stale session (fenced and re-registered since) is refused: its request may
        # be a retry of one already answered to its newer self.
        self._cluster_control.check_broker_epoch(broker_id, broker_epoch)
        first_producer_id = self._next_producer_block.get().first_producer_id
        if first_producer_id > LONG_MAX - PRODUCER_ID_BLOCK_SIZE:
            raise Errors.UNKNOWN.exception(
                "Exhausted all producerIds as the next block's end producerId has exceeded the int64 type limit"
            )
        block = ProducerIdsBlock(broker_id, first_producer_id, PRODUCER_ID_BLOCK_SIZE)
        record = ProducerIdsRecord(
            broker_id=broker_id, broker_epoch=broker_epoch, next_producer_id=block.next_block_first_id()
        )
        return ControllerResult.of([ApiMessageAndVersion(record, 0)], block)

    # --8<-- [end:generate_next_producer_id]

    def replay(self, record: ProducerIdsRecord) -> None:
        current_next_producer_id = self._next_producer_block.get().first_producer_id
        if record.next_producer_id <= current_next_producer_id:
            # The counter only moves forward; a record that would move it back means two
            # controllers handed out the same block.
            raise RuntimeError(
                f"Next Producer ID from replayed record ({record.next_producer_id}) is not greater than current "
                f"next Producer ID ({current_next_producer_id})"
            )
        self._next_producer_block.set(
            ProducerIdsBlock(record.broker_id, record.next_producer_id, PRODUCER_ID_BLOCK_SIZE)
        )
        self._broker_epoch.set(record.broker_epoch)

    def next_producer_id(self, epoch: int = LATEST_EPOCH) -> int:
        return self._next_producer_block.get(epoch).first_producer_id
