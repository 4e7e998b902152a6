"""kafka_lite on PySpark: the ``kafka_lite`` data source, with Spark's Kafka options and schema.

No Kafka twin: modelled on Spark's Kafka connector (org.apache.spark.sql.kafka010, Spark 4.x),
         as a PySpark Python data source (``pyspark.sql.datasource``).
Book:    chapter 8 and 9 (where the data pipeline meets Spark)

``session(**conf)`` builds a SparkSession with the source registered; ``register(spark)`` registers
it on one you have. Then ``spark.read.format("kafka_lite")`` and ``spark.readStream.format("kafka_lite")``
read topics, and ``df.write.format("kafka_lite")`` writes them, as ``format("kafka")`` does with
Spark's own connector. Names are loaded on first use, so option parsing and offset planning
(``options``, ``offsets``) import without PySpark.
"""

from __future__ import annotations

# Imported now, not on first use: the submodule ``session`` would otherwise shadow the function of the
# same name once anything imported ``kafka_lite.spark.session`` (it imports PySpark only when called).
from kafka_lite.spark.session import register, session  # noqa: F401  (exported)

_EXPORTS = {
    "KAFKA_SCHEMA": "kafka_lite.spark.source",
    "KAFKA_SCHEMA_WITH_HEADERS": "kafka_lite.spark.source",
    "KafkaLiteDataSource": "kafka_lite.spark.source",
}

__all__ = sorted([*_EXPORTS, "register", "session"])


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'kafka_lite.spark' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
