"""The client's side of SASL on one connection: ApiVersions, the handshake, then the tokens, before the
connection carries any request.

Mirrors: org.apache.kafka.common.security.authenticator.SaslClientAuthenticator (clients/src/main/java/
         org/apache/kafka/common/security/authenticator/SaslClientAuthenticator.java, Kafka 1.0, whose
         ApiVersions step chooses between SaslHandshake v0 and v1 + SaslAuthenticate, KIP-152)
Book:    beyond the book: chapter 11 (security, Kafka 0.10.2–0.11)
Differs: the mechanism's client is kafka_lite's own (``PlainSaslClient``, ``ScramSaslClient``), not
         one looked up through Java's ``Sasl.createSaslClient``.

The states, in order (``NEXT_STATES`` is the table)::

    SEND_APIVERSIONS_REQUEST → RECEIVE_APIVERSIONS_RESPONSE → SEND_HANDSHAKE_REQUEST
        → RECEIVE_HANDSHAKE_RESPONSE → INITIAL → INTERMEDIATE (token exchange) → COMPLETE
    (any) → FAILED

The broker's ApiVersions answer decides the framing: when it lists SaslAuthenticate (key 36) the
client sends SaslHandshake v1 and carries its tokens in SaslAuthenticate requests, so a failure comes
back with SASL_AUTHENTICATION_FAILED and a message; otherwise SaslHandshake v0 and raw tokens, and a
failure is the broker closing the connection. Like the server's, it does its own I/O on the socket
while the selector calls ``authenticate()``; the connection is ``connected`` for the client only once
it is complete.
"""

from __future__ import annotations

import enum
import itertools
import socket

from kafka_lite.common.errors import (
    Errors,
    IllegalSaslStateException,
    SaslAuthenticationException,
    UnsupportedSaslMechanismException,
)
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.requests import RequestHeader, encode_request, parse_response
from kafka_lite.common.security.auth.kafka_principal import KafkaPrincipal
from kafka_lite.common.security.sasl import SaslClient, SaslException
from kafka_lite.network.transfer import NetworkReceive, NetworkSend

MAX_RECEIVE_SIZE = 524288  # the server's tokens are small; so is its ApiVersions answer


class SaslClientState(enum.Enum):
    SEND_APIVERSIONS_REQUEST = "SEND_APIVERSIONS_REQUEST"
    RECEIVE_APIVERSIONS_RESPONSE = "RECEIVE_APIVERSIONS_RESPONSE"
    SEND_HANDSHAKE_REQUEST = "SEND_HANDSHAKE_REQUEST"
    RECEIVE_HANDSHAKE_RESPONSE = "RECEIVE_HANDSHAKE_RESPONSE"
    INITIAL = "INITIAL"
    INTERMEDIATE = "INTERMEDIATE"
    COMPLETE = "COMPLETE"
    FAILED = "FAILED"


C = SaslClientState
NEXT_STATES: dict[SaslClientState, set[SaslClientState]] = {
    C.SEND_APIVERSIONS_REQUEST: {C.RECEIVE_APIVERSIONS_RESPONSE},
    C.RECEIVE_APIVERSIONS_RESPONSE: {C.SEND_HANDSHAKE_REQUEST},
    C.SEND_HANDSHAKE_REQUEST: {C.RECEIVE_HANDSHAKE_RESPONSE},
    C.RECEIVE_HANDSHAKE_RESPONSE: {C.INITIAL},
    C.INITIAL: {C.INTERMEDIATE},
    C.INTERMEDIATE: {C.INTERMEDIATE, C.COMPLETE},
    C.COMPLETE: set(),
    C.FAILED: set(),
}


class SaslClientAuthenticator:
    def __init__(
        self, node: str, sasl_client: SaslClient, client_id: str = "kafka-lite", username: str = ""
    ) -> None:
        self.node = node
        self.sasl_client = sasl_client
        self.client_id = client_id
        self.username = username
        self.state = SaslClientState.SEND_APIVERSIONS_REQUEST
        self.handshake_version = 0  # 1 once the broker lists SaslAuthenticate
        self._correlation = itertools.count()
        self._expected: tuple[ApiKeys, int, int] | None = None  # the answer awaited: api, version, id
        self._receive: NetworkReceive | None = None
        self._send: NetworkSend | None = None

    # -- the I/O shell ---------------------------------------------------------------------------------------

    def authenticate(self, sock: socket.socket) -> None:
        try:
            self._step(sock)
        except SaslException as e:
            self.state = SaslClientState.FAILED
            raise SaslAuthenticationException(f"SASL/{self.sasl_client.mechanism}: {e}") from None
        except (IllegalSaslStateException, SaslAuthenticationException, UnsupportedSaslMechanismException):
            self.state = SaslClientState.FAILED
            raise

    def _step(self, sock: socket.socket) -> None:
        if self._send is not None:
            self._send.write_to(sock)
            if not self._send.completed():
                return
            self._send = None
        if self.state is SaslClientState.SEND_APIVERSIONS_REQUEST:
            self._request(ApiKeys.API_VERSIONS, 0, {})
            self._set_state(SaslClientState.RECEIVE_APIVERSIONS_RESPONSE)
        elif self.state is SaslClientState.SEND_HANDSHAKE_REQUEST:
            self._request(
                ApiKeys.SASL_HANDSHAKE, self.handshake_version, {"mechanism": self.sasl_client.mechanism}
            )
            self._set_state(SaslClientState.RECEIVE_HANDSHAKE_RESPONSE)
        elif self.state is SaslClientState.INITIAL:
            self._send_token(self.sasl_client.evaluate_challenge(b""))
            self._set_state(SaslClientState.INTERMEDIATE)
        elif self.state in (SaslClientState.COMPLETE, SaslClientState.FAILED):
            return
        else:
            frame = self._read(sock)
            if frame is None:
                return
            self.handle_frame(frame)
        if self._send is not None:
            self._send.write_to(sock)
            if self._send.completed():
                self._send = None

    def _read(self, sock: socket.socket) -> bytes | None:
        if self._receive is None:
            self._receive = NetworkReceive(self.node, MAX_RECEIVE_SIZE)
        self._receive.read_from(sock)
        if not self._receive.complete():
            return None
        frame, self._receive = bytes(self._receive.payload()), None
        return frame

    def has_pending_send(self) -> bool:
        # The states that send next also need the socket to be writable to get going.
        return self._send is not None or self.state in (
            SaslClientState.SEND_APIVERSIONS_REQUEST,
            SaslClientState.SEND_HANDSHAKE_REQUEST,
            SaslClientState.INITIAL,
        )

    # -- the state machine: one frame from the broker at a time ----------------------------------------------

    def handle_frame(self, frame: bytes) -> None:
        if self.state is SaslClientState.RECEIVE_APIVERSIONS_RESPONSE:
            body = self._response(frame)
            versions = {v["api_key"]: v["max_version"] for v in body["api_versions"]}
            v1 = versions.get(ApiKeys.SASL_HANDSHAKE, 0) >= 1 and ApiKeys.SASL_AUTHENTICATE in versions
            self.handshake_version = 1 if v1 else 0
            self._set_state(SaslClientState.SEND_HANDSHAKE_REQUEST)
        elif self.state is SaslClientState.RECEIVE_HANDSHAKE_RESPONSE:
            body = self._response(frame)
            error = Errors.for_code(body["error_code"])
            if error is Errors.UNSUPPORTED_SASL_MECHANISM:
                raise UnsupportedSaslMechanismException(
                    f"Client SASL mechanism '{self.sasl_client.mechanism}' not enabled in the server, "
                    f"enabled mechanisms are {body['enabled_mechanisms']}"
                )
            if error is not Errors.NONE:
                raise IllegalSaslStateException(f"SaslHandshake failed: {error.name}")
            self._set_state(SaslClientState.INITIAL)
        elif self.state is SaslClientState.INTERMEDIATE:
            self._handle_server_token(self._server_token(frame))
        else:
            raise IllegalSaslStateException(
                f"Unexpected frame from the broker in SASL state {self.state.name}"
            )

    def _server_token(self, frame: bytes) -> bytes:
        if self.handshake_version == 0:
            return frame
        body = self._response(frame)
        if body["error_code"] != Errors.NONE.code:
            error = Errors.for_code(body["error_code"])
            message = body["error_message"] or error.description
            if error is Errors.SASL_AUTHENTICATION_FAILED:
                raise SaslAuthenticationException(message)
            raise IllegalSaslStateException(f"SaslAuthenticate failed: {error.name}: {message}")
        return bytes(body["sasl_auth_bytes"])

    def _handle_server_token(self, token: bytes) -> None:
        if self.sasl_client.is_complete():
            self.sasl_client.evaluate_challenge(token)  # PLAIN: checks that the answer is empty
            self._set_state(SaslClientState.COMPLETE)
            return
        answer = self.sasl_client.evaluate_challenge(token)
        if self.sasl_client.is_complete() and not answer:
            self._set_state(SaslClientState.COMPLETE)  # SCRAM: the server's signature checked
        else:
            self._send_token(answer)

    # -- helpers ---------------------------------------------------------------------------------------------

    def _request(self, api: ApiKeys, version: int, body: dict) -> None:
        correlation_id = next(self._correlation)
        header = RequestHeader(api, version, correlation_id, self.client_id)
        self._expected = (api, version, correlation_id)
        self._send = NetworkSend(self.node, encode_request(header, body))

    def _response(self, frame: bytes) -> dict:
        assert self._expected is not None
        api, version, expected_id = self._expected
        correlation_id, body = parse_response(api, version, frame)
        if correlation_id != expected_id:
            raise IllegalSaslStateException(
                f"Correlation id for {api.api_name} response ({correlation_id}) does not match request ({expected_id})"
            )
        return body

    def _send_token(self, token: bytes) -> None:
        if self.handshake_version == 0:
            self._send = NetworkSend(self.node, token)
        else:
            self._request(ApiKeys.SASL_AUTHENTICATE, 0, {"sasl_auth_bytes": token})

    def _set_state(self, state: SaslClientState) -> None:
        if state not in NEXT_STATES[self.state]:
            raise IllegalSaslStateException(
                f"SASL client state {self.state.name} cannot move to {state.name}"
            )
        self.state = state

    def complete(self) -> bool:
        return self.state is SaslClientState.COMPLETE

    def principal(self) -> KafkaPrincipal:
        return (
            KafkaPrincipal(KafkaPrincipal.USER_TYPE, self.username)
            if self.username
            else KafkaPrincipal.ANONYMOUS
        )
