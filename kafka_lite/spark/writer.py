"""The ``kafka_lite`` sink: a DataFrame's rows produced to topics, batch and streaming.

No Kafka twin: modelled on Spark's Kafka connector (Spark 4.x), after its classes
         org.apache.spark.sql.kafka010.KafkaWriter (validateQuery: the columns a sink takes),
         KafkaWriteTask (one producer per task, a row made a ProducerRecord), KafkaBatchWrite and
         KafkaStreamingWrite (connector/kafka-0-10-sql/src/main/scala/org/apache/spark/sql/kafka010/,
         Spark 4.x)
Book:    chapter 2 (the producer: partitioning, batching, acknowledgements)
Differs: PySpark's Python writers stand in for Spark's DataWriter; the producer is kafka_lite's
         ``KafkaProducer``, opened in each task and closed (flushed) before the task reports.

Columns, as Spark's sink takes them: ``value`` (string or binary, required), ``key`` (string or
binary), ``topic`` (string; the ``topic`` option, when set, overrides it), ``partition`` (int; null
lets the producer's partitioner choose) and ``headers`` (array<struct<key:string,value:binary>>).
Delivery is at least once, as with Spark's sink: a task retried after some of its sends succeeded
sends them again. Batch writes must say ``.mode("append")``: Spark's own Kafka sink also takes the
default, ErrorIfExists, which PySpark refuses for Python data sources.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pyspark.sql.datasource import DataSourceStreamWriter, DataSourceWriter, WriterCommitMessage

from kafka_lite.common.errors import IllegalArgumentException
from kafka_lite.spark.options import SinkOptions

STRING_OR_BINARY = ("string", "binary")


@dataclass
class ProducedMessage(WriterCommitMessage):
    """What one task wrote: records sent per topic-partition."""

    counts: dict[str, int]


def validate_query(schema: Any, topic: str | None) -> None:
    """KafkaWriter.validateQuery: the columns a sink needs, with Spark's messages."""
    types = {f.name.lower(): f.dataType.simpleString() for f in schema.fields}
    if topic is None:
        if "topic" not in types:
            raise IllegalArgumentException(
                "topic option required when no 'topic' attribute is present. Use the topic option for setting a topic."
            )
        if types["topic"] != "string":
            raise IllegalArgumentException(f"Topic type must be a string, got {types['topic']}")
    if "value" not in types:
        raise IllegalArgumentException("Required attribute 'value' not found")
    for column in ("key", "value"):
        if column in types and types[column] not in STRING_OR_BINARY:
            raise IllegalArgumentException(
                f"{column} attribute type must be a string or binary, got {types[column]}"
            )
    if "partition" in types and types["partition"] != "int":
        raise IllegalArgumentException(f"partition attribute type must be an int, got {types['partition']}")
    if "headers" in types and types["headers"] != "array<struct<key:string,value:binary>>":
        raise IllegalArgumentException(
            f"headers attribute type must be an array<struct<key:string,value:binary>>, got {types['headers']}"
        )


def _check_producer_settings(options: SinkOptions) -> None:
    """Unknown or invalid kafka.* producer settings fail on the driver, named, before a task starts."""
    from kafka_lite.common.errors import ConfigException
    from kafka_lite.producer.producer_config import CONFIG_DEF

    try:
        CONFIG_DEF.parse({"bootstrap.servers": options.client.bootstrap_servers, **options.producer_params})
    except ConfigException as e:
        raise IllegalArgumentException(
            f"A kafka.* option is not a producer setting kafka_lite takes: {e}"
        ) from None


def _bytes(value: Any) -> bytes | None:
    if value is None or isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8")
    return bytes(value)  # a bytearray from a binary column


# --8<-- [start:produce]
def produce(options: SinkOptions, rows: Iterator[Any]) -> ProducedMessage:
    """Send every row with one producer (KafkaWriteTask), wait for all, and report the counts."""
    from kafka_lite.producer.kafka_producer import KafkaProducer

    producer = KafkaProducer(
        **{"bootstrap.servers": options.client.bootstrap_servers, **options.producer_params}
    )
    counts: dict[str, int] = {}
    futures = []
    try:
        for row in rows:
            fields = row.asDict()
            topic = options.topic if options.topic is not None else fields.get("topic")
            if topic is None:
                raise IllegalArgumentException(
                    "null topic present in the data. Use the topic option for setting a topic."
                )
            headers = [(h["key"], _bytes(h["value"])) for h in fields.get("headers") or ()]
            futures.append(
                producer.send(
                    topic,
                    value=_bytes(fields["value"]),
                    key=_bytes(fields.get("key")),
                    partition=fields.get("partition"),
                    headers=headers,
                )
            )
        producer.flush()
        for future in futures:
            metadata = future.get()  # raises the send's error, if it failed
            name = f"{metadata.topic}-{metadata.partition}"
            counts[name] = counts.get(name, 0) + 1
    finally:
        producer.close()
    return ProducedMessage(counts)


# --8<-- [end:produce]


class KafkaLiteWriter(DataSourceWriter):
    """``df.write.format("kafka_lite").mode("append")``."""

    def __init__(self, options: SinkOptions, schema: Any, overwrite: bool) -> None:
        if overwrite:
            raise IllegalArgumentException(
                "Save mode Overwrite not allowed for Kafka. Allowed save modes are Append (default: "
                'ErrorIfExists, which PySpark rejects for Python sinks: use .mode("append"))'
            )
        validate_query(schema, options.topic)
        _check_producer_settings(options)
        self.options = options

    def write(self, iterator: Iterator[Any]) -> ProducedMessage:
        return produce(self.options, iterator)

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        """Nothing to do: every task's records were acknowledged before the task finished."""

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        """Nothing to undo: records already sent stay (at least once, as Spark's sink)."""


class KafkaLiteStreamWriter(DataSourceStreamWriter):
    """``df.writeStream.format("kafka_lite")``."""

    def __init__(self, options: SinkOptions, schema: Any) -> None:
        validate_query(schema, options.topic)
        _check_producer_settings(options)
        self.options = options

    def write(self, iterator: Iterator[Any]) -> ProducedMessage:
        return produce(self.options, iterator)

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """Nothing to do: every task's records were acknowledged before the task finished."""

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """Nothing to undo: records already sent stay (at least once, as Spark's sink)."""
