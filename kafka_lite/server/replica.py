"""One replica of a partition as the leader's broker sees it: its log end offset, and when it last caught up.

Mirrors: kafka.cluster.Replica (core/src/main/scala/kafka/cluster/Replica.scala, Kafka 0.10.1)
Book:    chapter 6, 6.2.2 (replicas, the LEO and the HW)
Differs: the LEO and the HW are plain ints where Kafka keeps ``LogOffsetMetadata``s (below); a
         follower counts as caught up by Kafka 0.10.2's rule (``update_log_read_result``): 0.10.1
         counted only a fetch that started exactly at the leader's LEO, which under steady load a
         follower rarely does, and the ISR flapped.

Kafka's ``LogOffsetMetadata`` is the offset, its segment and its byte position, which its
``DelayedFetch`` compares to count bytes without reading. Here the local LEO's position is the
log's own (``log_end_offset_metadata``), and the HW is kept as a ``LogOffsetMetadata`` whose position
is filled in when it is first asked for (``high_watermark_metadata``), unless the HW moved to the
LEO, whose position is at hand.

A partition has one ``Replica`` per assigned broker. The local one has the log: its log end offset
(LEO) is the log's, and it holds the partition's high watermark (HW), the offset below which every
in-sync replica has the records. A remote replica has no log here: the leader learns its LEO from
the offsets it fetches from (a follower fetching from offset N has everything below N), and from the
same fetches when it last "caught up", that is fetched up to the leader's LEO. The ISR is built on
that time: a follower that has not caught up for ``replica.lag.time.max.ms`` is out of sync.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafka_lite.common.time import Time
from kafka_lite.log.log_segment import LogOffsetMetadata

if TYPE_CHECKING:
    from kafka_lite.common.topic_partition import TopicPartition
    from kafka_lite.log.log import Log

UNKNOWN_OFFSET = -1


class Replica:
    def __init__(
        self,
        broker_id: int,
        tp: TopicPartition,
        time: Time,
        initial_high_watermark: int = 0,
        log: Log | None = None,
    ) -> None:
        self.broker_id = broker_id
        self.tp = tp
        self.time = time
        self.log = log
        # Kafka's highWatermarkMetadata; its position is not known yet
        self._high_watermark_metadata = LogOffsetMetadata(initial_high_watermark)
        self._log_end_offset = UNKNOWN_OFFSET  # a remote replica's, learned from its fetches
        self._log_start_offset = UNKNOWN_OFFSET  # a remote replica's, from its Fetch v5 (KIP-107)
        # the leader's LEO and the time at this replica's previous fetch, for last_caught_up_time_ms
        self._last_fetch_leader_log_end_offset = 0
        self._last_fetch_time_ms = 0
        # a new replica starts in sync for one lag period: it has had no chance to fetch yet
        self.last_caught_up_time_ms = time.milliseconds()

    def is_local(self) -> bool:
        return self.log is not None

    # --8<-- [start:update_log_read_result]
    def update_log_read_result(
        self, fetch_offset: int, leader_log_end_offset: int, fetch_time_ms: int
    ) -> None:
        """A follower fetched from ``fetch_offset`` when the leader's LEO was ``leader_log_end_offset``.

        Fetching from offset N means it has everything below N: that is its LEO. It has caught up if
        it fetched from the leader's LEO at the time; or if it has reached the LEO the leader had at
        its previous fetch, in which case it was caught up as of that previous fetch. The second rule
        keeps a follower in sync under steady load, where the leader's LEO moves between any two
        fetches and a fetch rarely starts exactly at it.
        """
        if fetch_offset >= leader_log_end_offset:
            self.last_caught_up_time_ms = max(self.last_caught_up_time_ms, fetch_time_ms)
        elif fetch_offset >= self._last_fetch_leader_log_end_offset:
            self.last_caught_up_time_ms = max(self.last_caught_up_time_ms, self._last_fetch_time_ms)
        self._log_end_offset = fetch_offset
        self._last_fetch_leader_log_end_offset = leader_log_end_offset
        self._last_fetch_time_ms = fetch_time_ms

    # --8<-- [end:update_log_read_result]

    def reset_last_caught_up_time(
        self, leader_log_end_offset: int, now_ms: int, last_caught_up_time_ms: int
    ) -> None:
        """A new leader starts every follower's lag clock afresh (it has no fetch history)."""
        self._last_fetch_leader_log_end_offset = leader_log_end_offset
        self._last_fetch_time_ms = now_ms
        self.last_caught_up_time_ms = last_caught_up_time_ms

    def reset_log_end_offset(self) -> None:
        """Forget a remote replica's LEO, as a new leader does until the follower fetches."""
        self._log_end_offset = UNKNOWN_OFFSET

    @property
    def log_start_offset(self) -> int:
        """The local log's start, or what a follower last said its own was (Kafka 0.11): the
        leader's low watermark, the least of them, tells a DeleteRecords when every replica is done."""
        return self.log.log_start_offset if self.log is not None else self._log_start_offset

    def update_log_start_offset(self, follower_log_start_offset: int) -> None:
        """A remote replica's log start offset, as its fetch carried it (Kafka's ``updateLogReadResult``
        sets it with the LEO). A follower that sends none (-1, Fetch before v5) leaves it unknown."""
        if self.log is None:
            self._log_start_offset = follower_log_start_offset

    @property
    def log_end_offset(self) -> int:
        return self.log.log_end_offset if self.log is not None else self._log_end_offset

    @property
    def high_watermark(self) -> int:
        if self.log is None:
            raise RuntimeError(
                f"Should not get the high watermark of replica {self.broker_id} of {self.tp}: it is remote"
            )
        return self._high_watermark_metadata.message_offset

    @high_watermark.setter
    def high_watermark(self, offset: int) -> None:
        if self.log is None:
            raise RuntimeError(
                f"Should not set the high watermark of replica {self.broker_id} of {self.tp}: it is remote"
            )
        # Kafka moves the HW as a LogOffsetMetadata. Once the followers have caught up the HW is the
        # LEO, whose position the log has at hand; any other HW is looked up when it is asked for.
        leo = self.log.log_end_offset_metadata
        self._high_watermark_metadata = leo if leo.message_offset == offset else LogOffsetMetadata(offset)

    @property
    def log_end_offset_metadata(self) -> LogOffsetMetadata:
        """The local LEO with its segment and byte position (Kafka's ``logEndOffset``, which is one)."""
        return self._local_log("log end offset").log_end_offset_metadata

    @property
    def high_watermark_metadata(self) -> LogOffsetMetadata:
        """The HW with its segment and byte position: kept when the HW moved to the LEO, else looked up
        in the log once for this HW (an index lookup and a short scan)."""
        if self._high_watermark_metadata.message_offset_only():
            self.convert_hw_to_local_offset_metadata()
        return self._high_watermark_metadata

    def convert_hw_to_local_offset_metadata(self) -> None:
        """A new leader finds where its HW sits in its own log (Kafka's ``convertHWToLocalOffsetMetadata``):
        the position it kept, if any, may be from before a truncation as a follower."""
        log = self._local_log("high watermark")
        self._high_watermark_metadata = log.convert_to_offset_metadata(
            self._high_watermark_metadata.message_offset
        )

    def _local_log(self, what: str) -> Log:
        if self.log is None:
            raise RuntimeError(
                f"Replica {self.broker_id} of {self.tp} is remote: its {what} has no position here"
            )
        return self.log

    def __repr__(self) -> str:
        hw = f", hw={self.high_watermark}" if self.log is not None else ""
        return f"Replica(broker={self.broker_id}, {self.tp[0]}-{self.tp[1]}, leo={self.log_end_offset}{hw})"
