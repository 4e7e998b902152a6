"""A connector's settings as the worker reads them: its name, class, task count and converters.

Mirrors: org.apache.kafka.connect.runtime.ConnectorConfig, SinkConnectorConfig and TaskConfig
         (connect/runtime/src/main/java/org/apache/kafka/connect/runtime/ConnectorConfig.java, Kafka 0.10.1)
Book:    chapter 8, 8.3
Differs: a sink connector without ``topics`` is refused here, when its config is read, rather
         than when its first task starts.

Everything else in a connector's properties file is the connector's own business (``file``,
``topic``): the worker passes the whole map to ``Connector.start``.
"""

from __future__ import annotations

from typing import Any

from kafka_lite.common.config import AbstractConfig, ConfigDef, Importance, Range, Type

NAME_CONFIG = "name"
CONNECTOR_CLASS_CONFIG = "connector.class"
TASKS_MAX_CONFIG = "tasks.max"
KEY_CONVERTER_CLASS_CONFIG = "key.converter"
VALUE_CONVERTER_CLASS_CONFIG = "value.converter"
TOPICS_CONFIG = "topics"
TASK_CLASS_CONFIG = "task.class"

CONNECTOR_CONFIG_DEF = (
    ConfigDef()
    .define(NAME_CONFIG, Type.STRING, importance=Importance.HIGH,
            doc="Globally unique name to use for this connector.")
    .define(CONNECTOR_CLASS_CONFIG, Type.STRING, importance=Importance.HIGH,
            doc="Name or alias of the class for this connector: the full name "
                "(org.apache.kafka.connect.file.FileStreamSinkConnector), the simple name "
                "(FileStreamSinkConnector) or the simple name without Connector (FileStreamSink).")
    .define(TASKS_MAX_CONFIG, Type.INT, 1, Range.at_least(1), Importance.HIGH,
            "Maximum number of tasks to use for this connector.")
    .define(KEY_CONVERTER_CLASS_CONFIG, Type.STRING, None, None, Importance.LOW,
            "Converter class for this connector's keys, instead of the worker's.")
    .define(VALUE_CONVERTER_CLASS_CONFIG, Type.STRING, None, None, Importance.LOW,
            "Converter class for this connector's values, instead of the worker's.")
)  # fmt: skip

SINK_CONNECTOR_CONFIG_DEF = ConfigDef()
SINK_CONNECTOR_CONFIG_DEF.keys.update(CONNECTOR_CONFIG_DEF.keys)
SINK_CONNECTOR_CONFIG_DEF.define(TOPICS_CONFIG, Type.LIST, importance=Importance.HIGH,
                                 doc="The topics to consume from, comma-separated.")  # fmt: skip


class ConnectorConfig(AbstractConfig):
    CONFIG_DEF = CONNECTOR_CONFIG_DEF

    def __init__(self, props: dict[str, Any]) -> None:
        super().__init__(self.CONFIG_DEF, props)


class SinkConnectorConfig(ConnectorConfig):
    CONFIG_DEF = SINK_CONNECTOR_CONFIG_DEF
