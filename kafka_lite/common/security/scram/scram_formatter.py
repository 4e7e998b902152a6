"""SCRAM's arithmetic: salting a password, and the keys, signatures and proof derived from it.

Mirrors: org.apache.kafka.common.security.scram.ScramFormatter and ScramMechanism (clients/src/main/
         java/org/apache/kafka/common/security/scram/, Kafka 0.11)
Book:    beyond the book: chapter 11 (security, Kafka 0.10.2–0.11)
Differs: SHA-256 only (Kafka also has SCRAM-SHA-512); written on ``hashlib`` and ``hmac``, as Kafka's
         class is on ``javax.crypto.Mac``, so each RFC 5802 formula reads as one line.

RFC 5802's formulas, one function each::

    SaltedPassword  := Hi(password, salt, i)            (PBKDF2 with HMAC-SHA-256, i iterations)
    ClientKey       := HMAC(SaltedPassword, "Client Key")
    StoredKey       := H(ClientKey)
    AuthMessage     := client-first-bare "," server-first "," client-final-without-proof
    ClientSignature := HMAC(StoredKey, AuthMessage)
    ClientProof     := ClientKey XOR ClientSignature
    ServerKey       := HMAC(SaltedPassword, "Server Key")
    ServerSignature := HMAC(ServerKey, AuthMessage)

The broker stores only the salt, StoredKey, ServerKey and i: enough to check a client's proof
(``H(ClientProof XOR ClientSignature) == StoredKey``) and to prove itself (ServerSignature), never
enough to log in as the user, since that needs ClientKey.
"""

from __future__ import annotations

import hashlib
import hmac as _hmac
import secrets
from dataclasses import dataclass

HASH = "sha256"
MIN_ITERATIONS = 4096  # ScramMechanism.SCRAM_SHA_256's minimum, as Kafka enforces it


@dataclass(frozen=True)
class ScramCredential:
    """What the broker keeps of a user's password (Kafka's ``ScramCredential``)."""

    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int


def h(data: bytes) -> bytes:
    return hashlib.new(HASH, data).digest()


def hmac(key: bytes, data: bytes) -> bytes:
    return _hmac.new(key, data, HASH).digest()


def hi(password: bytes, salt: bytes, iterations: int) -> bytes:
    return hashlib.pbkdf2_hmac(HASH, password, salt, iterations)


def xor(a: bytes, b: bytes) -> bytes:
    if len(a) != len(b):
        raise ValueError("Argument arrays must be of the same length")
    return bytes(x ^ y for x, y in zip(a, b, strict=True))


def salted_password(password: str, salt: bytes, iterations: int) -> bytes:
    return hi(password.encode("utf-8"), salt, iterations)


def client_key(salted: bytes) -> bytes:
    return hmac(salted, b"Client Key")


def stored_key(client_key_: bytes) -> bytes:
    return h(client_key_)


def server_key(salted: bytes) -> bytes:
    return hmac(salted, b"Server Key")


def client_signature(stored_key_: bytes, auth_message: bytes) -> bytes:
    return hmac(stored_key_, auth_message)


def client_proof(salted: bytes, auth_message: bytes) -> bytes:
    key = client_key(salted)
    return xor(key, client_signature(stored_key(key), auth_message))


def server_signature(server_key_: bytes, auth_message: bytes) -> bytes:
    return hmac(server_key_, auth_message)


def secure_random_string() -> str:
    """A nonce (``ScramFormatter.secureRandomString``): printable, and never a ``,``."""
    return secrets.token_urlsafe(24)


def generate_credential(
    password: str, iterations: int = MIN_ITERATIONS, salt: bytes | None = None
) -> ScramCredential:
    """Salt and hash a new password (``ScramFormatter.generateCredential``), as ``kafka-configs
    --alter --add-config 'SCRAM-SHA-256=[iterations=4096,password=...]'`` does before writing it."""
    if iterations < MIN_ITERATIONS:
        raise ValueError(f"Invalid iterations {iterations}: SCRAM-SHA-256 needs at least {MIN_ITERATIONS}")
    salt = salt if salt is not None else secrets.token_bytes(32)
    salted = salted_password(password, salt, iterations)
    return ScramCredential(salt, stored_key(client_key(salted)), server_key(salted), iterations)
