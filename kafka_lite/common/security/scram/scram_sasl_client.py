"""The client's side of SASL/SCRAM-SHA-256: it proves it knows the password without sending it, and
checks that the broker knows the user's ServerKey before trusting it.

Mirrors: org.apache.kafka.common.security.scram.ScramSaslClient (clients/src/main/java/org/apache/
         kafka/common/security/scram/ScramSaslClient.java, Kafka 0.11)
Book:    beyond the book: chapter 11 (security, Kafka 0.10.2–0.11)

States: SEND_CLIENT_FIRST_MESSAGE → RECEIVE_SERVER_FIRST_MESSAGE → RECEIVE_SERVER_FINAL_MESSAGE →
COMPLETE. The server's nonce must extend ours and its iteration count must be at least 4096 (a
broker may not make a client hash its password weakly); the server's final signature must match.
"""

from __future__ import annotations

import enum
import hmac as _hmac

from kafka_lite.common.security.sasl import SCRAM_SHA_256, SaslException
from kafka_lite.common.security.scram import scram_formatter as formatter
from kafka_lite.common.security.scram.scram_messages import (
    GS2_HEADER,
    ClientFinalMessage,
    ClientFirstMessage,
    ServerFinalMessage,
    ServerFirstMessage,
)


class ScramClientState(enum.Enum):
    SEND_CLIENT_FIRST_MESSAGE = "SEND_CLIENT_FIRST_MESSAGE"
    RECEIVE_SERVER_FIRST_MESSAGE = "RECEIVE_SERVER_FIRST_MESSAGE"
    RECEIVE_SERVER_FINAL_MESSAGE = "RECEIVE_SERVER_FINAL_MESSAGE"
    COMPLETE = "COMPLETE"
    FAILED = "FAILED"


class ScramSaslClient:
    mechanism = SCRAM_SHA_256

    def __init__(self, username: str, password: str, nonce: str | None = None) -> None:
        self.username = username
        self.password = password
        self.state = ScramClientState.SEND_CLIENT_FIRST_MESSAGE
        self._client_first = ClientFirstMessage(username, nonce or formatter.secure_random_string())
        self._server_signature = b""

    def has_initial_response(self) -> bool:
        return True

    def evaluate_challenge(self, challenge: bytes) -> bytes:
        try:
            if self.state is ScramClientState.SEND_CLIENT_FIRST_MESSAGE:
                if challenge:
                    raise SaslException("Expected empty challenge")
                self.state = ScramClientState.RECEIVE_SERVER_FIRST_MESSAGE
                return self._client_first.to_bytes()
            if self.state is ScramClientState.RECEIVE_SERVER_FIRST_MESSAGE:
                return self._server_first_message(challenge)
            if self.state is ScramClientState.RECEIVE_SERVER_FINAL_MESSAGE:
                self._server_final_message(challenge)
                return b""
            raise SaslException(f"Unexpected challenge in SCRAM client state {self.state.name}")
        except SaslException:
            self.state = ScramClientState.FAILED
            raise

    def _server_first_message(self, challenge: bytes) -> bytes:
        server_first = ServerFirstMessage.parse(challenge)
        if not server_first.nonce.startswith(self._client_first.nonce):
            raise SaslException("Invalid server nonce: does not start with client nonce")
        if server_first.iterations < formatter.MIN_ITERATIONS:
            raise SaslException(
                f"Requested iterations {server_first.iterations} is less than the minimum "
                f"{formatter.MIN_ITERATIONS} for {self.mechanism}"
            )
        salted = formatter.salted_password(self.password, server_first.salt, server_first.iterations)
        without_proof = ClientFinalMessage(GS2_HEADER.encode(), server_first.nonce, b"").without_proof
        auth_message = f"{self._client_first.bare},{challenge.decode()},{without_proof}".encode()
        proof = formatter.client_proof(salted, auth_message)
        self._server_signature = formatter.server_signature(formatter.server_key(salted), auth_message)
        self.state = ScramClientState.RECEIVE_SERVER_FINAL_MESSAGE
        return ClientFinalMessage(GS2_HEADER.encode(), server_first.nonce, proof).to_bytes()

    def _server_final_message(self, challenge: bytes) -> None:
        server_final = ServerFinalMessage.parse(challenge)
        if server_final.error is not None:
            raise SaslException(
                f"Sasl authentication using {self.mechanism} failed with error: {server_final.error}"
            )
        if not _hmac.compare_digest(server_final.server_signature, self._server_signature):
            raise SaslException("Invalid server signature in server final message")
        self.state = ScramClientState.COMPLETE

    def is_complete(self) -> bool:
        return self.state is ScramClientState.COMPLETE
