"""The sender: the producer's I/O thread, turning ready batches into produce requests per broker.

Mirrors: org.apache.kafka.clients.producer.internals.Sender
         (clients/src/main/java/.../producer/internals/Sender.java, Kafka 0.11.0)
Book:    chapter 2, 2.1.2 (the sender thread), 2.1.3 (on the NetworkClient)
Differs: idempotence as Kafka 1.0's sender has it (up to five requests in flight); the producer
         id, and a transaction's requests, are sent like any other request, without blocking the
         thread. The flush begun before a transaction ends is ended when its EndTxn goes (Kafka
         leaves it on). ``run_once`` is Kafka's ``run(long now)``. Metrics are a few counters and
         one ``Sensor`` (the requests' latency), not Kafka's registry of sensors.

Each round of ``run_once`` (a transactional producer first sends the transaction manager's next
request, if it has one, and drains nothing until it is answered):

1. ``accumulator.ready`` names the brokers that lead a partition with a sendable batch (and the
   topics whose leader is unknown: those ask for a metadata refresh);
2. brokers the client cannot send to yet (connecting, or ``max.in.flight.requests.per.connection``
   requests already out) are dropped for this round; the client starts connecting if it may;
3. ``accumulator.drain`` takes at most one batch per partition for each remaining broker, up to
   ``max.request.size``; with one request in flight allowed, the drained partitions are *muted*
   until their response comes back, which is what keeps a retried batch ahead of the next one;
4. batches that waited in the accumulator longer than ``request.timeout.ms`` fail;
5. one ProduceRequest per broker goes to the NetworkClient, and ``client.poll`` does the I/O and
   calls ``handle_produce_response`` for every response (or disconnect) that completed.

A response is handled per partition: success completes the batch's futures with the base offset; a
retriable error puts the batch back at the front of its deque (while ``retries`` allow);
MESSAGE_TOO_LARGE for a batch of several records splits it, and the pieces go back in its place
(Kafka 0.11's split); any other error fails the batch. An error that says the client's metadata is stale (NOT_LEADER_FOR_PARTITION,
UNKNOWN_TOPIC_OR_PARTITION, a disconnect) also asks for a metadata refresh, so the retry goes to the
new leader.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from kafka_lite.clients.metadata import Metadata
from kafka_lite.clients.network_client import ClientRequest, ClientResponse, NetworkClient
from kafka_lite.common.errors import (
    Errors,
    InvalidMetadataException,
    KafkaException,
    OutOfOrderSequenceException,
    ProducerFencedException,
    RecordTooLargeException,
    RetriableException,
    UnknownTopicOrPartitionException,
)
from kafka_lite.common.metrics import Sensor
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.record.constants import NO_TIMESTAMP
from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.common.utils import INT32_MAX, LONG_MAX
from kafka_lite.producer.future_record_metadata import INVALID_OFFSET
from kafka_lite.producer.producer_batch import ProducerBatch
from kafka_lite.producer.record_accumulator import RecordAccumulator
from kafka_lite.producer.transaction_manager import ProducerIdAndEpoch, TransactionManager

log = logging.getLogger(__name__)

PRODUCE_VERSION = 3  # the first with record batch v2 (magic 2) and a transactional id


@dataclass
class SenderMetrics:
    """A few of Kafka's producer-metrics: plain counters, and the requests' latency as a sensor."""

    requests_sent: int = 0
    batches_sent: int = 0
    bytes_sent: int = 0
    records_sent: int = 0  # records whose batch completed successfully
    record_errors: int = 0
    record_retries: int = 0
    batches_expired: int = 0
    batch_splits: int = 0
    request_latency: Sensor = field(default_factory=lambda: Sensor("request-latency"))
    # how long the brokers held responses back for this client id's quotas (book 10.1)
    produce_throttle_time: Sensor = field(default_factory=lambda: Sensor("produce-throttle-time"))


class Sender:
    def __init__(
        self,
        client: NetworkClient,
        metadata: Metadata,
        accumulator: RecordAccumulator,
        guarantee_message_order: bool,
        max_request_size: int,
        acks: int,
        retries: int,
        time: Time = SYSTEM,
        request_timeout_ms: int = 30_000,
        retry_backoff_ms: int = 100,
        transaction_manager: TransactionManager | None = None,
    ) -> None:
        self.client = client
        self.accumulator = accumulator
        self.metadata = metadata
        # With max.in.flight.requests.per.connection = 1 the sender mutes each partition it sends,
        # so a retried batch cannot be overtaken by the next one.
        self.guarantee_message_order = guarantee_message_order
        self.max_request_size = max_request_size
        self.acks = acks
        self.retries = retries
        self.time = time
        self.request_timeout_ms = request_timeout_ms
        self.retry_backoff_ms = retry_backoff_ms
        # Set for an idempotent producer: the producer id, and the sequences of batches in flight.
        self.transaction_manager = transaction_manager
        self.running = True
        self.force_closed = False
        self._flushing_for_transaction = False  # a flush begun so a commit or abort waits for every batch
        self.metrics = SenderMetrics()

    # --8<-- [start:run]
    def run(self) -> None:
        """The I/O thread's body: loop until closed, then send what is left (unless forced)."""
        log.debug("Starting Kafka producer I/O thread.")
        while self.running:
            self._run_once_logging_errors()
        log.debug("Beginning shutdown of Kafka producer I/O thread, sending remaining records.")
        # Appends have stopped (the accumulator is closed), but batches may still wait in the
        # accumulator or for a response: keep going until they are done.
        while not self.force_closed and (
            self.accumulator.has_undrained() or self.client.in_flight_request_count() > 0
        ):
            self._run_once_logging_errors()
        if self.force_closed:
            # Fail every incomplete batch, and wake the threads waiting on their futures.
            self.accumulator.abort_incomplete_batches()
        try:
            self.client.close_all()
        except Exception:
            log.exception("Failed to close network client")
        log.debug("Shutdown of Kafka producer I/O thread has completed.")

    def _run_once_logging_errors(self) -> None:
        try:
            self.run_once(self.time.milliseconds())
        except Exception:
            # As Kafka's: a bug in one round must not kill the thread every send depends on.
            log.exception("Uncaught error in kafka producer I/O thread: ")

    def run_once(self, now: int) -> None:
        """One round: send what is ready, then do the network I/O (Kafka's ``Sender.run(long now)``)."""
        tm = self.transaction_manager
        if tm is not None:
            if not tm.is_transactional():
                # An idempotent producer numbers its batches under a producer id: nothing is sent without one.
                self._maybe_send_init_producer_id(now)
            elif tm.has_in_flight_request():
                # A transactional request goes alone: no batch is drained until it is answered.
                self.client.poll(self.retry_backoff_ms, now)
                return
            elif (wait_ms := self._maybe_send_transactional_request(now)) is not None:
                self.client.poll(wait_ms, now)
                return
            if tm.fatal_error is not None or not tm.has_producer_id():
                if tm.fatal_error is not None and self.accumulator.has_incomplete():
                    log.error("Aborting producer batches due to fatal error: %s", tm.fatal_error)
                    self.accumulator.abort_batches(tm.fatal_error)
                # Unlike Kafka's, batches still expire while the id is awaited, so that a send to an
                # unreachable cluster fails after request.timeout.ms here too.
                self._fail_expired_batches(now)
                self.client.poll(self.retry_backoff_ms, now)
                return
            if tm.has_abortable_error():
                # The transaction will be aborted: what has not been sent never will be.
                self.accumulator.abort_undrained_batches(tm.last_error)
        poll_timeout = self.send_producer_data(now)
        self.client.poll(poll_timeout, now)

    # --8<-- [end:run]

    # -- the producer id (idempotence) -----------------------------------------------------------------------

    def _maybe_send_init_producer_id(self, now: int) -> None:
        """Ask the least loaded broker for a producer id, unless one is known or already asked for.

        Kafka's sender blocks in ``maybeWaitForProducerId`` until the answer comes; here the request
        goes out like any other and ``run_once`` polls until its callback sets the id.
        """
        tm = self.transaction_manager
        if tm.has_producer_id() or tm.init_producer_id_in_flight or tm.fatal_error is not None:
            return
        node = self.client.least_loaded_node(now)
        if node is None or not self.client.ready(node, now):
            return
        body = {"transactional_id": None, "transaction_timeout_ms": INT32_MAX}
        request = ClientRequest(
            node, ApiKeys.INIT_PRODUCER_ID, 0, body, callback=self._handle_init_producer_id_response
        )
        tm.init_producer_id_in_flight = True
        self.client.send(request, now)

    def _handle_init_producer_id_response(self, response: ClientResponse) -> None:
        tm = self.transaction_manager
        tm.init_producer_id_in_flight = False
        if response.disconnected:
            return  # asked again in the next round, of another node if this one is gone
        error = Errors.for_code(response.body["error_code"])
        if error is Errors.NONE:
            tm.set_producer_id_and_epoch(
                ProducerIdAndEpoch(response.body["producer_id"], response.body["producer_epoch"])
            )
        elif error.retriable:
            log.debug("Retriable error from InitProducerId response: %s", error.name)
        else:
            tm.transition_to_fatal_error(error.exception(f"InitProducerId failed: {error.description}"))

    # -- transactional requests --------------------------------------------------------------------------

    # --8<-- [start:maybe_send_transactional_request]
    def _maybe_send_transactional_request(self, now: int) -> int | None:
        """Send the transaction manager's next request if it can go now; None when there is none,
        else how long the round's poll may wait (one went, or waits).

        Kafka's sender blocks here until the coordinator's connection is ready, and sleeps through a
        retry's back-off, the handler's own (``retryBackoffMs()``: 20 ms for a transaction's first
        AddPartitionsToTxn refused while the last one completes). This one returns instead, with the
        request back at the head of the queue, and the poll wakes when its back-off ends; meanwhile no
        batch is drained (the caller returns).
        """
        tm = self.transaction_manager
        if tm.is_completing() and self.accumulator.has_incomplete():
            if tm.is_aborting():
                self.accumulator.abort_undrained_batches(
                    KafkaException("Failing batch since transaction was aborted")
                )
            # Batches being retried may or may not be written already: they must finish before the
            # EndTxn, so make them all sendable now (Kafka's flush before a commit).
            if not self._flushing_for_transaction:
                self.accumulator.begin_flush()
                self._flushing_for_transaction = True
        handler = tm.next_request_handler(self.accumulator.has_incomplete())
        if self._flushing_for_transaction and not self.accumulator.has_incomplete():
            self.accumulator.end_flush()
            self._flushing_for_transaction = False
        if handler is None:
            return None
        if handler.is_retry and now < handler.ready_at:
            tm.enqueue(handler)  # still backing off
            return handler.ready_at - now
        if handler.needs_coordinator():
            target = tm.coordinator(handler.coordinator_type)
            if target is None:
                tm.lookup_coordinator(handler.coordinator_type, handler.coordinator_key)
                tm.enqueue(handler)
                return self.retry_backoff_ms
            node = target.id_string
            self.client.set_node(node, target.host, target.port)
        else:
            node = self.client.least_loaded_node(now)
        if node is None or not self.client.ready(node, now):
            if node is not None and self.client.connection_failed(node) and handler.needs_coordinator():
                # The coordinator cannot be reached: find it again (it may have moved).
                tm.lookup_coordinator(handler.coordinator_type, handler.coordinator_key)
            tm.enqueue(handler)  # connecting: try again next round
            return self.retry_backoff_ms
        request = ClientRequest(
            node, handler.api_key, handler.version, handler.request_body(), callback=handler.on_complete
        )
        self.client.send(request, now)
        tm.set_in_flight_request_correlation_id(request.correlation_id)
        log.debug("%sSending transactional request %s to node %s", tm.log_prefix, handler, node)
        return self.retry_backoff_ms

    # --8<-- [end:maybe_send_transactional_request]

    # --8<-- [start:send_producer_data]
    def send_producer_data(self, now: int) -> int:
        """Drain ready batches into produce requests; return how long the next poll may wait."""
        cluster = self.metadata.cluster
        # The partitions with data ready to send, grouped by their leaders.
        result = self.accumulator.ready(cluster, now)

        # Partitions whose leader is unknown: make sure metadata covers their topics, and refresh it.
        if result.unknown_leader_topics:
            for topic in result.unknown_leader_topics:
                self.metadata.add(topic)
            self.metadata.request_update()

        # Drop the nodes we cannot send to now; the client starts connecting to them if it may.
        not_ready_timeout = LONG_MAX
        for node in list(result.ready_nodes):
            node_id = node.id_string
            if not self.client.ready(node_id, now):
                result.ready_nodes.discard(node)
                not_ready_timeout = min(not_ready_timeout, self.client.connection_delay(node_id, now))

        # One request's worth of batches per node.
        batches = self.accumulator.drain(cluster, result.ready_nodes, self.max_request_size, now)
        if self.guarantee_message_order:
            for batch_list in batches.values():
                for batch in batch_list:
                    self.accumulator.mute_partition(batch.topic_partition)

        self._fail_expired_batches(now)

        # Ready nodes with data: poll without waiting, to loop and send more at once. Otherwise wait
        # until the first lingering or backing-off batch may be ready. Nodes that are not ready are
        # left out of the first case on purpose: they would make this thread spin.
        poll_timeout = min(result.next_ready_check_delay_ms, not_ready_timeout)
        if result.ready_nodes:
            log.debug("Nodes with data ready to send: %s", sorted(n.id for n in result.ready_nodes))
            poll_timeout = 0
        self._send_produce_requests(batches, now)
        return poll_timeout

    # --8<-- [end:send_producer_data]

    def _fail_expired_batches(self, now: int) -> None:
        for expired_batch in self.accumulator.abort_expired_batches(self.request_timeout_ms, now):
            self.metrics.batches_expired += 1
            self._fail_batch(expired_batch, INVALID_OFFSET, NO_TIMESTAMP, expired_batch.timeout_exception())

    # -- requests out ----------------------------------------------------------------------------------

    def _send_produce_requests(self, collated: dict[int, list[ProducerBatch]], now: int) -> None:
        for destination, batches in collated.items():
            self._send_produce_request(now, destination, batches)

    def _send_produce_request(self, now: int, destination: int, batches: list[ProducerBatch]) -> None:
        if not batches:
            return
        records_by_partition: dict[TopicPartition, ProducerBatch] = {}
        topic_data: dict[str, list[dict]] = {}
        for batch in batches:
            topic, partition = batch.topic_partition
            records = batch.records()
            topic_data.setdefault(topic, []).append({"partition": partition, "record_set": records.buffer()})
            records_by_partition[batch.topic_partition] = batch
            self.metrics.bytes_sent += records.size_in_bytes()
        tm = self.transaction_manager
        body = {
            "transactional_id": tm.transactional_id if tm is not None else None,
            "acks": self.acks,
            "timeout": self.request_timeout_ms,
            "topic_data": [{"topic": topic, "data": data} for topic, data in topic_data.items()],
        }
        request = ClientRequest(
            str(destination),
            ApiKeys.PRODUCE,
            PRODUCE_VERSION,
            body,
            expect_response=self.acks != 0,
            callback=lambda response: self.handle_produce_response(
                response, records_by_partition, self.time.milliseconds()
            ),
        )
        self.client.send(request, now)
        self.metrics.requests_sent += 1
        self.metrics.batches_sent += len(batches)
        log.debug("Sent produce request to %s: %d batch(es)", destination, len(batches))

    # -- responses in ------------------------------------------------------------------------------------

    # --8<-- [start:handle_produce_response]
    def handle_produce_response(
        self, response: ClientResponse, batches: dict[TopicPartition, ProducerBatch], now: int
    ) -> None:
        request = response.request
        if response.disconnected:
            # The connection dropped (or the request timed out, and the client dropped it): no batch
            # of this request is known to be written. NETWORK_EXCEPTION is retriable.
            timed_out = now - request.created_ms >= self.request_timeout_ms
            reason = (
                f"the request timed out after {now - request.created_ms} ms (request.timeout.ms is "
                f"{self.request_timeout_ms})"
                if timed_out
                else "the connection was lost"
            )
            log.debug(
                "Cancelled produce request with correlation id %d to node %s: %s",
                request.correlation_id,
                request.destination,
                reason,
            )
            for batch in batches.values():
                message = f"Node {request.destination} disconnected before a response was received: {reason}"
                self._complete_batch(
                    batch,
                    Errors.NETWORK_EXCEPTION,
                    INVALID_OFFSET,
                    NO_TIMESTAMP,
                    request.correlation_id,
                    now,
                    message,
                )
            return
        if response.body is None:
            # acks=0: the broker sends nothing back; the batch is done once it is on the wire.
            for batch in batches.values():
                self._complete_batch(
                    batch, Errors.NONE, INVALID_OFFSET, NO_TIMESTAMP, request.correlation_id, now
                )
            return
        self.metrics.request_latency.record(response.request_latency_ms)
        self.metrics.produce_throttle_time.record(response.body.get("throttle_time_ms", 0))  # v0 has none
        for topic_response in response.body["responses"]:
            topic = topic_response["topic"]
            for p in topic_response["partition_responses"]:
                batch = batches[(topic, p["partition"])]
                error = Errors.for_code(p["error_code"])
                self._complete_batch(
                    batch,
                    error,
                    p["base_offset"],
                    p.get("log_append_time", NO_TIMESTAMP),
                    request.correlation_id,
                    now,
                )

    def _complete_batch(
        self,
        batch: ProducerBatch,
        error: Errors,
        base_offset: int,
        log_append_time: int,
        correlation_id: int,
        now: int,
        message: str | None = None,
    ) -> None:
        topic, partition = batch.topic_partition
        if error is Errors.MESSAGE_TOO_LARGE and batch.record_count > 1:
            # Too large for the broker, but more than one record: send the records again in smaller
            # batches, in order. The split does not use up a retry.
            log.warning(
                "Got error produce response in correlation id %d on topic-partition %s-%d, splitting and "
                "retrying (%d attempts left). Error: %s",
                correlation_id, topic, partition, self.retries - batch.attempts, error.name,
            )  # fmt: skip
            if self.transaction_manager is not None:
                self.transaction_manager.remove_in_flight_batch(batch)
            self.accumulator.split_and_reenqueue(batch)
            self.accumulator.deallocate(batch)
            self.metrics.batch_splits += 1
        elif error is not Errors.NONE:
            tm = self.transaction_manager
            if self._can_retry(batch, error):
                log.warning(
                    "Got error produce response with correlation id %d on topic-partition %s-%d, retrying "
                    "(%d attempts left). Error: %s",
                    correlation_id, topic, partition, self.retries - batch.attempts - 1, error.name,
                )  # fmt: skip
                if tm is None or tm.has_producer_id_and_epoch(batch.producer_id, batch.producer_epoch):
                    self.accumulator.reenqueue(batch, now)
                    self.metrics.record_retries += batch.record_count
                else:
                    # Retrying under the old id after a reset would write it as new data: drop it.
                    self._fail_batch(batch, base_offset, log_append_time, OutOfOrderSequenceException(
                        f"Attempted to retry sending a batch but the producer id changed from "
                        f"{batch.producer_id} to {tm.producer_id_and_epoch.producer_id} in the mean time. "
                        "This batch will be dropped."))  # fmt: skip
            elif error is Errors.DUPLICATE_SEQUENCE_NUMBER:
                # The broker has this batch, but no longer remembers where: a success without an offset.
                self._complete_batch_successfully(batch, INVALID_OFFSET, NO_TIMESTAMP)
            else:
                self._fail_batch(
                    batch, base_offset, log_append_time, self._exception_for(batch, error, message)
                )
            if issubclass(error.exception_class, InvalidMetadataException):
                if issubclass(error.exception_class, UnknownTopicOrPartitionException):
                    log.warning(
                        "Received unknown topic or partition error in produce request on partition %s-%d. "
                        "The topic/partition may not exist or the user may not have Describe access to it",
                        topic, partition,
                    )  # fmt: skip
                # The leader may have moved: find out before the retry goes out.
                self.metadata.request_update()
        else:
            self._complete_batch_successfully(batch, base_offset, log_append_time)
        # The partition's response is in: its next batch may go.
        if self.guarantee_message_order:
            self.accumulator.unmute_partition(batch.topic_partition)

    # --8<-- [end:handle_produce_response]

    def _complete_batch_successfully(
        self, batch: ProducerBatch, base_offset: int, log_append_time: int
    ) -> None:
        tm = self.transaction_manager
        if tm is not None:
            if tm.has_producer_id_and_epoch(batch.producer_id, batch.producer_epoch):
                tm.maybe_update_last_acked_sequence(
                    batch.topic_partition, batch.base_sequence + batch.record_count - 1
                )
            tm.remove_in_flight_batch(batch)
        if batch.done(base_offset, log_append_time, None):
            self.accumulator.deallocate(batch)
            self.metrics.records_sent += batch.record_count

    def _exception_for(self, batch: ProducerBatch, error: Errors, message: str | None) -> BaseException:
        topic, partition = batch.topic_partition
        attempts = batch.attempts + 1
        tried = f", after {attempts} attempt{'s' if attempts > 1 else ''} (retries is {self.retries})"
        # Error descriptions are sentences; what was tried goes before their full stop.
        text = (message or error.description).rstrip(".") + (tried if error.retriable else "")
        if error is Errors.MESSAGE_TOO_LARGE:
            return RecordTooLargeException(
                f"{topic}-{partition}: the broker rejected a batch of {batch.size_in_bytes()} bytes as too "
                "large (its message.max.bytes, or the topic's max.message.bytes)"
            )
        return error.exception(f"{topic}-{partition}: {text}")

    def _fail_batch(
        self, batch: ProducerBatch, base_offset: int, log_append_time: int, exception: BaseException
    ) -> None:
        tm = self.transaction_manager
        if tm is not None:
            if isinstance(exception, ProducerFencedException):
                tm.transition_to_fatal_error(exception)
            elif tm.is_transactional():
                # No new producer id for a transactional producer: its transaction fails instead.
                if not tm.has_fatal_error():
                    tm.transition_to_abortable_error(exception)
            elif batch.has_sequence() and tm.has_producer_id(batch.producer_id):
                # The broker may or may not have this batch's sequences: no later batch can be numbered
                # after it with certainty. Start again under a new producer id (Kafka 0.11's reset).
                log.error("Batch %s failed for good (%s); resetting the producer id", batch, exception)
                tm.reset_producer_id()
            tm.remove_in_flight_batch(batch)
        self.metrics.record_errors += batch.record_count
        if batch.done(base_offset, log_append_time, exception):
            self.accumulator.deallocate(batch)

    def _can_retry(self, batch: ProducerBatch, error: Errors) -> bool:
        if batch.attempts >= self.retries:
            return False
        if self.transaction_manager is not None and batch.has_sequence():
            return self.transaction_manager.can_retry(error, batch)
        return issubclass(error.exception_class, RetriableException)

    # -- closing ---------------------------------------------------------------------------------------------

    def initiate_close(self) -> None:
        """Stop accepting appends first, so no callback is missed, then end the run loop."""
        self.accumulator.close()
        self.running = False
        self.wakeup()

    def force_close(self) -> None:
        """Close without sending what is left: the remaining batches fail."""
        self.force_closed = True
        self.initiate_close()

    def wakeup(self) -> None:
        """Make the sender's ``poll`` return now (a batch filled up, or metadata is wanted)."""
        self.client.wakeup()
