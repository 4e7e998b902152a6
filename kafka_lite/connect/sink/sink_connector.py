"""A connector whose tasks write records from Kafka topics to another system.

Mirrors: org.apache.kafka.connect.sink.SinkConnector
         (connect/api/src/main/java/org/apache/kafka/connect/sink/SinkConnector.java, Kafka 0.10.1)
Book:    chapter 8, 8.3
Differs: none.

The topics are the worker's business, not the connector's: the worker reads ``topics`` from the
connector config and adds it to every task config, and each task's consumer subscribes to them.
"""

from __future__ import annotations

from kafka_lite.connect.connector.connector import Connector

TOPICS_CONFIG = "topics"


class SinkConnector(Connector):
    """A ``Connector`` whose ``task_class`` is a ``SinkTask``."""

    TOPICS_CONFIG = TOPICS_CONFIG
