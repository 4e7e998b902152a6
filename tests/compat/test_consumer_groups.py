"""Consumer groups across client libraries on the session's real 3-broker cluster.

- One group with kafka_lite's, kafka-python's, confluent-kafka's and aiokafka's consumers, and a
  kafka_lite consumer in a process of its own (tests/compat/group_member.py): members join, one
  leaves (close: LeaveGroup), the process is SIGKILLed (no LeaveGroup: its session expires). The
  coordinator's own record of every generation, the group metadata it writes to
  ``__consumer_offsets`` at each SyncGroup (read back with kafka-python, decoded with Kafka's
  schemas), shows that in each generation every partition has exactly one owner and every member a
  share; what each member's rebalance listener heard matches it; and the records the members read
  cover every record produced, before and during the changes (at least once across the kill).
- kcat's balanced consumer (``-G``) joins a group and reads everything; ``kafka-lite
  consumer-groups --describe`` shows its member, assignment and lag meanwhile.
- confluent-kafka's, aiokafka's and kafka-python's subscribing consumers in one group, kafka-python's
  kept in it by its heartbeat thread while it does not poll for longer than its session timeout;
  ``--describe`` shows each member, its partition and its lag.

Every consumer polls in a thread of its own (aiokafka in its own event loop's thread), since a member
must poll to rejoin a rebalance; every wait is on a condition with a deadline."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import aiokafka
import aiokafka.abc
import confluent_kafka
import kafka
import pytest

from kafka_lite import KafkaConsumer as LiteConsumer
from kafka_lite.cli.main import main as kafka_lite_cli
from kafka_lite.consumer.consumer_rebalance_listener import ConsumerRebalanceListener as LiteListener
from kafka_lite.consumer.internals.consumer_protocol import deserialize_assignment
from kafka_lite.coordinator.group_metadata import GroupState
from kafka_lite.coordinator.group_metadata_manager import GROUP_METADATA_TOPIC_NAME, partition_for
from kafka_lite.coordinator.offsets_topic_records import (
    GroupMetadataKey,
    read_group_message_value,
    read_message_key,
)
from tests.support.cluster import LiteCluster
from tests.support.kraft_cluster import zookeeper_only
from tests.support.topics import topic_name
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.compat, pytest.mark.xdist_group("cluster")]

REPO = Path(__file__).resolve().parents[2]
KCAT = shutil.which("kcat") or shutil.which("kafkacat")
OFFSETS_PARTITIONS = 4  # offsets.topic.num.partitions of the test profile
DEADLINE_S = 45  # joins on two shared CPUs; a killed member's session (3 s) must expire on top
SESSION_TIMEOUT_MS = 6000
HEARTBEAT_INTERVAL_MS = 300
MAX_POLL_INTERVAL_MS = 20_000  # also every member's rebalance timeout: bounds a rebalance's wait


# -- the members -------------------------------------------------------------------------------------------


class Member:
    """A group member of some client library, polling in its own thread. It keeps, in order, what its
    rebalance listener heard (``("assigned", partitions)``) and what it read (``("record", partition,
    offset)``); ``stop`` ends the loop and closes the consumer (which leaves the group) in that thread."""

    library = ""

    def __init__(self, bootstrap: str, topic: str, group: str, client_id: str) -> None:
        self.bootstrap, self.topic, self.group, self.client_id = bootstrap, topic, group, client_id
        self.events: list[tuple] = []
        self.error: BaseException | None = None
        self.polling = threading.Event()  # cleared by a test to hold the loop without polling
        self.polling.set()
        self.held = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._main, name=f"member-{client_id}", daemon=True)
        self._thread.start()

    def _main(self) -> None:
        try:
            self.run()
        except BaseException as e:  # reported by the test through check()
            self.error = e

    def run(self) -> None:
        raise NotImplementedError

    def assigned(self, partitions) -> None:
        self.events.append(("assigned", frozenset(partitions)))

    def read(self, partition: int, offset: int) -> None:
        self.events.append(("record", partition, offset))

    def hold(self) -> bool:
        """Wait while the test holds the loop (``held`` set meanwhile); whether to go on polling."""
        while not self.polling.is_set() and not self._stop.is_set():
            self.held.set()
            self.polling.wait(0.05)
        self.held.clear()
        return not self._stop.is_set()

    def check(self) -> None:
        if self.error is not None:
            raise AssertionError(f"{self.client_id}'s poll loop failed: {self.error!r}") from self.error

    def assignments(self) -> list[frozenset]:
        return [e[1] for e in list(self.events) if e[0] == "assigned"]

    def current(self) -> frozenset | None:
        self.check()
        owned = self.assignments()
        return owned[-1] if owned else None

    def records(self) -> set[tuple[int, int]]:
        return {(e[1], e[2]) for e in list(self.events) if e[0] == "record"}

    def stop(self) -> None:
        self._stop.set()
        self.polling.set()
        self._thread.join(30)
        assert not self._thread.is_alive(), f"{self.client_id}'s poll loop did not stop"
        self.check()


class LiteMember(Member):
    library = "kafka_lite"

    def run(self) -> None:
        member = self

        class Listener(LiteListener):
            def on_partitions_revoked(self, partitions) -> None:
                pass

            def on_partitions_assigned(self, partitions) -> None:
                member.assigned(p for _, p in partitions)

        consumer = LiteConsumer(
            bootstrap_servers=self.bootstrap, group_id=self.group, client_id=self.client_id,
            auto_offset_reset="earliest", auto_commit_interval_ms=500, fetch_max_wait_ms=100,
            session_timeout_ms=SESSION_TIMEOUT_MS, heartbeat_interval_ms=HEARTBEAT_INTERVAL_MS,
            max_poll_interval_ms=MAX_POLL_INTERVAL_MS, request_timeout_ms=MAX_POLL_INTERVAL_MS + 5000,
        )  # fmt: skip
        consumer.subscribe([self.topic], listener=Listener())
        try:
            while self.hold():
                for tp, records in consumer.poll(timeout_ms=100).items():
                    for r in records:
                        self.read(tp[1], r.offset)
        finally:
            consumer.close(timeout_ms=10_000)


class PythonMember(Member):
    library = "kafka-python"

    def __init__(self, *args, session_timeout_ms: int = SESSION_TIMEOUT_MS, **kwargs) -> None:
        self.session_timeout_ms = session_timeout_ms
        self.consumer: kafka.KafkaConsumer | None = None
        super().__init__(*args, **kwargs)

    def run(self) -> None:
        member = self

        class Listener(kafka.ConsumerRebalanceListener):
            def on_partitions_revoked(self, revoked) -> None:
                pass

            def on_partitions_assigned(self, assigned) -> None:
                member.assigned(tp.partition for tp in assigned)

        consumer = self.consumer = kafka.KafkaConsumer(
            bootstrap_servers=self.bootstrap, group_id=self.group, client_id=self.client_id,
            auto_offset_reset="earliest", auto_commit_interval_ms=500, fetch_max_wait_ms=100,
            session_timeout_ms=self.session_timeout_ms, heartbeat_interval_ms=HEARTBEAT_INTERVAL_MS,
            max_poll_interval_ms=MAX_POLL_INTERVAL_MS,
        )  # fmt: skip
        # The topic's metadata before subscribing, so kafka-python joins once knowing the partitions
        # (as tests/server/test_group_apis.py explains)
        assert consumer.partitions_for_topic(self.topic), f"no metadata for {self.topic}"
        consumer.subscribe([self.topic], listener=Listener())
        try:
            while self.hold():
                for tp, records in consumer.poll(timeout_ms=100).items():
                    for r in records:
                        self.read(tp.partition, r.offset)
        finally:
            consumer.close()  # commits (auto-commit) and sends LeaveGroup


class ConfluentMember(Member):
    library = "confluent-kafka"

    def run(self) -> None:
        consumer = confluent_kafka.Consumer({
            "bootstrap.servers": self.bootstrap, "group.id": self.group, "client.id": self.client_id,
            "auto.offset.reset": "earliest", "auto.commit.interval.ms": 500, "fetch.wait.max.ms": 100,
            "session.timeout.ms": SESSION_TIMEOUT_MS, "heartbeat.interval.ms": HEARTBEAT_INTERVAL_MS,
            "max.poll.interval.ms": MAX_POLL_INTERVAL_MS,
        })  # fmt: skip

        def on_assign(consumer, partitions) -> None:
            self.assigned(tp.partition for tp in partitions)

        consumer.subscribe([self.topic], on_assign=on_assign)
        try:
            while self.hold():
                message = consumer.poll(0.1)
                if message is None:
                    continue
                if message.error():
                    raise confluent_kafka.KafkaException(message.error())
                self.read(message.partition(), message.offset())
        finally:
            consumer.close()  # commits and leaves


class AioMember(Member):
    library = "aiokafka"

    def run(self) -> None:
        asyncio.run(self._consume())

    async def _consume(self) -> None:
        member = self

        class Listener(aiokafka.abc.ConsumerRebalanceListener):
            def on_partitions_revoked(self, revoked) -> None:
                pass

            def on_partitions_assigned(self, assigned) -> None:
                member.assigned(tp.partition for tp in assigned)

        consumer = aiokafka.AIOKafkaConsumer(
            bootstrap_servers=self.bootstrap, group_id=self.group, client_id=self.client_id,
            auto_offset_reset="earliest", auto_commit_interval_ms=500, fetch_max_wait_ms=100,
            session_timeout_ms=SESSION_TIMEOUT_MS, heartbeat_interval_ms=HEARTBEAT_INTERVAL_MS,
            max_poll_interval_ms=MAX_POLL_INTERVAL_MS,
        )  # fmt: skip
        consumer.subscribe([self.topic], listener=Listener())
        await consumer.start()
        try:
            while not self._stop.is_set():
                if not self.polling.is_set():
                    self.held.set()
                    await asyncio.sleep(0.05)  # held by the test: no getmany
                    continue
                self.held.clear()
                for tp, records in (await consumer.getmany(timeout_ms=100)).items():
                    for r in records:
                        self.read(tp.partition, r.offset)
        finally:
            await consumer.stop()  # commits and leaves


class ProcessMember:
    """A kafka_lite member in its own process (tests/compat/group_member.py), to be SIGKILLed."""

    def __init__(self, bootstrap: str, topic: str, group: str, client_id: str, report: Path) -> None:
        self.client_id, self.report = client_id, report
        path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
        env = {**os.environ, "PYTHONPATH": path}
        self.stderr = report.with_suffix(".stderr")  # a file: a full pipe would block the process
        with open(self.stderr, "wb") as stderr:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "tests.compat.group_member", bootstrap, topic, group, client_id, str(report)],
                cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=stderr,
            )  # fmt: skip

    def events(self) -> list[dict]:
        if not self.report.exists():
            return []
        lines = self.report.read_text().splitlines()
        return [json.loads(line) for line in lines if line.endswith("}")]  # a torn last line is skipped

    def check(self) -> None:
        if self.process.poll() is not None and self.process.returncode != -signal.SIGKILL:
            raise AssertionError(
                f"{self.client_id} exited with {self.process.returncode}: "
                f"{self.stderr.read_text(errors='replace')}"
            )

    def assignments(self) -> list[tuple[int, frozenset]]:
        return [(e["generation"], frozenset(e["assigned"])) for e in self.events() if "assigned" in e]

    def current(self) -> frozenset | None:
        self.check()
        owned = self.assignments()
        return owned[-1][1] if owned else None

    def records(self) -> set[tuple[int, int]]:
        return {tuple(pair) for e in self.events() if "records" in e for pair in e["records"]}

    def committed(self) -> dict[int, int]:
        last: dict[int, int] = {}
        for e in self.events():
            last.update({int(p): o for p, o in e.get("committed", {}).items()})
        return last

    def kill(self) -> None:
        self.check()
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)


# -- the coordinator's view --------------------------------------------------------------------------------


def group_in_coordinator(cluster, group: str):
    """The group as its coordinator holds it, in process: the broker leading the group's
    ``__consumer_offsets`` partition."""
    leader = cluster.leader_of(GROUP_METADATA_TOPIC_NAME, partition_for(group, OFFSETS_PARTITIONS))
    return cluster.server(leader).group_coordinator.group_manager.get_group(group)


def described_group(cluster, group: str):
    """The group as its coordinator describes it to clients (DescribeGroups)."""
    admin = cluster.admin()
    try:
        (described,) = admin.describe_consumer_groups([group])
        return described
    finally:
        admin.close()


def group_members(cluster, group: str) -> list[tuple[str, frozenset]] | None:
    """The group's members as (client id, partitions) while it is Stable, else None. On
    the ZooKeeper cluster read in process under the group's lock, which costs its brokers (in this
    process) nothing however often a wait asks; a KRaft cluster's coordinator is asked with
    DescribeGroups, which answers the same under the same lock."""
    if not isinstance(cluster, LiteCluster):
        g = described_group(cluster, group)
        if g.state != GroupState.STABLE.value:
            return None
        return [(m.client_id, frozenset(p for _, p in m.assignment)) for m in g.members]
    g = group_in_coordinator(cluster, group)
    if g is None:
        return None
    with g.lock:
        if not g.is_(GroupState.STABLE):
            return None
        return [(m.client_id, frozenset(p for _, p in deserialize_assignment(m.assignment).partitions))
                for m in g.all_member_metadata()]  # fmt: skip


def stable_assignment(cluster, group: str) -> dict[str, frozenset] | None:
    """The Stable group's assignment by client id (each client id once), or None if not Stable."""
    members = group_members(cluster, group)
    if members is None:
        return None
    owned = dict(members)
    return owned if len(owned) == len(members) else None


def settled(cluster, group: str, members: list) -> bool:
    """Stable with exactly ``members``, each knowing (its listener told) what the coordinator gave it."""
    owned = stable_assignment(cluster, group)
    return owned is not None and owned == {m.client_id: m.current() for m in members}


def stored_generations(bootstrap: str, group: str) -> dict[int, list[tuple[str, frozenset]]]:
    """Every generation of ``group`` the coordinator completed, with each member's client id and
    partitions, from the group metadata records it wrote to ``__consumer_offsets`` (the last record
    of a generation wins, as the log's compaction keeps it)."""
    tp = kafka.TopicPartition(GROUP_METADATA_TOPIC_NAME, partition_for(group, OFFSETS_PARTITIONS))
    reader = kafka.KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    try:
        reader.assign([tp])
        reader.seek_to_beginning(tp)
        end = reader.end_offsets([tp])[tp]
        generations: dict[int, list[tuple[str, frozenset]]] = {}

        def read_to_end() -> bool:
            for r in reader.poll(timeout_ms=200).get(tp, []):
                key = read_message_key(r.key)
                if isinstance(key, GroupMetadataKey) and key.key == group:
                    stored = read_group_message_value(group, r.value)
                    if stored is not None:
                        generations[stored.generation] = [
                            (m.client_id, frozenset(p for _, p in deserialize_assignment(m.assignment).partitions))
                            for m in stored.members
                        ]  # fmt: skip
            return reader.position(tp) >= end

        wait_until(read_to_end, DEADLINE_S, f"{tp} read to its end offset {end}")
        return generations
    finally:
        reader.close()


def produce(bootstrap: str, topic: str, partitions: int, per_partition: int) -> None:
    producer = kafka.KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    try:
        for p in range(partitions):
            for i in range(per_partition):
                producer.send(topic, value=f"{p}-{i}".encode(), partition=p)
        producer.flush(timeout=30)
    finally:
        producer.close()


def matches_in_order(heard: list[frozenset], stored: list[tuple[int, frozenset]]) -> bool:
    """Whether each assignment a member heard is the coordinator's for it in some generation, the
    generations not going back."""
    i = 0
    for partitions in heard:
        while i < len(stored) and stored[i][1] != partitions:
            i += 1
        if i == len(stored):
            return False
    return True


# -- 1. the mixed group ------------------------------------------------------------------------------------

PARTITIONS = 6
# records per partition produced before the group, while it runs, and after the kill
FIRST, SECOND, THIRD = 20, 10, 10
JOINING = [(LiteMember, "mixed-lite"), (PythonMember, "mixed-python"), (ConfluentMember, "mixed-confluent"),
           (AioMember, "mixed-aio")]  # fmt: skip


def test_mixed_group_shares_partitions_through_join_leave_and_kill(cluster, tmp_path):
    bootstrap = cluster.bootstrap_servers
    topic, group = topic_name("mixed"), topic_name("g-mixed")
    cluster.create_topic(topic, partitions=PARTITIONS)
    produce(bootstrap, topic, PARTITIONS, FIRST)
    everything = frozenset(range(PARTITIONS))

    # The process member joins alone, reads the first records and commits them all: every other
    # member then starts from these committed offsets, never from the beginning.
    killed = ProcessMember(bootstrap, topic, group, "mixed-killed", tmp_path / "killed.jsonl")
    members: list = []
    try:
        wait_until(lambda: killed.check() or killed.committed() == dict.fromkeys(everything, FIRST),
                   DEADLINE_S, f"the process member to read and commit offset {FIRST} of every partition")  # fmt: skip
        # The others join one at a time, each join a rebalance
        for kind, client_id in JOINING:
            members.append(kind(bootstrap, topic, group, client_id))
            wait_until(lambda: settled(cluster, group, [killed, *members]), DEADLINE_S,
                       f"{client_id} to join and the {len(members) + 1} members to share the partitions")  # fmt: skip
        lite, python, confluent, aio = members

        produce(bootstrap, topic, PARTITIONS, SECOND)  # while the group runs
        wait_until(lambda: any(o >= FIRST for _, o in killed.records()), DEADLINE_S,
                   "the process member to read records produced while the group runs")  # fmt: skip

        python.stop()  # kafka-python's close: LeaveGroup, the others rebalance at once
        wait_until(lambda: settled(cluster, group, [killed, lite, confluent, aio]), DEADLINE_S,
                   "the group to rebalance without kafka-python's member")  # fmt: skip

        killed.kill()  # no LeaveGroup: the coordinator notices when its session expires
        produce(bootstrap, topic, PARTITIONS, THIRD)
        survivors = [lite, confluent, aio]
        wait_until(lambda: settled(cluster, group, survivors), DEADLINE_S,
                   "the group to rebalance without the killed member once its session expired")  # fmt: skip

        produced = {(p, o) for p in range(PARTITIONS) for o in range(FIRST + SECOND + THIRD)}

        def consumed() -> set:
            for m in members:
                m.check()
            return set().union(killed.records(), *(m.records() for m in members))

        what = f"the {len(produced)} records read at least once"
        wait_until(lambda: consumed() >= produced, DEADLINE_S, what)
        assert consumed() == produced  # and nothing that was never produced

        # Everyone but the process member started from its committed offsets (it had committed
        # offset FIRST of every partition before they joined).
        for m in members:
            below = sorted((p, o) for p, o in m.records() if o < FIRST)
            assert not below, f"{m.client_id} read {below[:5]}... below the committed offsets"
        # A member reads only partitions its listener was told it owns, at that time.
        for m in members:
            owned: frozenset = frozenset()
            for event in list(m.events):
                if event[0] == "assigned":
                    owned = event[1]
                else:
                    assert event[1] in owned, f"{m.client_id} read partition {event[1]}, owning {set(owned)}"
    finally:
        for m in members:
            if m._thread.is_alive():
                m.stop()
        killed.close()

    # The coordinator's record of every generation it completed
    generations = stored_generations(bootstrap, group)
    assert generations, f"no group metadata of {group} in {GROUP_METADATA_TOPIC_NAME}"
    for generation, assignment in sorted(generations.items()):
        if not assignment:
            continue  # the group emptied: no members, nothing owned
        clients = [c for c, _ in assignment]
        owned = sorted(p for _, partitions in assignment for p in partitions)
        assert len(set(clients)) == len(clients), f"generation {generation}: a client twice in {clients}"
        assert owned == sorted(everything), (
            f"generation {generation}: every partition needs exactly one owner: {assignment}"
        )
        assert all(partitions for _, partitions in assignment), (
            f"generation {generation}: a member without partitions: {assignment}"
        )

    # ... which saw the group grow by one member at a time, lose kafka-python's member, then the killed one
    memberships = [frozenset(c for c, _ in a) for _, a in sorted(generations.items()) if a]
    grown = [frozenset({"mixed-killed", *(c for _, c in JOINING[:n])}) for n in range(len(JOINING) + 1)]
    after_leave = grown[-1] - {"mixed-python"}
    after_kill = after_leave - {"mixed-killed"}
    expected = [*grown, after_leave, after_kill]
    seen = [m for m in memberships if m in expected]
    assert [m for i, m in enumerate(seen) if i == 0 or m != seen[i - 1]] == expected, memberships

    # ... and each member's listener heard its assignment of a generation, in generation order
    by_client: dict[str, list[tuple[int, frozenset]]] = {}
    for generation, assignment in sorted(generations.items()):
        for client, partitions in assignment:
            by_client.setdefault(client, []).append((generation, partitions))
    for generation, partitions in killed.assignments():  # kafka_lite reports its generation
        assert (generation, partitions) in by_client["mixed-killed"], (
            f"the process member owned {set(partitions)} in generation {generation}; the coordinator "
            f"stored {by_client['mixed-killed']}"
        )
    for m in members:
        heard = m.assignments()
        assert heard, f"{m.client_id}'s listener was never called"
        assert matches_in_order(heard, by_client[m.client_id]), (
            f"{m.client_id} ({m.library}) heard {heard}; the coordinator stored {by_client[m.client_id]}"
        )


# -- consumer-groups --describe ----------------------------------------------------------------------------

DESCRIBE_COLUMNS = ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID",
                    "HOST", "CLIENT-ID"]  # fmt: skip


def describe(capsys, bootstrap: str, group: str) -> dict[int, dict[str, str]]:
    """``kafka-lite consumer-groups --describe --group group``'s rows by partition, each as {column: cell}."""
    code = kafka_lite_cli(
        ["consumer-groups", "--bootstrap-server", bootstrap, "--describe", "--group", group]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    header, *lines = out.splitlines()
    assert header.split() == DESCRIBE_COLUMNS, header
    rows = [dict(zip(DESCRIBE_COLUMNS, line.split(), strict=True)) for line in lines]
    return {int(r["PARTITION"]): r for r in rows if r["PARTITION"] != "-"}


def member_ids(cluster, group: str) -> dict[str, str]:
    """The group's member ids by client id, from its coordinator (in process on ZooKeeper)."""
    if not isinstance(cluster, LiteCluster):
        return {m.client_id: m.member_id for m in described_group(cluster, group).members}
    g = group_in_coordinator(cluster, group)
    with g.lock:
        return {m.client_id: m.member_id for m in g.all_member_metadata()}


# -- 2. kcat's balanced consumer ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def kcat():
    if KCAT is None:
        pytest.fail("kcat is not installed: scripts/bootstrap installs it (apt-get install kcat)")
    return KCAT


def test_kcat_balanced_consumer_joins_consumes_and_is_described(cluster, kcat, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # a row stays one line however narrow the terminal
    bootstrap = cluster.bootstrap_servers
    topic, group = topic_name("kcat-group"), topic_name("g-kcat")
    cluster.create_topic(topic, partitions=3)
    produce(bootstrap, topic, 3, 10)
    process = subprocess.Popen(
        [kcat, "-b", bootstrap, "-G", group, "-o", "beginning", "-c", "45", "-q", "-u", "-f", "%p:%o\n",
         "-X", "client.id=kcat-member", "-X", "session.timeout.ms=6000", "-X", "heartbeat.interval.ms=300",
         topic],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        # In the group: kcat's member owns the three partitions, has read and committed all ten
        # records of each, and its lag is zero. (It commits on librdkafka's auto-commit timer, every
        # 5 s: kcat's -X gives auto.commit.interval.ms to the legacy topic property of that name.)
        def described_in_group():
            rows = describe(capsys, bootstrap, group)
            caught_up = sorted(rows) == [0, 1, 2] and all(
                (r["CURRENT-OFFSET"], r["LOG-END-OFFSET"], r["LAG"], r["CLIENT-ID"])
                == ("10", "10", "0", "kcat-member") for r in rows.values()
            )  # fmt: skip
            return rows if caught_up else None

        rows = wait_until(
            described_in_group, DEADLINE_S, "kcat's member described owning 3 partitions, lag 0"
        )
        assert {r["CONSUMER-ID"] for r in rows.values()} == {member_ids(cluster, group)["kcat-member"]}

        produce(bootstrap, topic, 3, 5)  # kcat reads these too, and with -c 45 then exits
        out, err = process.communicate(timeout=DEADLINE_S)
        assert process.returncode == 0, err.decode(errors="replace")
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    read = [tuple(map(int, line.split(":"))) for line in out.decode().splitlines()]
    assert sorted(read) == [(p, o) for p in range(3) for o in range(15)]
    # kcat committed on close and left: the offsets stay, with no owner
    rows = describe(capsys, bootstrap, group)
    for p in range(3):
        cells = (rows[p]["CURRENT-OFFSET"], rows[p]["LOG-END-OFFSET"], rows[p]["LAG"], rows[p]["CONSUMER-ID"])
        assert cells == ("15", "15", "0", "-"), rows[p]


# -- 3. confluent-kafka, aiokafka, and kafka-python with its heartbeat thread --------------------------------

PYTHON_SESSION_TIMEOUT_MS = 2000  # kafka-python's member stops polling for longer than this


# ZooKeeper only: the member's heartbeats are read from the coordinator's group in process
@zookeeper_only
def test_subscribing_consumers_of_three_libraries_are_described_and_heartbeats_keep_one_not_polling(
    cluster, capsys, monkeypatch
):
    monkeypatch.setenv("COLUMNS", "200")
    bootstrap = cluster.bootstrap_servers
    topic, group = topic_name("three"), topic_name("g-three")
    cluster.create_topic(topic, partitions=3)
    produce(bootstrap, topic, 3, 10)
    members = [
        ConfluentMember(bootstrap, topic, group, "three-confluent"),
        AioMember(bootstrap, topic, group, "three-aio"),
        PythonMember(bootstrap, topic, group, "three-python", session_timeout_ms=PYTHON_SESSION_TIMEOUT_MS),
    ]
    python = members[2]
    try:
        wait_until(
            lambda: settled(cluster, group, members),
            DEADLINE_S,
            "three libraries' members to share 3 partitions",
        )

        # Each member read its partition and auto-committed: --describe shows it owning its
        # partition, with lag 0
        def described(log_end: dict[int, int], committed: dict[int, int]):
            """The rows, once they show each owned partition with its owner, the log end offset
            (10 unless given) and the committed offset (the log end unless given)."""
            owned = stable_assignment(cluster, group)
            ids = member_ids(cluster, group)
            rows = describe(capsys, bootstrap, group)
            expected = {}
            for client, partitions in (owned or {}).items():
                for p in partitions:
                    end = log_end.get(p, 10)
                    current = committed.get(p, end)
                    expected[p] = {"GROUP": group, "TOPIC": topic, "PARTITION": str(p), "CURRENT-OFFSET": str(current),
                                   "LOG-END-OFFSET": str(end), "LAG": str(end - current), "CONSUMER-ID": ids[client],
                                   "CLIENT-ID": client}  # fmt: skip
            rows = {p: {k: v for k, v in r.items() if k != "HOST"} for p, r in rows.items()}
            return rows if owned and rows == expected else None

        rows = wait_until(
            lambda: described({}, {}), DEADLINE_S, "each member described owning a partition, lag 0"
        )
        assert {r["CLIENT-ID"] for r in rows.values()} == {m.client_id for m in members}
        # (a member may have read a partition of another before the last rebalance: together they read each record)
        assert set().union(*(m.records() for m in members)) == {(p, o) for p in range(3) for o in range(10)}

        # kafka-python's member stops polling; its heartbeat thread keeps it in the group past its
        # session timeout (and short of max.poll.interval.ms), and the records produced meanwhile
        # to its partition show as lag
        coordinator = cluster.server(
            cluster.leader_of(GROUP_METADATA_TOPIC_NAME, partition_for(group, OFFSETS_PARTITIONS))
        ).group_coordinator
        python.polling.clear()
        wait_until(python.held.is_set, DEADLINE_S, "kafka-python's poll loop to stop polling")
        held_at = coordinator.time.milliseconds()
        generation = group_in_coordinator(cluster, group).generation_id
        (partition,) = python.current()
        produce_to(bootstrap, topic, partition, 5)

        def heartbeat_after_a_session_without_poll() -> bool:
            g = group_in_coordinator(cluster, group)
            with g.lock:
                member = g.get(member_ids(cluster, group)["three-python"])
                return member.latest_heartbeat > held_at + 1.5 * PYTHON_SESSION_TIMEOUT_MS

        wait_until(heartbeat_after_a_session_without_poll, DEADLINE_S,
                   "a heartbeat from kafka-python's member 1.5 session timeouts after its last poll")  # fmt: skip
        assert python.held.is_set(), "kafka-python's member polled while held"
        assert group_in_coordinator(cluster, group).generation_id == generation, "the group rebalanced"
        assert settled(cluster, group, members)
        described_lag = wait_until(lambda: described({partition: 15}, {partition: 10}), DEADLINE_S,
                                   f"partition {partition} described with lag 5")  # fmt: skip
        assert described_lag[partition]["CLIENT-ID"] == "three-python"

        python.polling.set()  # it polls again: reads the five, auto-commits, lag 0
        wait_until(lambda: described({partition: 15}, {}) and python.records() >= {(partition, o) for o in range(10, 15)},
                   DEADLINE_S, "kafka-python's member to catch up")  # fmt: skip
    finally:
        for m in members:
            m.stop()


def produce_to(bootstrap: str, topic: str, partition: int, count: int) -> None:
    producer = kafka.KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    try:
        for i in range(count):
            producer.send(topic, value=f"late-{i}".encode(), partition=partition)
        producer.flush(timeout=30)
    finally:
        producer.close()
