"""One partition as this broker sees it: its replicas, who leads, the ISR, and the high watermark.

Mirrors: kafka.cluster.Partition (core/src/main/scala/kafka/cluster/Partition.scala, Kafka 0.10.1,
         with 0.11's deleteRecordsOnLeader and lowWatermarkIfLeader, KIP-107)
Book:    chapter 6, 6.2.2 (partitions and replicas, the ISR, the HW), 7.2.2 (LeaderAndIsr makes a
         broker leader or follower)
Differs: the idempotent producers' state is kept here, beside the log (Kafka 0.11 keeps it inside
         ``Log``); a new leader starts its followers' lag clocks afresh, as Kafka 0.10.2 does; a
         new leader records that its epoch starts at its LEO as it takes over, as Kafka 2.1 does
         (0.11 recorded an epoch only at its first append); a DeleteRecords beyond the high
         watermark is refused here, as Kafka 1.1 does (0.11 checked it in ``Replica``). The last
         stable offset is computed here from the producer state (Kafka 0.11: ``Replica.lastStableOffset``
         over ``Log.firstUnstableOffset``).

The leader keeps one ``Replica`` per assigned broker, and the in-sync replicas (ISR): the replicas
that have caught up with the leader within ``replica.lag.time.max.ms``. Its high watermark (HW) is
the smallest LEO in the ISR: every in-sync replica has the records below it, so they survive the
loss of any replica but the last, and only they are shown to consumers.

The ISR changes in two places: ``maybe_expand_isr`` when a follower's fetch reaches the HW, and
``maybe_shrink_isr`` (run by the replica manager's scheduler) when a follower has not caught up for
too long. Each change is written to ZooKeeper with a conditional update on the version this broker
read, so a controller's decision in between wins; the replica manager then announces the change.
A KRaft broker (chapter 12) cannot write metadata: its leader asks the controller instead, through
the ``AlterPartitionManager``, and adopts the ISR the controller answers with (``_update_isr``).

Locking is Kafka's ``leaderIsrUpdateLock``: appends take it shared (many producers append at once,
the log has its own lock); leadership and ISR changes take it exclusive, so an append never sees a
half-changed ISR. Delayed operations are completed after the lock is released.
"""

from __future__ import annotations

import logging
import threading
import uuid
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from kafka_lite.common.errors import (
    Errors,
    KafkaException,
    NotEnoughReplicasException,
    NotLeaderForPartitionException,
    OffsetOutOfRangeException,
)
from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.time import Time
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.log.log import Log, LogAppendInfo
from kafka_lite.log.log_segment import LogOffsetMetadata
from kafka_lite.log.producer_state_manager import ProducerStateManager, scan_producer_batches
from kafka_lite.server.replica import Replica
from kafka_lite.utils.locks import ReadWriteLock
from kafka_lite.zk.zk_utils import LeaderAndIsr

if TYPE_CHECKING:
    from kafka_lite.server.replica_manager import ReplicaManager

log = logging.getLogger(__name__)

# AlterPartition errors after which a leader waits for the metadata log (_handle_alter_partition_error): the controller
# knows a newer state of the partition than this leader, or does not know the partition at all.
AWAIT_METADATA_ERRORS = frozenset(
    {
        Errors.UNKNOWN_TOPIC_OR_PARTITION,
        Errors.UNKNOWN_TOPIC_ID,
        Errors.FENCED_LEADER_EPOCH,
        Errors.INVALID_UPDATE_VERSION,
        Errors.INVALID_REQUEST,
        Errors.NEW_LEADER_ELECTED,
    }
)


class NotAssignedReplicaException(KafkaException):
    """A fetch from a broker that holds no replica of the partition (Kafka's, in kafka.common)."""


@dataclass(frozen=True)
class PendingIsrChange:
    """A KRaft leader's ISR change sent to the controller and not yet answered (Kafka 3.3's
    ``PendingExpandIsr``/``PendingShrinkIsr``): the ISR asked for, and the request as sent."""

    new_isr: frozenset[Replica]
    sent_leader_and_isr: LeaderAndIsr


class Partition:
    def __init__(self, topic: str, partition_id: int, time: Time, replica_manager: ReplicaManager) -> None:
        self.topic = topic
        self.partition_id = partition_id
        self.time = time
        self.replica_manager = replica_manager
        self.local_broker_id = replica_manager.broker_id
        # KRaft (chapter 12): ISR changes go to the controller through this; None: into ZooKeeper.
        self.alter_partition_manager = replica_manager.alter_partition_manager
        self.topic_id: uuid.UUID | None = None  # known in KRaft, from the metadata log
        self.pending_isr_change: PendingIsrChange | None = None
        self.assigned_replica_map: dict[int, Replica] = {}
        self.leader_replica_id = LeaderAndIsr.NO_LEADER
        self.in_sync_replicas: set[Replica] = set()
        self.leader_epoch = -1
        self.controller_epoch = -1
        self.zk_version = -1
        self.producer_state: ProducerStateManager | None = None
        # Kafka keeps the producer state inside ``Log.append``, under the log's lock. Here it sits
        # beside the log, so its own lock makes "check, append, update" one step: a reader of the
        # LSO never sees a transactional batch in the log before its transaction is known open.
        self.producer_state_lock = threading.Lock()
        self.leader_isr_update_lock = ReadWriteLock()

    @property
    def tp(self) -> TopicPartition:
        return (self.topic, self.partition_id)

    @property
    def isr(self) -> list[int]:
        """The in-sync replicas' broker ids, sorted (as ZooKeeper and Metadata show them)."""
        return sorted(r.broker_id for r in self.in_sync_replicas)

    @property
    def log(self) -> Log | None:
        local = self.assigned_replica_map.get(self.local_broker_id)
        return local.log if local is not None else None

    # -- replicas ----------------------------------------------------------------------------------------

    def get_or_create_replica(self, replica_id: int | None = None) -> Replica:
        """The replica on broker ``replica_id`` (this broker's by default), created on first use.

        The local replica opens the log, and starts its HW from the checkpoint file (never above the
        log's end: a crash may have lost the tail the checkpoint had seen)."""
        if replica_id is None:
            replica_id = self.local_broker_id
        replica = self.assigned_replica_map.get(replica_id)
        if replica is not None:
            return replica
        if replica_id == self.local_broker_id:
            log_ = self.replica_manager.create_log(self.tp)
            checkpointed = self.replica_manager.checkpointed_high_watermark(log_, self.tp)
            replica = Replica(replica_id, self.tp, self.time, min(checkpointed, log_.log_end_offset), log_)
            self.producer_state = ProducerStateManager(log_.dir)
            self.producer_state.load(log_)
        else:
            replica = Replica(replica_id, self.tp, self.time)
        self.assigned_replica_map[replica_id] = replica
        return replica

    def get_replica(self, replica_id: int | None = None) -> Replica | None:
        return self.assigned_replica_map.get(self.local_broker_id if replica_id is None else replica_id)

    def leader_replica_if_local(self) -> Replica | None:
        return self.get_replica() if self.leader_replica_id == self.local_broker_id else None

    def is_leader(self) -> bool:
        return self.leader_replica_id == self.local_broker_id

    def assigned_replicas(self) -> list[Replica]:
        return list(self.assigned_replica_map.values())

    def high_watermark(self) -> int:
        local = self.get_replica()
        return local.high_watermark if local is not None else 0

    # --8<-- [start:last_stable_offset]
    def last_stable_offset(self, high_watermark: int | None = None) -> int:
        """The LSO (Kafka 0.11): the first unstable offset, if it is below the high watermark, else
        the high watermark. A ``read_committed`` consumer reads only below it."""
        if high_watermark is None:
            high_watermark = self.high_watermark()
        if self.producer_state is None:
            return high_watermark
        with self.producer_state_lock:
            first_unstable = self.producer_state.first_unstable_offset(high_watermark)
        if first_unstable is not None and first_unstable < high_watermark:
            return first_unstable
        return high_watermark

    def last_stable_offset_metadata(self) -> LogOffsetMetadata:
        """The LSO with its segment and position, for a ``read_committed`` DelayedFetch to count the
        bytes below it (found by a read when it is not the HW)."""
        replica = self.get_replica()
        lso = self.last_stable_offset(replica.high_watermark)
        if lso == replica.high_watermark:
            return replica.high_watermark_metadata
        return replica.log.convert_to_offset_metadata(lso)

    # --8<-- [end:last_stable_offset]

    # -- leadership ---------------------------------------------------------------------------------------

    # --8<-- [start:make_leader]
    def make_leader(self, state: dict, controller_epoch: int) -> bool:
        """Apply LeaderAndIsr naming this broker leader; True if leadership changed hands to us.

        A new leader forgets its followers' LEOs (they may be stale from when it led before) until
        they fetch again, and takes the ISR the controller chose."""
        with self.leader_isr_update_lock.write_lock():
            all_replicas = list(state["replicas"])
            self.controller_epoch = controller_epoch
            for replica_id in all_replicas:
                self.get_or_create_replica(replica_id)
            new_in_sync_replicas = {self.get_or_create_replica(r) for r in state["isr"]}
            for gone in set(self.assigned_replica_map) - set(all_replicas):
                del self.assigned_replica_map[gone]
            self.in_sync_replicas = new_in_sync_replicas
            self.leader_epoch = state["leader_epoch"]
            self.zk_version = state["zk_version"]
            self.pending_isr_change = None  # the controller's state overrides a change it has not answered
            is_new_leader = self.leader_replica_id != self.local_broker_id
            self.leader_replica_id = self.local_broker_id
            leader_replica = self.get_replica()
            leader_replica.convert_hw_to_local_offset_metadata()
            # The new epoch starts at the LEO, recorded now rather than at the first append (Kafka
            # 2.1): after two quick elections a follower may hold records of an epoch later than any
            # in this log, and asking where that epoch ends must be answered with this offset, not
            # with "unknown". Records appended from now on carry this epoch.
            leader_replica.log.leader_epoch_cache.assign(self.leader_epoch, leader_replica.log_end_offset)
            if is_new_leader:
                now = self.time.milliseconds()
                for replica in self.assigned_replicas():
                    if replica.broker_id != self.local_broker_id:
                        replica.reset_log_end_offset()
                        in_sync = replica in new_in_sync_replicas
                        replica.reset_last_caught_up_time(
                            leader_replica.log_end_offset, now, now if in_sync else 0
                        )
            hw_incremented = self.maybe_increment_leader_hw(leader_replica)
        if hw_incremented:
            self.try_complete_delayed_requests()
        return is_new_leader

    def make_follower(self, state: dict, controller_epoch: int) -> bool:
        """Apply LeaderAndIsr naming another broker leader; True if the leader changed.

        Only the leader tracks the ISR; a follower's is empty."""
        with self.leader_isr_update_lock.write_lock():
            all_replicas = list(state["replicas"])
            new_leader = state["leader"]
            self.controller_epoch = controller_epoch
            for replica_id in all_replicas:
                self.get_or_create_replica(replica_id)
            for gone in set(self.assigned_replica_map) - set(all_replicas):
                del self.assigned_replica_map[gone]
            self.in_sync_replicas = set()
            self.leader_epoch = state["leader_epoch"]
            self.zk_version = state["zk_version"]
            self.pending_isr_change = None
            changed = self.leader_replica_id != new_leader
            self.leader_replica_id = new_leader
            return changed

    # --8<-- [end:make_leader]

    # -- the ISR and the high watermark ------------------------------------------------------------------

    # --8<-- [start:update_replica_log_read_result]
    def update_replica_log_read_result(
        self,
        replica_id: int,
        fetch_offset: int,
        leader_log_end_offset: int,
        fetch_time_ms: int,
        follower_log_start_offset: int = -1,
    ) -> None:
        """A follower fetched: record its LEO (and so its lag) and its log start offset, then see
        whether it joins the ISR or moves the HW. A log start offset that raised the low watermark
        may complete a waiting DeleteRecords (Kafka 0.11)."""
        replica = self.get_replica(replica_id)
        if replica is None:
            raise NotAssignedReplicaException(
                f"Leader {self.local_broker_id} failed to record follower {replica_id}'s position "
                f"{fetch_offset} since the replica is not recognized to be one of the assigned replicas "
                f"{sorted(self.assigned_replica_map)} for partition {self.topic}-{self.partition_id}."
            )
        # the low watermark is computed only while a DeleteRecords waits for it
        waiting = self.replica_manager.delayed_delete_records_purgatory.delayed() > 0
        old_low_watermark = self.low_watermark_if_leader() if waiting and self.is_leader() else -1
        replica.update_log_read_result(fetch_offset, leader_log_end_offset, fetch_time_ms)
        replica.update_log_start_offset(follower_log_start_offset)
        if waiting and self.is_leader() and self.low_watermark_if_leader() > old_low_watermark:
            self.replica_manager.try_complete_delayed_delete_records(self.tp)
        # check if we need to expand the ISR to include this replica, if it is not in the ISR yet
        self.maybe_expand_isr(replica_id)
        log.debug(
            "Recorded replica %d log end offset (LEO) position %d for partition %s-%d",
            replica_id, fetch_offset, self.topic, self.partition_id,
        )  # fmt: skip

    def maybe_expand_isr(self, replica_id: int) -> None:
        """Add a follower to the ISR once its LEO reaches the HW: from there on it has everything a
        consumer has been shown, so it may hold up the HW, and become leader. Then, in or out, its
        LEO has just moved: the HW may move with it.

        Both under the write lock: two followers' fetches are served by two handler threads, an
        append reads the ISR under the read lock, and the HW must never go down. The delayed
        operations the HW unblocks are completed after the lock is released: completing one runs its
        response callback, which must not run under this partition's lock (the group coordinator's
        callbacks take a group's lock, whose holder may be waiting to append here)."""
        with self.leader_isr_update_lock.write_lock():
            leader_replica = self.leader_replica_if_local()
            if leader_replica is None:
                return  # no longer the leader: nothing to do
            replica = self.get_replica(replica_id)
            if (
                replica not in self.in_sync_replicas
                and replica_id in self.assigned_replica_map
                and replica.log_end_offset >= leader_replica.high_watermark
                and self.pending_isr_change is None  # KRaft: one change in flight at a time
            ):
                new_in_sync_replicas = self.in_sync_replicas | {replica}
                log.info(
                    "Expanding ISR for partition %s-%d from %s to %s", self.topic, self.partition_id,
                    self.isr, sorted(r.broker_id for r in new_in_sync_replicas),
                )  # fmt: skip
                self._update_isr(new_in_sync_replicas)
                self.replica_manager.metrics["isr-expands"] += 1
            # check if the HW can now be incremented: the replica may now be in the ISR, and its
            # LEO has just moved
            hw_incremented = self.maybe_increment_leader_hw(leader_replica)
        # some delayed operations may be unblocked after the HW changed
        if hw_incremented:
            self.try_complete_delayed_requests()

    # --8<-- [end:update_replica_log_read_result]

    # --8<-- [start:maybe_increment_leader_hw]
    def maybe_increment_leader_hw(self, leader_replica: Replica) -> bool:
        """Move the HW up to the smallest LEO in the ISR, if that is higher; True if it moved.

        Called when the ISR changes or a replica's LEO moves, with the ISR lock held. The HW never
        goes down: a follower that rejoins the ISR has reached the HW first (``maybe_expand_isr``)."""
        # BEGIN SOLUTION
        new_high_watermark = min(r.log_end_offset for r in self.in_sync_replicas)
        old_high_watermark = leader_replica.high_watermark
        if old_high_watermark < new_high_watermark:
            leader_replica.high_watermark = new_high_watermark
            log.debug("High watermark for partition %s-%d updated to %d", *self.tp, new_high_watermark)
            return True
        return False
        # END SOLUTION

    # --8<-- [end:maybe_increment_leader_hw]

    def try_complete_delayed_requests(self) -> None:
        """The HW moved: fetches waiting for committed data, and acks=all produces, may be done."""
        self.replica_manager.try_complete_delayed_fetch(self.tp)
        self.replica_manager.try_complete_delayed_produce(self.tp)

    # -- DeleteRecords (Kafka 0.11, KIP-107) -----------------------------------------------------------------

    # --8<-- [start:delete_records_on_leader]
    def low_watermark_if_leader(self) -> int:
        """The least log start offset of the replicas on live brokers (Kafka's ``lowWatermarkIfLeader``):
        below it no replica still holds a record a DeleteRecords removed. A follower that has not yet
        said where its log starts counts as -1."""
        if not self.is_leader():
            raise NotLeaderForPartitionException(
                f"Leader not local for partition {self.topic}-{self.partition_id} on broker {self.local_broker_id}"
            )
        cache = self.replica_manager.metadata_cache
        alive = {b.id for b in cache.alive_brokers()} if cache is not None else None
        starts = [
            r.log_start_offset
            for r in self.assigned_replicas()
            if r.is_local() or alive is None or r.broker_id in alive
        ]
        return min(starts, default=0)

    def delete_records_on_leader(self, offset: int) -> int:
        """Move the leader's log start offset to ``offset``; return the low watermark. Refused for a
        topic whose ``cleanup.policy`` has no ``delete`` (POLICY_VIOLATION), and beyond the high
        watermark (OFFSET_OUT_OF_RANGE): a consumer may never have seen what it would delete."""
        with self.leader_isr_update_lock.read_lock():
            leader = self.leader_replica_if_local()
            if leader is None:
                raise NotLeaderForPartitionException(
                    f"Leader not local for partition {self.topic}-{self.partition_id} on broker {self.local_broker_id}"
                )
            if not leader.log.config.delete:
                raise Errors.POLICY_VIOLATION.exception(
                    f"Records of partition {self.topic}-{self.partition_id} can not be deleted due to the "
                    "configured policy"
                )
            if offset > leader.high_watermark:
                raise OffsetOutOfRangeException(
                    f"The specified offset {offset} is higher than the high watermark {leader.high_watermark} "
                    f"of the partition {self.topic}-{self.partition_id}"
                )
            leader.log.maybe_increment_log_start_offset(offset)
            return self.low_watermark_if_leader()

    # --8<-- [end:delete_records_on_leader]

    # --8<-- [start:maybe_shrink_isr]
    def maybe_shrink_isr(self, replica_max_lag_time_ms: int) -> None:
        """Drop the followers that have not caught up for ``replica_max_lag_time_ms``: stuck ones (no
        fetch at all) and slow ones (fetching, but never reaching the leader's LEO) alike."""
        with self.leader_isr_update_lock.write_lock():
            leader_replica = self.leader_replica_if_local()
            if leader_replica is None or self.pending_isr_change is not None:
                return  # not the leader, or (KRaft) a change is waiting for the controller's answer
            out_of_sync = self.get_out_of_sync_replicas(leader_replica, replica_max_lag_time_ms)
            if not out_of_sync:
                return
            new_in_sync_replicas = self.in_sync_replicas - out_of_sync
            log.info(
                "Shrinking ISR for partition %s-%d from %s to %s", self.topic, self.partition_id,
                self.isr, sorted(r.broker_id for r in new_in_sync_replicas),
            )  # fmt: skip
            self._update_isr(new_in_sync_replicas)
            self.replica_manager.metrics["isr-shrinks"] += 1
            # with a laggard gone, the HW may move up to the slowest remaining replica
            hw_incremented = self.maybe_increment_leader_hw(leader_replica)
        if hw_incremented:
            self.try_complete_delayed_requests()

    def get_out_of_sync_replicas(self, leader_replica: Replica, max_lag_ms: int) -> set[Replica]:
        now = self.time.milliseconds()
        candidates = self.in_sync_replicas - {leader_replica}
        return {r for r in candidates if now - r.last_caught_up_time_ms > max_lag_ms}

    # --8<-- [end:maybe_shrink_isr]

    def _update_isr(self, new_isr: set[Replica]) -> None:
        """Write the new ISR to ZooKeeper, conditional on the version this broker last saw; adopt it
        only if the write succeeds (else the controller changed the partition, and its LeaderAndIsr
        is on its way). A KRaft broker asks the controller instead (``_submit_alter_partition``)."""
        if self.alter_partition_manager is not None:
            self._submit_alter_partition(new_isr)
            return
        new_leader_and_isr = LeaderAndIsr(
            self.local_broker_id, self.leader_epoch, sorted(r.broker_id for r in new_isr), self.zk_version
        )
        ok, new_version = self.replica_manager.update_leader_and_isr(
            self.tp, new_leader_and_isr, self.controller_epoch
        )
        if ok:
            self.replica_manager.record_isr_change(self.tp)
            self.in_sync_replicas = new_isr
            self.zk_version = new_version
        else:
            log.info(
                "Cached zkVersion %d of %s-%d not equal to that in ZooKeeper, skip updating ISR",
                self.zk_version, self.topic, self.partition_id,
            )  # fmt: skip

    # --8<-- [start:alter_partition]
    def _submit_alter_partition(self, new_isr: set[Replica]) -> None:
        """KRaft: ask the controller for ``new_isr`` (under the ISR lock), as Kafka 3.3's
        ``submitAlterPartition``. The ISR stays as it is until the answer: a shrink adopted early
        could move the HW past what a dropped follower has, were the controller to refuse it
        (3.3 also counts an expanding follower at once, a stricter HW; kafka_lite waits for both)."""
        sent = LeaderAndIsr(
            self.local_broker_id, self.leader_epoch, sorted(r.broker_id for r in new_isr), self.zk_version
        )
        pending = PendingIsrChange(frozenset(new_isr), sent)
        self.pending_isr_change = pending
        log.debug("Submitting ISR state change %s for %s-%d", sent, self.topic, self.partition_id)

        def on_answer(leader_and_isr: LeaderAndIsr | None, error: Errors) -> None:
            self._handle_alter_partition_answer(pending, leader_and_isr, error)

        if not self.alter_partition_manager.submit(self.tp, self.topic_id, sent, on_answer):
            self.pending_isr_change = None  # OPERATION_NOT_ATTEMPTED: the state is as it was

    def _handle_alter_partition_answer(
        self, pending: PendingIsrChange, leader_and_isr: LeaderAndIsr | None, error: Errors
    ) -> None:
        """The controller answered (on the channel's thread). An answer to a change the metadata
        log has since overtaken is ignored; a retriable error sends the change again."""
        hw_incremented = should_retry = False
        with self.leader_isr_update_lock.write_lock():
            if self.pending_isr_change is not pending:
                log.debug("Ignoring the answer to %s: the partition's state has changed since", pending)
            elif leader_and_isr is not None:
                hw_incremented = self._handle_alter_partition_update(leader_and_isr)
            else:
                should_retry = self._handle_alter_partition_error(error)
            if should_retry and not self.alter_partition_manager.submit(
                self.tp, self.topic_id, pending.sent_leader_and_isr,
                lambda state, e: self._handle_alter_partition_answer(pending, state, e),
            ):  # fmt: skip
                self.pending_isr_change = None
        if hw_incremented:
            self.try_complete_delayed_requests()

    def _handle_alter_partition_update(self, leader_and_isr: LeaderAndIsr) -> bool:
        """Take the controller's ISR and partition epoch, unless the answer is older than what this
        leader knows (then the change stays pending until the metadata log brings the state).
        Returns whether the HW moved."""
        if leader_and_isr.leader_epoch != self.leader_epoch:
            log.debug(
                "Ignoring new ISR %s since we have a stale leader epoch %d.",
                leader_and_isr,
                self.leader_epoch,
            )
            return False
        if leader_and_isr.zk_version < self.zk_version:
            log.debug(
                "Ignoring new ISR %s since we have a newer version %d.", leader_and_isr, self.zk_version
            )
            return False
        self.in_sync_replicas = {self.get_or_create_replica(r) for r in leader_and_isr.isr}
        self.zk_version = leader_and_isr.zk_version
        self.pending_isr_change = None
        log.info("ISR updated to %s and version updated to %d", self.isr, self.zk_version)
        leader_replica = self.leader_replica_if_local()
        return leader_replica is not None and self.maybe_increment_leader_hw(leader_replica)

    def _handle_alter_partition_error(self, error: Errors) -> bool:
        """Kafka 3.3's ``handleAlterPartitionError``; returns whether to send the change again."""
        if error in (Errors.OPERATION_NOT_ATTEMPTED, Errors.INELIGIBLE_REPLICA):
            # The controller says the change was not applied and our partition epoch is current:
            # back to the state before the change, free to try another.
            self.pending_isr_change = None
            log.info(
                "Failed to alter partition %s-%d: the controller rejected it with %s", *self.tp, error.name
            )
            return False
        if error in AWAIT_METADATA_ERRORS:
            # Our state is older than the controller's (or the request was wrong for it): stay
            # pending, changing nothing, until the metadata log brings the new state.
            log.debug(
                "Failed to alter partition %s-%d with %s; awaiting the latest metadata", *self.tp, error.name
            )
            return False
        log.warning("Failed to update ISR of %s-%d due to unexpected %s. Retrying.", *self.tp, error.name)
        return True

    # --8<-- [end:alter_partition]

    # --8<-- [start:check_enough_replicas_reach_offset]
    def check_enough_replicas_reach_offset(self, required_offset: int) -> tuple[bool, Errors]:
        """For an acks=all produce whose last record is below ``required_offset``: has every in-sync
        replica got it? Answered by the HW, which is the ISR's smallest LEO. If the ISR shrank below
        ``min.insync.replicas`` after the append, the records are committed but the producer is told
        NOT_ENOUGH_REPLICAS_AFTER_APPEND."""
        leader_replica = self.leader_replica_if_local()
        if leader_replica is None:
            return False, Errors.NOT_LEADER_FOR_PARTITION
        current_isr = self.in_sync_replicas
        min_isr = leader_replica.log.config.min_insync_replicas
        if leader_replica.high_watermark >= required_offset:
            if min_isr <= len(current_isr):
                return True, Errors.NONE
            return True, Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND
        return False, Errors.NONE

    # --8<-- [end:check_enough_replicas_reach_offset]

    # -- appends --------------------------------------------------------------------------------------------

    # --8<-- [start:append]
    def append_records_to_leader(
        self,
        records: MemoryRecords,
        required_acks: int = 1,
        is_from_client: bool = True,
        verification_guard: object | None = None,
        verification_required: bool = False,
    ) -> LogAppendInfo:
        """The produce path: check leadership and ``min.insync.replicas``, check the idempotent
        producers' sequences, append, and move the HW if the ISR is the leader alone.
        ``is_from_client=False``: the broker's transaction markers, which a client may not write.
        ``verification_required`` (KIP-890 part 1 on): a transactional write that opens a
        transaction here must bring ``verification_guard``, the guard its verification began with."""
        with self.leader_isr_update_lock.read_lock():
            leader_replica = self.leader_replica_if_local()
            if leader_replica is None:
                raise NotLeaderForPartitionException(
                    f"Leader not local for partition {self.topic}-{self.partition_id} on broker {self.local_broker_id}"
                )
            log_ = leader_replica.log
            min_isr = log_.config.min_insync_replicas
            in_sync_size = len(self.in_sync_replicas)
            # Avoid writing to the leader if there are not enough in-sync replicas to make it safe
            if in_sync_size < min_isr and required_acks == -1:
                raise NotEnoughReplicasException(
                    f"Number of insync replicas for partition {self.topic}-{self.partition_id} is "
                    f"{in_sync_size}, below required minimum {min_isr}"
                )
            with self.producer_state_lock:
                info = self._append_and_update_producer_state(
                    log_, records, True, is_from_client, verification_guard, verification_required
                )
            # followers waiting in a long poll have new data to fetch
            self.replica_manager.try_complete_delayed_fetch(self.tp)
            # with the leader alone in the ISR, its LEO is the HW
            hw_incremented = self.maybe_increment_leader_hw(leader_replica)
        if hw_incremented:
            self.try_complete_delayed_requests()
        return info

    # --8<-- [end:append]

    def kafka_3_6_maybe_start_transaction_verification(self, producer_id: int) -> object | None:
        """KIP-890 part 1: the guard of a verification for ``producer_id``'s transactional write, or
        None if it has a transaction open here (Kafka 3.6's ``Partition.maybeStartTransactionVerification``);
        only the leader is asked."""
        with self.leader_isr_update_lock.read_lock():
            if self.leader_replica_if_local() is None:
                raise NotLeaderForPartitionException(
                    f"Leader not local for partition {self.topic}-{self.partition_id} on broker {self.local_broker_id}"
                )
            return self.producer_state.kafka_3_6_maybe_start_transaction_verification(
                producer_id, self.time.milliseconds()
            )

    def append_records_to_follower(self, records: MemoryRecords) -> LogAppendInfo:
        """The replica fetcher's path: the leader's batches, with the leader's offsets."""
        return self._append_with_producer_state(self.get_replica().log, records, False, False)

    def _append_with_producer_state(
        self, log_: Log, records: MemoryRecords, assign_offsets: bool, is_from_client: bool
    ) -> LogAppendInfo:
        """Append, keeping the producers' state in step: a leader refuses a duplicate batch
        (answering with its first offsets) and a fenced marker; a follower records what its leader
        wrote, so that it can take over deduplication and has the same LSO if it becomes leader."""
        with self.producer_state_lock:
            return self._append_and_update_producer_state(log_, records, assign_offsets, is_from_client)

    def _append_and_update_producer_state(
        self,
        log_: Log,
        records: MemoryRecords,
        assign_offsets: bool,
        is_from_client: bool,
        verification_guard: object | None = None,
        verification_required: bool = False,
    ) -> LogAppendInfo:
        batches = scan_producer_batches(records.buffer())
        if batches and assign_offsets:
            duplicate = self.producer_state.check(
                list(batches.values()), is_from_client, verification_guard, verification_required
            )
            if duplicate is not None:  # a retry of a batch already written: answer, write nothing
                return LogAppendInfo(
                    duplicate.first_offset, duplicate.last_offset, duplicate.timestamp, duplicate.last_offset,
                    -1, None, 0, 0,
                )  # fmt: skip
        segment_before = log_.active_segment.base_offset
        info = log_.append(
            records,
            assign_offsets=assign_offsets,
            leader_epoch=self.leader_epoch,
            is_from_client=is_from_client,
        )
        if log_.active_segment.base_offset != segment_before and self.producer_state.producers:
            # The log rolled: snapshot the producer state as of the new segment's start, as Kafka
            # 0.11 does on every roll, so a restart replays at most one segment's batch headers.
            self.producer_state.take_snapshot(log_.active_segment.base_offset)
        if batches:
            appended = []
            if assign_offsets:
                offset = info.first_offset
                for position, last_delta, _ in info.batch_spans:
                    batch = batches.get(position)
                    if batch is not None:
                        appended.append(replace(batch, first_offset=offset, last_offset=offset + last_delta))
                    offset += last_delta + 1
            else:
                for batch_header in records.batches():
                    batch = batches.get(batch_header.position)
                    if batch is not None:
                        appended.append(
                            replace(
                                batch,
                                first_offset=batch_header.base_offset,
                                last_offset=batch_header.last_offset,
                            )
                        )
            for batch in appended:
                completed = self.producer_state.update(batch)
                if completed is not None:
                    # the transaction index records the LSO just after the marker (Kafka 0.11's
                    # ``completeTxn`` then ``updateTxnIndex``)
                    log_.update_txn_index(completed, self.producer_state.complete_txn(completed))
        return info

    def truncate_to(self, offset: int) -> None:
        """A follower drops what it has at or above ``offset`` (it may not be in its new leader's log)."""
        local = self.get_replica()
        if offset < local.log.log_end_offset:
            log.info(
                "Truncating %s-%d on broker %d to offset %d (log end offset %d)",
                self.topic, self.partition_id, self.local_broker_id, offset, local.log.log_end_offset,
            )  # fmt: skip
        local.log.truncate_to(offset)
        local.high_watermark = min(local.high_watermark, local.log.log_end_offset)
        if self.producer_state is not None:
            with self.producer_state_lock:  # forget the producers' batches cut off
                self.producer_state.load(local.log)

    def truncate_fully_and_start_at(self, offset: int) -> None:
        """A follower whose fetch offset fell below its leader's log start starts afresh there."""
        local = self.get_replica()
        local.log.truncate_fully_and_start_at(offset)
        local.high_watermark = offset
        if self.producer_state is not None:
            with self.producer_state_lock:
                self.producer_state.load(local.log)

    def close(self) -> None:
        """Snapshot the producer state (a clean shutdown); the log manager closes the log."""
        with self.leader_isr_update_lock.write_lock():
            log_ = self.log
            if self.producer_state is not None and log_ is not None and self.producer_state.producers:
                self.producer_state.take_snapshot(log_.log_end_offset)

    def __repr__(self) -> str:
        return (
            f"Partition({self.topic}-{self.partition_id}, leader={self.leader_replica_id}, "
            f"epoch={self.leader_epoch}, isr={self.isr}, replicas={sorted(self.assigned_replica_map)})"
        )
