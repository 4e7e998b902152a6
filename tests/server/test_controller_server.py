"""Three controller-only KRaft nodes as processes (formatted with ``kafka-lite storage format``,
started with ``kafka-lite broker start``), one quorum for the module: the active controller found
with DescribeQuorum, then over the wire a registration answered with an epoch, a heartbeat, a
CreateTopics whose records are then in the metadata log, the listener's ApiVersions, NOT_CONTROLLER
from a standby; and after the active controller is SIGKILLed, another becomes active and answers.
Also a node refused on an unformatted directory, naming it and the command, and a broker's channel to
the controller (BrokerToControllerChannelManager) registering and heartbeating with a node in this
process."""

from __future__ import annotations

import socket
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from kafka_lite.cli.cluster import HEALTHY_TIMEOUT_S
from kafka_lite.cli.main import main
from kafka_lite.clients.metadata import Node
from kafka_lite.common.errors import Errors
from kafka_lite.common.metadata import FeatureLevelRecord
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.controller_messages import (
    ControllerApiKeys,
    encode_controller_request,
    parse_controller_response,
)
from kafka_lite.common.protocol.requests import RequestHeader, encode_request, parse_response
from kafka_lite.common.time import SYSTEM
from kafka_lite.metadata.metadata_version import MetadataVersion
from kafka_lite.raft.tools.quorum_client import find_leader
from kafka_lite.server.broker_server import BrokerServer
from kafka_lite.server.broker_to_controller_channel_manager import (
    BrokerToControllerChannelManager,
    ControllerRequestCompletionHandler,
    RaftControllerNodeProvider,
)
from kafka_lite.server.kafka_config import KafkaConfig
from kafka_lite.server.kafka_raft_server import KafkaRaftServer
from kafka_lite.server.storage_tool import random_uuid
from kafka_lite.utils.ports import free_ports
from tests.kraft.nodes import metadata_records, registration
from tests.support.waiting import wait_until

NODES = (1, 2, 3)
BOOTSTRAP_VERSION = MetadataVersion.IBP_3_3_IV2
ROOT = Path(__file__).resolve().parents[2]
_SIZE = struct.Struct(">i")


def properties(node_id: int, voters: str, port: int, log_dir: Path) -> str:
    # Quick elections and a short fetch timeout, so that a killed leader is replaced in about a
    # second; one network thread and two handlers are plenty for a test's few requests.
    return "\n".join([
        "process.roles=controller", f"node.id={node_id}", f"controller.quorum.voters={voters}",
        f"listeners=CONTROLLER://127.0.0.1:{port}", "controller.listener.names=CONTROLLER",
        f"log.dirs={log_dir}", "controller.quorum.election.timeout.ms=300",
        "controller.quorum.fetch.timeout.ms=1000", "num.network.threads=1", "num.io.threads=2",
        "delete.topic.enable=true",
    ]) + "\n"  # fmt: skip


class Quorum:
    def __init__(self, root: Path) -> None:
        port = free_ports(len(NODES))
        self.root = root
        self.addresses = {n: ("127.0.0.1", port + i) for i, n in enumerate(NODES)}
        voters = ",".join(f"{n}@{h}:{p}" for n, (h, p) in self.addresses.items())
        self.configs = {}
        for n, (_, p) in self.addresses.items():
            self.configs[n] = root / f"node-{n}.properties"
            self.configs[n].write_text(properties(n, voters, p, root / f"node-{n}"))
        self.cluster_id = random_uuid()
        self.processes: dict[int, subprocess.Popen] = {}

    def log_dir(self, node_id: int) -> Path:
        return self.root / f"node-{node_id}"

    def start(self, node_id: int) -> None:
        out = open(self.root / f"node-{node_id}.txt", "w")
        self.processes[node_id] = subprocess.Popen(
            [sys.executable, "-m", "kafka_lite.cli.main", "broker", "start", str(self.configs[node_id])],
            stdout=out, stderr=subprocess.STDOUT, cwd=ROOT,
        )  # fmt: skip
        out.close()

    def exited(self) -> list[int]:
        """The nodes whose processes have ended."""
        return [n for n, process in self.processes.items() if process.poll() is not None]

    def kill(self, node_id: int) -> None:
        process = self.processes.pop(node_id)
        process.kill()
        process.wait(timeout=10)


@pytest.fixture(scope="module")
def quorum(tmp_path_factory):
    q = Quorum(tmp_path_factory.mktemp("kraft-controllers"))
    for n in NODES:
        # Not the latest metadata.version: the log must start at the one formatted with.
        format_args = [
            "-t",
            q.cluster_id,
            "-c",
            str(q.configs[n]),
            "--release-version",
            BOOTSTRAP_VERSION.version,
        ]
        assert main(["storage", "format", *format_args]) == 0
        q.start(n)
    try:
        # A start-up's length is the machine's, not a setting's: the deadline is the one `kafka-lite
        # cluster up` gives its nodes, and a node that exits fails the wait at once.
        result = wait_until(lambda: q.exited() or find_leader(q.addresses) is not None, HEALTHY_TIMEOUT_S,
                            "a leader of the metadata quorum")  # fmt: skip
        assert result is True, f"node(s) {result} exited while starting; see {q.root}/node-N.txt"
        yield q
    finally:
        # Killed, not stopped: nothing is read from them afterwards.
        for n in list(q.processes):
            q.kill(n)


def call(address, api_key: int, version: int, body: dict) -> dict:
    """One request over a fresh connection, as a broker's channel sends it."""
    header = RequestHeader(api_key, version, 11, "test-broker")
    if api_key in ControllerApiKeys._value2member_map_:
        frame = encode_controller_request(header, body)
    else:
        frame = encode_request(header, body)
    with socket.create_connection(address, timeout=5) as sock:
        sock.sendall(_SIZE.pack(len(frame)) + frame)
        (size,) = _SIZE.unpack(_read(sock, 4))
        payload = _read(sock, size)
    if api_key in ControllerApiKeys._value2member_map_:
        correlation_id, answer = parse_controller_response(api_key, version, payload)
    else:
        correlation_id, answer = parse_response(ApiKeys(api_key), version, payload)
    assert correlation_id == 11
    return answer


def _read(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("the controller closed the connection")
        data += chunk
    return data


def register(quorum: Quorum, broker_id: int):
    """The active controller's id and the epoch it gave, once one answers with an epoch."""

    def attempt():
        leader = find_leader(quorum.addresses)
        if leader is None:
            return None
        body = call(quorum.addresses[leader["leader_id"]], ControllerApiKeys.BROKER_REGISTRATION, 0,
                    registration(quorum.cluster_id, broker_id))  # fmt: skip
        return (leader["leader_id"], body["broker_epoch"]) if body["error_code"] == 0 else None

    return wait_until(attempt, 15, f"broker {broker_id}'s registration to be answered with an epoch")


@pytest.mark.integration
def test_the_active_controller_registers_creates_topics_and_a_successor_takes_over(quorum, capsys):
    active, epoch = register(quorum, 1)
    assert epoch > 0
    heartbeat = {"broker_id": 1, "broker_epoch": epoch, "current_metadata_offset": epoch,
                 "want_fence": False, "want_shut_down": False}  # fmt: skip
    answer = call(quorum.addresses[active], ControllerApiKeys.BROKER_HEARTBEAT, 0, heartbeat)
    assert (answer["error_code"], answer["is_caught_up"], answer["is_fenced"]) == (0, True, False)

    # The broker is unfenced, so the topic has a broker to be placed on.
    topic = {"topic": "orders", "num_partitions": 2, "replication_factor": 1, "replica_assignment": [],
             "config_entries": []}  # fmt: skip
    request = {"create_topic_requests": [topic], "timeout": 5000, "validate_only": False}
    created = call(quorum.addresses[active], ApiKeys.CREATE_TOPICS, 2, request)
    assert [(t["topic"], t["error_code"]) for t in created["topic_errors"]] == [("orders", 0)]
    # Answered only once committed: the records are in the active controller's metadata log.
    segment = quorum.log_dir(active) / "__cluster_metadata-0" / "00000000000000000000.log"
    assert main(["dump-log", "--cluster-metadata-decoder", str(segment)]) == 0
    dumped = capsys.readouterr().out
    assert '"type":"TOPIC_RECORD"' in dumped.replace(" ", "") and '"name":"orders"' in dumped.replace(" ", "")
    assert dumped.count("PARTITION_RECORD") == 2 and "REGISTER_BROKER_RECORD" in dumped
    # The first record the first leader wrote: bootstrap.checkpoint's metadata.version.
    [level] = [r for _, r in metadata_records(quorum.log_dir(active)) if isinstance(r, FeatureLevelRecord)]
    assert (level.name, level.feature_level) == ("metadata.version", BOOTSTRAP_VERSION.feature_level)

    # The listener's table, as its ApiVersions lists it: the quorum's and the controller's RPCs and
    # the forwarded admin APIs, no Produce.
    versions = call(quorum.addresses[active], ApiKeys.API_VERSIONS, 1, {})
    listed = {v["api_key"] for v in versions["api_versions"]}
    assert {ControllerApiKeys.BROKER_REGISTRATION, 52, ApiKeys.CREATE_TOPICS} <= listed
    assert ApiKeys.PRODUCE not in listed

    standby = next(n for n in NODES if n != active)
    refused = call(quorum.addresses[standby], ControllerApiKeys.BROKER_REGISTRATION, 0,
                   registration(quorum.cluster_id, 2))  # fmt: skip
    assert refused["error_code"] == Errors.NOT_CONTROLLER.code

    # The active controller dies without a word; the other two elect a leader whose controller
    # takes over from the committed log, and answers.
    quorum.kill(active)
    del quorum.addresses[active]
    successor, second_epoch = register(quorum, 2)
    assert successor != active and second_epoch > epoch
    again = call(quorum.addresses[successor], ApiKeys.CREATE_TOPICS, 2, request)
    assert [(t["topic"], t["error_code"]) for t in again["topic_errors"]] == [
        ("orders", Errors.TOPIC_ALREADY_EXISTS.code)
    ]


@pytest.mark.integration
def test_a_node_on_an_unformatted_directory_is_refused_naming_it(tmp_path, capsys):
    config = tmp_path / "node.properties"
    config.write_text(properties(1, "1@127.0.0.1:9", 9, tmp_path / "data"))
    assert main(["broker", "start", str(config)]) == 1
    err = capsys.readouterr().err
    assert str(tmp_path / "data") in err and "kafka-lite storage format" in err


@pytest.mark.integration
def test_a_node_with_both_roles_builds_a_broker_and_a_controller_over_one_raft_manager(tmp_path):
    config_file = tmp_path / "node.properties"
    text = properties(1, "1@127.0.0.1:9", 9, tmp_path / "data")
    text = text.replace("process.roles=controller", "process.roles=broker,controller")
    text = text.replace("listeners=CONTROLLER://", "listeners=PLAINTEXT://127.0.0.1:8,CONTROLLER://")
    config_file.write_text(text)
    assert main(["storage", "format", "-t", random_uuid(), "-c", str(config_file)]) == 0
    server = KafkaRaftServer(KafkaConfig.from_file(config_file))
    assert isinstance(server.broker, BrokerServer) and server.controller is not None
    assert server.broker.raft_manager is server.controller.raft_manager is server.raft_manager


@pytest.mark.integration
def test_a_brokers_channel_registers_and_heartbeats_with_a_controller_node(tmp_path):
    """The broker's side (BrokerToControllerChannelManager, finding the controller through the Raft
    leader's voter address) against a real controller node, in this process."""
    port = free_ports(1)
    config_file = tmp_path / "node.properties"
    config_file.write_text(properties(1, f"1@127.0.0.1:{port}", port, tmp_path / "data"))
    cluster_id = random_uuid()
    assert main(["storage", "format", "-t", cluster_id, "-c", str(config_file)]) == 0
    server = KafkaRaftServer(KafkaConfig.from_file(config_file))
    server.startup()
    channel = None
    try:
        provider = RaftControllerNodeProvider(
            server.raft_manager.client, [Node(1, "127.0.0.1", port)], "CONTROLLER"
        )
        channel = BrokerToControllerChannelManager(provider, SYSTEM, 7, "registration", 10_000, 5_000)
        channel.start()
        answers: list[dict] = []
        handler = ControllerRequestCompletionHandler(
            on_complete=lambda r: answers.append(r.body),
            on_timeout=lambda: answers.append({"error_code": "timed out"}),
        )
        channel.send_request(ControllerApiKeys.BROKER_REGISTRATION, registration(cluster_id, 7), handler)
        (registered,) = wait_until(lambda: answers, 10, "the registration's answer")
        assert registered["error_code"] == 0 and registered["broker_epoch"] > 0
        heartbeat = {"broker_id": 7, "broker_epoch": registered["broker_epoch"], "current_metadata_offset": 0,
                     "want_fence": True, "want_shut_down": False}  # fmt: skip
        channel.send_request(ControllerApiKeys.BROKER_HEARTBEAT, heartbeat, handler)
        wait_until(lambda: len(answers) == 2, 10, "the heartbeat's answer")
        assert (answers[1]["error_code"], answers[1]["is_caught_up"], answers[1]["is_fenced"]) == (
            0,
            False,
            True,
        )
    finally:
        if channel is not None:
            channel.shutdown()
        server.shutdown()
