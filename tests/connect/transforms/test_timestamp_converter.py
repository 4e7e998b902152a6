"""TimestampConverter converts between Unix times, strings and the Date, Time and Timestamp logical
types, with and without schemas, as Kafka 0.11.0's TimestampConverterTest checks; and its config errors."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from kafka_lite.common.errors import ConfigException
from kafka_lite.connect.data import date as Date
from kafka_lite.connect.data import time as Time
from kafka_lite.connect.data import timestamp as Timestamp
from kafka_lite.connect.data.schema import INT32_SCHEMA, INT64_SCHEMA, STRING_SCHEMA, SchemaBuilder
from kafka_lite.connect.data.struct import Struct
from kafka_lite.connect.errors import ConnectException, DataException
from kafka_lite.connect.source.source_record import SourceRecord
from kafka_lite.connect.transforms.timestamp_converter import TimestampConverterKey, TimestampConverterValue

pytestmark = pytest.mark.unit

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
TIME = datetime(1970, 1, 1, 0, 0, 1, 234000, tzinfo=UTC)  # 1234 ms after midnight
DATE = datetime(1970, 1, 2, tzinfo=UTC)
DATE_PLUS_TIME = datetime(1970, 1, 2, 0, 0, 1, 234000, tzinfo=UTC)
DATE_PLUS_TIME_UNIX = 86_401_234
STRING_DATE_FMT = "yyyy MM dd HH mm ss SSS z"
DATE_PLUS_TIME_STRING = "1970 01 02 00 00 01 234 UTC"


def configured(props: dict[str, str], cls: type = TimestampConverterValue):
    xform = cls()
    xform.configure(props)
    return xform


def value_record(schema, value) -> SourceRecord:
    return SourceRecord(None, None, "topic", 0, None, None, schema, value)


# -- configuration -----------------------------------------------------------------------------


def test_config_no_target_type() -> None:
    with pytest.raises(ConfigException, match=r"Missing required configuration 'target.type'"):
        configured({})


def test_config_invalid_target_type() -> None:
    with pytest.raises(ConfigException) as e:
        configured({"target.type": "invalid"})
    assert str(e.value) == (
        "Unknown timestamp type in TimestampConverter: invalid. Valid values are string, unix, Date, Time, Timestamp."
    )


def test_config_missing_format() -> None:
    with pytest.raises(
        ConfigException, match="requires format option to be specified when using string timestamps"
    ):
        configured({"target.type": "string"})


def test_config_invalid_format() -> None:
    with pytest.raises(
        ConfigException, match="SimpleDateFormat-compatible pattern for string timestamps: bad-format"
    ):
        configured({"target.type": "string", "format": "bad-format"})


# -- without schemas: the input's representation is inferred from its class -------------------


@pytest.mark.parametrize(
    ("target", "expected"),
    [("Timestamp", DATE_PLUS_TIME), ("Date", DATE), ("Time", TIME), ("unix", DATE_PLUS_TIME_UNIX),
     ("string", DATE_PLUS_TIME_STRING)],
)  # fmt: skip
def test_schemaless_timestamp_to(target: str, expected) -> None:
    xform = configured({"target.type": target, "format": STRING_DATE_FMT})

    transformed = xform.apply(value_record(None, DATE_PLUS_TIME))

    assert transformed.value_schema is None
    assert transformed.value == expected


@pytest.mark.parametrize("given", [DATE_PLUS_TIME_UNIX, DATE_PLUS_TIME_STRING])
def test_schemaless_to_timestamp(given) -> None:
    xform = configured({"target.type": "Timestamp", "format": STRING_DATE_FMT})

    assert xform.apply(value_record(None, given)).value == DATE_PLUS_TIME


def test_schemaless_unsupported_class() -> None:
    with pytest.raises(
        DataException, match=r"^TimestampConverter does not support float objects as timestamps$"
    ):
        configured({"target.type": "unix"}).apply(value_record(None, 1.5))


def test_schemaless_string_that_does_not_match() -> None:
    xform = configured({"target.type": "unix", "format": "yyyy-MM-dd"})

    with pytest.raises(DataException) as e:
        xform.apply(value_record(None, "02/01/1970"))
    assert str(e.value) == "Could not parse timestamp: value (02/01/1970) does not match pattern (yyyy-MM-dd)"


# -- with schemas: the input's representation is read from its schema -------------------------


@pytest.mark.parametrize(
    ("target", "schema", "expected"),
    [("Timestamp", Timestamp.SCHEMA, DATE_PLUS_TIME), ("Date", Date.SCHEMA, DATE), ("Time", Time.SCHEMA, TIME),
     ("unix", INT64_SCHEMA, DATE_PLUS_TIME_UNIX), ("string", STRING_SCHEMA, DATE_PLUS_TIME_STRING)],
)  # fmt: skip
def test_with_schema_timestamp_to(target: str, schema, expected) -> None:
    xform = configured({"target.type": target, "format": STRING_DATE_FMT})

    transformed = xform.apply(value_record(Timestamp.SCHEMA, DATE_PLUS_TIME))

    assert transformed.value_schema == schema
    assert transformed.value == expected


@pytest.mark.parametrize(
    ("schema", "given", "expected"),
    [(Date.SCHEMA, DATE, DATE), (Time.SCHEMA, TIME, TIME), (INT64_SCHEMA, DATE_PLUS_TIME_UNIX, DATE_PLUS_TIME),
     (STRING_SCHEMA, DATE_PLUS_TIME_STRING, DATE_PLUS_TIME)],
)  # fmt: skip
def test_with_schema_to_timestamp(schema, given, expected) -> None:
    xform = configured({"target.type": "Timestamp", "format": STRING_DATE_FMT})

    transformed = xform.apply(value_record(schema, given))

    assert transformed.value_schema == Timestamp.SCHEMA
    assert transformed.value == expected


def test_with_schema_unknown_timestamp_schema() -> None:
    with pytest.raises(ConnectException, match="does not correspond to a known timestamp type format"):
        configured({"target.type": "Timestamp"}).apply(value_record(INT32_SCHEMA, 5))


# -- a field -------------------------------------------------------------------------------------


def test_schemaless_field_conversion() -> None:
    xform = configured({"target.type": "Date", "field": "ts"}, TimestampConverterKey)
    record = SourceRecord(None, None, "topic", 0, None, {"ts": DATE_PLUS_TIME, "other": "x"}, None, None)

    assert xform.apply(record).key == {"ts": DATE, "other": "x"}


def test_with_schema_field_conversion() -> None:
    xform = configured({"target.type": "Timestamp", "field": "ts"})
    schema = (
        SchemaBuilder.struct().name("row").field("ts", INT64_SCHEMA).field("other", STRING_SCHEMA).build()
    )
    value = Struct(schema).put("ts", DATE_PLUS_TIME_UNIX).put("other", "test")

    transformed = xform.apply(value_record(schema, value))

    out_schema = transformed.value_schema
    assert out_schema.name == "row"
    assert [(f.name, f.schema) for f in out_schema.fields()] == [
        ("ts", Timestamp.SCHEMA),
        ("other", STRING_SCHEMA),
    ]
    assert (transformed.value.get("ts"), transformed.value.get("other")) == (DATE_PLUS_TIME, "test")


def test_logical_types_round_trip() -> None:
    assert Date.from_logical(Date.SCHEMA, DATE) == 1
    assert Date.to_logical(Date.SCHEMA, 1) == DATE
    assert Time.from_logical(Time.SCHEMA, TIME) == 1234
    assert Time.to_logical(Time.SCHEMA, 1234) == TIME
    with pytest.raises(DataException, match="should not have any time fields set to non-zero values"):
        Date.from_logical(Date.SCHEMA, DATE_PLUS_TIME)
    with pytest.raises(DataException, match="should not have any date fields set to non-zero values"):
        Time.from_logical(Time.SCHEMA, DATE_PLUS_TIME)
