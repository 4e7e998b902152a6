"""Lab 15 graded tests: a sink task that commits with the worker's offsets, a source task whose offsets
survive a restart. No broker: the tests do what the worker would, call by call.

Stage 1 makes each record as ``WorkerSinkTask.convert_messages`` does (the value's JSON-with-schema
bytes through a ``JsonConverter`` with ``schemas.enable=true``), hands batches to the learner's
``SqliteSinkTask.put`` and calls ``flush`` where the worker would commit offsets, then reads the
table with a second sqlite3 connection, as anyone querying the database would. Stage 2 runs the
learner's ``SqliteSourceTask`` as ``WorkerSourceTask`` does, against the standalone worker's real
offset storage: a ``FileOffsetBackingStore`` on a file, an ``OffsetStorageReaderImpl`` for the
task's context and an ``OffsetStorageWriter`` that is told each record's offset when the record is
"sent" and flushed on a commit; a restart is a new task and a new store on the same file.

On the untouched starter the first call into the lab's code (``put``, or the source task's
``start``) raises the lab's own NotImplementedError. Failure messages print the run: each call the
test made, what it returned, and what the table or the offsets file held, beside what was expected.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from kafka_lite.common.time import MockTime
from kafka_lite.connect.errors import ConnectException, DataException
from kafka_lite.connect.json.json_converter import JsonConverter
from kafka_lite.connect.runtime.worker_source_task import WorkerSourceTaskContext
from kafka_lite.connect.sink.sink_record import SinkRecord
from kafka_lite.connect.sqlite.sqlite_sink_task import SqliteSinkTask
from kafka_lite.connect.sqlite.sqlite_source_task import SqliteSourceTask
from kafka_lite.connect.storage.file_offset_backing_store import FileOffsetBackingStore
from kafka_lite.connect.storage.offset_storage_reader import OffsetStorageReaderImpl
from kafka_lite.connect.storage.offset_storage_writer import OffsetStorageWriter

pytestmark = [pytest.mark.lab(15), pytest.mark.timeout(10)]

# -- stage 1: the sink -------------------------------------------------------------------------------

# Values as Kafka's JsonConverter (schemas.enable=true) writes a Struct: the envelope, the schema with
# each field's type, optional flag and name, then the payload.
READING_SCHEMA = (
    b'{"type":"struct","fields":['
    b'{"type":"int8","optional":false,"field":"sensor"},'
    b'{"type":"int16","optional":false,"field":"site"},'
    b'{"type":"int32","optional":false,"field":"minute"},'
    b'{"type":"int64","optional":false,"field":"at"},'
    b'{"type":"float","optional":false,"field":"celsius"},'
    b'{"type":"double","optional":true,"field":"humidity"},'
    b'{"type":"boolean","optional":false,"field":"alarm"},'
    b'{"type":"string","optional":true,"field":"note"},'
    b'{"type":"bytes","optional":true,"field":"raw"}'
    b'],"optional":false,"name":"reading"}'
)


def reading(sensor: int, at: int, humidity: str = "null", note: str = "null", alarm: str = "false") -> bytes:
    payload = (
        f'{{"sensor":{sensor},"site":7,"minute":{at // 60},"at":{at},"celsius":21.5,"humidity":{humidity},'
        f'"alarm":{alarm},"note":{note},"raw":"AQL/"}}'
    )
    return b'{"schema":' + READING_SCHEMA + b',"payload":' + payload.encode() + b"}"


def as_worker_converts(value: bytes, offset: int, topic: str = "readings", partition: int = 0,
                       schemas: bool = True) -> SinkRecord:  # fmt: skip
    """The SinkRecord WorkerSinkTask makes of a consumed record: its value through the value converter."""
    converter = JsonConverter()
    converter.configure({"schemas.enable": "true" if schemas else "false"}, False)
    data = converter.to_connect_data(topic, value)
    return SinkRecord(topic, partition, None, None, data.schema, data.value, offset)


class Sink:
    """The learner's sink task on a database file, with the calls made so far as a story."""

    def __init__(self, db: Path, **settings: str) -> None:
        self.db = db
        self.story: list[str] = []
        self.task = SqliteSinkTask()
        self.task.start({"connection.url": str(db), "auto.create": "true", **settings})

    def put(self, *records: SinkRecord) -> None:
        self.story.append(f"  put({[f'{r.topic}-{r.kafka_partition}@{r.kafka_offset}' for r in records]})")
        self._call(self.task.put, list(records))

    def flush(self) -> None:
        self.story.append("  flush()  (the worker commits the offsets put so far next)")
        self._call(self.task.flush, {})

    def _call(self, method, argument) -> None:
        """``method(argument)``; an exception other than the lab's stub reported with the calls so far."""
        try:
            method(argument)
        except NotImplementedError:
            raise
        except Exception as error:
            self.story.append(f"    -> {type(error).__name__}: {error}")
            raise _Raised(error, self.story) from error

    def rows(self, sql: str = 'SELECT * FROM "readings" ORDER BY rowid') -> list[tuple]:
        """What another connection sees: only committed rows."""
        with sqlite3.connect(self.db) as reader:
            try:
                return reader.execute(sql).fetchall()
            except sqlite3.OperationalError as e:
                return [f"({e})"]

    def told(self, what: str, got: object, expected: object) -> str:
        return f"{what}:\n  got      {got!r}\n  expected {expected!r}\nthe calls, in order:\n" + "\n".join(
            self.story
        )

    def refused(self, *records: SinkRecord) -> DataException:
        """The DataException ``put(records)`` raises; a failure saying what it did instead."""
        try:
            self.put(*records)
        except _Raised as raised:
            if isinstance(raised.error, DataException):
                return raised.error
            pytest.fail(
                self.told(
                    "what put raised", f"{type(raised.error).__name__}: {raised.error}", "a DataException"
                )
            )
        pytest.fail(self.told("what put did", "it returned, and raised nothing", "a DataException"))


class _Raised(AssertionError):
    """A sink task's call raised: the exception, with the calls that led to it."""

    def __init__(self, error: Exception, story: list[str]) -> None:
        super().__init__(
            f"the sink task raised {type(error).__name__}: {error}\nthe calls, in order:\n" + "\n".join(story)
        )
        self.error = error


@pytest.fixture
def sink(tmp_path):
    made: list[Sink] = []

    def start(**settings: str) -> Sink:
        made.append(Sink(tmp_path / f"sink{len(made)}.db", **settings))
        return made[-1]

    yield start
    for s in made:
        if s.task.connection is not None:
            s.task.stop()


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_the_value_schema_makes_the_tables_columns(sink):
    s = sink()
    s.put(as_worker_converts(reading(1, 60), 0))
    s.flush()
    columns = s.rows("SELECT name, type, \"notnull\" FROM pragma_table_info('readings')")
    expected = [
        ("sensor", "INTEGER", 1), ("site", "INTEGER", 1), ("minute", "INTEGER", 1), ("at", "INTEGER", 1),
        ("celsius", "REAL", 1), ("humidity", "REAL", 0), ("alarm", "INTEGER", 1), ("note", "TEXT", 0),
        ("raw", "BLOB", 0),
    ]  # fmt: skip
    assert columns == expected, s.told(
        "the table's columns (name, SQLite type, NOT NULL) made from a value schema of int8, int16, "
        "int32, int64, float, double, boolean, string and bytes fields, some optional",
        columns, expected,
    )  # fmt: skip
    nested = as_worker_converts(
        b'{"schema":{"type":"struct","fields":[{"type":"array","items":{"type":"int32","optional":false},'
        b'"optional":false,"field":"xs"}],"optional":false},"payload":{"xs":[1]}}', 1, topic="arrays",
    )  # fmt: skip
    message = str(s.refused(nested))
    assert "ARRAY" in message and "SQLite column type" in message, s.told(
        "the refusal of a value with an array field (topic arrays): its message should say there is no "
        "SQLite column type for it, and name the type",
        message, "a message with 'SQLite column type' and 'ARRAY'",
    )  # fmt: skip


@pytest.mark.stage(1)
@pytest.mark.points(3)
def test_rows_are_committed_by_flush_not_by_put(sink):
    s = sink()
    s.put(as_worker_converts(reading(1, 60, humidity="40.25", note='"ok"'), 0))
    s.put(as_worker_converts(reading(2, 120, alarm="true"), 1))
    before = s.rows("SELECT count(*) FROM readings")
    nothing = (["(no such table: readings)"], [(0,)])
    assert before in nothing, s.told(
        "what another connection sees after two puts and no flush: the rows are visible before the "
        "worker has committed their offsets",
        before, " or ".join(map(repr, nothing)),
    )  # fmt: skip
    s.flush()
    expected = [
        (1, 7, 1, 60, 21.5, 40.25, 0, "ok", b"\x01\x02\xff"),
        (2, 7, 2, 120, 21.5, None, 1, None, b"\x01\x02\xff"),
    ]
    assert s.rows() == expected, s.told(
        "the rows another connection sees after flush (a boolean as 0 or 1, bytes as a BLOB)",
        s.rows(),
        expected,
    )
    s.put(as_worker_converts(reading(3, 180), 2))
    s.task.stop()  # a crash before the next flush: offset 2 was never committed, and comes again
    assert len(s.rows()) == 2, s.told("the rows after a stop with a put not yet flushed", s.rows(), expected)


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_redelivered_records_replace_their_rows_with_pk_mode_kafka(sink):
    s = sink(**{"pk.mode": "kafka"})
    s.put(as_worker_converts(reading(1, 60), 7), as_worker_converts(reading(2, 60), 8))
    s.flush()
    # A crash after the flush but before the worker committed offset 9: 8 comes again, then 9.
    s.put(as_worker_converts(reading(2, 60), 8), as_worker_converts(reading(3, 60), 9))
    s.flush()
    got = s.rows(
        "SELECT sensor, __connect_topic, __connect_partition, __connect_offset FROM readings ORDER BY 4"
    )
    expected = [(1, "readings", 0, 7), (2, "readings", 0, 8), (3, "readings", 0, 9)]
    assert got == expected, s.told(
        "each record's row once, keyed by (__connect_topic, __connect_partition, __connect_offset)",
        got,
        expected,
    )


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_a_schemaless_value_is_refused_naming_the_record(sink):
    s = sink()
    schemaless = as_worker_converts(b'{"sensor":1,"at":60}', 42, topic="readings", partition=3, schemas=False)
    message = str(s.refused(schemaless))
    for part in ("readings-3", "42", "schemas.enable=true"):
        assert part in message, (
            f"the DataException for a schemaless dict value should name the topic-partition (readings-3), "
            f"the offset (42) and the fix (value.converter.schemas.enable=true); it says: {message}"
        )
    a_string = as_worker_converts(b'{"schema":{"type":"string","optional":false},"payload":"x"}', 43)
    message = str(s.refused(a_string))
    for part in ("readings-0", "43", "schemas.enable=true"):
        assert part in message, (
            f"a string value with a string schema is no Struct either: its DataException should name "
            f"readings-0, the offset (43) and the fix (value.converter.schemas.enable=true); it says: {message}"
        )


@pytest.mark.stage(1)
@pytest.mark.points(1)
def test_a_refused_record_undoes_its_own_batch_only(sink):
    s = sink()
    s.put(as_worker_converts(reading(1, 60), 0))  # the worker moved its offsets past this batch
    s.refused(as_worker_converts(reading(2, 60), 1), as_worker_converts(b'"no schema"', 2, schemas=False))
    s.flush()  # the worker flushes before it commits offset 0 (the batch before the failed one)
    got = [row[0] for row in s.rows()]
    assert got == [1], s.told(
        "the sensors in the table after a put of sensor 1, a refused put of sensor 2 and a record "
        "without a schema, then flush: the worker will commit offset 0 and not offset 1",
        got, [1],
    )  # fmt: skip


# -- stage 2: the source -----------------------------------------------------------------------------

NAMESPACE = "sqlite-source"  # the connector's name: the offsets' namespace in the store


def table(db: Path, name: str, items: list[str]) -> None:
    with sqlite3.connect(db) as c:
        c.execute(f"CREATE TABLE IF NOT EXISTS {name} (id INTEGER PRIMARY KEY, item TEXT NOT NULL)")
        c.executemany(f"INSERT INTO {name} (item) VALUES (?)", [(i,) for i in items])


class WatchedTime(MockTime):
    """A MockTime that notes when someone first waits on it (``Time.wait_for`` calls ``_wait``)."""

    def __init__(self) -> None:
        super().__init__()
        self.waiting = threading.Event()

    def _wait(self, condition, remaining_ms: int) -> None:
        self.waiting.set()
        super()._wait(condition, remaining_ms)


def wait_until(condition, what: str, timeout_s: float = 10) -> None:
    """Check ``condition`` until it holds; fail naming ``what`` after ``timeout_s`` (of real time)."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


class SourceRun:
    """One life of the learner's source task, as the standalone worker runs it."""

    def __init__(
        self, db: Path, offsets: Path, story: list[str], tables: str = "orders", **settings: str
    ) -> None:
        self.story = story
        self.story.append(f"  start a task (offsets file: {_stored(offsets)})")
        self.store = FileOffsetBackingStore()
        self.store.configure({"offset.storage.file.filename": str(offsets)})
        self.store.start()
        # The worker's internal converters, as connect-standalone.properties sets them.
        internal = JsonConverter()
        internal.configure({"schemas.enable": "false"}, False)
        reader = OffsetStorageReaderImpl(self.store, NAMESPACE, internal, internal)
        self.writer = OffsetStorageWriter(self.store, NAMESPACE, internal, internal)
        self.task = SqliteSourceTask()
        self.task.initialize(WorkerSourceTaskContext(reader))
        self.offsets = offsets
        self.task.start({"connection.url": str(db), "tables": tables, "table.whitelist": tables,
                         "topic.prefix": "db-", "poll.interval.ms": "0", "batch.max.rows": "2", **settings})  # fmt: skip

    def poll(self) -> list:
        """``task.poll()``, each record then sent, as far as offsets go: its offset given to the writer."""
        records = self.task.poll() or []
        for record in records:
            self.writer.offset(record.source_partition, record.source_offset)
        self.story.append(f"  poll() -> {[(r.source_partition, r.source_offset) for r in records] or None}")
        return records

    def poll_all(self) -> list:
        records = []
        while batch := self.poll():
            records += batch
        return records

    def commit(self) -> None:
        """What WorkerSourceTask.commit_offsets does once the producer acknowledged every record."""
        if self.writer.begin_flush():
            self.writer.do_flush(lambda error, result: None).result(5)
        self.story.append(f"  commit  (offsets file: {_stored(self.offsets)})")

    def stop(self, story: str = "stop") -> None:
        self.task.stop()
        self.store.stop()
        self.story.append(f"  {story}")


def _stored(offsets: Path) -> str:
    return json.dumps(json.loads(offsets.read_text())) if offsets.exists() else "none yet"


def ids(records: list) -> list[tuple[str, int]]:
    return [(r.source_partition.get("table"), r.value.get("id")) for r in records]


def told(what: str, got: object, expected: object, story: list[str]) -> str:
    return f"{what}:\n  got      {got!r}\n  expected {expected!r}\nthe run, call by call:\n" + "\n".join(
        story
    )


@pytest.mark.stage(2)
@pytest.mark.points(3)
def test_each_row_is_a_record_with_its_table_and_id(tmp_path):
    db, story = tmp_path / "in.db", []
    table(db, "orders", ["tea", "cake", "jam"])
    table(db, "users", ["ada"])
    run = SourceRun(db, tmp_path / "offsets", story, tables="orders,users")
    records = run.poll()
    expected = [("orders", 1), ("orders", 2), ("users", 1)]  # batch.max.rows=2 rows of each table
    assert ids(records) == expected, told(
        "(table, id) of the first poll's records", ids(records), expected, story
    )
    first = records[0]
    got = (first.source_partition, first.source_offset, first.topic, first.value.get("item"))
    want = ({"table": "orders"}, {"incrementing": 1}, "db-orders", "tea")
    assert got == want, told(
        "the first record's source partition, source offset, topic and item", got, want, story
    )
    got = (first.kafka_partition, first.key_schema, first.key)
    assert got == (None, None, None), told(
        "the first record's Kafka partition, key schema and key", got, (None, None, None), story
    )
    assert first.value_schema == first.value.schema and first.value_schema.name == "orders", told(
        "the first record's value schema, and the schema of its value",
        (first.value_schema, first.value.schema), "both the table's schema, named orders", story,
    )  # fmt: skip
    second = ids(run.poll())
    assert second == [("orders", 3)], told("the second poll's (table, id)", second, [("orders", 3)], story)
    assert run.poll() == [], told("a third poll, with nothing new", "records", "None", story)
    run.stop()


@pytest.mark.stage(2)
@pytest.mark.points(4)
def test_a_restarted_task_goes_on_after_the_last_committed_id(tmp_path):
    db, offsets, story = tmp_path / "in.db", tmp_path / "connect.offsets", []
    table(db, "orders", ["tea", "cake", "jam"])
    first = SourceRun(db, offsets, story)
    seen = first.poll_all()
    first.commit()
    first.stop()
    stored = json.loads(offsets.read_text())
    key, value = '["sqlite-source",{"table":"orders"}]', '{"incrementing":3}'
    assert stored == {key: value}, told(
        "the offsets file after the first run's commit", stored, {key: value}, story
    )
    table(db, "orders", ["scones", "cream"])
    story.append("  (rows 4 and 5 inserted)")
    second = SourceRun(db, offsets, story)
    again = second.poll_all()
    second.stop()
    expected = [("orders", 4), ("orders", 5)]
    assert ids(again) == expected, told(
        "the restarted task's records, when the first run had committed up to id 3 and rows 4 and 5 "
        "were inserted since", ids(again), expected, story,
    )  # fmt: skip
    assert sorted(ids(seen + again)) == [("orders", i) for i in range(1, 6)], "every row once over both runs"


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_rows_whose_offsets_were_not_committed_are_read_again(tmp_path):
    db, offsets, story = tmp_path / "in.db", tmp_path / "connect.offsets", []
    table(db, "orders", ["tea", "cake", "jam", "scones", "cream"])
    first = SourceRun(db, offsets, story)
    first.poll()
    first.commit()
    first.poll()  # sent, but the worker crashes before its next commit
    first.stop("crash: stop without a commit")
    second = SourceRun(db, offsets, story)
    again = second.poll_all()
    second.stop()
    expected = [("orders", 3), ("orders", 4), ("orders", 5)]
    assert ids(again) == expected, told(
        "after the crash, from the last committed id on (at-least-once: 3 and 4 again)",
        ids(again),
        expected,
        story,
    )


@pytest.mark.stage(2)
@pytest.mark.points(1)
def test_an_empty_poll_waits_the_poll_interval_unless_the_task_is_stopped(tmp_path):
    db, story = tmp_path / "in.db", []
    table(db, "orders", [])
    run = SourceRun(db, tmp_path / "offsets", story, **{"poll.interval.ms": "60000"})
    clock = WatchedTime()
    run.task.time = clock  # the task's clock, which its wait must use
    answers: list = []
    poller = threading.Thread(target=lambda: answers.append(run.poll()), daemon=True)
    poller.start()
    try:
        wait_until(lambda: clock.waiting.is_set() or not poller.is_alive(), what="the poll to wait or return")
        assert not answers, told(
            "a poll of an empty table",
            "it returned before the clock moved",
            "a wait of poll.interval.ms",
            story,
        )
        assert clock.waiting.is_set(), told(
            "a poll of an empty table", "it ended without waiting on the task's clock (self.time)",
            "a wait of poll.interval.ms on it", story,
        )  # fmt: skip
        clock.advance(59_999)
        poller.join(0.2)  # time for a poll that returned too early to be seen doing so
        assert not answers, told(
            "the poll, 1 ms before poll.interval.ms had passed", "it returned", "still waiting", story
        )
        clock.advance(1)
        wait_until(lambda: answers, what="the poll to return once poll.interval.ms has passed")
        assert answers == [[]], told("the poll, after poll.interval.ms", answers, "None", story)
        # A stopped task's poll does not wait: stop comes from the herder's thread, to end the task.
        run.task.stop()
        assert run.poll() == [], told("a poll of an empty table, after stop", "records", "None", story)
    finally:
        run.task.stop()
        poller.join(10)
        run.stop()


@pytest.mark.stage(2)
@pytest.mark.points(1)
def test_an_offset_that_is_not_an_id_is_refused(tmp_path):
    db, offsets, story = tmp_path / "in.db", tmp_path / "connect.offsets", []
    table(db, "orders", ["tea", "cake", "jam"])
    # The offsets file, edited by hand: the id written as a string.
    offsets.write_text(json.dumps({'["sqlite-source",{"table":"orders"}]': '{"incrementing":"2"}'}))
    try:
        run = SourceRun(db, offsets, story)
    except ConnectException as error:
        story.append(f"    -> ConnectException: {error}")
        return
    except NotImplementedError:
        raise
    except Exception as error:
        pytest.fail(
            told("what start raised", f"{type(error).__name__}: {error}", "a ConnectException", story)
        )
    try:
        emitted = ids(run.poll_all())
    finally:
        run.stop()
    pytest.fail(
        told(
            "a task whose committed offset for orders is {'incrementing': '2'} (a string) started, and "
            "its polls emitted",
            emitted,
            "a ConnectException from start",
            story,
        )
    )
