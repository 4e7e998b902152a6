"""The fetcher and transactions, without a broker: hand-built Fetch responses holding transactional
batches and their COMMIT/ABORT markers, read with read_committed (aborted transactions dropped by the
response's ``aborted_transactions``) and read_uncommitted (everything but the markers). The
position always moves past the markers, so a fetch that ends on one is not fetched again."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from kafka_lite.clients.network_client import ClientResponse
from kafka_lite.common.errors import IllegalArgumentException
from kafka_lite.common.record.end_transaction_marker import (
    ControlRecordType,
    EndTransactionMarker,
    build_end_transaction_marker_batch,
)
from kafka_lite.common.record.memory_records import MemoryRecords
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.consumer.internals.fetcher import READ_COMMITTED, Fetcher
from kafka_lite.testing.fetcher_harness import T0, fetcher_without_network

pytestmark = pytest.mark.unit
TP = TopicPartition("t", 0)
COMMIT = EndTransactionMarker(ControlRecordType.COMMIT, 0)
ABORT = EndTransactionMarker(ControlRecordType.ABORT, 0)


def txn_batch(producer_id: int, base_offset: int, *values: str) -> bytes:
    """A transactional batch of ``producer_id`` at ``base_offset``."""
    records = [(T0, None, v.encode()) for v in values]
    return bytes(
        MemoryRecords.with_records(
            records, base_offset=base_offset, producer_id=producer_id, producer_epoch=0,
            base_sequence=0, is_transactional=True,
        ).buffer()
    )  # fmt: skip


def plain_batch(base_offset: int, *values: str) -> bytes:
    records = [(T0, None, v.encode()) for v in values]
    return bytes(MemoryRecords.with_records(records, base_offset=base_offset).buffer())


def marker(producer_id: int, offset: int, end: EndTransactionMarker) -> bytes:
    return bytes(build_end_transaction_marker_batch(producer_id, 0, end, T0, base_offset=offset).buffer())


def answer(fetcher: Fetcher, fetched_offset: int, log: bytes, aborted: list[tuple[int, int]] | None) -> None:
    """A Fetch v5 response for TP, through the fetcher's response handler: the records ``log`` and
    the aborted transactions as (producer id, first offset)."""
    header = {
        "partition": TP[1], "error_code": 0, "high_watermark": 100, "last_stable_offset": 100,
        "log_start_offset": 0,
        "aborted_transactions": None if aborted is None else [
            {"producer_id": pid, "first_offset": first} for pid, first in aborted
        ],
    }  # fmt: skip
    body = {
        "responses": [
            {"topic": TP[0], "partition_responses": [{"partition_header": header, "record_set": log}]}
        ]
    }
    request = SimpleNamespace(created_ms=fetcher.time.milliseconds())
    fetcher._on_fetch_response(
        ClientResponse(request, fetcher.time.milliseconds(), body), {TP: fetched_offset}
    )  # type: ignore[arg-type]


def values_read(fetcher: Fetcher) -> list[str]:
    values = []
    while batch := fetcher.fetched_records():
        values.extend(r.value for rs in batch.values() for r in rs)
    # One more call: a parsed fetch with no records left (only markers) still moves the position.
    fetcher.fetched_records()
    return values


def fetcher(isolation_level: str, **settings) -> Fetcher:
    f = fetcher_without_network([TP], leaders={TP: 1}, isolation_level=isolation_level, **settings)
    f.subscriptions.seek(TP, 0)
    return f


# Producer 7 commits a transaction, producer 8 aborts one, interleaved with it and with plain records:
#   0-1 p7 "c0","c1" | 2 p8 "a0" | 3 plain "x" | 4 p8 "a1" | 5 COMMIT p7 | 6 ABORT p8 | 7 p8 "n0" | 8 COMMIT p8
INTERLEAVED = (
    txn_batch(7, 0, "c0", "c1")
    + txn_batch(8, 2, "a0")
    + plain_batch(3, "x")
    + txn_batch(8, 4, "a1")
    + marker(7, 5, COMMIT)
    + marker(8, 6, ABORT)
    + txn_batch(8, 7, "n0")
    + marker(8, 8, COMMIT)
)


def test_read_committed_drops_the_aborted_transaction_and_keeps_the_committed_one():
    f = fetcher("read_committed")
    answer(f, 0, INTERLEAVED, aborted=[(8, 2)])
    assert values_read(f) == ["c0", "c1", "x", "n0"], (
        "p8's batches from its aborted transaction's first offset (2) up to its ABORT marker (6) are "
        "dropped; its next transaction (7, committed at 8) is read"
    )
    assert f.subscriptions.position(TP) == 9, "past the last marker: the next fetch starts after it"


def test_read_uncommitted_reads_every_record_but_never_a_marker():
    f = fetcher("read_uncommitted")
    answer(f, 0, INTERLEAVED, aborted=None)
    assert values_read(f) == ["c0", "c1", "a0", "x", "a1", "n0"]
    assert f.subscriptions.position(TP) == 9


def test_an_aborted_transaction_listed_by_a_read_uncommitted_answer_is_still_read():
    # A broker sends aborted_transactions only to read_committed fetches; the fetcher's own isolation
    # level is what decides, so the same list does nothing here.
    f = fetcher("read_uncommitted")
    answer(f, 0, INTERLEAVED, aborted=[(8, 2)])
    assert values_read(f) == ["c0", "c1", "a0", "x", "a1", "n0"]


def test_a_fetch_holding_only_a_marker_moves_the_position_past_it():
    f = fetcher("read_committed")
    answer(f, 0, txn_batch(7, 0, "c0") + marker(7, 1, COMMIT), aborted=[])
    assert values_read(f) == ["c0"]
    assert f.subscriptions.position(TP) == 2
    answer(f, 2, marker(7, 2, COMMIT), aborted=[])
    assert values_read(f) == []
    assert f.subscriptions.position(TP) == 3, (
        "a marker alone still moves the position, or it is fetched for ever"
    )


def test_an_aborted_transaction_at_the_end_of_a_fetch_moves_the_position_past_it():
    f = fetcher("read_committed")
    answer(f, 0, plain_batch(0, "x") + txn_batch(8, 1, "a0", "a1"), aborted=[(8, 1)])
    assert values_read(f) == ["x"]
    assert f.subscriptions.position(TP) == 3, "past the aborted batch (its marker is in a later fetch)"


def test_records_are_handed_out_across_a_marker_a_few_at_a_time():
    f = fetcher("read_committed", max_poll_records=1)
    answer(f, 0, txn_batch(7, 0, "c0") + marker(7, 1, COMMIT) + txn_batch(7, 2, "c1"), aborted=[])
    first = f.fetched_records()
    assert [r.value for r in first[TP]] == ["c0"]
    assert f.subscriptions.position(TP) == 2, "the next record to hand out is at 2: the marker at 1 is passed"
    assert [r.value for r in f.fetched_records()[TP]] == ["c1"]
    assert f.subscriptions.position(TP) == 3


def test_the_fetch_request_carries_the_isolation_level():
    f = fetcher("read_committed")
    ((body, _offsets),) = f._create_fetch_requests().values()
    assert f.isolation_level == READ_COMMITTED and body["isolation_level"] == 1
    ((body, _offsets),) = fetcher("read_uncommitted")._create_fetch_requests().values()
    assert body["isolation_level"] == 0


def test_an_unknown_isolation_level_is_refused_by_name():
    with pytest.raises(IllegalArgumentException, match=r"isolation\.level must be one of"):
        fetcher("read_most")
