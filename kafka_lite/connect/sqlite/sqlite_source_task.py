"""The SQLite source task: the rows of its tables, in the order of an increasing column, each once.

No Kafka twin: it plays the part of Confluent's ``JdbcSourceTask`` with ``TimestampIncrementingTableQuerier``
         (the JDBC source connector, not part of Apache Kafka) in ``mode=incrementing``; its shape
         is Kafka's ``SourceTask``, and its offsets work as ``FileStreamSourceTask``'s do.
Book:    chapter 8, 8.3
Differs: from Confluent's task: a fresh connection for each query, and one wait of ``poll.interval.ms``
         when no table had new rows (Confluent's keeps a queue of tables by their next poll time).
Labs:    lab 15, stage 2 (``start``, ``poll``)

Each table is a *source partition*, ``{"table": <name>}``, and the value of its incrementing column
(``id`` unless ``incrementing.column.name`` says otherwise) in the last row read is its *source
offset*, ``{"incrementing": <id>}``. Every record carries both. The task never stores them itself:
the worker writes a record's offset to the offset store (a file in standalone mode) only after the
record is in Kafka, and ``start`` asks for the last one written through
``context.offset_storage_reader()``. A restarted task therefore asks for the rows after the last
*committed* id: nothing committed is read twice, and rows read but not committed before a crash are
read again (at-least-once, as every source connector is in Kafka 0.10).

A row is new when its incrementing column is larger than the offset, so the column must only grow:
an ``INTEGER PRIMARY KEY`` (SQLite's rowid) does. Rows updated in place are not seen again; that is
what Confluent's ``timestamp`` modes are for.
"""

from __future__ import annotations

import sqlite3
import threading
from contextlib import closing

from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.connect.data.schema import Schema
from kafka_lite.connect.data.struct import Struct
from kafka_lite.connect.errors import ConnectException
from kafka_lite.connect.source.source_record import SourceRecord
from kafka_lite.connect.source.source_task import SourceTask
from kafka_lite.connect.sqlite import sqlite_dialect
from kafka_lite.connect.sqlite.sqlite_source_config import (
    BATCH_MAX_ROWS_CONFIG,
    CONNECTION_URL_CONFIG,
    INCREMENTING_COLUMN_NAME_CONFIG,
    POLL_INTERVAL_MS_CONFIG,
    TABLES_CONFIG,
    TASK_CONFIG_DEF,
    TOPIC_PREFIX_CONFIG,
)

TABLE_NAME_KEY = "table"  # the source partition's key (Confluent's JdbcSourceConnectorConstants)
INCREMENTING_FIELD = "incrementing"  # the source offset's key (Confluent's TimestampIncrementingOffset)


def source_partition(table: str) -> dict[str, str]:
    return {TABLE_NAME_KEY: table}


class SqliteSourceTask(SourceTask):
    def __init__(self) -> None:
        super().__init__()
        self.url = ""
        self.tables: list[str] = []
        self.incrementing_column = ""
        self.topic_prefix = ""
        self.poll_interval_s = 0.0
        self.batch_max_rows = 0
        self.last_ids: dict[str, int | None] = {}  # each table's last id read, None before its first row
        # Kafka's SourceTask has no clock; this one waits its poll interval on ``time``, so that a test
        # (or lab 15's grader) can run that wait on a MockTime.
        self.time: Time = SYSTEM
        self._stop_requested = threading.Condition()  # notified by stop(), from the herder's thread
        self._stopping = False

    def version(self) -> str:
        return "0.10.1.0"

    def start(self, props: dict[str, str]) -> None:
        """Read the settings, then each table's last committed offset: where this task goes on from."""
        config = TASK_CONFIG_DEF.parse(props, allow_unknown=True)
        self.url = config[CONNECTION_URL_CONFIG]
        self.tables = config[TABLES_CONFIG]
        self.incrementing_column = config[INCREMENTING_COLUMN_NAME_CONFIG]
        self.topic_prefix = config[TOPIC_PREFIX_CONFIG]
        self.poll_interval_s = config[POLL_INTERVAL_MS_CONFIG] / 1000
        self.batch_max_rows = config[BATCH_MAX_ROWS_CONFIG]
        # BEGIN SOLUTION
        reader = self.context.offset_storage_reader()
        for table in self.tables:
            offset = reader.offset(source_partition(table))
            last_id = (offset or {}).get(INCREMENTING_FIELD)
            if last_id is not None and (not isinstance(last_id, int) or isinstance(last_id, bool)):
                raise ConnectException(f"Offset {offset} of table {table} is not an integer id")
            self.last_ids[table] = last_id
        # END SOLUTION

    def poll(self) -> list[SourceRecord] | None:
        """The rows of every table after its last id, each a record with its table and id; None,
        after waiting ``poll.interval.ms`` (or until ``stop``), when no table had new rows."""
        # BEGIN SOLUTION
        records = []
        for table in self.tables:
            schema, rows = self.new_rows(table, self.last_ids[table])
            for row in rows:
                last_id = row.get(self.incrementing_column)
                records.append(SourceRecord(source_partition(table), {INCREMENTING_FIELD: last_id},
                                            self.topic_prefix + table, None, None, None, schema, row))  # fmt: skip
                self.last_ids[table] = last_id
        if not records:
            self.wait_poll_interval()
            return None
        return records
        # END SOLUTION

    def wait_poll_interval(self) -> None:
        """Wait ``poll.interval.ms`` on ``self.time``, or until ``stop`` is called: what ``poll`` does
        when no table had new rows, so that an idle task does not query its tables in a busy loop."""
        with self._stop_requested:
            self.time.wait_for(
                self._stop_requested, lambda: self._stopping, round(self.poll_interval_s * 1000)
            )

    def stop(self) -> None:
        with self._stop_requested:
            self._stopping = True
            self._stop_requested.notify_all()

    def new_rows(self, table: str, after: int | None) -> tuple[Schema, list[Struct]]:
        """The schema of ``table``'s rows and at most ``batch.max.rows`` of them whose incrementing
        column is larger than ``after`` (all of them when it is None), in that column's order."""
        column = sqlite_dialect.quote(self.incrementing_column)
        where = "" if after is None else f" WHERE {column} > ?"
        sql = f"SELECT * FROM {sqlite_dialect.quote(table)}{where} ORDER BY {column} LIMIT ?"
        params = ([] if after is None else [after]) + [self.batch_max_rows]
        # A connection per query: poll runs on the worker's thread, stop on the herder's, and a
        # sqlite3 connection belongs to the thread that made it.
        try:
            with closing(sqlite_dialect.connect(self.url)) as connection:
                columns = sqlite_dialect.table_columns(connection, table)
                if not columns:
                    raise ConnectException(f"Table {table} does not exist in {self.url}")
                if self.incrementing_column not in [name for name, _, _ in columns]:
                    raise ConnectException(
                        f"Table {table} has no column {self.incrementing_column} to find its new rows by; "
                        f"set {INCREMENTING_COLUMN_NAME_CONFIG} to an increasing integer column"
                    )
                rows = connection.execute(sql, params).fetchall()
        except sqlite3.Error as e:
            raise ConnectException(f"Failed to read table {table} of {self.url}: {e}") from e
        schema = sqlite_dialect.table_schema(table, columns)
        structs = []
        for row in rows:
            struct = Struct(schema)
            for (name, _, _), value in zip(columns, row, strict=True):
                struct.put(name, value)
            structs.append(struct)
        return schema, structs
