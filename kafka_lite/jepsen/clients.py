"""The workload's clients: kafka_lite's producer and consumer, and confluent-kafka's (librdkafka),
each behind the few calls the workload's runner makes.

No Kafka twin: the client of Jepsen's Kafka workload (``jepsen.redpanda.workload.queue`` and
``jepsen.redpanda.client``), which holds Java's ``KafkaProducer`` and ``KafkaConsumer``. Beyond the
book. A client gives ``workload.execute`` and ``workload.Worker`` the micro-operations (``send``,
``poll``), the transaction's steps, the consumer's keys (``assign``, ``subscribe``, ``seek``), and
``classify``, which turns an exception into fail or info as Jepsen's ``with-errors`` does. The
settings are Jepsen's: an idempotent producer with acks=all, 3 s requests, 10 s for a send or a
blocking call, 6 s sessions, no auto-commit, ``earliest`` resets; with ``txn`` a transactional
producer (a transactional id per process) and a read_committed consumer.

Differs: a consumer moving between ``subscribe`` and ``assign`` unsubscribes first (Kafka refuses
the one on top of the other, and Jepsen's client crashes there). Jepsen's transactions time out
after 1 s; here after 10 s, so that a Python cluster's slower transaction does not abort on the
coordinator's clock while it is being committed.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from typing import Any

from kafka_lite.common import errors
from kafka_lite.common.time import Time
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.consumer.consumer_rebalance_listener import ConsumerRebalanceListener
from kafka_lite.consumer.kafka_consumer import KafkaConsumer
from kafka_lite.jepsen.workload import SEND_TIMEOUT_S, Failure, WorkloadConfig
from kafka_lite.producer.kafka_producer import KafkaProducer

CONSUMER_CALL_TIMEOUT_S = 10.0  # Jepsen's default.api.timeout.ms


def new_transactional_id(process: int) -> str:
    return f"jepsen-{process}-{uuid.uuid4().hex[:8]}"


def _value_bytes(v: int) -> bytes:
    return str(v).encode()


def _value_int(data: bytes) -> int:
    return int(data.decode())


class KafkaLiteClient:
    """kafka_lite's ``KafkaProducer`` and ``KafkaConsumer``, as Jepsen's client holds Java's."""

    def __init__(self, bootstrap_servers: str, process: int, config: WorkloadConfig, time: Time,
                 reader: bool = False) -> None:  # fmt: skip
        self.rebalance_log: list = []
        self.subscribed = False
        self.reader = reader  # a consumer alone: its polls are not transactions
        self.topic = config.topic
        self.group = config.consumer_group
        self.producer = None if reader else self._producer(bootstrap_servers, process, config, time)
        try:
            self.consumer = KafkaConsumer(
                bootstrap_servers=bootstrap_servers, group_id=self.group, enable_auto_commit=False,
                auto_offset_reset="earliest", session_timeout_ms=6000, heartbeat_interval_ms=300,
                request_timeout_ms=10_000, reconnect_backoff_ms=50, value_deserializer=_value_int,
                isolation_level="read_committed" if config.txn else "read_uncommitted", time=time,
            )  # fmt: skip
        except BaseException:
            if self.producer is not None:
                self.producer.close(0)
            raise

    @staticmethod
    def _producer(bootstrap_servers: str, process: int, config: WorkloadConfig, time: Time) -> KafkaProducer:
        transactional = {"transactional_id": new_transactional_id(process)} if config.txn else {}
        producer = KafkaProducer(
            bootstrap_servers=bootstrap_servers, acks="all", enable_idempotence=True,
            request_timeout_ms=3000, max_block_ms=10_000, reconnect_backoff_ms=50,
            transaction_timeout_ms=10_000, value_serializer=_value_bytes, time=time,
            transaction_version=config.transaction_version, **transactional,
        )  # fmt: skip
        if config.txn:
            try:
                producer.init_transactions()
            except BaseException:
                producer.close(0)
                raise
        return producer

    def send(self, k: int, v: int) -> int | None:
        metadata = self.producer.send(self.topic, v, partition=k).get(timeout=SEND_TIMEOUT_S)
        return None if metadata.offset < 0 else metadata.offset

    def _within_deadline(self, call: Callable[[], Any]) -> Any:
        """``call()``, woken (``WakeupException``, an info) if it outlives ``CONSUMER_CALL_TIMEOUT_S``.
        Kafka 0.10.1's ``poll`` blocks for as long as a rebalance takes and ``commitSync`` for as
        long as a commit does; Jepsen's client gets a bound from Kafka 2.0's
        ``default.api.timeout.ms`` (KIP-266). Here the consumer's own ``wakeup`` gives the same
        bound, so that a partitioned consumer cannot keep a run from ending."""
        timer = threading.Timer(CONSUMER_CALL_TIMEOUT_S, self.consumer.wakeup)
        timer.daemon = True
        timer.start()
        try:
            return call()
        finally:
            timer.cancel()

    def poll(self, poll_ms: int) -> dict[int, list[tuple[int, int]]]:
        try:
            records = self._within_deadline(lambda: self.consumer.poll(timeout_ms=poll_ms))
        except errors.IllegalStateException as e:
            if "not subscribed to any" in str(e):  # nothing assigned yet: an empty poll, as Jepsen's
                return {}
            raise
        return {tp.partition: [(r.offset, r.value) for r in rs] for tp, rs in sorted(records.items())}

    def assign(self, keys: list[int], seek_to_beginning: bool) -> None:
        if self.subscribed:  # Kafka refuses an assign on top of a subscription
            self.consumer.unsubscribe()
            self.subscribed = False
        partitions = [TopicPartition(self.topic, k) for k in keys]
        self.consumer.assign(partitions)
        if seek_to_beginning:
            self.consumer.seek_to_beginning(*partitions)

    def subscribe(self) -> None:
        if not self.subscribed:
            self.consumer.unsubscribe()
        self.consumer.subscribe([self.topic], listener=_KafkaLiteRebalanceLog(self.rebalance_log))
        self.subscribed = True

    def seek(self, k: int, offset: int) -> None:
        self.consumer.seek(TopicPartition(self.topic, k), offset)

    def commit_sync(self) -> None:
        self._within_deadline(self.consumer.commit_sync)

    def begin_transaction(self) -> None:
        self.producer.begin_transaction()

    def send_offsets_to_transaction(self, offsets: dict[int, int]) -> None:
        if offsets:
            self.producer.send_offsets_to_transaction(
                {TopicPartition(self.topic, k): o for k, o in offsets.items()}, self.group
            )

    def commit_transaction(self) -> None:
        self.producer.commit_transaction()

    def abort_transaction(self) -> None:
        self.producer.abort_transaction()

    def is_invalid_txn_state(self, e: BaseException) -> bool:
        return isinstance(e, errors.InvalidTxnStateException)

    def is_unabortable(self, e: BaseException) -> bool:
        # Fencing and sequence errors end the producer: no abort is possible after them.
        unabortable = (errors.ProducerFencedException, errors.OutOfOrderSequenceException,
                       errors.TopicAuthorizationException)  # fmt: skip
        return isinstance(e, unabortable)

    def is_indefinite(self, e: BaseException) -> bool:
        return isinstance(e, errors.TimeoutException)

    def classify(self, e: BaseException) -> Failure:
        return classify_kafka_lite(e)

    def close(self) -> None:
        # At once, as Jepsen's close-producer! and close-consumer!: a crashed client waits for nothing.
        try:
            if self.producer is not None:
                self.producer.close(0)
        finally:
            self.consumer.close(autocommit=False, timeout_ms=0)


def classify_kafka_lite(e: BaseException) -> Failure:
    """Jepsen's ``with-errors``, for kafka_lite's exceptions (Java's names, so Jepsen's table)."""
    name = type(e).__name__
    if isinstance(e, (errors.ProducerFencedException, errors.OutOfOrderSequenceException,
                      errors.TopicAuthorizationException, errors.GroupAuthorizationException)):  # fmt: skip
        return Failure("fail", name, end_process=True)
    if isinstance(e, (errors.InvalidTopicException, errors.UnknownTopicOrPartitionException,
                      errors.InvalidReplicationFactorException, errors.NotControllerException,
                      errors.BrokerNotAvailableException)):  # fmt: skip
        return Failure("fail", name)
    if "in an error state" in str(e) or "has failed with errors" in str(e):
        return Failure("fail", f"txn-in-error-state: {e}", end_process=True)
    # Timeouts, disconnects, a leader that moved (KAFKA-13574), the broker's unknown errors: the
    # request may have been carried out. So may anything not known to be definite, and a client
    # that threw it is not to be trusted again (Jepsen's process crash).
    known = isinstance(e, (errors.TimeoutException, errors.DisconnectException, errors.NetworkException,
                           errors.NotLeaderForPartitionException, errors.UnknownServerException))  # fmt: skip
    return Failure("info", f"{name}: {e}", end_process=not known)


class _KafkaLiteRebalanceLog(ConsumerRebalanceListener):
    """Notes which keys each rebalance took away or gave (``logging-rebalance-listener``)."""

    def __init__(self, log: list) -> None:
        self.log = log

    def on_partitions_revoked(self, partitions) -> None:
        self.log.append(("revoked", sorted(tp.partition for tp in partitions)))

    def on_partitions_assigned(self, partitions) -> None:
        self.log.append(("assigned", sorted(tp.partition for tp in partitions)))


class ConfluentClient:
    """confluent-kafka's ``Producer`` and ``Consumer`` (librdkafka): the same workload through
    another implementation of the client protocol."""

    def __init__(self, bootstrap_servers: str, process: int, config: WorkloadConfig, time: Time,
                 reader: bool = False) -> None:  # fmt: skip
        import confluent_kafka

        self.ck = confluent_kafka
        self.rebalance_log: list = []
        self.subscribed = False
        self.reader = reader  # a consumer alone: its polls are not transactions
        self.topic = config.topic
        self.producer = None
        if not reader:
            producer_config = {
                "bootstrap.servers": bootstrap_servers, "enable.idempotence": True, "acks": "all",
                "request.timeout.ms": 3000, "message.timeout.ms": int(SEND_TIMEOUT_S * 1000),
                "reconnect.backoff.max.ms": 1000, "transaction.timeout.ms": 10_000,
            }  # fmt: skip
            if config.txn:
                producer_config["transactional.id"] = new_transactional_id(process)
            self.producer = confluent_kafka.Producer(producer_config)
            if config.txn:
                self.producer.init_transactions(SEND_TIMEOUT_S)
        self.consumer = confluent_kafka.Consumer({
            "bootstrap.servers": bootstrap_servers, "group.id": config.consumer_group, "enable.auto.commit": False,
            "auto.offset.reset": "earliest", "session.timeout.ms": 6000, "heartbeat.interval.ms": 300,
            "enable.partition.eof": False,
            "isolation.level": "read_committed" if config.txn else "read_uncommitted",
        })  # fmt: skip

    def send(self, k: int, v: int) -> int | None:
        delivered: list = []
        self.producer.produce(self.topic, _value_bytes(v), partition=k,
                              on_delivery=lambda err, msg: delivered.append((err, msg)))  # fmt: skip
        self.producer.flush(SEND_TIMEOUT_S)
        if not delivered:
            raise TimeoutError(f"no answer to a send within {SEND_TIMEOUT_S:.0f} s")
        err, msg = delivered[0]
        if err is not None:
            raise self.ck.KafkaException(err)
        return None if msg.offset() is None or msg.offset() < 0 else msg.offset()

    def poll(self, poll_ms: int) -> dict[int, list[tuple[int, int]]]:
        if not self.subscribed and not self.consumer.assignment():
            return {}
        polled: dict[int, list[tuple[int, int]]] = {}
        for msg in self.consumer.consume(500, poll_ms / 1000):
            if msg.error() is not None:
                raise self.ck.KafkaException(msg.error())
            polled.setdefault(msg.partition(), []).append((msg.offset(), _value_int(msg.value())))
        return dict(sorted(polled.items()))

    def assign(self, keys: list[int], seek_to_beginning: bool) -> None:
        if self.subscribed:
            self.consumer.unsubscribe()
            self.subscribed = False
        offset = self.ck.OFFSET_BEGINNING if seek_to_beginning else self.ck.OFFSET_STORED
        self.consumer.assign([self.ck.TopicPartition(self.topic, k, offset) for k in keys])

    def subscribe(self) -> None:
        log = self.rebalance_log

        def noting(kind: str):
            return lambda consumer, partitions: log.append((kind, sorted(tp.partition for tp in partitions)))

        if not self.subscribed:
            self.consumer.unassign()
        self.consumer.subscribe([self.topic], on_assign=noting("assigned"), on_revoke=noting("revoked"),
                                on_lost=noting("lost"))  # fmt: skip
        self.subscribed = True

    def seek(self, k: int, offset: int) -> None:
        self.consumer.seek(self.ck.TopicPartition(self.topic, k, offset))

    def commit_sync(self) -> None:
        try:
            self.consumer.commit(asynchronous=False)
        except self.ck.KafkaException as e:
            if e.args[0].code() != self.ck.KafkaError._NO_OFFSET:  # nothing read: nothing to commit
                raise

    def begin_transaction(self) -> None:
        self.producer.begin_transaction()

    def send_offsets_to_transaction(self, offsets: dict[int, int]) -> None:
        if offsets:
            partitions = [self.ck.TopicPartition(self.topic, k, o) for k, o in offsets.items()]
            self.producer.send_offsets_to_transaction(
                partitions, self.consumer.consumer_group_metadata(), SEND_TIMEOUT_S
            )

    def commit_transaction(self) -> None:
        self.producer.commit_transaction(SEND_TIMEOUT_S)

    def abort_transaction(self) -> None:
        self.producer.abort_transaction(SEND_TIMEOUT_S)

    def is_invalid_txn_state(self, e: BaseException) -> bool:
        error = _kafka_error(e, self.ck)
        return error is not None and error.code() == self.ck.KafkaError.INVALID_TXN_STATE

    def is_unabortable(self, e: BaseException) -> bool:
        error = _kafka_error(e, self.ck)  # librdkafka marks the errors no abort recovers from
        return error is not None and error.fatal()

    def is_indefinite(self, e: BaseException) -> bool:
        error = _kafka_error(e, self.ck)
        return isinstance(e, TimeoutError) or (error is not None and error.retriable())

    def classify(self, e: BaseException) -> Failure:
        """librdkafka's errors mapped as Jepsen maps Java's: fatal ones (a fenced or out-of-order
        producer) end the process; timeouts, transport errors and a moved leader are info."""
        error, codes = _kafka_error(e, self.ck), self.ck.KafkaError
        if error is None:
            return Failure("info", f"{type(e).__name__}: {e}", end_process=not isinstance(e, TimeoutError))
        name = error.name()
        if error.fatal() or error.code() in (codes._FENCED, codes.OUT_OF_ORDER_SEQUENCE_NUMBER):
            return Failure("fail", name, end_process=True)
        if error.code() in (codes.UNKNOWN_TOPIC_OR_PART, codes._UNKNOWN_PARTITION, codes.TOPIC_AUTHORIZATION_FAILED,
                            codes.INVALID_REPLICATION_FACTOR, codes.NOT_CONTROLLER):  # fmt: skip
            return Failure("fail", name)
        known = error.code() in (codes._TIMED_OUT, codes._MSG_TIMED_OUT, codes.REQUEST_TIMED_OUT,
                                 codes._TRANSPORT, codes.NETWORK_EXCEPTION, codes.NOT_LEADER_FOR_PARTITION,
                                 codes.UNKNOWN, codes._ALL_BROKERS_DOWN)  # fmt: skip
        return Failure("info", f"{name}: {error.str()}", end_process=not known)

    def close(self) -> None:
        try:
            if self.producer is not None:
                self.producer.purge()
        finally:
            self.consumer.close()


def _kafka_error(e: BaseException, ck) -> Any:
    if isinstance(e, ck.KafkaException) and e.args and isinstance(e.args[0], ck.KafkaError):
        return e.args[0]
    return None


def client_factory(
    config: WorkloadConfig, bootstrap_servers: str, time: Time, reader: bool = False
) -> Callable[[int], Any]:
    """What a worker calls for a new process's client; with ``reader``, a consumer alone, as the
    final phase needs: it only polls, so a transaction coordinator that does not answer (no
    ``init_transactions``) cannot keep it from reading back what was written."""
    cls = KafkaLiteClient if config.client == "kafka_lite" else ConfluentClient
    return lambda process: cls(bootstrap_servers, process, config, time, reader)
