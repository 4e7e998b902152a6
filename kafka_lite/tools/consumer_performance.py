"""The consumer's load test: read N records of a topic in a new group as fast as they come, summarise.

Mirrors: kafka.tools.ConsumerPerformance (core/src/main/scala/kafka/tools/ConsumerPerformance.scala,
         Kafka 1.0, the new consumer's path), run by bin/kafka-consumer-perf-test.sh
Book:    chapter 4, 4.1 (the poll loop and its fetches), 4.2 (joining the group: rebalance.time.ms)
Differs: each poll asks for no more records than are still wanted, so the count ends at exactly N
         (Kafka's loop counts every record of its last poll). Running out of ``--timeout`` before N
         records is an error the caller reports (Kafka 2.0, whose ``--timeout`` this is, prints a warning
         and exits 0). Time is a
         ``Time``, so the lines can be checked under ``MockTime``. No ``--threads`` or
         ``--num-fetch-threads`` (the old consumer's; Kafka 1.0 ignores them for the new one).

The loop, as Kafka's ``consume``: subscribe with a rebalance listener that times each join (from
``on_partitions_revoked``, where a join starts, to ``on_partitions_assigned``), then poll every
100 ms, counting records and their key and value bytes, until N records are read or ``timeout_ms``
passes without one. The summary splits the run's time in two: the time in rebalances, and the rest,
the fetch time, from which ``fetch.MB.sec`` and ``fetch.nMsg.sec`` are computed::

    start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec
    2026-11-23 08:30:00:000, 2026-11-23 08:30:02:500, 9.5367, 3.8147, 100000, 40000.0000, 120, 2380, 4.0070, 42016.8067

(``MB`` is 2^20 bytes, as in Kafka; times in Kafka's ``yyyy-MM-dd HH:mm:ss:SSS``, local time.)
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Collection

from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.consumer.consumer_rebalance_listener import ConsumerRebalanceListener

POLL_MS = 100  # Kafka's consumer.poll(100)
REPORTING_INTERVAL_MS = 5000
DEFAULT_TIMEOUT_MS = 10_000  # Kafka's --timeout default
DEFAULT_FETCH_SIZE = 1024 * 1024
MB = 1024 * 1024

NEW_FIELDS = ", rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec"


def header(show_detailed_stats: bool) -> str:
    """Kafka's ``printHeader``: the column names of the summary, or of the detailed lines."""
    if show_detailed_stats:
        return "time, threadId, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec" + NEW_FIELDS
    return "start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec" + NEW_FIELDS


def format_date(ms: int) -> str:
    """Kafka's default ``--date-format``, ``yyyy-MM-dd HH:mm:ss:SSS``, in local time."""
    t = datetime.datetime.fromtimestamp(ms / 1000)
    return t.strftime("%Y-%m-%d %H:%M:%S:") + f"{ms % 1000:03d}"


class ConsumerPerfStats:
    """What the loop counted: records, their bytes, the time spent joining, and the window of the
    last detailed line."""

    def __init__(self, time: Time = SYSTEM) -> None:
        self.time = time
        self.messages_read = 0
        self.bytes_read = 0
        self.join_time_ms = 0  # every rebalance of the run
        self.join_time_ms_in_round = 0  # the rebalances since the last detailed line
        self.start_ms = time.milliseconds()
        self.end_ms = self.start_ms
        self.last_report_ms = self.start_ms
        self.last_messages_read = 0
        self.last_bytes_read = 0

    def summary(self) -> str:
        """Kafka's summary line (the new consumer's, with the rebalance and fetch columns). Kafka
        divides a zero time into Infinity; here a run takes at least 1 ms."""
        elapsed_ms = max(1, self.end_ms - self.start_ms)
        fetch_ms = max(1, elapsed_ms - self.join_time_ms)
        mb = self.bytes_read / MB
        return (
            f"{format_date(self.start_ms)}, {format_date(self.end_ms)}, {mb:.4f}, {mb / (elapsed_ms / 1000):.4f}, "
            f"{self.messages_read}, {self.messages_read / (elapsed_ms / 1000):.4f}, "
            f"{self.join_time_ms}, {elapsed_ms - self.join_time_ms}, {mb / (fetch_ms / 1000):.4f}, "
            f"{self.messages_read / (fetch_ms / 1000):.4f}"
        )

    def detailed(self, now_ms: int) -> str:
        """Kafka's ``printNewConsumerProgress``: the totals so far, the rates over the window since the
        last line, and the window's rebalance and fetch time; then a new window starts."""
        elapsed_ms = max(1, now_ms - self.last_report_ms)
        window_mb = (self.bytes_read - self.last_bytes_read) / MB
        window_messages = self.messages_read - self.last_messages_read
        fetch_ms = elapsed_ms - self.join_time_ms_in_round
        fetch_mb_sec, fetch_messages_sec = (
            (1000.0 * window_mb / fetch_ms, 1000.0 * window_messages / fetch_ms)
            if fetch_ms > 0
            else (0.0, 0.0)
        )
        line = (
            f"{format_date(now_ms)}, 0, {self.bytes_read / MB:.4f}, {1000.0 * window_mb / elapsed_ms:.4f}, "
            f"{self.messages_read}, {1000.0 * window_messages / elapsed_ms:.4f}, "
            f"{self.join_time_ms_in_round}, {fetch_ms}, {fetch_mb_sec:.4f}, {fetch_messages_sec:.4f}"
        )
        self.join_time_ms_in_round = 0
        self.last_report_ms = now_ms
        self.last_messages_read = self.messages_read
        self.last_bytes_read = self.bytes_read
        return line


class JoinTimer(ConsumerRebalanceListener):
    """Times each rebalance: it starts when the partitions are revoked, ends when new ones arrive."""

    def __init__(self, stats: ConsumerPerfStats) -> None:
        self.stats = stats
        self.join_start = stats.start_ms

    def on_partitions_revoked(self, partitions: Collection) -> None:
        self.join_start = self.stats.time.milliseconds()

    def on_partitions_assigned(self, partitions: Collection) -> None:
        took = self.stats.time.milliseconds() - self.join_start
        self.stats.join_time_ms += took
        self.stats.join_time_ms_in_round += took


def consume(
    consumer,
    topics: list[str],
    count: int,
    timeout_ms: int,
    stats: ConsumerPerfStats,
    reporting_interval_ms: int = REPORTING_INTERVAL_MS,
    detailed: Callable[[str], object] | None = None,
    progress: Callable[[int], object] | None = None,
) -> bool:
    """Kafka's ``consume``: read ``count`` records, or stop after ``timeout_ms`` without one.
    ``detailed(line)`` gets a detailed line every ``reporting_interval_ms``, ``progress(n)`` the count
    after each poll. Returns whether all ``count`` records were read; ``stats.end_ms`` is set."""
    time = stats.time
    consumer.subscribe(topics, listener=JoinTimer(stats))
    last_consumed_ms = current_ms = time.milliseconds()
    while stats.messages_read < count and current_ms - last_consumed_ms <= timeout_ms:
        polled = consumer.poll(timeout_ms=POLL_MS, max_records=count - stats.messages_read)
        current_ms = time.milliseconds()
        if polled:
            last_consumed_ms = current_ms
        for records in polled.values():
            for record in records:
                stats.messages_read += 1
                stats.bytes_read += max(0, record.serialized_key_size) + max(0, record.serialized_value_size)
        if detailed is not None and current_ms - stats.last_report_ms >= reporting_interval_ms:
            detailed(stats.detailed(current_ms))
        if progress is not None:
            progress(stats.messages_read)
    stats.end_ms = time.milliseconds()
    return stats.messages_read >= count
