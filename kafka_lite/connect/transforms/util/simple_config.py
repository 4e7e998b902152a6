"""A transformation's settings, parsed by its ``ConfigDef``.

Mirrors: org.apache.kafka.connect.transforms.util.SimpleConfig
         (connect/transforms/src/main/java/.../util/SimpleConfig.java, Kafka 0.11.0)
Book:    chapter 8, 8.3 (beyond the book)
Differs: the typed getters (``get_string``, ``get_list`` ...) are Kafka's ``AbstractConfig``'s;
         kafka_lite's ``AbstractConfig`` has only ``get``, so they are spelled out here.

Kafka's ``SimpleConfig`` is an ``AbstractConfig`` and nothing more: a transformation parses its
settings with it in ``configure``, so a missing required setting or a bad value is a
``ConfigException`` before the first record, naming the setting. Unknown settings are kept, not
rejected, as Kafka's ``AbstractConfig`` keeps them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kafka_lite.common.config import AbstractConfig, ConfigDef


class SimpleConfig(AbstractConfig):
    def __init__(self, config_def: ConfigDef, originals: Mapping[str, Any]) -> None:
        super().__init__(config_def, originals)

    def get_string(self, name: str) -> str | None:
        return self.get(name)

    def get_int(self, name: str) -> int | None:
        return self.get(name)

    def get_list(self, name: str) -> list[str] | None:
        return self.get(name)
