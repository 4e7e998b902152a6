"""A standby task: a warm copy of another instance's task's stores, kept by reading their changelogs.

Mirrors: org.apache.kafka.streams.processor.internals.StandbyTask (and StandbyContextImpl)
         (streams/src/main/java/.../processor/internals/, Kafka 0.10.1)
Book:    chapter 9, 9.1.4 (state stores: standby replicas)
Differs: the context is a ``ProcessorContextImpl`` with no record collector and a zero-sized
         record cache, where Kafka has a ``StandbyContextImpl`` (with the same zero-sized cache)
         that refuses every call a processor would make: a standby task runs no processor, so
         only its stores' ``init`` ever sees the context.

With ``num.standby.replicas=1`` the assignor gives every task with a store a standby on another
instance. The standby builds the task's stores (``init`` registers each with a standby
``ProcessorStateManager``, which restores nothing) and the thread assigns the stores' changelog
partitions to its restore consumer, from the checkpointed offset. From then on every loop of the
thread hands the changelog records it fetched to ``update``, and the stores follow the active
task's writes a little behind. When the active instance dies and the task moves here, the new
active task finds the store on disk with a checkpoint close to the end, and restores only the tail.
"""

from __future__ import annotations

import logging
from typing import Any

from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.consumer.consumer_record import ConsumerRecord
from kafka_lite.streams.processor.internals.processor_context_impl import ProcessorContextImpl
from kafka_lite.streams.processor.internals.processor_state_manager import ProcessorStateManager
from kafka_lite.streams.processor.internals.processor_topology import ProcessorTopology
from kafka_lite.streams.processor.task_id import TaskId
from kafka_lite.streams.state.internals.thread_cache import ThreadCache

log = logging.getLogger(__name__)


class StandbyTask:
    def __init__(
        self,
        task_id: TaskId,
        application_id: str,
        partitions: frozenset[TopicPartition],
        topology: ProcessorTopology,
        state_mgr: ProcessorStateManager,
        config: dict[str, Any],
    ) -> None:
        self.id = task_id
        self.application_id = application_id
        self.partitions = set(partitions)
        self.topology = topology
        self.state_mgr = state_mgr
        # A cached store registers with the context's cache; a standby's is empty (the changelog
        # records go to the store under the cache) and of size 0, as StandbyContextImpl's.
        self.processor_context = ProcessorContextImpl(
            task_id, self, config, None, state_mgr, ThreadCache(None, 0)
        )
        log.info("standby-task [%s] Initializing state stores", task_id)
        topology.initialize_state_stores(self.processor_context)
        self.processor_context.set_initialized()
        # Where the thread's restore consumer starts each changelog partition (-1: the beginning).
        self.checkpointed_offsets = state_mgr.checkpointed()

    def changelog_partitions(self) -> list[TopicPartition]:
        return sorted(self.checkpointed_offsets)

    def update(self, partition: TopicPartition, records: list[ConsumerRecord]) -> None:
        """Apply changelog records the thread's restore consumer fetched."""
        log.debug("standby-task [%s] Updating standby replicas of its state store for partition [%s]",
                  self.id, partition)  # fmt: skip
        self.state_mgr.update_standby_states(partition, records)

    def commit(self, start_new_transaction: bool = True) -> None:
        """Flush the stores: what the thread has applied is now on disk (a standby has no transaction)."""
        log.debug("standby-task [%s] Committing its state", self.id)
        self.state_mgr.flush()

    def close(self) -> None:
        """Nothing to close: a standby runs no processors."""

    def close_topology(self) -> None:
        """Nothing to close: a standby runs no processors."""

    def commit_offsets(self) -> None:
        """Nothing to commit: a standby consumes no input topic."""

    def close_state_manager(self) -> None:
        # The stores' positions in their changelogs are where the standby has read up to.
        self.state_mgr.close({})

    def get_store(self, name: str) -> Any:
        return self.state_mgr.get_store(name)

    def __repr__(self) -> str:
        return f"StandbyTask taskId:{self.id}"
