"""The group APIs on the session's real 3-broker cluster, driven by unmodified clients: kafka-python's
consumer groups (sharing partitions, committing, rebalancing when a member leaves), confluent-kafka's
subscribing consumer, kafka-python's admin client (list, describe, offsets); FindCoordinator naming
the leader of the group's ``__consumer_offsets`` partition by Kafka's Java hash; and bad group
requests answered with errors while the broker keeps serving.

Every consumer polls in a thread of its own (a member must poll to rejoin a rebalance), and every
wait is on a condition with a deadline."""

from __future__ import annotations

import logging
import threading
import uuid

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.errors import RebalanceInProgressError

from kafka_lite.common.errors import Errors
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.utils import java_string_hash
from kafka_lite.coordinator.group_metadata_manager import GROUP_METADATA_TOPIC_NAME
from tests.support.topics import topic_name
from tests.support.waiting import wait_until
from tests.support.wire import WireClient, partition_response, produce_body

pytestmark = [pytest.mark.compat, pytest.mark.xdist_group("cluster")]


@pytest.fixture(autouse=True)
def _rebalances_in_the_failure_report(caplog):
    """A failing test's captured log shows each rebalance with its reason (the coordinator's INFO
    lines) and kafka-python's side of the join and the commits, not only the warnings: a member that
    stops answering, or a rebalance nobody asked for, is then visible in the report. kafka-python's
    coordinator at DEBUG adds each JoinGroup and SyncGroup it sends and each answer it receives:
    a member that joined a generation but never took its assignment has been seen here, and those
    lines tell whether its SyncGroup answer arrived."""
    caplog.set_level(logging.INFO, logger="kafka_lite.coordinator")
    caplog.set_level(logging.DEBUG, logger="kafka.coordinator")  # base.py's: the join and the sync
    caplog.set_level(logging.INFO, logger="kafka.coordinator.consumer")
    caplog.set_level(logging.INFO, logger="kafka.coordinator.heartbeat")


OFFSETS_PARTITIONS = 4  # offsets.topic.num.partitions of the test profile
# String.hashCode of these group ids and Math.abs(hash) % 4, printed by jshell (Java 17)
JAVA_HASHES = {
    "my-group": (-1906497762, 2),
    "console-consumer-42": (1109249087, 3),
    "group-apis": (1235758119, 3),
}


def group_name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def produce(bootstrap: str, topic: str, partitions: int, per_partition: int) -> int:
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    for p in range(partitions):
        for i in range(per_partition):
            producer.send(topic, value=f"{p}-{i}".encode(), partition=p)
    producer.flush(timeout=30)
    producer.close()
    return partitions * per_partition


class PollingConsumer:
    """A kafka-python consumer in a group, polling in its own thread (so that it joins every
    rebalance), keeping what it received and its current assignment."""

    def __init__(self, bootstrap: str, topic: str, group: str, **configs) -> None:
        self.consumer = KafkaConsumer(
            bootstrap_servers=bootstrap,
            group_id=group,
            auto_offset_reset="earliest",
            enable_auto_commit=False,
            # No test here waits for a session to expire (a member that goes sends LeaveGroup), so the
            # timeout only has to outlast a busy machine: kafka-python's heartbeat thread shares this
            # process's interpreter with the in-process brokers, and a short session can expire there
            # and start a rebalance in the middle of a commit.
            session_timeout_ms=30_000,
            heartbeat_interval_ms=500,
            **configs,
        )
        # The subscription, then the topic's metadata, fetched before the first poll: kafka-python's
        # coordinator takes its snapshot of the subscribed topics' partitions only when a metadata
        # answer arrives, and a leader compares the snapshot it assigned with against the current
        # one after its join. With the metadata fetched before subscribing, the snapshot stays
        # empty until the answer that subscribing asks for, which may come after the first join: the
        # leader then rejoins at once ("updating metadata" in the coordinator's log), and kafka-python
        # 3.0.12 has been seen to stall for good in such a rejoin, receiving its SyncGroup answer and
        # failing every commit afterwards as "not part of an active group".
        self.consumer.subscribe([topic])
        assert self.consumer.partitions_for_topic(topic), f"no metadata for {topic}"
        self.records: list = []
        self.assignment: set = set()
        self._lock = threading.Lock()
        self._commit = threading.Event()
        self._committed = threading.Event()
        self._stop = threading.Event()
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                # A poll long enough to see a rebalance through: kafka-python 3.0.12 has been seen to
                # receive its SyncGroup answer (error 0, its assignment) and never finish the join,
                # failing every commit afterwards, after a rejoin in a short poll; a poll returns as
                # soon as records arrive, so this only bounds an idle wait.
                batches = self.consumer.poll(timeout_ms=1000)
                with self._lock:
                    for records in batches.values():
                        self.records.extend(records)
                    self.assignment = set(self.consumer.assignment())
                if self._commit.is_set():
                    try:
                        self.consumer.commit()  # what poll returned so far: the positions
                    except RebalanceInProgressError:
                        # The group is rebalancing: as kafka-python's message says, poll to finish
                        # the rebalance, then commit again (the test still checks what was committed).
                        continue
                    self._commit.clear()
                    self._committed.set()
        except BaseException as e:  # reported by the test through check()
            self.error = e

    def snapshot(self) -> tuple[set, int]:
        self.check()
        with self._lock:
            return set(self.assignment), len(self.records)

    def commit(self) -> None:
        """Commit the positions, from the polling thread (a kafka-python consumer is not thread-safe)."""
        self._committed.clear()
        self._commit.set()
        wait_until(self._committed.is_set, what="the consumer's commit")
        self.check()

    def check(self) -> None:
        if self.error is not None:
            raise AssertionError(f"the consumer's poll loop failed: {self.error!r}")

    def close(self) -> None:
        self._stop.set()
        self._thread.join(30)
        self.consumer.close()  # sends LeaveGroup
        self.check()


def committed(bootstrap: str, group: str, tps) -> dict:
    """The group's committed offsets as kafka-python's ``committed()`` reads them (OffsetFetch), from
    a consumer of the group that does not subscribe, so it never joins."""
    reader = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    try:
        return {tp: reader.committed(tp) for tp in tps}
    finally:
        reader.close()


def read_offset(members, offset: int, partitions: int) -> bool:
    """Whether the members together read ``offset`` of each partition."""
    return {r.partition for m in members for r in list(m.records) if r.offset == offset} == set(
        range(partitions)
    )


def test_two_consumers_share_partitions_commit_and_one_leaving_hands_all_to_the_other(cluster):
    topic, group = topic_name("grp"), group_name("share")
    bootstrap = cluster.bootstrap_servers
    cluster.create_topic(topic, partitions=4, replication_factor=1)
    total = produce(bootstrap, topic, 4, 10)
    everything = {TopicPartition(topic, p) for p in range(4)}

    first = PollingConsumer(bootstrap, topic, group)
    second = None
    try:
        wait_until(lambda: first.snapshot() == (everything, total), timeout_s=30,
                   what=f"the first member to own all 4 partitions and read {total} records")  # fmt: skip
        first.commit()
        assert committed(bootstrap, group, everything) == dict.fromkeys(everything, 10)

        second = PollingConsumer(bootstrap, topic, group)

        def shared() -> bool:
            a, b = first.snapshot()[0], second.snapshot()[0]
            return len(a) == 2 and len(b) == 2 and a | b == everything

        wait_until(shared, timeout_s=30, what="the two members to own 2 partitions each")
        produce(bootstrap, topic, 4, 1)  # offset 10 of each partition, read by its new owner
        wait_until(
            lambda: read_offset((first, second), 10, 4), timeout_s=30, what="offset 10 of each partition"
        )
        for member in (first, second):
            assert {r.partition for r in member.records if r.offset == 10} == {
                tp.partition for tp in member.assignment
            }
        first.commit()
        second.commit()
        assert committed(bootstrap, group, everything) == dict.fromkeys(everything, 11)

        second.close()
        wait_until(lambda: first.snapshot()[0] == everything, timeout_s=30,
                   what="the remaining member to own all 4 partitions after the other left")  # fmt: skip
        produce(bootstrap, topic, 4, 1)  # offset 11: the partitions taken over resume at the commit
        wait_until(lambda: read_offset((first,), 11, 4), timeout_s=30, what="offset 11 of each partition")
        read = [(r.partition, r.offset) for m in (first, second) for r in m.records]
        assert len(read) == len(set(read)) == total + 8, "every record read once, none again"
    finally:
        first.close()
        if second is not None and second._thread.is_alive():
            second.close()


def test_admin_client_lists_describes_and_fetches_the_groups_offsets(cluster):
    topic, group = topic_name("grp-admin"), group_name("admin")
    cluster.create_topic(topic, partitions=2, replication_factor=1)
    produce(cluster.bootstrap_servers, topic, 2, 5)
    member = PollingConsumer(cluster.bootstrap_servers, topic, group, client_id="admin-test-member")
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers)
    try:
        wait_until(lambda: member.snapshot()[1] == 10, timeout_s=30, what="the member to read 10 records")
        member.commit()

        listed = wait_until(
            lambda: [g for g in admin.list_groups() if g["group_id"] == group], what="the group in ListGroups"
        )
        assert listed == [{"group_id": group, "protocol_type": "consumer"}]

        described = admin.describe_groups([group])[group]
        assert described["group_state"] == "Stable" and described["protocol_type"] == "consumer"
        assert described["protocol_data"] == "range"  # kafka-python's first assignor
        [m] = described["members"]
        assert m["client_id"] == "admin-test-member"
        assert m["client_host"] == "/127.0.0.1"
        assigned = m["member_assignment"]["assigned_partitions"]
        assert {(a["topic"], p) for a in assigned for p in a["partitions"]} == {(topic, 0), (topic, 1)}

        offsets = admin.list_group_offsets({group: None})[group]
        assert {tp: o.offset for tp, o in offsets.items()} == {
            TopicPartition(topic, 0): 5,
            TopicPartition(topic, 1): 5,
        }
    finally:
        admin.close()
        member.close()


def test_confluent_kafka_subscribing_consumer_joins_reads_and_commits(cluster):
    from confluent_kafka import Consumer
    from confluent_kafka import TopicPartition as CkTopicPartition

    topic, group = topic_name("grp-ck"), group_name("ck")
    cluster.create_topic(topic, partitions=3, replication_factor=1)
    total = produce(cluster.bootstrap_servers, topic, 3, 4)
    consumer = Consumer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "group.id": group,
            "session.timeout.ms": 6000,
            "heartbeat.interval.ms": 500,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    try:
        consumer.subscribe([topic])
        received, errors = [], []

        def read_all() -> bool:
            msg = consumer.poll(0.2)
            if msg is not None:
                (errors if msg.error() else received).append(msg.error() or msg)
            return len(received) >= total or bool(errors)

        wait_until(read_all, timeout_s=60, interval_s=0, what=f"confluent-kafka to read {total} records")
        assert errors == [], errors
        assert {p.partition for p in consumer.assignment()} == {0, 1, 2}
        consumer.commit(asynchronous=False)
        committed = consumer.committed([CkTopicPartition(topic, p) for p in range(3)], timeout=10)
        assert [(tp.partition, tp.offset) for tp in committed] == [(0, 4), (1, 4), (2, 4)]
    finally:
        consumer.close()


# -- straight on the wire --------------------------------------------------------------------------------------


def find_coordinator(cluster, group: str, version: int, coordinator_type: int = 0) -> dict:
    body = (
        {"group_id": group}
        if version == 0
        else {"coordinator_key": group, "coordinator_type": coordinator_type}
    )

    def answered() -> dict | None:
        response = WireClient(cluster.servers[0].port).call(ApiKeys.FIND_COORDINATOR, version, body)
        # COORDINATOR_NOT_AVAILABLE while __consumer_offsets is created and its leaders elected
        return (
            None if Errors.for_code(response["error_code"]) is Errors.COORDINATOR_NOT_AVAILABLE else response
        )

    return wait_until(answered, timeout_s=30, what=f"FindCoordinator v{version} for {group}")


@pytest.mark.parametrize("group", sorted(JAVA_HASHES))
def test_find_coordinator_answers_the_leader_of_the_groups_partition_by_javas_hash(cluster, group):
    java_hash, partition = JAVA_HASHES[group]
    assert java_string_hash(group) == java_hash
    for version in (0, 1):
        response = find_coordinator(cluster, group, version)
        assert response["error_code"] == 0
        leader = cluster.leader_of(GROUP_METADATA_TOPIC_NAME, partition)
        server = cluster.server(leader)
        assert response["coordinator"] == {"node_id": leader, "host": "127.0.0.1", "port": server.port}
        assert server.group_coordinator.partition_for(group) == partition


def test_offsets_topic_is_internal_compacted_and_refuses_client_produce(cluster):
    find_coordinator(cluster, "console-consumer-42", 0)
    client = WireClient(cluster.servers[0].port)
    [metadata] = client.call(ApiKeys.METADATA, 1, {"topics": [GROUP_METADATA_TOPIC_NAME]})["topic_metadata"]
    assert metadata["is_internal"] is True and len(metadata["partition_metadata"]) == OFFSETS_PARTITIONS
    assert all(len(p["replicas"]) == 3 for p in metadata["partition_metadata"])  # min(3, live brokers)
    config = cluster.servers[0].zk.get_topic_config(GROUP_METADATA_TOPIC_NAME)
    assert config["cleanup.policy"] == "compact"
    leader = cluster.leader_of(GROUP_METADATA_TOPIC_NAME, 0)
    from kafka_lite.common.record import MemoryRecords

    batch = bytes(MemoryRecords.with_records([(1000, b"k", b"v")]).buffer())
    answer = WireClient(cluster.server(leader).port).call(
        ApiKeys.PRODUCE, 3, produce_body(GROUP_METADATA_TOPIC_NAME, 0, batch)
    )
    assert Errors.for_code(partition_response(answer)["error_code"]) is Errors.INVALID_TOPIC_EXCEPTION


def test_find_coordinator_of_an_unknown_type_is_an_invalid_request(cluster):
    response = WireClient(cluster.servers[0].port).call(
        ApiKeys.FIND_COORDINATOR, 1, {"coordinator_key": "txn", "coordinator_type": 2}
    )
    assert Errors.for_code(response["error_code"]) is Errors.INVALID_REQUEST
    assert "Unknown coordinator type 2" in response["error_message"]
    assert response["coordinator"]["node_id"] == -1


def join_body(
    group: str, member_id: str = "", session_timeout: int = 6000, protocol_type: str = "consumer"
) -> dict:
    return {
        "group_id": group,
        "session_timeout": session_timeout,
        "rebalance_timeout": 10000,
        "member_id": member_id,
        "protocol_type": protocol_type,
        "group_protocols": [{"protocol_name": "range", "protocol_metadata": b"\x00\x00"}],
    }


def test_an_offset_commit_v0_goes_to_the_offsets_topic_not_to_zookeeper(cluster):
    """Kafka's broker writes an OffsetCommit v0 (the old consumer's) to ZooKeeper; kafka_lite's keeps
    every commit in __consumer_offsets, so v1's OffsetFetch, which reads only that topic, finds it."""
    topic, group = topic_name("grp-v0"), group_name("v0")
    cluster.create_topic(topic, partitions=1, replication_factor=1)
    coordinator = find_coordinator(cluster, group, 0)["coordinator"]
    server = cluster.server(coordinator["node_id"])
    offsets_log = server.replica_manager.get_partition(
        (GROUP_METADATA_TOPIC_NAME, server.group_coordinator.partition_for(group))
    ).log
    before = offsets_log.log_end_offset
    client = WireClient(coordinator["port"])
    commit = {"group_id": group, "topics": [{"topic": topic, "partitions": [{"partition": 0, "offset": 7, "metadata": "v0"}]}]}  # fmt: skip
    [answer] = client.call(ApiKeys.OFFSET_COMMIT, 0, commit)["responses"]
    assert answer["partition_responses"] == [{"partition": 0, "error_code": 0}]
    assert offsets_log.log_end_offset == before + 1, (
        "the commit was appended to the group's offsets partition"
    )
    [fetched] = client.call(
        ApiKeys.OFFSET_FETCH, 1, {"group_id": group, "topics": [{"topic": topic, "partitions": [0]}]}
    )["responses"]
    assert fetched["partition_responses"] == [
        {"partition": 0, "offset": 7, "metadata": "v0", "error_code": 0}
    ]
    assert server.zk.get_children(f"/consumers/{group}/offsets") == [], "nothing went to ZooKeeper"


def test_bad_group_requests_get_errors_and_the_broker_keeps_serving(cluster):
    group = group_name("bad")
    coordinator = find_coordinator(cluster, group, 1)["coordinator"]
    client = WireClient(coordinator["port"])
    other = next(s for s in cluster.servers if s.broker_id != coordinator["node_id"])

    def error_of(api, version, body, on=client) -> Errors:
        return Errors.for_code(on.call(api, version, body)["error_code"])

    # at the coordinator
    assert error_of(ApiKeys.JOIN_GROUP, 2, join_body("")) is Errors.INVALID_GROUP_ID
    assert (
        error_of(ApiKeys.JOIN_GROUP, 2, join_body(group, session_timeout=10))
        is Errors.INVALID_SESSION_TIMEOUT
    )
    assert (
        error_of(ApiKeys.JOIN_GROUP, 2, join_body(group, session_timeout=10**8))
        is Errors.INVALID_SESSION_TIMEOUT
    )
    assert error_of(ApiKeys.JOIN_GROUP, 2, join_body(group, member_id="stranger")) is Errors.UNKNOWN_MEMBER_ID
    sync = {"group_id": group, "generation_id": 1, "member_id": "stranger", "group_assignment": []}
    assert error_of(ApiKeys.SYNC_GROUP, 1, sync) is Errors.UNKNOWN_MEMBER_ID
    heartbeat = {"group_id": group, "group_generation_id": 1, "member_id": "stranger"}
    assert error_of(ApiKeys.HEARTBEAT, 1, heartbeat) is Errors.UNKNOWN_MEMBER_ID
    assert (
        error_of(ApiKeys.LEAVE_GROUP, 1, {"group_id": group, "member_id": "stranger"})
        is Errors.UNKNOWN_MEMBER_ID
    )
    commit = {
        "group_id": group, "group_generation_id": 5, "member_id": "stranger", "retention_time": -1,
        "topics": [{"topic": "no-such-topic-here", "partitions": [{"partition": 0, "offset": 1, "metadata": None}]}],
    }  # fmt: skip
    [topic] = client.call(ApiKeys.OFFSET_COMMIT, 2, commit)["responses"]
    assert topic["partition_responses"] == [
        {"partition": 0, "error_code": Errors.UNKNOWN_TOPIC_OR_PARTITION.code}
    ]
    described = client.call(ApiKeys.DESCRIBE_GROUPS, 1, {"group_ids": [group]})["groups"][0]
    assert (described["error_code"], described["state"]) == (0, "Dead")  # the coordinator holds no such group

    # at a broker that is not the group's coordinator
    elsewhere = WireClient(other.port)
    assert error_of(ApiKeys.JOIN_GROUP, 2, join_body(group), on=elsewhere) is Errors.NOT_COORDINATOR
    assert error_of(ApiKeys.HEARTBEAT, 1, heartbeat, on=elsewhere) is Errors.NOT_COORDINATOR
    fetch = {"group_id": group, "topics": None}
    assert error_of(ApiKeys.OFFSET_FETCH, 3, fetch, on=elsewhere) is Errors.NOT_COORDINATOR
    v1 = elsewhere.call(
        ApiKeys.OFFSET_FETCH, 1, {"group_id": group, "topics": [{"topic": "t", "partitions": [0]}]}
    )
    assert (
        Errors.for_code(v1["responses"][0]["partition_responses"][0]["error_code"]) is Errors.NOT_COORDINATOR
    )
    assert client.call(ApiKeys.OFFSET_FETCH, 3, fetch) == {
        "throttle_time_ms": 0,
        "responses": [],
        "error_code": 0,
    }

    # the same connections still serve
    for c in (client, elsewhere):
        assert c.call(ApiKeys.API_VERSIONS, 0, {})["error_code"] == 0
        c.close()
    assert all(s.running for s in cluster.servers)


def test_api_versions_advertises_the_group_apis_at_the_protocol_tables_versions(cluster):
    versions = {
        v["api_key"]: (v["min_version"], v["max_version"])
        for v in WireClient(cluster.servers[0].port).call(ApiKeys.API_VERSIONS, 1, {})["api_versions"]
    }
    for api in (
        ApiKeys.FIND_COORDINATOR, ApiKeys.JOIN_GROUP, ApiKeys.SYNC_GROUP, ApiKeys.HEARTBEAT, ApiKeys.LEAVE_GROUP,
        ApiKeys.OFFSET_COMMIT, ApiKeys.OFFSET_FETCH, ApiKeys.DESCRIBE_GROUPS, ApiKeys.LIST_GROUPS,
    ):  # fmt: skip
        assert versions[api] == (api.oldest_version, api.latest_version), api.api_name
