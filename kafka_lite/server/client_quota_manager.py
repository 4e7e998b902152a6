"""Client quotas: how fast each client id may produce or fetch, and how much handler time its requests
may take; a client over its quota gets its response late, not an error.

Mirrors: kafka.server.ClientQuotaManager with ClientQuotaManagerConfig and ThrottledResponse
         (core/src/main/scala/kafka/server/ClientQuotaManager.scala, ThrottledResponse.scala, Kafka
         0.10.1), and kafka.server.ClientRequestQuotaManager (ClientRequestQuotaManager.scala, KIP-124,
         Kafka 0.11)
Book:    chapter 10, 10.1 (client quotas)
Differs: quotas per client id only (Kafka 0.10.1 adds users and <user, client-id> pairs, KIP-55);
         the sensors never expire (Kafka drops a client's after an hour unused); the throttle time
         is kept as a count, average and maximum (``common/metrics.py``), not in a ``Metrics`` registry.
Labs:    lab 16, stage 1 (``ClientQuotaManager.throttle_time``)

One manager per quota type, each with its own delay queue and reaper thread:

- ``produce``: the bytes of each client id's Produce requests, against ``producer_byte_rate``;
- ``fetch``: the bytes of each client id's Fetch responses, against ``consumer_byte_rate``;
- ``request`` (``ClientRequestQuotaManager``): the time the request handlers spend on each client id's
  requests, as a percentage of one thread, against ``request_percentage``.

Each client id has its own rate (a ``Rate`` of ``quota.window.num`` windows of
``quota.window.size.seconds``, as the replication throttle's, ``common/rate.py``), checked against the
most specific quota that applies: the client id's own (``/config/clients/<client-id>``), else the
dynamic default (``/config/clients/<default>``), else the broker's static default
(``quota.producer.default``, ``quota.consumer.default``: unlimited unless set). Two clients with the
default quota are measured apart: each may use the whole default.

Why delay rather than refuse: a refused request would be retried at once, so the client would keep
the broker just as busy. Kafka instead completes the request, then holds its response back for as
long as it takes for the client's rate to fall to its quota, if the client sent nothing meanwhile.
With the observed rate O over the window W and the quota T, the delay X solves ``O * W / (W + X) = T``::

    X = (O - T) / T * W

A client waits for its response before it sends on that connection (the broker reads one request per
connection at a time), so it slows down with no client change; the response also says how long it
was held (``throttle_time_ms``), which clients report as ``produce-throttle-time-avg`` and
``fetch-throttle-time-avg``. The held responses wait in a ``DelayQueue`` ordered by when they are
due (the timer's, ``utils/timer/delay_queue.py``); the ``ThrottledRequestReaper`` thread takes each
when its time comes and sends it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

from kafka_lite.common.metrics import Sensor
from kafka_lite.common.quota import MetricConfig, Quota, QuotaViolationException
from kafka_lite.common.rate import QuotaSensor, Rate
from kafka_lite.common.time import Time
from kafka_lite.common.utils import INT32_MAX, LONG_MAX
from kafka_lite.server.replication_quota_manager import QuotaType
from kafka_lite.utils.timer.delay_queue import DelayQueue

log = logging.getLogger(__name__)

# Kafka's ConfigEntityName.Default: the entity name of the dynamic default, /config/clients/<default>
DEFAULT_ENTITY_NAME = "<default>"
# Handler time in nanoseconds to a percentage of one thread over one second (request_percentage)
NANOS_TO_PERCENTAGE_PER_SECOND = 100.0 / 1_000_000_000


@dataclass(frozen=True)
class ClientQuotaManagerConfig:
    """The broker's static default quota, and the windows every client's rate is measured over:
    ten whole windows and the current one."""

    quota_bytes_per_second_default: float = LONG_MAX
    num_quota_samples: int = 11
    quota_window_size_seconds: int = 1


# Kafka 0.11's ClientQuotaManagerConfig.QuotaRequestPercentDefault: no bound on a client's handler time
QUOTA_REQUEST_PERCENT_DEFAULT = float(INT32_MAX)


@dataclass
class ClientSensors:
    """A client id's rate, checked against its quota, and the throttle times it was given."""

    quota_sensor: QuotaSensor
    throttle_time_sensor: Sensor


# --8<-- [start:throttled_response]
class ThrottledResponse:
    """A response held back: due ``throttle_time_ms`` after it was made, then sent by ``execute``."""

    def __init__(self, time: Time, throttle_time_ms: int, callback: Callable[[int], None]) -> None:
        self.time = time
        self.throttle_time_ms = throttle_time_ms
        self.callback = callback
        self.end_time_ms = time.milliseconds() + throttle_time_ms

    def execute(self) -> None:
        self.callback(self.throttle_time_ms)

    def get_expiration(self) -> int:
        return self.end_time_ms

    def get_delay(self) -> int:
        """Milliseconds until the response is due, 0 once it is (Java's ``Delayed.getDelay``)."""
        return max(self.end_time_ms - self.time.milliseconds(), 0)


class ThrottledRequestReaper(threading.Thread):
    """Sends each held response when it is due (Kafka's ``ShutdownableThread`` of the same name)."""

    def __init__(self, delay_queue: DelayQueue, quota_type: QuotaType) -> None:
        super().__init__(name=f"ThrottledRequestReaper-{quota_type.value}", daemon=True)
        self.delay_queue = delay_queue
        self._running = True

    def run(self) -> None:
        while self._running:
            self.do_work()

    def do_work(self) -> None:
        response = self.delay_queue.poll(1000)
        if response is not None:
            log.debug("Response throttled for: %d ms", response.throttle_time_ms)
            try:
                response.execute()
            except Exception:  # one failed send (a closed connection) must not stop the others
                log.exception("Error sending a throttled response")

    def shutdown(self) -> None:
        self._running = False
        self.delay_queue.close()  # wakes the poll at once (under MockTime it would wait for ever)
        if self.is_alive():
            self.join(5)


# --8<-- [end:throttled_response]


class ClientQuotaManager:
    """The rates of one quota type, per client id, and the responses held back for them."""

    def __init__(self, config: ClientQuotaManagerConfig, quota_type: QuotaType, time: Time) -> None:
        self.config = config
        self.quota_type = quota_type
        self.time = time
        self._overridden_quota: dict[str, Quota] = {}  # client id (or <default>) -> its dynamic quota
        self._static_config_client_id_quota = Quota.upper_bound(config.quota_bytes_per_second_default)
        self._sensors: dict[str, ClientSensors] = {}
        # Kafka's read-write lock: a quota change and a sensor's creation never interleave
        self._lock = threading.Lock()
        self.delay_queue = DelayQueue(time)
        self.throttled_request_reaper = ThrottledRequestReaper(self.delay_queue, quota_type)
        self.throttled_request_reaper.start()

    # --8<-- [start:record_and_maybe_throttle]
    def record_and_maybe_throttle(self, client_id: str, value: float, callback: Callable[[int], None]) -> int:
        """Record ``value`` (bytes) for ``client_id``; call ``callback(0)`` at once if it is within its
        quota, else queue ``callback(throttle_time_ms)`` for then. Returns the throttle time."""
        return self.record_and_throttle_on_quota_violation(
            self.get_or_create_quota_sensors(client_id), value, callback
        )

    def record_and_throttle_on_quota_violation(
        self, sensors: ClientSensors, value: float, callback: Callable[[int], None]
    ) -> int:
        try:
            sensors.quota_sensor.record(value)
        except QuotaViolationException as e:
            return self.throttle(sensors, e.value, callback)
        callback(0)  # within the quota: the response goes now
        return 0

    def throttle(self, sensors: ClientSensors, observed_rate: float, callback: Callable[[int], None]) -> int:
        """Hold ``callback`` back for as long as the rate needs to fall to the quota."""
        throttle_time_ms = self.throttle_time(observed_rate, sensors.quota_sensor)
        sensors.throttle_time_sensor.record(throttle_time_ms)
        self.delay_queue.offer(ThrottledResponse(self.time, throttle_time_ms, callback))
        log.debug(
            "Quota violated for sensor (%s). Delay time: (%d)", sensors.quota_sensor.name, throttle_time_ms
        )
        return throttle_time_ms

    def throttle_time(self, observed_rate: float, sensor: QuotaSensor) -> int:
        """How long until the rate is back at the quota if nothing more is recorded:
        ``X = (O - T) / T * W``, over the window the rate was measured over."""
        # BEGIN SOLUTION
        bound = sensor.config.quota.bound
        window_ms = sensor.window_size()
        return int((observed_rate - bound) / bound * window_ms + 0.5)  # Scala's round: half up
        # END SOLUTION

    # --8<-- [end:record_and_maybe_throttle]

    def quota(self, client_id: str) -> Quota:
        """The quota that applies to ``client_id``: its own, else the dynamic default, else the static one."""
        quota = self._overridden_quota.get(client_id)
        if quota is None:
            quota = self._overridden_quota.get(DEFAULT_ENTITY_NAME, self._static_config_client_id_quota)
        return quota

    def get_or_create_quota_sensors(self, client_id: str) -> ClientSensors:
        sensors = self._sensors.get(client_id)
        if sensors is not None:
            return sensors
        with self._lock:
            sensors = self._sensors.get(client_id)
            if sensors is None:
                quota_sensor = QuotaSensor(
                    f"{self.quota_type.value}-:{client_id}",
                    Rate(),
                    self.get_quota_metric_config(self.quota(client_id)),
                    self.time,
                )
                sensors = ClientSensors(
                    quota_sensor, Sensor(f"{self.quota_type.value}ThrottleTime-:{client_id}")
                )
                self._sensors[client_id] = sensors
            return sensors

    def get_quota_metric_config(self, quota: Quota | None) -> MetricConfig:
        return MetricConfig(
            samples=self.config.num_quota_samples,
            time_window_ms=self.config.quota_window_size_seconds * 1000,
            quota=quota,
        )

    def update_quota(self, client_id: str, quota: Quota | None) -> None:
        """Set (or with None remove) the dynamic quota of ``client_id``, or of every client id without
        one of its own when ``client_id`` is ``<default>``. Rates already measured are kept; the
        sensors the change applies to get the new bound at once."""
        with self._lock:
            who = "default client-id" if client_id == DEFAULT_ENTITY_NAME else f"client-id {client_id}"
            if quota is not None:
                log.info("Changing %s quota for %s to %s", self.quota_type.value, who, quota.bound)
                self._overridden_quota[client_id] = quota
            else:
                log.info("Removing %s quota for %s", self.quota_type.value, who)
                self._overridden_quota.pop(client_id, None)
            # A default changes every sensor that follows it; an override only the client's own.
            targets = self._sensors if client_id == DEFAULT_ENTITY_NAME else {client_id: None}
            for target in list(targets):
                sensors = self._sensors.get(target)
                new_quota = self.quota(target)
                if sensors is not None and sensors.quota_sensor.config.quota != new_quota:
                    sensors.quota_sensor.config = self.get_quota_metric_config(new_quota)

    def throttle_time_sensor(self, client_id: str) -> Sensor:
        """The throttle times given to ``client_id`` (Kafka's ``throttle-time`` metric)."""
        return self.get_or_create_quota_sensors(client_id).throttle_time_sensor

    def rate(self, client_id: str) -> float:
        """The client's measured rate now (Kafka's ``byte-rate`` metric; ``request-time`` for requests)."""
        return self.get_or_create_quota_sensors(client_id).quota_sensor.measure()

    def shutdown(self) -> None:
        self.throttled_request_reaper.shutdown()


class ClientRequestQuotaManager(ClientQuotaManager):
    """KIP-124: the handler time of each client id's requests, as a percentage of one handler thread
    (``request_percentage=50`` is half a thread's time, over the quota's windows).

    The time is recorded as each request's handling ends (``KafkaApis._handle_request``), and the
    responses of a client over its quota are held back too, but never for longer than one window:
    one long request (a large produce written to disk) must not hold a client back for many windows.
    Inter-broker requests and followers' fetches are exempt: recorded apart, never throttled, as a
    broker must never slow its own replication."""

    def __init__(self, config: ClientQuotaManagerConfig, time: Time) -> None:
        super().__init__(config, QuotaType.REQUEST, time)
        self.max_throttle_time_ms = config.quota_window_size_seconds * 1000
        self.exempt_sensor = QuotaSensor(
            f"exempt-{QuotaType.REQUEST.value}", Rate(), self.get_quota_metric_config(None), time
        )

    def record_no_throttle(self, client_id: str, value: float) -> None:
        """Count ``value`` (a percentage of a thread) against ``client_id``, with no check: the
        request's response has gone or goes another way."""
        self.get_or_create_quota_sensors(client_id).quota_sensor.record(value, check_quotas=False)

    def record_exempt(self, value: float) -> None:
        self.exempt_sensor.record(value)

    def maybe_throttle(self, client_id: str, callback: Callable[[int], None]) -> int:
        """Send through ``callback`` now, or hold it back if ``client_id``'s handler time is over its
        quota. Kafka records the request's own handler time in the same step; here it was recorded
        by ``record_no_throttle`` when the handler returned, so this only checks."""
        sensors = self.get_or_create_quota_sensors(client_id)
        try:
            sensors.quota_sensor.check_quotas()
        except QuotaViolationException as e:
            return self.throttle(sensors, e.value, callback)
        callback(0)
        return 0

    def throttle_time(self, observed_rate: float, sensor: QuotaSensor) -> int:
        return min(super().throttle_time(observed_rate, sensor), self.max_throttle_time_ms)


def nanos_to_percentage(nanos: int) -> float:
    """Handler time to what ``request_percentage`` bounds: 1 s of one thread's time per second is 100 %."""
    return nanos * NANOS_TO_PERCENTAGE_PER_SECOND
