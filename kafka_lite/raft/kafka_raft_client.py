"""The Raft client: one loop that runs the node's part of the quorum, whatever its state.

Mirrors: org.apache.kafka.raft.KafkaRaftClient
         (raft/src/main/java/org/apache/kafka/raft/KafkaRaftClient.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: no append purgatory: committed records reach the listener from the log, never from the
         accumulator's memory; a held Fetch is answered on the Raft thread (its future only queues it
         back), is also released when the high watermark moves, and is not held when it moved
         it; ``create_snapshot`` takes the snapshot's id (Kafka 3.3 takes its last committed
         offset and epoch and adds one); the leader flushes before it counts its own end offset
         (``_flush_leader_log``); no snapshot cleaning (the log start moves with
         ``delete_before_snapshot``), no metrics; a listener's position moves when a batch is
         handed to it, not when it closes Kafka's ``BatchReader`` (see ``raft_client.py``: no
         back-pressure, and the new leader's ``handle_leader_change`` waits for batches handed
         over, not acknowledged).
Labs:    lab 18, stage 1 (``handle_vote_request``, ``_on_vote``), stage 2 (``_complete_fetch_request``,
         ``handle_fetch_response``), stage 4 (``_ListenerContext.fire_handle_snapshot``)

One module for one class, as Kafka's KafkaRaftClient is one file: its handlers share the quorum,
the log and the request manager, and reading one next to another (a request and its response, a
state's poll and its transitions) is how the protocol is learnt.

Everything happens in ``poll``, on one thread, in Kafka's order::

    poll()
      ├─ poll_listeners          new listeners registered; committed batches and leader changes to
      │                          the state machine
      ├─ maybe_complete_shutdown
      ├─ poll_current_state      poll_leader / poll_candidate / poll_follower / poll_voted /
      │                          poll_unattached / poll_resigned: timers, and the requests this state
      │                          sends (Vote, BeginQuorumEpoch, Fetch, EndQuorumEpoch); returns how
      │                          long until it needs polling again
      └─ one inbound message     waited for up to that long (a real node sleeps here): a peer's
                                 request (handle_*_request, answered through its future), the response
                                 to one of ours (handle_*_response), or a held Fetch come due

A commit the inbound message brings (a follower's high watermark moved by a Fetch response, a
leader's by a follower's Fetch) reaches the listeners at once, from the handler; ``poll_listeners``
at the start of the next poll catches up only the listeners registered since, or left behind.

The handlers follow one pattern. A request first has its epoch checked (``validate_voter_only_request``,
``validate_leader_only_request``): an epoch below ours is FENCED_LEADER_EPOCH, above ours (for the
leader's APIs) UNKNOWN_LEADER_EPOCH, a sender outside the voters INCONSISTENT_VOTER_SET; nothing
changes on the receiving node. A response first goes through ``maybe_handle_common_response``: a newer
epoch or a leader we did not know moves this node (to Follower or Unattached) before anything else,
because in Raft every message carries the sender's epoch and the higher epoch always wins.

The fetch purgatory. KRaft replicates by pull: a follower learns of new entries only by fetching.
A leader that answered every Fetch at once would get the next one straight back from each follower
with nothing new in between, and the quorum would spin. So, as a broker holds a consumer's Fetch
(``fetch.max.wait.ms``), the leader holds a Fetch that would come back empty in ``fetch_purgatory``,
for up to the request's ``max_wait_ms``: it is answered when the leader's log end passes its fetch
offset (there is something to send), when the high watermark moves (the follower should learn of a
commit now, not at the next append), when the wait expires (answered empty), or with
NOT_LEADER_OR_FOLLOWER when this node stops leading (the follower should go and find the new leader).
"""

from __future__ import annotations

import logging
import random as _random
from collections.abc import Callable, Set
from concurrent.futures import Future
from typing import Any

from kafka_lite.common.errors import (
    Errors,
    IllegalArgumentException,
    IllegalStateException,
    KafkaException,
    NotLeaderForPartitionException,
)
from kafka_lite.common.protocol.raft_messages import RaftApiKeys
from kafka_lite.common.record import MemoryRecords, codec
from kafka_lite.common.record.file_records import FileRecords
from kafka_lite.common.time import Time
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.raft import raft_util
from kafka_lite.raft.candidate_state import CandidateState, binary_exponential_election_backoff_ms
from kafka_lite.raft.expiration_service import ExpirationService
from kafka_lite.raft.follower_state import FollowerState
from kafka_lite.raft.internals.batch_accumulator import BatchAccumulator
from kafka_lite.raft.internals.threshold_purgatory import ThresholdPurgatory
from kafka_lite.raft.isolation import Isolation
from kafka_lite.raft.leader_state import LeaderState
from kafka_lite.raft.network_channel import NetworkChannel
from kafka_lite.raft.offset_and_epoch import OffsetAndEpoch
from kafka_lite.raft.quorum_state import QuorumState
from kafka_lite.raft.quorum_state_store import QuorumStateStore
from kafka_lite.raft.raft_client import (
    Batch,
    LeaderAndEpoch,
    Listener,
    NotLeaderException,
    RaftClient,
    RecordSerde,
)
from kafka_lite.raft.raft_config import RaftConfig
from kafka_lite.raft.raft_message import RaftRequest, RaftResponse
from kafka_lite.raft.raft_message_queue import RaftMessageQueue
from kafka_lite.raft.raft_util import METADATA_TOPIC_ID, RaftErrors
from kafka_lite.raft.records_snapshot_reader import RecordsSnapshotReader
from kafka_lite.raft.records_snapshot_writer import RecordsSnapshotWriter
from kafka_lite.raft.replicated_log import ReplicatedLog
from kafka_lite.raft.request_manager import RequestManager
from kafka_lite.raft.timer import LONG_MAX, Timer
from kafka_lite.raft.valid_offset_and_epoch import Kind

log = logging.getLogger(__name__)

# Kafka's defaults: 8 MiB per Fetch, 8 MiB per batch of appends, and how long the leader may hold a Fetch.
MAX_FETCH_SIZE_BYTES = 8 * 1024 * 1024
MAX_BATCH_SIZE_BYTES = 8 * 1024 * 1024
MAX_FETCH_WAIT_MS = 500


class _ListenerContext:
    """A registered listener and how far it has been handed the log (Kafka's ``ListenerContext``,
    whose ``nextOffset`` moves only when the listener closes a ``BatchReader``: see the header)."""

    def __init__(self, listener: Listener) -> None:
        self.listener = listener
        self.next_offset: int | None = None
        self.last_fired_leader_change: LeaderAndEpoch | None = None

    def next_expected_offset(self) -> int:
        return self.next_offset if self.next_offset is not None else 0

    def fire_handle_snapshot(self, reader: RecordsSnapshotReader) -> None:
        # BEGIN SOLUTION
        # The listener's state is now the snapshot's: it goes on from the snapshot's end offset.
        self.next_offset = reader.snapshot_id().offset
        self.listener.handle_snapshot(reader)
        # END SOLUTION

    def fire_handle_commit(self, batches: list[Batch]) -> None:
        if batches:
            self.next_offset = batches[-1].last_offset + 1
        self.listener.handle_commit(batches)

    def _should_fire(self, leader: LeaderAndEpoch) -> bool:
        last = self.last_fired_leader_change
        return last is None or (leader != last and leader.epoch >= last.epoch)

    def maybe_fire_leader_change(self, leader: LeaderAndEpoch, epoch_start_offset: int | None = None) -> None:
        # For this node's own election, wait until the listener has read up to the epoch's start:
        # the state machine must hold the whole committed state before it writes as leader.
        if not self._should_fire(leader):
            return
        if epoch_start_offset is not None and self.next_expected_offset() < epoch_start_offset:
            return
        self.last_fired_leader_change = leader
        self.listener.handle_leader_change(leader)


class _CompletedFetch:
    """A held Fetch whose purgatory future is done, queued back so the Raft thread answers it.

    Kafka answers from the future's callback, on whichever thread completed it; the expiration
    service's reaper is another thread, and in Python the handlers must not run beside the Raft
    thread. So the callback only queues this, and ``poll`` takes it like any other message.
    """

    def __init__(self, request: RaftRequest.Inbound, partition: dict, future: Future) -> None:
        self.request = request
        self.partition = partition
        self.future = future


class _GracefulShutdown:
    def __init__(self, time: Time, timeout_ms: int) -> None:
        self.finish_timer = Timer(time, timeout_ms)
        self.complete_future: Future = Future()

    def remaining_time_ms(self) -> int:
        return self.finish_timer.remaining_ms()


class KafkaRaftClient(RaftClient):
    def __init__(
        self,
        serde: RecordSerde,
        channel: NetworkChannel,
        log_: ReplicatedLog,
        quorum_state_store: QuorumStateStore,
        time: Time,
        random: _random.Random,
        raft_config: RaftConfig,
        node_id: int | None,
        cluster_id: str | None = None,
        fetch_max_wait_ms: int = MAX_FETCH_WAIT_MS,
        max_batch_size_bytes: int = MAX_BATCH_SIZE_BYTES,
        *,
        message_queue: RaftMessageQueue,
        expiration_service: ExpirationService,
    ) -> None:
        """``message_queue`` is what ``poll`` waits on and ``expiration_service`` bounds a held Fetch:
        a real node passes a ``BlockingMessageQueue`` and a ``TimingWheelExpirationService`` (see
        ``kafka_lite/raft/tools/raft_manager.py``); the simulator and the tests pass the mocks of
        ``kafka_lite/raft/simulation/``, which move only with the mock clock."""
        self._serde = serde
        self._channel = channel
        self._log = log_
        self._time = time
        self._random = random
        self._config = raft_config
        self._cluster_id = cluster_id
        self._fetch_max_wait_ms = fetch_max_wait_ms
        self._max_batch_size_bytes = max_batch_size_bytes
        voters = raft_config.quorum_voter_ids()
        self._quorum = QuorumState(
            node_id,
            voters,
            raft_config.election_timeout_ms(),
            raft_config.fetch_timeout_ms(),
            quorum_state_store,
            time,
            random,
        )
        self._request_manager = RequestManager(
            voters, raft_config.retry_backoff_ms(), raft_config.request_timeout_ms(), random
        )
        # Inbound requests, the responses to ours and held Fetches come due, in arrival order;
        # only poll() takes from it.
        self._message_queue = message_queue
        # Fetches the leader holds until its log end passes their offset (see the header).
        self._fetch_purgatory = ThresholdPurgatory(expiration_service)
        self._listener_contexts: dict[int, _ListenerContext] = {}
        self._pending_registrations: list[Listener] = []
        self._shutdown: _GracefulShutdown | None = None
        self._initialized = False

    # -- the client's interface ------------------------------------------------------------------------------

    def initialize(self) -> None:
        self._quorum.initialize(self._end_offset())
        current_time_ms = self._time.milliseconds()
        if self._quorum.is_leader():
            raise IllegalStateException("Voter cannot initialize as a Leader")
        if self._quorum.is_candidate():
            self._on_become_candidate(current_time_ms)
        elif self._quorum.is_follower():
            self._on_become_follower(current_time_ms)
        # A quorum of one: stand at once, and win, since the node's own vote is a majority.
        if self._quorum.is_voter() and not self._quorum.remote_voters() and not self._quorum.is_candidate():
            self._transition_to_candidate(current_time_ms)
        self._initialized = True

    def register(self, listener: Listener) -> None:
        """Add ``listener``; it is caught up from the log start on the next polls."""
        self._pending_registrations.append(listener)
        self._wakeup()

    def leader_and_epoch(self) -> LeaderAndEpoch:
        return LeaderAndEpoch(self._quorum.leader_id(), self._quorum.epoch())

    def high_watermark(self) -> int | None:
        high_watermark = self._quorum.high_watermark()
        return None if high_watermark is None else high_watermark.offset

    def quorum(self) -> QuorumState:
        return self._quorum

    def handle(self, message: RaftRequest.Inbound) -> None:
        """A peer's request, from the network: queued for the Raft thread."""
        self._message_queue.add(message)

    # --8<-- [start:schedule_append]
    def schedule_append(self, epoch: int, records: list[Any]) -> int:
        """Append ``records`` as leader of ``epoch``; the offset the last one will have. They reach
        the log on a later poll, after the linger; ``handle_commit`` says when they are committed."""
        return self._append(epoch, records, is_atomic=False)

    def schedule_atomic_append(self, epoch: int, records: list[Any]) -> int:
        """As ``schedule_append``, all in one batch: committed together or not at all."""
        return self._append(epoch, records, is_atomic=True)

    def _append(self, epoch: int, records: list[Any], is_atomic: bool) -> int:
        leader_state = self._quorum.maybe_leader_state()
        if leader_state is None:
            raise NotLeaderException("Append failed because the replication is not the current leader")
        accumulator = leader_state.accumulator()
        is_first_append = accumulator.is_empty()
        offset = accumulator.append(epoch, records, is_atomic)
        # Wake the Raft thread on the first append, so it sees the linger and sleeps no longer than
        # that, or when the batch is already full enough to drain.
        if is_first_append or accumulator.needs_drain(self._time.milliseconds()):
            self._wakeup()
        return offset

    # --8<-- [end:schedule_append]

    def resign(self, epoch: int) -> None:
        """Step down as leader of ``epoch`` (the state machine found it cannot go on leading)."""
        if epoch < 0:
            raise IllegalArgumentException(f"Attempt to resign from an invalid negative epoch {epoch}")
        if not self._initialized:
            raise IllegalStateException("Replica needs to be initialized before resigning")
        if not self._quorum.is_voter():
            raise IllegalStateException("Attempt to resign by a non-voter")
        current_epoch = self._quorum.epoch()
        if epoch > current_epoch:
            raise IllegalArgumentException(
                f"Attempt to resign from epoch {epoch} which is larger than the current epoch {current_epoch}"
            )
        if epoch < current_epoch:
            log.debug("Ignoring call to resign from epoch %d since it is smaller than the current epoch %d",
                      epoch, current_epoch)  # fmt: skip
            return
        if self._quorum.leader_id() != self._quorum.local_id_or_throw():
            raise IllegalArgumentException(f"Cannot resign from epoch {epoch} since we are not the leader")
        # A resigned leader still names itself as its epoch's leader (a node restarted from a
        # leader's quorum state starts resigned, and its listener hears of that epoch with itself as
        # leader): it has nothing left to resign, as Kafka 3.3's resign has it.
        leader_state = self._quorum.maybe_leader_state()
        if leader_state is None:
            log.debug("Ignoring call to resign from epoch %d since this node is no longer the leader", epoch)
            return
        # The resignation itself happens on the Raft thread, in poll_leader.
        leader_state.request_resign()

    # --8<-- [start:create_snapshot]
    def create_snapshot(
        self, snapshot_id: OffsetAndEpoch, last_contained_log_time: int
    ) -> RecordsSnapshotWriter | None:
        """A writer for the state machine's snapshot of everything before ``snapshot_id.offset``, in
        epoch ``snapshot_id.epoch``: the caller appends its state, then freezes and closes it. None
        when that snapshot exists already; the log refuses one above the high watermark.

        Any node may snapshot, leader or not: each compacts its own log, from what it has applied."""
        return RecordsSnapshotWriter.create_with_header(
            lambda: self._log.create_new_snapshot(snapshot_id), self._max_batch_size_bytes, self._time,
            last_contained_log_time, self._serde,
        )  # fmt: skip

    # --8<-- [end:create_snapshot]

    def shutdown(self, timeout_ms: int) -> Future:
        """Begin a graceful shutdown: a leader resigns and tells the voters (EndQuorumEpoch), so the
        next election starts at once rather than after a fetch timeout."""
        log.info("Beginning graceful shutdown")
        self._shutdown = _GracefulShutdown(self._time, timeout_ms)
        self._wakeup()
        return self._shutdown.complete_future

    # -- the loop --------------------------------------------------------------------------------------------

    # --8<-- [start:poll]
    def poll(self) -> None:
        if not self._initialized:
            raise IllegalStateException("Replica needs to be initialized before polling")
        self._poll_listeners()
        start_poll_time_ms = self._time.milliseconds()
        if self._maybe_complete_shutdown(start_poll_time_ms):
            return
        poll_timeout_ms = self._poll_current_state(start_poll_time_ms)
        message = self._message_queue.poll(poll_timeout_ms)
        if message is not None:
            self._handle_inbound_message(message, self._time.milliseconds())

    # --8<-- [end:poll]

    def _poll_current_state(self, current_time_ms: int) -> int:
        """Run this state's timers and sends; how long until it needs polling again."""
        if self._quorum.is_leader():
            return self._poll_leader(current_time_ms)
        if self._quorum.is_candidate():
            return self._poll_candidate(current_time_ms)
        if self._quorum.is_follower():
            return self._poll_follower(current_time_ms)
        if self._quorum.is_voted():
            return self._poll_voted(current_time_ms)
        if self._quorum.is_unattached():
            return self._poll_unattached(current_time_ms)
        if self._quorum.is_resigned():
            return self._poll_resigned(current_time_ms)
        raise IllegalStateException(f"Unexpected quorum state {self._quorum.current_state()}")

    def _maybe_complete_shutdown(self, current_time_ms: int) -> bool:
        shutdown = self._shutdown
        if shutdown is None:
            return False
        shutdown.finish_timer.update(current_time_ms)
        if shutdown.finish_timer.is_expired():
            if not shutdown.complete_future.done():
                shutdown.complete_future.set_exception(
                    KafkaException("Timeout expired before graceful shutdown completed")
                )
            return True
        # Done once no one needs this node to step aside any more: an observer, a quorum of one, or
        # a node that knows another leader.
        if self._quorum.is_observer() or not self._quorum.remote_voters() or self._quorum.has_remote_leader():
            if not shutdown.complete_future.done():
                shutdown.complete_future.set_result(None)
            return True
        return False

    # -- leader ----------------------------------------------------------------------------------------------

    def _poll_leader(self, current_time_ms: int) -> int:
        state = self._quorum.leader_state_or_throw()
        self._maybe_fire_leader_change_for_leader(state)
        if self._shutdown is not None or state.is_resign_requested():
            self._transition_to_resigned(state.non_leader_voters_by_descending_fetch_offset())
            return 0
        time_until_flush = self._maybe_append_batches(state, current_time_ms)
        time_until_send = self._maybe_send_requests(
            current_time_ms, state.non_acknowledging_voters(), self._build_begin_quorum_epoch_request
        )
        return min(time_until_flush, time_until_send)

    def _maybe_append_batches(self, state: LeaderState, current_time_ms: int) -> int:
        accumulator = state.accumulator()
        time_until_drain = accumulator.time_until_drain(current_time_ms)
        if time_until_drain <= 0:
            for batch in accumulator.drain():
                self._log.append_as_leader(batch.data, state.epoch())
            self._flush_leader_log(state, current_time_ms)
        return time_until_drain

    def _flush_leader_log(self, state: LeaderState, current_time_ms: int) -> None:
        # The leader counts its own entry towards the majority only once it is on disk: the same
        # promise a follower makes when it fetches the next offset. Kafka 3.3 counts first and
        # flushes after, "so that parked fetches can return sooner"; but between the two the high
        # watermark can pass an entry that only one follower holds durably, and a leader that
        # crashed there would lose it from its own log. Here held Fetches are answered on this
        # thread after the flush anyway, so the earlier count would gain them nothing.
        self._log.flush(False)
        self._update_leader_end_offset(state, current_time_ms)

    def _update_leader_end_offset(self, state: LeaderState, current_time_ms: int) -> None:
        end_offset = self._log.end_offset()
        if state.update_local_state(end_offset):
            self._on_update_leader_high_watermark(state, current_time_ms)
        # A held Fetch at an offset below the new end now has records to carry.
        self._fetch_purgatory.maybe_complete(end_offset.offset, current_time_ms)

    def _on_update_leader_high_watermark(self, state: LeaderState, current_time_ms: int) -> None:
        high_watermark = state.high_watermark()
        if high_watermark is not None:
            log.debug("Leader high watermark updated to %s", high_watermark)
            self._log.update_high_watermark(high_watermark)
            self._complete_fetches_on_high_watermark(current_time_ms)
            self._update_listeners_progress(high_watermark.offset)

    def _complete_fetches_on_high_watermark(self, current_time_ms: int) -> None:
        """Answer every held Fetch: each carries the new high watermark to its follower.

        Kafka 3.3 releases a held Fetch only when the log end passes it, so a follower learns a
        commit with the next append's records, or after ``max_wait_ms`` when none come. Here the
        followers also learn it at once (and the Fetch that moved it is answered, not held: see
        ``handle_fetch_request``), which is what lets the kill/restart checker expect every
        committed record on every voter soon after the leader saw it committed.
        """
        self._fetch_purgatory.complete_all(current_time_ms)

    def _on_become_leader(self, current_time_ms: int) -> None:
        end_offset = self._log.end_offset().offset
        accumulator = BatchAccumulator(
            self._quorum.epoch(),
            end_offset,
            self._config.append_linger_ms(),
            self._max_batch_size_bytes,
            self._time,
            self._serde.serialize,
        )
        state = self._quorum.transition_to_leader(end_offset, accumulator)
        self._log.initialize_leader_epoch(self._quorum.epoch())
        # The LEADER_CHANGE record: the leader's first entry in its epoch, so that it can commit
        # (Raft's no-op entry; see LeaderState's header).
        state.append_leader_change_message(current_time_ms)
        self._reset_connections()

    # -- candidate -------------------------------------------------------------------------------------------

    def _poll_candidate(self, current_time_ms: int) -> int:
        state = self._quorum.candidate_state_or_throw()
        if self._shutdown is not None:
            # A candidate shutting down carries on with its election: once leader, it can resign.
            min_request_backoff_ms = self._maybe_send_vote_requests(state, current_time_ms)
            return min(self._shutdown.remaining_time_ms(), min_request_backoff_ms)
        if state.is_backing_off():
            if state.is_backoff_complete(current_time_ms):
                log.info("Re-elect as candidate after election backoff has completed")
                self._transition_to_candidate(current_time_ms)
                return 0
            return state.remaining_backoff_ms(current_time_ms)
        if state.has_election_timeout_expired(current_time_ms):
            backoff_duration_ms = self._binary_exponential_election_backoff_ms(state.retries())
            log.debug("Election has timed out, backing off for %dms before becoming a candidate again",
                      backoff_duration_ms)  # fmt: skip
            state.start_backing_off(current_time_ms, backoff_duration_ms)
            return backoff_duration_ms
        min_request_backoff_ms = self._maybe_send_vote_requests(state, current_time_ms)
        return min(min_request_backoff_ms, state.remaining_election_time_ms(current_time_ms))

    def _maybe_send_vote_requests(self, state: CandidateState, current_time_ms: int) -> int:
        # Keep asking as long as the election can still be won.
        if not state.is_vote_rejected():
            return self._maybe_send_requests(
                current_time_ms, state.unrecorded_voters(), self._build_vote_request
            )
        return LONG_MAX

    def _binary_exponential_election_backoff_ms(self, retries: int) -> int:
        return binary_exponential_election_backoff_ms(
            retries, self._random, self._config.election_backoff_max_ms()
        )

    def _strict_exponential_election_backoff_ms(
        self, position_in_successors: int, total_num_successors: int
    ) -> int:
        if position_in_successors <= 0 or position_in_successors >= total_num_successors:
            raise IllegalArgumentException(f"Position {position_in_successors} should be in the range (0, {total_num_successors})")  # fmt: skip
        return min(self._config.election_backoff_max_ms(),
                   self._config.retry_backoff_ms() << (position_in_successors - 1))  # fmt: skip

    def _on_become_candidate(self, current_time_ms: int) -> None:
        if not self._maybe_transition_to_leader(self._quorum.candidate_state_or_throw(), current_time_ms):
            self._reset_connections()

    def _maybe_transition_to_leader(self, state: CandidateState, current_time_ms: int) -> bool:
        if state.is_vote_granted():
            self._on_become_leader(current_time_ms)
            return True
        return False

    # -- follower, voted, unattached, resigned --------------------------------------------------------------

    def _poll_follower(self, current_time_ms: int) -> int:
        state = self._quorum.follower_state_or_throw()
        if self._quorum.is_voter():
            return self._poll_follower_as_voter(state, current_time_ms)
        return self._poll_follower_as_observer(state, current_time_ms)

    def _poll_follower_as_voter(self, state: FollowerState, current_time_ms: int) -> int:
        if self._shutdown is not None:
            # A follower can stop at once; it must not stand for election on its way out.
            return 0
        if state.has_fetch_timeout_expired(current_time_ms):
            log.info("Become candidate due to fetch timeout")
            self._transition_to_candidate(current_time_ms)
            return 0
        backoff_ms = self._maybe_send_fetch_or_fetch_snapshot(state, current_time_ms)
        return min(backoff_ms, state.remaining_fetch_time_ms(current_time_ms))

    def _maybe_send_fetch_or_fetch_snapshot(self, state: FollowerState, current_time_ms: int) -> int:
        # While a snapshot is being fetched, it is fetched alone: the log continues after it.
        snapshot = state.fetching_snapshot()
        if snapshot is not None:
            size = snapshot.size_in_bytes()
            return self._maybe_send_request(
                current_time_ms,
                state.leader_id(),
                lambda: self._build_fetch_snapshot_request(snapshot.snapshot_id(), size),
            )
        return self._maybe_send_request(current_time_ms, state.leader_id(), self._build_fetch_request)

    def _poll_follower_as_observer(self, state: FollowerState, current_time_ms: int) -> int:
        if state.has_fetch_timeout_expired(current_time_ms):
            return self._maybe_send_any_voter_fetch(current_time_ms)
        # A leader that stopped answering may have been replaced: ask any voter instead.
        connection = self._request_manager.get_or_create(state.leader_id())
        if connection.has_request_timed_out(current_time_ms):
            backoff_ms = self._maybe_send_any_voter_fetch(current_time_ms)
            connection.reset()
        elif connection.is_backing_off(current_time_ms):
            backoff_ms = self._maybe_send_any_voter_fetch(current_time_ms)
        else:
            backoff_ms = self._maybe_send_fetch_or_fetch_snapshot(state, current_time_ms)
        return min(backoff_ms, state.remaining_fetch_time_ms(current_time_ms))

    def _maybe_send_any_voter_fetch(self, current_time_ms: int) -> int:
        ready_voter_id = self._request_manager.find_ready_voter(current_time_ms)
        if ready_voter_id is not None:
            return self._maybe_send_request(current_time_ms, ready_voter_id, self._build_fetch_request)
        return self._request_manager.backoff_before_available_voter(current_time_ms)

    def _poll_voted(self, current_time_ms: int) -> int:
        state = self._quorum.voted_state_or_throw()
        if self._shutdown is not None:
            return self._shutdown.remaining_time_ms()
        if state.has_election_timeout_expired(current_time_ms):
            self._transition_to_candidate(current_time_ms)
            return 0
        return state.remaining_election_time_ms(current_time_ms)

    def _poll_unattached(self, current_time_ms: int) -> int:
        state = self._quorum.unattached_state_or_throw()
        if not self._quorum.is_voter():
            # An observer looks for the leader by fetching from any voter.
            fetch_backoff_ms = self._maybe_send_any_voter_fetch(current_time_ms)
            return min(fetch_backoff_ms, state.remaining_election_time_ms(current_time_ms))
        if self._shutdown is not None:
            return self._shutdown.remaining_time_ms()
        if state.has_election_timeout_expired(current_time_ms):
            self._transition_to_candidate(current_time_ms)
            return 0
        return state.remaining_election_time_ms(current_time_ms)

    def _poll_resigned(self, current_time_ms: int) -> int:
        state = self._quorum.resigned_state_or_throw()
        end_quorum_backoff_ms = self._maybe_send_requests(
            current_time_ms, state.unacked_voters(), lambda: self._build_end_quorum_epoch_request(state)
        )
        if self._shutdown is not None:
            # Stay resigned until the shutdown times out or an election moves the epoch on.
            state_timeout_ms = self._shutdown.remaining_time_ms()
        elif state.has_election_timeout_expired(current_time_ms):
            self._transition_to_candidate(current_time_ms)
            state_timeout_ms = 0
        else:
            state_timeout_ms = state.remaining_election_time_ms(current_time_ms)
        return min(state_timeout_ms, end_quorum_backoff_ms)

    # -- transitions -----------------------------------------------------------------------------------------

    def _transition_to_candidate(self, current_time_ms: int) -> None:
        self._quorum.transition_to_candidate()
        self._maybe_fire_leader_change()
        self._on_become_candidate(current_time_ms)

    def _transition_to_unattached(self, epoch: int) -> None:
        self._quorum.transition_to_unattached(epoch)
        self._maybe_fire_leader_change()
        self._reset_connections()

    def _transition_to_resigned(self, preferred_successors: list[int]) -> None:
        self._fetch_purgatory.complete_all_exceptionally(
            NotLeaderForPartitionException("Not handling request since this node is resigning")
        )
        self._quorum.transition_to_resigned(preferred_successors)
        self._maybe_fire_leader_change()
        self._reset_connections()

    def _transition_to_voted(self, candidate_id: int, epoch: int) -> None:
        self._quorum.transition_to_voted(epoch, candidate_id)
        self._maybe_fire_leader_change()
        self._reset_connections()

    def _transition_to_follower(self, epoch: int, leader_id: int, current_time_ms: int) -> None:
        self._quorum.transition_to_follower(epoch, leader_id)
        self._maybe_fire_leader_change()
        self._on_become_follower(current_time_ms)

    def _on_become_follower(self, current_time_ms: int) -> None:
        # Held Fetches go back at once, so their senders look for the new leader rather than wait.
        self._fetch_purgatory.complete_all_exceptionally(
            NotLeaderForPartitionException(
                "Cannot process the fetch request because the node is no longer the leader."
            )
        )
        # Requests sent in the old state (Votes, a Fetch to the old leader) are no longer awaited.
        self._reset_connections()

    def _reset_connections(self) -> None:
        self._request_manager.reset_all()

    # -- sending ---------------------------------------------------------------------------------------------

    def _maybe_send_requests(
        self,
        current_time_ms: int,
        destination_ids: Set[int],
        request_supplier: Callable[[], tuple[int, dict]],
    ) -> int:
        min_backoff_ms = LONG_MAX
        for destination_id in sorted(destination_ids):
            min_backoff_ms = min(
                min_backoff_ms, self._maybe_send_request(current_time_ms, destination_id, request_supplier)
            )
        return min_backoff_ms

    def _maybe_send_request(
        self, current_time_ms: int, destination_id: int, request_supplier: Callable[[], tuple[int, dict]]
    ) -> int:
        """Send to ``destination_id`` if its connection is ready; else how long until it may be."""
        connection = self._request_manager.get_or_create(destination_id)
        if connection.is_backing_off(current_time_ms):
            return connection.remaining_backoff_ms(current_time_ms)
        if connection.is_ready(current_time_ms):
            correlation_id = self._channel.new_correlation_id()
            api_key, data = request_supplier()
            request = RaftRequest.Outbound(correlation_id, api_key, data, destination_id, current_time_ms)

            def on_complete(future: Future) -> None:
                exception = future.exception()
                if exception is not None:
                    response = RaftResponse.Inbound(
                        correlation_id, api_key, raft_util.error_response(api_key, RaftErrors.BROKER_NOT_AVAILABLE),
                        destination_id,
                    )  # fmt: skip
                else:
                    response = future.result()
                self._message_queue.add(response)

            request.completion.add_done_callback(on_complete)
            self._channel.send(request)
            connection.on_request_sent(correlation_id, current_time_ms)
            return LONG_MAX
        return connection.remaining_request_time_ms(current_time_ms)

    def _build_vote_request(self) -> tuple[int, dict]:
        end_offset = self._end_offset()
        return RaftApiKeys.VOTE, raft_util.vote_request(
            self._log.topic_partition(), self._cluster_id, self._quorum.epoch(), self._quorum.local_id_or_throw(),
            end_offset.epoch, end_offset.offset,
        )  # fmt: skip

    def _build_begin_quorum_epoch_request(self) -> tuple[int, dict]:
        return RaftApiKeys.BEGIN_QUORUM_EPOCH, raft_util.begin_quorum_epoch_request(
            self._log.topic_partition(),
            self._cluster_id,
            self._quorum.epoch(),
            self._quorum.local_id_or_throw(),
        )

    def _build_end_quorum_epoch_request(self, state: Any) -> tuple[int, dict]:
        return RaftApiKeys.END_QUORUM_EPOCH, raft_util.end_quorum_epoch_request(
            self._log.topic_partition(), self._cluster_id, self._quorum.epoch(), self._quorum.local_id_or_throw(),
            state.preferred_successors(),
        )  # fmt: skip

    def _build_fetch_request(self) -> tuple[int, dict]:
        return RaftApiKeys.FETCH, raft_util.fetch_request(
            METADATA_TOPIC_ID, self._log.topic_partition(), self._cluster_id, self._quorum.local_id_or_sentinel(),
            self._fetch_max_wait_ms, self._quorum.epoch(), self._log.end_offset().offset,
            self._log.last_fetched_epoch(), MAX_FETCH_SIZE_BYTES,
        )  # fmt: skip

    def _build_fetch_snapshot_request(
        self, snapshot_id: OffsetAndEpoch, snapshot_size: int
    ) -> tuple[int, dict]:
        return RaftApiKeys.FETCH_SNAPSHOT, raft_util.fetch_snapshot_request(
            self._log.topic_partition(), self._cluster_id, self._quorum.local_id_or_sentinel(), self._quorum.epoch(),
            (snapshot_id.offset, snapshot_id.epoch), snapshot_size,
        )  # fmt: skip

    # -- inbound messages ------------------------------------------------------------------------------------

    def _handle_inbound_message(self, message: Any, current_time_ms: int) -> None:
        if isinstance(message, _CompletedFetch):
            self._on_held_fetch_done(message)
        elif isinstance(message, RaftRequest.Inbound):
            self._handle_request(message, current_time_ms)
        elif isinstance(message, RaftResponse.Inbound):
            connection = self._request_manager.get_or_create(message.source_id)
            if connection.is_response_expected(message.correlation_id):
                self._handle_response(message, current_time_ms)
            else:
                log.debug("Ignoring response %s since it is no longer needed", message)
        else:
            raise IllegalArgumentException(f"Unexpected message {message}")

    def _handle_request(self, request: RaftRequest.Inbound, current_time_ms: int) -> None:
        handlers = {
            RaftApiKeys.FETCH: self.handle_fetch_request,
            RaftApiKeys.VOTE: self.handle_vote_request,
            RaftApiKeys.BEGIN_QUORUM_EPOCH: self.handle_begin_quorum_epoch_request,
            RaftApiKeys.END_QUORUM_EPOCH: self.handle_end_quorum_epoch_request,
            RaftApiKeys.DESCRIBE_QUORUM: self.handle_describe_quorum_request,
            RaftApiKeys.FETCH_SNAPSHOT: self.handle_fetch_snapshot_request,
        }
        handler = handlers.get(request.api_key)
        if handler is None:
            raise IllegalArgumentException(f"Unexpected request type {request.api_key}")
        # An exception here is a bug, and goes up through poll() as in Kafka: only the leader's
        # fetch completion turns one into an error code (UNKNOWN_SERVER_ERROR).
        data = handler(request, current_time_ms)
        if data is not None:  # None: a Fetch held in the purgatory, answered later
            request.completion.set_result(
                RaftResponse.Outbound(request.correlation_id, request.api_key, data)
            )

    def _handle_response(self, response: RaftResponse.Inbound, current_time_ms: int) -> None:
        handlers = {
            RaftApiKeys.FETCH: self.handle_fetch_response,
            RaftApiKeys.VOTE: self.handle_vote_response,
            RaftApiKeys.BEGIN_QUORUM_EPOCH: self.handle_begin_quorum_epoch_response,
            RaftApiKeys.END_QUORUM_EPOCH: self.handle_end_quorum_epoch_response,
            RaftApiKeys.FETCH_SNAPSHOT: self.handle_fetch_snapshot_response,
        }
        handler = handlers.get(response.api_key)
        if handler is None:
            raise IllegalArgumentException(f"Received unexpected response type: {response.api_key}")
        handled_successfully = handler(response, current_time_ms)
        connection = self._request_manager.get_or_create(response.source_id)
        if handled_successfully:
            connection.on_response_received(response.correlation_id)
        else:
            connection.on_response_error(response.correlation_id, current_time_ms)

    # -- validation shared by the handlers -------------------------------------------------------------------

    def _validate_voter_only_request(self, remote_node_id: int, request_epoch: int) -> RaftErrors | None:
        """Vote, BeginQuorumEpoch, EndQuorumEpoch: only voters send them, in an epoch not behind ours."""
        if request_epoch < self._quorum.epoch():
            return RaftErrors.FENCED_LEADER_EPOCH
        if remote_node_id < 0:
            return RaftErrors.INVALID_REQUEST
        if self._quorum.is_observer() or not self._quorum.is_voter(remote_node_id):
            return RaftErrors.INCONSISTENT_VOTER_SET
        return None

    def _validate_leader_only_request(self, request_epoch: int) -> RaftErrors | None:
        """Fetch: only the leader of exactly the epoch the fetcher names answers it."""
        if request_epoch < self._quorum.epoch():
            return RaftErrors.FENCED_LEADER_EPOCH
        if request_epoch > self._quorum.epoch():
            return RaftErrors.UNKNOWN_LEADER_EPOCH
        if not self._quorum.is_leader():
            return RaftErrors.NOT_LEADER_OR_FOLLOWER
        return None

    def _has_valid_cluster_id(self, request_cluster_id: str | None) -> bool:
        # A request without one comes from a node that does not send it; it is let through.
        return request_cluster_id is None or request_cluster_id == self._cluster_id

    # --8<-- [start:maybe_handle_common_response]
    def _maybe_handle_common_response(
        self, error: RaftErrors, leader_id: int | None, epoch: int, current_time_ms: int
    ) -> bool | None:
        """What every response teaches, whatever its API; None when the handler should go on."""
        if epoch < self._quorum.epoch() or error == RaftErrors.UNKNOWN_LEADER_EPOCH:
            # We have moved past the epoch the answer is about: it no longer matters.
            return True
        if epoch > self._quorum.epoch() or error in (
            RaftErrors.FENCED_LEADER_EPOCH, RaftErrors.NOT_LEADER_OR_FOLLOWER,
        ):  # fmt: skip
            # Our request's epoch was stale: learn the newer one (and its leader, if named).
            self._maybe_transition(leader_id, epoch, current_time_ms)
            return True
        if epoch == self._quorum.epoch() and leader_id is not None and not self._quorum.has_leader():
            # The leader of our own epoch, which we did not know: follow it, and let the handler use
            # the answer if it carries no error (an observer learns the leader and fetches at once).
            self._transition_to_follower(epoch, leader_id, current_time_ms)
            return None if error == RaftErrors.NONE else True
        if error == RaftErrors.BROKER_NOT_AVAILABLE:
            return False
        if error == RaftErrors.INCONSISTENT_GROUP_PROTOCOL:
            # Kafka 3.3 checks this code here, though a voter refuses a stranger with
            # INCONSISTENT_VOTER_SET; that one therefore ends as an unexpected error (a backoff).
            raise IllegalStateException("Received error indicating inconsistent voter sets")
        if error == RaftErrors.INVALID_REQUEST:
            raise IllegalStateException("Received unexpected invalid request error")
        return None

    # --8<-- [end:maybe_handle_common_response]

    def _maybe_transition(self, leader_id: int | None, epoch: int, current_time_ms: int) -> None:
        if not self._has_consistent_leader(epoch, leader_id):
            raise IllegalStateException(
                f"Received request or response with leader {leader_id} and epoch {epoch} which is inconsistent "
                f"with current leader {self._quorum.leader_id()} and epoch {self._quorum.epoch()}"
            )
        if epoch > self._quorum.epoch():
            if leader_id is not None:
                self._transition_to_follower(epoch, leader_id, current_time_ms)
            else:
                self._transition_to_unattached(epoch)
        elif leader_id is not None and not self._quorum.has_leader():
            self._transition_to_follower(epoch, leader_id, current_time_ms)

    def _has_consistent_leader(self, epoch: int, leader_id: int | None) -> bool:
        # Raft's election safety: one leader per epoch. Two different ones named for the same epoch
        # means a bug or a corrupt state file, and the node must stop rather than follow either.
        if epoch != self._quorum.epoch():
            return True
        return leader_id is None or not self._quorum.has_leader() or leader_id == self._quorum.leader_id()

    def _handle_top_level_error(self, error: RaftErrors, response: RaftResponse.Inbound) -> bool:
        if error == RaftErrors.BROKER_NOT_AVAILABLE:
            return False
        return self._handle_unexpected_error(error, response)

    def _handle_unexpected_error(self, error: RaftErrors, response: RaftResponse.Inbound) -> bool:
        log.error("Unexpected error %s in %s response: %s", error.name, response.api_key, response)
        return False

    @staticmethod
    def _optional_leader_id(leader_id: int) -> int | None:
        return leader_id if leader_id >= 0 else None

    # -- Vote ------------------------------------------------------------------------------------------------

    # --8<-- [start:handle_vote_request]
    def handle_vote_request(self, request: RaftRequest.Inbound, current_time_ms: int) -> dict:
        data = request.data
        if not self._has_valid_cluster_id(data.get("cluster_id")):
            return raft_util.error_response(RaftApiKeys.VOTE, RaftErrors.INCONSISTENT_CLUSTER_ID)
        partition = raft_util.single_partition(data, self._log.topic_partition())
        if partition is None:
            # One Raft partition per quorum: anything else is a malformed request.
            return raft_util.error_response(RaftApiKeys.VOTE, RaftErrors.INVALID_REQUEST)
        # BEGIN SOLUTION
        candidate_id = partition["candidate_id"]
        candidate_epoch = partition["candidate_epoch"]
        if (
            partition["last_offset"] < 0
            or partition["last_offset_epoch"] < 0
            or (partition["last_offset_epoch"] >= candidate_epoch)
        ):
            # A candidate's last entry is from an epoch before the one it stands in.
            return self._build_vote_response(RaftErrors.NONE, RaftErrors.INVALID_REQUEST, False)
        error = self._validate_voter_only_request(candidate_id, candidate_epoch)
        if error is not None:
            return self._build_vote_response(RaftErrors.NONE, error, False)
        if candidate_epoch > self._quorum.epoch():
            self._transition_to_unattached(candidate_epoch)
        # Raft's election restriction: only a candidate whose log is at least as up to date as ours.
        last_epoch_end_offset_and_epoch = OffsetAndEpoch(
            partition["last_offset"], partition["last_offset_epoch"]
        )
        vote_granted = self._quorum.can_grant_vote(
            candidate_id, last_epoch_end_offset_and_epoch >= self._end_offset()
        )
        if vote_granted and self._quorum.is_unattached():
            self._transition_to_voted(candidate_id, candidate_epoch)
        log.info("Vote request %s with epoch %d is %s", partition, candidate_epoch,
                 "granted" if vote_granted else "rejected")  # fmt: skip
        return self._build_vote_response(RaftErrors.NONE, RaftErrors.NONE, vote_granted)
        # END SOLUTION

    # --8<-- [end:handle_vote_request]

    def _build_vote_response(
        self, top_level: RaftErrors, partition_error: RaftErrors, vote_granted: bool
    ) -> dict:
        return raft_util.vote_response(
            self._log.topic_partition(), top_level, partition_error, self._quorum.epoch(),
            self._quorum.leader_id_or_sentinel(), vote_granted,
        )  # fmt: skip

    def handle_vote_response(self, response: RaftResponse.Inbound, current_time_ms: int) -> bool:
        return self._handle_partition_response(
            response, current_time_ms, lambda partition: self._on_vote(response, partition, current_time_ms)
        )

    def _on_vote(self, response: RaftResponse.Inbound, partition: dict, current_time_ms: int) -> None:
        """A voter's answer without error: a granted vote may make this candidate leader."""
        # BEGIN SOLUTION
        if self._quorum.is_leader():
            log.debug("Ignoring vote response %s since we already became leader for epoch %d",
                      partition, self._quorum.epoch())  # fmt: skip
        elif self._quorum.is_candidate():
            state = self._quorum.candidate_state_or_throw()
            if partition["vote_granted"]:
                # Recorded during a backoff too: the tally is who answered what in this epoch (a voter
                # that answers both ways is caught), though a lost election stays lost.
                state.record_granted_vote(response.source_id)
                self._maybe_transition_to_leader(state, current_time_ms)
            else:
                state.record_rejected_vote(response.source_id)
                # Lost for certain: back off now rather than wait out the election timeout, so a
                # split vote clears quickly.
                if state.is_vote_rejected() and not state.is_backing_off():
                    log.info("Insufficient remaining votes to become leader (rejected by %s). "
                             "We will backoff before retrying election again", state.rejecting_voters())  # fmt: skip
                    state.start_backing_off(
                        current_time_ms, self._binary_exponential_election_backoff_ms(state.retries())
                    )
        else:
            log.debug("Ignoring vote response %s since we are no longer a candidate in epoch %d",
                      partition, self._quorum.epoch())  # fmt: skip
        # END SOLUTION

    # -- BeginQuorumEpoch ------------------------------------------------------------------------------------

    def handle_begin_quorum_epoch_request(self, request: RaftRequest.Inbound, current_time_ms: int) -> dict:
        data = request.data
        if not self._has_valid_cluster_id(data.get("cluster_id")):
            return raft_util.error_response(
                RaftApiKeys.BEGIN_QUORUM_EPOCH, RaftErrors.INCONSISTENT_CLUSTER_ID
            )
        partition = raft_util.single_partition(data, self._log.topic_partition())
        if partition is None:
            return raft_util.error_response(RaftApiKeys.BEGIN_QUORUM_EPOCH, RaftErrors.INVALID_REQUEST)
        request_leader_id = partition["leader_id"]
        request_epoch = partition["leader_epoch"]
        error = self._validate_voter_only_request(request_leader_id, request_epoch)
        if error is not None:
            return self._build_leader_response(RaftErrors.NONE, error)
        self._maybe_transition(request_leader_id, request_epoch, current_time_ms)
        return self._build_leader_response(RaftErrors.NONE, RaftErrors.NONE)

    def _build_leader_response(self, top_level: RaftErrors, partition_error: RaftErrors) -> dict:
        return raft_util.leader_response(
            self._log.topic_partition(), top_level, partition_error, self._quorum.epoch(),
            self._quorum.leader_id_or_sentinel(),
        )  # fmt: skip

    def _handle_partition_response(
        self, response: RaftResponse.Inbound, current_time_ms: int, on_success: Callable[[dict], None]
    ) -> bool:
        """The checks every one-partition answer goes through, in Kafka's order: a top-level error, the
        partition, then an epoch or leader newer than this node's (``_maybe_handle_common_response``);
        only an answer that survives them reaches ``on_success`` with its partition."""
        top_level_error = RaftErrors.for_code(response.data["error_code"])
        if top_level_error != RaftErrors.NONE:
            return self._handle_top_level_error(top_level_error, response)
        partition = raft_util.single_partition(response.data, self._log.topic_partition())
        if partition is None:
            return False
        error = RaftErrors.for_code(partition["error_code"])
        handled = self._maybe_handle_common_response(
            error,
            self._optional_leader_id(partition["leader_id"]),
            partition["leader_epoch"],
            current_time_ms,
        )
        if handled is not None:
            return handled
        if error != RaftErrors.NONE:
            return self._handle_unexpected_error(error, response)
        on_success(partition)
        return True

    def handle_begin_quorum_epoch_response(
        self, response: RaftResponse.Inbound, current_time_ms: int
    ) -> bool:
        def acknowledge(remote_node_id: int) -> None:
            if self._quorum.is_leader():
                self._quorum.leader_state_or_throw().add_acknowledgement_from(remote_node_id)
            else:
                log.debug(
                    "Ignoring BeginQuorumEpoch response %s since this node is not the leader anymore",
                    response,
                )

        return self._handle_partition_response(
            response, current_time_ms, lambda _: acknowledge(response.source_id)
        )

    # -- EndQuorumEpoch --------------------------------------------------------------------------------------

    def handle_end_quorum_epoch_request(self, request: RaftRequest.Inbound, current_time_ms: int) -> dict:
        data = request.data
        if not self._has_valid_cluster_id(data.get("cluster_id")):
            return raft_util.error_response(RaftApiKeys.END_QUORUM_EPOCH, RaftErrors.INCONSISTENT_CLUSTER_ID)
        partition = raft_util.single_partition(data, self._log.topic_partition())
        if partition is None:
            return raft_util.error_response(RaftApiKeys.END_QUORUM_EPOCH, RaftErrors.INVALID_REQUEST)
        request_leader_id = partition["leader_id"]
        request_epoch = partition["leader_epoch"]
        error = self._validate_voter_only_request(request_leader_id, request_epoch)
        if error is not None:
            return self._build_leader_response(RaftErrors.NONE, error)
        self._maybe_transition(request_leader_id, request_epoch, current_time_ms)
        if self._quorum.is_follower():
            state = self._quorum.follower_state_or_throw()
            if state.leader_id() == request_leader_id:
                # The leader is leaving: stand soon, the best-placed successor first, rather than
                # waiting out the whole fetch timeout.
                election_backoff_ms = self._end_epoch_election_backoff(partition["preferred_successors"])
                log.debug(
                    "Overriding follower fetch timeout to %d after receiving EndQuorumEpoch",
                    election_backoff_ms,
                )
                state.override_fetch_timeout(current_time_ms, election_backoff_ms)
        return self._build_leader_response(RaftErrors.NONE, RaftErrors.NONE)

    def _end_epoch_election_backoff(self, preferred_successors: list[int]) -> int:
        # The first successor stands at once, the others after a backoff that doubles with their
        # place in the list, so the most up-to-date voter is the likeliest winner.
        local_id = self._quorum.local_id_or_throw()
        position = preferred_successors.index(local_id) if local_id in preferred_successors else -1
        if position <= 0:
            return 0
        return self._strict_exponential_election_backoff_ms(position, len(preferred_successors))

    def handle_end_quorum_epoch_response(self, response: RaftResponse.Inbound, current_time_ms: int) -> bool:
        def acknowledge(remote_node_id: int) -> None:
            if self._quorum.is_resigned():
                self._quorum.resigned_state_or_throw().acknowledge_resignation(remote_node_id)

        return self._handle_partition_response(
            response, current_time_ms, lambda _: acknowledge(response.source_id)
        )

    # -- Fetch -----------------------------------------------------------------------------------------------

    # --8<-- [start:handle_fetch_request]
    def handle_fetch_request(self, request: RaftRequest.Inbound, current_time_ms: int) -> dict | None:
        data = request.data
        tp = self._log.topic_partition()
        if not self._has_valid_cluster_id(data.get("cluster_id")):
            return raft_util.error_response(RaftApiKeys.FETCH, RaftErrors.INCONSISTENT_CLUSTER_ID)
        partition = raft_util.single_partition(data, tp)
        if partition is None:
            return raft_util.error_response(RaftApiKeys.FETCH, RaftErrors.INVALID_REQUEST)
        if (
            data["max_wait_ms"] < 0
            or partition["fetch_offset"] < 0
            or partition["last_fetched_epoch"] < 0
            or partition["last_fetched_epoch"] > partition["current_leader_epoch"]
        ):
            return self._build_fetch_response(RaftErrors.INVALID_REQUEST)
        high_watermark = self._log.high_watermark().offset
        response = self._try_complete_fetch_request(data["replica_id"], partition, current_time_ms)
        answered = raft_util.single_partition(response, tp, "responses")
        if (
            answered is None
            or answered["error_code"] != RaftErrors.NONE
            or answered["records"]
            or data["max_wait_ms"] == 0
            or self._sends_the_follower_to_truncate_or_to_a_snapshot(answered)
            # This Fetch moved the high watermark: the Fetches held until now were answered with the
            # new one, and so is this one, or its follower would learn of the commit its own fetch
            # offset made only when the wait runs out (kafka_lite's own: see the header).
            or self._log.high_watermark().offset != high_watermark
        ):
            return response
        # Nothing to send yet: hold the Fetch until the log end passes its offset (or the rest of
        # the header's list). Its future's callback may run on the expiration reaper's thread, so it
        # only queues the Fetch back; ``_on_held_fetch_done`` answers it on this thread.
        future = self._fetch_purgatory.await_(partition["fetch_offset"], data["max_wait_ms"])
        future.add_done_callback(
            lambda done: self._message_queue.add(_CompletedFetch(request, partition, done))
        )
        return None

    @staticmethod
    def _sends_the_follower_to_truncate_or_to_a_snapshot(partition: dict) -> bool:
        """Whether the answer names a diverging epoch or a snapshot id: it is then sent at once.

        Kafka 3.6 (KAFKA-15100, which fixed this beside its expiration-service race). Kafka 3.3
        holds any answer without records, these too; but a
        follower told to truncate or to fetch a snapshot can do nothing else until it has, so
        holding the answer only delays it by the max wait. And the purgatory releases a Fetch when
        the log end passes its fetch offset: a follower whose log runs past the leader's (the
        usual divergence) waits the whole max wait, each round, while its fetch timeout runs.
        """
        return partition["diverging_epoch"]["epoch"] >= 0 or partition["snapshot_id"]["epoch"] >= 0

    def _on_held_fetch_done(self, held: _CompletedFetch) -> None:
        request, partition = held.request, held.partition
        exception = held.future.exception()
        if exception is not None:
            # Expired: nothing new came, so answer with what there is now. Any other error (the
            # node stopped leading) is the answer.
            error = Errors.for_exception(exception)
            if error is not Errors.REQUEST_TIMED_OUT:
                log.debug("Failed to handle fetch from %s at %s due to %s", request.data["replica_id"],
                          partition["fetch_offset"], error.name)  # fmt: skip
                data = self._build_fetch_response(RaftErrors.for_code(error.code))
                request.completion.set_result(
                    RaftResponse.Outbound(request.correlation_id, request.api_key, data)
                )
                return
        data = self._try_complete_fetch_request(
            request.data["replica_id"], partition, self._time.milliseconds()
        )
        request.completion.set_result(RaftResponse.Outbound(request.correlation_id, request.api_key, data))

    def _try_complete_fetch_request(self, replica_id: int, partition: dict, current_time_ms: int) -> dict:
        try:
            return self._complete_fetch_request(replica_id, partition, current_time_ms)
        except Exception:
            log.exception("Caught unexpected error in fetch completion of request %s", partition)
            return self._build_fetch_response(RaftErrors.UNKNOWN_SERVER_ERROR)

    def _complete_fetch_request(self, replica_id: int, partition: dict, current_time_ms: int) -> dict:
        error = self._validate_leader_only_request(partition["current_leader_epoch"])
        if error is not None:
            return self._build_fetch_response(error)
        # BEGIN SOLUTION
        state = self._quorum.leader_state_or_throw()
        # Does the follower's log match ours up to its fetch offset? Raft's consistency check, done
        # by the leader (KIP-595) rather than by the follower as in the paper's AppendEntries.
        valid = self._log.validate_offset_and_epoch(
            partition["fetch_offset"], partition["last_fetched_epoch"]
        )
        records = b""
        if valid.kind is Kind.VALID:
            info = self._log.read(partition["fetch_offset"], Isolation.UNCOMMITTED)
            # The fetch offset is what the follower has: a voter's counts towards the high watermark.
            if state.update_replica_state(replica_id, current_time_ms, info.start_offset_metadata):
                self._on_update_leader_high_watermark(state, current_time_ms)
            records = (
                bytes(info.records.buffer()) if isinstance(info.records, MemoryRecords) else info.records
            )
        return self._build_fetch_response(RaftErrors.NONE, records, valid, state.high_watermark())
        # END SOLUTION

    # --8<-- [end:handle_fetch_request]

    def _build_fetch_response(
        self, error: RaftErrors, records: Any = b"", valid: Any = None, high_watermark: Any = None
    ) -> dict:
        diverging = snapshot = None
        if valid is not None and valid.kind is Kind.DIVERGING:
            diverging = (valid.offset_and_epoch.epoch, valid.offset_and_epoch.offset)
        elif valid is not None and valid.kind is Kind.SNAPSHOT:
            snapshot = (valid.offset_and_epoch.epoch, valid.offset_and_epoch.offset)
        return raft_util.fetch_response(
            METADATA_TOPIC_ID, self._log.topic_partition(), error, records=records,
            high_watermark=high_watermark.offset if high_watermark is not None else -1,
            log_start_offset=self._log.start_offset(), leader_id=self._quorum.leader_id_or_sentinel(),
            leader_epoch=self._quorum.epoch(), diverging_epoch=diverging, snapshot_id=snapshot,
        )  # fmt: skip

    # --8<-- [start:handle_fetch_response]
    def handle_fetch_response(self, response: RaftResponse.Inbound, current_time_ms: int) -> bool:
        top_level_error = RaftErrors.for_code(response.data["error_code"])
        if top_level_error != RaftErrors.NONE:
            return self._handle_top_level_error(top_level_error, response)
        partition = raft_util.single_partition(response.data, self._log.topic_partition(), "responses")
        if partition is None:
            return False
        current_leader = partition["current_leader"]
        error = RaftErrors.for_code(partition["error_code"])
        handled = self._maybe_handle_common_response(
            error,
            self._optional_leader_id(current_leader["leader_id"]),
            current_leader["leader_epoch"],
            current_time_ms,
        )
        if handled is not None:
            return handled
        if error != RaftErrors.NONE:
            return self._handle_unexpected_error(error, response)
        # BEGIN SOLUTION
        state = self._quorum.follower_state_or_throw()
        diverging_epoch = partition["diverging_epoch"]
        snapshot_id = partition["snapshot_id"]
        if diverging_epoch["epoch"] >= 0:
            # The leader's log differs from ours past this point: drop our tail and fetch again.
            diverging = OffsetAndEpoch(diverging_epoch["end_offset"], diverging_epoch["epoch"])
            high_watermark = state.high_watermark()
            # The leader's own offset is judged, before the log is touched: a leader that says its
            # log parts from ours below our high watermark lacks a committed entry, whatever our
            # truncation would work out to.
            if high_watermark is not None and diverging.offset < high_watermark.offset:
                # Committed entries never change: a leader asking this is a bug, not a divergence.
                raise KafkaException(
                    f"The leader requested truncation to offset {diverging.offset}, which is below the "
                    f"current high watermark {high_watermark}"
                )
            truncation_offset = self._log.truncate_to_end_offset(diverging)
            log.info("Truncated to offset %d from Fetch response from leader %d", truncation_offset,
                     self._quorum.leader_id_or_sentinel())  # fmt: skip
        elif snapshot_id["epoch"] >= 0 or snapshot_id["end_offset"] >= 0:
            if snapshot_id["epoch"] < 0 or snapshot_id["end_offset"] < 0:
                log.error(
                    "The leader sent a snapshot id with an invalid epoch or end offset: %s", snapshot_id
                )
                return False
            # The entries we need are folded into a snapshot: fetch it (FetchSnapshot) before fetching on.
            state.set_fetching_snapshot(
                self._log.store_snapshot(OffsetAndEpoch(snapshot_id["end_offset"], snapshot_id["epoch"]))
            )
        else:
            records = partition["records"]
            if records:
                self._append_as_follower(MemoryRecords(bytes(records)))
            high_watermark = partition["high_watermark"]
            self._update_follower_high_watermark(state, high_watermark if high_watermark >= 0 else None)
        state.reset_fetch_timeout(current_time_ms)
        return True
        # END SOLUTION

    # --8<-- [end:handle_fetch_response]

    def _append_as_follower(self, records: MemoryRecords) -> None:
        info = self._log.append_as_follower(records)
        # The next fetch offset tells the leader this replica holds these entries, and a voter's
        # counts towards committing them: so they must be on disk before that fetch goes out.
        self._log.flush(False)
        log.debug("Follower end offset updated to %s after append (%s)", self._end_offset(), info)

    def _update_follower_high_watermark(self, state: FollowerState, high_watermark: int | None) -> None:
        if high_watermark is None:
            return
        # The leader's value may be past what we hold; ours is never past our own log end.
        new_high_watermark = min(self._log.end_offset().offset, high_watermark)
        if state.update_high_watermark(new_high_watermark):
            log.debug("Follower high watermark updated to %d", new_high_watermark)
            self._log.update_high_watermark(state.high_watermark())
            self._update_listeners_progress(new_high_watermark)

    # -- FetchSnapshot --------------------------------------------------------------------------------------

    def handle_fetch_snapshot_request(self, request: RaftRequest.Inbound, current_time_ms: int) -> dict:
        data = request.data
        tp = self._log.topic_partition()
        if not self._has_valid_cluster_id(data.get("cluster_id")):
            return raft_util.error_response(RaftApiKeys.FETCH_SNAPSHOT, RaftErrors.INCONSISTENT_CLUSTER_ID)
        topics = data.get("topics") or []
        if len(topics) != 1 or len(topics[0].get("partitions") or []) != 1:
            return raft_util.error_response(RaftApiKeys.FETCH_SNAPSHOT, RaftErrors.INVALID_REQUEST)
        partition = raft_util.single_partition(data, tp)
        if partition is None:
            # One partition of another topic (or another partition of ours): Kafka 3.3 answers it as
            # a partition this node does not have, under the name asked for, with no leader named.
            unknown = TopicPartition(topics[0]["name"], topics[0]["partitions"][0]["partition"])
            return raft_util.fetch_snapshot_response(unknown, RaftErrors.UNKNOWN_TOPIC_OR_PARTITION, -1, -1)
        leader_id, epoch = self._quorum.leader_id_or_sentinel(), self._quorum.epoch()
        error = self._validate_leader_only_request(partition["current_leader_epoch"])
        if error is not None:
            return raft_util.fetch_snapshot_response(tp, error, leader_id, epoch)
        snapshot_id = OffsetAndEpoch(
            partition["snapshot_id"]["end_offset"], partition["snapshot_id"]["epoch"]
        )
        snapshot = self._log.read_snapshot(snapshot_id)
        if snapshot is None:
            # Deleted since the Fetch that named it: the follower starts over with a Fetch.
            return raft_util.fetch_snapshot_response(tp, RaftErrors.SNAPSHOT_NOT_FOUND, leader_id, epoch)
        snapshot_size = snapshot.size_in_bytes()
        position = partition["position"]
        if position < 0 or position >= snapshot_size:
            return raft_util.fetch_snapshot_response(tp, RaftErrors.POSITION_OUT_OF_RANGE, leader_id, epoch)
        # A slice of bytes, not whole batches: the follower appends them as they come, and only the
        # finished snapshot is read as records.
        records = bytes(snapshot.slice(position, min(data["max_bytes"], snapshot_size)))
        return raft_util.fetch_snapshot_response(
            tp, RaftErrors.NONE, leader_id, epoch, (snapshot_id.offset, snapshot_id.epoch), snapshot_size, position,
            records,
        )  # fmt: skip

    def handle_fetch_snapshot_response(self, response: RaftResponse.Inbound, current_time_ms: int) -> bool:
        top_level_error = RaftErrors.for_code(response.data["error_code"])
        if top_level_error != RaftErrors.NONE:
            return self._handle_top_level_error(top_level_error, response)
        partition = raft_util.single_partition(response.data, self._log.topic_partition())
        if partition is None:
            return False
        current_leader = partition["current_leader"]
        error = RaftErrors.for_code(partition["error_code"])
        handled = self._maybe_handle_common_response(
            error,
            self._optional_leader_id(current_leader["leader_id"]),
            current_leader["leader_epoch"],
            current_time_ms,
        )
        if handled is not None:
            return handled
        state = self._quorum.follower_state_or_throw()
        response_id = partition["snapshot_id"]
        if (
            error == RaftErrors.SNAPSHOT_NOT_FOUND
            or response_id["end_offset"] < 0
            or response_id["epoch"] < 0
        ):
            # The leader deleted the snapshot first: start over with a Fetch.
            state.set_fetching_snapshot(None)
            state.reset_fetch_timeout(current_time_ms)
            return True
        snapshot_id = OffsetAndEpoch(response_id["end_offset"], response_id["epoch"])
        snapshot = state.fetching_snapshot()
        if snapshot is None:
            raise IllegalStateException(f"Received unexpected fetch snapshot response: {partition}")
        if snapshot.snapshot_id() != snapshot_id:
            raise IllegalStateException(
                f"Received fetch snapshot response with an invalid id. Expected {snapshot.snapshot_id()}; "
                f"Received {snapshot_id}"
            )
        if snapshot.size_in_bytes() != partition["position"]:
            raise IllegalStateException(
                f"Received fetch snapshot response with an invalid position. Expected {snapshot.size_in_bytes()}; "
                f"Received {partition['position']}"
            )
        snapshot.append(bytes(partition["unaligned_records"]))
        if snapshot.size_in_bytes() == partition["size"]:
            # Finished: the snapshot replaces the whole log, which goes on from its end offset.
            snapshot.freeze()
            state.set_fetching_snapshot(None)
            if not self._log.truncate_to_latest_snapshot():
                raise IllegalStateException(
                    f"Full log truncation expected but didn't happen. Snapshot of {snapshot.snapshot_id()}, log end "
                    f"offset {self._log.end_offset()}, last fetched {self._log.last_fetched_epoch()}"
                )
            self._update_follower_high_watermark(state, self._log.high_watermark().offset)
        state.reset_fetch_timeout(current_time_ms)
        return True

    # -- DescribeQuorum --------------------------------------------------------------------------------------

    def handle_describe_quorum_request(self, request: RaftRequest.Inbound, current_time_ms: int) -> dict:
        tp = self._log.topic_partition()
        if raft_util.single_partition(request.data, tp) is None:
            return raft_util.describe_quorum_error_response(tp, RaftErrors.UNKNOWN_TOPIC_OR_PARTITION)
        if not self._quorum.is_leader():
            return raft_util.describe_quorum_error_response(tp, RaftErrors.NOT_LEADER_OR_FOLLOWER)
        described = self._quorum.leader_state_or_throw().describe_quorum(current_time_ms)
        return raft_util.describe_quorum_response(tp, {
            "error_code": described.error_code, "leader_id": described.leader_id,
            "leader_epoch": described.leader_epoch, "high_watermark": described.high_watermark,
            "current_voters": [vars(r) for r in described.current_voters],
            "observers": [vars(r) for r in described.observers],
        })  # fmt: skip

    # -- listeners -------------------------------------------------------------------------------------------

    def _poll_listeners(self) -> None:
        for listener in self._pending_registrations:
            self._listener_contexts[id(listener)] = _ListenerContext(listener)
        self._pending_registrations = []
        high_watermark = self._quorum.high_watermark()
        if high_watermark is not None:
            self._update_listeners_progress(high_watermark.offset)
        self._tell_new_listeners_the_leader()

    def _tell_new_listeners_the_leader(self) -> None:
        """Tell every listener the current leader and epoch, unless it has heard them already.

        Kafka 3.7.1 and 3.8 (KAFKA-16286). Kafka 3.3 tells listeners of a leader only when this
        node changes state (a leader also in its own poll), so a listener registered after a
        follower's last transition hears of no leader until the next election: a standby
        controller registered late would not know which controller is active. A leader's own
        election still waits until the listener has read up to the epoch's start.
        """
        leader_state = self._quorum.maybe_leader_state()
        if leader_state is not None:
            self._maybe_fire_leader_change_for_leader(leader_state)
        else:
            self._maybe_fire_leader_change()

    # --8<-- [start:update_listeners_progress]
    def _update_listeners_progress(self, high_watermark: int) -> None:
        for context in self._listener_contexts.values():
            next_offset = context.next_expected_offset()
            # What the listener needs next is gone from the log: a snapshot stands for it. The
            # latest one is loaded (it holds the whole state up to its end), then the log from there.
            if next_offset < self._log.start_offset() and next_offset < high_watermark:
                snapshot = self._latest_snapshot()
                if snapshot is None:
                    raise IllegalStateException(
                        f"Snapshot expected since next offset of {context.listener} is {next_offset}, log start "
                        f"offset is {self._log.start_offset()} and high-watermark is {high_watermark}"
                    )
                context.fire_handle_snapshot(snapshot)
                next_offset = context.next_expected_offset()
            if next_offset < high_watermark:
                info = self._log.read(next_offset, Isolation.COMMITTED)
                batches = self._read_batches(info.records)
                if batches:
                    context.fire_handle_commit(batches)

    # --8<-- [end:update_listeners_progress]

    def _latest_snapshot(self) -> RecordsSnapshotReader | None:
        raw = self._log.latest_snapshot()
        return None if raw is None else RecordsSnapshotReader.of(raw, self._serde)

    def _read_batches(self, records: Any) -> list[Batch]:
        # A log on disk reads as a slice of its segment file; its batches are decoded from memory,
        # as Kafka's RecordsIterator reads a FileRecords into buffers.
        if isinstance(records, FileRecords):
            records = MemoryRecords(records.read_bytes())
        batches = []
        for batch in records.batches():
            # Each record decoded by the clients' codec (common/record/codec.py), as a consumer's are.
            values = (
                []
                if batch.is_control_batch
                else [self._serde.deserialize(r.value) for r in codec.records(batch)]
            )
            batches.append(Batch(batch.base_offset, batch.partition_leader_epoch, batch.max_timestamp,
                                 batch.last_offset, values, batch.is_control_batch))  # fmt: skip
        return batches

    def _maybe_fire_leader_change(self) -> None:
        leader = self.leader_and_epoch()
        for context in self._listener_contexts.values():
            context.maybe_fire_leader_change(leader)

    def _maybe_fire_leader_change_for_leader(self, state: LeaderState) -> None:
        leader = self.leader_and_epoch()
        for context in self._listener_contexts.values():
            context.maybe_fire_leader_change(leader, state.epoch_start_offset())

    # -- helpers ---------------------------------------------------------------------------------------------

    def _end_offset(self) -> OffsetAndEpoch:
        """This node's last entry, as Raft compares logs: its end offset and the epoch of its last entry."""
        return OffsetAndEpoch(self._log.end_offset().offset, self._log.last_fetched_epoch())

    def message_queue_size(self) -> int:
        return self._message_queue.size()

    def _wakeup(self) -> None:
        self._message_queue.wakeup()

    def close(self) -> None:
        leader_state = self._quorum.maybe_leader_state()
        if leader_state is not None:
            leader_state.close()
