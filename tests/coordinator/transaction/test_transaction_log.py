"""The records of __transaction_state in Kafka 0.11.0's exact bytes (TransactionLog.keyToBytes and
valueToBytes), read back, and refused when they do not match the schemas."""

from __future__ import annotations

import pytest

from kafka_lite.coordinator.transaction.transaction_log import (
    TransactionLogRecordException,
    key_to_bytes,
    read_txn_record_key,
    read_txn_record_value,
    value_to_bytes,
)
from kafka_lite.coordinator.transaction.transaction_metadata import TransactionState, TxnTransitMetadata

pytestmark = pytest.mark.unit

TxnState = TransactionState


def test_key_golden_bytes():
    # version 0, then the transactional id as a STRING (int16 length + UTF-8)
    assert key_to_bytes("txn-1") == bytes.fromhex("00000005") + b"txn-1"
    assert read_txn_record_key(key_to_bytes("txn-1")).transactional_id == "txn-1"


def test_value_golden_bytes_of_an_ongoing_transaction():
    transit = TxnTransitMetadata(
        producer_id=1000, producer_epoch=2, txn_timeout_ms=60_000, txn_state=TxnState.ONGOING,
        topic_partitions=frozenset({("b", 1), ("a", 0), ("a", 3)}),
        txn_start_timestamp=1_500_000_000_000, txn_last_update_timestamp=1_500_000_000_123,
    )  # fmt: skip
    expected = bytes.fromhex(
        "0000"  # value version 0
        "00000000000003e8"  # producer_id 1000
        "0002"  # producer_epoch
        "0000ea60"  # transaction_timeout 60000
        "01"  # transaction_status: Ongoing
        "00000002"  # two topics
        "0001" "61" "00000002" "00000000" "00000003"  # a: [0, 3]
        "0001" "62" "00000001" "00000001"  # b: [1]
        "0000015d3ef7987b"  # transaction_entry_timestamp (last update)
        "0000015d3ef79800"  # transaction_start_timestamp
    )  # fmt: skip
    assert value_to_bytes(transit) == expected
    m = read_txn_record_value("txn", expected)
    assert (m.producer_id, m.producer_epoch, m.txn_timeout_ms, m.state) == (1000, 2, 60_000, TxnState.ONGOING)
    assert m.topic_partitions == {("a", 0), ("a", 3), ("b", 1)}
    assert (m.txn_start_timestamp, m.txn_last_update_timestamp) == (1_500_000_000_000, 1_500_000_000_123)


def test_an_empty_transaction_has_null_partitions():
    transit = TxnTransitMetadata(5, 0, 1000, TxnState.EMPTY, frozenset(), -1, 7)
    value = value_to_bytes(transit)
    assert value == bytes.fromhex("0000" "0000000000000005" "0000" "000003e8" "00" "ffffffff"
                                  "0000000000000007" "ffffffffffffffff")  # fmt: skip
    m = read_txn_record_value("t", value)
    assert m.state is TxnState.EMPTY and m.topic_partitions == set() and m.txn_start_timestamp == -1
    with pytest.raises(TransactionLogRecordException, match="not expected to have any partitions"):
        value_to_bytes(TxnTransitMetadata(5, 0, 1000, TxnState.EMPTY, frozenset({("a", 0)}), -1, 7))


def test_a_tombstone_reads_as_none_and_bad_records_are_refused():
    assert read_txn_record_value("t", None) is None
    with pytest.raises(TransactionLogRecordException, match="key should not be null"):
        read_txn_record_key(None)
    with pytest.raises(TransactionLogRecordException, match="key schema version 1"):
        read_txn_record_key(b"\x00\x01\x00\x01a")
    with pytest.raises(TransactionLogRecordException, match="too short"):
        read_txn_record_key(b"\x00")
    good = value_to_bytes(TxnTransitMetadata(5, 0, 1000, TxnState.EMPTY, frozenset(), -1, 7))
    with pytest.raises(TransactionLogRecordException, match="trailing"):
        read_txn_record_value("t", good + b"\x00")
    bad_state = bytearray(good)
    bad_state[16] = 9  # the status byte
    with pytest.raises(TransactionLogRecordException, match="Unknown transaction state byte 9"):
        read_txn_record_value("t", bytes(bad_state))
