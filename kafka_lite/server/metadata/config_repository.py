"""Where a broker reads a topic's dynamic configs from: ZooKeeper on a ZooKeeper broker, the
metadata image on a KRaft broker.

Mirrors: kafka.server.metadata.ConfigRepository and ZkConfigRepository
         (core/src/main/scala/kafka/server/metadata/ConfigRepository.scala and
         ZkConfigRepository.scala, Kafka 3.3.0)
Book:    beyond the book, chapter 12
Differs: the repository also answers whether the topic exists (``contains``), from the same source
         as its configs; Kafka 3.3's ``ConfigHelper`` asks the metadata cache. A ZooKeeper broker
         thus describes a topic as soon as its znode is written, as kafka_lite's 0.11 path did.

``AdminManager.describe_configs`` builds DescribeConfigs' entries (the broker's defaults with the
topic's overrides over them, each with its source and synonyms) from a repository, so the ZooKeeper
broker and the KRaft broker answer with the same entries. ``KRaftMetadataCache`` is the KRaft
broker's repository, as Kafka 3.3's ``KRaftMetadataCache`` extends ``ConfigRepository``: its topic
configs are the image's ``ConfigurationsImage``, the ``ConfigRecord``s replayed so far.
"""

from __future__ import annotations

from typing import Protocol

from kafka_lite.zk.zk_utils import ZkUtils


class ConfigRepository(Protocol):
    def contains(self, topic: str) -> bool:
        """Whether the topic exists."""

    def topic_config(self, topic: str) -> dict[str, str]:
        """The topic's overrides of the broker's log defaults; none for a topic without any."""


class ZkConfigRepository:
    """A ZooKeeper broker's: ``/brokers/topics/<t>`` for existence, ``/config/topics/<t>`` for the
    overrides."""

    def __init__(self, zk_utils: ZkUtils) -> None:
        self.zk_utils = zk_utils

    def contains(self, topic: str) -> bool:
        return topic in self.zk_utils.get_all_topics()

    def topic_config(self, topic: str) -> dict[str, str]:
        return self.zk_utils.get_topic_config(topic)
