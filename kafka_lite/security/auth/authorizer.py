"""The authorizer's interface: may this session do this operation on this resource?

Mirrors: kafka.security.auth.Authorizer (core/src/main/scala/kafka/security/auth/Authorizer.scala,
         Kafka 0.11.0)
Book:    beyond the book: chapter 11 (security, Kafka 0.10.2–0.11)
Differs: ``remove_acls(resource)`` (Kafka's overload without ACLs) is ``remove_all_acls``, and the
         three ``getAcls`` overloads are ``get_acls(resource)``, ``get_acls_for_principal`` and
         ``get_all_acls``; the class is named in ``authorizer.class.name`` as ``package.module:Class``,
         or by Kafka's ``kafka.security.auth.SimpleAclAuthorizer`` or the short ``SimpleAclAuthorizer``.

A broker with ``authorizer.class.name`` set builds one authorizer, configures it with its settings,
and hands it to ``KafkaApis``, which asks ``authorize`` before each request does anything (see
``request_acls.py`` for which operation on which resource each API needs). With no authorizer every
request is allowed, as in Kafka.
"""

from __future__ import annotations

import pkgutil
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any

from kafka_lite.common.errors import ConfigException
from kafka_lite.common.security.auth.acl import Acl, Operation, Resource
from kafka_lite.common.security.auth.kafka_principal import KafkaPrincipal
from kafka_lite.network.request_channel import Session

SIMPLE_ACL_AUTHORIZER = "kafka_lite.security.auth.simple_acl_authorizer:SimpleAclAuthorizer"
# The names authorizer.class.name takes for SimpleAclAuthorizer besides its module path: Kafka's own
# class name (so a real server.properties works as it is) and the short name.
STANDARD_AUTHORIZER = "kafka_lite.metadata.authorizer.standard_authorizer:StandardAuthorizer"
ALIASES = {
    "kafka.security.auth.SimpleAclAuthorizer": SIMPLE_ACL_AUTHORIZER,
    "SimpleAclAuthorizer": SIMPLE_ACL_AUTHORIZER,
    # KRaft's (KIP-801), whose ACLs are metadata records.
    "org.apache.kafka.metadata.authorizer.StandardAuthorizer": STANDARD_AUTHORIZER,
    "StandardAuthorizer": STANDARD_AUTHORIZER,
}


class Authorizer(ABC):
    @abstractmethod
    def configure(self, configs: Mapping[str, Any]) -> None:
        """Called once with the broker's settings, before any ``authorize``."""

    @abstractmethod
    def authorize(self, session: Session, operation: Operation, resource: Resource) -> bool: ...

    @abstractmethod
    def add_acls(self, acls: set[Acl], resource: Resource) -> None: ...

    @abstractmethod
    def remove_acls(self, acls: set[Acl], resource: Resource) -> bool:
        """Remove these ACLs from the resource; True if any was there."""

    @abstractmethod
    def remove_all_acls(self, resource: Resource) -> bool: ...

    @abstractmethod
    def get_acls(self, resource: Resource) -> frozenset[Acl]: ...

    @abstractmethod
    def get_acls_for_principal(self, principal: KafkaPrincipal) -> dict[Resource, frozenset[Acl]]: ...

    @abstractmethod
    def get_all_acls(self) -> dict[Resource, frozenset[Acl]]: ...

    @abstractmethod
    def close(self) -> None: ...


def authorizer_class(name: str) -> type[Authorizer]:
    """The class ``authorizer.class.name`` names; a name that does not resolve to an ``Authorizer`` is
    a ``ConfigException`` naming the setting. The class is found by name at run time, as Kafka finds
    it by reflection, so no layer of kafka_lite imports it."""
    path = ALIASES.get(name.strip(), name.strip())
    try:
        cls = pkgutil.resolve_name(path)
    except (ImportError, AttributeError, ValueError) as e:
        raise ConfigException(
            "authorizer.class.name", name, f"Class {name} could not be found ({e})."
        ) from None
    if not (isinstance(cls, type) and issubclass(cls, Authorizer)):
        raise ConfigException("authorizer.class.name", name, f"{name} is not an {__name__}.Authorizer")
    return cls
