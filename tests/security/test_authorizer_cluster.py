"""A 2-broker cluster with SimpleAclAuthorizer on: every API the brokers serve, asked by a principal
allowed nothing, is refused or limited as Kafka 0.11's KafkaApis does; an ACL created through one
broker is enforced by the other within a second; the ACL APIs themselves.

The brokers talk to each other as ``User:ANONYMOUS`` (PLAINTEXT), the super user here. A request
from another principal is built as a ``Request`` with that principal and handed to a ``KafkaApis``
made of a broker's own collaborators (its replica manager, coordinators, metadata cache,
authorizer...) but with a request channel of the test's own, from which the response is read.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from kafka_lite.common.errors import Errors
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.requests import RequestHeader, encode_request, parse_request, parse_response
from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.security.auth.acl import Acl, Operation, PermissionType, Resource, ResourceType
from kafka_lite.common.security.auth.kafka_principal import KafkaPrincipal
from kafka_lite.network.request_channel import Request, RequestChannel, Session
from kafka_lite.security.auth.request_acls import REQUEST_ACLS, request_acls_table
from kafka_lite.server.kafka_apis import KafkaApis
from kafka_lite.server.kafka_server import KafkaServer
from tests.support.cluster import LiteCluster
from tests.support.waiting import wait_until

pytestmark = pytest.mark.integration

MALLORY = KafkaPrincipal.from_string("User:mallory")
ALICE = KafkaPrincipal.from_string("User:alice")
HOST = "127.0.0.1"
# answered by the controller's broker only (another answers NOT_CONTROLLER before any ACL check)
CONTROLLER_APIS = {
    ApiKeys.CONTROLLED_SHUTDOWN,
    ApiKeys.CREATE_TOPICS,
    ApiKeys.DELETE_TOPICS,
    ApiKeys.CREATE_PARTITIONS,
}


@pytest.fixture(scope="module")
def secured(zookeeper, tmp_path_factory):
    c = LiteCluster(
        zookeeper.connect_string,
        tmp_path_factory.mktemp("secured"),
        brokers=2,
        **{
            "authorizer.class.name": "SimpleAclAuthorizer",
            "super.users": "User:ANONYMOUS",
            "offsets.topic.replication.factor": 2,
            "transaction.state.log.replication.factor": 2,
            "transaction.state.log.min.isr": 1,
        },
    )
    c.start()
    yield c
    c.stop()


@pytest.fixture(scope="module")
def topic(secured):
    name = f"secret-{uuid.uuid4().hex[:8]}"
    secured.create_topic(name, partitions=2, replication_factor=1)  # one partition on each broker
    return name


class Apis:
    """A broker's request handlers, answering into a channel of the test's own."""

    def __init__(self, server: KafkaServer, authorizer="broker's") -> None:
        self.server = server
        self.channel = RequestChannel(1, 16)
        self.apis = KafkaApis(
            self.channel,
            server.replica_manager,
            server.admin_manager,
            server.group_coordinator,
            server.transaction_coordinator,
            server.controller,
            server.metadata_cache,
            server.producer_id_manager,
            server.quota_managers,
            server.config,
            server.cluster_id,
            server.time,
            authorizer=server.authorizer if authorizer == "broker's" else authorizer,
        )

    def call(self, api: ApiKeys, body: dict, principal=MALLORY, version: int | None = None) -> dict:
        version = api.latest_version if version is None else version
        # through the wire format and back: the body is exactly what the broker would parse
        header, parsed = parse_request(encode_request(RequestHeader(api, version, 7, "acl-test"), body))
        request = Request(0, "test-connection", header, parsed, 0, HOST, 0, principal=principal)
        self.apis.handle(request)
        response = wait_until(lambda: self.channel.receive_response(0), 10, f"the {api.api_name} response")
        frame = b"".join(bytes(p) for p in response.pieces)
        return parse_response(api, version, frame)[1]


def error_codes(value) -> set[int]:
    """Every ``*error_code`` anywhere in a response."""
    if isinstance(value, dict):
        found = {v for k, v in value.items() if k.endswith("error_code")}
        return found.union(*(error_codes(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(error_codes(v) for v in value))
    return set()


def acl_binding(resource_type, name, principal, operation, permission=PermissionType.ALLOW) -> dict:
    return {
        "resource_type": resource_type.code,
        "resource_name": name,
        "principal": str(principal),
        "host": "*",
        "operation": operation.code,
        "permission_type": permission.code,
    }


def any_filter(**fields) -> dict:
    return {"resource_type": 1, "resource_name": None, "principal": None, "host": None, "operation": 1,
            "permission_type": 1, **fields}  # fmt: skip


def partition_state(topic: str, partition: int, leader: int, epoch: int = 1) -> dict:
    return {"topic": topic, "partition": partition, "controller_epoch": 99, "leader": leader,
            "leader_epoch": epoch, "isr": [leader], "zk_version": 0, "replicas": [leader]}  # fmt: skip


def request_bodies(topic: str, broker_id: int) -> dict[ApiKeys, dict]:
    """One request per API, naming the test's topic (partition 0, led by ``broker_id``), a group and
    a transactional id, at each API's latest version."""
    records = bytes(MemoryRecords.with_records([(1, None, b"v")]).buffer())
    group, txn = "secret-group", "secret-txn"
    tps = [{"topic": topic, "partitions": [0]}]
    ghost = "ghost-topic"
    return {
        ApiKeys.PRODUCE: {"transactional_id": None, "acks": 1, "timeout": 1000,
                          "topic_data": [{"topic": topic, "data": [{"partition": 0, "record_set": records}]}]},
        ApiKeys.FETCH: {"replica_id": -1, "max_wait_time": 0, "min_bytes": 0, "max_bytes": 1 << 20, "isolation_level": 0,
                        "topics": [{"topic": topic, "partitions": [
                            {"partition": 0, "fetch_offset": 0, "log_start_offset": -1, "max_bytes": 1 << 20}]}]},
        ApiKeys.LIST_OFFSETS: {"replica_id": -1, "isolation_level": 0,
                               "topics": [{"topic": topic, "partitions": [{"partition": 0, "timestamp": -1}]}]},
        ApiKeys.METADATA: {"topics": [topic], "allow_auto_topic_creation": True},
        ApiKeys.LEADER_AND_ISR: {"controller_id": broker_id, "controller_epoch": 99,
                                 "partition_states": [partition_state(ghost, 0, broker_id)],
                                 "live_leaders": [{"id": broker_id, "host": HOST, "port": 1}]},
        ApiKeys.STOP_REPLICA: {"controller_id": broker_id, "controller_epoch": 99, "delete_partitions": True,
                               "partitions": [{"topic": topic, "partition": 0}]},
        ApiKeys.UPDATE_METADATA: {"controller_id": broker_id, "controller_epoch": 99,
                                  "partition_states": [partition_state(ghost, 0, broker_id)],
                                  "live_brokers": []},
        ApiKeys.CONTROLLED_SHUTDOWN: {"broker_id": broker_id},
        ApiKeys.OFFSET_COMMIT: {"group_id": group, "group_generation_id": -1, "member_id": "", "retention_time": -1,
                                "topics": [{"topic": topic, "partitions": [
                                    {"partition": 0, "offset": 0, "metadata": None}]}]},
        ApiKeys.OFFSET_FETCH: {"group_id": group, "topics": tps},
        ApiKeys.FIND_COORDINATOR: {"coordinator_key": group, "coordinator_type": 0},
        ApiKeys.JOIN_GROUP: {"group_id": group, "session_timeout": 6000, "rebalance_timeout": 6000, "member_id": "",
                             "protocol_type": "consumer", "group_protocols": [
                                 {"protocol_name": "range", "protocol_metadata": b""}]},
        ApiKeys.HEARTBEAT: {"group_id": group, "group_generation_id": 1, "member_id": "m"},
        ApiKeys.LEAVE_GROUP: {"group_id": group, "member_id": "m"},
        ApiKeys.SYNC_GROUP: {"group_id": group, "generation_id": 1, "member_id": "m", "group_assignment": []},
        ApiKeys.DESCRIBE_GROUPS: {"group_ids": [group]},
        ApiKeys.LIST_GROUPS: {},
        ApiKeys.SASL_HANDSHAKE: {"mechanism": "PLAIN"},
        ApiKeys.API_VERSIONS: {},
        ApiKeys.CREATE_TOPICS: {"create_topic_requests": [
            {"topic": ghost, "num_partitions": 1, "replication_factor": 1, "replica_assignment": [],
             "config_entries": []}], "timeout": 1000, "validate_only": False},
        ApiKeys.DELETE_RECORDS: {"topics": [{"topic": topic, "partitions": [{"partition": 0, "offset": -1}]}],
                                 "timeout": 1000},
        ApiKeys.DELETE_TOPICS: {"topics": [topic], "timeout": 1000},
        ApiKeys.INIT_PRODUCER_ID: {"transactional_id": txn, "transaction_timeout_ms": 10000},
        # its latest version, v4, is a leader's batch of verifications (KIP-890); a client's v3 below
        ApiKeys.ADD_PARTITIONS_TO_TXN: {"transactions": [{"transactional_id": txn, "producer_id": 1, "producer_epoch": 0,
                                                          "verify_only": True, "topics": tps}]},
        ApiKeys.ADD_OFFSETS_TO_TXN: {"transactional_id": txn, "producer_id": 1, "producer_epoch": 0,
                                     "consumer_group_id": group},
        ApiKeys.END_TXN: {"transactional_id": txn, "producer_id": 1, "producer_epoch": 0, "transaction_result": True},
        ApiKeys.WRITE_TXN_MARKERS: {"transaction_markers": [
            {"producer_id": 1, "producer_epoch": 0, "transaction_result": True, "topics": tps,
             "coordinator_epoch": 0}]},
        ApiKeys.TXN_OFFSET_COMMIT: {"transactional_id": txn, "consumer_group_id": group, "producer_id": 1,
                                    "producer_epoch": 0, "topics": [{"topic": topic, "partitions": [
                                        {"partition": 0, "offset": 0, "metadata": None}]}]},
        ApiKeys.OFFSETS_FOR_LEADER_EPOCH: {"topics": [{"topic": topic, "partitions": [
            {"partition_id": 0, "leader_epoch": 0}]}]},
        ApiKeys.DESCRIBE_ACLS: any_filter(),
        ApiKeys.CREATE_ACLS: {"creations": [acl_binding(ResourceType.TOPIC, topic, MALLORY, Operation.ALL)]},
        ApiKeys.DELETE_ACLS: {"filters": [any_filter()]},
        ApiKeys.DESCRIBE_CONFIGS: {"resources": [{"resource_type": 2, "resource_name": topic, "config_names": None},
                                                 {"resource_type": 4, "resource_name": str(broker_id),
                                                  "config_names": None}], "include_synonyms": False},
        ApiKeys.ALTER_CONFIGS: {"resources": [{"resource_type": 2, "resource_name": topic, "config_entries": [
            {"config_name": "retention.ms", "config_value": "1"}]}], "validate_only": False},
        ApiKeys.SASL_AUTHENTICATE: {"sasl_auth_bytes": b""},
        ApiKeys.CREATE_PARTITIONS: {"topic_partitions": [{"topic": topic, "new_partitions": {"count": 5,
                                                                                          "assignment": None}}],
                                    "timeout": 1000, "validate_only": False},
        ApiKeys.DESCRIBE_PRODUCERS: {"topics": [{"topic": topic, "partition_indexes": [0]}]},
    }  # fmt: skip


def cluster_state(secured: LiteCluster, topic: str) -> dict:
    """What the controller's requests would change, on every broker."""
    return {
        s.broker_id: (
            s.replica_manager.get_partition(("ghost-topic", 0)) is not None,
            s.metadata_cache.contains("ghost-topic"),
            s.replica_manager.get_partition((topic, 0)) is not None,
            s.replica_manager.controller_epoch,
            len(s.metadata_cache.partitions(topic)),
            set(s.controller.context.shutting_down_broker_ids) if s.controller.is_active() else None,
        )
        for s in secured.servers
    }


def test_every_api_refuses_a_principal_allowed_nothing(secured, topic, tmp_path_factory):
    leader_id = secured.leader_of(topic, 0)
    controller = next(s for s in secured.servers if s.controller.is_active())
    apis = Apis(secured.server(leader_id))
    listed = apis.call(ApiKeys.API_VERSIONS, {})["api_versions"]
    bodies = request_bodies(topic, leader_id)
    before = cluster_state(secured, topic)
    rows = []
    for entry in listed:
        api = ApiKeys(entry["api_key"])
        assert api in REQUEST_ACLS, (
            f"{api.api_name} is served but request_acls.py does not say what it checks"
        )
        assert api in bodies, f"{api.api_name} is served but this test sends no request of it"
        target = Apis(controller) if api in CONTROLLER_APIS else apis
        response = target.call(api, bodies[api])
        got = {Errors.for_code(c) for c in error_codes(response)}
        checks = REQUEST_ACLS[api]
        rows.append(
            (api.api_name, ", ".join(c.describe() for c in checks) or "-", sorted(e.name for e in got))
        )
        if api in (ApiKeys.SASL_HANDSHAKE, ApiKeys.SASL_AUTHENTICATE):  # after authentication, to anyone
            assert got == {Errors.ILLEGAL_SASL_STATE}, f"{api.api_name} answered {got}"
            continue
        if not checks:
            assert got == {Errors.NONE}, f"{api.api_name} checks nothing, yet answered {got}"
            continue
        allowed = {c.error for c in checks} | {Errors.OPERATION_NOT_ATTEMPTED}
        assert got and got <= allowed, f"{api.api_name}: got {got}, request_acls.py says {allowed}"
    assert not [b for b in bodies if b not in {ApiKeys(e["api_key"]) for e in listed}], (
        "a body for an API not served"
    )
    # AddPartitionsToTxn as a client sends it (v3), refused by the client's checks
    client_add = {**bodies[ApiKeys.ADD_PARTITIONS_TO_TXN]["transactions"][0]}
    del client_add["verify_only"]
    answer = apis.call(ApiKeys.ADD_PARTITIONS_TO_TXN, client_add, version=3)
    assert error_codes(answer) == {Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED.code}, answer
    # the controller's requests changed nothing: no ghost partition, the topic's replica still there
    assert cluster_state(secured, topic) == before
    out = Path(tmp_path_factory.mktemp("acl-table")) / "request_acls_observed.md"
    out.write_text(
        "| API | checks | a caller allowed nothing got |\n|---|---|---|\n"
        + "".join(f"| {a} | {c} | {', '.join(g)} |\n" for a, c, g in rows)
    )
    assert len(request_acls_table()) >= len(REQUEST_ACLS)


def test_describe_without_read_gets_topic_authorization_failed(secured, topic):
    leader = secured.server(secured.leader_of(topic, 0))
    leader.authorizer.add_acls({_acl(ALICE, Operation.DESCRIBE)}, Resource(ResourceType.TOPIC, topic))
    try:
        apis = Apis(leader)
        fetch = apis.call(ApiKeys.FETCH, request_bodies(topic, leader.broker_id)[ApiKeys.FETCH], ALICE)
        assert error_codes(fetch) == {Errors.TOPIC_AUTHORIZATION_FAILED.code}
        produce = apis.call(ApiKeys.PRODUCE, request_bodies(topic, leader.broker_id)[ApiKeys.PRODUCE], ALICE)
        assert error_codes(produce) == {Errors.TOPIC_AUTHORIZATION_FAILED.code}
        metadata = apis.call(ApiKeys.METADATA, {"topics": None, "allow_auto_topic_creation": False}, ALICE)
        assert [t["topic"] for t in metadata["topic_metadata"]] == [topic]  # the others left out
    finally:
        leader.authorizer.remove_all_acls(Resource(ResourceType.TOPIC, topic))


def _acl(principal, operation):
    return Acl(principal, PermissionType.ALLOW, "*", operation)


def test_an_acl_created_through_one_broker_is_enforced_by_all(secured, topic):
    first, second = secured.servers
    group = f"g-{uuid.uuid4().hex[:6]}"
    created = Apis(first).call(
        ApiKeys.CREATE_ACLS,
        {"creations": [acl_binding(ResourceType.GROUP, group, ALICE, Operation.DESCRIBE)]},
        principal=KafkaPrincipal.ANONYMOUS,
    )
    assert created["creation_responses"] == [{"error_code": 0, "error_message": None}]
    find = {"coordinator_key": group, "coordinator_type": 0}
    wait_until(
        lambda: (
            Apis(second).call(ApiKeys.FIND_COORDINATOR, find, ALICE)["error_code"]
            != Errors.GROUP_AUTHORIZATION_FAILED.code
        ),
        what="the second broker to allow the group's Describe",
    )
    assert second.authorizer.authorize(
        Session(ALICE, HOST), Operation.DESCRIBE, Resource(ResourceType.GROUP, group)
    )
    deleted = Apis(second).call(
        ApiKeys.DELETE_ACLS,
        {"filters": [any_filter(resource_type=ResourceType.GROUP.code, resource_name=group)]},
        principal=KafkaPrincipal.ANONYMOUS,
    )
    (matched,) = deleted["filter_responses"]
    assert [(m["resource_name"], m["principal"], m["operation"]) for m in matched["matching_acls"]] == [
        (group, "User:alice", Operation.DESCRIBE.code)
    ]
    wait_until(
        lambda: not first.authorizer.get_acls(Resource(ResourceType.GROUP, group)),
        what="the removal on the first",
    )


def test_describe_acls_filters_and_a_bad_acl_is_refused_with_nothing_written(secured, topic):
    apis = Apis(secured.servers[0])
    admin = KafkaPrincipal.ANONYMOUS
    good = acl_binding(ResourceType.TOPIC, topic, ALICE, Operation.READ)
    bad_operation = {**good, "operation": 99}
    bad_cluster = acl_binding(ResourceType.CLUSTER, "other", ALICE, Operation.ALTER)
    response = apis.call(ApiKeys.CREATE_ACLS, {"creations": [good, bad_operation, bad_cluster]}, admin)
    codes = [r["error_code"] for r in response["creation_responses"]]
    assert codes == [0, Errors.INVALID_REQUEST.code, Errors.INVALID_REQUEST.code]
    assert "unknown operation" in response["creation_responses"][1]["error_message"]
    try:
        described = apis.call(ApiKeys.DESCRIBE_ACLS, any_filter(principal="User:alice"), admin)
        assert described["error_code"] == 0
        assert [(r["resource_type"], r["resource_name"]) for r in described["resources"]] == [
            (ResourceType.TOPIC.code, topic)
        ]
        none = apis.call(ApiKeys.DESCRIBE_ACLS, any_filter(principal="User:nobody"), admin)
        assert none["resources"] == []
    finally:
        apis.call(ApiKeys.DELETE_ACLS, {"filters": [any_filter(principal="User:alice")]}, admin)


def test_the_acl_apis_answer_security_disabled_without_an_authorizer(secured):
    apis = Apis(secured.servers[0], authorizer=None)
    admin = KafkaPrincipal.ANONYMOUS
    assert (
        apis.call(ApiKeys.DESCRIBE_ACLS, any_filter(), admin)["error_code"] == Errors.SECURITY_DISABLED.code
    )
    created = apis.call(
        ApiKeys.CREATE_ACLS,
        {"creations": [acl_binding(ResourceType.TOPIC, "t", ALICE, Operation.READ)]},
        admin,
    )
    assert created["creation_responses"][0]["error_code"] == Errors.SECURITY_DISABLED.code


def test_the_acls_tool_adds_lists_and_removes_through_the_brokers(secured, topic, capsys):
    from kafka_lite.cli.main import main

    where = ["acls", "--bootstrap-server", secured.bootstrap_servers]
    frank = KafkaPrincipal.from_string("User:frank")
    resource = Resource(ResourceType.TOPIC, topic)
    assert (
        main([*where, "--add", "--allow-principal", "User:frank", "--operation", "Read", "--topic", topic])
        == 0
    )
    for server in secured.servers:
        wait_until(lambda s=server: s.authorizer.authorize(Session(frank, HOST), Operation.READ, resource), 1)
    capsys.readouterr()
    assert main([*where, "--list", "--topic", topic]) == 0
    assert "User:frank has Allow permission for operations: Read from hosts: *" in capsys.readouterr().out
    assert (
        main([*where, "--add", "--allow-principal", "User:frank", "--operation", "Bogus", "--topic", topic])
        == 2
    )
    assert main([*where, "--remove", "--topic", topic]) == 0
    for server in secured.servers:
        wait_until(lambda s=server: not s.authorizer.get_acls(resource), what="the removal")


def test_a_filter_with_an_unknown_code_is_invalid_and_deletes_nothing(secured, topic):
    apis = Apis(secured.servers[0])
    admin = KafkaPrincipal.ANONYMOUS
    assert (
        apis.call(ApiKeys.DESCRIBE_ACLS, any_filter(operation=99), admin)["error_code"]
        == Errors.INVALID_REQUEST.code
    )
    kept = acl_binding(ResourceType.TOPIC, topic, ALICE, Operation.WRITE)
    apis.call(ApiKeys.CREATE_ACLS, {"creations": [kept]}, admin)
    try:
        deleted = apis.call(ApiKeys.DELETE_ACLS, {"filters": [any_filter(resource_type=42)]}, admin)
        assert deleted["filter_responses"][0]["error_code"] == Errors.INVALID_REQUEST.code
        assert secured.servers[0].authorizer.get_acls(Resource(ResourceType.TOPIC, topic))
    finally:
        apis.call(ApiKeys.DELETE_ACLS, {"filters": [any_filter(principal="User:alice")]}, admin)


@pytest.mark.compat
def test_kafka_pythons_admin_client_creates_describes_and_deletes_acls(secured, topic):
    from kafka.admin import (
        ACL,
        ACLFilter,
        ACLOperation,
        ACLPermissionType,
        KafkaAdminClient,
        ResourcePattern,
        ResourcePatternFilter,
    )
    from kafka.admin import ResourceType as KResourceType

    admin = KafkaAdminClient(bootstrap_servers=secured.bootstrap_servers)
    try:
        acl = ACL(
            "User:grace",
            "*",
            ACLOperation.READ,
            ACLPermissionType.ALLOW,
            ResourcePattern(KResourceType.TOPIC, topic),
        )
        result = admin.create_acls([acl])
        assert result["failed"] == [] and len(result["succeeded"]) == 1
        pattern = ResourcePatternFilter(KResourceType.TOPIC, topic, acl.resource_pattern.pattern_type)
        found, error = admin.describe_acls(
            ACLFilter("User:grace", None, ACLOperation.ANY, ACLPermissionType.ANY, pattern)
        )
        assert error.errno == 0
        assert [(a.principal, a.operation, a.resource_pattern.resource_name) for a in found] == [
            ("User:grace", ACLOperation.READ, topic)
        ]
        (deleted,) = admin.delete_acls(
            [ACLFilter("User:grace", None, ACLOperation.ANY, ACLPermissionType.ANY, pattern)]
        )
        assert [a.principal for a in deleted[1]] == ["User:grace"]  # kafka-python 3: the ACLs alone
        wait_until(
            lambda: (
                not any(s.authorizer.get_acls(Resource(ResourceType.TOPIC, topic)) for s in secured.servers)
            ),
            1,
        )
    finally:
        admin.close()


def test_kafka_lites_admin_client_creates_describes_and_deletes_acls(secured, topic):
    from kafka_lite.admin import (
        ACL,
        ACLFilter,
        ACLOperation,
        ACLPermissionType,
        KafkaAdminClient,
        ResourcePattern,
    )
    from kafka_lite.admin import ResourceType as LResourceType

    admin = KafkaAdminClient(secured.bootstrap_servers)
    try:
        acl = ACL(
            "User:heidi",
            "*",
            ACLOperation.WRITE,
            ACLPermissionType.DENY,
            ResourcePattern(LResourceType.TOPIC, topic),
        )
        assert admin.create_acls([acl]) == {"succeeded": [acl], "failed": []}
        bad = ACL(
            "User:heidi",
            "*",
            ACLOperation.ANY,
            ACLPermissionType.DENY,
            ResourcePattern(LResourceType.TOPIC, topic),
        )
        (failed,) = admin.create_acls([bad])["failed"]
        assert failed[0] == bad and "cannot be ANY" in str(failed[1])
        found, error = admin.describe_acls(ACLFilter(principal="User:heidi"))
        assert error is Errors.NONE and found == [acl]
        [(_, deleted, error)] = admin.delete_acls([ACLFilter(principal="User:heidi")])
        assert error is Errors.NONE and deleted == [(acl, Errors.NONE)]
    finally:
        admin.close()


def coordinator_of(secured: LiteCluster, group: str) -> KafkaServer:
    """The broker that coordinates ``group``, asked as the super user (``__consumer_offsets`` may
    still be getting its leaders)."""

    def find() -> dict | None:
        body = {"coordinator_key": group, "coordinator_type": 0}
        response = Apis(secured.servers[0]).call(ApiKeys.FIND_COORDINATOR, body, KafkaPrincipal.ANONYMOUS)
        return response if response["error_code"] == 0 else None

    return secured.server(wait_until(find, what=f"the coordinator of {group}")["coordinator"]["node_id"])


def test_allowed_requests_are_served_and_auto_creation_needs_create_on_the_cluster(secured, topic):
    group = f"g-{uuid.uuid4().hex[:6]}"
    leader = coordinator_of(secured, group)  # the group's coordinator serves its offsets
    topics_wildcard = Resource(ResourceType.TOPIC, "*")
    leader.authorizer.add_acls({_acl(ALICE, Operation.READ)}, topics_wildcard)
    leader.authorizer.add_acls({_acl(ALICE, Operation.READ)}, Resource(ResourceType.GROUP, group))
    try:
        apis = Apis(leader)
        commit = dict(request_bodies(topic, leader.broker_id)[ApiKeys.OFFSET_COMMIT], group_id=group)
        assert error_codes(apis.call(ApiKeys.OFFSET_COMMIT, commit, ALICE)) == {0}
        fetched = apis.call(ApiKeys.OFFSET_FETCH, {"group_id": group, "topics": None}, ALICE)
        assert [
            (t["topic"], p["offset"]) for t in fetched["responses"] for p in t["partition_responses"]
        ] == [(topic, 0)]
        # Read on every topic implies Describe, so a new topic would be auto-created: that needs Create
        new = f"new-{uuid.uuid4().hex[:6]}"
        metadata = apis.call(ApiKeys.METADATA, {"topics": [new], "allow_auto_topic_creation": True}, ALICE)
        assert [(t["topic"], t["topic_error_code"]) for t in metadata["topic_metadata"]] == [
            (new, Errors.TOPIC_AUTHORIZATION_FAILED.code)
        ]
        assert not leader.metadata_cache.contains(new)
    finally:
        leader.authorizer.remove_all_acls(topics_wildcard)
        leader.authorizer.remove_all_acls(Resource(ResourceType.GROUP, group))
