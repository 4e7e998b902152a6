"""The principal a connection authenticated as: a type and a name, written ``User:alice``.

Mirrors: org.apache.kafka.common.security.auth.KafkaPrincipal (clients/src/main/java/org/apache/kafka/
         common/security/auth/KafkaPrincipal.java, Kafka 0.11)
Book:    beyond the book: chapter 11 (security, Kafka 0.10.2–0.11)

A PLAINTEXT connection is ``User:ANONYMOUS``; a SASL connection is ``User:<the name it proved>``. ACLs
name principals in the same written form, and ``User:*`` matches every one of them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KafkaPrincipal:
    principal_type: str
    name: str

    USER_TYPE = "User"
    SEPARATOR = ":"
    WILDCARD = "*"

    @classmethod
    def from_string(cls, text: str) -> KafkaPrincipal:
        """Parse ``Type:name`` (``KafkaPrincipal.fromString``); the name may itself hold a colon."""
        principal_type, sep, name = text.partition(cls.SEPARATOR)
        if not sep or not principal_type or not name:
            raise ValueError(
                f"expected a principal written as Type:name (for example User:alice), got {text!r}"
            )
        return cls(principal_type, name)

    def __str__(self) -> str:
        return f"{self.principal_type}{self.SEPARATOR}{self.name}"


KafkaPrincipal.ANONYMOUS = KafkaPrincipal(KafkaPrincipal.USER_TYPE, "ANONYMOUS")
