"""The consumer's fetcher: fetch requests to the partitions' leaders, and their records handed to poll.

Mirrors: org.apache.kafka.clients.consumer.internals.Fetcher, with its CompletedFetch and
         PartitionRecords
         (clients/src/main/java/org/apache/kafka/clients/consumer/internals/Fetcher.java, Kafka 0.10.1)
Book:    chapter 4, 4.1.2 (resetting positions before the first fetch), 4.1.4 (the consumer fetching
         messages), 4.1.5 (the consumer getting records)
Differs: Fetch v5 and ListOffsets v1 (the versions kafka_lite's broker serves; 0.10.1 sends Fetch v3),
         so records carry 0.11's record batches and headers, each batch's CRC is checked (0.11's place
         for ``check.crcs``), and a fetch that fails after other records were drained is put back
         to raise on the next call (``_put_back_to_raise_later``). A v2 batch's records are read by the
         codec ``common/record/codec.py`` chooses: the reference ``DefaultRecordBatch`` or its
         compiled twin. ``update_fetch_positions`` and the high watermark kept per partition are behind
         named helpers that say which Kafka they follow. Kafka's ``FetchManagerMetrics`` are three
         plain ``Sensor`` fields, without the per-topic ones. ``isolation.level`` and the skipping of
         control batches and aborted transactions are 0.11's (``AbortedTransactions``), read from
         the parsed batches rather than record by record.
Labs:    lab 8 (``_parse_completed_fetch``, ``_append``)

The fetcher keeps a queue of completed fetches, one per partition of each fetch response, and hands
their records out a few at a time:

- ``send_fetches`` builds one Fetch request per leader (``_create_fetch_requests``, 0.10.1's
  ``createFetchRequests``) for the fetchable partitions (assigned, not paused, with a position) that
  have nothing buffered: no completed fetch in the queue and no undrained ``next_in_line_records``.
  A node with a request still in flight gets no new one. An unknown leader asks for a metadata
  update. The consumer calls this again right after ``fetched_records`` returned records, so the
  next fetch is in flight while the application works: that is 0.10.1's pipelining, and the
  buffered partition rule is what keeps one partition from having two fetches' records at once.
- Kafka's rule has a cost at the end of a partition: a fetch for partitions that have caught up
  finds nothing new, so the broker holds it for ``fetch.max.wait.ms``, and the node's other
  partitions, buffered now, wait behind it for their next fetch. ``fetch_hold_back_caught_up``
  (ours, off by default) holds such a fetch back (``_only_caught_up_beside_buffered``).
- ``fetched_records`` drains up to ``max.poll.records`` records over the partitions, parsing a
  completed fetch into ``PartitionRecords`` when the one in line is drained. Records are returned only
  if the fetch's offset is still the partition's position (a seek or a reset since the fetch was sent
  makes them stale, and they are dropped), and the position moves past the last record returned.
- A partition's error decides what happens: OFFSET_OUT_OF_RANGE resets the position by
  ``auto.offset.reset`` or, with ``none``, raises ``OffsetOutOfRangeException``;
  NOT_LEADER_FOR_PARTITION and UNKNOWN_TOPIC_OR_PARTITION ask for a metadata update (the leader moved).
  A record larger than ``max.partition.fetch.bytes`` still comes back whole (KIP-74, as from
  0.10.1), so there is no "record too large" error.
- ``update_fetch_positions`` gives each partition without a position its committed offset, or resets
  it with a ListOffsets request (-2 earliest, -1 latest); ``get_offsets_by_times`` answers
  ``offsets_for_times``, ``beginning_offsets`` and ``end_offsets`` the same way.

Transactions (Kafka 0.11): a transaction marker (a control batch) is never handed out, and the
position moves past it. A read_committed consumer asks for ``isolation_level`` 1: the broker
returns records only up to the last stable offset, with the transactions aborted in that range,
and the fetcher drops their batches (``AbortedTransactions``).

A compressed batch is fetched whole, so a fetch from an offset inside it returns the batch's earlier
records too; the fetcher skips every record below the fetch offset.
"""

from __future__ import annotations

import heapq
import logging
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kafka_lite.clients.metadata import Metadata, Node
from kafka_lite.clients.network_client import ClientResponse
from kafka_lite.common.errors import (
    CorruptRecordException,
    Errors,
    IllegalArgumentException,
    IllegalStateException,
    InvalidMetadataException,
    KafkaException,
    TimeoutException,
    TopicAuthorizationException,
)
from kafka_lite.common.metrics import Sensor
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.fetch_request import (
    CONSUMER_REPLICA_ID,
    FETCH_VERSION,
    READ_UNCOMMITTED,
    fetch_request_body,
)
from kafka_lite.common.record import codec
from kafka_lite.common.record.constants import MAGIC_VALUE_V2
from kafka_lite.common.record.default_record import Header
from kafka_lite.common.record.end_transaction_marker import ControlRecordType
from kafka_lite.common.record.memory_records import MemoryRecords
from kafka_lite.common.time import Time
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.common.utils import LONG_MAX
from kafka_lite.consumer.consumer_record import (
    NULL_SIZE,
    UNKNOWN_LEADER_EPOCH,
    ConsumerRecord,
    serialized_header_size,
)
from kafka_lite.consumer.deserialization import Deserializer, SerializationException, check_deserializer
from kafka_lite.consumer.internals.consumer_network_client import ConsumerNetworkClient
from kafka_lite.consumer.internals.request_future import (
    RequestFuture,
    RequestFutureAdapter,
    RequestFutureListener,
    StaleMetadataException,
)
from kafka_lite.consumer.internals.subscription_state import SubscriptionState
from kafka_lite.consumer.no_offset_for_partition_exception import NoOffsetForPartitionException
from kafka_lite.consumer.offset_and_timestamp import OffsetAndTimestamp
from kafka_lite.consumer.offset_out_of_range_exception import OffsetOutOfRangeException
from kafka_lite.consumer.offset_reset_strategy import OffsetResetStrategy

log = logging.getLogger(__name__)

LIST_OFFSETS_VERSION = 1
# ListOffsets v2 (Kafka 0.11) carries the isolation level: read_committed's latest offset is the last
# stable offset, not the high watermark. Kafka 0.11's Fetcher asks v2 only for read_committed.
LIST_OFFSETS_READ_COMMITTED_VERSION = 2
# Fetch v4's isolation_level (Kafka's IsolationLevel), by the consumer's isolation.level setting.
READ_COMMITTED = 1
ISOLATION_LEVELS = {"read_uncommitted": READ_UNCOMMITTED, "read_committed": READ_COMMITTED}
EARLIEST_TIMESTAMP = -2  # ListOffsetRequest.EARLIEST_TIMESTAMP
LATEST_TIMESTAMP = -1  # ListOffsetRequest.LATEST_TIMESTAMP
UNKNOWN_OFFSET = -1


def _tp_str(tp: TopicPartition) -> str:
    return f"{tp[0]}-{tp[1]}"


@dataclass
class CompletedFetch:
    """One partition's part of a fetch response, queued until ``fetched_records`` parses it."""

    partition: TopicPartition
    fetched_offset: int  # the offset the request asked for
    error_code: int
    high_watermark: int
    records: MemoryRecords
    # Fetch v4+: the transactions aborted in the range returned, as (producer_id, first_offset)
    # dicts; only a read_committed fetch gets them.
    aborted_transactions: list[dict[str, int]] | None = None


class PartitionRecords:
    """A parsed completed fetch: its records, handed out ``take(n)`` at a time.

    ``end_offset``, when given, is where the position goes once every record is handed out: past
    the control batches and aborted transactions read after the last record (Kafka 0.11's
    ``nextFetchOffset``). Such a fetch may have no records at all, and still moves the position."""

    def __init__(
        self,
        fetch_offset: int,
        partition: TopicPartition,
        records: list[ConsumerRecord],
        end_offset: int | None = None,
    ) -> None:
        self.fetch_offset = fetch_offset  # the offset of the next record to hand out
        self.partition = partition
        self._records = records
        self._next = 0
        self._end_offset = end_offset
        self._drained = False

    def is_drained(self) -> bool:
        return self._drained

    def drain(self) -> None:
        self._next = len(self._records)
        self._drained = True

    def take(self, n: int) -> list[ConsumerRecord]:
        taken = self._records[self._next : self._next + n]
        self._next += len(taken)
        if self._next < len(self._records):
            # Kafka's take() moves the fetch offset to the next record left, so the position check
            # on the next take compares against where the consumer now stands.
            self.fetch_offset = self._records[self._next].offset
        else:
            self._drained = True
            if taken:
                self.fetch_offset = taken[-1].offset + 1
            if self._end_offset is not None:
                self.fetch_offset = max(self.fetch_offset, self._end_offset)
        return taken


# --8<-- [start:aborted_transactions]
class AbortedTransactions:
    """A read_committed fetch's aborted transactions, met in offset order (Kafka 0.11's handling in
    ``PartitionRecords.nextFetchedRecord``).

    The broker lists each transaction aborted in the range it returned as (producer id, first
    offset). Reading the batches in order: every transaction that began at or before a batch's
    last offset has begun (a min-heap by first offset hands them out), and its producer is aborting
    until its ABORT marker; a transactional batch of an aborting producer is skipped. Commit markers
    and committed batches pass through: their producers are not in the set.
    """

    def __init__(self, partition: TopicPartition, aborted_transactions: list[dict[str, int]] | None) -> None:
        self.partition = partition
        self._heap = [(t["first_offset"], t["producer_id"]) for t in aborted_transactions or ()]
        heapq.heapify(self._heap)
        self.aborted_producer_ids: set[int] = set()

    def skips(self, batch: Any) -> bool:
        """Whether ``batch`` (magic 2) belongs to an aborted transaction; an ABORT marker ends its
        producer's aborted transaction (the marker itself is a control batch, skipped by the caller)."""
        if batch.producer_id < 0:
            return False  # not from an idempotent or transactional producer
        self._consume_aborted_transactions_up_to(batch.last_offset)
        if batch.is_control_batch:
            if self._is_abort_marker(batch):
                self.aborted_producer_ids.discard(batch.producer_id)
            return False
        if batch.is_transactional and batch.producer_id in self.aborted_producer_ids:
            log.debug("Skipping aborted record batch from partition %s with producerId %d and offsets %d to %d",
                      _tp_str(self.partition), batch.producer_id, batch.base_offset, batch.last_offset)  # fmt: skip
            return True
        return False

    def _consume_aborted_transactions_up_to(self, offset: int) -> None:
        while self._heap and self._heap[0][0] <= offset:
            self.aborted_producer_ids.add(heapq.heappop(self._heap)[1])

    def _is_abort_marker(self, batch: Any) -> bool:
        first = next(iter(codec.records(batch)), None)
        if first is None:
            raise CorruptRecordException(
                f"Invalid batch for partition {_tp_str(self.partition)} at offset {batch.base_offset} with "
                "control sequence set, but no records"
            )
        return ControlRecordType.parse(first.key) is ControlRecordType.ABORT


# --8<-- [end:aborted_transactions]


class Fetcher:
    def __init__(
        self,
        client: ConsumerNetworkClient,
        min_bytes: int,
        max_wait_ms: int,
        max_bytes: int,
        max_partition_fetch_bytes: int,
        max_poll_records: int,
        key_deserializer: object,
        value_deserializer: object,
        metadata: Metadata,
        subscriptions: SubscriptionState,
        time: Time,
        retry_backoff_ms: int,
        check_crcs: bool = True,
        hold_back_caught_up: bool = False,
        isolation_level: str = "read_uncommitted",
    ) -> None:
        for name, value, least in (
            ("fetch.min.bytes", min_bytes, 0),
            ("fetch.max.wait.ms", max_wait_ms, 0),
            ("fetch.max.bytes", max_bytes, 0),
            ("max.partition.fetch.bytes", max_partition_fetch_bytes, 0),
            ("max.poll.records", max_poll_records, 1),
        ):
            if not isinstance(value, int) or value < least:
                raise IllegalArgumentException(
                    f"{name} must be an integer of at least {least}, not {value!r}"
                )
        self.client = client
        self.min_bytes = min_bytes
        self.max_wait_ms = max_wait_ms
        self.max_bytes = max_bytes
        self.fetch_size = max_partition_fetch_bytes
        self.max_poll_records = max_poll_records
        self.key_deserializer: Deserializer | None = check_deserializer("key_deserializer", key_deserializer)
        self.value_deserializer: Deserializer | None = check_deserializer(
            "value_deserializer", value_deserializer
        )
        self.metadata = metadata
        self.subscriptions = subscriptions
        self.time = time
        self.retry_backoff_ms = retry_backoff_ms
        self.check_crcs = check_crcs  # check.crcs: verify each batch's CRC before reading its records
        if isolation_level not in ISOLATION_LEVELS:
            raise IllegalArgumentException(
                f"isolation.level must be one of {sorted(ISOLATION_LEVELS)}, not {isolation_level!r}"
            )
        self.isolation_level = ISOLATION_LEVELS[isolation_level]
        # fetch.hold.back.caught.up, ours and off by default: see _only_caught_up_beside_buffered.
        self.hold_back_caught_up = hold_back_caught_up
        self.completed_fetches: deque[CompletedFetch] = deque()
        self.next_in_line_records: PartitionRecords | None = None
        # Kafka's FetchManagerMetrics: each fetch's latency and bytes, and the records handed out.
        self.fetch_latency = Sensor("fetch-latency")
        self.bytes_fetched = Sensor("bytes-fetched")
        self.records_fetched = Sensor("records-fetched")
        self.fetch_throttle_time = Sensor("fetch-throttle-time")  # responses held for the quotas (10.1)

    # -- fetching ----------------------------------------------------------------------------------------

    # --8<-- [start:send_fetches]
    def send_fetches(self) -> int:
        """Send a Fetch request to every leader of fetchable partitions with no request pending;
        the number of requests sent."""
        requests = self._create_fetch_requests()
        for node, (body, offsets) in requests.items():
            future = self.client.send(node, ApiKeys.FETCH, FETCH_VERSION, body)
            future.add_listener(_FetchResponseListener(self, offsets))
        return len(requests)

    # --8<-- [end:send_fetches]

    # --8<-- [start:create_fetch_requests]
    def _fetchable_partitions(self) -> list[TopicPartition]:
        """The assigned partitions that can be fetched, less those with records still buffered: a
        completed fetch in the queue, or the undrained ``next_in_line_records``. Their next fetch
        waits until the application has had the records already here."""
        fetchable = self.subscriptions.fetchable_partitions()
        buffered = self._buffered_partitions()
        return [tp for tp in fetchable if tp not in buffered]

    def _buffered_partitions(self) -> set[TopicPartition]:
        buffered = {completed.partition for completed in self.completed_fetches}
        if self.next_in_line_records is not None and not self.next_in_line_records.is_drained():
            buffered.add(self.next_in_line_records.partition)
        return buffered

    def _create_fetch_requests(self) -> dict[Node, tuple[dict[str, Any], dict[TopicPartition, int]]]:
        """One Fetch request per leader, for its fetchable partitions, if it has no request in flight."""
        by_node: dict[Node, dict[TopicPartition, int]] = {}
        for tp in self._fetchable_partitions():
            node = self.metadata.cluster.leader_for(*tp)
            if node is None:
                self.metadata.request_update()
            elif self.client.pending_request_count(node) == 0:
                # One fetch per node at a time: a node with a request in flight gets none now.
                position = self.subscriptions.position(tp)
                assert position is not None  # fetchable partitions have one
                by_node.setdefault(node, {})[tp] = position
        requests = {}
        for node, offsets in by_node.items():
            if self.hold_back_caught_up and self._only_caught_up_beside_buffered(node, offsets):
                continue
            body = fetch_request_body(
                CONSUMER_REPLICA_ID,
                max_wait_ms=self.max_wait_ms,
                min_bytes=self.min_bytes,
                max_bytes=self.max_bytes,
                offsets=offsets,
                partition_max_bytes=self.fetch_size,
                isolation_level=self.isolation_level,
            )
            requests[node] = (body, offsets)
        return requests

    # --8<-- [end:create_fetch_requests]

    # --8<-- [start:hold_back]
    def _only_caught_up_beside_buffered(self, node: Node, offsets: dict[TopicPartition, int]) -> bool:
        """Whether a fetch to ``node`` would ask only for partitions that have caught up (position at
        the high watermark the last response gave) while other partitions it leads still have
        records buffered here. Not Kafka's rule: only with ``fetch_hold_back_caught_up``.

        Kafka sends such a fetch. It finds nothing new, so the broker holds it for
        ``fetch.max.wait.ms``; and with one fetch in flight per node, the buffered partitions' next
        fetch waits behind it once the application has read their records. Held back, the
        caught-up partitions join that next fetch instead."""
        for tp in offsets:
            lag = self.subscriptions.partition_lag(tp)
            if lag is None or lag > 0:
                return False  # this one may have records to fetch: send
        return any(self.metadata.cluster.leader_for(*tp) == node for tp in self._buffered_partitions())

    # --8<-- [end:hold_back]

    def _on_fetch_response(self, response: ClientResponse, offsets: dict[TopicPartition, int]) -> None:
        body = response.body or {}
        self.fetch_latency.record(response.request_latency_ms)
        self.fetch_throttle_time.record(body.get("throttle_time_ms", 0))  # Fetch v0 has none
        fetch_bytes = 0
        for topic in body.get("responses", ()):
            for partition_response in topic["partition_responses"]:
                header = partition_response["partition_header"]
                tp = TopicPartition(topic["topic"], header["partition"])
                fetched_offset = offsets.get(tp)
                if fetched_offset is None:
                    continue  # a partition the request did not ask for
                self._update_high_watermark(
                    tp, Errors.for_code(header["error_code"]), header["high_watermark"]
                )
                raw = partition_response["record_set"]
                fetch_bytes += 0 if raw is None else len(raw)
                self.completed_fetches.append(
                    CompletedFetch(
                        tp,
                        fetched_offset,
                        header["error_code"],
                        header["high_watermark"],
                        MemoryRecords(b"" if raw is None else raw),
                        header.get("aborted_transactions"),
                    )
                )
        self.bytes_fetched.record(fetch_bytes)

    def _update_high_watermark(self, tp: TopicPartition, error: Errors, high_watermark: int) -> None:
        """Keep the high watermark a partition's response gave: Kafka 0.10.2's, which keeps it in the
        partition's state for ``records-lag-max`` (``KafkaConsumer.metrics``); 0.10.1 reads it only
        into a fetch metric. Kept as the response arrives (0.10.2 sets it while parsing the
        partition's records: the same value, a moment later), outside the parsing lab 8 asks for."""
        if error is Errors.NONE and high_watermark >= 0 and self.subscriptions.is_assigned(tp):
            self.subscriptions.update_high_watermark(tp, high_watermark)

    def has_completed_fetches(self) -> bool:
        return bool(self.completed_fetches)

    # -- handing out records --------------------------------------------------------------------------

    # --8<-- [start:fetched_records]
    def fetched_records(self) -> dict[TopicPartition, list[ConsumerRecord]]:
        """Up to ``max.poll.records`` records from the completed fetches, by partition; positions move
        past what is returned."""
        drained: dict[TopicPartition, list[ConsumerRecord]] = {}
        records_remaining = self.max_poll_records
        while records_remaining > 0:
            if self.next_in_line_records is None or self.next_in_line_records.is_drained():
                if not self.completed_fetches:
                    break
                completed = self.completed_fetches.popleft()
                try:
                    self.next_in_line_records = self._parse_completed_fetch(completed)
                except KafkaException:
                    if not self._put_back_to_raise_later(completed, drained):
                        raise
                    break
            else:
                records_remaining -= self._append(drained, self.next_in_line_records, records_remaining)
        if drained:
            self.records_fetched.record(self.max_poll_records - records_remaining)
        return drained

    # --8<-- [end:fetched_records]

    def _put_back_to_raise_later(
        self, completed: CompletedFetch, drained: dict[TopicPartition, list[ConsumerRecord]]
    ) -> bool:
        """When a completed fetch fails (a deserializer, a corrupt batch) after other records were
        drained in this call, put it back first in the queue, so those records are handed out and
        the failure comes on the next call: Kafka 0.11's rule. 0.10.1 raises at once, and the
        drained records, their positions already moved past, are lost. False when nothing was
        drained: raise now."""
        if not drained:
            return False
        self.completed_fetches.appendleft(completed)
        return True

    # --8<-- [start:append]
    def _append(
        self,
        drained: dict[TopicPartition, list[ConsumerRecord]],
        partition_records: PartitionRecords,
        max_records: int,
    ) -> int:
        """Move up to ``max_records`` records of ``partition_records`` into ``drained`` and the
        partition's position past the last of them; the number moved. Records of a partition no
        longer assigned or fetchable, or whose fetch offset is no longer the position (a seek since
        the fetch), are dropped: the whole ``PartitionRecords`` is drained and 0 returned."""
        # BEGIN SOLUTION
        tp = partition_records.partition
        if not self.subscriptions.is_assigned(tp):
            log.debug(
                "Not returning fetched records for partition %s since it is no longer assigned", _tp_str(tp)
            )
        elif not self.subscriptions.is_fetchable(tp):
            # Paused, or its position dropped for a reset, since the fetch was sent.
            log.debug(
                "Not returning fetched records for assigned partition %s since it is no longer fetchable",
                _tp_str(tp),
            )
        else:
            position = self.subscriptions.position(tp)
            if partition_records.fetch_offset == position:
                part = partition_records.take(max_records)
                # Past the records taken, and past any control batch or aborted transaction that
                # came after them: the position is where the next record to hand out is.
                self.subscriptions.position(tp, partition_records.fetch_offset)
                if not part:
                    return 0
                drained.setdefault(tp, []).extend(part)
                return len(part)
            log.debug(
                "Ignoring fetched records for %s at offset %d since the current position is %s",
                _tp_str(tp), partition_records.fetch_offset, position,
            )  # fmt: skip
        partition_records.drain()
        return 0
        # END SOLUTION

    # --8<-- [end:append]

    # --8<-- [start:parse_completed_fetch]
    def _parse_completed_fetch(self, completed: CompletedFetch) -> PartitionRecords | None:
        """One partition's part of a fetch response, as records to hand out, or None when there are
        none to hand out: the partition is no longer fetchable, the fetch is stale (its offset is no
        longer the position), nothing at or past the position came back, or the partition's error
        code says what to do instead (refresh the metadata, reset the position, raise)."""
        # BEGIN SOLUTION
        tp = completed.partition
        fetch_offset = completed.fetched_offset
        error = Errors.for_code(completed.error_code)
        parsed: list[ConsumerRecord] = []
        end_offset = None  # past the last batch read, when batches were skipped after the last record
        if not self.subscriptions.is_fetchable(tp):
            # a rebalance or a pause while the fetch was in flight
            log.debug(
                "Ignoring fetched records for partition %s since it is no longer fetchable", _tp_str(tp)
            )
        elif error is Errors.NONE:
            position = self.subscriptions.position(tp)
            if position is None or position != fetch_offset:
                log.debug(
                    "Discarding stale fetch response for partition %s since its offset %d does not "
                    "match the expected offset %s", _tp_str(tp), fetch_offset, position,
                )  # fmt: skip
                return None
            aborted = (
                AbortedTransactions(tp, completed.aborted_transactions)
                if self.isolation_level == READ_COMMITTED
                else None
            )
            for batch in completed.records.batches(allow_partial_tail=True):
                if batch.next_offset <= position:
                    continue  # a whole batch below the position: not even decompressed
                if self.check_crcs:
                    try:
                        batch.ensure_valid()
                    except CorruptRecordException as e:
                        raise KafkaException(
                            f"Record batch for partition {_tp_str(tp)} at offset {batch.base_offset} "
                            f"is invalid, cause: {e}"
                        ) from e
                if batch.magic >= MAGIC_VALUE_V2 and aborted is not None and aborted.skips(batch):
                    end_offset = batch.next_offset
                    continue
                if batch.magic >= MAGIC_VALUE_V2 and batch.is_control_batch:
                    # A transaction marker: never handed to the application; the position moves past it.
                    end_offset = batch.next_offset
                    continue
                end_offset = None
                timestamp_type = batch.timestamp_type
                # The reference DefaultRecordBatch, or its compiled twin: see common/record/codec.py.
                for record in codec.records(batch):
                    # A compressed batch is returned whole: skip its records below the position.
                    if record.offset >= position:
                        parsed.append(self._parse_record(tp, record, timestamp_type))
        elif error is Errors.NOT_LEADER_FOR_PARTITION or error is Errors.UNKNOWN_TOPIC_OR_PARTITION:
            self.metadata.request_update()
        elif error is Errors.OFFSET_OUT_OF_RANGE:
            if fetch_offset != self.subscriptions.position(tp):
                log.debug(
                    "Discarding stale fetch response for partition %s since the fetched offset %d does not match the current offset",
                    _tp_str(tp),
                    fetch_offset,
                )
            elif self.subscriptions.has_default_offset_reset_policy():
                log.info(
                    "Fetch offset %d is out of range for partition %s, resetting offset",
                    fetch_offset,
                    _tp_str(tp),
                )
                self.subscriptions.need_offset_reset(tp)
            else:
                raise OffsetOutOfRangeException({tp: fetch_offset})
        elif error is Errors.TOPIC_AUTHORIZATION_FAILED:
            raise TopicAuthorizationException(f"Not authorized to access topics: [{tp[0]}]")
        elif error is Errors.UNKNOWN:
            log.warning("Unknown error fetching data for topic-partition %s", _tp_str(tp))
        else:
            raise IllegalStateException(f"Unexpected error code {error.code} while fetching data")
        # A partition that kept records, or answered an error, goes last in the fetch order, so that
        # one busy partition does not keep the others out of size-limited responses (a stale answer
        # returned above, and an error that raised never gets here).
        if parsed or error is not Errors.NONE:
            self.subscriptions.move_partition_to_end(tp)
        if error is Errors.NONE and end_offset is not None:
            return PartitionRecords(fetch_offset, tp, parsed, end_offset)
        return PartitionRecords(fetch_offset, tp, parsed) if parsed else None
        # END SOLUTION

    # --8<-- [end:parse_completed_fetch]

    def _parse_record(self, tp: TopicPartition, record: Any, timestamp_type: Any) -> ConsumerRecord:
        try:
            key = record.key
            if key is not None and self.key_deserializer is not None:
                key = self.key_deserializer(key)
            value = record.value
            if value is not None and self.value_deserializer is not None:
                value = self.value_deserializer(value)
        except Exception as e:
            raise SerializationException(
                f"Error deserializing key/value for partition {_tp_str(tp)} at offset {record.offset}. "
                f"If needed, please seek past the record to continue consumption. ({type(e).__name__}: {e})"
            ) from e
        headers = tuple(Header(k, v) for k, v in record.headers) if record.headers else ()
        return ConsumerRecord(
            tp[0],
            tp[1],
            UNKNOWN_LEADER_EPOCH,
            record.offset,
            record.timestamp,
            timestamp_type,
            key,
            value,
            headers,
            getattr(record, "checksum", None),
            NULL_SIZE if record.key is None else len(record.key),
            NULL_SIZE if record.value is None else len(record.value),
            serialized_header_size(headers),
        )

    # -- positions -------------------------------------------------------------------------------------

    # --8<-- [start:update_fetch_positions]
    def update_fetch_positions(self, partitions: Iterable[TopicPartition]) -> None:
        """Give each assigned partition without a position one: a pending reset, else the committed
        offset, else a reset by ``auto.offset.reset``."""
        for tp in partitions:
            if not self.subscriptions.is_assigned(tp) or self._has_position(tp):
                continue
            if self.subscriptions.is_offset_reset_needed(tp):
                self.reset_offset(tp)
            elif self.subscriptions.committed(tp) is None:
                self.subscriptions.need_offset_reset(tp)
                self.reset_offset(tp)
            else:
                committed = self.subscriptions.committed(tp)
                assert committed is not None
                log.debug(
                    "Resetting offset for partition %s to the committed offset %d",
                    _tp_str(tp),
                    committed.offset,
                )
                self.subscriptions.seek(tp, committed.offset)

    # --8<-- [end:update_fetch_positions]

    def _has_position(self, tp: TopicPartition) -> bool:
        """Whether ``tp`` keeps its position: Kafka 0.10.2's test (a valid position, paused or not).
        0.10.1 skips only a fetchable partition. The consumer runs the resets the user asked for
        before this (0.10.2's order, ``KafkaConsumer._reset_offsets_if_needed``), so a paused
        partition that a reset has just placed would, by 0.10.1's test, go back to its committed
        offset."""
        return self.subscriptions.has_valid_position(tp)

    def reset_offset(self, tp: TopicPartition) -> None:
        """Seek ``tp`` to its log start or end, as its reset strategy says (a ListOffsets request)."""
        strategy = self.subscriptions.reset_strategy(tp)
        if strategy is OffsetResetStrategy.EARLIEST:
            timestamp = EARLIEST_TIMESTAMP
        elif strategy is OffsetResetStrategy.LATEST:
            timestamp = LATEST_TIMESTAMP
        else:
            raise NoOffsetForPartitionException(tp)
        log.debug("Resetting offset for partition %s to %s offset.", _tp_str(tp), strategy.value)
        found = self._get_offsets_by_times({tp: timestamp}, LONG_MAX)[tp]
        # The partition may have been unassigned while the request was out.
        if self.subscriptions.is_assigned(tp) and found is not None:
            self.subscriptions.seek(tp, found.offset)

    def get_offsets_by_times(
        self, timestamps_to_search: dict[TopicPartition, int], timeout_ms: int
    ) -> dict[TopicPartition, OffsetAndTimestamp | None]:
        """For each partition, the earliest offset whose timestamp is at least the one given, or None
        if every record is older (``KafkaConsumer.offsetsForTimes``)."""
        for tp, timestamp in timestamps_to_search.items():
            if not isinstance(timestamp, int) or timestamp < 0:
                raise IllegalArgumentException(
                    f"The target time for partition {_tp_str(tp)} is {timestamp}. The target time cannot be negative."
                )
        return self._get_offsets_by_times(timestamps_to_search, timeout_ms)

    def beginning_offsets(
        self, partitions: Iterable[TopicPartition], timeout_ms: int
    ) -> dict[TopicPartition, int]:
        return self._offsets_at(partitions, EARLIEST_TIMESTAMP, timeout_ms)

    def end_offsets(self, partitions: Iterable[TopicPartition], timeout_ms: int) -> dict[TopicPartition, int]:
        return self._offsets_at(partitions, LATEST_TIMESTAMP, timeout_ms)

    def _offsets_at(
        self, partitions: Iterable[TopicPartition], timestamp: int, timeout_ms: int
    ) -> dict[TopicPartition, int]:
        found = self._get_offsets_by_times(dict.fromkeys(partitions, timestamp), timeout_ms)
        return {tp: UNKNOWN_OFFSET if result is None else result.offset for tp, result in found.items()}

    def _get_offsets_by_times(
        self, timestamps_to_search: dict[TopicPartition, int], timeout_ms: int
    ) -> dict[TopicPartition, OffsetAndTimestamp | None]:
        if not timestamps_to_search:
            return {}
        start_ms = self.time.milliseconds()
        remaining = timeout_ms
        while True:
            future = self._send_list_offset_requests(timestamps_to_search)
            self.client.poll_future(future, remaining)
            if not future.is_done():
                break
            if future.succeeded():
                return future.value()
            if not future.is_retriable():
                raise future.exception()
            elapsed = self.time.milliseconds() - start_ms
            remaining = timeout_ms - elapsed
            if remaining <= 0:
                break
            if isinstance(future.exception(), InvalidMetadataException):
                self.client.await_metadata_update(remaining)
            else:
                self.time.sleep(min(remaining, self.retry_backoff_ms))
            remaining = timeout_ms - (self.time.milliseconds() - start_ms)
            if remaining <= 0:
                break
        raise TimeoutException(f"Failed to get offsets by times in {timeout_ms} ms")

    def _send_list_offset_requests(
        self, timestamps_to_search: dict[TopicPartition, int]
    ) -> RequestFuture[dict[TopicPartition, OffsetAndTimestamp | None]]:
        by_node: dict[Node, dict[TopicPartition, int]] = {}
        for tp, timestamp in timestamps_to_search.items():
            info = self.metadata.cluster.partitions.get(tp)
            if info is None:
                # A partition the metadata does not know: ask for its topic, retry after the update.
                self.metadata.add(tp[0])
                log.debug(
                    "Partition %s is unknown for fetching offset, wait for metadata refresh", _tp_str(tp)
                )
                return RequestFuture.stale_metadata()
            if info.leader is None:
                log.debug(
                    "Leader for partition %s unavailable for fetching offset, wait for metadata refresh",
                    _tp_str(tp),
                )
                return RequestFuture.leader_not_available()
            by_node.setdefault(info.leader, {})[tp] = timestamp

        result: RequestFuture[dict[TopicPartition, OffsetAndTimestamp | None]] = RequestFuture()
        found: dict[TopicPartition, OffsetAndTimestamp | None] = {}
        left = [len(by_node)]

        class _Gather(RequestFutureListener[dict[TopicPartition, OffsetAndTimestamp | None]]):
            def on_success(self, value: dict[TopicPartition, OffsetAndTimestamp | None]) -> None:
                found.update(value)
                left[0] -= 1
                if left[0] == 0 and not result.is_done():
                    result.complete(found)

            def on_failure(self, e: Exception) -> None:
                if not result.is_done():
                    result.raise_(e)

        for node, timestamps in by_node.items():
            self._send_list_offset_request(node, timestamps).add_listener(_Gather())
        return result

    def _send_list_offset_request(
        self, node: Node, timestamps: dict[TopicPartition, int]
    ) -> RequestFuture[dict[TopicPartition, OffsetAndTimestamp | None]]:
        topics: dict[str, list[dict[str, int]]] = {}
        for (topic, partition), timestamp in timestamps.items():
            topics.setdefault(topic, []).append({"partition": partition, "timestamp": timestamp})
        body = {
            "replica_id": CONSUMER_REPLICA_ID,
            "isolation_level": self.isolation_level,
            "topics": [{"topic": t, "partitions": ps} for t, ps in topics.items()],
        }
        version = (
            LIST_OFFSETS_READ_COMMITTED_VERSION
            if self.isolation_level == READ_COMMITTED
            else LIST_OFFSETS_VERSION
        )
        future = self.client.send(node, ApiKeys.LIST_OFFSETS, version, body)
        return future.compose(_ListOffsetResponseHandler(self.metadata, timestamps))


class _FetchResponseListener(RequestFutureListener[ClientResponse]):
    def __init__(self, fetcher: Fetcher, offsets: dict[TopicPartition, int]) -> None:
        self.fetcher = fetcher
        self.offsets = offsets

    def on_success(self, value: ClientResponse) -> None:
        self.fetcher._on_fetch_response(value, self.offsets)

    def on_failure(self, e: Exception) -> None:
        log.debug("Fetch request for partitions %s failed: %s", sorted(self.offsets), e)


class _ListOffsetResponseHandler(
    RequestFutureAdapter[ClientResponse, dict[TopicPartition, OffsetAndTimestamp | None]]
):
    def __init__(self, metadata: Metadata, timestamps: dict[TopicPartition, int]) -> None:
        self.metadata = metadata
        self.timestamps = timestamps

    def on_success(
        self, value: ClientResponse, future: RequestFuture[dict[TopicPartition, OffsetAndTimestamp | None]]
    ) -> None:
        found: dict[TopicPartition, OffsetAndTimestamp | None] = {}
        for topic in (value.body or {}).get("responses", ()):
            for p in topic["partition_responses"]:
                tp = TopicPartition(topic["topic"], p["partition"])
                error = Errors.for_code(p["error_code"])
                if error is Errors.NONE:
                    offset = p["offset"]
                    found[tp] = (
                        None if offset == UNKNOWN_OFFSET else OffsetAndTimestamp(offset, p["timestamp"])
                    )
                elif error is Errors.UNSUPPORTED_FOR_MESSAGE_FORMAT:
                    found[tp] = None  # a log in the v0 format has no timestamps to search
                elif error is Errors.NOT_LEADER_FOR_PARTITION or error is Errors.UNKNOWN_TOPIC_OR_PARTITION:
                    # Retriable metadata errors: the caller refreshes the metadata and retries.
                    log.debug(
                        "Attempt to fetch offsets for partition %s failed due to %s, retrying.",
                        _tp_str(tp),
                        error.name,
                    )
                    future.raise_(error)
                    return
                else:
                    log.warning(
                        "Attempt to fetch offsets for partition %s failed due to: %s",
                        _tp_str(tp),
                        error.description,
                    )
                    future.raise_(StaleMetadataException())
                    return
        missing = set(self.timestamps) - set(found)
        if missing:
            future.raise_(
                IllegalStateException(f"The ListOffsets response has no answer for {sorted(missing)}")
            )
            return
        future.complete(found)
