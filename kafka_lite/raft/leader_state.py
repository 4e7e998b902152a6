"""Leader: the node won this epoch's election; it tracks how far each replica has fetched and moves
the high watermark.

Mirrors: org.apache.kafka.raft.LeaderState and its ReplicaState
         (raft/src/main/java/org/apache/kafka/raft/LeaderState.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: ``describe_quorum`` returns plain dataclasses with DescribeQuorum's fields, which the client
         puts in the response. The accumulator is whatever the caller gives (KafkaRaftClient's
         BatchAccumulator); this class closes it, and ``append_leader_change_message`` hands the
         message to the accumulator as a dict of LeaderChangeMessage's fields.
Labs:    lab 18, stage 3 (``LeaderState._maybe_update_high_watermark``)

Each voter has a ``ReplicaState``: the end offset it last fetched from, when, and whether it has
acknowledged this leader (answered BeginQuorumEpoch or sent a Fetch). Observers get one too, made on
their first fetch and forgotten after five minutes of silence; they never count towards the high
watermark.

The high watermark is the leader's commit point, worked out from the voters' end offsets each
time one of them moves (``_maybe_update_high_watermark``): Raft's commit rule, with its rule for the
entries of earlier epochs (the paper's 5.4.2 and Figure 8). ``epoch_start_offset`` is the leader's
log end when it was elected, where it writes its LeaderChange record, the first entry of its epoch.

A new leader also starts with no high watermark, even if it knew one as a follower: the value it
reports must never go back, and only the majority rule above can promise that.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Set
from dataclasses import dataclass, field
from typing import Any

from kafka_lite.common.errors import Errors, IllegalArgumentException, IllegalStateException
from kafka_lite.raft.election_state import ElectionState
from kafka_lite.raft.epoch_state import EpochState
from kafka_lite.raft.log_offset_metadata import LogOffsetMetadata

log = logging.getLogger(__name__)

# An observer not heard from for this long is dropped from describe_quorum's answer.
OBSERVER_SESSION_TIMEOUT_MS = 300_000


@dataclass(repr=False)
class ReplicaState:
    """What the leader knows of one replica's progress (Kafka's LeaderState.ReplicaState)."""

    node_id: int
    has_acknowledged_leader: bool
    end_offset: LogOffsetMetadata | None = None
    last_fetch_timestamp: int = -1
    last_fetch_leader_log_end_offset: int = -1
    last_caught_up_timestamp: int = -1

    def update_leader_state(self, end_offset_metadata: LogOffsetMetadata) -> None:
        # The leader's own entry needs only its end offset; its times are "now" by definition.
        self.end_offset = end_offset_metadata

    def update_follower_state(
        self,
        current_time_ms: int,
        fetch_offset_metadata: LogOffsetMetadata,
        leader_end_offset: LogOffsetMetadata | None,
    ) -> None:
        # The caught-up time is worked out before the fetch time moves, because a follower that has
        # now reached the leader's end offset as of its *previous* fetch was caught up at that
        # previous fetch's time.
        if leader_end_offset is not None:
            if fetch_offset_metadata.offset >= leader_end_offset.offset:
                self.last_caught_up_timestamp = max(self.last_caught_up_timestamp, current_time_ms)
            elif (
                self.last_fetch_leader_log_end_offset > 0
                and fetch_offset_metadata.offset >= self.last_fetch_leader_log_end_offset
            ):
                self.last_caught_up_timestamp = max(self.last_caught_up_timestamp, self.last_fetch_timestamp)
            self.last_fetch_leader_log_end_offset = leader_end_offset.offset
        self.last_fetch_timestamp = max(self.last_fetch_timestamp, current_time_ms)
        self.end_offset = fetch_offset_metadata
        # Fetching from this leader is the strongest acknowledgement there is.
        self.has_acknowledged_leader = True

    def __repr__(self) -> str:
        end = self.end_offset.offset if self.end_offset is not None else None
        return (
            f"ReplicaState(nodeId={self.node_id}, endOffset={end}, lastFetchTimestamp={self.last_fetch_timestamp}, "
            f"lastCaughtUpTimestamp={self.last_caught_up_timestamp}, "
            f"hasAcknowledgedLeader={self.has_acknowledged_leader})"
        )

    def sort_key(self) -> tuple:
        # Kafka's compareTo: highest end offset first, replicas with none last, ties by node id.
        if self.end_offset is None:
            return (1, 0, self.node_id)
        return (0, -self.end_offset.offset, self.node_id)


@dataclass(frozen=True)
class DescribedReplicaState:
    """One replica in DescribeQuorum's answer (DescribeQuorumResponseData.ReplicaState)."""

    replica_id: int
    log_end_offset: int
    last_fetch_timestamp: int
    last_caught_up_timestamp: int


@dataclass(frozen=True)
class DescribedQuorum:
    """The leader's DescribeQuorum partition data (DescribeQuorumResponseData.PartitionData)."""

    error_code: int
    leader_id: int
    leader_epoch: int
    high_watermark: int
    current_voters: list[DescribedReplicaState] = field(default_factory=list)
    observers: list[DescribedReplicaState] = field(default_factory=list)


class LeaderState(EpochState):
    def __init__(
        self,
        local_id: int,
        epoch: int,
        epoch_start_offset: int,
        voters: Set[int],
        granting_voters: Iterable[int],
        accumulator: Any,
    ) -> None:
        self._local_id = local_id
        self._epoch = epoch
        self._epoch_start_offset = epoch_start_offset
        self._high_watermark: LogOffsetMetadata | None = None
        # Only the leader has acknowledged itself; the others are BeginQuorumEpoch's targets until
        # they answer it or fetch.
        self._voter_states = {
            voter_id: ReplicaState(voter_id, has_acknowledged_leader=voter_id == local_id)
            for voter_id in voters
        }
        self._observer_states: dict[int, ReplicaState] = {}
        self._granting_voters = set(granting_voters)
        self._accumulator = accumulator
        # Resignation may be asked for from another thread (the controller shutting down); a plain
        # attribute write is atomic in Python, as Kafka's volatile is in Java.
        self._resign_requested = False

    def accumulator(self) -> Any:
        return self._accumulator

    # --8<-- [start:append_leader_change_message]
    def append_leader_change_message(self, current_time_ms: int) -> None:
        """The leader's first entry in its epoch: who leads, the voters, and who voted for it (Raft's
        no-op entry, which lets the leader commit its predecessors' entries: the paper's 5.4.2)."""
        message = {
            "version": 0,
            "leader_id": self._local_id,
            "voters": [{"voter_id": v} for v in sorted(self._voter_states)],
            "granting_voters": [{"voter_id": v} for v in sorted(self._granting_voters)],
        }
        self._accumulator.append_leader_change_message(message, current_time_ms)
        self._accumulator.force_drain()

    # --8<-- [end:append_leader_change_message]

    def is_resign_requested(self) -> bool:
        return self._resign_requested

    def request_resign(self) -> None:
        self._resign_requested = True

    def high_watermark(self) -> LogOffsetMetadata | None:
        return self._high_watermark

    def election(self) -> ElectionState:
        return ElectionState.with_elected_leader(self._epoch, self._local_id, self._voter_states.keys())

    def epoch(self) -> int:
        return self._epoch

    def granting_voters(self) -> set[int]:
        return self._granting_voters

    def local_id(self) -> int:
        return self._local_id

    def epoch_start_offset(self) -> int:
        return self._epoch_start_offset

    def non_acknowledging_voters(self) -> set[int]:
        """The voters still to hear of this leader: where BeginQuorumEpoch goes."""
        return {s.node_id for s in self._voter_states.values() if not s.has_acknowledged_leader}

    def _maybe_update_high_watermark(self) -> bool:
        """The leader's commit rule, asked whenever a voter's end offset (the leader's own among them)
        may have moved: advance the high watermark to what the voters' progress now commits. It never
        moves back. True when it moved."""
        # BEGIN SOLUTION
        # The largest offset a majority of voters (the leader among them) has reached: sort the
        # voters' end offsets from the highest, and take the one at index len(voters) // 2 (the
        # leader is in the list once; observers are not in it).
        followers = self._followers_by_descending_fetch_offset()
        index_of_hw = len(self._voter_states) // 2
        update = followers[index_of_hw].end_offset
        if update is None:
            return False
        # Raft's "commit only entries of the current term" (the paper's 5.4.2 and Figure 8): an entry
        # of an earlier epoch held by a majority may still be overwritten by a future leader that
        # never saw it, unless an entry of this epoch is committed on top of it. Kafka's leader writes
        # a LeaderChange record at epoch_start_offset for exactly this, so the value counts only once
        # it is past epoch_start_offset: as soon as a majority has that record.
        if update.offset <= self._epoch_start_offset:
            return False
        current = self._high_watermark
        if current is None:
            return self._set_high_watermark(update, index_of_hw, followers)
        if update.offset > current.offset or (
            update.offset == current.offset and update.metadata != current.metadata
        ):
            # Equal offsets with new metadata: the log re-read the position (a segment roll);
            # take the fresher metadata.
            return self._set_high_watermark(update, index_of_hw, followers)
        if update.offset < current.offset:
            # A majority behind the committed offset means a voter lost data it had acknowledged.
            log.error(
                "The latest computed high watermark %d is smaller than the current value %d, which suggests "
                "that one of the voters has lost committed data. Full voter replication state: %s",
                update.offset,
                current.offset,
                list(self._voter_states.values()),
            )
        return False
        # END SOLUTION

    def _set_high_watermark(
        self, update: LogOffsetMetadata, index_of_hw: int, followers: list[ReplicaState]
    ) -> bool:
        self._high_watermark = update
        log.debug(
            "High watermark set to %s based on indexOfHw %d and voters %s", update, index_of_hw, followers
        )
        return True

    def update_local_state(self, end_offset_metadata: LogOffsetMetadata) -> bool:
        """The leader's log end moved to ``end_offset_metadata``; True if the high watermark moved."""
        state = self._get_or_create_replica_state(self._local_id)
        if state.end_offset is not None and state.end_offset.offset > end_offset_metadata.offset:
            # The leader's own log never shrinks while it leads: that would drop entries it may
            # already have handed to followers.
            raise IllegalStateException(
                f"Detected non-monotonic update of local end offset: "
                f"{state.end_offset.offset} -> {end_offset_metadata.offset}"
            )
        state.update_leader_state(end_offset_metadata)
        return self._maybe_update_high_watermark()

    def update_replica_state(
        self, replica_id: int, current_time_ms: int, fetch_offset_metadata: LogOffsetMetadata
    ) -> bool:
        """Replica ``replica_id`` fetched from ``fetch_offset_metadata`` at ``current_time_ms``;
        True if the high watermark moved."""
        if replica_id < 0:
            # A fetch with no replica id is a consumer's (or a tool's): it replicates nothing.
            return False
        if replica_id == self._local_id:
            raise IllegalStateException(f"Remote replica ID {replica_id} matches the local leader ID")
        state = self._get_or_create_replica_state(replica_id)
        if state.end_offset is not None and state.end_offset.offset > fetch_offset_metadata.offset:
            # A follower may go back legitimately (it truncated after a divergence), so only a warning.
            log.warning(
                "Detected non-monotonic update of fetch offset from nodeId %d: %d -> %d",
                state.node_id,
                state.end_offset.offset,
                fetch_offset_metadata.offset,
            )
        leader_end_offset = self._voter_states[self._local_id].end_offset
        state.update_follower_state(current_time_ms, fetch_offset_metadata, leader_end_offset)
        return self._is_voter(state.node_id) and self._maybe_update_high_watermark()

    def non_leader_voters_by_descending_fetch_offset(self) -> list[int]:
        """The other voters, furthest fetched first: a resigning leader's preferred successors."""
        return [
            s.node_id for s in self._followers_by_descending_fetch_offset() if s.node_id != self._local_id
        ]

    def _followers_by_descending_fetch_offset(self) -> list[ReplicaState]:
        return sorted(self._voter_states.values(), key=ReplicaState.sort_key)

    def add_acknowledgement_from(self, remote_node_id: int) -> None:
        """``remote_node_id`` answered BeginQuorumEpoch: it knows this leader."""
        self._ensure_valid_voter(remote_node_id).has_acknowledged_leader = True

    def _ensure_valid_voter(self, remote_node_id: int) -> ReplicaState:
        state = self._voter_states.get(remote_node_id)
        if state is None:
            raise IllegalArgumentException(f"Unexpected acknowledgement from non-voter {remote_node_id}")
        return state

    def _get_or_create_replica_state(self, remote_node_id: int) -> ReplicaState:
        state = self._voter_states.get(remote_node_id)
        if state is None:
            return self._observer_states.setdefault(remote_node_id, ReplicaState(remote_node_id, False))
        return state

    def voter_states(self) -> dict[int, ReplicaState]:
        return self._voter_states

    def observer_states(self) -> dict[int, ReplicaState]:
        return self._observer_states

    def describe_quorum(self, current_time_ms: int) -> DescribedQuorum:
        """The leader's view for DescribeQuorum (KIP-595, KIP-836)."""
        self._clear_inactive_observers(current_time_ms)
        return DescribedQuorum(
            error_code=Errors.NONE.code,
            leader_id=self._local_id,
            leader_epoch=self._epoch,
            high_watermark=self._high_watermark.offset if self._high_watermark is not None else -1,
            current_voters=self._describe_replica_states(self._voter_states, current_time_ms),
            observers=self._describe_replica_states(self._observer_states, current_time_ms),
        )

    def _describe_replica_states(self, states: dict[int, ReplicaState], current_time_ms: int) -> list:
        return [self._describe_replica_state(s, current_time_ms) for s in states.values()]

    def _describe_replica_state(self, state: ReplicaState, current_time_ms: int) -> DescribedReplicaState:
        if state.node_id == self._local_id:
            # The leader is always caught up with itself, and "fetches" continuously.
            last_caught_up = last_fetch = current_time_ms
        else:
            last_caught_up = state.last_caught_up_timestamp
            last_fetch = state.last_fetch_timestamp
        return DescribedReplicaState(
            replica_id=state.node_id,
            log_end_offset=state.end_offset.offset if state.end_offset is not None else -1,
            last_fetch_timestamp=last_fetch,
            last_caught_up_timestamp=last_caught_up,
        )

    def _clear_inactive_observers(self, current_time_ms: int) -> None:
        for node_id in [
            n
            for n, s in self._observer_states.items()
            if current_time_ms - s.last_fetch_timestamp >= OBSERVER_SESSION_TIMEOUT_MS
        ]:
            del self._observer_states[node_id]

    def _is_voter(self, remote_node_id: int) -> bool:
        return remote_node_id in self._voter_states

    def can_grant_vote(self, candidate_id: int, is_log_up_to_date: bool) -> bool:
        log.debug(
            "Rejecting vote request from candidate %d since we are already leader in epoch %d",
            candidate_id,
            self._epoch,
        )
        return False

    def name(self) -> str:
        return "Leader"

    def close(self) -> None:
        if self._accumulator is not None:
            self._accumulator.close()

    def __repr__(self) -> str:
        return (
            f"Leader(localId={self._local_id}, epoch={self._epoch}, epochStartOffset={self._epoch_start_offset}, "
            f"highWatermark={self._high_watermark}, voterStates={list(self._voter_states.values())})"
        )
