"""The transactional producer's requests: each builds its request and handles its response.

Mirrors: the TxnRequestHandler inner classes of org.apache.kafka.clients.producer.internals.TransactionManager
         (FindCoordinatorHandler, InitProducerIdHandler, AddPartitionsToTxnHandler,
         AddOffsetsToTxnHandler, TxnOffsetCommitHandler, EndTxnHandler)
         (clients/src/main/java/.../producer/internals/TransactionManager.java, Kafka 0.11.0)
Book:    beyond the book (transactions are Kafka 0.11's, KIP-98)
Differs: module-level classes given their ``TransactionManager`` (Java's inner classes reach it
         implicitly); a request body is a dict for the protocol's schema, not a request builder. A
         retry waits for its back-off by staying in the queue (``ready_at``) rather than by the
         sender sleeping.

Every handler decides, per error, one of four things, with Kafka's sorting of the errors:

* retry: the same request again (COORDINATOR_LOAD_IN_PROGRESS, CONCURRENT_TRANSACTIONS, a
  disconnect), after a new FindCoordinator when the coordinator moved (NOT_COORDINATOR,
  COORDINATOR_NOT_AVAILABLE);
* fatal: the producer is done (INVALID_PRODUCER_EPOCH, which is Kafka's ProducerFencedException, a
  refused transactional id, an error no handler expects);
* abortable: this transaction is lost but the producer is not (a topic or group not authorized, a
  partition that could not be added); the application calls ``abort_transaction``;
* done: the request's ``TransactionalRequestResult`` completes and the application's call returns.
"""

from __future__ import annotations

import logging
from enum import IntEnum
from typing import TYPE_CHECKING, Any

from kafka_lite.clients.metadata import Node
from kafka_lite.clients.network_client import ClientResponse
from kafka_lite.common.errors import Errors, KafkaException, TopicAuthorizationException
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.consumer.offset_and_metadata import OffsetAndMetadata
from kafka_lite.producer.transactional_request_result import TransactionalRequestResult

if TYPE_CHECKING:
    from kafka_lite.producer.transaction_manager import TransactionManager

log = logging.getLogger(__name__)

# After the first AddPartitionsToTxn of a transaction gets CONCURRENT_TRANSACTIONS (the last
# transaction's markers are still being written), Kafka 0.11 retries sooner than retry.backoff.ms.
ADD_PARTITIONS_RETRY_BACKOFF_MS = 20


class CoordinatorType(IntEnum):
    """FindCoordinator v1's ``coordinator_type`` (Kafka's ``FindCoordinatorRequest.CoordinatorType``)."""

    GROUP = 0
    TRANSACTION = 1


class Priority(IntEnum):
    """The order the queue sends requests in: the coordinator first, then the producer id, EndTxn last."""

    FIND_COORDINATOR = 0
    INIT_PRODUCER_ID = 1
    ADD_PARTITIONS_OR_OFFSETS = 2
    END_TXN = 3


class TxnRequestHandler:
    api_key: ApiKeys
    version = 0
    priority: Priority = Priority.ADD_PARTITIONS_OR_OFFSETS

    def __init__(self, manager: TransactionManager, result: TransactionalRequestResult | None = None) -> None:
        self.manager = manager
        self.result = result or TransactionalRequestResult(type(self).__name__.removesuffix("Handler"))
        self.is_retry = False
        self.ready_at = 0  # a retry waits until then (retry.backoff.ms after its failure)
        self._now = 0

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.request_body()})"

    # -- what the sender asks ---------------------------------------------------------------------------

    @property
    def coordinator_type(self) -> CoordinatorType | None:
        """The coordinator the request goes to; None: any broker (the least loaded)."""
        return CoordinatorType.TRANSACTION

    @property
    def coordinator_key(self) -> str | None:
        return self.manager.transactional_id

    def needs_coordinator(self) -> bool:
        return self.coordinator_type is not None

    def is_end_txn(self) -> bool:
        return False

    def retry_backoff_ms(self) -> int:
        return self.manager.retry_backoff_ms

    def set_retry(self, now: int) -> None:
        self.is_retry = True
        self.ready_at = now + self.retry_backoff_ms()

    def request_body(self) -> dict[str, Any]:
        raise NotImplementedError

    def _txn_head(self) -> dict[str, Any]:
        pid = self.manager.producer_id_and_epoch
        return {
            "transactional_id": self.manager.transactional_id,
            "producer_id": pid.producer_id,
            "producer_epoch": pid.epoch,
        }

    # -- outcomes ---------------------------------------------------------------------------------------

    def fatal_error(self, error: BaseException) -> None:
        self.result.set_error(error)
        self.manager.transition_to_fatal_error(error)
        self.result.done()

    def abortable_error(self, error: BaseException) -> None:
        self.result.set_error(error)
        self.manager.transition_to_abortable_error(error)
        self.result.done()

    def fail(self, error: BaseException) -> None:
        self.result.set_error(error)
        self.result.done()

    def reenqueue(self) -> None:
        self.manager.retry(self, self._now)

    def lookup_transaction_coordinator(self) -> None:
        self.manager.lookup_coordinator(CoordinatorType.TRANSACTION, self.manager.transactional_id)

    def retried_at_the_coordinator(self, error: Errors) -> bool:
        """The errors every request to the transaction coordinator retries: it moved (find it again
        first), is loading its partition, or is still ending the last transaction. False for others."""
        if error in (Errors.NOT_COORDINATOR, Errors.COORDINATOR_NOT_AVAILABLE):
            self.lookup_transaction_coordinator()
            self.reenqueue()
            return True
        if error in (Errors.COORDINATOR_LOAD_IN_PROGRESS, Errors.CONCURRENT_TRANSACTIONS):
            self.reenqueue()
            return True
        return False

    # -- the response -------------------------------------------------------------------------------------

    def on_complete(self, response: ClientResponse) -> None:
        """The NetworkClient's callback, on the sender's thread (Kafka's ``onComplete``)."""
        manager = self.manager
        self._now = response.received_ms
        if response.request.correlation_id != manager.in_flight_request_correlation_id:
            self.fatal_error(KafkaException("Detected more than one in-flight transactional request."))
            return
        manager.clear_in_flight_request_correlation_id()
        if response.disconnected:
            log.debug("%sDisconnected from %s. Will retry.", manager.log_prefix, response.request.destination)
            if self.needs_coordinator():
                manager.lookup_coordinator(self.coordinator_type, self.coordinator_key)
            self.reenqueue()
        elif response.body is None:
            self.fatal_error(KafkaException("Could not execute transactional request for unknown reasons"))
        else:
            log.debug("%sReceived transactional response %s for request %s", manager.log_prefix,
                      response.body, self)  # fmt: skip
            with manager._lock:
                self.handle_response(response.body)

    def handle_response(self, body: dict[str, Any]) -> None:
        raise NotImplementedError


class FindCoordinatorHandler(TxnRequestHandler):
    api_key = ApiKeys.FIND_COORDINATOR
    version = 1  # the first with coordinator_type
    priority = Priority.FIND_COORDINATOR

    def __init__(self, manager: TransactionManager, of_type: CoordinatorType, key: str) -> None:
        super().__init__(manager)
        self.of_type = of_type
        self.key = key

    @property
    def coordinator_type(self) -> CoordinatorType | None:
        return None  # asked of any broker

    def request_body(self) -> dict[str, Any]:
        return {"coordinator_key": self.key, "coordinator_type": int(self.of_type)}

    def handle_response(self, body: dict[str, Any]) -> None:
        error = Errors.for_code(body["error_code"])
        if error is Errors.NONE:
            c = body["coordinator"]
            self.manager.set_coordinator(self.of_type, Node(c["node_id"], c["host"], c["port"]))
            self.result.done()
        elif error is Errors.COORDINATOR_NOT_AVAILABLE:
            self.reenqueue()
        elif error is Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED:
            self.fatal_error(error.exception())
        elif error is Errors.GROUP_AUTHORIZATION_FAILED:
            self.abortable_error(error.exception(f"Not authorized to access group: {self.key}"))
        else:
            self.fatal_error(KafkaException(
                f"Could not find a coordinator with type {self.of_type.name} with key {self.key} due to "
                f"unexpected error: {error.description}"))  # fmt: skip


class InitProducerIdHandler(TxnRequestHandler):
    api_key = ApiKeys.INIT_PRODUCER_ID
    priority = Priority.INIT_PRODUCER_ID

    def __init__(
        self, manager: TransactionManager, transactional_id: str, transaction_timeout_ms: int
    ) -> None:
        super().__init__(manager, TransactionalRequestResult("InitProducerId"))
        self.transactional_id = transactional_id
        self.transaction_timeout_ms = transaction_timeout_ms

    def request_body(self) -> dict[str, Any]:
        return {
            "transactional_id": self.transactional_id,
            "transaction_timeout_ms": self.transaction_timeout_ms,
        }

    def handle_response(self, body: dict[str, Any]) -> None:
        error = Errors.for_code(body["error_code"])
        if self.retried_at_the_coordinator(error):
            return
        if error is Errors.NONE:
            self.manager.complete_initialization(body["producer_id"], body["producer_epoch"])
            self.result.done()
        elif error is Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED:
            self.fatal_error(error.exception())
        else:
            self.fatal_error(
                KafkaException(f"Unexpected error in InitProducerIdResponse; {error.description}")
            )


class AddPartitionsToTxnHandler(TxnRequestHandler):
    api_key = ApiKeys.ADD_PARTITIONS_TO_TXN

    def __init__(self, manager: TransactionManager, partitions: list[TopicPartition]) -> None:
        super().__init__(manager)
        self.partitions = partitions
        self._retry_backoff_ms = manager.retry_backoff_ms

    def request_body(self) -> dict[str, Any]:
        topics: dict[str, list[int]] = {}
        for topic, partition in self.partitions:
            topics.setdefault(topic, []).append(partition)
        return {**self._txn_head(), "topics": [{"topic": t, "partitions": ps} for t, ps in topics.items()]}

    def retry_backoff_ms(self) -> int:
        return min(self.manager.retry_backoff_ms, self._retry_backoff_ms)

    def handle_response(self, body: dict[str, Any]) -> None:
        manager = self.manager
        errors = {
            TopicPartition(t["topic"], p["partition"]): Errors.for_code(p["error_code"])
            for t in body["errors"]
            for p in t["partition_errors"]
        }
        has_partition_errors = False
        unauthorized_topics: set[str] = set()
        self._retry_backoff_ms = manager.retry_backoff_ms
        for tp, error in errors.items():
            if error is Errors.NONE:
                continue
            if error in (Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR):
                self.lookup_transaction_coordinator()
                self.reenqueue()
                return
            if error is Errors.CONCURRENT_TRANSACTIONS:
                if not manager.partitions_in_transaction:
                    # The first partition of a transaction: the previous one is still completing.
                    self._retry_backoff_ms = ADD_PARTITIONS_RETRY_BACKOFF_MS
                self.reenqueue()
                return
            if error in (Errors.COORDINATOR_LOAD_IN_PROGRESS, Errors.UNKNOWN_TOPIC_OR_PARTITION):
                self.reenqueue()
                return
            if error in (Errors.INVALID_PRODUCER_EPOCH, Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED):
                self.fatal_error(error.exception())
                return
            if error in (Errors.INVALID_PRODUCER_ID_MAPPING, Errors.INVALID_TXN_STATE):
                self.fatal_error(error.exception())
                return
            if error is Errors.TOPIC_AUTHORIZATION_FAILED:
                unauthorized_topics.add(tp[0])
            elif error is Errors.OPERATION_NOT_ATTEMPTED:
                log.debug("%sDid not attempt to add partition %s-%d to transaction because other partitions in "
                          "the batch had errors.", manager.log_prefix, *tp)  # fmt: skip
                has_partition_errors = True
            else:
                log.error("%sCould not add partition %s-%d due to unexpected error %s", manager.log_prefix,
                          tp[0], tp[1], error.name)  # fmt: skip
                has_partition_errors = True
        # Out of the pending set whatever the answer: pending means "not safe to send yet"; after an
        # error the transaction will be aborted, and batches of partitions that were added must still
        # be able to finish their retries.
        manager.pending_partitions_in_transaction -= set(errors)
        if unauthorized_topics:
            self.abortable_error(TopicAuthorizationException(
                f"Not authorized to access topics: {sorted(unauthorized_topics)}"))  # fmt: skip
        elif has_partition_errors:
            described = {f"{t}-{p}": e.name for (t, p), e in errors.items()}
            self.abortable_error(
                KafkaException(f"Could not add partitions to transaction due to errors: {described}")
            )
        else:
            log.debug("%sSuccessfully added partitions %s to transaction", manager.log_prefix, sorted(errors))
            manager.partitions_in_transaction |= set(errors)
            manager.transaction_started = True
            self.result.done()


class AddOffsetsToTxnHandler(TxnRequestHandler):
    api_key = ApiKeys.ADD_OFFSETS_TO_TXN

    def __init__(
        self,
        manager: TransactionManager,
        consumer_group_id: str,
        offsets: dict[TopicPartition, OffsetAndMetadata],
    ) -> None:
        super().__init__(manager, TransactionalRequestResult("AddOffsetsToTxn and TxnOffsetCommit"))
        self.consumer_group_id = consumer_group_id
        self.offsets = offsets

    def request_body(self) -> dict[str, Any]:
        return {**self._txn_head(), "consumer_group_id": self.consumer_group_id}

    def handle_response(self, body: dict[str, Any]) -> None:
        error = Errors.for_code(body["error_code"])
        if self.retried_at_the_coordinator(error):
            return
        if error is Errors.NONE:
            log.debug("%sSuccessfully added partition for consumer group %s to transaction",
                      self.manager.log_prefix, self.consumer_group_id)  # fmt: skip
            # The result completes only when the TxnOffsetCommit has been answered.
            self.manager.enqueue(
                self.manager.txn_offset_commit_handler(self.result, self.offsets, self.consumer_group_id)
            )
            self.manager.transaction_started = True
        elif error in (Errors.INVALID_PRODUCER_EPOCH, Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED):
            self.fatal_error(error.exception())
        elif error is Errors.GROUP_AUTHORIZATION_FAILED:
            self.abortable_error(error.exception(f"Not authorized to access group: {self.consumer_group_id}"))
        else:
            self.fatal_error(
                KafkaException(f"Unexpected error in AddOffsetsToTxnResponse: {error.description}")
            )


class TxnOffsetCommitHandler(TxnRequestHandler):
    """The group's offsets, written by its coordinator as part of the transaction: they count (an
    OffsetFetch sees them) only once the transaction commits."""

    api_key = ApiKeys.TXN_OFFSET_COMMIT

    def __init__(
        self, manager: TransactionManager, result: TransactionalRequestResult, consumer_group_id: str
    ) -> None:
        super().__init__(manager, result)
        self.consumer_group_id = consumer_group_id

    @property
    def coordinator_type(self) -> CoordinatorType | None:
        return CoordinatorType.GROUP

    @property
    def coordinator_key(self) -> str | None:
        return self.consumer_group_id

    def request_body(self) -> dict[str, Any]:
        topics: dict[str, list[dict[str, Any]]] = {}
        for (topic, partition), committed in self.manager.pending_txn_offset_commits.items():
            topics.setdefault(topic, []).append(
                {"partition": partition, "offset": committed.offset, "metadata": committed.metadata}
            )
        pid = self.manager.producer_id_and_epoch
        return {
            "transactional_id": self.manager.transactional_id,
            "consumer_group_id": self.consumer_group_id,
            "producer_id": pid.producer_id,
            "producer_epoch": pid.epoch,
            "topics": [{"topic": t, "partitions": ps} for t, ps in topics.items()],
        }

    def handle_response(self, body: dict[str, Any]) -> None:
        manager = self.manager
        coordinator_reloaded = False
        had_failure = False
        for t in body["topics"]:
            for p in t["partitions"]:
                tp = TopicPartition(t["topic"], p["partition"])
                error = Errors.for_code(p["error_code"])
                if error is Errors.NONE:
                    manager.pending_txn_offset_commits.pop(tp, None)
                elif error in (
                    Errors.COORDINATOR_NOT_AVAILABLE,
                    Errors.NOT_COORDINATOR,
                    Errors.REQUEST_TIMED_OUT,
                ):
                    had_failure = True
                    if not coordinator_reloaded:
                        coordinator_reloaded = True
                        manager.lookup_coordinator(CoordinatorType.GROUP, self.consumer_group_id)
                elif error is Errors.UNKNOWN_TOPIC_OR_PARTITION:
                    had_failure = True
                elif error is Errors.GROUP_AUTHORIZATION_FAILED:
                    self.abortable_error(
                        error.exception(f"Not authorized to access group: {self.consumer_group_id}")
                    )
                    return
                elif error in (Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, Errors.INVALID_PRODUCER_EPOCH):
                    self.fatal_error(error.exception())
                    return
                else:
                    self.fatal_error(
                        KafkaException(f"Unexpected error in TxnOffsetCommitResponse: {error.description}")
                    )
                    return
        if not had_failure or not self.result.is_successful():
            self.result.done()
        elif manager.pending_txn_offset_commits:
            self.reenqueue()  # only the offsets that failed with a retriable error go again


class EndTxnHandler(TxnRequestHandler):
    api_key = ApiKeys.END_TXN
    priority = Priority.END_TXN

    def __init__(self, manager: TransactionManager, commit: bool) -> None:
        super().__init__(manager, TransactionalRequestResult("EndTxn"))
        self.commit = commit
        # v5 tells the coordinator to bump the epoch, and its answer carries the new one
        self.version = 5 if manager.is_transaction_v2_enabled() else 0

    def is_end_txn(self) -> bool:
        return True

    def request_body(self) -> dict[str, Any]:
        return {**self._txn_head(), "transaction_result": self.commit}

    def handle_response(self, body: dict[str, Any]) -> None:
        error = Errors.for_code(body["error_code"])
        if self.retried_at_the_coordinator(error):
            return
        if error is Errors.NONE:
            if self.version >= 5:
                self.manager.kafka_4_0_adopt_bumped_epoch(body["producer_id"], body["producer_epoch"])
            self.manager.complete_transaction()
            self.result.done()
        elif error in (
            Errors.INVALID_PRODUCER_EPOCH,
            Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
            Errors.INVALID_TXN_STATE,
        ):
            self.fatal_error(error.exception())
        else:
            self.fatal_error(KafkaException(f"Unhandled error in EndTxnResponse: {error.description}"))
