"""ConsoleProducer's LineMessageReader and its settings: lines into (key, value), Kafka's "No key found
on line N", and which of the tool's defaults, files and flags wins."""

from __future__ import annotations

import io

import pytest

from kafka_lite.tools.console_producer import (
    LineMessageReader,
    ReaderException,
    error_message,
    producer_props,
)

pytestmark = pytest.mark.unit


def _read_all(data: bytes, **props: str) -> list[tuple[bytes | None, bytes]]:
    reader = LineMessageReader(io.BytesIO(data), {k.replace("_", "."): v for k, v in props.items()})
    records = []
    while (record := reader.read_message()) is not None:
        records.append(record)
    return records


def test_each_line_is_a_value_without_a_key():
    assert _read_all(b"one\r\ntwo\n\nthree") == [
        (None, b"one"),
        (None, b"two"),
        (None, b""),
        (None, b"three"),
    ]
    assert _read_all(b"") == []


def test_parse_key_splits_at_the_first_separator():
    data = b"k1:v1\nk2:a:b\nk3:\n:no key\n"
    assert _read_all(data, parse_key="true", key_separator=":") == [
        (b"k1", b"v1"),
        (b"k2", b"a:b"),
        (b"k3", b""),
        (b"", b"no key"),
    ]
    assert _read_all(b"k\tv\n", parse_key="TRUE") == [(b"k", b"v")], "a tab by default"
    assert _read_all("ключ=значение\n".encode(), parse_key="true", key_separator="=") == [
        ("ключ".encode(), "значение".encode())
    ]


def test_a_line_without_the_separator_names_its_line():
    reader = LineMessageReader(
        io.BytesIO(b"k1:v1\nno separator here\n"), {"parse.key": "true", "key.separator": ":"}
    )
    assert reader.read_message() == (b"k1", b"v1")
    with pytest.raises(ReaderException, match=r"^No key found on line 2: no separator here "):
        reader.read_message()


def test_ignore_error_sends_such_a_line_whole_without_a_key():
    data = b"k1:v1\nplain\n"
    assert _read_all(data, parse_key="true", key_separator=":", ignore_error="true") == [
        (b"k1", b"v1"),
        (None, b"plain"),
    ]


def test_null_marker_stands_for_a_null_key_or_value():
    data = b"k1:v1\nk2:-\n-:v3\n-\n"
    assert _read_all(data, parse_key="true", key_separator=":", null_marker="-", ignore_error="true") == [
        (b"k1", b"v1"),
        (b"k2", None),  # a tombstone: with compaction, it deletes k2
        (None, b"v3"),
        (None, None),
    ]
    assert _read_all(b"x\n-\n--\n", null_marker="-") == [(None, b"x"), (None, None), (None, b"--")]


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"null.marker": ""}, "--property null.marker= is empty"),
        ({"null.marker": ":", "key.separator": ":"}, "--property null.marker=: is the key separator too"),
        (
            {"parse.kye": "true"},
            "Unknown --property parse.kye: the line reader takes parse.key, key.separator",
        ),
        ({"parse.key": "yes"}, "--property parse.key=yes: expected true or false"),
        ({"ignore.error": "1"}, "--property ignore.error=1: expected true or false"),
        ({"key.separator": ""}, "--property key.separator= is empty"),
    ],
)
def test_a_bad_reader_property_is_named(props, message):
    with pytest.raises(ReaderException) as e:
        LineMessageReader(io.BytesIO(b""), props)
    assert str(e.value).startswith(message)


def test_the_users_settings_win_over_the_tools_defaults_and_flags_over_both():
    options = {"request_required_acks": None, "timeout": 5, "compression_codec": None}
    props = producer_props(
        "127.0.0.1:9092",
        options,
        producer_config={"acks": "0", "retries": "7", "linger.ms": "50"},
        producer_properties={"acks": "all", "enable.idempotence": "true"},
    )
    assert props["acks"] == "all", "--producer-property over --producer.config over the tool's default 1"
    assert props["retries"] == "7", "--producer.config over the tool's default 3"
    assert props["linger.ms"] == "5", "a flag given (--timeout 5) over everything"
    assert props["enable.idempotence"] == "true"
    assert props["compression.type"] == "none" and props["request.timeout.ms"] == "1500", "Kafka's defaults"
    assert props["client.id"] == "console-producer"
    assert props["bootstrap.servers"] == "127.0.0.1:9092"


def test_sync_sends_without_lingering_unless_told_to():
    assert producer_props("b:1", {}, {}, {})["linger.ms"] == "1000", "Kafka's tool's default"
    assert producer_props("b:1", {}, {}, {}, sync=True)["linger.ms"] == "0"
    assert producer_props("b:1", {}, {}, {"linger.ms": "7"}, sync=True)["linger.ms"] == "7"
    assert producer_props("b:1", {"timeout": 9}, {}, {}, sync=True)["linger.ms"] == "9"


def test_a_failed_send_reads_as_kafkas_error_logging_callback():
    assert error_message("t", b"abc", 5, ValueError("boom")) == (
        "Error when sending message to topic t with key: 3 bytes, value: 5 bytes with error: ValueError: boom"
    )
    assert "with key: null," in error_message("t", None, 5, ValueError("boom"))
    assert "value: null with error" in error_message("t", b"k", -1, ValueError("boom")), "a tombstone's"
