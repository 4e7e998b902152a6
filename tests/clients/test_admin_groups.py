"""KafkaAdminClient's consumer-group calls against a real peer (a scripted broker on loopback, the real
NetworkClient and wire encoding): what each call sends and to whom, how it decodes the answers
(member assignments in the consumer protocol's bytes, committed offsets, log offsets), which errors
it retries and the messages of those it raises. The same calls against real brokers and real
consumer groups are in tests/cli/test_consumer_groups.py."""

from __future__ import annotations

import threading

import pytest

from kafka_lite.clients.admin import (
    ConsumerGroupListing,
    KafkaAdminClient,
    ListOffsetsResultInfo,
    MemberDescription,
    OffsetSpec,
)
from kafka_lite.common.errors import (
    CoordinatorNotAvailableException,
    Errors,
    GroupAuthorizationException,
    KafkaException,
    TimeoutException,
    UnknownMemberIdException,
    UnknownTopicOrPartitionException,
)
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.requests import encode_response
from kafka_lite.consumer.internals.consumer_protocol import Assignment, serialize_assignment
from kafka_lite.consumer.offset_and_metadata import OffsetAndMetadata
from tests.support.scripted_broker import ScriptedServer

pytestmark = pytest.mark.unit

TOPIC = "orders"
PARTITIONS = 3


def member(member_id: str, client_id: str, partitions: list[tuple[str, int]]) -> dict:
    """A DescribeGroups member entry, its assignment in the consumer protocol's bytes."""
    return {
        "member_id": member_id, "client_id": client_id, "client_host": "/127.0.0.1",
        "member_metadata": b"", "member_assignment": serialize_assignment(Assignment(partitions)) if partitions else b"",
    }  # fmt: skip


class GroupBroker(ScriptedServer):
    """A one-broker cluster (itself, node 0, leading every partition of ``orders``) that coordinates
    the groups in ``groups`` (group id -> DescribeGroups entry) with the offsets in ``committed``
    (group id -> {(topic, partition): offset}). It records every request as (api, version, body).

    ``coordinator_errors`` are answered to FindCoordinator first, one per request, before the real
    answer; ``commit_error`` answers every partition of an OffsetCommit. Log offsets: the earliest
    is ``log_start``, the latest ``log_end``; a time finds ``at_time`` (-1: no record after it)."""

    def __init__(self) -> None:
        self.groups: dict[str, dict] = {}
        self.committed: dict[str, dict[tuple[str, int], int]] = {}
        self.coordinator_errors: list[Errors] = []
        self.commit_error = Errors.NONE
        self.fetch_partition_error = Errors.NONE
        self.list_groups_error = Errors.NONE
        self.log_start, self.log_end, self.at_time = 2, 10, 6
        self.requests: list[tuple[ApiKeys, int, dict]] = []
        self.lock = threading.Lock()
        super().__init__()

    def sent(self, api: ApiKeys) -> list[dict]:
        with self.lock:
            return [body for a, _, body in self.requests if a == api]

    def answer(self, header, body):
        api = ApiKeys(header.api_key)
        with self.lock:
            self.requests.append((api, header.api_version, body))
        handler = getattr(self, f"_{api.name.lower()}")
        return encode_response(api, header.api_version, header.correlation_id, handler(body))

    def _metadata(self, body):
        return self.metadata_body(TOPIC, PARTITIONS)

    def _find_coordinator(self, body):
        error = self.coordinator_errors.pop(0) if self.coordinator_errors else Errors.NONE
        node = {"node_id": 0, "host": "127.0.0.1", "port": self.port}
        return {"error_code": error.code, "error_message": None, "coordinator": node}

    def _list_groups(self, body):
        groups = [{"group_id": g, "protocol_type": d["protocol_type"]} for g, d in self.groups.items()]
        return {"error_code": self.list_groups_error.code, "groups": groups}

    def _describe_groups(self, body):
        dead = {"error_code": 0, "state": "Dead", "protocol_type": "", "protocol": "", "members": []}
        return {"groups": [{**self.groups.get(g, dead), "group_id": g} for g in body["group_ids"]]}

    def _offset_fetch(self, body):
        offsets = self.committed.get(body["group_id"], {})
        asked = (
            sorted(offsets)
            if body["topics"] is None
            else [(t["topic"], p) for t in body["topics"] for p in t["partitions"]]
        )
        by_topic: dict[str, list] = {}
        for tp in asked:
            by_topic.setdefault(tp[0], []).append(
                {"partition": tp[1], "offset": offsets.get(tp, -1), "metadata": "",
                 "error_code": self.fetch_partition_error.code}
            )  # fmt: skip
        responses = [{"topic": t, "partition_responses": ps} for t, ps in by_topic.items()]
        return {"responses": responses, "error_code": 0}

    def _offset_commit(self, body):
        responses = [
            {"topic": t["topic"], "partition_responses": [
                {"partition": p["partition"], "error_code": self.commit_error.code} for p in t["partitions"]]}
            for t in body["topics"]
        ]  # fmt: skip
        return {"responses": responses}

    def _list_offsets(self, body):
        def offset(timestamp: int) -> tuple[int, int]:
            if timestamp == OffsetSpec.EARLIEST_TIMESTAMP:
                return -1, self.log_start
            if timestamp == OffsetSpec.LATEST_TIMESTAMP:
                return -1, self.log_end
            return (timestamp, self.at_time) if self.at_time >= 0 else (-1, -1)

        responses = [
            {"topic": t["topic"], "partition_responses": [
                {"partition": p["partition"], "error_code": 0, **dict(zip(("timestamp", "offset"), offset(p["timestamp"]), strict=True))}
                for p in t["partitions"]]}
            for t in body["topics"]
        ]  # fmt: skip
        return {"responses": responses}


@pytest.fixture
def broker():
    server = GroupBroker()
    yield server
    server.close()


@pytest.fixture
def admin(broker):
    client = KafkaAdminClient(f"127.0.0.1:{broker.port}", request_timeout_ms=5_000, retry_backoff_ms=10)
    yield client
    client.close()


STABLE = {
    "error_code": 0, "state": "Stable", "protocol_type": "consumer", "protocol": "range",
    "members": [member("c-1", "alpha", [(TOPIC, 0), (TOPIC, 1)]), member("c-2", "beta", [(TOPIC, 2)])],
}  # fmt: skip


# -- listing and describing ----------------------------------------------------------------------------------


def test_list_consumer_groups_asks_every_broker_and_returns_kafka_pythons_tuples(broker, admin):
    broker.groups = {"billing": STABLE, "offsets-only": {**STABLE, "protocol_type": ""}}
    groups = admin.list_consumer_groups()
    assert groups == [ConsumerGroupListing("billing", "consumer"), ConsumerGroupListing("offsets-only", "")]
    group_id, protocol_type = groups[0]
    assert (group_id, protocol_type) == ("billing", "consumer")
    assert [g.is_simple_consumer_group for g in groups] == [False, True]
    assert [v for api, v, _ in broker.requests if api == ApiKeys.LIST_GROUPS] == [1]


def test_a_list_groups_error_names_the_broker(broker, admin):
    broker.list_groups_error = Errors.GROUP_AUTHORIZATION_FAILED
    with pytest.raises(
        GroupAuthorizationException, match="ListGroups at broker 0: GROUP_AUTHORIZATION_FAILED"
    ):
        admin.list_consumer_groups()


def test_describe_consumer_groups_decodes_each_members_assignment(broker, admin):
    broker.groups = {"billing": STABLE}
    (group,) = admin.describe_consumer_groups(["billing"])
    assert (group.group_id, group.state, group.protocol_type, group.partition_assignor) == (
        "billing", "Stable", "consumer", "range",
    )  # fmt: skip
    assert group.members == (
        MemberDescription("c-1", "alpha", "/127.0.0.1", ((TOPIC, 0), (TOPIC, 1))),
        MemberDescription("c-2", "beta", "/127.0.0.1", ((TOPIC, 2),)),
    )
    assert (group.coordinator.id, group.coordinator.port) == (0, broker.port)
    assert broker.sent(ApiKeys.FIND_COORDINATOR) == [{"coordinator_key": "billing", "coordinator_type": 0}]
    assert broker.sent(ApiKeys.DESCRIBE_GROUPS) == [{"group_ids": ["billing"]}]


def test_a_group_the_coordinator_does_not_know_is_dead_with_no_members(broker, admin):
    (group,) = admin.describe_consumer_groups(["nobody"])
    assert (group.state, group.members) == ("Dead", ())


def test_a_rebalancing_group_shows_its_members_without_assignments(broker, admin):
    members = [{**m, "member_assignment": b""} for m in STABLE["members"]]
    broker.groups = {"billing": {**STABLE, "state": "PreparingRebalance", "protocol": "", "members": members}}
    (group,) = admin.describe_consumer_groups(["billing"])
    assert group.state == "PreparingRebalance"
    assert [(m.member_id, m.assignment) for m in group.members] == [("c-1", ()), ("c-2", ())]


def test_an_assignment_that_is_not_the_consumer_protocols_is_named(broker, admin):
    broken = {**member("c-1", "alpha", []), "member_assignment": b"\x00"}
    broker.groups = {"billing": {**STABLE, "members": [broken]}}
    with pytest.raises(
        KafkaException,
        match="Member c-1 of group 'billing' has an assignment that is not the consumer protocol's",
    ):
        admin.describe_consumer_groups(["billing"])


def test_another_protocol_types_assignment_is_left_undecoded(broker, admin):
    worker = {**member("w-1", "connect-1", []), "member_assignment": b"\x00\x01connect's own bytes"}
    broker.groups = {"connect-cluster": {**STABLE, "protocol_type": "connect", "members": [worker]}}
    (group,) = admin.describe_consumer_groups(["connect-cluster"])
    assert group.members[0].assignment == ()


def test_describe_retries_while_the_coordinator_is_not_available(broker, admin):
    broker.groups = {"billing": STABLE}
    broker.coordinator_errors = [Errors.COORDINATOR_NOT_AVAILABLE, Errors.COORDINATOR_LOAD_IN_PROGRESS]
    (group,) = admin.describe_consumer_groups(["billing"])
    assert group.state == "Stable"
    assert len(broker.sent(ApiKeys.FIND_COORDINATOR)) == 3


def test_describe_gives_up_at_the_request_timeout_naming_the_group_and_the_last_error(broker):
    broker.coordinator_errors = [Errors.COORDINATOR_NOT_AVAILABLE] * 10_000
    admin = KafkaAdminClient(f"127.0.0.1:{broker.port}", request_timeout_ms=300, retry_backoff_ms=10)
    try:
        with pytest.raises(TimeoutException) as e:
            admin.describe_consumer_groups(["billing"])
    finally:
        admin.close()
    message = str(e.value)
    assert "Timed out after 300 ms waiting for describing group 'billing'" in message
    assert "Finding the coordinator of group 'billing'" in message
    assert not isinstance(e.value, CoordinatorNotAvailableException)


# -- committed offsets ----------------------------------------------------------------------------------------


def test_list_consumer_group_offsets_asks_for_all_and_leaves_out_partitions_without_one(broker, admin):
    broker.committed = {"billing": {(TOPIC, 0): 5, (TOPIC, 2): 7, ("audit", 0): 1}}
    offsets = admin.list_consumer_group_offsets("billing")
    assert offsets == {
        (TOPIC, 0): OffsetAndMetadata(5),
        (TOPIC, 2): OffsetAndMetadata(7),
        ("audit", 0): OffsetAndMetadata(1),
    }
    assert broker.sent(ApiKeys.OFFSET_FETCH) == [{"group_id": "billing", "topics": None}], (
        "null: every partition"
    )
    some = admin.list_consumer_group_offsets("billing", [(TOPIC, 1), (TOPIC, 0)])
    assert some == {(TOPIC, 0): OffsetAndMetadata(5)}, "orders-1 has no committed offset (-1): left out"
    assert broker.sent(ApiKeys.OFFSET_FETCH)[1] == {
        "group_id": "billing",
        "topics": [{"topic": TOPIC, "partitions": [0, 1]}],
    }


def test_a_partitions_offset_fetch_error_names_the_partition(broker, admin):
    broker.fetch_partition_error = Errors.UNKNOWN_TOPIC_OR_PARTITION
    with pytest.raises(
        KafkaException, match="group 'billing' for orders-3: Partition orders-3 may not exist"
    ) as e:
        admin.list_consumer_group_offsets("billing", [(TOPIC, 3)])
    assert len(broker.sent(ApiKeys.OFFSET_FETCH)) == 1, "not retried: Kafka's consumer fails it at once"
    assert not isinstance(e.value, TimeoutException)


def test_alter_consumer_group_offsets_commits_from_outside_the_group(broker, admin):
    admin.alter_consumer_group_offsets(
        "billing", {(TOPIC, 1): OffsetAndMetadata(3), (TOPIC, 0): OffsetAndMetadata(0, "reset")}
    )
    (body,) = broker.sent(ApiKeys.OFFSET_COMMIT)
    assert (body["group_generation_id"], body["member_id"], body["retention_time"]) == (-1, "", -1)
    assert body["topics"] == [{"topic": TOPIC, "partitions": [
        {"partition": 0, "offset": 0, "metadata": "reset"}, {"partition": 1, "offset": 3, "metadata": ""}]}]  # fmt: skip


def test_a_commit_refused_because_the_group_has_members_says_so(broker, admin):
    broker.commit_error = Errors.UNKNOWN_MEMBER_ID
    with pytest.raises(UnknownMemberIdException) as e:
        admin.alter_consumer_group_offsets(
            "billing", {(TOPIC, 0): OffsetAndMetadata(0), (TOPIC, 1): OffsetAndMetadata(0)}
        )
    assert str(e.value) == (
        "The coordinator of group 'billing' refused the commit for orders-0, orders-1: the group has active "
        "members, and only they may commit while it does (UNKNOWN_MEMBER_ID)"
    )


def test_another_commit_error_is_named_with_its_partitions(broker, admin):
    broker.commit_error = Errors.OFFSET_METADATA_TOO_LARGE
    with pytest.raises(
        KafkaException,
        match="Committing offsets for group 'billing' failed for orders-2: OFFSET_METADATA_TOO_LARGE",
    ):
        admin.alter_consumer_group_offsets("billing", {(TOPIC, 2): OffsetAndMetadata(1, "x" * 5000)})


# -- log offsets ---------------------------------------------------------------------------------------------


def test_list_offsets_finds_the_earliest_the_latest_and_the_offset_at_a_time(broker, admin):
    found = admin.list_offsets({(TOPIC, 0): OffsetSpec.earliest(), (TOPIC, 1): OffsetSpec.latest(),
                                (TOPIC, 2): OffsetSpec.for_timestamp(1_700_000_000_000)})  # fmt: skip
    assert found == {
        (TOPIC, 0): ListOffsetsResultInfo(2, -1),
        (TOPIC, 1): ListOffsetsResultInfo(10, -1),
        (TOPIC, 2): ListOffsetsResultInfo(6, 1_700_000_000_000),
    }
    (body,) = broker.sent(ApiKeys.LIST_OFFSETS)
    assert body["replica_id"] == -1, "a client, not a follower"
    assert [p["timestamp"] for p in body["topics"][0]["partitions"]] == [-2, -1, 1_700_000_000_000]


def test_list_offsets_names_a_partition_that_does_not_exist(broker, admin):
    with pytest.raises(
        UnknownTopicOrPartitionException, match="Partition orders-5 does not exist: orders has partitions 0-2"
    ):
        admin.list_offsets({(TOPIC, 5): OffsetSpec.latest()})
    with pytest.raises(UnknownTopicOrPartitionException, match=r"Partition nothing-0 does not exist$"):
        admin.list_offsets({("nothing", 0): OffsetSpec.latest()})
    assert broker.sent(ApiKeys.LIST_OFFSETS) == [], "refused before asking the broker"


def test_an_offset_spec_refuses_a_negative_time():
    with pytest.raises(KafkaException, match="cannot be negative: -5"):
        OffsetSpec.for_timestamp(-5)
