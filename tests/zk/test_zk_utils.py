"""Kafka's ZooKeeper layout over a real server: each method's round trip and the exact bytes written."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import uuid

import pytest
from kazoo.client import KazooClient
from kazoo.exceptions import NodeExistsError

from kafka_lite.common.errors import TopicExistsException, UnknownTopicOrPartitionException
from kafka_lite.zk import zk_utils as zk
from kafka_lite.zk.zk_utils import (
    Broker,
    BrokerIdInUseException,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    TopicAlreadyMarkedForDeletionException,
    ZkUtils,
    scala_map_order,
)
from tests.support.waiting import wait_until

integration = pytest.mark.integration


def raw(utils: ZkUtils, path: str) -> bytes:
    return utils.client.get(path)[0]


# -- Kafka's key order (no server) -------------------------------------------------------------------------------


def test_scala_map_order_reproduces_kafkas_known_znodes():
    """Known Kafka 0.10 znodes: a broker's starts with jmx_port, a partition state's with controller_epoch,
    a 10-partition topic's partitions run 8, 4, 9, 5, 6, 1, 0, 2, 7, 3."""
    keys = ["version", "host", "port", "endpoints", "jmx_port", "timestamp"]
    assert scala_map_order(keys) == ["jmx_port", "timestamp", "endpoints", "host", "version", "port"]
    assert scala_map_order(["version", "leader", "leader_epoch", "controller_epoch", "isr"]) == [
        "controller_epoch", "leader", "version", "leader_epoch", "isr",
    ]  # fmt: skip
    assert zk._partitions_order(list(range(10))) == [8, 4, 9, 5, 6, 1, 0, 2, 7, 3]
    assert scala_map_order(["version", "brokerid", "timestamp"]) == ["version", "brokerid", "timestamp"]


def test_paths():
    assert zk.topic_path("t") == "/brokers/topics/t"
    assert zk.topic_partition_state_path("t", 3) == "/brokers/topics/t/partitions/3/state"
    assert (zk.REASSIGN_PARTITIONS_PATH, zk.PREFERRED_REPLICA_ELECTION_PATH) == (
        "/admin/reassign_partitions",
        "/admin/preferred_replica_election",
    )
    assert zk.ISR_CHANGE_NOTIFICATION_PATH == "/isr_change_notification"
    assert zk.PRODUCER_ID_BLOCK_PATH == "/latest_producer_id_block" and zk.CLUSTER_ID_PATH == "/cluster/id"


# -- connecting --------------------------------------------------------------------------------------------------------


@integration
def test_a_missing_chroot_is_created_and_common_paths_live_under_it(zookeeper):
    chroot = f"/test_{uuid.uuid4().hex}/cluster_a"
    utils = ZkUtils(zookeeper.connect_string + chroot)
    try:
        utils.setup_common_paths()
        utils.setup_common_paths()  # idempotent
        plain = KazooClient(zookeeper.connect_string)
        plain.start(timeout=10)
        try:
            for path in (
                "/brokers/ids", "/brokers/topics", "/brokers/seqid", "/config/topics", "/config/changes",
                "/admin/delete_topics", "/isr_change_notification",
            ):  # fmt: skip
                assert plain.exists(chroot + path), path
        finally:
            plain.stop()
            plain.close()
    finally:
        utils.close()
        utils.close()  # idempotent


@integration
def test_an_unreachable_server_is_a_clear_error():
    from kafka_lite.common.errors import KafkaException
    from kafka_lite.utils.ports import free_port

    with pytest.raises(KafkaException, match=re.escape("Cannot connect to ZooKeeper at 127.0.0.1")):
        ZkUtils(f"127.0.0.1:{free_port()}", connection_timeout_ms=500)


# -- brokers ------------------------------------------------------------------------------------------------------------


@integration
def test_broker_registration_is_kafkas_json_and_ephemeral(zk_utils, make_zk_utils):
    broker = make_zk_utils()
    broker.register_broker(7, "127.0.0.1", 9099, rack="r1")
    data = raw(zk_utils, "/brokers/ids/7")
    ts = json.loads(data)["timestamp"]
    assert ts.isdigit() and len(ts) == 13
    assert data == (
        b'{"jmx_port":-1,"timestamp":"' + ts.encode() + b'","endpoints":["PLAINTEXT://127.0.0.1:9099"],'
        b'"host":"127.0.0.1","version":3,"port":9099,"rack":"r1"}'
    )
    assert zk_utils.client.exists("/brokers/ids/7").ephemeralOwner == broker.client.client_id[0]
    assert zk_utils.get_broker(7) == Broker(7, "127.0.0.1", 9099, "r1")
    assert zk_utils.get_broker(8) is None

    broker.close()  # the session ends: the ephemeral node goes with it, at once
    wait_until(lambda: zk_utils.get_all_broker_ids() == [], what="the ephemeral broker node to vanish")


@integration
def test_broker_without_rack_and_the_listing(zk_utils, make_zk_utils):
    for broker_id, port in ((2, 9094), (0, 9092), (1, 9093)):
        make_zk_utils().register_broker(broker_id, "127.0.0.1", port, jmx_port=9999)
    data = raw(zk_utils, "/brokers/ids/0")
    assert b'"rack"' not in data and b'"jmx_port":9999,' in data
    assert zk_utils.get_all_broker_ids() == [0, 1, 2]
    assert zk_utils.get_all_brokers() == [Broker(i, "127.0.0.1", 9092 + i) for i in range(3)]


@integration
def test_a_second_broker_with_the_same_id_is_refused(zk_utils, make_zk_utils):
    make_zk_utils().register_broker(5, "127.0.0.1", 9095)
    with pytest.raises(BrokerIdInUseException, match=re.escape("broker id 5 is already registered")) as info:
        zk_utils.register_broker(5, "127.0.0.1", 9096)
    assert isinstance(info.value, NodeExistsError)
    assert zk_utils.get_broker(5).port == 9095


@integration
def test_a_restarted_broker_waits_for_its_crashed_sessions_node(zk_connect, zk_utils):
    """A broker killed without closing its session leaves /brokers/ids/N until the session times out;
    the same broker (same address) starting again waits for that instead of failing."""
    crash = (
        "import os, signal\n"
        "from kafka_lite.zk.zk_utils import ZkUtils\n"
        f"z = ZkUtils({zk_connect!r}, session_timeout_ms=2000)\n"
        "z.register_broker(3, '127.0.0.1', 9093)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    subprocess.run([sys.executable, "-c", crash], timeout=60)
    assert zk_utils.get_all_broker_ids() == [3], "the crashed session's node is still there"
    restarted = ZkUtils(zk_connect, session_timeout_ms=2000)
    try:
        restarted.register_broker(3, "127.0.0.1", 9093)
        assert zk_utils.client.exists("/brokers/ids/3").ephemeralOwner == restarted.client.client_id[0]
    finally:
        restarted.close()


# -- topics -------------------------------------------------------------------------------------------------------------


@integration
def test_topic_assignment_and_config_bytes(zk_utils):
    assert zk_utils.get_all_topics() == []
    zk_utils.create_topic(
        "t", {0: [1, 2], 1: [2, 0], 2: [0, 1]}, {"retention.ms": "1000", "cleanup.policy": "compact"}
    )
    # AdminUtils' mutable.HashMap order for three partitions: 1, 2, 0.
    assert raw(zk_utils, "/brokers/topics/t") == b'{"version":1,"partitions":{"1":[2,0],"2":[0,1],"0":[1,2]}}'
    assert raw(zk_utils, "/config/topics/t") == (
        b'{"version":1,"config":{"retention.ms":"1000","cleanup.policy":"compact"}}'
    )
    assert zk_utils.get_partition_assignment("t") == {0: [1, 2], 1: [2, 0], 2: [0, 1]}
    assert zk_utils.get_topic_config("t") == {"retention.ms": "1000", "cleanup.policy": "compact"}
    assert zk_utils.get_all_topics() == ["t"]

    zk_utils.create_topic("u", {p: [0] for p in range(10)})
    assert raw(zk_utils, "/config/topics/u") == b'{"version":1,"config":{}}'
    assert raw(zk_utils, "/brokers/topics/u") == (
        b'{"version":1,"partitions":{"8":[0],"4":[0],"9":[0],"5":[0],"6":[0],"1":[0],"0":[0],"2":[0],"7":[0],"3":[0]}}'
    )
    assert zk_utils.get_all_topics() == ["t", "u"]


@integration
def test_an_existing_topic_is_refused_and_missing_ones_read_empty(zk_utils):
    zk_utils.create_topic("t", {0: [1]})
    with pytest.raises(TopicExistsException, match=re.escape("Topic 't' already exists.")):
        zk_utils.create_topic("t", {0: [2]})
    assert zk_utils.get_partition_assignment("t") == {0: [1]}
    assert zk_utils.get_partition_assignment("nope") == {}
    assert zk_utils.get_topic_config("nope") == {}
    assert zk_utils.get_partition_state("nope", 0) is None


@integration
def test_a_deletion_mark_and_what_a_completed_deletion_removes(zk_utils):
    """``AdminUtils.deleteTopic``: an empty ``/admin/delete_topics/<topic>``, refused for a topic that
    does not exist (or cannot be a topic's one znode), TopicAlreadyMarked for a second mark; the
    completed deletion removes assignment, states, config and mark, and never a parent."""
    zk_utils.create_topic("t", {0: [1]}, {"retention.ms": "1"})
    zk_utils.create_partition_state("t", 0, LeaderAndIsr(1, 0, [1], 0), 1)
    zk_utils.create_delete_topic_path("t")
    assert raw(zk_utils, "/admin/delete_topics/t") == b"" and zk_utils.get_topics_to_be_deleted() == ["t"]
    with pytest.raises(TopicAlreadyMarkedForDeletionException):
        zk_utils.create_delete_topic_path("t")
    for name in ("nope", "", "t/partitions", ".."):
        with pytest.raises(UnknownTopicOrPartitionException):
            zk_utils.create_delete_topic_path(name)
    for name in ("", "..", "t/partitions"):
        with pytest.raises(ValueError, match="not a topic name"):
            zk_utils.delete_topic_znodes(name)
    zk_utils.delete_topic_znodes("t")
    assert zk_utils.get_all_topics() == [] and zk_utils.get_topics_to_be_deleted() == []
    assert not zk_utils.client.exists("/config/topics/t")
    assert zk_utils.client.exists("/brokers/topics") and zk_utils.client.exists("/admin/delete_topics")


# -- partition state ----------------------------------------------------------------------------------------------------


@integration
def test_partition_state_bytes_and_conditional_updates(zk_utils):
    zk_utils.create_topic("t", {0: [1, 2]})
    zk_utils.create_partition_state("t", 0, LeaderAndIsr(1, 0, [1, 2], 0), 5)
    assert raw(zk_utils, "/brokers/topics/t/partitions/0/state") == (
        b'{"controller_epoch":5,"leader":1,"version":1,"leader_epoch":0,"isr":[1,2]}'
    )
    with pytest.raises(NodeExistsError):
        zk_utils.create_partition_state("t", 0, LeaderAndIsr(2, 0, [2], 0), 5)

    state = zk_utils.get_partition_state("t", 0)
    assert state == LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 0, [1, 2], 0), 5)
    ok, version = zk_utils.conditional_update_partition_state("t", 0, LeaderAndIsr(2, 1, [2], 0), 6)
    assert (ok, version) == (True, 1)
    assert zk_utils.get_partition_state("t", 0) == LeaderIsrAndControllerEpoch(LeaderAndIsr(2, 1, [2], 1), 6)

    stale = zk_utils.conditional_update_partition_state("t", 0, LeaderAndIsr(1, 2, [1], 0), 6)
    assert stale == (False, -1), "a write based on an old read must fail"
    assert zk_utils.get_partition_state("t", 0).leader_and_isr.leader == 2
    assert zk_utils.conditional_update_partition_state("t", 9, LeaderAndIsr(1, 0, [1], 0), 6) == (False, -1)


# -- controller ---------------------------------------------------------------------------------------------------------


@integration
def test_controller_election_only_one_wins_then_the_other(zk_utils, make_zk_utils):
    a, b = make_zk_utils(), make_zk_utils()
    assert zk_utils.get_controller_id() == -1
    assert a.try_elect_controller(1)
    assert not b.try_elect_controller(2)
    assert not a.try_elect_controller(1), "even the controller itself cannot create it twice"
    data = raw(b, "/controller")
    ts = json.loads(data)["timestamp"]
    assert data == b'{"version":1,"brokerid":1,"timestamp":"' + ts.encode() + b'"}'
    assert (
        b.get_controller_id() == 1 and a.client.exists("/controller").ephemeralOwner == a.client.client_id[0]
    )

    a.close()  # the controller's session ends
    wait_until(lambda: b.try_elect_controller(2), what="the second broker to win once the first is gone")
    assert zk_utils.get_controller_id() == 2


@integration
def test_controller_epoch_increments(zk_utils, make_zk_utils):
    other = make_zk_utils()
    assert zk_utils.get_controller_epoch() == 0
    assert zk_utils.increment_controller_epoch() == (1, 0)
    assert raw(zk_utils, "/controller_epoch") == b"1"
    assert other.increment_controller_epoch() == (2, 1)
    assert zk_utils.increment_controller_epoch() == (3, 2)
    assert raw(other, "/controller_epoch") == b"3" and other.get_controller_epoch() == 3


# -- cluster id, producer ids -----------------------------------------------------------------------------------------


@integration
def test_cluster_id_is_created_once_and_stable(zk_utils, make_zk_utils):
    cluster_id = zk_utils.get_or_create_cluster_id()
    assert re.fullmatch(r"[A-Za-z0-9_-]{22}", cluster_id)
    assert raw(zk_utils, "/cluster/id") == b'{"version":"1","id":"' + cluster_id.encode() + b'"}'
    assert make_zk_utils().get_or_create_cluster_id() == cluster_id
    assert zk_utils.get_or_create_cluster_id() == cluster_id


@integration
def test_producer_id_blocks_from_two_brokers(zk_utils, make_zk_utils):
    other = make_zk_utils()
    assert zk_utils.get_new_producer_id_block(2) == (0, 999)
    assert raw(zk_utils, "/latest_producer_id_block") == (
        b'{"version":1,"broker":2,"block_start":"0","block_end":"999"}'
    )
    assert other.get_new_producer_id_block(3) == (1000, 1999)
    assert raw(zk_utils, "/latest_producer_id_block") == (
        b'{"version":1,"broker":3,"block_start":"1000","block_end":"1999"}'
    )
    assert zk_utils.get_new_producer_id_block(2, block_size=10) == (2000, 2009)


@integration
def test_producer_id_blocks_never_overlap_under_contention(make_zk_utils):
    """Conditional writes and retries: concurrent brokers each get distinct blocks."""
    from concurrent.futures import ThreadPoolExecutor

    brokers = [make_zk_utils() for _ in range(4)]
    with ThreadPoolExecutor(4) as pool:
        blocks = list(
            pool.map(lambda i: [brokers[i].get_new_producer_id_block(i) for _ in range(5)], range(4))
        )
    starts = sorted(start for per_broker in blocks for start, _ in per_broker)
    assert starts == [1000 * i for i in range(20)]


# -- watches -------------------------------------------------------------------------------------------------------------


@integration
def test_watch_children_and_watch_data(zk_utils, make_zk_utils):
    children_seen: list[list[str]] = []
    zk_utils.watch_children("/brokers/ids", lambda children: children_seen.append(sorted(children)))
    data_seen: list[bytes | None] = []
    zk_utils.watch_data("/controller", lambda data, stat: data_seen.append(data))

    broker = make_zk_utils()
    broker.register_broker(4, "127.0.0.1", 9096)
    wait_until(lambda: children_seen[-1] == ["4"], what="the children watch to see broker 4")
    broker.try_elect_controller(4)
    wait_until(lambda: data_seen and data_seen[-1] is not None, what="the data watch to see /controller")
    assert json.loads(data_seen[-1])["brokerid"] == 4

    broker.close()
    wait_until(lambda: children_seen[-1] == [], what="the children watch to see broker 4 leave")
    wait_until(lambda: data_seen[-1] is None, what="the data watch to see /controller deleted")
    assert children_seen[0] == [] and data_seen[0] is None, "each watch is called once at once"
