"""Record batches to rows: Spark's Kafka schema, as tuples or as Arrow record batches.

No Kafka twin: modelled on Spark's Kafka connector (Spark 4.x), after its classes
         org.apache.spark.sql.kafka010.KafkaRecordToRowConverter (the schema, and a ConsumerRecord
         made a row) (connector/kafka-0-10-sql/src/main/scala/org/apache/spark/sql/kafka010/, Spark 4.x)
Book:    chapter 6, 6.1 (records and record batches); chapter 10.2 (timestamps and their type)

Both back-ends hand this module the same thing, a partition's record batches, and this is the one
place they become rows, keeping only the records a range asks for: a batch may begin before the
range (a batch is fetched whole) or end after it, and control batches carry no data
(consumers never see them).

Two ways out:

- ``to_tuples`` yields one plain tuple per record, in the schema's column order: the version to
  read first. Spark converts each value itself, so it is the slower way.
- ``to_arrow`` collects the same values column by column in plain lists, whole record batches at a
  time, and yields a ``pyarrow.RecordBatch`` of about ``ARROW_BATCH_ROWS`` rows, sliced to the
  range; Spark passes Arrow batches on as they are. The batch's schema must equal
  ``to_arrow_schema(schema, timezone="UTC")`` exactly, so the timestamps are made
  ``timestamp[us, tz=UTC]`` from Kafka's milliseconds.

Which decoder: the tuple path decodes with kafka_lite's own ``DefaultRecord.read_from`` (chapter 6),
so a learner can follow a record from the segment's bytes to a row. The Arrow path is the fast one,
and there the cost per record would be Python's varint decoding, several times everything else a
task does; so it decodes with ``codec.records`` (``common/record/codec.py``: by default the
compiled twin of ``DefaultRecordBatch``, the same format read in C by aiokafka's codec), as Spark's
executors leave decoding to the Java kafka-clients. Both give the same fields: offset, timestamp (the batch's for LogAppendTime),
key, value, headers as pairs.

Keys and values stay the ``bytes`` the record decoder sliced out; nothing is copied again here.
"""

from __future__ import annotations

import bisect
import datetime
from collections.abc import Iterable, Iterator
from typing import Any

from kafka_lite.common.record import codec
from kafka_lite.spark.offsets import OffsetRange

ARROW_BATCH_ROWS = 65_536
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def kafka_schema(include_headers: bool):
    """Spark's Kafka source schema (KafkaRecordToRowConverter.kafkaSchema)."""
    from pyspark.sql.types import (
        ArrayType,
        BinaryType,
        IntegerType,
        LongType,
        StringType,
        StructField,
        StructType,
        TimestampType,
    )

    fields = [
        StructField("key", BinaryType()),
        StructField("value", BinaryType()),
        StructField("topic", StringType()),
        StructField("partition", IntegerType()),
        StructField("offset", LongType()),
        StructField("timestamp", TimestampType()),
        StructField("timestampType", IntegerType()),
    ]
    if include_headers:
        header = StructType([StructField("key", StringType()), StructField("value", BinaryType())])
        fields.append(StructField("headers", ArrayType(header)))
    return StructType(fields)


def records_in_range(batches: Iterable[Any], range_: OffsetRange) -> Iterator[tuple[Any, int]]:
    """``(record, timestamp_type)`` for each data record with an offset in ``range_``, in order."""
    start, end = range_.from_offset, range_.until_offset
    for batch in batches:
        if batch.is_control_batch:
            continue  # transaction markers: not records a consumer sees
        timestamp_type = int(batch.timestamp_type)
        for record in batch:
            if record.offset >= end:
                return
            if record.offset >= start:
                yield record, timestamp_type


# --8<-- [start:to_tuples]
def to_tuples(batches: Iterable[Any], range_: OffsetRange, include_headers: bool) -> Iterator[tuple]:
    """One tuple per record: key, value, topic, partition, offset, timestamp, timestampType[, headers]."""
    topic, partition = range_.topic, range_.partition
    for record, timestamp_type in records_in_range(batches, range_):
        # An aware UTC datetime: a naive one would be read in the worker's local time zone.
        timestamp = _EPOCH + datetime.timedelta(milliseconds=record.timestamp)
        row = (record.key, record.value, topic, partition, record.offset, timestamp, timestamp_type)
        if include_headers:
            row += ([(h.key, h.value) for h in record.headers],)
        yield row


# --8<-- [end:to_tuples]


# --8<-- [start:to_arrow]
def to_arrow(
    batches: Iterable[Any], range_: OffsetRange, include_headers: bool, max_rows: int = ARROW_BATCH_ROWS
) -> Iterator[Any]:
    """The same records as ``to_tuples``, as ``pyarrow.RecordBatch``es of about ``max_rows`` rows."""
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_schema

    schema = to_arrow_schema(kafka_schema(include_headers), timezone="UTC")
    keys: list = []
    values: list = []
    offsets: list = []
    timestamps: list = []
    timestamp_types: list = []
    headers: list = []

    def flush() -> Any:
        n = len(offsets)
        columns = [
            pa.array(keys, pa.binary()),
            pa.array(values, pa.binary()),
            pa.array([range_.topic] * n, pa.string()),
            pa.array([range_.partition] * n, pa.int32()),
            pa.array(offsets, pa.int64()),
            # Kafka's milliseconds, read as such, then widened to Spark's microseconds.
            pa.array(timestamps, pa.int64()).cast(pa.timestamp("ms", tz="UTC")).cast(schema.field(5).type),
            pa.array(timestamp_types, pa.int32()),
        ]
        if include_headers:
            columns.append(pa.array(headers, schema.field(7).type))
        # Whole batches went in, so the first rows may lie before the range and the last after it
        # (a batch is fetched whole): keep the range's rows, a slice that copies nothing.
        first = bisect.bisect_left(offsets, range_.from_offset)
        last = bisect.bisect_left(offsets, range_.until_offset)
        return pa.RecordBatch.from_arrays(columns, schema=schema).slice(first, last - first)

    for batch in batches:
        if batch.base_offset >= range_.until_offset:
            break
        if batch.is_control_batch:
            continue  # transaction markers: not records a consumer sees
        timestamp_type = int(batch.timestamp_type)
        # The reference DefaultRecordBatch, or its compiled twin: see common/record/codec.py.
        for record in codec.records(batch):
            keys.append(record.key)
            values.append(record.value)
            offsets.append(record.offset)
            timestamps.append(record.timestamp)
            timestamp_types.append(timestamp_type)
            if include_headers:
                headers.append([{"key": key, "value": value} for key, value in record.headers])
        if len(offsets) >= max_rows:
            yield flush()
            for column in (keys, values, offsets, timestamps, timestamp_types, headers):
                column.clear()
    if offsets:
        yield flush()


# --8<-- [end:to_arrow]
