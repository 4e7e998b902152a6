"""A compacted topic read as a log of updates: every record consumed, and "read to the end" on demand.

Mirrors: org.apache.kafka.connect.util.KafkaBasedLog
         (connect/runtime/src/main/java/org/apache/kafka/connect/util/KafkaBasedLog.java, Kafka 0.10.1)
Book:    chapter 8, 8.3
Differs: the topic is created, compacted, if it is missing (as Kafka 0.11's ``TopicAdmin`` does;
         0.10.1 relies on the broker creating it, uncompacted); the log end is asked with
         ``end_offsets`` (0.11's ``readToLogEnd``), where 0.10.1 seeks to the end and back.

Distributed Connect keeps its state (configs, source offsets, statuses) in compacted topics, each
read by every worker from the beginning. This class is what the three stores share: a producer
that writes with ``acks=all`` and one request in flight (so retries never reorder writes), and a
consumer assigned every partition of the topic, with no group and no committed offsets, that starts
from the earliest offset each time. A work thread polls the consumer for ever and hands every
record to ``consumed_callback``; a store keeps whatever map it builds from them.

``read_to_end(callback)`` is how a store knows it is up to date: it flushes the producer (so the
caller's own writes are in the log), queues the callback and wakes the work thread up, which asks
each partition's end offset, consumes until its position reaches every one, and then completes the
callbacks that were queued when it began. A callback queued after that waits for the next round, so
a write made between the two is never missed.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from typing import Any

from kafka_lite.clients.admin import KafkaAdminClient, NewTopic
from kafka_lite.clients.client_utils import admin_client_login
from kafka_lite.common.errors import KafkaException, TopicExistsException, WakeupException
from kafka_lite.common.time import Time
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.connect.errors import ConnectException
from kafka_lite.connect.runtime.worker_config import worker_security_configs
from kafka_lite.connect.util.callback import Callback, FutureCallback
from kafka_lite.consumer.kafka_consumer import KafkaConsumer
from kafka_lite.producer.kafka_producer import KafkaProducer

log = logging.getLogger(__name__)

CREATE_TOPIC_TIMEOUT_MS = 30000
POLL_FOREVER_MS = 2**31 - 1  # Integer.MAX_VALUE: the work thread waits for records or a wakeup


class KafkaBasedLog:
    def __init__(
        self,
        topic: str,
        producer_configs: dict[str, Any],
        consumer_configs: dict[str, Any],
        consumed_callback: Callback,
        time: Time,
        new_topic: NewTopic | None = None,
    ) -> None:
        self.topic = topic
        self.producer_configs = dict(producer_configs)
        self.consumer_configs = dict(consumer_configs)
        self.consumed_callback = consumed_callback
        self.time = time
        self.new_topic = new_topic  # how to create the topic if it is missing; None: it must exist
        self.producer: KafkaProducer | None = None
        self.consumer: KafkaConsumer | None = None
        self.thread: threading.Thread | None = None
        self._lock = threading.Lock()  # Kafka's synchronized (KafkaBasedLog.this)
        self.stop_requested = False
        self.read_log_end_offset_callbacks: deque[Callback] = deque()

    def start(self) -> None:
        log.info("Starting KafkaBasedLog with topic %s", self.topic)
        if self.new_topic is not None:
            self._create_topic_if_missing()
        self.producer = self._create_producer()
        self.consumer = self._create_consumer()
        partition_infos = None
        started = self.time.milliseconds()
        while not partition_infos and self.time.milliseconds() - started < CREATE_TOPIC_TIMEOUT_MS:
            partition_infos = self.consumer.partitions_for(self.topic)
            if not partition_infos:
                self.time.sleep(min(self.time.milliseconds() - started + 50, 1000))
        if not partition_infos:
            raise ConnectException(
                f"Could not look up partition metadata for topic {self.topic} in the allotted period. "
                "This could indicate a connectivity issue, unavailable topic partitions, or if this is "
                "your first use of the topic it may have taken too long to create."
            )
        self.consumer.assign([TopicPartition(p.topic, p.partition) for p in partition_infos])
        self._read_to_log_end()
        self.thread = threading.Thread(target=self._run, name=f"KafkaBasedLog Work Thread - {self.topic}",
                                       daemon=True)  # fmt: skip
        self.thread.start()
        log.info("Started KafkaBasedLog for topic %s", self.topic)

    def stop(self) -> None:
        log.info("Stopping KafkaBasedLog for topic %s", self.topic)
        with self._lock:
            self.stop_requested = True
        self.consumer.wakeup()
        self.thread.join()
        try:
            self.producer.close()
        except KafkaException:
            log.exception("Failed to stop KafkaBasedLog producer")
        try:
            self.consumer.close()
        except KafkaException:
            log.exception("Failed to stop KafkaBasedLog consumer")
        log.info("Stopped KafkaBasedLog for topic %s", self.topic)

    def read_to_end(self, callback: Callback | None = None) -> FutureCallback:
        """Call ``callback(None, None)`` once every record written before this call has been
        consumed; the returned future completes then too."""
        future = FutureCallback(callback)
        self.producer.flush()
        with self._lock:
            self.read_log_end_offset_callbacks.append(future)
        self.consumer.wakeup()
        return future

    def flush(self) -> None:
        self.producer.flush()

    def partition_count(self) -> int:
        """How many partitions the topic has (Kafka 0.11's ``partitionCount``): every one is read."""
        return len(self.consumer.assignment())

    def send(self, key: bytes | None, value: bytes | None, callback: Callback | None = None) -> None:
        """Write one record; ``callback(error, metadata)`` runs on the producer's I/O thread."""
        # Kafka's producer.send(record, callback): the producer calls it once, when the record is
        # acknowledged or has failed. Its order is (metadata, exception), Connect's (error, result).
        on_completion = None if callback is None else (lambda metadata, e: callback(e, metadata))
        self.producer.send(self.topic, value=value, key=key, callback=on_completion)

    # -- set-up -------------------------------------------------------------------------------------

    def _create_topic_if_missing(self) -> None:
        admin = KafkaAdminClient(self.producer_configs["bootstrap.servers"], client_id=f"{self.topic}-admin",
                                 time=self.time, **admin_client_login(self.producer_configs))  # fmt: skip
        try:
            cluster = admin.describe_cluster()
            if self.topic in cluster.topics():
                return
            new_topic = self.new_topic
            brokers = len(cluster.nodes)
            if new_topic.replication_factor > brokers:
                # A smaller cluster than the default asks for (a one-broker quick start): one replica per broker.
                log.warning("Creating topic %s with replication factor %d, as the cluster has only %d brokers",
                            self.topic, brokers, brokers)  # fmt: skip
                new_topic = NewTopic(
                    new_topic.name, new_topic.num_partitions, brokers, configs=new_topic.configs
                )
            log.info("Creating topic %s (%d partitions, compacted)", self.topic, new_topic.num_partitions)
            admin.create_topics([new_topic])
        except TopicExistsException:
            pass  # another worker created it first
        finally:
            admin.close()

    def _create_producer(self) -> KafkaProducer:
        # Always acks=all, for durable writes; never more than one request in flight, so that a
        # retry cannot reorder two updates of one key.
        configs = {**self.producer_configs, "acks": "all", "max.in.flight.requests.per.connection": 1}
        return KafkaProducer(time=self.time, **configs)

    def _create_consumer(self) -> KafkaConsumer:
        # From the beginning, every time, and nothing committed: the whole log is the state.
        configs = {**self.consumer_configs, "auto.offset.reset": "earliest", "enable.auto.commit": False}
        return KafkaConsumer(time=self.time, **configs)

    # -- the work thread ----------------------------------------------------------------------------

    def _poll(self, timeout_ms: int) -> None:
        try:
            records = self.consumer.poll(timeout_ms)
        except WakeupException:
            raise  # read_to_end or stop: the caller handles it
        except KafkaException as e:
            log.error("Error polling: %s", e)
            return
        for partition_records in records.values():
            for record in partition_records:
                self.consumed_callback(None, record)

    def _read_to_log_end(self) -> None:
        assignment = self.consumer.assignment()
        end_offsets = self.consumer.end_offsets(assignment)
        # Partitions in order; a partition is done once the consumer's position reaches its end.
        remaining = {tp: end for tp, end in sorted(end_offsets.items()) if end > 0}
        while remaining:
            for tp in list(remaining):
                if self.consumer.position(tp) >= remaining[tp]:
                    del remaining[tp]
                else:
                    break
            if remaining:
                self._poll(POLL_FOREVER_MS)

    def _run(self) -> None:
        try:
            while True:
                with self._lock:
                    if self.stop_requested:
                        break
                    num_callbacks = len(self.read_log_end_offset_callbacks)
                if num_callbacks > 0:
                    try:
                        self._read_to_log_end()
                    except WakeupException:
                        # Another read_to_end, or stop: both start this loop again.
                        continue
                with self._lock:
                    # Only the callbacks queued before this read began: one queued since may
                    # follow a write this read did not wait for.
                    callbacks = [self.read_log_end_offset_callbacks.popleft() for _ in range(num_callbacks)]
                for callback in callbacks:
                    callback(None, None)
                try:
                    self._poll(POLL_FOREVER_MS)
                except WakeupException:
                    continue
        except Exception:
            log.exception("Unexpected exception in KafkaBasedLog's work thread")


def client_configs(worker_config: dict[str, Any], client_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The producer's and the consumer's settings for a store's log, from the worker's settings.

    Kafka hands the clients every worker setting and lets them ignore what they do not know;
    kafka_lite's clients refuse an unknown setting, so the log's clients get the cluster's address,
    their client id and the worker's login (its top-level security settings: the internal topics
    are the worker's, written and read as its principal)."""
    bootstrap = worker_config["bootstrap.servers"]
    if not isinstance(bootstrap, str):
        bootstrap = ",".join(bootstrap)
    login = worker_security_configs(worker_config)
    producer = {"bootstrap.servers": bootstrap, "client.id": f"{client_id}-producer", **login}
    consumer = {"bootstrap.servers": bootstrap, "client.id": f"{client_id}-consumer", **login}
    return producer, consumer
