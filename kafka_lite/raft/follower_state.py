"""Follower: the node knows this epoch's leader and fetches from it.

Mirrors: org.apache.kafka.raft.FollowerState
         (raft/src/main/java/org/apache/kafka/raft/FollowerState.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: the snapshot being fetched (Kafka's ``fetchingSnapshot``, a RawSnapshotWriter) is held as
         whatever writer the caller sets, closed when replaced or when the state closes.
Labs:    lab 18, stage 1 (``FollowerState.can_grant_vote``)

Kafka's replication is pull: the follower sends Fetch to the leader, and each successful answer
resets the fetch timer. If ``controller.quorum.fetch.timeout.ms`` passes with no answer, a voter
assumes the leader is gone and stands as a candidate (Raft's heartbeat timeout, turned around: the
follower notices silence instead of the leader sending heartbeats).

The leader tells the follower its high watermark in each Fetch response. The follower takes it only
forwards: the high watermark is what the quorum has committed, and a committed entry never becomes
uncommitted, so a smaller value means a bug, not news.
"""

from __future__ import annotations

import logging
from collections.abc import Set
from typing import Any

from kafka_lite.common.errors import IllegalArgumentException
from kafka_lite.common.time import Time
from kafka_lite.raft.election_state import ElectionState
from kafka_lite.raft.epoch_state import EpochState
from kafka_lite.raft.log_offset_metadata import LogOffsetMetadata
from kafka_lite.raft.timer import Timer

log = logging.getLogger(__name__)


class FollowerState(EpochState):
    def __init__(
        self,
        time: Time,
        epoch: int,
        leader_id: int,
        voters: Set[int],
        high_watermark: LogOffsetMetadata | None,
        fetch_timeout_ms: int,
    ) -> None:
        self._fetch_timeout_ms = fetch_timeout_ms
        self._epoch = epoch
        self._leader_id = leader_id
        self._voters = frozenset(voters)
        # One timer for both Fetch and FetchSnapshot: either answer shows the leader is alive.
        self._fetch_timer = Timer(time, fetch_timeout_ms)
        self._high_watermark = high_watermark
        # While a snapshot is being fetched, ordinary Fetch requests pause.
        self._fetching_snapshot: Any = None

    def election(self) -> ElectionState:
        return ElectionState(self._epoch, self._leader_id, None, self._voters)

    def epoch(self) -> int:
        return self._epoch

    def name(self) -> str:
        return "Follower"

    def remaining_fetch_time_ms(self, current_time_ms: int) -> int:
        self._fetch_timer.update(current_time_ms)
        return self._fetch_timer.remaining_ms()

    def leader_id(self) -> int:
        return self._leader_id

    def has_fetch_timeout_expired(self, current_time_ms: int) -> bool:
        self._fetch_timer.update(current_time_ms)
        return self._fetch_timer.is_expired()

    def reset_fetch_timeout(self, current_time_ms: int) -> None:
        self._fetch_timer.update(current_time_ms)
        self._fetch_timer.reset(self._fetch_timeout_ms)

    def override_fetch_timeout(self, current_time_ms: int, timeout_ms: int) -> None:
        self._fetch_timer.update(current_time_ms)
        self._fetch_timer.reset(timeout_ms)

    def update_high_watermark(self, high_watermark: int | None) -> bool:
        """Take the leader's high watermark (None: the leader knows none yet); True if it moved."""
        if high_watermark is None and self._high_watermark is not None:
            raise IllegalArgumentException(
                f"Attempt to overwrite current high watermark {self._high_watermark} with unknown value"
            )
        if self._high_watermark is not None:
            previous = self._high_watermark.offset
            if high_watermark < 0:
                raise IllegalArgumentException("Illegal negative high watermark update")
            if previous > high_watermark:
                raise IllegalArgumentException("Non-monotonic update of high watermark attempted")
            if previous == high_watermark:
                return False
        self._high_watermark = None if high_watermark is None else LogOffsetMetadata(high_watermark)
        return True

    def high_watermark(self) -> LogOffsetMetadata | None:
        return self._high_watermark

    def fetching_snapshot(self) -> Any:
        return self._fetching_snapshot

    def set_fetching_snapshot(self, new_snapshot: Any) -> None:
        if self._fetching_snapshot is not None:
            self._fetching_snapshot.close()
        self._fetching_snapshot = new_snapshot

    def can_grant_vote(self, candidate_id: int, is_log_up_to_date: bool) -> bool:
        # BEGIN SOLUTION
        # The epoch has a leader: a vote now could only elect a second one.
        log.debug(
            "Rejecting vote request from candidate %d since we already have a leader %d in epoch %d",
            candidate_id,
            self._leader_id,
            self._epoch,
        )
        return False
        # END SOLUTION

    def close(self) -> None:
        if self._fetching_snapshot is not None:
            self._fetching_snapshot.close()

    def __repr__(self) -> str:
        return (
            f"FollowerState(fetchTimeoutMs={self._fetch_timeout_ms}, epoch={self._epoch}, "
            f"leaderId={self._leader_id}, voters={sorted(self._voters)}, highWatermark={self._high_watermark}, "
            f"fetchingSnapshot={self._fetching_snapshot})"
        )
