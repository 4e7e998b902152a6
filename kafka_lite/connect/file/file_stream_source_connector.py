"""The file source connector: one task that tails a file into a topic, line by line.

Mirrors: org.apache.kafka.connect.file.FileStreamSourceConnector
         (connect/file/src/main/java/org/apache/kafka/connect/file/FileStreamSourceConnector.java, Kafka 0.10.1)
Book:    chapter 8, 8.3
Differs: ``file`` is required (Kafka reads standard input without one).

One file is one stream of records, so however large ``tasks.max`` is, there is one task.
"""

from __future__ import annotations

from kafka_lite.common.config import ConfigDef, Importance, Type
from kafka_lite.connect.errors import ConnectException
from kafka_lite.connect.file.file_stream_source_task import FileStreamSourceTask
from kafka_lite.connect.source.source_connector import SourceConnector

TOPIC_CONFIG = "topic"
FILE_CONFIG = "file"

CONFIG_DEF = (
    ConfigDef()
    .define(FILE_CONFIG, Type.STRING, importance=Importance.HIGH, doc="Source filename.")
    .define(TOPIC_CONFIG, Type.STRING, importance=Importance.HIGH, doc="The topic to publish data to")
)


class FileStreamSourceConnector(SourceConnector):
    def __init__(self) -> None:
        super().__init__()
        self.filename: str | None = None
        self.topic: str | None = None

    def version(self) -> str:
        return "0.10.1.0"

    def start(self, props: dict[str, str]) -> None:
        self.filename = props.get(FILE_CONFIG)
        self.topic = props.get(TOPIC_CONFIG)
        if not self.topic:
            raise ConnectException("FileStreamSourceConnector configuration must include 'topic' setting")
        if "," in self.topic:
            raise ConnectException(
                "FileStreamSourceConnector should only have a single topic when used as a source."
            )

    def task_class(self) -> type:
        return FileStreamSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        # Only one input stream makes sense.
        config = {TOPIC_CONFIG: self.topic}
        if self.filename is not None:
            config[FILE_CONFIG] = self.filename
        return [config]

    def stop(self) -> None:
        pass  # nothing to do: the task holds the file

    def config(self) -> ConfigDef:
        return CONFIG_DEF
