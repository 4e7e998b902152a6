"""The next producer id a run of ProducerIdsRecords leaves on top of a ProducerIdsImage.

Mirrors: org.apache.kafka.image.ProducerIdsDelta
         (metadata/src/main/java/org/apache/kafka/image/ProducerIdsDelta.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
"""

from __future__ import annotations

from kafka_lite.common.metadata.records import ProducerIdsRecord
from kafka_lite.metadata.image.producer_ids_image import ProducerIdsImage


class ProducerIdsDelta:
    def __init__(self, image: ProducerIdsImage) -> None:
        self.next_producer_id = image.next_producer_id

    def finish_snapshot(self) -> None:
        pass  # a snapshot's ProducerIdsRecord (if any) already set the whole state

    def replay(self, record: ProducerIdsRecord) -> None:
        self.next_producer_id = record.next_producer_id

    def apply(self) -> ProducerIdsImage:
        return ProducerIdsImage(self.next_producer_id)

    def __repr__(self) -> str:
        return f"ProducerIdsDelta(next_producer_id={self.next_producer_id})"
