"""StopReplica on one broker's replica manager: with ``delete_partitions`` it deletes the partition's
log directory (also one only on disk, loaded at startup before any LeaderAndIsr), without it the log
stays; every partition is answered; a deposed controller's request changes nothing."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import Errors
from kafka_lite.common.time import MockTime
from kafka_lite.testing.in_process_replicas import in_process_replica_manager, leader_and_isr

pytestmark = pytest.mark.unit

TP, ELSEWHERE = ("doomed", 0), ("never-here", 3)


def stop_replica(tps, delete: bool, controller_epoch: int = 1) -> dict:
    return {
        "controller_id": 0,
        "controller_epoch": controller_epoch,
        "delete_partitions": delete,
        "partitions": [{"topic": t, "partition": p} for t, p in tps],
    }


@pytest.fixture
def manager(tmp_path):
    m = in_process_replica_manager(tmp_path, 1, MockTime())
    m.become_leader_or_follower(leader_and_isr(TP, 1, [1], [1], controller_epoch=1))
    yield m
    m.shutdown(checkpoint_hw=False)


def test_stop_replica_with_delete_removes_the_log_directory_and_answers_each_partition(manager, tmp_path):
    directory = tmp_path / "broker-1" / "doomed-0"
    assert directory.is_dir()
    error, partitions = manager.stop_replicas(stop_replica([TP, ELSEWHERE], delete=True))
    assert (error, partitions) == (Errors.NONE, {TP: Errors.NONE, ELSEWHERE: Errors.NONE})
    assert not directory.exists()
    assert manager.get_partition(TP) is None and manager.log_manager.get_log(TP) is None


def test_stop_replica_without_delete_keeps_the_log(manager, tmp_path):
    error, partitions = manager.stop_replicas(stop_replica([TP], delete=False))
    assert (error, partitions) == (Errors.NONE, {TP: Errors.NONE})
    assert (tmp_path / "broker-1" / "doomed-0").is_dir() and manager.log_manager.get_log(TP) is not None


def test_a_log_loaded_from_disk_is_deleted_before_any_leader_and_isr(manager, tmp_path):
    """A broker that was down while its topic was deleted: its log manager opened the log at startup,
    no LeaderAndIsr made it a partition, and StopReplica (delete) must still remove it."""
    manager.shutdown(checkpoint_hw=False)
    manager.log_manager.shutdown()
    restarted = in_process_replica_manager(tmp_path, 1, MockTime())
    try:
        assert restarted.get_partition(TP) is None and restarted.log_manager.get_log(TP) is not None
        assert restarted.stop_replicas(stop_replica([TP], delete=True)) == (Errors.NONE, {TP: Errors.NONE})
        assert not (tmp_path / "broker-1" / "doomed-0").exists()
    finally:
        restarted.shutdown(checkpoint_hw=False)


def test_a_stale_controller_epoch_deletes_nothing(manager, tmp_path):
    manager.stop_replicas(stop_replica([], delete=False, controller_epoch=2))
    assert manager.stop_replicas(stop_replica([TP], delete=True, controller_epoch=1)) == (
        Errors.STALE_CONTROLLER_EPOCH,
        {},
    )
    assert (tmp_path / "broker-1" / "doomed-0").is_dir()
