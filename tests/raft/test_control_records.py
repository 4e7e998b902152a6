"""The LEADER_CHANGE control batch a new Raft leader writes first in its epoch, and its reader."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import CorruptRecordException
from kafka_lite.common.record.control_record_utils import (
    LEADER_CHANGE,
    SNAPSHOT_FOOTER,
    SNAPSHOT_HEADER,
    control_record_key,
    deserialize_leader_change_message,
    deserialize_snapshot_footer_record,
    deserialize_snapshot_header_record,
    with_leader_change_message,
    with_snapshot_footer_record,
    with_snapshot_header_record,
)
from kafka_lite.common.record.default_record import DefaultRecord
from kafka_lite.common.record.end_transaction_marker import (
    ControlRecordType,
    EndTransactionMarker,
    build_end_transaction_marker_batch,
)

pytestmark = pytest.mark.unit

MESSAGE = {
    "version": 0,
    "leader_id": 1,
    "voters": [{"voter_id": 1}, {"voter_id": 2}],
    "granting_voters": [{"voter_id": 1}],
}
MESSAGE_BYTES = bytes.fromhex(
    "0000"  # version
    "00000001"  # leader_id
    "03 0000000100 0000000200"  # voters: 2 + 1, each voter_id + its tagged fields
    "02 0000000100"  # granting_voters: 1 + 1
    "00"  # tagged fields
)


def _only_batch(records):
    (batch,) = list(records.batches())
    return batch


def test_the_leader_change_batch_is_a_control_batch_of_one_record_in_the_leaders_epoch():
    batch = _only_batch(
        with_leader_change_message(initial_offset=5, timestamp=1000, leader_epoch=3, message=MESSAGE)
    )
    batch.ensure_valid()
    assert batch.is_control_batch and not batch.is_transactional
    assert (batch.base_offset, batch.last_offset, batch.partition_leader_epoch) == (5, 5, 3)
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (-1, -1, -1)
    (record,) = list(batch)
    assert record.key == bytes.fromhex("0000 0002")  # control record key: version 0, type 2 (LEADER_CHANGE)
    assert record.value == MESSAGE_BYTES
    assert record.timestamp == 1000


def test_the_reader_gives_back_the_message():
    (record,) = list(_only_batch(with_leader_change_message(0, 1000, 1, MESSAGE)))
    assert deserialize_leader_change_message(record) == MESSAGE


def test_reading_a_commit_marker_as_a_leader_change_is_refused_with_kafkas_wording():
    marker = build_end_transaction_marker_batch(7, 0, EndTransactionMarker(ControlRecordType.COMMIT, 2), 1000)
    (record,) = list(_only_batch(marker))
    with pytest.raises(
        ValueError, match=r"Expected LEADER_CHANGE control record type\(2\), but found COMMIT"
    ):
        deserialize_leader_change_message(record)


def test_a_malformed_value_is_a_corrupt_record_naming_the_field():
    record = DefaultRecord(0, 0, control_record_key(LEADER_CHANGE), MESSAGE_BYTES[:7], (), -1, 0)
    with pytest.raises(CorruptRecordException, match="'voters'"):
        deserialize_leader_change_message(record)


def test_snapshot_header_and_footer_records_read_by_their_types():
    header = DefaultRecord(
        0, 0, control_record_key(SNAPSHOT_HEADER), bytes.fromhex("0000 00000000000003e8 00"), (), -1, 0
    )
    footer = DefaultRecord(0, 0, control_record_key(SNAPSHOT_FOOTER), bytes.fromhex("0000 00"), (), -1, 0)
    assert deserialize_snapshot_header_record(header) == {"version": 0, "last_contained_log_timestamp": 1000}
    assert deserialize_snapshot_footer_record(footer) == {"version": 0}
    with pytest.raises(
        ValueError, match=r"Expected SNAPSHOT_FOOTER control record type\(4\), but found SNAPSHOT_HEADER"
    ):
        deserialize_snapshot_footer_record(header)


def test_the_transaction_path_still_reads_a_raft_control_type_as_unknown():
    assert ControlRecordType.parse(control_record_key(LEADER_CHANGE)) is ControlRecordType.UNKNOWN


def test_a_snapshot_begins_and_ends_with_control_batches_of_its_own():
    header = _only_batch(
        with_snapshot_header_record(0, 1000, 2, {"version": 0, "last_contained_log_timestamp": 900})
    )
    footer = _only_batch(with_snapshot_footer_record(9, 1000, 2, {"version": 0}))
    for batch in (header, footer):
        batch.ensure_valid()
        assert batch.is_control_batch and batch.partition_leader_epoch == 2
    ((header_record,), (footer_record,)) = (list(header), list(footer))
    assert header_record.key == bytes.fromhex("0000 0003")  # SNAPSHOT_HEADER
    assert header_record.value == bytes.fromhex("0000 0000000000000384 00")  # version, timestamp 900, tags
    assert (footer_record.offset, footer_record.key) == (9, bytes.fromhex("0000 0004"))  # SNAPSHOT_FOOTER
    assert deserialize_snapshot_header_record(header_record)["last_contained_log_timestamp"] == 900
    assert deserialize_snapshot_footer_record(footer_record) == {"version": 0}
