"""kafka_lite.spark.consumer_offsets: __consumer_offsets records decoded into rows with the
coordinator's own readers, checked on records its own writers made and on the lab data's topic."""

from __future__ import annotations

import datetime as dt
import struct

import pytest
from pyspark.sql import functions as F

from kafka_lite.coordinator.offset_and_metadata import OffsetAndMetadata
from kafka_lite.coordinator.offsets_topic_records import (
    OFFSET_COMMIT_VALUE_SCHEMA_V0,
    group_metadata_key,
    group_metadata_value,
    offset_commit_key,
    offset_commit_value,
)
from kafka_lite.spark import consumer_offsets, lab_data

pytestmark = pytest.mark.spark

KAFKA_SCHEMA = "key binary, value binary, topic string, partition int, offset long, timestamp timestamp, timestampType int"
WRITTEN = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
MS = 1_700_000_000_000


def _records(spark, pairs):
    rows = [(k, v, consumer_offsets.TOPIC, 2, i, WRITTEN, 0) for i, (k, v) in enumerate(pairs)]
    return spark.createDataFrame(rows, KAFKA_SCHEMA)


def _v0_value(offset: int, metadata: str, timestamp: int) -> bytes:
    out = bytearray(struct.pack(">h", 0))
    OFFSET_COMMIT_VALUE_SCHEMA_V0.write(out, {"offset": offset, "metadata": metadata, "timestamp": timestamp})
    return bytes(out)


def test_offset_commits_and_tombstones_become_rows(spark):
    df = _records(
        spark,
        [
            (
                offset_commit_key("g", ("orders", 1)),
                offset_commit_value(OffsetAndMetadata(42, "m", MS, MS + 60_000)),
            ),
            (offset_commit_key("g", ("orders", 2)), None),  # a tombstone: the offset was deleted
            (offset_commit_key("old", ("orders", 0)), _v0_value(7, "", MS)),  # value v0: no expiry
            (group_metadata_key("g"), group_metadata_value("consumer", 1, "range", "m-1", [])),
        ],
    )
    got = consumer_offsets.offset_commits(df).select(
        "group", "topic", "partition", "offset", "metadata",
        F.unix_millis("commit_timestamp"), F.unix_millis("expire_timestamp"), "record_partition", "record_offset",
    ).collect()  # fmt: skip
    assert sorted(tuple(r) for r in got) == [
        ("g", "orders", 1, 42, "m", MS, MS + 60_000, 2, 0),
        ("g", "orders", 2, None, None, None, None, 2, 1),
        ("old", "orders", 0, 7, "", MS, None, 2, 2),
    ]


def test_group_metadata_records_become_rows_with_their_members(spark):
    members = [("m-1", "billing-1", "/127.0.0.1", 300_000, 10_000, b"sub", b"assign")]
    df = _records(
        spark,
        [
            (group_metadata_key("billing"), group_metadata_value("consumer", 3, "range", "m-1", members)),
            (group_metadata_key("gone"), None),
            (
                offset_commit_key("billing", ("orders", 0)),
                offset_commit_value(OffsetAndMetadata(1, "", MS, MS)),
            ),
        ],
    )
    got = sorted(consumer_offsets.group_metadata(df).collect(), key=lambda r: r.group)
    assert [(r.group, r.protocol_type, r.generation, r.protocol, r.leader) for r in got] == [
        ("billing", "consumer", 3, "range", "m-1"),
        ("gone", None, None, None, None),
    ]
    member = got[0].members[0]
    assert (member.member_id, member.client_id, member.rebalance_timeout, member.session_timeout) == (
        "m-1", "billing-1", 300_000, 10_000,
    )  # fmt: skip
    assert got[1].members is None


def test_a_record_that_does_not_match_the_schemas_fails_the_job_naming_it(spark):
    df = _records(spark, [(struct.pack(">h", 9) + b"junk", b"")])
    with pytest.raises(Exception, match="Unknown offset schema version 9"):
        consumer_offsets.offset_commits(df).collect()


def test_a_dataframe_without_the_sources_columns_is_refused(spark):
    df = spark.createDataFrame([(b"k",)], "key binary")
    with pytest.raises(ValueError, match="missing: value, partition, offset, timestamp"):
        consumer_offsets.offset_commits(df)


def test_the_lab_datas_topic_decodes_whole(spark):
    records = lab_data.read(spark, consumer_offsets.TOPIC)
    commits = consumer_offsets.offset_commits(records).where(F.col("offset").isNotNull())
    assert commits.count() == sum(g["commits"] for g in lab_data.manifest()["groups"].values())
    groups = consumer_offsets.group_metadata(records).collect()
    clients = {m.client_id for g in groups if g.members for m in g.members}
    assert {plan.client_id for plan in lab_data.GROUPS} <= clients
    # audit left the group: its last record says it is Empty (a generation, no members).
    audit = max((g for g in groups if g.group == "audit"), key=lambda g: g.record_offset)
    assert audit.members == [] and audit.generation >= 1
