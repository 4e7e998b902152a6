"""The SQLite source, without a worker: rows as Structs of the table's schema, read by an increasing
column from the committed offset on; its connector's split of the tables among tasks."""

from __future__ import annotations

import sqlite3

import pytest

from kafka_lite.connect.data.schema import Type
from kafka_lite.connect.errors import ConnectException, DataException
from kafka_lite.connect.json.json_converter import JsonConverter
from kafka_lite.connect.runtime.connector_factory import connector_class
from kafka_lite.connect.source.source_task import SourceTaskContext
from kafka_lite.connect.sqlite.sqlite_source_connector import SqliteSourceConnector, group_partitions
from kafka_lite.connect.sqlite.sqlite_source_task import SqliteSourceTask, source_partition
from kafka_lite.connect.storage.offset_storage_reader import OffsetStorageReader, frozen_partition

pytestmark = pytest.mark.unit


class StoredOffsets(OffsetStorageReader, SourceTaskContext):
    """A context whose reader answers from a dict of tables' offsets: what the worker's store would hold."""

    def __init__(self, offsets: dict[str, dict]) -> None:
        self.stored = {frozen_partition(source_partition(table)): o for table, o in offsets.items()}

    def offsets(self, partitions):
        return {frozen_partition(p): self.stored[frozen_partition(p)] for p in partitions
                if frozen_partition(p) in self.stored}  # fmt: skip

    def offset_storage_reader(self):
        return self


def database(path, rows=3):
    with sqlite3.connect(path) as c:
        c.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, item TEXT NOT NULL, price REAL, note BLOB)")
        c.executemany(
            "INSERT INTO orders (item, price) VALUES (?, ?)", [(f"item {i}", i * 1.5) for i in range(rows)]
        )
    return path


def task(db, offsets=None, **settings) -> SqliteSourceTask:
    t = SqliteSourceTask()
    t.initialize(StoredOffsets(offsets or {}))
    t.start({"connection.url": str(db), "tables": "orders", "table.whitelist": "orders",
             "topic.prefix": "sqlite-", "poll.interval.ms": "0", **settings})  # fmt: skip
    return t


def test_rows_become_structs_of_the_tables_schema_that_json_converter_writes(tmp_path):
    first = task(database(tmp_path / "in.db")).poll()[0]
    assert first.topic == "sqlite-orders"
    assert first.source_partition == {"table": "orders"} and first.source_offset == {"incrementing": 1}
    schema = first.value_schema
    assert schema.name == "orders"
    assert [(f.name, f.schema.type, f.schema.optional) for f in schema.fields()] == [
        ("id", Type.INT64, True), ("item", Type.STRING, False),
        ("price", Type.FLOAT64, True), ("note", Type.BYTES, True),
    ]  # fmt: skip
    converter = JsonConverter()
    converter.configure({"schemas.enable": "false"}, False)
    assert converter.from_connect_data(first.topic, schema, first.value) == (
        b'{"id":1,"item":"item 0","price":0.0,"note":null}'
    )


def test_poll_reads_after_the_committed_offset_in_batches(tmp_path):
    db = database(tmp_path / "in.db", rows=5)
    t = task(db, **{"batch.max.rows": "2"})
    assert [r.value.get("id") for r in t.poll()] == [1, 2]
    assert [r.value.get("id") for r in t.poll()] == [3, 4]
    # A new task starts after the id its context's reader says was committed, not after what the
    # last task read.
    resumed = task(db, {})
    assert [r.value.get("id") for r in resumed.poll()] == [1, 2, 3, 4, 5]
    resumed = task(db, {"orders": {"incrementing": 3}})
    assert [r.value.get("id") for r in resumed.poll()] == [4, 5]
    assert resumed.poll() is None  # nothing new (after poll.interval.ms, here 0)


def test_a_bad_table_or_column_is_named(tmp_path):
    db = database(tmp_path / "in.db")
    with pytest.raises(ConnectException, match="Table missing does not exist"):
        task(db, tables="missing").poll()
    with pytest.raises(ConnectException, match="has no column seq"):
        task(db, **{"incrementing.column.name": "seq"}).poll()
    with sqlite3.connect(db) as c:
        c.execute("CREATE TABLE prices (id INTEGER PRIMARY KEY, amount DECIMAL(10, 2))")
    with pytest.raises(DataException, match="amount of table prices is declared DECIMAL"):
        task(db, tables="prices").poll()


def test_the_connector_splits_the_tables_among_its_tasks():
    assert connector_class("SqliteSource") is SqliteSourceConnector
    assert group_partitions(["a", "b", "c", "d", "e"], 3) == [["a", "b"], ["c", "d"], ["e"]]
    assert group_partitions(["a"], 4) == [["a"]]
    connector = SqliteSourceConnector()
    connector.start({"connection.url": "x.db", "table.whitelist": "a,b,c", "topic.prefix": "t-"})
    assert [c["tables"] for c in connector.task_configs(2)] == ["a,b", "c"]
