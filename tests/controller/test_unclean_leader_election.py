"""``unclean.leader.election.enable``: when a partition's last in-sync replica dies, the controller
either waits for it (the default since Kafka 0.11: nothing acknowledged is lost, the partition is
offline meanwhile) or elects a live replica from outside the ISR (0.10's default: the partition is
available again at once, without the records only the dead leader had).

One cluster, two topics that differ only in the setting, each with one partition on brokers 1 and 2
(broker 0 is the controller, so it survives what the test does to broker 1). Broker 2's fetcher is
paused until broker 1 has dropped it from both ISRs, broker 1 takes a record broker 2 never copies,
then broker 1 stops."""

from __future__ import annotations

import pytest

from kafka_lite.clients.admin import NewTopic
from kafka_lite.common.errors import Errors
from kafka_lite.common.record import MemoryRecords
from kafka_lite.zk.zk_utils import LeaderAndIsr
from tests.support.cluster import LiteCluster
from tests.support.topics import topic_name
from tests.support.waiting import wait_until

pytestmark = pytest.mark.integration


def _state(cluster: LiteCluster, topic: str) -> LeaderAndIsr:
    return cluster.server(0).zk.get_partition_state(topic, 0).leader_and_isr


def _produce(cluster: LiteCluster, broker_id: int, topic: str, value: bytes) -> None:
    answers: list = []
    records = MemoryRecords.with_records([(1000, None, value)])
    cluster.server(broker_id).replica_manager.append_records(
        5000, 1, False, {(topic, 0): records}, answers.append
    )
    assert answers and answers[0][(topic, 0)].error is Errors.NONE, answers


def _log_end(cluster: LiteCluster, broker_id: int, topic: str) -> int:
    return cluster.server(broker_id).replica_manager.get_partition((topic, 0)).log.log_end_offset


def test_the_last_in_sync_replica_dying_elects_an_out_of_sync_one_only_if_the_topic_allows(
    zookeeper, tmp_path
):
    cluster = LiteCluster(zookeeper.connect_string, tmp_path, brokers=3).start()
    try:
        assert cluster.controller().broker_id == 0
        clean, unclean = topic_name("clean"), topic_name("unclean")
        admin = cluster.admin()
        try:
            admin.create_topics(
                [
                    NewTopic(clean, -1, -1, {0: [1, 2]}, {}),
                    NewTopic(unclean, -1, -1, {0: [1, 2]}, {"unclean.leader.election.enable": "true"}),
                ]
            )
        finally:
            admin.close()
        for topic in (clean, unclean):
            cluster.wait_for_leaders(topic, 1)
            _produce(cluster, 1, topic, b"a")
        wait_until(
            lambda: all(_log_end(cluster, 2, t) == 1 for t in (clean, unclean)),
            what="broker 2 to copy the first record of both topics",
        )
        cluster.server(2).replica_manager.replica_fetcher_manager.pause()
        try:
            for topic in (clean, unclean):
                _produce(cluster, 1, topic, b"b")  # acknowledged by broker 1 alone (acks=1)
            wait_until(
                lambda: all(_state(cluster, t).isr == [1] for t in (clean, unclean)),
                what="broker 1 to drop the paused broker 2 from both ISRs",
            )
            cluster.stop_broker(1)

            # The topic that allows it: broker 2 leads at once, without the record it never copied.
            wait_until(
                lambda: _state(cluster, unclean).leader == 2, what=f"broker 2 to be elected for {unclean}"
            )
            state = _state(cluster, unclean)
            assert state.isr == [2], f"the unclean leader is the whole ISR: {state}"
            wait_until(
                lambda: cluster.server(2).replica_manager.get_partition((unclean, 0)).is_leader(),
                what="broker 2 to become the leader",
            )
            assert _log_end(cluster, 2, unclean) == 1, "the acknowledged b is lost: only broker 1 had it"

            # The default: no leader, and the ISR keeps broker 1, the only replica with every record.
            wait_until(
                lambda: _state(cluster, clean).leader == LeaderAndIsr.NO_LEADER,
                what=f"{clean} to lose its leader",
            )
            assert _state(cluster, clean).isr == [1], "the last in-sync replica stays in the ISR"
        finally:
            cluster.server(2).replica_manager.replica_fetcher_manager.resume()

        # Broker 1 comes back and leads the clean topic again, with both records.
        cluster.restart_broker(1)
        wait_until(lambda: _state(cluster, clean).leader == 1, what=f"broker 1 to lead {clean} again")
        wait_until(
            lambda: cluster.server(1).replica_manager.get_partition((clean, 0)).is_leader(),
            what="the restarted broker 1 to take its LeaderAndIsr",
        )
        assert _log_end(cluster, 1, clean) == 2, "nothing acknowledged was lost"
    finally:
        cluster.stop()
