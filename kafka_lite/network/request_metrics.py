"""Per-API request metrics: how many, how big, and where each request spent its time.

Mirrors: kafka.network.RequestMetrics (in core/src/main/scala/kafka/network/RequestChannel.scala,
         Kafka 0.10.1) and the ``RequestsPerSec``/``*TimeMs`` MBeans it registers
Book:    chapter 2, 2.3.3 (a request's life through the broker)
Differs: one set per (API, version) rather than per API with a version tag; times are kept as
         count/total/max (Kafka's Yammer histograms also keep percentiles). Reporters added with
         ``add_reporter`` get one ``RequestSample`` per completed request: what Kafka 0.10 writes
         to its request log (``kafka.request.logger`` at DEBUG, "Completed request: ...
         totalTime, requestQueueTime, localTime, remoteTime, responseQueueTime, sendTime"), handed
         to a reporter instead of a log line (``server/metrics_reporter.py`` publishes them).

A request's total time splits into the phases Kafka reports, each from one timestamp to the next:

    request queue   received by the processor  -> taken by a handler
    local           taken by a handler         -> the handler's own work done
    remote          handler done               -> response ready (a fetch waiting for data, a
                                                  CreateTopics for leaders: time in a purgatory)
    response queue  response ready             -> taken by the processor
    response send   taken by the processor     -> last byte written to the socket
"""

from __future__ import annotations

import itertools
import logging
import threading
from dataclasses import dataclass, field
from typing import Protocol

from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.time import SYSTEM, Time

log = logging.getLogger(__name__)

PHASES = ("request_queue", "local", "remote", "response_queue", "response_send", "total")


@dataclass(frozen=True)
class RequestSample:
    """One completed request: when it completed (wall-clock ms), what it was, how big, and the
    time it spent in each phase (ms, fractions kept)."""

    time_ms: int
    api: str
    api_version: int
    client_id: str
    request_bytes: int
    response_bytes: int
    request_queue_time_ms: float
    local_time_ms: float
    remote_time_ms: float
    response_queue_time_ms: float
    response_send_time_ms: float
    total_time_ms: float


class RequestReporter(Protocol):
    """What ``add_reporter`` takes: Kafka's ``MetricsReporter.init`` and ``close``, and
    ``request_completed``, called on the processor thread that sent the response; it must return at
    once (hand the sample to a thread of its own), since the processor serves every connection it
    owns."""

    def init(self, metrics: RequestMetrics) -> None: ...

    def request_completed(self, sample: RequestSample) -> None: ...

    def close(self) -> None: ...


@dataclass
class _Timer:
    count: int = 0
    total_ns: int = 0
    max_ns: int = 0

    def record(self, ns: int) -> None:
        self.count += 1
        self.total_ns += ns
        self.max_ns = max(self.max_ns, ns)

    @property
    def mean_ms(self) -> float:
        return self.total_ns / self.count / 1e6 if self.count else 0.0


@dataclass
class _ApiMetrics:
    requests: int = 0
    request_bytes: int = 0
    response_bytes: int = 0
    times: dict[str, _Timer] = field(default_factory=lambda: {p: _Timer() for p in PHASES})


class RequestMetrics:
    """Counters for every (API name, version) this broker has served, and their rates since start."""

    def __init__(self, time: Time = SYSTEM) -> None:
        self.time = time
        self._start_ns = time.nanoseconds()
        self._lock = threading.Lock()
        self._by_api: dict[tuple[ApiKeys, int], _ApiMetrics] = {}
        self.reporters: list[RequestReporter] = []

    def add_reporter(self, reporter: RequestReporter) -> None:
        """Kafka's ``Metrics.addReporter``: ``init`` the reporter with this registry (its clock is
        ``self.time``, the broker's), then tell it of every request completed from now on."""
        reporter.init(self)
        self.reporters.append(reporter)

    def close(self) -> None:
        """Kafka's ``Metrics.close``: close every reporter (a failing one is logged, not raised)."""
        reporters, self.reporters = self.reporters, []
        for reporter in reporters:
            try:
                reporter.close()
            except Exception:
                log.exception("Error when closing metrics reporter %s", type(reporter).__name__)

    def record(
        self,
        api: ApiKeys,
        version: int,
        request_bytes: int,
        response_bytes: int,
        stamps: list[int],
        client_id: str = "",
    ) -> None:
        """``stamps``: received, dequeued, local done, response ready, response dequeued, sent (ns);
        a 0 means the phase did not happen (a request with no response) and counts as no time."""
        filled = []
        last = stamps[0]
        for s in stamps:
            last = s if s else last
            filled.append(last)
        if self.reporters:
            self._report(api, version, request_bytes, response_bytes, filled, client_id)
        with self._lock:
            m = self._by_api.get((api, version))
            if m is None:  # the first request of this API and version
                m = self._by_api[(api, version)] = _ApiMetrics()
            m.requests += 1
            m.request_bytes += request_bytes
            m.response_bytes += response_bytes
            for phase, a, b in zip(PHASES[:-1], filled, filled[1:], strict=False):
                m.times[phase].record(max(b - a, 0))
            m.times["total"].record(max(filled[-1] - filled[0], 0))

    def _report(
        self,
        api: ApiKeys,
        version: int,
        request_bytes: int,
        response_bytes: int,
        filled: list[int],
        client_id: str,
    ) -> None:
        phases_ms = [max(b - a, 0) / 1e6 for a, b in itertools.pairwise(filled)]
        sample = RequestSample(
            self.time.milliseconds(),
            api.api_name,
            version,
            client_id,
            request_bytes,
            response_bytes,
            *phases_ms,
            max(filled[-1] - filled[0], 0) / 1e6,
        )
        for reporter in self.reporters:
            try:
                reporter.request_completed(sample)
            except Exception:  # a reporter's bug must not stop the processor that serves the sockets
                log.exception("Metrics reporter %s failed on a request sample", type(reporter).__name__)

    def snapshot(self) -> list[dict]:
        """One row per (API, version): counts, byte and request rates per second, mean and max phase times."""
        elapsed_s = max((self.time.nanoseconds() - self._start_ns) / 1e9, 1e-9)
        rows = []
        with self._lock:
            for (api, version), m in sorted(
                self._by_api.items(), key=lambda kv: (kv[0][0].api_name, kv[0][1])
            ):
                row = {
                    "api": api.api_name,
                    "version": version,
                    "requests": m.requests,
                    "requests_per_sec": m.requests / elapsed_s,
                    "bytes_in_per_sec": m.request_bytes / elapsed_s,
                    "bytes_out_per_sec": m.response_bytes / elapsed_s,
                }
                for phase, timer in m.times.items():
                    row[f"{phase}_time_ms_mean"] = timer.mean_ms
                    row[f"{phase}_time_ms_max"] = timer.max_ns / 1e6
                rows.append(row)
        return rows
