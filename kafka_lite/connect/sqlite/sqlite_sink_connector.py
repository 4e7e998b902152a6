"""The SQLite sink connector: records of Kafka topics written as rows of SQLite tables.

No Kafka twin: it plays the part of Confluent's JDBC sink connector (``JdbcSinkConnector``, not
         part of Apache Kafka) on SQLite; Kafka's own example sink is ``FileStreamSinkConnector``.
Book:    chapter 8, 8.3
Differs: one task, whatever ``tasks.max`` says: SQLite has one writer at a time, so more tasks
         would only wait for each other's locks.

The connector only checks its settings and hands them to its task; the worker subscribes the
task's consumer to ``topics`` and converts each record's bytes with the value converter. Which
converter matters here: the table's columns come from the value's schema, so the records must
carry one (``value.converter=org.apache.kafka.connect.json.JsonConverter`` with
``value.converter.schemas.enable=true``).
"""

from __future__ import annotations

from kafka_lite.common.config import ConfigDef
from kafka_lite.connect.sink.sink_connector import SinkConnector
from kafka_lite.connect.sqlite.sqlite_sink_config import CONFIG_DEF
from kafka_lite.connect.sqlite.sqlite_sink_task import SqliteSinkTask


class SqliteSinkConnector(SinkConnector):
    def __init__(self) -> None:
        super().__init__()
        self.config_props: dict[str, str] = {}

    def version(self) -> str:
        return "0.10.1.0"

    def start(self, props: dict[str, str]) -> None:
        CONFIG_DEF.parse(props, allow_unknown=True)  # a bad setting fails the connector, naming it
        self.config_props = dict(props)

    def task_class(self) -> type:
        return SqliteSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.config_props)]

    def stop(self) -> None:
        pass  # the task holds the connection

    def config(self) -> ConfigDef:
        return CONFIG_DEF
