"""The records of ``__transaction_state``: Kafka 0.11's key and value schemas, written and read.

Mirrors: object kafka.coordinator.transaction.TransactionLog (keyToBytes, valueToBytes,
         readTxnRecordKey, readTxnRecordValue; core/src/main/scala/kafka/coordinator/transaction/
         TransactionLog.scala, Kafka 0.11.0)
Book:    beyond the book (Kafka 0.11's transactions, KIP-98)
Differs: a transaction's partitions are written topic by topic in sorted order (Kafka groups them
         in its hash map's order, which no reader depends on), so the bytes are reproducible.

The transaction coordinator keeps its state in a compacted topic, as the group coordinator does in
``__consumer_offsets``. One key per transactional id, so compaction keeps each id's latest value:

    key   version 0: [transactional_id STRING]
    value version 0: [producer_id INT64, producer_epoch INT16, transaction_timeout INT32,
                      transaction_status INT8, transaction_partitions [topic STRING,
                      partition_ids [INT32]] (null when Empty), transaction_entry_timestamp INT64,
                      transaction_start_timestamp INT64]

each preceded by its int16 schema version. A tombstone (null value) is an expired transactional id.
Kafka enforces, for this topic, no compression and acks=-1 on every write.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from kafka_lite.common.errors import KafkaException
from kafka_lite.common.protocol.types import (
    INT8,
    INT16,
    INT32,
    INT64,
    STRING,
    ArrayOf,
    Field,
    Schema,
    SchemaException,
    decode,
)
from kafka_lite.common.topic import TRANSACTION_STATE_TOPIC_NAME  # noqa: F401 (the log's topic, named here too)
from kafka_lite.coordinator.transaction.transaction_metadata import (
    TransactionMetadata,
    TransactionState,
    TxnTransitMetadata,
    byte_to_state,
)

# Kafka's TransactionLog defaults and enforced settings
DEFAULT_NUM_PARTITIONS = 50
DEFAULT_SEGMENT_BYTES = 100 * 1024 * 1024
DEFAULT_REPLICATION_FACTOR = 3
DEFAULT_MIN_IN_SYNC_REPLICAS = 2
DEFAULT_LOAD_BUFFER_SIZE = 5 * 1024 * 1024
ENFORCED_REQUIRED_ACKS = -1

# --8<-- [start:schemas]
KEY_SCHEMA_V0 = Schema(Field("transactional_id", STRING), name="TransactionLogKey")
_PARTITIONS_SCHEMA = Schema(Field("topic", STRING), Field("partition_ids", ArrayOf(INT32)))
VALUE_SCHEMA_V0 = Schema(
    Field("producer_id", INT64, "Producer id in use by the transactional id."),
    Field("producer_epoch", INT16, "Epoch associated with the producer id"),
    Field("transaction_timeout", INT32, "Transaction timeout in milliseconds"),
    Field("transaction_status", INT8, "TransactionState the transaction is in"),
    Field("transaction_partitions", ArrayOf(_PARTITIONS_SCHEMA, nullable=True),
          "Set of partitions involved in the transaction"),
    Field("transaction_entry_timestamp", INT64, "Time the transaction was last updated"),
    Field("transaction_start_timestamp", INT64, "Time the transaction was started"),
    name="TransactionLogValue",
)  # fmt: skip
# --8<-- [end:schemas]
KEY_SCHEMAS = {0: KEY_SCHEMA_V0}
VALUE_SCHEMAS = {0: VALUE_SCHEMA_V0}
CURRENT_KEY_VERSION = 0
CURRENT_VALUE_VERSION = 0

_VERSION = struct.Struct(">h")


class TransactionLogRecordException(KafkaException):
    """A key or value of ``__transaction_state`` that does not match Kafka's schemas."""


@dataclass(frozen=True)
class TxnKey:
    version: int
    transactional_id: str


def key_to_bytes(transactional_id: str) -> bytes:
    """The key of ``transactional_id``'s record (Kafka's ``keyToBytes``)."""
    out = bytearray(_VERSION.pack(CURRENT_KEY_VERSION))
    KEY_SCHEMA_V0.write(out, {"transactional_id": transactional_id})
    return bytes(out)


def value_to_bytes(txn_metadata: TxnTransitMetadata) -> bytes:
    """The value for a transition (Kafka's ``valueToBytes``): partitions null when Empty."""
    if txn_metadata.txn_state is TransactionState.EMPTY:
        if txn_metadata.topic_partitions:
            raise TransactionLogRecordException(
                f"Transaction is not expected to have any partitions since its state is "
                f"{txn_metadata.txn_state}: {txn_metadata}"
            )
        partitions = None
    else:
        by_topic: dict[str, list[int]] = {}
        for topic, partition in sorted(txn_metadata.topic_partitions):
            by_topic.setdefault(topic, []).append(partition)
        partitions = [{"topic": t, "partition_ids": ps} for t, ps in by_topic.items()]
    value = {
        "producer_id": txn_metadata.producer_id,
        "producer_epoch": txn_metadata.producer_epoch,
        "transaction_timeout": txn_metadata.txn_timeout_ms,
        "transaction_status": txn_metadata.txn_state.byte,
        "transaction_partitions": partitions,
        "transaction_entry_timestamp": txn_metadata.txn_last_update_timestamp,
        "transaction_start_timestamp": txn_metadata.txn_start_timestamp,
    }
    out = bytearray(_VERSION.pack(CURRENT_VALUE_VERSION))
    VALUE_SCHEMA_V0.write(out, value)
    return bytes(out)


def read_txn_record_key(buf: bytes | bytearray | memoryview | None) -> TxnKey:
    """Decode a key (Kafka's ``readTxnRecordKey``)."""
    if buf is None:
        raise TransactionLogRecordException("Transaction state log's key should not be null")
    version = _read_version("a __transaction_state key", buf)
    schema = KEY_SCHEMAS.get(version)
    if schema is None:
        raise TransactionLogRecordException(f"Unknown transaction log message key schema version {version}")
    return TxnKey(version, _read("a __transaction_state key", version, schema, buf)["transactional_id"])


def read_txn_record_value(
    transactional_id: str, buf: bytes | bytearray | memoryview | None
) -> TransactionMetadata | None:
    """Decode a value into the id's metadata, or ``None`` for a tombstone (Kafka's ``readTxnRecordValue``)."""
    if buf is None:
        return None
    version = _read_version("a __transaction_state value", buf)
    schema = VALUE_SCHEMAS.get(version)
    if schema is None:
        raise TransactionLogRecordException(f"Unknown transaction log message value schema version {version}")
    v = _read("a __transaction_state value", version, schema, buf)
    try:
        state = byte_to_state(v["transaction_status"])
    except KafkaException as e:
        raise TransactionLogRecordException(str(e)) from e
    metadata = TransactionMetadata(
        transactional_id,
        v["producer_id"],
        v["producer_epoch"],
        v["transaction_timeout"],
        state,
        (),
        v["transaction_start_timestamp"],
        v["transaction_entry_timestamp"],
    )
    if state is not TransactionState.EMPTY:
        for entry in v["transaction_partitions"] or ():
            metadata.add_partitions((entry["topic"], p) for p in entry["partition_ids"])
    return metadata


def _read_version(what: str, buf: bytes | bytearray | memoryview) -> int:
    if len(buf) < _VERSION.size:
        raise TransactionLogRecordException(f"{what} of {len(buf)} bytes is too short for its int16 version")
    return _VERSION.unpack_from(buf)[0]


def _read(what: str, version: int, schema: Schema, buf: bytes | bytearray | memoryview) -> dict:
    try:
        return decode(schema, buf, _VERSION.size)
    except SchemaException as e:
        raise TransactionLogRecordException(f"{what} v{version} does not match {schema.name}: {e}") from e
