"""TimestampConverter: convert a timestamp between a Unix time, a string, and Connect's Date, Time and Timestamp types.

Mirrors: org.apache.kafka.connect.transforms.TimestampConverter, with its Key and Value
         (connect/transforms/src/main/java/.../transforms/TimestampConverter.java, Kafka 0.11.0)
Book:    chapter 8, 8.3 (beyond the book: TimestampConverter came in Kafka 0.11.0, among KIP-66's
         transformations)
Differs: ``TimestampConverter$Key``/``$Value`` are ``TimestampConverterKey``/``TimestampConverterValue``;
         the format is ``util/simple_date_format``'s subset of Java's ``SimpleDateFormat``, and
         strict; a null timestamp stays null (0.11.0's fails on it).

``target.type`` is one of five representations of an instant: ``unix`` (an ``INT64`` of
milliseconds since the epoch), ``string`` (written with ``format``, a ``SimpleDateFormat``
pattern), or the logical types ``Timestamp``, ``Date`` (the day, time of day dropped) and ``Time``
(the time of day, the day dropped). Every conversion goes through a raw instant (Kafka's
``java.util.Date``, kafka_lite's UTC ``datetime``): the input's translator turns it into one, the target's
turns it into the target type. With a schema, the input's representation is read from the
schema (its logical name, else ``STRING`` means a string in ``format`` and ``INT64`` a Unix
time); without one, from the value's class. ``field`` names the field to convert; empty (the
default), the whole key or value is the timestamp.
"""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from kafka_lite.common.config import NO_DEFAULT_VALUE, ConfigDef, Importance
from kafka_lite.common.config import Type as ConfigType
from kafka_lite.common.errors import ConfigException
from kafka_lite.connect.data import date as Date
from kafka_lite.connect.data import time as Time
from kafka_lite.connect.data import timestamp as Timestamp
from kafka_lite.connect.data.schema import INT64_SCHEMA, STRING_SCHEMA, Schema, SchemaBuilder, Type
from kafka_lite.connect.data.struct import Struct
from kafka_lite.connect.errors import ConnectException, DataException
from kafka_lite.connect.transforms.transformation import R, Transformation
from kafka_lite.connect.transforms.util.lru_cache import LRUCache
from kafka_lite.connect.transforms.util.record_part import KeyPart, RecordPart, ValuePart
from kafka_lite.connect.transforms.util.requirements import require_map, require_struct
from kafka_lite.connect.transforms.util.schema_util import copy_schema_basics
from kafka_lite.connect.transforms.util.simple_config import SimpleConfig
from kafka_lite.connect.transforms.util.simple_date_format import SimpleDateFormat

FIELD_CONFIG = "field"
FIELD_DEFAULT = ""
TARGET_TYPE_CONFIG = "target.type"
FORMAT_CONFIG = "format"
FORMAT_DEFAULT = ""

PURPOSE = "converting timestamp formats"

TYPE_STRING = "string"
TYPE_UNIX = "unix"
TYPE_DATE = "Date"
TYPE_TIME = "Time"
TYPE_TIMESTAMP = "Timestamp"
VALID_TYPES = (TYPE_STRING, TYPE_UNIX, TYPE_DATE, TYPE_TIME, TYPE_TIMESTAMP)


@dataclass(frozen=True)
class Config:
    """What the translators need of the transformation's settings."""

    field: str
    type: str
    format: SimpleDateFormat | None


class TimestampTranslator:
    """One representation of an instant: to the raw instant, its schema, and from the raw instant."""

    @abstractmethod
    def to_raw(self, config: Config, orig: Any) -> datetime: ...

    @abstractmethod
    def type_schema(self) -> Schema: ...

    @abstractmethod
    def to_type(self, config: Config, orig: datetime) -> Any: ...


class _StringTranslator(TimestampTranslator):
    def to_raw(self, config: Config, orig: Any) -> datetime:
        if not isinstance(orig, str):
            raise DataException(f"Expected string timestamp to be a String, but found {type(orig).__name__}")
        try:
            return config.format.parse(orig)
        except ValueError as e:
            raise DataException(
                f"Could not parse timestamp: value ({orig}) does not match pattern ({config.format.pattern})"
            ) from e

    def type_schema(self) -> Schema:
        return STRING_SCHEMA

    def to_type(self, config: Config, orig: datetime) -> str:
        return config.format.format(orig)


class _UnixTranslator(TimestampTranslator):
    def to_raw(self, config: Config, orig: Any) -> datetime:
        if not isinstance(orig, int) or isinstance(orig, bool):
            raise DataException(f"Expected Unix timestamp to be a Long, but found {type(orig).__name__}")
        return Timestamp.to_logical(Timestamp.SCHEMA, orig)

    def type_schema(self) -> Schema:
        return INT64_SCHEMA

    def to_type(self, config: Config, orig: datetime) -> int:
        return Timestamp.from_logical(Timestamp.SCHEMA, orig)


class _DateTranslator(TimestampTranslator):
    def to_raw(self, config: Config, orig: Any) -> datetime:
        if not isinstance(orig, datetime):
            raise DataException(f"Expected Date to be a java.util.Date, but found {type(orig).__name__}")
        return orig  # a Connect Date is already an instant, one at midnight

    def type_schema(self) -> Schema:
        return Date.SCHEMA

    def to_type(self, config: Config, orig: datetime) -> datetime:
        return orig.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)


class _TimeTranslator(TimestampTranslator):
    def to_raw(self, config: Config, orig: Any) -> datetime:
        if not isinstance(orig, datetime):
            raise DataException(f"Expected Time to be a java.util.Date, but found {type(orig).__name__}")
        return orig  # a Connect Time is already an instant, one on 1970-01-01

    def type_schema(self) -> Schema:
        return Time.SCHEMA

    def to_type(self, config: Config, orig: datetime) -> datetime:
        orig = orig.astimezone(UTC)
        return datetime(
            1970, 1, 1, orig.hour, orig.minute, orig.second, orig.microsecond // 1000 * 1000, tzinfo=UTC
        )


class _TimestampTranslator(TimestampTranslator):
    def to_raw(self, config: Config, orig: Any) -> datetime:
        if not isinstance(orig, datetime):
            raise DataException(f"Expected Timestamp to be a java.util.Date, but found {type(orig).__name__}")
        return orig

    def type_schema(self) -> Schema:
        return Timestamp.SCHEMA

    def to_type(self, config: Config, orig: datetime) -> datetime:
        return orig


TRANSLATORS: dict[str, TimestampTranslator] = {
    TYPE_STRING: _StringTranslator(),
    TYPE_UNIX: _UnixTranslator(),
    TYPE_DATE: _DateTranslator(),
    TYPE_TIME: _TimeTranslator(),
    TYPE_TIMESTAMP: _TimestampTranslator(),
}


class TimestampConverter(Transformation[R], RecordPart[R]):
    OVERVIEW_DOC = (
        "Convert timestamps between different formats such as Unix epoch, strings, and Connect Date/Timestamp types."
        "Applies to individual fields or to the entire value."
        "<p/>Use the concrete transformation type designed for the record key "
        "(<code>org.apache.kafka.connect.transforms.TimestampConverter$Key</code>) or value "
        "(<code>org.apache.kafka.connect.transforms.TimestampConverter$Value</code>)."
    )

    CONFIG_DEF = (
        ConfigDef()
        .define(FIELD_CONFIG, ConfigType.STRING, FIELD_DEFAULT, importance=Importance.HIGH,
                doc="The field containing the timestamp, or empty if the entire value is a timestamp")
        .define(TARGET_TYPE_CONFIG, ConfigType.STRING, NO_DEFAULT_VALUE, importance=Importance.HIGH,
                doc="The desired timestamp representation: string, unix, Date, Time, or Timestamp")
        .define(FORMAT_CONFIG, ConfigType.STRING, FORMAT_DEFAULT, importance=Importance.MEDIUM,
                doc="A SimpleDateFormat-compatible format for the timestamp. Used to generate the output when "
                    "type=string or used to parse the input if the input is a string.")
    )  # fmt: skip

    def configure(self, configs: dict[str, Any]) -> None:
        simple_config = SimpleConfig(self.CONFIG_DEF, configs)
        field = simple_config.get_string(FIELD_CONFIG)
        type_ = simple_config.get_string(TARGET_TYPE_CONFIG)
        format_pattern = simple_config.get_string(FORMAT_CONFIG)
        self._schema_update_cache: LRUCache[Schema, Schema] | None = LRUCache(16)

        if type_ not in VALID_TYPES:
            raise ConfigException(
                f"Unknown timestamp type in TimestampConverter: {type_}. Valid values are {', '.join(VALID_TYPES)}."
            )
        if type_ == TYPE_STRING and not format_pattern.strip():
            raise ConfigException(
                "TimestampConverter requires format option to be specified when using string timestamps"
            )
        format_ = None
        if format_pattern is not None and format_pattern.strip():
            try:
                format_ = SimpleDateFormat(format_pattern)
            except ValueError:
                raise ConfigException(
                    "TimestampConverter requires a SimpleDateFormat-compatible pattern for string timestamps: "
                    + format_pattern
                ) from None
        self._config = Config(field, type_, format_)

    def apply(self, record: R) -> R:
        if self.operating_schema(record) is None:
            return self._apply_schemaless(record)
        return self._apply_with_schema(record)

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF

    def close(self) -> None:
        pass

    def _apply_with_schema(self, record: R) -> R:
        schema = self.operating_schema(record)
        if not self._config.field:
            value = self.operating_value(record)
            # The new schema is the target type's.
            updated_schema = TRANSLATORS[self._config.type].type_schema()
            return self.new_record(
                record, updated_schema, self._convert_timestamp(value, timestamp_type_from_schema(schema))
            )

        value = require_struct(self.operating_value(record), PURPOSE)
        updated_schema = self._schema_update_cache.get(value.schema)
        if updated_schema is None:
            builder = copy_schema_basics(schema, SchemaBuilder.struct())
            for field in schema.fields():
                if field.name == self._config.field:
                    builder.field(field.name, TRANSLATORS[self._config.type].type_schema())
                else:
                    builder.field(field.name, field.schema)
            if schema.optional:
                builder.optional()
            if schema.default_value is not None:
                # The builder's fields are complete, so the default struct can be built on its schema.
                builder.default_value(self._apply_value_with_schema(schema.default_value, builder.build()))
            updated_schema = builder.build()
            self._schema_update_cache.put(schema, updated_schema)

        return self.new_record(record, updated_schema, self._apply_value_with_schema(value, updated_schema))

    def _apply_value_with_schema(self, value: Struct, updated_schema: Schema) -> Struct:
        updated_value = Struct(updated_schema)
        for field in value.schema.fields():
            if field.name == self._config.field:
                updated_field_value = self._convert_timestamp(
                    value.get(field.name), timestamp_type_from_schema(field.schema)
                )
            else:
                updated_field_value = value.get(field.name)
            updated_value.put(field.name, updated_field_value)
        return updated_value

    def _apply_schemaless(self, record: R) -> R:
        if not self._config.field:
            return self.new_record(record, None, self._convert_timestamp(self.operating_value(record)))
        value = require_map(self.operating_value(record), PURPOSE)
        updated_value = dict(value)
        updated_value[self._config.field] = self._convert_timestamp(value.get(self._config.field))
        return self.new_record(record, None, updated_value)

    def _convert_timestamp(self, timestamp: Any, timestamp_format: str | None = None) -> Any:
        """``timestamp``, read as ``timestamp_format`` (or as its class suggests), in the target type."""
        if timestamp is None:
            return None
        if timestamp_format is None:
            timestamp_format = infer_timestamp_type(timestamp)
        source_translator = TRANSLATORS.get(timestamp_format)
        if source_translator is None:
            raise ConnectException("Unsupported timestamp type: " + timestamp_format)
        raw_timestamp = source_translator.to_raw(self._config, timestamp)
        return TRANSLATORS[self._config.type].to_type(self._config, raw_timestamp)


def timestamp_type_from_schema(schema: Schema) -> str:
    """The representation a schema says a timestamp has: a logical type by its name, else a string
    in the configured format, or a Unix time."""
    if schema.name == Timestamp.LOGICAL_NAME:
        return TYPE_TIMESTAMP
    if schema.name == Date.LOGICAL_NAME:
        return TYPE_DATE
    if schema.name == Time.LOGICAL_NAME:
        return TYPE_TIME
    if schema.type is Type.STRING:
        return TYPE_STRING
    if schema.type is Type.INT64:
        return TYPE_UNIX
    raise ConnectException(f"Schema {schema!r} does not correspond to a known timestamp type format")


def infer_timestamp_type(timestamp: Any) -> str:
    """The representation a schemaless timestamp has, by its class. Date, Time and Timestamp share
    one class, so an instant is taken for a Timestamp."""
    if isinstance(timestamp, datetime):
        return TYPE_TIMESTAMP
    if isinstance(timestamp, int) and not isinstance(timestamp, bool):
        return TYPE_UNIX
    if isinstance(timestamp, str):
        return TYPE_STRING
    raise DataException(
        f"TimestampConverter does not support {type(timestamp).__name__} objects as timestamps"
    )


class TimestampConverterKey(KeyPart[R], TimestampConverter[R]):
    """``TimestampConverter$Key``: converts the record's key, or a field of it."""


class TimestampConverterValue(ValuePart[R], TimestampConverter[R]):
    """``TimestampConverter$Value``: converts the record's value, or a field of it."""
