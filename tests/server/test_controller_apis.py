"""ControllerApis and the controller listener's table: requests parsed as a controller's processor
parses them, handed to real quorum controllers (on one LocalLogManager log, MockTime) and to a real
Raft manager, answered through the request channel as the futures complete (Kafka's
ControllerApisTest, and ApiVersions as SimpleApiVersionManager(CONTROLLER) answers it)."""

from __future__ import annotations

import dataclasses
import logging
import uuid

import pytest

from kafka_lite.common.errors import Errors
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.controller_messages import (
    ENDPOINT_TYPE_CONTROLLERS,
    ControllerApiKeys,
    encode_controller_request,
    parse_controller_response,
    serialize_principal,
)
from kafka_lite.common.protocol.listener_type import (
    CONTROLLER_APIS,
    ListenerType,
    SimpleApiVersionManager,
    parse_listener_request_body,
    parse_listener_request_header,
)
from kafka_lite.common.protocol.raft_messages import RaftApiKeys, encode_raft_request, parse_raft_response
from kafka_lite.common.protocol.requests import (
    RequestHeader,
    UnknownApiKeyException,
    encode_request,
    parse_request,
    parse_response,
)
from kafka_lite.common.security.auth.kafka_principal import KafkaPrincipal
from kafka_lite.common.time import SYSTEM
from kafka_lite.metadata.authorizer.standard_authorizer import StandardAuthorizer
from kafka_lite.metadata.metadata_version import METADATA_VERSION_FEATURE_NAME, MetadataVersion
from kafka_lite.network.request_channel import Request, RequestChannel
from kafka_lite.network.socket_server import Listener, SocketServer
from kafka_lite.raft import raft_util
from kafka_lite.raft.raft_client import LeaderAndEpoch
from kafka_lite.raft.raft_config import RaftConfig
from kafka_lite.raft.tools.raft_manager import METADATA_PARTITION, KafkaRaftManager
from kafka_lite.server.controller_apis import ControllerApis
from kafka_lite.server.kafka_request_handler import KafkaRequestHandlerPool
from kafka_lite.testing.quorum_controller_test_env import CLUSTER_ID, QuorumControllerTestEnv
from tests.support.waiting import wait_until
from tests.support.wire import WireClient

CONTROLLER = ListenerType.CONTROLLER
VOTERS = [(0, "127.0.0.1", 9093), (1, "127.0.0.1", 9094), (2, "127.0.0.1", 9095)]
ADMIN = KafkaPrincipal("User", "admin")  # the brokers' principal, a super user
ALICE = KafkaPrincipal("User", "alice")
FEATURES = [
    {
        "name": METADATA_VERSION_FEATURE_NAME,
        "min_supported_version": MetadataVersion.IBP_3_0_IV1.feature_level,
        "max_supported_version": MetadataVersion.IBP_3_3_IV3.feature_level,
    }
]


def frame_of(api_key: int, version: int, body: dict, correlation_id: int = 7) -> bytes:
    """A request frame (without its size) as a broker or a voter sends it."""
    header = RequestHeader(api_key, version, correlation_id, "test")
    if api_key in ControllerApiKeys._value2member_map_:
        return encode_controller_request(header, body)
    if api_key in RaftApiKeys._value2member_map_:
        return encode_raft_request(header, body)
    return encode_request(header, body)


def request_of(frame: bytes) -> Request:
    """The frame parsed as a controller listener's processor parses it."""
    header, api, start = parse_listener_request_header(CONTROLLER, frame)
    body = parse_listener_request_body(api, header, frame, start)
    return Request(0, "conn-1", header, body, len(frame), "127.0.0.1", 0, api=api)


class Harness:
    """ControllerApis over the controllers of a test env, answering into a request channel."""

    def __init__(
        self, env: QuorumControllerTestEnv, node_id: int, raft_manager=None, delete_topic_enable=True,
        authorizer=None,
    ):  # fmt: skip
        self.env = env
        # who sends the harness's requests: with an authorizer, the brokers' super user
        self.principal = ADMIN if authorizer is not None else None
        self.channel = RequestChannel(1, 10)
        self.apis = ControllerApis(
            self.channel, env.time, env.controllers[node_id], raft_manager, node_id, delete_topic_enable,
            SimpleApiVersionManager(CONTROLLER), cluster_id=CLUSTER_ID, controller_nodes=VOTERS,
            authorizer=authorizer,
        )  # fmt: skip

    def send(
        self, api_key: int, version: int, body: dict, principal: KafkaPrincipal | None = None
    ) -> Request:
        request = request_of(frame_of(api_key, version, body))
        principal = principal or self.principal
        if principal is not None:
            request = dataclasses.replace(request, principal=principal)
        self.apis.handle(request)
        return request

    def answer(self, api_key: int, version: int) -> dict:
        """The one response waiting in the channel, decoded (after the controllers ran their events)."""
        self.env.poll()
        response = self.channel.receive_response(0)
        assert response is not None, "no response was sent"
        assert self.channel.receive_response(0) is None
        frame = b"".join(response.pieces)
        if api_key in ControllerApiKeys._value2member_map_:
            correlation_id, body = parse_controller_response(api_key, version, frame)
        elif api_key not in ApiKeys._value2member_map_:  # a Raft RPC the client table lacks
            correlation_id, body = parse_raft_response(RaftApiKeys(api_key), version, frame)
        else:
            correlation_id, body = parse_response(ApiKeys(api_key), version, frame)
        assert correlation_id == 7
        return body

    def call(self, api_key: int, version: int, body: dict, principal: KafkaPrincipal | None = None) -> dict:
        self.send(api_key, version, body, principal)
        return self.answer(api_key, version)

    def enveloped(self, api_key: int, version: int, body: dict, client: KafkaPrincipal, broker=ADMIN) -> dict:
        """``body`` forwarded by a broker (as ``broker``) for ``client``: the Envelope's answer, and
        inside it, decoded, the answer to the request (under ``"inside"``)."""
        envelope = {
            "request_data": frame_of(api_key, version, body, correlation_id=3),
            "request_principal": serialize_principal(client),
            "client_host_address": bytes([10, 0, 0, 7]),
        }
        answer = self.call(ControllerApiKeys.ENVELOPE, 0, envelope, broker)
        if answer["response_data"] is not None:
            _, answer["inside"] = parse_response(ApiKeys(api_key), version, answer["response_data"])
        return answer


def registration(broker_id: int) -> dict:
    return {
        "broker_id": broker_id, "cluster_id": CLUSTER_ID, "incarnation_id": uuid.UUID(int=broker_id),
        "listeners": [
            {"name": "PLAINTEXT", "host": "localhost", "port": 9092 + broker_id, "security_protocol": 0}
        ],
        "features": FEATURES, "rack": None,
    }  # fmt: skip


def standard_authorizer() -> StandardAuthorizer:
    """KRaft's authorizer, loaded with no ACLs: admin may do anything, everyone else nothing."""
    authorizer = StandardAuthorizer()
    authorizer.configure({"super.users": "User:admin"})
    authorizer.complete_initial_load()
    return authorizer


@pytest.fixture
def env():
    env = QuorumControllerTestEnv(3)
    env.elect(0)
    return env


# -- the table and the processor's parse ------------------------------------------------------------------


@pytest.mark.unit
def test_the_controller_table_is_raft_and_controller_rpcs_and_the_forwarded_admin_apis():
    assert set(CONTROLLER_APIS) == (
        {int(a) for a in RaftApiKeys}
        | {int(a) for a in ControllerApiKeys}
        | {ApiKeys.API_VERSIONS, ApiKeys.CREATE_TOPICS, ApiKeys.DELETE_TOPICS, ApiKeys.ALTER_CONFIGS,
           ApiKeys.CREATE_PARTITIONS, ApiKeys.CREATE_ACLS, ApiKeys.DELETE_ACLS}
    )  # fmt: skip
    # Api key 1 on this listener is the quorum's Fetch v13, not the client table's Fetch v0-5.
    assert CONTROLLER_APIS[1] is RaftApiKeys.FETCH


@pytest.mark.unit
def test_a_controller_listener_refuses_a_client_api_and_a_broker_listener_a_controller_rpc():
    produce = encode_request(
        RequestHeader(ApiKeys.PRODUCE, 2, 1, "c"), {"acks": 1, "timeout": 1, "topic_data": []}
    )
    with pytest.raises(UnknownApiKeyException, match="api key 0 is not an API of the controller listener"):
        parse_listener_request_header(CONTROLLER, produce)
    heartbeat = frame_of(ControllerApiKeys.BROKER_HEARTBEAT, 0, {"broker_id": 1})
    with pytest.raises(UnknownApiKeyException):
        parse_request(heartbeat)  # the broker's own path, unchanged
    assert request_of(heartbeat).api is ControllerApiKeys.BROKER_HEARTBEAT


@pytest.mark.unit
def test_api_versions_lists_exactly_the_controller_table(env):
    harness = Harness(env, 0)
    body = harness.call(ApiKeys.API_VERSIONS, 1, {})
    assert body["error_code"] == 0
    listed = {v["api_key"]: (v["min_version"], v["max_version"]) for v in body["api_versions"]}
    assert listed == {key: (api.oldest_version, api.latest_version) for key, api in CONTROLLER_APIS.items()}
    assert listed[RaftApiKeys.FETCH] == (13, 13) and listed[ControllerApiKeys.ALTER_PARTITION] == (0, 2)
    assert ApiKeys.PRODUCE not in listed


@pytest.mark.unit
def test_a_parsed_request_with_no_handler_is_an_error_in_the_log_and_unsupported_to_the_client(env, caplog):
    """The processor parses only the table's APIs, so a request with no handler is the controller's
    own bug: logged as an error, and the client told UNSUPPORTED_VERSION rather than left waiting."""
    harness = Harness(env, 0)
    del harness.apis._handlers[ApiKeys.API_VERSIONS]  # the bug: a table entry without its handler
    with caplog.at_level(logging.ERROR, logger="kafka_lite.server.controller_apis"):
        body = harness.call(ApiKeys.API_VERSIONS, 1, {})
    assert body["error_code"] == Errors.UNSUPPORTED_VERSION.code
    assert [r.levelno for r in caplog.records if "Unsupported ApiKey" in r.getMessage()] == [logging.ERROR]


# -- the controller's RPCs ----------------------------------------------------------------------------------


@pytest.mark.unit
def test_registration_gets_an_epoch_from_the_active_controller_and_not_controller_from_a_standby(env):
    active, standby = Harness(env, 0), Harness(env, 1)
    body = active.call(ControllerApiKeys.BROKER_REGISTRATION, 0, registration(1))
    assert body["error_code"] == 0 and body["broker_epoch"] > 0
    assert env.controllers[0].cluster_control.registration(1).epoch == body["broker_epoch"]
    refused = standby.call(ControllerApiKeys.BROKER_REGISTRATION, 0, registration(2))
    assert refused["error_code"] == Errors.NOT_CONTROLLER.code and refused["broker_epoch"] == -1


@pytest.mark.unit
def test_the_answer_waits_for_the_commit(env):
    harness = Harness(env, 0)
    harness.send(ControllerApiKeys.BROKER_REGISTRATION, 0, registration(1))
    # The handler returned at once; nothing is answered until the controller's event ran and the
    # log committed the record.
    assert harness.channel.receive_response(0) is None
    assert harness.answer(ControllerApiKeys.BROKER_REGISTRATION, 0)["error_code"] == 0


@pytest.mark.unit
def test_a_heartbeat_is_answered_with_the_brokers_state_and_a_stale_epoch_refused(env):
    harness = Harness(env, 0)
    epoch = harness.call(ControllerApiKeys.BROKER_REGISTRATION, 0, registration(1))["broker_epoch"]
    heartbeat = {"broker_id": 1, "broker_epoch": epoch, "current_metadata_offset": epoch,
                 "want_fence": False, "want_shut_down": False}  # fmt: skip
    body = harness.call(ControllerApiKeys.BROKER_HEARTBEAT, 0, heartbeat)
    assert body == {"throttle_time_ms": 0, "error_code": 0, "is_caught_up": True, "is_fenced": False,
                    "should_shut_down": False}  # fmt: skip
    stale = harness.call(ControllerApiKeys.BROKER_HEARTBEAT, 0, {**heartbeat, "broker_epoch": epoch - 1})
    assert stale["error_code"] == Errors.STALE_BROKER_EPOCH.code


@pytest.mark.unit
def test_allocate_producer_ids_hands_out_a_block(env):
    harness = Harness(env, 0)
    epoch = harness.call(ControllerApiKeys.BROKER_REGISTRATION, 0, registration(1))["broker_epoch"]
    body = harness.call(ControllerApiKeys.ALLOCATE_PRODUCER_IDS, 0, {"broker_id": 1, "broker_epoch": epoch})
    assert (body["error_code"], body["producer_id_start"], body["producer_id_len"]) == (0, 0, 1000)


# -- the admin APIs a broker forwards ---------------------------------------------------------------------


def _unfenced_brokers(harness: Harness, ids) -> None:
    for broker_id in ids:
        epoch = harness.call(ControllerApiKeys.BROKER_REGISTRATION, 0, registration(broker_id))[
            "broker_epoch"
        ]
        heartbeat = {"broker_id": broker_id, "broker_epoch": epoch, "current_metadata_offset": 10**6,
                     "want_fence": False, "want_shut_down": False}  # fmt: skip
        assert harness.call(ControllerApiKeys.BROKER_HEARTBEAT, 0, heartbeat)["is_fenced"] is False


def _topic(name: str, partitions: int = 2, replication: int = 1) -> dict:
    return {"topic": name, "num_partitions": partitions, "replication_factor": replication,
            "replica_assignment": [], "config_entries": []}  # fmt: skip


@pytest.mark.unit
def test_create_topics_creates_and_refuses_a_name_given_twice(env):
    harness = Harness(env, 0)
    _unfenced_brokers(harness, [1, 2])
    request = {
        "create_topic_requests": [_topic("a"), _topic("b"), _topic("b")],
        "timeout": 1000,
        "validate_only": False,
    }
    body = harness.call(ApiKeys.CREATE_TOPICS, 2, request)
    errors = {t["topic"]: (t["error_code"], t["error_message"]) for t in body["topic_errors"]}
    assert errors == {"a": (0, None), "b": (Errors.INVALID_REQUEST.code, "Duplicate topic name.")}
    replication = env.controllers[0].replication_control
    topic_id = replication.get_topic_id("a")
    assert topic_id is not None and replication.get_topic_id("b") is None
    assert replication.get_partition(topic_id, 1) is not None
    # A standby answers every topic with NOT_CONTROLLER, and the client retries elsewhere.
    refused = Harness(env, 2).call(
        ApiKeys.CREATE_TOPICS, 2, {**request, "create_topic_requests": [_topic("c")]}
    )
    assert [(t["topic"], t["error_code"]) for t in refused["topic_errors"]] == [
        ("c", Errors.NOT_CONTROLLER.code)
    ]


@pytest.mark.unit
def test_delete_topics_is_refused_when_deletion_is_disabled(env):
    harness = Harness(env, 0, delete_topic_enable=False)
    body = harness.call(ApiKeys.DELETE_TOPICS, 1, {"topics": ["a", "b"], "timeout": 1000})
    assert body["topic_error_codes"] == [
        {"topic": "a", "error_code": Errors.INVALID_REQUEST.code},
        {"topic": "b", "error_code": Errors.INVALID_REQUEST.code},
    ]


@pytest.mark.unit
def test_delete_topics_names_an_unknown_topic(env):
    body = Harness(env, 0).call(ApiKeys.DELETE_TOPICS, 1, {"topics": ["missing"], "timeout": 1000})
    assert body["topic_error_codes"] == [
        {"topic": "missing", "error_code": Errors.UNKNOWN_TOPIC_OR_PARTITION.code}
    ]


@pytest.mark.unit
def test_alter_configs_refuses_an_unknown_resource_type_and_a_duplicate(env):
    def resource(kind: int, name: str) -> dict:
        return {"resource_type": kind, "resource_name": name,
                "config_entries": [{"config_name": "retention.ms", "config_value": "1000"}]}  # fmt: skip

    request = {"resources": [resource(99, "x"), resource(2, "t"), resource(2, "t")], "validate_only": False}
    body = Harness(env, 0).call(ApiKeys.ALTER_CONFIGS, 0, request)
    answers = [
        (r["resource_type"], r["resource_name"], r["error_code"], r["error_message"])
        for r in body["resources"]
    ]
    assert answers == [
        (99, "x", Errors.UNSUPPORTED_VERSION.code, "Unknown resource type 99."),
        (2, "t", Errors.INVALID_REQUEST.code, "Duplicate resource."),
    ]


# -- Raft's RPCs, to a real Raft manager ------------------------------------------------------------------


@pytest.mark.integration
def test_describe_quorum_goes_to_the_raft_manager_and_its_answer_comes_back(env, tmp_path):
    config = RaftConfig.from_config({"controller.quorum.voters": "1@127.0.0.1:1"})
    manager = KafkaRaftManager(1, tmp_path, config, _NoSerde(), SYSTEM, serve_own_listener=False)
    assert manager.socket_server is None  # the controller's listener serves it
    manager.startup()
    try:
        wait_until(lambda: manager.leader_and_epoch().leader_id == 1, 10, "the only voter to lead")
        harness = Harness(env, 0, raft_manager=manager)
        version = RaftApiKeys.DESCRIBE_QUORUM.latest_version
        request = raft_util.describe_quorum_request(METADATA_PARTITION)
        harness.send(RaftApiKeys.DESCRIBE_QUORUM, version, request)
        response = wait_until(lambda: harness.channel.receive_response(0), 5, "the Raft thread's answer")
        correlation_id, body = parse_raft_response(
            RaftApiKeys.DESCRIBE_QUORUM, version, b"".join(response.pieces)
        )
        partition = body["topics"][0]["partitions"][0]
        assert (correlation_id, body["error_code"], partition["leader_id"]) == (7, 0, 1)
        assert [v["replica_id"] for v in partition["current_voters"]] == [1]
    finally:
        manager.shutdown()


class _LeaderIs:
    """A Raft manager that only says who leads."""

    def __init__(self, leader_id: int | None) -> None:
        self.leader_id = leader_id

    def leader_and_epoch(self) -> LeaderAndEpoch:
        return LeaderAndEpoch(self.leader_id, 3)


@pytest.mark.unit
def test_describe_cluster_names_the_cluster_the_raft_leader_and_the_voters(env):
    """Kafka 3.7's answer on a controller listener (KIP-919), for the admin's --bootstrap-controller."""
    api = ControllerApiKeys.DESCRIBE_CLUSTER
    harness = Harness(env, 1, raft_manager=_LeaderIs(2))
    body = harness.call(api, 1, {"endpoint_type": ENDPOINT_TYPE_CONTROLLERS})
    assert (body["error_code"], body["cluster_id"], body["controller_id"]) == (0, CLUSTER_ID, 2)
    assert [(b["broker_id"], b["host"], b["port"]) for b in body["brokers"]] == VOTERS
    assert (
        Harness(env, 1, raft_manager=_LeaderIs(None)).call(api, 1, {"endpoint_type": 2})["controller_id"]
        == -1
    )
    refused = harness.call(api, 1, {"endpoint_type": 1})  # the brokers are a broker's to describe
    assert (refused["error_code"], refused["brokers"]) == (Errors.INVALID_REQUEST.code, [])
    assert "describes the controllers (endpoint type 2), not endpoint type 1" in refused["error_message"]


class _NoSerde:
    def serialize(self, record: bytes) -> bytes:
        return record

    def deserialize(self, data: bytes) -> bytes:
        return data


# -- over a real socket server of ListenerType.CONTROLLER -------------------------------------------------


@pytest.fixture
def controller_listener(env):
    """A socket server built for the controller's listener type, with ControllerApis behind it."""
    server = SocketServer(
        num_network_threads=1, listeners=[Listener("CONTROLLER", "PLAINTEXT", "127.0.0.1", 0)],
        listener_type=CONTROLLER,
    )  # fmt: skip
    apis = ControllerApis(server.request_channel, SYSTEM, env.controllers[0], None, 0, True,
                          SimpleApiVersionManager(CONTROLLER), cluster_id=CLUSTER_ID,
                          controller_nodes=VOTERS)  # fmt: skip
    pool = KafkaRequestHandlerPool(server.request_channel, apis, 1)
    server.startup()
    try:
        yield server.port
    finally:
        server.shutdown()
        pool.shutdown()


@pytest.mark.integration
def test_a_controller_listener_answers_api_versions_and_closes_on_a_client_only_api(controller_listener):
    client = WireClient(controller_listener)
    try:
        body = client.call(ApiKeys.API_VERSIONS, 1, {})
        assert {v["api_key"] for v in body["api_versions"]} == set(CONTROLLER_APIS)
        # A version we do not speak is still answered, in v0's layout, so the client can retry lower.
        client.send_raw(RequestHeader(ApiKeys.API_VERSIONS, 9, 5, "c").encode(1))
        correlation_id, refused = parse_response(ApiKeys.API_VERSIONS, 0, client.read_frame())
        assert (correlation_id, refused["error_code"]) == (5, Errors.UNSUPPORTED_VERSION.code)
        assert len(refused["api_versions"]) == len(CONTROLLER_APIS)
        # Produce is not an API of this listener: the connection is closed, as for any frame that
        # does not parse.
        client.send(ApiKeys.PRODUCE, 2, {"acks": 1, "timeout": 1, "topic_data": []})
        assert wait_until(client.closed_by_peer, 5, "the controller to close the connection")
    finally:
        client.close()


# -- authorization, and the client's principal in a broker's Envelope (KIP-590) --------------------------------


@pytest.mark.unit
def test_a_forwarded_request_is_authorized_as_the_client_the_envelope_names(env):
    harness = Harness(env, 0, authorizer=standard_authorizer())
    _unfenced_brokers(harness, [1, 2])
    request = {"create_topic_requests": [_topic("mine")], "timeout": 1000, "validate_only": False}
    answer = harness.enveloped(ApiKeys.CREATE_TOPICS, 2, request, client=ALICE)
    assert answer["error_code"] == 0
    assert [(t["topic"], t["error_code"]) for t in answer["inside"]["topic_errors"]] == [
        ("mine", Errors.TOPIC_AUTHORIZATION_FAILED.code)
    ], "alice has no CREATE: the broker that forwarded it (a super user) does not lend her its rights"
    assert env.controllers[0].replication_control.get_topic_id("mine") is None
    answer = harness.enveloped(ApiKeys.CREATE_TOPICS, 2, request, client=ADMIN)
    assert [(t["topic"], t["error_code"]) for t in answer["inside"]["topic_errors"]] == [("mine", 0)]


@pytest.mark.unit
def test_an_envelope_from_a_principal_without_cluster_action_is_refused_whole(env):
    harness = Harness(env, 0, authorizer=standard_authorizer())
    request = {"topics": ["mine"], "timeout": 1000}
    answer = harness.enveloped(ApiKeys.DELETE_TOPICS, 1, request, client=ADMIN, broker=ALICE)
    assert answer == {"response_data": None, "error_code": Errors.CLUSTER_AUTHORIZATION_FAILED.code}


@pytest.mark.unit
def test_a_standbys_not_controller_is_the_envelopes_own_error_so_the_broker_looks_again(env):
    standby = Harness(env, 2, authorizer=standard_authorizer())
    request = {"create_topic_requests": [_topic("c")], "timeout": 1000, "validate_only": False}
    answer = standby.enveloped(ApiKeys.CREATE_TOPICS, 2, request, client=ADMIN)
    assert answer == {"response_data": None, "error_code": Errors.NOT_CONTROLLER.code}


@pytest.mark.unit
def test_the_quorums_and_the_brokers_rpcs_need_the_cluster_principal(env):
    harness = Harness(env, 0, authorizer=standard_authorizer())
    refused = Errors.CLUSTER_AUTHORIZATION_FAILED.code
    assert (
        harness.call(ControllerApiKeys.BROKER_REGISTRATION, 0, registration(1), ALICE)["error_code"]
        == refused
    )
    describe = raft_util.describe_quorum_request(METADATA_PARTITION)
    assert harness.call(RaftApiKeys.DESCRIBE_QUORUM, 0, describe, ALICE)["error_code"] == refused
    acl = {"resource_type": 2, "resource_name": "t", "resource_pattern_type": 3, "principal": "User:alice",
           "host": "*", "operation": 4, "permission_type": 3}  # fmt: skip
    created = harness.call(ApiKeys.CREATE_ACLS, 0, {"creations": [acl]}, ALICE)
    assert [r["error_code"] for r in created["creation_responses"]] == [refused]
    assert harness.call(ControllerApiKeys.BROKER_REGISTRATION, 0, registration(1), ADMIN)["error_code"] == 0
