"""The Processor API: processors, their context, the topology builder, task ids, timestamp extractors.

Mirrors: org.apache.kafka.streams.processor (streams/src/main/java/org/apache/kafka/streams/processor/,
         Kafka 0.10.1)
Book:    chapter 9, 9.1 (the Processor API: topologies, threads and tasks, state)

A topology is described with ``TopologyBuilder`` (sources, processors, sinks, state stores, by
name), and runs as tasks: ``internals`` holds the runtime (``StreamTask``, its record queues and
partition group, its context, its record collector). ``kafka_lite.streams.test_utils`` runs a
topology with no broker.
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
