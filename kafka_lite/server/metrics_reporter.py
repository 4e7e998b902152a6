"""Metrics reporters: the broker's request samples handed to pluggable classes, and one that publishes
them to an internal topic.

Mirrors: org.apache.kafka.common.metrics.MetricsReporter (clients/src/main/java/.../metrics/
         MetricsReporter.java, Kafka 0.10.1) and the broker's ``metric.reporters`` setting, whose
         classes the broker instantiates and configures (``getConfiguredInstances``; kafka_lite's
         ``add_metric_reporters``, which ``KafkaServer`` and a KRaft node's ``BrokerServer`` call)
Book:    chapter 2, 2.3.3 (the request's phases that ``RequestMetrics`` times)
Differs: Kafka tells a reporter of each metric that is added or changes (``metricChange``) and the
         reporter reads the values itself; ours gets one ``RequestSample`` per completed request
         (``request_completed``), the line Kafka 0.10 writes to its request log. A reporter gets the
         broker's clock from the registry it reports (``metrics.time`` in ``init``).

``RequestMetricsTopicReporter`` has no Kafka twin: it is modelled on LinkedIn Cruise Control's
``CruiseControlMetricsReporter``, a ``metric.reporters`` class that runs in every broker, creates
its topic (``__CruiseControlMetrics``) if missing and publishes what it samples with a
``KafkaProducer``; and on the request log above, for what a sample holds. Its topic starts with
one underscore, as Confluent's metrics reporter's ``_confluent-metrics`` does: two
(``__consumer_offsets``) mark the broker's internal topics, to which the broker refuses clients'
produce requests (Kafka's ``Topic.isInternal``; kafka_lite takes every ``__`` name as internal),
and the reporter is a client.
Turn it on with::

    metric.reporters=kafka_lite.server.metrics_reporter:RequestMetricsTopicReporter

The records of ``_request_metrics`` (``request.metrics.reporter.topic``): one per completed
request, on every broker, including the reporter's own produce requests (the broker measures them
as it measures any client's, as Kafka would):

    key        the broker id, as decimal text (``b"0"``)
    partition  broker id modulo the topic's partitions: one broker's samples stay in order
    timestamp  the request's completion time (ms since the epoch, CreateTime)
    value      one JSON object with these fields:

    ======================== ======= ==============================================================
    broker_id                int     the broker that served the request
    time_ms                  int     when the response's last byte was written (ms since the epoch)
    api                      string  the API's name, as Kafka's docs write it (``Produce``, ``Fetch``)
    api_version              int     the request's version
    client_id                string  the request header's client id (``""`` when it has none)
    request_bytes            int     the request's size on the wire (without the size prefix)
    response_bytes           int     the bytes written for the response, its size prefix included
                                     (0 when there is none: acks=0)
    request_queue_time_ms    double  received by a processor -> taken by a request handler
    local_time_ms            double  the handler's own work
    remote_time_ms           double  waiting in a purgatory (a long-polling Fetch, acks=all)
    response_queue_time_ms   double  response ready -> taken by the processor
    response_send_time_ms    double  writing the response to the socket
    total_time_ms            double  received -> sent: the sum of the five above
    ======================== ======= ==============================================================

On a secure cluster the reporter logs in as the broker itself: with the broker's inter-broker
settings (``security.inter.broker.protocol``, ``sasl.mechanism.inter.broker.protocol``, or a named
listener, ``inter.broker.listener.name``: ``inter_broker_login``) and the ``username``/``password`` of that listener's JAAS entry, the
credentials the broker's own connections to other brokers use, as Confluent's metrics reporter
reuses them; on a PLAINTEXT inter-broker listener (``cluster up --secure``'s ``INTERNAL``) there is
nothing to log in with. Its principal is then the brokers' (``User:admin``, or ``User:ANONYMOUS`` on
that PLAINTEXT listener), which the authorizer must allow everything anyway, as a super user, so
creating its topic and writing to it need no ACL of their own. The broker gives it its
inter-broker listener's address (``add_metric_reporters``), on ZooKeeper and on KRaft alike.

Threads: ``request_completed`` runs on a processor thread, which serves every connection it owns, so
it only appends the sample to a bounded buffer; when the buffer is full it drops the sample and
counts it (``dropped``). The reporter's own thread wakes every ``request.metrics.reporter.interval.ms``,
creates the topic if it does not exist yet, and hands what is buffered to the producer. A failure
there (no controller yet, a leader moving) is logged and retried at the next interval: the reporter
never raises into the broker.
"""

from __future__ import annotations

import json
import logging
import pkgutil
import threading
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Mapping
from typing import Any

from kafka_lite.clients.admin import KafkaAdminClient, NewTopic
from kafka_lite.common.config import ConfigDef, Importance, Range, Type
from kafka_lite.common.errors import ConfigException, Errors, KafkaException
from kafka_lite.common.security.jaas_config import load_server_context
from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.network.channel_builders import PLAINTEXT, SASL_PLAINTEXT
from kafka_lite.network.request_metrics import PHASES, RequestMetrics, RequestSample
from kafka_lite.producer.kafka_producer import KafkaProducer

log = logging.getLogger(__name__)

REQUEST_METRICS_TOPIC = "_request_metrics"
CLIENT_ID_PREFIX = "request-metrics-reporter-"  # followed by the broker id
# The sample's fields, in the order of the table above and of the JSON objects.
SAMPLE_FIELDS = (
    "broker_id",
    "time_ms",
    "api",
    "api_version",
    "client_id",
    "request_bytes",
    "response_bytes",
    *(f"{phase}_time_ms" for phase in PHASES),
)
# The reporter's settings, read from the broker's (server.properties), as Cruise Control's reporter
# defines its own; KafkaConfig adds them to the broker's definitions.
L = Importance.LOW
CONFIG_DEF = (
    ConfigDef()
    .define("request.metrics.reporter.topic", Type.STRING, REQUEST_METRICS_TOPIC, None, L,
            "The topic the request metrics reporter publishes its samples to.")
    .define("request.metrics.reporter.interval.ms", Type.LONG, 1000, Range.at_least(1), L,
            "How often the request metrics reporter sends what it has buffered.")
    .define("request.metrics.reporter.buffer.size", Type.INT, 10000, Range.at_least(1), L,
            "Samples the reporter buffers between sends; more are dropped (and counted).")
    .define("request.metrics.reporter.close.timeout.ms", Type.LONG, 5000, Range.at_least(0), L,
            "How long shutdown waits for the reporter to send what it has.")
    .define("request.metrics.reporter.bootstrap.servers", Type.STRING, None, None, L,
            "Where the reporter sends its samples (default: this broker's own listener).")
    .define("request.metrics.reporter.topic.num.partitions", Type.INT, -1, None, L,
            "Partitions of the reporter's topic when it creates it (-1: the number of live brokers).")
    .define("request.metrics.reporter.topic.replication.factor", Type.SHORT, -1, None, L,
            "Replication factor of the reporter's topic (-1: the live brokers, at most 3).")
    .define("request.metrics.reporter.topic.retention.ms", Type.LONG, 86_400_000, Range.at_least(-1), L,
            "retention.ms of the reporter's topic (a day: a busy cluster writes a sample per request).")
)  # fmt: skip
# The default replication factor of the topic: as many brokers as are alive, at most three.
MAX_DEFAULT_REPLICATION_FACTOR = 3
# The topic rolls a segment every hour, so that retention (which deletes whole segments, never
# the active one) frees an hour of samples at a time instead of waiting for a 1 GB segment.
TOPIC_SEGMENT_MS = 3_600_000


def inter_broker_login(configs: Mapping[str, Any]) -> dict[str, Any]:
    """The broker's own login for its connections to brokers, as the reporter's clients take it
    (kafka-python's argument names): nothing on a PLAINTEXT inter-broker listener; on a SASL one,
    the inter-broker mechanism with the username and password of the listener's JAAS entry for it
    (what ``KafkaConfig.inter_broker_channel_builder`` logs in with).

    A named inter-broker listener is Kafka 0.10.2's (KIP-103), its protocol taken from
    ``listener.security.protocol.map``; Kafka 0.10.1 names the listener by its protocol. Both are
    read, since kafka_lite's brokers have named listeners (``KafkaConfig``'s)."""
    listener = (configs.get("inter.broker.listener.name") or "").strip().upper()  # ListenerName.normalised
    if listener:  # Kafka 0.10.2 (KIP-103): a named listener, its protocol from the map
        protocol = _listener_protocols(configs.get("listener.security.protocol.map")).get(listener, listener)
    else:  # 0.10.1: the listener is named by its protocol
        listener = protocol = configs.get("security.inter.broker.protocol") or PLAINTEXT
    if protocol != SASL_PLAINTEXT:
        return {}
    mechanism = configs.get("sasl.mechanism.inter.broker.protocol") or "PLAIN"
    entries = load_server_context(listener, mechanism, configs)
    options = next((e.options for e in entries if {"username", "password"} <= e.options.keys()), None)
    if options is None:
        raise ConfigException(
            f"the request metrics reporter logs in as the broker: the JAAS entry of listener {listener}'s "
            f'{mechanism} mechanism needs the broker\'s own username="..." and password="..."'
        )
    return {
        "security_protocol": SASL_PLAINTEXT,
        "sasl_mechanism": mechanism,
        "sasl_plain_username": options["username"],
        "sasl_plain_password": options["password"],
    }


def _listener_protocols(setting: Any) -> dict[str, str]:
    """``listener.security.protocol.map`` (``NAME:PROTOCOL,...``, or already parsed) as a dict."""
    if isinstance(setting, Mapping):
        return {str(k): str(v) for k, v in setting.items()}
    entries = setting.split(",") if isinstance(setting, str) else list(setting or [])
    return dict(entry.strip().split(":", 1) for entry in entries if ":" in entry)


class MetricsReporter(ABC):
    """A class named in ``metric.reporters``: built with no arguments, then ``configure``d with the
    broker's settings, ``init``ed with the registry, told of each completed request, and closed."""

    def configure(self, configs: Mapping[str, Any]) -> None:  # noqa: B027 (optional, as in Kafka)
        """The broker's settings by their dotted names (Kafka's ``Configurable.configure``)."""

    @abstractmethod
    def init(self, metrics: RequestMetrics) -> None:
        """Called once, when the broker registers the reporter; start any thread here."""

    @abstractmethod
    def request_completed(self, sample: RequestSample) -> None:
        """One completed request, on a processor thread: return at once, and never raise."""

    @abstractmethod
    def close(self) -> None:
        """The broker is shutting down: send what is pending (within a bounded time) and stop."""


def load_reporter_classes(names: list[str]) -> list[type[MetricsReporter]]:
    """The classes named in ``metric.reporters``, each ``package.module:Class`` or
    ``package.module.Class``; a name that does not resolve to a ``MetricsReporter`` is a
    ``ConfigException`` naming the setting (Kafka's ConfigDef check of a ``Type.CLASS`` list)."""
    return [_load_reporter_class(name) for name in names]


def _load_reporter_class(name: str) -> type[MetricsReporter]:
    if ":" not in name and "." not in name.strip("."):
        raise ConfigException(
            "metric.reporters", name, "Expected a class name as package.module:Class or package.module.Class"
        )
    # The class is the user's, named in the config: found by name at run time, as Kafka finds it by
    # reflection (Class.forName), so no layer of kafka_lite's own imports it.
    try:
        cls = pkgutil.resolve_name(name)
    except (ImportError, AttributeError, ValueError) as e:
        raise ConfigException("metric.reporters", name, f"Class {name} could not be found ({e}).") from None
    if not (isinstance(cls, type) and issubclass(cls, MetricsReporter)):
        raise ConfigException(
            "metric.reporters",
            name,
            f"{name} is not an instance of {MetricsReporter.__module__}.MetricsReporter",
        )
    return cls


class RequestMetricsTopicReporter(MetricsReporter):
    """Publishes every request sample of this broker to ``request.metrics.reporter.topic``."""

    @property
    def client_id(self) -> str:
        """The producer's, the admin client's and the thread's name: a sample of the reporter's own
        requests carries it as its client id."""
        return f"{CLIENT_ID_PREFIX}{self.broker_id}"

    def __init__(self) -> None:
        self.broker_id = -1
        self._configure_reporter(CONFIG_DEF.parse({}))
        self.login: dict[str, Any] = {}  # the broker's own login (inter_broker_login), set by configure
        self.time: Time = SYSTEM
        self.dropped = 0  # samples that found the buffer full
        self.sent = 0  # samples handed to the producer
        self.send_errors = 0  # samples the producer failed to deliver
        self._buffer: deque[RequestSample] = deque()
        self._lock = threading.Lock()  # guards the buffer and the counters: held for an append only
        self._wakeup = threading.Condition()
        self._closing = False
        self._partition: int | None = None  # set once the topic exists
        self._last_error: str | None = None
        self.producer: KafkaProducer | None = None
        self._thread: threading.Thread | None = None

    # -- MetricsReporter --------------------------------------------------------------------------------

    def configure(self, configs: Mapping[str, Any]) -> None:
        """``broker.id`` and the ``request.metrics.reporter.*`` settings (the broker's others are
        not the reporter's concern)."""
        if configs.get("broker.id") is None:
            raise ConfigException("Missing required configuration 'broker.id', which has no default value.")
        self.broker_id = int(configs["broker.id"])
        self._configure_reporter(CONFIG_DEF.parse({k: v for k, v in configs.items() if k in CONFIG_DEF.keys}))
        self.login = inter_broker_login(configs)

    def _configure_reporter(self, values: Mapping[str, Any]) -> None:
        self.topic = values["request.metrics.reporter.topic"]
        self.interval_ms = values["request.metrics.reporter.interval.ms"]
        self.buffer_size = values["request.metrics.reporter.buffer.size"]
        self.close_timeout_ms = values["request.metrics.reporter.close.timeout.ms"]
        self.bootstrap_servers = values["request.metrics.reporter.bootstrap.servers"] or ""
        self.topic_num_partitions = values["request.metrics.reporter.topic.num.partitions"]
        self.topic_replication_factor = values["request.metrics.reporter.topic.replication.factor"]
        self.topic_retention_ms = values["request.metrics.reporter.topic.retention.ms"]

    def init(self, metrics: RequestMetrics) -> None:
        if not self.bootstrap_servers:
            raise ConfigException(
                "request.metrics.reporter.bootstrap.servers",
                self.bootstrap_servers,
                "The reporter needs a broker to send to (the broker sets its own listener)",
            )
        self.time = metrics.time
        self.producer = KafkaProducer(
            bootstrap_servers=self.bootstrap_servers,
            client_id=self.client_id,
            # The reporter's thread is the only caller: waiting here delays samples, never a request.
            max_block_ms=max(self.interval_ms, 1000),
            time=self.time,
            **self.login,
        )
        self._thread = threading.Thread(target=self.run, name=self.client_id, daemon=True)
        self._thread.start()

    def request_completed(self, sample: RequestSample) -> None:
        with self._lock:
            if len(self._buffer) >= self.buffer_size:
                self.dropped += 1
            else:
                self._buffer.append(sample)

    def close(self) -> None:
        """Stop the thread, then send what is buffered and wait for it, all within
        ``request.metrics.reporter.close.timeout.ms``; what is still unsent then is lost."""
        deadline = self.time.hi_res_clock_ms() + self.close_timeout_ms
        with self._wakeup:
            self._closing = True
            self._wakeup.notify_all()
        if self._thread is not None:
            self._thread.join(self.close_timeout_ms / 1000)
        if self.producer is None:
            return
        if self._thread is None or not self._thread.is_alive():
            self.send_buffered()
        remaining_s = max(deadline - self.time.hi_res_clock_ms(), 0) / 1000
        self.producer.close(remaining_s)
        log.info(
            "Request metrics reporter of broker %d closed: %d samples sent, %d dropped, %d failed",
            self.broker_id,
            self.sent,
            self.dropped,
            self.send_errors,
        )

    # -- the reporter's thread ----------------------------------------------------------------------

    def run(self) -> None:
        while True:
            with self._wakeup:
                self.time.wait_for(self._wakeup, lambda: self._closing, self.interval_ms)
                if self._closing:
                    return  # close() sends the rest
            self.send_buffered()

    def send_buffered(self) -> None:
        """Hand every buffered sample to the producer, once the topic exists; never raises."""
        try:
            if self._partition is None:
                self._partition = self._ensure_topic()
            with self._lock:
                samples, self._buffer = self._buffer, deque()
            for sample in samples:
                self._send(sample)
            self._last_error = None
        except Exception as e:  # the broker must outlive its reporter: log once per new error, retry
            if str(e) != self._last_error:
                # Before the topic exists this is the cluster still starting (no controller yet, too
                # few brokers for the replication factor): worth a note, not a warning.
                level = logging.INFO if self._partition is None else logging.WARNING
                log.log(level, "Request metrics reporter of broker %d: %s (retrying)", self.broker_id, e)
                self._last_error = str(e)

    def _send(self, sample: RequestSample) -> None:
        value = json.dumps(
            {"broker_id": self.broker_id, **{f: getattr(sample, f) for f in SAMPLE_FIELDS[1:]}},
            separators=(",", ":"),
        ).encode()
        future = self.producer.send(
            self.topic,
            value=value,
            key=str(self.broker_id).encode(),
            partition=self._partition,
            timestamp_ms=sample.time_ms,
        )
        future.add_errback(self._on_send_error)
        with self._lock:
            self.sent += 1

    def _on_send_error(self, error: BaseException) -> None:
        with self._lock:
            self.send_errors += 1
        log.debug("Request metrics reporter of broker %d failed to send a sample: %s", self.broker_id, error)

    def _ensure_topic(self) -> int:
        """Create the topic if it does not exist (Cruise Control's reporter does the same), and
        return the partition this broker writes to.

        Compaction is off (every sample counts, and they share one key per broker); retention is
        ``request.metrics.reporter.topic.retention.ms``. Partitions and replication factor default
        to the live brokers (at most three replicas); a factor above the live brokers fails with
        INVALID_REPLICATION_FACTOR and is tried again at the next interval, so ``cluster up`` asks
        for its final size and the topic waits for every broker."""
        admin = KafkaAdminClient(
            self.bootstrap_servers,
            client_id=self.client_id,
            request_timeout_ms=max(self.interval_ms, 2000),
            time=self.time,
            **self.login,
        )
        try:
            cluster = admin.describe_cluster()
            if self.topic not in cluster.topics():
                live = len(cluster.nodes)
                partitions = self.topic_num_partitions if self.topic_num_partitions > 0 else live
                replication = self.topic_replication_factor
                if replication <= 0:
                    replication = min(MAX_DEFAULT_REPLICATION_FACTOR, live)
                configs = {
                    "cleanup.policy": "delete",
                    "retention.ms": str(self.topic_retention_ms),
                    "segment.ms": str(TOPIC_SEGMENT_MS),
                }
                try:
                    admin.create_topics([NewTopic(self.topic, partitions, replication, {}, configs)])
                    log.info(
                        "Request metrics reporter of broker %d created topic %s (%d partitions, RF %d)",
                        self.broker_id,
                        self.topic,
                        partitions,
                        replication,
                    )
                except Errors.TOPIC_ALREADY_EXISTS.exception_class:
                    pass  # another broker's reporter was first
        finally:
            admin.close()
        partitions_of_topic = self.producer.partitions_for(self.topic)
        if not partitions_of_topic:
            raise KafkaException(f"topic {self.topic} has no partitions yet")
        return self.broker_id % len(partitions_of_topic)
