"""Two instances of word count, one a real process killed with SIGKILL mid-stream: its tasks and
their state move to the survivor, which takes them over from its standby copies."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from kafka_lite import KafkaProducer
from kafka_lite.clients.admin import OffsetSpec
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.streams.examples.wordcount import build_wordcount, split_words
from kafka_lite.streams.kstream.kstream_builder import KStreamBuilder
from kafka_lite.streams.state.queryable_store_types import QueryableStoreTypes
from tests.streams.cluster.support import FAST, oracle_counts, running
from tests.support.topics import read_topic, topic_name
from tests.support.waiting import wait_until

pytestmark = pytest.mark.integration

PARTITIONS = 4
# Enough distinct words that every partition of the repartition topic gets some.
WORDS = [f"{greek}{n}" for n in range(3) for greek in "alpha beta gamma delta epsilon zeta eta theta".split()]


def start_instance(
    bootstrap: str, app_id: str, source: str, sink: str, state_dir: Path, **settings
) -> subprocess.Popen:
    """``kafka-lite streams wordcount`` in a process of its own, so that SIGKILL is a real crash;
    ``settings`` (dotted names) are added to the fast ones. Its output goes to ``output_of(state_dir)``:
    a pipe nobody reads fills up, and the instance would stop at its next log line."""
    properties = [
        a
        for k, v in {**FAST, "num.standby.replicas": 1, **settings}.items()
        for a in ("--property", f"{k}={v}")
    ]
    with output_of(state_dir).open("w") as out:
        return subprocess.Popen(
            [str(Path(sys.executable).parent / "kafka-lite"), "streams", "wordcount", "--bootstrap-server", bootstrap,
             "--application-id", app_id, "--input-topic", source, "--output-topic", sink,
             "--state-dir", str(state_dir), *properties],
            stdout=out, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip


def output_of(state_dir: Path) -> Path:
    return state_dir.parent / f"{state_dir.name}.out"


def wait_naming_output(state_dir: Path, condition, timeout_s: float, what: str) -> None:
    """``wait_until``, its failure ending with the last lines the other instance wrote."""
    try:
        wait_until(condition, timeout_s, what)
    except AssertionError as e:
        tail = output_of(state_dir).read_text(errors="replace")[-3000:]
        raise AssertionError(f"{e}; the other instance's output ends:\n{tail}") from None


class LineWriter(threading.Thread):
    """Writes lines until told to stop, so that input keeps arriving while an instance dies."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        super().__init__(daemon=True)
        self.producer = KafkaProducer(bootstrap_servers=bootstrap, client_id="failover-lines")
        self.topic = topic
        self.stop = threading.Event()
        self.sent = 0

    def run(self) -> None:
        while not self.stop.is_set():
            line = " ".join(WORDS[(self.sent + i) % len(WORDS)] for i in range(5))
            self.producer.send(self.topic, key=str(self.sent).encode(), value=line.encode())
            self.sent += 1
            if self.sent % 20 == 0:
                self.producer.flush()
                self.stop.wait(0.05)  # a steady trickle, not a flood: pacing, not waiting
        self.producer.flush()
        self.producer.close()


def test_a_killed_instance_s_tasks_move_to_the_survivor_with_their_state(cluster, tmp_path):
    bootstrap = cluster.bootstrap_servers
    source, sink = topic_name("fo-lines"), topic_name("fo-counts")
    cluster.create_topic(source, partitions=PARTITIONS)
    cluster.create_topic(sink, partitions=PARTITIONS)
    app_id = topic_name("fo")
    admin = cluster.admin()
    process = start_instance(bootstrap, app_id, source, sink, tmp_path / "killed")
    writer = LineWriter(bootstrap, source)
    try:
        with running(build_wordcount(KStreamBuilder(), source, sink), bootstrap, app_id, tmp_path / "survivor",
                     num_standby_replicas=1) as survivor:  # fmt: skip

            def tasks(kind: str) -> set[str]:
                return {t.task_id for th in survivor.local_threads_metadata() for t in getattr(th, kind)}

            # The two instances share the 8 tasks; each keeps standbys of the other's count tasks.
            wait_naming_output(tmp_path / "killed", lambda: survivor.state().value == "RUNNING"
                               and 0 < len(tasks("active_tasks")) < 2 * PARTITIONS and tasks("standby_tasks"),
                               60, "the tasks shared between the two instances")  # fmt: skip
            moved = {t for t in tasks("standby_tasks")}
            writer.start()
            wait_until(lambda: writer.sent >= 200, 30, "input arriving")
            process.send_signal(signal.SIGKILL)
            process.wait(10)

            # What the dead instance may have processed without committing, and so what the survivor
            # may process again: at-least-once. Measured now, before the survivor takes its partitions.
            repartition = f"{app_id}-Counts-repartition"
            partitions = [TopicPartition(t, p) for t in (source, repartition) for p in range(PARTITIONS)]
            committed = {
                tp: om.offset for tp, om in admin.list_consumer_group_offsets(app_id, partitions).items()
            }
            ends = {
                tp: r.offset
                for tp, r in admin.list_offsets({tp: OffsetSpec.latest() for tp in partitions}).items()
            }

            wait_until(lambda: writer.sent >= 400, 30, "input arriving after the kill")
            writer.stop.set()
            writer.join(30)

            # The survivor runs every task once the group has noticed the death (session timeout).
            wait_until(lambda: len(tasks("active_tasks")) == 2 * PARTITIONS and survivor.state().value == "RUNNING",
                       60, "the survivor to run all 8 tasks")  # fmt: skip
            lines = read_topic(bootstrap, source)
            assert len(lines) == writer.sent
            wait_until(lambda: _all_committed(admin, app_id, partitions), 60, "every input record processed")
            store = survivor.store("Counts", QueryableStoreTypes.key_value_store())
            counts = dict(store.all())

            expected = oracle_counts([r.value.decode() for r in lines])
            below = {w: (counts.get(w, 0), n) for w, n in expected.items() if counts.get(w, 0) < n}
            assert not below, f"counts below the oracle (lost records): {below}"
            # Counted twice at most: the words of lines past the committed offsets when the instance
            # died, and the repartitioned words past theirs (each one count).
            may_repeat = sum(
                len(split_words(r.value.decode())) for r in lines
                if committed.get(TopicPartition(source, r.partition), 0) <= r.offset < ends[TopicPartition(source, r.partition)]
            ) + sum(ends[tp] - committed.get(tp, 0) for tp in partitions if tp.topic == repartition)  # fmt: skip
            extra = sum(counts.values()) - sum(expected.values())
            assert 0 <= extra <= may_repeat, f"{extra} counted twice, at most {may_repeat} may be"

            # The moved count tasks were standbys here: restored from the tail, not from scratch.
            changelog = read_topic(bootstrap, f"{app_id}-Counts-changelog")
            restored, full = 0, 0
            for thread in survivor.threads:
                for task_id, task in thread.active_tasks.items():
                    if str(task_id) in moved and task_id.topic_group_id == 1:
                        restored += task.state_mgr.restored["Counts"]
                        full += sum(1 for r in changelog if r.partition == task_id.partition)
            assert 0 <= restored < full, (
                f"the moved tasks replayed {restored} of their {full} changelog records"
            )
    finally:
        writer.stop.set()
        if process.poll() is None:
            process.kill()
        process.wait(10)
        admin.close()


def _all_committed(admin, group: str, partitions: list[TopicPartition]) -> bool:
    committed = admin.list_consumer_group_offsets(group, partitions)
    ends = admin.list_offsets({tp: OffsetSpec.latest() for tp in partitions})
    # A partition nothing was written to has no committed offset: 0 is its end.
    return all((committed[tp].offset if tp in committed else 0) == ends[tp].offset for tp in partitions)
