"""Lab 1 graded tests: zig-zag varints and the v2 record, checked against Kafka's bytes.

The reference for "Kafka's bytes" is kafka-python's record builder and reader, an implementation
written independently from Kafka's Java source. Every test starts by calling one of the four
functions you write, so on the untouched starter each fails with your lab's NotImplementedError.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatch as KpBatch
from kafka.record.default_records import DefaultRecordBatchBuilder as KpBuilder

from kafka_lite.common.errors import CorruptRecordException
from kafka_lite.common.record import CompressionType, Header, MemoryRecords
from kafka_lite.common.record.default_record import DefaultRecord
from kafka_lite.common.record.inspect import explain_difference
from kafka_lite.common.record.varint import read_varint, read_varlong, write_varint

pytestmark = [pytest.mark.lab(1)]
TS = 1_500_000_000_000


def _varint(value: int) -> bytes:
    out = bytearray()
    write_varint(value, out)
    return bytes(out)


def _kafka_python_batch(records, codec=0, base_sequence=-1) -> bytes:
    builder = KpBuilder(
        2, codec, 0, 42 if base_sequence >= 0 else -1, 0 if base_sequence >= 0 else -1, base_sequence, 1 << 20
    )
    for i, (ts, key, value, headers) in enumerate(records):
        builder.append(i, timestamp=ts, key=key, value=value, headers=list(headers))
    return bytes(builder.build())


SAMPLE = [
    (TS, b"user-1", b'{"page": "/home"}', [("trace", b"abc")]),
    (TS + 7, None, b"no key", []),
    (TS + 3, b"user-2", None, [("a", None), ("\u00e9t\u00e9", b"\x00\xff")]),
]


KNOWN_VARINTS = [
    (0, "00"), (-1, "01"), (1, "02"), (-2, "03"), (63, "7e"), (64, "8001"), (300, "d804"),
    (2**31 - 1, "feffffff0f"), (-(2**31), "ffffffff0f"), (2**63 - 1, "feffffffffffffffff01"),
]  # fmt: skip


@pytest.mark.points(2)
def test_write_varint_known_bytes():
    for value, encoded in KNOWN_VARINTS:
        assert _varint(value).hex() == encoded, f"zig-zag varint of {value} should be {encoded}"


@pytest.mark.points(2)
@settings(max_examples=200, deadline=None)
@given(st.integers(-(2**63), 2**63 - 1), st.binary(max_size=4))
def test_read_varint_round_trip_and_position(value, prefix):
    data = prefix + _varint(value) + b"\x99"
    decoded, pos = read_varlong(data, len(prefix))
    assert decoded == value
    assert pos == len(data) - 1, "read_varint must return the position just after the number"


@pytest.mark.points(2)
def test_bad_varints_are_corrupt_with_their_position():
    with pytest.raises(CorruptRecordException) as cut:
        read_varint(b"\x00\x00\x80\x80", 2)  # continuation bits, then the buffer ends
    assert cut.value.position == 2
    with pytest.raises(CorruptRecordException) as long:
        read_varint(b"\x80\x80\x80\x80\x80\x01", 0)  # six bytes: longer than any int32 varint
    assert long.value.position == 0


@pytest.mark.points(3)
def test_encoded_batch_matches_kafka_python_byte_for_byte():
    ours = bytes(MemoryRecords.with_records(SAMPLE).buffer())
    theirs = _kafka_python_batch(SAMPLE)
    # Bytes 12-15 (partitionLeaderEpoch) are the broker's to set: kafka-python writes 0, we write -1.
    assert ours[16:] == theirs[16:], explain_difference(theirs[:12] + ours[12:16] + theirs[16:], ours)


@pytest.mark.points(3)
def test_decodes_kafka_python_batches():
    theirs = _kafka_python_batch(SAMPLE, base_sequence=10)
    records = list(MemoryRecords(theirs).records())
    assert [(r.offset, r.timestamp, r.key, r.value) for r in records] == [
        (i, ts, k, v) for i, (ts, k, v, _) in enumerate(SAMPLE)
    ]
    assert [r.headers for r in records] == [tuple(Header(*h) for h in hs) for *_, hs in SAMPLE]
    assert [r.sequence for r in records] == [10, 11, 12], "sequence = baseSequence + offsetDelta"


@pytest.mark.points(2)
def test_kafka_python_reads_our_compressed_batches():
    for codec in (CompressionType.GZIP, CompressionType.LZ4):
        ours = MemoryRecords.with_records(SAMPLE * 20, compression=codec, base_offset=100)
        theirs = KpBatch(bytes(ours.buffer()))
        assert theirs.validate_crc(), f"{codec.config_name}: kafka-python finds a different CRC"
        got = [(r.offset, r.key, r.value, [tuple(h) for h in r.headers]) for r in theirs]
        assert got == [(100 + i, k, v, [tuple(h) for h in hs]) for i, (_, k, v, hs) in enumerate(SAMPLE * 20)]


@pytest.mark.points(2)
@settings(max_examples=100, deadline=None)
@given(
    st.integers(0, 2**31 - 1),
    st.integers(-(2**40), 2**40),
    st.none() | st.binary(max_size=50),
    st.none() | st.binary(max_size=200),
    st.lists(st.tuples(st.text(max_size=8), st.none() | st.binary(max_size=8)), max_size=3),
)
def test_record_round_trip(offset_delta, timestamp_delta, key, value, headers):
    out = bytearray(b"pad")
    size = DefaultRecord.write_to(
        out, offset_delta, timestamp_delta, key, value, [Header(*h) for h in headers]
    )
    assert size == len(out) - 3, "write_to returns the bytes it wrote, length prefix included"
    record, end = DefaultRecord.read_from(out, 3, 1000, TS)
    assert end == len(out)
    assert (record.offset, record.timestamp, record.key, record.value) == (
        1000 + offset_delta,
        TS + timestamp_delta,
        key,
        value,
    )
    assert record.headers == tuple(Header(*h) for h in headers)
    assert record.size_in_bytes == size


@pytest.mark.points(2)
def test_damaged_records_are_corrupt_at_the_right_byte():
    out = bytearray()
    DefaultRecord.write_to(out, 0, 0, b"key", b"value", [Header("h", b"x")])
    with pytest.raises(CorruptRecordException) as cut:
        DefaultRecord.read_from(out[:-3], 0, 0, TS)  # the record is cut short
    assert cut.value.position is not None and 0 <= cut.value.position < len(out)
    lying = bytearray(out)
    lying[4] = 0x7E  # keyLength (byte 4: after length, attributes, two one-byte deltas) now says 63
    with pytest.raises(CorruptRecordException) as overrun:
        DefaultRecord.read_from(lying, 0, 0, TS)
    assert overrun.value.position == 4, "report the position of the length field that overruns"
