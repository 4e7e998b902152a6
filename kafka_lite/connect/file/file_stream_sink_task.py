"""The file sink task: each record's value appended to the file as a line, flushed before a commit.

Mirrors: org.apache.kafka.connect.file.FileStreamSinkTask
         (connect/file/src/main/java/org/apache/kafka/connect/file/FileStreamSinkTask.java, Kafka 0.10.1)
Book:    chapter 8, 8.3
Differs: no standard output; ``flush`` also ``fsync`` s the file, so that the offsets committed
         after it never cover lines a power cut could lose.

A value is written as Java's ``String.valueOf`` would print it for strings and numbers (a
``Struct`` or map by its Python ``str``): the sink is for looking at data, not for round trips.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from typing import IO

from kafka_lite.connect.errors import ConnectException
from kafka_lite.connect.sink.sink_record import SinkRecord
from kafka_lite.connect.sink.sink_task import SinkTask


class FileStreamSinkTask(SinkTask):
    def __init__(self) -> None:
        super().__init__()
        self.filename: str | None = None
        self.output_stream: IO[str] | None = None

    def version(self) -> str:
        return "0.10.1.0"

    def start(self, props: dict[str, str]) -> None:
        self.filename = props.get("file")
        if not self.filename:
            raise ConnectException("FileStreamSinkTask config missing file setting")
        try:
            # Appending: a restarted task adds to what an earlier one wrote, as Kafka's does.
            self.output_stream = open(self.filename, "a", encoding="utf-8")
        except OSError as e:
            raise ConnectException(f"Couldn't find or create file for FileStreamSinkTask: {e}") from e

    def put(self, records: Collection[SinkRecord]) -> None:
        for record in records:
            self.output_stream.write(_value_of(record.value) + "\n")
        # To the operating system at once, as Kafka's unbuffered PrintStream writes each line: a
        # reader of the file (``tail -f``) sees the records when the task does. Durable at flush().
        self.output_stream.flush()

    def flush(self, offsets) -> None:
        self.output_stream.flush()
        os.fsync(self.output_stream.fileno())

    def stop(self) -> None:
        if self.output_stream is not None:
            self.output_stream.close()


def _value_of(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
