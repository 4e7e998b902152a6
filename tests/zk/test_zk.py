"""ZooKeeper: the launcher, Kafka's paths and JSON over a real server, and the replica assignment."""

from __future__ import annotations

import json
import os
import re
import socket
import uuid
from collections import Counter

import pytest

from kafka_lite.common.errors import (
    InvalidPartitionsException,
    InvalidReplicationFactorException,
    TopicExistsException,
)
from kafka_lite.zk.admin_utils import assign_replicas_to_brokers
from kafka_lite.zk.embedded import EmbeddedZooKeeper, ZooKeeperStartError
from kafka_lite.zk.zk_utils import BrokerIdInUseException, LeaderAndIsr, ZkUtils
from tests.support.waiting import wait_until

# -- the assignment (no ZooKeeper needed) --------------------------------------------------------------------


def test_assignment_matches_kafkas_for_a_fixed_start():
    """Kafka's AdminUtilsTest expectation: 5 brokers, 10 partitions, 3 replicas, start index 0."""
    assert assign_replicas_to_brokers([0, 1, 2, 3, 4], 10, 3, fixed_start_index=0) == {
        0: [0, 1, 2], 1: [1, 2, 3], 2: [2, 3, 4], 3: [3, 4, 0], 4: [4, 0, 1],
        5: [0, 2, 3], 6: [1, 3, 4], 7: [2, 4, 0], 8: [3, 0, 1], 9: [4, 1, 2],
    }  # fmt: skip


@pytest.mark.parametrize("brokers, partitions, rf", [(3, 6, 1), (3, 9, 2), (5, 50, 3), (4, 7, 4)])
def test_assignment_spreads_leaders_and_never_repeats_a_broker(brokers, partitions, rf):
    import random

    assignment = assign_replicas_to_brokers(list(range(brokers)), partitions, rf, rand=random.Random(7))
    assert sorted(assignment) == list(range(partitions))
    assert all(len(set(r)) == rf for r in assignment.values())
    leaders = Counter(r[0] for r in assignment.values())
    assert max(leaders.values()) - min(leaders.get(b, 0) for b in range(brokers)) <= 1


def test_assignment_errors_are_kafkas():
    with pytest.raises(
        InvalidPartitionsException, match=re.escape("Number of partitions must be larger than 0.")
    ):
        assign_replicas_to_brokers([0], 0, 1)
    with pytest.raises(
        InvalidReplicationFactorException, match=re.escape("Replication factor must be larger than 0.")
    ):
        assign_replicas_to_brokers([0], 1, 0)
    with pytest.raises(
        InvalidReplicationFactorException,
        match=re.escape("Replication factor: 3 larger than available brokers: 2."),
    ):
        assign_replicas_to_brokers([0, 1], 1, 3)


# -- the launcher ---------------------------------------------------------------------------------------------


@pytest.mark.integration
def test_launcher_starts_answers_and_stops_without_leftovers(tmp_path):
    zk = EmbeddedZooKeeper(tmp_path / "zk")
    zk.start()
    pid = zk.pid
    with socket.create_connection(("127.0.0.1", zk.port), timeout=5) as s:
        s.sendall(b"ruok")
        assert s.recv(4) == b"imok"
    zk.stop()
    zk.stop()  # idempotent
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


@pytest.mark.integration
def test_launcher_reports_a_taken_port(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        with pytest.raises(ZooKeeperStartError, match=f"port {port} for ZooKeeper is already in use"):
            EmbeddedZooKeeper(tmp_path / "zk", port=port).start()


# -- paths and JSON over the session's ZooKeeper ------------------------------------------------------------------


@pytest.fixture
def zk_utils(zookeeper):
    utils = ZkUtils(f"{zookeeper.connect_string}/zk-test-{uuid.uuid4().hex[:8]}")
    utils.setup_common_paths()
    yield utils
    utils.close()


def _json(utils: ZkUtils, path: str):
    return json.loads(utils.client.get(path)[0])


@pytest.mark.integration
def test_broker_registration_is_ephemeral_and_kafkas_json(zookeeper, zk_utils):
    chroot = zk_utils.client.chroot
    other = ZkUtils(zookeeper.connect_string + chroot)
    other.register_broker(7, "127.0.0.1", 9099, rack="r1")
    info = _json(zk_utils, "/brokers/ids/7")
    assert info["version"] == 3 and info["host"] == "127.0.0.1" and info["port"] == 9099
    assert (
        info["endpoints"] == ["PLAINTEXT://127.0.0.1:9099"]
        and info["rack"] == "r1"
        and info["jmx_port"] == -1
    )
    with pytest.raises(BrokerIdInUseException, match=re.escape("broker.id 7")):
        zk_utils.register_broker(7, "127.0.0.1", 9100)
    assert zk_utils.get_all_brokers()[0].port == 9099
    other.close()  # the session ends: the ephemeral node goes with it
    wait_until(lambda: zk_utils.get_all_broker_ids() == [], what="the ephemeral broker node to vanish")


@pytest.mark.integration
def test_topic_assignment_config_and_partition_state(zk_utils):
    zk_utils.create_topic("t", {0: [1, 2], 1: [2, 0]}, {"retention.ms": "1000"})
    assert _json(zk_utils, "/brokers/topics/t") == {"version": 1, "partitions": {"0": [1, 2], "1": [2, 0]}}
    assert _json(zk_utils, "/config/topics/t") == {"version": 1, "config": {"retention.ms": "1000"}}
    assert zk_utils.get_partition_assignment("t") == {0: [1, 2], 1: [2, 0]}
    with pytest.raises(TopicExistsException):
        zk_utils.create_topic("t", {0: [1]})
    zk_utils.create_partition_state("t", 0, LeaderAndIsr(1, 0, [1, 2], 0), 5)
    assert _json(zk_utils, "/brokers/topics/t/partitions/0/state") == {
        "controller_epoch": 5, "leader": 1, "version": 1, "leader_epoch": 0, "isr": [1, 2],
    }  # fmt: skip
    state = zk_utils.get_partition_state("t", 0)
    ok, version = zk_utils.conditional_update_partition_state(
        "t", 0, LeaderAndIsr(2, 1, [2], state.leader_and_isr.zk_version), 5
    )
    assert ok and version == state.leader_and_isr.zk_version + 1
    stale = zk_utils.conditional_update_partition_state(
        "t", 0, LeaderAndIsr(1, 2, [1], state.leader_and_isr.zk_version), 5
    )
    assert stale == (False, -1), "a write based on an old read must fail"
    assert zk_utils.get_partition_state("t", 0).leader_and_isr.leader == 2


@pytest.mark.integration
def test_controller_election_epoch_cluster_id_and_producer_id_blocks(zookeeper, zk_utils):
    chroot = zk_utils.client.chroot
    a, b = ZkUtils(zookeeper.connect_string + chroot), ZkUtils(zookeeper.connect_string + chroot)
    assert a.try_elect_controller(1) and not b.try_elect_controller(2)
    assert b.get_controller_id() == 1 and _json(b, "/controller")["brokerid"] == 1
    assert [a.increment_controller_epoch()[0], b.increment_controller_epoch()[0]] == [1, 2]
    a.close()
    wait_until(lambda: b.try_elect_controller(2), what="the second broker to win once the first is gone")
    assert b.get_controller_id() == 2
    cluster_id = b.get_or_create_cluster_id()
    assert len(cluster_id) == 22 and zk_utils.get_or_create_cluster_id() == cluster_id
    assert b.get_new_producer_id_block(2) == (0, 999)
    assert zk_utils.get_new_producer_id_block(3) == (1000, 1999)
    assert _json(b, "/latest_producer_id_block") == {
        "version": 1,
        "broker": 3,
        "block_start": "1000",
        "block_end": "1999",
    }
    b.close()


@pytest.mark.integration
def test_a_restarted_broker_waits_for_its_crashed_sessions_node(zookeeper, zk_utils):
    """A broker killed without closing its session leaves /brokers/ids/N until the session times out;
    the same broker (same address) starting again waits for that instead of failing."""
    import subprocess
    import sys

    connect = zookeeper.connect_string + zk_utils.client.chroot
    crash = (
        "import os, signal\n"
        "from kafka_lite.zk.zk_utils import ZkUtils\n"
        f"z = ZkUtils({connect!r}, session_timeout_ms=2000)\n"
        "z.register_broker(3, '127.0.0.1', 9093)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    subprocess.run([sys.executable, "-c", crash], timeout=60)
    assert zk_utils.get_all_broker_ids() == [3], "the crashed session's node is still there"
    restarted = ZkUtils(connect, session_timeout_ms=2000)
    try:
        restarted.register_broker(3, "127.0.0.1", 9093)
        _, stat = zk_utils.client.get("/brokers/ids/3")
        assert stat.ephemeralOwner == restarted.client.client_id[0], "now owned by the new session"
    finally:
        restarted.close()


@pytest.mark.integration
def test_zookeeper_dies_with_its_owner(tmp_path):
    """The JVM is started with PR_SET_PDEATHSIG: when the process that launched it is killed (no
    chance to clean up), the kernel sends ZooKeeper SIGTERM."""
    import subprocess
    import sys

    owner = (
        "import sys, time\n"
        "from kafka_lite.zk.embedded import EmbeddedZooKeeper\n"
        f"zk = EmbeddedZooKeeper({str(tmp_path / 'zk')!r})\n"
        "zk.start()\n"
        "print(zk.pid, flush=True)\n"
        "time.sleep(600)\n"  # the owner idles until it is killed
    )
    proc = subprocess.Popen([sys.executable, "-c", owner], stdout=subprocess.PIPE)
    java_pid = int(proc.stdout.readline())
    os.kill(java_pid, 0)  # running
    proc.kill()
    proc.wait(10)

    def gone() -> bool:
        try:
            os.kill(java_pid, 0)
        except ProcessLookupError:
            return True
        with open(f"/proc/{java_pid}/stat") as f:
            return f.read().split(") ", 1)[1][0] == "Z"

    wait_until(gone, what="ZooKeeper to exit after its owner was killed")
