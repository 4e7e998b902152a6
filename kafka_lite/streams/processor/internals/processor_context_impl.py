"""A task's processor context: the record in hand, the current node, and the way to the task's stores.

Mirrors: org.apache.kafka.streams.processor.internals.ProcessorContextImpl
         (streams/src/main/java/org/apache/kafka/streams/processor/internals/ProcessorContextImpl.java,
         Kafka 0.10.1)
Book:    chapter 9, 9.1.2 (forwarding between processors), 9.1.4 (registering and reaching stores)
Differs: ``get_state_store`` enforces that the current processor was connected to the store, with
         Kafka 0.11's check and wording (0.10.1 has the check commented out); ``schedule`` asks for
         the context's current node, as 0.11 does, so a processor downstream of the source can
         schedule from ``process`` too.

How ``forward`` walks the graph: the context remembers the *current node*. The task sets it to a
source node and calls the node's ``process``; a node that forwards makes each child current in
turn, calls the child's ``process`` (which may forward again: depth first), then puts itself back.

    source --forward--> A --forward--> B      current node: source, A, B, A, source
                   \\--> C                                 ..., C, source

So when a processor calls ``context.forward``, ``get_state_store`` or ``schedule``, "current" means
that processor's node.

The context also hands the task's stores the thread's record cache (``get_cache``, Kafka's
``InternalProcessorContext.getCache``): a caching store registers its ``NamedCache`` there in
``init``, and, when the cache flushes it, sets the record context of each entry it forwards
(``set_record_context``) and puts the previous one back.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kafka_lite.streams.errors import TopologyBuilderException
from kafka_lite.streams.processor.internals.processor_node import ProcessorNode
from kafka_lite.streams.processor.internals.processor_record_context import ProcessorRecordContext
from kafka_lite.streams.processor.internals.record_collector import RecordCollector
from kafka_lite.streams.processor.processor_context import ProcessorContext
from kafka_lite.streams.processor.task_id import TaskId
from kafka_lite.streams.state.internals.thread_cache import ThreadCache

if TYPE_CHECKING:
    from kafka_lite.streams.processor.internals.stream_task import StreamTask

# The topic a punctuation's record context names: ``topic()`` answers None for it.
NONEXIST_TOPIC = "__null_topic__"


class ProcessorContextImpl(ProcessorContext):
    """Kafka's ``ProcessorContextImpl``: one per task, shared by all the task's processors."""

    def __init__(
        self,
        task_id: TaskId,
        task: StreamTask,
        config: dict[str, Any],
        collector: RecordCollector,
        state_mgr: Any,
        cache: ThreadCache | None = None,
    ) -> None:
        """``cache``: the stream thread's record cache, shared by its tasks (a zero-sized one if None:
        every cached put is flushed at once)."""
        self.id = task_id
        self.task = task
        self.config = config
        self.collector = collector
        self.state_mgr = state_mgr
        self.initialized = False
        self.record_context: ProcessorRecordContext | None = None
        self.current_node: ProcessorNode | None = None
        self.cache = ThreadCache(None, 0) if cache is None else cache

    def set_initialized(self) -> None:
        """After the task's init: from now on no store may register (Kafka's ``initialized()``)."""
        self.initialized = True

    def application_id(self) -> str:
        return self.task.application_id

    def task_id(self) -> TaskId:
        return self.id

    def state_dir(self) -> Path:
        return self.state_mgr.base_dir

    def app_configs(self) -> dict[str, Any]:
        return dict(self.config)

    def get_cache(self) -> ThreadCache:
        """The thread's record cache, for the caching stores of the task."""
        return self.cache

    def record_collector(self) -> RecordCollector:
        """The task's collector, for sink nodes and for stores that log their changes."""
        return self.collector

    def register(
        self, store: Any, logging_enabled: bool, state_restore_callback: Callable[[bytes, bytes | None], None]
    ) -> None:
        if self.initialized:
            raise RuntimeError("Can only create state stores during initialization.")
        self.state_mgr.register(store, logging_enabled, state_restore_callback)

    def get_state_store(self, name: str) -> Any:
        node = self.current_node
        if node is None:
            raise TopologyBuilderException("Accessing from an unknown node")
        if name not in node.state_stores:
            raise TopologyBuilderException(f"Processor {node.name} has no access to StateStore {name}")
        return self.state_mgr.get_store(name)

    # -- the record being processed ------------------------------------------------------------------

    def _record(self, what: str) -> ProcessorRecordContext:
        if self.record_context is None:
            raise RuntimeError(
                f"This should not happen as {what}() should only be called while a record is processed"
            )
        return self.record_context

    def topic(self) -> str | None:
        topic = self._record("topic").topic
        return None if topic == NONEXIST_TOPIC else topic

    def partition(self) -> int:
        return self._record("partition").partition

    def offset(self) -> int:
        return self._record("offset").offset

    def timestamp(self) -> int:
        return self._record("timestamp").timestamp

    # -- downstream ----------------------------------------------------------------------------------

    def forward(self, key: Any, value: Any, child: int | str | None = None) -> None:
        if child is None:
            children = self.current_node.children
        elif isinstance(child, int):
            children = [self.current_node.children[child]]
        else:
            # As in 0.10.1, a name that is not a child forwards nowhere.
            children = [c for c in self.current_node.children if c.name == child][:1]
        previous_node = self.current_node
        try:
            for node in children:
                self.current_node = node
                node.process(key, value)
        finally:
            self.current_node = previous_node

    def commit(self) -> None:
        self.task.need_commit()

    def schedule(self, interval_ms: int) -> None:
        self.task.schedule(interval_ms)

    def set_record_context(self, record_context: ProcessorRecordContext | None) -> None:
        self.record_context = record_context

    def set_current_node(self, current_node: ProcessorNode | None) -> None:
        self.current_node = current_node
