"""ClusterControlManager: registration and its refusals (another cluster, a live id taken by
another process, an unsupported metadata.version), the broker epoch as the record's offset, the
replay of the broker records, epochs checked, and the heartbeat manager only while active (Kafka's
ClusterControlManagerTest)."""

from __future__ import annotations

import uuid

import pytest

from kafka_lite.common.errors import Errors
from kafka_lite.common.metadata import (
    BrokerRegistrationChangeRecord,
    FeatureLevelRecord,
    FenceBrokerRecord,
    RegisterBrokerRecord,
    UnfenceBrokerRecord,
    UnregisterBrokerRecord,
)
from kafka_lite.metadata.controller.cluster_control_manager import ClusterControlManager
from kafka_lite.metadata.metadata_version import METADATA_VERSION_FEATURE_NAME, MetadataVersion
from kafka_lite.metadata.placement import PlacementSpec, UsableBroker
from tests.metadata.controller.replication_control_test_context import (
    SESSION_TIMEOUT_MS,
    ReplicationControlTestContext,
    incarnation,
    registration_request,
)

pytestmark = pytest.mark.unit


def error_of(excinfo) -> Errors:
    return excinfo.value.error


@pytest.fixture
def ctx():
    return ReplicationControlTestContext()


def test_a_registration_is_one_fenced_record_whose_epoch_is_its_offset(ctx):
    ctx.next_offset = 100
    result = ctx.register_broker(1, rack="r1")
    (record,) = [r.message for r in result.records]
    assert result.response.epoch == 100 and record.broker_epoch == 100
    assert record.fenced and record.broker_id == 1 and record.incarnation_id == incarnation(1)
    assert record.rack == "r1" and [e.port for e in record.end_points] == [9093]
    assert [f.name for f in record.features] == [METADATA_VERSION_FEATURE_NAME]
    registration = ctx.cluster_control.registration(1)
    assert (registration.epoch, registration.fenced, registration.rack) == (100, True, "r1")
    assert ctx.cluster_control.register_broker_record_offset(1) == 100
    assert not ctx.cluster_control.unfenced(1) and not ctx.cluster_control.active(1)


def test_register_broker_record_version_follows_the_metadata_version(ctx):
    assert ctx.register_broker(1).records[0].version == 1  # 3.3-IV3 knows InControlledShutdown
    ctx.replay_one(
        FeatureLevelRecord(
            name=METADATA_VERSION_FEATURE_NAME, feature_level=MetadataVersion.IBP_3_3_IV2.feature_level
        )
    )
    assert ctx.register_broker(2).records[0].version == 0


def test_a_registration_from_another_cluster_is_refused_and_writes_nothing(ctx):
    with pytest.raises(Errors.INCONSISTENT_CLUSTER_ID.exception_class) as e:
        ctx.register_broker(1, cluster_id="another-cluster")
    assert "Expected cluster ID" in str(e.value)
    assert ctx.replayed == [] and ctx.cluster_control.registration(1) is None


def test_a_broker_that_cannot_read_the_finalized_metadata_version_is_refused(ctx):
    old = {"name": METADATA_VERSION_FEATURE_NAME, "min_supported_version": 1, "max_supported_version": 4}
    with pytest.raises(Errors.UNSUPPORTED_VERSION.exception_class) as e:
        ctx.register_broker(1, features=[old])
    assert "does not support version 7 of metadata.version" in str(e.value)
    # Naming no range means "only the first KRaft level": refused as well.
    with pytest.raises(Errors.UNSUPPORTED_VERSION.exception_class):
        ctx.register_broker(1, features=[])
    assert ctx.replayed == []


def test_a_live_broker_id_cannot_be_taken_by_another_process(ctx):
    ctx.register_broker(1)
    ctx.unfence_brokers(1)
    with pytest.raises(Errors.DUPLICATE_BROKER_REGISTRATION.exception_class):
        ctx.register_broker(1, incarnation_id=uuid.UUID(int=99))
    # The same process registering again (after a lost reply, say) is a re-registration.
    ctx.register_broker(1)
    # Once the old session has expired, a new process may take the id: fenced, with a new epoch.
    ctx.time.sleep(SESSION_TIMEOUT_MS + 1)
    ctx.register_broker(1, incarnation_id=uuid.UUID(int=99))
    registration = ctx.cluster_control.registration(1)
    assert registration.incarnation_id == uuid.UUID(int=99) and registration.fenced
    assert registration.epoch == ctx.next_offset - 1


def test_check_broker_epoch_refuses_an_unknown_broker_and_an_older_registration(ctx):
    ctx.register_broker(1)
    ctx.cluster_control.check_broker_epoch(1, ctx.epoch(1))
    with pytest.raises(Errors.STALE_BROKER_EPOCH.exception_class) as e:
        ctx.cluster_control.check_broker_epoch(1, ctx.epoch(1) - 1)
    assert f"Expected broker epoch {ctx.epoch(1)}" in str(e.value)
    with pytest.raises(Errors.STALE_BROKER_EPOCH.exception_class):
        ctx.cluster_control.check_broker_epoch(2, 0)


def test_replay_of_fence_unfence_and_unregister(ctx):
    ctx.register_broker(1)
    cluster = ctx.cluster_control
    ctx.replay_one(UnfenceBrokerRecord(id=1, epoch=0))
    assert cluster.unfenced(1) and cluster.heartbeat_manager().is_broker_unfenced(1)
    ctx.replay_one(FenceBrokerRecord(id=1, epoch=0))
    assert not cluster.unfenced(1) and not cluster.heartbeat_manager().is_broker_unfenced(1)
    # A record for another registration of the broker is a bug in the log: replay stops there.
    with pytest.raises(RuntimeError, match="no broker registration with that epoch found"):
        ctx.replay_one(UnfenceBrokerRecord(id=1, epoch=7))
    with pytest.raises(RuntimeError, match="no broker registration found for that id"):
        ctx.replay_one(FenceBrokerRecord(id=2, epoch=0))
    ctx.replay_one(UnregisterBrokerRecord(broker_id=1, broker_epoch=0))
    assert cluster.registration(1) is None and cluster.register_broker_record_offset(1) is None
    assert not cluster.heartbeat_manager().has_valid_session(1)


def test_replay_of_a_broker_registration_change_record(ctx):
    ctx.register_broker(1)
    ctx.replay_one(BrokerRegistrationChangeRecord(broker_id=1, broker_epoch=0, fenced=-1))
    assert ctx.cluster_control.active(1)
    ctx.replay_one(
        BrokerRegistrationChangeRecord(broker_id=1, broker_epoch=0, in_controlled_shutdown=1), version=1
    )
    assert ctx.cluster_control.unfenced(1) and ctx.cluster_control.in_controlled_shutdown(1)
    assert not ctx.cluster_control.active(1)
    ctx.replay_one(BrokerRegistrationChangeRecord(broker_id=1, broker_epoch=0, fenced=1))
    assert not ctx.cluster_control.unfenced(1)
    with pytest.raises(RuntimeError, match="unknown value for fenced field"):
        ctx.cluster_control.replay(BrokerRegistrationChangeRecord(broker_id=1, broker_epoch=0, fenced=5))


def test_the_heartbeat_manager_exists_only_while_active(ctx):
    ctx.register_brokers(1, 2)
    ctx.unfence_brokers(1)
    cluster = ctx.cluster_control
    cluster.deactivate()
    with pytest.raises(RuntimeError, match="not active"):
        cluster.heartbeat_manager()
    with pytest.raises(RuntimeError, match="not active"):
        cluster.register_broker(registration_request(3), 10, ctx.feature_control.finalized_features())
    # A standby still replays registrations.
    ctx.replay_one(
        RegisterBrokerRecord(broker_id=3, incarnation_id=incarnation(3), broker_epoch=ctx.next_offset)
    )
    assert cluster.registration(3) is not None
    # Becoming active starts every broker with a fresh session, fenced as the log says.
    ctx.time.sleep(SESSION_TIMEOUT_MS * 5)
    cluster.activate()
    manager = cluster.heartbeat_manager()
    assert manager.has_valid_session(1) and not manager.has_valid_session(2)
    assert manager.find_one_stale_broker() is None


def test_usable_brokers_and_placement(ctx):
    ctx.register_broker(1, rack="a")
    ctx.register_broker(2, rack="b")
    ctx.register_broker(3, rack="a")
    ctx.unfence_brokers(1, 2)
    assert set(ctx.cluster_control.usable_brokers()) == {
        UsableBroker(1, "a", False),
        UsableBroker(2, "b", False),
        UsableBroker(3, "a", True),
    }
    placements = ctx.cluster_control.replica_placer().place(
        PlacementSpec(0, 4, 3), ctx.replication_control.cluster_describer
    )
    for replicas in placements:
        assert sorted(replicas) == [1, 2, 3] and replicas[0] != 3  # a fenced broker never leads


def test_a_reverted_snapshot_forgets_a_registration(ctx):
    ctx.register_broker(1)
    ctx.registry.get_or_create_snapshot(ctx.next_offset - 1)
    ctx.register_broker(2)
    ctx.replay_one(UnfenceBrokerRecord(id=1, epoch=0))
    ctx.registry.revert_to_snapshot(0)
    assert ctx.cluster_control.registration(2) is None
    assert ctx.cluster_control.registration(1).fenced


def test_sessions_default_to_broker_session_timeout_ms():
    from kafka_lite.common.time import MockTime
    from kafka_lite.metadata.timeline import SnapshotRegistry

    cluster = ClusterControlManager(MockTime(), SnapshotRegistry())
    cluster.activate()
    assert cluster.heartbeat_manager().session_timeout_ns == 9000 * 1_000_000
