"""Which partitions make up each task: one task per sub-topology and partition number.

Mirrors: org.apache.kafka.streams.processor.DefaultPartitionGrouper
         (streams/src/main/java/org/apache/kafka/streams/processor/DefaultPartitionGrouper.java,
         Kafka 0.10.1)
Book:    chapter 9, 9.1.3 (threads and tasks)

A sub-topology whose source topics have at most N partitions becomes N tasks; task ``g_p`` reads
partition ``p`` of every source topic of group ``g`` that has a partition ``p``. Topics of one group
are expected to be co-partitioned (the assignor checks the joined ones); if they are not, the group
still gets the *largest* count of tasks, and the tasks past a smaller topic's end simply do not read it.
"""

from __future__ import annotations

from collections.abc import Mapping, Set

from kafka_lite.clients.metadata import Cluster
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.streams.errors import StreamsException
from kafka_lite.streams.processor.task_id import TaskId


class DefaultPartitionGrouper:
    """Kafka's ``PartitionGrouper`` default: tasks by (topic group, partition number)."""

    def partition_groups(
        self, topic_groups: Mapping[int, Set[str]], metadata: Cluster
    ) -> dict[TaskId, frozenset[TopicPartition]]:
        """Every task of every topic group, with the partitions it reads (Kafka's ``partitionGroups``)."""
        groups: dict[TaskId, frozenset[TopicPartition]] = {}
        for topic_group_id, topic_group in sorted(topic_groups.items()):
            max_num_partitions = self.max_num_partitions(metadata, topic_group)
            for partition_id in range(max_num_partitions):
                groups[TaskId(topic_group_id, partition_id)] = frozenset(
                    TopicPartition(topic, partition_id)
                    for topic in topic_group
                    if partition_id < len(metadata.partitions_for_topic(topic))
                )
        return groups

    def max_num_partitions(self, metadata: Cluster, topics: Set[str]) -> int:
        """The largest partition count among ``topics``; a topic the metadata lacks is an error."""
        max_num_partitions = 0
        for topic in topics:
            num_partitions = metadata.partition_count_for_topic(topic)
            if num_partitions is None:
                raise StreamsException(f"Topic not found during partition assignment: {topic}")
            max_num_partitions = max(max_num_partitions, num_partitions)
        return max_num_partitions
