"""MirrorMaker: copy topics from one cluster to another with a consumer group and a producer.

Mirrors: kafka.tools.MirrorMaker (core/src/main/scala/kafka/tools/MirrorMaker.scala, Kafka 0.10.1):
         MirrorMakerThread, MirrorMakerNewConsumer, MirrorMakerProducer and its callback,
         InternalRebalanceListenerForNewConsumer, MirrorMakerMessageHandler and the default handler
Book:    chapter 8, 8.1 (MirrorMaker: copying data between clusters)
Differs: new consumer only (no ``--blacklist``, no custom rebalance listener). The whitelist is read
         as 0.10.2 reads it (``Whitelist``: ',' means '|') and compiled by Python's ``re``; the
         handler gets the consumer's ``ConsumerRecord`` and the default one also copies headers, as
         0.11's does. A thread that dies stops the others and the tool's exit code says so, where
         Kafka calls ``System.exit`` from the thread.

The picture, as Kafka 0.9-0.11 draws it: no queue between consumers and producer::

    source cluster                                               target cluster
    ┌───────────┐  poll   mirrormaker-thread-0 (consumer 0) ─┐
    │ whitelist │ ──────> mirrormaker-thread-1 (consumer 1) ─┼─ send ─> one KafkaProducer ──> topics
    │  topics   │         ...  (one group: group.id)        ─┘            (shared, thread-safe)
    └───────────┘

Each thread polls its consumer, hands every record to the message handler, and sends what the
handler returns. It remembers, per partition, the offset after the last record it *sent*, not the
consumer's position (a poll returns many records; the position moves past all of them at once).
Every ``offset.commit.interval.ms`` it **flushes the producer, then commits** those offsets: after a
flush every record sent before it has been acknowledged by the target (acks=all), so a committed
offset never covers a record the target does not have. A crash loses nothing; it can only copy
again what was sent after the last commit. The same flush-then-commit runs when the group takes
partitions away (the rebalance listener) and when a thread stops.

For that to hold the producer must not drop records on its own, so MirrorMaker sets the
"no data loss" defaults unless the producer config says otherwise: ``acks=all``, ``retries`` and
``max.block.ms`` as large as they go, one request in flight per connection (so a retry cannot
reorder a partition); and the consumers never auto-commit. A send that fails even so stops
MirrorMaker (``abort.on.send.failure=true``): the callback closes the producer at once, so the
flush-then-commit that follows cannot commit past the lost record. With ``false`` the record is
counted in ``num_dropped_messages`` and copying goes on: that record is lost.
"""

from __future__ import annotations

import abc
import functools
import itertools
import logging
import pkgutil
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from kafka_lite.common.errors import KafkaException, WakeupException
from kafka_lite.common.record.constants import NO_TIMESTAMP
from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.common.utils import INT32_MAX
from kafka_lite.consumer.commit_failed_exception import CommitFailedException
from kafka_lite.consumer.consumer_rebalance_listener import ConsumerRebalanceListener
from kafka_lite.consumer.consumer_record import ConsumerRecord
from kafka_lite.consumer.kafka_consumer import KafkaConsumer
from kafka_lite.consumer.offset_and_metadata import OffsetAndMetadata
from kafka_lite.producer.kafka_producer import KafkaProducer
from kafka_lite.producer.producer_record import ProducerRecord

log = logging.getLogger(__name__)

INT64_MAX = 2**63 - 1

# The tool's own options, with Kafka's defaults.
DEFAULT_NUM_STREAMS = 1
DEFAULT_OFFSET_COMMIT_INTERVAL_MS = 60_000
# How long a thread's poll waits for records: one second, as Kafka's, so that an interval above one
# second is not held up by a quiet source.
POLL_TIMEOUT_MS = 1000

# The "no data loss" settings of the class comment, set unless the config file sets them.
PRODUCER_NO_DATA_LOSS_DEFAULTS = {
    "retries": str(INT32_MAX),
    "max.block.ms": str(INT64_MAX),
    "acks": "all",
    "max.in.flight.requests.per.connection": "1",
}
CONSUMER_NO_DATA_LOSS_DEFAULTS = {"enable.auto.commit": "false"}


class MirrorMakerException(KafkaException):
    """A bad option or config: what to fix, in one line. ``config`` says which config it is in
    ("consumer" or "producer"), so that a command can name the file."""

    def __init__(self, message: str, config: str | None = None) -> None:
        super().__init__(message)
        self.config = config


class ConsumerTimeoutException(KafkaException):
    """A poll returned nothing (Kafka's ``kafka.consumer.ConsumerTimeoutException``): the thread's
    loop goes round, so that it can still commit on time."""


# -- the whitelist ------------------------------------------------------------------------------------


def whitelist_regex(raw: str) -> str:
    """The whitelist as the regular expression the consumer subscribes with (Kafka's
    ``Whitelist(...).regex``): trimmed, ',' read as '|', spaces removed, and quotes around it dropped
    (a properties file may bring them). This is 0.10.2's reading: 0.10.1 gives the new consumer the
    whitelist as typed, so ``a,b`` there matches no topic, unlike with the old consumer. An
    expression that does not compile is refused here, with Kafka's wording, rather than when the
    consumer first matches topics against it."""
    regex = raw.strip().replace(",", "|").replace(" ", "")
    regex = re.sub(r"""^["']+""", "", regex)
    regex = re.sub(r"""["']+$""", "", regex)
    try:
        re.compile(regex)
    except re.error as e:
        raise MirrorMakerException(f"{regex} is an invalid regex. ({e})") from None
    return regex


# -- the message handler ------------------------------------------------------------------------------


class MirrorMakerMessageHandler(abc.ABC):
    """What happens to each record between the consumer and the producer: return the records to
    send for it (none to drop it, several to fan it out). Subclass it for ``--message.handler``;
    with ``--message.handler.args`` the class is built with that string, else with no argument."""

    @abc.abstractmethod
    def handle(self, record: ConsumerRecord) -> list[ProducerRecord]: ...


class DefaultMirrorMakerMessageHandler(MirrorMakerMessageHandler):
    """The same topic, key, value, timestamp and headers. No partition: the target's partitioner
    chooses, so a keyed record lands by its key's hash even if the two topics have different
    partition counts (and only then in the "same" partition when the counts are equal)."""

    def handle(self, record: ConsumerRecord) -> list[ProducerRecord]:
        timestamp = None if record.timestamp == NO_TIMESTAMP else record.timestamp
        # Each header is already a (key, value) pair, as the producer takes them.
        headers = list(record.headers) if record.headers else None
        return [ProducerRecord(record.topic, record.value, record.key, None, timestamp, headers)]


def load_message_handler(name: str, args: str | None = None) -> MirrorMakerMessageHandler:
    """The handler named ``package.module:Class`` (or ``package.module.Class``), built with ``args``
    if given: Kafka's ``CoreUtils.createObject``, by name at run time as Kafka finds it by reflection."""
    try:
        cls = pkgutil.resolve_name(name)
    except (ImportError, AttributeError, ValueError) as e:
        raise MirrorMakerException(f"--message.handler {name}: class could not be found ({e})") from None
    if not (isinstance(cls, type) and issubclass(cls, MirrorMakerMessageHandler)):
        raise MirrorMakerException(
            f"--message.handler {name} is not a subclass of {__name__}.MirrorMakerMessageHandler"
        )
    try:
        return cls() if args is None else cls(args)
    except Exception as e:
        raise MirrorMakerException(f"--message.handler {name}: cannot be created: {e}") from None


# -- configs ------------------------------------------------------------------------------------------


def maybe_set_default_property(props: dict[str, str], name: str, default: str) -> None:
    """Set ``name`` to ``default`` unless the user set it, and say so when the user's value is not
    the safe one (Kafka's ``maybeSetDefaultProperty``)."""
    props.setdefault(name, default)
    if props[name] != default:
        log.info(
            "Property %s is overridden to %s - data loss or message reordering is possible.",
            name,
            props[name],
        )


def producer_config(props: Mapping[str, str]) -> dict[str, str]:
    """The producer's config: the user's, under the no-data-loss defaults."""
    config = dict(props)
    for name, default in PRODUCER_NO_DATA_LOSS_DEFAULTS.items():
        maybe_set_default_property(config, name, default)
    return config


def consumer_configs(props: Mapping[str, str], num_streams: int) -> list[dict[str, str]]:
    """One config per stream (Kafka's ``createNewConsumers``): no auto-commit, and the client id
    ``<group.id>-<i>``, so that each consumer is told apart in the group and its metrics."""
    base = dict(props)
    for name, default in CONSUMER_NO_DATA_LOSS_DEFAULTS.items():
        maybe_set_default_property(base, name, default)
    if not base.get("group.id"):
        raise MirrorMakerException("group.id is missing: MirrorMaker's consumers share one group", "consumer")
    return [{**base, "client.id": f"{base['group.id']}-{i}"} for i in range(num_streams)]


# -- shared state -------------------------------------------------------------------------------------


class MirrorMakerState:
    """What Kafka keeps in the ``MirrorMaker`` object's fields and every thread reads: whether a
    send failed (stop, and commit nothing more), whether a clean shutdown began, and the count of
    records given up on."""

    def __init__(self) -> None:
        self.exiting_on_send_failure = False
        self.is_shutting_down = False
        self.exited_abnormally = False
        self.failure: BaseException | None = None  # the first error that stopped a thread
        self.num_dropped_messages = 0
        self.lock = threading.Lock()

    def fail(self, error: BaseException) -> None:
        with self.lock:
            self.exiting_on_send_failure = True
            if self.failure is None:
                self.failure = error


# -- the producer -------------------------------------------------------------------------------------


class MirrorMakerProducer:
    """The one producer every thread sends through, with the callback that acts on a failed send."""

    def __init__(self, producer: KafkaProducer, abort_on_send_failure: bool, state: MirrorMakerState) -> None:
        self.producer = producer
        self.abort_on_send_failure = abort_on_send_failure
        self.state = state

    # --8<-- [start:producer_callback]
    def send(self, record: ProducerRecord) -> None:
        # Kafka's producer.send(record, new MirrorMakerProducerCallback(topic, key, value)): the
        # callback, here on_completion with this record bound to it, is kept with the record in its
        # batch.
        self.producer.send(
            record.topic,
            record.value,
            record.key,
            record.partition,
            record.timestamp_ms,
            record.headers,
            callback=functools.partial(self.on_completion, record),
        )

    def on_completion(self, record: ProducerRecord, metadata: Any, exception: BaseException | None) -> None:
        """Kafka's ``MirrorMakerProducerCallback.onCompletion``: nothing to do for a record written;
        a send that failed after the producer's retries is logged, and stops MirrorMaker or is
        counted as dropped. Runs on the producer's thread (or the caller's, for a record refused
        before it was queued)."""
        if exception is None:
            return
        log.error("Error when sending message to topic %s with key: %s, value: %s bytes with error: %s",
                  record.topic, _size(record.key), _size(record.value), exception)  # fmt: skip
        if self.abort_on_send_failure:
            log.info("Closing producer due to send failure.")
            self.state.fail(exception)
            # close(0): fail everything still queued now; a flush waiting for it returns, and the
            # commit after it is skipped, because exiting_on_send_failure is already set.
            self.producer.close(0)
        with self.state.lock:
            self.state.num_dropped_messages += 1

    # --8<-- [end:producer_callback]
    def flush(self) -> None:
        self.producer.flush()

    def close(self, timeout: float | None = None) -> None:
        self.producer.close(timeout)


def _size(data: Any) -> str:
    return "null" if data is None else str(len(data))


# -- the consumer -------------------------------------------------------------------------------------


class MirrorMakerNewConsumer:
    """A consumer as a thread uses it: ``receive`` one record at a time, ``commit`` what was handed
    out. The offsets are kept here, record by record, because the consumer's own position moves a
    whole poll ahead."""

    def __init__(self, consumer: KafkaConsumer, whitelist: str) -> None:
        self.consumer = consumer
        self.regex = whitelist_regex(whitelist)
        self.record_iter: Iterator[ConsumerRecord] = iter(())
        self.offsets: dict[TopicPartition, int] = {}

    def init(self, listener: ConsumerRebalanceListener) -> None:
        log.debug("Initiating new consumer")
        self.consumer.subscribe(pattern=self.regex, listener=listener)

    def has_data(self) -> bool:
        return True  # the new consumer's poll has a timeout: receive() raises instead of blocking

    def receive(self) -> ConsumerRecord:
        record = next(self.record_iter, None)
        if record is None:
            self.record_iter = self.poll()
            record = next(self.record_iter, None)
            if record is None:
                raise ConsumerTimeoutException("no records within the poll timeout")
        self.offsets[TopicPartition(record.topic, record.partition)] = record.offset + 1
        return record

    def poll(self) -> Iterator[ConsumerRecord]:
        """The records of one poll, in order: called only once every record of the last one is handed
        out, so a subclass may change the assignment here without a record of a partition it gives
        up still waiting to be sent (the controller-assigned workers of ``ureplicator.py`` do)."""
        batches = self.consumer.poll(POLL_TIMEOUT_MS)
        # Kafka's ConsumerRecords.iterator(): each partition's records, one partition after another.
        return itertools.chain.from_iterable(batches.values())

    def stop(self) -> None:
        self.consumer.wakeup()

    def cleanup(self) -> None:
        self.consumer.close()

    def commit(self) -> None:
        self.consumer.commit_sync({tp: OffsetAndMetadata(offset, "") for tp, offset in self.offsets.items()})
        self.offsets.clear()


# --8<-- [start:commit_offsets]
def commit_offsets(consumer: MirrorMakerNewConsumer, state: MirrorMakerState) -> None:
    """Commit what ``consumer`` has handed out, unless a send failed (Kafka's ``commitOffsets``)."""
    if state.exiting_on_send_failure:
        log.info("Exiting on send failure, skip committing offsets.")
        return
    log.debug("Committing offsets.")
    try:
        consumer.commit()
    except WakeupException:
        # wakeup() is called once, to stop the thread: retry the commit, then let the stop happen.
        consumer.commit()
        raise
    except CommitFailedException:
        log.warning("Failed to commit offsets because the consumer group has rebalanced and assigned "
                    "partitions to another instance. If you see this regularly, it could indicate that "
                    "you need to either increase the consumer's session.timeout.ms or reduce the number "
                    "of records handled on each iteration with max.poll.records")  # fmt: skip


# --8<-- [end:commit_offsets]
class InternalRebalanceListenerForNewConsumer(ConsumerRebalanceListener):
    """Flush, then commit, before the group hands this consumer's partitions to another: the next
    owner starts where this one's sent and acknowledged records end."""

    def __init__(
        self, consumer: MirrorMakerNewConsumer, producer: MirrorMakerProducer, state: MirrorMakerState
    ) -> None:
        self.consumer = consumer
        self.producer = producer
        self.state = state

    def on_partitions_revoked(self, partitions) -> None:
        self.producer.flush()
        commit_offsets(self.consumer, self.state)

    def on_partitions_assigned(self, partitions) -> None:
        pass


# -- the threads --------------------------------------------------------------------------------------


class MirrorMakerThread(threading.Thread):
    """One consumer's copy loop: receive, handle, send; flush and commit every interval."""

    def __init__(
        self,
        consumer: MirrorMakerNewConsumer,
        thread_id: int,
        producer: MirrorMakerProducer,
        message_handler: MirrorMakerMessageHandler,
        offset_commit_interval_ms: int,
        state: MirrorMakerState,
        on_abnormal_exit: Callable[[], None],
        time: Time = SYSTEM,
    ) -> None:
        super().__init__(name=f"mirrormaker-thread-{thread_id}", daemon=True)
        self.consumer = consumer
        self.producer = producer
        self.message_handler = message_handler
        self.offset_commit_interval_ms = offset_commit_interval_ms
        self.state = state
        self.on_abnormal_exit = on_abnormal_exit
        self.time = time
        self.shutdown_latch = threading.Event()
        self.last_offset_commit_ms = time.milliseconds()
        self.shutting_down = False

    # --8<-- [start:mirror_maker_thread_run]
    def run(self) -> None:
        log.info("Starting mirror maker thread %s", self.name)
        try:
            self.consumer.init(
                InternalRebalanceListenerForNewConsumer(self.consumer, self.producer, self.state)
            )
            # Two loops, as Kafka's: the inner one copies, the outer one commits even when the
            # source is quiet (a poll that returns nothing ends the inner loop).
            while not self.state.exiting_on_send_failure and not self.shutting_down:
                try:
                    while (
                        not self.state.exiting_on_send_failure
                        and not self.shutting_down
                        and self.consumer.has_data()
                    ):
                        record = self.consumer.receive()
                        for produced in self.message_handler.handle(record):
                            self.producer.send(produced)
                        self.maybe_flush_and_commit_offsets()
                except (ConsumerTimeoutException, WakeupException):
                    pass
                self.maybe_flush_and_commit_offsets()
        except BaseException as e:
            self.state.fail(e)
            log.critical("Mirror maker thread failure due to %r", e, exc_info=True)
        finally:
            try:
                log.info("Flushing producer.")
                self.producer.flush()
                # Skipped if the flush raised: nothing is committed that may not have been written.
                log.info("Committing consumer offsets.")
                commit_offsets(self.consumer, self.state)
            except Exception as e:
                log.warning("Flush and commit on the way out failed: %r", e)
            log.info("Shutting down consumer connectors.")
            for step in (self.consumer.stop, self.consumer.cleanup):
                try:
                    step()
                except Exception as e:
                    log.warning("%s failed: %r", step.__name__, e)
            log.info("Mirror maker thread stopped")
            if not self.state.is_shutting_down:
                log.critical("Mirror maker thread exited abnormally, stopping the whole mirror maker.")
                self.state.exited_abnormally = True
                self.on_abnormal_exit()
            # Last, unlike Kafka (whose thread then calls System.exit): whoever waits for the latch
            # sees the abnormal exit already noted.
            self.shutdown_latch.set()

    def maybe_flush_and_commit_offsets(self) -> None:
        if self.time.milliseconds() - self.last_offset_commit_ms > self.offset_commit_interval_ms:
            log.debug("Committing MirrorMaker state automatically.")
            self.producer.flush()
            commit_offsets(self.consumer, self.state)
            self.last_offset_commit_ms = self.time.milliseconds()

    # --8<-- [end:mirror_maker_thread_run]
    def shutdown(self) -> None:
        log.info("%s shutting down", self.name)
        self.shutting_down = True
        self.consumer.stop()

    def await_shutdown(self) -> None:
        self.shutdown_latch.wait()
        log.info("Mirror maker thread shutdown complete")


# -- the tool -----------------------------------------------------------------------------------------


class MirrorMaker:
    """N threads and one producer (Kafka's ``MirrorMaker`` object after its option parsing).

    ``run`` starts the threads and returns the exit code once they have all stopped: 0 after
    ``shutdown`` (the signal handler's call, as Kafka's shutdown hook), 1 if a thread stopped by
    itself (a failed send, an error), which stops the others too."""

    def __init__(
        self,
        consumers: list[KafkaConsumer],
        producer: KafkaProducer,
        whitelist: str,
        message_handler: MirrorMakerMessageHandler | None = None,
        offset_commit_interval_ms: int = DEFAULT_OFFSET_COMMIT_INTERVAL_MS,
        abort_on_send_failure: bool = True,
        time: Time = SYSTEM,
    ) -> None:
        self.state = MirrorMakerState()
        self.producer = MirrorMakerProducer(producer, abort_on_send_failure, self.state)
        handler = message_handler or DefaultMirrorMakerMessageHandler()
        self.threads = [
            MirrorMakerThread(MirrorMakerNewConsumer(consumer, whitelist), i, self.producer, handler,
                              offset_commit_interval_ms, self.state, self._stop_threads, time)
            for i, consumer in enumerate(consumers)
        ]  # fmt: skip
        # Re-entrant: a second Ctrl-C runs the handler again in the main thread, maybe inside it.
        self._shutdown_lock = threading.RLock()

    @classmethod
    def from_configs(
        cls,
        consumer_props: Mapping[str, str],
        producer_props: Mapping[str, str],
        whitelist: str,
        num_streams: int = DEFAULT_NUM_STREAMS,
        **options: Any,
    ) -> MirrorMaker:
        """Build the producer and ``num_streams`` consumers from configs by Kafka's names, with the
        no-data-loss defaults; a bad whitelist or config raises before anything connects."""
        whitelist_regex(whitelist)
        configs = consumer_configs(consumer_props, num_streams)
        try:
            producer = KafkaProducer(**producer_config(producer_props))
        except KafkaException as e:  # an unknown or bad setting
            raise MirrorMakerException(str(e), "producer") from None
        consumers: list[KafkaConsumer] = []
        try:
            for config in configs:
                consumers.append(KafkaConsumer(**config))
        except BaseException as e:
            for consumer in consumers:
                consumer.close(autocommit=False)
            producer.close(0)
            if isinstance(e, KafkaException):
                raise MirrorMakerException(str(e), "consumer") from None
            raise
        return cls(consumers, producer, whitelist, **options)

    @property
    def num_dropped_messages(self) -> int:
        return self.state.num_dropped_messages

    def run(self) -> int:
        log.info("Starting mirror maker")
        for thread in self.threads:
            thread.start()
        for thread in self.threads:
            thread.await_shutdown()
        log.info("Closing producer.")
        self.producer.close()
        log.info("Kafka mirror maker shutdown successfully")
        return 1 if self.state.exited_abnormally else 0

    def shutdown(self) -> None:
        """Begin a clean shutdown: every thread stops, flushes and commits; ``run`` then closes the
        producer and returns. Safe from a signal handler: it only sets flags and wakes the consumers."""
        with self._shutdown_lock:
            if self.state.is_shutting_down:
                return
            log.info("Start clean shutdown.")
            self.state.is_shutting_down = True
        self._stop_threads()

    def _stop_threads(self) -> None:
        for thread in self.threads:
            try:
                thread.shutdown()
            except Exception as e:  # a consumer already closed by its own thread
                log.warning("Interrupt during shutdown of %s: %r", thread.name, e)
