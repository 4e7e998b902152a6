"""Streams applications on the real 3-broker cluster: results against plain-Python oracles, a clean
restart that restores nothing, standby replicas, and Interactive Queries."""

from __future__ import annotations

from collections import Counter

import pytest

from kafka_lite import KafkaProducer
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.streams.errors import StreamsException
from kafka_lite.streams.examples.wordcount import build_wordcount
from kafka_lite.streams.kafka_streams import KafkaStreams
from kafka_lite.streams.kstream.kstream_builder import KStreamBuilder
from kafka_lite.streams.kstream.windows import TimeWindows
from kafka_lite.streams.serialization import Serdes
from kafka_lite.streams.state.key_value_store import KeyValue
from kafka_lite.streams.state.queryable_store_types import QueryableStoreTypes
from tests.streams.cluster.support import (
    FAST,
    latest_counts,
    oracle_counts,
    produce_lines,
    running,
    wait_running,
    wordcount_topics,
)
from tests.support.topics import read_topic, topic_name
from tests.support.waiting import wait_until

pytestmark = pytest.mark.integration

LINES = [
    "All streams lead to Kafka",
    "Hello Kafka Streams",
    "Join Kafka Summit",
    "the quick brown fox jumps over the lazy dog",
    "The end; THE END!",
]


def restored_records(streams: KafkaStreams) -> dict[str, int]:
    """For each active task, how many changelog records its "Counts" store replayed when it started."""
    return {
        str(task_id): task.state_mgr.restored.get("Counts", 0)
        for thread in streams.threads
        for task_id, task in thread.active_tasks.items()
        if task.get_store("Counts") is not None
    }


def test_word_count_equals_the_oracle_and_answers_queries(cluster, tmp_path):
    bootstrap = cluster.bootstrap_servers
    source, sink = wordcount_topics(cluster, partitions=3)
    lines = LINES * 20
    expected = oracle_counts(lines)
    app_id = topic_name("wc")
    builder = build_wordcount(KStreamBuilder(), source, sink)
    with running(
        builder, bootstrap, app_id, tmp_path, num_stream_threads=2, application_server="localhost:7070"
    ) as streams:
        produce_lines(bootstrap, source, lines)
        wait_until(lambda: latest_counts(bootstrap, sink) == expected, 30, "the word counts of every line")

        # The internal topics the leader created through CreateTopics: one partition per task.
        counts_topics = {t for t in cluster.admin().list_topics() if t.startswith(app_id)}
        assert counts_topics == {f"{app_id}-Counts-repartition", f"{app_id}-Counts-changelog"}

        # Interactive Queries: the store read by name, across both threads' tasks.
        store = streams.store("Counts", QueryableStoreTypes.key_value_store())
        assert {word: store.get(word) for word in expected} == dict(expected)
        assert dict(store.all()) == dict(expected)
        # One instance holds every partition: metadata_for_key names it for any word.
        metadata = streams.metadata_for_key("Counts", "kafka", Serdes.String().serializer())
        assert (metadata.host_info.host, metadata.host_info.port) == ("localhost", 7070)
        assert "Counts" in metadata.state_store_names
        threads = streams.local_threads_metadata()
        assert len(threads) == 2
        tasks = {task.task_id for thread in threads for task in thread.active_tasks}
        assert tasks == {"0_0", "0_1", "0_2", "1_0", "1_1", "1_2"}


def test_a_clean_restart_resumes_from_the_checkpoint_without_restoring(cluster, tmp_path):
    bootstrap = cluster.bootstrap_servers
    source, sink = wordcount_topics(cluster, partitions=3)
    app_id = topic_name("wc-restart")
    first, second = LINES * 4, LINES[:2] * 3
    builder = build_wordcount(KStreamBuilder(), source, sink)
    with running(builder, bootstrap, app_id, tmp_path):
        produce_lines(bootstrap, source, first)
        wait_until(lambda: latest_counts(bootstrap, sink) == oracle_counts(first), 30, "the first counts")
    # Closed cleanly: every store is checkpointed at the changelog's end.
    checkpoints = sorted(p.parent.name for p in (tmp_path / app_id).glob("*/.checkpoint"))
    assert checkpoints == ["1_0", "1_1", "1_2"]

    builder = build_wordcount(KStreamBuilder(), source, sink)
    with running(builder, bootstrap, app_id, tmp_path) as streams:
        wait_running(streams)
        # Once the count tasks are assigned (RUNNING may come before a last rebalance settles):
        # nothing replayed, the stores on disk are as the checkpoint says, up to the changelog's end.
        wait_until(lambda: set(restored_records(streams)) == {"1_0", "1_1", "1_2"}, 30, "the count tasks")
        assert restored_records(streams) == {"1_0": 0, "1_1": 0, "1_2": 0}
        produce_lines(bootstrap, source, second)
        expected = oracle_counts(first + second)
        wait_until(lambda: latest_counts(bootstrap, sink) == expected, 30, "the counts after the restart")


def test_after_clean_up_a_restart_restores_every_store_from_its_changelog(cluster, tmp_path):
    bootstrap = cluster.bootstrap_servers
    source, sink = wordcount_topics(cluster, partitions=3)
    app_id = topic_name("wc-cleanup")
    builder = build_wordcount(KStreamBuilder(), source, sink)
    with running(builder, bootstrap, app_id, tmp_path):
        produce_lines(bootstrap, source, LINES)
        wait_until(lambda: latest_counts(bootstrap, sink) == oracle_counts(LINES), 30, "the counts")

    builder = build_wordcount(KStreamBuilder(), source, sink)
    streams = KafkaStreams(builder, {"application.id": app_id, "bootstrap.servers": bootstrap,
                                     "state.dir": str(tmp_path), **FAST})  # fmt: skip
    streams.clean_up()  # the local state is gone: only the changelogs have it
    streams.start()
    try:
        wait_running(streams)
        # RUNNING comes at start (Kafka 0.10.1's states have no REBALANCING): the tasks, each of
        # which restores its store as it is made, come with the first assignment.
        wait_until(lambda: len(restored_records(streams)) == 3, 30, "the three counting tasks restored")
        # The whole changelog is replayed: at least each word's last count, and, through the record
        # cache, at most one record per update (fewer when updates of a word met in one commit).
        changelog = read_topic(bootstrap, f"{app_id}-Counts-changelog")
        assert sum(restored_records(streams).values()) == len(changelog)
        assert len(oracle_counts(LINES)) <= len(changelog) <= sum(oracle_counts(LINES).values())
        store = streams.store("Counts", QueryableStoreTypes.key_value_store())
        assert dict(store.all()) == dict(oracle_counts(LINES))
    finally:
        assert streams.close(30_000)


def test_a_standby_keeps_a_warm_copy_so_a_moved_task_restores_only_the_tail(cluster, tmp_path):
    bootstrap = cluster.bootstrap_servers
    source, sink = wordcount_topics(cluster, partitions=2)
    app_id = topic_name("wc-standby")
    lines = LINES * 10

    def build():
        return build_wordcount(KStreamBuilder(), source, sink)

    with running(build(), bootstrap, app_id, tmp_path / "a", num_standby_replicas=1) as a:
        with running(build(), bootstrap, app_id, tmp_path / "b", num_standby_replicas=1) as b:
            wait_until(lambda: all(s.state().value == "RUNNING" for s in (a, b))
                       and all(t.standby_tasks for s in (a, b) for t in s.threads), 30,
                       "both instances running, each with standby tasks")  # fmt: skip
            produce_lines(bootstrap, source, lines)
            wait_until(lambda: latest_counts(bootstrap, sink) == oracle_counts(lines), 30, "the counts")
            b_tasks = {t for thread in b.local_threads_metadata() for t in thread.active_tasks}
            # Each active task of one instance has its standby on the other.
            a_standbys = {t.task_id for thread in a.local_threads_metadata() for t in thread.standby_tasks}
            assert {t.task_id for t in b_tasks if t.task_id.startswith("1_")} <= a_standbys
            # Let a's standbys catch up with b's changelog writes before b goes.
            changelog = read_topic(bootstrap, f"{app_id}-Counts-changelog")
            ends = Counter(TopicPartition(r.topic, r.partition) for r in changelog)
            wait_until(lambda: _standby_positions(a) and all(
                           offset == ends[tp] for tp, offset in _standby_positions(a).items()),
                       30, "a's standby tasks to read every changelog record")  # fmt: skip
        # b closed: its tasks move to a, whose standby copies are warm.
        wait_until(lambda: len(restored_records(a)) == 2 and a.state().value == "RUNNING", 30,
                   "a to run both count tasks")  # fmt: skip
        restored = restored_records(a)
        assert sum(restored.values()) == 0, (
            f"a restore happened: {restored} of {len(changelog)} changelog records"
        )
        store = a.store("Counts", QueryableStoreTypes.key_value_store())
        assert dict(store.all()) == dict(oracle_counts(lines))


def _standby_positions(streams: KafkaStreams) -> dict[TopicPartition, int]:
    return {
        tp: offset
        for thread in streams.threads
        for task in list(thread.standby_tasks.values())
        for tp, offset in task.state_mgr.restored_offsets.items()
    }


def test_windowed_stream_table_join_equals_the_oracle(cluster, tmp_path):
    bootstrap = cluster.bootstrap_servers
    users, views, out = topic_name("users"), topic_name("views"), topic_name("region-views")
    for topic in (users, views, out):
        cluster.create_topic(topic, partitions=2)
    regions = {f"user{i}": ["europe", "asia", "americas"][i % 3] for i in range(12)}
    window = 10_000
    view_events = [(f"user{(i * 7) % 12}", 1_000_000 + i * 900) for i in range(60)]

    builder = KStreamBuilder()
    string = Serdes.String()
    table = builder.table(users, "users-store", key_serde=string, value_serde=string)
    (
        builder.stream(views, key_serde=string, value_serde=string)
        .join(table, lambda page, region: region)
        .group_by(lambda user, region: region, string, string)
        .count("RegionViews", windows=TimeWindows.of(window))
        .to_stream()
        .map(lambda windowed, count: KeyValue(f"{windowed.key}@{windowed.window.start}", count))
        .to(out, string, Serdes.Long())
    )

    producer = KafkaProducer(bootstrap_servers=bootstrap, client_id="join-producer")
    try:
        for user, region in regions.items():
            producer.send(users, key=user.encode(), value=region.encode(), timestamp_ms=999_000)
        producer.flush()
        with running(builder, bootstrap, topic_name("join"), tmp_path) as streams:
            # The table is in place before the first view: a stream record joins the table as it is
            # when the record is processed.
            table_store = wait_until(lambda: streams.store("users-store", QueryableStoreTypes.key_value_store()),
                                     30, "the users table's store")  # fmt: skip
            wait_until(lambda: dict(table_store.all()) == regions, 30, "every user in the table")
            for n, (user, ts) in enumerate(view_events):
                producer.send(views, key=user.encode(), value=f"page{n}".encode(), timestamp_ms=ts)
            producer.flush()

            expected = Counter(f"{regions[user]}@{ts - ts % window}" for user, ts in view_events)
            wait_until(
                lambda: latest_counts(bootstrap, out) == dict(expected), 30, "the windowed counts per region"
            )
    finally:
        producer.close()


def test_a_second_instance_on_the_same_state_directory_is_refused(cluster, tmp_path):
    source, sink = topic_name("wc-lines"), topic_name("wc-counts")
    cluster.create_topic(source, partitions=1)
    app_id = topic_name("wc-lock")
    with running(
        build_wordcount(KStreamBuilder(), source, sink), cluster.bootstrap_servers, app_id, tmp_path
    ):
        second = KafkaStreams(
            build_wordcount(KStreamBuilder(), source, sink),
            {
                "application.id": app_id,
                "bootstrap.servers": cluster.bootstrap_servers,
                "state.dir": str(tmp_path),
            },
        )
        with pytest.raises(
            StreamsException, match=rf"another instance of application {app_id} holds the state directory"
        ):
            second.start()
        assert second.close(5_000)


def test_an_internal_topic_with_the_wrong_partition_count_stops_the_application(cluster, tmp_path):
    source, sink = topic_name("wc-lines"), topic_name("wc-counts")
    cluster.create_topic(source, partitions=3)
    app_id = topic_name("wc-bad-internal")
    cluster.create_topic(f"{app_id}-Counts-repartition", partitions=1)
    errors = []
    streams = KafkaStreams(
        build_wordcount(KStreamBuilder(), source, sink),
        {
            "application.id": app_id,
            "bootstrap.servers": cluster.bootstrap_servers,
            "state.dir": str(tmp_path),
            **FAST,
        },
    )
    streams.set_uncaught_exception_handler(lambda thread, e: errors.append(e))
    streams.start()
    try:
        wait_until(lambda: errors, 30, "the stream thread to stop on the bad topic")
    finally:
        assert streams.close(30_000)
    # The group leader's assignor raised it, from inside the thread's poll.
    assert isinstance(errors[0], StreamsException)
    assert str(errors[0]) == (
        f"Existing internal topic {app_id}-Counts-repartition has invalid partitions. Expected: 3 Actual: 1. "
        "Use 'kafka-lite streams reset' to clean up invalid topics before processing."
    )
