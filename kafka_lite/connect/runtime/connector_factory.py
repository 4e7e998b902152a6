"""Connector, converter and transformation classes found by name, as a properties file gives them.

Mirrors: org.apache.kafka.connect.runtime.ConnectorFactory
         (connect/runtime/src/main/java/org/apache/kafka/connect/runtime/ConnectorFactory.java, Kafka 0.10.1)
Book:    chapter 8, 8.3
Differs: Kafka scans the class path for ``Connector`` subclasses; kafka_lite knows its own by
         Kafka's class names, and others once ``register`` ed under a name; the transformations
         are 0.11.0's.

A connector is named as Kafka names it: the full class name
(``org.apache.kafka.connect.file.FileStreamSourceConnector``), the simple name
(``FileStreamSourceConnector``), or the simple name without ``Connector`` (``FileStreamSource``,
the quick start's alias). A converter or a transformation by its full class name, a transformation's
with Java's ``$`` before its nested class (``org.apache.kafka.connect.transforms.InsertField$Value``).
So Kafka's own quick-start files work unchanged.
"""

from __future__ import annotations

from kafka_lite.connect.connector.connector import Connector
from kafka_lite.connect.converters.byte_array_converter import ByteArrayConverter
from kafka_lite.connect.errors import ConnectException
from kafka_lite.connect.file.file_stream_sink_connector import FileStreamSinkConnector
from kafka_lite.connect.file.file_stream_source_connector import FileStreamSourceConnector
from kafka_lite.connect.json.json_converter import JsonConverter
from kafka_lite.connect.sqlite.sqlite_sink_connector import SqliteSinkConnector
from kafka_lite.connect.sqlite.sqlite_source_connector import SqliteSourceConnector
from kafka_lite.connect.storage.converter import Converter
from kafka_lite.connect.storage.string_converter import StringConverter
from kafka_lite.connect.transforms import KAFKA_CLASS_NAMES
from kafka_lite.connect.transforms.transformation import Transformation

# Kafka's full class name -> kafka_lite's class.
CONNECTORS: dict[str, type[Connector]] = {
    "org.apache.kafka.connect.file.FileStreamSourceConnector": FileStreamSourceConnector,
    "org.apache.kafka.connect.file.FileStreamSinkConnector": FileStreamSinkConnector,
    "kafka_lite.connect.sqlite.SqliteSinkConnector": SqliteSinkConnector,  # no Kafka twin: Confluent's JDBC sink's part
    "kafka_lite.connect.sqlite.SqliteSourceConnector": SqliteSourceConnector,
}
CONVERTERS: dict[str, type[Converter]] = {
    "org.apache.kafka.connect.json.JsonConverter": JsonConverter,
    "org.apache.kafka.connect.storage.StringConverter": StringConverter,
    "org.apache.kafka.connect.converters.ByteArrayConverter": ByteArrayConverter,
}

# The transformations Kafka ships; their names have Java's $ before the nested Key or Value class.
TRANSFORMATIONS: dict[str, type[Transformation]] = dict(KAFKA_CLASS_NAMES)


def connector_class(name: str) -> type[Connector]:
    """The connector class ``name`` stands for; an unknown name raises, listing the known ones."""
    for full, cls in CONNECTORS.items():
        simple = full.rsplit(".", 1)[1]
        if name in (full, simple, simple.removesuffix("Connector")):
            return cls
    known = ", ".join(sorted(n.rsplit(".", 1)[1] for n in CONNECTORS))
    raise ConnectException(
        f"Failed to find any class that implements Connector and which name matches {name}; "
        f"known connectors: {known}"
    )


def new_connector(name: str) -> Connector:
    return connector_class(name)()


def new_converter(name: str) -> Converter:
    cls = CONVERTERS.get(name)
    if cls is None:
        raise ConnectException(
            f"Class {name} cannot be found or is not a Converter; known converters: {', '.join(CONVERTERS)}"
        )
    return cls()


def transformation_class(name: str) -> type[Transformation] | None:
    """The transformation class ``name`` (a full class name) stands for, or None if none is known."""
    return TRANSFORMATIONS.get(name)


def register(name: str, cls: type[Connector] | type[Converter] | type[Transformation]) -> None:
    """Make a connector, converter or transformation class of one's own known under ``name`` (a
    full class name)."""
    if issubclass(cls, Connector):
        CONNECTORS[name] = cls
    elif issubclass(cls, Transformation):
        TRANSFORMATIONS[name] = cls
    else:
        CONVERTERS[name] = cls
