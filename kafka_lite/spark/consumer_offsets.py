"""``__consumer_offsets`` as DataFrames: each record's key and value decoded with Kafka's schemas.

Mirrors: kafka.coordinator.GroupMetadataManager.OffsetsMessageFormatter and
         GroupMetadataMessageFormatter (core/src/main/scala/kafka/coordinator/
         GroupMetadataManager.scala, Kafka 0.10.1): what ``kafka-console-consumer.sh --formatter``
         uses to print the topic, here as columns
Book:    chapter 3, 3.5.2 (offsets stored in the internal topic); chapter 5, 5.2.2 (what the
         coordinator stores per group and per committed offset)
Differs: the formatters print one line per record; here the records become rows of a DataFrame, so
         a lab can group, window and join them. The bytes are decoded by the coordinator's own
         readers (``read_message_key``, ``read_offset_message_value``,
         ``read_group_message_value``), never by a second copy of the schemas.

The topic holds two kinds of record, told apart by the key's version: offset commits (key
``[group, topic, partition]``, value the committed offset) and group metadata (key ``[group]``, value
the generation and its members). ``offset_commits(df)`` and ``group_metadata(df)`` take the topic as
the ``kafka_lite`` source reads it (the columns ``key``, ``value``, ``partition``, ``offset``,
``timestamp`` of Spark's Kafka schema) and keep one kind each. A tombstone (a null value: an expired
offset, a removed group) keeps its key columns and has nulls for the value's.

The decoding runs in the executors' Python workers with ``mapInArrow``: one Arrow batch in, one out,
no Python object per row left behind. It is the one place the labs' data passes through Python:
everything after it is DataFrame code.
"""

from __future__ import annotations

from collections.abc import Iterator

from kafka_lite.coordinator.offsets_topic_records import (
    GroupMetadataKey,
    OffsetKey,
    read_group_message_value,
    read_message_key,
    read_offset_message_value,
)

TOPIC = "__consumer_offsets"

# The columns of each record's place in the topic, kept on every row: commits in one request share
# their commit time, and (record_partition, record_offset) orders them as the coordinator wrote them.
_PLACE = "record_partition int, record_offset long, record_timestamp timestamp"

OFFSET_COMMITS_SCHEMA = (
    "group string, topic string, partition int, offset long, metadata string, "
    f"commit_timestamp timestamp, expire_timestamp timestamp, {_PLACE}"
)
GROUP_METADATA_SCHEMA = (
    "group string, protocol_type string, generation int, protocol string, leader string, "
    "members array<struct<member_id: string, client_id: string, client_host: string, "
    f"rebalance_timeout: int, session_timeout: int>>, {_PLACE}"
)

_INPUT_COLUMNS = ("key", "value", "partition", "offset", "timestamp")


def offset_commits(records):
    """The offset commit records of ``records`` (``__consumer_offsets`` as the source reads it), one
    row each: ``OFFSET_COMMITS_SCHEMA``. Times are timestamps (UTC); an unset expiry (-1) is null."""
    return _decoded(records).mapInArrow(_offset_commit_batches, OFFSET_COMMITS_SCHEMA)


def group_metadata(records):
    """The group metadata records of ``records``, one row each: ``GROUP_METADATA_SCHEMA`` (the
    members' subscriptions and assignments, opaque bytes of the consumer protocol, are left out)."""
    return _decoded(records).mapInArrow(_group_metadata_batches, GROUP_METADATA_SCHEMA)


def _decoded(records):
    missing = [c for c in _INPUT_COLUMNS if c not in records.columns]
    if missing:
        raise ValueError(
            f"expected __consumer_offsets as the kafka_lite source reads it, with the columns "
            f"{', '.join(_INPUT_COLUMNS)}; missing: {', '.join(missing)}"
        )
    return records.select(*_INPUT_COLUMNS)


# -- the Python side, run in the workers ------------------------------------------------------------------


def _micros(ms: int | None) -> int | None:
    """Kafka's epoch milliseconds as Arrow's timestamp microseconds; -1 (unset) as null."""
    return None if ms is None or ms < 0 else ms * 1000


def _place(batch, i: int) -> tuple:
    return batch["partition"][i], batch["offset"][i], batch["timestamp"][i]


def _offset_commit_batches(batches: Iterator) -> Iterator:
    import pyarrow as pa

    schema = pa.schema(
        [
            ("group", pa.string()),
            ("topic", pa.string()),
            ("partition", pa.int32()),
            ("offset", pa.int64()),
            ("metadata", pa.string()),
            ("commit_timestamp", pa.timestamp("us", tz="UTC")),
            ("expire_timestamp", pa.timestamp("us", tz="UTC")),
            *_place_fields(pa),
        ]
    )
    for batch in batches:
        columns = batch.to_pydict()
        rows = []
        for i, key in enumerate(columns["key"]):
            base = read_message_key(key)
            if not isinstance(base, OffsetKey):
                continue
            committed = read_offset_message_value(columns["value"][i])
            topic, partition = base.key.topic_partition
            if committed is None:  # a tombstone: the offset was deleted
                value = (None, None, None, None)
            else:
                value = (
                    committed.offset,
                    committed.metadata,
                    _micros(committed.commit_timestamp),
                    _micros(committed.expire_timestamp),
                )
            rows.append((base.key.group, topic, partition, *value, *_place(columns, i)))
        yield _batch(pa, schema, rows)


def _group_metadata_batches(batches: Iterator) -> Iterator:
    import pyarrow as pa

    member = pa.struct(
        [
            ("member_id", pa.string()),
            ("client_id", pa.string()),
            ("client_host", pa.string()),
            ("rebalance_timeout", pa.int32()),
            ("session_timeout", pa.int32()),
        ]
    )
    schema = pa.schema(
        [
            ("group", pa.string()),
            ("protocol_type", pa.string()),
            ("generation", pa.int32()),
            ("protocol", pa.string()),
            ("leader", pa.string()),
            ("members", pa.list_(member)),
            *_place_fields(pa),
        ]
    )
    for batch in batches:
        columns = batch.to_pydict()
        rows = []
        for i, key in enumerate(columns["key"]):
            base = read_message_key(key)
            if not isinstance(base, GroupMetadataKey):
                continue
            group = read_group_message_value(base.key, columns["value"][i])
            if group is None:  # a tombstone: the group was removed
                value = (None, None, None, None, None)
            else:
                members = [
                    {
                        "member_id": m.member_id,
                        "client_id": m.client_id,
                        "client_host": m.client_host,
                        "rebalance_timeout": m.rebalance_timeout,
                        "session_timeout": m.session_timeout,
                    }
                    for m in group.members
                ]
                value = (group.protocol_type, group.generation, group.protocol, group.leader, members)
            rows.append((base.key, *value, *_place(columns, i)))
        yield _batch(pa, schema, rows)


def _place_fields(pa) -> list:
    return [
        ("record_partition", pa.int32()),
        ("record_offset", pa.int64()),
        ("record_timestamp", pa.timestamp("us", tz="UTC")),
    ]


def _batch(pa, schema, rows: list[tuple]):
    """Rows (tuples in ``schema``'s order) as one Arrow batch of ``schema``."""
    columns = list(zip(*rows, strict=True)) if rows else [[] for _ in schema]
    return pa.RecordBatch.from_arrays(
        [pa.array(list(values), type=field.type) for values, field in zip(columns, schema, strict=True)],
        schema=schema,
    )
