"""kafka-lite dump-log: dumps logs and indexes, checks them against each other, and reports damage in one line."""

from __future__ import annotations

import struct

import pytest
from kafka.record.default_records import DefaultRecordBatchBuilder

from kafka_lite.cli.main import main
from kafka_lite.common.record import CompressionType, MemoryRecords
from kafka_lite.common.record.crc import crc32c
from kafka_lite.common.record.default_record_batch import ATTRIBUTES_OFFSET, CRC_OFFSET, RECORD_BATCH_OVERHEAD
from kafka_lite.common.time import MockTime
from kafka_lite.log.log import Log
from kafka_lite.log.log_config import LogConfig
from kafka_lite.testing.logs import read_all

pytestmark = pytest.mark.unit
BASE_TS = 1_500_000_000_000


@pytest.fixture
def segment_dir(tmp_path):
    log = Log(tmp_path / "t-0", LogConfig(index_interval_bytes=300), time=MockTime())
    for b in range(12):
        codec = list(CompressionType)[b % 5]
        log.append(
            MemoryRecords.with_records(
                [(BASE_TS + b * 10 + i, b"k", b"v" * 40) for i in range(5)], compression=codec
            )
        )
    log.close()
    return tmp_path / "t-0"


def _run(capsys, *args) -> tuple[int, str, str]:
    code = main(["dump-log", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def test_dumps_log_index_and_time_index(segment_dir, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")
    base = segment_dir / "00000000000000000000"
    code, out, _ = _run(capsys, f"{base}.log", f"{base}.index", f"{base}.timeindex")
    assert code == 0
    assert out.count("baseOffset:") == 12 and "compresscodec: ZSTD" in out and "isvalid: true" in out
    # Every entry of both index files, read here with their formats (base offset 0: relative offsets
    # are the offsets), is a line of the dump.
    index = (segment_dir / "00000000000000000000.index").read_bytes()
    time_index = (segment_dir / "00000000000000000000.timeindex").read_bytes()
    expected = [f"offset: {o} position: {p}" for o, p in struct.iter_unpack(">ii", index)]
    expected += [f"timestamp: {t} offset: {o}" for t, o in struct.iter_unpack(">qi", time_index)]
    assert len(expected) >= 4, "the fixture's small index interval makes several entries in each file"
    lines = out.splitlines()
    assert [line for line in expected if line not in lines] == []
    code, out, _ = _run(capsys, "--deep", "--print-data-log", f"{base}.log")
    assert out.count("| offset:") == 60 and "payload: vvvv" in out


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        ("flip", "is corrupt: stored crc"),
        ("cut", "is cut"),
        ("empty", "is empty"),
        ("garbage", "unknown magic"),
    ],
)
def test_damaged_files_exit_non_zero_with_one_line(segment_dir, capsys, damage, reason):
    path = segment_dir / "00000000000000000000.log"
    data = bytearray(path.read_bytes())
    if damage == "flip":
        data[500] ^= 0xFF
    elif damage == "cut":
        data = data[:-5]
    elif damage == "empty":
        data = bytearray()
    else:
        data = bytearray(struct.pack(">qiib", 0, 100, 0, 7) + b"\x00" * 95)  # framed, but magic 7
    path.write_bytes(bytes(data))
    code, _, err = _run(capsys, path)
    assert code == 1
    assert reason in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_non_kafka_files_and_index_mismatch(segment_dir, tmp_path, capsys):
    other = tmp_path / "notes.txt"
    other.write_text("hello")
    code, _, err = _run(capsys, other)
    assert code == 1 and "is not a Kafka segment file" in err
    code, _, err = _run(capsys)
    assert code == 2 and "no files given" in err
    index = segment_dir / "00000000000000000000.index"
    raw = bytearray(index.read_bytes())
    struct.pack_into(">i", raw, 4, 7)  # the first entry now points at byte 7: no batch starts there
    index.write_bytes(bytes(raw))
    code, _, err = _run(capsys, index)
    assert code == 1 and "where no batch starts in the log" in err


def test_segment_from_an_independent_encoder_is_read_indexed_and_dumped(tmp_path, capsys):
    # kafka-python's builder writes each batch; we give them offsets by hand, as a broker would,
    # and lay them out as a segment starting at offset 100 with no index files at all.
    partition = tmp_path / "ext-0"
    partition.mkdir()
    data, offset = bytearray(), 100
    for b in range(30):
        builder = DefaultRecordBatchBuilder(2, 1 if b % 2 else 0, 0, -1, -1, -1, 1 << 20)
        for i in range(4):
            builder.append(i, timestamp=BASE_TS + b * 4 + i, key=b"key", value=b"x" * 200, headers=[])
        batch = bytearray(builder.build())
        struct.pack_into(">q", batch, 0, offset)  # baseOffset sits outside the CRC
        data += batch
        offset += 4
    (partition / "00000000000000000100.log").write_bytes(bytes(data))
    log = Log(partition, LogConfig(index_interval_bytes=1024), time=MockTime())  # rebuilds the indexes
    assert log.log_start_offset == 100 and log.log_end_offset == 220
    assert [r.offset for r in read_all(log)] == list(range(100, 220))
    assert log.fetch_offset_by_timestamp(BASE_TS + 50) == (BASE_TS + 50, 150)
    log.close()
    code, out, _ = _run(
        capsys, *(partition / f"00000000000000000100{s}" for s in (".log", ".index", ".timeindex"))
    )
    assert code == 0 and out.count("baseOffset:") == 30 and "offset: 1" in out


@pytest.mark.parametrize("deep", [False, True])
def test_damage_past_the_first_batch_is_reported_at_its_file_byte(segment_dir, capsys, deep):
    # Each batch is read into a buffer of its own, where it starts at byte 0; the report must still
    # name the byte in the *file*, or a reader goes looking for the damage in the first batch.
    path = segment_dir / "00000000000000000000.log"
    log = Log(segment_dir, LogConfig(index_interval_bytes=300), time=MockTime())
    target = list(log.active_segment.log.batch_headers(0))[5]  # uncompressed (codecs cycle by 5)
    log.close()
    data = bytearray(path.read_bytes())
    if deep:  # a record's length varint made -1, the CRC recomputed: only decoding the records fails
        at = target.position + RECORD_BATCH_OVERHEAD  # the first record's length
        data[at] = 0x01  # zigzag varint for -1
        crc = crc32c(bytes(data[target.position + ATTRIBUTES_OFFSET : target.position + target.size]))
        struct.pack_into(">I", data, target.position + CRC_OFFSET, crc)
        expected = f"file byte {at}"
    else:
        data[target.position + 100] ^= 0xFF
        expected = f"file byte {target.position + CRC_OFFSET}"  # the crc field of the damaged batch
    path.write_bytes(bytes(data))
    code, _, err = _run(capsys, *(["--deep", path] if deep else [path]))
    assert code == 1 and len(err.strip().splitlines()) == 1
    assert expected in err and f"record batch at byte {target.position}" in err, err
