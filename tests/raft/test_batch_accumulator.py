"""BatchAccumulator: offsets handed out as records arrive, the linger, full batches, the leader's
LeaderChange batch, and appends from another epoch refused (Kafka's BatchAccumulatorTest)."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import IllegalArgumentException
from kafka_lite.common.record.control_record_utils import deserialize_leader_change_message
from kafka_lite.common.time import MockTime
from kafka_lite.raft.internals.batch_accumulator import BatchAccumulator
from kafka_lite.raft.raft_client import NotLeaderException
from kafka_lite.raft.timer import LONG_MAX

pytestmark = pytest.mark.unit

EPOCH = 3
LINGER_MS = 50


def accumulator(base_offset=10, max_batch_size=1024, time=None):
    return BatchAccumulator(EPOCH, base_offset, LINGER_MS, max_batch_size, time or MockTime(), str.encode)


def test_append_returns_the_last_offset_and_drains_after_the_linger():
    time = MockTime()
    acc = accumulator(time=time)
    assert acc.is_empty() and acc.time_until_drain(time.milliseconds()) == LONG_MAX
    assert acc.append(EPOCH, ["a", "b"]) == 11
    assert acc.append(EPOCH, ["c"]) == 12
    assert acc.time_until_drain(time.milliseconds()) == LINGER_MS
    time.sleep(LINGER_MS - 1)
    assert not acc.needs_drain(time.milliseconds())
    time.sleep(1)
    assert acc.needs_drain(time.milliseconds())
    (batch,) = acc.drain()
    assert (batch.base_offset, batch.records, batch.num_records) == (10, ["a", "b", "c"], 3)
    (written,) = list(batch.data.batches())
    assert (written.base_offset, written.last_offset, written.partition_leader_epoch) == (10, 12, EPOCH)
    assert [bytes(r.value) for r in written] == [b"a", b"b", b"c"]
    assert acc.is_empty() and acc.next_offset() == 13


def test_a_full_batch_is_ready_before_the_linger():
    time = MockTime()
    acc = accumulator(max_batch_size=250, time=time)
    acc.append(EPOCH, ["x" * 60, "y" * 60])
    assert not acc.needs_drain(time.milliseconds())
    acc.append(EPOCH, ["z" * 60])  # does not fit: the first batch completes
    assert acc.needs_drain(time.milliseconds())
    batches = acc.drain()
    assert [b.base_offset for b in batches] == [10, 12]
    assert [b.records for b in batches] == [["x" * 60, "y" * 60], ["z" * 60]]


def test_atomic_records_stay_in_one_batch():
    acc = accumulator(max_batch_size=250)
    acc.append(EPOCH, ["x" * 60])
    acc.append(EPOCH, ["y" * 60, "z" * 60], is_atomic=True)
    assert [b.records for b in acc.drain()] == [["x" * 60], ["y" * 60, "z" * 60]]


def test_appends_from_another_epoch_are_refused():
    acc = accumulator()
    with pytest.raises(NotLeaderException, match="epoch doesn't match"):
        acc.append(EPOCH - 1, ["a"])
    with pytest.raises(IllegalArgumentException, match="larger than the current epoch 3"):
        acc.append(EPOCH + 1, ["a"])
    assert acc.is_empty() and acc.next_offset() == 10


def test_leader_change_message_takes_the_next_offset_in_a_batch_of_its_own():
    time = MockTime()
    acc = accumulator(time=time)
    acc.append(EPOCH, ["a"])
    message = {
        "version": 0,
        "leader_id": 1,
        "voters": [{"voter_id": 1}],
        "granting_voters": [{"voter_id": 1}],
    }
    acc.append_leader_change_message(message, time.milliseconds())
    assert acc.needs_drain(time.milliseconds())
    first, control = acc.drain()
    assert first.records == ["a"] and control.base_offset == 11
    (written,) = list(control.data.batches())
    assert written.is_control_batch and written.partition_leader_epoch == EPOCH
    assert deserialize_leader_change_message(next(iter(written)))["leader_id"] == 1
    assert acc.next_offset() == 12
