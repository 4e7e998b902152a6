"""Records in, lines out: the console consumer prints each record it reads as one line.

Mirrors: kafka.tools.ConsoleConsumer (its option checks, ConsumerWrapper, process) and
         kafka.tools.DefaultMessageFormatter (core/src/main/scala/kafka/tools/ConsoleConsumer.scala,
         Kafka 0.10.1), with what Kafka 0.11-2.7 added: ``--group`` (1.0) and the rule that a group id
         given in several places must be the same, a generated group that does not auto-commit
         (2.1, KIP-211), ``--from-beginning`` refused beside a contrary ``auto.offset.reset``, and
         the formatter's ``print.value`` (0.11) and ``print.partition``, ``print.offset``,
         ``print.headers``, ``headers.separator`` and ``null.literal`` (2.7, KIP-431)
Book:    chapter 1, 1.4 (the quick start's console consumer); chapter 4, 4.1 (subscribing, the poll
         loop), 4.4 (offsets committed on close)
Differs: each poll asks for no more records than ``--max-messages`` still wants, so the positions the
         consumer commits on close are those of the records printed (Kafka's tool polls whole
         batches and commits positions past records it never printed). A poll that times out
         (``--timeout-ms``) ends the run quietly with the count on stderr; Kafka also logs the
         ``TimeoutException`` as an error. The formatter accepts only the properties it knows, so a
         misspelt one is an error rather than ignored. Keys and values are printed as the bytes they
         are here; the command line (``kafka_lite.cli.console_consumer``) wraps this formatter to
         decode them with Kafka's deserializer class names (``key.deserializer``,
         ``value.deserializer``: String, Long, Integer, Double, ByteArray), and takes ``--formatter``
         only as Kafka's default one. There is no ``--skip-message-on-error``. A ``--partition`` the topic does not
         have is an error naming the topic's partitions (Kafka's tool waits for it for ever).

What to read is exactly one of: a ``--topic``, subscribed in a group; a ``--whitelist`` regular
expression, subscribed as a pattern in a group; or a ``--topic`` with a ``--partition``, assigned by
hand and started at ``--offset`` (``earliest``, ``latest``, or an offset; latest by default, as in
Kafka). Without ``--group`` the tool joins a group of its own, ``console-consumer-N``
(N random, as Kafka names it).

``DefaultMessageFormatter`` writes one line per record, its columns in Kafka's order, each present
only when its property is ``true``, separated by ``key.separator`` (a tab)::

    CreateTime:1700000000000	Partition:0	Offset:42	user-1	{"page": "/item/3"}
    (print.timestamp)         (print.partition) (print.offset) (print.key) (print.value, on by default)
"""

from __future__ import annotations

import random
import re
from collections import deque
from collections.abc import Callable, Mapping
from typing import BinaryIO

from kafka_lite.common.errors import KafkaException, TimeoutException
from kafka_lite.common.record.constants import TimestampType

# The formatter's properties (``--property k=v``), with what each does.
FORMATTER_PROPERTIES = {
    "print.timestamp": "true: print the timestamp type and timestamp (CreateTime:1700000000000)",
    "print.partition": "true: print the partition (Partition:0)",
    "print.offset": "true: print the offset (Offset:42)",
    "print.headers": "true: print the headers (k1:v1,k2:v2, or NO_HEADERS)",
    "print.key": "true: print the key",
    "print.value": "false: leave the value out (default: true)",
    "key.separator": "between the columns (default: a tab)",
    "line.separator": "after each record (default: a newline)",
    "headers.separator": "between headers (default: a comma)",
    "null.literal": "printed for a null key, value or header value (default: null)",
}
_FLAG_DEFAULTS = {
    "print.timestamp": False,
    "print.partition": False,
    "print.offset": False,
    "print.headers": False,
    "print.key": False,
    "print.value": True,
}

# ``--offset``'s words, as Kafka's ListOffsetRequest timestamps stand for them.
EARLIEST = "earliest"
LATEST = "latest"


class FormatterException(KafkaException):
    """A formatter property the formatter cannot use; the message names it."""


class ConsoleConsumerException(KafkaException):
    """Options that do not go together, or a value the tool cannot use; the message says which."""


class DefaultMessageFormatter:
    """One record as one line of bytes (Kafka's ``DefaultMessageFormatter.writeTo``)."""

    def __init__(self, props: Mapping[str, str]) -> None:
        unknown = sorted(set(props) - set(FORMATTER_PROPERTIES))
        if unknown:
            raise FormatterException(
                f"Unknown --property {', '.join(unknown)}: the formatter takes {', '.join(FORMATTER_PROPERTIES)}"
            )
        self.print_timestamp = _flag(props, "print.timestamp")
        self.print_partition = _flag(props, "print.partition")
        self.print_offset = _flag(props, "print.offset")
        self.print_headers = _flag(props, "print.headers")
        self.print_key = _flag(props, "print.key")
        self.print_value = _flag(props, "print.value")
        self.key_separator = props.get("key.separator", "\t").encode()
        self.line_separator = props.get("line.separator", "\n").encode()
        self.headers_separator = props.get("headers.separator", ",").encode()
        self.null_literal = props.get("null.literal", "null").encode()

    def write_to(self, record, output: BinaryIO) -> None:
        """Write ``record``'s line: the columns asked for, in Kafka's order."""
        columns = []
        if self.print_timestamp:
            if record.timestamp_type == TimestampType.NO_TIMESTAMP_TYPE:
                columns.append(b"NO_TIMESTAMP")
            else:
                columns.append(f"{record.timestamp_type.display_name}:{record.timestamp}".encode())
        if self.print_partition:
            columns.append(b"Partition:%d" % record.partition)
        if self.print_offset:
            columns.append(b"Offset:%d" % record.offset)
        if self.print_headers:
            headers = [b"%s:%s" % (h.key.encode(), self._bytes(h.value)) for h in record.headers]
            columns.append(self.headers_separator.join(headers) if headers else b"NO_HEADERS")
        if self.print_key:
            columns.append(self._bytes(record.key))
        if self.print_value:
            columns.append(self._bytes(record.value))
        output.write(self.key_separator.join(columns) + self.line_separator)

    def _bytes(self, data) -> bytes:
        return self.null_literal if data is None else bytes(data)


def _flag(props: Mapping[str, str], name: str) -> bool:
    if name not in props:
        return _FLAG_DEFAULTS[name]
    value = props[name].strip().lower()
    if value not in ("true", "false"):
        raise FormatterException(f"--property {name}={props[name]}: expected true or false")
    return value == "true"


def parse_offset(text: str | None, from_beginning: bool = False) -> int | str:
    """Where an assigned partition starts: ``--offset``'s ``earliest``, ``latest`` or a non-negative
    offset (a bad one refused with Kafka's message); without it, earliest with ``--from-beginning``,
    else latest (Kafka's ``offsetArg``)."""
    if text is None:
        return EARLIEST if from_beginning else LATEST
    word = text.strip().lower()
    if word in (EARLIEST, LATEST):
        return word
    try:
        offset = int(word)
    except ValueError:
        offset = -1
    if offset < 0:
        raise ConsoleConsumerException(
            f"The provided offset value '{text}' is incorrect. Valid values are 'earliest', 'latest', "
            "or a non-negative long."
        )
    return offset


def check_options(
    topic: str | None,
    whitelist: str | None,
    partition: int | None,
    offset: str | None,
    from_beginning: bool,
) -> None:
    """The combinations Kafka's ``ConsoleConsumerConfig`` refuses, with its words."""
    if (topic is None) == (whitelist is None):
        given = "both" if topic is not None else "neither"
        raise ConsoleConsumerException(
            f"Exactly one of whitelist/topic is required (--topic or --whitelist; {given} given)."
        )
    if whitelist is not None:
        try:
            re.compile(whitelist)
        except re.error as e:
            raise ConsoleConsumerException(
                f"--whitelist {whitelist!r} is not a regular expression: {e}"
            ) from None
    if partition is not None:
        if topic is None:
            raise ConsoleConsumerException("The topic is required when partition is specified.")
        if from_beginning and offset is not None:
            raise ConsoleConsumerException("Options from-beginning and offset cannot be specified together.")
    elif offset is not None:
        raise ConsoleConsumerException("The partition is required when offset is specified.")


def consumer_props(
    bootstrap_server: str,
    group: str | None,
    from_beginning: bool,
    consumer_config: Mapping[str, str],
    consumer_properties: Mapping[str, str],
    new_group: Callable[[], str] = lambda: f"console-consumer-{random.randrange(100000)}",
) -> dict[str, str]:
    """The consumer's settings, by Kafka's names (Kafka's ``getNewConsumerProps``, with the group and
    ``auto.offset.reset`` rules of Kafka 1.0-2.1).

    ``--consumer-property`` wins over ``--consumer.config``. A group id given in more than one place
    must be the same everywhere; none gives a generated ``console-consumer-N`` group that does not
    auto-commit (unless told to): its offsets would never be read again. ``--from-beginning`` sets
    ``auto.offset.reset=earliest``, which counts only for a group with no committed offset; without
    it ``latest``, unless a property sets another value.
    """
    props = {**consumer_config, **consumer_properties}
    groups = [
        g
        for g in (group, consumer_properties.get("group.id"), consumer_config.get("group.id"))
        if g is not None
    ]
    if len(set(groups)) > 1:
        raise ConsoleConsumerException(
            "The group ids provided in different places (directly using '--group', via '--consumer-property', "
            f"or via '--consumer.config') do not match. Detected group ids: {', '.join(repr(g) for g in dict.fromkeys(groups))}"
        )
    if groups:
        props["group.id"] = groups[0]
    else:
        props["group.id"] = new_group()
        props.setdefault("enable.auto.commit", "false")
    reset = props.get("auto.offset.reset")
    if reset is None:
        props["auto.offset.reset"] = EARLIEST if from_beginning else LATEST
    elif from_beginning and reset.strip() != EARLIEST:
        raise ConsoleConsumerException(
            f"Can't simultaneously specify --from-beginning and 'auto.offset.reset={reset}', please remove one option"
        )
    props.setdefault("client.id", "console-consumer")
    props["bootstrap.servers"] = bootstrap_server
    return props


class ConsumerWrapper:
    """The consumer, subscribed or assigned as the options say, handing out one record at a time
    (Kafka's ``ConsoleConsumer.ConsumerWrapper``).

    ``receive`` polls when the records of the last poll are used up, for at most ``timeout_ms``
    (forever if None), and raises ``TimeoutException`` when a poll brings nothing."""

    POLL_MS = 1000  # a poll without --timeout-ms: the loop polls again, forever

    def __init__(
        self,
        consumer,
        topic: str | None,
        partition: int | None,
        offset: int | str,
        whitelist: str | None,
        timeout_ms: int | None = None,
    ) -> None:
        self.consumer = consumer
        self.timeout_ms = timeout_ms
        self.records: deque = deque()  # the last poll's records not handed out yet
        if topic is not None and partition is not None:
            self.seek(topic, partition, offset)
        elif topic is not None:
            consumer.subscribe([topic])
        else:
            consumer.subscribe(pattern=whitelist)

    def seek(self, topic: str, partition: int, offset: int | str) -> None:
        partitions = self.consumer.partitions_for_topic(topic, self.timeout_ms)
        if partitions is not None and partition not in partitions:
            # The consumer would wait for ever for a leader of a partition that is not there.
            count = len(partitions)
            raise ConsoleConsumerException(
                f"--partition {partition}: topic {topic} has no partition {partition}: it has {count} "
                f"partition{'' if count == 1 else 's'}, numbered from 0"
            )
        tp = (topic, partition)
        self.consumer.assign([tp])
        if offset == EARLIEST:
            self.consumer.seek_to_beginning(tp)
        elif offset == LATEST:
            self.consumer.seek_to_end(tp)
        else:
            self.consumer.seek(tp, offset)

    def receive(self, max_records: int | None = None):
        """The next record; a poll (of at most ``max_records``) when none is left from the last one."""
        while not self.records:
            timeout = self.POLL_MS if self.timeout_ms is None else self.timeout_ms
            for records in self.consumer.poll(timeout_ms=timeout, max_records=max_records).values():
                self.records.extend(records)
            if not self.records and self.timeout_ms is not None:
                raise TimeoutException(f"No record arrived within --timeout-ms {self.timeout_ms}")
        return self.records.popleft()


def process(
    max_messages: int | None,
    formatter: DefaultMessageFormatter,
    consumer: ConsumerWrapper,
    output: BinaryIO,
    counted: Callable[[int], object],
) -> None:
    """Kafka's ``process``: receive and print records until ``max_messages`` (forever if None).

    ``counted(n)`` hears the count after each record, so the caller knows it however the loop ends:
    ``TimeoutException`` (``--timeout-ms``) and ``WakeupException`` (Ctrl-C) propagate to it. The
    output is flushed once a poll's records are printed, so a reader of a pipe sees them then."""
    count = 0
    while max_messages is None or count < max_messages:
        record = consumer.receive(None if max_messages is None else max_messages - count)
        formatter.write_to(record, output)
        count += 1
        counted(count)
        if not consumer.records:
            output.flush()
    output.flush()
