"""A connector whose tasks read from another system into Kafka.

Mirrors: org.apache.kafka.connect.source.SourceConnector
         (connect/api/src/main/java/org/apache/kafka/connect/source/SourceConnector.java, Kafka 0.10.1)
Book:    chapter 8, 8.3
Differs: none.
"""

from __future__ import annotations

from kafka_lite.connect.connector.connector import Connector


class SourceConnector(Connector):
    """A ``Connector`` whose ``task_class`` is a ``SourceTask``."""
