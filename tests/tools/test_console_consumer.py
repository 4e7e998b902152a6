"""The console consumer's pieces without a broker: ``DefaultMessageFormatter``'s columns and
properties, ``--offset``'s words, and the consumer settings built from the options (the group id's
places, the generated group, ``--from-beginning`` against ``auto.offset.reset``)."""

from __future__ import annotations

import io

import pytest

from kafka_lite.common.record.constants import TimestampType
from kafka_lite.common.record.default_record import Header
from kafka_lite.consumer.consumer_record import ConsumerRecord, serialized_header_size
from kafka_lite.tools.console_consumer import (
    ConsoleConsumerException,
    DefaultMessageFormatter,
    FormatterException,
    consumer_props,
    parse_offset,
)

pytestmark = pytest.mark.unit


def record(key=b"k", value=b"v", timestamp_type=TimestampType.CREATE_TIME, headers=()) -> ConsumerRecord:
    return ConsumerRecord(
        "t",
        2,
        -1,
        7,
        1234,
        timestamp_type,
        key,
        value,
        headers,
        None,
        -1,
        -1,
        serialized_header_size(headers),
    )


def line(props: dict, rec: ConsumerRecord) -> bytes:
    out = io.BytesIO()
    DefaultMessageFormatter(props).write_to(rec, out)
    return out.getvalue()


def test_the_value_alone_by_default():
    assert line({}, record()) == b"v\n"


def test_every_column_in_kafkas_order_with_the_separators_given():
    props = {"print.timestamp": "true", "print.partition": "true", "print.offset": "true",
             "print.headers": "true", "print.key": "true", "key.separator": " | ", "line.separator": ";\n",
             "headers.separator": "&"}  # fmt: skip
    rec = record(headers=(Header("a", b"1"), Header("b", None)))
    assert line(props, rec) == b"CreateTime:1234 | Partition:2 | Offset:7 | a:1&b:null | k | v;\n"


def test_null_key_and_value_print_the_null_literal_and_print_value_false_drops_the_value():
    assert line({"print.key": "true"}, record(key=None, value=None)) == b"null\tnull\n"
    assert line({"print.key": "true", "null.literal": "-"}, record(key=None)) == b"-\tv\n"
    assert line({"print.key": "true", "print.value": "false"}, record()) == b"k\n"


def test_timestamp_types():
    assert line({"print.timestamp": "true"}, record(timestamp_type=TimestampType.LOG_APPEND_TIME)) == (
        b"LogAppendTime:1234\tv\n"
    )
    assert line({"print.timestamp": "true"}, record(timestamp_type=TimestampType.NO_TIMESTAMP_TYPE)) == (
        b"NO_TIMESTAMP\tv\n"
    )


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"print.keys": "true"}, "Unknown --property print.keys: the formatter takes print.timestamp"),
        ({"print.offset": "1"}, "--property print.offset=1: expected true or false"),
    ],
)
def test_a_bad_property_is_named(props, message):
    with pytest.raises(FormatterException, match=message):
        DefaultMessageFormatter(props)


def test_offsets():
    assert parse_offset("Earliest") == "earliest" and parse_offset("latest") == "latest"
    assert parse_offset("42") == 42
    assert parse_offset(None) == "latest" and parse_offset(None, from_beginning=True) == "earliest"
    with pytest.raises(ConsoleConsumerException, match=r"The provided offset value '4\.2' is incorrect"):
        parse_offset("4.2")


def test_a_given_group_auto_commits_and_a_generated_one_does_not():
    props = consumer_props("h:1", "g", False, {}, {})
    assert props["group.id"] == "g" and "enable.auto.commit" not in props, "the consumer's default: on"
    assert props["auto.offset.reset"] == "latest" and props["bootstrap.servers"] == "h:1"
    props = consumer_props("h:1", None, True, {}, {}, new_group=lambda: "console-consumer-7")
    assert (props["group.id"], props["enable.auto.commit"], props["auto.offset.reset"]) == (
        "console-consumer-7", "false", "earliest",
    )  # fmt: skip
    props = consumer_props("h:1", None, False, {}, {"enable.auto.commit": "true"}, new_group=lambda: "c")
    assert props["enable.auto.commit"] == "true", "the user's setting wins"


def test_the_group_may_come_from_any_one_place_and_must_agree():
    assert consumer_props("h:1", None, False, {"group.id": "f"}, {})["group.id"] == "f"
    assert consumer_props("h:1", "g", False, {"group.id": "g"}, {"group.id": "g"})["group.id"] == "g"
    with pytest.raises(ConsoleConsumerException, match="Detected group ids: 'g', 'f'"):
        consumer_props("h:1", "g", False, {"group.id": "f"}, {})


def test_from_beginning_agrees_with_auto_offset_reset_or_is_refused():
    assert (
        consumer_props("h:1", "g", True, {}, {"auto.offset.reset": "earliest"})["auto.offset.reset"]
        == "earliest"
    )
    assert consumer_props("h:1", "g", False, {"auto.offset.reset": "none"}, {})["auto.offset.reset"] == "none"
    with pytest.raises(ConsoleConsumerException, match="Can't simultaneously specify --from-beginning"):
        consumer_props("h:1", "g", True, {"auto.offset.reset": "none"}, {})
