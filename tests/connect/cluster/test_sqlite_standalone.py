"""The SQLite connectors in the standalone worker on the test cluster: a table's rows through a topic,
as JSON with a schema, into a table made from that schema."""

from __future__ import annotations

import sqlite3

import pytest

from tests.connect.cluster.test_standalone import standalone
from tests.support.topics import read_topic, topic_name
from tests.support.waiting import wait_until

pytestmark = pytest.mark.integration


def rows(db, sql: str) -> list[tuple]:
    try:
        with sqlite3.connect(db) as c:
            return c.execute(sql).fetchall()
    except sqlite3.OperationalError:
        return []  # the sink has not committed its table yet


def test_a_tables_rows_go_through_a_topic_into_a_table_made_from_their_schema(cluster, tmp_path):
    source_db, sink_db = tmp_path / "in.db", tmp_path / "out.db"
    with sqlite3.connect(source_db) as c:
        c.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, item TEXT NOT NULL, price REAL)")
        c.executemany(
            "INSERT INTO orders (item, price) VALUES (?, ?)", [(f"item {i}", i / 4) for i in range(20)]
        )
    prefix = topic_name("sqlite") + "-"
    topic = prefix + "orders"
    cluster.create_topic(topic, partitions=1)
    connectors = [
        {"name": "db-source", "connector.class": "SqliteSource", "tasks.max": "1",
         "connection.url": str(source_db), "table.whitelist": "orders", "topic.prefix": prefix,
         "poll.interval.ms": "100"},
        {"name": "db-sink", "connector.class": "kafka_lite.connect.sqlite.SqliteSinkConnector", "tasks.max": "1",
         "topics": topic, "connection.url": f"sqlite:///{sink_db}", "table.name.format": "copy_of_${topic}",
         "auto.create": "true", "pk.mode": "kafka"},
    ]  # fmt: skip
    copied = f'SELECT id, item, price FROM "copy_of_{topic}" ORDER BY id'
    with standalone(cluster.bootstrap_servers, tmp_path / "offsets", connectors):
        wait_until(lambda: len(rows(sink_db, copied)) >= 20, what="every row in the sink's table")
    assert rows(sink_db, copied) == [(i + 1, f"item {i}", i / 4) for i in range(20)]
    # In the topic, each row as JsonConverter writes a Struct: the table's schema, then the row.
    assert read_topic(cluster.bootstrap_servers, topic)[0].value == (
        b'{"schema":{"type":"struct","fields":[{"type":"int64","optional":true,"field":"id"},'
        b'{"type":"string","optional":false,"field":"item"},{"type":"double","optional":true,"field":"price"}],'
        b'"optional":false,"name":"orders"},"payload":{"id":1,"item":"item 0","price":0.0}}'
    )
