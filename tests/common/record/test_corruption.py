"""Damaged bytes are reported as ``CorruptRecordException`` with the byte offset, never anything else.

The three kinds of damage the storage and network layers meet: a flipped byte (bit rot, a bad
disk, a buggy client), a batch cut short (a crash mid-write, a partial read), and a size field
that lies (garbage on a socket). Each must be caught and located; no other exception may escape.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_lite.common.errors import CorruptRecordException
from kafka_lite.common.record import CompressionType, MemoryRecords
from kafka_lite.common.record.default_record_batch import ATTRIBUTES_OFFSET, CRC_OFFSET, LENGTH_OFFSET

from .strategies import BASE_TS, codecs, records_v2

pytestmark = pytest.mark.unit


def _three_batches(codec: CompressionType) -> tuple[bytearray, list[int]]:
    """Three v2 batches back to back; returns the buffer and where each batch starts."""
    buf, starts = bytearray(), []
    for b in range(3):
        starts.append(len(buf))
        records = [(BASE_TS + i, b"key-%d" % i, b"value-%d-%d" % (b, i) * 3, ()) for i in range(4)]
        buf += MemoryRecords.with_records(records, compression=codec, base_offset=b * 4).buffer()
    return buf, starts


@pytest.mark.parametrize("codec", list(CompressionType), ids=lambda c: c.config_name)
def test_every_flipped_byte_the_crc_covers_is_caught_at_its_batch(codec):
    buf, starts = _three_batches(codec)
    middle, end = starts[1], starts[2]
    for i in range(middle + ATTRIBUTES_OFFSET, end):
        damaged = bytearray(buf)
        damaged[i] ^= 0x5A
        with pytest.raises(CorruptRecordException) as e:
            MemoryRecords(damaged).validate()
        assert f"at byte {middle}" in str(e.value), f"flip at byte {i}: {e.value}"
        assert e.value.position == middle + CRC_OFFSET


def test_the_crc_field_itself_is_covered_by_comparison():
    buf, starts = _three_batches(CompressionType.NONE)
    for i in range(starts[1] + CRC_OFFSET, starts[1] + CRC_OFFSET + 4):
        damaged = bytearray(buf)
        damaged[i] ^= 0x01
        with pytest.raises(CorruptRecordException, match=f"at byte {starts[1]} is corrupt"):
            MemoryRecords(damaged).validate()


@pytest.mark.parametrize("codec", [CompressionType.NONE, CompressionType.GZIP], ids=lambda c: c.config_name)
def test_a_cut_anywhere_is_reported_with_the_offset_of_the_cut_batch(codec):
    buf, starts = _three_batches(codec)
    for cut in range(1, len(buf)):
        if cut in starts:
            continue  # a cut between batches leaves whole batches: nothing is damaged
        cut_batch = max(s for s in starts if s < cut)
        with pytest.raises(CorruptRecordException) as e:
            MemoryRecords(buf[:cut]).validate()
        assert f"at byte {cut_batch}" in str(e.value)
        assert "cut" in str(e.value)
        # A fetch response may end in a partial batch: readers that allow it stop before the cut.
        whole = list(MemoryRecords(buf[:cut]).batches(allow_partial_tail=True))
        assert [b.position for b in whole] == [s for s in starts if s < cut_batch]


@pytest.mark.parametrize("bad_length", [-1, -(2**31), 0, 13, 48, 10**6, 2**31 - 1])
def test_a_lying_length_field_is_reported(bad_length):
    buf, starts = _three_batches(CompressionType.NONE)
    damaged = bytearray(buf)
    damaged[starts[1] + LENGTH_OFFSET : starts[1] + LENGTH_OFFSET + 4] = bad_length.to_bytes(
        4, "big", signed=True
    )
    with pytest.raises(CorruptRecordException) as e:
        MemoryRecords(damaged).validate()
    assert f"at byte {starts[1]}" in str(e.value)
    assert e.value.position == starts[1] + LENGTH_OFFSET


@given(
    records=records_v2,
    codec=codecs,
    magic=st.sampled_from([0, 1, 2]),
    mutations=st.lists(st.tuples(st.integers(0, 10**6), st.integers(1, 255)), min_size=1, max_size=4),
    cut=st.none() | st.integers(0, 10**6),
)
def test_damage_never_raises_anything_but_corrupt_record(records, codec, magic, mutations, cut):
    if magic < 2:
        records = [r[:3] for r in records]
        if codec == CompressionType.ZSTD or (magic == 0 and codec == CompressionType.LZ4):
            codec = CompressionType.GZIP
    buf = bytearray(MemoryRecords.with_records(records, magic=magic, compression=codec).buffer())
    for where, xor in mutations:
        buf[where % len(buf)] ^= xor
    if cut is not None:
        buf = buf[: cut % (len(buf) + 1)]
    # Decoding without validating first exercises every length check inside the records too.
    for allow_partial_tail in (False, True):
        try:
            for _ in MemoryRecords(buf).records(allow_partial_tail):
                pass
        except CorruptRecordException as e:
            assert e.position is not None and 0 <= e.position <= len(buf), str(e)
    try:
        MemoryRecords(buf).validate()
    except CorruptRecordException as e:
        assert e.position is not None
