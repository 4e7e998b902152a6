"""The producer's front door: ``send`` serializes, partitions and appends; a thread does the rest.

Mirrors: org.apache.kafka.clients.producer.KafkaProducer
         (clients/src/main/java/.../producer/KafkaProducer.java, Kafka 0.11.0)
Book:    chapter 2, 2.1.1 (the client's send: metadata, serialization, partitioning, the accumulator)
Differs: configs are keyword arguments in kafka-python's spelling (``linger_ms=5``), checked by
         ``ConfigDef``; serializers and the partitioner are callables. ``send`` takes the record's
         fields (``send(topic, value, key, partition, timestamp_ms, headers, callback)``) rather
         than a ProducerRecord; the callback is a callable ``(metadata, exception)``. ``flush``, ``close`` and ``future.get`` take seconds, as kafka-python's
         do. ``enable_idempotence`` is Kafka 1.0's (up to five requests in flight); the transactional
         methods wait at most ``max.block.ms`` (Kafka 0.11 waits for ever).

Usage::

    producer = KafkaProducer(bootstrap_servers="127.0.0.1:9092", linger_ms=5,
                             value_serializer=str.encode)
    future = producer.send("orders", "one", key=b"k1")   # asynchronous: returns at once
    metadata = future.get(timeout=10)                    # synchronous send: wait for the offset
    producer.send("orders", "two", callback=on_completion)  # Java's send(record, callback)
    producer.close()

Two threads. The caller's thread runs ``send``: wait (up to ``max.block.ms``) until metadata knows
the topic, serialize, choose the partition, and append to the ``RecordAccumulator`` (which may wait,
within the same ``max.block.ms``, for buffer memory). It never touches the network. The sender
thread (``Sender.run``) takes ready batches from the accumulator and sends them. ``send`` wakes it
when a batch fills up, or a new one starts.

The callback given to ``send`` travels with the record: the batch keeps it in the record's
``Thunk`` and calls ``callback(metadata, exception)`` on the sender thread when the batch completes,
records of a partition in the order they were sent. That is one call per record, registered at no
cost, where a callback added to the future afterwards (``future.add_callback``, kafka-python's way)
has to take the future's lock in case the batch is completing at that moment.

Errors of one record (a bad topic name or partition, a record over ``max.request.size``, a serializer
that raises, metadata that never comes, a full buffer) fail only that record's future, and call its
callback at once; nothing else is affected. Kafka throws some of these from ``send`` instead.
"""

from __future__ import annotations

import itertools
import logging
import threading

from kafka_lite.clients.client_utils import create_channel_builder, parse_bootstrap
from kafka_lite.clients.metadata import Cluster, Metadata, PartitionInfo
from kafka_lite.clients.network_client import NetworkClient
from kafka_lite.common.errors import (
    ConfigException,
    IllegalArgumentException,
    IllegalStateException,
    InvalidTopicException,
    KafkaException,
    RecordTooLargeException,
    TimeoutException,
    TopicAuthorizationException,
)
from kafka_lite.common.record import codec
from kafka_lite.common.record.compression import CompressionType
from kafka_lite.common.record.default_record import Header
from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.common.topic import validate_topic_name
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.common.utils import INT32_MAX
from kafka_lite.consumer.offset_and_metadata import OffsetAndMetadata
from kafka_lite.network.selector import Selector
from kafka_lite.producer.default_partitioner import DefaultPartitioner
from kafka_lite.producer.future_record_metadata import (
    INVALID_OFFSET,
    FutureRecordMetadata,
    ProduceRequestResult,
)
from kafka_lite.producer.producer_batch import Callback
from kafka_lite.producer.producer_config import CONFIG_DEF
from kafka_lite.producer.producer_interceptors import ProducerInterceptors
from kafka_lite.producer.producer_record import ProducerRecord
from kafka_lite.producer.record_accumulator import RecordAccumulator
from kafka_lite.producer.sender import Sender
from kafka_lite.producer.serialization import SerializationException, check_serializer, serialize
from kafka_lite.producer.transaction_manager import TransactionManager
from kafka_lite.producer.transactional_request_result import TransactionalRequestResult

log = logging.getLogger(__name__)

_CLIENT_ID_SEQUENCE = itertools.count(1)


class KafkaProducer:
    def __init__(
        self,
        *,
        key_serializer=None,
        value_serializer=None,
        partitioner=None,
        time: Time = SYSTEM,
        **configs,
    ) -> None:
        self.config = CONFIG_DEF.parse(_kafka_python_values(configs))
        self._configure_idempotence({name.replace("_", ".") for name in configs})
        self.time = time
        self.client_id = self.config["client.id"] or f"producer-{next(_CLIENT_ID_SEQUENCE)}"
        self.key_serializer = check_serializer("key_serializer", key_serializer)
        self.value_serializer = check_serializer("value_serializer", value_serializer)
        if partitioner is not None and not callable(getattr(partitioner, "partition", None)):
            raise ConfigException(
                "partitioner", partitioner, "Expected an object with Kafka's partition(...)"
            )
        self.partitioner = partitioner or DefaultPartitioner()
        # None without interceptors, as in Kafka: send then spends nothing on them.
        self.interceptors = ProducerInterceptors.from_config(self.config["interceptor.classes"], self.config)
        self.max_request_size = self.config["max.request.size"]
        self.total_memory_size = self.config["buffer.memory"]
        self.max_block_time_ms = self.config["max.block.ms"]
        self.request_timeout_ms = self.config["request.timeout.ms"]
        self.compression_type = CompressionType.for_name(self.config["compression.type"])
        self.acks = -1 if self.config["acks"] == "all" else int(self.config["acks"])

        self.metadata = Metadata(
            refresh_backoff_ms=self.config["retry.backoff.ms"],
            metadata_expire_ms=self.config["metadata.max.age.ms"],
            time=time,
        )
        self.metadata.bootstrap(parse_bootstrap(self.config["bootstrap.servers"]), time.milliseconds())
        self.transaction_manager = (
            TransactionManager(
                self.config["transactional.id"],
                self.config["transaction.timeout.ms"],
                self.config["retry.backoff.ms"],
                self.config["transaction.version"],
            )
            if self.config["enable.idempotence"]
            else None
        )
        self.accumulator = RecordAccumulator(
            batch_size=self.config["batch.size"],
            total_size=self.total_memory_size,
            compression=self.compression_type,
            linger_ms=self.config["linger.ms"],
            retry_backoff_ms=self.config["retry.backoff.ms"],
            time=time,
            transaction_manager=self.transaction_manager,
        )
        max_in_flight = self.config["max.in.flight.requests.per.connection"]
        self.client = NetworkClient(
            Selector(time=time, channel_builder=create_channel_builder(self.config, self.client_id)),
            self.client_id,
            max_in_flight_requests_per_connection=max_in_flight,
            reconnect_backoff_ms=self.config["reconnect.backoff.ms"],
            request_timeout_ms=self.request_timeout_ms,
            time=time,
            metadata=self.metadata,
        )
        self.sender = Sender(
            self.client,
            self.metadata,
            self.accumulator,
            guarantee_message_order=max_in_flight == 1,
            max_request_size=self.max_request_size,
            acks=self.acks,
            retries=self.config["retries"],
            time=time,
            request_timeout_ms=self.request_timeout_ms,
            retry_backoff_ms=self.config["retry.backoff.ms"],
            transaction_manager=self.transaction_manager,
        )
        self.io_thread = threading.Thread(
            target=self.sender.run, name=f"kafka-producer-network-thread | {self.client_id}", daemon=True
        )
        self.io_thread.start()
        self._closed = False
        log.debug("Kafka producer %s started", self.client_id)

    def _configure_idempotence(self, user_configured: set[str]) -> None:
        """Kafka 1.0's rules for ``enable.idempotence`` (``configureRetries``, ``configureAcks``,
        ``configureInflightRequests``): defaults that suit it, and an error for settings that break it.
        A transactional id implies idempotence (Kafka 0.11's ``configureTransactionState``)."""
        if self.config["transactional.id"] is not None:
            if "enable.idempotence" in user_configured and not self.config["enable.idempotence"]:
                raise ConfigException("Cannot set a transactional.id without also enabling idempotence.")
            self.config["enable.idempotence"] = True
        if not self.config["enable.idempotence"]:
            return
        if "acks" not in user_configured:
            self.config["acks"] = "all"
        elif self.config["acks"] not in ("all", "-1"):
            raise ConfigException(
                "Must set acks to all in order to use the idempotent producer. Otherwise we cannot "
                "guarantee idempotence."
            )
        if "retries" not in user_configured:
            self.config["retries"] = INT32_MAX
        elif self.config["retries"] == 0:
            raise ConfigException(
                "Must set retries to non-zero when using the idempotent producer. Otherwise we cannot "
                "guarantee idempotence."
            )
        if self.config["max.in.flight.requests.per.connection"] > 5:
            raise ConfigException(
                "Must set max.in.flight.requests.per.connection to at most 5 to use the idempotent producer."
            )

    # -- send --------------------------------------------------------------------------------------------

    # --8<-- [start:send]
    def send(
        self,
        topic: str,
        value: object = None,
        key: object = None,
        partition: int | None = None,
        timestamp_ms: int | None = None,
        headers: list[tuple[str, bytes | None]] | None = None,
        callback: Callback | None = None,
    ) -> FutureRecordMetadata:
        """Queue one record for ``topic``; return its future at once (Kafka's ``doSend``).

        ``callback(metadata, exception)`` is Java's ``send(record, callback)``: it runs once, when the
        record is written (``exception`` None) or has failed (``metadata`` None), on the I/O thread,
        or at once on the caller's thread when ``send`` itself fails the record. Raises only when the
        producer is closed; any other error fails the returned future (and calls ``callback``).
        """
        if self._closed:
            raise KafkaException("Cannot send after the producer is closed.")
        if self._is_transactional():
            # Raised, not put in the future, as Kafka's doSend rethrows it: outside a transaction,
            # or after the transaction failed, a send is the application's mistake.
            self.transaction_manager.fail_if_not_ready_for_send()
        if self.interceptors is not None:
            # Kafka's send: the interceptors see (and may replace) the record before doSend.
            record = self.interceptors.on_send(
                ProducerRecord(topic, value, key, partition, timestamp_ms, headers)
            )
            topic, value, key = record.topic, record.value, record.key
            partition, timestamp_ms, headers = record.partition, record.timestamp_ms, record.headers
        try:
            if not isinstance(topic, str) or topic not in self.metadata.topics:  # known topics were checked
                _validate_topic(topic)
            # 1. Metadata: the topic's partitions must be known before one can be chosen.
            cluster, waited_on_metadata_ms = self._wait_on_metadata(topic, partition, self.max_block_time_ms)
            remaining_wait_ms = max(0, self.max_block_time_ms - waited_on_metadata_ms)
            # 2. Serialize: the partitioner hashes the key's bytes.
            serialized_key = serialize("key", topic, self.key_serializer, key)
            serialized_value = serialize("value", topic, self.value_serializer, value)
            # 3. The partition: the caller's, or the partitioner's.
            partition = self._partition(
                topic, partition, key, serialized_key, value, serialized_value, cluster
            )
            record_headers = _headers(headers)
            serialized_size = codec.estimate_size_in_bytes_upper_bound(
                serialized_key, serialized_value, record_headers
            )
            self._ensure_valid_record_size(serialized_size)
            tp = (topic, partition)
            if self._is_transactional():
                # The partition joins the transaction before its first batch is drained.
                self.transaction_manager.maybe_add_partition_to_transaction(tp)
            timestamp = self.time.milliseconds() if timestamp_ms is None else _timestamp(timestamp_ms)
            # 4. The accumulator: into the partition's current batch (this may block for memory).
            # The callback is kept in the record's thunk in its batch; with interceptors it is wrapped
            # so that they hear of the record's completion first (Kafka's InterceptorCallback).
            intercept_callback = (
                callback if self.interceptors is None else self.interceptors.intercept_callback(tp, callback)
            )
            result = self.accumulator.append(
                tp,
                timestamp,
                serialized_key,
                serialized_value,
                record_headers,
                remaining_wait_ms,
                intercept_callback,
            )
            if result.batch_is_full or result.new_batch_created:
                # A batch is ready by size (or one started behind it): the sender need not wait for
                # linger.ms. A wakeup already pending is not repeated (see ``Selector.wakeup``).
                self.sender.wakeup()
            return result.future
        except KafkaException as e:  # an ApiException, a SerializationException, a bad partition ...
            log.debug("Exception occurred during message send: %s", e)
            if callback is not None:
                # Kafka's doSend calls the callback before the interceptors hear of the error.
                _call_with_error(callback, e)
            topic = topic if isinstance(topic, str) else ""
            if self.interceptors is not None:
                self.interceptors.on_send_error(topic, partition, e)
            return _failed_future(topic, partition, e)

    # --8<-- [end:send]

    def _wait_on_metadata(self, topic: str, partition: int | None, max_wait_ms: int) -> tuple[Cluster, int]:
        """The cluster once it knows ``topic``'s partitions, and how long that took (Kafka's ``waitOnMetadata``)."""
        self.metadata.add(topic)
        cluster = self.metadata.cluster
        partitions_count = cluster.partition_count_for_topic(topic)
        if partitions_count is not None and (partition is None or partition < partitions_count):
            return cluster, 0
        begin = self.time.milliseconds()
        remaining_wait_ms = max_wait_ms
        while True:
            version = self.metadata.request_update()
            self.sender.wakeup()
            try:
                self.metadata.await_update(version, remaining_wait_ms)
            except TimeoutException:
                raise TimeoutException(self._metadata_timeout_message(topic, max_wait_ms)) from None
            cluster = self.metadata.cluster
            elapsed = self.time.milliseconds() - begin
            if topic in cluster.unauthorized_topics:
                raise TopicAuthorizationException(f"Not authorized to access topics: [{topic}]")
            partitions_count = cluster.partition_count_for_topic(topic)
            if partitions_count is not None:
                break
            if elapsed >= max_wait_ms:
                raise TimeoutException(self._metadata_timeout_message(topic, max_wait_ms))
            remaining_wait_ms = max_wait_ms - elapsed
        if partition is not None and partition >= partitions_count:
            raise KafkaException(
                f"Invalid partition given with record: {partition} is not in the range [0...{partitions_count})."
            )
        return cluster, self.time.milliseconds() - begin

    def _metadata_timeout_message(self, topic: str, max_wait_ms: int) -> str:
        return (
            f"Failed to update metadata after {max_wait_ms} ms. (The partitions of topic {topic} are still "
            f"unknown after max.block.ms: is the topic there, and are the brokers "
            f"{','.join(self.config['bootstrap.servers'])} reachable?)"
        )

    def _partition(
        self,
        topic: str,
        partition: int | None,
        key,
        serialized_key,
        value,
        serialized_value,
        cluster: Cluster,
    ) -> int:
        if partition is not None:
            if not isinstance(partition, int) or isinstance(partition, bool) or partition < 0:
                raise KafkaException(f"Invalid partition given with record: {partition!r}")
            return partition
        return self.partitioner.partition(topic, key, serialized_key, value, serialized_value, cluster)

    def _ensure_valid_record_size(self, size: int) -> None:
        if size > self.max_request_size:
            raise RecordTooLargeException(
                f"The message is {size} bytes when serialized which is larger than the maximum request "
                f"size you have configured with the max.request.size configuration."
            )
        if size > self.total_memory_size:
            raise RecordTooLargeException(
                f"The message is {size} bytes when serialized which is larger than the total memory buffer "
                "you have configured with the buffer.memory configuration."
            )

    # -- transactions -------------------------------------------------------------------------------

    # --8<-- [start:transactions]
    def init_transactions(self) -> None:
        """Register ``transactional_id`` with its coordinator, once, before the first transaction: get
        the producer id and a new epoch, which fences any older producer with the same id, and have
        the coordinator complete (roll back or forward) that producer's open transaction."""
        self._await(self._transaction_manager().initialize_transactions())

    def begin_transaction(self) -> None:
        """Start a transaction: the records sent from now on are committed or aborted together."""
        self._transaction_manager().begin_transaction()

    def send_offsets_to_transaction(self, offsets: dict, consumer_group_id: str) -> None:
        """Commit ``offsets`` (``{TopicPartition: OffsetAndMetadata}``) for ``consumer_group_id`` as
        part of the transaction: the group sees them only if the transaction commits. This is what
        makes consume-transform-produce exactly once."""
        if not isinstance(consumer_group_id, str):
            # kafka-python also takes a ConsumerGroupMetadata; its group_id is what the broker needs.
            consumer_group_id = getattr(consumer_group_id, "group_id", consumer_group_id)
        offsets = {TopicPartition(*tp): _offset_and_metadata(om) for tp, om in offsets.items()}
        self._await(self._transaction_manager().send_offsets_to_transaction(offsets, consumer_group_id))

    def commit_transaction(self) -> None:
        """Send every record of the transaction, then commit it (the coordinator writes a COMMIT marker
        to each of its partitions). Raises ProducerFencedException if a newer producer took over."""
        self._await(self._transaction_manager().begin_commit())

    def abort_transaction(self) -> None:
        """Abort the transaction: records not yet sent are dropped, those sent are marked aborted and
        a read_committed consumer skips them. Also the way out of an abortable error."""
        self._await(self._transaction_manager().begin_abort())

    # --8<-- [end:transactions]

    def _transaction_manager(self) -> TransactionManager:
        """Kafka's ``throwIfNoTransactionManager``."""
        if not self._is_transactional():
            raise IllegalStateException(
                "Cannot use transactional methods without enabling transactions by setting the "
                "transactional_id configuration property"
            )
        return self.transaction_manager

    def _is_transactional(self) -> bool:
        return self.transaction_manager is not None and self.transaction_manager.is_transactional()

    def _await(self, result: TransactionalRequestResult) -> None:
        """Wake the sender, which sends the queued request, and wait (up to ``max.block.ms``) for it."""
        self.sender.wakeup()
        result.await_result(self.max_block_time_ms)

    # -- flush, close, partitions_for, metrics -------------------------------------------------------------

    def flush(self, timeout: float | None = None) -> None:
        """Make every buffered record sendable now and wait (up to ``timeout`` seconds) until each
        sent before this call has completed, successfully or not."""
        log.debug("Flushing accumulated records in producer.")
        self.accumulator.begin_flush()
        self.sender.wakeup()
        timeout_ms = None if timeout is None else int(timeout * 1000)
        if not self.accumulator.await_flush_completion(timeout_ms):
            raise TimeoutException(f"Failed to flush accumulated records within {timeout_ms} ms.")

    def close(self, timeout: float | None = None) -> None:
        """Send what is buffered and stop, waiting up to ``timeout`` seconds (forever if None);
        what is still unsent then fails. ``close(0)`` fails everything at once."""
        if self._closed and not self.io_thread.is_alive():
            return
        self._closed = True
        log.info("Closing the Kafka producer with timeout_s = %s.", timeout)
        invoked_from_callback = threading.current_thread() is self.io_thread
        if timeout is None or timeout > 0:
            if invoked_from_callback:
                log.warning("Overriding close timeout %s s to 0 s to prevent useless blocking due to "
                            "self-join. This means you have incorrectly invoked close with a non-zero "
                            "timeout from the producer call-back.", timeout)  # fmt: skip
            else:
                # Try to close gracefully: the sender sends what is left, then ends.
                self.sender.initiate_close()
                self.io_thread.join(timeout)
        if self.io_thread.is_alive():
            log.info("Proceeding to force close the producer since pending requests could not be "
                     "completed within timeout %s s.", timeout)  # fmt: skip
            self.sender.force_close()
            if not invoked_from_callback:
                self.io_thread.join()
        self.partitioner.close()
        if self.interceptors is not None:
            self.interceptors.close()
        log.debug("Kafka producer %s has been closed", self.client_id)

    def partitions_for(self, topic: str) -> list[PartitionInfo]:
        """The topic's partitions, waiting up to ``max.block.ms`` for metadata that knows them.

        Streams asks this for every record it partitions itself, so a topic the metadata already
        follows costs what Kafka's ``partitionsFor`` costs: a look-up in the cluster's partitions by
        topic, the list shared, not copied. Only a name the metadata does not know yet is checked
        first, as ``send`` checks it."""
        if not isinstance(topic, str) or topic not in self.metadata.topics:
            _validate_topic(topic)
        cluster, _ = self._wait_on_metadata(topic, None, self.max_block_time_ms)
        return cluster.partitions_for_topic(topic)

    def metrics(self) -> dict[str, float]:
        """A snapshot of some of Kafka's producer metrics, by Kafka's names."""
        m = self.sender.metrics
        return {
            "buffer-total-bytes": self.total_memory_size,
            "buffer-available-bytes": self.accumulator.free.available_memory(),
            "waiting-threads": self.accumulator.free.queued(),
            "bufferpool-wait-time-ns-total": self.accumulator.free.wait_time_ns,
            "requests-in-flight": self.client.in_flight_request_count(),
            "request-total": m.requests_sent,
            "batch-total": m.batches_sent,
            "outgoing-byte-total": m.bytes_sent,
            "record-send-total": m.records_sent,
            "record-error-total": m.record_errors,
            "record-retry-total": m.record_retries,
            "batch-expired-total": m.batches_expired,
            "batch-split-total": m.batch_splits,
            "request-latency-avg": m.request_latency.avg,
            "request-latency-max": m.request_latency.max,
            "produce-throttle-time-avg": m.produce_throttle_time.avg,
            "produce-throttle-time-max": m.produce_throttle_time.max,
        }

    def __enter__(self) -> KafkaProducer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _kafka_python_values(configs: dict) -> dict:
    """Accept kafka-python's spellings of two values: ``acks=1`` (an int) and ``compression_type=None``."""
    values = dict(configs)
    for name in ("acks",):
        value = values.get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            values[name] = str(value)
    for name in ("compression_type", "compression.type"):
        if name in values and values[name] is None:
            values[name] = "none"
    return values


def _offset_and_metadata(value: object) -> OffsetAndMetadata:
    """An offset to commit: an ``OffsetAndMetadata`` (or kafka-python's tuple of one), or a bare int."""
    if isinstance(value, int) and not isinstance(value, bool):
        return OffsetAndMetadata(value)
    if isinstance(value, tuple) and value and isinstance(value[0], int):
        return OffsetAndMetadata(*value[:2])
    raise IllegalArgumentException(
        f"An offset to commit must be an OffsetAndMetadata or an int, got {value!r}"
    )


def _headers(headers: list | tuple | None) -> list[Header]:
    """Headers as ``(str key, bytes-or-None value)`` pairs, a new list (Kafka's ``RecordHeaders``); a
    bad one says which."""
    if not headers:
        return []
    result = []
    for item in headers:
        try:
            key, value = item
        except (TypeError, ValueError):
            raise SerializationException(f"A header must be a (key, value) pair, got {item!r}") from None
        if not isinstance(key, str):
            raise SerializationException(f"A header key must be a str, got {type(key).__name__} in {item!r}")
        if value is not None and not isinstance(value, bytes | bytearray | memoryview):
            raise SerializationException(
                f"Header {key!r}: its value must be bytes or None, got {type(value).__name__}"
            )
        result.append(Header(key, None if value is None else bytes(value)))
    return result


def _timestamp(timestamp_ms: object) -> int:
    if not isinstance(timestamp_ms, int) or isinstance(timestamp_ms, bool) or timestamp_ms < 0:
        raise SerializationException(
            f"Invalid timestamp: {timestamp_ms!r}. Timestamp should always be non-negative or null."
        )
    return timestamp_ms


def _validate_topic(topic: object) -> None:
    if not isinstance(topic, str):
        raise InvalidTopicException(f"Topic name must be a str, got {type(topic).__name__}: {topic!r}")
    validate_topic_name(topic)


def _call_with_error(callback: Callback, error: BaseException) -> None:
    """Tell ``callback`` that ``send`` failed its record. A callback that raises is logged, as the
    batch does on the I/O thread; Kafka's ``doSend`` would let it escape ``send``, but kafka_lite's
    ``send`` fails the record in its future instead of raising, and keeps to that."""
    try:
        callback(None, error)
    except Exception:
        log.exception("Error executing user-provided callback on message that failed in send")


def _failed_future(topic: str, partition: int | None, error: BaseException) -> FutureRecordMetadata:
    """A future that has already failed (Kafka's ``FutureFailure``)."""
    result = ProduceRequestResult((topic, -1 if partition is None else partition))
    result.set(INVALID_OFFSET, -1, error)
    result.done()
    return FutureRecordMetadata(result, 0, -1, None, -1, -1, -1)
