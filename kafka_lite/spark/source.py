"""The ``kafka_lite`` PySpark data source: a batch reader, a streaming reader, and the writers.

No Kafka twin: modelled on Spark's Kafka connector (Spark 4.x), after its classes
         org.apache.spark.sql.kafka010.KafkaSourceProvider (the format and its schema), KafkaBatch
         (a batch query's offset ranges), KafkaMicroBatchStream (micro-batches: initialOffset,
         latestOffset with maxOffsetsPerTrigger, planInputPartitions) and KafkaBatchPartitionReader
         (one Spark task reads one range) (connector/kafka-0-10-sql/src/main/scala/org/apache/spark/sql/kafka010/,
         Spark 4.x)
Book:    chapter 4 (the consumer: partitions, positions, fetching); chapter 8 and 9 (where the data
         pipeline meets Spark)
Differs: PySpark's Python data source API (``pyspark.sql.datasource``) stands in for Spark's
         DataSource V2 in Scala; the format is ``kafka_lite`` because Spark reserves ``kafka``.
         ``commit`` commits nothing to Kafka, as Spark's source: the checkpoint holds the offsets.

A job written against it runs against a real Kafka cluster by changing ``format("kafka_lite")`` to
``format("kafka")``::

    df = (spark.read.format("kafka_lite")
          .option("kafka.bootstrap.servers", "127.0.0.1:9092")
          .option("subscribe", "orders")
          .load())

Where each piece runs: the ``KafkaLiteDataSource`` and its options are pickled to Python workers;
``partitions()`` (batch) and ``initialOffset``/``latestOffset``/``partitions`` (streams) run on the
driver, asking the cluster through the back-end's ``OffsetReader``; ``read()`` runs in an executor's
Python worker, one call per ``KafkaInputPartition``, fetching its range through a ``DataConsumer``
and turning the batches into rows with ``rows.py``. Clients and files are opened inside those calls,
never kept on an object Spark pickles.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceStreamReader, InputPartition

from kafka_lite.common.errors import KafkaException
from kafka_lite.spark.back_end import (
    checked_batches,
    data_consumer,
    offset_reader,
    resolve_offsets,
    subscribed_partitions,
)
from kafka_lite.spark.offsets import (
    OffsetRange,
    from_json_dict,
    get_ranges,
    plan_micro_batch,
    rate_limit,
    to_json_dict,
    tp_name,
)
from kafka_lite.spark.options import ROWS_TUPLES, SourceOptions, parse_sink_options, parse_source_options
from kafka_lite.spark.rows import kafka_schema, to_arrow, to_tuples

try:  # PySpark 4.2+: read limits under Trigger.AvailableNow
    from pyspark.sql.streaming.datasource import SupportsTriggerAvailableNow
except ImportError:  # pragma: no cover - PySpark 4.0/4.1
    SupportsTriggerAvailableNow = object  # type: ignore[assignment,misc]

KAFKA_SCHEMA = kafka_schema(include_headers=False)
KAFKA_SCHEMA_WITH_HEADERS = kafka_schema(include_headers=True)


class KafkaInputPartition(InputPartition):
    """One Spark task: its ``value`` is the ``OffsetRange`` to read (Spark's KafkaBatchInputPartition)."""

    @property
    def range(self) -> OffsetRange:
        return self.value


def read_range(options: SourceOptions, partition: InputPartition) -> Iterator[Any]:
    """An executor's read of one partition (KafkaBatchPartitionReader): rows or Arrow batches."""
    if not isinstance(partition, KafkaInputPartition):
        return  # Spark's placeholder task when a plan has no partitions: nothing to read
    consumer = data_consumer(options.client)
    try:
        batches = consumer.fetch(partition.range, options.fail_on_data_loss)
        if options.client.check_crcs:
            batches = checked_batches(batches, partition.range)
        if options.rows == ROWS_TUPLES:
            yield from to_tuples(batches, partition.range, options.include_headers)
        else:
            yield from to_arrow(batches, partition.range, options.include_headers)
    finally:
        consumer.close()


class KafkaLiteDataSource(DataSource):
    """``format("kafka_lite")``: Spark's Kafka source and sink, on kafka_lite."""

    @classmethod
    def name(cls) -> str:
        return "kafka_lite"

    def schema(self):
        value = self.options.get("includeHeaders", "false")
        return KAFKA_SCHEMA_WITH_HEADERS if str(value).strip().lower() == "true" else KAFKA_SCHEMA

    def reader(self, schema) -> KafkaLiteBatchReader:
        return KafkaLiteBatchReader(parse_source_options(self.options, streaming=False))

    def streamReader(self, schema) -> KafkaLiteStreamReader:
        return KafkaLiteStreamReader(parse_source_options(self.options, streaming=True))

    def writer(self, schema, overwrite: bool):
        from kafka_lite.spark.writer import KafkaLiteWriter

        return KafkaLiteWriter(parse_sink_options(self.options), schema, overwrite)

    def streamWriter(self, schema, overwrite: bool):
        from kafka_lite.spark.writer import KafkaLiteStreamWriter

        return KafkaLiteStreamWriter(parse_sink_options(self.options), schema)


# -- batch (KafkaBatch) -------------------------------------------------------------------------------------


class KafkaLiteBatchReader(DataSourceReader):
    def __init__(self, options: SourceOptions) -> None:
        self.options = options

    def partitions(self) -> list[KafkaInputPartition]:
        """The offset ranges between the resolved starting and ending offsets, one task each (or
        more, split by ``minPartitions``). Runs on the driver, so a bad option or an unreachable
        cluster fails here, before any task starts."""
        options = self.options
        reader = offset_reader(options.client)
        try:
            tps = subscribed_partitions(reader, options)
            start = resolve_offsets(reader, options.starting, tps, options.timestamp_strategy)
            end = resolve_offsets(reader, options.ending, tps)
        finally:
            reader.close()
        ranges = []
        for tp in tps:
            if start[tp] > end[tp]:
                raise KafkaException(
                    f"The specified start offset {start[tp]} is greater than the end offset {end[tp]} for "
                    f"{tp_name(tp)} (options '{options.starting.option}' and '{options.ending.option}')"
                )
            ranges.append(OffsetRange(tp[0], tp[1], start[tp], end[tp]))
        return [KafkaInputPartition(r) for r in get_ranges(ranges, options.min_partitions)]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        return read_range(self.options, partition)


# -- streams (KafkaMicroBatchStream) -------------------------------------------------------------------------


class KafkaLiteStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Micro-batches over Spark's offset JSON. Spark keeps this object in a long-lived Python process
    on the driver, so it may remember the AvailableNow target between calls; ``read`` runs elsewhere."""

    def __init__(self, options: SourceOptions) -> None:
        self.options = options
        self.all_data_for_trigger_available_now: dict | None = None

    def initialOffset(self) -> dict:
        """Where a new query starts (``startingOffsets``, latest by default); a restarted query
        starts from its checkpoint instead and never calls this."""
        reader = offset_reader(self.options.client)
        try:
            tps = subscribed_partitions(reader, self.options)
            return to_json_dict(
                resolve_offsets(reader, self.options.starting, tps, self.options.timestamp_strategy)
            )
        finally:
            reader.close()

    def getDefaultReadLimit(self):
        from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows

        limit = self.options.max_offsets_per_trigger
        return ReadAllAvailable() if limit is None else ReadMaxRows(limit)

    def prepareForTriggerAvailableNow(self) -> None:
        """Trigger.AvailableNow: read up to the latest offsets as they are now, and no further."""
        reader = offset_reader(self.options.client)
        try:
            self.all_data_for_trigger_available_now = reader.latest_offsets(
                subscribed_partitions(reader, self.options)
            )
        finally:
            reader.close()

    def latestOffset(self, start: dict | None = None, limit: Any = None) -> dict:
        """The end of the next micro-batch: the latest offsets, cut by ``maxOffsetsPerTrigger``."""
        from pyspark.sql.streaming.datasource import ReadMaxRows

        reader = offset_reader(self.options.client)
        try:
            if self.all_data_for_trigger_available_now is not None:
                latest = dict(self.all_data_for_trigger_available_now)
            else:
                latest = reader.latest_offsets(subscribed_partitions(reader, self.options))
            if start is None or not isinstance(limit, ReadMaxRows):
                return to_json_dict(latest)
            from_offsets = from_json_dict(start)
            new_partitions = sorted(set(latest) - set(from_offsets))
            earliest_for_new = reader.earliest_offsets(new_partitions) if new_partitions else {}
            return to_json_dict(rate_limit(limit.max_rows, from_offsets, latest, earliest_for_new))
        finally:
            reader.close()

    def partitions(self, start: dict, end: dict) -> list[KafkaInputPartition]:
        start_offsets, end_offsets = from_json_dict(start), from_json_dict(end)
        new_partitions = sorted(set(end_offsets) - set(start_offsets))
        earliest_for_new = {}
        if new_partitions:
            reader = offset_reader(self.options.client)
            try:
                earliest_for_new = reader.earliest_offsets(new_partitions)
            finally:
                reader.close()
        ranges = plan_micro_batch(
            start_offsets, end_offsets, earliest_for_new, self.options.fail_on_data_loss
        )
        return [KafkaInputPartition(r) for r in get_ranges(ranges, self.options.min_partitions)]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        return read_range(self.options, partition)

    def commit(self, end: dict) -> None:
        """Nothing to do: Spark's Kafka source commits no offsets to Kafka; the checkpoint has them."""
