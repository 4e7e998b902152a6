"""kafka_lite: Apache Kafka's internals, chapter by chapter, as a broker and clients you can read.

No Kafka twin: the package's front door, as ``org.apache.kafka.clients`` exposes Kafka's clients.

The public API is re-exported here (``from kafka_lite import KafkaAdminClient``), loaded on first
use so that importing one layer (say, the record formats) does not import the others.
"""

from __future__ import annotations

_EXPORTS = {
    "KafkaAdminClient": "kafka_lite.clients.admin",
    "KafkaConsumer": "kafka_lite.consumer",
    "KafkaProducer": "kafka_lite.producer",
    "NewTopic": "kafka_lite.clients.admin",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'kafka_lite' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
