"""KIP-890 part 1: how a partition leader asks the transaction coordinator whether a transactional
write belongs to an open transaction before it lets the write in.

Mirrors: kafka.server.AddPartitionsToTxnManager (core/src/main/scala/kafka/server/AddPartitionsToTxnManager.scala,
         Kafka 3.6.0), an ``InterBrokerSendThread``
Book:    beyond the book (Kafka 3.6, KIP-890; the transactions it guards are Kafka 0.11's, KIP-98);
         its model is the transaction marker channel manager beside it
Differs: no metrics (Kafka's VerificationTimeMs and VerificationFailureRate); an unsupported version
         cannot happen (every kafka_lite broker speaks v4), so that branch is left out.

Why: in Kafka 0.11 a leader appends any transactional batch of a producer whose epoch is current. A
Produce that spent long enough in the network reaches the leader after the coordinator aborted the
transaction and wrote its ABORT marker there; the batch then opens a new transaction that no marker
will ever close, and the partition's last stable offset stops at it: every read_committed consumer
of the partition stalls (a hanging transaction). With the verification on
(``transaction.partition.verification.enable``), the leader asks before a producer's first
transactional write to a partition where it has no transaction open: AddPartitionsToTxn v4 with
``verify_only``. The coordinator answers NONE only if the partition is in the producer's current
transaction; the late batch of the story gets INVALID_TXN_STATE and is never written.

One thread drives one ``NetworkClient`` to the coordinators. The leaders' questions are queued per
coordinator broker, at most one per transactional id (a second one for the same id answers the
first with NETWORK_EXCEPTION, so its producer retries, or INVALID_PRODUCER_EPOCH if the second comes
from a newer epoch), and each round sends one request per coordinator that has none in flight. The
answer goes to each question's callback: the partitions that failed, with their errors.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

from kafka_lite.clients.inter_broker_send_thread import InterBrokerSendThread
from kafka_lite.clients.network_client import ClientRequest, ClientResponse, NetworkClient
from kafka_lite.common.errors import Errors
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.time import Time
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.server.metadata_cache import MetadataCache

log = logging.getLogger(__name__)

VERIFY_VERSION = 4  # AddPartitionsToTxn's first version with verify_only, for brokers only
AppendCallback = Callable[[dict[TopicPartition, Errors]], None]


@dataclass
class _Transaction:
    transactional_id: str
    producer_id: int
    producer_epoch: int
    partitions: list[TopicPartition]
    callback: AppendCallback

    def to_struct(self) -> dict:
        by_topic: dict[str, list[int]] = {}
        for topic, partition in self.partitions:
            by_topic.setdefault(topic, []).append(partition)
        return {
            "transactional_id": self.transactional_id,
            "producer_id": self.producer_id,
            "producer_epoch": self.producer_epoch,
            "verify_only": True,
            "topics": [{"topic": t, "partitions": ps} for t, ps in by_topic.items()],
        }

    def answer(self, error: Errors) -> None:
        self.callback(dict.fromkeys(self.partitions, error))


class AddPartitionsToTxnManager(InterBrokerSendThread):
    def __init__(
        self, broker_id: int, metadata_cache: MetadataCache, network_client: NetworkClient, time: Time
    ) -> None:
        super().__init__(f"AddPartitionsToTxnSenderThread-{broker_id}", network_client)
        self.broker_id = broker_id
        self.metadata_cache = metadata_cache
        self.time = time
        self._lock = threading.Lock()
        # per coordinator, the questions it will be asked next, one per transactional id (Kafka's
        # TransactionDataAndCallbacks)
        self._nodes_to_transactions: dict[int, dict[str, _Transaction]] = {}
        self._inflight_nodes: set[int] = set()  # touched by the send thread only
        self._unsent: list[tuple[int, ClientRequest]] = []  # waiting for their coordinator's connection

    # -- the request handlers' side ----------------------------------------------------------------------

    def add_txn_data(
        self,
        node: int,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: list[TopicPartition],
        callback: AppendCallback,
    ) -> None:
        """Queue the question for coordinator ``node``; ``callback`` gets the partitions that failed
        verification (empty: every one is in the transaction)."""
        incoming = _Transaction(transactional_id, producer_id, producer_epoch, list(partitions), callback)
        answer_now: list[tuple[_Transaction, Errors]] = []
        with self._lock:
            queued = self._nodes_to_transactions.setdefault(node, {})
            existing = queued.get(transactional_id)
            if existing is not None and existing.producer_epoch > producer_epoch:
                answer_now.append((incoming, Errors.INVALID_PRODUCER_EPOCH))  # the incoming one is fenced
            else:
                if existing is not None:  # a newer epoch fences the queued one; the same epoch is a retry
                    same = existing.producer_epoch == producer_epoch
                    answer_now.append(
                        (existing, Errors.NETWORK_EXCEPTION if same else Errors.INVALID_PRODUCER_EPOCH)
                    )
                queued[transactional_id] = incoming
        for transaction, error in answer_now:  # outside the lock: a callback appends and answers
            transaction.answer(error)
        self.network_client.wakeup()

    # -- the send thread ---------------------------------------------------------------------------------

    def do_work(self) -> None:
        """One round: a request to each coordinator with questions and none in flight, then the
        network polled (Kafka's ``generateRequests`` and the send thread's poll)."""
        now = self.time.milliseconds()
        for node, transactions in self._generate_requests():
            body = {"transactions": [t.to_struct() for t in transactions]}
            request = ClientRequest(
                str(node), ApiKeys.ADD_PARTITIONS_TO_TXN, VERIFY_VERSION, body,
                callback=self._handler(node, transactions),
            )  # fmt: skip
            request.created_ms = now
            self._inflight_nodes.add(node)
            self._unsent.append((node, request))
        poll_timeout = self._send_unsent(now)
        self.network_client.poll(poll_timeout, now)

    def _send_unsent(self, now: int) -> int:
        """Send each request whose coordinator is connected; one still unconnected waits (the
        connection is being made) until the request timeout, then fails as a disconnect, so its
        producers retry (Kafka's ``InterBrokerSendThread.sendRequests`` and ``failExpiredRequests``).
        Returns how long the poll may wait."""
        poll_timeout = 100
        waiting = []
        for node, request in self._unsent:
            destination = str(node)
            broker = next((b for b in self.metadata_cache.alive_brokers() if b.id == node), None)
            if broker is not None:
                self.network_client.set_node(destination, broker.host, broker.port)
            if broker is not None and self.network_client.ready(destination, now):
                self.network_client.send(request, now)
            elif now - request.created_ms >= self.network_client.request_timeout_ms:
                request.callback(ClientResponse(request, now, disconnected=True))
            else:
                waiting.append((node, request))
                poll_timeout = min(
                    poll_timeout, max(self.network_client.connection_delay(destination, now), 10)
                )
        self._unsent = waiting
        return poll_timeout

    def _generate_requests(self) -> list[tuple[int, list[_Transaction]]]:
        requests = []
        with self._lock:
            for node in [n for n in self._nodes_to_transactions if n not in self._inflight_nodes]:
                queued = self._nodes_to_transactions.pop(node)
                requests.append((node, list(queued.values())))
        return requests

    def _handler(self, node: int, transactions: list[_Transaction]) -> Callable[[ClientResponse], None]:
        def on_complete(response: ClientResponse) -> None:
            self._inflight_nodes.discard(node)
            if response.disconnected or response.body is None:
                log.warning("AddPartitionsToTxn to broker %d failed with a network exception", node)
                for transaction in transactions:
                    transaction.answer(Errors.NETWORK_EXCEPTION)
                return
            body = response.body
            error = Errors.for_code(body["error_code"])
            if error is not Errors.NONE:
                log.error("AddPartitionsToTxn to broker %d returned %s", node, error.name)
                # a producer is never shown the coordinator's refusal of this broker itself
                if error is Errors.CLUSTER_AUTHORIZATION_FAILED:
                    error = Errors.INVALID_TXN_STATE
                for transaction in transactions:
                    transaction.answer(error)
                return
            by_id = {t.transactional_id: t for t in transactions}
            for result in body["results_by_transaction"]:
                transaction = by_id.pop(result["transactional_id"], None)
                if transaction is None:
                    continue
                transaction.callback({
                    (topic["topic"], p["partition"]): Errors.for_code(p["error_code"])
                    for topic in result["topic_results"]
                    for p in topic["partition_errors"]
                    if p["error_code"] != Errors.NONE.code
                })  # fmt: skip
            for transaction in by_id.values():  # not answered for: asked again by its producer's retry
                transaction.answer(Errors.NETWORK_EXCEPTION)

        return on_complete
