"""Every "where kafka_lite differs" and "not yet" item of the chapter guides, held against the code.

A guide's lists of what kafka_lite does differently from Kafka, and of what it does not have yet,
go stale silently: a later chapter builds what an earlier one called missing, and the page still
says it is missing. This test reads those lists from the markdown and ties each item to a check,
through ``CLAIMS`` below: per page, a key phrase the item must contain, and what holds it.

- An item that says a setting is not supported is held by the config refusing it; an item that
  says a feature is missing, by the feature being absent (no API key served, no such class,
  option or mechanism); an item that says what kafka_lite does instead, by the code that does it
  (a default, a version, a constant, a call that raises), run here where that is cheap.
- An item that names no setting or feature (a figure on the benchmark page, a property of Spark)
  is ``prose``, with the reason.

The test fails when an item has no entry (a new item needs its check), when an entry's phrase
matches no item or several (the item was rewritten or removed), and when a check no longer holds:
then either the guide or the code has moved, and the item must say what now holds.

Nothing here builds the site or starts a broker: the markdown is read as text, and the checks
import the modules they hold and call them in process.
"""

from __future__ import annotations

import argparse
import functools
import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = ROOT / "chapters"
PACKAGE = ROOT / "kafka_lite"

# The guides whose lists are held. ch08 and ch09 are read like the others.
FOLDERS = (
    "ch01_introduction",
    "ch02_producer",
    "ch03_old_consumer",
    "ch04_new_consumer",
    "ch05_coordinator",
    "ch06_storage",
    "ch07_controller",
    "ch08_mirrormaker_connect",
    "ch09_streams",
    "ch10_advanced",
    "ch11_security",
    "ch12_kraft",
    "ch13_jepsen",
    "data_pipeline",
)
# "Where kafka_lite differs from Kafka", "Where kafka_lite's producer differs from Kafka",
# "Where kafka_lite's delayed operations differ from Kafka", "Where kafka_lite differs from Spark's
# connector", "Not yet in kafka_lite".
LIST_HEADING = re.compile(r"^## (?:Where kafka_lite\b.* differs? from |Not yet in kafka_lite)")
# A list ends at the next heading, at the questions' include, or at a split page's footer.
LIST_END = ("#", "--8<--", "Previous:")


def list_items(page: Path) -> list[str]:
    """The items of a page's "differs" and "not yet" lists, each as one line of text: a bullet with
    its continuation lines, or a paragraph where a list is written as prose (chapters 1 and 3)."""
    items: list[list[str]] = []
    in_list, current = False, None
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            in_list, current = bool(LIST_HEADING.match(line)), None
            continue
        if not in_list:
            continue
        if line.startswith(LIST_END):
            in_list, current = False, None
        elif not line.strip():
            if current is not None and not current[0].startswith("- "):
                current = None  # a blank line ends a paragraph; a bullet ends at the next bullet
        elif line.startswith("- ") or current is None:
            current = [line]
            items.append(current)
        else:
            current.append(line)
    return [" ".join(" ".join(item).split()) for item in items]


def guide_items() -> dict[str, list[str]]:
    return {
        page.relative_to(CHAPTERS).as_posix(): list_items(page)
        for folder in FOLDERS
        for page in sorted((CHAPTERS / folder).glob("*.md"))
        if list_items(page)
    }


# -- the kinds of check ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Claim:
    key: str  # a phrase the item contains, and no other item of its page
    check: Callable[[], None] | None  # None: prose
    reason: str = ""  # why a prose item has nothing to check


def holds(key: str, check: Callable[[], None]) -> Claim:
    return Claim(key, check)


def prose(key: str, reason: str) -> Claim:
    return Claim(key, None, reason)


def refused(config_def_path: str, name: str, value: object = "1", base: dict | None = None) -> None:
    """The ConfigDef at ``module:NAME`` does not define ``name``: parsing it is an error."""
    from kafka_lite.common.errors import ConfigException

    config_def = obj(config_def_path)
    assert name not in config_def.names(), f"{config_def_path} defines {name}"
    with pytest.raises(ConfigException, match="Unknown configuration"):
        config_def.parse({**(base or {}), name: value})


def defined(config_def_path: str, name: str, default: object = ..., base: dict | None = None) -> None:
    """The ConfigDef at ``module:NAME`` defines ``name`` (with ``default``, when given)."""
    config_def = obj(config_def_path)
    assert name in config_def.names(), f"{config_def_path} does not define {name}"
    if default is not ...:
        assert config_def.parse(base or {})[name] == default


def obj(path: str):
    """``package.module:attr.attr`` imported."""
    module_name, _, attrs = path.partition(":")
    value = __import__(module_name, fromlist=["_"])
    for attr in filter(None, attrs.split(".")):
        value = getattr(value, attr)
    return value


def exists(path: str) -> None:
    obj(path)


def missing(path: str) -> None:
    """``module:attr`` does not exist (the module may not either)."""
    try:
        obj(path)
    except (ImportError, AttributeError):
        return
    raise AssertionError(f"{path} exists")


def source_of(path: str) -> str:
    """The source of ``module:attr``, or of a whole module read from its file without importing it."""
    if ":" not in path:
        return (ROOT / (path.replace(".", "/") + ".py")).read_text(encoding="utf-8")
    return inspect.getsource(obj(path))


@functools.cache
def package_texts() -> tuple[tuple[Path, str], ...]:
    return tuple((module, module.read_text(encoding="utf-8")) for module in sorted(PACKAGE.rglob("*.py")))


def in_source(path: str, *texts: str) -> None:
    source = source_of(path)
    for text in texts:
        assert text in source, f"{path} no longer has {text!r}"


def not_in_source(path: str, *texts: str) -> None:
    source = source_of(path)
    for text in texts:
        assert text not in source, f"{path} has {text!r}"


def in_order(path: str, *texts: str) -> None:
    """Each of ``texts`` is in the source of ``path``, each after the one before it."""
    source = source_of(path)
    at = 0
    for text in texts:
        found = source.find(text, at)
        assert found >= 0, f"{path} has no {text!r} after {source[:at][-40:]!r}"
        at = found + len(text)


def nowhere_in_package(*patterns: str) -> None:
    """No module of kafka_lite (code, docstrings or comments) matches any of ``patterns``: a feature
    by that name would have to mention it."""
    for module, text in package_texts():
        for pattern in patterns:
            found = re.search(pattern, text, re.M)
            assert not found, f"{module.relative_to(ROOT)} has {found.group(0)!r}"


def tested_by(*node_ids: str) -> Callable[[], None]:
    """The item is behaviour a test of the suite exercises: each ``path.py::test_name`` (or
    ``path.py::Class::test_name``) exists and asserts something. The test itself runs in the suite,
    so the item holds while it passes; this check keeps the item tied to it when either moves."""

    def check() -> None:
        import ast

        for node_id in node_ids:
            path, *names = node_id.split("::")
            assert (ROOT / path).is_file(), f"{path} is gone"
            scope: list[ast.stmt] = ast.parse((ROOT / path).read_text(encoding="utf-8")).body
            found: ast.AST | None = None
            for name in names:
                found = next(
                    (n for n in scope if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == name),
                    None,
                )
                assert found is not None, f"{node_id}: {path} has no {name}"
                scope = found.body
            asserts = [
                n
                for n in ast.walk(found)
                if isinstance(n, ast.Assert)
                or (isinstance(n, ast.Attribute) and n.attr in ("raises", "fail"))
                or (isinstance(n, ast.Name) and n.id.startswith(("assert", "check", "wait_until")))
            ]
            assert asserts, f"{node_id} asserts nothing"

    return check


tested_by.__test__ = False  # a check's maker, not a test, whatever its name says


def served(api: str, versions: range | None = None) -> None:
    from kafka_lite.common.protocol.api_keys import ApiKeys
    from kafka_lite.server.kafka_apis import KafkaApis

    key = ApiKeys[api]
    assert key in KafkaApis.HANDLED, f"the broker does not serve {api}"
    if versions is not None:
        assert (key.oldest_version, key.latest_version) == (versions.start, versions.stop - 1), (
            f"{api} is served at {key.oldest_version}-{key.latest_version}, not {versions.start}-{versions.stop - 1}"
        )


def not_served(api: str) -> None:
    from kafka_lite.common.protocol.api_keys import ApiKeys
    from kafka_lite.server.kafka_apis import KafkaApis

    assert api not in ApiKeys.__members__ or ApiKeys[api] not in KafkaApis.HANDLED, f"the broker serves {api}"


@functools.cache
def cli_options(command: str) -> frozenset[str]:
    """The options of ``kafka-lite <command>`` (and of its sub-commands), from the parser its module
    registers, as ``cli/main.py`` builds it."""
    module = __import__(f"kafka_lite.cli.{command.replace('-', '_')}", fromlist=["register"])
    subparsers = argparse.ArgumentParser().add_subparsers()
    module.register(subparsers)
    options: set[str] = set()
    for parser in subparsers.choices.values():
        for action in parser._actions:
            options |= set(action.option_strings)
            if isinstance(action, argparse._SubParsersAction):  # a command with sub-commands of its own
                for sub in action.choices.values():
                    for sub_action in sub._actions:
                        options |= set(sub_action.option_strings)
    return frozenset(options)


def all_of(*checks: Callable[[], None]) -> Callable[[], None]:
    def check() -> None:
        for c in checks:
            c()

    return check


def raises(call: Callable[[], object], error: str, match: str = "") -> Callable[[], None]:
    """``call()`` raises the kafka_lite exception class named ``error``."""

    def check() -> None:
        with pytest.raises(Exception) as caught:
            call()
        assert type(caught.value).__name__ == error, f"raised {caught.value!r}, not {error}"
        assert re.search(match, str(caught.value)), str(caught.value)

    return check


BROKER = "kafka_lite.server.kafka_config:CONFIG_DEF"
BROKER_BASE = {"zookeeper.connect": "127.0.0.1:2181"}
TOPIC = "kafka_lite.log.log_config:CONFIG_DEF"
PRODUCER = "kafka_lite.producer.producer_config:CONFIG_DEF"
CONSUMER = "kafka_lite.consumer.consumer_config:CONFIG_DEF"
CLIENT_BASE = {"bootstrap.servers": "127.0.0.1:9092"}
STREAMS = "kafka_lite.streams.streams_config:CONFIG_DEF"
STREAMS_BASE = {"application.id": "app", "bootstrap.servers": "127.0.0.1:9092"}


# -- checks that run a little code ----------------------------------------------------------------


def the_buffer_pool_hands_out_reservations() -> None:
    from kafka_lite.common.time import MockTime
    from kafka_lite.producer.buffer_pool import BufferPool

    pool = BufferPool(memory=100, poolable_size=10, time=MockTime())
    reserved = pool.allocate(10, max_time_to_block_ms=0)
    assert reserved == 10 and type(reserved) is int, f"allocate gave {reserved!r}, not a count of bytes"
    assert pool.available_memory() == 90


def interceptors_are_classes_not_names() -> None:
    from kafka_lite.common.errors import ConfigException
    from kafka_lite.producer.producer_interceptors import ProducerInterceptors

    class Counting:
        def on_send(self, record):
            return record

        def on_acknowledgement(self, metadata, exception):
            pass

    assert ProducerInterceptors.from_config([Counting], {}) is not None
    with pytest.raises(ConfigException):
        ProducerInterceptors.from_config(["org.example.CountingInterceptor"], {})


def the_producers_shapes_are_kafka_pythons() -> None:
    from kafka_lite.producer.future_record_metadata import FutureRecordMetadata
    from kafka_lite.producer.kafka_producer import KafkaProducer

    params = list(inspect.signature(KafkaProducer.send).parameters)[1:]
    assert params == ["topic", "value", "key", "partition", "timestamp_ms", "headers", "callback"], params
    assert callable(FutureRecordMetadata.add_callback) and callable(FutureRecordMetadata.add_errback)
    assert obj(PRODUCER).parse({**CLIENT_BASE, "linger_ms": 5})["linger.ms"] == 5


def consumer(**configs):
    from kafka_lite.consumer.kafka_consumer import KafkaConsumer

    return KafkaConsumer(bootstrap_servers="127.0.0.1:1", **configs)  # connects to nothing until polled


def a_consumer_refuses_a_bad_topic_name() -> None:
    from kafka_lite.common.errors import InvalidTopicException
    from kafka_lite.common.topic_partition import TopicPartition

    c = consumer(group_id="g")
    try:
        with pytest.raises(InvalidTopicException):
            c.subscribe(["no spaces allowed"])
        with pytest.raises(InvalidTopicException):
            c.assign([TopicPartition("no spaces allowed", 0)])
    finally:
        c.close(autocommit=False, timeout_ms=0)


def without_a_group_there_is_no_coordinator() -> None:
    from kafka_lite.common.topic_partition import TopicPartition

    c = consumer()
    try:
        assert c.coordinator is None
        for call in (
            lambda: c.subscribe(["t"]),
            lambda: c.commit(),
            lambda: c.committed(TopicPartition("t", 0)),
        ):
            raises(call, "InvalidGroupIdException")()
    finally:
        c.close(autocommit=False, timeout_ms=0)


def the_consumers_methods_take_kafka_pythons_shapes() -> None:
    from kafka_lite.consumer.kafka_consumer import KafkaConsumer

    assert list(inspect.signature(KafkaConsumer.poll).parameters)[1:] == ["timeout_ms", "max_records"]
    (partitions,) = list(inspect.signature(KafkaConsumer.seek_to_beginning).parameters.values())[1:]
    assert partitions.kind is inspect.Parameter.VAR_POSITIONAL
    assert "metadata" in inspect.signature(KafkaConsumer.committed).parameters
    assert callable(KafkaConsumer.commit) and callable(KafkaConsumer.__iter__)
    defined(CONSUMER, "consumer.timeout.ms")


def records_are_kafka_pythons_named_tuples() -> None:
    import kafka.consumer.fetcher
    import kafka.structs

    from kafka_lite.common.topic_partition import TopicPartition
    from kafka_lite.consumer import OffsetAndMetadata, OffsetAndTimestamp  # noqa: F401 (they live there)
    from kafka_lite.consumer.consumer_record import ConsumerRecord

    assert ConsumerRecord._fields == kafka.consumer.fetcher.ConsumerRecord._fields
    assert OffsetAndMetadata._fields == kafka.structs.OffsetAndMetadata._fields
    assert OffsetAndMetadata(5).leader_epoch == -1
    assert TopicPartition._fields == kafka.structs.TopicPartition._fields


def timestamps_are_decoded_only_when_bounded() -> None:
    from kafka_lite.common.errors import InvalidTimestampException
    from kafka_lite.common.record import MemoryRecords
    from kafka_lite.log.log_validator import DEFAULT_TIMESTAMP_DIFF_MAX_MS, validate_timestamps

    now, year = 1_500_000_000_000, 365 * 24 * 3_600_000
    records = MemoryRecords.with_records([(now, b"k", b"v"), (now - year, b"k", b"v")])
    validate_timestamps(records, now, False, DEFAULT_TIMESTAMP_DIFF_MAX_MS)  # the default admits all
    with pytest.raises(InvalidTimestampException):
        validate_timestamps(records, now, False, 3_600_000)  # a bound: the second record is read


def a_crc_mismatch_points_at_the_crc_field() -> None:
    from kafka_lite.common.errors import CorruptRecordException
    from kafka_lite.common.record import MemoryRecords
    from kafka_lite.common.record.default_record_batch import DefaultRecordBatch

    batch = bytearray(MemoryRecords.with_records([(1, b"k", b"v")]).buffer())
    batch[-1] ^= 0xFF  # a damaged value byte
    with pytest.raises(CorruptRecordException) as caught:
        DefaultRecordBatch(batch).ensure_valid()
    # base offset (8), length (4), partition leader epoch (4), magic (1): the crc field is at 17
    assert caught.value.position == 17, caught.value.position


def a_second_instance_cannot_lock_the_state_directory() -> None:
    import tempfile

    from kafka_lite.common.time import MockTime
    from kafka_lite.streams.state.state_directory import StateDirectory

    with tempfile.TemporaryDirectory() as state_dir:
        first, second = (StateDirectory("app", state_dir, MockTime()) for _ in range(2))
        assert first.lock_state_directory()
        try:
            assert not second.lock_state_directory(), "a second instance took the same state.dir"
        finally:
            first.unlock_state_directory()
        assert second.lock_state_directory()
        second.unlock_state_directory()


def plain_refuses_someone_elses_authzid() -> None:
    from kafka_lite.common.security.plain.plain_sasl_server import PlainSaslServer
    from kafka_lite.common.security.sasl import SaslException

    assert PlainSaslServer({"alice": "pw"}).evaluate_response(b"alice\0alice\0pw") == b""
    with pytest.raises(SaslException):
        PlainSaslServer({"alice": "pw"}).evaluate_response(b"bob\0alice\0pw")


def spark_refuses(*options: str) -> Callable[[], None]:
    def check() -> None:
        from kafka_lite.common.errors import IllegalArgumentException
        from kafka_lite.spark.options import OPTIONS, parse_source_options

        implemented = {o.name: o.implemented for o in OPTIONS}
        for option in options:
            assert implemented[option] is False, f"{option} is marked implemented"
            with pytest.raises(IllegalArgumentException, match=option):
                parse_source_options(
                    {"kafka.bootstrap.servers": "127.0.0.1:9092", "subscribe": "t", option: "1"},
                    streaming=True,
                )

    return check


def client_quotas_must_be_above_zero() -> None:
    from kafka_lite.common.errors import ConfigException
    from kafka_lite.server.config_handler import validate_client_config

    assert validate_client_config({"producer_byte_rate": "1024"})
    with pytest.raises(ConfigException, match="above 0"):
        validate_client_config({"producer_byte_rate": "0"})


def quotas_are_keyed_by_client_id_only() -> None:
    from kafka_lite.server.client_quota_manager import ClientQuotaManager

    for name, method in inspect.getmembers(ClientQuotaManager, inspect.isfunction):
        params = inspect.signature(method).parameters
        assert not any("user" in p or "principal" in p for p in params), f"ClientQuotaManager.{name}{params}"
    # /config/users/<user> carries SCRAM credentials only: its handler touches no quota.
    not_in_source("kafka_lite.server.config_handler:UserConfigHandler", "quota")


def a_broker_without_the_listener_is_left_out() -> None:
    from kafka_lite.server.metadata_cache import MetadataCache
    from kafka_lite.zk.zk_utils import EndPoint, registration_version

    def end_point(port: int, name: str, protocol: int) -> dict:
        return {"port": port, "host": "h", "listener_name": name, "security_protocol_type": protocol}

    cache = MetadataCache(0)
    live = [
        {"id": 1, "end_points": [end_point(9092, "PLAINTEXT", 0)], "rack": None},
        {
            "id": 2,
            "end_points": [end_point(9093, "INTERNAL", 0), end_point(9094, "SASL_PLAINTEXT", 2)],
            "rack": None,
        },
    ]
    cache.update_cache(0, 1, {"live_brokers": live, "partition_states": []}, 3)
    assert_equal([b.id for b in cache.alive_endpoints("INTERNAL")], [2])
    assert_equal([(b.id, b.port) for b in cache.alive_endpoints("PLAINTEXT")], [(1, 9092)])
    assert_equal(registration_version([EndPoint("h", 1, "PLAINTEXT", "PLAINTEXT")]), 3)
    assert_equal(registration_version([EndPoint("h", 1, "INTERNAL", "PLAINTEXT")]), 4)


def only_plaintext_and_sasl_plaintext() -> None:
    from kafka_lite.common.errors import ConfigException
    from kafka_lite.network.channel_builders import SECURITY_PROTOCOLS

    assert set(SECURITY_PROTOCOLS) == {"PLAINTEXT", "SASL_PLAINTEXT"}, SECURITY_PROTOCOLS
    for name in ("ssl.truststore.location", "ssl.keystore.location"):
        refused(CONSUMER, name)
        refused(BROKER, name, base=BROKER_BASE)
    with pytest.raises(ConfigException):
        obj(CONSUMER).parse({**CLIENT_BASE, "security.protocol": "SASL_SSL"})


def raft_timeouts_refuse_negative_values() -> None:
    from kafka_lite.common.errors import ConfigException
    from kafka_lite.raft import raft_config

    base = {raft_config.QUORUM_VOTERS_CONFIG: "1@localhost:9093"}
    for name in (raft_config.QUORUM_ELECTION_TIMEOUT_MS_CONFIG, raft_config.QUORUM_FETCH_TIMEOUT_MS_CONFIG):
        with pytest.raises(ConfigException):
            raft_config.CONFIG_DEF.parse({**base, name: -1})


# -- checks for chapters 1-6 ----------------------------------------------------------------------


def a_paused_partition_keeps_its_position() -> None:
    """``update_fetch_positions`` skips a partition with a valid position, paused or not (0.10.2)."""
    from kafka_lite.consumer.offset_and_metadata import OffsetAndMetadata
    from kafka_lite.testing.fetcher_harness import fetcher_without_network

    tp = ("t", 0)
    fetcher = fetcher_without_network([tp])
    try:
        fetcher.subscriptions.seek(tp, 5)
        fetcher.subscriptions.pause(tp)
        fetcher.subscriptions.committed(tp, OffsetAndMetadata(2))
        fetcher.update_fetch_positions([tp])
        assert_equal(fetcher.subscriptions.position(tp), 5)  # 0.10.1 would go back to 2
    finally:
        fetcher.client.close()


def a_reset_waits_for_its_list_offsets_without_a_limit() -> None:
    """A partition without a position or a committed offset is reset in ``update_fetch_positions``,
    which waits for the ListOffsets answer with no bound (0.10.1's; Kafka 1.1 sends it and goes on)."""
    from kafka_lite.common.utils import LONG_MAX
    from kafka_lite.consumer.offset_and_timestamp import OffsetAndTimestamp
    from kafka_lite.testing.fetcher_harness import fetcher_without_network

    tp, asked = ("t", 0), []
    fetcher = fetcher_without_network([tp])
    try:

        def answered_list_offsets(timestamps: dict, timeout_ms: int) -> dict:
            asked.append((set(timestamps), timeout_ms))
            return {tp: OffsetAndTimestamp(3, -1)}

        fetcher._get_offsets_by_times = answered_list_offsets  # the broker's answer, without a broker
        fetcher.update_fetch_positions([tp])
        assert_equal(asked, [({tp}, LONG_MAX)])
        assert_equal(fetcher.subscriptions.position(tp), 3)
    finally:
        fetcher.client.close()


def the_range_assignor_takes_topics_in_sorted_order() -> None:
    from kafka_lite.consumer.range_assignor import RangeAssignor

    # Both members list "b" first; each member's partitions come out by topic name, and who gets
    # which partition is Kafka's (the first member by id takes the extra one of each topic).
    assignment = RangeAssignor().assign_partitions({"b": 3, "a": 1}, {"m1": ["b", "a"], "m0": ["b", "a"]})
    assert_equal(assignment, {"m0": [("a", 0), ("b", 0), ("b", 1)], "m1": [("b", 2)]})


def the_timer_runs_on_the_time_it_is_given() -> None:
    """``MockTimer`` is the real ``SystemTimer`` on a ``MockTime``: a task falls due when that clock
    says so, and runs on the thread that advanced it."""
    import threading

    from kafka_lite.common.time import MockTime
    from kafka_lite.testing.mock_timer import MockTimer
    from kafka_lite.utils.timer.system_timer import SystemTimer
    from kafka_lite.utils.timer.timer_task import TimerTask

    ran: list[threading.Thread] = []

    class Task(TimerTask):
        def run(self) -> None:
            ran.append(threading.current_thread())

    timer = MockTimer(MockTime())
    try:
        assert isinstance(timer, SystemTimer)
        timer.add(Task(50))
        timer.advance_clock(49)
        assert_equal(ran, [])
        timer.advance_clock(1)
        assert_equal(ran, [threading.current_thread()])
    finally:
        timer.shutdown()


def the_reaper_logs_an_error_and_goes_on() -> None:
    from kafka_lite.utils.delayed_operation import ExpiredOperationReaper

    rounds: list[int] = []

    def advance_clock(timeout_ms: int) -> None:
        rounds.append(timeout_ms)
        if len(rounds) == 1:
            raise RuntimeError("an operation's on_expiration failed")
        reaper.initiate_shutdown()

    reaper = ExpiredOperationReaper("reaper-under-test", advance_clock)
    reaper.run()  # on this thread: it returns once shut down
    assert_equal(len(rounds), 2)  # Kafka's thread would have stopped after the first


def the_log_managers_jobs_share_one_scheduler() -> None:
    """The cleaner and the log manager's jobs are tasks of the scheduler they are given (one thread in
    a broker); starting them starts no thread of their own."""
    import tempfile
    import threading

    from kafka_lite.common.time import MockTime
    from kafka_lite.log.log_config import LogConfig
    from kafka_lite.log.log_manager import LogManager
    from kafka_lite.utils.scheduler import MockScheduler

    refused(BROKER, "log.cleaner.threads", "1", BROKER_BASE)
    time = MockTime()
    scheduler = MockScheduler(time)
    scheduler.startup()
    with tempfile.TemporaryDirectory() as log_dir:
        manager = LogManager([log_dir], LogConfig({}), scheduler, time=time)
        threads = threading.active_count()
        manager.startup()
        try:
            assert_equal(threading.active_count(), threads)
            assert {"kafka-log-retention", "kafka-log-cleaner-thread-0"} <= set(scheduler.task_names())
        finally:
            manager.shutdown()
            scheduler.shutdown()


def num_replica_fetchers_splits_a_leaders_partitions() -> None:
    from kafka_lite.server.replica_fetcher_manager import fetcher_id

    defined(BROKER, "num.replica.fetchers", 1, BROKER_BASE)
    assert_equal({fetcher_id("__consumer_offsets", p, 1) for p in range(50)}, {0})
    assert_equal({fetcher_id("__consumer_offsets", p, 3) for p in range(50)}, {0, 1, 2})
    served("FETCH", range(0, 6))  # Fetch sessions (KIP-227) are Fetch v7: the broker's fetch is 0.11's


def a_fetch_v0_3_gets_every_batch_it_cannot_read_converted() -> None:
    """A Fetch v2 of a v1 message set then a v2 batch (a topic whose format went up) gets both as
    v1; the broker's own conversion is its test's."""
    from kafka_lite.common.record import MemoryRecords
    from kafka_lite.common.record.convert import down_convert

    mixed = bytes(MemoryRecords.with_records([(1, b"k", b"v")], magic=2, base_offset=1).buffer())
    mixed = bytes(MemoryRecords.with_records([(0, b"k", b"v")], magic=1).buffer()) + mixed
    assert_equal([b.magic for b in down_convert(MemoryRecords(mixed), 1).batches()], [1, 1])
    tested_by("tests/server/test_kafka_apis.py::test_old_produce_and_fetch_versions_convert_message_sets")()


def a_batch_is_read_where_it_lies() -> None:
    """A batch is read at its start position inside the bytes it is given. A v2 batch reads its
    records only when asked, from those bytes: a change to them shows through, so nothing was copied
    (a message set's one message is parsed as the batch is wrapped)."""
    from kafka_lite.common.record import MemoryRecords
    from kafka_lite.common.record.default_record_batch import DefaultRecordBatch
    from kafka_lite.common.record.legacy_record import LegacyRecordBatch

    for magic, batch_class in ((2, DefaultRecordBatch), (1, LegacyRecordBatch)):
        batch = bytes(MemoryRecords.with_records([(1, b"k", b"value-1")], magic=magic).buffer())
        response = bytearray(b"\xff" * 7 + batch)  # the batch seven bytes into a larger buffer
        view = batch_class(response, 7)
        assert_equal(view.size_in_bytes, len(batch))
        if magic == 2:
            at = response.rindex(b"value-1")
            response[at : at + 7] = b"value-2"
        assert_equal([r.value for r in view], [b"value-2" if magic == 2 else b"value-1"])


def one_varint_function_for_both_widths() -> None:
    from kafka_lite.common.errors import CorruptRecordException
    from kafka_lite.common.record.varint import read_varint, read_varlong, write_varint

    nowhere_in_package(r"def write_varlong")
    for value in (-300, 2**40, -(2**63)):
        out = bytearray()
        write_varint(value, out)
        assert_equal(read_varlong(out, 0), (value, len(out)))
    wide = bytearray()
    write_varint(2**40, wide)  # six bytes: a varlong, not a varint
    with pytest.raises(CorruptRecordException):
        read_varint(wide, 0)


def the_clients_codec_is_the_compiled_one_by_default() -> None:
    import os

    from kafka_lite.common.record import codec, compiled

    if os.environ.get(codec.ENV_VAR) is not None:
        pytest.skip(f"{codec.ENV_VAR} chooses the codec in this run")
    assert_equal(codec.codec_name(), codec.COMPILED)
    assert codec.MemoryRecordsBuilder is compiled.MemoryRecordsBuilder
    tested_by(
        "tests/common/record/test_codec.py::test_log_append_time_and_old_formats_are_written_by_the_reference"
    )()


def crc32c_is_google_crc32cs() -> None:
    import google_crc32c

    from kafka_lite.common.record.crc import crc32c

    assert_equal(google_crc32c.implementation, "c")
    assert_equal(crc32c(b"123456789"), google_crc32c.value(b"123456789"))
    tested_by("tests/common/record/test_records.py::test_crc32c_check_value_and_the_table_algorithm_agree")()


def every_codec_is_written_and_read() -> None:
    zstd_is_written_and_read_but_produce_stops_at_v3()  # clients send zstd only with Produce v7
    tested_by(
        "tests/common/record/test_interop_kafka_python.py::test_kafka_python_decodes_what_we_write",
        "tests/common/record/test_interop_kafka_python.py::test_we_decode_what_kafka_python_writes",
        "tests/common/record/test_interop_kafka_python.py::test_every_codec_is_exercised",
        "tests/common/record/test_interop_kafka_python.py::test_magic_0_lz4_is_refused_with_the_reason",
    )()


def without_a_group_auto_commit_cannot_be_asked_for() -> None:
    from kafka_lite.common.errors import ConfigException

    with pytest.raises(
        ConfigException, match=r"enable\.auto\.commit cannot be set to true without a group\.id"
    ):
        consumer(enable_auto_commit=True)


# -- checks for chapters 7-12 and the data pipeline ----------------------------------------------


def controller_events_run_in_order_on_one_thread() -> None:
    """Queued events run one after another on ``controller-event-thread``; a harness takes one off
    the queue with ``take_event`` without running it. No ZooKeeper: nothing here reads it."""
    import threading

    from kafka_lite.controller.kafka_controller import KafkaController

    controller, ran = KafkaController(0, zk=None), []
    for name in ("first", "second", "third"):
        controller.put_event(name, lambda n=name: ran.append((n, threading.current_thread().name)))
    name, _ = controller.take_event()
    assert name == "first" and ran == [], f"take_event gave {name!r} and ran {ran}"
    controller._thread.start()  # what startup() does, without its ZooKeeper watch and election
    controller.shutdown()  # queued after the events: the thread runs them, then stops
    assert_equal(ran, [("second", "controller-event-thread"), ("third", "controller-event-thread")])


def a_topic_change_reads_the_topics_again() -> None:
    """The watch saw ``deleted``, whose deletion the controller completed before the event ran: the
    event reads ``/brokers/topics`` again and finds nothing new (a stale list would load the topic,
    which this ZooKeeper cannot answer)."""
    from kafka_lite.controller.kafka_controller import KafkaController

    class TopicsNow:
        def get_all_topics(self) -> list[str]:
            return []

    controller = KafkaController(0, zk=TopicsNow())
    controller.active_controller_id = 0
    try:
        controller.handle_topic_change(["deleted"])
    except AttributeError as e:  # TopicsNow has no partition assignment to read
        raise AssertionError(f"the event loaded a topic from the watch's list: {e}") from e
    assert_equal(controller.context.all_topics, set())


def kafkas_class_names_map_to_kafka_lites() -> None:
    """A Kafka class name gives kafka_lite's class of that role; a module path is never imported,
    even one naming a kafka_lite class; a class of one's own is known once registered."""
    from kafka_lite.connect.errors import ConnectException
    from kafka_lite.connect.file.file_stream_source_connector import FileStreamSourceConnector
    from kafka_lite.connect.json.json_converter import JsonConverter
    from kafka_lite.connect.runtime import connector_factory as factory
    from kafka_lite.connect.transforms.transformation import Transformation

    assert isinstance(factory.new_converter("org.apache.kafka.connect.json.JsonConverter"), JsonConverter)
    assert factory.connector_class("FileStreamSource") is FileStreamSourceConnector
    insert_field = factory.transformation_class("org.apache.kafka.connect.transforms.InsertField$Value")
    assert insert_field is not None and issubclass(insert_field, Transformation), insert_field
    with pytest.raises(ConnectException):
        factory.new_converter("kafka_lite.connect.json.json_converter.JsonConverter")
    with pytest.raises(ConnectException):
        factory.connector_class(
            "kafka_lite.connect.file.file_stream_source_connector.FileStreamSourceConnector"
        )
    assert factory.transformation_class("kafka_lite.connect.transforms.insert_field.InsertField") is None

    class Mine(Transformation):
        pass

    factory.register("com.example.Mine", Mine)
    try:
        assert factory.transformation_class("com.example.Mine") is Mine
    finally:
        del factory.TRANSFORMATIONS["com.example.Mine"]


def internal_topics_are_created_with_create_topics() -> None:
    """A missing internal topic is asked of the admin client's CreateTopics (no ZooKeeper to write),
    and the application's consumers ask for metadata without creating topics."""
    from kafka_lite.streams.processor.internals.internal_topic_manager import (
        InternalTopicConfig,
        InternalTopicManager,
    )
    from kafka_lite.streams.streams_config import StreamsConfig

    class Admin:
        def __init__(self) -> None:
            self.created: list = []

        def describe_cluster(self):
            return self

        def partition_count_for_topic(self, topic: str) -> None:
            return None  # no internal topic exists yet

        def create_topics(self, topics) -> None:
            self.created += [(t.name, t.num_partitions, t.configs) for t in topics]

    admin = Admin()
    InternalTopicManager(admin, 1).make_ready([InternalTopicConfig.changelog("app-store-changelog", 2, {})])
    assert_equal(admin.created, [("app-store-changelog", 2, {"cleanup.policy": "compact"})])
    assert_equal(StreamsConfig(STREAMS_BASE).get_consumer_configs("c")["allow.auto.create.topics"], False)


def session_stores_keep_every_session_in_memory() -> None:
    """No changelog, and no retention: a session far older than the newest is still found."""
    from collections import namedtuple

    from kafka_lite.streams.state.internals.in_memory_session_store import InMemorySessionStoreSupplier

    supplier = InMemorySessionStoreSupplier("sessions")
    assert supplier.logging_enabled() is False and supplier.log_config() == {}
    store = supplier.get()
    assert store.persistent() is False
    window, session = namedtuple("Window", "start end"), namedtuple("Session", "key window")
    old, new = session("k", window(0, 10)), session("k", window(10**12, 10**12 + 10))
    store.put(old, 1)
    store.put(new, 2)
    with store.find_sessions("k", 0, 10**13) as found:
        assert_equal([entry.key for entry in found], [old, new])


def kraft_takes_secure_and_named_clusters_but_not_scram() -> None:
    """``cluster up --kraft`` takes ``--secure`` and ``--name``; SCRAM is what a KRaft node refuses."""
    from kafka_lite.cli.cluster_kraft import check_flags

    check_flags(argparse.Namespace(secure=True, name="second", zookeeper_port=None))
    a_kraft_node_refuses_scram_and_the_zookeeper_authorizer()


def a_kraft_record_is_a_schema_table_and_a_small_class() -> None:
    from kafka_lite.common.metadata import RegisterBrokerRecord
    from kafka_lite.common.metadata.api_message import ApiMessage
    from kafka_lite.common.protocol.types import FlexibleSchema

    assert issubclass(RegisterBrokerRecord, ApiMessage)
    assert all(isinstance(schema, FlexibleSchema) for schema in RegisterBrokerRecord.SCHEMAS)
    own = {name for name in vars(RegisterBrokerRecord) if not name.startswith("__")}
    assert own <= {"API_KEY", "SCHEMAS", "STRUCTS", "FIELDS"}, (
        f"RegisterBrokerRecord has code of its own: {own}"
    )
    kraft_nullable_strings_start_as_none()


def the_controllers_snapshot_is_its_image_of_the_committed_records() -> None:
    """Two writes of one key replayed: the snapshot's records are the image's, one per key, not
    the log's two."""
    from kafka_lite.common.metadata import ConfigRecord
    from kafka_lite.common.metadata.api_message_and_version import ApiMessageAndVersion
    from kafka_lite.metadata.controller.snapshot_generator import CommittedImage

    def config(value: str) -> ApiMessageAndVersion:
        return ApiMessageAndVersion(ConfigRecord(resource_type=4, resource_name="", name="k", value=value), 0)

    committed = CommittedImage()
    committed.replay(1, 1, [config("1"), config("2")])
    assert_equal([r.message for r in committed.records()], [config("2").message])


def topic_configs_are_log_configs_names() -> None:
    """A topic config of 0.10.1's LogConfig is taken; one Kafka added later (2.3's
    ``max.compaction.lag.ms``) is INVALID_CONFIG, naming it."""
    from kafka_lite.common.errors import Errors
    from kafka_lite.metadata.config_resource import ConfigResource
    from kafka_lite.metadata.controller.configuration_control_manager import (
        ConfigurationControlManager,
        OpType,
    )
    from kafka_lite.metadata.timeline.snapshot_registry import SnapshotRegistry

    topic = ConfigResource(ConfigResource.Type.TOPIC, "t")
    manager = ConfigurationControlManager(SnapshotRegistry())
    for key, error in (("retention.ms", Errors.NONE), ("max.compaction.lag.ms", Errors.INVALID_CONFIG)):
        answer = manager.incremental_alter_configs({topic: {key: (OpType.SET, "1")}}, True).response[topic]
        assert answer.error is error, f"{key}: {answer}"


def a_kraft_node_refuses_scram_and_the_zookeeper_authorizer() -> None:
    """SCRAM on a KRaft node is refused naming Kafka 3.3's reason; so is SimpleAclAuthorizer; PLAIN
    on a SASL_PLAINTEXT listener is taken."""
    from kafka_lite.common.errors import ConfigException
    from kafka_lite.server.kafka_config import KafkaConfig

    jaas = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="a" password="a" user_a="a";'
    kraft = {
        "process.roles": "broker", "node.id": 1, "controller.quorum.voters": "0@localhost:9093",
        "controller.listener.names": "CONTROLLER",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT",
        "listeners": "SASL_PLAINTEXT://localhost:9092", "security.inter.broker.protocol": "SASL_PLAINTEXT",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": jaas,
    }  # fmt: skip
    assert_equal([e.security_protocol for e in KafkaConfig(kraft).listeners], ["SASL_PLAINTEXT"])
    scram = {**kraft, "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256",
             "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config":
                 "org.apache.kafka.common.security.scram.ScramLoginModule required;"}  # fmt: skip
    with pytest.raises(ConfigException, match=r"UserScramCredentialRecord has no writer before Kafka 3\.5"):
        KafkaConfig(scram)
    with pytest.raises(ConfigException, match="a KRaft node has no ZooKeeper to keep ACLs in"):
        KafkaConfig({**kraft, "authorizer.class.name": "SimpleAclAuthorizer"})


def the_next_producer_id_block_is_asked_for_when_the_block_runs_out() -> None:
    """Blocks of ten: the tenth id asks nothing (Kafka 3.3 asks at the ninth, 90 %), the eleventh asks."""
    from types import SimpleNamespace

    from kafka_lite.server.producer_id_manager import RPCProducerIdManager

    class Controller:
        asked = 0

        def send_request(self, api, body, handler) -> None:
            Controller.asked += 1
            start = (Controller.asked - 1) * 10
            answer = {"error_code": 0, "producer_id_start": start, "producer_id_len": 10}
            handler.on_complete(SimpleNamespace(body=answer))

    manager = RPCProducerIdManager(1, lambda: 7, Controller())
    assert_equal([manager.generate_producer_id() for _ in range(10)], list(range(10)))
    assert_equal(Controller.asked, 1)
    assert_equal(manager.generate_producer_id(), 10)
    assert_equal(Controller.asked, 2)


# -- the table ------------------------------------------------------------------------------------

CLAIMS: dict[str, list[Claim]] = {
    "ch01_introduction/index.md": [
        holds(
            "Nothing of the platform this chapter tours",
            all_of(
                lambda: exists("kafka_lite.connect.runtime.worker:Worker"),
                lambda: exists("kafka_lite.tools.mirror_maker:MirrorMaker"),
                lambda: exists("kafka_lite.streams.kafka_streams:KafkaStreams"),
            ),
        ),
    ],
    "ch02_producer/index.md": [
        holds(
            "Python's shape for the API",
            all_of(
                the_producers_shapes_are_kafka_pythons,
                tested_by(
                    "tests/producer/test_kafka_producer.py::test_a_bad_topic_fails_its_future_without_touching_the_network"
                ),
            ),
        ),
        holds("The buffer pool keeps the accounting", the_buffer_pool_hands_out_reservations),
        holds(
            "Splitting a batch the broker refuses",
            tested_by(
                "tests/producer/test_sender.py::"
                "test_a_batch_too_large_for_the_broker_is_split_and_resent_in_order_keeping_each_future",
                "tests/producer/test_sender.py::test_a_split_idempotent_batch_hands_its_sequences_on_to_the_pieces",
            ),
        ),
        holds("Interceptors are classes", interceptors_are_classes_not_names),
        holds(
            "InitProducerId does not block the sender",
            tested_by(
                "tests/producer/test_sender.py::"
                "test_an_idempotent_producer_gets_an_id_then_numbers_each_partitions_batches",
                "tests/producer/test_sender.py::test_without_a_producer_id_batches_still_expire_after_request_timeout",
            ),
        ),
        holds(
            "A batch that fails for good resets the producer id",
            tested_by(
                "tests/producer/test_sender.py::"
                "test_a_batch_that_fails_for_good_resets_the_producer_id_for_the_batches_behind_it",
                "tests/producer/test_sender.py::"
                "test_out_of_order_for_the_next_expected_batch_fails_it_and_resets_the_producer_id",
            ),
        ),
        holds(
            "**Metrics** are a few of Kafka's producer metrics as counters",
            tested_by(
                "tests/producer/test_kafka_producer.py::"
                "test_partitions_for_waits_for_metadata_and_metrics_count_what_was_sent"
            ),
        ),
        holds(
            "The old producer (2.2)",
            lambda: nowhere_in_package(r"class (KeyedMessage|SyncProducer|Producer)\b"),
        ),
        prose(
            "The rate the producer aims for",
            "a speed, measured on the benchmark page, not a setting or a feature",
        ),
    ],
    "ch03_old_consumer/index.md": [
        holds(
            "kafka_lite does not rebuild the old consumer",
            all_of(
                lambda: nowhere_in_package(
                    r"class (ZookeeperConsumerConnector|ConsumerFetcherThread|KafkaStream)\b"
                ),
                # every committed offset goes to __consumer_offsets, and is read back from it
                tested_by(
                    "tests/server/test_group_apis.py::test_an_offset_commit_v0_goes_to_the_offsets_topic_not_to_zookeeper",
                    "tests/coordinator/test_group_metadata_manager_store.py::"
                    "test_a_simple_consumers_offsets_load_back_without_group_metadata",
                ),
            ),
        ),
    ],
    "ch04_new_consumer/index.md": [
        holds(
            "`fetch_hold_back_caught_up` (off by default) is ours",
            all_of(
                lambda: defined(CONSUMER, "fetch.hold.back.caught.up", False, CLIENT_BASE),
                tested_by(
                    "tests/consumer/test_fetcher_logic.py::"
                    "test_kafkas_rule_fetches_a_caught_up_partition_alone_while_its_brokers_other_partitions_are_buffered",
                    "tests/consumer/test_fetcher_logic.py::test_the_hold_back_keeps_a_caught_up_partition_for_its_brokers_next_fetch",
                ),
            ),
        ),
        holds(
            "`ConsumerRecord` and `OffsetAndMetadata` are kafka-python's",
            records_are_kafka_pythons_named_tuples,
        ),
        holds(
            "only settings the consumer implements are defined",
            all_of(
                lambda: refused(CONSUMER, "no.such.setting", base=CLIENT_BASE),
                lambda: assert_equal(
                    obj(CONSUMER).parse({**CLIENT_BASE, "fetch_min_bytes": 2})["fetch.min.bytes"], 2
                ),
            ),
        ),
        holds("The methods take kafka-python's shapes", the_consumers_methods_take_kafka_pythons_shapes),
        holds("`subscribe` and `assign` refuse a topic name", a_consumer_refuses_a_bad_topic_name),
        holds(
            "Without a `group_id` there is no coordinator",
            all_of(without_a_group_there_is_no_coordinator, without_a_group_auto_commit_cannot_be_asked_for),
        ),
        holds(
            "`partition.assignment.strategy` defaults to range, then round-robin",
            lambda: defined(CONSUMER, "partition.assignment.strategy", ["range", "roundrobin"], CLIENT_BASE),
        ),
        holds(
            "Fetch v5 and ListOffsets v1",
            all_of(
                lambda: assert_equal(obj("kafka_lite.consumer.internals.fetcher:FETCH_VERSION"), 5),
                lambda: assert_equal(obj("kafka_lite.consumer.internals.fetcher:LIST_OFFSETS_VERSION"), 1),
                lambda: assert_equal(
                    obj("kafka_lite.consumer.internals.fetcher:LIST_OFFSETS_READ_COMMITTED_VERSION"), 2
                ),
                lambda: served("FETCH", range(0, 6)),
                lambda: served("LIST_OFFSETS", range(0, 3)),
                lambda: defined(CONSUMER, "check.crcs"),
            ),
        ),
        holds(
            "While a subscribed topic is missing from the metadata",
            tested_by(
                "tests/consumer/test_consumer_coordinator.py::"
                "test_a_subscribed_topic_missing_from_the_metadata_is_asked_for_again_after_retry_backoff"
            ),
        ),
        holds(
            "A deserializer that fails after other records were drained",
            tested_by(
                "tests/consumer/test_fetcher_logic.py::"
                "test_records_drained_before_a_deserializer_fails_are_returned_and_the_failure_comes_next"
            ),
        ),
        holds(
            "`update_fetch_positions` skips a partition with a valid position",
            a_paused_partition_keeps_its_position,
        ),
        holds(
            "`close` takes a timeout (Kafka 0.10.2), 30 s by default",
            all_of(
                lambda: assert_equal(
                    inspect.signature(obj("kafka_lite.consumer.kafka_consumer:KafkaConsumer.close"))
                    .parameters["timeout_ms"]
                    .default,
                    30_000,
                ),
                tested_by(
                    "tests/consumer/test_consumer_coordinator.py::"
                    "test_an_auto_commit_with_the_coordinator_unknown_starts_looking_for_it"
                ),
            ),
        ),
        holds(
            "looks for an unknown coordinator no longer than `timeout_ms`",
            tested_by(
                "tests/consumer/test_kafka_consumer.py::"
                "test_a_poll_that_cannot_find_the_coordinator_returns_nothing_after_its_timeout"
            ),
        ),
        holds(
            "NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE and COORDINATOR_LOAD_IN_PROGRESS for 0.10's",
            lambda: current_error_names(),
        ),
        holds(
            "Kafka's `Metadata.Listener` is a check",
            all_of(
                lambda: assert_true(
                    not re.search(
                        r"class \w*Listener|def add_listener", source_of("kafka_lite.clients.metadata")
                    )
                ),
                # a metadata update (a new version) is seen by the coordinator's next poll
                tested_by(
                    "tests/consumer/test_consumer_coordinator.py::"
                    "test_the_leader_rejoins_when_a_subscribed_topics_partition_count_changes"
                ),
            ),
        ),
        holds(
            "**Asynchronous offset resets** (Kafka 1.1)",
            all_of(
                lambda: missing("kafka_lite.consumer.internals.fetcher:Fetcher.reset_offsets_if_needed"),
                a_reset_waits_for_its_list_offsets_without_a_limit,
            ),
        ),
        holds(
            "**Metrics' windows and reporters**",
            all_of(
                lambda: refused(CONSUMER, "metric.reporters", ""),
                lambda: refused(CONSUMER, "metrics.sample.window.ms"),
                # a sensor keeps the client's whole life: it has no clock to close a window by
                lambda: assert_not_in(
                    "time", inspect.signature(obj("kafka_lite.common.metrics:Sensor")).parameters
                ),
            ),
        ),
        holds(
            "**TLS**: `security.protocol` takes PLAINTEXT or SASL_PLAINTEXT",
            only_plaintext_and_sasl_plaintext,
        ),
        holds(
            "**Socket settings**",
            all_of(
                lambda: refused(CONSUMER, "send.buffer.bytes"),
                lambda: refused(CONSUMER, "receive.buffer.bytes"),
                lambda: refused(CONSUMER, "connections.max.idle.ms"),
                lambda: assert_equal(
                    inspect.signature(obj("kafka_lite.network.selector:Selector"))
                    .parameters["connections_max_idle_ms"]
                    .default,
                    9 * 60 * 1000,
                ),
            ),
        ),
    ],
    "ch05_coordinator/index.md": [
        holds(
            "A deleted topic's committed offsets are removed",
            tested_by(
                "tests/coordinator/test_group_metadata_manager_store.py::test_a_deleted_topics_offsets_are_removed_and_tombstoned",
                "tests/server/metadata/test_broker_metadata_publisher.py::test_a_deleted_topics_committed_offsets_go_with_it",
                "tests/compat/test_deleted_topic_offsets.py::test_a_deleted_topics_committed_offsets_go_with_it",
            ),
        ),
        holds("Errors carry the protocol's current names", lambda: current_error_names()),
        holds(
            "A JoinGroup to an Empty group with an empty protocol type",
            tested_by(
                "tests/coordinator/test_group_coordinator.py::test_a_join_without_protocols_is_refused"
            ),
        ),
        holds(
            "A member removed for not rejoining in time has its session expiry completed",
            tested_by(
                "tests/coordinator/test_group_coordinator.py::"
                "test_a_rebalance_timeout_removes_the_members_that_did_not_rejoin"
            ),
        ),
        holds(
            "The initial rebalance delay is Kafka 0.11's",
            all_of(
                lambda: defined(BROKER, "group.initial.rebalance.delay.ms", 3000, BROKER_BASE),
                tested_by(
                    "tests/coordinator/test_group_coordinator.py::test_initial_delay_without_new_members_ends_after_one_delay",
                    "tests/coordinator/test_group_coordinator.py::test_initial_delay_extends_at_most_to_the_rebalance_timeout",
                ),
            ),
        ),
        holds(
            "A new coordinator loads its partition to the log's end",
            tested_by(
                "tests/coordinator/test_group_metadata_manager_store.py::"
                "test_loading_reads_to_the_log_end_past_the_high_watermark"
            ),
        ),
        holds(
            "OffsetFetch without partitions answers all",
            all_of(
                lambda: served("OFFSET_FETCH", range(0, 4)),
                tested_by(
                    "tests/coordinator/test_group_metadata_manager_store.py::"
                    "test_a_simple_consumers_offsets_load_back_without_group_metadata",
                    "tests/server/test_group_apis.py::test_admin_client_lists_describes_and_fetches_the_groups_offsets",
                ),
            ),
        ),
        holds(
            "The range assignor takes topics in sorted order", the_range_assignor_takes_topics_in_sorted_order
        ),
        holds(
            'The "Preparing to rebalance" log line',
            tested_by("tests/coordinator/test_group_coordinator.py::test_each_rebalance_logs_why_it_began"),
        ),
        holds(
            "**The coordinator's metrics.**",
            all_of(
                lambda: nowhere_in_package(r"NumGroups\b", r"NumOffsets\b"),
                tested_by(
                    "tests/coordinator/test_group_coordinator.py::"
                    "test_resigning_kills_an_empty_group_and_leaves_other_partitions_alone"
                ),
            ),
        ),
    ],
    "ch06_storage/delayed_operations.md": [
        holds("The timer reads a `Time` passed in", the_timer_runs_on_the_time_it_is_given),
        holds(
            "The delay queue is kafka_lite's own",
            all_of(
                lambda: exists("kafka_lite.utils.timer.delay_queue:DelayQueue"),
                tested_by(
                    "tests/utils/timer/test_system_timer.py::test_shutdown_wakes_a_waiting_advance_clock"
                ),
            ),
        ),
        holds(
            "`TimingWheel.add`'s last branch",
            all_of(
                lambda: exists("kafka_lite.utils.timer.timing_wheel:TimingWheel._add_to_overflow_wheel"),
                tested_by(
                    "tests/utils/timer/test_system_timer.py::test_the_wheels_order_tasks_like_kafkas_timer_test"
                ),
            ),
        ),
        holds(
            "The purgatory has no metrics gauges",
            all_of(
                lambda: nowhere_in_package(r"gauge\(.*PurgatorySize"),
                tested_by(
                    "tests/utils/test_delayed_operation.py::test_completing_an_operation_takes_it_off_the_timer"
                ),
                the_reaper_logs_an_error_and_goes_on,
            ),
        ),
        holds(
            "The purgatory is in `utils/delayed_operation.py`",
            all_of(
                lambda: exists("kafka_lite.utils.delayed_operation:DelayedOperationPurgatory"),
                lambda: exists("kafka_lite.testing.mock_timer:MockTimer"),
            ),
        ),
    ],
    "ch06_storage/index.md": [
        holds(
            "A Fetch v0-3 gets each batch it cannot read down-converted",
            all_of(
                lambda: defined(BROKER, "log.message.format.version", None, BROKER_BASE),
                lambda: defined(TOPIC, "message.format.version", "0.11.0-IV2"),
                a_fetch_v0_3_gets_every_batch_it_cannot_read_converted,
            ),
        ),
        holds("Appends check each batch's header and CRC", timestamps_are_decoded_only_when_bounded),
        holds(
            "Deleted segments are removed at once",
            tested_by(
                "tests/log/test_log.py::test_a_deleted_segments_files_are_removed_at_once_and_a_read_still_in_it_finishes",
                "tests/log/test_log.py::test_a_fetch_answers_region_left_for_sendfile_reads_its_deleted_segment",
            ),
        ),
        holds(
            "Compaction's offset map is a dict",
            all_of(
                lambda: nowhere_in_package(r"class SkimpyOffsetMap"),
                lambda: refused(BROKER, "log.cleaner.dedupe.buffer.size", "1", BROKER_BASE),
            ),
        ),
        holds("one scheduler thread rather than thread pools", the_log_managers_jobs_share_one_scheduler),
        holds("zstd needs Produce v7", all_of(crc32c_is_google_crc32cs, every_codec_is_written_and_read)),
        holds(
            "**The replica manager's metrics gauges (6.2)**",
            all_of(
                lambda: nowhere_in_package(r"UnderReplicatedPartitions\b", r"IsrShrinksPerSec\b"),
                tested_by(
                    "tests/server/test_replication.py::test_a_stuck_follower_leaves_the_isr_and_returns_once_caught_up"
                ),
            ),
        ),
        holds(
            "**Replication's latency at Kafka's rates.**", num_replica_fetchers_splits_a_leaders_partitions
        ),
    ],
    "ch06_storage/message_formats.md": [
        holds(
            "**Fetch down-conversion looks at every batch.**",
            a_fetch_v0_3_gets_every_batch_it_cannot_read_converted,
        ),
        holds("**Views, not copies.**", a_batch_is_read_where_it_lies),
        holds("**One varint function for both widths.**", one_varint_function_for_both_widths),
        holds("**Compression in one call.**", every_codec_is_written_and_read),
        holds("**CRC-32C from google-crc32c's C extension**", crc32c_is_google_crc32cs),
        holds(
            "**The clients' record codec is compiled by default.**",
            the_clients_codec_is_the_compiled_one_by_default,
        ),
        holds("**Appends do not decode records**", timestamps_are_decoded_only_when_bounded),
        holds(
            "**Errors say where.**",
            lambda: a_crc_mismatch_points_at_the_crc_field(),
        ),
        holds(
            "**`inspect.py` has no Kafka twin.**",
            tested_by(
                "tests/common/record/test_records.py::test_field_tree_locates_every_header_field_and_record"
            ),
        ),
    ],
    "ch06_storage/reads_and_writes.md": [
        holds(
            "A follower counts as caught up when it reaches the leader's LEO",
            tested_by(
                "tests/server/test_replication.py::test_a_follower_fetching_behind_a_moving_leo_stays_in_sync",
                "tests/server/test_replication.py::test_a_follower_that_fetches_but_never_catches_up_leaves_the_isr",
            ),
        ),
        holds(
            "A new leader starts its followers' lag clocks afresh",
            tested_by(
                "tests/server/test_replication.py::test_a_new_leader_starts_its_followers_lag_clocks_afresh"
            ),
        ),
        holds(
            "The ISR check runs every half of `replica.lag.time.max.ms`",
            tested_by(
                "tests/server/test_replication.py::test_the_isr_check_runs_every_half_of_replica_lag_time_max_ms"
            ),
        ),
        holds(
            'A new leader writes the entry "my epoch starts at my LEO"',
            tested_by(
                "tests/server/test_replication.py::"
                "test_after_two_quick_elections_a_follower_truncates_to_where_the_new_leaders_epoch_starts"
            ),
        ),
        holds(
            "A `Replica`'s LEO and HW are plain ints",
            all_of(
                lambda: exists("kafka_lite.server.replica:Replica.log_end_offset_metadata"),
                lambda: exists("kafka_lite.server.replica:Replica.high_watermark_metadata"),
                # the positions are what a waiting fetch compares, without reading the log
                tested_by(
                    "tests/server/test_delayed_fetch.py::"
                    "test_a_waiting_fetch_completes_at_min_bytes_counting_by_position_not_by_reading"
                ),
            ),
        ),
        holds(
            "The replica fetcher is one class",
            all_of(
                lambda: exists("kafka_lite.server.replica_fetcher_thread:ReplicaFetcherThread"),
                lambda: nowhere_in_package(r"class AbstractFetcherThread"),
            ),
        ),
        holds(
            "A follower ahead of its leader on a topic without unclean leader election",
            tested_by(
                "tests/server/test_replica_fetcher_thread.py::"
                "test_without_unclean_election_a_follower_ahead_of_its_leader_keeps_its_log_and_stops_fetching"
            ),
        ),
        holds(
            "The leader epoch cache is in `log/epoch/`",
            all_of(
                lambda: exists("kafka_lite.log.epoch.leader_epoch_file_cache"),
                lambda: missing("kafka_lite.server.epoch"),
            ),
        ),
        holds(
            "is answered NOT_LEADER_FOR_PARTITION",
            tested_by(
                "tests/server/test_kafka_apis.py::test_produce_to_a_broker_that_does_not_lead_gets_not_leader"
            ),
        ),
        holds(
            "The idempotent producers' state is kept in `Partition`",
            tested_by(
                "tests/server/test_broker_parts.py::test_producer_state_survives_a_restart_through_snapshot_and_log"
            ),
        ),
    ],
    "ch07_controller/index.md": [
        holds("**One event thread, as in Kafka 0.11**", controller_events_run_in_order_on_one_thread),
        holds(
            "**Bounced brokers, as in Kafka 2.2**",
            tested_by(
                "tests/controller/test_as_kafka_0_10_1.py::test_a_bounced_broker_is_a_failure_then_a_startup_through_bounced_brokers",
                "tests/controller/test_as_kafka_0_10_1.py::test_without_bounced_brokers_a_bounce_goes_unseen_as_in_0_10_1",
            ),
        ),
        holds("**The topics read again, as in Kafka 1.1**", a_topic_change_reads_the_topics_again),
        holds(
            "**A never-led replica goes Offline, as in Kafka 2.0**",
            tested_by(
                "tests/controller/test_state_machine_edges.py::test_a_topic_deletion_takes_every_replica_and_partition_to_nonexistent"
            ),
        ),
        holds(
            "**Listeners after the context**",
            tested_by(
                "tests/controller/test_state_machine_edges.py::test_a_failover_watches_the_brokers_and_topics_only_after_reading_them"
            ),
        ),
        holds(
            "**Rack-aware replica placement**",
            all_of(
                lambda: defined(BROKER, "broker.rack", None, BROKER_BASE),
                lambda: missing("kafka_lite.zk.admin_utils:assign_replicas_to_brokers_rack_aware"),
                lambda: nowhere_in_package(r"def \w*rack_aware"),
                lambda: assert_not_in("--disable-rack-aware", cli_options("reassign-partitions")),
            ),
        ),
        holds(
            "**The controller's metrics**",
            lambda: nowhere_in_package(
                r"ActiveControllerCount\b", r"OfflinePartitionsCount\b", r"LeaderElectionRateAndTimeMs\b"
            ),
        ),
    ],
    "ch08_mirrormaker_connect/index.md": [
        holds(
            "**MirrorMaker has the new consumer only**",
            all_of(
                lambda: assert_not_in("--blacklist", cli_options("mirror-maker")),
                lambda: assert_not_in("--consumer.rebalance.listener", cli_options("mirror-maker")),
                lambda: assert_in("--whitelist", cli_options("mirror-maker")),
                tested_by(
                    "tests/tools/test_mirror_maker.py::test_the_default_handler_copies_key_value_timestamp_and_headers_but_not_the_partition"
                ),
            ),
        ),
        holds(
            "**uReplicator is a sketch of the idea",
            all_of(
                tested_by(
                    "tests/tools/mirror_maker/test_ureplicator.py::test_workers_leaving_and_joining_move_only_their_partitions_and_lose_nothing"
                ),
                lambda: not_in_source("kafka_lite.tools.ureplicator", "import kazoo", "from kazoo", "helix"),
            ),
        ),
        holds(
            "**Connect's REST API is 0.11's**",
            tested_by(
                "tests/connect/test_rest_server.py::test_the_server_serves_every_path_of_kafka_0_11_and_its_interactive_page",
                "tests/connect/test_rest_server.py::test_a_stale_config_is_409_and_no_answer_in_time_is_500",
            ),
        ),
        holds("**Class names map to kafka_lite's**", kafkas_class_names_map_to_kafka_lites),
        holds("**No Connect metrics**", lambda: nowhere_in_package(r"class \w*ConnectMetrics\b")),
        holds(
            "**MirrorMaker 2**",
            lambda: nowhere_in_package(r"class MirrorSourceConnector", r"class MirrorCheckpointConnector"),
        ),
    ],
    "ch09_streams/index.md": [
        holds(
            "**Versions.**",
            all_of(
                lambda: exists("kafka_lite.streams.kafka_streams:KafkaStreams.local_threads_metadata"),
                tested_by(
                    "tests/streams/test_stream_thread_loop.py::test_one_record_from_each_task_in_turn_then_punctuations_and_requested_commits",
                    "tests/streams/test_stream_thread_loop.py::test_shutdown_commits_the_input_offsets_only_after_the_cached_counts_are_written",
                    "tests/streams/test_topology_test_driver.py::test_word_count_output_and_store_equal_the_count_by_hand",
                    "tests/streams/kstream/test_windowed_aggregations.py::test_a_record_in_the_gap_merges_two_sessions",
                ),
            ),
        ),
        holds(
            "**Punctuation by stream time only**",
            all_of(
                lambda: nowhere_in_package(r"PunctuationType\b", r"WALL_CLOCK_TIME"),
                tested_by(
                    "tests/streams/test_topology_test_driver.py::test_punctuation_follows_stream_time_not_the_wall_clock"
                ),
            ),
        ),
        holds(
            "**A record that cannot be deserialized**",
            tested_by(
                "tests/streams/test_deserialization_exception_handler.py::test_log_and_fail_stops_the_task_naming_the_record",
                "tests/streams/test_deserialization_exception_handler.py::test_log_and_continue_skips_the_record_and_goes_on",
            ),
        ),
        holds(
            "**Internal topics are created with CreateTopics**",
            all_of(
                lambda: refused(STREAMS, "zookeeper.connect", "127.0.0.1:2181", STREAMS_BASE),
                internal_topics_are_created_with_create_topics,
            ),
        ),
        holds(
            "**The application's state directory is locked**",
            lambda: a_second_instance_cannot_lock_the_state_directory(),
        ),
        holds(
            "**The instance's states**",
            lambda: assert_true(
                {"CREATED", "REBALANCING", "RUNNING"}
                <= set(obj("kafka_lite.streams.kafka_streams:State").__members__)
            ),
        ),
        holds(
            "**Serdes are named on each source, sink and store**",
            all_of(
                lambda: refused(STREAMS, "default.key.serde", "x", STREAMS_BASE),
                lambda: refused(STREAMS, "default.value.serde", "x", STREAMS_BASE),
            ),
        ),
        holds("**Exactly once is Kafka 0.11's**", lambda: exactly_once_is_0_11s()),
        holds(
            "**The record cache**",
            all_of(
                lambda: assert_equal(
                    obj("kafka_lite.streams.streams_config:StreamsConfig")(STREAMS_BASE)[
                        "cache.max.bytes.buffering"
                    ],
                    10485760,
                ),
                tested_by(
                    "tests/streams/kstream/test_record_cache.py::test_a_commit_interval_of_word_count_writes_one_record_per_word",
                    "tests/streams/kstream/test_record_cache.py::test_a_table_source_forwards_its_keys_last_value_at_the_commit",
                    "tests/streams/state/test_caching_stores.py::test_a_window_put_is_stamped_with_the_records_context_and_forwarded_in_it",
                    "tests/streams/state/test_caching_stores.py::test_window_fetch_merges_the_cache_with_the_store_below_by_window_start",
                ),
            ),
        ),
        holds(
            "**A cache for session stores**",
            all_of(
                lambda: nowhere_in_package(r"class CachingSessionStore"),
                lambda: exists("kafka_lite.streams.state.internals.caching_window_store:CachingWindowStore"),
            ),
        ),
        holds(
            "**A RocksDB session store**",
            all_of(
                lambda: nowhere_in_package(r"class RocksDBSessionStore"),
                session_stores_keep_every_session_in_memory,
            ),
        ),
    ],
    "ch10_advanced/index.md": [
        holds(
            "**Quotas are per client id only.**",
            all_of(
                quotas_are_keyed_by_client_id_only,
                client_quotas_must_be_above_zero,
                tested_by(
                    "tests/server/test_client_quota_manager.py::test_the_request_quota_throttles_at_most_one_window_and_exempts_what_it_is_told",
                    "tests/server/test_client_quota_manager.py::test_the_request_quota_holds_back_fetch_but_answers_metadata_at_once",
                ),
            ),
        ),
        holds(
            "**A record's timestamp is decoded only when the topic bounds it**",
            timestamps_are_decoded_only_when_bounded,
        ),
        holds(
            "**Transactions are Kafka 0.11's protocol",
            all_of(
                lambda: assert_true(
                    obj("kafka_lite.errors:ProducerFencedError")
                    is obj("kafka_lite.common.errors:ProducerFencedException")
                ),
                lambda: assert_equal(obj("kafka_lite.log.producer_state_manager:BATCHES_TO_RETAIN"), 5),
                tested_by(
                    "tests/producer/test_transaction_manager.py::test_a_fenced_epoch_is_fatal_and_every_later_call_says_fenced",
                    "tests/producer/test_transaction_manager.py::test_init_transactions_waits_no_longer_than_max_block_ms",
                ),
            ),
        ),
        holds(
            "**KIP-890's verification (Kafka 3.6) is off unless asked for**",
            all_of(
                lambda: assert_equal(
                    obj("kafka_lite.server.kafka_config:CONFIG_DEF")
                    .keys["transaction.partition.verification.enable"]
                    .default,
                    False,
                ),
                lambda: assert_equal(
                    obj("kafka_lite.log.producer_state_manager:VerificationStateEntry").__slots__,
                    ("timestamp", "verification_guard"),
                ),
                tested_by(
                    "tests/jepsen/test_hanging_transaction.py::test_kip_890_refuses_the_delayed_produce_and_nothing_hangs",
                    "tests/log/test_transactions.py::test_an_abort_marker_between_verification_and_append_voids_the_guard",
                ),
            ),
        ),
        holds(
            "**KIP-890's second part (Kafka 4.0) is the producer's choice, `transaction.version=2`.**",
            all_of(
                lambda: assert_equal(
                    obj("kafka_lite.producer.producer_config:CONFIG_DEF").keys["transaction.version"].default,
                    0,
                ),
                lambda: served("END_TXN", range(0, 6)),
                tested_by(
                    "tests/jepsen/test_aborted_read.py::test_a_late_write_of_an_aborted_transaction_is_committed_by_the_next",
                    "tests/jepsen/test_aborted_read.py::test_with_both_parts_of_kip_890_the_late_write_is_fenced_and_the_history_is_valid",
                    "tests/coordinator/transaction/test_transaction_coordinator.py::test_kip_890_part_2_an_end_txn_of_version_2_bumps_the_epoch_its_markers_carry_and_fences_the_old",
                    "tests/coordinator/transaction/test_transaction_coordinator.py::test_kip_890_part_2_a_retry_while_the_markers_are_written_is_concurrent_and_version_0_keeps_the_epoch",
                ),
            ),
        ),
        holds(
            "**WriteTxnMarkers answers once the group has taken the offsets.**",
            tested_by(
                "tests/coordinator/test_txn_offset_commits.py::test_the_marker_handler_is_told_only_once_the_group_has_taken_the_offsets",
                "tests/coordinator/test_txn_offset_commits.py::test_write_txn_markers_is_answered_only_once_the_group_has_taken_the_offsets",
            ),
        ),
        holds(
            "**Streams under exactly_once empties a task's directory**",
            tested_by(
                "tests/streams/test_exactly_once.py::test_under_exactly_once_a_task_directory_without_a_checkpoint_is_wiped"
            ),
        ),
        holds(
            "**Compaction and transactions**",
            tested_by(
                "tests/log/test_transactions.py::test_after_cleaning_a_read_committed_read_returns_no_aborted_record",
                "tests/log/test_transactions.py::test_the_cleaner_drops_aborted_records_and_keeps_the_markers_as_control_batches",
                "tests/log/test_transactions.py::test_committed_transactional_records_compact_by_key_as_others_do",
            ),
        ),
        holds(
            "**KIP-890's partitions added with the Produce**",
            all_of(
                lambda: served("PRODUCE", range(0, 4)),  # v12 is the one that adds the partition
                lambda: served("ADD_PARTITIONS_TO_TXN", range(0, 5)),
            ),
        ),
        holds(
            "**Producer expiry on the partition**",
            all_of(
                lambda: nowhere_in_package(r"def \w*expire_producer"),
                lambda: refused(BROKER, "producer.id.expiration.ms", "1", BROKER_BASE),
                # what the log start forgets, as Kafka's ``truncateHead`` does
                tested_by(
                    "tests/log/test_producer_state_log_start.py::test_delete_records_past_a_producers_writes_forgets_it_and_refuses_its_next_sequence"
                ),
            ),
        ),
        holds(
            "**Quotas per user** (KIP-55): a broker with a SASL listener", quotas_are_keyed_by_client_id_only
        ),
    ],
    "ch11_security/index.md": [
        holds("**No TLS.**", only_plaintext_and_sasl_plaintext),
        holds(
            "**No GSSAPI (Kerberos) and no SCRAM-SHA-512.**",
            lambda: assert_equal(
                set(obj("kafka_lite.common.security.sasl:MECHANISMS")), {"PLAIN", "SCRAM-SHA-256"}
            ),
        ),
        holds(
            "**Both framings, one broker.**",
            all_of(
                lambda: served("SASL_HANDSHAKE", range(0, 2)),
                lambda: served("SASL_AUTHENTICATE", range(0, 1)),
            ),
        ),
        holds(
            "**A failed login is answered, then closed 100 ms later**",
            all_of(
                lambda: assert_equal(
                    obj("kafka_lite.network.socket_server:FAILED_AUTHENTICATION_DELAY_MS"), 100
                ),
                tested_by(
                    "tests/network/test_selector.py::test_a_failed_authentication_closes_the_connection_after_the_delay_on_mock_time",
                    "tests/network/test_sasl_authenticators.py::test_wrong_password_v1_answers_error_58_then_closes_and_logs_user_and_address",
                ),
            ),
        ),
        holds(
            "**A denial is logged at INFO**",
            tested_by(
                "tests/security/test_simple_acl_authorizer.py::test_a_denial_is_logged_with_principal_operation_resource_and_host"
            ),
        ),
        holds(
            "**PLAIN refuses an authorization id naming someone else**", plain_refuses_someone_elses_authzid
        ),
        holds(
            "**A broker without the request's listener is left out", a_broker_without_the_listener_is_left_out
        ),
        holds(
            "**Quotas per user** (KIP-55): the principal a login proves", quotas_are_keyed_by_client_id_only
        ),
        holds(
            "**Delegation tokens and OAuth**",
            all_of(
                lambda: not_served("CREATE_DELEGATION_TOKEN"),
                lambda: assert_not_in("OAUTHBEARER", obj("kafka_lite.common.security.sasl:MECHANISMS")),
            ),
        ),
    ],
    "ch12_kraft/index.md": [
        holds(
            "**The transitions are a table.**",
            tested_by(
                "tests/raft/test_quorum_state.py::test_voter_transitions_follow_the_table",
                "tests/raft/test_quorum_state.py::test_observer_transitions_follow_the_table",
            ),
        ),
        holds(
            "**The Raft APIs are a table of their own.**",
            all_of(
                lambda: exists("kafka_lite.common.protocol.raft_messages:RaftApiKeys.VOTE"),
                lambda: not_served("VOTE"),
                lambda: not_served("BEGIN_QUORUM_EPOCH"),
                lambda: not_served("FETCH_SNAPSHOT"),
            ),
        ),
        holds(
            "**The metadata log keeps its high watermark itself.**",
            all_of(
                lambda: missing("kafka_lite.log.log:Log.high_watermark"),
                tested_by(
                    "tests/raft/test_kafka_metadata_log.py::test_the_metadata_logs_high_watermark_stays_within_the_log",
                    "tests/raft/test_kafka_metadata_log.py::test_a_committed_read_stops_at_the_high_watermark",
                ),
            ),
        ),
        holds(
            "**Every snapshot is kept**",
            all_of(
                lambda: missing("kafka_lite.raft.kafka_metadata_log:KafkaMetadataLog.maybe_clean"),
                lambda: missing("kafka_lite.raft.replicated_log:ReplicatedLog.maybe_clean"),
                tested_by(
                    "tests/raft/test_kafka_metadata_log.py::test_delete_before_snapshot_moves_the_log_start_and_drops_older_snapshots"
                ),
            ),
        ),
        holds(
            "**A snapshot is deleted at once**",
            tested_by(
                "tests/raft/test_kafka_metadata_log.py::test_delete_before_snapshot_deletes_the_segments_and_files_below_it"
            ),
        ),
        holds("**The timeouts refuse negative values**", raft_timeouts_refuse_negative_values),
        holds(
            "**The held Fetch is answered on the Raft thread, and also when the high watermark moves.**",
            tested_by(
                "tests/raft/test_fetch_purgatory.py::test_a_held_fetch_is_answered_when_the_log_end_passes_it",
                "tests/raft/test_fetch_purgatory.py::test_a_held_fetch_is_answered_when_the_high_watermark_moves",
                "tests/raft/test_fetch_purgatory.py::test_a_held_fetch_expires_empty_after_its_max_wait_on_mock_time",
            ),
        ),
        holds(
            "**The leader flushes before it counts its own entry.**",
            tested_by(
                "tests/raft/test_kafka_raft_client.py::test_the_leader_flushes_an_append_before_it_counts_it_towards_the_high_watermark"
            ),
        ),
        holds(
            "**The quorum's listener is a small server of its own**",
            all_of(
                lambda: assert_true(
                    not issubclass(
                        obj("kafka_lite.raft.raft_socket_server:RaftSocketServer"),
                        obj("kafka_lite.network.socket_server:SocketServer"),
                    )
                ),
                tested_by(
                    "tests/raft/test_kafka_network_channel.py::test_a_bad_frame_closes_its_connection_and_the_voter_carries_on"
                ),
            ),
        ),
        holds(
            "**No append purgatory, no snapshot generation in `test-server`, no metrics.**",
            all_of(
                lambda: not_in_source(
                    "kafka_lite.raft.kafka_raft_client:KafkaRaftClient", "append_purgatory"
                ),
                lambda: not_in_source("kafka_lite.raft.tools.test_raft_server", "create_snapshot("),
                lambda: nowhere_in_package(r"class KafkaRaftMetrics\b"),
            ),
        ),
        holds(
            "**`create_snapshot` takes the snapshot's id**",
            tested_by(
                "tests/raft/test_records_snapshots.py::test_create_snapshot_takes_committed_state_only"
            ),
        ),
        holds(
            "**The simulation's log and clock are kafka_lite's own in two places.**",
            tested_by(
                "tests/raft/test_raft_simulation.py::test_snapshot_install_on_a_follower_emptied_by_its_own_snapshot",
                "tests/raft/test_raft_simulation.py::test_a_leader_with_nothing_to_append_keeps_its_followers",
            ),
        ),
        holds(
            "**The simulation cleans logs at once.**",
            tested_by("tests/raft/test_raft_simulation.py::test_snapshot_install"),
        ),
        holds(
            "**SCRAM on a KRaft cluster.**",
            all_of(
                kraft_takes_secure_and_named_clusters_but_not_scram,
                tested_by("tests/cli/test_cluster_kraft_secure.py::test_a_wrong_password_is_refused"),
            ),
        ),
    ],
    "ch12_kraft/quorum_controller.md": [
        holds(
            "**A record is a table and a small class, not a generated class.**",
            all_of(
                a_kraft_record_is_a_schema_table_and_a_small_class,
                tested_by("tests/common/metadata/test_records.py::test_defaults_are_the_specs"),
            ),
        ),
        holds("**Fifteen record types, not twenty-one.**", lambda: kraft_fifteen_record_types()),
        holds(
            "**Fencing writes `FenceBrokerRecord` and `UnfenceBrokerRecord`**",
            tested_by(
                "tests/metadata/controller/test_replication_control_manager.py::test_a_broker_is_unfenced_only_once_it_has_caught_up_with_its_registration",
                "tests/metadata/controller/test_replication_control_manager.py::test_controlled_shutdown_moves_the_leaders_away_before_shutdown_now",
                "tests/metadata/controller/test_cluster_control_manager.py::test_replay_of_a_broker_registration_change_record",
            ),
        ),
        holds(
            "**The controller's snapshot is written from a `MetadataImage`**",
            all_of(
                the_controllers_snapshot_is_its_image_of_the_committed_records,
                tested_by(
                    "tests/metadata/controller/test_quorum_controller.py::test_a_controller_restarted_after_a_snapshot_loads_it_and_replays_only_the_tail"
                ),
            ),
        ),
        holds(
            "**The timeline map is a dict and per-snapshot old values**",
            all_of(
                lambda: nowhere_in_package(r"class SnapshottableHashTable"),
                tested_by(
                    "tests/metadata/timeline/test_timeline_properties.py::test_timeline_structures_match_a_full_copy_per_snapshot"
                ),
            ),
        ),
        holds(
            "**Activation schedules the fencing check**",
            tested_by(
                "tests/metadata/controller/test_quorum_controller.py::test_a_new_leader_fences_a_broker_that_never_heartbeats_to_it",
                "tests/metadata/controller/test_quorum_controller.py::test_the_fencing_event_fences_a_broker_that_stops_heartbeating",
            ),
        ),
        holds(
            "**A standby counts Raft's LeaderChange batches as committed.**",
            tested_by(
                "tests/metadata/controller/test_quorum_controller.py::test_a_leader_change_batch_counts_as_committed_on_a_standby_and_not_on_the_active"
            ),
        ),
        holds(
            "**A topic's ConfigRecords are written only if the topic is created.**",
            tested_by(
                "tests/metadata/controller/test_replication_control_manager.py::test_a_refused_topic_writes_none_of_its_configs"
            ),
        ),
        holds(
            "**`unclean.leader.election.enable=true` on a topic allows an unclean election**",
            tested_by(
                "tests/metadata/controller/test_replication_control_manager.py::test_a_topic_that_allows_unclean_election_elects_outside_the_isr"
            ),
        ),
        holds(
            "**Topic configs are checked against kafka_lite's `LogConfig` definitions**",
            all_of(
                topic_configs_are_log_configs_names,
                tested_by(
                    "tests/metadata/controller/test_configuration_control_manager.py::test_a_bad_topic_config_is_invalid_config_naming_it"
                ),
            ),
        ),
        holds(
            "**Left out:** leader rebalancing",
            lambda: nowhere_in_package(
                r"class (ClientQuotaControlManager|ScramControlManager)",
                r"def (elect_leaders|maybe_balance_partition_leaders|alter_partition_reassignments)\(",
            ),
        ),
    ],
    "ch12_kraft/kraft_brokers.md": [
        holds(
            "**The lifecycle manager's event queue is passed in",
            all_of(
                lambda: assert_param(
                    "kafka_lite.server.broker_lifecycle_manager:BrokerLifecycleManager", "event_queue"
                ),
                tested_by(
                    "tests/server/test_broker_lifecycle_manager.py::test_the_state_moves_starting_recovery_running_on_the_controllers_answers",
                    "tests/server/test_broker_to_controller_channel_manager.py::test_a_brokers_life_over_the_channel_on_its_own_event_queue",
                ),
            ),
        ),
        holds(
            "**No ApiVersions with the controller.**",
            all_of(
                lambda: not_in_source(
                    "kafka_lite.server.broker_to_controller_channel_manager", "API_VERSIONS"
                ),
                tested_by(
                    "tests/server/test_broker_to_controller_channel_manager.py::test_a_request_reaches_the_active_controller_and_its_answer_comes_back"
                ),
            ),
        ),
        holds(
            "**`kafka-lite storage format` lives in `server/`**",
            all_of(
                lambda: exists("kafka_lite.server.storage_tool"),
                lambda: missing("kafka_lite.tools.storage_tool"),
                tested_by(
                    "tests/cli/test_storage_cli.py::test_format_writes_meta_properties_v1_and_the_bootstrap_into_every_directory",
                    "tests/cli/test_storage_cli.py::test_format_refuses_a_release_version_it_cannot_bootstrap",
                ),
            ),
        ),
        holds(
            "**`dump-log` prints a LEADER_CHANGE record's message**",
            tested_by(
                "tests/tools/test_dump_metadata_log.py::test_the_leader_change_control_record_shows_who_leads_and_who_voted"
            ),
        ),
        holds(
            "**`metadata-quorum` tries each address in turn until one answers as the leader**",
            all_of(
                lambda: assert_in("--bootstrap-controller", cli_options("metadata-quorum")),
                tested_by(
                    "tests/cli/test_tools_on_kraft.py::test_metadata_quorum_through_each_broker_as_kafka_3_3s_tool_asks",
                    "tests/cli/test_tools_on_kraft.py::test_metadata_quorum_through_any_one_controller_finds_the_leader",
                    "tests/cli/test_metadata_quorum_cli.py::test_status_names_the_leader_its_epoch_and_the_voters",
                    "tests/cli/test_metadata_quorum_cli.py::test_a_follower_alone_cannot_answer",
                ),
            ),
        ),
        holds(
            "**The controller's listener serves only kafka_lite's APIs**",
            lambda: kraft_controller_listener_apis(),
        ),
        holds(
            "**The broker writes no metadata snapshots of its own**",
            all_of(
                lambda: not_in_source(
                    "kafka_lite.server.metadata.broker_metadata_listener", "create_snapshot("
                ),
                tested_by(
                    "tests/server/metadata/test_broker_metadata_listener.py::test_a_snapshot_replaces_the_image"
                ),
            ),
        ),
        holds(
            "**A partition waiting for an AlterPartition answer counts no changed follower**",
            tested_by(
                "tests/server/test_alter_partition_manager.py::test_a_shrink_is_asked_of_the_controller_and_adopted_from_its_answer",
                "tests/server/test_alter_partition_manager.py::test_an_expansion_is_asked_for_too",
            ),
        ),
        holds(
            "**`KRaftMetadataCache` has the interface of kafka_lite's `MetadataCache`**",
            lambda: kraft_metadata_cache_has_the_caches_interface(),
        ),
        holds(
            "**A forwarded request is re-encoded inside its `Envelope`**",
            tested_by(
                "tests/kraft/test_forwarding.py::test_a_v0_create_topics_is_forwarded_in_an_envelope_and_the_controllers_answer_handed_back",
                "tests/server/test_controller_apis.py::test_a_forwarded_request_is_authorized_as_the_client_the_envelope_names",
                "tests/server/test_controller_apis.py::test_an_envelope_from_a_principal_without_cluster_action_is_refused_whole",
            ),
        ),
        holds(
            "**The broker starts its log manager, replica manager and coordinators itself**",
            # the publisher starts nothing; a KRaft broker still serves, so the broker started them
            tested_by(
                "tests/server/metadata/test_broker_metadata_publisher.py::test_the_first_publish_starts_nothing",
                "tests/kraft/test_combined_node.py::test_kafka_python_creates_produces_and_consumes_in_a_group",
            ),
        ),
        holds(
            "**SCRAM is refused on a KRaft node**",
            all_of(
                a_kraft_node_refuses_scram_and_the_zookeeper_authorizer,
                tested_by(
                    "tests/kraft/test_combined_node.py::test_kafka_python_describes_configs_from_the_image",
                    "tests/compat/test_admin_clients.py::test_confluent_kafka_describes_a_topic_that_does_not_exist_as_each_mode_answers",
                    "tests/cli/test_cluster_kraft_secure.py::test_alice_reads_and_deletes_nothing_until_an_acl_then_reads_every_record",
                ),
            ),
        ),
        holds(
            "**The next producer id block is asked for when the current one runs out**",
            all_of(
                the_next_producer_id_block_is_asked_for_when_the_block_runs_out,
                tested_by(
                    "tests/kraft/test_forwarding.py::test_producer_ids_come_in_blocks_from_the_controller"
                ),
            ),
        ),
    ],
    "ch13_jepsen/index.md": [
        holds(
            "**Keys are the partitions of one topic made up front.**",
            all_of(
                lambda: assert_equal(obj("kafka_lite.jepsen.workload:WorkloadConfig")().partitions, 48),
                tested_by(
                    "tests/jepsen/test_run.py::test_an_interrupted_run_closes_every_client_stops_the_cluster_and_leaves_its_history",
                    "tests/jepsen/test_workload.py::test_keys_rotate_after_their_writes_and_stay_within_the_topics_partitions",
                ),
            ),
        ),
        holds(
            "**The network is cut by a proxy, and a cut resets.**",
            all_of(
                lambda: exists("kafka_lite.jepsen.fault_proxy:FaultProxy"),
                tested_by(
                    "tests/jepsen/test_nemesis.py::test_a_partition_stops_traffic_across_the_cut_and_healing_restores_it"
                ),
            ),
        ),
        holds(
            "**The cycle search is bounded differently.**",
            all_of(
                lambda: assert_true(obj("kafka_lite.jepsen.checker:CANDIDATE_EDGES") > 0),
                tested_by(
                    "tests/jepsen/test_checker.py::test_a_g0_in_a_component_makes_the_classes_it_implies_redundant_there",
                    "tests/jepsen/test_checker.py::test_g0_closed_by_a_process",
                ),
            ),
        ),
        holds(
            "**The pictures are one HTML page.**",
            all_of(
                lambda: assert_equal(obj("kafka_lite.jepsen.pictures:PAGE_NAME"), "pictures.html"),
                tested_by(
                    "tests/jepsen/test_pictures.py::test_the_page_needs_no_network",
                    "tests/jepsen/test_pictures.py::test_a_long_history_is_drawn_as_a_window_around_its_anomaly",
                ),
            ),
        ),
        holds(
            "**Bugs planted in KRaft's own code.**",
            all_of(
                # the planted-bug test runs on the ZooKeeper-mode cluster alone
                lambda: assert_equal(
                    [
                        m.args[1][0].id
                        for m in obj(
                            "tests.jepsen.test_run_with_planted_bugs:test_the_checker_catches_a_planted_bug"
                        ).pytestmark
                        if m.name == "parametrize" and m.args[0] == "faulty_cluster"
                    ],
                    ["zookeeper"],
                ),
                tested_by(
                    "tests/raft/test_raft_simulation.py::test_single_leader_catches_a_candidate_counting_its_own_vote_twice"
                ),
            ),
        ),
        holds(
            "**The final phase reads with a consumer alone.**",
            tested_by(
                "tests/jepsen/test_workload.py::test_a_reader_polls_outside_transactions_even_under_txn"
            ),
        ),
    ],
    "data_pipeline/index.md": [
        holds(
            "The driver and the executors use kafka_lite's clients",
            lambda: nowhere_in_package(r"from kafka[ .]", r"import kafka[ .\n]"),
        ),
        holds(
            "No consumer group is used for reading",
            spark_refuses("groupIdPrefix", "kafka.group.id", "minOffsetsPerTrigger", "maxTriggerDelay"),
        ),
        prose(
            "Python data sources get no column pruning",
            "a property of Spark's Python data source API, not of kafka_lite",
        ),
        holds(
            "Spark's `minOffsetsPerTrigger`, `maxTriggerDelay`, `maxRecordsPerPartition`",
            all_of(
                spark_refuses(
                    "minOffsetsPerTrigger",
                    "maxTriggerDelay",
                    "maxRecordsPerPartition",
                    "groupIdPrefix",
                    "kafka.group.id",
                ),
                lambda: nowhere_in_package(r"avgOffsetsBehindLatest"),
            ),
        ),
        holds(
            "Filter push-down",
            lambda: nowhere_in_package(r"def pushFilters\b", r"def push_filters\b", r"filterPushdown"),
        ),
    ],
}


# -- small helpers the table uses -----------------------------------------------------------------


def assert_equal(actual: object, expected: object) -> None:
    assert actual == expected, f"{actual!r} != {expected!r}"


def assert_true(value: object) -> None:
    assert value, value


def assert_in(item: object, container) -> None:
    assert item in container, f"{item!r} not in {container!r}"


def assert_not_in(item: object, container) -> None:
    assert item not in container, f"{item!r} in {container!r}"


def suite_has_test(path: str, name: str) -> None:
    """The behaviour is held by that test of the suite, which must still exist by that name."""
    assert re.search(rf"^def {name}\(", (ROOT / path).read_text(encoding="utf-8"), re.M), (
        f"{path} has no {name}"
    )


def current_error_names() -> None:
    from kafka_lite.common.errors import Errors

    for name in ("NOT_COORDINATOR", "COORDINATOR_NOT_AVAILABLE", "COORDINATOR_LOAD_IN_PROGRESS"):
        assert hasattr(Errors, name), name
    for name in ("NOT_COORDINATOR_FOR_GROUP", "GROUP_COORDINATOR_NOT_AVAILABLE", "GROUP_LOAD_IN_PROGRESS"):
        assert not hasattr(Errors, name), name


def zstd_is_written_and_read_but_produce_stops_at_v3() -> None:
    from kafka_lite.common.record.compression import CompressionType

    assert {"GZIP", "SNAPPY", "LZ4", "ZSTD"} <= set(CompressionType.__members__)
    served("PRODUCE", range(0, 4))  # clients send zstd only with Produce v7 (Kafka 2.1)


def kraft_nullable_strings_start_as_none() -> None:
    from kafka_lite.common.metadata import ConfigRecord, RegisterBrokerRecord

    assert RegisterBrokerRecord().rack is None and ConfigRecord().value is None


def kraft_fifteen_record_types() -> None:
    from kafka_lite.common.metadata import MetadataRecordType

    assert len(MetadataRecordType) == 15, [t.name for t in MetadataRecordType]
    assert "ACCESS_CONTROL_ENTRY_RECORD" in MetadataRecordType.__members__
    for kept_not in (6, 10, 11, 14):
        with pytest.raises(ValueError, match="which kafka_lite does not keep"):
            MetadataRecordType.from_id(kept_not)


def assert_param(path: str, name: str) -> None:
    assert name in inspect.signature(obj(path)).parameters, f"{path} takes no {name!r}"


def kraft_controller_listener_apis() -> None:
    from kafka_lite.common.protocol.listener_type import ListenerType, apis_for_listener

    keys = set(apis_for_listener(ListenerType.CONTROLLER))
    assert {19, 20, 33, 37, 52, 58, 62, 63} <= keys, sorted(
        keys
    )  # CreateTopics ... Envelope ... BrokerHeartbeat
    assert not keys & {43, 44}, sorted(keys)  # ElectLeaders, IncrementalAlterConfigs
    tested_by(
        "tests/server/test_controller_apis.py::test_the_quorums_and_the_brokers_rpcs_need_the_cluster_principal",
        "tests/server/test_controller_apis.py::test_a_standbys_not_controller_is_the_envelopes_own_error_so_the_broker_looks_again",
    )()


def kraft_metadata_cache_has_the_caches_interface() -> None:
    from kafka_lite.server.metadata.kraft_metadata_cache import KRaftMetadataCache
    from kafka_lite.server.metadata_cache import MetadataCache

    # UpdateMetadata's update_cache aside: a KRaft cache gets its image with set_image.
    public = {n for n in vars(MetadataCache) if not n.startswith("_")} - {"update_cache"}
    assert "set_image" in vars(KRaftMetadataCache) and "update_cache" not in vars(KRaftMetadataCache)
    assert public <= set(dir(KRaftMetadataCache)), sorted(public - set(dir(KRaftMetadataCache)))


def exactly_once_is_0_11s() -> None:
    from kafka_lite.streams.streams_config import StreamsConfig

    assert StreamsConfig(STREAMS_BASE)["processing.guarantee"] == "at_least_once"
    eos = StreamsConfig({**STREAMS_BASE, "processing.guarantee": "exactly_once"})
    assert eos.get_producer_configs("c", "0_1")["transactional.id"] == "app-0_1"
    assert eos.get_consumer_configs("c")["isolation.level"] == "read_committed"
    assert eos.get_restore_consumer_configs("c")["isolation.level"] == "read_committed"
    assert eos["commit.interval.ms"] == 100


# -- the tests ------------------------------------------------------------------------------------


def test_every_item_has_one_entry_and_every_entry_one_item():
    items = guide_items()
    assert set(items) == set(CLAIMS), (
        f"pages with lists but no entries: {sorted(set(items) - set(CLAIMS))}; "
        f"entries for pages without lists: {sorted(set(CLAIMS) - set(items))}"
    )
    problems = []
    for page, page_items in items.items():
        keys = [claim.key for claim in CLAIMS[page]]
        for item in page_items:
            matched = [key for key in keys if key in item]
            if len(matched) != 1:
                problems.append(f"{page}: {len(matched)} entries {matched} for the item: {item[:120]}...")
        for key in keys:
            found = [item for item in page_items if key in item]
            if len(found) != 1:
                problems.append(f"{page}: the entry {key!r} matches {len(found)} items")
    assert not problems, "\n".join(problems)


def test_prose_items_say_why_they_have_nothing_to_check():
    for page, claims in CLAIMS.items():
        for claim in claims:
            if claim.check is None:
                assert len(claim.reason) > 20, f"{page}: {claim.key!r} is prose without a reason"


@pytest.mark.parametrize(
    "page,claim",
    [(page, claim) for page, claims in CLAIMS.items() for claim in claims if claim.check is not None],
    ids=lambda value: value if isinstance(value, str) else re.sub(r"\W+", "-", value.key).strip("-")[:60],
)
def test_the_item_holds(page, claim):
    item = next((item for item in list_items(CHAPTERS / page) if claim.key in item), None)
    assert item is not None, f"{page} has no item with {claim.key!r}"
    try:
        claim.check()
    except (AssertionError, pytest.fail.Exception) as e:
        pytest.fail(
            f"{page} says:\n\n    {item}\n\nbut the code does not hold it: {e}\n\n"
            "Make the item say what now holds (or fix the code), then its entry in CLAIMS."
        )
