"""Transactions in the log and in Fetch over the wire (Kafka 0.11, KIP-98), on the 3-broker cluster:
transactional batches produced by hand, WriteTxnMarkers sent straight to the leader as a
transaction coordinator would, then read_committed and read_uncommitted fetches."""

from __future__ import annotations

import time
import uuid

import pytest

from kafka_lite.common.errors import Errors
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.fetch_request import READ_COMMITTED
from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.record.end_transaction_marker import (
    ControlRecordType,
    EndTransactionMarker,
    build_end_transaction_marker_batch,
)
from kafka_lite.tools.dump_log_segments import dump
from tests.support.waiting import wait_until
from tests.support.wire import WireClient, fetch_body, fetched, partition_response, produce_body

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("cluster")]

T0 = int(time.time() * 1000) - 3_600_000  # an hour ago: inside retention, as in test_kafka_apis


@pytest.fixture
def topic(cluster):
    t = f"txn-{uuid.uuid4().hex[:8]}"
    cluster.create_topic(t, partitions=1, replication_factor=3, retention_ms=-1)
    return t


def leader_client(cluster, topic: str) -> WireClient:
    return WireClient(cluster.server(cluster.leader_of(topic, 0)).port)


def producer_id(client: WireClient) -> int:
    init = client.call(
        ApiKeys.INIT_PRODUCER_ID, 0, {"transactional_id": None, "transaction_timeout_ms": 60000}
    )
    assert init["error_code"] == 0
    return init["producer_id"]


def produce_txn(client, topic, pid, values, seq=0, epoch=0) -> int:
    records = MemoryRecords.with_records(
        [(T0 + i, None, v) for i, v in enumerate(values)],
        producer_id=pid, producer_epoch=epoch, base_sequence=seq, is_transactional=True,
    )  # fmt: skip
    r = partition_response(
        client.call(ApiKeys.PRODUCE, 3, produce_body(topic, 0, bytes(records.buffer()), acks=-1))
    )
    assert r["error_code"] == 0, Errors.for_code(r["error_code"])
    return r["base_offset"]


def write_marker(client, topic, pid, commit: bool, epoch=0, coordinator_epoch=0, partition=0) -> Errors:
    body = {
        "transaction_markers": [
            {
                "producer_id": pid, "producer_epoch": epoch, "transaction_result": commit,
                "topics": [{"topic": topic, "partitions": [partition]}], "coordinator_epoch": coordinator_epoch,
            }
        ]
    }  # fmt: skip
    response = client.call(ApiKeys.WRITE_TXN_MARKERS, 0, body)
    ((marker,),) = [response["transaction_markers"]]
    assert marker["producer_id"] == pid
    ((t,),) = [marker["topics"]]
    ((p,),) = [t["partitions"]]
    return Errors.for_code(p["error_code"])


def fetch(client, topic, isolation_level) -> tuple[dict, list[int]]:
    body = fetch_body(topic)
    body["isolation_level"] = isolation_level
    header, data = fetched(client.call(ApiKeys.FETCH, 5, body))
    assert header["error_code"] == 0
    offsets = [o for b in MemoryRecords(data).batches() for o in range(b.base_offset, b.last_offset + 1)]
    return header, offsets


def latest_offset(client, topic, isolation_level) -> int:
    body = {
        "replica_id": -1, "isolation_level": isolation_level,
        "topics": [{"topic": topic, "partitions": [{"partition": 0, "timestamp": -1}]}],
    }  # fmt: skip
    return partition_response(client.call(ApiKeys.LIST_OFFSETS, 2, body))["offset"]


def test_read_committed_stops_at_an_open_transaction_until_its_commit(cluster, topic):
    client = leader_client(cluster, topic)
    client.call(
        ApiKeys.PRODUCE,
        3,
        produce_body(topic, 0, bytes(MemoryRecords.with_records([(T0, None, b"a")]).buffer()), acks=-1),
    )
    pid = producer_id(client)
    assert produce_txn(client, topic, pid, [b"t1", b"t2"]) == 1  # offsets 1-2, open
    header, offsets = fetch(client, topic, READ_COMMITTED)
    assert header["high_watermark"] == 3 and header["last_stable_offset"] == 1
    assert offsets == [0] and header["aborted_transactions"] == []
    assert latest_offset(client, topic, READ_COMMITTED) == 1
    header, offsets = fetch(client, topic, 0)
    assert (
        offsets == [0, 1, 2] and header["last_stable_offset"] == -1 and header["aborted_transactions"] is None
    )
    assert latest_offset(client, topic, 0) == 3

    assert write_marker(client, topic, pid, commit=True) is Errors.NONE  # offset 3, acks=-1: replicated
    header, offsets = fetch(client, topic, READ_COMMITTED)
    assert header["last_stable_offset"] == header["high_watermark"] == 4
    assert offsets == [0, 1, 2, 3] and header["aborted_transactions"] == []


def test_an_abort_is_named_to_read_committed_and_survives_a_new_leader(cluster, topic):
    client = leader_client(cluster, topic)
    aborted, still_open = producer_id(client), producer_id(client)
    produce_txn(client, topic, aborted, [b"x", b"y"])  # 0-1
    produce_txn(client, topic, still_open, [b"z"])  # 2
    assert write_marker(client, topic, aborted, commit=False) is Errors.NONE  # 3
    header, offsets = fetch(client, topic, READ_COMMITTED)
    assert header["last_stable_offset"] == 2 and offsets == [0, 1]
    assert header["aborted_transactions"] == [{"producer_id": aborted, "first_offset": 0}]
    _, offsets = fetch(client, topic, 0)
    assert offsets == [0, 1, 2, 3]

    old = cluster.leader_of(topic, 0)

    def followers_caught_up() -> bool:
        replicas = [cluster.server(b).replica_manager.get_partition((topic, 0)) for b in range(3) if b != old]
        return all(p.log.log_end_offset == 4 and p.high_watermark() == 4 for p in replicas)

    wait_until(followers_caught_up, what="the followers to have the marker below their high watermark")
    new = cluster.move_leader(topic, 0, next(b for b in range(3) if b != old))
    assert new != old
    client = WireClient(cluster.server(new).port)
    header, offsets = fetch(client, topic, READ_COMMITTED)
    assert header["last_stable_offset"] == 2 and offsets == [0, 1]
    assert header["aborted_transactions"] == [{"producer_id": aborted, "first_offset": 0}]


def test_a_client_may_not_produce_a_control_batch(cluster, topic):
    client = leader_client(cluster, topic)
    pid = producer_id(client)
    produce_txn(client, topic, pid, [b"a"])
    marker = build_end_transaction_marker_batch(pid, 0, EndTransactionMarker(ControlRecordType.COMMIT, 0), T0)
    r = partition_response(client.call(ApiKeys.PRODUCE, 3, produce_body(topic, 0, bytes(marker.buffer()))))
    assert Errors.for_code(r["error_code"]) is Errors.CORRUPT_MESSAGE
    header, offsets = fetch(client, topic, 0)
    assert offsets == [0] and header["high_watermark"] == 1, "the log is unchanged"
    assert fetch(client, topic, READ_COMMITTED)[0]["last_stable_offset"] == 0, "the transaction is still open"


def test_a_marker_with_an_old_producer_epoch_is_refused(cluster, topic):
    client = leader_client(cluster, topic)
    pid = producer_id(client)
    produce_txn(client, topic, pid, [b"a", b"b"], epoch=1)  # the producer is at epoch 1
    assert write_marker(client, topic, pid, commit=True, epoch=0) is Errors.INVALID_PRODUCER_EPOCH
    header, offsets = fetch(client, topic, 0)
    assert offsets == [0, 1] and header["high_watermark"] == 2, "no marker written"
    assert fetch(client, topic, READ_COMMITTED)[0]["last_stable_offset"] == 0, "still open"
    # a marker re-sent with no open transaction (after a coordinator failover) ends an empty one
    assert write_marker(client, topic, pid, commit=True, epoch=1) is Errors.NONE
    assert write_marker(client, topic, pid, commit=True, epoch=1) is Errors.NONE
    header, offsets = fetch(client, topic, READ_COMMITTED)
    assert header["last_stable_offset"] == 4 and offsets == [0, 1, 2, 3]


def test_markers_for_partitions_this_broker_does_not_lead(cluster, topic):
    leader = cluster.leader_of(topic, 0)
    pid = producer_id(leader_client(cluster, topic))
    follower = WireClient(cluster.server(next(b for b in range(3) if b != leader)).port)
    assert write_marker(follower, topic, pid, commit=False) is Errors.NOT_LEADER_FOR_PARTITION
    assert (
        write_marker(follower, "no-such-topic-" + topic, pid, commit=False)
        is Errors.UNKNOWN_TOPIC_OR_PARTITION
    )


def test_dump_log_names_the_markers_and_the_aborted_transactions(cluster, topic):
    client = leader_client(cluster, topic)
    committed, aborted = producer_id(client), producer_id(client)
    produce_txn(client, topic, committed, [b"a"])  # 0
    produce_txn(client, topic, aborted, [b"b"])  # 1
    assert write_marker(client, topic, committed, commit=True, coordinator_epoch=4) is Errors.NONE  # 2
    assert write_marker(client, topic, aborted, commit=False, coordinator_epoch=4) is Errors.NONE  # 3
    directory = cluster.directory / f"broker-{cluster.leader_of(topic, 0)}" / f"{topic}-0"
    lines = list(dump(directory / "00000000000000000000.log", deep=True))
    batches = [line for line in lines if line.startswith("baseOffset:")]
    assert "isControl: false" in batches[0]
    assert "isControl: true" in batches[2] and "endTxnMarker: COMMIT coordinatorEpoch: 4" in batches[2]
    assert "endTxnMarker: ABORT coordinatorEpoch: 4" in batches[3]
    assert any(line.startswith("| offset: 3") and "endTxnMarker: ABORT" in line for line in lines)
    index = list(dump(directory / "00000000000000000000.txnindex"))
    assert index[1:] == [f"version: 0 producerId: {aborted} firstOffset: 1 lastOffset: 3 lastStableOffset: 4"]
