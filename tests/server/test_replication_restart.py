"""A whole cluster stopped and started again, one broker at a time: every follower fetches again and
rejoins the ISR, and the replicas agree. A cluster of its own (its brokers are all stopped)."""

from __future__ import annotations

import pytest

from kafka_lite import KafkaProducer
from kafka_lite.tools.replica_verification_tool import ReplicaVerificationTool
from tests.support.cluster import LiteCluster
from tests.support.waiting import wait_until

pytestmark = pytest.mark.integration


def test_after_a_whole_cluster_restart_every_follower_rejoins_the_isr(zookeeper, tmp_path):
    """The first broker back becomes the controller alone, and first tells itself the leaders it
    finds in ZooKeeper, which are not up yet; the same brokers are elected again once they are back.
    The followers must fetch from them then, although the leader's id did not change (here broker 2
    comes back first and broker 0 next: broker 0 is elected again for the partitions it led)."""
    cluster = LiteCluster(zookeeper.connect_string, tmp_path, brokers=3).start()
    try:
        cluster.create_topic("restarted", partitions=3, replication_factor=3)
        producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks="all")
        for i in range(30):
            producer.send("restarted", b"before %d" % i, partition=i % 3)
        producer.close()
        leaders = {cluster.leader_of("restarted", p) for p in range(3)}
        assert len(leaders) > 1, "partitions led by brokers other than the first back"
        for server in reversed(cluster.servers):
            server.shutdown()
        for b in (2, 0, 1):
            cluster.restart_broker(b)

        def isr_sizes() -> list[int]:
            sizes = []
            for p in range(3):
                leader = cluster.server(cluster.leader_of("restarted", p))
                partition = leader.replica_manager.get_partition(("restarted", p))
                sizes.append(len(partition.isr) if partition is not None and partition.is_leader() else 0)
            return sizes

        wait_until(lambda: isr_sizes() == [3, 3, 3], what="every replica back in the ISR")
        lines: list[str] = []
        verifier = ReplicaVerificationTool(
            cluster.bootstrap_servers, "restarted", initial_offset_time=-2, max_wait_ms=100,
            report_interval_ms=0, out=lines.append,
        )  # fmt: skip

        def agreed() -> bool:  # one more round of fetches and the check of what came back
            verifier.run(max_reports=verifier.replica_buffer.reports + 1)
            offsets = [verifier.replica_buffer.get_offset(("restarted", p)) for p in range(3)]
            return " max lag is 0 " in lines[-1] and offsets == [10, 10, 10]

        try:
            wait_until(agreed, what="the three replicas of every partition alike, 10 records each")
        finally:
            verifier.close()
    finally:
        cluster.stop()
