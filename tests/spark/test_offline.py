"""The offline back-end (``kafka_lite.log.dirs``): a stopped cluster's segment files read directly,
read-only, give the same rows as the network back-end: cleanly stopped or copied mid-run (no clean
shutdown, indexes still pre-allocated), across segment rolls and compacted gaps; data that retention
removed is failOnDataLoss's decision; a batch whose bytes changed on disk fails its CRC check."""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest

from kafka_lite.log.checkpoint import read_checkpoint
from tests.spark.spark_topics import consume, produce, read, rows
from tests.support.cluster import LiteCluster
from tests.support.waiting import wait_until

pytestmark = pytest.mark.spark

TOPICS = {("ledger", 0): 80, ("ledger", 1): 80}


@pytest.fixture(scope="module")
def stopped(zookeeper, tmp_path_factory, spark):
    """A 2-broker cluster's data: ``ledger`` (2 partitions, 2 replicas, small segments, headers) and
    ``balances`` (compacted, with gaps); the rows the network back-end read, a copy of the log
    directories taken while the brokers ran, and the directories after a clean stop."""
    base = tmp_path_factory.mktemp("spark-offline")
    cluster = LiteCluster(zookeeper.connect_string, base / "cluster", brokers=2,
                          **{"log.cleaner.enable": True, "log.cleaner.backoff.ms": 100})  # fmt: skip
    cluster.start()
    try:
        servers = cluster.bootstrap_servers
        cluster.create_topic("ledger", partitions=2, replication_factor=2, segment_bytes=700)
        produce(servers, "ledger", [(b"a%d" % (i % 5), b"entry-%d" % i, [("h", b"%d" % i)] if i % 3 == 0 else None, i % 2)
                                    for i in range(160)])  # fmt: skip
        cluster.create_topic("balances", partitions=1, cleanup_policy="compact", segment_bytes=400,
                             min_cleanable_dirty_ratio=0.01)  # fmt: skip
        produce(servers, "balances", [(b"acct-%d" % (i % 3), b"%d" % i, None, 0) for i in range(120)])
        wait_until(
            lambda: len(consume(servers, {("balances", 0): (0, 120)})) < 100,
            timeout_s=60,
            what="the cleaner to compact balances",
        )
        dirs = [base / "cluster" / f"broker-{i}" for i in range(2)]

        def high_watermarks_checkpointed() -> bool:
            written = {}
            for d in dirs:
                for tp, hw in read_checkpoint(d / "replication-offset-checkpoint").items():
                    written[tp] = max(hw, written.get(tp, 0))
            return all(written.get(tp) == end for tp, end in {**TOPICS, ("balances", 0): 120}.items())

        wait_until(
            high_watermarks_checkpointed, timeout_s=30, what="the brokers to checkpoint their high watermarks"
        )
        network = {
            topic: rows(
                read(
                    spark,
                    **{"kafka.bootstrap.servers": servers, "subscribe": topic, "includeHeaders": "true"},
                )
            )
            for topic in ("ledger", "balances")
        }
        crash_copy = base / "copied-while-running"
        for d in dirs:
            shutil.copytree(d, crash_copy / d.name)
    finally:
        cluster.stop()
    yield {"dirs": dirs, "crash_copy": [crash_copy / d.name for d in dirs], "network": network}


def offline(spark, dirs, **options):
    return read(
        spark, **{"kafka_lite.log.dirs": ",".join(str(d) for d in dirs), "includeHeaders": "true", **options}
    )


def copy_of(dirs, to) -> list:
    """The log directories copied under ``to``, for a test that changes them."""
    for d in dirs:
        shutil.copytree(d, to / d.name)
    return [to / d.name for d in dirs]


def fingerprint(dirs) -> dict:
    return {
        str(p): (p.stat().st_size, hashlib.sha256(p.read_bytes()).hexdigest())
        for d in dirs
        for p in sorted(d.rglob("*"))
        if p.is_file()
    }


def test_a_stopped_clusters_files_read_like_the_network(spark, stopped):
    for topic in ("ledger", "balances"):
        assert rows(offline(spark, stopped["dirs"], subscribe=topic)) == stopped["network"][topic]
    # Both row paths, and a range that ends at an offset the cleaner removed.
    balances = stopped["network"]["balances"]
    gap = next(o for o in range(120) if o not in {r[2] for r in balances})
    upto = offline(spark, stopped["dirs"], subscribe="balances", endingOffsets=json.dumps({"balances": {"0": gap}}),
                   **{"kafka_lite.rows": "tuples"})  # fmt: skip
    assert rows(upto) == [r for r in balances if r[2] < gap]


def test_a_copy_taken_while_the_brokers_ran_is_read_without_changing_a_byte(spark, stopped):
    before = fingerprint(stopped["crash_copy"])
    for topic in ("ledger", "balances"):
        assert rows(offline(spark, stopped["crash_copy"], subscribe=topic)) == stopped["network"][topic]
    assert fingerprint(stopped["crash_copy"]) == before


def test_records_retention_removed_are_failOnDataLoss_s_decision(spark, stopped, tmp_path):
    dirs = copy_of(stopped["dirs"], tmp_path)
    # What retention does: the partition's first segment goes, so the log starts at the next one.
    for d in dirs:
        segments = sorted((d / "ledger-0").glob("*.log"))
        for suffix in (".log", ".index", ".timeindex"):
            segments[0].with_suffix(suffix).unlink(missing_ok=True)
    log_start = int(sorted((dirs[0] / "ledger-0").glob("*.log"))[0].stem)
    assert log_start > 0
    from_zero = {"assign": '{"ledger":[0]}', "startingOffsets": json.dumps({"ledger": {"0": 0}})}
    with pytest.raises(Exception, match=rf"records in \[0, {log_start}\) are gone.*failOnDataLoss"):
        offline(spark, dirs, **from_zero).collect()
    skipped = offline(spark, dirs, **from_zero, failOnDataLoss="false")
    expected = [r for r in stopped["network"]["ledger"] if r[1] == 0 and r[2] >= log_start]
    assert rows(skipped) == expected


def test_a_batch_changed_on_disk_fails_its_crc_check_unless_check_crcs_is_off(spark, stopped, tmp_path):
    dirs = copy_of(stopped["dirs"], tmp_path)
    # One byte of one record's value, in every replica of ledger-0: what a bad disk does.
    for d in dirs:
        for segment in sorted((d / "ledger-0").glob("*.log")):
            data = bytearray(segment.read_bytes())
            at = data.find(b"entry-4")  # record 4's value (partition 0 holds the even records)
            if at >= 0:
                data[at] = ord("E")
                segment.write_bytes(bytes(data))
                break
        else:
            raise AssertionError(f"no segment of {d / 'ledger-0'} holds record 4")
    assign = {"assign": '{"ledger":[0]}'}
    with pytest.raises(Exception, match=r"Record batch for partition ledger-0 at offset \d+ is invalid"):
        offline(spark, dirs, **assign).collect()
    # With the check off, the changed bytes are read as they are (Kafka's check.crcs=false).
    unchecked = rows(offline(spark, dirs, **assign, **{"kafka.check.crcs": "false"}))
    expected = [r for r in stopped["network"]["ledger"] if r[1] == 0]
    changed = [(want[4], got[4]) for want, got in zip(expected, unchecked) if want != got]
    assert len(unchecked) == len(expected) and changed == [(b"entry-4", b"Entry-4")]
