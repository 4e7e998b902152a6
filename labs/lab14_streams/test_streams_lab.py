"""Lab 14 graded tests: Kafka Streams' example applications, run with no broker.

Every test builds the learner's topology (``word_count_topology()``, or ``page_view_counts`` /
``page_views_by_region`` on a new ``KStreamBuilder``) and runs it in a ``TopologyTestDriver``: the
real ``StreamTask`` of kafka_lite, one record per ``pipe_input``, each followed by the task's
punctuation check and a commit, so after a call every output the record caused can be read and the
stores hold its effect. On the untouched starter the first call into the lab's code (building the
topology, or the processor's ``init``) raises the lab's own NotImplementedError.

Failure messages print the run as a timeline: each record piped in (its topic, timestamp, key and
value), what came out on the output topic after it, and the store's content at the end, beside what
was expected. A record the task could not process (a value its serializer refused, say) is reported
the same way, with the chain of exceptions it raised.
"""

from __future__ import annotations

from typing import Any

import pytest

from kafka_lite.streams.examples import page_view_demo as pv
from kafka_lite.streams.examples import word_count_processor_demo as wc
from kafka_lite.streams.kstream.kstream_builder import KStreamBuilder
from kafka_lite.streams.serialization import Serdes
from kafka_lite.streams.test_utils.topology_test_driver import TopologyTestDriver

pytestmark = [pytest.mark.lab(14), pytest.mark.timeout(10)]

STRING = Serdes.String().deserializer()
JSON = Serdes.Json().deserializer()
LONG = Serdes.Long().deserializer()


def _causes(error: BaseException) -> str:
    """An exception and its causes, one a line, outermost first (as Kafka prints "Caused by:")."""
    lines, seen = [], set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        lines.append(f"  {type(error).__name__}: {error}")
        error = error.__cause__ or error.__context__
    return "\n".join(lines)


def _lab_stub(error: BaseException) -> bool:
    """Whether the lab's own NotImplementedError is in the chain: a stub reached, to be reported as is."""
    while error is not None:
        if isinstance(error, NotImplementedError):
            return True
        error = error.__cause__ or error.__context__
    return False


class Run:
    """A topology in a test driver, remembering what went in and what came out of ``output``, as a
    timeline for the failure messages."""

    def __init__(self, builder: Any, output: str, key_deserializer: Any, value_deserializer: Any) -> None:
        # No record cache (cache.max.bytes.buffering=0): every update is written as it is made, and a
        # window the store has dropped is gone, as the handout specifies (0.10.0's behaviour). With
        # 0.10.1's default cache a flushed window's count stays in the cache, clean, until evicted,
        # and a late view would count on from it after the store's segment was dropped.
        try:
            self.driver = TopologyTestDriver(
                builder, {"application.id": "lab14", "cache.max.bytes.buffering": 0}
            )
        except Exception as error:
            if _lab_stub(error):
                raise
            raise AssertionError(f"the topology's task could not start:\n{_causes(error)}") from error
        self.output = output
        self.deserializers = (key_deserializer, value_deserializer)
        self.timeline: list[str] = []
        # Whether a processor had asked for a commit (``context.commit()``) when the driver committed
        # after each record: the task's flag, read just before its commit clears it. A stream thread
        # reads the same flag (``commit_needed()``) after each record to decide whether to commit early.
        self.commit_requested: list[bool] = []
        task, commit = self.driver.task, self.driver.task.commit

        def commit_noting_the_request(*args: Any, **kwargs: Any) -> None:
            self.commit_requested.append(task.commit_needed())
            commit(*args, **kwargs)

        task.commit = commit_noting_the_request

    def pipe(self, topic: str, key: str | None, value: str | None, timestamp: int) -> list[tuple]:
        """Pipe one record; the ``(key, value, timestamp)`` of each record it caused on the output."""
        self.timeline.append(f"  in  {topic} @{timestamp}: {key!r} -> {value!r}")
        try:
            self.driver.pipe_input(
                topic,
                None if key is None else key.encode(),
                None if value is None else value.encode(),
                timestamp,
            )
        except Exception as error:
            if _lab_stub(error):
                raise
            raise AssertionError(
                f"the task failed on the last record piped in:\n{_causes(error)}\n{self.story()}"
            ) from error
        out = self.read()
        self.timeline += [f"        out @{ts}: {k!r} -> {v!r}" for k, v, ts in out] or ["        (no output)"]
        return out

    def read(self) -> list[tuple]:
        out = []
        while (record := self.driver.read_output(self.output, *self.deserializers)) is not None:
            out.append((record.key, record.value, record.timestamp_ms))
        return out

    def store(self, name: str) -> Any:
        return self.driver.get_state_store(name)

    def story(self) -> str:
        return "the run, record by record:\n" + "\n".join(self.timeline)

    def close(self) -> None:
        self.driver.close()


@pytest.fixture
def start():
    """``start(builder, output, key_deserializer, value_deserializer)``: a ``Run``, closed after the test."""
    made: list[Run] = []

    def start_run(builder: Any, output: str, key_deserializer: Any, value_deserializer: Any) -> Run:
        made.append(Run(builder, output, key_deserializer, value_deserializer))
        return made[-1]

    yield start_run
    for run in made:
        run.close()


def _dsl(start: Any, topology: Any, output: str, key_deserializer: Any, value_deserializer: Any) -> Run:
    """A ``Run`` of the DSL topology that ``topology(builder)`` writes on a new ``KStreamBuilder``."""
    builder = KStreamBuilder()
    topology(builder)
    return start(builder, output, key_deserializer, value_deserializer)


# -- stage 1: a word count on the Processor API ------------------------------------------------------


def _word_count(start: Any) -> Run:
    return start(wc.word_count_topology(), wc.SINK_TOPIC, STRING, STRING)


def _counts(run: Run) -> dict[str, int]:
    store = run.store(wc.STORE_NAME)
    assert store is not None, (
        f"the task has no store {wc.STORE_NAME!r}: the counts are nowhere to be found\n{run.story()}"
    )
    with store.all() as entries:
        return {entry.key: entry.value for entry in entries}


def _assert_store(run: Run, expected: dict[str, int], why: str) -> None:
    got = _counts(run)
    assert got == expected, (
        f"the store {wc.STORE_NAME!r} holds {got}, expected {expected}: {why}\n{run.story()}"
    )


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_the_topology_has_its_source_processor_store_and_sink(start):
    builder = wc.word_count_topology().set_application_id("lab14")
    groups = builder.node_groups()
    nodes = sorted(node for group in groups.values() for node in group)
    assert nodes == ["Process", "Sink", "Source"], (
        f"the topology's nodes are {nodes}, expected the demo's three: Source, Process, Sink"
    )
    assert builder.source_topics() == {wc.SOURCE_TOPIC}, (
        f"the topology reads {sorted(builder.source_topics())}, expected only {wc.SOURCE_TOPIC!r}"
    )
    sinks = {topic for info in builder.topic_groups().values() for topic in info.sink_topics}
    assert sinks == {wc.SINK_TOPIC}, f"the topology writes {sorted(sinks)}, expected only {wc.SINK_TOPIC!r}"
    store = start(builder, wc.SINK_TOPIC, STRING, STRING).store(wc.STORE_NAME)
    assert store is not None, f"the task started without a store named {wc.STORE_NAME!r}"
    assert not store.persistent(), (
        f"the store {wc.STORE_NAME!r} is persistent (on disk), where the demo's is in memory"
    )


@pytest.mark.stage(1)
@pytest.mark.points(3)
def test_each_word_is_counted_in_the_store_lower_cased(start):
    run = _word_count(start)
    run.pipe(wc.SOURCE_TOPIC, None, "Hello Kafka hello", 0)
    _assert_store(run, {"hello": 2, "kafka": 1}, "each word of the line, lower-cased, counted once per use")
    run.pipe(wc.SOURCE_TOPIC, None, "kafka  streams", 10)
    run.pipe(wc.SOURCE_TOPIC, "ignored", "STREAMS", 20)
    _assert_store(
        run,
        {"hello": 2, "kafka": 2, "streams": 2},
        "counts add up across lines (whitespace runs split once; the record's key plays no part)",
    )
    assert run.commit_requested == [True, True, True], (
        "whether the processor had asked the task to commit when each line had gone through the "
        f"topology, line by line: {run.commit_requested}, expected [True, True, True]: the lines whose "
        f"progress would wait for the commit interval are those with False\n{run.story()}"
    )


@pytest.mark.stage(1)
@pytest.mark.points(3)
def test_punctuate_forwards_every_count_in_key_order_at_stream_time(start):
    run = _word_count(start)
    first = run.pipe(wc.SOURCE_TOPIC, None, "kafka streams kafka", 0)
    expected = [("kafka", "2", 0), ("streams", "1", 0)]
    assert first == expected, (
        "after the first line, at stream time 0, the output should be every count in the store, in key "
        f"order, each a string, stamped 0: expected {expected}, got {first}\n{run.story()}"
    )
    between = run.pipe(wc.SOURCE_TOPIC, None, "apache", 999)
    assert between == [], (
        f"a line at stream time 999, before the next second of stream time ({wc.PUNCTUATE_INTERVAL_MS}), "
        f"should cause no output, got {between}\n{run.story()}"
    )
    second = run.pipe(wc.SOURCE_TOPIC, None, "zookeeper", 1000)
    expected = [("apache", "1", 1000), ("kafka", "2", 1000), ("streams", "1", 1000), ("zookeeper", "1", 1000)]
    assert second == expected, (
        "at stream time 1000 the output should be every count in the store, the words of earlier lines "
        f"too, in key order, stamped 1000: expected {expected}, got {second}\n{run.story()}"
    )


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_punctuation_follows_stream_time_not_the_wall_clock(start):
    run = _word_count(start)
    run.pipe(wc.SOURCE_TOPIC, None, "a", 0)
    run.driver.advance_wall_clock_time(10 * wc.PUNCTUATE_INTERVAL_MS)
    late = run.pipe(wc.SOURCE_TOPIC, None, "b", 500)
    assert late == [], (
        "ten seconds passed on the wall clock, but stream time is 500: the output should have nothing "
        f"new before stream time {wc.PUNCTUATE_INTERVAL_MS}, got {late}\n" + run.story()
    )
    jump = run.pipe(wc.SOURCE_TOPIC, None, "c", 3000)
    times = sorted({ts for _, _, ts in jump})
    assert len(jump) == 3 * 3 and times == [3000], (
        "stream time jumped from 500 to 3000, past three seconds of stream time (1000, 2000, 3000): "
        f"expected the three counts three times, 9 records, all stamped 3000, got {jump}\n{run.story()}"
    )


# -- stage 2: page views counted in windows -------------------------------------------------------------


def _counting(start: Any) -> Run:
    return _dsl(start, pv.page_view_counts, pv.PAGE_VIEW_COUNTS_TOPIC, JSON, LONG)


def _view(run: Run, user: str, page: str, timestamp: int) -> list[tuple]:
    return run.pipe(pv.PAGE_VIEWS_TOPIC, user, page, timestamp)


def _windows(run: Run, page: str, time_to: int = 10**9) -> dict[int, int]:
    """The window store's counts for ``page``: window start -> count."""
    store = run.store(pv.VIEWS_PER_PAGE_STORE)
    assert store is not None, (
        f"the task has no store {pv.VIEWS_PER_PAGE_STORE!r}: the counts cannot be looked up by that name\n"
        + run.story()
    )
    assert hasattr(store, "fetch"), (
        f"{pv.VIEWS_PER_PAGE_STORE!r} is a {type(store).__name__}, not a window store: its counts are not "
        f"kept per window\n{run.story()}"
    )
    with store.fetch(page, 0, time_to) as entries:
        return {entry.key: entry.value for entry in entries}


def _update(page: str, start: int, count: int, timestamp: int) -> tuple:
    return ({"page": page, "window_start": start}, count, timestamp)


@pytest.mark.stage(2)
@pytest.mark.points(3)
def test_views_are_counted_per_page_in_one_minute_windows(start):
    run = _counting(start)
    out = []
    for user, page, ts in [("alice", "home", 0), ("bob", "home", 10_000), ("alice", "about", 30_000),
                           ("carol", "home", 59_999)]:  # fmt: skip
        out += _view(run, user, page, ts)
    expected = [_update("home", 0, 1, 0), _update("home", 0, 2, 10_000), _update("about", 0, 1, 30_000),
                _update("home", 0, 3, 59_999)]  # fmt: skip
    assert out == expected, (
        f"four views of two pages, all in the window [0, {pv.WINDOW_SIZE_MS}): each should update its "
        "page's count there, once, the update written keyed by page and window start, the count a long, "
        f"at the view's timestamp:\n  expected {expected}\n  got      {out}\n{run.story()}"
    )
    assert _windows(run, "home") == {0: 3} and _windows(run, "about") == {0: 1}, (
        f"the window store holds home: {_windows(run, 'home')}, about: {_windows(run, 'about')}; expected "
        f"home: {{0: 3}}, about: {{0: 1}}\n{run.story()}"
    )


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_a_view_at_a_windows_end_opens_the_next_window(start):
    run = _counting(start)
    for ts in (59_999, 60_000, 119_999, 120_000):
        _view(run, "alice", "home", ts)
    got = _windows(run, "home")
    expected = {0: 1, 60_000: 2, 120_000: 1}
    assert got == expected, (
        f"views of one page at 59999, 60000, 119999 and 120000: the store holds {got} (window start: "
        f"count), expected {expected}\n{run.story()}"
    )


@pytest.mark.stage(2)
@pytest.mark.points(3)
def test_a_late_view_within_the_retention_updates_its_old_window(start):
    run = _counting(start)
    _view(run, "alice", "home", 10_000)
    _view(run, "bob", "home", 300_000)  # stream time: five minutes
    late = _view(run, "carol", "home", 20_000)
    expected = [_update("home", 0, 2, 20_000)]
    assert late == expected, (
        "a view at 20000 arriving when stream time is 300000 is five minutes late, within the ten "
        "minutes a window is kept: it should count in its own window, [0, 60000), raising its count to 2; "
        f"expected {expected}, got {late}\n{run.story()}"
    )
    got = _windows(run, "home")
    assert got == {0: 2, 300_000: 1}, f"the store holds {got}, expected {{0: 2, 300000: 1}}\n{run.story()}"


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_windows_older_than_the_retention_are_dropped(start):
    run = _counting(start)
    _view(run, "alice", "home", 10_000)
    _view(run, "bob", "home", 10 * pv.WINDOW_SIZE_MS)  # ten minutes: the first window is still kept
    kept = _windows(run, "home")
    assert kept == {0: 1, 600_000: 1}, (
        f"at stream time 600000 the first window is within the retention ({pv.RETENTION_MS} ms) and "
        f"still in the store; it holds {kept}, expected {{0: 1, 600000: 1}}\n{run.story()}"
    )
    _view(run, "carol", "home", 3 * pv.RETENTION_MS)  # thirty minutes
    _view(run, "dave", "home", 20_000)  # far too late
    got = _windows(run, "home")
    assert got == {1_800_000: 1}, (
        "at stream time 1800000 the windows of 0 and 600000 are older than the retention: the store has "
        "dropped their segments, and a view at 20000 finds no window to count in (its update is lost); "
        f"the store holds {got}, expected {{1800000: 1}}\n{run.story()}"
    )


# -- stage 3: page views joined with the users' regions -------------------------------------------------


def _joining(start: Any) -> Run:
    return _dsl(start, pv.page_views_by_region, pv.PAGE_VIEWS_BY_REGION_TOPIC, STRING, JSON)


def _profile(run: Run, user: str, region: str | None, timestamp: int) -> list[tuple]:
    return run.pipe(pv.USER_PROFILES_TOPIC, user, region, timestamp)


def _enriched(user: str, page: str, region: str, timestamp: int) -> tuple:
    return (user, {"page": page, "region": region}, timestamp)


@pytest.mark.stage(3)
@pytest.mark.points(3)
def test_a_view_carries_its_users_region(start):
    run = _joining(start)
    _profile(run, "alice", "europe", 0)
    _profile(run, "bob", "asia", 1)
    out = _view(run, "alice", "home", 2) + _view(run, "bob", "news", 3)
    expected = [_enriched("alice", "home", "europe", 2), _enriched("bob", "news", "asia", 3)]
    assert out == expected, (
        "alice's profile says europe and bob's asia: each view should go out keyed by its user, with "
        f"its page and its user's region:\n  expected {expected}\n  got      {out}\n{run.story()}"
    )
    store = run.store(pv.USER_PROFILES_STORE)
    assert store is not None, f"the task has no store {pv.USER_PROFILES_STORE!r}\n{run.story()}"
    assert store.get("alice") == "europe", (
        f"the store {pv.USER_PROFILES_STORE!r} maps alice to {store.get('alice')!r}, expected 'europe'\n"
        + run.story()
    )


@pytest.mark.stage(3)
@pytest.mark.points(2)
def test_a_view_of_a_user_without_a_profile_is_kept_with_an_unknown_region(start):
    run = _joining(start)
    _profile(run, "alice", "europe", 0)
    out = _view(run, "zoe", "home", 1)
    expected = [_enriched("zoe", "home", pv.UNKNOWN_REGION, 1)]
    assert out == expected, (
        f"zoe has no profile: her view should go out with the region {pv.UNKNOWN_REGION!r}; expected "
        f"{expected}, got {out}\n{run.story()}"
    )


@pytest.mark.stage(3)
@pytest.mark.points(3)
def test_a_profile_update_changes_only_later_views(start):
    run = _joining(start)
    early = _view(run, "alice", "home", 0)
    arrived = _profile(run, "alice", "europe", 1)
    assert arrived == [], (
        f"alice's profile arriving should write nothing to the output, it wrote {arrived}\n" + run.story()
    )
    before = _view(run, "alice", "news", 2)
    moved = _profile(run, "alice", "asia", 3)
    after = _view(run, "alice", "sports", 4)
    got = early + arrived + before + moved + after
    expected = [
        _enriched("alice", "home", pv.UNKNOWN_REGION, 0),
        _enriched("alice", "news", "europe", 2),
        _enriched("alice", "sports", "asia", 4),
    ]
    assert got == expected, (
        "a view, alice's profile (europe), a view, her profile changed (asia), a view: each view should "
        "carry the region her profile held when the view came, and nothing else be written:\n"
        f"  expected {expected}\n  got      {got}\n{run.story()}"
    )


@pytest.mark.stage(3)
@pytest.mark.points(2)
def test_a_deleted_profile_leaves_later_views_unknown(start):
    run = _joining(start)
    _profile(run, "alice", "europe", 0)
    _profile(run, "alice", None, 1)  # a tombstone
    out = _view(run, "alice", "home", 2)
    expected = [_enriched("alice", "home", pv.UNKNOWN_REGION, 2)]
    assert out == expected, (
        "alice's profile (europe) was then deleted (a null value): her next view should find no region; "
        f"expected {expected}, got {out}\n{run.story()}"
    )
    store = run.store(pv.USER_PROFILES_STORE)
    assert store is not None, f"the task has no store {pv.USER_PROFILES_STORE!r}\n{run.story()}"
    assert store.get("alice") is None, (
        f"alice's profile was deleted, and the store {pv.USER_PROFILES_STORE!r} still maps her to "
        f"{store.get('alice')!r}\n{run.story()}"
    )
