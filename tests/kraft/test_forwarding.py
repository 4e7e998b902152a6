"""A KRaft broker's forwarding to a real QuorumController (LocalLogManager, stepped on MockTime): a
client's CreateTopics at v0 forwarded inside an Envelope with the client's principal, encoded and
parsed as the forwarding channel carries it, and answered with the controller's result; producer id
blocks from AllocateProducerIds."""

from __future__ import annotations

import itertools
import threading
import uuid

import pytest

from kafka_lite.clients.network_client import ClientRequest, ClientResponse
from kafka_lite.common.errors import Errors, KafkaException
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.controller_messages import (
    ControllerApiKeys,
    deserialize_principal,
    encode_controller_request,
    encode_controller_response,
    parse_controller_request,
    parse_controller_response,
)
from kafka_lite.common.protocol.listener_type import (
    ListenerType,
    encode_listener_response,
    listener_api,
    parse_listener_request_body,
    parse_listener_request_header,
)
from kafka_lite.common.protocol.requests import (
    RequestHeader,
    encode_request,
    encode_response,
    parse_request,
    parse_response,
)
from kafka_lite.common.security.auth.kafka_principal import KafkaPrincipal
from kafka_lite.network.request_channel import Request
from kafka_lite.server.forwarding_manager import ForwardingManager
from kafka_lite.server.producer_id_manager import RPCProducerIdManager
from kafka_lite.testing.quorum_controller_test_env import CLUSTER_ID, QuorumControllerTestEnv

pytestmark = pytest.mark.unit


class WireChannel:
    """The channel without sockets: each request is encoded and parsed as the network carries it,
    handed to the active controller, and its answer encoded and parsed back on ``deliver``. An
    Envelope is opened as the controller's listener opens it: the request inside is the controller's
    to answer, the principal beside it is recorded in ``principals``."""

    def __init__(self, env: QuorumControllerTestEnv) -> None:
        self.env = env
        self.correlation_ids = itertools.count()
        self.in_flight = []
        self.principals = []

    def send_request(self, api, body, callback) -> None:
        header = RequestHeader(int(api), api.latest_version, next(self.correlation_ids), "broker")
        controller = self.env.active()
        if api is ControllerApiKeys.ALLOCATE_PRODUCER_IDS:
            future = controller.allocate_producer_ids(body)
        elif api is ControllerApiKeys.ENVELOPE:
            _, envelope = parse_controller_request(encode_controller_request(header, body))
            self.principals.append(deserialize_principal(envelope["request_principal"]))
            inner = envelope["request_data"]
            inner_header, inner_api, start = parse_listener_request_header(ListenerType.CONTROLLER, inner)
            assert inner_header.api_key == ApiKeys.CREATE_TOPICS
            future = controller.create_topics(
                parse_listener_request_body(inner_api, inner_header, inner, start)
            )
            header = (header, inner_header)
        else:
            _, parsed = parse_request(encode_request(header, body))
            assert api is ApiKeys.CREATE_TOPICS
            future = controller.create_topics(parsed)
        self.in_flight.append((api, header, body, future, callback))

    def deliver(self) -> int:
        done = [entry for entry in self.in_flight if entry[3].done()]
        for entry in done:
            self.in_flight.remove(entry)
            api, header, body, future, callback = entry
            if future.exception() is not None:  # as ControllerApis answers a refused request
                error = Errors.for_exception(future.exception())
                result = {
                    "throttle_time_ms": 0,
                    "error_code": error.code,
                    "producer_id_start": -1,
                    "producer_id_len": 0,
                }
            else:
                result = future.result()
            if api is ControllerApiKeys.ALLOCATE_PRODUCER_IDS:
                payload = encode_controller_response(int(api), 0, header.correlation_id, result)
                _, answer = parse_controller_response(int(api), 0, payload)
            elif api is ControllerApiKeys.ENVELOPE:
                header, inner_header = header
                inner_api = listener_api(ListenerType.CONTROLLER, inner_header.api_key)
                inner = encode_listener_response(
                    inner_api, inner_header.api_version, inner_header.correlation_id, result
                )
                enveloped = {"response_data": inner, "error_code": 0}
                payload = encode_controller_response(int(api), 0, header.correlation_id, enveloped)
                _, answer = parse_controller_response(int(api), 0, payload)
            else:
                payload = encode_response(api, header.api_version, header.correlation_id, result)
                _, answer = parse_response(api, header.api_version, payload)
            request = ClientRequest("0", api, header.api_version, body)
            callback.on_complete(ClientResponse(request, self.env.time.milliseconds(), answer))
        return len(done)


@pytest.fixture
def env():
    env = QuorumControllerTestEnv(num_controllers=1)
    env.elect(0)
    return env


def step(env, channel) -> None:
    while env.poll() + channel.deliver():
        pass


def register(env, broker_id: int) -> int:
    future = env.active().register_broker(
        {
            "broker_id": broker_id, "cluster_id": CLUSTER_ID, "incarnation_id": uuid.UUID(int=broker_id),
            "listeners": [{"name": "PLAINTEXT", "host": "127.0.0.1", "port": 9092, "security_protocol": 0}],
            "features": [{"name": "metadata.version", "min_supported_version": 1, "max_supported_version": 7}],
            "rack": None,
        }
    )  # fmt: skip
    env.poll()
    epoch = future.result(timeout=0).epoch
    heartbeat = env.active().process_broker_heartbeat(
        {"broker_id": broker_id, "broker_epoch": epoch, "current_metadata_offset": env.active().last_committed_offset(),
         "want_fence": False, "want_shut_down": False}
    )  # fmt: skip
    env.poll()
    assert not heartbeat.result(timeout=0).is_fenced
    return epoch


def test_a_v0_create_topics_is_forwarded_in_an_envelope_and_the_controllers_answer_handed_back(env):
    register(env, 1)
    channel = WireChannel(env)
    answers = []
    v0_body = {
        "create_topic_requests": [
            {"topic": "foo", "num_partitions": 2, "replication_factor": 1, "replica_assignment": [],
             "config_entries": []},
            {"topic": "bad", "num_partitions": 1, "replication_factor": 3, "replica_assignment": [],
             "config_entries": []},
        ],
        "timeout": 1000,
    }  # fmt: skip
    alice = KafkaPrincipal("User", "alice")
    request = Request(
        0, "client", RequestHeader(int(ApiKeys.CREATE_TOPICS), 0, 5, "admin"), v0_body, 0, "127.0.0.1", 0,
        principal=alice,
    )  # fmt: skip
    ForwardingManager(channel).forward_request(request, answers.append)
    assert channel.principals == [alice], "the Envelope carries the client's principal"
    assert answers == [], "answered only when the controller's records commit"
    step(env, channel)
    errors = {t["topic"]: t["error_code"] for t in answers[0]["topic_errors"]}
    assert errors["foo"] == 0 and errors["bad"] != 0  # one broker cannot hold three replicas
    controller = env.active()
    assert controller.replication_control.get_topic_id("foo") is not None
    # the answer encodes at the client's v0 (its fields a subset of the controller's v2)
    _, v0 = parse_response(ApiKeys.CREATE_TOPICS, 0, encode_response(ApiKeys.CREATE_TOPICS, 0, 7, answers[0]))
    assert {t["topic"] for t in v0["topic_errors"]} == {"foo", "bad"}


def test_producer_ids_come_in_blocks_from_the_controller(env):
    epoch = register(env, 1)
    channel = WireChannel(env)
    manager = RPCProducerIdManager(1, lambda: epoch, channel, max_wait_ms=5_000)
    ids = []
    # the manager waits on a request thread for the block; the controller is stepped here meanwhile
    asker = threading.Thread(target=lambda: ids.extend(manager.generate_producer_id() for _ in range(3)))
    asker.start()
    while asker.is_alive():
        step(env, channel)
        asker.join(0.01)
    assert ids == [0, 1, 2]
    blocks = []
    other = RPCProducerIdManager(2, lambda: register(env, 2), channel)
    asker = threading.Thread(target=lambda: blocks.append(other.generate_producer_id()))
    asker.start()
    while asker.is_alive():
        step(env, channel)
        asker.join(0.01)
    assert blocks == [1000], "the second broker's block follows the first's"


def test_a_stale_broker_epoch_gets_no_block(env):
    epoch = register(env, 1)
    channel = WireChannel(env)
    manager = RPCProducerIdManager(1, lambda: epoch - 1, channel)
    failure = []

    def ask() -> None:
        try:
            manager.generate_producer_id()
        except KafkaException as e:
            failure.append(str(e))

    asker = threading.Thread(target=ask)
    asker.start()
    while asker.is_alive():
        step(env, channel)
        asker.join(0.01)
    assert failure and "STALE_BROKER_EPOCH" in failure[0]
