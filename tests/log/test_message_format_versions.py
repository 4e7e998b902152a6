"""A topic's ``message.format.version`` (Kafka 0.11): the log converts what a producer sends to the
topic's format on append, assigning offsets in that format, and every reader of the log (reads,
recovery, the cleaner) walks a log that holds v0/v1 message sets beside v2 batches.

The expected v0/v1 bytes are written out here field by field with ``struct`` and ``zlib``, not with
kafka_lite's encoder, so a test fails if the encoder and the format disagree."""

from __future__ import annotations

import gzip
import struct
import zlib

import pytest

from kafka_lite.common.config import ConfigException
from kafka_lite.common.errors import UnsupportedForMessageFormatException
from kafka_lite.common.record import CompressionType, FileRecords, MemoryRecords
from kafka_lite.common.record.constants import TimestampType
from kafka_lite.common.record.default_record_batch import DefaultRecordBatch
from kafka_lite.common.time import MockTime
from kafka_lite.log import log_config
from kafka_lite.log.log import Log
from kafka_lite.log.log_config import LogConfig
from kafka_lite.server.kafka_config import KafkaConfig
from kafka_lite.testing.logs import read_all

pytestmark = pytest.mark.unit
NOW = 1_500_000_000_000


def v1_message(offset: int, timestamp: int, key: bytes | None, value: bytes, attributes: int = 0) -> bytes:
    """One v1 log entry by hand: offset, size, crc, magic 1, attributes, timestamp, key, value."""
    key_field = struct.pack(">i", -1) if key is None else struct.pack(">i", len(key)) + key
    body = struct.pack(">bbq", 1, attributes, timestamp) + key_field + struct.pack(">i", len(value)) + value
    return struct.pack(">qiI", offset, 4 + len(body), zlib.crc32(body)) + body


def v0_message(offset: int, key: bytes, value: bytes) -> bytes:
    body = (
        struct.pack(">bb", 0, 0) + struct.pack(">i", len(key)) + key + struct.pack(">i", len(value)) + value
    )
    return struct.pack(">qiI", offset, 4 + len(body), zlib.crc32(body)) + body


def _log(tmp_path, version: str, **config) -> Log:
    return Log(
        tmp_path / "formats-0",
        LogConfig({"message.format.version": version, **config}),
        time=MockTime(start_ms=NOW),
    )


def _segment_bytes(log: Log) -> bytes:
    return b"".join(s.log.read_bytes() for s in log.log_segments())


def _v2(records, **kwargs) -> MemoryRecords:
    return MemoryRecords.with_records([(NOW + i, k, v) for i, (k, v) in enumerate(records)], **kwargs)


def test_v2_uncompressed_to_a_v1_topic_becomes_one_message_per_record_at_the_next_offsets(tmp_path):
    log = _log(tmp_path, "0.10.0")
    log.append(_v2([(b"a", b"1"), (b"b", b"2")]))
    info = log.append(_v2([(b"c", b"3")]))
    assert (info.first_offset, info.last_offset) == (2, 2)
    expected = (
        v1_message(0, NOW, b"a", b"1") + v1_message(1, NOW + 1, b"b", b"2") + v1_message(2, NOW, b"c", b"3")
    )
    assert _segment_bytes(log) == expected


def test_v2_gzip_to_a_v1_topic_becomes_one_wrapper_named_by_its_last_offset_with_relative_inner_offsets(
    tmp_path,
):
    log = _log(tmp_path, "0.10.0")
    log.append(_v2([(b"a", b"1"), (b"b", b"2")]))  # offsets 0 and 1
    info = log.append(_v2([(b"c", b"3"), (b"d", b"4"), (b"e", b"5")], compression=CompressionType.GZIP))
    assert (info.first_offset, info.last_offset) == (2, 4)
    data = _segment_bytes(log)[2 * len(v1_message(0, NOW, b"a", b"1")) :]
    offset, size, crc, magic, attributes, timestamp = struct.unpack_from(">qiIbbq", data)
    assert (offset, magic, attributes, timestamp) == (4, 1, 1, NOW + 2)  # last offset, gzip, max timestamp
    assert crc == zlib.crc32(data[16 : 12 + size]) and len(data) == 12 + size
    # offset 8, size 4, crc 4, magic 1, attributes 1, timestamp 8: the null key's length at byte 26
    key_length, value_length = struct.unpack_from(">ii", data, 26)
    assert key_length == -1 and 34 + value_length == len(data)
    inner = gzip.decompress(data[34:])
    assert inner == (
        v1_message(0, NOW, b"c", b"3")
        + v1_message(1, NOW + 1, b"d", b"4")
        + v1_message(2, NOW + 2, b"e", b"5")
    )
    assert [(r.offset, r.value) for r in read_all(log)][2:] == [(2, b"3"), (3, b"4"), (4, b"5")]


def test_v2_to_a_v0_topic_drops_the_timestamps_and_it_cannot_be_searched_by_time(tmp_path):
    log = _log(tmp_path, "0.9.0")
    log.append(_v2([(b"a", b"1"), (b"b", b"2")]))
    assert _segment_bytes(log) == v0_message(0, b"a", b"1") + v0_message(1, b"b", b"2")
    with pytest.raises(
        UnsupportedForMessageFormatException, match=r"earlier than the minimum required version 0\.10\.0-IV0"
    ):
        log.fetch_offset_by_timestamp(NOW)
    assert log.fetch_offset_by_timestamp(-2) == (-1, 0)  # the earliest and latest need no timestamps


def test_a_v1_message_set_to_a_v2_topic_becomes_one_batch_at_the_log_end(tmp_path):
    log = _log(tmp_path, "0.11.0")
    log.append(_v2([(b"x", b"0"), (b"y", b"0"), (b"z", b"0")]))  # offsets 0-2
    sent = v1_message(0, NOW + 7, b"a", b"1") + v1_message(1, NOW + 9, b"b", b"2")  # the producer's offsets
    info = log.append(MemoryRecords(bytearray(sent)))
    assert (info.first_offset, info.last_offset, info.max_timestamp) == (3, 4, NOW + 9)
    data = _segment_bytes(log)
    first_size = struct.unpack_from(">i", data, 8)[0] + 12
    batch = DefaultRecordBatch(data[first_size:])
    assert (batch.magic, batch.base_offset, batch.last_offset_delta, batch.max_timestamp) == (
        2,
        3,
        1,
        NOW + 9,
    )
    assert batch.producer_id == -1 and batch.timestamp_type == TimestampType.CREATE_TIME
    assert [(r.offset, r.timestamp, r.key, r.value) for r in batch] == [
        (3, NOW + 7, b"a", b"1"),
        (4, NOW + 9, b"b", b"2"),
    ]


def v1_wrapper(offset: int, inner: bytes, timestamp: int, attributes: int = 1) -> bytes:
    """A gzip v1 wrapper by hand: a null key, the compressed inner set as its value."""
    value = gzip.compress(inner, mtime=0)
    body = struct.pack(">bbqi", 1, attributes, timestamp, -1) + struct.pack(">i", len(value)) + value
    return struct.pack(">qiI", offset, 4 + len(body), zlib.crc32(body)) + body


def test_a_v1_message_set_to_a_v1_topic_keeps_its_bytes_and_gets_offsets_in_place(tmp_path):
    log = _log(tmp_path, "0.10.0")
    log.append(_v2([(b"x", b"0")]))  # offset 0
    plain = v1_message(7, NOW, b"a", b"1") + v1_message(8, NOW + 1, b"b", b"2")  # the producer's offsets
    inner = v1_message(0, NOW + 2, b"c", b"3") + v1_message(1, NOW + 3, b"d", b"4")
    wrapper = v1_wrapper(1, inner, NOW + 3)
    assert log.append(MemoryRecords(bytearray(plain))).last_offset == 2
    info = log.append(MemoryRecords(bytearray(wrapper)))
    assert (info.first_offset, info.last_offset, info.max_timestamp, info.offset_of_max_timestamp) == (
        3,
        4,
        NOW + 3,
        4,
    )
    written = _segment_bytes(log)[len(v1_message(0, NOW, b"x", b"0")) :]
    # only the offsets changed (they are outside the CRC); the wrapper's compressed bytes are the sender's
    expected_plain = v1_message(1, NOW, b"a", b"1") + v1_message(2, NOW + 1, b"b", b"2")
    assert written == expected_plain + struct.pack(">q", 4) + wrapper[8:]


def test_a_v1_wrapper_whose_inner_offsets_do_not_start_at_0_is_rebuilt(tmp_path):
    log = _log(tmp_path, "0.10.0")
    inner = v1_message(5, NOW, b"c", b"3") + v1_message(6, NOW + 1, b"d", b"4")
    log.append(MemoryRecords(bytearray(v1_wrapper(6, inner, NOW + 1))))
    data = _segment_bytes(log)
    assert struct.unpack_from(">q", data)[0] == 1  # the wrapper: its last offset
    assert gzip.decompress(data[34:]) == v1_message(0, NOW, b"c", b"3") + v1_message(1, NOW + 1, b"d", b"4")


def test_log_append_time_in_a_v1_topic_stamps_a_v1_message_in_place(tmp_path):
    log = _log(tmp_path, "0.10.0", **{"message.timestamp.type": "LogAppendTime"})
    log.append(MemoryRecords(bytearray(v1_message(9, 1_000, b"a", b"1"))))
    assert _segment_bytes(log) == v1_message(0, NOW, b"a", b"1", attributes=0x08)  # CRC redone by hand


def test_log_append_time_in_a_v1_topic_stamps_the_wrapper(tmp_path):
    log = _log(tmp_path, "0.10.0", **{"message.timestamp.type": "LogAppendTime"})
    log.append(_v2([(b"a", b"1"), (b"b", b"2")], compression=CompressionType.GZIP))
    data = _segment_bytes(log)
    offset, _, _, magic, attributes, timestamp = struct.unpack_from(">qiIbbq", data)
    assert (offset, magic, attributes, timestamp) == (1, 1, 1 | 0x08, NOW)  # bit 3: LogAppendTime
    assert [r.timestamp for r in read_all(log)] == [NOW, NOW]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"producer_id": 7, "producer_epoch": 0, "base_sequence": 0},
            "Idempotent records cannot be used with magic version 1",
        ),
        (
            {"producer_id": 7, "producer_epoch": 0, "base_sequence": 0, "is_transactional": True},
            "Transactional records cannot be used with magic version 1",
        ),
    ],
)
def test_an_idempotent_or_transactional_batch_to_a_v1_topic_is_refused(tmp_path, kwargs, message):
    log = _log(tmp_path, "0.10.0")
    with pytest.raises(UnsupportedForMessageFormatException, match=message):
        log.append(_v2([(b"a", b"1")], **kwargs))
    assert log.log_end_offset == 0 and _segment_bytes(log) == b""


def _mixed_log(tmp_path, **config) -> Log:
    """v2, then v1 (plain and gzip), then v2 again: a topic whose format went 0.11.0 -> 0.10.0 -> 0.11.0."""
    log = _log(tmp_path, "0.11.0", **config)
    log.append(_v2([(b"k1", b"a"), (b"k2", b"b")]))
    log.config = LogConfig({**log.config.values, "message.format.version": "0.10.0"})
    log.append(_v2([(b"k1", b"c")]))
    log.append(_v2([(b"k2", b"d"), (b"k3", b"e")], compression=CompressionType.GZIP))
    log.config = LogConfig({**log.config.values, "message.format.version": "0.11.0"})
    log.append(_v2([(b"k1", b"f")], compression=CompressionType.GZIP))
    return log


def _magics(log: Log) -> list[tuple[int, int]]:
    records = FileRecords.open(log.active_segment.log.path, mutable=False)
    try:
        return [(batch.magic, batch.last_offset) for _, batch in records.batches()]
    finally:
        records.close()


def test_a_mixed_log_reads_recovers_and_compacts_in_each_entrys_own_format(tmp_path):
    log = _mixed_log(tmp_path, **{"index.interval.bytes": 1, "cleanup.policy": "compact"})
    assert _magics(log) == [(2, 1), (1, 2), (1, 4), (2, 5)]
    values = [(r.offset, r.value) for r in read_all(log)]
    assert values == [(0, b"a"), (1, b"b"), (2, b"c"), (3, b"d"), (4, b"e"), (5, b"f")]
    # a read from inside the v1 wrapper starts at the wrapper (offsets 3-4), as Kafka's does
    inside = MemoryRecords(log.read(3, 10_000).records.read_bytes())
    assert [(b.magic, b.last_offset) for b in inside.batches()] == [(1, 4), (2, 5)]
    assert log.fetch_offset_by_timestamp(NOW + 1) == (NOW + 1, 1)
    # a follower copies the leader's entries as they are, whatever its own topic config says
    follower = Log(tmp_path / "follower" / "formats-0", LogConfig(), time=MockTime(start_ms=NOW))
    follower.append(MemoryRecords(log.read(0, 10_000).records.read_bytes()), assign_offsets=False)
    assert _segment_bytes(follower) == _segment_bytes(log)
    # recovery: indexes rebuilt from a log of both families
    log.close()
    for index in tmp_path.glob("formats-0/*.index"):
        index.unlink()
    reopened = Log(tmp_path / "formats-0", log.config, time=MockTime(start_ms=NOW))
    assert [(r.offset, r.value) for r in read_all(reopened)] == values
    assert reopened.log_end_offset == 6
    assert MemoryRecords(reopened.read(4, 10_000).records.read_bytes()).records().__next__().offset == 3


def test_the_cleaner_keeps_each_entrys_format(tmp_path):
    from tests.log.test_log_manager_and_cleaner import _manager

    time = MockTime(start_ms=NOW)
    manager, _ = _manager([tmp_path], time, cleanup_policy="compact", min_cleanable_dirty_ratio=0.01)
    log = manager.create_log(("formats", 0))
    log.config = LogConfig({**log.config.values, "message.format.version": "0.10.0"})
    log.append(_v2([(b"k1", b"a"), (b"k2", b"b"), (b"k1", b"c")], compression=CompressionType.GZIP))
    log.append(_v2([(b"k3", b"d")]))
    log.config = LogConfig({**log.config.values, "message.format.version": "0.11.0"})
    log.roll()
    log.append(_v2([(b"k3", b"e")]))
    log.roll()
    assert manager.cleaner.clean_once() is not None
    kept = [
        (b.magic, [(r.offset, r.key, r.value) for r in b])
        for s in log.log_segments()
        for _, b in s.log.batches()
    ]
    # the wrapper lost k1=a: its survivors are v1 messages at their own offsets; k3=d is gone
    assert kept == [(1, [(1, b"k2", b"b")]), (1, [(2, b"k1", b"c")]), (2, [(4, b"k3", b"e")])]


def test_a_bad_message_format_version_is_refused_naming_the_setting():
    with pytest.raises(
        ConfigException, match=r"configuration message\.format\.version: Version `0\.12` is not"
    ):
        log_config.validate({"message.format.version": "0.12"})
    assert (
        LogConfig({"message.format.version": "0.10.0-IV1"}).message_format_version.message_format_version == 1
    )
    base = {"zookeeper.connect": "localhost:2181", "broker.id": 0}
    with pytest.raises(
        ConfigException, match=r"log\.message\.format\.version 0\.11\.0 cannot be used when inter"
    ):
        KafkaConfig(
            {**base, "inter.broker.protocol.version": "0.10.2", "log.message.format.version": "0.11.0"}
        )
    # unset, it follows the protocol version, and every topic's default follows it
    older = KafkaConfig({**base, "inter.broker.protocol.version": "0.10.2"})
    assert LogConfig.from_broker(older.log_config_props()).message_format_version.message_format_version == 1
