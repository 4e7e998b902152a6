"""``kafka-lite streams reset`` against the session's cluster: a stopped application's group has
committed offsets in its input, intermediate and internal topics; the reset moves the input's to
the log start, the intermediate topic's to the log end, deletes the application's changelog and
repartition topics (and nothing else), and prints each step as Kafka's tool does. While a member is
in the group, it refuses and changes nothing. Bad arguments: tests/cli/test_streams_reset_arguments.py."""

from __future__ import annotations

import uuid

import pytest
from kafka import KafkaConsumer, KafkaProducer

from kafka_lite.cli.main import main
from kafka_lite.clients.admin import KafkaAdminClient
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.consumer.offset_and_metadata import OffsetAndMetadata
from tests.support.topics import topic_name
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("cluster")]

RECORDS = 5  # per partition of the input and intermediate topics


def _produce(bootstrap: str, *topics: str) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    try:
        for topic in topics:
            for partition in (0, 1):
                for i in range(RECORDS):
                    producer.send(topic, value=f"record {i}".encode(), partition=partition)
        producer.flush(timeout=30)
    finally:
        producer.close()


def _reset(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["streams", "reset", *args])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def _committed(admin: KafkaAdminClient, group: str) -> dict[tuple[str, int], int]:
    return {(tp[0], tp[1]): o.offset for tp, o in admin.list_consumer_group_offsets(group).items()}


def test_reset_moves_offsets_and_deletes_the_internal_topics(cluster, capsys):
    bootstrap = cluster.bootstrap_servers
    app = f"wc-{uuid.uuid4().hex[:8]}"
    source, through, output = topic_name("lines"), topic_name("words"), f"{app}-output"
    changelog, repartition = f"{app}-Counts-changelog", f"{app}-Counts-repartition"
    other_app = f"{app}x-Counts-changelog"  # another application's: same shape, other id
    for topic in (source, through, output, changelog, repartition, other_app):
        cluster.create_topic(topic, partitions=2)
    _produce(bootstrap, source, through)
    admin = KafkaAdminClient(bootstrap)
    try:
        # The input's partition 1 starts at 2 now: "the beginning" is the log start offset.
        admin.delete_records({TopicPartition(source, 1): 2})
        committed = {(t, p): 3 for t in (source, through, changelog, repartition) for p in (0, 1)}
        committed[(output, 0)] = 1
        admin.alter_consumer_group_offsets(
            app, {TopicPartition(t, p): OffsetAndMetadata(o) for (t, p), o in committed.items()}
        )

        code, out, err = _reset(capsys, "--application-id", app, "--bootstrap-server", bootstrap,
                                "--input-topics", f"{source},missing-input", "--intermediate-topics",
                                f"{through},missing-through", "--zookeeper", "127.0.0.1:1")  # fmt: skip
        assert (code, err) == (0, "")
        assert out.splitlines() == [
            f"Resetting offsets to zero for input topics [{source}, missing-input] and all internal topics.",
            "Input topic missing-input not found. Skipping.",
            *sorted(
                [f"Topic: {source}", f"Topic: {changelog}", f"Topic: {repartition}"], key=lambda s: s[7:]
            ),
            "Done.",
            f"Seek-to-end for intermediate user topics [{through}, missing-through]",
            f"Topic: {through}",
            "Topic missing-through not found. Skipping.",
            "Done.",
            f"Deleting all internal/auto-created topics for application {app}",
            f"Topic {changelog} is marked for deletion.",
            f"Topic {repartition} is marked for deletion.",
            "Done.",
        ]

        after = _committed(admin, group=app)
        assert {k: after[k] for k in [(source, 0), (source, 1)]} == {(source, 0): 0, (source, 1): 2}
        assert {k: after[k] for k in [(through, 0), (through, 1)]} == {
            (through, 0): RECORDS,
            (through, 1): RECORDS,
        }
        assert after[(output, 0)] == 1, "an output topic's offsets are left alone"
        # The tool marks them for deletion; the controller deletes them when every replica answers.
        wait_until(lambda: not {changelog, repartition} & set(admin.list_topics()), 30,
                   "the internal topics' deletion")  # fmt: skip
        topics = set(admin.list_topics())
        assert {source, through, output, other_app} <= topics, "only the application's internal topics go"
    finally:
        admin.close()


def test_reset_refuses_while_the_group_has_members(cluster, capsys):
    bootstrap = cluster.bootstrap_servers
    app = f"wc-{uuid.uuid4().hex[:8]}"
    source, changelog = topic_name("lines"), f"{app}-Counts-changelog"
    cluster.create_topic(source, partitions=1)
    cluster.create_topic(changelog, partitions=1)
    admin = KafkaAdminClient(bootstrap)
    # A session longer than the test: on a loaded machine a late heartbeat must not empty the group
    # before the tool looks at it (closing the member sends LeaveGroup, so nothing waits for it). Not
    # minutes, though: a JoinGroup the client gave up on leaves a member the group waits for until
    # its session ends, and the join below must not wait that out.
    member = KafkaConsumer(source, bootstrap_servers=bootstrap, group_id=app, enable_auto_commit=False,
                           session_timeout_ms=30_000, heartbeat_interval_ms=500)  # fmt: skip
    try:
        # The tool asks the coordinator whether the group has members; so does the wait. A member's
        # assignment is not the mark: under load a kafka-python member once joined and assigned
        # itself nothing ("No partition metadata for topic") for the whole minute.
        wait_until(lambda: member.poll(timeout_ms=100) is not None
                   and admin.describe_consumer_groups([app])[0].members, 60,
                   "the member to join the application's group")  # fmt: skip
        code, out, err = _reset(capsys, "--application-id", app, "--bootstrap-server", bootstrap,
                                "--input-topics", source)  # fmt: skip
        assert (code, out) == (1, "")
        assert (f"Consumer group '{app}' is still active. Make sure to stop all running application "
                "instances before running the reset tool.") in " ".join(err.split())  # fmt: skip
        assert changelog in admin.list_topics(), "nothing is deleted"
    finally:
        member.close()
        admin.close()
