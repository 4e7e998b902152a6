"""A follower's fetcher: one thread that copies a set of partitions from one leader.

Mirrors: kafka.server.AbstractFetcherThread and kafka.server.ReplicaFetcherThread
         (core/src/main/scala/kafka/server/, Kafka 0.10.1; the truncation by leader epoch before
         fetching is 0.11's, KIP-101, and so is the log start offset each fetch carries, KIP-107;
         the replication throttle's in-sync exception is 0.10.1.1's)
Book:    chapter 6, 6.2.2 (the replica fetcher thread); chapter 7, 7.1.6 (the follower's throttle)
Differs: one class where Kafka has the abstract loop and the replica-specific callbacks in two (its
         old consumer's fetcher shared the loop; ours has no other user). The Fetch request goes
         through kafka_lite's own ``NetworkClient`` (chapter 2), sent and awaited the way Kafka's
         ``NetworkClientBlockingOps`` does. A leader behind this follower on a topic without unclean
         election is fatal for the partition, not the process: Kafka halts the broker; kafka_lite
         stops fetching that partition (as Kafka 2.4 marks it failed), because its brokers often
         share a process with a notebook, a test or other brokers. A new LeaderAndIsr adds it back.
         Each partition's lag is a number in ``fetcher_lag`` (Kafka's ``FetcherLagStats`` gauges).

The loop, ``do_work``: build one Fetch request for every partition not backing off, from its fetch
offset (the follower's LEO), with ``replica_id`` set to this broker's id so that the leader reads up to
its LEO and records the follower's progress; send it and wait (the leader holds it up to
``replica.fetch.wait.max.ms`` when there is nothing new); append each partition's batches to the
local log with the leader's offsets (``Partition.append_records_to_follower``), and move the local
HW to the leader's, capped by the local LEO, and the local log start offset to the leader's (Kafka
0.11, KIP-107: what a DeleteRecords deleted on the leader goes here too; the next fetch tells the
leader this replica's log start, which a waiting DeleteRecords counts). A partition whose fetch failed backs off for
``replica.fetch.backoff.ms``; one whose offset the leader no longer has (OFFSET_OUT_OF_RANGE) is
truncated to the leader's end if it is ahead of the leader, and restarted at the leader's start
(emptied) if it is behind that start.

Before it fetches, a partition added with ``truncating`` first asks the leader where its own latest
leader epoch ends (OffsetsForLeaderEpoch) and truncates there: records it has past that point were
written by a leader that was later replaced, and the new leader does not have them.

The follower side of the replication throttle (KIP-73): while the follower quota is exceeded, a
partition the topic's ``follower.replication.throttled.replicas`` names for this broker is left out of
the next Fetch, unless this replica has caught up with the leader (``should_follower_throttle``); the
bytes fetched for throttled partitions are recorded in the quota.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kafka_lite.clients.network_client import ClientRequest, ClientResponse, NetworkClient
from kafka_lite.common.errors import Errors, KafkaException
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.fetch_request import FETCH_VERSION, fetch_request_body
from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.time import Time
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.log.epoch.leader_epoch_file_cache import UNDEFINED_EPOCH_OFFSET
from kafka_lite.network.selector import Selector

if TYPE_CHECKING:
    from kafka_lite.server.kafka_config import KafkaConfig
    from kafka_lite.server.replica_manager import ReplicaManager
    from kafka_lite.server.replication_quota_manager import ReplicaQuota

log = logging.getLogger(__name__)

LIST_OFFSETS_VERSION = 1
EARLIEST_TIMESTAMP, LATEST_TIMESTAMP = -2, -1


class FetcherException(KafkaException):
    """The leader could not be reached, or did not answer in time."""


class LogTruncationNotAllowedException(KafkaException):
    """The leader is behind this follower and the topic forbids unclean leader election: truncating
    would lose records that may have been committed."""


@dataclass
class PartitionFetchState:
    """Where to fetch a partition from next; whether it must first truncate its log (just became a
    follower); until when it backs off after an error."""

    fetch_offset: int
    truncating_log: bool = False
    delay_until_ms: int = 0

    def is_delayed(self, now: int) -> bool:
        return now < self.delay_until_ms

    def is_ready_for_fetch(self, now: int) -> bool:
        return not self.truncating_log and not self.is_delayed(now)


class ReplicaFetcherThread(threading.Thread):
    def __init__(
        self,
        name: str,
        fetcher_id: int,
        source_broker: tuple[int, str, int],
        config: KafkaConfig,
        replica_manager: ReplicaManager,
        time: Time,
        quota: ReplicaQuota,
        unpaused: threading.Event | None = None,
    ) -> None:
        super().__init__(name=name, daemon=True)
        self.fetcher_id = fetcher_id
        self.source_broker_id, host, port = source_broker
        self.source_node = str(self.source_broker_id)
        self.broker_id = config.broker_id
        self.replica_manager = replica_manager
        self.time = time
        self.quota = quota
        self.max_wait_ms = config["replica.fetch.wait.max.ms"]
        self.min_bytes = config["replica.fetch.min.bytes"]
        self.max_bytes = config["replica.fetch.response.max.bytes"]
        self.fetch_size = config["replica.fetch.max.bytes"]
        self.fetch_backoff_ms = config["replica.fetch.backoff.ms"]
        self.socket_timeout_ms = config["replica.socket.timeout.ms"]
        self.should_send_leader_epoch_request = config.uses_leader_epochs_for_truncation
        self.client = NetworkClient(
            Selector(time=time, channel_builder=config.inter_broker_channel_builder()),
            f"replica-fetcher-{self.broker_id}-{fetcher_id}",
            max_in_flight_requests_per_connection=1,
            request_timeout_ms=self.socket_timeout_ms,
            time=time,
        )
        self.client.set_node(self.source_node, host, port)
        self.partition_states: OrderedDict[TopicPartition, PartitionFetchState] = OrderedDict()
        # each partition's lag behind its leader's HW after its last fetch (Kafka's FetcherLagStats)
        self.fetcher_lag: dict[TopicPartition, int] = {}
        self.partition_map_cond = threading.Condition()
        self._running = True
        # A test hook, shared by the manager's threads: while cleared, nothing is fetched (a follower
        # that stopped keeping up, without stopping the broker).
        if unpaused is None:
            unpaused = threading.Event()
            unpaused.set()
        self.unpaused = unpaused
        # held for each round of the loop, so that a pause can wait out a fetch already sent
        self.round_lock = threading.Lock()

    # -- the partitions this thread fetches ------------------------------------------------------------------

    def add_partitions(self, initial_offsets: dict[TopicPartition, int]) -> None:
        """New partitions to follow: each truncates its log before its first fetch."""
        with self.partition_map_cond:
            for tp, offset in initial_offsets.items():
                if tp not in self.partition_states:
                    self.partition_states[tp] = PartitionFetchState(offset, truncating_log=True)
            self.partition_map_cond.notify_all()

    def remove_partitions(self, tps: set[TopicPartition]) -> None:
        with self.partition_map_cond:
            for tp in tps:
                self.partition_states.pop(tp, None)
                self.fetcher_lag.pop(tp, None)

    def partition_count(self) -> int:
        with self.partition_map_cond:
            return len(self.partition_states)

    # -- the loop --------------------------------------------------------------------------------------------

    def run(self) -> None:
        log.info("%s starting", self.name)
        while self._running:
            try:
                with self.round_lock:
                    self.do_work()
            except Exception:  # one bad round must not end replication for every partition here
                log.exception("%s: error in a fetch round", self.name)
                with self.partition_map_cond:
                    self.partition_map_cond.wait(self.fetch_backoff_ms / 1000)
        self.client.close_all()
        log.info("%s stopped", self.name)

    # --8<-- [start:do_work]
    def do_work(self) -> None:
        if not self.unpaused.is_set():
            self.unpaused.wait(min(self.fetch_backoff_ms, 100) / 1000)
            return
        self.maybe_truncate()
        with self.partition_map_cond:
            fetch_request = self.build_fetch_request(self.time.milliseconds())
            if not fetch_request:
                # nothing to fetch (no partitions, or all backing off): wait for one to be added
                self.partition_map_cond.wait(self.fetch_backoff_ms / 1000)
                return
        self.process_fetch_request(fetch_request)

    def build_fetch_request(self, now: int) -> dict[TopicPartition, int]:
        """The fetch offset of every partition that is not backing off, in the map's order (a partition
        that was just fetched moves to the end, so a large one cannot starve the others), leaving out
        the throttled ones while the follower quota is exceeded."""
        return {
            tp: s.fetch_offset
            for tp, s in self.partition_states.items()
            if s.is_ready_for_fetch(now) and not self.should_follower_throttle(self.quota, tp)
        }

    def should_follower_throttle(self, quota: ReplicaQuota, tp: TopicPartition) -> bool:
        """Kafka 0.10.1.1's ``shouldFollowerThrottle``: a throttled partition, over the quota, that
        has not caught up. The follower cannot see the leader's ISR, so "in sync" is its own lag:
        nothing left to fetch below the leader's HW at its last fetch."""
        return quota.is_throttled(tp) and quota.is_quota_exceeded() and not self.is_replica_in_sync(tp)

    def is_replica_in_sync(self, tp: TopicPartition) -> bool:
        """Kafka's ``FetcherLagStats.isReplicaInSync``: a lag known and not positive."""
        lag = self.fetcher_lag.get(tp)
        return lag is not None and lag <= 0

    def process_fetch_request(self, fetch_request: dict[TopicPartition, int]) -> None:
        partitions_with_error: set[TopicPartition] = set()
        try:
            response = self.fetch(fetch_request)
        except FetcherException as e:
            if self._running:
                log.warning("%s: error in fetch from broker %d: %s", self.name, self.source_broker_id, e)
                with self.partition_map_cond:
                    partitions_with_error |= set(self.partition_states)
                    self.partition_map_cond.wait(self.fetch_backoff_ms / 1000)
            response = {}
        with self.partition_map_cond:
            for tp, data in response.items():
                state = self.partition_states.get(tp)
                # the partition may have been removed, or moved, while the fetch was in flight
                if state is None or state.fetch_offset != fetch_request.get(tp):
                    continue
                error = Errors.for_code(data["partition_header"]["error_code"])
                try:
                    if error is Errors.NONE:
                        next_offset = self.process_partition_data(tp, state.fetch_offset, data)
                        self.partition_states.move_to_end(tp)
                        state.fetch_offset = next_offset
                        high_watermark = data["partition_header"]["high_watermark"]
                        self.fetcher_lag[tp] = max(0, high_watermark - next_offset)
                    elif error is Errors.OFFSET_OUT_OF_RANGE:
                        state.fetch_offset = self.handle_offset_out_of_range(tp)
                    else:
                        if self._running:
                            log.info("%s: error for %s-%d: %s", self.name, tp[0], tp[1], error.name)
                        partitions_with_error.add(tp)
                except LogTruncationNotAllowedException as e:
                    log.critical("%s: %s; this partition is no longer fetched", self.name, e)
                    del self.partition_states[tp]
                except KafkaException as e:
                    log.error(
                        "%s: error processing %s-%d at offset %d: %s", self.name, *tp, state.fetch_offset, e
                    )
                    partitions_with_error.add(tp)
        if partitions_with_error:
            self.delay_partitions(partitions_with_error, self.fetch_backoff_ms)

    # --8<-- [end:do_work]

    # --8<-- [start:maybe_truncate]
    def maybe_truncate(self) -> None:
        """Truncate the partitions that just became followers, before they fetch.

        Kafka 0.10 truncated to the follower's HW, which can cut records that were committed (the
        follower learns the HW one fetch late) and, after two quick leader changes, leave replicas
        that differ at the same offset. Kafka 0.11 (KIP-101) asks the leader instead where the
        follower's latest leader epoch ends in the leader's log (OffsetsForLeaderEpoch) and truncates
        exactly the records the leader does not have. With ``inter.broker.protocol.version`` below
        0.11.0-IV2, or a follower with no epoch yet, the HW is used, as in 0.10.
        """
        now = self.time.milliseconds()
        with self.partition_map_cond:
            epoch_requests = {
                tp: self.replica_manager.get_partition(tp).log.leader_epoch_cache.latest_epoch()
                for tp, state in self.partition_states.items()
                if state.truncating_log and not state.is_delayed(now)
            }
        if not epoch_requests:
            return
        fetched_epochs = self.fetch_epochs_from_leader(epoch_requests)
        partitions_with_error = set()
        with self.partition_map_cond:
            for tp, (error, end_offset) in fetched_epochs.items():
                state = self.partition_states.get(tp)
                if state is None:
                    continue  # removed meanwhile
                if error is not Errors.NONE:
                    log.info(
                        "%s: retrying the leader epoch request for %s-%d: %s", self.name, *tp, error.name
                    )
                    partitions_with_error.add(tp)
                    continue
                partition = self.replica_manager.get_partition(tp)
                replica = partition.get_replica()
                # BEGIN SOLUTION
                if end_offset == UNDEFINED_EPOCH_OFFSET:
                    truncation_offset = replica.high_watermark
                else:
                    truncation_offset = min(end_offset, replica.log_end_offset)
                # END SOLUTION
                partition.truncate_to(truncation_offset)
                state.fetch_offset = truncation_offset
                state.truncating_log = False
        if partitions_with_error:
            self.delay_partitions(partitions_with_error, self.fetch_backoff_ms)

    # --8<-- [end:maybe_truncate]

    def fetch_epochs_from_leader(
        self, partitions: dict[TopicPartition, int]
    ) -> dict[TopicPartition, tuple[Errors, int]]:
        """Where each partition's leader epoch ends on the leader; UNDEFINED for all when the protocol
        version predates leader epochs (the caller then truncates to the HW)."""
        if not self.should_send_leader_epoch_request:
            return {tp: (Errors.NONE, UNDEFINED_EPOCH_OFFSET) for tp in partitions}
        by_topic: dict[str, list] = {}
        for (topic, partition), epoch in partitions.items():
            by_topic.setdefault(topic, []).append({"partition_id": partition, "leader_epoch": epoch})
        try:
            body = self.send_and_receive(
                ApiKeys.OFFSETS_FOR_LEADER_EPOCH,
                0,
                {"topics": [{"topic": t, "partitions": ps} for t, ps in by_topic.items()]},
            )
        except FetcherException as e:
            log.warning(
                "%s: error sending the leader epoch request for %s: %s", self.name, sorted(partitions), e
            )
            return {tp: (Errors.NETWORK_EXCEPTION, UNDEFINED_EPOCH_OFFSET) for tp in partitions}
        return {
            (t["topic"], p["partition_id"]): (Errors.for_code(p["error_code"]), p["end_offset"])
            for t in body["topics"]
            for p in t["partitions"]
        }

    def delay_partitions(self, tps: set[TopicPartition], delay_ms: int) -> None:
        until = self.time.milliseconds() + delay_ms
        with self.partition_map_cond:
            for tp in tps:
                state = self.partition_states.get(tp)
                if state is not None:
                    state.delay_until_ms = until

    # -- what a follower does with the data --------------------------------------------------------------------

    # --8<-- [start:process_partition_data]
    def process_partition_data(self, tp: TopicPartition, fetch_offset: int, data: dict) -> int:
        """Append the leader's batches to the local log and follow the leader's HW; return the next
        fetch offset. Only whole batches are appended: the leader cuts a response at the byte limit,
        and the cut batch comes whole in the next fetch."""
        partition = self.replica_manager.get_partition(tp)
        replica = partition.get_replica()
        if fetch_offset != replica.log_end_offset:
            raise KafkaException(
                f"Offset mismatch for partition {tp[0]}-{tp[1]}: fetched offset = {fetch_offset}, "
                f"log end offset = {replica.log_end_offset}."
            )
        raw = data["record_set"]
        if raw:
            records = MemoryRecords(raw)
            whole = sum(batch.size_in_bytes for batch in records.batches(allow_partial_tail=True))
            if whole:
                partition.append_records_to_follower(MemoryRecords(bytes(raw[:whole])))
        # the follower's HW: the leader's, but never above what this replica has
        follower_high_watermark = min(replica.log_end_offset, data["partition_header"]["high_watermark"])
        replica.high_watermark = follower_high_watermark
        # the leader's log start: a DeleteRecords there deletes here too (Kafka 0.11, KIP-107)
        replica.log.maybe_increment_log_start_offset(data["partition_header"]["log_start_offset"])
        if self.quota.is_throttled(tp):
            self.quota.record(len(raw))
        return replica.log_end_offset

    # --8<-- [end:process_partition_data]

    # --8<-- [start:handle_offset_out_of_range]
    def handle_offset_out_of_range(self, tp: TopicPartition) -> int:
        """The leader has no offset where this follower is: find where to fetch from next.

        Either the follower is ahead of the leader, which only an unclean leader election makes
        possible (a replica outside the ISR became leader without the tail this one has): truncate
        to the leader's end, if the topic allows unclean elections. Or it is behind: fetch from the
        larger of the leader's log start and its own end, and empty its log only if the leader's
        start is past its end (retention deleted what it missed)."""
        partition = self.replica_manager.get_partition(tp)
        replica = partition.get_replica()
        leader_end_offset = self.list_offset(tp, LATEST_TIMESTAMP)
        if leader_end_offset < replica.log_end_offset:
            # Truncating here loses records this replica had. With unclean election off no replica
            # outside the ISR can lead, so this happens only if the topic's setting was turned off
            # while this replica was down; Kafka then halts the broker rather than lose data.
            if not self.replica_manager.log_config(tp[0]).unclean_leader_election_enable:
                raise LogTruncationNotAllowedException(
                    f"Log truncation is not allowed for partition {tp[0]}-{tp[1]}: current leader "
                    f"{self.source_broker_id}'s latest offset {leader_end_offset} is less than replica "
                    f"{self.broker_id}'s latest offset {replica.log_end_offset}"
                )
            log.warning(
                "Replica %d for %s-%d reset its fetch offset from %d to the current leader %d's latest offset %d",
                self.broker_id, *tp, replica.log_end_offset, self.source_broker_id, leader_end_offset,
            )  # fmt: skip
            partition.truncate_to(leader_end_offset)
            return leader_end_offset
        # Behind the leader's end: either behind its log start too (the follower was down while
        # retention deleted what it missed), or, after an unclean election, the leader's end passed
        # the follower's again between the fetch and this ListOffsets. Fetch from the larger of the
        # two; only in the first case is there nothing to keep.
        leader_start_offset = self.list_offset(tp, EARLIEST_TIMESTAMP)
        log.warning(
            "Replica %d for %s-%d reset its fetch offset from %d to the current leader %d's start offset %d",
            self.broker_id, *tp, replica.log_end_offset, self.source_broker_id, leader_start_offset,
        )  # fmt: skip
        offset_to_fetch = max(leader_start_offset, replica.log_end_offset)
        if leader_start_offset > replica.log_end_offset:
            partition.truncate_fully_and_start_at(leader_start_offset)
        return offset_to_fetch

    # --8<-- [end:handle_offset_out_of_range]

    # -- requests to the leader ---------------------------------------------------------------------------------

    def fetch(self, fetch_request: dict[TopicPartition, int]) -> dict[TopicPartition, dict]:
        request = fetch_request_body(
            self.broker_id,
            max_wait_ms=self.max_wait_ms,
            min_bytes=self.min_bytes,
            max_bytes=self.max_bytes,
            offsets=fetch_request,
            partition_max_bytes=self.fetch_size,
            log_start_offsets=self._log_start_offsets(fetch_request),
        )
        body = self.send_and_receive(ApiKeys.FETCH, FETCH_VERSION, request)
        return {
            (t["topic"], p["partition_header"]["partition"]): p
            for t in body["responses"]
            for p in t["partition_responses"]
        }

    def _log_start_offsets(self, partitions) -> dict[TopicPartition, int]:
        """This replica's log start offsets, which the leader's low watermark is made of."""
        starts = {}
        for tp in partitions:
            partition = self.replica_manager.get_partition(tp)
            log_ = partition.log if partition is not None else None
            if log_ is not None:
                starts[tp] = log_.log_start_offset
        return starts

    def list_offset(self, tp: TopicPartition, timestamp: int) -> int:
        body = self.send_and_receive(
            ApiKeys.LIST_OFFSETS,
            LIST_OFFSETS_VERSION,
            {
                "replica_id": self.broker_id,
                "topics": [{"topic": tp[0], "partitions": [{"partition": tp[1], "timestamp": timestamp}]}],
            },
        )
        p = body["responses"][0]["partition_responses"][0]
        error = Errors.for_code(p["error_code"])
        if error is not Errors.NONE:
            raise FetcherException(f"ListOffsets for {tp[0]}-{tp[1]} failed: {error.name}")
        return p["offset"]

    def send_and_receive(self, api: ApiKeys, version: int, body: dict) -> dict:
        """Connect if needed, send, and wait for the answer (Kafka's ``blockingSendAndReceive``)."""
        deadline = self.time.milliseconds() + self.socket_timeout_ms
        while not self.client.ready(self.source_node, self.time.milliseconds()):
            now = self.time.milliseconds()
            if now >= deadline or not self._running:
                self.client.close(self.source_node)
                raise FetcherException(
                    f"Failed to connect to broker {self.source_broker_id} within {self.socket_timeout_ms} ms"
                )
            self.client.poll(min(100, deadline - now), now)
        done: list[ClientResponse] = []
        self.client.send(
            ClientRequest(self.source_node, api, version, body, callback=done.append),
            self.time.milliseconds(),
        )
        while not done:
            if not self._running:
                raise FetcherException("the fetcher is shutting down")
            self.client.poll(self.max_wait_ms + 100)
        if done[0].disconnected:
            raise FetcherException(
                f"broker {self.source_broker_id} disconnected before answering {api.api_name}"
            )
        return done[0].body

    def initiate_shutdown(self) -> None:
        self._running = False
        with self.partition_map_cond:
            self.partition_map_cond.notify_all()
        self.client.wakeup()

    def shutdown(self) -> None:
        self.initiate_shutdown()
        if self.is_alive() and threading.current_thread() is not self:
            self.join()
