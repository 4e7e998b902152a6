"""Log: offsets assigned on append, reads by offset, rolls, retention, truncation, recovery, reopen."""

from __future__ import annotations

import gc
import os

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from kafka_lite.common.errors import (
    CorruptRecordException,
    KafkaException,
    OffsetOutOfRangeException,
    RecordBatchTooLargeException,
    RecordTooLargeException,
)
from kafka_lite.common.record import CompressionType, MemoryRecords
from kafka_lite.common.time import MockTime
from kafka_lite.log.log import CLEAN_SHUTDOWN_FILE, Log
from kafka_lite.log.log_config import LogConfig
from kafka_lite.network.transfer import FileRegion
from kafka_lite.testing.logs import crash_mid_write, read_all

pytestmark = pytest.mark.unit
BASE_TS = 1_500_000_000_000


def _records(
    n: int, ts: int = BASE_TS, size: int = 50, tag: int = 0, codec=CompressionType.NONE
) -> MemoryRecords:
    return MemoryRecords.with_records(
        [(ts + i, b"k%d" % i, bytes([tag % 256]) * size) for i in range(n)], compression=codec
    )


def _log(tmp_path, time=None, **config) -> Log:
    return Log(tmp_path / "orders-0", LogConfig(config), time=time or MockTime())


def test_append_assigns_offsets_and_read_returns_whole_batches(tmp_path):
    log = _log(tmp_path)
    first = log.append(_records(3))
    second = log.append(_records(2, codec=CompressionType.GZIP))
    assert (first.first_offset, first.last_offset, second.first_offset, second.last_offset) == (0, 2, 3, 4)
    assert log.log_end_offset == 5
    assert [r.offset for r in read_all(log)] == [0, 1, 2, 3, 4]
    info = log.read(4, 10_000)
    (batch,) = MemoryRecords(info.records.read_bytes()).batches()
    assert batch.base_offset == 3  # the batch holding offset 4
    assert log.read(5, 100).records.size_in_bytes() == 0  # at the LEO: empty, not an error
    with pytest.raises(OffsetOutOfRangeException, match="Request for offset 6"):
        log.read(6, 100)


def test_append_patches_a_writable_buffer_in_place_and_never_the_callers_bytes(tmp_path):
    log = _log(tmp_path)
    log.append(_records(2))
    built = _records(3).buffer()  # bytes, as a producer-side builder makes them
    log.append(MemoryRecords(built))
    assert next(MemoryRecords(built).batches()).base_offset == 0  # the log patched a copy
    received = memoryview(bytearray(built))  # as a produce request's records arrive: a view of the receive
    info = log.append(MemoryRecords(received))
    assert info.first_offset == 5
    assert (
        next(MemoryRecords(received).batches()).base_offset == 5
    )  # patched where it lay, as LogValidator does
    assert [r.offset for r in read_all(log)] == list(range(8))


def test_rolls_by_size_by_time_and_by_full_index(tmp_path):
    time = MockTime()
    log = _log(tmp_path, time, segment_bytes=2000)
    for _ in range(10):
        log.append(_records(5))  # ~400 B each
    assert log.number_of_segments >= 2
    assert all(s.size_in_bytes() <= 2000 for s in log.log_segments())
    by_time = _log(tmp_path / "t", time, segment_ms=60_000)
    by_time.append(_records(1, ts=BASE_TS))
    by_time.append(_records(1, ts=BASE_TS + 59_000))
    assert by_time.number_of_segments == 1
    by_time.append(_records(1, ts=BASE_TS + 61_000))  # the record timestamps say a minute passed
    assert by_time.number_of_segments == 2
    by_index = _log(tmp_path / "i", time, segment_index_bytes=24, index_interval_bytes=10)
    for _ in range(8):
        by_index.append(_records(2))
    assert by_index.number_of_segments > 2


def test_retention_by_time_and_size_keeps_the_active_segment(tmp_path):
    time = MockTime(start_ms=BASE_TS + 1000)
    log = _log(tmp_path, time, segment_bytes=1000, retention_ms=3_600_000)
    for _ in range(12):
        log.append(_records(4, ts=BASE_TS))
    segments = log.number_of_segments
    assert log.delete_old_segments() == 0
    time.advance(3_600_001)
    assert log.delete_old_segments() == segments  # all old, so the log rolled an empty active segment
    assert log.number_of_segments == 1 and log.log_start_offset == log.log_end_offset == 48
    sized = _log(tmp_path / "s", time, segment_bytes=1000, retention_bytes=2500)
    for _ in range(12):
        sized.append(_records(4))
    sized.delete_old_segments()
    assert sized.size_in_bytes() <= 2500 + 1000
    assert [r.offset for r in read_all(sized)][-1] == 47


def _open_file(fd: int) -> str:
    """What descriptor ``fd`` of this process names ("" when closed), as Linux's /proc shows it."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except FileNotFoundError:
        return ""


def test_a_deleted_segments_files_are_removed_at_once_and_a_read_still_in_it_finishes(tmp_path):
    """No ``.deleted`` files waiting ``file.delete.delay.ms``: the segment's files are unlinked at
    once, and a read handed out before (a fetch answer not yet sent) keeps the file's descriptor
    open, so it still reads the segment's bytes, never those of a file opened since."""
    time = MockTime(start_ms=BASE_TS + 1000)
    log = _log(tmp_path, time, segment_bytes=1000, retention_ms=3_600_000)
    for _ in range(12):
        log.append(_records(4, ts=BASE_TS))
    in_flight = log.read(0, 10_000).records  # a fetch's view of the first segment
    expected = in_flight.read_bytes()
    time.advance(3_600_001)
    assert log.delete_old_segments() > 1
    segment_files = {p.name for p in log.dir.iterdir() if p.name[0].isdigit()}
    assert {name.split(".", 1)[0] for name in segment_files} == {f"{log.log_end_offset:020d}"}, segment_files
    # Files opened now would take the descriptor numbers a delete that closed them had freed.
    others = [tmp_path / f"other-{i}" for i in range(4)]
    fds = []
    for other in others:
        other.write_bytes(b"x" * len(expected))
        fds.append(os.open(other, os.O_RDONLY))
    try:
        assert in_flight.read_bytes() == expected
        # the descriptor is let go with the last read: it names the unlinked segment until then
        fd, deleted = in_flight.fd, f"{0:020d}.log (deleted)"
        assert _open_file(fd).endswith(deleted)
        del in_flight
        gc.collect()
        assert not _open_file(fd).endswith(deleted)  # closed (or, since, another file's number)
    finally:
        for fd in fds:
            os.close(fd)


def test_a_fetch_answers_region_left_for_sendfile_reads_its_deleted_segment(tmp_path):
    """The zero-copy path (``fetch.sendfile.enable``): the response holds a ``FileRegion``, a
    descriptor and a range, until its socket takes it; the slice it was made from is gone by then.
    The region keeps the slice, so a segment deleted meanwhile still sends its own bytes."""
    time = MockTime(start_ms=BASE_TS + 1000)
    log = _log(tmp_path, time, segment_bytes=1000, retention_ms=3_600_000)
    for _ in range(12):
        log.append(_records(4, ts=BASE_TS))
    records = log.read(0, 10_000).records
    expected = records.read_bytes()
    region = FileRegion(records.fd, records.start, records.size_in_bytes(), owner=records)
    del records
    gc.collect()
    time.advance(3_600_001)
    assert log.delete_old_segments() > 1
    others = [os.open(tmp_path / f"other-{i}", os.O_RDWR | os.O_CREAT) for i in range(4)]
    try:
        for fd in others:
            os.write(fd, b"x" * len(expected))
        assert region.read() == expected
    finally:
        for fd in others:
            os.close(fd)


def test_validation_rejects_bad_crc_and_oversize(tmp_path):
    log = _log(tmp_path, max_message_bytes=500)
    damaged = bytearray(_records(2).buffer())
    damaged[-1] ^= 1
    with pytest.raises(CorruptRecordException, match="crc"):
        log.append(MemoryRecords(damaged))
    with pytest.raises(RecordTooLargeException, match=r"max\.message\.bytes"):
        log.append(_records(10, size=100))
    assert log.log_end_offset == 0  # nothing was appended by the failed calls


def test_a_leader_assigns_offsets_to_any_batches_and_a_follower_keeps_increasing_ones(tmp_path):
    two = bytes(_records(2).buffer()) + bytes(_records(3).buffer())  # both batches say base offset 0
    leader = _log(tmp_path)
    info = leader.append(MemoryRecords(two))
    assert (info.first_offset, info.last_offset, info.shallow_count) == (0, 4, 2)
    assert [b.base_offset for b in MemoryRecords(leader.read(0, 10_000).records.read_bytes()).batches()] == [
        0,
        2,
    ]
    follower = _log(tmp_path / "f")
    with pytest.raises(KafkaException, match="Out of order offsets"):
        follower.append(MemoryRecords(two), assign_offsets=False)  # 0-1 then 0-2: not increasing
    in_order = bytes(MemoryRecords.with_records([(BASE_TS, b"k", b"v")] * 2, base_offset=7).buffer())
    follower.append(MemoryRecords(in_order), assign_offsets=False)
    assert follower.log_start_offset == 0 and follower.log_end_offset == 9  # the leader's offsets, kept
    with pytest.raises(KafkaException, match="Out of order offsets"):
        follower.append(MemoryRecords(in_order), assign_offsets=False)  # starts below the LEO (9)
    assert follower.log_end_offset == 9


def test_a_batch_set_larger_than_a_segment_is_refused(tmp_path):
    log = _log(tmp_path, segment_bytes=1000)
    with pytest.raises(RecordBatchTooLargeException, match="exceeds the maximum configured segment size"):
        log.append(_records(30))
    assert log.log_end_offset == 0 and log.size_in_bytes() == 0


def test_log_append_time_stamps_batches(tmp_path):
    time = MockTime(start_ms=BASE_TS + 777)
    log = _log(tmp_path, time, message_timestamp_type="LogAppendTime")
    info = log.append(_records(3))
    assert info.log_append_time == BASE_TS + 777
    assert {r.timestamp for r in read_all(log)} == {BASE_TS + 777}
    # the max timestamp is the broker's, at the batch's last offset (as Kafka 0.11 for v2); a search
    # by that time still lands on the first record that carries it
    assert (info.max_timestamp, info.offset_of_max_timestamp) == (BASE_TS + 777, 2)
    assert log.fetch_offset_by_timestamp(BASE_TS + 777) == (BASE_TS + 777, 0)


def test_lookup_by_timestamp_across_segments(tmp_path):
    log = _log(tmp_path, segment_bytes=600)
    for b in range(10):
        log.append(_records(3, ts=BASE_TS + b * 100))
    assert log.number_of_segments > 2
    assert log.fetch_offset_by_timestamp(BASE_TS + 501) == (BASE_TS + 501, 16)
    assert log.fetch_offset_by_timestamp(-2) == (-1, 0)
    assert log.fetch_offset_by_timestamp(-1) == (-1, 30)
    assert log.fetch_offset_by_timestamp(BASE_TS + 10**6) is None


def test_unclean_shutdown_recovers_a_cut_tail_and_clean_shutdown_skips_recovery(tmp_path):
    time = MockTime()
    log = _log(tmp_path, time, segment_bytes=1500)
    for i in range(10):
        log.append(_records(4, tag=i))
    log.flush()
    log.append(_records(4, tag=99))
    crash_mid_write(log, 7)  # a crash in the middle of the last batch
    reopened = Log(tmp_path / "orders-0", LogConfig(segment_bytes=1500), recovery_point=40, time=time)
    assert reopened.log_end_offset == 40
    assert [r.offset for r in read_all(reopened)] == list(range(40))
    reopened.append(_records(1))
    assert reopened.log_end_offset == 41
    reopened.close()
    (tmp_path / CLEAN_SHUTDOWN_FILE).touch()
    again = Log(tmp_path / "orders-0", LogConfig(segment_bytes=1500), recovery_point=0, time=time)
    assert again.recovery_point == again.log_end_offset == 41


def test_truncate_to_and_start_at(tmp_path):
    log = _log(tmp_path, segment_bytes=800)
    for _ in range(10):
        log.append(_records(3))
    log.truncate_to(7)  # inside a batch: the whole batch holding 7 goes (batches are never split)
    assert log.log_end_offset == 7
    assert [r.offset for r in read_all(log)][-1] == 5
    log.append(_records(1))
    assert log.log_end_offset == 8
    log.truncate_fully_and_start_at(100)
    assert log.log_start_offset == log.log_end_offset == 100 and log.number_of_segments == 1


class LogModel(RuleBasedStateMachine):
    """Any interleaving of appends, rolls, truncations, retention passes and reopens: reads return
    exactly the records that were appended and not since removed."""

    def __init__(self):
        super().__init__()
        import tempfile
        from pathlib import Path

        self.tmp = Path(tempfile.mkdtemp(prefix="logmodel-"))
        self.time = MockTime(start_ms=BASE_TS)
        self.config = LogConfig(segment_bytes=1000, index_interval_bytes=200, retention_bytes=300)
        self.log = Log(self.tmp / "t-0", self.config, time=self.time)
        self.expected: dict[int, bytes] = {}  # offset -> value
        self.batches: list[tuple[int, int]] = []  # (first, last) offsets of live batches
        self.leo = 0  # the log end offset the model expects
        self.counter = 0

    @rule(n=st.integers(1, 6), size=st.integers(0, 120), codec=st.sampled_from(list(CompressionType)))
    def append(self, n, size, codec):
        values = [b"%d:" % (self.counter + i) + b"x" * size for i in range(n)]
        self.counter += n
        records = MemoryRecords.with_records(
            [(self.time.milliseconds(), None, v) for v in values], compression=codec
        )
        info = self.log.append(records)
        assert info.first_offset == self.leo, "an append takes the next offset"
        for i, v in enumerate(values):
            self.expected[info.first_offset + i] = v
        self.batches.append((info.first_offset, info.last_offset))
        self.leo = info.last_offset + 1

    @rule()
    def roll(self):
        self.log.roll()

    @precondition(lambda self: self.batches)
    @rule(data=st.data())
    def truncate(self, data):
        first, _ = data.draw(st.sampled_from(self.batches))  # followers truncate at batch boundaries
        self.log.truncate_to(first)
        self.expected = {o: v for o, v in self.expected.items() if o < first}
        self.batches = [b for b in self.batches if b[0] < first]
        self.leo = first

    @rule()
    def retention(self):
        # Retention by size (the clock stands still, so retention.ms never applies), worked out here
        # from the segments' sizes: while the log is over retention.bytes by at least a whole leading
        # segment, that segment goes; an empty active segment never; all of them means a roll first.
        segments = [(s.base_offset, s.size_in_bytes()) for s in self.log.log_segments()]
        over = sum(size for _, size in segments) - self.config.retention_size
        going = 0
        if over >= 0:
            for i, (_, size) in enumerate(segments):
                if over - size < 0 or (i == len(segments) - 1 and size == 0):
                    break
                over -= size
                going += 1
        expected_start = (
            self.log.log_start_offset
            if going == 0
            else self.leo
            if going == len(segments)
            else segments[going][0]
        )
        assert self.log.delete_old_segments() == going
        start = self.log.log_start_offset
        assert start == expected_start, (segments, going)
        self.expected = {o: v for o, v in self.expected.items() if o >= start}
        self.batches = [b for b in self.batches if b[0] >= start]

    @rule(clean=st.booleans())
    def reopen(self, clean):
        self.log.flush()
        recovery_point = self.log.recovery_point
        self.log.close()
        marker = self.tmp / ".kafka_cleanshutdown"
        if clean:
            marker.touch()
        self.log = Log(self.tmp / "t-0", self.config, recovery_point=recovery_point, time=self.time)
        marker.unlink(missing_ok=True)

    @invariant()
    def reads_match(self):
        got = {r.offset: r.value for r in read_all(self.log)}
        assert got == self.expected
        assert self.log.log_end_offset == self.leo

    def teardown(self):
        import shutil

        self.log.close()
        shutil.rmtree(self.tmp, ignore_errors=True)


TestLogModel = LogModel.TestCase
TestLogModel.settings = settings(max_examples=100, stateful_step_count=30, deadline=None)
