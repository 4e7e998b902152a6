"""OffsetsForLeaderEpoch v0 over the wire (Kafka 0.11, KIP-101), against the session's 3-broker cluster."""

from __future__ import annotations

import uuid

import pytest

from kafka_lite.common.errors import Errors
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.record import MemoryRecords
from kafka_lite.log.epoch.leader_epoch_file_cache import UNDEFINED_EPOCH_OFFSET
from tests.support.waiting import wait_until
from tests.support.wire import WireClient, partition_response, produce_body

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("cluster")]


def _batch(n: int) -> bytes:
    return bytes(MemoryRecords.with_records([(1_700_000_000_000 + i, None, b"v") for i in range(n)]).buffer())


def _ask(port: int, epochs: dict[tuple[str, int], int]) -> dict[tuple[str, int], tuple[int, int]]:
    """Send one OffsetsForLeaderEpoch v0; ``(topic, partition) -> (error code, end offset)``."""
    topics: dict[str, list[dict]] = {}
    for (topic, partition), epoch in epochs.items():
        topics.setdefault(topic, []).append({"partition_id": partition, "leader_epoch": epoch})
    body = {"topics": [{"topic": t, "partitions": ps} for t, ps in topics.items()]}
    response = WireClient(port).call(ApiKeys.OFFSETS_FOR_LEADER_EPOCH, 0, body)
    return {
        (t["topic"], p["partition_id"]): (p["error_code"], p["end_offset"])
        for t in response["topics"]
        for p in t["partitions"]
    }


@pytest.fixture
def produced(cluster):
    """A topic with a leader and a follower, 2 + 3 + 1 records produced to its leader."""
    topic = f"epochs-{uuid.uuid4().hex[:8]}"
    cluster.create_topic(topic, partitions=1, replication_factor=2, retention_ms=-1)
    state = cluster.servers[0].metadata_cache.partition_state(topic, 0)
    follower = next(r for r in state.replicas if r != state.leader)
    wait_until(
        lambda: cluster.server(follower).replica_manager.get_partition((topic, 0)).log is not None,
        what=f"broker {follower} to hold its replica of {topic}-0",
    )
    client = WireClient(cluster.server(state.leader).port)
    for n in (2, 3, 1):
        response = client.call(ApiKeys.PRODUCE, 3, produce_body(topic, 0, _batch(n)))
        assert partition_response(response)["error_code"] == 0
    return topic, state.leader, follower


def test_only_the_leader_answers(cluster, produced):
    topic, leader, follower = produced
    leader_epoch = cluster.server(leader).replica_manager.get_partition((topic, 0)).leader_epoch
    other = next(s.broker_id for s in cluster.servers if s.broker_id not in (leader, follower))
    asked = {(topic, 0): leader_epoch, ("no-such-topic", 0): 0}
    assert _ask(cluster.server(follower).port, asked) == {
        (topic, 0): (Errors.NOT_LEADER_FOR_PARTITION.code, UNDEFINED_EPOCH_OFFSET),
        ("no-such-topic", 0): (Errors.UNKNOWN_TOPIC_OR_PARTITION.code, UNDEFINED_EPOCH_OFFSET),
    }
    # a broker without a replica does not know the partition at all
    assert _ask(cluster.server(other).port, {(topic, 0): leader_epoch}) == {
        (topic, 0): (Errors.UNKNOWN_TOPIC_OR_PARTITION.code, UNDEFINED_EPOCH_OFFSET)
    }
    # the leader knows no epoch newer than its own
    assert _ask(cluster.server(leader).port, {(topic, 0): leader_epoch + 1}) == {
        (topic, 0): (Errors.NONE.code, UNDEFINED_EPOCH_OFFSET)
    }


def test_the_leaders_latest_epoch_ends_at_its_log_end_offset(cluster, produced):
    topic, leader, _ = produced
    partition = cluster.server(leader).replica_manager.get_partition((topic, 0))
    leader_epoch = partition.leader_epoch
    assert partition.log.log_end_offset == 6
    answers = _ask(cluster.server(leader).port, {(topic, 0): leader_epoch})
    assert answers == {(topic, 0): (Errors.NONE.code, 6)}
    # every batch the leader appended carries its epoch, and the cache says where that epoch began
    assert partition.log.leader_epoch_cache.epoch_entries() == [(leader_epoch, 0)]
    stored = MemoryRecords(partition.log.read(0, 1 << 20).records.read_bytes())
    assert [b.partition_leader_epoch for b in stored.batches()] == [leader_epoch] * 3
    # an epoch older than any the leader appended under is unknown
    assert _ask(cluster.server(leader).port, {(topic, 0): leader_epoch - 1}) == {
        (topic, 0): (Errors.NONE.code, UNDEFINED_EPOCH_OFFSET)
    }
