"""The one interface both back-ends offer, and the planning the readers do through it.

No Kafka twin: modelled on Spark's Kafka connector (Spark 4.x), after its classes
         org.apache.spark.sql.kafka010.KafkaOffsetReader (the driver's view: partitions and their
         earliest, latest and by-time offsets), ConsumerStrategy (assign, subscribe,
         subscribePattern) and consumer.KafkaDataConsumer (the executors' reads)
         (connector/kafka-0-10-sql/src/main/scala/org/apache/spark/sql/kafka010/, Spark 4.x)
Book:    chapter 4, 4.1 (subscribing, positions, ListOffsets); chapter 6, 6.1.4 (reading a segment)

Spark splits a Kafka read in two, and so do we:

- on the driver, an ``OffsetReader`` lists the subscribed topics' partitions and resolves
  ``earliest``, ``latest`` (the high watermark: consumers never read above it) and times into
  offsets. ``startingOffsets`` and friends are resolved here, once, so every task reads a range of
  plain offsets;
- on the executors, a ``DataConsumer`` fetches exactly one ``OffsetRange`` and yields the
  partition's record batches (kafka_lite's own ``DefaultRecordBatch``, bytes kept as bytes) for
  ``rows.py`` to turn into rows. A batch may begin before the range or end after it; ``rows.py``
  keeps only the records inside.

The network back-end (``kafka.bootstrap.servers``, network.py) answers with Metadata, ListOffsets
and Fetch requests; the offline back-end (``kafka_lite.log.dirs``, offline.py) reads a stopped
cluster's segment files. Both are built here from ``ClientSettings``, inside the method that uses
them, never carried across processes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Protocol

from kafka_lite.common.errors import CorruptRecordException, IllegalArgumentException, KafkaException
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.consumer.internals.consumer_coordinator import INTERNAL_TOPICS
from kafka_lite.spark.offsets import OffsetRange, PartitionOffsets, tp_name
from kafka_lite.spark.options import EARLIEST, LATEST, ClientSettings, OffsetSpec, SourceOptions


class OffsetReader(Protocol):
    """The driver's view of the topics (Spark's KafkaOffsetReader)."""

    def topic_partitions(self) -> dict[str, list[int]]:
        """Every topic and its partitions."""

    def earliest_offsets(self, tps: list[TopicPartition]) -> PartitionOffsets:
        """Each partition's log start offset."""

    def latest_offsets(self, tps: list[TopicPartition]) -> PartitionOffsets:
        """Each partition's high watermark: the offset after the last record a consumer may read."""

    def offsets_for_times(self, times: dict[TopicPartition, int]) -> PartitionOffsets:
        """Each partition's first offset whose timestamp is at or after its time; -1 where none is."""

    def close(self) -> None: ...


class DataConsumer(Protocol):
    """An executor's reader of one offset range (Spark's KafkaDataConsumer)."""

    def fetch(self, range_: OffsetRange, fail_on_data_loss: bool) -> Iterator:
        """The record batches holding the range's records, in offset order."""

    def close(self) -> None: ...


def checked_batches(batches: Iterator, range_: OffsetRange) -> Iterator:
    """The batches, each after its CRC and sizes are checked (the consumer's ``check.crcs``, as
    Kafka's ``Fetcher`` checks every fetched batch before reading it): a batch that fails stops the
    task with an error naming the partition and the batch's offset, instead of rows from bytes that
    are not what the producer wrote."""
    for batch in batches:
        try:
            batch.ensure_valid()
        except CorruptRecordException as e:
            raise KafkaException(
                f"Record batch for partition {tp_name(range_.topic_partition)} at offset {batch.base_offset} "
                f"is invalid, cause: {e}"
            ) from e
        yield batch


def offset_reader(client: ClientSettings) -> OffsetReader:
    if client.bootstrap_servers is not None:
        from kafka_lite.spark.network import NetworkOffsetReader

        return NetworkOffsetReader(client)
    from kafka_lite.spark.offline import OfflineOffsetReader

    return OfflineOffsetReader(client)


def data_consumer(client: ClientSettings) -> DataConsumer:
    if client.bootstrap_servers is not None:
        from kafka_lite.spark.network import NetworkDataConsumer

        return NetworkDataConsumer(client)
    from kafka_lite.spark.offline import OfflineDataConsumer

    return OfflineDataConsumer(client)


# -- the consumer strategies (ConsumerStrategy) ------------------------------------------------------------


def subscribed_partitions(reader: OffsetReader, options: SourceOptions) -> list[TopicPartition]:
    """The partitions ``assign``, ``subscribe`` or ``subscribePattern`` names, as the cluster has them
    now. A subscribed topic that does not exist has no partitions (Spark waits for it to appear); an
    assigned partition that does not exist is an error naming ``assign``."""
    existing = reader.topic_partitions()
    if options.strategy == "assign":
        missing = [tp for tp in options.assigned if tp[1] not in existing.get(tp[0], ())]
        if missing:
            raise IllegalArgumentException(
                f"Option 'assign': {', '.join(tp_name(tp) for tp in missing)} do(es) not exist"
            )
        return list(options.assigned)
    if options.strategy == "subscribe":
        topics = list(options.topics)
    else:
        pattern = re.compile(options.pattern)
        # As a consumer with exclude.internal.topics (the default): a pattern never matches them.
        topics = sorted(t for t in existing if pattern.fullmatch(t) and t not in INTERNAL_TOPICS)
    return sorted((t, p) for t in topics for p in existing.get(t, ()))


# -- resolving startingOffsets / endingOffsets (KafkaOffsetReader.fetchPartitionOffsets) --------------------


def resolve_offsets(
    reader: OffsetReader, spec: OffsetSpec, tps: list[TopicPartition], timestamp_strategy: str = "error"
) -> PartitionOffsets:
    """``spec`` made absolute for ``tps``. JSON offsets must name exactly ``tps``, as Spark requires."""
    if not tps:
        return {}
    if spec.kind == "earliest":
        return reader.earliest_offsets(tps)
    if spec.kind == "latest":
        return reader.latest_offsets(tps)
    if spec.kind in ("offsets", "timestamps"):
        if set(spec.offsets) != set(tps):
            raise IllegalArgumentException(
                f"Option '{spec.option}': if it contains specific offsets, it must specify all "
                f"TopicPartitions. Use -1 for latest, -2 for earliest. Specified: "
                f"[{', '.join(tp_name(tp) for tp in sorted(spec.offsets))}] Assigned: "
                f"[{', '.join(tp_name(tp) for tp in tps)}]"
            )
    if spec.kind == "offsets":
        offsets = dict(spec.offsets)
        earliest = [tp for tp, o in offsets.items() if o == EARLIEST]
        latest = [tp for tp, o in offsets.items() if o == LATEST]
        offsets.update(reader.earliest_offsets(earliest) if earliest else {})
        offsets.update(reader.latest_offsets(latest) if latest else {})
        return offsets
    times = {tp: spec.timestamp for tp in tps} if spec.kind == "timestamp" else dict(spec.offsets)
    found = reader.offsets_for_times(times)
    unmatched = sorted(tp for tp, o in found.items() if o < 0)
    if unmatched:
        starting = spec.option.startswith("starting")
        if starting and timestamp_strategy == "error":
            raise KafkaException(
                f"Option '{spec.option}': no offset matched from request of topic-partition "
                f"{tp_name(unmatched[0])} and timestamp {times[unmatched[0]]} (set "
                "'startingOffsetsByTimestampStrategy' to latest to start such partitions at the latest offset)"
            )
        found.update(reader.latest_offsets(unmatched))
    return found
