"""The SQLite sink task: each record's Struct value a row, the rows committed when the worker flushes.

No Kafka twin: it plays the part of Confluent's ``JdbcSinkTask`` and ``JdbcDbWriter`` (the JDBC
         sink connector, not part of Apache Kafka) on SQLite; its shape is Kafka's ``SinkTask``.
Book:    chapter 8, 8.3
Differs: from Confluent's sink: rows are committed in ``flush``, not at the end of each ``put``;
         no ``auto.evolve`` (a record with a column the table lacks is refused), no deletes.
Labs:    lab 15, stage 1 (``put``, ``write_record``, ``flush``)

The schema does the work here. The worker's value converter turns the record's bytes into Connect
data; with JsonConverter and ``schemas.enable=true`` a value is a ``Struct`` whose ``Schema`` names
each field and its type, and that schema becomes the table (``sqlite_dialect.create_table_sql``). A
schemaless value (a ``dict`` from JSON without an envelope) says nothing about types or which fields
are required, so it is refused with a ``DataException`` naming where it came from.

When rows become visible is the delivery guarantee. The worker calls ``put`` with each batch, and
every ``offset.flush.interval.ms`` calls ``flush(offsets)`` and, only once ``flush`` returned,
commits those offsets to the consumer group. So ``put`` writes inside one open transaction, and
``flush`` commits it: what the group's offsets say was consumed is always in the table. Rows
committed *later* than the offsets (a buffer written after the commit) would be lost in a crash
between the two; rows committed earlier are only seen twice. One window remains: a crash after
``flush`` committed the rows and before the offsets reached the group hands the same records again.
With ``pk.mode=kafka`` each row's key is its record's topic, partition and offset, and the insert
is an upsert, so a record seen again replaces its own row: the table holds each record once.

Each ``put`` runs inside a savepoint: a record that cannot be written undoes its batch (whose
offsets the worker never moves past) but not the batches before it, whose offsets the worker will
commit after the next ``flush``. One transaction per flush interval is also what makes the sink
fast: a COMMIT waits for the disk, an INSERT does not.

The connection is opened in ``start`` and used only from the task's thread: the worker calls
``put``, ``flush`` and ``stop`` there (``sqlite3`` refuses a connection used from two threads).
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Collection
from typing import Any

from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.connect.data.schema import Type
from kafka_lite.connect.data.struct import Struct
from kafka_lite.connect.errors import ConnectException, DataException
from kafka_lite.connect.sink.sink_record import SinkRecord
from kafka_lite.connect.sink.sink_task import SinkTask
from kafka_lite.connect.sqlite import sqlite_dialect
from kafka_lite.connect.sqlite.sqlite_sink_config import (
    AUTO_CREATE_CONFIG,
    CONFIG_DEF,
    CONNECTION_URL_CONFIG,
    PK_MODE_CONFIG,
    PK_MODE_KAFKA,
    TABLE_NAME_FORMAT_CONFIG,
)
from kafka_lite.consumer.offset_and_metadata import OffsetAndMetadata

log = logging.getLogger(__name__)

SAVEPOINT = "put"


class SqliteSinkTask(SinkTask):
    def __init__(self) -> None:
        super().__init__()
        self.connection: sqlite3.Connection | None = None
        self.table_name_format = ""
        self.pk_columns: tuple[str, ...] = ()  # the Kafka coordinates of a row, when pk.mode=kafka
        self.auto_create = False
        self.tables: dict[str, set[str]] = {}  # each table written to, with its columns

    def version(self) -> str:
        return "0.10.1.0"

    def start(self, props: dict[str, str]) -> None:
        config = CONFIG_DEF.parse(props, allow_unknown=True)
        self.table_name_format = config[TABLE_NAME_FORMAT_CONFIG]
        self.pk_columns = sqlite_dialect.KAFKA_PK_COLUMNS if config[PK_MODE_CONFIG] == PK_MODE_KAFKA else ()
        self.auto_create = config[AUTO_CREATE_CONFIG]
        try:
            self.connection = sqlite_dialect.connect(config[CONNECTION_URL_CONFIG])
        except sqlite3.Error as e:
            raise ConnectException(
                f"Cannot open the SQLite database {config[CONNECTION_URL_CONFIG]}: {e}"
            ) from e

    def put(self, records: Collection[SinkRecord]) -> None:
        """Write ``records`` in the open transaction (begun here if none is); a record that cannot be
        written undoes the rows of this call, and only those, and raises."""
        # BEGIN SOLUTION
        if not self.connection.in_transaction:
            self.connection.execute("BEGIN")
        self.connection.execute(f"SAVEPOINT {SAVEPOINT}")
        try:
            for record in records:
                self.write_record(record)
        except BaseException:
            self.connection.execute(f"ROLLBACK TO {SAVEPOINT}")
            raise
        finally:
            # Released either way: after ROLLBACK TO the savepoint is still open, its rows undone.
            self.connection.execute(f"RELEASE {SAVEPOINT}")
        # END SOLUTION

    def write_record(self, record: SinkRecord) -> None:
        """One row of ``record``'s table: its Struct's fields, and its Kafka coordinates as the key
        when ``pk.mode=kafka`` (then an upsert). A value without a Struct schema is refused."""
        # BEGIN SOLUTION
        schema = record.value_schema
        if schema is None or schema.type is not Type.STRUCT or not isinstance(record.value, Struct):
            raise DataException(
                f"SqliteSinkTask needs a Struct value with a schema to make a row; the record at offset "
                f"{record.kafka_offset} of {record.topic}-{record.kafka_partition} has {_described(record)}. "
                "Turn schemas on: value.converter=org.apache.kafka.connect.json.JsonConverter with "
                'value.converter.schemas.enable=true, and records written as {"schema":...,"payload":...}'
            )
        table = self.table_name(record.topic)
        self.ensure_table(table, record)
        columns = [field.name for field in schema.fields()]
        values = [_column_value(record.value.get(name)) for name in columns]
        if self.pk_columns:
            columns += self.pk_columns
            values += [record.topic, record.kafka_partition, record.kafka_offset]
        self.connection.execute(sqlite_dialect.insert_sql(table, columns, bool(self.pk_columns)), values)
        # END SOLUTION

    def flush(self, current_offsets: dict[TopicPartition, OffsetAndMetadata]) -> None:
        """Commit every row ``put`` since the last flush: the worker commits ``current_offsets`` next."""
        # BEGIN SOLUTION
        if self.connection.in_transaction:
            self.connection.execute("COMMIT")
        # END SOLUTION

    def stop(self) -> None:
        if self.connection is not None:
            # Rows put since the last flush are undone: their offsets were not committed, so the
            # next owner of the partitions is handed those records again.
            if self.connection.in_transaction:
                self.connection.execute("ROLLBACK")
            self.connection.close()
            self.connection = None

    def table_name(self, topic: str) -> str:
        return self.table_name_format.replace("${topic}", topic)

    def ensure_table(self, table: str, record: SinkRecord) -> None:
        """Create ``table`` from the record's schema if it is missing (with ``auto.create``), or check
        that it has a column for every field; the columns are looked up once per table."""
        columns = self.tables.get(table)
        if columns is None:
            columns = {name for name, _, _ in sqlite_dialect.table_columns(self.connection, table)}
            if not columns:
                if not self.auto_create:
                    raise ConnectException(
                        f"Table {table} is missing and auto-creation is disabled: create it, or set "
                        "auto.create=true to create it from the first record's value schema"
                    )
                sql = sqlite_dialect.create_table_sql(table, record.value_schema, self.pk_columns)
                log.info("Creating table %s for %s: %s", table, record.topic, sql)
                self.connection.execute(sql)
                columns = {f.name for f in record.value_schema.fields()} | set(self.pk_columns)
            self.tables[table] = columns
        missing = [f.name for f in record.value_schema.fields() if f.name not in columns]
        missing += [c for c in self.pk_columns if c not in columns]
        if missing:
            raise ConnectException(
                f"Table {table} has no column {', '.join(missing)} for the record at offset "
                f"{record.kafka_offset} of {record.topic}-{record.kafka_partition}; add the columns "
                "(this sink does not alter tables)"
            )


def _column_value(value: Any) -> Any:
    """A field's value as sqlite3 stores it: a bool as 0 or 1, bytes as a BLOB, the rest as they are."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, bytearray):
        return bytes(value)
    return value


def _described(record: SinkRecord) -> str:
    if record.value is None:
        return "a null value (a tombstone)" if record.value_schema is None else "a null value"
    if record.value_schema is None:
        return f"a schemaless {type(record.value).__name__} value"
    return f"a value of schema type {record.value_schema.type.name}"
