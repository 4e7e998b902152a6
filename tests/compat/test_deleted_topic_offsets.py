"""A deleted topic's committed offsets go with it, on both clusters: a group commits an offset for a
topic, the topic is deleted, and the group's coordinator answers OffsetFetch v1 for that partition
as Kafka 0.11 does for a partition the group has no offset for (offset -1, no metadata, no error).
A ZooKeeper broker learns of the deletion from the controller's UpdateMetadata, a KRaft broker from
the RemoveTopicRecord its publisher applies; both hand the partitions to the group coordinator.

Spoken byte by byte (``WireClient``), so that the answer's every field is the broker's own, with no
client library filling in a default."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import Errors
from kafka_lite.common.protocol.api_keys import ApiKeys
from tests.support.topics import topic_name
from tests.support.waiting import wait_until
from tests.support.wire import WireClient

pytestmark = [pytest.mark.compat, pytest.mark.xdist_group("cluster")]

# What Kafka's GroupMetadataManager.getOffsets answers for a partition without an offset.
NO_OFFSET = {"partition": 0, "offset": -1, "metadata": "", "error_code": 0}


def coordinator_of(cluster, group: str) -> WireClient | None:
    """A connection to ``group``'s coordinator, or None while it has none (``__consumer_offsets`` is
    created by the first FindCoordinator, and its partitions need leaders)."""
    port = int(cluster.bootstrap_servers.split(",")[0].rsplit(":", 1)[1])
    any_broker = WireClient(port)
    try:
        found = any_broker.call(
            ApiKeys.FIND_COORDINATOR, 1, {"coordinator_key": group, "coordinator_type": 0}
        )
    finally:
        any_broker.close()
    return None if found["error_code"] else WireClient(found["coordinator"]["port"])


def fetched_offset(cluster, group: str, topic: str) -> dict | None:
    """Partition 0's entry of the coordinator's OffsetFetch v1 answer (None while there is no
    coordinator); the coordinator is looked up each time, in case it moved."""
    coordinator = coordinator_of(cluster, group)
    if coordinator is None:
        return None
    try:
        request = {"group_id": group, "topics": [{"topic": topic, "partitions": [0]}]}
        (answer,) = coordinator.call(ApiKeys.OFFSET_FETCH, 1, request)["responses"]
    finally:
        coordinator.close()
    (partition,) = answer["partition_responses"]
    return partition


def commit_offset(cluster, group: str, topic: str, offset: int) -> dict | None:
    """Partition 0's entry of the answer to an OffsetCommit v2 of ``offset`` from a consumer that
    assigns its partitions itself (generation -1); None while the group's coordinator is not ready,
    which a client retries (COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS)."""
    coordinator = coordinator_of(cluster, group)
    if coordinator is None:
        return None
    commit = {
        "group_id": group, "group_generation_id": -1, "member_id": "", "retention_time": -1,
        "topics": [{"topic": topic, "partitions": [{"partition": 0, "offset": offset, "metadata": "m"}]}],
    }  # fmt: skip
    try:
        (answer,) = coordinator.call(ApiKeys.OFFSET_COMMIT, 2, commit)["responses"]
    finally:
        coordinator.close()
    (partition,) = answer["partition_responses"]
    retriable = {
        Errors.COORDINATOR_NOT_AVAILABLE,
        Errors.NOT_COORDINATOR,
        Errors.COORDINATOR_LOAD_IN_PROGRESS,
    }
    return None if Errors.for_code(partition["error_code"]) in retriable else partition


def test_a_deleted_topics_committed_offsets_go_with_it(cluster):
    topic, group = topic_name("deleted-offsets"), topic_name("deleted-offsets-group")
    cluster.create_topic(topic, partitions=1)
    committed = wait_until(lambda: commit_offset(cluster, group, topic, 5), what=f"a coordinator for {group}")
    assert committed == {"partition": 0, "error_code": 0}
    assert fetched_offset(cluster, group, topic) == {**NO_OFFSET, "offset": 5, "metadata": "m"}

    admin = cluster.admin()
    try:
        admin.delete_topics([topic], timeout_ms=10_000)
    finally:
        admin.close()
    # The coordinator may hear of the deletion after DeleteTopics is answered (the controller's
    # UpdateMetadata to it, or its next metadata fetch): wait for it as the deletion tests wait for
    # the topic to leave every broker's metadata.
    answers: list = []

    def offset_gone() -> bool:
        answers.append(fetched_offset(cluster, group, topic))
        return answers[-1] == NO_OFFSET

    try:
        wait_until(offset_gone, what=f"OffsetFetch to answer {NO_OFFSET} for the deleted {topic}-0")
    except AssertionError as e:
        raise AssertionError(f"{e}; the coordinator's last answer: {answers[-1:]}") from None
