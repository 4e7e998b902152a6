"""The SASL authenticators' state machines, driven with raw bytes over a socket pair: the broker's
``SaslServerAuthenticator`` against a hand-written client (every framing and every bad input), and
kafka_lite's ``SaslClientAuthenticator`` against the broker's."""

from __future__ import annotations

import logging
import random
import socket
import struct

import pytest

from kafka_lite.common.errors import (
    Errors,
    IllegalSaslStateException,
    SaslAuthenticationException,
    UnsupportedSaslMechanismException,
)
from kafka_lite.common.protocol.api_keys import ApiKeys, api_versions
from kafka_lite.common.protocol.requests import RequestHeader, encode_request, parse_response
from kafka_lite.common.security.auth.kafka_principal import KafkaPrincipal
from kafka_lite.common.security.plain.plain_sasl_client import PlainSaslClient
from kafka_lite.common.security.plain.plain_sasl_server import PlainSaslServer
from kafka_lite.common.security.scram.scram_formatter import generate_credential
from kafka_lite.common.security.scram.scram_sasl_client import ScramSaslClient
from kafka_lite.common.security.scram.scram_sasl_server import ScramSaslServer
from kafka_lite.network.sasl_client_authenticator import SaslClientAuthenticator
from kafka_lite.network.sasl_server_authenticator import (
    AUTHENTICATION_ERRORS,
    MAX_RECEIVE_SIZE,
    VALID_PREVIOUS_STATES,
    AuthenticationStats,
    SaslServerAuthenticator,
    SaslState,
)
from kafka_lite.network.transfer import InvalidReceiveException
from kafka_lite.server.kafka_apis import KafkaApis
from tests.support.wire import WireClient

pytestmark = pytest.mark.unit

USERS = {"alice": "alice-secret"}
SCRAM_CREDENTIALS = {"bob": generate_credential("bob-secret")}
API_VERSIONS = api_versions(KafkaApis.HANDLED)
OLD_BROKER_API_VERSIONS = [v for v in API_VERSIONS if v["api_key"] != ApiKeys.SASL_AUTHENTICATE]


def new_server(stats: AuthenticationStats | None = None, versions=API_VERSIONS) -> SaslServerAuthenticator:
    servers = {
        "PLAIN": lambda: PlainSaslServer(USERS),
        "SCRAM-SHA-256": lambda: ScramSaslServer(SCRAM_CREDENTIALS.get),
    }
    return SaslServerAuthenticator(
        "conn-1", ["PLAIN", "SCRAM-SHA-256"], servers, versions, "10.0.0.7", stats or AuthenticationStats()
    )


class Wire:
    """The broker's end of a socket pair (non-blocking, as a processor's) and a client's blocking end."""

    def __init__(self) -> None:
        self.server, client = socket.socketpair()
        self.server.setblocking(False)
        client.settimeout(2)
        self.client = WireClient.over(client)

    def send(self, payload: bytes) -> None:
        self.client.send_raw(payload)

    def request(self, api: ApiKeys, version: int, body: dict) -> int:
        return self.client.send(api, version, body)

    def frame(self) -> bytes:
        return self.client.read_frame()

    def response(self, api: ApiKeys, version: int) -> dict:
        return parse_response(api, version, self.frame())[1]

    def nothing_sent(self) -> bool:
        sock = self.client.sock
        sock.settimeout(0.05)
        try:
            return sock.recv(1) == b""
        except TimeoutError:
            return True
        finally:
            sock.settimeout(2)

    def close(self) -> None:
        self.server.close()
        self.client.close()


@pytest.fixture
def wire():
    w = Wire()
    yield w
    w.close()


def handshake(wire: Wire, auth: SaslServerAuthenticator, version: int, mechanism: str = "PLAIN") -> dict:
    wire.request(ApiKeys.SASL_HANDSHAKE, version, {"mechanism": mechanism})
    auth.authenticate(wire.server)
    return wire.response(ApiKeys.SASL_HANDSHAKE, version)


# -- success, in both framings ----------------------------------------------------------------------------


def test_api_versions_before_the_handshake_lists_sasl_handshake_and_authenticate(wire):
    auth = new_server()
    wire.request(ApiKeys.API_VERSIONS, 1, {})
    auth.authenticate(wire.server)
    listed = {v["api_key"]: v for v in wire.response(ApiKeys.API_VERSIONS, 1)["api_versions"]}
    assert listed[ApiKeys.SASL_HANDSHAKE]["max_version"] == 1
    assert listed[ApiKeys.SASL_AUTHENTICATE]["max_version"] == 0
    assert auth.state is SaslState.HANDSHAKE_REQUEST


def test_handshake_v0_then_a_raw_plain_token_authenticates(wire):
    stats = AuthenticationStats()
    auth = new_server(stats)
    assert handshake(wire, auth, 0) == {"error_code": 0, "enabled_mechanisms": ["PLAIN", "SCRAM-SHA-256"]}
    wire.send(b"\x00alice\x00alice-secret")  # no Kafka header: 0.10's framing
    auth.authenticate(wire.server)
    assert wire.frame() == b"", "PLAIN's success is an empty token, sent as a frame of size 0"
    assert auth.complete() and auth.principal() == KafkaPrincipal("User", "alice")
    assert (stats.get("v0", "ok"), stats.get("v1", "ok")) == (1, 0)


def test_handshake_v1_then_sasl_authenticate_authenticates(wire):
    stats = AuthenticationStats()
    auth = new_server(stats)
    handshake(wire, auth, 1)
    wire.request(ApiKeys.SASL_AUTHENTICATE, 0, {"sasl_auth_bytes": b"alice\x00alice\x00alice-secret"})
    auth.authenticate(wire.server)
    assert wire.response(ApiKeys.SASL_AUTHENTICATE, 0) == {
        "error_code": 0,
        "error_message": None,
        "sasl_auth_bytes": b"",
    }
    assert auth.complete() and str(auth.principal()) == "User:alice"
    assert stats.get("v1", "ok") == 1


def test_principal_is_anonymous_until_complete(wire):
    auth = new_server()
    handshake(wire, auth, 1)
    assert auth.principal() == KafkaPrincipal.ANONYMOUS


def test_scram_sha_256_in_sasl_authenticate(wire):
    auth = new_server()
    handshake(wire, auth, 1, "SCRAM-SHA-256")
    client = ScramSaslClient("bob", "bob-secret")
    token = client.evaluate_challenge(b"")
    while not auth.complete():
        wire.request(ApiKeys.SASL_AUTHENTICATE, 0, {"sasl_auth_bytes": token})
        auth.authenticate(wire.server)
        response = wire.response(ApiKeys.SASL_AUTHENTICATE, 0)
        assert response["error_code"] == 0, response
        token = client.evaluate_challenge(response["sasl_auth_bytes"])
    assert client.is_complete(), "the client checked the broker's signature"
    assert str(auth.principal()) == "User:bob"


# -- refusals: each closes the connection (the exception), after Kafka's answer where there is one -------


def test_wrong_password_v1_answers_error_58_then_closes_and_logs_user_and_address(wire, caplog):
    stats = AuthenticationStats()
    auth = new_server(stats)
    handshake(wire, auth, 1)
    wire.request(ApiKeys.SASL_AUTHENTICATE, 0, {"sasl_auth_bytes": b"\x00alice\x00guess"})
    with caplog.at_level(logging.INFO), pytest.raises(SaslAuthenticationException):
        auth.authenticate(wire.server)
    response = wire.response(ApiKeys.SASL_AUTHENTICATE, 0)
    assert response["error_code"] == Errors.SASL_AUTHENTICATION_FAILED.code == 58
    assert "Invalid username or password" in response["error_message"]
    assert auth.state is SaslState.FAILED and not auth.complete()
    logged = [r.getMessage() for r in caplog.records if "Failed authentication" in r.getMessage()]
    assert logged and "alice" in logged[0] and "10.0.0.7" in logged[0], logged
    assert stats.get("v1", "failed") == 1


def test_wrong_password_v0_closes_without_an_answer(wire):
    auth = new_server()
    handshake(wire, auth, 0)
    wire.send(b"\x00alice\x00guess")
    with pytest.raises(SaslAuthenticationException, match="Invalid username or password"):
        auth.authenticate(wire.server)
    assert wire.nothing_sent(), "0.10's framing has no way to say why: the connection just closes"


def test_unknown_user_and_unknown_scram_user_are_refused(wire):
    auth = new_server()
    handshake(wire, auth, 0)
    wire.send(b"\x00mallory\x00alice-secret")
    with pytest.raises(SaslAuthenticationException):
        auth.authenticate(wire.server)
    other = Wire()
    try:
        auth = new_server()
        handshake(other, auth, 1, "SCRAM-SHA-256")
        first = ScramSaslClient("mallory", "x").evaluate_challenge(b"")
        other.request(ApiKeys.SASL_AUTHENTICATE, 0, {"sasl_auth_bytes": first})
        with pytest.raises(SaslAuthenticationException):
            auth.authenticate(other.server)
        assert other.response(ApiKeys.SASL_AUTHENTICATE, 0)["error_code"] == 58
    finally:
        other.close()


def test_unknown_mechanism_answers_the_enabled_list_then_closes(wire):
    auth = new_server()
    wire.request(ApiKeys.SASL_HANDSHAKE, 1, {"mechanism": "GSSAPI"})
    with pytest.raises(UnsupportedSaslMechanismException, match="PLAIN, SCRAM-SHA-256"):
        auth.authenticate(wire.server)
    assert wire.response(ApiKeys.SASL_HANDSHAKE, 1) == {
        "error_code": Errors.UNSUPPORTED_SASL_MECHANISM.code,
        "enabled_mechanisms": ["PLAIN", "SCRAM-SHA-256"],
    }


@pytest.mark.parametrize("api", [ApiKeys.METADATA, ApiKeys.PRODUCE, ApiKeys.SASL_AUTHENTICATE])
def test_any_other_request_before_the_handshake_closes_without_parsing_it(wire, api):
    auth = new_server()
    # the body is garbage: the authenticator must refuse on the header alone
    wire.send(RequestHeader(api, 0, 1, "test").encode() + b"\xff" * 7)
    with pytest.raises(IllegalSaslStateException, match=f"{api.api_name} during SASL handshake"):
        auth.authenticate(wire.server)
    assert wire.nothing_sent()


def test_a_skipped_handshake_is_illegal(wire):
    """A 0.9 client sends its first token with no handshake: GSSAPI's, which kafka_lite lacks."""
    auth = new_server()
    wire.send(b"\x00alice\x00alice-secret")
    with pytest.raises(IllegalSaslStateException):
        auth.authenticate(wire.server)


def test_v1_a_request_other_than_sasl_authenticate_during_authentication_is_illegal(wire):
    auth = new_server()
    handshake(wire, auth, 1)
    wire.request(ApiKeys.METADATA, 1, {"topics": None})
    with pytest.raises(IllegalSaslStateException, match="during SASL authentication"):
        auth.authenticate(wire.server)


def test_api_versions_twice_is_illegal(wire):
    auth = new_server()
    wire.request(ApiKeys.API_VERSIONS, 0, {})
    auth.authenticate(wire.server)
    wire.response(ApiKeys.API_VERSIONS, 0)
    wire.request(ApiKeys.API_VERSIONS, 0, {})
    with pytest.raises(IllegalSaslStateException):
        auth.authenticate(wire.server)


def test_api_versions_at_an_unknown_version_is_answered_for_a_retry(wire):
    auth = new_server()
    wire.send(RequestHeader(ApiKeys.API_VERSIONS, 9, 5, "test").encode())
    auth.authenticate(wire.server)
    body = wire.response(ApiKeys.API_VERSIONS, 0)
    assert body["error_code"] == Errors.UNSUPPORTED_VERSION.code
    assert auth.state is SaslState.HANDSHAKE_OR_VERSIONS_REQUEST, "the client may retry at a lower version"


@pytest.mark.parametrize(
    "token",
    [
        b"",
        b"alice",
        b"\x00alice",
        b"\x00\x00pw",
        b"\x00alice\x00",
        b"a\x00b\x00c\x00d",
        b"\x00\xff\xfe\x00pw",
    ],
)
def test_malformed_plain_tokens_are_refused(wire, token):
    auth = new_server()
    handshake(wire, auth, 1)
    wire.request(ApiKeys.SASL_AUTHENTICATE, 0, {"sasl_auth_bytes": token})
    with pytest.raises(SaslAuthenticationException):
        auth.authenticate(wire.server)
    assert wire.response(ApiKeys.SASL_AUTHENTICATE, 0)["error_code"] == 58


def test_an_authorization_id_naming_someone_else_is_refused(wire):
    auth = new_server()
    handshake(wire, auth, 0)
    wire.send(b"admin\x00alice\x00alice-secret")
    with pytest.raises(SaslAuthenticationException, match="authorization id"):
        auth.authenticate(wire.server)


def test_a_frame_larger_than_any_handshake_is_refused_before_it_is_read(wire):
    auth = new_server()
    wire.client.sock.sendall(struct.pack(">i", MAX_RECEIVE_SIZE + 1))
    with pytest.raises(InvalidReceiveException):
        auth.authenticate(wire.server)


def test_a_truncated_handshake_is_illegal(wire):
    auth = new_server()
    frame = encode_request(RequestHeader(ApiKeys.SASL_HANDSHAKE, 1, 1, "t"), {"mechanism": "PLAIN"})
    wire.send(frame[:-3])
    with pytest.raises(IllegalSaslStateException, match="Invalid request"):
        auth.authenticate(wire.server)


def test_state_table_refuses_a_jump_with_kafkas_wording():
    auth = new_server()
    with pytest.raises(
        IllegalSaslStateException,
        match=r"should be in the \['AUTHENTICATE'\] states before moving to COMPLETE",
    ):
        auth._set_state(SaslState.COMPLETE)
    assert all(SaslState.COMPLETE not in before for before in VALID_PREVIOUS_STATES.values())


# -- fuzz: random and mutated frames at each state raise only the errors that close the connection ------


def _state_setups():
    """How to bring a fresh authenticator into each state that reads frames, over a real socket, and a
    valid frame for that state to mutate."""
    plain_v1 = encode_request(
        RequestHeader(ApiKeys.SASL_AUTHENTICATE, 0, 3, "f"), {"sasl_auth_bytes": b"\x00alice\x00alice-secret"}
    )
    handshake_v1 = encode_request(RequestHeader(ApiKeys.SASL_HANDSHAKE, 1, 2, "f"), {"mechanism": "PLAIN"})
    versions = encode_request(RequestHeader(ApiKeys.API_VERSIONS, 1, 1, "f"), {})

    def after_versions(wire: Wire) -> SaslServerAuthenticator:
        auth = new_server()
        wire.request(ApiKeys.API_VERSIONS, 1, {})
        auth.authenticate(wire.server)
        wire.frame()
        return auth

    def authenticating(version: int):
        def setup(wire: Wire) -> SaslServerAuthenticator:
            auth = new_server()
            handshake(wire, auth, version)
            return auth

        return setup

    return [
        ("first frame", lambda wire: new_server(), versions),
        ("after ApiVersions", after_versions, handshake_v1),
        ("v0 tokens", authenticating(0), b"\x00alice\x00alice-secret"),
        ("v1 SaslAuthenticate", authenticating(1), plain_v1),
    ]


def _mutate(rng: random.Random, frame: bytes) -> bytes:
    data = bytearray(frame)
    kind = rng.randrange(5)
    if kind == 0 and data:
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] ^= rng.randint(1, 255)
    elif kind == 1:
        data = data[: rng.randrange(len(data) + 1)]
    elif kind == 2:
        data += rng.randbytes(rng.randint(1, 16))
    elif kind == 3 and len(data) >= 4:
        struct.pack_into(">hh", data, 0, rng.choice([17, 18, 36, 3, 99, -1]), rng.choice([-1, 0, 1, 2, 7]))
    else:
        data = bytearray(rng.randbytes(rng.randint(0, 64)))
    return bytes(data)


@pytest.mark.parametrize("state", [s[0] for s in _state_setups()])
def test_fuzzed_frames_at_each_state_raise_only_closing_errors(state):
    rng = random.Random(f"sasl-{state}")
    _, setup, valid = next(s for s in _state_setups() if s[0] == state)
    outcomes = {"closed": 0, "went on": 0}
    for _ in range(400):
        wire = Wire()
        try:
            auth = setup(wire)
            wire.send(_mutate(rng, valid))
            try:
                auth.authenticate(wire.server)
                outcomes["went on"] += 1
            except AUTHENTICATION_ERRORS:
                outcomes["closed"] += 1
                assert not auth.complete()
        finally:
            wire.close()
    assert outcomes["closed"] > 100, outcomes


# -- kafka_lite's client authenticator against the broker's ------------------------------------------------


def run_exchange(client: SaslClientAuthenticator, server: SaslServerAuthenticator) -> None:
    """Both ends on a socket pair, stepped in turn until the client is done or raises. A server that
    refuses has written its answer first, and the client reads it, as over a real connection."""
    a, b = socket.socketpair()
    a.setblocking(False)
    b.setblocking(False)
    server_closed = False
    try:
        for _ in range(50):
            client.authenticate(a)
            if client.complete():
                return
            if not server_closed:
                try:
                    server.authenticate(b)
                except AUTHENTICATION_ERRORS:
                    server_closed = True
        raise AssertionError(f"no progress: client {client.state}, server {server.state}")
    finally:
        a.close()
        b.close()


@pytest.mark.parametrize(
    ("versions", "framing"), [(API_VERSIONS, 1), (OLD_BROKER_API_VERSIONS, 0)], ids=["v1", "v0"]
)
@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256"])
def test_client_authenticator_picks_the_framing_from_api_versions(versions, framing, mechanism):
    stats = AuthenticationStats()
    server = new_server(stats, versions)
    user, sasl_client = (
        ("alice", PlainSaslClient("alice", "alice-secret"))
        if mechanism == "PLAIN"
        else ("bob", ScramSaslClient("bob", "bob-secret"))
    )
    client = SaslClientAuthenticator("node-1", sasl_client, "test", user)
    run_exchange(client, server)
    assert client.complete() and client.handshake_version == framing
    assert server.complete() and str(server.principal()) == f"User:{user}"
    assert stats.get(f"v{framing}", "ok") == 1


def test_client_authenticator_raises_the_brokers_message_on_a_wrong_password():
    client = SaslClientAuthenticator("node-1", PlainSaslClient("alice", "guess"), "test", "alice")
    with pytest.raises(SaslAuthenticationException, match="Invalid username or password"):
        run_exchange(client, new_server())


def test_client_authenticator_reports_an_unsupported_mechanism():
    server = SaslServerAuthenticator("c", ["SCRAM-SHA-256"], {}, API_VERSIONS, "", AuthenticationStats())
    client = SaslClientAuthenticator("node-1", PlainSaslClient("alice", "x"), "test", "alice")
    with pytest.raises(UnsupportedSaslMechanismException, match="enabled mechanisms are"):
        run_exchange(client, server)
