"""The replica manager: the partitions this broker holds, the produce and fetch paths into them, and
the replication that keeps followers in step with their leaders.

Mirrors: kafka.server.ReplicaManager (core/src/main/scala/kafka/server/ReplicaManager.scala, Kafka 0.10.1):
         appendMessages, fetchMessages/readFromLocalLog, updateFollowerLogReadResults,
         becomeLeaderOrFollower/makeLeaders/makeFollowers, stopReplicas, maybeShrinkIsr,
         maybePropagateIsrChanges, checkpointHighWatermarks; 0.11's deleteRecords (KIP-107);
         0.10.1.1's shouldLeaderThrottle (the replication throttle, KIP-73)
Book:    chapter 6, 6.2.1 (the replica manager), 6.3 (DelayedProduce, DelayedFetch); chapter 7, 7.2
         (LeaderAndIsr, StopReplica), 7.2.1 (creating the partitions a LeaderAndIsr names), 7.1.6
         (a reassignment's throttled replication)
Differs: the ISR check runs every half of ``replica.lag.time.max.ms`` (Kafka 0.11; 0.10.1 every
         whole one); a partition the cluster has but this broker does not host is answered
         NOT_LEADER_FOR_PARTITION (Kafka 2.0; 0.10.1 said UNKNOWN_TOPIC_OR_PARTITION); a follower's
         fetch completes waiting produces only through the HW it moves (0.10.1 also re-checked them
         after every partition of it); OffsetsForLeaderEpoch is 0.11's (KIP-101); ISR changes are
         counted in ``metrics``, with no meters or gauges. Fetch's isolation level, the LSO and the
         aborted transactions, and appends not from a client, are Kafka 0.11's (KIP-98); the
         verification before a transactional write is Kafka 3.6's (KIP-890 part 1, its helpers
         named ``kafka_3_6_*``).

Errors are per partition, as Kafka returns them: a produce to a partition this broker does not lead
gets NOT_LEADER_FOR_PARTITION (the client refreshes its metadata and retries at the right broker),
an unknown one UNKNOWN_TOPIC_OR_PARTITION, a fetch past the end OFFSET_OUT_OF_RANGE.

Replication in one paragraph: the controller's LeaderAndIsr makes this broker leader or follower of
each partition. A follower truncates what its new leader may not have, then its fetcher thread
fetches from the leader like a consumer, with ``replica_id`` set to its broker id. The leader answers
followers up to its LEO and consumers only up to the HW; each follower fetch tells the leader the
follower's LEO (``update_follower_log_read_results``), which may add it to the ISR and move the HW,
which completes the acks=all produces waiting for it (``DelayedProduce``) and the consumer fetches
waiting for committed data. A scheduled task drops followers that stopped catching up.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from kafka_lite.common.errors import (
    ApiException,
    Errors,
    IllegalStateException,
    InvalidTopicException,
    KafkaException,
    NotLeaderForPartitionException,
    OffsetOutOfRangeException,
    ReplicaNotAvailableException,
    UnknownTopicOrPartitionException,
)
from kafka_lite.common.protocol.fetch_request import DEBUGGING_CONSUMER_ID, READ_COMMITTED, READ_UNCOMMITTED
from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.record.file_records import FileRecords
from kafka_lite.common.time import Time
from kafka_lite.common.topic import TRANSACTION_STATE_TOPIC_NAME, is_internal, validate_topic_name
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.log.checkpoint import read_checkpoint, write_checkpoint
from kafka_lite.log.epoch.leader_epoch_file_cache import UNDEFINED_EPOCH_OFFSET
from kafka_lite.log.log import Log
from kafka_lite.log.log_config import LogConfig
from kafka_lite.log.log_manager import LogManager
from kafka_lite.log.log_segment import LogOffsetMetadata
from kafka_lite.log.producer_state_manager import scan_producer_batches
from kafka_lite.metadata.leader_constants import NO_LEADER
from kafka_lite.server.delayed_delete_records import (
    INVALID_LOW_WATERMARK,
    DelayedDeleteRecords,
    DeleteRecordsPartitionResult,
    DeleteRecordsPartitionStatus,
)
from kafka_lite.server.delayed_fetch import DelayedFetch
from kafka_lite.server.delayed_produce import DelayedProduce, ProducePartitionStatus
from kafka_lite.server.kafka_config import KafkaConfig
from kafka_lite.server.metadata_cache import MetadataCache
from kafka_lite.server.partition import Partition
from kafka_lite.server.replica_fetcher_manager import BrokerAndInitialOffset, ReplicaFetcherManager
from kafka_lite.server.replication_quota_manager import UNBOUNDED_QUOTA, ReplicaQuota, ReplicationQuotaManager
from kafka_lite.utils.delayed_operation import DelayedOperationPurgatory
from kafka_lite.utils.scheduler import Scheduler
from kafka_lite.zk.zk_utils import LeaderAndIsr, ZkUtils

if TYPE_CHECKING:
    from kafka_lite.metadata.image import MetadataImage, PartitionInfo, TopicsDelta
    from kafka_lite.server.add_partitions_to_txn_manager import AddPartitionsToTxnManager
    from kafka_lite.server.alter_partition_manager import AlterPartitionManager

log = logging.getLogger(__name__)

HIGH_WATERMARK_FILENAME = "replication-offset-checkpoint"
# Kafka's: announce ISR changes at most this often while they keep coming, and at least this often
ISR_CHANGE_PROPAGATION_BLACKOUT_MS = 5000
ISR_CHANGE_PROPAGATION_INTERVAL_MS = 60000
ISR_CHANGE_PROPAGATION_CHECK_MS = 2500


@dataclass
class PartitionResponse:
    error: Errors
    base_offset: int = -1
    log_append_time: int = -1
    message: str | None = None
    last_offset: int = -1  # not sent: where the HW must reach for an acks=-1 answer


@dataclass
class FetchPartitionRequest:
    offset: int
    max_bytes: int
    log_start_offset: int = -1  # a follower's own (Fetch v5, KIP-107); -1 from consumers


@dataclass
class FetchMetadata:
    """One Fetch request, as the replica manager and its DelayedFetch see it."""

    min_bytes: int
    max_bytes: int
    replica_id: int
    partitions: dict[TopicPartition, FetchPartitionRequest]
    max_wait_ms: int = 0
    isolation_level: int = READ_UNCOMMITTED  # Fetch v4+ (Kafka 0.11)

    @property
    def fetch_only_from_leader(self) -> bool:
        return self.replica_id != DEBUGGING_CONSUMER_ID

    @property
    def fetch_only_committed(self) -> bool:
        """Consumers read below the HW only; followers (broker ids) read up to the LEO."""
        return self.replica_id < 0

    @property
    def is_from_follower(self) -> bool:
        return self.replica_id >= 0

    @property
    def read_committed(self) -> bool:
        """A consumer that reads only below the LSO; a follower always reads uncommitted data."""
        return self.fetch_only_committed and self.isolation_level == READ_COMMITTED


@dataclass
class LogReadResult:
    """What a read found in one partition (Kafka's ``LogReadResult``)."""

    error: Errors
    high_watermark: int = -1
    log_start_offset: int = -1
    records: FileRecords | MemoryRecords | None = None
    fetch_offset: int = -1
    leader_log_end_offset: int = -1  # the leader's LEO when the read began
    fetch_time_ms: int = -1
    # Where the read started, with its segment and position: a DelayedFetch counts from there.
    fetch_offset_metadata: LogOffsetMetadata | None = None
    follower_log_start_offset: int = -1  # what the fetching follower said its log start is
    # read_committed only (Kafka 0.11): the LSO, and the aborted transactions in the records read
    last_stable_offset: int = -1
    aborted_transactions: list | None = None

    @property
    def size(self) -> int:
        return self.records.size_in_bytes() if self.records is not None else 0


@dataclass
class _IsrChanges:
    partitions: set[TopicPartition] = field(default_factory=set)
    last_change_ms: int = 0
    last_propagation_ms: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


class ReplicaManager:
    def __init__(
        self,
        config: KafkaConfig,
        time: Time,
        zk_utils: ZkUtils | None,
        scheduler: Scheduler,
        log_manager: LogManager,
        topic_config_lookup: Callable[[str], dict],
        metadata_cache: MetadataCache | None = None,
        delayed_produce_purgatory: DelayedOperationPurgatory | None = None,
        delayed_fetch_purgatory: DelayedOperationPurgatory | None = None,
        delayed_delete_records_purgatory: DelayedOperationPurgatory | None = None,
        *,
        quota_manager: ReplicationQuotaManager,
        alter_partition_manager: AlterPartitionManager | None = None,
        add_partitions_to_txn_manager_factory: Callable[[], AddPartitionsToTxnManager] | None = None,
    ) -> None:
        """``zk_utils`` None keeps ISR changes on this broker alone, and the purgatories may be given
        (with a ``MockTimer``), as in Kafka: for notebooks and unit tests. ``quota_manager`` is the
        follower side of the replication throttle, which the fetcher threads obey.
        ``alter_partition_manager``: a KRaft broker's; a leader's ISR changes then go to the
        controller as AlterPartition requests instead of into ZooKeeper (chapter 12)."""
        self.config = config
        self.broker_id = config.broker_id
        self.time = time
        self.zk_utils = zk_utils
        self.scheduler = scheduler
        self.log_manager = log_manager
        self.topic_config_lookup = topic_config_lookup
        self.metadata_cache = metadata_cache
        self.quota_manager = quota_manager
        self.alter_partition_manager = alter_partition_manager
        # who asks the coordinators (kafka_3_6_update_transaction_verification), made the first time the setting is
        # on (statically or dynamically), so a broker of Kafka 0.11's protocol runs no thread for it
        self._add_partitions_to_txn_manager_factory = add_partitions_to_txn_manager_factory
        self.add_partitions_to_txn_manager: AddPartitionsToTxnManager | None = None
        self.transaction_partition_verification_enable = False
        self.is_in_controlled_shutdown = False  # KRaft: set by begin_controlled_shutdown
        self.controller_epoch = -1
        self._partitions: dict[TopicPartition, Partition] = {}
        self._replica_state_change_lock = threading.RLock()
        self.kafka_3_6_update_transaction_verification(None)
        self.replica_fetcher_manager = self.create_replica_fetcher_manager()
        self._hw_thread_initialized = False
        self._isr_changes = _IsrChanges()
        self.metrics: Counter[str] = Counter()
        self.delayed_produce_purgatory = delayed_produce_purgatory or DelayedOperationPurgatory(
            "Produce", time, broker_id=self.broker_id
        )
        self.delayed_fetch_purgatory = delayed_fetch_purgatory or DelayedOperationPurgatory(
            "Fetch", time, broker_id=self.broker_id
        )
        self.delayed_delete_records_purgatory = delayed_delete_records_purgatory or DelayedOperationPurgatory(
            "DeleteRecords", time, broker_id=self.broker_id
        )

    def create_replica_fetcher_manager(self) -> ReplicaFetcherManager:
        """The followers' fetchers (Kafka's ``createReplicaFetcherManager``, which tests override to
        play the fetchers themselves)."""
        return ReplicaFetcherManager(self.config, self, self.time, self.quota_manager)

    def startup(self) -> None:
        """The ISR's two periodic tasks: expire laggards, and announce changes to the controller."""
        lag_ms = self.config["replica.lag.time.max.ms"]
        self.scheduler.schedule(
            "isr-expiration", self.maybe_shrink_isr, delay_ms=lag_ms // 2, period_ms=lag_ms // 2
        )
        self.scheduler.schedule(
            "isr-change-propagation", self.maybe_propagate_isr_changes,
            delay_ms=ISR_CHANGE_PROPAGATION_CHECK_MS, period_ms=ISR_CHANGE_PROPAGATION_CHECK_MS,
        )  # fmt: skip

    # -- partitions ----------------------------------------------------------------------------------------

    def get_partition(self, tp: TopicPartition) -> Partition | None:
        return self._partitions.get(tp)

    def active_producer_state(self, tp: TopicPartition) -> dict:
        """DescribeProducers' answer for ``tp`` from this broker's replica, leader or follower (Kafka
        3.0's ``activeProducerState``, KIP-664)."""
        partition = self.get_partition(tp)
        error, producers = Errors.NONE, []
        if partition is None or partition.producer_state is None:
            known = self.metadata_cache is not None and self.metadata_cache.partition_state(*tp) is not None
            error = Errors.NOT_LEADER_FOR_PARTITION if known else Errors.UNKNOWN_TOPIC_OR_PARTITION
        else:
            producers = partition.producer_state.active_producers()
        return {
            "partition_index": tp[1],
            "error_code": error.code,
            "error_message": None,
            "active_producers": producers,
        }

    def get_or_create_partition(self, tp: TopicPartition) -> Partition:
        with self._replica_state_change_lock:
            partition = self._partitions.get(tp)
            if partition is None:
                partition = Partition(tp[0], tp[1], self.time, self)
                self._partitions[tp] = partition
            return partition

    def get_leader_partition(self, tp: TopicPartition) -> Partition:
        """The partition ``tp``, if this broker hosts it. If not, Kafka 2.0's answer: a partition the
        cluster has but this broker does not host is "not the leader" (NOT_LEADER_FOR_PARTITION),
        the precise answer that sends the client to the right broker; 0.10 to 1.1 answer
        UNKNOWN_TOPIC_OR_PARTITION."""
        partition = self._partitions.get(tp)
        if partition is None or partition.log is None:
            state = self.metadata_cache.partition_state(*tp) if self.metadata_cache is not None else None
            if state is not None:
                raise NotLeaderForPartitionException(
                    f"Broker {self.broker_id} does not host {tp[0]}-{tp[1]}; its leader is broker {state.leader}"
                )
            raise UnknownTopicOrPartitionException(
                f"This server does not host this topic-partition: {tp[0]}-{tp[1]}"
            )
        if not partition.is_leader():
            raise NotLeaderForPartitionException(
                f"Leader not local for partition {tp[0]}-{tp[1]} on broker {self.broker_id}"
            )
        return partition

    def get_replica_partition(self, tp: TopicPartition) -> Partition:
        """The partition if this broker holds a replica of it, leader or follower (Kafka's
        ``getReplicaOrException``): what a debugging consumer may read (see ``FetchMetadata``)."""
        partition = self._partitions.get(tp)
        if partition is None or partition.log is None:
            raise ReplicaNotAvailableException(
                f"Replica {self.broker_id} is not available for partition {tp[0]}-{tp[1]}"
            )
        return partition

    def log_config(self, topic: str) -> LogConfig:
        """The topic's settings over the broker's, as ZooKeeper has them now."""
        return LogConfig.from_broker(self.config.log_config_props(), self.topic_config_lookup(topic))

    def create_log(self, tp: TopicPartition) -> Log:
        """The local log of ``tp``, opened or created with the topic's settings over the broker's."""
        return self.log_manager.create_log(tp, self.log_config(tp[0]))

    # -- LeaderAndIsr ------------------------------------------------------------------------------------------

    # --8<-- [start:become_leader_or_follower]
    def become_leader_or_follower(
        self,
        body: dict,
        on_leadership_change: Callable[[list[Partition], list[Partition]], None] | None = None,
    ) -> tuple[Errors, dict[TopicPartition, Errors]]:
        """Apply a LeaderAndIsr request from the controller; return the request's and each partition's error.

        ``on_leadership_change(new_leaders, new_followers)`` hears, still under the state change lock
        (so that leadership changes reach it in order), which partitions this broker began to lead
        and which it began to follow: the group coordinator loads and unloads the groups of
        ``__consumer_offsets`` partitions there (Kafka's ``onLeadershipChange``)."""
        with self._replica_state_change_lock:
            if body["controller_epoch"] < self.controller_epoch:
                log.warning(
                    "Ignoring LeaderAndIsr from controller %d with epoch %d: the latest known epoch is %d",
                    body["controller_id"], body["controller_epoch"], self.controller_epoch,
                )  # fmt: skip
                return Errors.STALE_CONTROLLER_EPOCH, {}
            self.controller_epoch = body["controller_epoch"]
            errors: dict[TopicPartition, Errors] = {}
            to_lead, to_follow = {}, {}
            for state in body["partition_states"]:
                tp = (state["topic"], state["partition"])
                try:
                    validate_topic_name(tp[0])
                    if tp[1] < 0:
                        raise UnknownTopicOrPartitionException(f"partition {tp[1]} cannot exist")
                    partition = self.get_or_create_partition(tp)
                    partition.get_or_create_replica()  # the local log, opened or created
                except ApiException as e:
                    errors[tp] = Errors.for_exception(e)
                    continue
                except (KafkaException, OSError) as e:  # the log directory could not be made or loaded
                    log.warning("Cannot create the log of %s-%d: %s", tp[0], tp[1], e)
                    errors[tp] = Errors.UNKNOWN
                    continue
                if state["leader_epoch"] <= partition.leader_epoch and partition.leader_epoch >= 0:
                    errors[tp] = Errors.STALE_CONTROLLER_EPOCH  # an older (or repeated) decision
                    continue
                if self.broker_id not in state["replicas"]:
                    errors[tp] = Errors.UNKNOWN_TOPIC_OR_PARTITION
                    continue
                (to_lead if state["leader"] == self.broker_id else to_follow)[tp] = (partition, state)
                errors[tp] = Errors.NONE
            new_leaders = self.make_leaders(to_lead, body["controller_epoch"]) if to_lead else []
            new_followers = []
            if to_follow:
                leaders = {b["id"]: b for b in body.get("live_leaders", [])}
                new_followers = self.make_followers(to_follow, body["controller_epoch"], leaders)
            self._maybe_start_high_watermark_checkpoint()
            self.replica_fetcher_manager.shutdown_idle_fetcher_threads()
            if on_leadership_change is not None:
                on_leadership_change(new_leaders, new_followers)
            return Errors.NONE, errors

    # --8<-- [end:become_leader_or_follower]

    # --8<-- [start:make_leaders]
    def make_leaders(
        self, partitions: dict[TopicPartition, tuple[Partition, dict]], controller_epoch: int
    ) -> list[Partition]:
        """Stop fetching these partitions, then lead them (``Partition.make_leader``); return those
        whose leadership changed hands to this broker."""
        self.replica_fetcher_manager.remove_fetcher_for_partitions(set(partitions))
        return [
            partition
            for partition, state in partitions.values()
            if partition.make_leader(state, controller_epoch)
        ]

    def make_followers(
        self,
        partitions: dict[TopicPartition, tuple[Partition, dict]],
        controller_epoch: int,
        live_leaders: dict[int, dict],
    ) -> list[Partition]:
        """Follow the new leaders: stop the old fetchers, answer the requests waiting here, and hand the
        partitions to fetchers for the new leaders. Each starts by truncating what the new leader may
        not have (``ReplicaFetcherThread.maybe_truncate``), then fetches from there. Return the
        partitions whose leader changed."""
        to_fetch: dict[TopicPartition, Partition] = {}
        new_followers: list[Partition] = []
        for tp, (partition, state) in partitions.items():
            if state["leader"] in live_leaders:
                if partition.make_follower(state, controller_epoch):
                    to_fetch[tp] = partition
                    new_followers.append(partition)
            else:
                # The leader is not alive (a new controller sends the state it found in ZooKeeper
                # before it has elected live leaders): leave the partition as it is, its replica
                # created, and wait for the LeaderAndIsr that names a live leader. Taking the dead
                # leader's name here would make that one, when it names the same broker once it is
                # back, look like no change, and no fetcher would ever start.
                log.warning(
                    "Broker %d cannot follow %s-%d: its leader %d is not alive",
                    self.broker_id,
                    *tp,
                    state["leader"],
                )
        self.replica_fetcher_manager.remove_fetcher_for_partitions(set(to_fetch))
        for tp in partitions:
            # produces waiting for acks here, and fetches, learn that this broker leads no more
            self.try_complete_delayed_produce(tp)
            self.try_complete_delayed_fetch(tp)
        self.replica_fetcher_manager.add_fetcher_for_partitions(
            {
                tp: BrokerAndInitialOffset(
                    partition.leader_replica_id,
                    live_leaders[partition.leader_replica_id]["host"],
                    live_leaders[partition.leader_replica_id]["port"],
                    partition.high_watermark(),
                )
                for tp, partition in to_fetch.items()
            }
        )
        return new_followers

    # --8<-- [end:make_leaders]

    # -- the metadata log (KRaft, chapter 12) -------------------------------------------------------------------

    # --8<-- [start:apply_delta]
    def apply_delta(self, delta: TopicsDelta, new_image: MetadataImage) -> None:
        """Apply a KRaft topics delta (Kafka 3.3's ``applyDelta``): what a LeaderAndIsr or a
        StopReplica request told a ZooKeeper broker, read from the metadata log instead.

        Deletes go first, since the same delta may create a topic of the same name again; then the
        partitions this broker now leads, then those it follows. There is no controller epoch to
        check: the metadata log is one ordered history, so no decision arrives out of order."""
        # Before taking the lock, compute the local changes
        local_changes = delta.local_changes(self.broker_id)
        with self._replica_state_change_lock:
            if local_changes.deletes:
                log.info("Deleting %d partition(s).", len(local_changes.deletes))
                self._stop_partitions(local_changes.deletes, delete=True)
            if local_changes.leaders or local_changes.followers:
                if local_changes.leaders:
                    self._apply_local_leaders_delta(local_changes.leaders)
                if local_changes.followers:
                    self._apply_local_followers_delta(new_image, local_changes.followers)
                self._maybe_start_high_watermark_checkpoint()
                self.replica_fetcher_manager.shutdown_idle_fetcher_threads()

    def _apply_local_leaders_delta(self, local_leaders: dict[TopicPartition, PartitionInfo]) -> None:
        """Stop fetching, then lead with the registration's leader epoch, ISR and partition epoch
        (the log created if this broker has none yet)."""
        log.info("Transitioning %d partition(s) to local leaders.", len(local_leaders))
        self.replica_fetcher_manager.remove_fetcher_for_partitions(set(local_leaders))
        for tp, info in local_leaders.items():
            partition = self._get_or_create_partition_for_delta(tp, info)
            partition.make_leader(info.partition.to_leader_and_isr_partition_state(tp), controller_epoch=-1)

    def _apply_local_followers_delta(
        self, new_image: MetadataImage, local_followers: dict[TopicPartition, PartitionInfo]
    ) -> None:
        """Kafka 3.3's ``applyLocalFollowersDelta``, for a KRaft broker (chapter 12). Follow every
        partition named (so a replica with no leader steps down, and its HW is checkpointed); restart the fetcher of those whose leader epoch moved, from the leader's
        address on the inter-broker listener as the image has it. The fetcher truncates first
        (``ReplicaFetcherThread.maybe_truncate``), as after a LeaderAndIsr."""
        log.info("Transitioning %d partition(s) to local followers.", len(local_followers))
        to_start_fetching: dict[TopicPartition, Partition] = {}
        to_stop_fetching: set[TopicPartition] = set()
        for tp, info in local_followers.items():
            partition = self._get_or_create_partition_for_delta(tp, info)
            # 3.3's makeFollower answers "is this a new leader epoch"; kafka_lite's answers "is this a
            # new leader", so the epoch is compared here, before the state changes.
            is_new_leader_epoch = info.partition.leader_epoch != partition.leader_epoch
            partition.make_follower(info.partition.to_leader_and_isr_partition_state(tp), controller_epoch=-1)
            if self.is_in_controlled_shutdown and (
                info.partition.leader == NO_LEADER or self.broker_id not in info.partition.isr
            ):
                # A broker shutting down stops fetching what it could not help keep: a partition
                # with no leader, or one whose ISR the controller has already taken it out of.
                to_stop_fetching.add(tp)
            elif is_new_leader_epoch:
                to_start_fetching[tp] = partition
        if to_stop_fetching:
            self._stop_partitions(to_stop_fetching, delete=False)
            log.info(
                "Stopped fetchers as part of controlled shutdown for %d partitions", len(to_stop_fetching)
            )
        if not to_start_fetching:
            return
        # Stopping the fetchers first, so that each starts again from the right position.
        self.replica_fetcher_manager.remove_fetcher_for_partitions(set(to_start_fetching))
        listener_name = self.config.inter_broker_listener_name
        partition_and_offsets = {}
        for tp, partition in to_start_fetching.items():
            leader = new_image.cluster.broker(partition.leader_replica_id)
            node = leader.node(listener_name) if leader is not None else None
            if node is None:
                log.info(
                    "Unable to start fetching %s-%d from leader %d: it is not alive",
                    *tp,
                    partition.leader_replica_id,
                )
                continue
            partition_and_offsets[tp] = BrokerAndInitialOffset(
                node.id, node.host, node.port, partition.high_watermark()
            )
        self.replica_fetcher_manager.add_fetcher_for_partitions(partition_and_offsets)
        for tp in to_start_fetching:
            # produces waiting for acks here, and fetches, learn that this broker leads no more
            self.try_complete_delayed_produce(tp)
            self.try_complete_delayed_fetch(tp)

    def _get_or_create_partition_for_delta(self, tp: TopicPartition, info: PartitionInfo) -> Partition:
        """The partition with its local log, opened or created. A partition of the same name but
        another topic id is a broken history: the delete of the old topic would have come first."""
        partition = self._partitions.get(tp)
        if partition is not None and partition.topic_id not in (None, info.topic_id):
            raise IllegalStateException(
                f"Topic {tp[0]}-{tp[1]} exists, but its ID is {partition.topic_id}, not {info.topic_id} as expected"
            )
        partition = self.get_or_create_partition(tp)
        partition.topic_id = info.topic_id
        partition.get_or_create_replica()
        return partition

    def _stop_partitions(self, tps: set[TopicPartition], delete: bool) -> None:
        """Kafka 3.3's ``stopPartitions``: no more fetching; with ``delete``, the partitions
        forgotten and their logs deleted. The requests waiting on them are answered."""
        self.replica_fetcher_manager.remove_fetcher_for_partitions(set(tps))
        for tp in sorted(tps):
            if delete:
                partition = self._partitions.pop(tp, None)
                if partition is not None:
                    partition.close()
                self.log_manager.delete_log(tp)
            self.try_complete_delayed_fetch(tp)
            self.try_complete_delayed_produce(tp)

    def begin_controlled_shutdown(self) -> None:
        """The broker has begun a controlled shutdown (Kafka 3.3's ``beginControlledShutdown``):
        from now on ``apply_delta`` stops the fetchers of followed partitions this broker cannot
        help, rather than starting them."""
        self.is_in_controlled_shutdown = True

    def delete_stray_replicas(self, tps: list[TopicPartition]) -> None:
        """Delete the logs the metadata image says this broker should not have (Kafka 3.3's
        ``deleteStrayReplicas``, called on the first publish after a restart)."""
        with self._replica_state_change_lock:
            self._stop_partitions(set(tps), delete=True)

    def _maybe_start_high_watermark_checkpoint(self) -> None:
        """The HW checkpoint starts once there are partitions whose HW means something."""
        if not self._hw_thread_initialized:
            self.scheduler.schedule(
                "highwatermark-checkpoint", self.checkpoint_high_watermarks,
                delay_ms=self.config["replica.high.watermark.checkpoint.interval.ms"],
                period_ms=self.config["replica.high.watermark.checkpoint.interval.ms"],
            )  # fmt: skip
            self._hw_thread_initialized = True

    # --8<-- [end:apply_delta]

    def maybe_update_metadata_cache(
        self, body: dict, version: int, metadata_cache: MetadataCache
    ) -> tuple[Errors, list[TopicPartition]]:
        """Apply an UpdateMetadata request unless it comes from an older controller than the newest
        this broker has heard from (Kafka's ``maybeUpdateMetadataCache``). One epoch, under the same
        lock, for LeaderAndIsr, StopReplica and UpdateMetadata: once a new controller has spoken
        through any of them, the old one changes nothing here. Returns the error (where Kafka
        throws ControllerMovedException) and the partitions the request deleted from the cache
        (Kafka 0.10.2 returns them, for the group coordinator)."""
        with self._replica_state_change_lock:
            if body["controller_epoch"] < self.controller_epoch:
                log.warning(
                    "Broker %d received UpdateMetadata from an old controller %d with epoch %d. "
                    "Latest known controller epoch is %d",
                    self.broker_id, body["controller_id"], body["controller_epoch"], self.controller_epoch,
                )  # fmt: skip
                return Errors.STALE_CONTROLLER_EPOCH, []
            deleted_partitions = metadata_cache.update_cache(
                body["controller_id"], body["controller_epoch"], body, version
            )
            self.controller_epoch = body["controller_epoch"]
            return Errors.NONE, deleted_partitions

    def stop_replicas(self, body: dict) -> tuple[Errors, dict[TopicPartition, Errors]]:
        with self._replica_state_change_lock:
            if body["controller_epoch"] < self.controller_epoch:
                log.warning(
                    "Ignoring StopReplica from controller %d with epoch %d: the latest known epoch is %d",
                    body["controller_id"], body["controller_epoch"], self.controller_epoch,
                )  # fmt: skip
                return Errors.STALE_CONTROLLER_EPOCH, {}
            self.controller_epoch = body["controller_epoch"]
            tps = {(p["topic"], p["partition"]) for p in body["partitions"]}
            self.replica_fetcher_manager.remove_fetcher_for_partitions(tps)
            errors = {}
            for tp in sorted(tps):
                partition = (
                    self._partitions.pop(tp, None) if body["delete_partitions"] else self._partitions.get(tp)
                )
                if partition is not None and not body["delete_partitions"]:
                    partition.leader_replica_id = LeaderAndIsr.NO_LEADER
                if body["delete_partitions"]:
                    self.log_manager.delete_log(tp)
                self.try_complete_delayed_fetch(tp)
                self.try_complete_delayed_produce(tp)
                errors[tp] = Errors.NONE
            return Errors.NONE, errors

    # -- the ISR -----------------------------------------------------------------------------------------------

    def maybe_shrink_isr(self) -> None:
        for partition in list(self._partitions.values()):
            partition.maybe_shrink_isr(self.config["replica.lag.time.max.ms"])

    def update_leader_and_isr(
        self, tp: TopicPartition, leader_and_isr: LeaderAndIsr, controller_epoch: int
    ) -> tuple[bool, int]:
        """Write a partition's new ISR to ZooKeeper, if its version is still ``leader_and_isr.zk_version``."""
        if self.zk_utils is None:
            return True, leader_and_isr.zk_version + 1
        return self.zk_utils.update_leader_and_isr(tp[0], tp[1], leader_and_isr, controller_epoch)

    def record_isr_change(self, tp: TopicPartition) -> None:
        changes = self._isr_changes
        with changes.lock:
            changes.partitions.add(tp)
            changes.last_change_ms = self.time.milliseconds()

    # --8<-- [start:maybe_propagate_isr_changes]
    def maybe_propagate_isr_changes(self) -> None:
        """Tell the controller which partitions' ISR changed, through ZooKeeper, in batches: once no
        change has come for 5 s, or at least every 60 s while they keep coming. A cluster-wide event
        (a broker restarting) changes thousands of ISRs at once; one notification for them all spares
        the controller thousands of UpdateMetadata rounds."""
        now = self.time.milliseconds()
        changes = self._isr_changes
        with changes.lock:
            if changes.partitions and (
                changes.last_change_ms + ISR_CHANGE_PROPAGATION_BLACKOUT_MS < now
                or changes.last_propagation_ms + ISR_CHANGE_PROPAGATION_INTERVAL_MS < now
            ):
                if self.zk_utils is not None:
                    self.zk_utils.propagate_isr_changes(set(changes.partitions))
                changes.partitions.clear()
                changes.last_propagation_ms = now

    # --8<-- [end:maybe_propagate_isr_changes]

    # -- high watermark checkpoints ------------------------------------------------------------------------------

    def checkpointed_high_watermark(self, log_: Log, tp: TopicPartition) -> int:
        """The HW of ``tp`` in its log directory's checkpoint file; 0 if it has none."""
        try:
            return read_checkpoint(log_.dir.parent / HIGH_WATERMARK_FILENAME).get(tp, 0)
        except KafkaException as e:
            log.warning("Ignoring the high watermark checkpoint: %s", e)
            return 0

    # --8<-- [start:checkpoint_high_watermarks]
    def checkpoint_high_watermarks(self) -> None:
        """Write every local replica's HW to ``replication-offset-checkpoint`` in its log directory.

        A restarted broker starts each replica's HW from here: without it a follower would restart
        at HW 0 and, becoming follower again, truncate its whole log."""
        by_dir: dict[Path, dict[TopicPartition, int]] = {}
        for tp, partition in list(self._partitions.items()):
            replica = partition.get_replica()
            if replica is not None and replica.log is not None:
                by_dir.setdefault(replica.log.dir.parent, {})[tp] = replica.high_watermark
        for directory, offsets in by_dir.items():
            try:
                write_checkpoint(directory / HIGH_WATERMARK_FILENAME, offsets)
            except OSError as e:
                log.error("Error writing to the high watermark file %s: %s", directory, e)

    # --8<-- [end:checkpoint_high_watermarks]

    # -- produce --------------------------------------------------------------------------------------------

    # --8<-- [start:append_records]
    def append_records(
        self,
        timeout_ms: int,
        required_acks: int,
        internal_topics_allowed: bool,
        entries: dict[TopicPartition, MemoryRecords],
        response_callback: Callable[[dict[TopicPartition, PartitionResponse]], None],
        is_from_client: bool = True,
        transactional_id: str | None = None,
        transaction_state_partition: int | None = None,
    ) -> None:
        """Append to each partition this broker leads, then answer: at once, or for acks=-1 once every
        in-sync replica has the records (a ``DelayedProduce`` waits for the HW to reach them).
        ``is_from_client=False``: the broker's transaction markers (Kafka 0.11).
        ``transactional_id`` and its ``__transaction_state`` partition: a transactional producer's
        Produce, whose first write to a partition is verified first when KIP-890 part 1 is on."""
        if transaction_state_partition is not None and self.kafka_3_6_transaction_verification_enabled():
            self._kafka_3_6_verify_then_append(
                timeout_ms, required_acks, internal_topics_allowed, entries, response_callback,
                transactional_id, transaction_state_partition,
            )  # fmt: skip
            return
        self._append_entries(
            timeout_ms, required_acks, internal_topics_allowed, entries, response_callback, is_from_client, {}
        )

    def _append_entries(
        self,
        timeout_ms: int,
        required_acks: int,
        internal_topics_allowed: bool,
        entries: dict[TopicPartition, MemoryRecords],
        response_callback: Callable[[dict[TopicPartition, PartitionResponse]], None],
        is_from_client: bool,
        verification_guards: dict[TopicPartition, object],
        refused: dict[TopicPartition, PartitionResponse] | None = None,
    ) -> None:
        """Append ``entries`` and answer for them and for the ``refused`` ones (Kafka 3.6's
        ``appendEntries``, called at once or when the verification comes back)."""
        results = self.append_to_local_log(
            internal_topics_allowed, entries, required_acks, is_from_client, verification_guards
        )
        results.update(refused or {})
        if self._delayed_request_required(required_acks, entries, results):
            produce_status = {
                tp: ProducePartitionStatus(response.last_offset + 1, response)
                for tp, response in results.items()
            }
            operation = DelayedProduce(timeout_ms, produce_status, self, response_callback)
            # complete now if the ISR is the leader alone (or every follower is already there)
            self.delayed_produce_purgatory.try_complete_else_watch(operation, list(produce_status))
        else:
            response_callback(results)

    # -- verify, then append ------------------------------------------------------------------------------

    def kafka_3_6_transaction_verification_enabled(self) -> bool:
        """``transaction.partition.verification.enable`` (Kafka 3.6, KIP-890 part 1; Kafka's default
        is true). kafka_lite's default is false: its transactions are Kafka 0.11's, as chapter 10
        reads them, hanging transactions included."""
        return (
            self.transaction_partition_verification_enable and self.add_partitions_to_txn_manager is not None
        )

    def kafka_3_6_update_transaction_verification(self, enabled: bool | None) -> None:
        """The setting changed dynamically (None: back to the broker's own); the sender of the
        verifications is started the first time it is on."""
        if enabled is None:
            enabled = bool(self.config["transaction.partition.verification.enable"])
        with self._replica_state_change_lock:
            if (
                enabled
                and self.add_partitions_to_txn_manager is None
                and self._add_partitions_to_txn_manager_factory
            ):
                self.add_partitions_to_txn_manager = self._add_partitions_to_txn_manager_factory()
            if enabled != self.transaction_partition_verification_enable:
                log.info(
                    "Broker %d: transaction.partition.verification.enable=%s",
                    self.broker_id,
                    str(enabled).lower(),
                )
            self.transaction_partition_verification_enable = enabled

    def _kafka_3_6_verify_then_append(
        self,
        timeout_ms: int,
        required_acks: int,
        internal_topics_allowed: bool,
        entries: dict[TopicPartition, MemoryRecords],
        response_callback: Callable[[dict[TopicPartition, PartitionResponse]], None],
        transactional_id: str | None,
        transaction_state_partition: int,
    ) -> None:
        """Kafka 3.6's ``appendRecords`` with verification: the partitions where this producer has no
        transaction open get a verification guard and a question to the coordinator; the rest, and
        those the coordinator then confirms, are appended (each confirmed one only with its guard
        still current); the others are answered with the coordinator's error, a retriable one where
        the coordinator could not say yet."""
        guards: dict[TopicPartition, object] = {}
        refused: dict[TopicPartition, PartitionResponse] = {}
        unverified: list[TopicPartition] = []
        producer = None
        for tp, records in entries.items():
            transactional = [
                b for b in scan_producer_batches(records.buffer()).values() if b.is_transactional
            ]
            if not transactional:
                continue
            try:
                guard = self.get_leader_partition(tp).kafka_3_6_maybe_start_transaction_verification(
                    transactional[0].producer_id
                )
            except ApiException as e:
                refused[tp] = PartitionResponse(Errors.for_exception(e), message=str(e))
                continue
            if guard is not None:
                guards[tp] = guard
                unverified.append(tp)
                producer = (transactional[0].producer_id, transactional[0].epoch)

        def append_entries(errors: dict[TopicPartition, Errors]) -> None:
            failed = dict(refused)
            for tp, error in errors.items():
                failed[tp] = _unverified_response(error)
            verified = {tp: r for tp, r in entries.items() if tp not in failed}
            self._append_entries(
                timeout_ms,
                required_acks,
                internal_topics_allowed,
                verified,
                response_callback,
                True,
                guards,
                failed,
            )

        if not unverified:
            append_entries({})
            return
        node, error = self._transaction_coordinator(transaction_state_partition)
        if error is not Errors.NONE:
            append_entries(dict.fromkeys(unverified, error))
            return
        self.add_partitions_to_txn_manager.add_txn_data(
            node, transactional_id or "", producer[0], producer[1], unverified, append_entries
        )

    def _transaction_coordinator(self, transaction_state_partition: int) -> tuple[int, Errors]:
        """The broker leading the ``__transaction_state`` partition, as this broker's metadata has it
        (Kafka 3.6's ``getTransactionCoordinator``); COORDINATOR_NOT_AVAILABLE if none is alive."""
        state = self.metadata_cache.partition_state(TRANSACTION_STATE_TOPIC_NAME, transaction_state_partition)
        alive = {b.id for b in self.metadata_cache.alive_brokers()}
        if state is None or state.leader not in alive:
            return -1, Errors.COORDINATOR_NOT_AVAILABLE
        return state.leader, Errors.NONE

    @staticmethod
    def _delayed_request_required(required_acks: int, entries: dict, results: dict) -> bool:
        """Wait only for acks=-1, and only if some partition's append succeeded."""
        return required_acks == -1 and bool(entries) and any(r.error is Errors.NONE for r in results.values())

    def append_to_local_log(
        self,
        internal_topics_allowed: bool,
        entries: dict[TopicPartition, MemoryRecords],
        required_acks: int,
        is_from_client: bool = True,
        verification_guards: dict[TopicPartition, object] | None = None,
    ) -> dict[TopicPartition, PartitionResponse]:
        """An error in one partition leaves the others."""
        results = {}
        verification_required = is_from_client and self.kafka_3_6_transaction_verification_enabled()
        for tp, records in entries.items():
            try:
                if is_internal(tp[0]) and not internal_topics_allowed:
                    raise InvalidTopicException(f"Cannot append to internal topic {tp[0]}")
                partition = self.get_leader_partition(tp)
                info = partition.append_records_to_leader(
                    records,
                    required_acks,
                    is_from_client,
                    (verification_guards or {}).get(tp),
                    verification_required,
                )
                results[tp] = PartitionResponse(
                    Errors.NONE, info.first_offset, info.log_append_time, last_offset=info.last_offset
                )
            except ApiException as e:
                results[tp] = PartitionResponse(Errors.for_exception(e), message=str(e))
            except KafkaException as e:
                log.warning("Error appending to %s-%d: %s", tp[0], tp[1], e)
                results[tp] = PartitionResponse(Errors.for_exception(e), message=str(e))
        return results

    # --8<-- [end:append_records]

    def try_complete_delayed_produce(self, tp: TopicPartition) -> None:
        self.delayed_produce_purgatory.check_and_complete(tp)

    def try_complete_delayed_fetch(self, tp: TopicPartition) -> None:
        self.delayed_fetch_purgatory.check_and_complete(tp)

    def try_complete_delayed_delete_records(self, tp: TopicPartition) -> None:
        self.delayed_delete_records_purgatory.check_and_complete(tp)

    # -- DeleteRecords (Kafka 0.11, KIP-107) ------------------------------------------------------------------

    # --8<-- [start:delete_records]
    def delete_records(
        self,
        timeout_ms: int,
        offset_per_partition: dict[TopicPartition, int],
        response_callback: Callable[[dict[TopicPartition, DeleteRecordsPartitionResult]], None],
    ) -> None:
        """Move each partition's log start offset on the leader, then answer: at once if every
        partition failed, else once each partition's followers have moved theirs too (a
        ``DelayedDeleteRecords`` waits for the low watermark), or at ``timeout_ms``."""
        results = self.delete_records_on_local_log(offset_per_partition)
        status = {
            tp: DeleteRecordsPartitionStatus(requested, result) for tp, (requested, result) in results.items()
        }
        if any(result.error is Errors.NONE for _, result in results.values()):
            operation = DelayedDeleteRecords(timeout_ms, status, self, response_callback)
            # complete now if the leader is the only replica, or the followers are already there
            self.delayed_delete_records_purgatory.try_complete_else_watch(operation, list(status))
        else:
            response_callback({tp: s.response_status for tp, s in status.items()})

    def delete_records_on_local_log(
        self, offset_per_partition: dict[TopicPartition, int]
    ) -> dict[TopicPartition, tuple[int, DeleteRecordsPartitionResult]]:
        """Per partition: (the offset asked for, with -1 read as the high watermark; the leader's
        answer). An error in one partition leaves the others."""
        results = {}
        for tp, requested_offset in offset_per_partition.items():
            try:
                if is_internal(tp[0]):
                    raise InvalidTopicException(f"Cannot delete records of internal topic {tp[0]}")
                partition = self.get_partition(tp)
                if partition is None:
                    raise UnknownTopicOrPartitionException(
                        f"Partition {tp[0]}-{tp[1]} doesn't exist on {self.broker_id}"
                    )
                offset = requested_offset
                if offset == -1:  # DeleteRecordsRequest.HIGH_WATERMARK: everything consumers may read
                    offset = self.get_leader_partition(tp).high_watermark()
                if offset < 0:
                    raise OffsetOutOfRangeException(
                        f"The offset {offset} for partition {tp[0]}-{tp[1]} is not valid"
                    )
                low_watermark = partition.delete_records_on_leader(offset)
                results[tp] = (offset, DeleteRecordsPartitionResult(low_watermark, Errors.NONE))
            except ApiException as e:
                log.info("Error deleting records of %s-%d: %s", tp[0], tp[1], e)
                results[tp] = (
                    -1,
                    DeleteRecordsPartitionResult(INVALID_LOW_WATERMARK, Errors.for_exception(e)),
                )
        return results

    # --8<-- [end:delete_records]

    # -- fetch -------------------------------------------------------------------------------------------------

    # --8<-- [start:fetch_messages]
    def fetch_messages(
        self,
        fetch: FetchMetadata,
        response_callback: Callable[[dict], None],
        quota: ReplicaQuota = UNBOUNDED_QUOTA,
    ) -> None:
        """Read now if there is ``min_bytes`` of data (or no wait allowed); else park a ``DelayedFetch``.

        A follower's fetch also moves its LEO on the leader, which may grow the ISR and move the HW.
        ``response_callback`` gets {tp: LogReadResult}, on this thread or on the one completing it later.
        ``quota``: the leader's replication throttle for a follower's fetch, none for a consumer's.
        """
        results = self.read_from_local_log(fetch, quota)
        if fetch.is_from_follower:
            self.update_follower_log_read_results(fetch.replica_id, results)
        bytes_readable = sum(r.size for r in results.values())
        errors = any(r.error is not Errors.NONE for r in results.values())
        if fetch.max_wait_ms <= 0 or not fetch.partitions or bytes_readable >= fetch.min_bytes or errors:
            response_callback(results)
            return
        start_offsets = {tp: r.fetch_offset_metadata for tp, r in results.items() if r.fetch_offset_metadata}
        operation = DelayedFetch(fetch.max_wait_ms, fetch, start_offsets, self, quota, response_callback)
        self.delayed_fetch_purgatory.try_complete_else_watch(operation, list(fetch.partitions))

    # --8<-- [end:fetch_messages]

    # --8<-- [start:read_from_local_log]
    def read_from_local_log(
        self, fetch: FetchMetadata, quota: ReplicaQuota = UNBOUNDED_QUOTA
    ) -> dict[TopicPartition, LogReadResult]:
        """Read each partition, consumers up to its HW and followers up to its LEO, within the
        partition's and the request's byte limits; the first partition returns at least one whole
        batch even if it is larger (KIP-74), so a big batch can never block a fetcher. A throttled
        partition read for an out-of-sync follower while the leader is over its quota returns no
        records (KIP-73): the follower asks again from the same offset."""
        results = {}
        remaining = fetch.max_bytes
        first = True
        # Decided once for the whole fetch, from who sent it (Kafka's readFromLocalLog takes them as
        # its arguments): a follower fetch names every partition its fetcher follows here.
        fetch_only_from_leader = fetch.fetch_only_from_leader
        fetch_only_committed = fetch.fetch_only_committed
        read_committed = fetch.read_committed
        for tp, request in fetch.partitions.items():
            fetch_time_ms = self.time.milliseconds()
            try:
                if fetch_only_from_leader:
                    partition = self.get_leader_partition(tp)
                else:  # a debugging consumer (replica id -2) may read a follower's replica
                    partition = self.get_replica_partition(tp)
                replica = partition.get_replica()
                hw = replica.high_watermark
                # the LEO before the read: a follower that reads up to it has caught up
                initial_log_end_offset = replica.log_end_offset
                max_offset = hw if fetch_only_committed else None
                lso = partition.last_stable_offset(hw) if read_committed else -1
                if read_committed:
                    max_offset = lso  # read_committed: only what no open transaction may still abort
                limit = max(min(request.max_bytes, remaining), 0)  # a negative max_bytes reads nothing
                info = replica.log.read(request.offset, limit, max_offset=max_offset, min_one_message=first)
                records = info.records
                aborted = (
                    self._aborted_transactions(replica.log, request.offset, records)
                    if read_committed
                    else None
                )
                if self.should_leader_throttle(quota, tp, fetch.replica_id):
                    records = MemoryRecords(b"")
                results[tp] = LogReadResult(
                    Errors.NONE, hw, replica.log.log_start_offset, records,
                    request.offset, initial_log_end_offset, fetch_time_ms, info.fetch_offset_metadata,
                    request.log_start_offset, lso, aborted,
                )  # fmt: skip
                size = records.size_in_bytes()
                remaining = max(remaining - size, 0)
                if size:
                    first = False
            except OffsetOutOfRangeException as e:
                hw, start = self._offsets_of(tp)
                results[tp] = LogReadResult(Errors.for_exception(e), hw, start, fetch_offset=request.offset)
            except ApiException as e:
                results[tp] = LogReadResult(Errors.for_exception(e), fetch_offset=request.offset)
        return results

    # --8<-- [end:read_from_local_log]

    @staticmethod
    def _aborted_transactions(log_: Log, fetch_offset: int, records) -> list:
        """The aborted transactions overlapping the records read (Kafka 0.11's ``addAbortedTransactions``):
        the consumer drops those producers' batches from each one's first offset to its marker.
        Kafka bounds the search by the offset after the fetched bytes; the last fetched batch's end
        is the same bound, found in the headers just read."""
        batches = records.batch_headers() if isinstance(records, FileRecords) else records.batches()
        last = deque(batches, maxlen=1)
        if not last:
            return []
        upper_bound_offset = last[0].last_offset + 1
        return [
            t.as_aborted_transaction()
            for t in log_.collect_aborted_transactions(fetch_offset, upper_bound_offset)
        ]

    # --8<-- [start:should_leader_throttle]
    def should_leader_throttle(self, quota: ReplicaQuota, tp: TopicPartition, replica_id: int) -> bool:
        """Kafka 0.10.1.1's ``shouldLeaderThrottle``: a throttled partition, over the quota, read for
        a follower outside the ISR. A follower in the ISR is never held back: 0.10.1.0 throttled it
        too, and then dropped it from the ISR for lagging."""
        partition = self._partitions.get(tp)
        is_replica_in_sync = partition is not None and replica_id in partition.isr
        return quota.is_throttled(tp) and quota.is_quota_exceeded() and not is_replica_in_sync

    # --8<-- [end:should_leader_throttle]

    # --8<-- [start:update_follower_log_read_results]
    def update_follower_log_read_results(
        self, replica_id: int, results: dict[TopicPartition, LogReadResult]
    ) -> None:
        """The leader learns each follower's LEO from the offsets it fetches from. An acks=all
        produce waiting on a partition completes when the partition's HW passes its records (Kafka
        0.10.1 also checked it here after every partition of every follower fetch, moved or not)."""
        for tp, result in results.items():
            if result.error is not Errors.NONE:
                continue
            partition = self._partitions.get(tp)
            if partition is None:
                continue
            try:
                partition.update_replica_log_read_result(
                    replica_id, result.fetch_offset, result.leader_log_end_offset, result.fetch_time_ms,
                    result.follower_log_start_offset,
                )  # fmt: skip
            except KafkaException as e:
                log.warning("%s", e)

    # --8<-- [end:update_follower_log_read_results]

    def _offsets_of(self, tp: TopicPartition) -> tuple[int, int]:
        partition = self._partitions.get(tp)
        if partition is None or partition.log is None:
            return -1, -1
        return partition.high_watermark(), partition.log.log_start_offset

    def shutdown(self, checkpoint_hw: bool = True) -> None:
        """Stop the fetchers, the verifications' sender and the purgatories; write the HWs one last time."""
        self.replica_fetcher_manager.shutdown()
        if self.add_partitions_to_txn_manager is not None:
            self.add_partitions_to_txn_manager.shutdown()
        self.delayed_fetch_purgatory.shutdown()
        self.delayed_produce_purgatory.shutdown()
        self.delayed_delete_records_purgatory.shutdown()
        if checkpoint_hw:
            self.checkpoint_high_watermarks()
        with self._replica_state_change_lock:
            for partition in self._partitions.values():
                partition.close()

    # -- OffsetsForLeaderEpoch (Kafka 0.11, KIP-101) ----------------------------------------------------------

    def last_offset_for_leader_epoch(
        self, requested: dict[TopicPartition, int]
    ) -> dict[TopicPartition, tuple[Errors, int]]:
        """For each partition, where the requested leader epoch ends in this leader's log.

        Kafka's ``ReplicaManager.lastOffsetForLeaderEpoch`` with ``Partition.lastOffsetForLeaderEpoch``:
        a follower asks its new leader, after a leader change, for the end of its own latest epoch, and
        truncates its log there. Only the leader answers (NOT_LEADER_FOR_PARTITION from any other
        replica, UNKNOWN_TOPIC_OR_PARTITION from a broker without the partition); the answer is the
        start offset of the next epoch the leader knows, the log end offset for the leader's latest
        epoch, or -1 (``UNDEFINED_EPOCH_OFFSET``) for an epoch it does not know.
        """
        result: dict[TopicPartition, tuple[Errors, int]] = {}
        for tp, leader_epoch in requested.items():
            partition = self.get_partition(tp)
            if partition is None or partition.log is None:
                result[tp] = (Errors.UNKNOWN_TOPIC_OR_PARTITION, UNDEFINED_EPOCH_OFFSET)
            elif not partition.is_leader():
                result[tp] = (Errors.NOT_LEADER_FOR_PARTITION, UNDEFINED_EPOCH_OFFSET)
            else:
                result[tp] = (Errors.NONE, partition.log.leader_epoch_cache.end_offset_for(leader_epoch))
        return result


def _unverified_response(error: Errors) -> PartitionResponse:
    """What a producer is told for a partition its coordinator did not confirm (Kafka 3.6): not in the
    transaction is INVALID_TXN_STATE; a coordinator that could not answer yet becomes
    NOT_ENOUGH_REPLICAS, an error every producer of Kafka 0.11 retries."""
    if error is Errors.INVALID_TXN_STATE:
        return PartitionResponse(error, message="Partition was not added to the transaction")
    if error in (
        Errors.CONCURRENT_TRANSACTIONS,
        Errors.COORDINATOR_LOAD_IN_PROGRESS,
        Errors.COORDINATOR_NOT_AVAILABLE,
        Errors.NOT_COORDINATOR,
    ):
        return PartitionResponse(
            Errors.NOT_ENOUGH_REPLICAS,
            message=f"Unable to verify the partition has been added to the transaction. Underlying error: {error.name}",
        )
    return PartitionResponse(error)
