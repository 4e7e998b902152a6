"""The Processor API: processors, their context, the topology builder, task ids, timestamp extractors.

The runtime that runs a built topology (tasks, record queues, the partition group, the record
collector) is in ``internals``.
"""

from kafka_lite.streams.processor.processor import AbstractProcessor, Processor, ProcessorSupplier
from kafka_lite.streams.processor.processor_context import ProcessorContext
from kafka_lite.streams.processor.task_id import TaskId
from kafka_lite.streams.processor.timestamp_extractor import (
    ConsumerRecordTimestampExtractor,
    TimestampExtractor,
    WallclockTimestampExtractor,
)
from kafka_lite.streams.processor.topology_builder import TopologyBuilder

__all__ = [
    "AbstractProcessor",
    "ConsumerRecordTimestampExtractor",
    "Processor",
    "ProcessorContext",
    "ProcessorSupplier",
    "TaskId",
    "TimestampExtractor",
    "TopologyBuilder",
    "WallclockTimestampExtractor",
]
