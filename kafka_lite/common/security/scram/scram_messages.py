"""The four SCRAM messages, parsed and written as RFC 5802 spells them.

Mirrors: org.apache.kafka.common.security.scram.ScramMessages (clients/src/main/java/org/apache/kafka/
         common/security/scram/ScramMessages.java, Kafka 0.11)
Book:    beyond the book: chapter 11 (security, Kafka 0.10.2–0.11)
Differs: no channel binding and no extensions, as Kafka 0.11 has none.

::

    client-first   n,,n=<user>,r=<client nonce>          ("n,," is the GS2 header: no channel binding)
    server-first   r=<client nonce><server nonce>,s=<base64 salt>,i=<iterations>
    client-final   c=biws,r=<nonce>,p=<base64 proof>      ("biws" is base64 of "n,,")
    server-final   v=<base64 server signature>   or   e=<error>

A user name may not hold ``,`` or ``=`` raw: they are written ``=2C`` and ``=3D``.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass

from kafka_lite.common.security.sasl import SaslException

_SASLNAME = r"(?:[\x01-\x2B\x2D-\x3C\x3E-\x7F]|=2C|=3D)+"
_PRINTABLE = r"[\x21-\x2B\x2D-\x7E]+"
_BASE64 = r"[A-Za-z0-9+/]*={0,2}"
_CLIENT_FIRST = re.compile(
    rf"^n,(a=(?P<authzid>{_SASLNAME}))?,(?P<bare>n=(?P<saslname>{_SASLNAME}),r=(?P<nonce>{_PRINTABLE}))$"
)
_SERVER_FIRST = re.compile(rf"^r=(?P<nonce>{_PRINTABLE}),s=(?P<salt>{_BASE64}),i=(?P<iterations>[0-9]+)$")
_CLIENT_FINAL = re.compile(
    rf"^(?P<without_proof>c=(?P<channel>{_BASE64}),r=(?P<nonce>{_PRINTABLE})),p=(?P<proof>{_BASE64})$"
)
_SERVER_FINAL = re.compile(rf"^(?:e=(?P<error>{_PRINTABLE})|v=(?P<signature>{_BASE64}))$")
GS2_HEADER = "n,,"


def username_to_saslname(username: str) -> str:
    return username.replace("=", "=3D").replace(",", "=2C")


def saslname_to_username(saslname: str) -> str:
    return saslname.replace("=2C", ",").replace("=3D", "=")


def _match(pattern: re.Pattern[str], data: bytes, what: str) -> re.Match[str]:
    try:
        text = bytes(data).decode("utf-8")
    except UnicodeDecodeError:
        raise SaslException(f"Invalid SCRAM {what}: not UTF-8") from None
    m = pattern.match(text)
    if m is None:
        raise SaslException(f"Invalid SCRAM {what} format: {text[:100]!r}")
    return m


def _b64(value: str, what: str) -> bytes:
    try:
        return base64.b64decode(value, validate=True)
    except binascii.Error:
        raise SaslException(f"Invalid base64 in SCRAM {what}") from None


@dataclass(frozen=True)
class ClientFirstMessage:
    username: str
    nonce: str

    @property
    def bare(self) -> str:
        return f"n={username_to_saslname(self.username)},r={self.nonce}"

    def to_bytes(self) -> bytes:
        return (GS2_HEADER + self.bare).encode()

    @classmethod
    def parse(cls, data: bytes) -> ClientFirstMessage:
        m = _match(_CLIENT_FIRST, data, "client first message")
        return cls(saslname_to_username(m["saslname"]), m["nonce"])


@dataclass(frozen=True)
class ServerFirstMessage:
    nonce: str
    salt: bytes
    iterations: int

    def to_bytes(self) -> bytes:
        return f"r={self.nonce},s={base64.b64encode(self.salt).decode()},i={self.iterations}".encode()

    @classmethod
    def parse(cls, data: bytes) -> ServerFirstMessage:
        m = _match(_SERVER_FIRST, data, "server first message")
        return cls(m["nonce"], _b64(m["salt"], "server first message"), int(m["iterations"]))


@dataclass(frozen=True)
class ClientFinalMessage:
    channel_binding: bytes
    nonce: str
    proof: bytes

    @property
    def without_proof(self) -> str:
        return f"c={base64.b64encode(self.channel_binding).decode()},r={self.nonce}"

    def to_bytes(self) -> bytes:
        return f"{self.without_proof},p={base64.b64encode(self.proof).decode()}".encode()

    @classmethod
    def parse(cls, data: bytes) -> ClientFinalMessage:
        m = _match(_CLIENT_FINAL, data, "client final message")
        what = "client final message"
        return cls(_b64(m["channel"], what), m["nonce"], _b64(m["proof"], what))


@dataclass(frozen=True)
class ServerFinalMessage:
    error: str | None
    server_signature: bytes

    def to_bytes(self) -> bytes:
        if self.error is not None:
            return f"e={self.error}".encode()
        return f"v={base64.b64encode(self.server_signature).decode()}".encode()

    @classmethod
    def parse(cls, data: bytes) -> ServerFinalMessage:
        m = _match(_SERVER_FINAL, data, "server final message")
        if m["error"] is not None:
            return cls(m["error"], b"")
        return cls(None, _b64(m["signature"], "server final message"))
