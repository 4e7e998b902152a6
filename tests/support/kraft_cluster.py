"""A KRaft kafka_lite cluster for the compatibility tests, as ``kafka-lite cluster up --kraft`` starts
it (``cli/cluster.py``'s ``start_cluster``): three combined nodes (each a broker and a controller
voter, no ZooKeeper) as processes, with the interface the tests use of the in-process ZooKeeper
cluster (``tests/support/cluster.py``): ``bootstrap_servers``, ``admin()``, ``create_topic``,
``wait_for_leaders``, ``leader_of``, ``directory``.

Its brokers are processes, so a test that reads a broker's own objects (its log, its group
coordinator) or moves a leadership through ZooKeeper runs on the ZooKeeper cluster only."""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

import pytest

from kafka_lite.cli.cluster import start_cluster, wait_healthy
from kafka_lite.clients.admin import KafkaAdminClient
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.utils.ports import free_ports
from tests.support.cluster import LiteCluster
from tests.support.waiting import wait_until
from tests.support.wire import WireClient

# A test or module that runs on the ZooKeeper cluster alone: it overrides the compat tier's
# two-mode ``cluster`` fixture (tests/compat/conftest.py); each use says why in one line.
zookeeper_only = pytest.mark.parametrize("cluster", ["zookeeper"], indirect=True)


def codec_and_acks_sweep(acks: list, codecs: list, on_kraft: tuple) -> pytest.MarkDecorator:
    """Every (acks, codec) pair on the ZooKeeper cluster, and the one pair ``on_kraft`` on KRaft: a
    codec is the client's and the record batch's business, which no controller sees, and acks=all
    is the setting that waits on the ISR the KRaft controller keeps. (Each client's module names a
    different codec, so that every codec runs on KRaft once.)"""

    def case(mode: str, a, c):
        return pytest.param(mode, a, c, id=f"{mode}-acks={a}-{c or 'none'}")

    cases = [case("zookeeper", a, c) for a in acks for c in codecs] + [case("kraft", *on_kraft)]
    return pytest.mark.parametrize(("cluster", "acks", "codec"), cases, indirect=["cluster"])


CONTROLLER_PASSWORD = "controller-secret"  # a test cluster's, on loopback: not a secret worth drawing
# KRaft's authorizer (KIP-801), letting everyone do anything on a resource without ACLs, so that every
# test runs through it and the ACL tests can refuse on a topic of their own. The voters vote before
# their authorizer has read the ACLs, so the principal they talk as must be a super user; on
# PLAINTEXT that would be User:ANONYMOUS, every client here too. So the CONTROLLER listener is
# SASL_PLAINTEXT, and the nodes log in to it as User:controller, the one super user.
STANDARD_AUTHORIZER = [
    "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    "allow.everyone.if.no.acl.found=true",
    "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:SASL_PLAINTEXT",
    "sasl.enabled.mechanisms=PLAIN", "sasl.mechanism.controller.protocol=PLAIN",
    "listener.name.controller.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule "
    f'required username="controller" password="{CONTROLLER_PASSWORD}" user_controller="{CONTROLLER_PASSWORD}";',
    "super.users=User:controller",
]  # fmt: skip


def controller_command_config(directory: Path) -> str:
    """A ``--command-config`` file in ``directory`` that logs in to a cluster's CONTROLLER listener
    as ``STANDARD_AUTHORIZER`` sets it up (User:controller, the super user)."""
    path = Path(directory) / "controller.properties"
    path.write_text(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
        "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
        f'username="controller" password="{CONTROLLER_PASSWORD}";\n'
    )
    return str(path)


# ``--override``s: a quick first election, and heartbeats every 200 ms so that a starting broker is
# unfenced soon; but Kafka's broker session (9 s) and a long quorum fetch timeout, since nothing here
# kills a node, and on a busy machine a short one fences a live broker or unseats a live leader,
# moving partitions and group coordinators under the clients. A follower's fetch waits up to 500 ms
# at its leader (Kafka's default), which a produce answers at once: a shorter wait only makes the
# idle cluster, which lives for the worker's session, poll more. One network thread and two
# handlers per node; then the compat tier's settings, as
# tests/support/cluster.py's FAST has them: a few internal partitions replicated on every node,
# short group sessions allowed, an abandoned transaction aborted within a second.
OVERRIDES = [
    "controller.quorum.election.timeout.ms=300", "controller.quorum.fetch.timeout.ms=4000",
    "broker.heartbeat.interval.ms=200", "broker.session.timeout.ms=9000",
    "num.network.threads=1", "num.io.threads=2", "replica.fetch.wait.max.ms=500",
    "log.cleaner.enable=false",
    "offsets.topic.num.partitions=4", "offsets.topic.replication.factor=3",
    "transaction.state.log.num.partitions=4", "transaction.state.log.replication.factor=3",
    "transaction.abort.timed.out.transaction.cleanup.interval.ms=500",
    "transaction.max.timeout.ms=60000",
    "group.initial.rebalance.delay.ms=0", "group.min.session.timeout.ms=1000",
    *STANDARD_AUTHORIZER,
]  # fmt: skip


class KRaftCluster:
    """Combined nodes 0, 1 and 2, each formatted and started as ``cluster up --kraft`` does."""

    def __init__(self, directory: Path, brokers: int = 3) -> None:
        self.directory = Path(directory)
        self.brokers = brokers
        self.state: dict | None = None

    def start(self) -> KRaftCluster:
        self.state = start_cluster(
            self.directory, self.brokers, 0, free_ports(self.brokers), OVERRIDES, kraft=True
        )
        wait_healthy(self.state)
        return self

    @property
    def ports(self) -> dict[int, int]:
        return {n["id"]: n["port"] for n in self.state["brokers"]}

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(f"127.0.0.1:{port}" for port in self.ports.values())

    def admin(self) -> KafkaAdminClient:
        return KafkaAdminClient(self.bootstrap_servers)

    # Through kafka_lite's admin client, then until every broker knows the leaders: as on ZooKeeper.
    create_topic = LiteCluster.create_topic

    def _leaders(self, node_id: int, topic: str) -> dict[int, int]:
        """The partitions' leaders as node ``node_id``'s metadata cache has them."""
        client = WireClient(self.ports[node_id], timeout_s=5)
        try:
            (described,) = client.call(ApiKeys.METADATA, 1, {"topics": [topic]})["topic_metadata"]
        finally:
            client.close()
        return {p["partition_id"]: p["leader"] for p in described["partition_metadata"]}

    def wait_for_leaders(self, topic: str, partitions: int) -> None:
        def ready() -> bool:
            for n in self.ports:
                leaders = self._leaders(n, topic)
                if len(leaders) != partitions or any(leader < 0 for leader in leaders.values()):
                    return False
            return True

        wait_until(ready, what=f"leaders for the {partitions} partitions of {topic} on every node")

    def leader_of(self, topic: str, partition: int) -> int:
        return self._leaders(min(self.ports), topic)[partition]

    def stop(self) -> None:
        # Killed, not shut down (``stop_cluster``): nothing is read from the nodes afterwards, and a
        # controlled shutdown of every voter costs seconds of the session's end.
        for node in self.state["brokers"] if self.state else []:
            with contextlib.suppress(ProcessLookupError, ChildProcessError):
                os.kill(node["pid"], signal.SIGKILL)
                os.waitpid(node["pid"], 0)
