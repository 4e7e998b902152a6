"""The configs a run of ConfigRecords sets and deletes for one resource.

Mirrors: org.apache.kafka.image.ConfigurationDelta
         (metadata/src/main/java/org/apache/kafka/image/ConfigurationDelta.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)

A ``ConfigRecord`` with a null value deletes the key, kept as a change to None.
"""

from __future__ import annotations

from kafka_lite.common.metadata.records import ConfigRecord
from kafka_lite.metadata.image.configuration_image import ConfigurationImage


class ConfigurationDelta:
    def __init__(self, image: ConfigurationImage) -> None:
        self.image = image
        self.changes: dict[str, str | None] = {}  # None: the key is deleted

    def finish_snapshot(self) -> None:
        for name in self.image.data:
            self.changes.setdefault(name, None)

    def replay(self, record: ConfigRecord) -> None:
        self.changes[record.name] = record.value

    def delete_all(self) -> None:
        """Every key deleted: the resource's topic was removed."""
        self.changes = dict.fromkeys(self.image.data)

    def apply(self) -> ConfigurationImage:
        data = dict(self.image.data)
        for name, value in self.changes.items():
            if value is None:
                data.pop(name, None)
            else:
                data[name] = value
        return ConfigurationImage(data)

    def __repr__(self) -> str:
        return f"ConfigurationDelta(changed_keys={list(self.changes)})"
