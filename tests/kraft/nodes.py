"""KRaft nodes as processes for tests: each formatted with ``kafka-lite storage format`` and started
with ``kafka-lite broker start``, as a user runs them; ``process.roles=broker,controller`` (combined),
or ``broker`` alone (an observer of the quorum)."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

from kafka_lite.cli import cluster_kraft
from kafka_lite.cli.cluster import HEALTHY_TIMEOUT_S
from kafka_lite.cli.main import main
from kafka_lite.common.errors import Errors
from kafka_lite.common.metadata.metadata_record_serde import MetadataRecordSerde
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.record.file_records import FileRecords
from kafka_lite.metadata.metadata_version import METADATA_VERSION_FEATURE_NAME, MetadataVersion
from kafka_lite.server.storage_tool import random_uuid
from kafka_lite.utils.ports import free_ports
from tests.support.waiting import wait_until
from tests.support.wire import WireClient

ROOT = Path(__file__).resolve().parents[2]
NONE, REPLICA_NOT_AVAILABLE = Errors.NONE.code, Errors.REPLICA_NOT_AVAILABLE.code


# Quick elections and short broker sessions, so that a killed node's partitions move within a few
# seconds; small internal topics; one network thread and two handlers per node. Written after the
# settings ``cluster up --kraft`` gives a node, and so taking their place (a later key wins).
FAST = [
    "controller.quorum.election.timeout.ms=300", "controller.quorum.fetch.timeout.ms=1000",
    "broker.heartbeat.interval.ms=200", "broker.session.timeout.ms=1500",
    "num.network.threads=1", "num.io.threads=2", "offsets.topic.num.partitions=2",
    "transaction.state.log.num.partitions=2", "transaction.state.log.min.isr=1",
    "group.initial.rebalance.delay.ms=0", "replica.fetch.wait.max.ms=100",
]  # fmt: skip


def fast_setting_s(name: str) -> float:
    """A ``*.ms`` setting of ``FAST``, in seconds: what the tests' waits derive their deadlines from."""
    values = [line.split("=", 1)[1] for line in FAST if line.split("=", 1)[0] == name]
    if not values:
        raise KeyError(f"{name} is not one of the FAST settings: {[line.split('=', 1)[0] for line in FAST]}")
    return int(values[-1]) / 1000


def node_properties(
    node_id: int, voters: str, controller_port: int | None, broker_port: int, root: Path
) -> str:
    """A combined node's settings; with no ``controller_port``, a broker-only node's: those
    ``cluster up --kraft`` writes (``cluster_kraft.node_properties``), then ``FAST``."""
    node = {"id": node_id, "roles": ["broker"], "port": broker_port}
    if controller_port is not None:
        node.update(roles=["broker", "controller"], controller_port=controller_port)
    return cluster_kraft.node_properties(node, voters, root / f"node-{node_id}") + "\n".join(FAST) + "\n"


class CombinedNodes:
    """Combined nodes ``node_ids`` (the controller quorum's voters), and ``broker_only`` nodes."""

    def __init__(self, root: Path, node_ids: tuple[int, ...], broker_only: tuple[int, ...] = ()) -> None:
        everyone = node_ids + broker_only
        port = free_ports(2 * len(everyone))
        self.root = root
        self.controller_ports = {n: port + 2 * i for i, n in enumerate(node_ids)}
        self.broker_ports = {n: port + 2 * i + 1 for i, n in enumerate(everyone)}
        voters = ",".join(f"{n}@127.0.0.1:{p}" for n, p in self.controller_ports.items())
        self.configs = {}
        for n in everyone:
            self.configs[n] = root / f"node-{n}.properties"
            self.configs[n].write_text(
                node_properties(n, voters, self.controller_ports.get(n), self.broker_ports[n], root)
            )
        self.cluster_id = random_uuid()
        self.processes: dict[int, subprocess.Popen] = {}

    def bootstrap(self, *node_ids: int) -> str:
        return ",".join(f"127.0.0.1:{self.broker_ports[n]}" for n in node_ids or self.processes)

    def start_all(self) -> None:
        for n, config in self.configs.items():
            assert main(["storage", "format", "-t", self.cluster_id, "-c", str(config)]) == 0
            out = open(self.root / f"node-{n}.txt", "w")
            self.processes[n] = subprocess.Popen(
                [sys.executable, "-m", "kafka_lite.cli.main", "broker", "start", str(config)],
                stdout=out, stderr=subprocess.STDOUT, cwd=ROOT,
            )  # fmt: skip
            out.close()
        everyone = set(self.configs)
        for n in self.configs:
            # A start-up's length is the machine's, not a setting's: the deadline is the one
            # `kafka-lite cluster up` gives its nodes, and a node that exits fails the wait at once.
            result = wait_until(
                lambda n=n: self.exited() or self.brokers_seen(n) == everyone,
                HEALTHY_TIMEOUT_S, f"node {n} serving, every broker unfenced",
            )  # fmt: skip
            assert result is True, f"node(s) {result} exited while starting; see {self.root}/node-N.txt"

    def exited(self) -> list[int]:
        """The nodes whose processes have ended."""
        return [n for n, process in self.processes.items() if process.poll() is not None]

    def metadata(self, node_id: int, topics: list[str] | None) -> dict:
        client = WireClient(self.broker_ports[node_id], timeout_s=5)
        try:
            return client.call(ApiKeys.METADATA, 1, {"topics": topics})
        finally:
            client.close()

    def brokers_seen(self, node_id: int) -> set[int]:
        """The brokers node ``node_id`` tells clients of: the registered, unfenced ones."""
        return {b["node_id"] for b in self.metadata(node_id, [])["brokers"]}

    def partition(self, node_id: int, topic: str, partition: int = 0) -> dict | None:
        """The partition's leader and ISR as node ``node_id``'s metadata cache has them."""
        for t in self.metadata(node_id, [topic])["topic_metadata"]:
            for p in t["partition_metadata"]:
                # REPLICA_NOT_AVAILABLE names the leader too: a replica's broker is down
                if p["partition_id"] == partition and p["partition_error_code"] in (
                    NONE,
                    REPLICA_NOT_AVAILABLE,
                ):
                    return p
        return None

    def kill(self, node_id: int) -> None:
        process = self.processes.pop(node_id)
        process.kill()
        process.wait(timeout=10)

    def stop_all(self) -> None:
        # Killed, not stopped: nothing is read from them afterwards.
        for n in list(self.processes):
            self.kill(n)


def metadata_batches(log_dir: Path) -> list[tuple[int, list[tuple[int, object]]]]:
    """The metadata log under ``log_dir`` (a node's ``metadata.log.dir``) as its segment files hold it
    now, batch by batch: ``(append_ms, [(offset, record), ...])``, ``append_ms`` being the leader's
    wall clock when it began the batch. Raft's control batches, and a batch still being written at
    the tail, are left out."""
    found = []
    for segment in sorted((log_dir / "__cluster_metadata-0").glob("*.log")):
        records = FileRecords.open(segment, mutable=False)
        try:
            for _, batch in records.batches():
                if not batch.is_control_batch:
                    found.append((batch.max_timestamp, [
                        (record.offset, MetadataRecordSerde().deserialize(record.value).message) for record in batch
                    ]))  # fmt: skip
        finally:
            records.close()
    return found


def metadata_records(log_dir: Path, since: int = 0) -> list[tuple[int, object]]:
    """``(offset, record)`` of every metadata record at ``since`` or later in the metadata log under
    ``log_dir``, as ``metadata_batches`` reads it."""
    return [
        (offset, r) for _, records in metadata_batches(log_dir) for offset, r in records if offset >= since
    ]


def registration(cluster_id: str, broker_id: int) -> dict:
    """A BrokerRegistration v0 body as a broker sends it, its incarnation id made from its id."""
    return {
        "broker_id": broker_id, "cluster_id": cluster_id, "incarnation_id": uuid.UUID(int=broker_id),
        "listeners": [{"name": "PLAINTEXT", "host": "127.0.0.1", "port": 9092, "security_protocol": 0}],
        "features": [{"name": METADATA_VERSION_FEATURE_NAME,
                      "min_supported_version": MetadataVersion.IBP_3_0_IV1.feature_level,
                      "max_supported_version": MetadataVersion.IBP_3_3_IV3.feature_level}],
        "rack": None,
    }  # fmt: skip
