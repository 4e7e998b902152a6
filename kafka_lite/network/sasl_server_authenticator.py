"""The broker's side of SASL on one connection: the handshake and the token exchange that run before
any request reaches the handlers.

Mirrors: org.apache.kafka.common.security.authenticator.SaslServerAuthenticator (clients/src/main/
         java/org/apache/kafka/common/security/authenticator/SaslServerAuthenticator.java, Kafka 0.11,
         with Kafka 1.0's SaslHandshake v1 and SaslAuthenticate of KIP-152)
Book:    beyond the book: chapter 11 (security, Kafka 0.10.2–0.11)
Differs: no GSSAPI, so no 0.9-style first packet that is a raw Kerberos token: the first frame must be
         a Kafka request. Any request other than ApiVersions, SaslHandshake or (v1) SaslAuthenticate
         closes the connection, as Kafka does; a SaslAuthenticate whose token fails is answered with
         SASL_AUTHENTICATION_FAILED, then the connection is closed once the answer is written.

The states, as data (``VALID_PREVIOUS_STATES``)::

    HANDSHAKE_OR_VERSIONS_REQUEST ──ApiVersions──▶ HANDSHAKE_REQUEST
              │                                          │
              └──────────────SaslHandshake───────────────┴──▶ AUTHENTICATE ──token(s)──▶ COMPLETE
    (any state but COMPLETE) ──bad input, wrong credentials──▶ FAILED (the connection is closed)

Two framings follow the handshake. SaslHandshake v0 (Kafka 0.10, KIP-43) is followed by raw SASL
tokens, each size-prefixed with no Kafka header; a failure can only be told by closing the connection.
SaslHandshake v1 (Kafka 1.0, KIP-152) is followed by SaslAuthenticate requests that carry the tokens,
so a failure comes back as an error code and message.

The authenticator does its own I/O on the socket, as Kafka's does on the transport layer: the
selector calls ``authenticate()`` whenever the socket is ready until ``complete()``, and only then does
the channel read requests for the processor. Like Kafka's, a state reached by a response (COMPLETE,
FAILED) takes effect only once that response is written (``_pending_state``): the client must see its
answer before the broker acts on it.
"""

from __future__ import annotations

import enum
import logging
import socket
import threading
from collections import Counter
from collections.abc import Callable

from kafka_lite.common.errors import (
    Errors,
    IllegalSaslStateException,
    SaslAuthenticationException,
    UnsupportedSaslMechanismException,
)
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.messages import API_VERSIONS_RESPONSE_V0, RESPONSE_HEADER
from kafka_lite.common.protocol.requests import (
    RequestHeader,
    encode_response,
    parse_request_body,
    parse_request_header,
)
from kafka_lite.common.protocol.types import SchemaException, encode
from kafka_lite.common.security.auth.kafka_principal import KafkaPrincipal
from kafka_lite.common.security.sasl import SaslException, SaslServer
from kafka_lite.network.transfer import NetworkReceive, NetworkSend

log = logging.getLogger(__name__)

# Kafka's SaslServerAuthenticator.MAX_RECEIVE_SIZE: no token or handshake is anywhere near this, and an
# unauthenticated peer must not make the broker allocate a request's worth of memory.
MAX_RECEIVE_SIZE = 524288

# The errors that end an authentication: the selector closes the connection and logs the message.
AUTHENTICATION_ERRORS = (
    IllegalSaslStateException,
    SaslAuthenticationException,
    UnsupportedSaslMechanismException,
)


class SaslState(enum.Enum):
    HANDSHAKE_OR_VERSIONS_REQUEST = "HANDSHAKE_OR_VERSIONS_REQUEST"
    HANDSHAKE_REQUEST = "HANDSHAKE_REQUEST"
    AUTHENTICATE = "AUTHENTICATE"
    COMPLETE = "COMPLETE"
    FAILED = "FAILED"


S = SaslState
VALID_PREVIOUS_STATES: dict[SaslState, set[SaslState]] = {
    S.HANDSHAKE_REQUEST: {S.HANDSHAKE_OR_VERSIONS_REQUEST},
    S.AUTHENTICATE: {S.HANDSHAKE_OR_VERSIONS_REQUEST, S.HANDSHAKE_REQUEST, S.AUTHENTICATE},
    S.COMPLETE: {S.AUTHENTICATE},
    S.FAILED: {S.HANDSHAKE_OR_VERSIONS_REQUEST, S.HANDSHAKE_REQUEST, S.AUTHENTICATE},
}

# What crosses each edge of the table: the guide's diagram of the states is drawn from the two.
TRANSITION_EVENTS: dict[tuple[SaslState, SaslState], str] = {
    (S.HANDSHAKE_OR_VERSIONS_REQUEST, S.HANDSHAKE_REQUEST): "ApiVersions",
    (S.HANDSHAKE_OR_VERSIONS_REQUEST, S.AUTHENTICATE): "SaslHandshake",
    (S.HANDSHAKE_REQUEST, S.AUTHENTICATE): "SaslHandshake",
    (S.AUTHENTICATE, S.AUTHENTICATE): "a token,\nmore to come",
    (S.AUTHENTICATE, S.COMPLETE): "the last token\naccepted",
    (S.HANDSHAKE_OR_VERSIONS_REQUEST, S.FAILED): "another request,\nan unknown mechanism",
    (S.HANDSHAKE_REQUEST, S.FAILED): "another request,\nan unknown mechanism",
    (S.AUTHENTICATE, S.FAILED): "a token refused,\nbad bytes",
}


class AuthenticationStats:
    """How many connections authenticated, by framing and outcome, for one listener: a test (and a
    curious reader) can see which framing a client uses from the broker's side."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # every processor thread of the listener counts here
        self._counts: Counter[tuple[str, str]] = Counter()

    def record(self, framing: str, outcome: str) -> None:
        with self._lock:
            self._counts[(framing, outcome)] += 1

    def get(self, framing: str, outcome: str) -> int:
        with self._lock:
            return self._counts[(framing, outcome)]


class SaslServerAuthenticator:
    def __init__(
        self,
        connection_id: str,
        enabled_mechanisms: list[str],
        sasl_servers: dict[str, Callable[[], SaslServer]],
        api_versions: list[dict[str, int]],
        client_address: str = "",
        stats: AuthenticationStats | None = None,
    ) -> None:
        self.connection_id = connection_id
        self.enabled_mechanisms = list(enabled_mechanisms)
        self.sasl_servers = sasl_servers
        self.api_versions = api_versions  # what the broker's ApiVersions answers, before and after
        self.client_address = client_address
        self.stats = stats or AuthenticationStats()
        self.state = SaslState.HANDSHAKE_OR_VERSIONS_REQUEST
        self.sasl_server: SaslServer | None = None
        self.enable_kafka_sasl_authenticate_headers = False  # SaslHandshake v1: tokens in SaslAuthenticate
        self._receive: NetworkReceive | None = None
        self._send: NetworkSend | None = None
        self._pending_state: SaslState | None = None
        self._pending_exception: Exception | None = None

    # -- the I/O shell: what the selector calls ------------------------------------------------------------

    def authenticate(self, sock: socket.socket) -> None:
        """Write what is pending; else read a frame, if one has arrived whole, and act on it. Raises
        one of ``AUTHENTICATION_ERRORS`` (after its response, if any, is written) to have the
        connection closed; ``OSError``/``EOFError`` as any read or write does."""
        if self._send is not None and not self._flush(sock):
            return
        if self.state in (SaslState.COMPLETE, SaslState.FAILED):
            return
        if self._receive is None:
            self._receive = NetworkReceive(self.connection_id, MAX_RECEIVE_SIZE)
        self._receive.read_from(sock)
        if not self._receive.complete():
            return
        frame, self._receive = bytes(self._receive.payload()), None
        self.handle_frame(frame)
        if self._send is not None:
            self._flush(sock)

    def has_pending_send(self) -> bool:
        return self._send is not None

    def _flush(self, sock: socket.socket) -> bool:
        assert self._send is not None
        self._send.write_to(sock)
        if not self._send.completed():
            return False
        self._send = None
        if self._pending_state is not None:
            state, exception = self._pending_state, self._pending_exception
            self._pending_state = self._pending_exception = None
            self._set_state(state, exception)
        return True

    # -- the state machine: one complete frame at a time (unit tests drive this with raw bytes) ----------

    def handle_frame(self, frame: bytes) -> None:
        """Act on one frame (without its size prefix), leaving any answer in the pending send."""
        try:
            if self.state in (SaslState.HANDSHAKE_OR_VERSIONS_REQUEST, SaslState.HANDSHAKE_REQUEST):
                self._handle_kafka_request(frame)
            elif self.state is SaslState.AUTHENTICATE:
                self._handle_sasl_token(frame)
            else:
                raise IllegalSaslStateException(f"Unexpected frame in SASL state {self.state.name}")
        except SchemaException as e:
            self._fail(IllegalSaslStateException(f"Invalid request during SASL authentication: {e}"))
        except AUTHENTICATION_ERRORS as e:
            self._fail(e)

    def _handle_kafka_request(self, frame: bytes) -> None:
        header, body_start = parse_request_header(frame)
        api = header.api
        # Refuse before parsing anything else, as Kafka does: an unauthenticated peer reaches no
        # other schema.
        if api not in (ApiKeys.API_VERSIONS, ApiKeys.SASL_HANDSHAKE):
            name = api.api_name if api is not None else f"api key {header.api_key}"
            raise IllegalSaslStateException(f"Unexpected Kafka request of type {name} during SASL handshake.")
        if api is ApiKeys.API_VERSIONS:
            self._handle_api_versions_request(header)
            return
        body = parse_request_body(header, frame, body_start)
        mechanism = body["mechanism"]
        enabled = {"error_code": 0, "enabled_mechanisms": self.enabled_mechanisms}
        if header.api_version >= 1:
            self.enable_kafka_sasl_authenticate_headers = True
        if mechanism not in self.enabled_mechanisms or mechanism not in self.sasl_servers:
            enabled["error_code"] = Errors.UNSUPPORTED_SASL_MECHANISM.code
            self._respond(api, header.api_version, header.correlation_id, enabled)
            raise UnsupportedSaslMechanismException(
                f"Unsupported SASL mechanism {mechanism} (enabled: {', '.join(self.enabled_mechanisms)})"
            )
        self._respond(api, header.api_version, header.correlation_id, enabled)
        self.sasl_server = self.sasl_servers[mechanism]()
        self._set_state(SaslState.AUTHENTICATE)

    def _handle_api_versions_request(self, header: RequestHeader) -> None:
        if self.state is not SaslState.HANDSHAKE_OR_VERSIONS_REQUEST:
            raise IllegalSaslStateException("Unexpected ApiVersions request: the handshake is expected now")
        if not ApiKeys.API_VERSIONS.is_version_supported(header.api_version):
            # KIP-35: the v0 layout and UNSUPPORTED_VERSION, so the client retries at a lower version
            body = {"error_code": Errors.UNSUPPORTED_VERSION.code, "api_versions": self.api_versions}
            self._send = NetworkSend(
                self.connection_id,
                encode(RESPONSE_HEADER, {"correlation_id": header.correlation_id})
                + encode(API_VERSIONS_RESPONSE_V0, body),
            )
            return
        body = {"error_code": 0, "api_versions": self.api_versions, "throttle_time_ms": 0}
        self._respond(ApiKeys.API_VERSIONS, header.api_version, header.correlation_id, body)
        self._set_state(SaslState.HANDSHAKE_REQUEST)

    # --8<-- [start:sasl_token]
    def _handle_sasl_token(self, frame: bytes) -> None:
        assert self.sasl_server is not None
        if not self.enable_kafka_sasl_authenticate_headers:
            # SaslHandshake v0: the frame is the token itself, and so is the answer (none if empty)
            try:
                response = self.sasl_server.evaluate_response(frame)
            except SaslException as e:
                self._log_failure("v0", e)
                raise SaslAuthenticationException(str(e)) from None
            # Always answered, even with an empty token: a 0.10 client waits for a frame after each
            # of its tokens (PLAIN's success is a frame of size 0).
            self._send = NetworkSend(self.connection_id, response or b"")
            self._token_accepted("v0")
            return
        header, body_start = parse_request_header(frame)
        if header.api is not ApiKeys.SASL_AUTHENTICATE:
            name = header.api.api_name if header.api is not None else f"api key {header.api_key}"
            raise IllegalSaslStateException(
                f"Unexpected Kafka request of type {name} during SASL authentication."
            )
        body = parse_request_body(header, frame, body_start)
        version, correlation_id = header.api_version, header.correlation_id
        try:
            response = self.sasl_server.evaluate_response(body["sasl_auth_bytes"])
        except SaslException as e:
            self._log_failure("v1", e)
            failed = {
                "error_code": Errors.SASL_AUTHENTICATION_FAILED.code,
                "error_message": str(e),
                "sasl_auth_bytes": b"",
            }
            self._respond(ApiKeys.SASL_AUTHENTICATE, version, correlation_id, failed)
            raise SaslAuthenticationException(str(e)) from None
        ok = {"error_code": 0, "error_message": None, "sasl_auth_bytes": response or b""}
        self._respond(ApiKeys.SASL_AUTHENTICATE, version, correlation_id, ok)
        self._token_accepted("v1")

    # --8<-- [end:sasl_token]

    def _token_accepted(self, framing: str) -> None:
        assert self.sasl_server is not None
        if self.sasl_server.is_complete():
            self.stats.record(framing, "ok")
            log.debug(
                "Authenticated %s from %s with SASL/%s",
                self.sasl_server.authorization_id(), self.client_address, self.sasl_server.mechanism,
            )  # fmt: skip
            self._set_state(SaslState.COMPLETE)

    def _log_failure(self, framing: str, e: SaslException) -> None:
        self.stats.record(framing, "failed")
        mechanism = self.sasl_server.mechanism if self.sasl_server else "?"
        log.info(
            "Failed authentication with %s (user %s, SASL/%s): %s",
            self.client_address, e.username or "unknown", mechanism, e,
        )  # fmt: skip

    # -- helpers ---------------------------------------------------------------------------------------------

    def _respond(self, api: ApiKeys, version: int, correlation_id: int, body: dict) -> None:
        self._send = NetworkSend(self.connection_id, encode_response(api, version, correlation_id, body))

    def _fail(self, exception: Exception) -> None:
        self._set_state(SaslState.FAILED, exception)

    def _set_state(self, state: SaslState, exception: Exception | None = None) -> None:
        """Move to ``state`` now, or once the pending response is written (Kafka's ``setSaslState``);
        a failure's exception is raised when the state takes effect."""
        if self._send is not None:
            self._pending_state, self._pending_exception = state, exception
            return
        if self.state not in VALID_PREVIOUS_STATES[state]:
            raise IllegalSaslStateException(
                f"SASL state should be in the {sorted(s.name for s in VALID_PREVIOUS_STATES[state])} states "
                f"before moving to {state.name} state. Instead it is in {self.state.name} state"
            )
        self.state = state
        if exception is not None:
            raise exception

    # -- what the channel asks --------------------------------------------------------------------------------

    def complete(self) -> bool:
        return self.state is SaslState.COMPLETE

    def principal(self) -> KafkaPrincipal:
        """``User:<name>`` once complete (Kafka's ``DefaultKafkaPrincipalBuilder`` for SASL)."""
        if not self.complete() or self.sasl_server is None:
            return KafkaPrincipal.ANONYMOUS
        return KafkaPrincipal(KafkaPrincipal.USER_TYPE, self.sasl_server.authorization_id())
