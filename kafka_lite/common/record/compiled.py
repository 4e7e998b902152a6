"""A record batch's records decoded by compiled code: the clients' fast path through the v2 format.

No Kafka twin: Kafka's consumer decodes with DefaultRecordBatch and DefaultRecord themselves, compiled
         by the JVM; this hands the same bytes to aiokafka's Cython ``DefaultRecordBatch``
         (aiokafka/record/_crecords/default_records.pyx).
Book:    chapter 6, 6.1 (message format); v2 is Kafka 0.11's, after the book

Why: decoding a record in Python (``default_record.py``: a length, attributes, two deltas, a key and a
value, each behind a varint) costs more than everything else a consumer does with the record. Where
records are read in bulk (the consumer's fetcher, the Spark data source's Arrow path), each v2
batch's records are decoded in C instead. The format, the fields and the
results are those of kafka_lite's ``DefaultRecord`` (the decoder to read, and the one the broker
uses); ``tests/common/record/test_compiled.py`` holds the two to the same answers. Older message
formats (magic 0 and 1), which only old clients write, go through kafka_lite's decoder.

A compiled record has ``offset``, ``timestamp`` (the batch's for LogAppendTime), ``key``, ``value``
and ``headers`` as ``(key, value)`` pairs, as kafka_lite's does.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from aiokafka.errors import CorruptRecordException as CompiledCorruptRecord
from aiokafka.record.default_records import DefaultRecordBatch as CompiledRecordBatch

from kafka_lite.common.errors import CorruptRecordException
from kafka_lite.common.record.constants import MAGIC_VALUE_V2


def compiled_records(batch: Any) -> Iterator[Any]:
    """The records of ``batch`` (one of ``MemoryRecords.batches()``), decoded by compiled code when
    it is a v2 batch. A malformed record raises kafka_lite's ``CorruptRecordException``."""
    if batch.magic < MAGIC_VALUE_V2:
        yield from batch
        return
    try:
        yield from CompiledRecordBatch(batch.buffer())
    except CompiledCorruptRecord as e:
        raise CorruptRecordException(
            f"record batch at offset {batch.base_offset}: {e}", position=batch.position
        ) from None
