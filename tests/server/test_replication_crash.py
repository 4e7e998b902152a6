"""A follower killed with SIGKILL under acks=all load, then restarted: it truncates, catches up, rejoins the
ISR, and every replica ends with the same batches at the same offsets. Real broker processes (`kafka-lite
cluster`), so that the kill is a real crash."""

from __future__ import annotations

import threading

import pytest

from kafka_lite import KafkaConsumer, KafkaProducer
from kafka_lite.cli.main import main
from kafka_lite.clients.admin import KafkaAdminClient, NewTopic
from kafka_lite.common.time import MockTime
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.log.log import Log
from kafka_lite.log.log_config import LogConfig
from kafka_lite.testing.logs import read_all
from kafka_lite.zk.zk_utils import ZkUtils
from tests.support.processes import cluster_up
from tests.support.waiting import wait_until

pytestmark = pytest.mark.integration

TOPIC = "crash"
# The checkpoint of high watermarks is never due during the test: the killed follower restarts with
# no HW for the partition, so it must truncate its whole log and fetch it again.
OVERRIDES = [
    "replica.lag.time.max.ms=2000",
    "replica.fetch.backoff.ms=100",
    "replica.fetch.wait.max.ms=200",
    "replica.high.watermark.checkpoint.interval.ms=3600000",
    "zookeeper.session.timeout.ms=4000",
    # The logs are compared once the cluster is down, and no leadership may move on the way there: a
    # 0.10 follower of a new leader truncates to its high watermark, to fetch the rest again only
    # after a restart, and the logs at rest would differ by that tail. So the brokers never move
    # leaderships at a stop, and the test stops them all at once (frozen, then killed).
    "controlled.shutdown.enable=false",
    # Nor does the automatic preferred-replica election move a leadership back to the restarted
    # broker while the test runs: the same 0.10 truncation would leave the logs differing by a tail.
    "auto.leader.rebalance.enable=false",
]


@pytest.mark.parametrize("version", ["0.10.1", "0.11.0"])
def test_a_killed_follower_truncates_catches_up_and_the_replicas_converge(tmp_path, version):
    """0.10's follower, restarted with no HW, truncates its whole log to 0 and fetches it again; 0.11's
    asks the leader where its latest leader epoch ends and keeps what the leader has too."""
    victim, victim_log = kill_restart_and_compare(tmp_path, version, kill_the_leader=False)
    truncation = f"Truncating {TOPIC}-0 on broker {victim} to offset 0"
    if version == "0.10.1":
        wait_until(
            lambda: truncation in victim_log.read_text(), what="the restarted follower to truncate to 0"
        )
    else:
        assert truncation not in victim_log.read_text(), victim_log.read_text()[-3000:]


def test_a_killed_leader_is_replaced_and_rejoins_as_a_follower_without_loss_or_duplicates(tmp_path):
    """The leader dies under acks=all load from an idempotent producer: the controller elects a follower
    from the ISR once the leader's ZooKeeper session expires, the producer finds it and sends again
    what was not acknowledged, and the old leader, restarted, follows the new one after truncating
    what it alone had (0.11's leader epochs: there can be such records, written before the kill but
    never committed). Every acknowledged record is in every replica once."""
    kill_restart_and_compare(tmp_path, "0.11.0", kill_the_leader=True)


def kill_restart_and_compare(tmp_path, version: str, kill_the_leader: bool):
    """Load, a SIGKILL of one replica's broker in the middle of it, more load while it is down, a
    restart, more load; then, with the cluster stopped, the three logs compared. Returns the killed
    broker's id and the path of its log."""
    d = tmp_path / "cluster"
    args = ["--dir", str(d)]
    overrides = [*OVERRIDES, f"inter.broker.protocol.version={version}"]
    zk_port, base = cluster_up(args, overrides)
    zk = None
    try:
        bootstrap = f"127.0.0.1:{base}"
        admin = KafkaAdminClient(bootstrap)
        admin.create_topics([NewTopic(TOPIC, 1, 3)])
        admin.close()
        zk = ZkUtils(f"127.0.0.1:{zk_port}", 6000, 6000)

        def state():
            return zk.get_partition_state(TOPIC, 0)

        wait_until(
            lambda: state() is not None and len(state().leader_and_isr.isr) == 3, what="the ISR of three"
        )
        leader = state().leader_and_isr.leader
        # ZooKeeper holds the ISR before the leader has had its LeaderAndIsr: until it has, a write is
        # answered UNKNOWN_TOPIC_OR_PARTITION, and the producer here does not retry (0.10's default).
        # The leader's answer to ListOffsets says it serves the partition.
        with KafkaConsumer(bootstrap_servers=bootstrap) as probe:
            tp = TopicPartition(TOPIC, 0)
            wait_until(lambda: probe.end_offsets([tp])[tp] == 0, what=f"broker {leader} to lead {TOPIC}-0")
        victim = leader if kill_the_leader else next(b for b in range(3) if b != leader)
        sent: list[bytes] = []
        # At 0.10.1 the topic's message.format.version is 0.10.1's v1, which has no producer id:
        # Kafka 0.11 refuses an idempotent write to it, so that producer is a plain one.
        idempotent = version != "0.10.1"
        with KafkaProducer(
            bootstrap_servers=bootstrap, acks="all", linger_ms=5, enable_idempotence=idempotent
        ) as producer:

            def send(prefix: str, n: int) -> None:
                futures = [producer.send(TOPIC, f"{prefix}-{i}".encode()) for i in range(n)]
                for f in futures:
                    f.get(60)
                sent.extend(f"{prefix}-{i}".encode() for i in range(n))

            send("before", 300)
            # the kill lands while records are still being sent and replicated
            loader = threading.Thread(target=send, args=("during", 300))
            loader.start()
            assert main(["cluster", "kill", str(victim), *args]) == 0
            loader.join()
            wait_until(
                lambda: victim not in state().leader_and_isr.isr, what=f"broker {victim} out of the ISR"
            )
            if kill_the_leader:
                assert state().leader_and_isr.leader not in (victim, -1), "a new leader from the ISR"
            send("while-down", 300)
            assert main(["cluster", "restart", str(victim), *args]) == 0
            wait_until(
                lambda: victim in state().leader_and_isr.isr,
                what=f"broker {victim} back in the ISR",
                timeout_s=60,
            )
            send("after", 300)
        victim_log = d / "logs" / f"broker-{victim}.log"
        if version == "0.10.1":  # 0.10's truncation to the HW is logged before the cluster stops
            wait_until(
                lambda: f"Truncating {TOPIC}-0 on broker {victim}" in victim_log.read_text(),
                what="the restarted follower to truncate",
            )
        # Stopped one after another, the last brokers would see the first ones die, and the
        # controller would move the leadership. Frozen together first, nobody reacts to anything:
        # each log stays as its broker last wrote it (a SIGKILL keeps what reached the page cache).
        for broker_id in range(3):
            assert main(["cluster", "pause", str(broker_id), *args]) == 0
        for broker_id in range(3):
            assert main(["cluster", "kill", str(broker_id), *args]) == 0
    finally:
        if zk is not None:
            zk.close()
        assert main(["cluster", "down", *args]) == 0
    # Stopped at once: every replica's log holds the same batches at the same offsets.
    contents = {}
    for broker_id in range(3):
        log = Log(d / f"broker-{broker_id}" / "data" / f"{TOPIC}-0", LogConfig(), time=MockTime())
        try:
            contents[broker_id] = [(r.offset, r.value) for r in read_all(log)]
            batches = [
                (h.base_offset, h.last_offset, h.size)
                for s in log.log_segments()
                for h in s.log.batch_headers()
            ]
            contents[broker_id, "batches"] = batches
        finally:
            log.close()
    assert contents[0] == contents[1] == contents[2]
    assert contents[0, "batches"] == contents[1, "batches"] == contents[2, "batches"]
    values = [v for _, v in contents[0]]
    assert sorted(values) == sorted(sent) and len(values) == 1200, "every acknowledged record, once"
    return victim, victim_log
