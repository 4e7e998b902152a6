"""Kafka's (de)serializer class names in the console tools, without a cluster: each known class reads
and writes the bytes Kafka's does and prints what Java's ``toString`` prints; an unknown class is
refused with the list of known ones; a key or value of the wrong size, or a line that is not a
number, is an error naming the record or the line. Through the CLI on the cluster:
tests/cli/test_serde_classes_cluster.py."""

from __future__ import annotations

import io
import struct
import sys

import pytest

from kafka_lite.cli.main import main
from kafka_lite.cli.serde_classes import (
    DESERIALIZERS,
    DeserializingFormatter,
    SerializingReader,
    UnknownClassException,
    deserializer_for,
    java_double_to_string,
    serializer_for,
)
from kafka_lite.common.errors import SerializationException
from kafka_lite.common.record.constants import TimestampType
from kafka_lite.consumer.consumer_record import ConsumerRecord
from kafka_lite.tools.console_consumer import DefaultMessageFormatter
from kafka_lite.tools.console_producer import LineMessageReader, ReaderException
from kafka_lite.utils.ports import free_port

pytestmark = pytest.mark.unit

P = "org.apache.kafka.common.serialization."


def record(key: bytes | None, value: bytes | None, offset: int = 7) -> ConsumerRecord:
    return ConsumerRecord("counts", 2, 0, offset, 1_700_000_000_000, TimestampType.CREATE_TIME,
                          key, value, (), None, -1, -1, 0)  # fmt: skip


def line(props: dict[str, str], rec: ConsumerRecord, key=None, value=None) -> bytes:
    """The line the formatter writes for ``rec``, with ``(name, deserializer)`` pairs or None."""
    out = io.BytesIO()
    DeserializingFormatter(DefaultMessageFormatter(props), key, value).write_to(rec, out)
    return out.getvalue()


def named(name: str):
    return (P + name, deserializer_for(P + name, "--property value.deserializer"))


@pytest.mark.parametrize(
    ("name", "data", "printed"),
    [
        ("LongDeserializer", struct.pack(">q", 3), b"3"),
        ("LongDeserializer", struct.pack(">q", -(2**63)), b"-9223372036854775808"),
        ("IntegerDeserializer", struct.pack(">i", 42), b"42"),
        ("DoubleDeserializer", struct.pack(">d", 2.5), b"2.5"),
        ("DoubleDeserializer", struct.pack(">d", 1e10), b"1.0E10"),
        ("StringDeserializer", "grüße".encode(), "grüße".encode()),
        ("ByteArrayDeserializer", b"\x00\xff", b"\x00\xff"),
    ],
)
def test_each_known_deserializer_prints_what_javas_to_string_prints(name, data, printed):
    assert line({}, record(None, data), value=named(name)) == printed + b"\n"


def test_the_key_is_deserialized_only_when_printed_and_null_stays_the_null_literal():
    counts = record(b"kafka", struct.pack(">q", 3))
    key, value = named("StringDeserializer"), named("LongDeserializer")
    assert line({"print.key": "true"}, counts, key, value) == b"kafka\t3\n"
    # print.key=false: a key LongDeserializer cannot read is never read
    assert line({}, counts, named("LongDeserializer"), value) == b"3\n"
    assert line({"print.key": "true"}, record(None, None), value=value) == b"null\tnull\n"


@pytest.mark.parametrize(
    ("d", "java"),
    [(0.0, "0.0"), (3.0, "3.0"), (0.001, "0.001"), (0.0001, "1.0E-4"), (1234567.0, "1234567.0"),
     (1e7, "1.0E7"), (12345678.9, "1.23456789E7"), (-2.5e-5, "-2.5E-5"), (float("nan"), "NaN"),
     (float("-inf"), "-Infinity")],
)  # fmt: skip
def test_a_double_prints_as_javas_double_to_string(d, java):
    assert java_double_to_string(d) == java


def test_a_value_of_the_wrong_size_names_the_record():
    with pytest.raises(SerializationException) as e:
        line({}, record(None, b"three", offset=12), value=named("LongDeserializer"))
    assert str(e.value) == (
        "Size of data received by LongDeserializer is not 8: the value of counts-2 at offset 12 "
        "(5 bytes) is not what LongDeserializer reads"
    )


def test_an_unknown_class_is_refused_with_the_known_ones():
    with pytest.raises(UnknownClassException) as e:
        deserializer_for("LongDeserializer", "--property value.deserializer")
    message = str(e.value)
    assert message.startswith("--property value.deserializer: no deserializer class 'LongDeserializer'")
    assert all(name in message for name in DESERIALIZERS)
    with pytest.raises(UnknownClassException, match=r"no serializer class 'kafka\.serializer\.LongEncoder'"):
        serializer_for("kafka.serializer.LongEncoder", "--value-serializer")


def reader(text: bytes, key: str, value: str) -> SerializingReader:
    lines = LineMessageReader(io.BytesIO(text), {"parse.key": "true", "key.separator": ":"})
    return SerializingReader(lines, key, value)


def test_the_serializers_turn_a_lines_text_into_their_types_bytes():
    r = reader(b"apples:3\npears:-1\n", P + "StringSerializer", P + "LongSerializer")
    assert r.read_message() == (b"apples", struct.pack(">q", 3))
    assert r.read_message() == (b"pears", struct.pack(">q", -1))
    assert r.read_message() is None
    r = reader(b"7:2.5\n", P + "IntegerSerializer", P + "DoubleSerializer")
    assert r.read_message() == (struct.pack(">i", 7), struct.pack(">d", 2.5))
    # the default encoder, as Kafka's tool: the line's bytes as they are
    r = reader(b"k:\xff\xfe\n", "kafka.serializer.DefaultEncoder", "kafka.serializer.DefaultEncoder")
    assert r.read_message() == (b"k", b"\xff\xfe")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            b"a:1\nb:three\n",
            "line 2: the value 'three' cannot be written by --value-serializer LongSerializer",
        ),
        (b"a:1_000\n", "line 1: the value '1_000' cannot be written by --value-serializer LongSerializer"),
        (b"a:9223372036854775808\n", "Can't serialize 9223372036854775808 as a long (8 bytes)"),
    ],
)
def test_a_line_the_serializer_cannot_write_is_named(text, message):
    r = reader(text, P + "StringSerializer", P + "LongSerializer")
    with pytest.raises(ReaderException) as e:
        while r.read_message() is not None:
            pass
    assert message in str(e.value)


# -- through the CLI, before anything connects ----------------------------------------------------------


@pytest.fixture
def nowhere() -> str:
    return f"127.0.0.1:{free_port()}"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--property", "value.deserializer=org.apache.kafka.common.serialization.LongDecoder"],
         "--property value.deserializer: no deserializer class 'org.apache.kafka.common.serialization.LongDecoder'"),
        (["--key-deserializer", "StringDeserializer"], "--key-deserializer: no deserializer class 'StringDeserializer'"),
        (["--formatter", "kafka.tools.LoggingMessageFormatter"],
         "--formatter kafka.tools.LoggingMessageFormatter: the one formatter there is is kafka.tools.DefaultMessageFormatter"),
        (["--property", "print.kye=true"], "Unknown --property print.kye: the formatter takes print.timestamp"),
    ],
)  # fmt: skip
def test_the_console_consumer_refuses_an_unknown_class(capsys, nowhere, args, message):
    code = main(["console-consumer", "--bootstrap-server", nowhere, "--topic", "t", *args])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert message in err and "Traceback" not in err, err
    if "class" in message:
        assert P + "LongDeserializer" in err, "the known classes are listed"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--value-serializer", "LongSerializer"], "--value-serializer: no serializer class 'LongSerializer'"),
        (["--property", "value.serializer=" + P + "LongSerializer"],
         "--property value.serializer: the serializers are options of the tool: --value-serializer CLASS"),
    ],
)  # fmt: skip
def test_the_console_producer_refuses_an_unknown_class(monkeypatch, capsys, nowhere, args, message):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"1\n")))
    code = main(["console-producer", "--bootstrap-server", nowhere, "--topic", "t", *args])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err, err
