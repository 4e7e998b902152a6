"""Print what a segment's files hold, and check that the indexes agree with the log.

Mirrors: kafka.tools.DumpLogSegments (core/src/main/scala/kafka/tools/DumpLogSegments.scala,
         Kafka 0.11.0), run as ``kafka-run-class.sh kafka.tools.DumpLogSegments`` (``kafka-dump-log.sh``
         from Kafka 2.0); the KRaft metadata log's snapshots, Raft control records and
         ``--cluster-metadata-decoder`` (its ClusterMetadataLogMessageParser) as Kafka 3.3.0 has them
Book:    chapter 6, 6.1 (reading segment files by hand is the best way to see the layout; the
         metadata decoder is beyond the book, KRaft's)
Differs: output lines follow Kafka's wording but not every option (no ``--offsets-decoder``);
         damage stops the dump with a one-line reason naming the byte offset, where Kafka prints
         what it can and a stack trace; a control batch's line names its marker without ``--deep``;
         a LEADER_CHANGE record also shows its message (Kafka 3.3 prints only its type).

Four file kinds, told apart by suffix: ``.log`` (batches; ``--deep`` adds each record),
``.index`` (offset -> position), ``.timeindex`` (timestamp -> offset) and ``.txnindex`` (the
aborted transactions, Kafka 0.11). An offset or time index is checked against the ``.log`` beside
it: every entry must point at a batch that is really there. A transaction marker (a control batch)
is shown as Kafka shows it: ``endTxnMarker: COMMIT coordinatorEpoch: 3``. A v0/v1 entry, in the
log of a topic whose ``message.format.version`` is or was older than 0.11.0, is named by its
offset (a wrapper's last one), with no producer fields, and each of its messages shows its CRC.

The KRaft metadata log (chapter 12). ``__cluster_metadata-0`` is an ordinary log of segments, and a
snapshot of it (``<end offset>-<epoch>.checkpoint``, 20 and 10 digits) is a file of ordinary record
batches, so both dump as any ``.log`` does; a snapshot's first line names its id instead of a base
offset, and ``bootstrap.checkpoint`` (the records ``kafka-lite storage format`` leaves for an empty
metadata log to start with) is named as Kafka names it. Its control batches are Raft's own (Kafka
3.3): LEADER_CHANGE, the first entry of every leader's epoch, and a snapshot's SNAPSHOT_HEADER and
SNAPSHOT_FOOTER, each shown with its message as JSON. With ``cluster_metadata`` (``--cluster-metadata-decoder``), every other record's value is
decoded with ``MetadataRecordSerde`` and printed as Kafka's parser prints it, one JSON object of the
record's type, version and fields (camelCase, as Kafka's generated JSON converters write them)::

    | offset: 1 ... payload: {"type":"TOPIC_RECORD","version":0,"data":{"name":"foo","topicId":"..."}}

A value that does not decode is not damage to the log (its batch's CRC was good): the line says
``Error at <offset>, skipping.`` and why, and the dump goes on, as Kafka's does.
"""

from __future__ import annotations

import base64
import json
import re
import struct
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kafka_lite.common.errors import CorruptRecordException
from kafka_lite.common.metadata import MetadataRecordSerde, MetadataRecordType
from kafka_lite.common.metadata.api_message import Message
from kafka_lite.common.record import FileRecords
from kafka_lite.common.record import control_record_utils as raft_control
from kafka_lite.common.record.end_transaction_marker import ControlRecordType, EndTransactionMarker
from kafka_lite.log.transaction_index import ENTRY_SIZE, AbortedTxn

_SEGMENT_NAME = re.compile(r"^(\d{20})\.(log|index|timeindex|txnindex)$")
# A frozen Raft snapshot: end offset and epoch (Kafka's Snapshots.parse; a ``.checkpoint.part`` is
# one still being written, a ``.checkpoint.deleted`` one on its way out, and neither is dumped).
_SNAPSHOT_NAME = re.compile(r"^(\d{20})-(\d{10})\.checkpoint$")
# The records ``kafka-lite storage format`` writes for an empty metadata log to start with, in a
# snapshot's format (Kafka's BootstrapDirectory.BINARY_BOOTSTRAP_FILENAME).
BINARY_BOOTSTRAP_FILENAME = "bootstrap.checkpoint"


class DumpError(Exception):
    """The file cannot be dumped, or its contents are damaged; the message is one line."""


def dump(
    path: Path, deep: bool = False, print_data: bool = False, cluster_metadata: bool = False
) -> Iterator[str]:
    """Yield the dump of one file, line by line; raise ``DumpError`` at the first problem.
    ``cluster_metadata`` decodes each record as a metadata record, and implies ``print_data``
    (Kafka's ``--cluster-metadata-decoder`` sets ``shouldPrintDataLog``)."""
    m = _SEGMENT_NAME.match(path.name)
    snapshot = _SNAPSHOT_NAME.match(path.name)
    bootstrap = path.name == BINARY_BOOTSTRAP_FILENAME
    if not m and not snapshot and not bootstrap:
        raise DumpError(
            f"{path} is not a Kafka segment file (expected a 20-digit offset and .log, .index, "
            ".timeindex or .txnindex, a snapshot <20-digit offset>-<10-digit epoch>.checkpoint, "
            f"or {BINARY_BOOTSTRAP_FILENAME})"
        )
    if not path.is_file():
        raise DumpError(f"{path} does not exist or is not a file")
    if path.stat().st_size == 0:
        raise DumpError(f"{path} is empty")
    yield f"Dumping {path}"
    parser = ClusterMetadataLogMessageParser() if cluster_metadata else None
    print_data = print_data or cluster_metadata
    if snapshot or bootstrap:
        yield (
            "KRaft bootstrap snapshot"
            if bootstrap
            else f"Snapshot end offset: {int(snapshot.group(1))}, epoch: {int(snapshot.group(2))}"
        )
        yield from _dump_log(path, deep or print_data, print_data, parser)
        return
    base_offset = int(m.group(1))
    if m.group(2) == "log":
        yield f"Starting offset: {base_offset}"
        yield from _dump_log(path, deep or print_data, print_data, parser)
    elif m.group(2) == "index":
        yield from _dump_index(path, base_offset)
    elif m.group(2) == "txnindex":
        yield from _dump_txn_index(path, base_offset)
    else:
        yield from _dump_time_index(path, base_offset)


def _batches(path: Path):
    """``(position, batch)`` for every batch; damage raises ``DumpError`` with the byte offset."""
    records = FileRecords.open(path, mutable=False)
    try:
        size = records.size_in_bytes()
        position = 0
        for position, batch in records.batches(allow_partial_tail=False):
            try:
                batch.ensure_valid()
            except CorruptRecordException as e:
                raise DumpError(f"{path}: {_in_file(e, position)}") from None
            yield position, batch
            position += batch.size_in_bytes
        if position != size:
            raise DumpError(f"{path}: {size - position} trailing bytes at byte {position} are not a batch")
    except CorruptRecordException as e:
        raise DumpError(f"{path}: {_strip_path(str(e), path)}") from None
    finally:
        records.close()


def _strip_path(message: str, path: Path) -> str:
    prefix = f"{path}: "
    return message[len(prefix) :] if message.startswith(prefix) else message


def _dump_log(
    path: Path, deep: bool, print_data: bool, parser: ClusterMetadataLogMessageParser | None
) -> Iterator[str]:
    for position, batch in _batches(path):
        ts_type = batch.timestamp_type.display_name
        legacy = batch.magic < 2  # a v0/v1 entry (a topic at an older format): Kafka names it by offset
        yield (
            (
                f"offset: {batch.last_offset} "
                if legacy
                else f"baseOffset: {batch.base_offset} lastOffset: {batch.last_offset} count: {batch.num_records} "
                f"baseSequence: {batch.base_sequence} lastSequence: {batch.last_sequence} producerId: {batch.producer_id} "
                f"producerEpoch: {batch.producer_epoch} partitionLeaderEpoch: {batch.partition_leader_epoch} "
                f"isTransactional: {str(batch.is_transactional).lower()} isControl: {str(batch.is_control_batch).lower()} "
            )
            + f"position: {position} {ts_type}: {batch.max_timestamp} size: {batch.size_in_bytes} magic: {batch.magic} "
            f"compresscodec: {batch.compression_type.name} crc: {batch.checksum} isvalid: true"
            + (f" {_control_record(path, position, next(iter(batch)))}" if batch.is_control_batch else "")
        )
        if not deep:
            continue
        try:
            for r in batch:
                line = (
                    f"| offset: {r.offset} {ts_type}: {r.timestamp} keysize: {-1 if r.key is None else len(r.key)} "
                    f"valuesize: {-1 if r.value is None else len(r.value)} "
                    # a v0/v1 message has its own CRC and no sequence or headers (Kafka prints the crc)
                    + (
                        f"crc: {r.checksum}"
                        if legacy
                        else f"sequence: {r.sequence} headerKeys: [{','.join(h.key for h in r.headers)}]"
                    )
                )
                if batch.is_control_batch:
                    line += f" {_control_record(path, position, r)}"
                elif parser is not None:  # no keys for metadata records
                    line += f" payload: {parser.parse(r)}"
                elif print_data:
                    line += f" key: {_show(r.key)} payload: {_show(r.value)}"
                yield line
        except CorruptRecordException as e:
            raise DumpError(f"{path}: {_in_file(e, position)}") from None


def _control_record(path: Path, position: int, record) -> str:
    """A control record as Kafka's tool prints it: a transaction marker, a Raft control record with
    its message as JSON, or the unknown control type."""
    try:
        type_id = ControlRecordType.parse_type_id(record.key)
        if type_id == raft_control.LEADER_CHANGE:
            # Kafka 3.3 prints only "controlType: LEADER_CHANGE(2)"; the message (who leads, who
            # voted) is what a reader of the metadata log wants to see, so it follows.
            message = raft_control.deserialize_leader_change_message(record)
            return f"controlType: LEADER_CHANGE({type_id}) LeaderChange {_to_json(message)}"
        if type_id == raft_control.SNAPSHOT_HEADER:
            return f"SnapshotHeader {_to_json(raft_control.deserialize_snapshot_header_record(record))}"
        if type_id == raft_control.SNAPSHOT_FOOTER:
            return f"SnapshotFooter {_to_json(raft_control.deserialize_snapshot_footer_record(record))}"
        if ControlRecordType.parse(record.key) is ControlRecordType.UNKNOWN:
            return f"controlType: UNKNOWN({type_id})"
        marker = EndTransactionMarker.from_record(record)
    except CorruptRecordException as e:
        raise DumpError(f"{path}: control batch at byte {position}: {e}") from None
    return f"endTxnMarker: {marker.control_type.name} coordinatorEpoch: {marker.coordinator_epoch}"


class ClusterMetadataLogMessageParser:
    """A metadata record's value as Kafka 3.3's tool prints it: ``{"type", "version", "data"}``, or
    ``Error at <offset>, skipping. <why>`` for a value that does not decode (Kafka catches any
    Throwable here, so that one bad record does not end the dump)."""

    def __init__(self) -> None:
        self._serde = MetadataRecordSerde()

    def parse(self, record) -> str:
        try:
            if record.value is None:
                raise ValueError("the record has no value")
            message_and_version = self._serde.deserialize(bytes(record.value))
            message, version = message_and_version.message, message_and_version.version
            return _to_json(
                {
                    "type": MetadataRecordType.from_id(message.api_key()).name,
                    "version": version,
                    "data": _message_json(message, version),
                }
            )
        except Exception as e:  # any failure to decode is reported, as Kafka catches Throwable
            return f"Error at {record.offset}, skipping. {e}"


def _message_json(message: Message, version: int) -> dict[str, Any]:
    """A record (or a nested struct) at ``version`` as Kafka's generated JSON converter writes it:
    every field of that version in the spec's order, camelCase, then the tagged fields that differ
    from their defaults (the converter leaves a default tagged field out, as the wire form does)."""
    schema = message.schema(version)
    fields = {f.name: _json_value(getattr(message, f.name), version) for f in schema.fields}
    for f in schema.tagged:
        value = getattr(message, f.name)
        if value != f.default:
            fields[f.name] = _json_value(value, version)
    return fields


def _json_value(value: Any, version: int) -> Any:
    if isinstance(value, Message):
        return _message_json(value, version)
    if isinstance(value, list | tuple):
        return [_json_value(v, version) for v in value]
    if isinstance(value, uuid.UUID):
        # Kafka's Uuid.toString: the 16 bytes in URL-safe base64 without padding.
        return base64.urlsafe_b64encode(value.bytes).decode().rstrip("=")
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(bytes(value)).decode()  # a bytes field: Base64, as Kafka's converter
    return value


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def _to_json(value: dict[str, Any]) -> str:
    """Compact JSON with camelCase keys, as Jackson prints Kafka's ObjectNode. ``value`` holds plain
    values only: a control record's decoded dict, or a metadata record already made JSON-ready."""

    def camel_keys(v: Any) -> Any:
        if isinstance(v, dict):
            return {_camel(k): camel_keys(item) for k, item in v.items()}
        if isinstance(v, list):
            return [camel_keys(item) for item in v]
        return v

    return json.dumps(camel_keys(value), separators=(",", ":"))


def _in_file(e: CorruptRecordException, batch_position: int) -> str:
    """The error with positions in the file. Each batch is read into a buffer of its own, so the
    error counts from the batch's start ("record batch at byte 0 ..."): say where the batch sits in
    the file instead, and add the damaged byte's file position (as ``FileRecords.batches`` does for
    framing errors)."""
    message = str(e).replace("at byte 0", f"at byte {batch_position}", 1)
    return f"{message} (file byte {batch_position + (e.position or 0)})"


def _show(data: bytes | None) -> str:
    if data is None:
        return "null"
    return data.decode("utf-8", errors="backslashreplace")


def _log_beside(path: Path) -> Path:
    log_path = path.with_suffix(".log")
    if not log_path.exists():
        raise DumpError(f"{path}: no log file {log_path.name} beside it to check the index against")
    return log_path


def _entries(path: Path, entry: struct.Struct) -> Iterator[tuple]:
    data = path.read_bytes()
    if len(data) % entry.size:
        raise DumpError(f"{path}: {len(data)} bytes is not a whole number of {entry.size}-byte entries")
    for i in range(len(data) // entry.size):
        yield i, entry.unpack_from(data, i * entry.size)


def _dump_index(path: Path, base_offset: int) -> Iterator[str]:
    batches_by_position = {pos: batch for pos, batch in _batches(_log_beside(path))}
    last = -1
    for i, (relative, position) in _entries(path, struct.Struct(">ii")):
        offset = base_offset + relative
        if relative == 0 and position == 0:
            # No real entry is (0, 0): the first append to a segment never adds one. So this is a
            # pre-allocated index that was not trimmed (an active segment, or an unclean shutdown).
            yield f"(entries from {i} on are zero: the index was not trimmed after its last entry)"
            return
        if offset <= last:
            raise DumpError(f"{path}: entry {i} (offset {offset}) does not increase from offset {last}")
        batch = batches_by_position.get(position)
        if batch is None:
            raise DumpError(
                f"{path}: entry {i} points at position {position}, where no batch starts in the log"
            )
        if batch.base_offset != offset:
            raise DumpError(
                f"{path}: index offset {offset}, log offset {batch.base_offset} mismatch at position {position}"
            )
        last = offset
        yield f"offset: {offset} position: {position}"


def _dump_time_index(path: Path, base_offset: int) -> Iterator[str]:
    batches = [batch for _, batch in _batches(_log_beside(path))]
    last_ts = -1
    for i, (timestamp, relative) in _entries(path, struct.Struct(">qi")):
        offset = base_offset + relative
        if timestamp == 0 and relative == 0:  # pre-allocated and not trimmed, as above
            yield f"(entries from {i} on are zero: the time index was not trimmed after its last entry)"
            return
        if timestamp < last_ts:
            raise DumpError(f"{path}: entry {i} timestamp {timestamp} is smaller than the previous {last_ts}")
        holding = [b for b in batches if b.last_offset <= offset or b.base_offset <= offset <= b.last_offset]
        if not holding or not any(b.base_offset <= offset <= b.last_offset for b in holding):
            raise DumpError(f"{path}: entry {i} names offset {offset}, which no batch in the log holds")
        max_ts = max(b.max_timestamp for b in holding)
        if max_ts != timestamp:
            raise DumpError(
                f"{path}: entry {i} says the largest timestamp up to offset {offset} is {timestamp}, the log says {max_ts}"
            )
        last_ts = timestamp
        yield f"timestamp: {timestamp} offset: {offset}"


def _dump_txn_index(path: Path, base_offset: int) -> Iterator[str]:
    """Each aborted transaction, in marker order; the markers must follow the segment's base offset
    and each other (Kafka's ``TransactionIndex.sanityCheck`` and its append rule)."""
    data = path.read_bytes()
    if len(data) % ENTRY_SIZE:
        raise DumpError(f"{path}: {len(data)} bytes is not a whole number of {ENTRY_SIZE}-byte entries")
    last = None
    for i in range(len(data) // ENTRY_SIZE):
        txn = AbortedTxn.from_bytes(data, i * ENTRY_SIZE)
        if txn.last_offset < base_offset or (last is not None and txn.last_offset <= last):
            raise DumpError(
                f"{path}: entry {i} has last offset {txn.last_offset}, not after "
                f"{base_offset - 1 if last is None else last}"
            )
        last = txn.last_offset
        yield (
            f"version: {txn.version} producerId: {txn.producer_id} firstOffset: {txn.first_offset} "
            f"lastOffset: {txn.last_offset} lastStableOffset: {txn.last_stable_offset}"
        )
