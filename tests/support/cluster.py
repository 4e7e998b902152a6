"""An in-process kafka_lite cluster for tests: N ``KafkaServer``s on free loopback ports, sharing the
session's ZooKeeper under a chroot of their own (one ZooKeeper per test session)."""

from __future__ import annotations

import uuid
from pathlib import Path

from kafka_lite.clients.admin import KafkaAdminClient, NewTopic
from kafka_lite.server.kafka_config import KafkaConfig
from kafka_lite.server.kafka_server import KafkaServer
from tests.support.waiting import wait_until

# The tests' fast profile: short timeouts so failures show quickly; nothing waits on them.
FAST = {
    "num.network.threads": 2,
    "num.io.threads": 4,
    "log.cleaner.enable": False,
    "zookeeper.session.timeout.ms": 6000,
    "controller.socket.timeout.ms": 10000,
    "delete.topic.enable": True,  # Kafka 0.10.1's default is false; the tests delete topics
    # a broker that stops last (or alone with its replicated partitions) retries its controlled
    # shutdown twice: 100 ms apart, not Kafka's 5 s
    "controlled.shutdown.retry.backoff.ms": 100,
    # replication: a follower leaves the ISR after 2 s without catching up; fetch errors retry fast;
    # a follower's fetch waits up to 500 ms at its leader for new records (Kafka's default), which
    # a produce answers at once: shorter waits only make an idle cluster, which every worker keeps
    # for its session, poll more
    "replica.lag.time.max.ms": 2000,
    "replica.fetch.backoff.ms": 100,
    "replica.fetch.wait.max.ms": 500,
    "replica.high.watermark.checkpoint.interval.ms": 1000,
    # the controller leaves leaders where a test put them (a test of the auto rebalance turns it on)
    "auto.leader.rebalance.enable": False,
    # groups: no initial rebalance delay; clients may ask for session timeouts down to 1 s (Kafka's
    # floor is 6 s, and librdkafka's default is 45 s: the tests ask for short ones); a few
    # __consumer_offsets partitions, on every broker of a 3-broker cluster
    "group.initial.rebalance.delay.ms": 0,
    "group.min.session.timeout.ms": 1000,
    "offsets.topic.num.partitions": 4,
    "offsets.topic.replication.factor": 3,
    # client quotas: a rate over 2 windows of 1 s, not Kafka's 11. The first 10 windows' allowance
    # then comes back every 11 s or so as a burst, so a 30-s measurement of a throttled client swings
    # by more than 10 % with its phase; over 2 windows it stays within a few per cent.
    "quota.window.num": 2,
    # transactions: a few __transaction_state partitions on every broker (min ISR 2, as Kafka's
    # default); the sweep that aborts timed-out transactions every 500 ms, not every minute, so a
    # test of an abandoned transaction waits on its own short timeout; the longest timeout a
    # producer may ask for is librdkafka's default transaction.timeout.ms (60 s), not 15 minutes
    "transaction.state.log.num.partitions": 4,
    "transaction.state.log.replication.factor": 3,
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": 500,
    "transaction.max.timeout.ms": 60000,
}


def sasl_broker(jaas: str, **settings) -> dict:
    """One broker's settings for a SASL_PLAINTEXT listener: PLAIN users from ``jaas`` (Kafka's JAAS
    line), the broker's own traffic on the same listener, its internal topics on itself alone."""
    return {
        "listeners": "SASL_PLAINTEXT://127.0.0.1:0",
        "security.inter.broker.protocol": "SASL_PLAINTEXT",
        "sasl.enabled.mechanisms": "PLAIN",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": jaas,
        "offsets.topic.replication.factor": 1,
        "transaction.state.log.replication.factor": 1,
        "transaction.state.log.min.isr": 1,
        **settings,
    }


class LiteCluster:
    def __init__(self, zk_connect: str, directory: Path, brokers: int = 3, **overrides) -> None:
        self.chroot = f"/kafka-lite-test-{uuid.uuid4().hex[:8]}"
        self.zk_connect = zk_connect + self.chroot
        self.directory = Path(directory)
        self.servers: list[KafkaServer] = []
        self.overrides = {**FAST, **overrides}
        self.size = brokers

    def config(self, broker_id: int, port: int = 0) -> KafkaConfig:
        return KafkaConfig(
            {
                "broker.id": broker_id,
                "listeners": f"PLAINTEXT://127.0.0.1:{port}",
                "log.dirs": str(self.directory / f"broker-{broker_id}"),
                "zookeeper.connect": self.zk_connect,
                **self.overrides,
            }
        )

    def start(self) -> LiteCluster:
        for i in range(self.size):
            server = KafkaServer(self.config(i))
            server.startup()
            self.servers.append(server)
        self.wait_for_brokers(self.size)
        return self

    def wait_for_brokers(self, n: int) -> None:
        """Until every running broker's metadata cache lists ``n`` brokers and a controller."""

        def ready() -> bool:
            return all(
                len(s.metadata_cache.alive_brokers()) == n and s.metadata_cache.controller_id >= 0
                for s in self.servers
                if s.running
            )

        wait_until(ready, what=f"{n} brokers and a controller in every metadata cache")

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(f"127.0.0.1:{s.port}" for s in self.servers if s.running)

    def admin(self) -> KafkaAdminClient:
        return KafkaAdminClient(self.bootstrap_servers)

    def create_topic(self, name: str, partitions: int = 3, replication_factor: int = 1, **configs) -> None:
        admin = self.admin()
        try:
            admin.create_topics(
                [
                    NewTopic(
                        name,
                        partitions,
                        replication_factor,
                        {},
                        {k.replace("_", "."): str(v) for k, v in configs.items()},
                    )
                ]
            )
        finally:
            admin.close()
        self.wait_for_leaders(name, partitions)

    def wait_for_leaders(self, topic: str, partitions: int) -> None:
        def ready() -> bool:
            for s in self.servers:
                parts = s.metadata_cache.partitions(topic)
                if len(parts) != partitions or any(p.leader < 0 for p in parts.values()):
                    return False
            return True

        wait_until(ready, what=f"leaders for the {partitions} partitions of {topic} on every broker")

    def leader_of(self, topic: str, partition: int) -> int:
        running = next(s for s in self.servers if s.running)
        return running.metadata_cache.partition_state(topic, partition).leader

    def controller(self):
        return next(
            s.controller for s in self.servers if s.controller is not None and s.controller.is_active()
        )

    def move_leader(self, topic: str, partition: int, to: int | None = None) -> int:
        """Move a partition's leadership with Kafka's own operations, as an operator would: a
        reassignment to the same replicas with ``to`` first makes it the preferred replica, a
        preferred-replica election hands it the leadership, and a second reassignment puts the
        replicas back in their order (the leader stays), so that only the leadership moved. ``to``
        defaults to the first in-sync follower on a running broker. Waits until every running
        broker knows the new leader; returns it."""
        zk = next(s for s in self.servers if s.running).zk
        tp = (topic, partition)
        current = zk.get_partition_state(topic, partition).leader_and_isr
        running = {s.broker_id for s in self.servers if s.running}
        if to is None:
            to = next((r for r in current.isr if r != current.leader and r in running), None)
        assert to is not None and to != current.leader and to in current.isr, (
            f"no in-sync follower {'' if to is None else to} to move {topic}-{partition}'s leadership to: "
            f"leader {current.leader}, ISR {current.isr}"
        )
        assigned = zk.get_partition_assignment(topic)[partition]
        preferred_first = [to] + [r for r in assigned if r != to]
        if assigned != preferred_first:
            self._reassign(zk, tp, preferred_first)
        zk.create_preferred_replica_election_data([tp])
        self._wait_for_leader(tp, to)
        if assigned != preferred_first:
            self._reassign(zk, tp, assigned)
            self._wait_for_leader(tp, to)
        return to

    @staticmethod
    def _reassign(zk, tp: tuple[str, int], replicas: list[int]) -> None:
        """``kafka-reassign-partitions --execute`` for one partition, waited for until it is done."""
        zk.create_partition_reassignment_data({tp: replicas})
        wait_until(
            lambda: (
                tp not in zk.get_partitions_being_reassigned()
                and zk.get_partition_assignment(tp[0])[tp[1]] == replicas
            ),
            what=f"the reassignment of {tp[0]}-{tp[1]} to {replicas}",
        )

    def _wait_for_leader(self, tp: tuple[str, int], leader: int) -> None:
        wait_until(
            lambda: all(
                s.metadata_cache.partition_state(*tp).leader == leader for s in self.servers if s.running
            ),
            what=f"every broker to know broker {leader} leads {tp[0]}-{tp[1]}",
        )

    def server(self, broker_id: int) -> KafkaServer:
        return next(s for s in self.servers if s.broker_id == broker_id)

    def stop_broker(self, broker_id: int) -> None:
        """Shut one broker down: a controlled shutdown first (the controller moves its leaderships
        away), then its ZooKeeper registration goes with it and the controller sees it fail."""
        self.server(broker_id).shutdown()

    def restart_broker(self, broker_id: int) -> KafkaServer:
        """Start a stopped broker again on its data, and wait until every broker sees it."""
        old = self.server(broker_id)
        assert not old.running, f"broker {broker_id} is running"
        server = KafkaServer(self.config(broker_id))
        server.startup()
        self.servers[self.servers.index(old)] = server
        self.wait_for_brokers(sum(s.running for s in self.servers))
        return server

    def stop(self) -> None:
        for s in reversed(self.servers):
            s.shutdown()
