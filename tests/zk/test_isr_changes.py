"""A leader's side of an ISR change in ZooKeeper, over a real server: the conditional write of the
partition state and the notification for the controller, byte for byte as Kafka 0.10.1 writes them."""

from __future__ import annotations

import logging

import pytest

from kafka_lite.zk.zk_utils import LeaderAndIsr, LeaderIsrAndControllerEpoch

pytestmark = pytest.mark.integration

STATE = "/brokers/topics/t/partitions/0/state"


@pytest.fixture
def partition(zk_utils):
    """Partition t-0 as a controller left it: leader 1, ISR [1, 2, 3], controller epoch 4."""
    zk_utils.create_topic("t", {0: [1, 2, 3]})
    zk_utils.create_partition_state("t", 0, LeaderAndIsr(1, 7, [1, 2, 3], 0), 4)
    return zk_utils


def test_a_leader_shrinks_its_isr_with_the_version_it_holds(partition):
    """The leader keeps its leader epoch and the controller's epoch; only the ISR and the version move."""
    ok, version = partition.update_leader_and_isr("t", 0, LeaderAndIsr(1, 7, [1, 3], 0), 4)
    assert (ok, version) == (True, 1)
    assert partition.client.get(STATE)[0] == (
        b'{"controller_epoch":4,"leader":1,"version":1,"leader_epoch":7,"isr":[1,3]}'
    )
    assert partition.get_partition_state("t", 0) == LeaderIsrAndControllerEpoch(
        LeaderAndIsr(1, 7, [1, 3], 1), 4
    )


def test_a_stale_version_is_refused_unless_the_znode_already_holds_that_state(partition):
    # The controller moved the state on (a new leader epoch) since the leader last read it.
    assert partition.conditional_update_partition_state("t", 0, LeaderAndIsr(2, 8, [2, 3], 0), 5)[0]
    refused = partition.update_leader_and_isr("t", 0, LeaderAndIsr(1, 7, [1, 2], 0), 4)
    assert refused == (False, -1)
    assert partition.get_partition_state("t", 0).leader_and_isr.isr == [2, 3], (
        "the refused write left no trace"
    )

    # A leader retrying a write that went through (its answer lost) finds its own state there:
    # done, at the znode's current version (Kafka's checkLeaderAndIsrZkData).
    assert partition.update_leader_and_isr("t", 0, LeaderAndIsr(2, 8, [2], 1), 5) == (True, 2)
    assert partition.update_leader_and_isr("t", 0, LeaderAndIsr(2, 8, [2], 1), 5) == (True, 2)
    # The same ISR under another controller epoch is not the same state.
    assert partition.update_leader_and_isr("t", 0, LeaderAndIsr(2, 8, [2], 1), 6) == (False, -1)
    assert partition.update_leader_and_isr("nope", 0, LeaderAndIsr(2, 8, [2], 0), 5) == (False, -1)


def test_propagate_isr_changes_writes_one_sequential_node_with_kafkas_json(zk_utils):
    first = zk_utils.propagate_isr_changes({("b", 1), ("a", 0), ("b", 0)})
    second = zk_utils.propagate_isr_changes({("c", 2)})
    assert first == "/isr_change_notification/isr_change_0000000000"
    assert second == "/isr_change_notification/isr_change_0000000001"
    assert zk_utils.client.get(first)[0] == (
        b'{"version":1,"partitions":[{"topic":"a","partition":0},'
        b'{"topic":"b","partition":0},{"topic":"b","partition":1}]}'
    )
    assert zk_utils.client.get(second)[0] == b'{"version":1,"partitions":[{"topic":"c","partition":2}]}'
    assert zk_utils.client.exists(first).ephemeralOwner == 0, "persistent: it outlives the leader's session"

    assert zk_utils.get_isr_change_notifications() == ["isr_change_0000000000", "isr_change_0000000001"]
    assert zk_utils.get_isr_change_partitions("isr_change_0000000000") == {("a", 0), ("b", 0), ("b", 1)}
    zk_utils.delete_isr_change_notification("isr_change_0000000000")
    zk_utils.delete_isr_change_notification("isr_change_0000000000")  # already gone is fine
    assert zk_utils.get_isr_change_notifications() == ["isr_change_0000000001"]
    assert zk_utils.get_isr_change_partitions("isr_change_0000000000") == set(), "a vanished node names none"

    with pytest.raises(ValueError, match="at least one partition"):
        zk_utils.propagate_isr_changes(set())


@pytest.mark.parametrize(
    ("data", "what"),
    [
        (b"not json", "not JSON"),
        (b'{"version":1}', '"partitions" list'),
        (b"[1,2]", '"partitions" list'),
        (b'{"version":1,"partitions":[{"topic":"t"}]}', "{'topic': 't'}"),
        (b'{"version":1,"partitions":[{"topic":"t","partition":"0"}]}', "'partition': '0'"),
        (b'{"version":1,"partitions":[7]}', "got 7"),
    ],
)
def test_a_malformed_notification_is_logged_skipped_and_deleted(zk_utils, caplog, data, what):
    good = zk_utils.propagate_isr_changes({("t", 0)})
    bad = zk_utils.client.create("/isr_change_notification/isr_change_", data, sequence=True)
    bad_child = bad.rsplit("/", 1)[1]
    with caplog.at_level(logging.ERROR, logger="kafka_lite.zk.zk_utils"):
        assert zk_utils.get_isr_change_partitions(bad_child) == set()
    # Only zk_utils' records: a cluster another test of this worker left running may log errors too.
    (record,) = [
        r for r in caplog.records if r.levelno == logging.ERROR and r.name == "kafka_lite.zk.zk_utils"
    ]
    assert "Invalid topic and partition JSON" in record.getMessage()
    assert bad in record.getMessage() and what in record.getMessage()
    assert not zk_utils.client.exists(bad), "a notification no controller can read is deleted"
    assert zk_utils.client.exists(good), "the other notifications are left for the controller"
