"""How the transaction coordinator writes a transaction's markers: WriteTxnMarkers to the leader of
every partition in it, retried until each answers, then the Complete state written.

Mirrors: kafka.coordinator.transaction.TransactionMarkerChannelManager, TxnMarkerQueue,
         TransactionMarkerRequestCompletionHandler and DelayedTxnMarker
         (core/src/main/scala/kafka/coordinator/transaction/*.scala, Kafka 0.11.0)
Book:    beyond the book (Kafka 0.11's transactions, KIP-98); its model is the controller's channel
         to the brokers, chapter 7, 7.1.7
Differs: the transactions waiting for their markers are a map from transactional id to what to do
         when the last partition answers, where Kafka puts a ``DelayedTxnMarker`` in a purgatory
         that has neither timer nor reaper (so it only ever serves as that map). The send thread
         polls at most every 100 ms besides being woken when markers are queued.

One thread (an ``InterBrokerSendThread``, ``clients/inter_broker_send_thread.py``) drives one
``NetworkClient`` to every broker. Each round it drains the queues into one WriteTxnMarkers request
per destination broker and sends it; a broker not ready counts as a disconnect. The answer goes to a completion handler that, per
transactional id and partition, either removes the partition from the transaction (its marker is
written), or queues it again, to whoever leads it now (NOT_LEADER_FOR_PARTITION, an unknown
partition, too few replicas, a timeout, a disconnect), or gives up on the transaction (the
coordinator or producer epoch moved on). When a transaction has no partition left, its Complete*
state is appended to ``__transaction_state``; a failed append with COORDINATOR_NOT_AVAILABLE is
retried on the next round.

Markers are queued per destination broker and, inside, per ``__transaction_state`` partition, so
that when this broker stops coordinating a partition its queued markers are dropped at once.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kafka_lite.clients.inter_broker_send_thread import InterBrokerSendThread
from kafka_lite.clients.network_client import ClientRequest, ClientResponse, NetworkClient
from kafka_lite.common.errors import Errors, IllegalStateException
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.time import Time
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.coordinator.transaction.transaction_metadata import TransactionMetadata, TxnTransitMetadata
from kafka_lite.coordinator.transaction.transaction_state_manager import TransactionStateManager
from kafka_lite.server.metadata_cache import MetadataCache

log = logging.getLogger(__name__)

WRITE_TXN_MARKERS_VERSION = 0
NO_NODE_ID = -1  # Node.noNode(): the leader is known but not alive

# Per partition, what the leader's answer means for the marker (the completion handler's match).
_RETRIABLE = frozenset({
    Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.NOT_LEADER_FOR_PARTITION, Errors.NOT_ENOUGH_REPLICAS,
    Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND, Errors.REQUEST_TIMED_OUT,
})  # fmt: skip
_GIVE_UP = frozenset({Errors.INVALID_PRODUCER_EPOCH, Errors.TRANSACTION_COORDINATOR_FENCED})
_PARTITION_GONE = frozenset({Errors.UNSUPPORTED_FOR_MESSAGE_FORMAT, Errors.UNSUPPORTED_VERSION})


@dataclass(frozen=True)
class TxnMarkerEntry:
    """One transaction's marker for some partitions of one broker (Kafka's ``TxnMarkerEntry``)."""

    producer_id: int
    producer_epoch: int
    coordinator_epoch: int
    is_commit: bool  # Kafka's TransactionResult: COMMIT or ABORT
    partitions: frozenset[TopicPartition]

    def to_struct(self) -> dict[str, Any]:
        by_topic: dict[str, list[int]] = {}
        for topic, partition in sorted(self.partitions):
            by_topic.setdefault(topic, []).append(partition)
        return {
            "producer_id": self.producer_id,
            "producer_epoch": self.producer_epoch,
            "transaction_result": self.is_commit,
            "topics": [{"topic": t, "partitions": ps} for t, ps in by_topic.items()],
            "coordinator_epoch": self.coordinator_epoch,
        }


@dataclass(frozen=True)
class TxnIdAndMarkerEntry:
    txn_id: str
    txn_marker_entry: TxnMarkerEntry


@dataclass(frozen=True)
class TxnLogAppend:
    """A Complete* transition waiting to be appended (again)."""

    transactional_id: str
    coordinator_epoch: int
    txn_metadata: TransactionMetadata
    new_metadata: TxnTransitMetadata


class TxnMarkerQueue:
    """The markers waiting to go to one broker, per ``__transaction_state`` partition."""

    def __init__(self, destination: int) -> None:
        self.destination = destination
        self._markers_per_txn_topic_partition: dict[int, list[TxnIdAndMarkerEntry]] = {}

    def add_markers(self, txn_topic_partition: int, entry: TxnIdAndMarkerEntry) -> None:
        self._markers_per_txn_topic_partition.setdefault(txn_topic_partition, []).append(entry)

    def remove_markers_for_txn_topic_partition(self, partition: int) -> list[TxnIdAndMarkerEntry]:
        return self._markers_per_txn_topic_partition.pop(partition, [])

    def drain(self) -> list[TxnIdAndMarkerEntry]:
        drained = [e for q in self._markers_per_txn_topic_partition.values() for e in q]
        for q in self._markers_per_txn_topic_partition.values():
            q.clear()
        return drained

    def total_num_markers(self) -> int:
        return sum(len(q) for q in self._markers_per_txn_topic_partition.values())


@dataclass
class RequestAndCompletionHandler:
    destination: int
    body: dict[str, Any]
    handler: Callable[[ClientResponse], None]


class TransactionMarkerChannelManager(InterBrokerSendThread):
    def __init__(
        self,
        broker_id: int,
        metadata_cache: MetadataCache,
        network_client: NetworkClient,
        txn_state_manager: TransactionStateManager,
        time: Time,
    ) -> None:
        super().__init__(f"TxnMarkerSenderThread-{broker_id}", network_client)
        self.broker_id = broker_id
        self.metadata_cache = metadata_cache
        self.txn_state_manager = txn_state_manager
        self.time = time
        # the queues, the waiting transactions and the retries, under one lock
        self._lock = threading.RLock()
        self._markers_queue_per_broker: dict[int, TxnMarkerQueue] = {}
        self._markers_queue_for_unknown_broker = TxnMarkerQueue(NO_NODE_ID)
        self._txn_log_append_retry_queue: list[TxnLogAppend] = []
        # transactional id -> (its metadata, called once every partition has its marker)
        self._waiting: dict[str, tuple[TransactionMetadata, Callable[[], None]]] = {}

    # -- the send thread ---------------------------------------------------------------------------------

    # --8<-- [start:do_work]
    def do_work(self) -> None:
        """One round: every queued marker out in one request per broker, then the network polled."""
        now = self.time.milliseconds()
        poll_timeout = 100
        for request in self.drain_queued_transaction_markers():
            node = str(request.destination)
            broker = next(
                (b for b in self.metadata_cache.alive_brokers() if b.id == request.destination), None
            )
            if broker is not None:
                self.network_client.set_node(node, broker.host, broker.port)
            client_request = ClientRequest(
                node,
                ApiKeys.WRITE_TXN_MARKERS,
                WRITE_TXN_MARKERS_VERSION,
                request.body,
                callback=request.handler,
            )
            if broker is not None and self.network_client.ready(node, now):
                self.network_client.send(client_request, now)
            else:  # not connected yet: answered as a disconnect, so its markers are queued again
                client_request.created_ms = now
                request.handler(ClientResponse(client_request, now, disconnected=True))
                poll_timeout = min(poll_timeout, max(self.network_client.connection_delay(node, now), 10))
        self.network_client.poll(poll_timeout, now)

    # --8<-- [end:do_work]

    def shutdown(self) -> None:
        super().shutdown()
        with self._lock:
            self._markers_queue_per_broker.clear()
            self._waiting.clear()

    # -- queueing markers ------------------------------------------------------------------------------

    def add_txn_markers_to_send(
        self,
        transactional_id: str,
        coordinator_epoch: int,
        is_commit: bool,
        txn_metadata: TransactionMetadata,
        new_metadata: TxnTransitMetadata,
    ) -> None:
        """Send the markers of a prepared transaction; when every partition has one, append
        ``new_metadata`` (its Complete* state) to the log.

        Complete* is written only after the last marker, because it is what lets the id start its
        next transaction (InitProducerId and AddPartitionsToTxn answer CONCURRENT_TRANSACTIONS while
        the id is Prepare*): a producer that began again before every partition had its marker
        could have its new records read as part of the old transaction's outcome."""

        def append_to_log_callback() -> None:
            error, epoch_and_metadata = self.txn_state_manager.get_transaction_state(transactional_id)
            if error is not Errors.NONE:
                log.info("%s for %s with coordinator epoch %d; cancel appending %s to transaction log",
                         error.name, transactional_id, coordinator_epoch, new_metadata)  # fmt: skip
            elif epoch_and_metadata is None:
                raise IllegalStateException(
                    f"The coordinator still owns the transaction partition for {transactional_id}, but there "
                    "is no metadata in the cache; this is not expected"
                )
            elif epoch_and_metadata.coordinator_epoch != coordinator_epoch:
                # Another coordinator took the partition over meanwhile and resends these markers
                # from its own load of the log; it writes Complete* itself.
                log.info("The coordinator epoch of %s moved on after its markers were written; not appending %s",
                         transactional_id, new_metadata)  # fmt: skip
            else:
                self._try_append_to_log(
                    TxnLogAppend(transactional_id, coordinator_epoch, txn_metadata, new_metadata)
                )

        with self._lock:
            self._waiting[transactional_id] = (txn_metadata, append_to_log_callback)
        with txn_metadata.lock:
            partitions = frozenset(txn_metadata.topic_partitions)
            producer_id, producer_epoch = txn_metadata.producer_id, txn_metadata.producer_epoch
        self.complete_send_markers_for_txn_id(transactional_id)  # a transaction without partitions
        self.add_txn_markers_to_broker_queue(
            transactional_id, producer_id, producer_epoch, is_commit, coordinator_epoch, partitions
        )

    def _try_append_to_log(self, txn_log_append: TxnLogAppend) -> None:
        def append_callback(error: Errors) -> None:
            if error is Errors.NONE:
                log.debug("Completed transaction for %s with coordinator epoch %d, final state: %s",
                          txn_log_append.transactional_id, txn_log_append.coordinator_epoch,
                          txn_log_append.txn_metadata.state)  # fmt: skip
            elif error is Errors.COORDINATOR_NOT_AVAILABLE:
                log.info("Not available to append %s; retrying", txn_log_append)
                with self._lock:
                    self._txn_log_append_retry_queue.append(txn_log_append)
                self.network_client.wakeup()
            elif error in (Errors.NOT_COORDINATOR, Errors.COORDINATOR_LOAD_IN_PROGRESS):
                log.info("No longer the coordinator of %s (%s): the new coordinator completes it",
                         txn_log_append.transactional_id, error.name)  # fmt: skip
            else:
                log.error("Unexpected error %s while appending to transaction log for %s",
                          error.name, txn_log_append.transactional_id)  # fmt: skip

        self.txn_state_manager.append_transaction_to_log(
            txn_log_append.transactional_id,
            txn_log_append.coordinator_epoch,
            txn_log_append.new_metadata,
            append_callback,
            lambda e: e is Errors.COORDINATOR_NOT_AVAILABLE,
        )

    def retry_log_appends(self) -> None:
        with self._lock:
            retries, self._txn_log_append_retry_queue = self._txn_log_append_retry_queue, []
        for txn_log_append in retries:
            self._try_append_to_log(txn_log_append)

    # --8<-- [start:add_txn_markers_to_broker_queue]
    def add_txn_markers_to_broker_queue(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        is_commit: bool,
        coordinator_epoch: int,
        topic_partitions: frozenset[TopicPartition],
    ) -> None:
        """Queue the markers to the current leader of each partition: to a queue for unknown
        brokers while the leader is not alive, and not at all for a partition no longer known (it
        was deleted), which then counts as done."""
        txn_topic_partition = self.txn_state_manager.partition_for(transactional_id)
        alive = {b.id for b in self.metadata_cache.alive_brokers()}
        by_destination: dict[int | None, set[TopicPartition]] = {}
        for tp in topic_partitions:
            state = self.metadata_cache.partition_state(*tp)
            destination = None if state is None else (state.leader if state.leader in alive else NO_NODE_ID)
            by_destination.setdefault(destination, set()).add(tp)
        for destination, partitions in by_destination.items():
            if destination is None:
                self._skip_deleted_partitions(transactional_id, coordinator_epoch, partitions)
                continue
            entry = TxnIdAndMarkerEntry(
                transactional_id,
                TxnMarkerEntry(
                    producer_id, producer_epoch, coordinator_epoch, is_commit, frozenset(partitions)
                ),
            )
            with self._lock:
                if destination == NO_NODE_ID:
                    queue = self._markers_queue_for_unknown_broker
                else:
                    queue = self._markers_queue_per_broker.setdefault(
                        destination, TxnMarkerQueue(destination)
                    )
                queue.add_markers(txn_topic_partition, entry)
        self.network_client.wakeup()

    # --8<-- [end:add_txn_markers_to_broker_queue]

    def _skip_deleted_partitions(
        self, transactional_id: str, coordinator_epoch: int, partitions: set[TopicPartition]
    ) -> None:
        error, epoch_and_metadata = self.txn_state_manager.get_transaction_state(transactional_id)
        if error is not Errors.NONE or epoch_and_metadata is None:
            self.remove_markers_for_txn_id(transactional_id)
            return
        if epoch_and_metadata.coordinator_epoch != coordinator_epoch:
            self.remove_markers_for_txn_id(transactional_id)
            return
        log.info("Couldn't find leader endpoint for partitions %s while trying to send transaction markers "
                 "for %s, these partitions are likely deleted already and hence can be skipped",
                 sorted(partitions), transactional_id)  # fmt: skip
        metadata = epoch_and_metadata.transaction_metadata
        with metadata.lock:
            for tp in partitions:
                metadata.remove_partition(tp)
        self.complete_send_markers_for_txn_id(transactional_id)

    def drain_queued_transaction_markers(self) -> list[RequestAndCompletionHandler]:
        """One WriteTxnMarkers per destination broker with everything queued for it; markers whose
        broker was unknown are routed again first."""
        self.retry_log_appends()
        with self._lock:
            unknown = self._markers_queue_for_unknown_broker.drain()
        for e in unknown:
            m = e.txn_marker_entry
            self.add_txn_markers_to_broker_queue(
                e.txn_id, m.producer_id, m.producer_epoch, m.is_commit, m.coordinator_epoch, m.partitions
            )
        requests = []
        with self._lock:
            for destination, queue in self._markers_queue_per_broker.items():
                entries = queue.drain()
                if entries:
                    handler = TransactionMarkerRequestCompletionHandler(self.txn_state_manager, self, entries)
                    body = {"transaction_markers": [e.txn_marker_entry.to_struct() for e in entries]}
                    requests.append(RequestAndCompletionHandler(destination, body, handler.on_complete))
        return requests

    def remove_markers_for_txn_topic_partition(self, txn_topic_partition: int) -> None:
        """This broker stopped coordinating ``txn_topic_partition``: drop its queued markers."""
        with self._lock:
            queues = [self._markers_queue_for_unknown_broker, *self._markers_queue_per_broker.values()]
            dropped = [
                e for q in queues for e in q.remove_markers_for_txn_topic_partition(txn_topic_partition)
            ]
        for entry in dropped:
            self.remove_markers_for_txn_id(entry.txn_id)

    def remove_markers_for_txn_id(self, transactional_id: str) -> None:
        """Stop waiting for this transaction's markers (Kafka's ``cancelForKey``)."""
        with self._lock:
            self._waiting.pop(transactional_id, None)

    def complete_send_markers_for_txn_id(self, transactional_id: str) -> None:
        """If every partition of the transaction has its marker, go on to the Complete* append
        (Kafka's ``DelayedTxnMarker.tryComplete``)."""
        with self._lock:
            waiting = self._waiting.get(transactional_id)
            if waiting is None:
                return
            txn_metadata, on_complete = waiting
            with txn_metadata.lock:
                if txn_metadata.topic_partitions:
                    return
            del self._waiting[transactional_id]
        on_complete()

    def queued_markers(self, broker_id: int) -> int:
        """Markers waiting for ``broker_id`` (-1: for a broker not alive); for tests and tools."""
        with self._lock:
            if broker_id == NO_NODE_ID:
                return self._markers_queue_for_unknown_broker.total_num_markers()
            queue = self._markers_queue_per_broker.get(broker_id)
            return queue.total_num_markers() if queue else 0


class TransactionMarkerRequestCompletionHandler:
    """What one WriteTxnMarkers answer means for each transaction in it."""

    def __init__(
        self,
        txn_state_manager: TransactionStateManager,
        channel_manager: TransactionMarkerChannelManager,
        entries: list[TxnIdAndMarkerEntry],
    ) -> None:
        self.txn_state_manager = txn_state_manager
        self.channel_manager = channel_manager
        self.entries = entries

    # --8<-- [start:on_complete]
    def on_complete(self, response: ClientResponse) -> None:
        errors_by_producer: dict[int, dict[TopicPartition, Errors]] = {}
        if not response.disconnected:
            for marker in response.body["transaction_markers"]:
                errors_by_producer[marker["producer_id"]] = {
                    (t["topic"], p["partition"]): Errors.for_code(p["error_code"])
                    for t in marker["topics"]
                    for p in t["partitions"]
                }
        for entry in self.entries:
            txn_id, marker = entry.txn_id, entry.txn_marker_entry
            error, epoch_and_metadata = self.txn_state_manager.get_transaction_state(txn_id)
            if error is not Errors.NONE or epoch_and_metadata is None:
                log.info("%s for %s; cancel sending transaction markers %s", error.name, txn_id, marker)
                self.channel_manager.remove_markers_for_txn_id(txn_id)
            elif epoch_and_metadata.coordinator_epoch != marker.coordinator_epoch:
                log.info("Transaction coordinator epoch for %s has changed from %d to %d; cancel sending "
                         "transaction markers", txn_id, marker.coordinator_epoch,
                         epoch_and_metadata.coordinator_epoch)  # fmt: skip
                self.channel_manager.remove_markers_for_txn_id(txn_id)
            elif response.disconnected:  # everything again, to the partitions' leaders of now
                self._requeue(txn_id, marker, marker.partitions)
            else:
                self._handle_partition_errors(txn_id, marker, epoch_and_metadata.transaction_metadata,
                                              errors_by_producer.get(marker.producer_id))  # fmt: skip

    # --8<-- [end:on_complete]

    def _handle_partition_errors(
        self,
        txn_id: str,
        marker: TxnMarkerEntry,
        txn_metadata: TransactionMetadata,
        errors: dict[TopicPartition, Errors] | None,
    ) -> None:
        if errors is None:
            raise IllegalStateException(
                f"WriteTxnMarkerResponse does not contain expected error map for producer id {marker.producer_id}"
            )
        retry: set[TopicPartition] = set()
        with txn_metadata.lock:
            for tp, error in errors.items():
                # A partition whose message format cannot hold a marker needs none: the producer could
                # not have written transactional records to it either. A retriable error
                # is sent again (to whoever leads the partition then), for as long as it takes: the
                # decision is in the log, so the only way forward is every marker written. A fenced
                # coordinator or producer epoch means someone newer owns the transaction: stop.
                if error is Errors.NONE or error in _PARTITION_GONE:
                    txn_metadata.remove_partition(tp)
                elif error in _RETRIABLE:
                    log.info("Sending %s's transaction marker for partition %s-%d has failed with error %s, "
                             "retrying", txn_id, *tp, error.name)  # fmt: skip
                    retry.add(tp)
                elif error in _GIVE_UP:
                    log.info("Sending %s's transaction marker for partition %s-%d has permanently failed with "
                             "error %s; cancel sending any more transaction markers", txn_id, *tp, error.name)  # fmt: skip
                    self.channel_manager.remove_markers_for_txn_id(txn_id)
                    return
                else:
                    raise IllegalStateException(
                        f"Unexpected error {error.name} while sending txn marker for {txn_id}"
                    )
        if retry:
            self._requeue(txn_id, marker, frozenset(retry))
        else:
            self.channel_manager.complete_send_markers_for_txn_id(txn_id)

    def _requeue(self, txn_id: str, marker: TxnMarkerEntry, partitions: frozenset[TopicPartition]) -> None:
        self.channel_manager.add_txn_markers_to_broker_queue(
            txn_id,
            marker.producer_id,
            marker.producer_epoch,
            marker.is_commit,
            marker.coordinator_epoch,
            partitions,
        )
