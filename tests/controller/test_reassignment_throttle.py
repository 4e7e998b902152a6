"""A throttled reassignment on the session's 3-broker cluster (KIP-73): ``reassign-partitions --execute
--throttle`` sets the rates and the moving replicas, the brokers apply them, the new replica's
fetcher leaves the partition out of fetches while it is over its quota and records what it copies,
and ``--verify`` removes every throttle once the move is complete. Nothing here measures time: the
assertions are on configs, on the quota managers and on what the fetcher did."""

from __future__ import annotations

import json

import pytest

from kafka_lite import KafkaProducer
from kafka_lite.cli.main import main
from kafka_lite.clients.admin import NewTopic
from kafka_lite.common.utils import LONG_MAX
from kafka_lite.server.replica_fetcher_thread import ReplicaFetcherThread
from tests.support.topics import topic_name
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("cluster")]

THROTTLE = 1_000_000  # bytes/s: well under what one fetch of replica.fetch.max.bytes (1 MiB) copies
RECORDS, RECORD_SIZE = 30, 100_000  # about 3 MB: three fetches or more for the new replica
RATES = ("leader.replication.throttled.rate", "follower.replication.throttled.rate")
LISTS = ("leader.replication.throttled.replicas", "follower.replication.throttled.replicas")


def _run(capsys, *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(list(argv))
    return code, capsys.readouterr().out


def test_a_throttled_reassignment_is_throttled_while_it_runs_and_unthrottled_after(
    cluster, tmp_path, capsys, monkeypatch
):
    topic = topic_name("throttled-move")
    tp = (topic, 0)
    admin = cluster.admin()
    try:
        admin.create_topics([NewTopic(topic, -1, -1, {0: [0, 1]}, {})])
    finally:
        admin.close()
    cluster.wait_for_leaders(topic, 1)
    with KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks="all") as producer:
        for i in range(RECORDS):
            producer.send(topic, value=bytes([i % 256]) * RECORD_SIZE, partition=0)
        producer.flush()

    # What the new replica's fetcher does, seen from inside: each time it leaves the partition out
    # of a fetch, and each byte it records in its follower quota.
    left_out: list[int] = []
    should_follower_throttle = ReplicaFetcherThread.should_follower_throttle

    def spy(self, quota, partition):
        throttled = should_follower_throttle(self, quota, partition)
        if throttled and partition == tp:
            left_out.append(self.broker_id)
        return throttled

    monkeypatch.setattr(ReplicaFetcherThread, "should_follower_throttle", spy)
    follower_quota = cluster.server(2).quota_managers.follower
    recorded: list[int] = []
    record = follower_quota.record
    monkeypatch.setattr(follower_quota, "record", lambda value: (recorded.append(value), record(value)))

    zk = next(s for s in cluster.servers if s.running).zk
    plan = tmp_path / "plan.json"
    plan.write_text(
        json.dumps({"version": 1, "partitions": [{"topic": topic, "partition": 0, "replicas": [1, 2]}]})
    )
    reassign = [
        "reassign-partitions",
        "--zookeeper",
        cluster.zk_connect,
        "--reassignment-json-file",
        str(plan),
    ]
    try:
        code, out = _run(capsys, *reassign, "--execute", "--throttle", str(THROTTLE))
        assert code == 0 and f"The throttle limit was set to {THROTTLE} B/s" in out
        # set in ZooKeeper before the move starts: the current replicas lead-throttled, the new one
        # follow-throttled, the rate on the three brokers involved
        assert {k: v for k, v in zk.get_topic_config(topic).items() if k in LISTS} == {
            "leader.replication.throttled.replicas": "0:0,0:1",
            "follower.replication.throttled.replicas": "0:2",
        }
        for broker_id in (0, 1, 2):
            configs = zk.fetch_entity_config("brokers", str(broker_id))
            assert all(configs[rate] == str(THROTTLE) for rate in RATES)
        # ... and applied by the brokers, each to its own side
        wait_until(
            lambda: (
                cluster.server(0).quota_managers.leader.is_throttled(tp)
                and cluster.server(2).quota_managers.follower.upper_bound() == THROTTLE
            ),
            what="the brokers to apply the throttle",
        )
        assert not cluster.server(0).quota_managers.follower.is_throttled(tp), "broker 0 is no new replica"

        def verified() -> bool:
            code, out = _run(capsys, *reassign, "--verify")
            assert code == 0, out
            return "Throttle was removed." in out

        wait_until(verified, timeout_s=60, what="the reassignment to complete and its throttle to go")
    finally:
        for broker_id in (0, 1, 2):  # whatever happened, leave the session's cluster unthrottled
            configs = zk.fetch_entity_config("brokers", str(broker_id))
            if any(rate in configs for rate in RATES):
                zk.change_broker_config([broker_id], {k: v for k, v in configs.items() if k not in RATES})

    assert zk.get_partition_assignment(topic) == {0: [1, 2]}
    leader_log = cluster.server(1).replica_manager.get_partition(tp).log
    assert leader_log.log_end_offset == RECORDS
    assert cluster.server(2).replica_manager.get_partition(tp).log.log_end_offset == RECORDS
    # the new replica copied under the throttle: it recorded what it fetched, and at least once
    # left the partition out of a fetch because it was over its quota
    assert sum(recorded) > 0, "broker 2 recorded nothing in its follower quota"
    assert 2 in left_out, "broker 2's fetcher never left the throttled partition out"
    # removed in ZooKeeper, and on every broker
    assert not any(k in LISTS for k in zk.get_topic_config(topic))
    assert all(not any(r in zk.fetch_entity_config("brokers", str(b)) for r in RATES) for b in (0, 1, 2))
    wait_until(
        lambda: all(
            not s.quota_managers.leader.is_throttled(tp)
            and not s.quota_managers.follower.is_throttled(tp)
            and s.quota_managers.follower.upper_bound() == LONG_MAX
            for s in cluster.servers
        ),
        what="every broker to drop the throttle",
    )
