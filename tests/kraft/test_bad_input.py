"""Bad input to a running KRaft controller, sent over its CONTROLLER listener as a misbehaving broker
would send it: raw requests to one combined node (``process.roles=broker,controller``), answered
with Kafka 3.3's errors, and nothing for the refused request in the metadata log.

A registration under another cluster id (INCONSISTENT_CLUSTER_ID) or under the live broker's id
with another incarnation id (DUPLICATE_BROKER_REGISTRATION); a heartbeat, an ISR change or a
producer id block asked for under a broker epoch that is not the registered one, and a heartbeat
from a broker id never registered (STALE_BROKER_EPOCH for both, as 3.3 answers them); a fenced
broker that is not caught up stays fenced; CreateTopics the controller refuses (an invalid name, a
replication factor above the live brokers, a topic that exists, a config that is not a topic
config or not a valid value). Each check reads the metadata log's records from the offset it saw
before, and an accepted request beside the refused ones shows that what is written is there to be
seen. Last, garbage bytes, a cut request and a negative size close their connection and only it,
and the node keeps answering."""

from __future__ import annotations

import struct

import pytest

from kafka_lite.common.errors import Errors
from kafka_lite.common.metadata.records import (
    BrokerRegistrationChangeRecord,
    ConfigRecord,
    ProducerIdsRecord,
    RegisterBrokerRecord,
    TopicRecord,
    UnfenceBrokerRecord,
)
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.controller_messages import (
    ControllerApiKeys,
    encode_controller_request,
    parse_controller_response,
)
from kafka_lite.common.protocol.requests import RequestHeader, encode_request, parse_response
from kafka_lite.raft.tools.quorum_client import describe_quorum
from tests.kraft.nodes import CombinedNodes, metadata_records, registration
from tests.support.waiting import wait_until
from tests.support.wire import WireClient

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("kraft_bad_input")]

NODE = 1  # the combined node: the active controller, and the one live broker


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    nodes = CombinedNodes(tmp_path_factory.mktemp("kraft-bad-input"), (NODE,))
    try:
        nodes.start_all()
        yield nodes
    finally:
        nodes.stop_all()


def address(node: CombinedNodes) -> tuple[str, int]:
    return "127.0.0.1", node.controller_ports[NODE]


def call(
    node: CombinedNodes, api_key: int, version: int, body: dict, client: WireClient | None = None
) -> dict:
    """One request to the CONTROLLER listener as a broker's channel sends it, on ``client``'s
    connection or on a fresh one."""
    header = RequestHeader(api_key, version, 7, "misbehaving-broker")
    controller_api = api_key in ControllerApiKeys._value2member_map_
    frame = encode_controller_request(header, body) if controller_api else encode_request(header, body)
    client = client or WireClient(node.controller_ports[NODE], timeout_s=5)
    try:
        client.send_raw(frame)
        payload = client.read_frame()
    finally:
        client.close()
    if controller_api:
        correlation_id, answer = parse_controller_response(api_key, version, payload)
    else:
        correlation_id, answer = parse_response(ApiKeys(api_key), version, payload)
    assert correlation_id == 7
    return answer


def log_end_offset(node: CombinedNodes) -> int:
    """The active controller's metadata log end offset, as DescribeQuorum reports it."""
    answer = describe_quorum(address(node))
    assert answer["error_code"] == 0, answer
    (leader,) = [v for v in answer["current_voters"] if v["replica_id"] == answer["leader_id"]]
    return leader["log_end_offset"]


def written_since(node: CombinedNodes, offset: int) -> list:
    return [record for _, record in metadata_records(node.root / f"node-{NODE}" / "metadata", offset)]


def heartbeat(broker_id: int, epoch: int, offset: int) -> dict:
    return {"broker_id": broker_id, "broker_epoch": epoch, "current_metadata_offset": offset,
            "want_fence": False, "want_shut_down": False}  # fmt: skip


def still_unfenced(node: CombinedNodes) -> None:
    """Broker 1 (the combined node's own) is the one broker clients are told of: the bad input did
    not fence it or let another in. Waited for, since a busy machine can let its session lapse for
    a moment, after which it is unfenced again."""
    wait_until(lambda: node.brokers_seen(NODE) == {NODE}, 5, "broker 1 alone registered and unfenced")


def about_broker(records: list, broker_id: int) -> list:
    kinds = (RegisterBrokerRecord, BrokerRegistrationChangeRecord, UnfenceBrokerRecord, ProducerIdsRecord)
    return [r for r in records if isinstance(r, kinds) and r.broker_id == broker_id]


def test_registrations_under_another_cluster_id_or_a_live_brokers_id_are_refused_unwritten(node):
    before = log_end_offset(node)
    foreign = call(node, ControllerApiKeys.BROKER_REGISTRATION, 0, registration("not-this-cluster", 5))
    # Broker 1 is the combined node itself, heartbeating: its session is valid, so a second
    # process under its id (another incarnation id: the node's own is random) is a misconfiguration,
    # not a restart.
    twin = call(node, ControllerApiKeys.BROKER_REGISTRATION, 0, registration(node.cluster_id, NODE))
    assert (foreign["error_code"], foreign["broker_epoch"]) == (Errors.INCONSISTENT_CLUSTER_ID.code, -1)
    assert (twin["error_code"], twin["broker_epoch"]) == (Errors.DUPLICATE_BROKER_REGISTRATION.code, -1)
    written = written_since(node, before)
    assert about_broker(written, 5) == []
    assert [r for r in written if isinstance(r, RegisterBrokerRecord)] == []
    still_unfenced(node)


def test_heartbeats_and_requests_under_a_stale_or_unknown_broker_epoch_are_refused_unwritten(node):
    before = log_end_offset(node)
    stale = call(node, ControllerApiKeys.BROKER_HEARTBEAT, 0, heartbeat(NODE, 123_456, before))
    unknown = call(node, ControllerApiKeys.BROKER_HEARTBEAT, 0, heartbeat(42, 1, before))
    producer_ids = call(
        node, ControllerApiKeys.ALLOCATE_PRODUCER_IDS, 0, {"broker_id": NODE, "broker_epoch": 123_456}
    )
    isr_change = call(
        node, ControllerApiKeys.ALTER_PARTITION, 0, {"broker_id": NODE, "broker_epoch": 123_456, "topics": []}
    )
    assert stale["error_code"] == unknown["error_code"] == Errors.STALE_BROKER_EPOCH.code
    assert producer_ids["error_code"] == isr_change["error_code"] == Errors.STALE_BROKER_EPOCH.code
    written = written_since(node, before)
    assert about_broker(written, 42) == []
    assert [r for r in about_broker(written, NODE) if r.broker_epoch == 123_456] == []
    still_unfenced(node)


def test_a_fenced_broker_not_caught_up_stays_fenced(node):
    before = log_end_offset(node)
    registered = call(node, ControllerApiKeys.BROKER_REGISTRATION, 0, registration(node.cluster_id, 6))
    assert registered["error_code"] == 0
    epoch = registered["broker_epoch"]
    # Broker 6 says it has replayed nothing: it has not reached its own registration record.
    answer = call(node, ControllerApiKeys.BROKER_HEARTBEAT, 0, heartbeat(6, epoch, 0))
    assert (answer["error_code"], answer["is_caught_up"], answer["is_fenced"]) == (0, False, True)
    # Its registration, written fenced, is the one record about it: nothing unfenced it.
    (record,) = about_broker(written_since(node, before), 6)
    assert isinstance(record, RegisterBrokerRecord) and record.fenced and record.broker_epoch == epoch
    still_unfenced(node)


def test_create_topics_the_controller_refuses_are_answered_with_kafkas_errors_and_not_written(node):
    def topic(name: str, replication_factor: int = 1, configs: dict | None = None) -> dict:
        entries = [{"config_name": k, "config_value": v} for k, v in (configs or {}).items()]
        return {"topic": name, "num_partitions": 1, "replication_factor": replication_factor,
                "replica_assignment": [], "config_entries": entries}  # fmt: skip

    def create(*topics: dict) -> dict[str, int]:
        request = {"create_topic_requests": list(topics), "timeout": 5000, "validate_only": False}
        answer = call(node, ApiKeys.CREATE_TOPICS, 2, request)
        return {t["topic"]: t["error_code"] for t in answer["topic_errors"]}

    assert create(topic("taken")) == {"taken": 0}
    before = log_end_offset(node)
    answers = create(
        topic("bad/name"),
        topic("too-replicated", replication_factor=3),
        topic("taken"),
        topic("unknown-config", configs={"no.such.config": "1"}),
        topic("bad-value", configs={"cleanup.policy": "sometimes"}),
        topic("accepted"),
    )
    assert answers == {
        "bad/name": Errors.INVALID_TOPIC_EXCEPTION.code,
        "too-replicated": Errors.INVALID_REPLICATION_FACTOR.code,
        "taken": Errors.TOPIC_ALREADY_EXISTS.code,
        "unknown-config": Errors.INVALID_CONFIG.code,
        "bad-value": Errors.INVALID_CONFIG.code,
        "accepted": 0,
    }
    written = written_since(node, before)
    # The accepted topic, from the same request, is there: so the refused ones would be seen.
    assert [r.name for r in written if isinstance(r, TopicRecord)] == ["accepted"]
    assert [r for r in written if isinstance(r, ConfigRecord)] == []


def test_garbage_and_a_cut_request_close_the_connection_and_the_node_keeps_answering(node):
    garbage = WireClient(node.controller_ports[NODE], timeout_s=5)
    garbage.send_raw(b"\xde\xad\xbe\xef not a request at all")
    # A registration without its last 60 bytes: the frame ends inside its listeners, so the body
    # cannot be read to its end.
    header = RequestHeader(ControllerApiKeys.BROKER_REGISTRATION, 0, 1, "misbehaving-broker")
    frame = encode_controller_request(header, registration(node.cluster_id, 8))
    cut = WireClient(node.controller_ports[NODE], timeout_s=5)
    cut.send_raw(frame[: len(frame) - 60])
    # A size no request may have (negative).
    negative = WireClient(node.controller_ports[NODE], timeout_s=5)
    negative.sock.sendall(struct.pack(">i", -5) + b"xx")
    try:
        for client in (garbage, cut, negative):
            assert client.closed_by_peer()
    finally:
        for client in (garbage, cut, negative):
            client.close()
    assert node.processes[NODE].poll() is None
    versions = call(node, ApiKeys.API_VERSIONS, 1, {})
    assert versions["error_code"] == 0
    assert ControllerApiKeys.BROKER_HEARTBEAT in {v["api_key"] for v in versions["api_versions"]}
    assert log_end_offset(node) > 0
    still_unfenced(node)


def test_bytes_that_close_a_connection_leave_the_listeners_other_connections_open(node):
    # A connection opened before the garbage is still served after it: the processor closes only
    # the channel the bad bytes came on.
    bystander = WireClient(node.controller_ports[NODE], timeout_s=5)
    garbage = WireClient(node.controller_ports[NODE], timeout_s=5)
    try:
        garbage.send_raw(b"\x00\x3e\x00\x09 version 9 of a registration")
        assert garbage.closed_by_peer()
    finally:
        garbage.close()
    answer = call(node, ControllerApiKeys.BROKER_HEARTBEAT, 0, heartbeat(77, 1, 0), client=bystander)
    assert answer["error_code"] == Errors.STALE_BROKER_EPOCH.code
