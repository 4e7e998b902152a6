"""A config validator: the list must have at least one item.

Mirrors: org.apache.kafka.connect.transforms.util.NonEmptyListValidator
         (connect/transforms/src/main/java/.../util/NonEmptyListValidator.java, Kafka 0.11.0)
Book:    chapter 8, 8.3 (beyond the book)
Differs: none.

``ValueToKey``'s and ``MaskField``'s ``fields`` are required lists; ``fields=`` (an empty one) would
be accepted as given and make the transformation do nothing, so it is refused instead.
"""

from __future__ import annotations

from typing import Any

from kafka_lite.common.errors import ConfigException


class NonEmptyListValidator:
    def __call__(self, name: str, value: Any) -> None:
        if value is None or len(value) == 0:
            raise ConfigException(name, value, "Empty list")

    def __str__(self) -> str:
        return "non-empty list"
