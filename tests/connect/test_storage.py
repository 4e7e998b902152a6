"""Offsets through the writer into the file store and back through the reader; converters."""

from __future__ import annotations

import json

import pytest

from kafka_lite.connect.converters.byte_array_converter import ByteArrayConverter
from kafka_lite.connect.data.schema import OPTIONAL_STRING_SCHEMA, STRING_SCHEMA
from kafka_lite.connect.errors import DataException
from kafka_lite.connect.json.json_converter import JsonConverter
from kafka_lite.connect.storage.file_offset_backing_store import FileOffsetBackingStore
from kafka_lite.connect.storage.offset_storage_reader import OffsetStorageReaderImpl
from kafka_lite.connect.storage.offset_storage_writer import OffsetStorageWriter
from kafka_lite.connect.storage.string_converter import StringConverter

pytestmark = pytest.mark.unit


def internal_converter() -> JsonConverter:
    c = JsonConverter()
    c.configure({"schemas.enable": "false"}, False)
    return c


def file_store(path) -> FileOffsetBackingStore:
    store = FileOffsetBackingStore()
    store.configure({"offset.storage.file.filename": str(path)})
    store.start()
    return store


def test_offsets_written_by_one_worker_are_read_by_the_next(tmp_path):
    path = tmp_path / "connect.offsets"
    store = file_store(path)
    writer = OffsetStorageWriter(store, "local-file-source", internal_converter(), internal_converter())
    writer.offset({"filename": "test.txt"}, {"position": 12})
    writer.offset({"filename": "test.txt"}, {"position": 30})  # the latest offset of a partition wins
    assert writer.begin_flush()
    writer.do_flush(lambda error, result: None).result(5)
    store.stop()
    # Kafka's key is [namespace, partition] and its value the offset, both as schemaless JSON.
    assert json.loads(path.read_text()) == {
        '["local-file-source",{"filename":"test.txt"}]': '{"position":30}'
    }
    assert not (tmp_path / "connect.offsets.tmp").exists()

    store = file_store(path)
    reader = OffsetStorageReaderImpl(store, "local-file-source", internal_converter(), internal_converter())
    assert reader.offset({"filename": "test.txt"}) == {"position": 30}
    assert reader.offset({"filename": "other.txt"}) is None
    other = OffsetStorageReaderImpl(store, "another-connector", internal_converter(), internal_converter())
    assert other.offset({"filename": "test.txt"}) is None  # offsets are per connector
    store.stop()


def test_a_cancelled_flush_keeps_its_offsets_under_newer_ones(tmp_path):
    store = file_store(tmp_path / "offsets")
    writer = OffsetStorageWriter(store, "c", internal_converter(), internal_converter())
    writer.offset({"p": 1}, {"o": 1})
    writer.offset({"p": 2}, {"o": 1})
    assert writer.begin_flush()
    writer.offset({"p": 1}, {"o": 2})  # sent while the producer was being flushed
    writer.cancel_flush()
    assert {k: v[1] for k, v in writer.data.items()} == {(("p", 1),): {"o": 2}, (("p", 2),): {"o": 1}}
    # The offsets the cancelled flush held are written by the next flush, under the newer ones.
    assert writer.begin_flush() is True
    assert {k: v[1] for k, v in writer.to_flush.items()} == {(("p", 1),): {"o": 2}, (("p", 2),): {"o": 1}}
    assert writer.data == {}
    store.stop()


def test_nothing_to_flush_is_not_a_flush(tmp_path):
    store = file_store(tmp_path / "offsets")
    writer = OffsetStorageWriter(store, "c", internal_converter(), internal_converter())
    assert not writer.begin_flush()
    store.stop()


def test_string_and_byte_array_converters():
    s = StringConverter()
    s.configure({}, False)
    assert s.from_connect_data("t", STRING_SCHEMA, "héllo") == "héllo".encode()
    assert s.from_connect_data("t", None, 42) == b"42"
    assert s.to_connect_data("t", b"abc") == (OPTIONAL_STRING_SCHEMA, "abc")
    b = ByteArrayConverter()
    assert b.from_connect_data("t", None, b"\x00\x01") == b"\x00\x01"
    assert b.to_connect_data("t", b"\x00").value == b"\x00"
    with pytest.raises(DataException, match="Invalid schema type for ByteArrayConverter: STRING"):
        b.from_connect_data("t", STRING_SCHEMA, "x")
