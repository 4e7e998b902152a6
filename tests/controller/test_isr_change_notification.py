"""The controller's ISR-change listener on real brokers: a leader's ISR change, written to ZooKeeper
and announced under /isr_change_notification, reaches every broker's metadata."""

from __future__ import annotations

import uuid

import pytest

from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.zk.zk_utils import LeaderAndIsr, ZkUtils
from tests.support.cluster import LiteCluster
from tests.support.waiting import wait_until
from tests.support.wire import WireClient

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("cluster")]


@pytest.fixture
def zk(cluster):
    """A ZooKeeper session of the test's own in the cluster's chroot (a leader's view of ZooKeeper)."""
    utils = ZkUtils(cluster.zk_connect)
    yield utils
    utils.close()


def metadata_isr(port: int, topic: str, partition: int) -> list[int]:
    client = WireClient(port)
    try:
        response = client.call(ApiKeys.METADATA, 1, {"topics": [topic]})
    finally:
        client.close()
    (meta,) = response["topic_metadata"]
    return next(p["isr"] for p in meta["partition_metadata"] if p["partition_id"] == partition)


def test_a_leaders_isr_change_reaches_every_brokers_metadata(cluster, zk):
    """The leader shrinks the ISR in ZooKeeper and writes a notification; the controller re-reads the
    state and sends UpdateMetadata, so every broker's cache and its Metadata answers show the new ISR,
    and the notification is deleted."""
    topic = f"isr-change-{uuid.uuid4().hex[:8]}"  # the topic of this test alone: the cluster is shared
    cluster.create_topic(topic, partitions=1, replication_factor=3)
    state = zk.get_partition_state(topic, 0)
    leader_and_isr = state.leader_and_isr
    assert sorted(leader_and_isr.isr) == [0, 1, 2]
    dropped = next(r for r in leader_and_isr.isr if r != leader_and_isr.leader)
    shrunk = [r for r in leader_and_isr.isr if r != dropped]

    # What the leader does when a follower falls behind: the same leader epoch, its controller epoch,
    # the version it holds; then one notification.
    ok, _ = zk.update_leader_and_isr(
        topic,
        0,
        LeaderAndIsr(leader_and_isr.leader, leader_and_isr.leader_epoch, shrunk, leader_and_isr.zk_version),
        state.controller_epoch,
    )
    assert ok
    notification = zk.propagate_isr_changes({(topic, 0)})

    def everyone_sees_the_shrunk_isr() -> bool:
        return all(
            list(s.metadata_cache.partition_state(topic, 0).isr) == shrunk
            and metadata_isr(s.port, topic, 0) == shrunk
            for s in cluster.servers
        )

    wait_until(
        everyone_sees_the_shrunk_isr, what=f"every broker's metadata to show ISR {shrunk} for {topic}-0"
    )
    wait_until(lambda: not zk.client.exists(notification), what=f"the controller to delete {notification}")
    controller = cluster.controller()
    assert list(controller.context.partition_leadership[(topic, 0)][0].isr) == shrunk

    # The follower catches up and the leader expands the ISR again: the same path back.
    current = zk.get_partition_state(topic, 0).leader_and_isr
    expanded = [*shrunk, dropped]  # Kafka's leader appends the replica that caught up
    ok, _ = zk.update_leader_and_isr(
        topic,
        0,
        LeaderAndIsr(current.leader, current.leader_epoch, expanded, current.zk_version),
        state.controller_epoch,
    )
    assert ok
    notification = zk.propagate_isr_changes({(topic, 0)})
    wait_until(
        lambda: all(
            list(s.metadata_cache.partition_state(topic, 0).isr) == expanded
            and metadata_isr(s.port, topic, 0) == expanded
            for s in cluster.servers
        ),
        what=f"every broker's metadata to show ISR {expanded} for {topic}-0 again",
    )
    wait_until(lambda: not zk.client.exists(notification), what=f"the controller to delete {notification}")


def test_notifications_written_before_the_controller_starts_are_processed_at_failover(zookeeper, tmp_path):
    """Notifications left while there was no controller (a malformed one among them) are read and
    deleted by the next controller as soon as it takes over."""
    cluster = LiteCluster(zookeeper.connect_string, tmp_path, brokers=1)
    early = ZkUtils(cluster.zk_connect)
    try:
        early.setup_common_paths()
        waiting = early.propagate_isr_changes({("not-created-yet", 0)})
        malformed = early.client.create("/isr_change_notification/isr_change_", b"{", sequence=True)
        cluster.start()
        assert cluster.controller().broker_id == 0
        wait_until(
            lambda: early.get_isr_change_notifications() == [],
            what=f"the new controller to delete {waiting} and {malformed}",
        )
    finally:
        cluster.stop()
        early.close()
