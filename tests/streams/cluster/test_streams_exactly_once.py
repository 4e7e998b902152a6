"""Word count under processing.guarantee=exactly_once, one of two instances a real process killed
with SIGKILL mid-stream: its open transactions are aborted when the survivor fences its producers,
and every count ends equal to the oracle's, with no count ever written twice. The counts pass
through the record cache (0.10.1's default), so a word's committed counts skip the values that a
later update overwrote in the cache before the commit: they rise strictly, and end at the oracle's."""

from __future__ import annotations

import signal
import sys
import traceback
from collections import defaultdict

import pytest

from kafka_lite import KafkaConsumer
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.streams.errors import InvalidStateStoreException
from kafka_lite.streams.examples.wordcount import build_wordcount
from kafka_lite.streams.kstream.kstream_builder import KStreamBuilder
from kafka_lite.streams.state.queryable_store_types import QueryableStoreTypes
from tests.streams.cluster.support import oracle_counts, running
from tests.streams.cluster.test_streams_failover import WORDS, LineWriter, start_instance, wait_naming_output
from tests.support.topics import read_topic, topic_name
from tests.support.waiting import wait_until, wait_while_progressing

pytestmark = pytest.mark.integration

PARTITIONS = 4


def committed_counts(
    bootstrap: str, topic: str, until_last: dict[str, int] | None = None
) -> dict[str, list[int]]:
    """Each word's counts in the order written, as a read_committed consumer sees the output topic:
    read until each word's last count is ``until_last``'s and nothing more comes, or, without
    ``until_last``, until a poll finds nothing."""
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap, isolation_level="read_committed", auto_offset_reset="earliest",
        enable_auto_commit=False, client_id="eos-checker",
    )  # fmt: skip
    counts: dict[str, list[int]] = defaultdict(list)
    try:
        consumer.assign([TopicPartition(topic, p) for p in range(PARTITIONS)])

        def read_all() -> bool:
            polled = consumer.poll(200)
            for records in polled.values():
                for record in records:
                    counts[record.key.decode()].append(int.from_bytes(record.value, "big", signed=True))
            if until_last is None:
                return not polled
            return {word: seen[-1] for word, seen in counts.items()} == until_last

        wait_until(read_all, 30, f"the committed counts in {topic} to reach {until_last or 'their end'}")
        if until_last is not None:
            assert not consumer.poll(500), "more committed output after every word reached its count"
    finally:
        consumer.close()
    return counts


def where_it_stands(survivor, bootstrap: str, app_id: str) -> str:
    """What a stalled survivor is doing: each stream thread's stack, each active task's buffered
    records and consumed offsets, and each partition the group reads: committed offset, last stable
    offset (what read_committed may read) and high watermark."""
    lines = []
    frames = sys._current_frames()
    for thread in survivor.threads:
        stack = (
            traceback.format_stack(frames[thread.ident])[-6:] if thread.ident in frames else ["(not running)"]
        )
        lines.append(f"{thread.name} {thread.state.value}:\n" + "".join(stack))
        for task_id, task in sorted(thread.active_tasks.items()):
            lines.append(f"  task {task_id}: buffered {task.partition_group.num_buffered()}, "
                         f"consumed {dict(task.consumed_offsets)}, in a transaction {task.transaction_in_flight}")  # fmt: skip
    partitions = sorted(
        {tp for th in survivor.threads for task in th.active_tasks.values() for tp in task.partitions}
    )
    for isolation in ("read_committed", "read_uncommitted"):
        consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=app_id, isolation_level=isolation,
                                 enable_auto_commit=False, client_id="eos-diagnosis")  # fmt: skip
        try:
            ends = consumer.end_offsets(partitions)
            if isolation == "read_committed":
                committed = {tp: consumer.committed(tp) for tp in partitions}
        finally:
            consumer.close()
        lines.append(f"{isolation} end offsets: {ends}")
    lines.append(f"committed offsets: {committed}")
    return "\n".join(lines)


def test_word_count_exactly_once_survives_a_sigkill_with_every_count_equal_to_the_oracle(cluster, tmp_path):
    bootstrap = cluster.bootstrap_servers
    source, sink = topic_name("eos-lines"), topic_name("eos-counts")
    cluster.create_topic(source, partitions=PARTITIONS)
    cluster.create_topic(sink, partitions=PARTITIONS)
    app_id = topic_name("eos")
    settings = {"processing.guarantee": "exactly_once", "num.standby.replicas": 0}
    process = start_instance(bootstrap, app_id, source, sink, tmp_path / "killed", **settings)
    writer = LineWriter(bootstrap, source)
    try:
        with running(build_wordcount(KStreamBuilder(), source, sink), bootstrap, app_id, tmp_path / "survivor",
                     processing_guarantee="exactly_once") as survivor:  # fmt: skip

            def active_tasks() -> int:
                return sum(len(th.active_tasks) for th in survivor.local_threads_metadata())

            wait_naming_output(tmp_path / "killed", lambda: survivor.state().value == "RUNNING"
                               and 0 < active_tasks() < 2 * PARTITIONS,
                               120, "the tasks shared between the two instances")  # fmt: skip
            writer.start()
            wait_until(lambda: writer.sent >= 200, 30, "input arriving")
            process.send_signal(signal.SIGKILL)  # mid-stream: its open transactions never commit
            process.wait(10)
            wait_until(lambda: writer.sent >= 400, 30, "input arriving after the kill")
            writer.stop.set()
            writer.join(60)
            assert not writer.is_alive(), "the line writer did not stop: the oracle would miss its last lines"

            lines = [r.value.decode() for r in read_topic(bootstrap, source)]
            assert len(lines) == writer.sent
            expected = oracle_counts(lines)
            wait_until(lambda: active_tasks() == 2 * PARTITIONS and survivor.state().value == "RUNNING",
                       60, "the survivor to run all 8 tasks")  # fmt: skip

            last: dict[str, int] = {}

            def counts_reach_the_oracle() -> bool:
                try:
                    last.clear()
                    last.update(survivor.store("Counts", QueryableStoreTypes.key_value_store()).all())
                except InvalidStateStoreException:  # a rebalance in progress
                    return False
                return last == dict(expected)

            try:
                # One thread runs all eight tasks, each committing its own transaction every 100 ms:
                # on a loaded machine catching up takes long, but the counts must keep rising.
                wait_while_progressing(counts_reach_the_oracle, lambda: sum(last.values()), 60, 300,
                                       "the survivor's counts to reach the oracle's")  # fmt: skip
            except AssertionError as waited:
                off = {w: (last.get(w), n) for w, n in expected.items() if last.get(w) != n}
                seen = committed_counts(bootstrap, sink)
                raise AssertionError(
                    f"{waited}; (count, oracle) of the words that differ: {off}; committed output of the first: "
                    f"{seen.get(next(iter(off), ''))}\n{where_it_stands(survivor, bootstrap, app_id)}"
                ) from None

            # Each word's committed counts rise strictly to the oracle's n: the cache leaves out the
            # counts a later update overwrote before a commit, but a record processed twice (as
            # at-least-once may after a crash) would repeat a count, or end above n.
            written = committed_counts(bootstrap, sink, dict(expected))
            wrong = {w: c for w, c in written.items() if c != sorted(set(c)) or c[-1] != expected[w]}
            assert not wrong, f"counts not rising strictly to n per word: {dict(list(wrong.items())[:3])}"
            assert set(written) == set(expected) == {w.lower() for w in WORDS}
    finally:
        writer.stop.set()
        if process.poll() is None:
            process.kill()
        process.wait(10)
