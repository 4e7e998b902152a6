"""Offsets and planning: Spark's offset JSON, offset ranges, the read limit and data loss.

No Kafka twin: modelled on Spark's Kafka connector (Spark 4.x), after its classes
         org.apache.spark.sql.kafka010.KafkaSourceOffset (the offset JSON),
         KafkaOffsetRangeCalculator and KafkaOffsetRange (ranges, minPartitions),
         KafkaMicroBatchStream.rateLimit and reportDataLoss (maxOffsetsPerTrigger, failOnDataLoss)
         (connector/kafka-0-10-sql/src/main/scala/org/apache/spark/sql/kafka010/, Spark 4.x)
Book:    chapter 4, 4.1.2 (a consumer's position and the log's earliest and latest offsets)
Differs: preferred executor locations (Spark keeps a partition on one executor to reuse its cached
         consumer) are left out: kafka_lite opens its client per task.

Everything here is plain Python on plain data: ``{(topic, partition): offset}`` maps, and
``OffsetRange``s. A checkpoint and ``query.lastProgress`` hold Spark's JSON,
``{"orders":{"0":123,"1":98}}``, each offset the next one to read.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass

from kafka_lite.common.errors import KafkaException
from kafka_lite.common.topic_partition import TopicPartition

log = logging.getLogger(__name__)

PartitionOffsets = dict[TopicPartition, int]

# KafkaSourceProvider's instructions, appended to a data-loss message.
INSTRUCTION_FOR_FAIL_ON_DATA_LOSS_TRUE = (
    "Some data may have been lost because they are not available in Kafka any more; either the data was "
    "aged out by Kafka or the topic may have been deleted before all the data in the topic was processed. "
    'If you don\'t want your streaming query to fail on such cases, set the source option "failOnDataLoss" '
    'to "false".'
)
INSTRUCTION_FOR_FAIL_ON_DATA_LOSS_FALSE = (
    "Some data may have been lost because they are not available in Kafka any more; either the data was "
    "aged out by Kafka or the topic may have been deleted before all the data in the topic was processed. "
    'If you want your streaming query to fail on such cases, set the source option "failOnDataLoss" to '
    '"true".'
)


class DataLossException(KafkaException):
    """Offsets to read are gone and ``failOnDataLoss`` is true (Spark raises IllegalStateException)."""


def report_data_loss(message: str, fail_on_data_loss: bool) -> None:
    """Spark's reportDataLoss: raise with the way out, or warn and go on."""
    if fail_on_data_loss:
        raise DataLossException(f"{message}. {INSTRUCTION_FOR_FAIL_ON_DATA_LOSS_TRUE}")
    log.warning("%s. %s", message, INSTRUCTION_FOR_FAIL_ON_DATA_LOSS_FALSE)


# -- Spark's offset JSON (KafkaSourceOffset) ---------------------------------------------------------------


def to_json_dict(offsets: Mapping[TopicPartition, int]) -> dict[str, dict[str, int]]:
    """{(t, p): o} -> {"t": {"p": o}}, topics and partitions in order (JsonUtils.partitionOffsets)."""
    nested: dict[str, dict[str, int]] = {}
    for (topic, partition), offset in sorted(offsets.items()):
        nested.setdefault(topic, {})[str(partition)] = offset
    return nested


def from_json_dict(nested: Mapping[str, Mapping[str, int]] | str) -> PartitionOffsets:
    """Spark's offset JSON (a dict, or its text as a checkpoint holds it) -> {(t, p): o}."""
    if isinstance(nested, str):
        nested = json.loads(nested)
    return {(topic, int(p)): int(o) for topic, partitions in nested.items() for p, o in partitions.items()}


def tp_name(tp: TopicPartition) -> str:
    return f"{tp[0]}-{tp[1]}"


# -- ranges (KafkaOffsetRange, KafkaOffsetRangeCalculator) ------------------------------------------------


@dataclass(frozen=True)
class OffsetRange:
    """Offsets [from_offset, until_offset) of one topic-partition: one Spark task reads it."""

    topic: str
    partition: int
    from_offset: int
    until_offset: int

    @property
    def topic_partition(self) -> TopicPartition:
        return (self.topic, self.partition)

    @property
    def size(self) -> int:
        """The offsets in the range; compaction may have left fewer records than that."""
        return self.until_offset - self.from_offset


def _part_count(size: int, total_size: int, min_parts: int) -> int:
    # Scala's math.round rounds halves up; Python's round would round them to even.
    return max(math.floor(size / total_size * min_parts + 0.5), 1)


def get_ranges(ranges: list[OffsetRange], min_partitions: int | None = None) -> list[OffsetRange]:
    """KafkaOffsetRangeCalculator.getRanges: drop empty ranges; with ``minPartitions`` above the
    number of ranges, split the large ones so there are about that many."""
    offset_ranges = [r for r in ranges if r.size > 0]
    if min_partitions is None or len(offset_ranges) >= min_partitions:
        return offset_ranges
    total_size = sum(r.size for r in offset_ranges)
    # Small ranges stay whole, and their records are left out of the share the large ones split.
    unsplit = [r for r in offset_ranges if _part_count(r.size, total_size, min_partitions) == 1]
    unsplit_tps = {r.topic_partition for r in unsplit}
    split_total_size = total_size - sum(r.size for r in unsplit)
    split_min_partitions = max(min_partitions - len(unsplit), 1)
    result = []
    for r in offset_ranges:
        parts = (
            1
            if r.topic_partition in unsplit_tps
            else _part_count(r.size, split_total_size, split_min_partitions)
        )
        remaining, start = r.size, r.from_offset
        for part in range(parts):
            this_partition = remaining // (parts - part)  # the last part takes the remainder
            remaining -= this_partition
            end = min(start + this_partition, r.until_offset)
            result.append(OffsetRange(r.topic, r.partition, start, end))
            start = end
    return [r for r in result if r.size > 0]


# -- the read limit (KafkaMicroBatchStream.rateLimit) ------------------------------------------------------


def rate_limit(
    limit: int,
    from_offsets: Mapping[TopicPartition, int],
    until: Mapping[TopicPartition, int],
    earliest_for_new: Mapping[TopicPartition, int],
) -> PartitionOffsets:
    """At most ``limit`` offsets past ``from_offsets``, shared by the partitions in proportion to
    their backlog; a partition with a share under one offset still gets one, so small partitions
    are never starved. ``earliest_for_new`` is where partitions not in ``from_offsets`` begin."""
    sizes = {}
    for tp, end in until.items():
        begin = from_offsets.get(tp, earliest_for_new.get(tp))
        if begin is not None and end - begin > 0:
            sizes[tp] = end - begin
    total = sum(sizes.values())
    if total < 1:
        return dict(until)
    limited = {}
    for tp, end in until.items():
        if tp not in sizes:
            limited[tp] = end
            continue
        begin = from_offsets.get(tp, earliest_for_new.get(tp, 0))
        prorate = limit * (sizes[tp] / total)
        prorate_long = math.ceil(prorate) if prorate < 1 else math.floor(prorate)
        limited[tp] = min(end, begin + prorate_long)
    return limited


# -- a micro-batch's ranges (KafkaMicroBatchStream.planInputPartitions) ------------------------------------


def plan_micro_batch(
    start: Mapping[TopicPartition, int],
    end: Mapping[TopicPartition, int],
    earliest_for_new: Mapping[TopicPartition, int],
    fail_on_data_loss: bool,
) -> list[OffsetRange]:
    """The ranges between two micro-batch offsets. A partition that appeared since ``start`` begins
    at its earliest offset (a non-zero one means records were missed); a partition that disappeared,
    or whose offset went backwards (the topic was deleted and re-created), is data loss."""
    new_partitions = set(end) - set(start)
    for tp in sorted(new_partitions):
        if earliest_for_new.get(tp, 0) != 0:
            report_data_loss(
                f"Added partition {tp_name(tp)} starts from {earliest_for_new[tp]} instead of 0. "
                "Some data may have been missed",
                fail_on_data_loss,
            )
    deleted = sorted(set(start) - set(end))
    if deleted:
        report_data_loss(
            f"[{', '.join(tp_name(tp) for tp in deleted)}] are gone. Some data may have been missed",
            fail_on_data_loss,
        )
    ranges = []
    for tp in sorted(end):
        from_offset = start[tp] if tp in start else earliest_for_new.get(tp, 0)
        until_offset = end[tp]
        if until_offset < from_offset:
            report_data_loss(
                f"Partition {tp_name(tp)}'s offset was changed from {from_offset} to {until_offset}, "
                "some data may have been missed",
                fail_on_data_loss,
            )
            continue
        ranges.append(OffsetRange(tp[0], tp[1], from_offset, until_offset))
    return ranges


def check_range_start(range_: OffsetRange, log_start_offset: int, fail_on_data_loss: bool) -> int:
    """Where an executor begins reading ``range_`` (KafkaDataConsumer.get): its start, or, when
    retention deleted that offset and ``failOnDataLoss`` is false, the log start offset."""
    if range_.from_offset >= log_start_offset:
        return range_.from_offset
    message = (
        f"Cannot fetch offset {range_.from_offset} of {tp_name(range_.topic_partition)}: the log starts "
        f"at {log_start_offset} now, so records in [{range_.from_offset}, "
        f"{min(log_start_offset, range_.until_offset)}) are gone"
    )
    report_data_loss(message, fail_on_data_loss)
    return min(log_start_offset, range_.until_offset)
