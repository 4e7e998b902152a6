"""A resource whose configs the metadata log holds: a topic, or a broker (the empty name being the
cluster-wide default).

Mirrors: org.apache.kafka.common.config.ConfigResource (clients/src/main/java/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: the metadata module's own, frozen, with the types a ConfigRecord carries; the admin client
         keeps kafka-python's mutable one (``kafka_lite.clients.admin.ConfigResource``), which also
         carries the configs to describe or set.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import ClassVar


class ConfigResourceType(enum.IntEnum):
    """The kinds of resource a config belongs to, with their ids on the wire and in ConfigRecord."""

    UNKNOWN = 0
    TOPIC = 2
    BROKER = 4
    BROKER_LOGGER = 8


@dataclass(frozen=True)
class ConfigResource:
    """A topic or a broker whose configs are set (Kafka's ``ConfigResource``). A BROKER with an
    empty name is the cluster-wide default every broker falls back to."""

    Type: ClassVar[type[ConfigResourceType]] = ConfigResourceType

    type: ConfigResourceType
    name: str

    def is_default(self) -> bool:
        return self.name == ""
