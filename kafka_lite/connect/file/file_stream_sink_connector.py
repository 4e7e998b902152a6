"""The file sink connector: one task that appends every record's value to a file, a line each.

Mirrors: org.apache.kafka.connect.file.FileStreamSinkConnector
         (connect/file/src/main/java/org/apache/kafka/connect/file/FileStreamSinkConnector.java, Kafka 0.10.1)
Book:    chapter 8, 8.3
Differs: ``file`` is required (Kafka writes to standard output without one).

Kafka's sink connector, like its source, runs a single task however large ``tasks.max`` is: one
file, one writer. The topics come from the ``topics`` setting, which the worker handles.
"""

from __future__ import annotations

from kafka_lite.common.config import ConfigDef, Importance, Type
from kafka_lite.connect.file.file_stream_sink_task import FileStreamSinkTask
from kafka_lite.connect.sink.sink_connector import SinkConnector

FILE_CONFIG = "file"

CONFIG_DEF = ConfigDef().define(
    FILE_CONFIG, Type.STRING, importance=Importance.HIGH, doc="Destination filename."
)


class FileStreamSinkConnector(SinkConnector):
    def __init__(self) -> None:
        super().__init__()
        self.filename: str | None = None

    def version(self) -> str:
        return "0.10.1.0"

    def start(self, props: dict[str, str]) -> None:
        self.filename = props.get(FILE_CONFIG)

    def task_class(self) -> type:
        return FileStreamSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{FILE_CONFIG: self.filename}] if self.filename is not None else [{}]

    def stop(self) -> None:
        pass

    def config(self) -> ConfigDef:
        return CONFIG_DEF
