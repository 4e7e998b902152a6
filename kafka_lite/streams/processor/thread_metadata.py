"""What one stream thread of a running application holds: its active and standby tasks.

Mirrors: org.apache.kafka.streams.processor.ThreadMetadata and TaskMetadata
         (streams/src/main/java/org/apache/kafka/streams/processor/, Kafka 1.0, KIP-130)
Book:    chapter 9, 9.1.3 (the thread model)
Differs: Kafka 0.10.1 has no such view (``KafkaStreams.toString`` prints the tasks); 1.0 added
         ``localThreadsMetadata()``, which kafka_lite's ``KafkaStreams`` offers so a guide or a
         notebook can draw the thread model of a running instance.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafka_lite.common.topic_partition import TopicPartition


@dataclass(frozen=True)
class TaskMetadata:
    """A task by its id (``"0_1"``: sub-topology 0, partition 1) and the partitions it reads."""

    task_id: str
    topic_partitions: frozenset[TopicPartition]


@dataclass(frozen=True)
class ThreadMetadata:
    """A stream thread by name, its state, and the tasks it runs (active) or keeps warm (standby)."""

    thread_name: str
    thread_state: str
    active_tasks: frozenset[TaskMetadata]
    standby_tasks: frozenset[TaskMetadata]
