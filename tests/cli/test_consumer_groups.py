"""``kafka-lite consumer-groups`` against the session's cluster and real consumer groups: kafka-python's
consumers (with their heartbeat thread) and confluent-kafka's (librdkafka) join a group, commit, and
the command shows what they hold; after they leave, a reset moves the committed offsets, which a
fresh kafka-python consumer then reads back as committed. The same command against a scripted
broker, and every bad argument: tests/cli/test_consumer_groups_arguments.py."""

from __future__ import annotations

import datetime
import time
import uuid

import pytest
from kafka import KafkaConsumer, KafkaProducer, OffsetAndMetadata, TopicPartition

from kafka_lite.cli.main import main
from kafka_lite.clients.admin import KafkaAdminClient
from kafka_lite.consumer.offset_and_metadata import OffsetAndMetadata as KafkaLiteOffset
from tests.support.topics import topic_name
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("cluster")]

DEADLINE_S = 60  # a group's first join creates __consumer_offsets; two CPUs are shared by many tests
PRODUCED = {0: 10, 1: 7, 2: 5}  # records per partition
COMMITTED = {0: 4, 1: 7}  # what the group commits; partition 2 gets no commit


def _produce(bootstrap: str, topic: str, counts: dict[int, int]) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    try:
        for partition, count in counts.items():
            for i in range(count):
                producer.send(topic, value=f"record {i}".encode(), partition=partition)
        producer.flush(timeout=30)
    finally:
        producer.close()


def _kafka_python_member(bootstrap: str, topic: str, group: str, client_id: str) -> KafkaConsumer:
    """A kafka-python member of ``group`` subscribed to ``topic``. The topic's metadata first, then the
    subscription: kafka-python then joins knowing the partitions. (Joining before, its leader assigns
    nothing, and rejoins when the metadata arrives; kafka-python 3.0 has been seen to stall for good
    when that metadata and the SyncGroup answer cross.) The rebalance timeout (``max.poll.interval.ms``,
    which a JoinGroup carries) is 20 s, not 5 minutes: a member that keeps heartbeating but never
    rejoins holds every other member's JoinGroup until that timeout, and then the coordinator
    removes it and the rest go on, as Kafka's does."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, client_id=client_id,
                             enable_auto_commit=False, auto_offset_reset="earliest", session_timeout_ms=6000,
                             heartbeat_interval_ms=500, max_poll_interval_ms=20_000)  # fmt: skip
    assert consumer.partitions_for_topic(topic), f"no metadata for {topic}"
    consumer.subscribe([topic])
    return consumer


def _cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["consumer-groups", *args])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def _rows(out: str) -> dict[tuple[str, str], dict[str, str]]:
    """--describe's table by (TOPIC, PARTITION): each row as {column: cell}."""
    header, *lines = out.splitlines()
    columns = header.split()
    assert columns == ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG",
                       "CONSUMER-ID", "HOST", "CLIENT-ID"], header  # fmt: skip
    rows = [dict(zip(columns, line.split(), strict=True)) for line in lines]
    return {(r["TOPIC"], r["PARTITION"]): r for r in rows}


def _stable_with(admin: KafkaAdminClient, group: str, members: int):
    """The group's description once it is Stable with ``members`` members, all with partitions."""

    def stable():
        (description,) = admin.describe_consumer_groups([group])
        ok = (description.state == "Stable" and len(description.members) == members
              and all(m.assignment for m in description.members))  # fmt: skip
        return description if ok else None

    return wait_until(stable, DEADLINE_S, f"group {group} to be Stable with {members} members")


def _committed(admin: KafkaAdminClient, group: str) -> dict[int, int]:
    return {tp[1]: o.offset for tp, o in admin.list_consumer_group_offsets(group).items()}


def test_kafka_python_group_listed_described_and_reset(cluster, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")  # rows stay one line each however narrow the terminal
    bootstrap = cluster.bootstrap_servers
    topic, group = topic_name("cg"), f"cg-{uuid.uuid4().hex[:8]}"
    cluster.create_topic(topic, partitions=3)
    _produce(bootstrap, topic, PRODUCED)
    consumers = [_kafka_python_member(bootstrap, topic, group, f"cg-{name}") for name in ("a", "b")]
    admin = KafkaAdminClient(bootstrap)
    try:

        def assigned() -> bool:
            for consumer in consumers:
                consumer.poll(timeout_ms=100)
            owned = [consumer.assignment() for consumer in consumers]
            return all(owned) and sum(map(len, owned)) == 3 and len(set().union(*owned)) == 3

        wait_until(assigned, DEADLINE_S, "the two kafka-python consumers to share the 3 partitions")
        description = _stable_with(admin, group, 2)
        for consumer in consumers:
            offsets = {tp: OffsetAndMetadata(COMMITTED[tp.partition], "", -1)
                       for tp in consumer.assignment() if tp.partition in COMMITTED}  # fmt: skip
            if offsets:
                consumer.commit(offsets)
        assert _committed(admin, group) == COMMITTED

        # --list: the group is there
        code, out, _ = _cli(capsys, "--bootstrap-server", bootstrap, "--list")
        assert code == 0 and group in out.splitlines()

        # --describe: each partition with its committed offset, log end offset, lag and owner
        code, out, err = _cli(capsys, "--bootstrap-server", bootstrap, "--describe", "--group", group)
        assert (code, err) == (0, "")
        rows = _rows(out)
        assert sorted(rows) == [(topic, "0"), (topic, "1"), (topic, "2")]
        owner_of = {tp.partition: c.config["client_id"] for c in consumers for tp in c.assignment()}
        member_of = {m.client_id: m.member_id for m in description.members}
        for p, produced in PRODUCED.items():
            row = rows[(topic, str(p))]
            current = COMMITTED.get(p)
            assert row["GROUP"] == group
            assert row["LOG-END-OFFSET"] == str(produced)
            assert row["CURRENT-OFFSET"] == ("-" if current is None else str(current))
            assert row["LAG"] == ("-" if current is None else str(produced - current)), (
                "lag = produced - committed"
            )
            assert row["CLIENT-ID"] == owner_of[p]
            assert row["CONSUMER-ID"] == member_of[owner_of[p]]
            assert "127.0.0.1" in row["HOST"]

        # a reset while the members are active is refused, and moves nothing
        code, out, err = _cli(capsys, "--bootstrap-server", bootstrap, "--reset-offsets", "--group", group,
                              "--all-topics", "--to-earliest", "--execute")  # fmt: skip
        assert (code, out) == (1, "")
        assert (f"Assignments can only be reset if the group '{group}' is inactive, "
                "but the current state is Stable.") in err  # fmt: skip
        assert _committed(admin, group) == COMMITTED
    finally:
        for consumer in consumers:
            consumer.close()  # sends LeaveGroup

    try:
        wait_until(lambda: admin.describe_consumer_groups([group])[0].state == "Empty", DEADLINE_S,
                   f"group {group} to be Empty once its consumers left")  # fmt: skip

        # --describe of the empty group: Kafka's note, the committed partitions without owners
        code, out, err = _cli(capsys, "--bootstrap-server", bootstrap, "--describe", "--group", group)
        assert code == 0 and err == f"Consumer group '{group}' has no active members.\n"
        rows = _rows(out)
        assert sorted(rows) == [(topic, "0"), (topic, "1")]
        assert [rows[(topic, "0")][c] for c in ("CURRENT-OFFSET", "LAG", "CONSUMER-ID", "CLIENT-ID")] == [
            "4",
            "6",
            "-",
            "-",
        ]

        # --to-earliest over the committed partitions; a dry run first, which moves nothing
        reset = ("--bootstrap-server", bootstrap, "--reset-offsets", "--group", group)
        code, out, _ = _cli(capsys, *reset, "--all-topics", "--to-earliest", "--dry-run")
        assert code == 0 and [line.split() for line in out.splitlines()] == [
            ["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"], [group, topic, "0", "0"], [group, topic, "1", "0"]]  # fmt: skip
        assert _committed(admin, group) == COMMITTED
        code, out, _ = _cli(capsys, *reset, "--all-topics", "--to-earliest", "--execute")
        assert code == 0 and _committed(admin, group) == {0: 0, 1: 0}

        # --to-latest over the whole topic, then a shift back on one partition
        assert _cli(capsys, *reset, "--topic", topic, "--to-latest", "--execute")[0] == 0
        assert _committed(admin, group) == PRODUCED
        assert _cli(capsys, *reset, "--topic", f"{topic}:2", "--shift-by", "-3", "--execute")[0] == 0
        assert _committed(admin, group) == {**PRODUCED, 2: 2}

        # an independent reader: a kafka-python consumer of the group sees the reset offsets as committed
        reader = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
        try:
            assert {p: reader.committed(TopicPartition(topic, p)) for p in PRODUCED} == {0: 10, 1: 7, 2: 2}
        finally:
            reader.close()

        code, out, _ = _cli(capsys, "--bootstrap-server", bootstrap, "--describe", "--group", group)
        assert {k[1]: r["LAG"] for k, r in _rows(out).items()} == {"0": "0", "1": "0", "2": "3"}
    finally:
        admin.close()


def test_describe_shows_a_confluent_kafka_consumers_member_and_lag(cluster, capsys):
    from confluent_kafka import Consumer
    from confluent_kafka import TopicPartition as CkTopicPartition

    bootstrap = cluster.bootstrap_servers
    topic, group = topic_name("cg-ck"), f"cg-ck-{uuid.uuid4().hex[:8]}"
    cluster.create_topic(topic, partitions=1)
    _produce(bootstrap, topic, {0: 12})
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "client.id": "cg-rdkafka",
                         "enable.auto.commit": False, "auto.offset.reset": "earliest",
                         "session.timeout.ms": 6000, "heartbeat.interval.ms": 500})  # fmt: skip
    admin = KafkaAdminClient(bootstrap)
    try:
        consumer.subscribe([topic])
        received = []

        def consumed_all() -> bool:
            message = consumer.poll(0.1)
            if message is not None and message.error() is None:
                received.append(message.offset())
            return len(received) == 12

        wait_until(consumed_all, DEADLINE_S, "confluent-kafka's consumer to read the 12 records")
        consumer.commit(offsets=[CkTopicPartition(topic, 0, 5)], asynchronous=False)
        (member,) = _stable_with(admin, group, 1).members

        code, out, err = _cli(capsys, "--bootstrap-server", bootstrap, "--describe", "--group", group)
        assert (code, err) == (0, "")
        row = _rows(out)[(topic, "0")]
        assert [row[c] for c in ("CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CLIENT-ID")] == [
            "5",
            "12",
            "7",
            "cg-rdkafka",
        ]
        assert row["CONSUMER-ID"] == member.member_id and member.member_id.startswith("cg-rdkafka-")
    finally:
        consumer.close()
        admin.close()


def test_a_group_that_only_stores_offsets_is_listed_described_and_reset_to_a_time(cluster, capsys):
    bootstrap = cluster.bootstrap_servers
    topic, group = topic_name("cg-time"), f"cg-time-{uuid.uuid4().hex[:8]}"
    cluster.create_topic(topic, partitions=1)
    base = int(time.time() * 1000) - 60_000  # a minute ago: within any retention
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    try:
        for i in range(10):  # offset i has timestamp base + i s
            producer.send(topic, value=b"v", partition=0, timestamp_ms=base + i * 1000)
        producer.flush(timeout=30)
    finally:
        producer.close()
    admin = KafkaAdminClient(bootstrap)
    try:
        # a commit from outside any membership makes the coordinator keep the group, Empty and typeless
        admin.alter_consumer_group_offsets(group, {(topic, 0): KafkaLiteOffset(9)})
        (listing,) = [g for g in admin.list_consumer_groups() if g.group_id == group]
        assert listing.is_simple_consumer_group
        code, out, _ = _cli(capsys, "--bootstrap-server", bootstrap, "--list")
        assert code == 0 and group in out.splitlines()

        # the first record at or after base + 4.5 s is offset 5
        moment = datetime.datetime.fromtimestamp((base + 4500) / 1000, tz=datetime.UTC)
        code, out, err = _cli(capsys, "--bootstrap-server", bootstrap, "--reset-offsets", "--group", group,
                              "--topic", topic, "--to-datetime", moment.isoformat(timespec="milliseconds"),
                              "--execute")  # fmt: skip
        assert (code, err) == (0, "") and out.splitlines()[1].split() == [group, topic, "0", "5"]
        assert _committed(admin, group) == {0: 5}

        code, out, err = _cli(capsys, "--bootstrap-server", bootstrap, "--describe", "--group", group)
        assert code == 0 and err == f"Consumer group '{group}' has no active members.\n"
        row = _rows(out)[(topic, "0")]
        assert [row[c] for c in ("CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID")] == [
            "5",
            "10",
            "5",
            "-",
        ]
    finally:
        admin.close()


def test_describe_shows_a_mixed_group_of_kafka_lite_and_kafka_python_consumers(cluster, capsys):
    from kafka_lite import KafkaConsumer as LiteConsumer

    bootstrap = cluster.bootstrap_servers
    topic, group = topic_name("cg-mixed"), f"cg-mixed-{uuid.uuid4().hex[:8]}"
    cluster.create_topic(topic, partitions=4)
    _produce(bootstrap, topic, {p: 3 for p in range(4)})
    lite = LiteConsumer(topic, bootstrap_servers=bootstrap, group_id=group, client_id="cg-lite",
                        enable_auto_commit=False, auto_offset_reset="earliest", session_timeout_ms=6000,
                        heartbeat_interval_ms=500)  # fmt: skip
    python = _kafka_python_member(bootstrap, topic, group, "cg-python")
    admin = KafkaAdminClient(bootstrap)
    try:

        def shared() -> bool:
            lite.poll(timeout_ms=100)
            python.poll(timeout_ms=100)
            owned = {*lite.assignment(), *((tp.topic, tp.partition) for tp in python.assignment())}
            return bool(lite.assignment()) and bool(python.assignment()) and len(owned) == 4

        wait_until(shared, DEADLINE_S, "a kafka_lite and a kafka-python consumer to share the 4 partitions")
        lite.commit_sync({tp: 1 for tp in lite.assignment()})
        _stable_with(admin, group, 2)

        code, out, err = _cli(capsys, "--bootstrap-server", bootstrap, "--describe", "--group", group)
        assert (code, err) == (0, "")
        rows = _rows(out)
        for tp in lite.assignment():
            row = rows[(topic, str(tp[1]))]
            assert [row[c] for c in ("CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CLIENT-ID")] == [
                "1",
                "3",
                "2",
                "cg-lite",
            ]
        for tp in python.assignment():
            row = rows[(topic, str(tp.partition))]
            assert [row[c] for c in ("CURRENT-OFFSET", "LAG", "CLIENT-ID")] == ["-", "-", "cg-python"]
    finally:
        lite.close()
        python.close()
        admin.close()
