"""The client's side of SASL/PLAIN: one token, ``NUL username NUL password``.

Mirrors: org.apache.kafka.common.security.plain.PlainLoginModule (clients/src/main/java/org/apache/
         kafka/common/security/plain/PlainLoginModule.java, Kafka 0.11), whose username and password
         the JDK's PLAIN ``SaslClient`` sends
Book:    beyond the book: chapter 11 (security, Kafka 0.10.2–0.11)

The client sends its token first (PLAIN has an initial response) and is then done: the server's
answer is empty on success, and a failure is the server closing the connection (SaslHandshake v0)
or an error in SaslAuthenticate's response (v1).
"""

from __future__ import annotations

from kafka_lite.common.security.sasl import PLAIN, SaslException


class PlainSaslClient:
    mechanism = PLAIN

    def __init__(self, username: str, password: str) -> None:
        self.username = username
        self.password = password
        self._sent = False

    def has_initial_response(self) -> bool:
        return True

    def evaluate_challenge(self, challenge: bytes) -> bytes:
        if self._sent:
            if challenge:
                raise SaslException("SASL/PLAIN: unexpected token from the server after authentication")
            return b""
        self._sent = True
        return b"\x00" + self.username.encode("utf-8") + b"\x00" + self.password.encode("utf-8")

    def is_complete(self) -> bool:
        return self._sent
