"""kafka_lite: Apache Kafka's internals, chapter by chapter, as a broker and clients you can read.

No Kafka twin: the package's front door, as ``org.apache.kafka.clients`` exposes Kafka's clients and
kafka-python's ``kafka`` package its own.

The public API is re-exported here under kafka-python's names (``from kafka_lite import
KafkaConsumer, TopicPartition``), so a program written for kafka-python runs on kafka_lite's clients
by changing its imports: ``kafka`` to ``kafka_lite``, ``kafka.admin`` to ``kafka_lite.admin``,
``kafka.errors`` to ``kafka_lite.errors``. Each name is loaded on first use, so that importing one
layer (say, the record formats) does not import the others.
"""

from __future__ import annotations

_EXPORTS = {
    "ConsumerRebalanceListener": "kafka_lite.consumer",
    "KafkaAdminClient": "kafka_lite.clients.admin",
    "KafkaConsumer": "kafka_lite.consumer",
    "KafkaProducer": "kafka_lite.producer",
    "NewTopic": "kafka_lite.clients.admin",
    "OffsetAndMetadata": "kafka_lite.consumer",
    "TopicPartition": "kafka_lite.common.topic_partition",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'kafka_lite' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
