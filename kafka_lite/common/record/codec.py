"""Which record codec the clients run: the Python reference, or its compiled twin.

No Kafka twin: Kafka has one codec, compiled by the JVM. This is the pattern CPython uses for
         ``json`` (``json.decoder`` over ``_json``) and ``heapq`` (over ``_heapq``): the Python code
         is the reference and the code to read; a compiled module with exactly the same interface
         takes its place when it is there and wanted.
Book:    chapter 2, 2.1.2 (the producer's batches); chapter 6, 6.1 (message format)

The reference is ``MemoryRecordsBuilder`` (memory_records_builder.py), ``DefaultRecordBatch``
(default_record_batch.py), ``DefaultRecord`` (default_record.py) and the two size bounds. The
accelerator is ``compiled.py``: the same names over aiokafka's Cython codec, each per-record method
replaced whole (as ``_json.make_encoder`` replaces the encoder), held to the same bytes, records and
errors by a property test. The producer (``ProducerBatch``), the consumer's fetcher, the Raft
leader's batches and the records its listeners and snapshots read (``raft/internals/batch_builder.py``,
``kafka_raft_client.py``, ``records_snapshot_reader.py``: the quorum encodes and decodes every record,
as a client does) and the Spark source's Arrow rows take the codec from here, at each call, so a
switch takes effect at the next batch; the broker's log always runs the reference.

How to choose:

* ``KAFKA_LITE_RECORDS=python`` (the reference) or ``compiled`` (the default) in the environment,
  read once, when this module is first imported;
* ``use_codec("python")`` at run time, from a notebook, a lab's tests or a debugger session: every
  batch built or read after it goes through the reference, whose every line a debugger steps into.

The default is compiled because encoding and decoding records one varint at a time is the one cost
a client pays per byte it sends or receives; everything else (batching, the network, the broker) is
per batch. Notebooks and labs choose the reference, so what a learner steps through is what runs.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

from kafka_lite.common.record import default_record_batch, memory_records_builder
from kafka_lite.common.record.constants import MAGIC_VALUE_V2

ENV_VAR = "KAFKA_LITE_RECORDS"
PYTHON = "python"
COMPILED = "compiled"
CODECS = (PYTHON, COMPILED)

# The chosen codec's names; ``use_codec`` rebinds them, and callers look them up at each call.
MemoryRecordsBuilder = memory_records_builder.MemoryRecordsBuilder
DefaultRecordBatch = default_record_batch.DefaultRecordBatch
estimate_size_in_bytes_upper_bound = default_record_batch.estimate_size_in_bytes_upper_bound
_name = PYTHON


# --8<-- [start:use_codec]
def use_codec(name: str) -> None:
    """Run the clients' record codec ``name`` from now on: ``"python"`` (the reference) or ``"compiled"``."""
    global MemoryRecordsBuilder, DefaultRecordBatch, estimate_size_in_bytes_upper_bound, _name
    if name not in CODECS:
        raise ValueError(f"{ENV_VAR} must be one of {', '.join(CODECS)}, not {name!r}")
    if name == COMPILED:
        from kafka_lite.common.record import compiled as module
    else:
        module = _reference
    MemoryRecordsBuilder = module.MemoryRecordsBuilder
    DefaultRecordBatch = module.DefaultRecordBatch
    estimate_size_in_bytes_upper_bound = module.estimate_size_in_bytes_upper_bound
    _name = name


# --8<-- [end:use_codec]


def codec_name() -> str:
    """The codec the clients run: ``"python"`` or ``"compiled"``."""
    return _name


def records(batch: Any) -> Iterator[Any]:
    """The records of ``batch`` (one of ``MemoryRecords.batches()``), read by the chosen codec's
    ``DefaultRecordBatch``; message sets v0/v1 by ``LegacyRecordBatch`` whichever is chosen."""
    if batch.magic < MAGIC_VALUE_V2 or DefaultRecordBatch is default_record_batch.DefaultRecordBatch:
        return iter(batch)
    return iter(DefaultRecordBatch(batch.buffer()))


# The reference codec's names, gathered as ``compiled`` gathers its own.
_reference = SimpleNamespace(
    MemoryRecordsBuilder=memory_records_builder.MemoryRecordsBuilder,
    DefaultRecordBatch=default_record_batch.DefaultRecordBatch,
    estimate_size_in_bytes_upper_bound=default_record_batch.estimate_size_in_bytes_upper_bound,
)
use_codec(os.environ.get(ENV_VAR, COMPILED))
