"""One checkpoint format for the broker and Streams: what one side writes the other reads, byte for
byte as Kafka's ``OffsetCheckpoint`` (core's and streams') writes it, and Streams reaches it without
importing the broker."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from kafka_lite.common.checkpoint_file import CheckpointException
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.log.checkpoint import read_checkpoint, write_checkpoint
from kafka_lite.streams.state.internals import offset_checkpoint
from kafka_lite.streams.state.internals.offset_checkpoint import OffsetCheckpoint

pytestmark = pytest.mark.unit

KAFKA_FILE = "0\n2\napp-counts-changelog 1 7\napp-counts-changelog 3 1500\n"


def test_streams_writes_the_bytes_kafka_writes_and_the_broker_reads_them(tmp_path):
    path = tmp_path / ".checkpoint"
    OffsetCheckpoint(path).write(
        {TopicPartition("app-counts-changelog", 3): 1500, TopicPartition("app-counts-changelog", 1): 7}
    )
    assert path.read_text() == KAFKA_FILE
    assert read_checkpoint(path) == {("app-counts-changelog", 1): 7, ("app-counts-changelog", 3): 1500}


def test_the_broker_writes_what_streams_reads(tmp_path):
    path = tmp_path / "recovery-point-offset-checkpoint"
    write_checkpoint(path, {("app-counts-changelog", 3): 1500, ("app-counts-changelog", 1): 7})
    assert path.read_text() == KAFKA_FILE
    assert OffsetCheckpoint(path).read() == {
        TopicPartition("app-counts-changelog", 1): 7,
        TopicPartition("app-counts-changelog", 3): 1500,
    }


def test_both_sides_raise_the_one_checkpoint_exception(tmp_path):
    path = tmp_path / ".checkpoint"
    path.write_text("0\n1\nonly-two 1\n")
    with pytest.raises(CheckpointException, match=r"\.checkpoint:3: expected 'topic partition offset'"):
        OffsetCheckpoint(path).read()
    with pytest.raises(CheckpointException, match=r"\.checkpoint:3: expected 'topic partition offset'"):
        read_checkpoint(path)


def test_streams_offset_checkpoint_imports_nothing_of_the_broker():
    tree = ast.parse(Path(offset_checkpoint.__file__).read_text())
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    imported |= {
        alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names
    }
    assert "kafka_lite.common.checkpoint_file" in imported
    broker = ("kafka_lite.log", "kafka_lite.server")
    assert not [name for name in imported if name.startswith(broker)], imported
