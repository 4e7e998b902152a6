"""A broker that dies and registers again faster than the controller reads ``/brokers/ids`` is still
seen: its registration's epoch (the znode's creation zxid) has changed, and the controller handles it
as a failure and a startup, so the broker gets its LeaderAndIsr (KAFKA-1120)."""

from __future__ import annotations

import pytest

from tests.support.cluster import LiteCluster
from tests.support.topics import topic_name
from tests.support.waiting import wait_until

pytestmark = pytest.mark.integration


def test_a_broker_that_registers_again_at_once_gets_its_leader_and_isr(zookeeper, tmp_path):
    cluster = LiteCluster(zookeeper.connect_string, tmp_path, brokers=2).start()
    try:
        topic = topic_name("bounce")
        cluster.create_topic(topic, partitions=1, replication_factor=2)
        leader = cluster.leader_of(topic, 0)
        follower = 1 - leader
        zk = cluster.server(follower).zk
        before = zk.get_partition_state(topic, 0).leader_and_isr
        wait_until(
            lambda: cluster.server(follower).replica_manager.get_partition((topic, 0)) is not None,
            what="the follower's replica",
        )
        path = f"/brokers/ids/{follower}"
        data, _ = zk.client.get(path)
        # Delete and create in one transaction: the controller's watch can only ever read the same
        # list of ids before and after, as when a crashed broker restarts between two of its reads.
        transaction = zk.client.transaction()
        transaction.delete(path)
        transaction.create(path, data, ephemeral=True)
        transaction.commit()
        epoch = zk.get_broker(follower).epoch

        def handled() -> bool:
            controller = cluster.controller()
            state = zk.get_partition_state(topic, 0).leader_and_isr
            partition = cluster.server(follower).replica_manager.get_partition((topic, 0))
            return (
                controller.context.live_brokers_by_id[follower].epoch == epoch
                and state.leader_epoch > before.leader_epoch
                and partition.leader_epoch == state.leader_epoch  # its LeaderAndIsr arrived
            )

        wait_until(handled, what=f"the controller to handle broker {follower}'s new registration")
    finally:
        cluster.stop()
