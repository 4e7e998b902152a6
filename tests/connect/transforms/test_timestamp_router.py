"""TimestampRouter renames the topic after the record's timestamp, as Kafka 0.11.0's
TimestampRouterTest checks; and Java's SimpleDateFormat patterns it reads."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from kafka_lite.common.errors import ConfigException
from kafka_lite.connect.errors import DataException
from kafka_lite.connect.source.source_record import SourceRecord
from kafka_lite.connect.transforms.timestamp_router import TimestampRouter
from kafka_lite.connect.transforms.util.simple_date_format import SimpleDateFormat

pytestmark = pytest.mark.unit

# 2017-01-03T06:30:01.864Z
TIMESTAMP = 1483425001864


def route(props: dict[str, str], timestamp: int | None = TIMESTAMP) -> str:
    xform = TimestampRouter()
    xform.configure(props)
    return xform.apply(SourceRecord(None, None, "test", 0, None, None, None, None, timestamp)).topic


def test_default_configuration() -> None:
    assert route({}) == "test-20170103"


def test_topic_and_timestamp_formats() -> None:
    props = {"topic.format": "${timestamp}/${topic}", "timestamp.format": "yyyy-MM-dd'T'HH:mm"}

    assert route(props) == "2017-01-03T06:30/test"


def test_timestamp_missing() -> None:
    with pytest.raises(DataException, match=r"^Timestamp missing on record: SourceRecord"):
        route({}, None)


def test_illegal_pattern_character() -> None:
    with pytest.raises(ConfigException, match=r"timestamp\.format: Illegal pattern character 'q'"):
        route({"timestamp.format": "yyyyq"})


@pytest.mark.parametrize(
    ("pattern", "text"),
    [
        ("yyyyMMdd", "20170103"),
        ("yy-M-d H:m:s.S", "17-1-3 6:30:1.864"),
        ("EEE, d MMM yyyy hh:mm:ss a z", "Tue, 3 Jan 2017 06:30:01 AM UTC"),
        ("EEEE d MMMM yyyy, k 'o''clock' Z", "Tuesday 3 January 2017, 6 o'clock +0000"),
        ("yyyy-MM-dd'T'HH:mm:ss.SSSX", "2017-01-03T06:30:01.864Z"),
    ],
)
def test_simple_date_format(pattern: str, text: str) -> None:
    fmt = SimpleDateFormat(pattern)
    instant = datetime(2017, 1, 3, 6, 30, 1, 864000, tzinfo=UTC)

    assert fmt.format(instant) == text
    parsed = fmt.parse(text)
    assert parsed == fmt.parse(fmt.format(parsed))  # what the pattern keeps survives a round trip
    assert fmt.format(parsed) == text


def test_simple_date_format_parses_an_offset() -> None:
    parsed = SimpleDateFormat("yyyy-MM-dd HH:mm Z").parse("2017-01-03 07:30 +0100")

    assert parsed == datetime(2017, 1, 3, 6, 30, tzinfo=UTC)
