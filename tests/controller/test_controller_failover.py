"""Controller failover (book 7.1.1-7.1.2, Kafka's ``onControllerFailover``): the controller's broker
stops; another broker wins the election, bumps the controller epoch, reads the whole cluster from
ZooKeeper, tells every broker, and serves a topic creation. The deposed controller holds nothing."""

from __future__ import annotations

import uuid

import pytest
from kazoo.exceptions import ConnectionLoss

from kafka_lite.clients.admin import NewTopic
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.testing.controller_harness import ControllerHarness
from kafka_lite.zk.zk_utils import ZkUtils
from tests.support.cluster import LiteCluster
from tests.support.topics import topic_name
from tests.support.waiting import wait_until

pytestmark = pytest.mark.integration


def test_the_new_controller_has_the_context_and_serves_a_topic_creation(zookeeper, tmp_path):
    cluster = LiteCluster(zookeeper.connect_string, tmp_path, brokers=3).start()
    try:
        topic = topic_name("failover")
        cluster.create_topic(topic, partitions=6, replication_factor=2)
        old = cluster.controller()
        old_id, old_epoch = old.broker_id, old.epoch
        assert old_epoch == old.zk.get_controller_epoch()
        tps = [(topic, p) for p in range(6)]
        assert any(old.context.partition_leadership[tp][0].leader == old_id for tp in tps), "it leads some"

        cluster.stop_broker(old_id)
        running = [s for s in cluster.servers if s.running]
        new = wait_until(
            lambda: next((s.controller for s in running if s.controller.is_active()), None),
            what="a new controller",
        )
        # The election makes it active before its failover has run: the failover is done once every
        # running broker has heard from it (its UpdateMetadata comes after the context is loaded).
        wait_until(
            lambda: all(s.replica_manager.controller_epoch == old_epoch + 1 for s in running),
            what="every broker to know the new controller epoch",
        )
        zk = new.zk
        assert new.epoch == old_epoch + 1 == zk.get_controller_epoch()
        ctx = new.context
        assert ctx.live_broker_ids() == {s.broker_id for s in running}
        assert ctx.shutting_down_broker_ids == set()
        for tp in tps:
            leader_and_isr = ctx.partition_leadership[tp][0]
            in_zk = zk.get_partition_state(*tp).leader_and_isr
            assert (leader_and_isr.leader, leader_and_isr.leader_epoch) == (in_zk.leader, in_zk.leader_epoch)
            assert leader_and_isr.leader in ctx.live_broker_ids(), (tp, leader_and_isr)
        assert set(ctx.partition_replica_assignment) >= set(tps)
        assert all(s.metadata_cache.controller_id == new.broker_id for s in running)
        # The deposed controller (its broker stopped) holds nothing.
        assert not old.is_active()
        assert (old.epoch, old.context.partition_leadership, old.context.live_brokers_by_id) == (0, {}, {})
        assert old.partition_state_machine.states == {} and old.replica_state_machine.states == {}

        created = topic_name("after-failover")
        admin = cluster.admin()
        try:
            admin.create_topics([NewTopic(created, 2, 2)])
        finally:
            admin.close()

        def led() -> bool:
            return all(
                len(parts := s.metadata_cache.partitions(created)) == 2
                and all(p.leader in ctx.live_broker_ids() for p in parts.values())
                for s in running
            )

        wait_until(led, what=f"leaders for {created} on every running broker")
    finally:
        cluster.stop()


def test_a_failover_that_loses_zookeeper_half_way_resigns_and_the_election_runs_again(zookeeper, monkeypatch):
    """Kafka's elector resigns when becoming the controller throws: ``/controller`` deleted, so every
    broker's watch elects again. A controller that kept the znode with a half-read context (no live
    brokers) would refuse every controlled shutdown and never tell a restarted broker the metadata."""
    zk = ZkUtils(f"{zookeeper.connect_string}/half_failover_{uuid.uuid4().hex}")
    zk.setup_common_paths()
    for b in (0, 1, 2):
        zk.register_broker(b, "127.0.0.1", 9000 + b)
    zk.create_topic("t", {0: [1, 2], 1: [2, 0]})
    harness = ControllerHarness(zk)
    try:
        controller = harness.controller
        real_read = zk.get_partition_assignment
        lost: list[str] = []

        def connection_lost_once(topic):
            if not lost:
                lost.append(topic)
                raise ConnectionLoss()
            return real_read(topic)

        monkeypatch.setattr(zk, "get_partition_assignment", connection_lost_once)
        controller.elect()

        assert lost == ["t"], "the failover read the topic"
        assert not controller.is_active()
        assert zk.get_controller_id() == -1, "/controller was deleted, so the election runs again"
        assert (controller.epoch, controller.context.live_brokers_by_id) == (0, {})
        assert (
            controller.partition_state_machine.states == {} and controller.replica_state_machine.states == {}
        )
        assert harness.sent_to(ApiKeys.UPDATE_METADATA) == set()

        # The /controller watch's election, with ZooKeeper answering this time.
        harness.elect()
        assert controller.context.live_broker_ids() == {0, 1, 2}
        assert harness.leader_and_isr("t", 1).leader == 2
        assert harness.sent_to(ApiKeys.UPDATE_METADATA) == {0, 1, 2}

        # A resign deletes only its own /controller.
        zk.delete_controller_path(1)
        assert zk.get_controller_id() == 0
    finally:
        harness.close()
