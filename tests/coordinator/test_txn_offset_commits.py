"""Offsets committed inside a transaction (TxnOffsetCommit, Kafka 0.11) in the group coordinator, over
a real in-process replica manager on a MockTime: written in a transactional batch of the producer,
pending until the transaction's marker, the group's on commit and dropped on abort; and a new
leader loading __consumer_offsets applies them only where a commit marker follows."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import Errors
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.requests import RequestHeader, encode_request, parse_request, parse_response
from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.record.end_transaction_marker import (
    ControlRecordType,
    EndTransactionMarker,
    build_end_transaction_marker_batch,
)
from kafka_lite.common.time import MockTime
from kafka_lite.coordinator.group_metadata_manager import GROUP_METADATA_TOPIC_NAME, partition_for
from kafka_lite.coordinator.offset_and_metadata import OffsetAndMetadata
from kafka_lite.network.request_channel import Request, RequestChannel
from kafka_lite.server import quota_factory
from kafka_lite.server.kafka_apis import KafkaApis
from kafka_lite.server.kafka_config import KafkaConfig
from kafka_lite.server.metadata_cache import MetadataCache
from kafka_lite.testing.in_process_replicas import in_process_brokers, records_bytes
from tests.coordinator.test_group_metadata_manager_store import GROUP_ID, PARTITIONS, TP0, TP1, Broker

pytestmark = pytest.mark.unit

OFFSETS_PARTITION = partition_for(GROUP_ID, PARTITIONS)


@pytest.fixture
def broker(tmp_path):
    time = MockTime()
    with in_process_brokers(tmp_path, time, count=1) as (replica_manager,):
        yield Broker(replica_manager, time)


def txn_commit(b: Broker, producer_id: int, offsets: dict, epoch: int = 0) -> dict:
    answers: list = []
    b.coordinator.handle_txn_commit_offsets(
        GROUP_ID, producer_id, epoch, {tp: OffsetAndMetadata(o) for tp, o in offsets.items()}, answers.append
    )
    assert len(answers) == 1
    return answers[0]


def read_bytes(log_) -> bytes:
    return records_bytes(log_.read(0, 1 << 20).records)


def offsets(b: Broker) -> dict:
    error, fetched = b.fetch([TP0, TP1])
    assert error is Errors.NONE
    return {tp: o.offset for tp, o in fetched.items()}


def write_marker(b: Broker, producer_id: int, commit: bool, epoch: int = 0) -> None:
    """The marker a WriteTxnMarkers appends, then the handler's call to the coordinator."""
    kind = ControlRecordType.COMMIT if commit else ControlRecordType.ABORT
    batch = build_end_transaction_marker_batch(
        producer_id, epoch, EndTransactionMarker(kind, 0), b.time.milliseconds()
    )
    partition = b.replica_manager.get_partition((GROUP_METADATA_TOPIC_NAME, OFFSETS_PARTITION))
    partition.append_records_to_leader(batch, -1, is_from_client=False)
    b.coordinator.handle_txn_completion(producer_id, {OFFSETS_PARTITION}, commit)
    b.scheduler.tick()


def test_a_transactions_offsets_are_pending_until_its_commit_marker(broker):
    assert txn_commit(broker, 5, {TP0: 10, TP1: 11}) == {TP0: Errors.NONE, TP1: Errors.NONE}
    assert offsets(broker) == {TP0: -1, TP1: -1}
    log_ = broker.log()[1]
    (batch,) = MemoryRecords(read_bytes(log_)).batches()
    assert batch.is_transactional and (batch.producer_id, batch.producer_epoch, batch.num_records) == (
        5,
        0,
        2,
    )
    write_marker(broker, 5, commit=True)
    assert offsets(broker) == {TP0: 10, TP1: 11}


def test_an_aborted_transactions_offsets_are_dropped(broker):
    broker.commit({TP0: OffsetAndMetadata(3)})
    txn_commit(broker, 6, {TP0: 20})
    write_marker(broker, 6, commit=False)
    assert offsets(broker) == {TP0: 3, TP1: -1}
    write_marker(broker, 6, commit=True)  # a later commit of that producer has nothing pending
    assert offsets(broker) == {TP0: 3, TP1: -1}


def test_a_commit_without_a_producer_is_refused_and_stores_nothing(broker):
    assert txn_commit(broker, -1, {TP0: 10}) == {TP0: Errors.INVALID_PRODUCER_ID_MAPPING}
    assert txn_commit(broker, 5, {TP0: 10}, epoch=-1) == {TP0: Errors.INVALID_PRODUCER_EPOCH}
    assert broker.records() == []
    assert offsets(broker) == {TP0: -1, TP1: -1}


def test_a_fenced_epoch_is_refused_by_the_log(broker):
    txn_commit(broker, 5, {TP0: 10}, epoch=1)
    assert txn_commit(broker, 5, {TP0: 11}, epoch=0) == {TP0: Errors.INVALID_PRODUCER_EPOCH}


def test_loading_applies_only_offsets_whose_commit_marker_follows(broker):
    broker.commit({TP1: OffsetAndMetadata(1)})
    txn_commit(broker, 5, {TP0: 10, TP1: 11})
    write_marker(broker, 5, commit=True)
    txn_commit(broker, 6, {TP0: 66})
    write_marker(broker, 6, commit=False)
    txn_commit(broker, 7, {TP1: 77})  # no marker yet
    # a new coordinator over the same log
    broker.new_coordinator()
    assert offsets(broker) == {TP0: 10, TP1: 11}
    write_marker(broker, 7, commit=True)  # the open transaction's marker still completes it
    assert offsets(broker) == {TP0: 10, TP1: 77}


def test_a_plain_commit_after_a_transactions_offsets_wins_on_load(broker):
    txn_commit(broker, 5, {TP0: 10})
    broker.commit({TP0: OffsetAndMetadata(12)})  # appended after the transaction's record...
    write_marker(broker, 5, commit=True)  # ...which commits later
    broker.new_coordinator()
    assert offsets(broker)[TP0] == 12  # the log's later record wins (Kafka 0.11's olderThan)


def test_a_plain_commit_after_a_transactions_offsets_wins_at_once_too(broker):
    txn_commit(broker, 5, {TP0: 10})
    broker.commit({TP0: OffsetAndMetadata(12)})
    write_marker(broker, 5, commit=True)
    assert offsets(broker)[TP0] == 12


def test_the_marker_handler_is_told_only_once_the_group_has_taken_the_offsets(broker):
    """WriteTxnMarkers answers the transaction coordinator through ``on_complete``: by then a fetch
    of the group's offsets must already return the transaction's, since the coordinator's
    CompleteCommit (and a successor's InitProducerId) follow that answer."""
    txn_commit(broker, 7, {TP0: 20, TP1: 21})
    seen_at_completion: list = []
    kind = ControlRecordType.COMMIT
    batch = build_end_transaction_marker_batch(
        7, 0, EndTransactionMarker(kind, 0), broker.time.milliseconds()
    )
    partition = broker.replica_manager.get_partition((GROUP_METADATA_TOPIC_NAME, OFFSETS_PARTITION))
    partition.append_records_to_leader(batch, -1, is_from_client=False)
    broker.coordinator.handle_txn_completion(
        7, {OFFSETS_PARTITION}, True, lambda: seen_at_completion.append(offsets(broker))
    )
    assert seen_at_completion == [], "the completion runs on the scheduler, not in the appending thread"
    broker.scheduler.tick()
    assert seen_at_completion == [{TP0: 20, TP1: 21}]


def test_write_txn_markers_is_answered_only_once_the_group_has_taken_the_offsets(broker):
    """The partition leader's side: WriteTxnMarkers for ``__consumer_offsets`` appends the marker,
    and its response waits for the group coordinator, whose completion runs on its scheduler."""
    txn_commit(broker, 7, {TP0: 20, TP1: 21})
    config = KafkaConfig({"zookeeper.connect": "unused:2181", "broker.id": 0})
    quotas = quota_factory.instantiate(config, broker.time)
    channel = RequestChannel(1, 16)
    apis = KafkaApis(
        channel, broker.replica_manager, None, broker.coordinator, None, None, MetadataCache(0), None, quotas,
        config, "cluster", broker.time,
    )  # fmt: skip
    marker = {"producer_id": 7, "producer_epoch": 0, "transaction_result": True, "coordinator_epoch": 0,
              "topics": [{"topic": GROUP_METADATA_TOPIC_NAME, "partitions": [OFFSETS_PARTITION]}]}  # fmt: skip
    header, body = parse_request(
        encode_request(
            RequestHeader(ApiKeys.WRITE_TXN_MARKERS, 0, 1, "txn"), {"transaction_markers": [marker]}
        )
    )
    try:
        apis.handle(Request(0, "coordinator", header, body, 0, "127.0.0.1", 0))
        assert channel.receive_response(0) is None, "answered before the group took the offsets"
        broker.scheduler.tick()
        assert offsets(broker) == {TP0: 20, TP1: 21}
        response = channel.receive_response(0)
        assert response is not None, "no answer once the group took the offsets"
        frame = b"".join(bytes(p) for p in response.pieces)
        [answer] = parse_response(ApiKeys.WRITE_TXN_MARKERS, 0, frame)[1]["transaction_markers"]
        [topic] = answer["topics"]
        assert [p["error_code"] for p in topic["partitions"]] == [Errors.NONE.code]
    finally:
        quotas.shutdown()
