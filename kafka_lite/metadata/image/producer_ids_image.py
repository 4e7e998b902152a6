"""The next producer id block's start at one offset of the metadata log.

Mirrors: org.apache.kafka.image.ProducerIdsImage
         (metadata/src/main/java/org/apache/kafka/image/ProducerIdsImage.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)

Chapter 9's ``/latest_producer_id_block`` znode as one number: the first id of the next block the
controller hands out (-1 before any). Only that number matters for a snapshot, so ``write`` emits
one ``ProducerIdsRecord`` with no broker (-1) in it, as Kafka's does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from kafka_lite.common.metadata.api_message_and_version import ApiMessageAndVersion
from kafka_lite.common.metadata.records import ProducerIdsRecord


@dataclass(frozen=True)
class ProducerIdsImage:
    EMPTY: ClassVar[ProducerIdsImage]

    next_producer_id: int = -1

    def is_empty(self) -> bool:
        return self.next_producer_id < 0

    def write(self, out: list[ApiMessageAndVersion]) -> None:
        if self.next_producer_id >= 0:
            record = ProducerIdsRecord(broker_id=-1, broker_epoch=-1, next_producer_id=self.next_producer_id)
            out.append(ApiMessageAndVersion(record, 0))


ProducerIdsImage.EMPTY = ProducerIdsImage()
