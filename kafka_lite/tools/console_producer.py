"""Lines in, records out: the console producer sends each line it reads as one record.

Mirrors: kafka.tools.ConsoleProducer (LineMessageReader)
         (core/src/main/scala/kafka/tools/ConsoleProducer.scala, Kafka 0.10.1), and
         org.apache.kafka.clients.producer.internals.ErrorLoggingCallback
Book:    chapter 1, 1.4 (the quick start's console producer); chapter 2, 2.1.1 (send is asynchronous;
         ``--sync`` waits for each record's offset)
Differs: the tool's options go to the producer as Kafka's settings, as in Kafka; but a setting the
         user gives with ``--producer-property`` or ``--producer.config`` is never overwritten by
         one of the tool's defaults (Kafka 0.10.1 lets ``--request-required-acks``' default ``1``
         win over ``--producer-property acks=all``; later Kafka takes the user's). The reader
         accepts only the properties it knows, so a misspelt one is an error rather than ignored.
         The tool stops at the first failed send (Kafka's logs it and reads on, and when the
         brokers are unreachable each later line waits ``max.block.ms`` again). With ``--sync``
         ``linger.ms`` defaults to 0: Kafka's tool keeps its 1000 ms, so each line waits a second
         for a batch that no other record can join.

The reader (``LineMessageReader``) reads a line, and with ``parse.key=true`` splits it at the first
``key.separator`` (a tab by default) into key and value; a line without the separator is an error
naming the line, unless ``ignore.error=true`` sends it whole as a value without a key; with
``null.marker`` (Kafka 3.2), a key or value equal to the marker is sent as null. The tool
hands each record to ``KafkaProducer.send``: asynchronously, so lines from a pipe are batched
(``linger.ms``, which the tool's ``--timeout`` sets, defaults to 1000 ms here), or with ``--sync``
one ``send(...).get()`` at a time. At the end of the input it closes the producer, which sends
what is still in the accumulator and waits for the answers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import BinaryIO

from kafka_lite.common.errors import KafkaException

# The message reader's properties (``--property k=v``), with what each does.
READER_PROPERTIES = {
    "parse.key": "true: split each line into key and value at key.separator",
    "key.separator": "where key and value part (default: a tab)",
    "ignore.error": "true: send a line without the separator whole, as a value without a key",
    "null.marker": "a key or value equal to it is sent as null (a null value is compaction's tombstone)",
}

# The tool's own options and the producer settings they stand for, with the tool's defaults
# (Kafka 0.10.1's ConsoleProducer.getNewProducerProps). ``client.id`` is always console-producer.
OPTION_SETTINGS: dict[str, tuple[str, str]] = {
    "compression_codec": ("compression.type", "none"),
    "request_required_acks": ("acks", "1"),
    "request_timeout_ms": ("request.timeout.ms", "1500"),
    "message_send_max_retries": ("retries", "3"),
    "retry_backoff_ms": ("retry.backoff.ms", "100"),
    "timeout": ("linger.ms", "1000"),
    "metadata_expiry_ms": ("metadata.max.age.ms", "300000"),
    "max_block_ms": ("max.block.ms", "60000"),
    "max_memory_bytes": ("buffer.memory", str(32 * 1024 * 1024)),
    "max_partition_memory_bytes": ("batch.size", "16384"),
}


class ReaderException(KafkaException):
    """A line or a reader property the reader cannot use; the message names it."""


class LineMessageReader:
    """Records from lines of bytes, one per line (Kafka's ``ConsoleProducer.LineMessageReader``)."""

    def __init__(self, input: BinaryIO, props: Mapping[str, str]) -> None:
        unknown = sorted(set(props) - set(READER_PROPERTIES))
        if unknown:
            raise ReaderException(
                f"Unknown --property {', '.join(unknown)}: the line reader takes "
                f"{', '.join(READER_PROPERTIES)}"
            )
        self.input = input
        self.parse_key = _flag(props, "parse.key")
        self.ignore_error = _flag(props, "ignore.error")
        separator = props.get("key.separator", "\t")
        if not separator:
            raise ReaderException("--property key.separator= is empty: give the text between key and value")
        self.key_separator = separator.encode()
        # Kafka 3.2's null.marker (KIP-810): the one way to write a null from a line, such as the
        # tombstone that deletes a key from a compacted topic (chapter 6, 6.1.6).
        marker = props.get("null.marker")
        if marker == "":
            raise ReaderException("--property null.marker= is empty: give the text that stands for null")
        if marker is not None and marker.encode() == self.key_separator:
            raise ReaderException(
                f"--property null.marker={marker} is the key separator too: they must differ"
            )
        self.null_marker = None if marker is None else marker.encode()
        self.line_number = 0

    def read_message(self) -> tuple[bytes | None, bytes | None] | None:
        """The next line as ``(key, value)``; None at the end of the input."""
        self.line_number += 1
        line = self.input.readline()
        if not line:
            return None
        line = _without_line_end(line)
        if not self.parse_key:
            return None, self._or_null(line)
        key, separator, value = line.partition(self.key_separator)
        if not separator:
            if self.ignore_error:
                return None, self._or_null(line)
            raise ReaderException(
                f"No key found on line {self.line_number}: {line.decode(errors='replace')} "
                f"(parse.key=true needs key.separator {self.key_separator.decode()!r} in every line)"
            )
        return self._or_null(key), self._or_null(value)

    def _or_null(self, text: bytes) -> bytes | None:
        return None if text == self.null_marker else text


def _flag(props: Mapping[str, str], name: str) -> bool:
    value = props.get(name, "false").strip().lower()
    if value not in ("true", "false"):
        raise ReaderException(f"--property {name}={props[name]}: expected true or false")
    return value == "true"


def _without_line_end(line: bytes) -> bytes:
    """The line without its ``\\n``, ``\\r\\n`` or ``\\r`` (what Java's ``readLine`` strips)."""
    if line.endswith(b"\n"):
        line = line[:-1]
    if line.endswith(b"\r"):
        line = line[:-1]
    return line


def producer_props(
    bootstrap_servers: str,
    options: Mapping[str, object | None],
    producer_config: Mapping[str, str],
    producer_properties: Mapping[str, str],
    sync: bool = False,
) -> dict[str, str]:
    """The producer's settings, by Kafka's names (Kafka's ``getNewProducerProps``).

    Highest first: an option given on the command line (``options`` holds None for one not given),
    ``--producer-property``, ``--producer.config``, the option's default.
    """
    props = {setting: default for setting, default in OPTION_SETTINGS.values()}
    if sync:
        props["linger.ms"] = "0"  # each record is sent alone: nothing to linger for (see Differs)
    props["client.id"] = "console-producer"
    props.update(producer_config)
    props.update(producer_properties)
    for option, (setting, _) in OPTION_SETTINGS.items():
        if options.get(option) is not None:
            props[setting] = str(options[option])
    props["bootstrap.servers"] = bootstrap_servers
    return props


class SendFailures:
    """The failed sends: how many, and the first one's message."""

    def __init__(self) -> None:
        self.count = 0
        self.first: str | None = None

    def add(self, message: str) -> None:
        self.count += 1
        if self.first is None:
            self.first = message


class ErrorLoggingCallback:
    """A failed send, described as Kafka's ``ErrorLoggingCallback`` logs it, into ``SendFailures``."""

    __slots__ = ("failures", "key", "topic", "value_size")

    def __init__(self, topic: str, key: bytes | None, value: bytes | None, failures: SendFailures) -> None:
        self.topic = topic
        self.key = key
        self.value_size = _size(value)
        self.failures = failures

    def __call__(self, exception: BaseException) -> None:
        self.failures.add(error_message(self.topic, self.key, self.value_size, exception))


def _size(value: bytes | None) -> int:
    """A value's size for ``error_message``; -1 stands for a null value (a tombstone)."""
    return -1 if value is None else len(value)


def error_message(topic: str, key: bytes | None, value_size: int, exception: BaseException) -> str:
    """Kafka's wording; sizes rather than contents, as the console producer asks for them."""
    key_text = "null" if key is None else f"{len(key)} bytes"
    value_text = "null" if value_size < 0 else f"{value_size} bytes"
    return (
        f"Error when sending message to topic {topic} with key: {key_text}, value: {value_text} "
        f"with error: {type(exception).__name__}: {exception}"
    )


def produce(reader: LineMessageReader, producer, topic: str, sync: bool = False) -> tuple[int, SendFailures]:
    """Send every record the reader reads (Kafka's main loop); stop at the first failure.

    Returns how many records were handed to ``send`` and the failures. The caller closes the producer.
    A ``ReaderException`` from a bad line propagates; the lines before it are already in the producer.
    """
    failures = SendFailures()
    sent = 0
    while failures.first is None and (message := reader.read_message()) is not None:
        key, value = message
        future = producer.send(topic, value, key=key)
        sent += 1
        if sync:
            try:
                future.get()
            except KafkaException as e:
                failures.add(error_message(topic, key, _size(value), e))
        else:
            future.add_errback(ErrorLoggingCallback(topic, key, value, failures))
    return sent, failures
