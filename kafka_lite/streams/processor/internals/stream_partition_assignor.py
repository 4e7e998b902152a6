"""The group leader's Streams assignor: tasks, not partitions, spread over the application's instances.

Mirrors: org.apache.kafka.streams.processor.internals.StreamPartitionAssignor
         (streams/src/main/java/.../processor/internals/StreamPartitionAssignor.java, Kafka 0.10.1)
Book:    chapter 9, 9.1.3 (threads and tasks)
Differs: the builder, process id, previous and cached tasks come through the constructor (and the
         two task sets as attributes the stream thread sets before a rebalance), where Kafka's
         ``configure`` takes them from the ``StreamThread``; the internal topics are made ready
         through an ``InternalTopicManager`` over CreateTopics (0.10.2's way; 0.10.1 wrote
         ZooKeeper), and without one (a unit test, the test driver) ``assign`` only computes them
         (``internal_topics``); no regex subscriptions. Members, tasks and partitions are handled in
         sorted order, where Kafka iterates ``HashMap``s.

Every thread of every instance of a Streams application joins one consumer group, protocol
``"stream"``. Each sends a ``SubscriptionInfo``: its instance's process id, the tasks it ran and the
tasks it has state for. The leader runs ``assign``:

1. members by process id; an instance's capacity is its number of threads (members);
2. the topology's ``topic_groups()``; each internal (repartition) topic gets as many partitions as the
   largest source topic of the sub-topology that writes it; co-partitioned topics (a join's two
   sides) must have equal counts, and a repartition topic among them takes that count; the
   repartition topics are created if missing;
3. the tasks from the ``DefaultPartitionGrouper``: one per (sub-topology, partition); each store's
   changelog is created with one partition per task of its sub-topology;
4. the ``TaskAssignor`` spreads tasks over instances (sticky, balanced by capacity, standbys apart);
5. each instance's tasks are dealt round-robin over its threads, active first, then standby; each
   thread's ``Assignment`` has its active tasks' partitions, sorted, and an ``AssignmentInfo`` whose
   active task list is aligned with them.

Every member then runs ``on_assignment``, which pairs its sorted partitions with the active task list.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable, Mapping

from kafka_lite.clients.metadata import Cluster, PartitionInfo
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.consumer.internals.consumer_protocol import Assignment, Subscription
from kafka_lite.consumer.internals.partition_assignor import PartitionAssignor
from kafka_lite.streams.errors import TaskAssignmentException, TopologyBuilderException
from kafka_lite.streams.processor.default_partition_grouper import DefaultPartitionGrouper
from kafka_lite.streams.processor.internals.assignment.assignment_info import AssignmentInfo
from kafka_lite.streams.processor.internals.assignment.client_state import ClientState
from kafka_lite.streams.processor.internals.assignment.subscription_info import SubscriptionInfo
from kafka_lite.streams.processor.internals.assignment.task_assignor import TaskAssignor
from kafka_lite.streams.processor.internals.internal_topic_manager import (
    InternalTopicConfig,
    InternalTopicManager,
)
from kafka_lite.streams.processor.task_id import TaskId
from kafka_lite.streams.processor.topology_builder import TopicsInfo, TopologyBuilder
from kafka_lite.streams.state.host_info import HostInfo

log = logging.getLogger(__name__)


class StreamPartitionAssignor(PartitionAssignor):
    """Kafka's ``StreamPartitionAssignor``: a ``PartitionAssignor`` named ``"stream"``."""

    def __init__(
        self,
        builder: TopologyBuilder,
        process_id: uuid.UUID,
        *,
        thread_name: str = "StreamThread-1",
        num_standby_replicas: int = 0,
        user_end_point: str | None = None,
        prev_tasks: Iterable[TaskId] = (),
        cached_tasks: Iterable[TaskId] = (),
        partition_grouper: DefaultPartitionGrouper | None = None,
        internal_topic_manager: InternalTopicManager | None = None,
    ) -> None:
        self.builder = builder
        self.process_id = process_id
        self.thread_name = thread_name
        self.num_standby_replicas = num_standby_replicas
        self.user_end_point = user_end_point
        # What the stream thread ran before, and what it has state for on disk.
        self.prev_tasks = set(prev_tasks)
        self.cached_tasks = set(cached_tasks)
        self.partition_grouper = partition_grouper or DefaultPartitionGrouper()
        self.internal_topic_manager = internal_topic_manager
        self._internal_topics: dict[str, int] = {}
        self._partition_to_task_ids: dict[TopicPartition, set[TaskId]] = {}
        self._standby_tasks: dict[TaskId, frozenset[TopicPartition]] = {}
        self._partitions_by_host: dict[HostInfo, frozenset[TopicPartition]] = {}

    def name(self) -> str:
        return "stream"

    def subscription(self, topics: Iterable[str]) -> Subscription:
        # The standby candidates are the cached tasks the thread did not run as active ones.
        data = SubscriptionInfo(
            self.process_id,
            frozenset(self.prev_tasks),
            frozenset(self.cached_tasks - self.prev_tasks),
            self.user_end_point,
        )
        return Subscription(sorted(topics), data.encode())

    # -- the leader ------------------------------------------------------------------------------------

    def assign(self, metadata: Cluster, subscriptions: Mapping[str, Subscription]) -> dict[str, Assignment]:
        # Step 1: the threads (consumers) of each instance, and each instance's state.
        consumers_by_client: dict[uuid.UUID, list[str]] = {}
        states: dict[uuid.UUID, ClientState] = {}
        end_points: dict[uuid.UUID, HostInfo] = {}
        for consumer_id, subscription in sorted(subscriptions.items()):
            info = SubscriptionInfo.decode(subscription.user_data)
            if info.user_end_point is not None:
                end_points[info.process_id] = HostInfo.parse(info.user_end_point)
            consumers_by_client.setdefault(info.process_id, []).append(consumer_id)
            state = states.setdefault(info.process_id, ClientState())
            state.prev_active_tasks |= info.prev_tasks
            state.prev_assigned_tasks |= info.prev_tasks | info.standby_tasks
            state.capacity += 1

        # Step 2: the partition counts of the internal topics, and the co-partitioning check.
        topic_groups = self.builder.topic_groups()
        repartition_topics = self.repartition_topic_partitions(topic_groups, metadata)
        for copartition_group in self.builder.copartition_groups():
            self.ensure_copartitioning(copartition_group, repartition_topics, metadata)
        self._prepare_topics(
            InternalTopicConfig.repartition(topic, count, _topic_config(topic_groups, topic))
            for topic, count in repartition_topics.items()
        )
        metadata_with_internal_topics = _with_topics(metadata, repartition_topics)

        # Step 3: the tasks.
        source_topic_groups = {group_id: info.source_topics for group_id, info in topic_groups.items()}
        partitions_for_task = self.partition_grouper.partition_groups(
            source_topic_groups, metadata_with_internal_topics
        )
        changelog_topics = _changelog_topic_partitions(topic_groups, partitions_for_task)
        self._prepare_topics(
            InternalTopicConfig.changelog(topic, count, _topic_config(topic_groups, topic))
            for topic, count in changelog_topics.items()
        )
        self._internal_topics = {**repartition_topics, **changelog_topics}

        # Step 4: tasks to instances.
        states = TaskAssignor.assign(states, set(partitions_for_task), self.num_standby_replicas)

        # Step 5: each instance's tasks to its threads.
        partitions_by_host: dict[HostInfo, set[TopicPartition]] = {}
        for process_id, state in states.items():
            if process_id in end_points:
                host = partitions_by_host.setdefault(end_points[process_id], set())
                for task_id in state.active_tasks:
                    host.update(partitions_for_task[task_id])
        frozen_by_host = {host: frozenset(partitions) for host, partitions in partitions_by_host.items()}

        assignment: dict[str, Assignment] = {}
        for process_id, consumers in consumers_by_client.items():
            state = states[process_id]
            active = sorted(state.active_tasks)
            task_ids = active + sorted(state.standby_tasks())
            for i, consumer in enumerate(consumers):
                mine = task_ids[i :: len(consumers)]
                assigned = sorted(
                    (partition, task_id)
                    for task_id in mine
                    if task_id in state.active_tasks
                    for partition in partitions_for_task[task_id]
                )
                standby = {
                    task_id: partitions_for_task[task_id]
                    for task_id in mine
                    if task_id not in state.active_tasks
                }
                info = AssignmentInfo([task_id for _, task_id in assigned], standby, frozen_by_host)
                assignment[consumer] = Assignment([partition for partition, _ in assigned], info.encode())
        return assignment

    def repartition_topic_partitions(
        self, topic_groups: Mapping[int, TopicsInfo], metadata: Cluster
    ) -> dict[str, int]:
        """Each internal source topic's partition count: the largest count among the source topics
        of the sub-topologies that write to it (one internal topic may feed another, so repeat until
        every count is known)."""
        internal = {topic for info in topic_groups.values() for topic in info.inter_source_topics}
        counts: dict[str, int] = {}
        progress = True
        while progress and len(counts) < len(internal):
            progress = False
            for topic in sorted(internal - counts.keys()):
                num_partitions = self._writers_max_partitions(topic, topic_groups, internal, counts, metadata)
                if num_partitions is not None:
                    counts[topic] = num_partitions
                    progress = True
        unknown = sorted(internal - counts.keys())
        if unknown:
            raise TopologyBuilderException(
                f"stream-thread [{self.thread_name}] Could not find the number of partitions of internal "
                f"topics {unknown}"
            )
        return counts

    @staticmethod
    def _writers_max_partitions(
        topic: str,
        topic_groups: Mapping[int, TopicsInfo],
        internal: set[str],
        counts: Mapping[str, int],
        metadata: Cluster,
    ) -> int | None:
        num_partitions = None
        for info in topic_groups.values():
            if topic not in info.sink_topics:
                continue
            for source in info.source_topics:
                if source in internal and source not in counts:
                    return None  # its writer's count is not known yet
                partitions = (
                    counts[source] if source in internal else metadata.partition_count_for_topic(source)
                )
                if partitions is not None and (num_partitions is None or partitions > num_partitions):
                    num_partitions = partitions
        return num_partitions

    def ensure_copartitioning(
        self, copartition_group: frozenset[str], internal_topics: dict[str, int], metadata: Cluster
    ) -> None:
        """Raise unless the group's external topics have one partition count; give the group's
        internal topics that count (or, with no external topic, the largest of theirs)."""
        num_partitions = None
        for topic in sorted(copartition_group - internal_topics.keys()):
            count = metadata.partition_count_for_topic(topic)
            if count is None:
                raise TopologyBuilderException(
                    f"stream-thread [{self.thread_name}] External source topic not found: {topic}"
                )
            if num_partitions is None:
                num_partitions = count
            elif num_partitions != count:
                raise TopologyBuilderException(
                    f"stream-thread [{self.thread_name}] Topics not copartitioned: "
                    f"[{','.join(sorted(copartition_group))}]"
                )
        internal_in_group = copartition_group & internal_topics.keys()
        if num_partitions is None:
            num_partitions = max((internal_topics[topic] for topic in internal_in_group), default=None)
        for topic in internal_in_group:
            internal_topics[topic] = num_partitions

    def _prepare_topics(self, topics: Iterable[InternalTopicConfig]) -> None:
        if self.internal_topic_manager is not None:
            self.internal_topic_manager.make_ready(sorted(topics, key=lambda t: t.name))

    def internal_topics(self) -> dict[str, int]:
        """The internal topics the last ``assign`` needs, repartition and changelog, with their
        partition counts."""
        return dict(self._internal_topics)

    # -- every member ----------------------------------------------------------------------------------

    def on_assignment(self, assignment: Assignment) -> None:
        partitions = sorted(assignment.partitions)
        info = AssignmentInfo.decode(assignment.user_data)
        if len(partitions) > len(info.active_tasks):
            raise TaskAssignmentException(
                f"stream-thread [{self.thread_name}] failed to find a task id for the partition="
                f"{partitions[len(info.active_tasks)]}, partitions={len(partitions)}, assignmentInfo="
                f"[version={info.version}, active tasks={len(info.active_tasks)}, "
                f"standby tasks={len(info.standby_tasks)}]"
            )
        self._partition_to_task_ids = {}
        for partition, task_id in zip(partitions, info.active_tasks):
            self._partition_to_task_ids.setdefault(partition, set()).add(task_id)
        self._standby_tasks = dict(info.standby_tasks)
        self._partitions_by_host = dict(info.partitions_by_host)

    def tasks_for_partition(self, partition: TopicPartition) -> set[TaskId]:
        return set(self._partition_to_task_ids.get(partition, ()))

    def active_tasks(self) -> dict[TaskId, set[TopicPartition]]:
        """This thread's active tasks, each with the partitions it reads."""
        tasks: dict[TaskId, set[TopicPartition]] = {}
        for partition, task_ids in sorted(self._partition_to_task_ids.items()):
            for task_id in task_ids:
                tasks.setdefault(task_id, set()).add(partition)
        return tasks

    def standby_tasks(self) -> dict[TaskId, frozenset[TopicPartition]]:
        """This thread's standby tasks, each with the partitions whose changelogs it restores."""
        return dict(self._standby_tasks)

    def partitions_by_host(self) -> dict[HostInfo, frozenset[TopicPartition]]:
        return dict(self._partitions_by_host)


def _with_topics(metadata: Cluster, topic_partitions: Mapping[str, int]) -> Cluster:
    """``metadata`` plus partitions (with no leader) of ``topic_partitions`` (Kafka's ``withPartitions``)."""
    partitions = dict(metadata.partitions)
    for topic, count in topic_partitions.items():
        for partition in range(count):
            partitions[TopicPartition(topic, partition)] = PartitionInfo(topic, partition, None, (), ())
    return Cluster(dict(metadata.nodes), partitions)


def _topic_config(topic_groups: Mapping[int, TopicsInfo], topic: str) -> dict[str, str]:
    """The topic configs the topology asks for an internal topic (its store's log config, ...)."""
    for info in topic_groups.values():
        if topic in info.inter_source_topics:
            return info.inter_source_topics[topic]
        if topic in info.state_changelog_topics:
            return info.state_changelog_topics[topic]
    return {}


def _changelog_topic_partitions(
    topic_groups: Mapping[int, TopicsInfo], partitions_for_task: Mapping[TaskId, object]
) -> dict[str, int]:
    """Each store's changelog needs one partition per task of its sub-topology."""
    counts: dict[str, int] = {}
    for task_id in partitions_for_task:
        for topic in topic_groups[task_id.topic_group_id].state_changelog_topics:
            counts[topic] = max(counts.get(topic, 0), task_id.partition + 1)
    return counts
