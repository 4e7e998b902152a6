"""Building and reading the Raft APIs' one-partition messages, and the error codes they carry.

Mirrors: org.apache.kafka.raft.RaftUtil
         (raft/src/main/java/org/apache/kafka/raft/RaftUtil.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: ``RaftErrors`` names the codes of Kafka 3.3's ``Errors`` that the Raft APIs use, as an
         ``IntEnum`` whose values come from kafka_lite's error table (``common/errors.py``).

The builders are also the ``singletonRequest``/``singletonResponse`` helpers of Kafka's VoteRequest,
BeginQuorumEpochRequest, EndQuorumEpochRequest and DescribeQuorumResponse.

Every Raft message carries topics and partitions, as Kafka's multi-partition APIs do, but a quorum
replicates exactly one partition (``__cluster_metadata``-0). A message for any other partition is
refused as an invalid request: the shape leaves room for several Raft partitions later, the code
accepts one.
"""

from __future__ import annotations

import enum
import uuid
from typing import Any

from kafka_lite.common.errors import ApiException, Errors
from kafka_lite.common.protocol.raft_messages import RaftApiKeys
from kafka_lite.common.topic_partition import TopicPartition

# Kafka's ``Uuid.METADATA_TOPIC_ID``: the fixed id of ``__cluster_metadata`` (Fetch v13 names topics by id).
METADATA_TOPIC_ID = uuid.UUID(int=1)


class RaftErrors(enum.IntEnum):
    """The codes of Kafka's ``Errors`` that the Raft APIs use, under Kafka 3.3's names.

    Each value is read from kafka_lite's one error table (``common/errors.py``), so a code cannot
    disagree with the broker's; an ``IntEnum`` so the handlers compare and encode it as the int the
    wire carries. Two codes have Kafka 2.6+'s names here (``NEW_NAMES``): the table keeps 0.11's.
    """

    UNKNOWN_SERVER_ERROR = Errors.UNKNOWN.code
    NONE = Errors.NONE.code
    UNKNOWN_TOPIC_OR_PARTITION = Errors.UNKNOWN_TOPIC_OR_PARTITION.code
    NOT_LEADER_OR_FOLLOWER = Errors.NOT_LEADER_FOR_PARTITION.code
    REQUEST_TIMED_OUT = Errors.REQUEST_TIMED_OUT.code
    BROKER_NOT_AVAILABLE = Errors.BROKER_NOT_AVAILABLE.code
    NETWORK_EXCEPTION = Errors.NETWORK_EXCEPTION.code
    INCONSISTENT_GROUP_PROTOCOL = Errors.INCONSISTENT_GROUP_PROTOCOL.code
    CLUSTER_AUTHORIZATION_FAILED = Errors.CLUSTER_AUTHORIZATION_FAILED.code
    UNSUPPORTED_VERSION = Errors.UNSUPPORTED_VERSION.code
    INVALID_REQUEST = Errors.INVALID_REQUEST.code
    FENCED_LEADER_EPOCH = Errors.FENCED_LEADER_EPOCH.code
    UNKNOWN_LEADER_EPOCH = Errors.UNKNOWN_LEADER_EPOCH.code
    INCONSISTENT_VOTER_SET = Errors.INCONSISTENT_VOTER_SET.code
    SNAPSHOT_NOT_FOUND = Errors.SNAPSHOT_NOT_FOUND.code
    POSITION_OUT_OF_RANGE = Errors.POSITION_OUT_OF_RANGE.code
    INCONSISTENT_CLUSTER_ID = Errors.INCONSISTENT_CLUSTER_ID.code

    @classmethod
    def for_code(cls, code: int) -> RaftErrors:
        """The member for ``code``; a code the Raft APIs do not use is UNKNOWN_SERVER_ERROR, as an
        unknown code is for Kafka's ``Errors.forCode``."""
        try:
            return cls(code)
        except ValueError:
            return cls.UNKNOWN_SERVER_ERROR

    def error(self) -> Errors:
        """The entry of kafka_lite's error table: its description and exception class."""
        return Errors.for_code(self.value)

    def exception(self, message: str | None = None) -> ApiException:
        """This error's exception (Kafka's ``Errors.exception()``); NONE has none."""
        return self.error().exception(message)


# -- requests -----------------------------------------------------------------------------------------------


def vote_request(
    tp: TopicPartition, cluster_id: str | None, candidate_epoch: int, candidate_id: int,
    last_epoch: int, last_epoch_end_offset: int,
) -> dict[str, Any]:  # fmt: skip
    return {"cluster_id": cluster_id, "topics": [{"topic_name": tp.topic, "partitions": [{
        "partition_index": tp.partition, "candidate_epoch": candidate_epoch, "candidate_id": candidate_id,
        "last_offset_epoch": last_epoch, "last_offset": last_epoch_end_offset}]}]}  # fmt: skip


def begin_quorum_epoch_request(
    tp: TopicPartition, cluster_id: str | None, leader_epoch: int, leader_id: int
) -> dict[str, Any]:
    return {"cluster_id": cluster_id, "topics": [{"topic_name": tp.topic, "partitions": [{
        "partition_index": tp.partition, "leader_id": leader_id, "leader_epoch": leader_epoch}]}]}  # fmt: skip


def end_quorum_epoch_request(
    tp: TopicPartition,
    cluster_id: str | None,
    leader_epoch: int,
    leader_id: int,
    preferred_successors: list[int],
) -> dict[str, Any]:
    return {"cluster_id": cluster_id, "topics": [{"topic_name": tp.topic, "partitions": [{
        "partition_index": tp.partition, "leader_id": leader_id, "leader_epoch": leader_epoch,
        "preferred_successors": list(preferred_successors)}]}]}  # fmt: skip


def describe_quorum_request(tp: TopicPartition) -> dict[str, Any]:
    return {"topics": [{"topic_name": tp.topic, "partitions": [{"partition_index": tp.partition}]}]}


def fetch_request(
    topic_id: uuid.UUID, tp: TopicPartition, cluster_id: str | None, replica_id: int, max_wait_ms: int,
    current_leader_epoch: int, fetch_offset: int, last_fetched_epoch: int, max_bytes: int,
) -> dict[str, Any]:  # fmt: skip
    return {
        "replica_id": replica_id, "max_wait_ms": max_wait_ms, "min_bytes": 0, "max_bytes": max_bytes,
        "isolation_level": 0, "session_id": 0, "session_epoch": -1,
        "topics": [{"topic_id": topic_id, "partitions": [{
            "partition": tp.partition, "current_leader_epoch": current_leader_epoch,
            "fetch_offset": fetch_offset, "last_fetched_epoch": last_fetched_epoch,
            "log_start_offset": -1, "partition_max_bytes": 0}]}],
        "forgotten_topics_data": [], "rack_id": "", "cluster_id": cluster_id,
    }  # fmt: skip


def fetch_snapshot_request(
    tp: TopicPartition, cluster_id: str | None, replica_id: int, current_leader_epoch: int,
    snapshot_id: tuple[int, int], position: int, max_bytes: int = 0x7FFFFFFF,
) -> dict[str, Any]:  # fmt: skip
    """``snapshot_id`` is (end offset, epoch); ``position`` the byte to continue from."""
    return {"replica_id": replica_id, "max_bytes": max_bytes, "cluster_id": cluster_id,
        "topics": [{"name": tp.topic, "partitions": [{
            "partition": tp.partition, "current_leader_epoch": current_leader_epoch,
            "snapshot_id": {"end_offset": snapshot_id[0], "epoch": snapshot_id[1]}, "position": position}]}]}  # fmt: skip


# -- responses ----------------------------------------------------------------------------------------------


def vote_response(
    tp: TopicPartition, top_level_error: int, partition_error: int, leader_epoch: int, leader_id: int,
    vote_granted: bool,
) -> dict[str, Any]:  # fmt: skip
    return {"error_code": top_level_error, "topics": [{"topic_name": tp.topic, "partitions": [{
        "partition_index": tp.partition, "error_code": partition_error, "leader_id": leader_id,
        "leader_epoch": leader_epoch, "vote_granted": vote_granted}]}]}  # fmt: skip


def leader_response(
    tp: TopicPartition, top_level_error: int, partition_error: int, leader_epoch: int, leader_id: int
) -> dict[str, Any]:
    """BeginQuorumEpoch's and EndQuorumEpoch's response (they share a schema)."""
    return {"error_code": top_level_error, "topics": [{"topic_name": tp.topic, "partitions": [{
        "partition_index": tp.partition, "error_code": partition_error, "leader_id": leader_id,
        "leader_epoch": leader_epoch}]}]}  # fmt: skip


def fetch_response(
    topic_id: uuid.UUID, tp: TopicPartition, error: int, *, records: bytes = b"", high_watermark: int = -1,
    log_start_offset: int = -1, leader_id: int = -1, leader_epoch: int = -1,
    diverging_epoch: tuple[int, int] | None = None, snapshot_id: tuple[int, int] | None = None,
    top_level_error: int = RaftErrors.NONE,
) -> dict[str, Any]:  # fmt: skip
    """A one-partition Fetch v13 response; ``diverging_epoch`` and ``snapshot_id`` are (epoch, end offset)."""
    diverging = {"epoch": -1, "end_offset": -1}
    if diverging_epoch is not None:
        diverging = {"epoch": diverging_epoch[0], "end_offset": diverging_epoch[1]}
    snapshot = {"end_offset": -1, "epoch": -1}
    if snapshot_id is not None:
        snapshot = {"epoch": snapshot_id[0], "end_offset": snapshot_id[1]}
    return {"throttle_time_ms": 0, "error_code": top_level_error, "session_id": 0, "responses": [{
        "topic_id": topic_id, "partitions": [{
            "partition_index": tp.partition, "error_code": error, "high_watermark": high_watermark,
            "last_stable_offset": -1, "log_start_offset": log_start_offset, "aborted_transactions": None,
            "preferred_read_replica": -1, "records": records, "diverging_epoch": diverging,
            "current_leader": {"leader_id": leader_id, "leader_epoch": leader_epoch},
            "snapshot_id": snapshot}]}]}  # fmt: skip


def fetch_snapshot_response(
    tp: TopicPartition, error: int, leader_id: int, leader_epoch: int, snapshot_id: tuple[int, int] = (-1, -1),
    size: int = 0, position: int = 0, records: bytes = b"",
) -> dict[str, Any]:  # fmt: skip
    """A one-partition FetchSnapshot response; ``snapshot_id`` is (end offset, epoch)."""
    return {"throttle_time_ms": 0, "error_code": RaftErrors.NONE, "topics": [{"name": tp.topic, "partitions": [{
        "index": tp.partition, "error_code": error,
        "snapshot_id": {"end_offset": snapshot_id[0], "epoch": snapshot_id[1]}, "size": size,
        "position": position, "unaligned_records": records,
        "current_leader": {"leader_id": leader_id, "leader_epoch": leader_epoch}}]}]}  # fmt: skip


def describe_quorum_response(tp: TopicPartition, partition: dict[str, Any]) -> dict[str, Any]:
    return {"error_code": RaftErrors.NONE, "topics": [{"topic_name": tp.topic, "partitions": [
        {"partition_index": tp.partition, **partition}]}]}  # fmt: skip


def describe_quorum_error_response(tp: TopicPartition, error: int) -> dict[str, Any]:
    return describe_quorum_response(tp, {
        "error_code": error, "leader_id": -1, "leader_epoch": -1, "high_watermark": -1,
        "current_voters": [], "observers": []})  # fmt: skip


def error_response(api_key: int, error: int) -> dict[str, Any]:
    """A response with only a top-level error: what a failed send turns into (Kafka's ``RaftUtil.errorResponse``)."""
    if api_key == RaftApiKeys.FETCH:
        return {"throttle_time_ms": 0, "error_code": error, "session_id": 0, "responses": []}
    if api_key == RaftApiKeys.FETCH_SNAPSHOT:
        return {"throttle_time_ms": 0, "error_code": error, "topics": []}
    return {"error_code": error, "topics": []}


# -- reading ------------------------------------------------------------------------------------------------


def single_partition(data: dict[str, Any], tp: TopicPartition, topics_key: str = "topics") -> dict | None:
    """The one partition of a Raft message, or None when the message is not for ``tp`` alone
    (Kafka's ``hasValidTopicPartition``, followed by ``topics().get(0).partitions().get(0)``)."""
    topics = data.get(topics_key) or []
    if len(topics) != 1:
        return None
    topic = topics[0]
    partitions = topic.get("partitions") or []
    if len(partitions) != 1:
        return None
    name = topic.get("topic_name", topic.get("name"))
    if name is not None and name != tp.topic:
        return None
    if "topic_id" in topic and topic["topic_id"] != METADATA_TOPIC_ID:
        return None
    partition = partitions[0]
    index = partition.get("partition_index", partition.get("partition", partition.get("index")))
    return partition if index == tp.partition else None
