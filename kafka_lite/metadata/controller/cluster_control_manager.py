"""The cluster's brokers as the metadata log holds them: who is registered, with which epoch,
where to reach them, and who is fenced.

Mirrors: org.apache.kafka.controller.ClusterControlManager
         (metadata/src/main/java/org/apache/kafka/controller/ClusterControlManager.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft); chapter 7, 7.1.1-7.1.2 has brokers register as ephemeral
         znodes under /brokers/ids, which a RegisterBrokerRecord replaces
Differs: fencing is replayed from FenceBrokerRecord/UnfenceBrokerRecord, which kafka_lite writes at
         every metadata.version (3.3 writes BrokerRegistrationChangeRecord from 3.3-IV0; it is
         replayed here too); a broker in controlled shutdown is known from the heartbeat manager's
         soft state, not from a record (``in_controlled_shutdown``); no metrics and no "ready
         brokers" future.

Hard state, the part in the log, is the registrations: a ``BrokerRegistration`` per broker id in a
timeline map, replaced by each RegisterBrokerRecord and changed by each Fence/Unfence record. The
broker epoch is the offset of the broker's RegisterBrokerRecord, so it grows with every
registration and every request a broker sends carries it: a request from an older registration (a
process that was replaced) is refused with STALE_BROKER_EPOCH.

Soft state, the part not in the log, is the ``BrokerHeartbeatManager``, which exists only while
this controller is active (``activate``/``deactivate``).
"""

from __future__ import annotations

import logging
import random
from collections.abc import Iterator
from typing import Any

from kafka_lite.common.errors import Errors
from kafka_lite.common.metadata import (
    BrokerEndpoint,
    BrokerFeature,
    BrokerRegistrationChangeRecord,
    FenceBrokerRecord,
    RegisterBrokerRecord,
    UnfenceBrokerRecord,
    UnregisterBrokerRecord,
)
from kafka_lite.common.metadata.api_message_and_version import ApiMessageAndVersion
from kafka_lite.common.time import Time
from kafka_lite.metadata.broker_registration import BrokerRegistration
from kafka_lite.metadata.broker_registration_reply import BrokerRegistrationReply
from kafka_lite.metadata.controller.broker_heartbeat_manager import (
    DEFAULT_SESSION_TIMEOUT_MS,
    BrokerHeartbeatManager,
)
from kafka_lite.metadata.controller.controller_result import ControllerResult
from kafka_lite.metadata.controller.feature_control_manager import (
    FeatureControlManager,
    FinalizedControllerFeatures,
)
from kafka_lite.metadata.metadata_version import (
    METADATA_VERSION_FEATURE_NAME,
    MINIMUM_KRAFT_VERSION,
    MetadataVersion,
)
from kafka_lite.metadata.placement import ReplicaPlacer, StripedReplicaPlacer, UsableBroker
from kafka_lite.metadata.timeline import SnapshotRegistry, TimelineHashMap
from kafka_lite.metadata.version_range import VersionRange

log = logging.getLogger(__name__)

# BrokerRegistrationChangeRecord's values (Kafka's BrokerRegistrationFencingChange and
# BrokerRegistrationInControlledShutdownChange): what each number asks of the registration.
FENCING_CHANGE = {0: None, 1: True, -1: False}  # NONE, FENCE, UNFENCE
IN_CONTROLLED_SHUTDOWN_CHANGE = {0: None, 1: True}  # NONE, IN_CONTROLLED_SHUTDOWN


def register_broker_record_version(metadata_version: MetadataVersion) -> int:
    """RegisterBrokerRecord v1 (with InControlledShutdown) from 3.3-IV3, v0 before."""
    return 1 if metadata_version.is_at_least(MetadataVersion.IBP_3_3_IV3) else 0


class ClusterControlManager:
    def __init__(
        self,
        time: Time,
        snapshot_registry: SnapshotRegistry,
        session_timeout_ms: int = DEFAULT_SESSION_TIMEOUT_MS,
        replica_placer: ReplicaPlacer | None = None,
        feature_control: FeatureControlManager | None = None,
        cluster_id: str = "",
    ) -> None:
        self.time = time
        self.session_timeout_ms = session_timeout_ms
        self._replica_placer = replica_placer or StripedReplicaPlacer(random.Random())
        self.feature_control = feature_control or FeatureControlManager(snapshot_registry)
        self.cluster_id = cluster_id
        self._broker_registrations: TimelineHashMap[int, BrokerRegistration] = TimelineHashMap(
            snapshot_registry
        )
        # The offset of each broker's RegisterBrokerRecord: a broker is unfenced only once its
        # heartbeat says it has replayed the log up to there, so it knows at least what the
        # controller knew when it registered.
        self._register_broker_record_offsets: TimelineHashMap[int, int] = TimelineHashMap(snapshot_registry)
        self._heartbeat_manager: BrokerHeartbeatManager | None = None

    def replica_placer(self) -> ReplicaPlacer:
        return self._replica_placer

    # --- active or standby ---------------------------------------------------------------------------

    def activate(self) -> None:
        """Become active: every registered broker starts a fresh session, as of now."""
        self._heartbeat_manager = BrokerHeartbeatManager(self.time, self.session_timeout_ms)
        for registration in self._broker_registrations.values():
            self._heartbeat_manager.touch(registration.id, registration.fenced, -1)

    def deactivate(self) -> None:
        self._heartbeat_manager = None

    def heartbeat_manager(self) -> BrokerHeartbeatManager:
        if self._heartbeat_manager is None:
            raise RuntimeError("ClusterControlManager is not active.")
        return self._heartbeat_manager

    # --- reads ---------------------------------------------------------------------------------------

    def broker_registrations(self) -> TimelineHashMap[int, BrokerRegistration]:
        return self._broker_registrations

    def registration(self, broker_id: int) -> BrokerRegistration | None:
        return self._broker_registrations.get(broker_id)

    def register_broker_record_offset(self, broker_id: int) -> int | None:
        return self._register_broker_record_offsets.get(broker_id)

    def unfenced(self, broker_id: int) -> bool:
        """True if the broker is registered and not fenced."""
        registration = self._broker_registrations.get(broker_id)
        return registration is not None and not registration.fenced

    def in_controlled_shutdown(self, broker_id: int) -> bool:
        """True if the broker is shutting down: by its registration (a v1 RegisterBrokerRecord or a
        BrokerRegistrationChangeRecord said so) or, on the active controller, by its heartbeats."""
        registration = self._broker_registrations.get(broker_id)
        if registration is None:
            return False
        if registration.in_controlled_shutdown:
            return True
        heartbeat = self._heartbeat_manager.brokers.get(broker_id) if self._heartbeat_manager else None
        return heartbeat is not None and heartbeat.shutting_down()

    def active(self, broker_id: int) -> bool:
        """True if the broker may lead or join an ISR: registered, unfenced, not shutting down."""
        return self.unfenced(broker_id) and not self.in_controlled_shutdown(broker_id)

    def usable_brokers(self) -> Iterator[UsableBroker]:
        return self.heartbeat_manager().usable_brokers(
            lambda broker_id: self._broker_registrations.get(broker_id).rack
        )

    def check_broker_epoch(self, broker_id: int, broker_epoch: int) -> None:
        """Refuse a request from a broker not registered, or from an older registration of it."""
        registration = self._broker_registrations.get(broker_id)
        if registration is None:
            raise Errors.STALE_BROKER_EPOCH.exception(
                f"No broker registration found for broker id {broker_id}"
            )
        if registration.epoch != broker_epoch:
            raise Errors.STALE_BROKER_EPOCH.exception(
                f"Expected broker epoch {registration.epoch}, but got broker epoch {broker_epoch}"
            )

    # --- the operation -------------------------------------------------------------------------------

    def register_broker(
        self, request: dict[str, Any], broker_epoch: int, finalized_features: FinalizedControllerFeatures
    ) -> ControllerResult[BrokerRegistrationReply]:
        """A BrokerRegistration request's record: the broker, registered fenced, under
        ``broker_epoch`` (the offset the record will have, which the controller passes in)."""
        if self._heartbeat_manager is None:
            raise RuntimeError("ClusterControlManager is not active.")
        if request["cluster_id"] != self.cluster_id:
            raise Errors.INCONSISTENT_CLUSTER_ID.exception(
                f"Expected cluster ID {self.cluster_id}, but got cluster ID {request['cluster_id']}"
            )
        broker_id = request["broker_id"]
        existing = self._broker_registrations.get(broker_id)
        if existing is not None:
            if self._heartbeat_manager.has_valid_session(broker_id):
                # The id is live: a second process under it is a misconfiguration, not a restart.
                if existing.incarnation_id != request["incarnation_id"]:
                    raise Errors.DUPLICATE_BROKER_REGISTRATION.exception(
                        "Another broker is registered with that broker id."
                    )
            elif existing.incarnation_id != request["incarnation_id"]:
                # A new process under a dead one's id: forget the old one's session.
                self._heartbeat_manager.remove(broker_id)
        record = RegisterBrokerRecord(
            broker_id=broker_id,
            incarnation_id=request["incarnation_id"],
            broker_epoch=broker_epoch,
            rack=request.get("rack"),
            end_points=[
                BrokerEndpoint(
                    name=listener["name"],
                    host=listener["host"],
                    port=listener["port"],
                    security_protocol=listener["security_protocol"],
                )
                for listener in request["listeners"]
            ],
        )
        features = list(request["features"])
        if not any(feature["name"] == METADATA_VERSION_FEATURE_NAME for feature in features):
            # A broker that names no metadata.version range supports only the first KRaft level.
            level = MINIMUM_KRAFT_VERSION.feature_level
            features.append(
                {
                    "name": METADATA_VERSION_FEATURE_NAME,
                    "min_supported_version": level,
                    "max_supported_version": level,
                }
            )
        record.features = [
            self._process_registration_feature(broker_id, finalized_features, f) for f in features
        ]
        self._heartbeat_manager.register(broker_id, record.fenced)
        version = register_broker_record_version(self.feature_control.metadata_version())
        return ControllerResult.of(
            [ApiMessageAndVersion(record, version)], BrokerRegistrationReply(broker_epoch)
        )

    def _process_registration_feature(
        self, broker_id: int, finalized_features: FinalizedControllerFeatures, feature: dict[str, Any]
    ) -> BrokerFeature:
        """The broker must support every finalized level: a broker that cannot read the log's
        records (an older metadata.version range) must not join."""
        finalized = finalized_features.get(feature["name"])
        low, high = feature["min_supported_version"], feature["max_supported_version"]
        if finalized is not None:
            if not VersionRange(low, high).contains(finalized):
                raise Errors.UNSUPPORTED_VERSION.exception(
                    f"Unable to register because the broker does not support version {finalized} of "
                    f"{feature['name']}. It wants a version between {low} and {high}, inclusive."
                )
        else:
            log.warning(
                "Broker %d registered with feature %s that is unknown to the controller",
                broker_id,
                feature["name"],
            )
        return BrokerFeature(name=feature["name"], min_supported_version=low, max_supported_version=high)

    # --- replay --------------------------------------------------------------------------------------

    def replay(self, record: Any, offset: int | None = None) -> None:
        if isinstance(record, RegisterBrokerRecord):
            self._replay_register(record, offset)
        elif isinstance(record, UnregisterBrokerRecord):
            self._replay_unregister(record)
        elif isinstance(record, FenceBrokerRecord):
            self._replay_registration_change(record, record.id, record.epoch, True, None)
        elif isinstance(record, UnfenceBrokerRecord):
            self._replay_registration_change(record, record.id, record.epoch, False, None)
        elif isinstance(record, BrokerRegistrationChangeRecord):
            if record.fenced not in FENCING_CHANGE:
                raise RuntimeError(
                    f"Unable to replay {record}: unknown value for fenced field: {record.fenced}"
                )
            if record.in_controlled_shutdown not in IN_CONTROLLED_SHUTDOWN_CHANGE:
                raise RuntimeError(
                    f"Unable to replay {record}: unknown value for inControlledShutdown field: "
                    f"{record.in_controlled_shutdown}"
                )
            self._replay_registration_change(
                record,
                record.broker_id,
                record.broker_epoch,
                FENCING_CHANGE[record.fenced],
                IN_CONTROLLED_SHUTDOWN_CHANGE[record.in_controlled_shutdown],
            )
        else:
            raise ValueError(f"ClusterControlManager cannot replay {type(record).__name__}")

    def _replay_register(self, record: RegisterBrokerRecord, offset: int | None) -> None:
        # The broker epoch is the record's offset (the controller passes its next write offset), so
        # a replay that is not told the offset reads it from the epoch.
        broker_id = record.broker_id
        self._register_broker_record_offsets.put(broker_id, record.broker_epoch if offset is None else offset)
        prev = self._broker_registrations.put(broker_id, BrokerRegistration.from_record(record))
        if self._heartbeat_manager is not None:
            if prev is not None:
                self._heartbeat_manager.remove(broker_id)
            self._heartbeat_manager.register(broker_id, record.fenced)
        if prev is None:
            log.info("Registered new broker: %r", record)
        elif prev.incarnation_id == record.incarnation_id:
            log.info("Re-registered broker incarnation: %r", record)
        else:
            log.info("Re-registered broker id %d: %r", broker_id, record)

    def _replay_unregister(self, record: UnregisterBrokerRecord) -> None:
        broker_id = record.broker_id
        registration = self._broker_registrations.get(broker_id)
        if registration is None:
            raise RuntimeError(f"Unable to replay {record}: no broker registration found for that id")
        if registration.epoch != record.broker_epoch:
            raise RuntimeError(f"Unable to replay {record}: no broker registration with that epoch found")
        self._register_broker_record_offsets.remove(broker_id)
        if self._heartbeat_manager is not None:
            self._heartbeat_manager.remove(broker_id)
        self._broker_registrations.remove(broker_id)
        log.info("Unregistered broker: %r", record)

    def _replay_registration_change(
        self,
        record: Any,
        broker_id: int,
        broker_epoch: int,
        fenced: bool | None,
        in_controlled_shutdown: bool | None,
    ) -> None:
        current = self._broker_registrations.get(broker_id)
        if current is None:
            raise RuntimeError(f"Unable to replay {record}: no broker registration found for that id")
        if current.epoch != broker_epoch:
            raise RuntimeError(f"Unable to replay {record}: no broker registration with that epoch found")
        changes = {}
        if fenced is not None:
            changes["fenced"] = fenced
        if in_controlled_shutdown is not None:
            changes["in_controlled_shutdown"] = in_controlled_shutdown
        updated = current.clone_with(**changes)
        if updated != current:
            self._broker_registrations.put(broker_id, updated)
        else:
            log.info("Ignoring no-op registration change for %r", current)
        if self._heartbeat_manager is not None:
            self._heartbeat_manager.register(broker_id, updated.fenced)
