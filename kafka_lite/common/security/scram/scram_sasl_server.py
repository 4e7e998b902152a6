"""The broker's side of SASL/SCRAM-SHA-256: two tokens in, two out, and the password never sent.

Mirrors: org.apache.kafka.common.security.scram.ScramSaslServer (clients/src/main/java/org/apache/
         kafka/common/security/scram/ScramSaslServer.java, Kafka 0.11)
Book:    beyond the book: chapter 11 (security, Kafka 0.10.2–0.11)
Differs: SHA-256 only; the credential comes straight from the broker's ``CredentialCache`` (Kafka asks
         a ``ScramServerCallbackHandler``, which reads the same cache).

The exchange, as Kafka's states (``RECEIVE_CLIENT_FIRST_MESSAGE`` → ``RECEIVE_CLIENT_FINAL_MESSAGE`` →
``COMPLETE``, or ``FAILED``):

1. client-first (``n,,n=alice,r=<cnonce>``): look up alice's stored credential; answer server-first
   with the client's nonce extended by the server's, her salt and iteration count.
2. client-final (``c=biws,r=<nonce>,p=<proof>``): the nonce must be the one just sent; the proof
   must hash to the stored key. Answer server-final, the server's signature, which proves to the
   client that the broker knows the ServerKey too.
"""

from __future__ import annotations

import enum
import hmac as _hmac
from collections.abc import Callable

from kafka_lite.common.security.sasl import SCRAM_SHA_256, SaslException
from kafka_lite.common.security.scram import scram_formatter as formatter
from kafka_lite.common.security.scram.scram_formatter import ScramCredential
from kafka_lite.common.security.scram.scram_messages import (
    GS2_HEADER,
    ClientFinalMessage,
    ClientFirstMessage,
    ServerFinalMessage,
    ServerFirstMessage,
)


class ScramServerState(enum.Enum):
    RECEIVE_CLIENT_FIRST_MESSAGE = "RECEIVE_CLIENT_FIRST_MESSAGE"
    RECEIVE_CLIENT_FINAL_MESSAGE = "RECEIVE_CLIENT_FINAL_MESSAGE"
    COMPLETE = "COMPLETE"
    FAILED = "FAILED"


class ScramSaslServer:
    mechanism = SCRAM_SHA_256

    def __init__(self, credentials: Callable[[str], ScramCredential | None]) -> None:
        self.credentials = credentials
        self.state = ScramServerState.RECEIVE_CLIENT_FIRST_MESSAGE
        self._username = ""
        self._credential: ScramCredential | None = None
        self._client_first: ClientFirstMessage | None = None
        self._server_first: ServerFirstMessage | None = None

    def evaluate_response(self, response: bytes) -> bytes:
        try:
            if self.state is ScramServerState.RECEIVE_CLIENT_FIRST_MESSAGE:
                return self._client_first_message(response)
            if self.state is ScramServerState.RECEIVE_CLIENT_FINAL_MESSAGE:
                return self._client_final_message(response)
            raise SaslException(f"Unexpected SCRAM token in state {self.state.name}", self._username or None)
        except SaslException:
            self.state = ScramServerState.FAILED
            raise

    def _client_first_message(self, response: bytes) -> bytes:
        client_first = ClientFirstMessage.parse(response)
        self._username = client_first.username
        credential = self.credentials(client_first.username)
        if credential is None:
            raise SaslException("Authentication failed: Invalid user credentials", client_first.username)
        nonce = client_first.nonce + formatter.secure_random_string()
        self._client_first, self._credential = client_first, credential
        self._server_first = ServerFirstMessage(nonce, credential.salt, credential.iterations)
        self.state = ScramServerState.RECEIVE_CLIENT_FINAL_MESSAGE
        return self._server_first.to_bytes()

    # --8<-- [start:client_final_message]
    def _client_final_message(self, response: bytes) -> bytes:
        assert self._client_first and self._server_first and self._credential
        client_final = ClientFinalMessage.parse(response)
        if client_final.nonce != self._server_first.nonce:
            raise SaslException("Invalid client nonce in the final client message.", self._username)
        if client_final.channel_binding != GS2_HEADER.encode():
            raise SaslException("Invalid channel binding in the final client message.", self._username)
        auth_message = self.auth_message(client_final)
        signature = formatter.client_signature(self._credential.stored_key, auth_message)
        if len(client_final.proof) != len(signature):
            raise SaslException("Invalid client credentials", self._username)
        computed_stored_key = formatter.h(formatter.xor(client_final.proof, signature))
        if not _hmac.compare_digest(computed_stored_key, self._credential.stored_key):
            raise SaslException("Invalid client credentials", self._username)
        self.state = ScramServerState.COMPLETE
        server_signature = formatter.server_signature(self._credential.server_key, auth_message)
        return ServerFinalMessage(None, server_signature).to_bytes()

    # --8<-- [end:client_final_message]

    def auth_message(self, client_final: ClientFinalMessage) -> bytes:
        assert self._client_first and self._server_first
        return (
            f"{self._client_first.bare},{self._server_first.to_bytes().decode()},{client_final.without_proof}"
        ).encode()

    def is_complete(self) -> bool:
        return self.state is ScramServerState.COMPLETE

    def authorization_id(self) -> str:
        if not self.is_complete():
            raise SaslException("Authentication exchange has not completed")
        return self._username
