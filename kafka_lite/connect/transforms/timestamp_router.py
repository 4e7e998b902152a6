"""TimestampRouter: rename the record's topic after its timestamp (``logs`` to ``logs-20170103``).

Mirrors: org.apache.kafka.connect.transforms.TimestampRouter
         (connect/transforms/src/main/java/.../transforms/TimestampRouter.java, Kafka 0.11.0)
Book:    chapter 8, 8.3 (beyond the book: transformations came in Kafka 0.10.2, KIP-66)
Differs: the ``SimpleDateFormat`` is ``util/simple_date_format``'s subset of Java's, and a pattern
         it refuses is a ``ConfigException`` in ``configure``, where Kafka's fails on the first record.

Meant for sinks, which name their tables or indexes after the topic: with the defaults
(``topic.format=${topic}-${timestamp}``, ``timestamp.format=yyyyMMdd``) a search-index sink writes
each day's records to an index of that day, which can be dropped whole when it ages out. The
date is the record's timestamp in UTC; a record without a timestamp cannot be routed and is a
``DataException``.
"""

from __future__ import annotations

from typing import Any

from kafka_lite.common.config import ConfigDef, Importance, Type
from kafka_lite.common.errors import ConfigException
from kafka_lite.connect.data import timestamp as Timestamp
from kafka_lite.connect.errors import DataException
from kafka_lite.connect.transforms.transformation import R, Transformation
from kafka_lite.connect.transforms.util.simple_config import SimpleConfig
from kafka_lite.connect.transforms.util.simple_date_format import SimpleDateFormat


class ConfigName:
    TOPIC_FORMAT = "topic.format"
    TIMESTAMP_FORMAT = "timestamp.format"


class TimestampRouter(Transformation[R]):
    OVERVIEW_DOC = (
        "Update the record's topic field as a function of the original topic value and the record timestamp."
        "<p/>This is mainly useful for sink connectors, since the topic field is often used to determine the "
        "equivalent entity name in the destination system(e.g. database table or search index name)."
    )

    CONFIG_DEF = (
        ConfigDef()
        .define(ConfigName.TOPIC_FORMAT, Type.STRING, "${topic}-${timestamp}", importance=Importance.HIGH,
                doc="Format string which can contain <code>${topic}</code> and <code>${timestamp}</code> as "
                    "placeholders for the topic and timestamp, respectively.")
        .define(ConfigName.TIMESTAMP_FORMAT, Type.STRING, "yyyyMMdd", importance=Importance.HIGH,
                doc="Format string for the timestamp that is compatible with "
                    "<code>java.text.SimpleDateFormat</code>.")
    )  # fmt: skip

    def configure(self, props: dict[str, Any]) -> None:
        config = SimpleConfig(self.CONFIG_DEF, props)
        self._topic_format = config.get_string(ConfigName.TOPIC_FORMAT)
        timestamp_format_str = config.get_string(ConfigName.TIMESTAMP_FORMAT)
        # Kafka keeps one SimpleDateFormat per thread (it is not thread-safe); kafka_lite's keeps no state
        # between calls, and an instance serves one task's thread anyway.
        try:
            self._timestamp_format = SimpleDateFormat(timestamp_format_str)
        except ValueError as e:
            raise ConfigException(ConfigName.TIMESTAMP_FORMAT, timestamp_format_str, str(e)) from e

    def apply(self, record: R) -> R:
        timestamp = record.timestamp
        if timestamp is None:
            raise DataException(f"Timestamp missing on record: {record!r}")
        formatted_timestamp = self._timestamp_format.format(Timestamp.to_logical(Timestamp.SCHEMA, timestamp))
        updated_topic = self._topic_format.replace("${topic}", record.topic).replace(
            "${timestamp}", formatted_timestamp
        )
        return record.new_record(updated_topic, record.kafka_partition, record.key_schema, record.key,
                                 record.value_schema, record.value, record.timestamp)  # fmt: skip

    def close(self) -> None:
        self._timestamp_format = None

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF
