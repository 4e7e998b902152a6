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
        holds("Python's shape for the API", the_producers_shapes_are_kafka_pythons),
        holds("The buffer pool keeps the accounting", the_buffer_pool_hands_out_reservations),
        holds(
            "Splitting a batch the broker refuses",
            all_of(
                lambda: exists(
                    "kafka_lite.producer.record_accumulator:RecordAccumulator.split_and_reenqueue"
                ),
                lambda: exists("kafka_lite.producer.future_record_metadata:FutureRecordMetadata.chain"),
                lambda: in_source("kafka_lite.producer.sender:Sender", "split_and_reenqueue"),
            ),
        ),
        holds("Interceptors are classes", interceptors_are_classes_not_names),
        holds(
            "InitProducerId does not block the sender",
            all_of(
                lambda: exists("kafka_lite.producer.sender:Sender._maybe_send_init_producer_id"),
                lambda: missing("kafka_lite.producer.sender:Sender.maybe_wait_for_producer_id"),
            ),
        ),
        holds(
            "A batch that fails for good resets the producer id",
            lambda: in_source("kafka_lite.producer.sender:Sender._fail_batch", "tm.reset_producer_id()"),
        ),
        holds(
            "**Metrics** are a few of Kafka's producer metrics as counters",
            all_of(
                lambda: in_source(
                    "kafka_lite.producer.kafka_producer:KafkaProducer.metrics", '"record-send-total"'
                ),
                lambda: not_in_source("kafka_lite.producer.kafka_producer:KafkaProducer.metrics", '-rate"'),
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
                # every committed offset goes to __consumer_offsets: the handler never writes ZooKeeper
                lambda: not_in_source(
                    "kafka_lite.server.kafka_apis:KafkaApis.handle_offset_commit_request", "zk"
                ),
            ),
        ),
    ],
    "ch04_new_consumer/index.md": [
        holds(
            "`fetch_hold_back_caught_up` (off by default) is ours",
            lambda: defined(CONSUMER, "fetch.hold.back.caught.up", False, CLIENT_BASE),
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
        holds("Without a `group_id` there is no coordinator", without_a_group_there_is_no_coordinator),
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
            all_of(
                lambda: exists(
                    "kafka_lite.consumer.internals.consumer_coordinator:"
                    "ConsumerCoordinator._request_update_while_subscribed_topics_unavailable"
                ),
                lambda: suite_has_test(
                    "tests/consumer/test_consumer_coordinator.py",
                    "test_a_subscribed_topic_missing_from_the_metadata_is_asked_for_again_after_retry_backoff",
                ),
            ),
        ),
        holds(
            "A deserializer that fails after other records were drained",
            lambda: suite_has_test(
                "tests/consumer/test_fetcher_logic.py",
                "test_records_drained_before_a_deserializer_fails_are_returned_and_the_failure_comes_next",
            ),
        ),
        holds(
            "`update_fetch_positions` skips a partition with a valid position",
            lambda: in_source(
                "kafka_lite.consumer.internals.fetcher:Fetcher._has_position", "has_valid_position(tp)"
            ),
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
                lambda: in_source(
                    "kafka_lite.consumer.internals.consumer_coordinator:ConsumerCoordinator._maybe_auto_commit_offsets_async",
                    "self._look_for_coordinator_to_auto_commit()",
                ),
            ),
        ),
        holds(
            "looks for an unknown coordinator no longer than `timeout_ms`",
            lambda: suite_has_test(
                "tests/consumer/test_kafka_consumer.py",
                "test_a_poll_that_cannot_find_the_coordinator_returns_nothing_after_its_timeout",
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
                lambda: in_source(
                    "kafka_lite.consumer.internals.consumer_coordinator:ConsumerCoordinator.poll",
                    "self._on_metadata_update_if_changed()",
                ),
                lambda: in_source(
                    "kafka_lite.consumer.internals.consumer_coordinator:ConsumerCoordinator._on_metadata_update_if_changed",
                    "self._metadata.version == self._seen_metadata_version",
                ),
            ),
        ),
        holds(
            "**Asynchronous offset resets** (Kafka 1.1)",
            all_of(
                lambda: missing("kafka_lite.consumer.internals.fetcher:Fetcher.reset_offsets_if_needed"),
                # the reset's ListOffsets is waited for, with no limit but the answer
                lambda: in_source(
                    "kafka_lite.consumer.internals.fetcher:Fetcher.reset_offset",
                    "self._get_offsets_by_times({tp: timestamp}, LONG_MAX)",
                ),
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
        holds("Errors carry the protocol's current names", lambda: current_error_names()),
        holds(
            "A JoinGroup to an Empty group with an empty protocol type",
            lambda: in_source(
                "kafka_lite.coordinator.group_coordinator:GroupCoordinator._do_join_group",
                "elif group.is_(GroupState.EMPTY) and (not protocol_type or not protocols):",
                "Errors.INCONSISTENT_GROUP_PROTOCOL",
            ),
        ),
        holds(
            "A member removed for not rejoining in time has its session expiry completed",
            lambda: in_source(
                "kafka_lite.coordinator.group_coordinator:GroupCoordinator.on_complete_join",
                "self._remove_heartbeat_for_leaving_member(failed_member)",
            ),
        ),
        holds(
            "The initial rebalance delay is Kafka 0.11's",
            lambda: defined(BROKER, "group.initial.rebalance.delay.ms", 3000, BROKER_BASE),
        ),
        holds(
            "A new coordinator loads its partition to the log's end",
            lambda: in_source("kafka_lite.coordinator.group_metadata_manager", "log_, log_.log_end_offset"),
        ),
        holds("OffsetFetch without partitions answers all", lambda: served("OFFSET_FETCH", range(0, 4))),
        holds(
            "The range assignor takes topics in sorted order",
            lambda: in_source("kafka_lite.consumer.range_assignor", "sorted(consumers_per_topic"),
        ),
        holds(
            'The "Preparing to rebalance" log line',
            lambda: in_source(
                "kafka_lite.coordinator.group_coordinator", "Preparing to rebalance group %s in state %s"
            ),
        ),
        holds(
            "**The coordinator's metrics.**",
            all_of(
                lambda: nowhere_in_package(r"NumGroups\b", r"NumOffsets\b"),
                lambda: exists(
                    "kafka_lite.coordinator.group_metadata_manager:GroupMetadataManager.current_groups"
                ),
            ),
        ),
    ],
    "ch06_storage/delayed_operations.md": [
        holds(
            "The timer reads a `Time` passed in",
            all_of(
                lambda: assert_in(
                    "time",
                    inspect.signature(obj("kafka_lite.utils.timer.system_timer:SystemTimer")).parameters,
                ),
                lambda: assert_true(
                    issubclass(
                        obj("kafka_lite.testing.mock_timer:MockTimer"),
                        obj("kafka_lite.utils.timer.system_timer:SystemTimer"),
                    )
                ),
            ),
        ),
        holds(
            "The delay queue is kafka_lite's own",
            lambda: exists("kafka_lite.utils.timer.delay_queue:DelayQueue.close"),
        ),
        holds(
            "`TimingWheel.add`'s last branch",
            lambda: exists("kafka_lite.utils.timer.timing_wheel:TimingWheel._add_to_overflow_wheel"),
        ),
        holds(
            "The purgatory has no metrics gauges",
            all_of(
                lambda: exists("kafka_lite.utils.delayed_operation:DelayedOperationPurgatory.watched"),
                lambda: exists("kafka_lite.utils.delayed_operation:DelayedOperationPurgatory.delayed"),
                lambda: nowhere_in_package(r"gauge\(.*PurgatorySize"),
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
        holds("A Fetch v0-3 gets each batch it cannot read down-converted", lambda: formats_per_topic()),
        holds("Appends check each batch's header and CRC", timestamps_are_decoded_only_when_bounded),
        holds(
            "Deleted segments are removed at once",
            all_of(
                lambda: not_in_source("kafka_lite.log.log:Log._delete_segment", "delay", "schedule"),
                lambda: assert_true(used_only_in("file_delete_delay_ms", "kafka_lite/log/log_config.py")),
            ),
        ),
        holds(
            "Compaction's offset map is a dict",
            all_of(
                lambda: nowhere_in_package(r"class SkimpyOffsetMap"),
                lambda: refused(BROKER, "log.cleaner.dedupe.buffer.size", "1", BROKER_BASE),
            ),
        ),
        holds(
            "one scheduler thread rather than thread pools",
            all_of(
                lambda: refused(BROKER, "log.cleaner.threads", "1", BROKER_BASE),
                lambda: not_in_source("kafka_lite.log.log_cleaner", "threading.Thread("),
            ),
        ),
        holds("zstd needs Produce v7", lambda: zstd_is_written_and_read_but_produce_stops_at_v3()),
        holds(
            "**The replica manager's metrics gauges (6.2)**",
            all_of(
                lambda: nowhere_in_package(r"UnderReplicatedPartitions\b", r"IsrShrinksPerSec\b"),
                lambda: in_source("kafka_lite.server.partition", 'metrics["isr-shrinks"]'),
            ),
        ),
        holds(
            "**Replication's latency at Kafka's rates.**",
            all_of(
                lambda: defined(BROKER, "num.replica.fetchers", 1, BROKER_BASE),
                # Fetch sessions (KIP-227) are Fetch v7: the broker's fetch is 0.11's
                lambda: served("FETCH", range(0, 6)),
            ),
        ),
    ],
    "ch06_storage/message_formats.md": [
        holds(
            "**Fetch down-conversion looks at every batch.**", lambda: down_conversion_looks_at_every_batch()
        ),
        holds(
            "**Views, not copies.**",
            all_of(
                lambda: assert_in(
                    "pos",
                    inspect.signature(
                        obj("kafka_lite.common.record.default_record_batch:DefaultRecordBatch")
                    ).parameters,
                ),
                lambda: assert_in(
                    "pos",
                    inspect.signature(
                        obj("kafka_lite.common.record.legacy_record:LegacyRecordBatch")
                    ).parameters,
                ),
            ),
        ),
        holds("**One varint function for both widths.**", lambda: one_varint_writer()),
        holds("**Compression in one call.**", lambda: zstd_is_written_and_read_but_produce_stops_at_v3()),
        holds(
            "**CRC-32C from google-crc32c's C extension**",
            lambda: in_source("kafka_lite.common.record.crc", "google_crc32c"),
        ),
        holds(
            "**The clients' record codec is compiled by default.**",
            lambda: in_source(
                "kafka_lite.common.record.codec", "use_codec(os.environ.get(ENV_VAR, COMPILED))"
            ),
        ),
        holds("**Appends do not decode records**", timestamps_are_decoded_only_when_bounded),
        holds(
            "**Errors say where.**",
            lambda: a_crc_mismatch_points_at_the_crc_field(),
        ),
        holds(
            "**`inspect.py` has no Kafka twin.**",
            lambda: in_source("kafka_lite.common.record.inspect", "No Kafka twin"),
        ),
    ],
    "ch06_storage/reads_and_writes.md": [
        holds(
            "A follower counts as caught up when it reaches the leader's LEO",
            lambda: in_source(
                "kafka_lite.server.replica", "elif fetch_offset >= self._last_fetch_leader_log_end_offset:"
            ),
        ),
        holds(
            "A new leader starts its followers' lag clocks afresh",
            lambda: in_source(
                "kafka_lite.server.partition:Partition.make_leader", "replica.reset_last_caught_up_time("
            ),
        ),
        holds(
            "The ISR check runs every half of `replica.lag.time.max.ms`",
            lambda: in_source(
                "kafka_lite.server.replica_manager", "delay_ms=lag_ms // 2, period_ms=lag_ms // 2"
            ),
        ),
        holds(
            'A new leader writes the entry "my epoch starts at my LEO"',
            lambda: in_source(
                "kafka_lite.server.partition:Partition.make_leader",
                "leader_epoch_cache.assign(self.leader_epoch, leader_replica.log_end_offset)",
            ),
        ),
        holds(
            "A `Replica`'s LEO and HW are plain ints",
            all_of(
                lambda: exists("kafka_lite.server.replica:Replica.log_end_offset_metadata"),
                lambda: exists("kafka_lite.server.replica:Replica.high_watermark_metadata"),
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
            lambda: suite_has_test(
                "tests/server/test_replica_fetcher_thread.py",
                "test_without_unclean_election_a_follower_ahead_of_its_leader_keeps_its_log_and_stops_fetching",
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
            lambda: suite_has_test(
                "tests/server/test_kafka_apis.py",
                "test_produce_to_a_broker_that_does_not_lead_gets_not_leader",
            ),
        ),
        holds(
            "The idempotent producers' state is kept in `Partition`",
            lambda: in_source("kafka_lite.server.partition:Partition", "ProducerStateManager"),
        ),
    ],
    "ch07_controller/index.md": [
        holds(
            "**One event thread, as in Kafka 0.11**",
            all_of(
                lambda: in_source("kafka_lite.controller.kafka_controller", "controller-event-thread"),
                lambda: exists("kafka_lite.controller.kafka_controller:KafkaController.take_event"),
                lambda: not_in_source("kafka_lite.testing.controller_harness", "._events", "._running"),
            ),
        ),
        holds(
            "**Bounced brokers, as in Kafka 2.2**",
            all_of(
                lambda: exists("kafka_lite.controller.kafka_controller:KafkaController.bounced_brokers"),
                lambda: suite_has_test(
                    "tests/controller/test_as_kafka_0_10_1.py",
                    "test_without_bounced_brokers_a_bounce_goes_unseen_as_in_0_10_1",
                ),
            ),
        ),
        holds(
            "**The topics read again, as in Kafka 1.1**",
            lambda: in_source(
                "kafka_lite.controller.kafka_controller:KafkaController.handle_topic_change",
                "read_all_topics",
            ),
        ),
        holds(
            "**A never-led replica goes Offline, as in Kafka 2.0**",
            lambda: assert_true(
                obj(
                    "kafka_lite.controller.replica_state_machine:ReplicaStateMachine.offline_without_leader_and_isr"
                )()
            ),
        ),
        holds(
            "**Listeners after the context**",
            lambda: in_source(
                "kafka_lite.controller.kafka_controller:KafkaController.on_controller_failover",
                "self._initialize_controller_context()",
                "BROKER_IDS_PATH",
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
            ),
        ),
        holds(
            "**uReplicator is a sketch of the idea",
            lambda: not_in_source("kafka_lite.tools.ureplicator", "import kazoo", "from kazoo", "helix"),
        ),
        holds(
            "**Connect's REST API is 0.11's**",
            lambda: in_source("kafka_lite.connect.runtime.rest.rest_server", "from fastapi import FastAPI"),
        ),
        holds(
            "**Class names map to kafka_lite's**",
            all_of(
                lambda: assert_true(
                    obj("kafka_lite.connect.runtime.connector_factory:new_converter")(
                        "org.apache.kafka.connect.json.JsonConverter"
                    )
                ),
                lambda: assert_true(
                    obj("kafka_lite.connect.runtime.connector_factory:transformation_class")(
                        "org.apache.kafka.connect.transforms.InsertField$Value"
                    )
                ),
                lambda: not_in_source("kafka_lite.connect.runtime.connector_factory", "importlib"),
            ),
        ),
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
                lambda: exists("kafka_lite.streams.test_utils.topology_test_driver:TopologyTestDriver"),
                lambda: exists(
                    "kafka_lite.streams.processor.internals.stream_thread:StreamThread.process_and_punctuate"
                ),
                lambda: exists(
                    "kafka_lite.streams.processor.internals.stream_thread:StreamThread._commit_after_state_is_written"
                ),
            ),
        ),
        holds(
            "**Punctuation by stream time only**",
            lambda: nowhere_in_package(r"PunctuationType\b", r"WALL_CLOCK_TIME"),
        ),
        holds(
            "**A record that cannot be deserialized**",
            all_of(
                lambda: exists(
                    "kafka_lite.streams.deserialization_exception_handler:LogAndFailExceptionHandler"
                ),
                lambda: exists(
                    "kafka_lite.streams.deserialization_exception_handler:LogAndContinueExceptionHandler"
                ),
            ),
        ),
        holds(
            "**Internal topics are created with CreateTopics**",
            all_of(
                lambda: refused(STREAMS, "zookeeper.connect", "127.0.0.1:2181", STREAMS_BASE),
                lambda: in_source("kafka_lite.streams.streams_config", "allow.auto.create.topics"),
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
                lambda: in_source(
                    "kafka_lite.streams.state.internals.caching_key_value_store:CachingKeyValueStore._apply",
                    "self._forward_and_put(entry)",
                ),
                lambda: in_source(
                    "kafka_lite.streams.kstream.internals.forwarding_cache_flush_listener", "self.my_node"
                ),
                lambda: suite_has_test(
                    "tests/streams/kstream/test_record_cache.py",
                    "test_a_commit_interval_of_word_count_writes_one_record_per_word",
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
                lambda: exists(
                    "kafka_lite.streams.state.internals.in_memory_session_store:InMemorySessionStore"
                ),
                lambda: in_source(
                    "kafka_lite.streams.state.internals.in_memory_session_store",
                    "with no changelog and no retention",
                ),
            ),
        ),
    ],
    "ch10_advanced/index.md": [
        holds(
            "**Quotas are per client id only.**",
            all_of(
                quotas_are_keyed_by_client_id_only,
                client_quotas_must_be_above_zero,
                lambda: in_source(
                    "kafka_lite.server.kafka_apis:KafkaApis", "self.quotas.request.record_no_throttle"
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
                lambda: exists("kafka_lite.errors:ProducerFencedError"),
                lambda: assert_equal(obj("kafka_lite.log.producer_state_manager:BATCHES_TO_RETAIN"), 5),
                lambda: in_source(
                    "kafka_lite.producer.kafka_producer:KafkaProducer._await", "self.max_block_time_ms"
                ),
            ),
        ),
        holds(
            "**WriteTxnMarkers answers once the group has taken the offsets.**",
            lambda: in_source(
                "kafka_lite.server.kafka_apis:KafkaApis.handle_write_txn_markers_request",
                "self.coordinator.handle_txn_completion(producer_id, offsets_partitions, is_commit, finish)",
            ),
        ),
        holds(
            "**Streams under exactly_once empties a task's directory**",
            lambda: suite_has_test(
                "tests/streams/test_exactly_once.py",
                "test_under_exactly_once_a_task_directory_without_a_checkpoint_is_wiped",
            ),
        ),
        holds(
            "**Compaction and transactions**",
            lambda: not_in_source("kafka_lite.log.log_cleaner", "abort"),
        ),
        holds(
            "**Producer expiry on the partition**",
            all_of(
                lambda: nowhere_in_package(r"def \w*expire_producer"),
                lambda: in_source("kafka_lite.log.producer_state_manager", "producers do not expire"),
                lambda: refused(BROKER, "producer.id.expiration.ms", "1", BROKER_BASE),
                # what the log start forgets, as Kafka's ``truncateHead`` does
                lambda: suite_has_test(
                    "tests/log/test_producer_state_log_start.py",
                    "test_delete_records_past_a_producers_writes_forgets_it_and_refuses_its_next_sequence",
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
            lambda: assert_equal(obj("kafka_lite.network.socket_server:FAILED_AUTHENTICATION_DELAY_MS"), 100),
        ),
        holds(
            "**A denial is logged at INFO**",
            lambda: in_source(
                "kafka_lite.security.auth.simple_acl_authorizer",
                'getLogger("kafka.authorizer.logger")',
                "logging.DEBUG if authorized else logging.INFO",
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
            lambda: in_source(
                "kafka_lite.raft.quorum_state:QuorumState",
                "VOTER_TRANSITIONS if self.is_voter() else OBSERVER_TRANSITIONS",
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
                lambda: exists("kafka_lite.raft.kafka_metadata_log:KafkaMetadataLog.update_high_watermark"),
                lambda: missing("kafka_lite.log.log:Log.high_watermark"),
            ),
        ),
        holds(
            "**Every snapshot is kept**",
            all_of(
                lambda: exists("kafka_lite.raft.kafka_metadata_log:KafkaMetadataLog.delete_before_snapshot"),
                lambda: missing("kafka_lite.raft.kafka_metadata_log:KafkaMetadataLog.maybe_clean"),
                lambda: missing("kafka_lite.raft.replicated_log:ReplicatedLog.maybe_clean"),
            ),
        ),
        holds(
            "**A snapshot is deleted at once**",
            lambda: in_source(
                "kafka_lite.raft.kafka_metadata_log:KafkaMetadataLog._remove_snapshots",
                "snapshots.mark_for_delete(",
                "snapshots.delete_if_exists(",
            ),
        ),
        holds("**The timeouts refuse negative values**", raft_timeouts_refuse_negative_values),
        holds(
            "**The held Fetch is answered on the Raft thread, and also when the high watermark moves.**",
            all_of(
                lambda: in_source(
                    "kafka_lite.raft.kafka_raft_client:KafkaRaftClient._on_update_leader_high_watermark",
                    "self._complete_fetches_on_high_watermark(",
                ),
                lambda: in_source(
                    "kafka_lite.raft.kafka_raft_client:KafkaRaftClient._complete_fetches_on_high_watermark",
                    "self._fetch_purgatory.complete_all(",
                ),
                lambda: in_source(
                    "kafka_lite.raft.kafka_raft_client:KafkaRaftClient.handle_fetch_request",
                    "or self._log.high_watermark().offset != high_watermark",
                ),
            ),
        ),
        holds(
            "**The leader flushes before it counts its own entry.**",
            lambda: in_order(
                "kafka_lite.raft.kafka_raft_client:KafkaRaftClient._flush_leader_log",
                "self._log.flush(",
                "self._update_leader_end_offset(",
            ),
        ),
        holds(
            "**The quorum's listener is a small server of its own**",
            all_of(
                lambda: exists("kafka_lite.raft.raft_socket_server:RaftProcessor"),
                lambda: not_in_source("kafka_lite.raft.raft_socket_server", "SocketServer("),
            ),
        ),
        holds(
            "**No append purgatory, no snapshot generation in `test-server`, no metrics.**",
            all_of(
                lambda: not_in_source(
                    "kafka_lite.raft.kafka_raft_client:KafkaRaftClient", "append_purgatory"
                ),
                lambda: not_in_source("kafka_lite.raft.tools.test_raft_server", "create_snapshot("),
                lambda: not_in_source("kafka_lite.raft.kafka_raft_client", "KafkaRaftMetrics"),
            ),
        ),
        holds(
            "**`create_snapshot` takes the snapshot's id**",
            lambda: in_source(
                "kafka_lite.raft.kafka_raft_client:KafkaRaftClient.create_snapshot",
                "snapshot_id: OffsetAndEpoch",
            ),
        ),
        holds(
            "**The simulation's log and clock are kafka_lite's own in two places.**",
            all_of(
                lambda: in_source(
                    "kafka_lite.raft.simulation.mock_log:MockLog.truncate_to_latest_snapshot",
                    "self._log_end_offset_before(",
                ),
                lambda: in_source(
                    "kafka_lite.raft.simulation.cluster:RaftNode.poll", "expiration_service.tick()"
                ),
            ),
        ),
        holds(
            "**The simulation cleans logs at once.**",
            lambda: exists("kafka_lite.raft.simulation.cluster:Cluster.clean_log_if_running"),
        ),
        holds(
            "**A secure KRaft cluster, a named one, and its request metrics.**",
            all_of(
                lambda: in_source(
                    "kafka_lite.cli.cluster_kraft",
                    "--kraft does not go with --secure",
                    "--kraft does not go with --name",
                ),
                lambda: not_in_source(
                    "kafka_lite.server.broker_server", "metric_reporters", "metric.reporters"
                ),
            ),
        ),
    ],
    "ch12_kraft/quorum_controller.md": [
        holds(
            "**A record is a table and a small class, not a generated class.**",
            all_of(
                lambda: exists("kafka_lite.common.metadata.api_message:ApiMessage"),
                lambda: in_source("kafka_lite.common.metadata.records", "REGISTER_BROKER_RECORD_V0 = FS("),
                lambda: kraft_nullable_strings_start_as_none(),
            ),
        ),
        holds("**Thirteen record types, not twenty-one.**", lambda: kraft_thirteen_record_types()),
        holds(
            "**Fencing writes `FenceBrokerRecord` and `UnfenceBrokerRecord`**",
            all_of(
                lambda: in_source(
                    "kafka_lite.metadata.controller.replication_control_manager",
                    "FenceBrokerRecord(",
                    "UnfenceBrokerRecord(",
                ),
                lambda: not_in_source(
                    "kafka_lite.metadata.controller.replication_control_manager",
                    "BrokerRegistrationChangeRecord(",
                ),
                lambda: in_source(
                    "kafka_lite.metadata.controller.cluster_control_manager", "BrokerRegistrationChangeRecord"
                ),
            ),
        ),
        holds(
            "**The controller's snapshot is written from a `MetadataImage`**",
            lambda: in_source(
                "kafka_lite.metadata.controller.snapshot_generator", "MetadataImage", "MetadataDelta"
            ),
        ),
        holds(
            "**The timeline map is a dict and per-snapshot old values**",
            all_of(
                lambda: nowhere_in_package(r"class SnapshottableHashTable"),
                lambda: exists("kafka_lite.metadata.timeline.timeline_hash_map:TimelineHashMap"),
            ),
        ),
        holds(
            "**Activation schedules the fencing check**",
            lambda: in_source(
                "kafka_lite.metadata.controller.quorum_controller:_CompleteActivation",
                "_reschedule_maybe_fence_stale_brokers()",
            ),
        ),
        holds(
            "**`maybe_fence_stale_brokers` fences every expired broker in one result**",
            lambda: in_source(
                "kafka_lite.metadata.controller.replication_control_manager:ReplicationControlManager.maybe_fence_stale_brokers",
                "find_stale_brokers(",
            ),
        ),
        prose(
            "**A topic's ConfigRecords are written only if the topic is created.**",
            "behaviour, held by tests/metadata/controller/test_replication_control_manager.py's "
            "test_a_refused_topic_writes_none_of_its_configs",
        ),
        holds(
            "**`unclean.leader.election.enable=true` on a topic allows an unclean election**",
            lambda: in_source(
                "kafka_lite.metadata.controller.replication_control_manager:ReplicationControlManager._unclean_leader_election_enabled_for_topic",
                "UNCLEAN_LEADER_ELECTION_ENABLE",
            ),
        ),
        holds(
            "**Topic configs are checked against kafka_lite's `LogConfig` definitions**",
            lambda: in_source("kafka_lite.metadata.controller.configuration_control_manager", "LogConfig"),
        ),
        holds(
            "**Left out:** leader rebalancing",
            lambda: nowhere_in_package(
                r"class (AclControlManager|ClientQuotaControlManager|ScramControlManager)",
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
                lambda: in_source("kafka_lite.server.broker_lifecycle_manager", ".prepend("),
            ),
        ),
        holds(
            "**No ApiVersions with the controller.**",
            lambda: not_in_source("kafka_lite.server.broker_to_controller_channel_manager", "API_VERSIONS"),
        ),
        holds(
            "**`kafka-lite storage format` lives in `server/`**",
            all_of(
                lambda: exists("kafka_lite.server.storage_tool"),
                lambda: missing("kafka_lite.tools.storage_tool"),
            ),
        ),
        holds(
            "**`dump-log` prints a LEADER_CHANGE record's message**",
            lambda: in_source("kafka_lite.tools.dump_log_segments", "LeaderChange {"),
        ),
        holds(
            "**`metadata-quorum` asks the voters themselves**",
            lambda: in_source("kafka_lite.cli.metadata_quorum", "--bootstrap-controller"),
        ),
        holds(
            "**The controller's listener serves only kafka_lite's APIs**",
            lambda: kraft_controller_listener_apis(),
        ),
        holds(
            "**The broker writes no metadata snapshots of its own**",
            lambda: not_in_source("kafka_lite.server.metadata.broker_metadata_listener", "create_snapshot("),
        ),
        prose(
            "**A partition waiting for an AlterPartition answer counts no changed follower**",
            "behaviour, held by tests/server/test_alter_partition_manager.py (the partition keeps its ISR "
            "until the controller answers)",
        ),
        holds(
            "**`KRaftMetadataCache` has the interface of kafka_lite's `MetadataCache`**",
            lambda: kraft_metadata_cache_has_the_caches_interface(),
        ),
        holds(
            "**A forwarded request is sent as it came, not in an `Envelope`**",
            all_of(
                lambda: not_in_source("kafka_lite.common.protocol.api_keys", "ENVELOPE"),
                lambda: in_source("kafka_lite.server.kafka_apis", "def forward_to_controller("),
            ),
        ),
        holds(
            "**The broker starts its log manager, replica manager and coordinators itself**",
            lambda: in_source(
                "kafka_lite.server.broker_server:BrokerServer.startup",
                "log_manager.startup()",
                "replica_manager.startup()",
            ),
        ),
        holds(
            "**A KRaft broker listens on PLAINTEXT only.**",
            all_of(
                lambda: not_in_source("kafka_lite.server.broker_server", "SASL_PLAINTEXT"),
                lambda: in_source("kafka_lite.server.broker_server", "config_repository=self.metadata_cache"),
            ),
        ),
        prose(
            "**The next producer id block is asked for when the current one runs out**",
            "behaviour of RPCProducerIdManager.generate_producer_id, which asks only when its block is "
            "used up; nothing to hold it to but the method itself",
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


def used_only_in(name: str, allowed: str) -> bool:
    return all(
        name not in text for module, text in package_texts() if module.relative_to(ROOT).as_posix() != allowed
    )


def current_error_names() -> None:
    from kafka_lite.common.errors import Errors

    for name in ("NOT_COORDINATOR", "COORDINATOR_NOT_AVAILABLE", "COORDINATOR_LOAD_IN_PROGRESS"):
        assert hasattr(Errors, name), name
    for name in ("NOT_COORDINATOR_FOR_GROUP", "GROUP_COORDINATOR_NOT_AVAILABLE", "GROUP_LOAD_IN_PROGRESS"):
        assert not hasattr(Errors, name), name


def formats_per_topic() -> None:
    defined(BROKER, "log.message.format.version", None, BROKER_BASE)  # unset: the protocol version's
    defined(TOPIC, "message.format.version", "0.11.0-IV2")
    down_conversion_looks_at_every_batch()


def down_conversion_looks_at_every_batch() -> None:
    """A Fetch v2 of a v1 message set then a v2 batch (a topic whose format went up) gets both as v1."""
    from kafka_lite.common.record import MemoryRecords
    from kafka_lite.common.record.convert import down_convert

    mixed = bytes(MemoryRecords.with_records([(1, b"k", b"v")], magic=2, base_offset=1).buffer())
    mixed = bytes(MemoryRecords.with_records([(0, b"k", b"v")], magic=1).buffer()) + mixed
    assert [b.magic for b in down_convert(MemoryRecords(mixed), 1).batches()] == [1, 1]
    in_source("kafka_lite.server.kafka_apis:KafkaApis._fetched_bytes", "down_convert(")


def zstd_is_written_and_read_but_produce_stops_at_v3() -> None:
    from kafka_lite.common.record.compression import CompressionType

    assert {"GZIP", "SNAPPY", "LZ4", "ZSTD"} <= set(CompressionType.__members__)
    served("PRODUCE", range(0, 4))  # clients send zstd only with Produce v7 (Kafka 2.1)


def one_varint_writer() -> None:
    exists("kafka_lite.common.record.varint:write_varint")
    assert "max_bytes" in inspect.signature(obj("kafka_lite.common.record.varint:read_varint")).parameters
    nowhere_in_package(r"def write_varlong")
    in_source("kafka_lite.common.record.varint:read_varlong", "read_varint(")  # the same reader, 10 bytes


def kraft_nullable_strings_start_as_none() -> None:
    from kafka_lite.common.metadata import ConfigRecord, RegisterBrokerRecord

    assert RegisterBrokerRecord().rack is None and ConfigRecord().value is None


def kraft_thirteen_record_types() -> None:
    from kafka_lite.common.metadata import MetadataRecordType

    assert len(MetadataRecordType) == 13, [t.name for t in MetadataRecordType]
    assert "ACCESS_CONTROL_ENTRY_RECORD" not in MetadataRecordType.__members__


def assert_param(path: str, name: str) -> None:
    assert name in inspect.signature(obj(path)).parameters, f"{path} takes no {name!r}"


def kraft_controller_listener_apis() -> None:
    from kafka_lite.common.protocol.listener_type import ListenerType, apis_for_listener

    keys = set(apis_for_listener(ListenerType.CONTROLLER))
    assert {19, 20, 33, 37, 52, 62, 63} <= keys, sorted(keys)  # CreateTopics ... BrokerHeartbeat
    assert not keys & {17, 36, 43, 44, 58}, sorted(
        keys
    )  # SASL, ElectLeaders, IncrementalAlterConfigs, Envelope
    not_in_source("kafka_lite.server.controller_apis", "self.authorizer", "authorize(")


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
