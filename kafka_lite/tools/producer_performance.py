"""The producer's load test: send N records of one size at a set rate, time each one, summarise.

Mirrors: org.apache.kafka.tools.ProducerPerformance (Stats, PerfCallback)
         (tools/src/main/java/org/apache/kafka/tools/ProducerPerformance.java, Kafka 0.11.0),
         run by bin/kafka-producer-perf-test.sh
Book:    chapter 2, 2.1 (what batching, linger.ms and acks cost and buy, measured)
Differs: a failed send is counted apart (``errors``, ``first_error``) and kept out of the latencies,
         and the loop stops at the first one: Kafka's callback records a failure's latency like a
         success's and prints its stack trace, so a dead cluster shows up as fast sends, and every
         later send waits ``max.block.ms`` again. No ``--payload-file`` and no transactions
         (kafka_lite's producer has none). Time is a ``Time``, so the statistics can be checked
         under ``MockTime``.

How a latency is measured, as Kafka does it: the loop reads the clock just before ``send`` and hands
that start to the record's callback (``PerfCallback``); when the record's batch is acknowledged, the
callback, on the producer's sender thread, reads the clock again. The difference is everything the
record went through: waiting in the accumulator for its batch to fill or linger, the request on the
wire, the broker's append (and, with acks=all, its replication), the response. Each is recorded
in ``Stats``: the count, bytes, total and maximum latency, and for the percentiles one latency in
every ``sampling`` records (at most 500,000 kept), plus a window that prints a line every
``reporting_interval_ms``.

Both lines read as Kafka's, field for field, so they can be set beside its tool's. A window line
every ``reporting_interval_ms``, and the total once every record is acknowledged::

    %d records sent, %.1f records/sec (%.2f MB/sec), %.1f ms avg latency, %.1f max latency.
    %d records sent, %f records/sec (%.2f MB/sec), %.2f ms avg latency, %.2f ms max latency,
        %d ms 50th, %d ms 95th, %d ms 99th, %d ms 99.9th.

(the total is one line; ``MB`` is 2^20 bytes, as in Kafka).
"""

from __future__ import annotations

import random
from collections.abc import Callable

from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.tools.throughput_throttler import ThroughputThrottler

REPORTING_INTERVAL_MS = 5000  # a window line every 5 s, as Kafka's tool prints them
MAX_LATENCY_SAMPLES = 500_000


def random_payload(record_size: int, seed: int = 0) -> bytes:
    """``record_size`` random capital letters, the one value every record carries (as Kafka's tool
    makes it: ``Random(0)``, letters from 'A')."""
    rng = random.Random(seed)
    return bytes(rng.randrange(26) + 65 for _ in range(record_size))


class Stats:
    """Counts, latencies and throughput of acknowledged records; Kafka's window and total lines."""

    def __init__(
        self,
        num_records: int,
        reporting_interval_ms: int = REPORTING_INTERVAL_MS,
        time: Time = SYSTEM,
        out: Callable[[str], object] = print,
    ) -> None:
        self.time = time
        self.out = out
        self.start = time.milliseconds()
        self.window_start = self.start
        # Keep one latency in every ``sampling`` records, so at most MAX_LATENCY_SAMPLES of them.
        self.sampling = max(1, num_records // max(1, min(num_records, MAX_LATENCY_SAMPLES)))
        self.latencies = [0] * (num_records // self.sampling + 1)
        self.iteration = 0  # callbacks handed out: the next record's number
        self.index = 0  # latencies sampled
        self.count = 0
        self.bytes = 0
        self.max_latency = 0
        self.total_latency = 0
        self.window_count = 0
        self.window_max_latency = 0
        self.window_total_latency = 0
        self.window_bytes = 0
        self.reporting_interval = reporting_interval_ms
        self.errors = 0
        self.first_error: BaseException | None = None

    def record(self, iteration: int, latency: int, bytes_: int, time_ms: int) -> None:
        """One acknowledged record (called on the sender thread, like every producer callback)."""
        self.count += 1
        self.bytes += bytes_
        self.total_latency += latency
        self.max_latency = max(self.max_latency, latency)
        self.window_count += 1
        self.window_bytes += bytes_
        self.window_total_latency += latency
        self.window_max_latency = max(self.window_max_latency, latency)
        if iteration % self.sampling == 0:
            self.latencies[self.index] = latency
            self.index += 1
        # maybe report the recent perf
        if time_ms - self.window_start >= self.reporting_interval:
            self.print_window()
            self.new_window()

    def record_error(self, exception: BaseException) -> None:
        self.errors += 1
        if self.first_error is None:
            self.first_error = exception

    def next_completion(self, start_ms: int, bytes_: int) -> PerfCallback:
        cb = PerfCallback(self.iteration, start_ms, bytes_, self)
        self.iteration += 1
        return cb

    def window_line(self) -> str:
        elapsed = max(1, self.time.milliseconds() - self.window_start)
        recs_per_sec = 1000.0 * self.window_count / elapsed
        mb_per_sec = 1000.0 * self.window_bytes / elapsed / (1024.0 * 1024.0)
        avg = self.window_total_latency / self.window_count if self.window_count else 0.0
        return (
            f"{self.window_count} records sent, {recs_per_sec:.1f} records/sec ({mb_per_sec:.2f} MB/sec), "
            f"{avg:.1f} ms avg latency, {float(self.window_max_latency):.1f} max latency."
        )

    def print_window(self) -> None:
        self.out(self.window_line())

    def new_window(self) -> None:
        self.window_start = self.time.milliseconds()
        self.window_count = 0
        self.window_max_latency = 0
        self.window_total_latency = 0
        self.window_bytes = 0

    def total_line(self) -> str:
        """Kafka's summary, in its ``printf`` format (``%f`` records/sec, ``%d`` ms percentiles)."""
        elapsed = max(1, self.time.milliseconds() - self.start)  # Kafka divides by 0 into Infinity
        recs_per_sec = 1000.0 * self.count / elapsed
        mb_per_sec = 1000.0 * self.bytes / elapsed / (1024.0 * 1024.0)
        avg = self.total_latency / self.count if self.count else 0.0
        p50, p95, p99, p999 = percentiles(self.latencies, self.index, 0.5, 0.95, 0.99, 0.999)
        return (
            f"{self.count} records sent, {recs_per_sec:f} records/sec ({mb_per_sec:.2f} MB/sec), "
            f"{avg:.2f} ms avg latency, {float(self.max_latency):.2f} ms max latency, "
            f"{p50} ms 50th, {p95} ms 95th, {p99} ms 99th, {p999} ms 99.9th."
        )

    def print_total(self) -> None:
        self.out(self.total_line())


def percentiles(latencies: list[int], count: int, *percentiles: float) -> list[int]:
    """The sampled latencies at each percentile: sort the first ``count``, take the one at
    ``int(p * count)`` (Kafka's nearest-rank-below; with no samples, 0)."""
    size = min(count, len(latencies))
    latencies[:size] = sorted(latencies[:size])
    return [latencies[int(p * size)] for p in percentiles]


class PerfCallback:
    """One record's completion: its latency into ``Stats`` (Kafka's ``PerfCallback.onCompletion``,
    split in two as kafka_lite's futures take callbacks)."""

    __slots__ = ("bytes", "iteration", "start", "stats")

    def __init__(self, iteration: int, start: int, bytes_: int, stats: Stats) -> None:
        self.iteration = iteration
        self.start = start
        self.bytes = bytes_
        self.stats = stats

    def on_completion(self, metadata) -> None:
        now = self.stats.time.milliseconds()
        self.stats.record(self.iteration, now - self.start, self.bytes, now)

    def on_error(self, exception: BaseException) -> None:
        self.stats.record_error(exception)


def run(
    producer,
    topic: str,
    num_records: int,
    payload: bytes,
    throughput: float,
    stats: Stats,
    time: Time = SYSTEM,
    progress: Callable[[int], object] | None = None,
    progress_every: int = 1000,
) -> None:
    """Kafka's main loop: send ``num_records`` records of ``payload``, throttled to ``throughput``
    records/s (negative: no limit), and close the producer, which waits for every acknowledgement.
    ``progress(n)`` hears how many records were sent, every ``progress_every``. Kafka's main then
    prints the total; here the caller does (``stats.print_total()``), once its progress bar is gone."""
    throttler = ThroughputThrottler(throughput, time.milliseconds(), time)
    for i in range(num_records):
        send_start_ms = time.milliseconds()
        cb = stats.next_completion(send_start_ms, len(payload))
        producer.send(topic, payload).add_callback(cb.on_completion).add_errback(cb.on_error)
        if throttler.should_throttle(i, send_start_ms):
            throttler.throttle()
        if stats.first_error is not None:
            break  # the next sends would most likely fail the same way (see Differs above)
        if progress is not None and (i + 1) % progress_every == 0:
            progress(i + 1)
    producer.close()
    if progress is not None:
        progress(stats.iteration)
