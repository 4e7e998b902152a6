"""``kafka-lite topics --describe`` with Kafka's two filters, ``--under-replicated-partitions`` and
``--unavailable-partitions``: on the session's real cluster with a follower stopped, and on the
metadata of a partition that has lost its only replica."""

from __future__ import annotations

import re

import pytest

from kafka_lite.cli.main import main
from kafka_lite.clients.admin import NewTopic
from kafka_lite.clients.metadata import Cluster
from kafka_lite.server.replica_manager import (
    ISR_CHANGE_PROPAGATION_CHECK_MS,
    ISR_CHANGE_PROPAGATION_INTERVAL_MS,
)
from tests.support.topics import topic_name
from tests.support.waiting import wait_until

# An ISR change reaches the metadata caches (what --describe reads) once the leader's broker has seen
# no other change for 5 s, and within a minute however busy it is (ReplicaManager's propagation).
ISR_CHANGE_SHOWN_S = (ISR_CHANGE_PROPAGATION_INTERVAL_MS + 2 * ISR_CHANGE_PROPAGATION_CHECK_MS) / 1000


def _rows(out: str) -> list[list[str]]:
    """The table's body rows as lists of cells."""
    return [[c.strip() for c in line.split("│")[1:-1]] for line in out.splitlines() if line.startswith("│")]


@pytest.mark.integration
def test_a_follower_out_of_the_isr_is_listed_as_under_replicated(cluster, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    watched, healthy = topic_name("urp"), topic_name("urp-ok")
    cluster.create_topic(watched, partitions=1, replication_factor=3)
    leader = cluster.leader_of(watched, 0)
    follower, other = (s.broker_id for s in cluster.servers if s.broker_id != leader)
    # the healthy topic's two replicas are on the brokers that keep fetching
    admin = cluster.admin()
    try:
        admin.create_topics([NewTopic(healthy, -1, -1, {0: [leader, other]}, {})])
    finally:
        admin.close()
    cluster.wait_for_leaders(healthy, 1)
    partition = cluster.server(leader).replica_manager.get_partition((watched, 0))
    wait_until(lambda: len(partition.isr) == 3, what="all three replicas in the ISR")
    args = ["topics", "--bootstrap-server", cluster.bootstrap_servers, "--describe"]

    def under_replicated() -> list[list[str]]:
        capsys.readouterr()
        assert main([*args, "--under-replicated-partitions"]) == 0
        return [r for r in _rows(capsys.readouterr().out) if r[0] in (watched, healthy)]

    wait_until(lambda: under_replicated() == [], what="both topics fully replicated")
    fetchers = cluster.server(follower).replica_manager.replica_fetcher_manager
    fetchers.pause()  # the follower's broker keeps running; it only stops fetching
    try:
        # A follower that has not caught up for replica.lag.time.max.ms leaves the ISR, written to
        # or not; the leader writes the change to ZooKeeper, and the controller tells every
        # broker's metadata cache.
        wait_until(
            lambda: under_replicated() != [], ISR_CHANGE_SHOWN_S, f"{watched} listed as under-replicated"
        )
        ((topic, p, shown_leader, replicas, isr),) = under_replicated()
        assert (topic, p, shown_leader) == (watched, "0", str(leader))
        assert len(replicas.split(",")) == 3 and str(follower) not in isr.split(",")
        # the filters select rows: the whole description still shows both topics
        assert main(args) == 0
        assert {watched, healthy} <= {r[0] for r in _rows(capsys.readouterr().out)}
        # every partition has a leader, so none is unavailable: nothing on stdout, a word on stderr
        assert main([*args, "--unavailable-partitions", "--topic", watched]) == 0
        out, err = capsys.readouterr()
        assert (out, err) == ("", "(no partition is unavailable)\n")
    finally:
        fetchers.resume()
    wait_until(lambda: under_replicated() == [], ISR_CHANGE_SHOWN_S, "the follower back in the ISR")


class _Admin:
    """The part of KafkaAdminClient that ``--describe`` reads, answering with a fixed Metadata
    response: what a broker says once the only replica of a partition has died."""

    def __init__(self, response: dict) -> None:
        self.cluster = Cluster.from_metadata_response(response)

    def describe_cluster(self) -> Cluster:
        return self.cluster

    def close(self) -> None:
        pass


@pytest.mark.unit
def test_a_partition_whose_leader_is_gone_is_unavailable_and_under_replicated(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    broker = {"node_id": 0, "host": "127.0.0.1", "port": 9092, "rack": None}
    response = {
        "brokers": [broker],
        "controller_id": 0,
        "topic_metadata": [
            {
                "topic_error_code": 0,
                "topic": "t",
                "is_internal": False,
                "partition_metadata": [
                    # partition 0 lived only on broker 1, which is dead: no leader, an ISR of none alive
                    {"partition_error_code": 5, "partition_id": 0, "leader": -1, "replicas": [1], "isr": []},
                    {"partition_error_code": 0, "partition_id": 1, "leader": 0, "replicas": [0], "isr": [0]},
                    {
                        "partition_error_code": 9,
                        "partition_id": 2,
                        "leader": 0,
                        "replicas": [0, 1],
                        "isr": [0],
                    },
                ],
            }
        ],
    }
    monkeypatch.setattr("kafka_lite.clients.admin.KafkaAdminClient", lambda *a, **k: _Admin(response))
    describe = ["topics", "--bootstrap-server", "127.0.0.1:9092", "--describe"]

    def rows(*flags: str) -> list[tuple[str, str]]:
        assert main([*describe, *flags]) == 0
        return [(r[1], r[2]) for r in _rows(capsys.readouterr().out)]

    assert rows() == [("0", "none"), ("1", "0"), ("2", "0")]
    assert rows("--unavailable-partitions") == [("0", "none")]
    assert rows("--under-replicated-partitions") == [("0", "none"), ("2", "0")]
    assert rows("--under-replicated-partitions", "--unavailable-partitions") == [("0", "none"), ("2", "0")]


@pytest.mark.unit
def test_the_filters_go_with_describe_only(capsys):
    assert (
        main(["topics", "--bootstrap-server", "127.0.0.1:9", "--list", "--under-replicated-partitions"]) == 2
    )
    err = capsys.readouterr().err
    assert re.search(r"--under-replicated-partitions and --unavailable-partitions go with --describe", err)
