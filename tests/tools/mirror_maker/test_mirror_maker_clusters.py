"""MirrorMaker between two real clusters: the session's ``cluster`` is the source, ``target`` (this
directory's conftest) the target. Every record of a 3-partition topic arrives, with its key, value,
headers and timestamp, in the partition and order it had; a send that fails stops it before it
commits past that record; and a ``kafka-lite mirror-maker`` process
killed with SIGKILL mid-copy, while records keep arriving, loses none once restarted: it copies
again at most what it had sent but not committed when it died."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import pytest

from kafka_lite import KafkaProducer
from kafka_lite.clients.admin import OffsetSpec
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.tools.mirror_maker import MirrorMaker
from tests.support.topics import read_topic, topic_name
from tests.support.waiting import wait_until

pytestmark = pytest.mark.integration

PARTITIONS = 3
# Past the default 7-day retention: the tests' topics keep records forever (retention.ms=-1), or the
# broker's retention check, every 5 minutes, would delete them at a moment no test chooses.
BASE_TIMESTAMP = 1_700_000_000_000
# The source group's consumers: a dead member is noticed within 2 s.
FAST_CONSUMER = {
    "auto.offset.reset": "earliest",
    "session.timeout.ms": "2000",
    "heartbeat.interval.ms": "500",
}


def end_offsets(cluster, topic: str) -> dict[TopicPartition, int]:
    admin = cluster.admin()
    try:
        partitions = [TopicPartition(topic, p) for p in range(PARTITIONS)]
        return {
            tp: r.offset
            for tp, r in admin.list_offsets({tp: OffsetSpec.latest() for tp in partitions}).items()
        }
    finally:
        admin.close()


def committed_offsets(
    cluster, group: str, topic: str, partitions: int = PARTITIONS
) -> dict[TopicPartition, int]:
    admin = cluster.admin()
    try:
        partitions = [TopicPartition(topic, p) for p in range(partitions)]
        return {tp: om.offset for tp, om in admin.list_consumer_group_offsets(group, partitions).items()}
    finally:
        admin.close()


def test_every_record_arrives_with_its_key_value_headers_and_timestamp(cluster, target):
    source = topic_name("mm-all")
    cluster.create_topic(source, partitions=PARTITIONS, retention_ms=-1)
    target.create_topic(source, partitions=PARTITIONS, retention_ms=-1)
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers)
    for i in range(300):
        producer.send(source, f"v{i}".encode(), f"k{i % 17}".encode(),
                      timestamp_ms=BASE_TIMESTAMP + i, headers=[("n", str(i).encode())])  # fmt: skip
    producer.close()

    group = topic_name("mm-group")
    mirror_maker = MirrorMaker.from_configs(
        {"bootstrap.servers": cluster.bootstrap_servers, "group.id": group, **FAST_CONSUMER},
        {"bootstrap.servers": target.bootstrap_servers},
        whitelist=f"{source}, no-such-topic",  # ',' is '|'
        num_streams=2,
        offset_commit_interval_ms=200,
    )
    codes: list[int] = []
    runner = threading.Thread(target=lambda: codes.append(mirror_maker.run()))
    runner.start()
    try:
        wait_until(lambda: sum(end_offsets(target, source).values()) >= 300, 20, "300 records on the target")
    finally:
        mirror_maker.shutdown()
        runner.join(20)
    assert codes == [0]

    def fields(records):
        return {
            p: [(r.key, r.value, tuple(r.headers), r.timestamp) for r in records if r.partition == p]
            for p in range(PARTITIONS)
        }

    # The default handler sets no partition; the target's partitioner puts each key where the
    # source's did (same partition count), and one thread per partition keeps the order.
    assert fields(read_topic(target.bootstrap_servers, source)) == fields(
        read_topic(cluster.bootstrap_servers, source)
    )
    # A clean shutdown flushes and commits everything it copied.
    assert committed_offsets(cluster, group, source) == end_offsets(cluster, source)
    assert mirror_maker.num_dropped_messages == 0


def test_a_failed_send_stops_mirror_maker_without_committing_past_it(cluster, target):
    source = topic_name("mm-abort")
    cluster.create_topic(source, partitions=1, retention_ms=-1)
    target.create_topic(source, partitions=1, retention_ms=-1)
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers)
    for value in (b"small", b"small", b"x" * 5000, b"small"):  # the third is over the target's limit
        producer.send(source, value)
    producer.close()

    group = topic_name("mm-abort-group")
    mirror_maker = MirrorMaker.from_configs(
        {"bootstrap.servers": cluster.bootstrap_servers, "group.id": group, **FAST_CONSUMER},
        {"bootstrap.servers": target.bootstrap_servers, "max.request.size": "1000"},
        whitelist=source,
        offset_commit_interval_ms=0,
    )
    assert mirror_maker.run() == 1
    assert "RecordTooLargeException" in type(mirror_maker.state.failure).__name__
    committed = committed_offsets(cluster, group, source, 1).get(TopicPartition(source, 0), 0)
    assert committed <= 2, f"committed {committed}: past the record that was not copied"


class Writer(threading.Thread):
    """Writes numbered records until told to stop, so that input keeps arriving across the kill.
    With ``partitions``, record n goes to partition n mod ``partitions`` (every one gets records),
    else where its key's hash puts it."""

    def __init__(self, bootstrap: str, topic: str, partitions: int | None = None) -> None:
        super().__init__(daemon=True)
        self.producer = KafkaProducer(bootstrap_servers=bootstrap, client_id="mm-writer")
        self.topic = topic
        self.stop = threading.Event()
        self.sent = 0
        self.partitions = partitions

    def run(self) -> None:
        while not self.stop.is_set():
            partition = None if self.partitions is None else self.sent % self.partitions
            self.producer.send(self.topic, str(self.sent).encode(), f"k{self.sent % 11}".encode(), partition)
            self.sent += 1
            if self.sent % 20 == 0:
                self.producer.flush()
                self.stop.wait(0.02)  # a steady trickle: pacing, not waiting
        self.producer.flush()
        self.producer.close()


def start_mirror_maker(tmp_path: Path, cluster, target, group: str, topic: str, run: int) -> subprocess.Popen:
    """``kafka-lite mirror-maker`` in a process of its own, so that SIGKILL is a real crash."""
    consumer_config = tmp_path / "consumer.properties"
    consumer_config.write_text(
        "".join(f"{k}={v}\n" for k, v in
                {"bootstrap.servers": cluster.bootstrap_servers, "group.id": group, **FAST_CONSUMER}.items())
    )  # fmt: skip
    producer_config = tmp_path / "producer.properties"
    producer_config.write_text(f"bootstrap.servers={target.bootstrap_servers}\nlinger.ms=5\n")
    # The child keeps its own copy of the log file's descriptor: the parent's closes at once.
    with open(tmp_path / f"mirror-maker-{run}.log", "w") as log:
        return subprocess.Popen(
            [str(Path(sys.executable).parent / "kafka-lite"), "mirror-maker", "--consumer.config", str(consumer_config),
             "--producer.config", str(producer_config), "--whitelist", topic, "--num.streams", "2",
             "--offset.commit.interval.ms", "300"],
            stdout=log, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip


def test_a_mirror_maker_killed_mid_copy_loses_nothing_once_restarted(cluster, target, tmp_path):
    source = topic_name("mm-kill")
    cluster.create_topic(source, partitions=PARTITIONS, retention_ms=-1)
    target.create_topic(source, partitions=PARTITIONS, retention_ms=-1)
    group = topic_name("mm-kill-group")
    writer = Writer(cluster.bootstrap_servers, source)
    process = start_mirror_maker(tmp_path, cluster, target, group, source, 1)
    try:
        writer.start()
        # Killed mid-copy: after some commits, while records keep arriving and being sent.
        wait_until(lambda: sum(committed_offsets(cluster, group, source).values()) >= 100, 20,
                   "offsets committed before the kill")  # fmt: skip
        process.send_signal(signal.SIGKILL)
        process.wait(10)
        # What the dead process had committed: the restarted one starts there, so nothing before it
        # may be copied again.
        committed = committed_offsets(cluster, group, source)

        sent_at_kill = writer.sent
        process = start_mirror_maker(tmp_path, cluster, target, group, source, 2)
        wait_until(lambda: writer.sent >= sent_at_kill + 200, 20, "input arriving after the restart")
        writer.stop.set()
        writer.join(20)
        wait_until(lambda: committed_offsets(cluster, group, source) == end_offsets(cluster, source), 20,
                   "every source record copied and committed")  # fmt: skip

        copied = Counter(r.value for r in read_topic(target.bootstrap_servers, source))
        # each value once in the source, with where it is there
        written = {r.value: (r.partition, r.offset) for r in read_topic(cluster.bootstrap_servers, source)}
        assert len(written) == writer.sent
        lost = written.keys() - copied.keys()
        assert not lost, f"{len(lost)} records lost, e.g. {sorted(lost)[:5]}"
        assert copied.keys() == written.keys()
        # A record is copied twice when a mirror maker sent it and did not commit it: the killed one,
        # or the restarted one when a rebalance took its partitions before its commit (its two
        # streams join the group one after the other). Either way it lies at or past the offset
        # committed before the kill: a committed record is never copied again.
        repeated = [value for value, times in copied.items() if times > 1]
        before_the_commit = [
            value for value in repeated
            if written[value][1] < committed.get(TopicPartition(source, written[value][0]), 0)
        ]  # fmt: skip
        assert not before_the_commit, (
            f"{len(before_the_commit)} records copied again though committed before the kill, "
            f"e.g. {sorted(before_the_commit)[:5]}"
        )

        # SIGTERM: a clean shutdown, with a JVM's exit code after that signal.
        process.send_signal(signal.SIGTERM)
        assert process.wait(20) == 128 + signal.SIGTERM
        assert "Kafka mirror maker shutdown successfully" in (tmp_path / "mirror-maker-2.log").read_text()
    finally:
        writer.stop.set()
        if process.poll() is None:
            process.kill()
        process.wait(10)


GUIDE = Path(__file__).resolve().parents[3] / "chapters" / "ch08_mirrormaker_connect" / "mirror_maker.md"


def test_the_guides_quick_start_mirrors_and_a_second_run_copies_only_what_is_new(cluster, target, tmp_path):
    """8.1.1's second block as the page writes it (the source's address and the target's become the
    test clusters'), run twice: the second run is the same group, so it starts at the offsets the
    first committed when it stopped, and copies nothing twice."""
    section = GUIDE.read_text(encoding="utf-8").split("### 8.1.1", 1)[1].split("\n### ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
    script = blocks[1].replace("127.0.0.1:9092", cluster.bootstrap_servers)
    script = script.replace("127.0.0.1:9192", target.bootstrap_servers)
    *configs, run = [line for line in script.replace("\\\n", " ").splitlines() if line.strip()]
    assert run.startswith("kafka-lite mirror-maker "), run
    run = run.replace("kafka-lite ", f"{Path(sys.executable).parent / 'kafka-lite'} ", 1)
    subprocess.run(["bash", "-c", "\n".join(configs)], cwd=tmp_path, check=True)
    topics = {"orders.eu": 3, "payments": 1}  # both match the page's whitelist 'orders.*,payments'
    for topic, partitions in topics.items():
        cluster.create_topic(topic, partitions=partitions, retention_ms=-1)

    def produce(first: int, count: int) -> None:
        with KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks="all") as producer:
            for topic in topics:
                for i in range(first, first + count):
                    producer.send(topic, value=f"{topic} {i}".encode())
            producer.flush()

    def mirror_until(expected: int) -> None:
        process = subprocess.Popen(["bash", "-c", "exec " + run], cwd=tmp_path, text=True,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT)  # fmt: skip
        try:
            for topic in topics:
                wait_until(lambda t=topic: len(read_topic(target.bootstrap_servers, t)) >= expected, 30,
                           f"{expected} records of {topic} on the target")  # fmt: skip
        finally:
            process.send_signal(signal.SIGTERM)  # the reader's Ctrl-C
            out, _ = process.communicate(timeout=30)
        # Killed by SIGTERM after its clean shutdown, as the JVM's shutdown hook leaves Kafka's: 143.
        assert "Kafka mirror maker shutdown successfully" in out, out

    produce(0, 10)
    mirror_until(10)
    produce(10, 5)
    mirror_until(15)
    for topic in topics:
        copied = Counter(r.value for r in read_topic(target.bootstrap_servers, topic))
        assert copied == Counter(f"{topic} {i}".encode() for i in range(15)), f"{topic}: {copied}"
