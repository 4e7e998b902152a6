"""The SQLite sink, without a worker: records made from JSON-with-schema bytes by JsonConverter, put,
flushed, and the table read back with sqlite3."""

from __future__ import annotations

import sqlite3

import pytest

from kafka_lite.common.errors import ConfigException
from kafka_lite.connect.errors import ConnectException, DataException
from kafka_lite.connect.json.json_converter import JsonConverter
from kafka_lite.connect.runtime.connector_factory import connector_class
from kafka_lite.connect.sink.sink_record import SinkRecord
from kafka_lite.connect.sqlite.sqlite_dialect import database_path
from kafka_lite.connect.sqlite.sqlite_sink_connector import SqliteSinkConnector
from kafka_lite.connect.sqlite.sqlite_sink_task import SqliteSinkTask

pytestmark = pytest.mark.unit

# A value as Kafka's JsonConverter (schemas.enable=true) writes a Struct: the envelope, the struct's
# schema with each field's type, optional flag and name, then the payload.
USER_SCHEMA = (
    b'{"type":"struct","fields":['
    b'{"type":"int64","optional":false,"field":"id"},'
    b'{"type":"string","optional":false,"field":"name"},'
    b'{"type":"int32","optional":true,"field":"age"},'
    b'{"type":"double","optional":true,"field":"score"},'
    b'{"type":"boolean","optional":false,"field":"active"},'
    b'{"type":"bytes","optional":true,"field":"avatar"}'
    b'],"optional":false,"name":"user"}'
)
ADA = (
    b'{"schema":'
    + USER_SCHEMA
    + b',"payload":{"id":1,"name":"ada","age":36,"score":9.5,"active":true,"avatar":"AAH/"}}'
)
BOB = (
    b'{"schema":'
    + USER_SCHEMA
    + b',"payload":{"id":2,"name":"bob","age":null,"score":null,"active":false,"avatar":null}}'
)


def converter(schemas: bool = True) -> JsonConverter:
    c = JsonConverter()
    c.configure({"schemas.enable": "true" if schemas else "false"}, False)
    return c


def record(
    value: bytes, offset: int, topic: str = "users", partition: int = 0, schemas: bool = True
) -> SinkRecord:
    """A SinkRecord as the worker makes it: the value's bytes through the value converter."""
    data = converter(schemas).to_connect_data(topic, value)
    return SinkRecord(topic, partition, None, None, data.schema, data.value, offset)


def sink(db, **settings) -> SqliteSinkTask:
    task = SqliteSinkTask()
    task.start({"connection.url": f"sqlite:///{db}", "auto.create": "true", **settings})
    return task


def rows(db, sql: str = 'SELECT * FROM "users" ORDER BY rowid') -> list[tuple]:
    with sqlite3.connect(db) as reader:
        return reader.execute(sql).fetchall()


def test_the_value_schema_makes_the_tables_columns_and_types(tmp_path):
    db = tmp_path / "out.db"
    task = sink(db)
    task.put([record(ADA, 0)])
    task.flush({})
    columns = rows(db, "SELECT name, type, \"notnull\" FROM pragma_table_info('users')")
    assert columns == [
        ("id", "INTEGER", 1), ("name", "TEXT", 1), ("age", "INTEGER", 0),
        ("score", "REAL", 0), ("active", "INTEGER", 1), ("avatar", "BLOB", 0),
    ]  # fmt: skip
    task.stop()


def test_rows_are_visible_only_after_flush_with_their_values(tmp_path):
    db = tmp_path / "out.db"
    task = sink(db)
    task.put([record(ADA, 0)])
    # Another connection sees nothing yet, not even the table: put's transaction is still open.
    with pytest.raises(sqlite3.OperationalError, match="no such table"):
        rows(db)
    task.put([record(BOB, 1)])
    task.flush({})
    assert rows(db) == [(1, "ada", 36, 9.5, 1, b"\x00\x01\xff"), (2, "bob", None, None, 0, None)]
    task.stop()


def test_rows_put_after_the_last_flush_are_undone_when_the_task_stops(tmp_path):
    db = tmp_path / "out.db"
    task = sink(db)
    task.put([record(ADA, 0)])
    task.flush({})
    task.put([record(BOB, 1)])
    task.stop()  # a crash before the next flush: offset 1 was never committed, so it comes again
    assert [r[1] for r in rows(db)] == ["ada"]


def test_redelivered_records_replace_their_rows_with_pk_mode_kafka(tmp_path):
    db = tmp_path / "out.db"
    task = sink(db, **{"pk.mode": "kafka"})
    task.put([record(ADA, 7), record(BOB, 8)])
    task.flush({})
    task.put([record(BOB, 8), record(ADA, 9)])  # 8 again, as after a crash before the offsets' commit
    task.flush({})
    assert rows(db, 'SELECT name, __connect_topic, __connect_partition, __connect_offset FROM "users" ORDER BY 4') == [
        ("ada", "users", 0, 7), ("bob", "users", 0, 8), ("ada", "users", 0, 9),
    ]  # fmt: skip
    task.stop()


def test_without_a_key_redelivery_makes_duplicates(tmp_path):
    db = tmp_path / "out.db"
    task = sink(db)
    task.put([record(BOB, 8)])
    task.flush({})
    task.put([record(BOB, 8)])
    task.flush({})
    assert [r[1] for r in rows(db)] == ["bob", "bob"]
    task.stop()


def test_a_schemaless_value_is_refused_naming_the_record_and_the_fix(tmp_path):
    task = sink(tmp_path / "out.db")
    schemaless = record(b'{"id":1,"name":"ada"}', 42, topic="users", partition=3, schemas=False)
    with pytest.raises(DataException) as e:
        task.put([schemaless])
    message = str(e.value)
    assert "offset 42 of users-3" in message and "schemaless dict" in message
    assert "value.converter.schemas.enable=true" in message
    with pytest.raises(DataException, match="schema type STRING"):
        task.put([record(b'{"schema":{"type":"string","optional":false},"payload":"x"}', 43)])
    task.stop()


def test_a_refused_record_undoes_its_batch_but_not_the_batches_before_it(tmp_path):
    db = tmp_path / "out.db"
    task = sink(db)
    task.put([record(ADA, 0)])  # its offset will be committed after the next flush
    with pytest.raises(DataException):
        task.put([record(BOB, 1), record(b'"not a struct"', 2, schemas=False)])
    task.flush({})
    assert [r[1] for r in rows(db)] == ["ada"]
    task.stop()


def test_a_missing_table_without_auto_create_and_a_missing_column_are_refused(tmp_path):
    db = tmp_path / "out.db"
    task = SqliteSinkTask()
    task.start({"connection.url": str(db)})
    with pytest.raises(ConnectException, match="Table users is missing and auto-creation is disabled"):
        task.put([record(ADA, 0)])
    task.stop()
    with sqlite3.connect(db) as c:
        c.execute("CREATE TABLE users (id INTEGER, name TEXT, active INTEGER)")
    task.start({"connection.url": str(db)})
    with pytest.raises(ConnectException, match="Table users has no column age, score, avatar"):
        task.put([record(ADA, 0)])
    task.stop()


def test_table_name_format_puts_each_topic_in_its_table(tmp_path):
    db = tmp_path / "out.db"
    task = sink(db, **{"table.name.format": "kafka_${topic}"})
    task.put([record(ADA, 0, topic="page-views"), record(BOB, 0, topic="users")])
    task.flush({})
    assert rows(db, 'SELECT name FROM "kafka_page-views"') == [("ada",)]
    assert rows(db, "SELECT name FROM kafka_users") == [("bob",)]
    task.stop()


def test_bad_settings_are_refused_naming_the_setting():
    config = {"name": "s", "connector.class": "SqliteSink", "tasks.max": "1", "topics": "users"}
    assert connector_class("SqliteSink") is SqliteSinkConnector
    with pytest.raises(ConfigException, match=r"connection\.url"):
        SqliteSinkConnector().start(config)
    with pytest.raises(ConfigException, match=r"pk\.mode: String must be one of: none, kafka"):
        SqliteSinkConnector().start({**config, "connection.url": "x.db", "pk.mode": "record_value"})
    with pytest.raises(ConfigException, match=r"auto\.create"):
        SqliteSinkConnector().start({**config, "connection.url": "x.db", "auto.create": "yes"})


def test_connection_urls():
    assert database_path("sqlite:////tmp/a.db") == "/tmp/a.db"  # SQLAlchemy's spelling: a fourth slash
    assert database_path("sqlite:///a.db") == "a.db"
    assert database_path("jdbc:sqlite:a.db") == "a.db"
    assert database_path("a.db") == "a.db"
    with pytest.raises(ConnectException, match="not a SQLite database"):
        database_path("postgresql://localhost/db")
