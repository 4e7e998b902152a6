"""What every SASL mechanism's server side offers the authenticator, and the mechanisms' names.

Mirrors: javax.security.sasl.SaslServer (the interface Kafka's PlainSaslServer and ScramSaslServer
         implement) and org.apache.kafka.common.config.SaslConfigs' mechanism names (Kafka 0.11)
Book:    beyond the book: chapter 11 (security, Kafka 0.10.2–0.11)
Differs: no ``SaslServerFactory`` lookup: the authenticator builds the mechanism's class from the
         ``SASL_SERVERS`` table below.

A SASL exchange is a sequence of opaque tokens: the client sends one, the server evaluates it and
answers with one of its own, until the server says it is complete. PLAIN takes one token; SCRAM two.
The authenticator (``network/sasl_server_authenticator.py``) carries the tokens; the mechanism
alone decides what they mean.
"""

from __future__ import annotations

from typing import Protocol

PLAIN = "PLAIN"
SCRAM_SHA_256 = "SCRAM-SHA-256"
MECHANISMS = (PLAIN, SCRAM_SHA_256)


class SaslException(Exception):
    """A token the mechanism cannot accept: malformed, or credentials that do not match. The message
    is for the broker's log and for the client (SaslAuthenticate's ``error_message``); ``username`` is
    the user the client claimed to be, when the token named one, for the broker's log."""

    def __init__(self, message: str, username: str | None = None) -> None:
        super().__init__(message)
        self.username = username


class SaslServer(Protocol):
    mechanism: str

    def evaluate_response(self, response: bytes) -> bytes:
        """Take the client's next token; return the server's (``b""`` when it has nothing to say).
        Raises ``SaslException`` when the token is malformed or the credentials are wrong."""
        ...

    def is_complete(self) -> bool: ...

    def authorization_id(self) -> str:
        """The authenticated user's name, once complete."""
        ...


class SaslClient(Protocol):
    mechanism: str

    def has_initial_response(self) -> bool:
        """Whether the client speaks first (PLAIN and SCRAM both do)."""
        ...

    def evaluate_challenge(self, challenge: bytes) -> bytes:
        """Take the server's token (``b""`` to start); return the client's next. Raises
        ``SaslException`` when the server's token is malformed or does not prove the server."""
        ...

    def is_complete(self) -> bool: ...
