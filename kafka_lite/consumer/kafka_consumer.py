"""The consumer's front door: subscribe or assign, then ``poll`` for records and commit what was read.

Mirrors: org.apache.kafka.clients.consumer.KafkaConsumer
         (clients/src/main/java/org/apache/kafka/clients/consumer/KafkaConsumer.java, Kafka 0.10.1)
Book:    chapter 4, 4.1 (subscribing, the poll loop: 4.1.3 the consumer's poll, 4.1.4-4.1.5 fetching),
         4.2 (the coordinator inside poll), 4.4 (committing offsets), 4.4.4 (where ``commit`` falls
         against processing: at least once, or at most once)
Differs: configs are keyword arguments in kafka-python's spelling (``group_id="g"``), checked by
         ``ConfigDef``; deserializers are callables. The methods take kafka-python's shapes where the
         two differ: ``poll(timeout_ms, max_records)`` returns a dict of partition to records,
         ``seek_to_beginning(*partitions)``, ``pause(*partitions)``, ``committed(tp)`` returns the
         offset (``metadata=True`` for the ``OffsetAndMetadata``), ``commit`` is synchronous, and the
         consumer is an iterator (``consumer_timeout_ms`` ends the iteration). Three later Kafkas'
         behaviours are behind named helpers that say which and why: no coordinator without a
         ``group_id`` (``_group_coordinator``), the resets the user asked for run before the
         committed offsets are fetched (``_reset_offsets_if_needed``), and a ``poll`` whose
         timeout bounds its search for the group's coordinator
         (``ConsumerCoordinator.ensure_coordinator_ready_within``); ``close`` takes a timeout,
         30 s by default, for the same reason. ``metrics()`` is a snapshot dict by Kafka's metric
         names, without time windows (see ``common/metrics``).

Usage::

    consumer = KafkaConsumer("orders", bootstrap_servers="127.0.0.1:9092", group_id="billing",
                             auto_offset_reset="earliest", value_deserializer=bytes.decode)
    for record in consumer:             # or: records = consumer.poll(timeout_ms=1000)
        print(record.offset, record.value)
    consumer.close()                    # commits (auto-commit), leaves the group

One thread uses a consumer (a second one gets ``ConcurrentModificationException``); ``wakeup`` is
the one method another thread may call, to break a blocking ``poll``. Beside the consumer's thread
runs the heartbeat thread of its coordinator (``AbstractCoordinator``), which keeps the member in its
group between polls.

A ``poll`` (``_poll_once``, in 0.10.1's order):

1. the coordinator's share (``ConsumerCoordinator.poll``): find the coordinator, join or rejoin the
   group if needed (the rebalance listener runs here, in the caller's thread), note the poll for the
   heartbeat thread's ``max.poll.interval.ms`` check, auto-commit when due;
2. give every assigned partition without a position one: a reset the user asked for, else the
   group's committed offset, else a reset by ``auto.offset.reset``;
3. return records already fetched, if any; otherwise send fetches and wait for the network (no
   longer than the coordinator's next task), then return what arrived.

Before ``poll`` returns records it sends the next fetches (``send_fetches``, then a network poll
that does not block), so the brokers are already reading the next records while the application
handles these: the pipelining of 0.10.1.

This module is long because it is one class, as Kafka's KafkaConsumer.java is one: the public
API and the poll loop read best side by side with the book's 4.1.
"""

from __future__ import annotations

import itertools
import logging
import re
import threading
from collections import deque
from collections.abc import Iterable, Mapping
from typing import Any

from kafka_lite.clients.client_utils import create_channel_builder, parse_bootstrap
from kafka_lite.clients.metadata import Cluster, Metadata, PartitionInfo
from kafka_lite.clients.network_client import NetworkClient
from kafka_lite.common.errors import (
    ConfigException,
    Errors,
    IllegalArgumentException,
    IllegalStateException,
    KafkaException,
    TimeoutException,
)
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.consumer.consumer_config import CONFIG_DEF
from kafka_lite.consumer.consumer_interceptors import ConsumerInterceptors
from kafka_lite.consumer.consumer_rebalance_listener import ConsumerRebalanceListener
from kafka_lite.consumer.consumer_record import ConsumerRecord
from kafka_lite.consumer.internals.consumer_coordinator import ConsumerCoordinator
from kafka_lite.consumer.internals.consumer_network_client import ConsumerNetworkClient
from kafka_lite.consumer.internals.fetcher import Fetcher
from kafka_lite.consumer.internals.no_op_consumer_rebalance_listener import NoOpConsumerRebalanceListener
from kafka_lite.consumer.internals.partition_assignor import PartitionAssignor
from kafka_lite.consumer.internals.subscription_state import SubscriptionState
from kafka_lite.consumer.offset_and_metadata import OffsetAndMetadata
from kafka_lite.consumer.offset_and_timestamp import OffsetAndTimestamp
from kafka_lite.consumer.offset_reset_strategy import OffsetResetStrategy
from kafka_lite.consumer.range_assignor import RangeAssignor
from kafka_lite.consumer.round_robin_assignor import RoundRobinAssignor
from kafka_lite.network.selector import Selector

log = logging.getLogger(__name__)

_CLIENT_ID_SEQUENCE = itertools.count(1)
NO_CURRENT_THREAD = -1
MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION = 100  # as Kafka's consumer: fetches pipeline freely
DEFAULT_CLOSE_TIMEOUT_MS = 30_000
METADATA_VERSION = 1
ASSIGNORS: dict[str, type[PartitionAssignor]] = {"range": RangeAssignor, "roundrobin": RoundRobinAssignor}
NO_GROUP_ID_MESSAGE = (
    "To use the group management or offset commit APIs, you must provide a valid group.id in the "
    "consumer configuration."
)


class ConcurrentModificationException(KafkaException):
    """A second thread used the consumer while another was inside it (Java's
    ``ConcurrentModificationException``, as ``KafkaConsumer.acquire`` throws it)."""


def _assignors(strategies: list[Any]) -> list[PartitionAssignor]:
    """``partition.assignment.strategy`` as assignor objects: each a name or a ``PartitionAssignor``
    (object or class)."""
    if not strategies:
        raise ConfigException("partition.assignment.strategy", strategies, "At least one assignor is needed")
    assignors = []
    for strategy in strategies:
        if isinstance(strategy, str):
            if strategy not in ASSIGNORS:
                raise ConfigException(
                    "partition.assignment.strategy",
                    strategy,
                    f"Unknown assignor; kafka_lite knows {sorted(ASSIGNORS)}",
                )
            assignors.append(ASSIGNORS[strategy]())
        elif isinstance(strategy, type) and issubclass(strategy, PartitionAssignor):
            assignors.append(strategy())
        elif isinstance(strategy, PartitionAssignor):
            assignors.append(strategy)
        else:
            raise ConfigException(
                "partition.assignment.strategy", strategy, "Expected an assignor name or a PartitionAssignor"
            )
    return assignors


class KafkaConsumer:
    def __init__(
        self,
        *topics: str,
        key_deserializer: object = None,
        value_deserializer: object = None,
        time: Time = SYSTEM,
        **configs: Any,
    ) -> None:
        self.config = CONFIG_DEF.parse(configs)
        user_configured = {name.replace("_", ".") for name in configs}
        self.time = time
        self.client_id = self.config["client.id"] or f"consumer-{next(_CLIENT_ID_SEQUENCE)}"
        self.group_id = self.config["group.id"] or None
        self.request_timeout_ms = self.config["request.timeout.ms"]
        self.consumer_timeout_ms = self.config["consumer.timeout.ms"]
        session_timeout_ms = self.config["session.timeout.ms"]
        heartbeat_interval_ms = self.config["heartbeat.interval.ms"]
        fetch_max_wait_ms = self.config["fetch.max.wait.ms"]
        retry_backoff_ms = self.config["retry.backoff.ms"]
        if self.request_timeout_ms <= session_timeout_ms or self.request_timeout_ms <= fetch_max_wait_ms:
            raise ConfigException(
                "request.timeout.ms",
                self.request_timeout_ms,
                f"request.timeout.ms should be greater than session.timeout.ms ({session_timeout_ms}) and "
                f"fetch.max.wait.ms ({fetch_max_wait_ms})",
            )
        if heartbeat_interval_ms >= session_timeout_ms:
            raise ConfigException(
                "heartbeat.interval.ms",
                heartbeat_interval_ms,
                f"heartbeat.interval.ms must be lower than session.timeout.ms ({session_timeout_ms})",
            )
        auto_commit = self.config["enable.auto.commit"]
        if self.group_id is None:
            if auto_commit and "enable.auto.commit" in user_configured:
                raise ConfigException(
                    "enable.auto.commit", True, "enable.auto.commit cannot be set to true without a group.id"
                )
            auto_commit = False  # nothing to commit to
        assignors = _assignors(self.config["partition.assignment.strategy"])

        self.metadata = Metadata(
            refresh_backoff_ms=retry_backoff_ms,
            metadata_expire_ms=self.config["metadata.max.age.ms"],
            time=time,
        )
        self.metadata.allow_auto_topic_creation = self.config["allow.auto.create.topics"]
        self.metadata.bootstrap(parse_bootstrap(self.config["bootstrap.servers"]), time.milliseconds())
        network = NetworkClient(
            Selector(time=time, channel_builder=create_channel_builder(self.config, self.client_id)),
            self.client_id,
            max_in_flight_requests_per_connection=MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION,
            reconnect_backoff_ms=self.config["reconnect.backoff.ms"],
            request_timeout_ms=self.request_timeout_ms,
            time=time,
            metadata=self.metadata,
        )
        self.client = ConsumerNetworkClient(
            network, self.metadata, time, retry_backoff_ms, self.request_timeout_ms
        )
        self.subscriptions = SubscriptionState(OffsetResetStrategy(self.config["auto.offset.reset"]))
        # None without interceptors, as in Kafka: a poll then spends nothing on them.
        self.interceptors = ConsumerInterceptors.from_config(self.config["interceptor.classes"], self.config)
        self.coordinator: ConsumerCoordinator | None = None
        if self.group_id is not None:
            self.coordinator = ConsumerCoordinator(
                self.client,
                self.group_id,
                self.config["max.poll.interval.ms"],
                session_timeout_ms,
                heartbeat_interval_ms,
                assignors,
                self.metadata,
                self.subscriptions,
                time,
                retry_backoff_ms,
                auto_commit,
                self.config["auto.commit.interval.ms"],
                self.config["exclude.internal.topics"],
                interceptors=self.interceptors,
            )
        self.fetcher = Fetcher(
            self.client,
            min_bytes=self.config["fetch.min.bytes"],
            max_wait_ms=fetch_max_wait_ms,
            max_bytes=self.config["fetch.max.bytes"],
            max_partition_fetch_bytes=self.config["max.partition.fetch.bytes"],
            max_poll_records=self.config["max.poll.records"],
            key_deserializer=key_deserializer,
            value_deserializer=value_deserializer,
            metadata=self.metadata,
            subscriptions=self.subscriptions,
            time=time,
            retry_backoff_ms=retry_backoff_ms,
            check_crcs=self.config["check.crcs"],
            isolation_level=self.config["isolation.level"],
            hold_back_caught_up=self.config["fetch.hold.back.caught.up"],
        )
        # Kafka's light lock: the thread inside the consumer now, and how deep.
        self._current_thread = NO_CURRENT_THREAD
        self._ref_count = 0
        self._thread_lock = threading.Lock()
        self._closed = False
        self._iterator_records: deque[ConsumerRecord] = deque()
        log.debug("Kafka consumer %s created", self.client_id)
        if topics:
            self.subscribe(list(topics))

    # -- one thread at a time ---------------------------------------------------------------------------

    def _acquire(self) -> None:
        """Enter the consumer; a second thread is refused (Kafka's ``acquire``)."""
        self._ensure_not_closed()
        thread_id = threading.get_ident()
        with self._thread_lock:
            if self._current_thread != thread_id:
                if self._current_thread != NO_CURRENT_THREAD:
                    raise ConcurrentModificationException(
                        "KafkaConsumer is not safe for multi-threaded access"
                    )
                self._current_thread = thread_id
            self._ref_count += 1

    def _release(self) -> None:
        with self._thread_lock:
            self._ref_count -= 1
            if self._ref_count == 0:
                self._current_thread = NO_CURRENT_THREAD

    def _ensure_not_closed(self) -> None:
        if self._closed:
            raise IllegalStateException("This consumer has already been closed.")

    def _group_coordinator(self) -> ConsumerCoordinator:
        """The group's coordinator, for the group APIs; without a ``group_id`` there is none, and
        they raise ``InvalidGroupIdException``: Kafka 2.2's rule (KIP-289), as kafka-python's.
        0.10.1 uses the group "" instead: its JoinGroup is refused with INVALID_GROUP_ID, while its
        commits under "" are taken, so consumers that never meant to share a group share offsets."""
        if self.coordinator is None:
            raise Errors.INVALID_GROUP_ID.exception(NO_GROUP_ID_MESSAGE)
        return self.coordinator

    # -- what to consume ----------------------------------------------------------------------------------

    def subscribe(
        self,
        topics: Iterable[str] | None = None,
        pattern: str | re.Pattern[str] | None = None,
        listener: ConsumerRebalanceListener | None = None,
    ) -> None:
        """Subscribe to ``topics``, or to every topic whose whole name matches ``pattern``; the group
        assigns the partitions, and ``listener`` hears of every rebalance. Replaces the previous
        subscription; an empty topic list unsubscribes."""
        self._acquire()
        try:
            coordinator = self._group_coordinator()
            if (topics is None) == (pattern is None):
                raise IllegalStateException(
                    "Subscribe to topics or to a pattern: give exactly one of the two"
                )
            self._iterator_records.clear()
            listener = NoOpConsumerRebalanceListener() if listener is None else listener
            if pattern is not None:
                if isinstance(pattern, str):
                    pattern = re.compile(pattern)
                if not isinstance(pattern, re.Pattern):
                    raise IllegalArgumentException(
                        f"Topic pattern to subscribe to must be a regular expression, not {pattern!r}"
                    )
                log.debug("Subscribed to pattern: %s", pattern.pattern)
                self.subscriptions.subscribe(pattern, listener)
                # Every topic's metadata, to match the pattern against.
                self.metadata.topics = set()
                coordinator.update_pattern_subscription(self.metadata.cluster)
                self.metadata.request_update()
                return
            if not isinstance(topics, str) and isinstance(topics, Iterable):
                topics = list(topics)
                if not topics:
                    self._unsubscribe()
                    return
            log.debug("Subscribed to topic(s): %s", topics)
            self.subscriptions.subscribe(topics, listener)
            self._set_metadata_topics(self.subscriptions.group_subscription())
        finally:
            self._release()

    def subscription(self) -> set[str]:
        """The topics subscribed to (those matching the pattern, for a pattern subscription)."""
        return set(self.subscriptions.subscription())

    def unsubscribe(self) -> None:
        """Drop the subscription or assignment, and leave the group."""
        self._acquire()
        try:
            self._unsubscribe()
        finally:
            self._release()

    def _unsubscribe(self) -> None:
        log.debug("Unsubscribed all topics or patterns and assigned partitions")
        self._iterator_records.clear()
        self.subscriptions.unsubscribe()
        if self.coordinator is not None:
            self.coordinator.maybe_leave_group()

    def assign(self, partitions: Iterable[TopicPartition]) -> None:
        """Read exactly these partitions, with no group management; an empty list unassigns."""
        self._acquire()
        try:
            partitions = (
                list(partitions)
                if isinstance(partitions, Iterable) and not isinstance(partitions, str)
                else partitions
            )
            if partitions == []:
                self._unsubscribe()
                return
            self._iterator_records.clear()
            self.subscriptions.assign_from_user(partitions)
            log.debug("Subscribed to partition(s): %s", sorted(self.subscriptions.assigned_partitions()))
            self._set_metadata_topics({tp[0] for tp in self.subscriptions.assigned_partitions()})
        finally:
            self._release()

    def assignment(self) -> set[TopicPartition]:
        """The partitions assigned to this consumer now."""
        return self.subscriptions.assigned_partitions()

    def _set_metadata_topics(self, topics: Iterable[str]) -> None:
        topics = set(topics)
        if self.metadata.topics != topics:
            self.metadata.topics = topics
            self.metadata.request_update()

    # -- polling ------------------------------------------------------------------------------------------

    # --8<-- [start:poll]
    def poll(
        self, timeout_ms: int = 0, max_records: int | None = None
    ) -> dict[TopicPartition, list[ConsumerRecord]]:
        """Records fetched since the last poll, by partition: at most ``max_records`` (by default
        ``max.poll.records``), waiting up to ``timeout_ms`` for some to arrive."""
        self._acquire()
        try:
            if not isinstance(timeout_ms, int | float) or timeout_ms < 0:
                raise IllegalArgumentException(f"Timeout must not be negative, not {timeout_ms!r}")
            if max_records is not None and (not isinstance(max_records, int) or max_records < 1):
                raise IllegalArgumentException(f"max_records must be a positive integer, not {max_records!r}")
            if self.subscriptions.has_no_subscription_or_user_assignment():
                raise IllegalStateException(
                    "Consumer is not subscribed to any topics or assigned any partitions"
                )
            start = self.time.milliseconds()
            remaining = int(timeout_ms)
            while True:
                records = self._poll_once(remaining, max_records)
                if records:
                    # Pipelining: the next fetches go out now, so the brokers read while the
                    # application handles these records.
                    self.fetcher.send_fetches()
                    self.client.poll_no_wakeup()
                    return records if self.interceptors is None else self.interceptors.on_consume(records)
                remaining = int(timeout_ms) - (self.time.milliseconds() - start)
                if remaining <= 0:
                    return {}
        finally:
            self._release()

    def _poll_once(
        self, timeout_ms: int, max_records: int | None
    ) -> dict[TopicPartition, list[ConsumerRecord]]:
        if self.coordinator is not None and not self.coordinator.poll(self.time.milliseconds(), timeout_ms):
            return {}  # the coordinator is still unknown after the timeout: nothing

        # Positions for the partitions that have none: a reset, a committed offset, or auto.offset.reset.
        if not self.subscriptions.has_all_fetch_positions():
            self._update_fetch_positions(self.subscriptions.missing_fetch_positions())

        # Records already here are returned at once.
        records = self._fetched_records(max_records)
        if records:
            return records

        # Fetch from every leader with no fetch pending, and wait, but never past the coordinator's
        # next task (a heartbeat check, an auto-commit).
        self.fetcher.send_fetches()
        now = self.time.milliseconds()
        poll_timeout = timeout_ms
        if self.coordinator is not None:
            poll_timeout = min(self.coordinator.time_to_next_poll(now), timeout_ms)
        # The heartbeat thread's poll may complete a fetch meanwhile: then do not block.
        self.client.poll(poll_timeout, now, _FetchesPending(self.fetcher))

        # A rebalance is due: return nothing, so the next poll rejoins before records of partitions
        # that may move are handed out.
        if self.coordinator is not None and self.coordinator.need_rejoin():
            return {}
        return self._fetched_records(max_records)

    # --8<-- [end:poll]

    def _fetched_records(self, max_records: int | None) -> dict[TopicPartition, list[ConsumerRecord]]:
        if max_records is None:
            return self.fetcher.fetched_records()
        configured = self.fetcher.max_poll_records
        self.fetcher.max_poll_records = max_records
        try:
            return self.fetcher.fetched_records()
        finally:
            self.fetcher.max_poll_records = configured

    def _update_fetch_positions(self, partitions: set[TopicPartition]) -> None:
        self._reset_offsets_if_needed(partitions)
        if not all(
            self.subscriptions.has_valid_position(tp)
            for tp in partitions
            if self.subscriptions.is_assigned(tp)
        ):
            if self.coordinator is not None:
                self.coordinator.refresh_committed_offsets_if_needed()
            self.fetcher.update_fetch_positions(partitions)

    def _reset_offsets_if_needed(self, partitions: set[TopicPartition]) -> None:
        """Run the resets the user asked for (``seek_to_beginning``/``seek_to_end``) before the
        committed offsets are fetched: Kafka 0.10.2's order. They need no committed offsets, and
        0.10.1, fetching those first, costs a consumer that seeks an OffsetFetch round trip to a
        coordinator it may not reach."""
        for tp in partitions:
            if self.subscriptions.is_offset_reset_needed(tp):
                self.fetcher.reset_offset(tp)

    def wakeup(self) -> None:
        """Make a blocking ``poll`` (in any thread) raise ``WakeupException``; the one call another
        thread may make."""
        self.client.wakeup()

    # -- iteration ------------------------------------------------------------------------------------

    def __iter__(self) -> KafkaConsumer:
        return self

    def __next__(self) -> ConsumerRecord:
        """The next record; ``StopIteration`` after ``consumer_timeout_ms`` without one. Records come
        from ``poll``, one poll's worth buffered here (a seek or a new assignment drops the buffer)."""
        if self._iterator_records:
            return self._iterator_records.popleft()
        start = self.time.milliseconds()
        while True:
            if self.consumer_timeout_ms is None:
                timeout = self.request_timeout_ms
            else:
                timeout = self.consumer_timeout_ms - (self.time.milliseconds() - start)
                if timeout <= 0:
                    raise StopIteration
            for records in self.poll(timeout).values():
                self._iterator_records.extend(records)
            if self._iterator_records:
                return self._iterator_records.popleft()

    # -- positions ----------------------------------------------------------------------------------------

    def seek(self, partition: TopicPartition, offset: int) -> None:
        """Fetch ``partition`` from ``offset`` on the next poll."""
        self._acquire()
        try:
            if not isinstance(offset, int) or isinstance(offset, bool):
                raise IllegalArgumentException(f"seek offset must be a whole number, not {offset!r}")
            if offset < 0:
                raise IllegalArgumentException(f"seek offset must not be a negative number, not {offset!r}")
            log.debug("Seeking to offset %d for partition %s", offset, partition)
            self._iterator_records.clear()
            self.subscriptions.seek(partition, offset)
        finally:
            self._release()

    def seek_to_beginning(self, *partitions: TopicPartition) -> None:
        """Fetch each partition (every assigned one if none is named) from its log start, found lazily
        on the next poll or ``position``."""
        self._seek_to(partitions, OffsetResetStrategy.EARLIEST)

    def seek_to_end(self, *partitions: TopicPartition) -> None:
        """Fetch each partition (every assigned one if none is named) from its log end."""
        self._seek_to(partitions, OffsetResetStrategy.LATEST)

    def _seek_to(self, partitions: tuple[TopicPartition, ...], strategy: OffsetResetStrategy) -> None:
        self._acquire()
        try:
            self._iterator_records.clear()
            for tp in partitions or self.subscriptions.assigned_partitions():
                log.debug("Seeking to %s offset of partition %s", strategy.value, tp)
                self.subscriptions.need_offset_reset(tp, strategy)
        finally:
            self._release()

    def position(self, partition: TopicPartition) -> int:
        """The offset of the next record to fetch from ``partition`` (found now if not known yet)."""
        self._acquire()
        try:
            if not self.subscriptions.is_assigned(partition):
                raise IllegalArgumentException(
                    "You can only check the position for partitions assigned to this consumer."
                )
            offset = self.subscriptions.position(partition)
            if offset is None:
                self._update_fetch_positions({partition})
                offset = self.subscriptions.position(partition)
            return offset
        finally:
            self._release()

    # -- committed offsets --------------------------------------------------------------------------------

    def committed(self, partition: TopicPartition, metadata: bool = False) -> int | OffsetAndMetadata | None:
        """The group's last committed offset of ``partition`` (the ``OffsetAndMetadata`` with
        ``metadata=True``), or None if it has none."""
        self._acquire()
        try:
            coordinator = self._group_coordinator()
            if self.subscriptions.is_assigned(partition):
                committed = self.subscriptions.committed(partition)
                if committed is None:
                    coordinator.refresh_committed_offsets_if_needed()
                    committed = self.subscriptions.committed(partition)
            else:
                committed = coordinator.fetch_committed_offsets({partition}).get(partition)
            if committed is None or metadata:
                return committed
            return committed.offset
        finally:
            self._release()

    def commit(self, offsets: Mapping[TopicPartition, OffsetAndMetadata | int] | None = None) -> None:
        """Commit ``offsets`` (by default every position this consumer holds) and wait for the answer,
        as kafka-python's ``commit`` (Kafka's ``commitSync``)."""
        self.commit_sync(offsets)

    def commit_sync(self, offsets: Mapping[TopicPartition, OffsetAndMetadata | int] | None = None) -> None:
        """Commit ``offsets`` (by default the positions) and wait; raises ``CommitFailedException``
        if the group has moved on without this member."""
        self._acquire()
        try:
            coordinator = self._group_coordinator()
            to_commit = self.subscriptions.all_consumed() if offsets is None else _offsets(offsets)
            coordinator.commit_offsets_sync(to_commit)
        finally:
            self._release()

    def commit_async(
        self, offsets: Mapping[TopicPartition, OffsetAndMetadata | int] | None = None, callback: Any = None
    ) -> None:
        """Send a commit and return at once; ``callback(offsets, exception)`` runs in a later poll or
        commit, in this thread."""
        self._acquire()
        try:
            coordinator = self._group_coordinator()
            to_commit = self.subscriptions.all_consumed() if offsets is None else _offsets(offsets)
            log.debug("Committing offsets: %s", to_commit)
            coordinator.commit_offsets_async(to_commit, callback)
        finally:
            self._release()

    # -- pausing ------------------------------------------------------------------------------------------

    def pause(self, *partitions: TopicPartition) -> None:
        """Stop fetching these assigned partitions until ``resume``; their positions stay."""
        self._acquire()
        try:
            for tp in partitions:
                log.debug("Pausing partition %s", tp)
                self.subscriptions.pause(tp)
        finally:
            self._release()

    def resume(self, *partitions: TopicPartition) -> None:
        self._acquire()
        try:
            for tp in partitions:
                log.debug("Resuming partition %s", tp)
                self.subscriptions.resume(tp)
        finally:
            self._release()

    def paused(self) -> set[TopicPartition]:
        return self.subscriptions.paused_partitions()

    # -- offsets by time, log start and end --------------------------------------------------------------

    def offsets_for_times(
        self, timestamps: Mapping[TopicPartition, int]
    ) -> dict[TopicPartition, OffsetAndTimestamp | None]:
        """For each partition, the earliest offset whose timestamp is at least the one given (and that
        timestamp), or None if every record is older."""
        self._acquire()
        try:
            return self.fetcher.get_offsets_by_times(dict(timestamps), self.request_timeout_ms)
        finally:
            self._release()

    def beginning_offsets(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        """Each partition's log start offset."""
        self._acquire()
        try:
            return self.fetcher.beginning_offsets(list(partitions), self.request_timeout_ms)
        finally:
            self._release()

    def end_offsets(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        """Each partition's log end offset (the high watermark: the offset the next record will get)."""
        self._acquire()
        try:
            return self.fetcher.end_offsets(list(partitions), self.request_timeout_ms)
        finally:
            self._release()

    # -- the cluster's topics ---------------------------------------------------------------------------

    def topics(self) -> set[str]:
        """Every topic in the cluster (asked of a broker now; the consumer's own metadata is unchanged)."""
        self._acquire()
        try:
            return self._all_topic_metadata().topics()
        finally:
            self._release()

    def partitions_for(self, topic: str, timeout_ms: int | None = None) -> list[PartitionInfo]:
        """The partitions of ``topic``, with their leaders and replicas (Kafka's ``partitionsFor``),
        waiting for a broker's answer up to ``timeout_ms`` (``request.timeout.ms`` by default)."""
        self._acquire()
        try:
            partitions = self.metadata.cluster.partitions_for_topic(topic)
            if not partitions:
                partitions = self._all_topic_metadata(timeout_ms).partitions_for_topic(topic)
            return partitions
        finally:
            self._release()

    def partitions_for_topic(self, topic: str, timeout_ms: int | None = None) -> set[int] | None:
        """The partition numbers of ``topic``, or None if it does not exist (kafka-python's shape)."""
        partitions = self.partitions_for(topic, timeout_ms)
        return {p.partition for p in partitions} if partitions else None

    def _all_topic_metadata(self, timeout_ms: int | None = None) -> Cluster:
        timeout_ms = self.request_timeout_ms if timeout_ms is None else timeout_ms
        start = self.time.milliseconds()
        while True:
            remaining = timeout_ms - (self.time.milliseconds() - start)
            if remaining <= 0:
                raise TimeoutException(f"Timeout expired while fetching topic metadata ({timeout_ms} ms)")
            node = self.client.least_loaded_node()
            if node is None:
                self.client.await_metadata_update(min(remaining, self.config["retry.backoff.ms"]))
                continue
            future = self.client.send(node, ApiKeys.METADATA, METADATA_VERSION, {"topics": None})
            self.client.poll_future(future, remaining)
            if future.succeeded():
                return Cluster.from_metadata_response(future.value().body)
            if future.is_done() and not future.is_retriable():
                raise future.exception()

    # -- metrics ------------------------------------------------------------------------------------------

    def metrics(self) -> dict[str, float]:
        """A snapshot of Kafka's consumer metrics by their names: the fetch manager's, and with a
        group the coordinator's. Averages and maxima cover the consumer's life (Kafka's cover the
        last 30 s or so), and what Kafka gives as rates are counts (``fetch-total``, not ``fetch-rate``).
        ``records-lag-max`` is the largest
        lag (high watermark minus position) of an assigned partition now."""
        f = self.fetcher
        lags = [
            lag
            for tp in self.subscriptions.assigned_partitions()
            if (lag := self.subscriptions.partition_lag(tp)) is not None
        ]
        metrics: dict[str, float] = {
            "fetch-total": f.fetch_latency.count,
            "fetch-latency-avg": f.fetch_latency.avg,
            "fetch-latency-max": f.fetch_latency.max,
            "fetch-throttle-time-avg": f.fetch_throttle_time.avg,
            "fetch-throttle-time-max": f.fetch_throttle_time.max,
            "fetch-size-avg": f.bytes_fetched.avg,
            "fetch-size-max": f.bytes_fetched.max,
            "bytes-consumed-total": f.bytes_fetched.total,
            "records-consumed-total": f.records_fetched.total,
            "records-lag-max": max(lags, default=0),
            "assigned-partitions": len(self.subscriptions.assigned_partitions()),
        }
        c = self.coordinator
        if c is not None:
            last_heartbeat_ms = c.heartbeat.last_heartbeat_send
            metrics |= {
                "commit-total": c.commit_latency.count,
                "commit-latency-avg": c.commit_latency.avg,
                "commit-latency-max": c.commit_latency.max,
                "join-total": c.join_latency.count,
                "join-time-avg": c.join_latency.avg,
                "join-time-max": c.join_latency.max,
                "sync-total": c.sync_latency.count,
                "sync-time-avg": c.sync_latency.avg,
                "sync-time-max": c.sync_latency.max,
                "heartbeat-total": c.heartbeat_latency.count,
                "heartbeat-response-time-max": c.heartbeat_latency.max,
                "last-heartbeat-seconds-ago": (
                    (self.time.milliseconds() - last_heartbeat_ms) / 1000 if last_heartbeat_ms else -1.0
                ),
            }
        return metrics

    # -- closing ------------------------------------------------------------------------------------------

    def close(self, autocommit: bool = True, timeout_ms: int = DEFAULT_CLOSE_TIMEOUT_MS) -> None:
        """Commit the positions (with auto-commit on, unless ``autocommit=False``), leave the group,
        stop the heartbeat thread and close the connections. A second close does nothing.

        ``timeout_ms`` bounds the commit and the search for the coordinator: Kafka 0.10.2's
        ``close(timeout)`` (KIP-102); 0.10.1's close waits for the coordinator for as long as it
        takes, so a consumer of a cluster that is gone never closes."""
        if self._closed:
            return
        self._acquire()
        try:
            log.debug("Closing the Kafka consumer %s.", self.client_id)
            if self.coordinator is not None:
                if not autocommit:
                    self.coordinator.auto_commit_enabled = False
                self.coordinator.close(timeout_ms)
            if self.interceptors is not None:
                self.interceptors.close()
            self.client.close()
            self._closed = True
            log.debug("The Kafka consumer %s has been closed.", self.client_id)
        finally:
            self._release()

    def __enter__(self) -> KafkaConsumer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _FetchesPending:
    """The poll condition of ``_poll_once``: block only while no fetch has completed."""

    def __init__(self, fetcher: Fetcher) -> None:
        self.fetcher = fetcher

    def should_block(self) -> bool:
        return not self.fetcher.has_completed_fetches()


def _offsets(
    offsets: Mapping[TopicPartition, OffsetAndMetadata | int],
) -> dict[TopicPartition, OffsetAndMetadata]:
    """Offsets to commit, each an ``OffsetAndMetadata`` or a plain offset; a bad one says which."""
    if not isinstance(offsets, Mapping):
        raise IllegalArgumentException(f"Offsets to commit must map partitions to offsets, not {offsets!r}")
    result = {}
    for tp, offset in offsets.items():
        if isinstance(offset, int) and not isinstance(offset, bool):
            offset = OffsetAndMetadata(offset)
        if not isinstance(offset, OffsetAndMetadata) or offset.offset < 0:
            raise IllegalArgumentException(
                f"The offset to commit for partition {tp} must be a non-negative offset or an OffsetAndMetadata, not {offset!r}"
            )
        result[TopicPartition(*tp)] = offset
    return result
