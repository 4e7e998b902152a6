"""Kafka's file connectors, without a worker: lines and their offsets, resuming, appending."""

from __future__ import annotations

import pytest

from kafka_lite.common.config import ConfigDef
from kafka_lite.connect.errors import ConnectException
from kafka_lite.connect.file.file_stream_sink_task import FileStreamSinkTask
from kafka_lite.connect.file.file_stream_source_connector import FileStreamSourceConnector
from kafka_lite.connect.file.file_stream_source_task import FileStreamSourceTask
from kafka_lite.connect.runtime.connector_factory import connector_class, new_converter
from kafka_lite.connect.sink.sink_record import SinkRecord
from kafka_lite.connect.source.source_task import SourceTaskContext
from kafka_lite.connect.storage.offset_storage_reader import OffsetStorageReader, frozen_partition

pytestmark = pytest.mark.unit


class StoredOffsets(OffsetStorageReader, SourceTaskContext):
    """A context whose reader answers from a dict: what the worker's offset store would hold."""

    def __init__(self, offsets: dict) -> None:
        self.stored = offsets

    def offsets(self, partitions):
        return {frozen_partition(p): self.stored[frozen_partition(p)] for p in partitions
                if frozen_partition(p) in self.stored}  # fmt: skip

    def offset_storage_reader(self):
        return self


def source_task(path, offsets=None) -> FileStreamSourceTask:
    task = FileStreamSourceTask()
    task.initialize(StoredOffsets(offsets or {}))
    task.start({"file": str(path), "topic": "lines"})
    return task


def test_each_line_is_a_record_whose_offset_is_the_position_after_it(tmp_path):
    path = tmp_path / "in.txt"
    path.write_bytes(b"one\r\ntwo\nthr\xc3\xa9e\rfour")
    task = source_task(path)
    records = task.poll()
    assert [r.value for r in records] == ["one", "two", "thrée"]
    assert [r.source_offset for r in records] == [{"position": 5}, {"position": 9}, {"position": 16}]
    assert records[0].source_partition == {"filename": str(path)}
    assert records[0].topic == "lines" and records[0].value_schema.type.value == "string"
    with path.open("ab") as f:
        f.write(b"\n")  # "four" is complete only now
    assert [(r.value, r.source_offset) for r in task.poll()] == [("four", {"position": 21})]
    task.stop()


def test_a_restarted_task_resumes_at_the_committed_position(tmp_path):
    path = tmp_path / "in.txt"
    path.write_text("one\ntwo\nthree\n")
    task = source_task(path, {frozen_partition({"filename": str(path)}): {"position": 4}})
    assert [r.value for r in task.poll()] == ["two", "three"]
    task.stop()


def test_a_stopped_task_does_not_wait_out_its_poll(tmp_path):
    task = source_task(tmp_path / "missing.txt")
    task.stop()
    assert task.poll() is None  # returns at once: stop() ended the wait for the file


def test_the_sink_appends_each_value_as_a_line(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text("earlier\n")
    task = FileStreamSinkTask()
    task.start({"file": str(path)})
    task.put([SinkRecord("t", 0, None, None, None, v, i) for i, v in enumerate(["a", 1, None, True])])
    task.flush({})
    task.stop()
    assert path.read_text() == "earlier\na\n1\nnull\ntrue\n"


def test_kafkas_class_names_and_aliases_are_ours():
    for name in ("org.apache.kafka.connect.file.FileStreamSourceConnector", "FileStreamSourceConnector",
                 "FileStreamSource"):  # fmt: skip
        assert connector_class(name) is FileStreamSourceConnector
    assert type(new_converter("org.apache.kafka.connect.json.JsonConverter")).__name__ == "JsonConverter"
    with pytest.raises(
        ConnectException, match=r"matches FileSource; known connectors: FileStreamSinkConnector"
    ):
        connector_class("FileSource")


def test_a_connector_defines_its_settings():
    assert isinstance(FileStreamSourceConnector().config(), ConfigDef)
