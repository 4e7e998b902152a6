"""How a SCRAM credential is written in ZooKeeper, and the broker's cache of them.

Mirrors: org.apache.kafka.common.security.scram.ScramCredentialUtils and
         org.apache.kafka.common.security.authenticator.CredentialCache (clients/src/main/java/org/
         apache/kafka/common/security/, Kafka 0.11)
Book:    beyond the book: chapter 11 (security, Kafka 0.10.2–0.11)

``/config/users/alice`` holds, as a user's config, one entry per mechanism::

    {"version":1,"config":{"SCRAM-SHA-256":"salt=<base64>,stored_key=<base64>,server_key=<base64>,iterations=4096"}}

Every broker keeps the credentials in memory (the cache), filled from ZooKeeper at start-up and kept
current by the ``users`` config-change notifications (``UserConfigHandler``), so that a login never
waits on ZooKeeper.
"""

from __future__ import annotations

import base64
import binascii
import threading

from kafka_lite.common.security.scram.scram_formatter import MIN_ITERATIONS, ScramCredential

_FIELDS = ("salt", "stored_key", "server_key", "iterations")


def credential_to_string(credential: ScramCredential) -> str:
    b64 = base64.b64encode
    return (
        f"salt={b64(credential.salt).decode()},stored_key={b64(credential.stored_key).decode()},"
        f"server_key={b64(credential.server_key).decode()},iterations={credential.iterations}"
    )


def credential_from_string(text: str) -> ScramCredential:
    """Parse the stored form; a ``ValueError`` names what is missing or malformed."""
    fields = {}
    for item in text.split(","):
        key, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"Invalid SCRAM credential {text!r}: {item!r} is not key=value")
        fields[key.strip()] = value.strip()
    missing = [f for f in _FIELDS if f not in fields]
    if missing:
        raise ValueError(f"Invalid SCRAM credential: missing {', '.join(missing)}")
    try:
        salt, stored, server = (base64.b64decode(fields[f], validate=True) for f in _FIELDS[:3])
        iterations = int(fields["iterations"])
    except (binascii.Error, ValueError):
        raise ValueError(
            "Invalid SCRAM credential: salt and keys must be base64, iterations a number"
        ) from None
    if iterations < MIN_ITERATIONS:
        raise ValueError(f"Invalid SCRAM credential: iterations {iterations} is below {MIN_ITERATIONS}")
    return ScramCredential(salt, stored, server, iterations)


class CredentialCache:
    """The credentials of one mechanism, by user name (``CredentialCache.Cache<ScramCredential>``)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # the config-change thread writes, the processors read
        self._credentials: dict[str, ScramCredential] = {}

    def get(self, username: str) -> ScramCredential | None:
        with self._lock:
            return self._credentials.get(username)

    def put(self, username: str, credential: ScramCredential) -> None:
        with self._lock:
            self._credentials[username] = credential

    def remove(self, username: str) -> None:
        with self._lock:
            self._credentials.pop(username, None)

    def users(self) -> list[str]:
        with self._lock:
            return sorted(self._credentials)
