"""Creates a Streams application's internal topics: its repartition topics and its stores' changelogs.

Mirrors: org.apache.kafka.streams.processor.internals.InternalTopicManager and InternalTopicConfig
         (streams/src/main/java/.../processor/internals/, Kafka 0.10.2)
Book:    chapter 9, 9.1.4 (changelog topics), 9.2.2 (the repartition topic of a re-keyed stream)
Differs: Kafka 0.10.1's manager wrote the topics into ZooKeeper itself, as the broker's admin
         tools did; 0.10.2 sends CreateTopics to the controller, which is the way kafka_lite takes:
         a client library does not write ZooKeeper. Over kafka_lite's ``KafkaAdminClient``, which
         retries what is retriable, where 0.10.2 loops over ``StreamsKafkaClient`` up to five times.

The group leader's assignor calls ``make_ready`` in the middle of ``assign``: it has just computed
how many partitions each internal topic needs (a repartition topic as many as the widest source
topic of the sub-topology writing it, a changelog one per task), and the tasks it is about to hand
out read those partitions. A topic that already exists must have the expected count; one that does
not is created, a changelog compacted (only a key's latest value matters to restore a store), a
repartition topic with the ordinary delete policy (a record is read once, then useless).
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field

from kafka_lite.clients.admin import KafkaAdminClient, NewTopic
from kafka_lite.common.errors import Errors
from kafka_lite.streams.errors import StreamsException

log = logging.getLogger(__name__)


@dataclass
class InternalTopicConfig:
    """An internal topic's name, partition count and topic configs (``cleanup.policy``, ...)."""

    name: str
    num_partitions: int
    config: dict[str, str] = field(default_factory=dict)

    @classmethod
    def changelog(cls, name: str, num_partitions: int, config: dict[str, str]) -> InternalTopicConfig:
        # The store's supplier may ask for its own log configs; compaction is the default.
        return cls(name, num_partitions, {"cleanup.policy": "compact", **config})

    @classmethod
    def repartition(cls, name: str, num_partitions: int, config: dict[str, str]) -> InternalTopicConfig:
        return cls(name, num_partitions, {"cleanup.policy": "delete", **config})


class InternalTopicManager:
    def __init__(self, admin: KafkaAdminClient, replication_factor: int) -> None:
        self.admin = admin
        self.replication_factor = replication_factor
        # The instance's threads share one admin client, which sends one request at a time.
        self._lock = threading.Lock()

    def make_ready(self, topics: list[InternalTopicConfig]) -> None:
        """Check the internal topics that exist, create the ones that do not."""
        if not topics:
            return
        with self._lock:
            self._make_ready(topics)

    def _make_ready(self, topics: list[InternalTopicConfig]) -> None:
        cluster = self.admin.describe_cluster()
        missing = []
        for topic in topics:
            existing = cluster.partition_count_for_topic(topic.name)
            if existing is None:
                missing.append(topic)
            elif existing != topic.num_partitions:
                raise StreamsException(
                    f"Existing internal topic {topic.name} has invalid partitions. Expected: "
                    f"{topic.num_partitions} Actual: {existing}. Use 'kafka-lite streams reset' to "
                    "clean up invalid topics before processing."
                )
        if not missing:
            return
        log.info("Creating internal topics %s", [(t.name, t.num_partitions) for t in missing])
        for topic in missing:
            try:
                self.admin.create_topics(
                    [
                        NewTopic(
                            topic.name, topic.num_partitions, self.replication_factor, configs=topic.config
                        )
                    ]
                )
            except Errors.TOPIC_ALREADY_EXISTS.exception_class:
                # Another instance's leader (of an earlier generation) created it meanwhile.
                log.debug("Internal topic %s was created by someone else", topic.name)
