"""The data source's options: Spark's Kafka source and sink options, checked before any job starts.

No Kafka twin: modelled on Spark's Kafka connector (Spark 4.x), after its classes
         org.apache.spark.sql.kafka010.KafkaSourceProvider (validateGeneralOptions,
         validateBatchOptions, validateStreamOptions, kafkaParamsForProducer) and JsonUtils
         (connector/kafka-0-10-sql/src/main/scala/org/apache/spark/sql/kafka010/, Spark 4.x)
Book:    chapter 4, 4.1 (what a consumer is told: topics or partitions, where to start); chapter 8
         and 9 (where the data pipeline meets Spark)
Differs: ``kafka_lite.log.dirs`` (read a stopped cluster's segment files) and ``kafka_lite.rows``
         (``arrow`` or ``tuples``) are kafka_lite's own. An option Spark's source accepts and
         kafka_lite does not implement is rejected with its name (Spark would honour it, so silently
         ignoring it would change the job's meaning); so is an option neither knows, where Spark
         ignores it (a misspelt option is then found at once). ``kafka.group.id`` and
         ``groupIdPrefix`` are rejected: kafka_lite's executors read without a consumer group.

``OPTIONS`` is the table of every option Spark's Kafka source and sink take, each marked
implemented or not with a one-line note; the chapter page is generated from it. ``parse_source_options``
and ``parse_sink_options`` turn the (case-insensitive, all-string) options Spark hands a Python data
source into a frozen, picklable ``SourceOptions`` / ``SinkOptions``, or raise ``IllegalArgumentException``
naming the option that is wrong, as KafkaSourceProvider does when the DataFrame is defined.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from kafka_lite.common.errors import IllegalArgumentException
from kafka_lite.common.topic_partition import TopicPartition

# Spark's KafkaOffsetRangeLimit: -2 and -1 in offset JSON mean the earliest and the latest offset.
EARLIEST = -2
LATEST = -1

BOOTSTRAP_SERVERS = "kafka.bootstrap.servers"
LOG_DIRS = "kafka_lite.log.dirs"
ROWS = "kafka_lite.rows"
ROWS_ARROW = "arrow"
ROWS_TUPLES = "tuples"
STRATEGY_OPTIONS = ("assign", "subscribe", "subscribePattern")


@dataclass(frozen=True)
class OptionInfo:
    """One row of the option table: where it applies, whether kafka_lite implements it, and a note."""

    name: str
    applies_to: str  # "source", "sink", "both" (read and write), or "streaming" / "batch" (read)
    implemented: bool
    note: str


# Every option of Spark's Kafka source and sink (docs/streaming/structured-streaming-kafka-integration.md
# and KafkaSourceProvider), then kafka_lite's own. Names keep Spark's spelling; lookups ignore case.
OPTIONS: tuple[OptionInfo, ...] = (
    OptionInfo("assign", "source", True, 'JSON {"topicA":[0,1],"topicB":[2,4]}: exactly these partitions'),
    OptionInfo("subscribe", "source", True, "comma-separated topics"),
    OptionInfo(
        "subscribePattern", "source", True, "a regular expression over topic names (Python's re, whole name)"
    ),
    OptionInfo(
        "kafka.bootstrap.servers",
        "both",
        True,
        "host:port list; the network back-end (Metadata, ListOffsets, Fetch, Produce)",
    ),
    OptionInfo(
        "startingTimestamp",
        "source",
        True,
        "ms since the epoch: every partition starts at the first offset with a timestamp at or after it (ListOffsets by time)",
    ),
    OptionInfo(
        "startingOffsetsByTimestamp", "source", True, 'JSON {"topicA":{"0":1000}}: a start time per partition'
    ),
    OptionInfo(
        "startingOffsets",
        "source",
        True,
        'earliest, latest (streams) or JSON {"topicA":{"0":23,"1":-2}} (-2 earliest, -1 latest); defaults: earliest for batch, latest for streams',
    ),
    OptionInfo(
        "endingTimestamp",
        "batch",
        True,
        "ms since the epoch: batch queries end at the first offset at or after it (latest where none)",
    ),
    OptionInfo(
        "endingOffsetsByTimestamp", "batch", True, 'JSON {"topicA":{"0":2000}}: an end time per partition'
    ),
    OptionInfo(
        "endingOffsets",
        "batch",
        True,
        'latest or JSON {"topicA":{"0":23,"1":-1}} (-1 latest); batch queries only',
    ),
    OptionInfo(
        "startingOffsetsByTimestampStrategy",
        "source",
        True,
        "error (default) or latest: what a start time with no record at or after it means",
    ),
    OptionInfo(
        "failOnDataLoss",
        "source",
        True,
        "true (default): fail when offsets to read are gone (retention, a deleted partition); false: skip them with a warning",
    ),
    OptionInfo(
        "maxOffsetsPerTrigger",
        "streaming",
        True,
        "at most this many offsets per micro-batch, shared by the partitions in proportion to their backlog",
    ),
    OptionInfo(
        "minOffsetsPerTrigger",
        "streaming",
        False,
        "not implemented: a micro-batch runs as soon as any record is there",
    ),
    OptionInfo("maxTriggerDelay", "streaming", False, "not implemented (it goes with minOffsetsPerTrigger)"),
    OptionInfo(
        "minPartitions",
        "source",
        True,
        "split large offset ranges so there are at least this many Spark partitions (KafkaOffsetRangeCalculator)",
    ),
    OptionInfo("maxRecordsPerPartition", "source", False, "not implemented: use minPartitions"),
    OptionInfo(
        "includeHeaders", "both", True, "true: the headers column, array<struct<key:string,value:binary>>"
    ),
    OptionInfo(
        "groupIdPrefix",
        "source",
        False,
        "not implemented: the executors read with Fetch requests and no consumer group",
    ),
    OptionInfo(
        "kafka.group.id",
        "source",
        False,
        "not implemented: the executors read with Fetch requests and no consumer group",
    ),
    OptionInfo(
        "kafkaConsumer.pollTimeoutMs",
        "source",
        True,
        "how long an executor waits for one Fetch response (default 120000)",
    ),
    OptionInfo(
        "fetchOffset.numRetries",
        "source",
        False,
        "not implemented: the driver's admin client retries retriable errors until kafka.request.timeout.ms",
    ),
    OptionInfo("fetchOffset.retryIntervalMs", "source", False, "not implemented: see fetchOffset.numRetries"),
    OptionInfo("topic", "sink", True, "the topic every row is written to; overrides a topic column"),
    OptionInfo(
        "kafka.*",
        "both",
        True,
        "a reader passes on bootstrap.servers, client.id, request.timeout.ms, max.partition.fetch.bytes, "
        "retry.backoff.ms and check.crcs (true unless set false: each batch's CRC is checked before its "
        "records are read); a writer passes producer settings to KafkaProducer",
    ),
    OptionInfo(
        LOG_DIRS,
        "source",
        True,
        "kafka_lite only: read a stopped cluster's log directories (comma-separated) instead of kafka.bootstrap.servers",
    ),
    OptionInfo(
        ROWS,
        "both",
        True,
        "kafka_lite only: arrow (default) yields Arrow record batches, tuples yields one tuple per record",
    ),
)
OPTIONS_BY_KEY = {o.name.lower(): o for o in OPTIONS}

# kafka.* settings that mean something to the reader's clients (the driver's KafkaAdminClient and
# the executors' fetches), and the ones Spark forbids, with Spark's reason.
CONSUMER_SETTINGS = (
    "bootstrap.servers",
    "client.id",
    "request.timeout.ms",
    "max.partition.fetch.bytes",
    "retry.backoff.ms",
    "check.crcs",
)
FORBIDDEN_CONSUMER_SETTINGS = {
    "auto.offset.reset": (
        "Kafka option 'auto.offset.reset' is not supported. Instead set the source option 'startingOffsets' "
        "to 'earliest' or 'latest' to specify where to start. Structured Streaming manages which offsets "
        "are consumed internally, rather than relying on the kafkaConsumer to do it"
    ),
    "key.deserializer": (
        "Kafka option 'key.deserializer' is not supported as keys are deserialized as byte arrays. "
        "Use DataFrame operations to explicitly deserialize the keys"
    ),
    "value.deserializer": (
        "Kafka option 'value.deserializer' is not supported as values are deserialized as byte arrays. "
        "Use DataFrame operations to explicitly deserialize the values"
    ),
    "enable.auto.commit": "Kafka option 'enable.auto.commit' is not supported",
    "interceptor.classes": "Kafka option 'interceptor.classes' is not supported",
}
FORBIDDEN_PRODUCER_SETTINGS = {
    "key.serializer": "Kafka option 'key.serializer' is not supported as keys are serialized as byte arrays",
    "value.serializer": "Kafka option 'value.serializer' is not supported as values are serialized as byte arrays",
}

DEFAULT_POLL_TIMEOUT_MS = 120_000  # Spark's kafkaConsumer.pollTimeoutMs

# Options Spark itself reads and hands on to every source and sink with the others.
SPARK_OWN_OPTIONS = frozenset({"checkpointlocation"})


@dataclass(frozen=True)
class OffsetSpec:
    """Where a range starts or ends, unresolved (Spark's KafkaOffsetRangeLimit): ``earliest``,
    ``latest``, ``offsets`` (per partition, -2/-1 allowed), ``timestamp`` (one time for every
    partition) or ``timestamps`` (per partition)."""

    kind: str
    offsets: dict[TopicPartition, int] = field(default_factory=dict)
    timestamp: int = -1
    option: str = ""  # the option it came from, for error messages


@dataclass(frozen=True)
class ClientSettings:
    """How to reach the data: the brokers (network back-end) or a stopped cluster's log directories
    (offline back-end), and the client settings passed on with ``kafka.``."""

    bootstrap_servers: str | None
    log_dirs: tuple[str, ...]
    kafka_params: dict[str, str]
    poll_timeout_ms: int = DEFAULT_POLL_TIMEOUT_MS

    @property
    def request_timeout_ms(self) -> int:
        return int(self.kafka_params.get("request.timeout.ms", 30_000))

    @property
    def check_crcs(self) -> bool:
        """The consumer's ``check.crcs`` (true unless ``kafka.check.crcs`` says false): the executors
        verify each record batch's CRC before reading its records, as Kafka's consumer does."""
        # parse_client has checked that it says true or false
        return self.kafka_params.get("check.crcs", "true").strip().lower() == "true"


@dataclass(frozen=True)
class SourceOptions:
    """A reader's options, parsed and checked; picklable, so the executors get them as they are."""

    client: ClientSettings
    strategy: str  # assign, subscribe or subscribePattern
    topics: tuple[str, ...] = ()  # subscribe
    pattern: str = ""  # subscribePattern
    assigned: tuple[TopicPartition, ...] = ()  # assign
    starting: OffsetSpec = OffsetSpec("earliest")
    ending: OffsetSpec = OffsetSpec("latest")
    timestamp_strategy: str = "error"
    fail_on_data_loss: bool = True
    max_offsets_per_trigger: int | None = None
    min_partitions: int | None = None
    include_headers: bool = False
    rows: str = ROWS_ARROW


@dataclass(frozen=True)
class SinkOptions:
    client: ClientSettings
    topic: str | None
    include_headers: bool = False
    producer_params: dict[str, str] = field(default_factory=dict)


def _lower(options: Mapping[str, str]) -> dict[str, str]:
    # Spark hands Python data sources a case-insensitive dict whose keys iterate lower-cased; a plain
    # dict from a test may not, so every lookup here goes through lower-cased keys.
    return {str(k).lower(): str(v) for k, v in options.items()}


def _bool(opts: dict[str, str], name: str, default: bool) -> bool:
    value = opts.get(name.lower())
    if value is None:
        return default
    if value.strip().lower() not in ("true", "false"):
        raise IllegalArgumentException(f"Option '{name}' must be true or false, got '{value}'")
    return value.strip().lower() == "true"


def _long(opts: dict[str, str], name: str, positive: bool = True) -> int | None:
    value = opts.get(name.lower())
    if value is None:
        return None
    try:
        number = int(value.strip())
    except ValueError:
        raise IllegalArgumentException(f"Option '{name}' must be a whole number, got '{value}'") from None
    if positive and number <= 0:
        raise IllegalArgumentException(f"Option '{name}' must be positive, got '{value}'")
    return number


def _check_known(opts: dict[str, str], forbidden: dict[str, str], passed_on: tuple[str, ...] | None) -> None:
    """Reject options kafka_lite does not implement, options nobody knows, and forbidden kafka.* ones."""
    for key in sorted(opts):
        if key in SPARK_OWN_OPTIONS:
            continue
        if key.startswith("kafka."):
            setting = key[len("kafka.") :]
            if setting in forbidden:
                raise IllegalArgumentException(forbidden[setting])
            if setting == "group.id":
                raise IllegalArgumentException(
                    "Option 'kafka.group.id' is not implemented by kafka_lite: its executors read with "
                    "Fetch requests and no consumer group. Remove the option"
                )
            if passed_on is not None and setting not in passed_on:
                raise IllegalArgumentException(
                    f"Option 'kafka.{setting}' is not implemented by kafka_lite's reader; the kafka.* "
                    f"settings it passes on are: {', '.join('kafka.' + s for s in passed_on)}"
                )
            continue
        info = OPTIONS_BY_KEY.get(key)
        if info is None:
            raise IllegalArgumentException(
                f"Unknown option '{key}': neither Spark's Kafka source nor kafka_lite has it "
                "(option names ignore case)"
            )
        if not info.implemented:
            raise IllegalArgumentException(
                f"Option '{info.name}' is not implemented by kafka_lite: {info.note}"
            )


def parse_client(opts: dict[str, str]) -> ClientSettings:
    servers = opts.get(BOOTSTRAP_SERVERS)
    dirs = opts.get(LOG_DIRS)
    if servers is None and dirs is None:
        raise IllegalArgumentException(
            f"Option '{BOOTSTRAP_SERVERS}' must be specified for configuring Kafka consumer "
            f"(or '{LOG_DIRS}' to read a stopped kafka_lite cluster's log directories)"
        )
    if servers is not None and dirs is not None:
        raise IllegalArgumentException(
            f"Options '{BOOTSTRAP_SERVERS}' and '{LOG_DIRS}' cannot both be set: read from running "
            "brokers or from a stopped cluster's log directories"
        )
    if servers is not None and not servers.strip():
        raise IllegalArgumentException(f"Option '{BOOTSTRAP_SERVERS}' is empty")
    log_dirs = tuple(d.strip() for d in (dirs or "").split(",") if d.strip())
    if dirs is not None and not log_dirs:
        raise IllegalArgumentException(f"Option '{LOG_DIRS}' names no directory")
    params = {
        k[len("kafka.") :]: v for k, v in opts.items() if k.startswith("kafka.") and k not in (LOG_DIRS, ROWS)
    }
    for number in ("request.timeout.ms", "max.partition.fetch.bytes", "retry.backoff.ms"):
        if number in params:
            _long({f"kafka.{number}": params[number]}, f"kafka.{number}")
    if "check.crcs" in params:
        _bool({"kafka.check.crcs": params["check.crcs"]}, "kafka.check.crcs", True)
    poll = _long(opts, "kafkaConsumer.pollTimeoutMs") or DEFAULT_POLL_TIMEOUT_MS
    return ClientSettings(servers.strip() if servers else None, log_dirs, params, poll)


# -- offsets JSON (Spark's JsonUtils) ---------------------------------------------------------------------


def parse_partitions(value: str, option: str = "assign") -> tuple[TopicPartition, ...]:
    """``{"topicA":[0,1],"topicB":[2,4]}`` -> the topic-partitions, sorted (JsonUtils.partitions)."""
    example = '{"topicA":[0,1],"topicB":[0,1]}'
    try:
        parsed = json.loads(value)
        if not isinstance(parsed, dict):
            raise ValueError
        tps = []
        for topic, partitions in parsed.items():
            if not isinstance(partitions, list) or not all(type(p) is int and p >= 0 for p in partitions):
                raise ValueError
            tps.extend((topic, p) for p in partitions)
    except ValueError:
        raise IllegalArgumentException(f"Option '{option}': expected e.g. {example}, got {value}") from None
    if not tps:
        raise IllegalArgumentException(
            f"No topicpartitions to assign as specified value for option '{option}' is '{value}'"
        )
    return tuple(sorted(tps))


def parse_partition_offsets(value: str, option: str) -> dict[TopicPartition, int]:
    """``{"topicA":{"0":23,"1":-1}}`` -> {(topic, partition): offset} (JsonUtils.partitionOffsets)."""
    example = '{"topicA":{"0":23,"1":-1},"topicB":{"0":-2}}'
    try:
        parsed = json.loads(value)
        if not isinstance(parsed, dict):
            raise ValueError
        offsets = {}
        for topic, partitions in parsed.items():
            if not isinstance(partitions, dict):
                raise ValueError
            for partition, offset in partitions.items():
                if type(offset) is not int:
                    raise ValueError
                offsets[(topic, int(partition))] = offset
    except ValueError:
        raise IllegalArgumentException(f"Option '{option}': expected e.g. {example}, got {value}") from None
    return offsets


def _offset_spec(opts: dict[str, str], prefix: str, default: str, streaming: bool) -> OffsetSpec:
    """Spark's getKafkaOffsetRangeLimit: a global timestamp first, then per-partition timestamps,
    then offsets; the checks of validateBatchOptions / validateStreamOptions."""
    starting = prefix == "starting"
    ts_name, by_ts_name, offsets_name = (
        f"{prefix}Timestamp",
        f"{prefix}OffsetsByTimestamp",
        f"{prefix}Offsets",
    )
    if ts_name.lower() in opts:
        ts = opts[ts_name.lower()].strip()
        try:
            return OffsetSpec("timestamp", timestamp=int(ts), option=ts_name)
        except ValueError:
            raise IllegalArgumentException(
                f"Option '{ts_name}': expected a single long value, got {ts}"
            ) from None
    if by_ts_name.lower() in opts:
        return OffsetSpec(
            "timestamps", parse_partition_offsets(opts[by_ts_name.lower()], by_ts_name), option=by_ts_name
        )
    value = opts.get(offsets_name.lower())
    if value is None:
        return OffsetSpec(default, option=offsets_name)
    value = value.strip()
    if value.lower() in ("earliest", "latest"):
        kind = value.lower()
        if not streaming and starting and kind == "latest":
            raise IllegalArgumentException(
                "Option 'startingOffsets': starting offset can't be latest for batch queries on Kafka"
            )
        if not starting and kind == "earliest":
            raise IllegalArgumentException(
                "Option 'endingOffsets': ending offset can't be earliest for batch queries on Kafka"
            )
        return OffsetSpec(kind, option=offsets_name)
    offsets = parse_partition_offsets(value, offsets_name)
    for tp, offset in sorted(offsets.items()):
        if offset < EARLIEST:
            raise IllegalArgumentException(
                f"Option '{offsets_name}': offset {offset} for {tp[0]}-{tp[1]} is not an offset, -2 (earliest) or -1 (latest)"
            )
        if not streaming and starting and offset == LATEST:
            raise IllegalArgumentException(
                f"Option 'startingOffsets': startingOffsets for {tp[0]}-{tp[1]} can't be latest for batch queries on Kafka"
            )
        if not starting and offset == EARLIEST:
            raise IllegalArgumentException(
                f"Option 'endingOffsets': ending offset for {tp[0]}-{tp[1]} can't be earliest for batch queries on Kafka"
            )
    return OffsetSpec("offsets", offsets, option=offsets_name)


def _check_offset_limits(start: OffsetSpec, end: OffsetSpec) -> None:
    """Spark's checkOffsetLimitValidity: two JSON specs name the same partitions, and none starts after it ends."""
    if start.kind not in ("offsets", "timestamps") or end.kind != start.kind:
        return
    if set(start.offsets) != set(end.offsets):
        raise IllegalArgumentException(
            f"Options '{start.option}' and '{end.option}' must name the same topic-partitions: "
            f"{sorted(start.offsets)} and {sorted(end.offsets)}"
        )
    for tp, s in sorted(start.offsets.items()):
        e = end.offsets[tp]
        if s > e >= 0 and s >= 0:
            raise IllegalArgumentException(
                f"Options '{start.option}' and '{end.option}': {tp[0]}-{tp[1]} starts at {s}, after its end {e}"
            )


def parse_source_options(options: Mapping[str, str], streaming: bool) -> SourceOptions:
    """Check a reader's options as KafkaSourceProvider does when the DataFrame is defined."""
    opts = _lower(options)
    _check_known(opts, FORBIDDEN_CONSUMER_SETTINGS, CONSUMER_SETTINGS)
    if "topic" in opts:
        raise IllegalArgumentException(
            "Option 'topic' is for writing; a reader takes 'subscribe', 'subscribePattern' or 'assign'"
        )
    given = [name for name in STRATEGY_OPTIONS if name.lower() in opts]
    if not given:
        raise IllegalArgumentException(
            "One of the following options must be specified for Kafka source: assign, subscribe, subscribePattern"
        )
    if len(given) > 1:
        raise IllegalArgumentException(
            "Only one of the following options can be specified for Kafka source: assign, subscribe, "
            f"subscribePattern (got {', '.join(given)})"
        )
    strategy = given[0]
    value = opts[strategy.lower()]
    topics: tuple[str, ...] = ()
    pattern = ""
    assigned: tuple[TopicPartition, ...] = ()
    if strategy == "subscribe":
        topics = tuple(t.strip() for t in value.split(",") if t.strip())
        if not topics:
            raise IllegalArgumentException(
                f"No topics to subscribe to as specified value for option 'subscribe' is '{value}'"
            )
    elif strategy == "subscribePattern":
        pattern = value.strip()
        if not pattern:
            raise IllegalArgumentException(
                f"Pattern to subscribe is empty as specified value for option 'subscribePattern' is '{value}'"
            )
        try:
            re.compile(pattern)
        except re.error as e:
            raise IllegalArgumentException(
                f"Option 'subscribePattern': '{pattern}' is not a regular expression: {e}"
            ) from None
    else:
        if not value.strip().startswith("{"):
            raise IllegalArgumentException(
                f"No topicpartitions to assign as specified value for option 'assign' is '{value}'"
            )
        assigned = parse_partitions(value)
    if streaming:
        for name in ("endingOffsets", "endingTimestamp", "endingOffsetsByTimestamp"):
            if name.lower() in opts:
                raise IllegalArgumentException(
                    f"Option '{name}': ending offset not valid in streaming queries"
                )
    starting = _offset_spec(opts, "starting", "latest" if streaming else "earliest", streaming)
    ending = OffsetSpec("latest") if streaming else _offset_spec(opts, "ending", "latest", streaming)
    _check_offset_limits(starting, ending)
    strategy_on_no_match = opts.get("startingoffsetsbytimestampstrategy", "error").strip().lower()
    if strategy_on_no_match not in ("error", "latest"):
        raise IllegalArgumentException(
            f"Option 'startingOffsetsByTimestampStrategy' must be error or latest, got '{strategy_on_no_match}'"
        )
    rows = opts.get(ROWS, ROWS_ARROW).strip().lower()
    if rows not in (ROWS_ARROW, ROWS_TUPLES):
        raise IllegalArgumentException(f"Option '{ROWS}' must be {ROWS_ARROW} or {ROWS_TUPLES}, got '{rows}'")
    return SourceOptions(
        client=parse_client(opts),
        strategy=strategy,
        topics=topics,
        pattern=pattern,
        assigned=assigned,
        starting=starting,
        ending=ending,
        timestamp_strategy=strategy_on_no_match,
        fail_on_data_loss=_bool(opts, "failOnDataLoss", True),
        max_offsets_per_trigger=_long(opts, "maxOffsetsPerTrigger"),
        min_partitions=_long(opts, "minPartitions"),
        include_headers=_bool(opts, "includeHeaders", False),
        rows=rows,
    )


def parse_sink_options(options: Mapping[str, str]) -> SinkOptions:
    """Check a writer's options (KafkaSourceProvider.kafkaParamsForProducer and the sink's topic)."""
    opts = _lower(options)
    _check_known(opts, FORBIDDEN_PRODUCER_SETTINGS, None)
    if LOG_DIRS in opts:
        raise IllegalArgumentException(
            f"Option '{LOG_DIRS}' reads a stopped cluster; writing needs running brokers: set '{BOOTSTRAP_SERVERS}'"
        )
    for key in opts:
        info = OPTIONS_BY_KEY.get(key)
        if info is not None and info.applies_to not in ("sink", "both"):
            raise IllegalArgumentException(
                f"Option '{info.name}' is for reading; a writer takes 'topic' and kafka.* settings"
            )
    topic = opts.get("topic")
    if topic is not None and not topic.strip():
        raise IllegalArgumentException("Option 'topic' is empty")
    client = parse_client(opts)
    return SinkOptions(
        client=client,
        topic=topic.strip() if topic is not None else None,
        include_headers=_bool(opts, "includeHeaders", False),
        producer_params={k: v for k, v in client.kafka_params.items() if k != "bootstrap.servers"},
    )
