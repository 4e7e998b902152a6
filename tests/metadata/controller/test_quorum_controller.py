"""The quorum controller, as Kafka 3.3's QuorumControllerTest: three controllers over one
LocalLogManager log, each on a deterministic event queue, stepped on MockTime.

What the tests hold (and, over a real one-voter KafkaRaftClient on disk with a KafkaEventQueue
thread, the last test): a write is answered only once committed; a renounce reverts what was not
committed and fails its futures with NOT_CONTROLLER; a standby replays to the leader's state; a
controller restarted after a snapshot loads it and replays only the tail; the periodic fencing event
fences a broker that stopped heartbeating; the first leader of an empty log writes metadata.version.
"""

import uuid

import pytest

from kafka_lite.common.errors import Errors
from kafka_lite.common.metadata import (
    ConfigRecord,
    FeatureLevelRecord,
    FenceBrokerRecord,
    MetadataRecordSerde,
    PartitionChangeRecord,
    ProducerIdsRecord,
)
from kafka_lite.common.metadata.api_message_and_version import ApiMessageAndVersion
from kafka_lite.common.time import SYSTEM, MockTime
from kafka_lite.metadata.config_resource import ConfigResource
from kafka_lite.metadata.controller.configuration_control_manager import ApiError, OpType
from kafka_lite.metadata.controller.controller_result import ControllerResult
from kafka_lite.metadata.controller.quorum_controller import QuorumController
from kafka_lite.metadata.controller.snapshot_generator import Section, SnapshotGenerator
from kafka_lite.metadata.metadata_version import MetadataVersion
from kafka_lite.queue.kafka_event_queue import KafkaEventQueue
from kafka_lite.raft.offset_and_epoch import OffsetAndEpoch
from kafka_lite.raft.raft_client import Batch
from kafka_lite.raft.raft_config import RaftConfig
from kafka_lite.raft.tools.raft_manager import KafkaRaftManager
from kafka_lite.testing.local_log_manager import LocalSnapshotWriter, SharedLogData
from kafka_lite.testing.mock_fault_handler import MockFaultHandler
from kafka_lite.testing.quorum_controller_test_env import CLUSTER_ID, QuorumControllerTestEnv
from tests.support.waiting import wait_until

CLUSTER_DEFAULT = ConfigResource(ConfigResource.Type.BROKER, "")


def _set(key, value):
    return {CLUSTER_DEFAULT: {key: (OpType.SET, value)}}


def _records(env):
    return [record.message for batch in env.shared.batches for record in batch.records]


def _registration(broker_id):
    return {
        "broker_id": broker_id,
        "cluster_id": CLUSTER_ID,
        "incarnation_id": uuid.UUID(int=broker_id + 1),
        "listeners": [
            {"name": "PLAINTEXT", "host": "localhost", "port": 9092 + broker_id, "security_protocol": 0}
        ],
        "features": [{"name": "metadata.version", "min_supported_version": 1, "max_supported_version": 7}],
        "rack": None,
    }


def _heartbeat(broker_id, epoch, offset, **flags):
    return {"broker_id": broker_id, "broker_epoch": epoch, "current_metadata_offset": offset,
            "want_fence": False, "want_shut_down": False, **flags}  # fmt: skip


def _register_and_unfence(env, active, broker_id):
    future = active.register_broker(_registration(broker_id))
    env.poll()
    epoch = future.result(timeout=0).epoch
    heartbeat = active.process_broker_heartbeat(_heartbeat(broker_id, epoch, active.last_committed_offset()))
    env.poll()
    assert not heartbeat.result(timeout=0).is_fenced
    return epoch


@pytest.mark.unit
def test_the_first_leader_of_an_empty_log_writes_metadata_version_and_standbys_replay_it():
    env = QuorumControllerTestEnv()
    active = env.elect(0)
    assert active.is_active() and not env.controllers[1].is_active()
    assert _records(env) == [FeatureLevelRecord(name="metadata.version", feature_level=7)]
    for controller in env.controllers.values():
        assert controller.feature_control.metadata_version() is MetadataVersion.IBP_3_3_IV3
        assert controller.last_committed_offset() == 0


@pytest.mark.unit
def test_a_write_is_answered_only_once_committed():
    env = QuorumControllerTestEnv()
    active = env.elect(0)
    env.shared.set_auto_commit(False)
    future = active.incremental_alter_configs(_set("log.retention.ms", "1000"))
    env.poll()
    # Applied at once in the leader's memory, so the next write sees it, but not answered.
    assert active.configuration_control.config_properties(CLUSTER_DEFAULT) == {"log.retention.ms": "1000"}
    assert not future.done()
    assert env.controllers[1].configuration_control.config_properties(CLUSTER_DEFAULT) == {}
    # A read answers from the committed state.
    described = active.describe_configs({CLUSTER_DEFAULT: []})
    env.poll()
    assert described.result(timeout=0)[CLUSTER_DEFAULT].result == {}
    env.shared.commit_all()
    env.poll()
    assert future.result(timeout=0) == {CLUSTER_DEFAULT: ApiError.NONE}
    assert env.controllers[1].configuration_control.config_properties(CLUSTER_DEFAULT) == {
        "log.retention.ms": "1000"
    }


@pytest.mark.unit
def test_a_write_that_writes_nothing_waits_behind_uncommitted_writes():
    env = QuorumControllerTestEnv()
    active = env.elect(0)
    env.shared.set_auto_commit(False)
    first = active.incremental_alter_configs(_set("a", "1"))
    # A broker config is written even when unchanged, so a validate-only write is the one with no records.
    no_records = active.incremental_alter_configs(_set("b", "2"), validate_only=True)
    env.poll()
    assert not first.done() and not no_records.done()
    env.shared.commit_all()
    env.poll()
    assert first.done() and no_records.result(timeout=0) == {CLUSTER_DEFAULT: ApiError.NONE}


@pytest.mark.unit
def test_a_standby_refuses_writes_with_not_controller():
    env = QuorumControllerTestEnv()
    env.elect(0)
    future = env.controllers[1].incremental_alter_configs(_set("a", "1"))
    env.poll()
    with pytest.raises(Errors.NOT_CONTROLLER.exception_class, match="appears to be node 0"):
        future.result(timeout=0)


@pytest.mark.unit
def test_a_new_leader_makes_the_old_one_revert_what_was_not_committed_and_fail_its_futures():
    env = QuorumControllerTestEnv()
    old = env.elect(0)
    committed = old.incremental_alter_configs(_set("kept", "1"))
    env.poll()
    assert committed.result(timeout=0) == {CLUSTER_DEFAULT: ApiError.NONE}
    env.shared.set_auto_commit(False)
    lost = old.incremental_alter_configs(_set("lost", "2"))
    env.poll()
    assert old.configuration_control.config_properties(CLUSTER_DEFAULT) == {"kept": "1", "lost": "2"}
    new = env.elect(1)
    assert not old.is_active() and new.is_active()
    with pytest.raises(Errors.NOT_CONTROLLER.exception_class):
        lost.result(timeout=0)
    for controller in env.controllers.values():
        assert controller.configuration_control.config_properties(CLUSTER_DEFAULT) == {"kept": "1"}
    # The new leader goes on from the committed state.
    env.shared.set_auto_commit(True)
    again = new.incremental_alter_configs(_set("after", "3"))
    env.poll()
    assert again.result(timeout=0) == {CLUSTER_DEFAULT: ApiError.NONE}
    assert old.configuration_control.config_properties(CLUSTER_DEFAULT) == {"kept": "1", "after": "3"}


@pytest.mark.unit
def test_an_unexpected_failure_renounces_and_reverts():
    env = QuorumControllerTestEnv()
    active = env.elect(0)
    env.shared.set_auto_commit(False)
    pending = active.incremental_alter_configs(_set("x", "1"))
    env.poll()

    def broken():
        raise ValueError("a bug in a manager")

    failed = active._append_write_event("broken", broken)
    env.poll()
    with pytest.raises(Errors.UNKNOWN.exception_class, match="a bug in a manager"):
        failed.result(timeout=0)
    with pytest.raises(Errors.NOT_CONTROLLER.exception_class):
        pending.result(timeout=0)
    assert not active.is_active()
    assert active.configuration_control.config_properties(CLUSTER_DEFAULT) == {}
    # A manager's bug is the request's failure, not a fault: the records were never applied.
    assert env.fatal_fault_handler.first_exception is None


@pytest.mark.unit
def test_a_record_the_active_controller_cannot_apply_is_a_fatal_fault():
    env = QuorumControllerTestEnv()
    active = env.elect(0)
    # A change to a partition of a topic that does not exist: replay refuses it.
    unknown = PartitionChangeRecord(topic_id=uuid.UUID(int=7), partition_id=0, leader=1)
    failed = active._append_write_event(
        "errorEvent", lambda: ControllerResult.of([ApiMessageAndVersion(unknown, 0)], None)
    )
    env.poll()
    fault = env.fatal_fault_handler.first_exception
    assert fault is not None, "the fatal fault handler was not called"
    assert "Unable to apply PartitionChangeRecord record, which was 1 of 1 record(s) in the batch" in str(
        fault
    )
    assert isinstance(fault.__cause__, RuntimeError)
    # A server's handler ends the process here. Under a test's handler the controller goes on as
    # Kafka 3.3's does: the write fails, the record never reaches the log, and the node renounces.
    with pytest.raises(Errors.UNKNOWN.exception_class):
        failed.result(timeout=0)
    assert unknown not in _records(env)
    assert not active.is_active()


@pytest.mark.unit
def test_standbys_replay_to_the_leaders_state():
    env = QuorumControllerTestEnv()
    active = env.elect(2)
    epoch = _register_and_unfence(env, active, 1)
    block = active.allocate_producer_ids({"broker_id": 1, "broker_epoch": epoch})
    active.incremental_alter_configs(_set("a", "1"))
    active.legacy_alter_configs({CLUSTER_DEFAULT: {"b": "2"}})
    env.poll()
    assert block.result(timeout=0)["producer_id_start"] == 0
    second = active.allocate_producer_ids({"broker_id": 1, "broker_epoch": epoch})
    env.poll()
    assert second.result(timeout=0) == {
        "throttle_time_ms": 0, "error_code": 0, "producer_id_start": 1000, "producer_id_len": 1000,
    }  # fmt: skip
    for controller in env.controllers.values():
        assert controller.configuration_control.config_properties(CLUSTER_DEFAULT) == {"b": "2"}
        assert controller.producer_id_control.next_producer_id() == 2000
        assert controller.cluster_control.unfenced(1)
        assert controller.last_committed_offset() == active.last_committed_offset()


@pytest.mark.unit
def test_a_stale_broker_epoch_is_refused():
    env = QuorumControllerTestEnv()
    active = env.elect(0)
    epoch = _register_and_unfence(env, active, 1)
    future = active.allocate_producer_ids({"broker_id": 1, "broker_epoch": epoch + 1})
    env.poll()
    with pytest.raises(Errors.STALE_BROKER_EPOCH.exception_class):
        future.result(timeout=0)
    assert active.is_active()  # the request's own error: no renounce


@pytest.mark.unit
def test_a_new_leader_fences_a_broker_that_never_heartbeats_to_it():
    """Activation schedules the fencing check: a broker that died with the old leader is fenced one
    session after the new leader took over, without ever having heartbeated to it (Kafka 3.3 waits
    for a first heartbeat to the new leader, so it would stay unfenced)."""
    env = QuorumControllerTestEnv(session_timeout_ms=9000)
    old = env.elect(0)
    epoch = _register_and_unfence(env, old, 1)
    new = env.elect(1)
    env.advance(9000)  # the session the new leader gave it at activation: valid up to 9 s
    assert new.cluster_control.unfenced(1)
    env.advance(1)
    assert not new.cluster_control.unfenced(1)
    assert FenceBrokerRecord(id=1, epoch=epoch) in _records(env)


@pytest.mark.unit
def test_a_controller_restarted_after_a_snapshot_loads_it_and_replays_only_the_tail():
    env = QuorumControllerTestEnv(snapshot_max_new_records=5)
    active = env.elect(0)
    for i in range(6):
        active.incremental_alter_configs(_set(f"k{i}", str(i)))
    env.poll()
    snapshot = env.shared.latest_snapshot()
    assert snapshot is not None
    assert env.shared.log_start_offset == snapshot.snapshot_id.offset
    for i in range(6, 8):
        active.incremental_alter_configs(_set(f"k{i}", str(i)))
    env.poll()
    env.stop(1)
    restarted = env.add_controller(1)
    env.poll()
    tail = [
        r
        for batch in env.shared.batches
        if batch.last_offset >= snapshot.snapshot_id.offset
        for r in batch.records
    ]
    snapshot_records = [r for batch in snapshot.batches for r in batch]
    assert restarted.records_replayed_from_snapshot == len(snapshot_records)
    assert restarted.records_replayed_from_log == len(tail)
    expected = {f"k{i}": str(i) for i in range(8)}
    assert restarted.configuration_control.config_properties(CLUSTER_DEFAULT) == expected
    assert restarted.feature_control.metadata_version() is MetadataVersion.IBP_3_3_IV3
    assert restarted.last_committed_offset() == active.last_committed_offset()
    assert any(isinstance(r.message, ConfigRecord) for r in snapshot_records)


@pytest.mark.unit
def test_the_fencing_event_fences_a_broker_that_stops_heartbeating():
    env = QuorumControllerTestEnv(session_timeout_ms=9000)
    active = env.elect(0)
    epoch1 = _register_and_unfence(env, active, 1)
    epoch2 = _register_and_unfence(env, active, 2)
    env.advance(5000)
    beat = active.process_broker_heartbeat(_heartbeat(2, epoch2, active.last_committed_offset()))
    env.poll()
    assert not beat.result(timeout=0).is_fenced
    env.advance(3999)  # broker 1's last heartbeat was 8.999 s ago: still in its session
    assert active.cluster_control.unfenced(1)
    env.advance(2)  # now 9.001 s: the session has expired (it is valid up to 9 s), broker 2's has not
    assert not active.cluster_control.unfenced(1)
    assert active.cluster_control.unfenced(2)
    assert FenceBrokerRecord(id=1, epoch=epoch1) in _records(env)
    for controller in env.controllers.values():
        assert not controller.cluster_control.unfenced(1)
    env.advance(5000)
    assert not active.cluster_control.unfenced(2)


@pytest.mark.unit
def test_brokers_whose_sessions_end_together_are_fenced_one_event_each():
    env = QuorumControllerTestEnv(session_timeout_ms=9000)
    active = env.elect(0)
    # Brokers 1, 2 and 3 are heard from at one MockTime instant.
    epochs = {broker_id: _register_and_unfence(env, active, broker_id) for broker_id in (1, 2, 3)}
    topic = {
        "topic": "foo", "num_partitions": -1, "replication_factor": -1,
        "replica_assignment": [{"partition_id": 0, "replicas": [1, 2, 3]}],
    }  # fmt: skip
    active.create_topics({"create_topic_requests": [topic], "timeout": 30_000, "validate_only": False})
    env.poll()
    foo = active.replication_control.get_topic_id("foo")
    env.advance(5000)
    beat = active.process_broker_heartbeat(_heartbeat(3, epochs[3], active.last_committed_offset()))
    env.poll()
    assert not beat.result(timeout=0).is_fenced
    written_before = len(env.shared.batches)
    env.advance(4001)  # 9.001 s after brokers 1 and 2 were last heard from: both sessions are over
    # Each write event is one batch. The first fences broker 1 alone, so it still takes broker 2,
    # whose session is just as over, as the new leader; the event it rescheduled fences broker 2.
    assert [[r.message for r in batch.records] for batch in env.shared.batches[written_before:]] == [
        [
            PartitionChangeRecord(topic_id=foo, partition_id=0, isr=[2, 3], leader=2),
            FenceBrokerRecord(id=1, epoch=epochs[1]),
        ],
        [
            PartitionChangeRecord(topic_id=foo, partition_id=0, isr=[3], leader=3),
            FenceBrokerRecord(id=2, epoch=epochs[2]),
        ],
    ]
    assert active.cluster_control.unfenced(3)
    assert env.queues[0].deferred_tags() == ["maybeFenceReplicas"]  # next: broker 3's session


@pytest.mark.unit
def test_a_leader_change_batch_counts_as_committed_on_a_standby_and_not_on_the_active():
    env = QuorumControllerTestEnv()
    active = env.elect(0)
    standby = env.controllers[1]
    committed = active.last_committed_offset()
    # What Raft hands the listener when an epoch starts: a control batch, no records, one offset.
    leader_change = Batch(committed + 1, 2, 0, committed + 1, [], is_control=True)
    for controller in (active, standby):
        controller._listener.handle_commit([leader_change])
    env.poll()
    assert standby.last_committed_offset() == committed + 1
    assert active.last_committed_offset() == committed
    # So the active controller still finds an in-memory snapshot at its last committed offset.
    env.elect(1)
    assert not active.is_active()
    assert env.fatal_fault_handler.first_exception is None


@pytest.mark.unit
def test_producer_ids_continue_across_a_failover():
    env = QuorumControllerTestEnv()
    active = env.elect(0)
    epoch = _register_and_unfence(env, active, 1)
    first = active.allocate_producer_ids({"broker_id": 1, "broker_epoch": epoch})
    env.poll()
    new = env.elect(1)
    second = new.allocate_producer_ids({"broker_id": 1, "broker_epoch": epoch})
    env.poll()
    assert first.result(timeout=0)["producer_id_start"] == 0
    assert second.result(timeout=0)["producer_id_start"] == 1000
    assert [r for r in _records(env) if isinstance(r, ProducerIdsRecord)][-1].next_producer_id == 2000


@pytest.mark.unit
def test_topics_through_the_controller_configs_found_by_id_and_gone_with_the_topic():
    env = QuorumControllerTestEnv()
    active = env.elect(0)
    for broker_id in (1, 2, 3):
        _register_and_unfence(env, active, broker_id)
    topic = {
        "topic": "foo", "num_partitions": 2, "replication_factor": 3, "replica_assignment": [],
        "config_entries": [{"config_name": "retention.ms", "config_value": "1000"}],
    }  # fmt: skip
    created = active.create_topics(
        {"create_topic_requests": [topic], "timeout": 30_000, "validate_only": False}
    )
    env.poll()
    assert [e["error_code"] for e in created.result(timeout=0)["topic_errors"]] == [0]
    foo = ConfigResource(ConfigResource.Type.TOPIC, "foo")
    bar = ConfigResource(ConfigResource.Type.TOPIC, "bar")
    altered = active.incremental_alter_configs(
        {foo: {"cleanup.policy": (OpType.APPEND, "compact")}, bar: {"retention.ms": (OpType.SET, "1")}}
    )
    ids = active.find_topic_ids(["foo"])
    env.poll()
    assert altered.result(timeout=0) == {
        foo: ApiError.NONE,
        bar: ApiError(Errors.UNKNOWN_TOPIC_OR_PARTITION, "The topic 'bar' does not exist."),
    }
    topic_id = ids.result(timeout=0)["foo"]
    for controller in env.controllers.values():
        assert controller.replication_control.get_topic_id("foo") == topic_id
        assert controller.configuration_control.config_properties(foo) == {
            "retention.ms": "1000", "cleanup.policy": "delete,compact",
        }  # fmt: skip
    deleted = active.delete_topics(["foo"])
    env.poll()
    deleted.result(timeout=0)
    for controller in env.controllers.values():
        assert controller.replication_control.get_topic_id("foo") is None
        assert controller.configuration_control.config_properties(foo) == {}


def _start_real_controller(data_dir, **args):
    config = RaftConfig.from_config({"controller.quorum.voters": "1@127.0.0.1:1"})
    manager = KafkaRaftManager(1, data_dir, config, MetadataRecordSerde(), SYSTEM, serve_own_listener=False)
    controller = QuorumController(
        1, CLUSTER_ID, SYSTEM, KafkaEventQueue(SYSTEM, "controller-1-"), manager.client,
        fatal_fault_handler=MockFaultHandler("fatalFaultHandler"), **args,
    )  # fmt: skip
    manager.startup()
    return manager, controller


@pytest.mark.integration
def test_over_real_raft_a_write_commits_and_a_restart_replays_it_from_disk(tmp_path):
    manager, controller = _start_real_controller(tmp_path, snapshot_max_new_records=3)
    try:
        wait_until(controller.is_active, 10, "the only voter's controller to become active")
        for i in range(4):
            future = controller.incremental_alter_configs(_set(f"k{i}", str(i)))
            assert future.result(timeout=5) == {CLUSTER_DEFAULT: ApiError.NONE}
        # The bootstrap record and three configs make four records: a snapshot is due.
        wait_until(lambda: manager.log.latest_snapshot_id() is not None, 5, "the controller's snapshot")
        # A broker's epoch is the offset its registration record will have in the real log (after
        # Raft's own LeaderChange record); the restarted controller reads the record's offset back.
        broker_epoch = controller.register_broker(_registration(1)).result(timeout=5).epoch
    finally:
        controller.close()
        manager.shutdown()
    manager, restarted = _start_real_controller(tmp_path)
    try:
        wait_until(restarted.is_active, 10, "the restarted controller to become active")
        described = restarted.describe_configs({CLUSTER_DEFAULT: []}).result(timeout=5)
        assert described[CLUSTER_DEFAULT].result == {f"k{i}": str(i) for i in range(4)}
        assert restarted.feature_control.metadata_version() is MetadataVersion.IBP_3_3_IV3
        # The log still starts at 0 (nothing has cleaned it below the snapshot), so Raft hands the
        # listener the log itself: the bootstrap record, the four configs and the registration, and no new bootstrap.
        assert (restarted.records_replayed_from_snapshot, restarted.records_replayed_from_log) == (0, 6)
        assert restarted.cluster_control.register_broker_record_offset(1) == broker_epoch
    finally:
        restarted.close()
        manager.shutdown()


@pytest.mark.unit
def test_the_snapshot_generator_writes_a_few_batches_per_call_then_freezes():
    shared = SharedLogData(MockTime())
    writer = LocalSnapshotWriter(shared, OffsetAndEpoch(0, 0), 0)
    sections = [
        Section("features", [["f1"]]),
        Section("empty", []),
        Section("configs", [["c1", "c2"], ["c3"]]),
    ]
    generator = SnapshotGenerator(writer, 2, sections)
    assert generator.generate_batches() == 0  # two batches written, more to come
    assert not writer.is_frozen()
    assert generator.generate_batches() is None  # the last batch, then the footer
    assert writer.is_frozen()
    assert shared.latest_snapshot().batches == (("f1",), ("c1", "c2"), ("c3",))
