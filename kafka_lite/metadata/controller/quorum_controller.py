"""The quorum controller: one event thread that turns requests into metadata records in the Raft log.

Mirrors: org.apache.kafka.controller.QuorumController (metadata/src/main/java/org/apache/kafka/
         controller/QuorumController.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft); chapter 7 reads the ZooKeeper controller it replaces
Differs: no leader rebalancing, NoOpRecord heartbeats, ACLs, quotas or reassignments; activation
         also schedules the fencing check (3.3 waits for the first heartbeat); the snapshot is
         written from a MetadataImage of the committed records; a standby counts Raft's
         LeaderChange batches as committed, as Kafka 3.6 does (``_handle_raft_control_batch``).
Labs:    lab 19, stage 3 (``_reschedule_maybe_fence_stale_brokers``)

In ZooKeeper mode the controller (chapter 7) keeps the cluster's state in ZooKeeper and a cache, and
pushes changes to the brokers. In KRaft the state *is* a log: the active controller is the Raft
leader of ``__cluster_metadata``, every change is a record it appends, and the standbys and the
brokers replay the same records. Three ideas carry the whole class:

* **One thread.** Requests, Raft callbacks and timers all become events on one queue, so no
  manager needs a lock and every event sees the effect of the one before.
* **Write, replay, then wait for the commit.** A write event asks a control manager for a
  ``ControllerResult`` (records and an answer; the manager changes nothing), replays the records
  into the managers at once (so the next event sees them), hands them to Raft, and parks the
  request's future in the purgatory until ``handle_commit`` reaches their offset. Answering before
  the commit would promise something a new leader might never have seen.
* **Revert on resignation.** The managers' state is timeline structures of one ``SnapshotRegistry``,
  with an in-memory snapshot at every appended offset. When this node stops leading, it reverts to
  the snapshot of the last committed offset, dropping what it wrote that may never commit, and fails
  every parked future with NOT_CONTROLLER, so the client retries against the new leader.

    request ──► ControllerWriteEvent ──► manager.op() ──► replay ──► raft.schedule_atomic_append
                                                                            │
    future ◄── purgatory.complete_up_to(offset) ◄── handle_commit ◄─────────┘

What cannot be answered with an error goes to the fatal fault handler the server passes in: a
record the active controller cannot apply, a failed claim or renounce, a snapshot offered to the
active controller. Its memory may then no longer match its log, and a real server's handler ends
the process (``ProcessExitingFaultHandler``), as Kafka 3.3's does.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Collection, Mapping
from concurrent.futures import Future
from typing import Any, Generic, TypeVar

from kafka_lite.common.errors import ApiException, Errors
from kafka_lite.common.metadata import (
    AccessControlEntryRecord,
    BrokerRegistrationChangeRecord,
    ConfigRecord,
    FeatureLevelRecord,
    FenceBrokerRecord,
    NoOpRecord,
    PartitionChangeRecord,
    PartitionRecord,
    ProducerIdsRecord,
    RegisterBrokerRecord,
    RemoveAccessControlEntryRecord,
    RemoveTopicRecord,
    TopicRecord,
    UnfenceBrokerRecord,
    UnregisterBrokerRecord,
)
from kafka_lite.common.metadata.api_message_and_version import ApiMessageAndVersion
from kafka_lite.common.metadata.metadata_record_serde import MetadataRecordSerde
from kafka_lite.common.security.auth.acl import AclBinding, AclBindingFilter
from kafka_lite.common.time import Time
from kafka_lite.metadata.authorizer.standard_authorizer import StandardAuthorizer
from kafka_lite.metadata.config_resource import ConfigResource, ConfigResourceType
from kafka_lite.metadata.controller.acl_control_manager import AclControlManager
from kafka_lite.metadata.controller.cluster_control_manager import ClusterControlManager
from kafka_lite.metadata.controller.configuration_control_manager import ConfigurationControlManager, OpType
from kafka_lite.metadata.controller.controller_purgatory import ControllerPurgatory
from kafka_lite.metadata.controller.controller_result import ControllerResult, ControllerResultAndOffset
from kafka_lite.metadata.controller.feature_control_manager import (
    FeatureControlManager,
)
from kafka_lite.metadata.controller.producer_id_control_manager import ProducerIdControlManager
from kafka_lite.metadata.controller.quorum_features import QuorumFeatures
from kafka_lite.metadata.controller.replication_control_manager import ReplicationControlManager
from kafka_lite.metadata.controller.snapshot_generator import (
    MAX_BATCHES_PER_GENERATE_CALL,
    CommittedImage,
    SnapshotGenerator,
    sections,
)
from kafka_lite.metadata.fault_handler import FaultHandler
from kafka_lite.metadata.metadata_version import (
    METADATA_VERSION_FEATURE_NAME,
    MINIMUM_KRAFT_VERSION,
    MetadataVersion,
)
from kafka_lite.metadata.timeline import SnapshotRegistry
from kafka_lite.queue.event_queue import (
    EarliestDeadlineFunction,
    Event,
    EventQueue,
    RejectedExecutionException,
)
from kafka_lite.raft.offset_and_epoch import OffsetAndEpoch
from kafka_lite.raft.raft_client import Batch, LeaderAndEpoch, Listener, RaftClient

log = logging.getLogger(__name__)

T = TypeVar("T")

LONG_MAX = 2**63 - 1
NS_PER_MINUTE = 60 * 1_000_000_000
MAX_RECORDS_PER_BATCH = 10_000
# metadata.log.max.record.bytes.between.snapshots, Kafka's default.
DEFAULT_SNAPSHOT_MAX_NEW_RECORD_BYTES = 20 * 1024 * 1024

MAYBE_FENCE_REPLICAS = "maybeFenceReplicas"
GENERATE_SNAPSHOT = "generateSnapshot"


class ControllerWriteOperation(Generic[T]):
    """What a write event runs: the records and answer, and (optionally) what to do once the
    records have an offset. A plain function is wrapped in one."""

    def __init__(self, generate: Callable[[], ControllerResult[T]] | None = None) -> None:
        self._generate = generate

    def generate_records_and_result(self) -> ControllerResult[T]:
        assert self._generate is not None
        return self._generate()

    def process_batch_end_offset(self, offset: int) -> None:
        pass


class QuorumController:
    def __init__(
        self,
        node_id: int,
        cluster_id: str,
        time: Time,
        queue: EventQueue,
        raft_client: RaftClient,
        *,
        fatal_fault_handler: FaultHandler,
        session_timeout_ms: int = 9000,
        default_replication_factor: int = 1,
        default_num_partitions: int = 1,
        replica_placer: Any = None,
        quorum_features: QuorumFeatures | None = None,
        bootstrap_metadata_version: MetadataVersion = MetadataVersion.IBP_3_3_IV3,
        snapshot_max_new_record_bytes: int = DEFAULT_SNAPSHOT_MAX_NEW_RECORD_BYTES,
        snapshot_max_new_records: int = LONG_MAX,
        max_records_per_batch: int = MAX_RECORDS_PER_BATCH,
        authorizer: StandardAuthorizer | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self._node_id = node_id
        self._cluster_id = cluster_id
        self._time = time
        self._queue = queue
        self._raft_client = raft_client
        # Kafka's fatalFaultHandler: no default, so that no server runs on a test's handler.
        self._fatal_fault_handler = fatal_fault_handler
        self._max_records_per_batch = max_records_per_batch
        self._bootstrap_metadata_version = bootstrap_metadata_version
        self.snapshot_registry = SnapshotRegistry()
        self.purgatory = ControllerPurgatory()
        # A log with no FeatureLevelRecord is read as the first KRaft level, as Kafka 3.3 reads it.
        self.feature_control = FeatureControlManager(
            self.snapshot_registry, quorum_features or QuorumFeatures(node_id), MINIMUM_KRAFT_VERSION
        )
        self.cluster_control = ClusterControlManager(
            time, self.snapshot_registry, session_timeout_ms, replica_placer, self.feature_control, cluster_id
        )
        self.configuration_control = ConfigurationControlManager(
            self.snapshot_registry, existence_checker=self._check_config_resource_exists
        )
        self.replication_control = ReplicationControlManager(
            self.snapshot_registry, default_replication_factor, default_num_partitions,
            self.configuration_control, self.cluster_control,
        )  # fmt: skip
        self.producer_id_control = ProducerIdControlManager(self.cluster_control, self.snapshot_registry)
        self.acl_control = AclControlManager(self.snapshot_registry, authorizer, rng)
        self._authorizer = authorizer
        # The authorizer answers once this node has replayed the log as far as it was committed when
        # it looked (3.3's needToCompleteAuthorizerLoad): before, it would miss ACLs (a DENY above all).
        self._need_to_complete_authorizer_load = authorizer is not None

        # The epoch this node leads in, or -1 while it is a standby.
        self._cur_claim_epoch = -1
        # The offset of the last record this node appended (or, as a standby, -1).
        self._write_offset = -1
        self._last_committed_offset = -1
        self._last_committed_epoch = -1
        self._last_committed_timestamp = -1
        # What a snapshot is written from: the committed records as an image.
        self._image_records = CommittedImage()
        self._snapshot_max_new_record_bytes = snapshot_max_new_record_bytes
        self._snapshot_max_new_records = snapshot_max_new_records
        self._new_bytes_since_last_snapshot = 0
        self._new_records_since_last_snapshot = 0
        self._snapshot_generator: SnapshotGenerator | None = None
        self._serde = MetadataRecordSerde()
        # How many records were replayed from the log and from snapshots: an empty log (neither)
        # is what makes a new leader write the bootstrap records.
        self.records_replayed_from_log = 0
        self.records_replayed_from_snapshot = 0
        self._listener = QuorumMetaLogListener(self)
        raft_client.register(self._listener)

    # ======================================================================================================
    # The write path
    # ======================================================================================================

    # --8<-- [start:write_event]
    class ControllerWriteEvent(Event, Generic[T]):
        def __init__(self, controller: QuorumController, name: str, op: ControllerWriteOperation[T]) -> None:
            self.controller = controller
            self.name = name
            self.op = op
            self.future: Future = Future()
            self.result_and_offset: ControllerResultAndOffset[T] | None = None
            self.started = False

        def run(self) -> None:
            controller = self.controller
            controller_epoch = controller._cur_claim_epoch
            # 1. Only the active controller writes: a standby's records would not be in its epoch.
            if not controller.is_active():
                raise controller._new_not_controller_exception()
            self.started = True
            # 2. The manager decides, from the latest (possibly uncommitted) state, and changes nothing.
            result = self.op.generate_records_and_result()
            if not result.records:
                # A read after all. It read uncommitted state if writes are still waiting, so it
                # waits behind the last of them; with none waiting it may answer now.
                self.op.process_batch_end_offset(controller._write_offset)
                offset = controller.purgatory.highest_pending_offset()
                self.result_and_offset = ControllerResultAndOffset(
                    -1 if offset is None else offset, [], result.response
                )
                if offset is None:
                    self.complete(None)
            else:
                # 3. Replay and append, batch by batch: replay first, so a record the managers
                #    cannot apply is never written; then an in-memory snapshot at the batch's last
                #    offset, the point a later resignation may revert to.
                offset = controller._append_records(controller_epoch, result)
                self.op.process_batch_end_offset(offset)
                controller._write_offset = offset
                self.result_and_offset = ControllerResultAndOffset(offset, result.records, result.response)
            # 4. Park the future until handle_commit reaches the offset.
            if not self.future.done():
                controller.purgatory.add(self.result_and_offset.offset, self)

        def handle_exception(self, exc: BaseException) -> None:
            self.complete(exc)

        def complete(self, exception: BaseException | None) -> None:
            if self.future.done():
                return
            if exception is None:
                self.future.set_result(self.result_and_offset.response)
            else:
                self.future.set_exception(
                    self.controller._handle_event_exception(self.name, self.started, exception)
                )

        def __repr__(self) -> str:
            return f"{self.name}({id(self):x})"

    def _append_records(self, epoch: int, result: ControllerResult) -> int:
        """Replay and append the result's records: one batch if atomic, else batches of at most
        ``max_records_per_batch``. The last offset appended."""
        records = result.records
        if result.is_atomic:
            if len(records) > self._max_records_per_batch:
                raise RuntimeError(
                    f"Attempted to atomically commit {len(records)} records, but maxRecordsPerBatch is "
                    f"{self._max_records_per_batch}"
                )
            batches = [records]
        else:
            batches = [
                records[i : i + self._max_records_per_batch]
                for i in range(0, len(records), self._max_records_per_batch)
            ]
        offset = self._write_offset
        for batch in batches:
            for index, message in enumerate(batch, 1):
                try:
                    self._replay(message.message, None, offset + len(batch))
                except Exception as exc:
                    # The managers hold part of the batch and cannot take the rest: their memory
                    # matches no log, and no reply repairs that. Fatal, as in Kafka 3.3 (a server's
                    # handler ends the process; a test's records the fault, and the event renounces).
                    raise self._fatal_fault_handler.handle_fault(
                        f"Unable to apply {type(message.message).__name__} record, which was {index} of "
                        f"{len(batch)} record(s) in the batch following last write offset {offset}.",
                        exc,
                    ) from exc
            try:
                offset = self._raft_client.schedule_atomic_append(epoch, batch)
            except ApiException as exc:
                # An ApiException from Raft is not the request's fault: make it the unexpected
                # failure it is, which renounces and reverts.
                raise RuntimeError(f"Raft refused the append: {exc}") from exc
            self.snapshot_registry.get_or_create_snapshot(offset)
        return offset

    # --8<-- [end:write_event]

    class ControllerReadEvent(Event, Generic[T]):
        """A read of the committed state (as of the last committed offset): answered at once."""

        def __init__(self, controller: QuorumController, name: str, handler: Callable[[], T]) -> None:
            self.controller = controller
            self.name = name
            self.handler = handler
            self.future: Future = Future()
            self.started = False

        def run(self) -> None:
            self.started = True
            self.future.set_result(self.handler())

        def handle_exception(self, exc: BaseException) -> None:
            if not self.future.done():
                self.future.set_exception(
                    self.controller._handle_event_exception(self.name, self.started, exc)
                )

    class ControlEvent(Event):
        """An internal event (a Raft callback, a snapshot step): nobody waits for it."""

        def __init__(self, controller: QuorumController, name: str, handler: Callable[[], None]) -> None:
            self.controller = controller
            self.name = name
            self.handler = handler

        def run(self) -> None:
            self.handler()

        def handle_exception(self, exc: BaseException) -> None:
            self.controller._handle_event_exception(self.name, True, exc)

    def _handle_event_exception(self, name: str, started: bool, exc: BaseException) -> BaseException:
        """The exception to give the caller. An ApiException is the request's own answer (a bad
        config, a stale epoch, NOT_CONTROLLER); anything else is a bug or a broken invariant, and the
        active controller renounces, since its memory may no longer match its log."""
        if not started:
            log.error("%s: unable to start processing because of %s.", name, type(exc).__name__)
            return exc if isinstance(exc, ApiException) else _unknown_server_exception(exc)
        if isinstance(exc, ApiException):
            log.info("%s: failed with %s", name, type(exc).__name__)
            return exc
        if self.is_active():
            log.warning("%s: failed with unknown server exception %s at epoch %d. Renouncing leadership and "
                        "reverting to the last committed offset %d.", name, type(exc).__name__,
                        self._cur_claim_epoch, self._last_committed_offset, exc_info=exc)  # fmt: skip
            self._renounce()
        else:
            log.warning("%s: failed with unknown server exception %s. The controller is already in standby mode.",
                        name, type(exc).__name__, exc_info=exc)  # fmt: skip
        return _unknown_server_exception(exc)

    def _append_write_event(self, name: str, op: ControllerWriteOperation[T] | Callable[[], ControllerResult[T]],
                            deadline_ns: int | None = None) -> Future:  # fmt: skip
        operation = op if isinstance(op, ControllerWriteOperation) else ControllerWriteOperation(op)
        event = QuorumController.ControllerWriteEvent(self, name, operation)
        if deadline_ns is None:
            self._queue.append(event)
        else:
            self._queue.append_with_deadline(deadline_ns, event)
        return event.future

    def _append_read_event(
        self, name: str, handler: Callable[[], T], deadline_ns: int | None = None
    ) -> Future:
        event = QuorumController.ControllerReadEvent(self, name, handler)
        if deadline_ns is None:
            self._queue.append(event)
        else:
            self._queue.append_with_deadline(deadline_ns, event)
        return event.future

    def _append_control_event(self, name: str, handler: Callable[[], None]) -> None:
        self._queue.append(QuorumController.ControlEvent(self, name, handler))

    def _append_raft_event(self, name: str, handler: Callable[[], None]) -> None:
        """A Raft callback as a control event, after which the authorizer may be ready (3.3's
        ``QuorumMetaLogListener.appendRaftEvent``)."""

        def run() -> None:
            try:
                handler()
            finally:
                self._maybe_complete_authorizer_initial_load()

        self._append_control_event(name, run)

    def _maybe_complete_authorizer_initial_load(self) -> None:
        if not self._need_to_complete_authorizer_load:
            return
        high_watermark = self._raft_client.high_watermark()
        if high_watermark is not None and self._last_committed_offset + 1 >= high_watermark:
            log.info("maybeCompleteAuthorizerInitialLoad: completing authorizer initial load at last "
                     "committed offset %d.", self._last_committed_offset)  # fmt: skip
            self._authorizer.complete_initial_load()
            self._need_to_complete_authorizer_load = False

    # ======================================================================================================
    # Replay: the one way the managers' state changes
    # ======================================================================================================

    # --8<-- [start:replay]
    def _replay(self, message: Any, snapshot_id: OffsetAndEpoch | None, batch_last_offset: int) -> None:
        """Apply one record to the manager that owns it. ``batch_last_offset`` is the offset of the
        batch's last record (a snapshot's last contained offset): a RegisterBrokerRecord's offset is
        the broker's epoch-to-be and the point it must catch up to before it is unfenced."""
        if snapshot_id is None:
            self.records_replayed_from_log += 1
        else:
            self.records_replayed_from_snapshot += 1
        if isinstance(message, RegisterBrokerRecord):
            self.cluster_control.replay(message, batch_last_offset)
        elif isinstance(message, UnregisterBrokerRecord | FenceBrokerRecord | UnfenceBrokerRecord
                        | BrokerRegistrationChangeRecord):  # fmt: skip
            self.cluster_control.replay(message)
        elif isinstance(message, TopicRecord | PartitionRecord | PartitionChangeRecord | RemoveTopicRecord):
            self.replication_control.replay(message)
        elif isinstance(message, ConfigRecord):
            self.configuration_control.replay(message)
        elif isinstance(message, FeatureLevelRecord):
            self.feature_control.replay(message)
        elif isinstance(message, ProducerIdsRecord):
            self.producer_id_control.replay(message)
        elif isinstance(message, AccessControlEntryRecord | RemoveAccessControlEntryRecord):
            self.acl_control.replay(message, snapshot_id)
        elif isinstance(message, NoOpRecord):
            pass  # it exists to advance the log; there is nothing to apply
        else:
            raise RuntimeError(f"Unhandled record type {type(message).__name__}")

    # --8<-- [end:replay]

    # ======================================================================================================
    # Raft's callbacks, each an event on the controller's queue
    # ======================================================================================================

    # --8<-- [start:handle_commit]
    def _handle_commit(self, batches: list[Batch]) -> None:
        new_bytes = 0
        for batch in batches:
            if batch.is_control or not batch.records:
                self._handle_raft_control_batch(batch)
                continue
            if self.is_active():
                # The leader replayed these records when it wrote them: now they are committed,
                # so the requests that wrote them can be answered, and the in-memory snapshots
                # before this offset will never be reverted to.
                self.purgatory.complete_up_to(batch.last_offset)
                self.snapshot_registry.delete_snapshots_up_to(batch.last_offset)
            else:
                # A standby applies what the leader wrote, now that it is committed.
                for message in batch.records:
                    self._replay(message.message, None, batch.last_offset)
            self._image_records.replay(batch.last_offset, batch.epoch, batch.records)
            self._update_last_committed_state(batch.last_offset, batch.epoch, batch.append_timestamp)
            new_bytes += sum(self._serde.record_size(record) for record in batch.records)
            self._new_records_since_last_snapshot += len(batch.records)
        self._maybe_generate_snapshot(new_bytes)

    # --8<-- [end:handle_commit]

    def _handle_raft_control_batch(self, batch: Batch) -> None:
        """Count Raft's own batch (a new epoch's LeaderChange) as committed, on a standby only.

        Kafka 3.6's behaviour (KAFKA-15345: Raft hands its control batches to the listener, as
        kafka_lite's Raft does); Kafka 3.3's reader drops them, and its controller never sees one.
        Such a batch holds no metadata but takes an offset. A standby counts it, so that its last
        committed offset is the log's, and a claim writes on from there rather than from before
        every epoch that wrote nothing. The active controller leaves its own epoch's uncounted:
        Raft hands that batch over after the claim, there is no in-memory snapshot at its offset,
        and a renounce before the first write commits must find one at the last committed offset.
        The cost: until then its last committed offset is one behind Raft's, which no read of
        committed state notices (the batch holds no metadata).
        """
        if not self.is_active():
            self._update_last_committed_state(batch.last_offset, batch.epoch, batch.append_timestamp)

    def _handle_snapshot(self, reader: Any) -> None:
        if self.is_active():
            raise self._fatal_fault_handler.handle_fault(
                f"Asked to load snapshot ({reader.snapshot_id()}) when it is the active controller "
                f"({self._cur_claim_epoch})"
            )
        log.info("Starting to replay snapshot (%s), from last commit offset (%d) and epoch (%d)",
                 reader.snapshot_id(), self._last_committed_offset, self._last_committed_epoch)  # fmt: skip
        self._reset_to_empty_state()
        records: list[ApiMessageAndVersion] = []
        for batch in reader:
            for message in batch.records:
                self._replay(message.message, reader.snapshot_id(), reader.last_contained_log_offset())
                records.append(message)
        self._image_records.load_snapshot(
            reader.last_contained_log_offset(), reader.last_contained_log_epoch(), records
        )
        self.acl_control.complete_snapshot_load()
        self._update_last_committed_state(reader.last_contained_log_offset(), reader.last_contained_log_epoch(),
                                          reader.last_contained_log_timestamp())  # fmt: skip
        self.snapshot_registry.get_or_create_snapshot(self._last_committed_offset)

    def _handle_leader_change(self, new_leader: LeaderAndEpoch) -> None:
        if self.is_active():
            if new_leader.is_leader(self._node_id):
                log.warning("We were the leader in epoch %d, and are still the leader in the new epoch %d.",
                            self._cur_claim_epoch, new_leader.epoch)  # fmt: skip
                self._cur_claim_epoch = new_leader.epoch
            else:
                log.warning("Renouncing the leadership due to a metadata log event. We were the leader at epoch %d, "
                            "but in the new epoch %d, the leader is %s. Reverting to last committed offset %d.",
                            self._cur_claim_epoch, new_leader.epoch, new_leader.leader_id,
                            self._last_committed_offset)  # fmt: skip
                self._renounce()
        elif new_leader.is_leader(self._node_id):
            log.info("Becoming the active controller at epoch %d, committed offset %d, committed epoch %d",
                     new_leader.epoch, self._last_committed_offset, self._last_committed_epoch)  # fmt: skip
            self._claim(new_leader.epoch)
        else:
            log.info("In the new epoch %d, the leader is %s.", new_leader.epoch, new_leader.leader_id)

    # ======================================================================================================
    # Claim and renounce
    # ======================================================================================================

    # --8<-- [start:claim]
    def _claim(self, epoch: int) -> None:
        try:
            if self._cur_claim_epoch != -1:
                raise RuntimeError("Cannot claim leadership because we are already the active controller.")
            self._cur_claim_epoch = epoch
            self._write_offset = self._last_committed_offset
            self.cluster_control.activate()
            # The active controller may revert to its last committed offset at any time: there must
            # be an in-memory snapshot there before its first write.
            self.snapshot_registry.get_or_create_snapshot(self._last_committed_offset)
            # Prepended: activation runs before any request that queued while this node was a standby.
            self._queue.prepend(
                QuorumController.ControllerWriteEvent(
                    self, f"completeActivation[{epoch}]", _CompleteActivation(self)
                )
            )
        except Exception as exc:
            # Half a claim leaves a leader that cannot write or a standby that thinks it may.
            self._fatal_fault_handler.handle_fault("exception while claiming leadership", exc)

    def _renounce(self) -> None:
        try:
            if self._cur_claim_epoch == -1:
                raise RuntimeError("Cannot renounce leadership because we are not the current leader.")
            self._raft_client.resign(self._cur_claim_epoch)
            self._cur_claim_epoch = -1
            # Every write waiting for its commit may never commit: the client must retry at the new leader.
            self.purgatory.fail_all(self._new_not_controller_exception())
            if not self.snapshot_registry.has_snapshot(self._last_committed_offset):
                raise RuntimeError(
                    f"Unable to find last committed offset {self._last_committed_offset} in snapshot registry."
                )
            # Undo everything replayed after the last commit: a standby's state is the committed log.
            self.snapshot_registry.revert_to_snapshot(self._last_committed_offset)
            self._new_bytes_since_last_snapshot = 0
            self._new_records_since_last_snapshot = 0
            self._write_offset = -1
            self.cluster_control.deactivate()
            self._cancel_maybe_fence_replicas()
        except Exception as exc:
            # A standby that could not revert would replay the log on top of uncommitted state.
            self._fatal_fault_handler.handle_fault("exception while renouncing leadership", exc)

    # --8<-- [end:claim]

    def _update_last_committed_state(self, offset: int, epoch: int, timestamp: int) -> None:
        self._last_committed_offset = offset
        self._last_committed_epoch = epoch
        self._last_committed_timestamp = timestamp

    def _reset_to_empty_state(self) -> None:
        self._cancel_snapshot_generator()
        self.snapshot_registry.reset()
        self._new_bytes_since_last_snapshot = 0
        self._new_records_since_last_snapshot = 0
        self._update_last_committed_state(-1, -1, -1)

    def _new_not_controller_exception(self) -> ApiException:
        leader = self._raft_client.leader_and_epoch().leader_id
        if leader is None:
            return Errors.NOT_CONTROLLER.exception("No controller appears to be active.")
        return Errors.NOT_CONTROLLER.exception(f"The active controller appears to be node {leader}")

    # ======================================================================================================
    # The periodic fencing check
    # ======================================================================================================

    # --8<-- [start:fencing]
    def _reschedule_maybe_fence_stale_brokers(self) -> None:
        """Run the fencing check when the oldest session expires. It fences one broker and
        reschedules itself, so several stale brokers are fenced one event each, with requests in
        between."""
        # BEGIN SOLUTION
        # Kafka 3.3's rescheduleMaybeFenceStaleBrokers. One deferred event under one tag: scheduling
        # it again replaces the one pending, so there is never more than one check waiting.
        next_check_time_ns = self.cluster_control.heartbeat_manager().next_check_time_ns()
        if next_check_time_ns == LONG_MAX:
            # Nobody is unfenced, so no session can expire: no check at all, until a heartbeat or a
            # registration unfences a broker and schedules one.
            self._cancel_maybe_fence_replicas()
            return

        def maybe_fence_one_stale_broker() -> ControllerResult:
            result = self.replication_control.maybe_fence_one_stale_broker()
            # Scheduled from inside the event, after the fence: the next check, due at once if
            # another session is already over, runs as an event of its own, after this one's
            # records are replayed.
            self._reschedule_maybe_fence_stale_brokers()
            return result

        # A session is valid up to and including last contact + timeout, so the check is due one
        # nanosecond later (Kafka schedules it at that instant, finds the session still valid and
        # reschedules until the clock moves on; under a MockTime that would never end).
        self._schedule_deferred_write_event(
            MAYBE_FENCE_REPLICAS, next_check_time_ns + 1, maybe_fence_one_stale_broker
        )
        # END SOLUTION

    # --8<-- [end:fencing]

    def _cancel_maybe_fence_replicas(self) -> None:
        self._queue.cancel_deferred(MAYBE_FENCE_REPLICAS)

    def _schedule_deferred_write_event(
        self, name: str, deadline_ns: int, op: Callable[[], ControllerResult]
    ) -> None:
        event = QuorumController.ControllerWriteEvent(self, name, ControllerWriteOperation(op))
        self._queue.schedule_deferred(name, EarliestDeadlineFunction(deadline_ns), event)

        def on_done(future: Future) -> None:
            exc = future.exception()
            if exc is None:
                return
            if isinstance(exc.__cause__, RejectedExecutionException) or isinstance(
                exc, RejectedExecutionException
            ):
                log.error("Cancelling deferred write event %s because the event queue is now closed.", name)
            elif isinstance(exc, Errors.NOT_CONTROLLER.exception_class):
                log.debug(
                    "Cancelling deferred write event %s because this controller is no longer active.", name
                )
            else:
                log.error("Unexpected exception while executing deferred write event %s. Rescheduling for a "
                          "minute from now.", name, exc_info=exc)  # fmt: skip
                self._schedule_deferred_write_event(name, deadline_ns + NS_PER_MINUTE, op)

        event.future.add_done_callback(on_done)

    # ======================================================================================================
    # Snapshots
    # ======================================================================================================

    def _maybe_generate_snapshot(self, batch_size_in_bytes: int) -> None:
        self._new_bytes_since_last_snapshot += batch_size_in_bytes
        due = (self._new_bytes_since_last_snapshot >= self._snapshot_max_new_record_bytes
               or self._new_records_since_last_snapshot >= self._snapshot_max_new_records)  # fmt: skip
        if not due or self._snapshot_generator is not None or self._last_committed_offset < 0:
            return
        snapshot_id = OffsetAndEpoch(self._last_committed_offset + 1, self._last_committed_epoch)
        log.info("Generating a snapshot that includes (epoch=%d, offset=%d) after %d committed bytes since the "
                 "last snapshot.", self._last_committed_epoch, self._last_committed_offset,
                 self._new_bytes_since_last_snapshot)  # fmt: skip
        self._new_bytes_since_last_snapshot = 0
        self._new_records_since_last_snapshot = 0
        writer = self._raft_client.create_snapshot(snapshot_id, self._last_committed_timestamp)
        if writer is None:
            log.info("Skipping generation of snapshot %s since it already exists", snapshot_id)
            return
        self._snapshot_generator = SnapshotGenerator(
            writer, MAX_BATCHES_PER_GENERATE_CALL, sections(self._image_records.records())
        )
        self._reschedule_snapshot_generator(0)

    def _reschedule_snapshot_generator(self, delay_ns: int) -> None:
        event = QuorumController.ControlEvent(self, GENERATE_SNAPSHOT, self._run_snapshot_generator)
        self._queue.schedule_deferred(
            GENERATE_SNAPSHOT, EarliestDeadlineFunction(self._time.nanoseconds() + delay_ns), event
        )

    def _run_snapshot_generator(self) -> None:
        generator = self._snapshot_generator
        if generator is None:
            return
        try:
            next_delay = generator.generate_batches()
        except Exception:
            log.exception("Error while generating snapshot %d", generator.last_contained_log_offset())
            generator.writer().close()
            self._snapshot_generator = None
            return
        if next_delay is None:
            log.info("Finished generating snapshot %d.", generator.last_contained_log_offset())
            generator.writer().close()
            self._snapshot_generator = None
            return
        self._reschedule_snapshot_generator(next_delay)

    def _cancel_snapshot_generator(self) -> None:
        if self._snapshot_generator is None:
            return
        log.error("Cancelling snapshot %d", self._snapshot_generator.last_contained_log_offset())
        self._snapshot_generator.writer().close()
        self._snapshot_generator = None
        self._queue.cancel_deferred(GENERATE_SNAPSHOT)

    # ======================================================================================================
    # The public operations: each returns a concurrent.futures.Future
    # ======================================================================================================

    def register_broker(self, request: dict) -> Future:
        def op() -> ControllerResult:
            # The broker's epoch is the offset its registration record will have.
            result = self.cluster_control.register_broker(
                request, self._write_offset + 1, self.feature_control.finalized_features()
            )
            self._reschedule_maybe_fence_stale_brokers()
            return result

        return self._append_write_event("registerBroker", op)

    def process_broker_heartbeat(self, request: dict) -> Future:
        return self._append_write_event("processBrokerHeartbeat", _BrokerHeartbeatOperation(self, request))

    def unregister_broker(self, broker_id: int) -> Future:
        return self._append_write_event(
            "unregisterBroker", lambda: self.replication_control.unregister_broker(broker_id)
        )

    def create_topics(self, request: dict) -> Future:
        if not request.get("create_topic_requests"):
            return _completed({"throttle_time_ms": 0, "topic_errors": []})
        return self._append_write_event(
            "createTopics", lambda: self.replication_control.create_topics(request)
        )

    def delete_topics(self, topics: Collection[Any]) -> Future:
        if not topics:
            return _completed({})
        return self._append_write_event(
            "deleteTopics", lambda: self.replication_control.delete_topics(topics)
        )

    def create_partitions(self, topics: list[dict], validate_only: bool = False) -> Future:
        if not topics:
            return _completed([])
        return self._append_write_event(
            "createPartitions", lambda: self.replication_control.create_partitions(topics, validate_only)
        )

    def alter_partition(self, request: dict) -> Future:
        return self._append_write_event(
            "alterPartition", lambda: self.replication_control.alter_partition(request)
        )

    def incremental_alter_configs(
        self,
        config_changes: Mapping[ConfigResource, Mapping[str, tuple[OpType, str | None]]],
        validate_only: bool = False,
    ) -> Future:
        if not config_changes:
            return _completed({})
        return self._append_write_event(
            "incrementalAlterConfigs",
            lambda: _maybe_without_records(
                self.configuration_control.incremental_alter_configs(config_changes, False), validate_only
            ),
        )

    def legacy_alter_configs(
        self, new_configs: Mapping[ConfigResource, Mapping[str, str]], validate_only: bool = False
    ) -> Future:
        if not new_configs:
            return _completed({})
        return self._append_write_event(
            "legacyAlterConfigs",
            lambda: _maybe_without_records(
                self.configuration_control.legacy_alter_configs(new_configs, False), validate_only
            ),
        )

    def create_acls(self, bindings: list[AclBinding]) -> Future:
        """CreateAcls: each binding's ``AclCreateResult``, once its record (if any) is committed."""
        if not bindings:
            return _completed([])
        return self._append_write_event("createAcls", lambda: self.acl_control.create_acls(bindings))

    def delete_acls(self, filters: list[AclBindingFilter]) -> Future:
        """DeleteAcls: each filter's ``AclDeleteResult``, once the removals are committed."""
        if not filters:
            return _completed([])
        return self._append_write_event("deleteAcls", lambda: self.acl_control.delete_acls(filters))

    def allocate_producer_ids(self, request: dict) -> Future:
        future = self._append_write_event(
            "allocateProducerIds",
            lambda: self.producer_id_control.generate_next_producer_id(
                request["broker_id"], request["broker_epoch"]
            ),
        )
        return _then_apply(future, lambda block: {
            "throttle_time_ms": 0, "error_code": 0,
            "producer_id_start": block.first_producer_id, "producer_id_len": block.size,
        })  # fmt: skip

    # -- reads, of the committed state -------------------------------------------------------------------

    def find_topic_ids(self, names: Collection[str]) -> Future:
        return self._append_read_event(
            "findTopicIds",
            lambda: self.replication_control.find_topic_ids(self._last_committed_offset, names),
        )

    def find_topic_names(self, ids: Collection[Any]) -> Future:
        return self._append_read_event(
            "findTopicNames",
            lambda: self.replication_control.find_topic_names(self._last_committed_offset, ids),
        )

    def describe_configs(self, resources: Mapping[ConfigResource, Collection[str]]) -> Future:
        return self._append_read_event(
            "describeConfigs",
            lambda: self.configuration_control.describe_configs(self._last_committed_offset, resources),
        )

    def finalized_features(self) -> Future:
        return self._append_read_event(
            "getFinalizedFeatures",
            lambda: self.feature_control.finalized_features(self._last_committed_offset),
        )

    # -- state and lifecycle ------------------------------------------------------------------------------

    def is_active(self) -> bool:
        return self._cur_claim_epoch != -1

    def cur_claim_epoch(self) -> int:
        return self._cur_claim_epoch

    def last_committed_offset(self) -> int:
        return self._last_committed_offset

    def node_id(self) -> int:
        return self._node_id

    def begin_shutdown(self) -> None:
        self._queue.begin_shutdown("QuorumController#beginShutdown")

    def close(self) -> None:
        self._queue.close()

    # -- used by the config manager -----------------------------------------------------------------------

    def _check_config_resource_exists(self, resource: ConfigResource) -> None:
        """A config can be set only on a topic that exists, or a broker that is registered (or
        this controller itself, or the cluster default: a BROKER with an empty name)."""
        if resource.type == ConfigResourceType.TOPIC:
            if self.replication_control.get_topic_id(resource.name) is None:
                raise Errors.UNKNOWN_TOPIC_OR_PARTITION.exception(
                    f"The topic '{resource.name}' does not exist."
                )
        elif resource.type == ConfigResourceType.BROKER and resource.name:
            broker_id = int(resource.name)
            if broker_id != self._node_id and self.cluster_control.registration(broker_id) is None:
                raise Errors.BROKER_ID_NOT_REGISTERED.exception(f"No broker with id {broker_id} found.")


class QuorumMetaLogListener(Listener):
    """Raft's callbacks run on the Raft thread: each becomes an event on the controller's queue, so
    the controller's state is touched by its own thread alone."""

    def __init__(self, controller: QuorumController) -> None:
        self._controller = controller

    def handle_commit(self, batches: list[Batch]) -> None:
        name = f"handleCommit[baseOffset={batches[0].base_offset if batches else -1}]"
        self._controller._append_raft_event(name, lambda: self._controller._handle_commit(batches))

    def handle_snapshot(self, reader: Any) -> None:
        name = f"handleSnapshot[snapshotId={reader.snapshot_id()}]"
        self._controller._append_raft_event(name, lambda: self._controller._handle_snapshot(reader))

    def handle_leader_change(self, leader: LeaderAndEpoch) -> None:
        name = f"handleLeaderChange[{leader.epoch}]"
        self._controller._append_raft_event(name, lambda: self._controller._handle_leader_change(leader))

    def begin_shutdown(self) -> None:
        self._controller._queue.begin_shutdown("MetaLogManager.Listener")


class _CompleteActivation(ControllerWriteOperation[None]):
    """The new leader's first write: on an empty log, the bootstrap records (metadata.version)."""

    def __init__(self, controller: QuorumController) -> None:
        super().__init__()
        self._controller = controller

    def generate_records_and_result(self) -> ControllerResult[None]:
        controller = self._controller
        records: list[ApiMessageAndVersion] = []
        if controller.records_replayed_from_log == 0 and controller.records_replayed_from_snapshot == 0:
            log.info("The metadata log appears to be empty. Appending 1 bootstrap record(s) at metadata.version %s.",
                     controller._bootstrap_metadata_version)  # fmt: skip
            level = controller._bootstrap_metadata_version.feature_level
            records.append(
                ApiMessageAndVersion(
                    FeatureLevelRecord(name=METADATA_VERSION_FEATURE_NAME, feature_level=level), 0
                )
            )
        elif controller.feature_control.metadata_version() == MINIMUM_KRAFT_VERSION:
            log.info("No metadata.version feature level record was found in the log. Treating the log as version %s.",
                     MINIMUM_KRAFT_VERSION)  # fmt: skip
        return ControllerResult.of(records, None)

    def process_batch_end_offset(self, offset: int) -> None:
        # Every broker registered before the failover has a fresh session from activate(): check
        # them when the first of those sessions would expire.
        self._controller._reschedule_maybe_fence_stale_brokers()


class _BrokerHeartbeatOperation(ControllerWriteOperation[Any]):
    def __init__(self, controller: QuorumController, request: dict) -> None:
        super().__init__()
        self._controller = controller
        self._request = request
        self._broker_id = request["broker_id"]
        self._in_controlled_shutdown = False

    def generate_records_and_result(self) -> ControllerResult[Any]:
        controller = self._controller
        # The offset of the broker's registration: it is unfenced once it has caught up to it. The
        # broker epoch the heartbeat carries is checked by the manager, so an old registration's
        # offset here does no harm.
        offset = controller.cluster_control.register_broker_record_offset(self._broker_id)
        if offset is None:
            raise Errors.STALE_BROKER_EPOCH.exception(
                f"Receive a heartbeat from broker {self._broker_id} before registration"
            )
        result = controller.replication_control.process_broker_heartbeat(self._request, offset)
        self._in_controlled_shutdown = result.response.in_controlled_shutdown
        controller._reschedule_maybe_fence_stale_brokers()
        return result

    def process_batch_end_offset(self, offset: int) -> None:
        if self._in_controlled_shutdown:
            self._controller.cluster_control.heartbeat_manager().update_controlled_shutdown_offset(
                self._broker_id, offset
            )


def _unknown_server_exception(exc: BaseException) -> ApiException:
    error = Errors.UNKNOWN.exception(f"{type(exc).__name__}: {exc}")
    error.__cause__ = exc
    return error


def _maybe_without_records(result: ControllerResult[T], validate_only: bool) -> ControllerResult[T]:
    return ControllerResult([], result.response, result.is_atomic) if validate_only else result


def _completed(value: Any) -> Future:
    future: Future = Future()
    future.set_result(value)
    return future


def _then_apply(future: Future, fn: Callable[[Any], Any]) -> Future:
    """A future of ``fn`` of the result (Java's ``thenApply``)."""
    out: Future = Future()

    def done(f: Future) -> None:
        exc = f.exception()
        if exc is not None:
            out.set_exception(exc)
        else:
            out.set_result(fn(f.result()))

    future.add_done_callback(done)
    return out
