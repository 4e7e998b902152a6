"""Recovery, as a property: whatever damage hits the active segment, recovery keeps every batch
before it, drops the rest, and leaves both indexes agreeing with the log.

Damage kinds: the file cut at any byte (a crash mid-write), any byte the CRC covers flipped (bit
rot), a batch's length field changed (garbage where a header should be).
"""

from __future__ import annotations

import shutil
import struct
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_lite.common.record import CompressionType, MemoryRecords
from kafka_lite.common.record.default_record_batch import ATTRIBUTES_OFFSET, LENGTH_OFFSET
from kafka_lite.common.time import MockTime
from kafka_lite.log.log import Log
from kafka_lite.log.log_config import LogConfig
from kafka_lite.testing.logs import read_all
from kafka_lite.tools.dump_log_segments import dump

pytestmark = pytest.mark.unit
BASE_TS = 1_500_000_000_000
CONFIG = LogConfig(segment_bytes=6000, index_interval_bytes=700)


def _build(
    directory: Path, sizes: list[int], codec: CompressionType
) -> tuple[Log, list[tuple[int, int, int]]]:
    """A log of batches of ``sizes`` records; returns it and each batch's (file, position, base offset)."""
    log = Log(directory, CONFIG, time=MockTime(start_ms=BASE_TS))
    layout = []
    for b, n in enumerate(sizes):
        records = MemoryRecords.with_records(
            [(BASE_TS + b * 10 + i, b"k%d" % i, b"value-%d-%d" % (b, i) * 4) for i in range(n)],
            compression=codec,
        )
        position = log.active_segment.size_in_bytes()
        info = log.append(records)
        if log.active_segment.size_in_bytes() == records.size_in_bytes():
            position = 0  # this append rolled a new segment
        layout.append((log.active_segment.base_offset, position, info.first_offset))
    log.flush(log.log_segments()[-1].base_offset)  # everything before the active segment is safe
    return log, layout


def _assert_indexes_agree(log: Log) -> None:
    for segment in log.log_segments():
        # dump-log's checks: every index entry points at a batch start with that base offset, and
        # every time index entry names the largest timestamp up to its offset.
        for path in (segment.index.path, segment.time_index.path):
            if path.stat().st_size:
                list(dump(path))


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 8), min_size=3, max_size=30),
    codec=st.sampled_from([CompressionType.NONE, CompressionType.GZIP, CompressionType.LZ4]),
    damage=st.sampled_from(["cut", "flip", "length"]),
    where=st.floats(0, 1, exclude_max=True),
    value=st.integers(1, 255),
)
def test_recovery_keeps_exactly_the_batches_before_the_damage(sizes, codec, damage, where, value):
    tmp = Path(tempfile.mkdtemp(prefix="recovery-"))
    try:
        log, layout = _build(tmp / "t-0", sizes, codec)
        active = log.active_segment
        in_active = [(pos, first) for base, pos, first in layout if base == active.base_offset]
        path, end = active.log.path, active.size_in_bytes()
        expected_before = {r.offset: r.value for r in read_all(log)}
        recovery_point = log.recovery_point
        log.close()
        raw = bytearray(path.read_bytes())
        starts = [pos for pos, _ in in_active] + [end]
        k = int(where * len(in_active))  # the batch that is hit
        if damage == "cut":
            cut = starts[k] + int(where * 997) % (starts[k + 1] - starts[k])
            raw = raw[:cut] if cut > starts[k] else raw[: starts[k] + 1]
        elif damage == "flip":
            lo, hi = starts[k] + ATTRIBUTES_OFFSET, starts[k + 1]
            raw[lo + int(where * 7919) % (hi - lo)] ^= value
        else:
            at = starts[k] + LENGTH_OFFSET
            (length,) = struct.unpack_from(">i", raw, at)
            struct.pack_into(">i", raw, at, length + (value if value % 2 else -value))
        path.write_bytes(bytes(raw))

        recovered = Log(tmp / "t-0", CONFIG, recovery_point=recovery_point, time=MockTime(start_ms=BASE_TS))
        survivor_end = in_active[k][1]  # the first offset of the damaged batch
        expected = {o: v for o, v in expected_before.items() if o < survivor_end}
        assert {r.offset: r.value for r in read_all(recovered)} == expected
        assert recovered.log_end_offset == survivor_end
        assert recovered.active_segment.size_in_bytes() == starts[k]
        recovered.append(MemoryRecords.with_records([(BASE_TS, b"after", b"recovery")]))
        assert recovered.log_end_offset == survivor_end + 1
        recovered.close()  # trims the indexes to their entries, so the files can be checked
        _assert_indexes_agree(recovered)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
