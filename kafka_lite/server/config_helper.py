"""A KRaft broker's admin manager: DescribeConfigs answered from the metadata image, as Kafka 3.3 does.

Mirrors: kafka.server.ConfigHelper (core/src/main/scala/kafka/server/ConfigHelper.scala, Kafka 3.3.0),
         its describeConfigs of a topic
Book:    beyond the book: chapter 12 (KRaft)
Differs: it is chapter 7's ``AdminManager`` with its topic lookup replaced, not a class of its own
         beside it, since the rest of DescribeConfigs (defaults, overrides, synonyms) is the same;
         an unknown topic's error carries a message (3.3's has none).

A KRaft broker changes no metadata itself: CreateTopics, DeleteTopics, CreatePartitions and
AlterConfigs are forwarded to the active controller (``forwarding_manager.py``). DescribeConfigs it
answers, from the config records its metadata image holds (``KRaftMetadataCache`` is its config
repository).
"""

from __future__ import annotations

from kafka_lite.common.errors import Errors
from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.server.admin_manager import AdminManager
from kafka_lite.server.kafka_config import KafkaConfig
from kafka_lite.server.metadata.kraft_metadata_cache import KRaftMetadataCache


class KRaftAdminManager(AdminManager):
    """A KRaft broker's: it answers DescribeConfigs only, from its metadata image (every request
    that writes goes to the controller), and a topic the image does not have is
    UNKNOWN_TOPIC_OR_PARTITION, as Kafka 3.3's ``ConfigHelper.describeConfigs`` answers (Kafka 2.0
    began asking the metadata cache first), where 0.11 describes the defaults of any name."""

    def __init__(self, config: KafkaConfig, metadata_cache: KRaftMetadataCache, time: Time = SYSTEM) -> None:
        super().__init__(config, metadata_cache, None, time, config_repository=metadata_cache)

    def _topic_overrides(self, topic: str) -> dict[str, str]:
        if not self.config_repository.contains(topic):
            raise Errors.UNKNOWN_TOPIC_OR_PARTITION.exception(f"Topic '{topic}' does not exist.")
        return self.config_repository.topic_config(topic)
