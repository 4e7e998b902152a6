"""A broker ignores a deposed controller: LeaderAndIsr, StopReplica and UpdateMetadata carrying a
controller epoch older than the newest it has seen are answered STALE_CONTROLLER_EPOCH and change
nothing (Kafka 0.10.1's ``ReplicaManager.becomeLeaderOrFollower``, ``stopReplicas`` and
``maybeUpdateMetadataCache``). Each request below would change a great deal at the current epoch."""

from __future__ import annotations

import uuid

import pytest

from kafka_lite.common.errors import Errors
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.zk.zk_utils import LeaderAndIsr
from tests.support.waiting import wait_until
from tests.support.wire import WireClient

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("cluster")]


def _snapshot(server, tp):
    """What a controller's request could change on ``server`` for ``tp``."""
    partition = server.replica_manager.get_partition(tp)
    return (
        server.replica_manager.controller_epoch,
        server.metadata_cache.controller_id,
        server.metadata_cache.controller_epoch,
        [b.id for b in server.metadata_cache.alive_brokers()],
        server.metadata_cache.partition_state(*tp),
        (partition.leader_replica_id, partition.leader_epoch),
        server.log_manager.get_log(tp) is not None,
        tp
        in {
            p
            for t in server.replica_manager.replica_fetcher_manager.fetcher_threads()
            for p in t.partition_states
        },
    )


def test_requests_from_an_older_controller_epoch_are_refused_and_change_nothing(cluster):
    topic = f"stale-{uuid.uuid4().hex[:8]}"
    cluster.create_topic(topic, partitions=1, replication_factor=2)
    tp = (topic, 0)
    state = cluster.servers[0].metadata_cache.partition_state(topic, 0)
    follower = cluster.server(next(r for r in state.replicas if r != state.leader))
    fetching = lambda: any(  # noqa: E731
        tp in t.partition_states for t in follower.replica_manager.replica_fetcher_manager.fetcher_threads()
    )
    wait_until(fetching, what="the follower fetching the partition")
    epoch = follower.replica_manager.controller_epoch
    assert epoch >= 1, "a controller has spoken to the broker"
    stale = epoch - 1
    before = _snapshot(follower, tp)
    client = WireClient(follower.port)
    try:
        # Make the follower the leader, with a newer leader epoch: refused as a whole.
        partition_state = {
            "topic": topic, "partition": 0, "controller_epoch": stale, "leader": follower.broker_id,
            "leader_epoch": state.leader_epoch + 10, "isr": [follower.broker_id], "zk_version": state.zk_version + 10,
            "replicas": list(state.replicas),
        }  # fmt: skip
        leader_and_isr = client.call(
            ApiKeys.LEADER_AND_ISR,
            0,
            {
                "controller_id": 99, "controller_epoch": stale, "partition_states": [partition_state],
                "live_leaders": [{"id": follower.broker_id, "host": "127.0.0.1", "port": follower.port}],
            },
        )  # fmt: skip
        assert leader_and_isr == {"error_code": Errors.STALE_CONTROLLER_EPOCH.code, "partitions": []}

        # Stop the replica and delete its log: refused.
        stop_replica = client.call(
            ApiKeys.STOP_REPLICA,
            0,
            {
                "controller_id": 99, "controller_epoch": stale, "delete_partitions": True,
                "partitions": [{"topic": topic, "partition": 0}],
            },
        )  # fmt: skip
        assert stop_replica == {"error_code": Errors.STALE_CONTROLLER_EPOCH.code, "partitions": []}

        # No live broker, and the topic being deleted: refused.
        deleting = {**partition_state, "leader": LeaderAndIsr.LEADER_DURING_DELETE}
        update_metadata = client.call(
            ApiKeys.UPDATE_METADATA,
            3,
            {
                "controller_id": 99,
                "controller_epoch": stale,
                "partition_states": [deleting],
                "live_brokers": [],
            },
        )
        assert update_metadata == {"error_code": Errors.STALE_CONTROLLER_EPOCH.code}
    finally:
        client.close()
    assert _snapshot(follower, tp) == before
    assert cluster.servers[0].metadata_cache.partition_state(topic, 0) == state
