"""What an ACL says: a principal, from a host, is allowed or denied an operation on a resource.

Mirrors: kafka.security.auth.{Acl, Resource, ResourceType, Operation, PermissionType}
         (core/src/main/scala/kafka/security/auth/, Kafka 0.11.0), with the wire codes and the
         filters of org.apache.kafka.common.acl.{AclOperation, AclPermissionType, AclBinding,
         AclBindingFilter} and org.apache.kafka.common.resource.{ResourceType, ResourceFilter}
         (clients/src/main/java/org/apache/kafka/common/, Kafka 0.11.0)
Book:    beyond the book: chapter 11 (security, Kafka 0.10.2–0.11)
Differs: one set of enums serves the broker, the admin client and the tool (Kafka keeps a Scala set
         in core and a Java set in clients, converted back and forth); each member carries both its
         Scala name (``Read``, written in ZooKeeper's JSON) and its wire code (Java's ``READ = 3``).

An ACL is a rule on one resource::

    Topic:orders   User:alice  from *  Allow  Read
    Group:*        User:*      from *  Deny   Delete

A resource is a type and a name; the name ``*`` is the wildcard resource, whose ACLs apply to every
resource of its type. The cluster is one resource, ``Cluster:kafka-cluster``. A principal ``User:*``
and a host ``*`` match any. The broker keeps each resource's ACLs in ZooKeeper at
``/kafka-acl/<ResourceType>/<name>`` as ``{"version":1,"acls":[{...}]}`` (``to_json``/``from_json``).

The filters (``AclBindingFilter``) are what DescribeAcls and DeleteAcls send: every field may be
``ANY`` (a null string on the wire), and a filter "matches at most one" ACL when none of its fields is.
"""

from __future__ import annotations

import enum
import json
import re
from dataclasses import dataclass

from kafka_lite.common.errors import InvalidRequestException
from kafka_lite.common.security.auth.kafka_principal import KafkaPrincipal


class _Named(enum.Enum):
    """An enum member with Kafka's Scala name and its wire code; ``from_string`` ignores case, as
    Kafka's ``Operation.fromString`` does, and refuses an unknown name, listing the valid ones."""

    def __init__(self, scala_name: str, code: int) -> None:
        self.scala_name = scala_name
        self.code = code

    @classmethod
    def from_string(cls, name: str):
        for member in cls:
            if (
                member.code > 1
                and member.scala_name.lower() == name.replace("-", "").replace("_", "").lower()
            ):
                return member
        valid = ", ".join(m.scala_name for m in cls if m.code > 1)
        label = re.sub(r"(?<!^)(?=[A-Z])", " ", cls.__name__).lower()  # ResourceType -> resource type
        raise InvalidRequestException(f"{name!r} is not a valid {label}. The valid names are: {valid}")

    @classmethod
    def for_code(cls, code: int):
        for member in cls:
            if member.code == code:
                return member
        return cls.UNKNOWN

    def __str__(self) -> str:
        return self.scala_name


class ResourceType(_Named):
    UNKNOWN = ("Unknown", 0)
    ANY = ("Any", 1)  # filters only
    TOPIC = ("Topic", 2)
    GROUP = ("Group", 3)
    CLUSTER = ("Cluster", 4)
    TRANSACTIONAL_ID = ("TransactionalId", 5)


class Operation(_Named):
    UNKNOWN = ("Unknown", 0)
    ANY = ("Any", 1)  # filters only
    ALL = ("All", 2)  # an ACL for All matches every operation
    READ = ("Read", 3)
    WRITE = ("Write", 4)
    CREATE = ("Create", 5)
    DELETE = ("Delete", 6)
    ALTER = ("Alter", 7)
    DESCRIBE = ("Describe", 8)
    CLUSTER_ACTION = ("ClusterAction", 9)
    DESCRIBE_CONFIGS = ("DescribeConfigs", 10)
    ALTER_CONFIGS = ("AlterConfigs", 11)
    IDEMPOTENT_WRITE = ("IdempotentWrite", 12)


class PermissionType(_Named):
    UNKNOWN = ("Unknown", 0)
    ANY = ("Any", 1)  # filters only
    DENY = ("Deny", 2)
    ALLOW = ("Allow", 3)


# What an Allow ACL for an operation also allows (SimpleAclAuthorizer.authorize in 0.11): whoever may
# read, write, delete or alter a resource may see it, and whoever may alter configs may read them.
# Deny ACLs imply nothing: a Deny of Read does not deny Describe.
IMPLIED_BY: dict[Operation, frozenset[Operation]] = {
    Operation.DESCRIBE: frozenset(
        {Operation.DESCRIBE, Operation.READ, Operation.WRITE, Operation.DELETE, Operation.ALTER}
    ),
    Operation.DESCRIBE_CONFIGS: frozenset({Operation.DESCRIBE_CONFIGS, Operation.ALTER_CONFIGS}),
}

WILDCARD_RESOURCE = "*"  # Resource.WildCardResource
CLUSTER_RESOURCE_NAME = "kafka-cluster"  # Resource.ClusterResourceName
WILDCARD_HOST = "*"  # Acl.WildCardHost
WILDCARD_PRINCIPAL = KafkaPrincipal(KafkaPrincipal.USER_TYPE, KafkaPrincipal.WILDCARD)  # User:*
ACL_JSON_VERSION = 1  # Acl.CurrentVersion


@dataclass(frozen=True)
class Resource:
    resource_type: ResourceType
    name: str

    def __str__(self) -> str:
        return f"{self.resource_type}:{self.name}"

    @classmethod
    def from_string(cls, text: str) -> Resource:
        """``Topic:orders`` (Kafka's ``Resource.fromString``)."""
        type_name, sep, name = text.partition(":")
        if not sep or not name:
            raise InvalidRequestException(f"expected a resource written as Type:name, got {text!r}")
        return cls(ResourceType.from_string(type_name), name)


CLUSTER_RESOURCE = Resource(ResourceType.CLUSTER, CLUSTER_RESOURCE_NAME)


@dataclass(frozen=True)
class Acl:
    principal: KafkaPrincipal
    permission_type: PermissionType
    host: str
    operation: Operation

    def __str__(self) -> str:
        return (
            f"{self.principal} has {self.permission_type} permission for operations: {self.operation} "
            f"from hosts: {self.host}"
        )

    def to_json_map(self) -> dict[str, str]:
        """One entry of the znode's ``acls``, keys in Kafka's order (``Acl.toJsonCompatibleMap``)."""
        return {
            "principal": str(self.principal),
            "permissionType": self.permission_type.scala_name,
            "operation": self.operation.scala_name,
            "host": self.host,
        }


def to_json(acls: set[Acl] | frozenset[Acl]) -> bytes:
    """A resource's znode: ``{"version":1,"acls":[...]}`` (sorted, so equal sets write equal bytes)."""
    entries = sorted((a.to_json_map() for a in acls), key=lambda m: tuple(m.values()))
    return json.dumps({"version": ACL_JSON_VERSION, "acls": entries}, separators=(",", ":")).encode()


def from_json(data: bytes | str | None) -> frozenset[Acl]:
    """A resource's znode back to its ACLs (``Acl.fromJson``); empty data is no ACLs."""
    if not data:
        return frozenset()
    value = json.loads(data)
    return frozenset(
        Acl(
            KafkaPrincipal.from_string(entry["principal"]),
            PermissionType.from_string(entry["permissionType"]),
            entry["host"],
            Operation.from_string(entry["operation"]),
        )
        for entry in value.get("acls", [])
    )


# -- the admin API's bindings and filters (org.apache.kafka.common.acl) ---------------------------------------


@dataclass(frozen=True)
class AclBinding:
    """An ACL and the resource it is on: what CreateAcls sends and DescribeAcls answers."""

    resource: Resource
    acl: Acl

    def __str__(self) -> str:
        return f"{self.resource}: {self.acl}"


@dataclass(frozen=True)
class AclBindingFilter:
    """What DescribeAcls and DeleteAcls send: ANY (or None for a string) matches every value."""

    resource_type: ResourceType = ResourceType.ANY
    resource_name: str | None = None
    principal: str | None = None
    host: str | None = None
    operation: Operation = Operation.ANY
    permission_type: PermissionType = PermissionType.ANY

    def matches(self, binding: AclBinding) -> bool:
        """Kafka's ``AclBindingFilter.matches``: each field ANY/None or equal (no wildcard
        expansion: a filter for ``User:alice`` does not match an ACL for ``User:*``)."""
        acl = binding.acl
        return (
            self.resource_type in (ResourceType.ANY, binding.resource.resource_type)
            and self.resource_name in (None, binding.resource.name)
            and self.principal in (None, str(acl.principal))
            and self.host in (None, acl.host)
            and self.operation in (Operation.ANY, acl.operation)
            and self.permission_type in (PermissionType.ANY, acl.permission_type)
        )

    def matches_at_most_one(self) -> bool:
        """No field is ANY: the filter names one ACL exactly (``AclBindingFilter.matchesAtMostOne``)."""
        return self.find_indefinite_field() is None

    def find_indefinite_field(self) -> str | None:
        """The first field that is ANY (or None), by name, or None if the filter is exact."""
        for name in ("resource_type", "resource_name", "principal", "host", "operation", "permission_type"):
            value = getattr(self, name)
            if value is None or getattr(value, "code", None) == 1:
                return name
        return None

    def to_binding(self) -> AclBinding:
        """The one ACL an exact filter names, checked as the broker checks a CreateAcls entry
        (Kafka's ``SecurityUtils.convertToResourceAndAcl`` and ``handleCreateAcls``); a field that
        is ANY or UNKNOWN, a bad principal, an empty name or a cluster not named ``kafka-cluster``
        raises InvalidRequestException naming it."""
        indefinite = self.find_indefinite_field()
        if indefinite is not None:
            raise InvalidRequestException(f"the {indefinite} of an ACL to create cannot be ANY")
        for name in ("resource_type", "operation", "permission_type"):
            if getattr(self, name).code == 0:
                raise InvalidRequestException(f"unknown {name.replace('_', ' ')} in the ACL")
        if not self.resource_name:
            raise InvalidRequestException("Invalid empty resource name")
        if self.resource_type is ResourceType.CLUSTER and self.resource_name != CLUSTER_RESOURCE_NAME:
            raise InvalidRequestException(
                f"The only valid name for the CLUSTER resource is {CLUSTER_RESOURCE_NAME}"
            )
        try:
            principal = KafkaPrincipal.from_string(self.principal or "")
        except ValueError as e:
            raise InvalidRequestException(str(e)) from None
        return AclBinding(
            Resource(self.resource_type, self.resource_name),
            Acl(principal, self.permission_type, self.host or "", self.operation),
        )

    @classmethod
    def for_binding(cls, binding: AclBinding) -> AclBindingFilter:
        """The exact filter of one binding (``AclBinding.toFilter``)."""
        acl = binding.acl
        return cls(
            binding.resource.resource_type,
            binding.resource.name,
            str(acl.principal),
            acl.host,
            acl.operation,
            acl.permission_type,
        )

    def to_wire(self) -> dict:
        """The six fields as the ACL APIs carry them (codes for the enums)."""
        return {
            "resource_type": self.resource_type.code,
            "resource_name": self.resource_name,
            "principal": self.principal,
            "host": self.host,
            "operation": self.operation.code,
            "permission_type": self.permission_type.code,
        }

    @classmethod
    def from_wire(cls, entry: dict) -> AclBindingFilter:
        return cls(
            ResourceType.for_code(entry["resource_type"]),
            entry["resource_name"],
            entry["principal"],
            entry["host"],
            Operation.for_code(entry["operation"]),
            PermissionType.for_code(entry["permission_type"]),
        )


def binding_to_wire(binding: AclBinding) -> dict:
    return AclBindingFilter.for_binding(binding).to_wire()


def binding_from_wire(entry: dict) -> AclBinding:
    """A binding the broker sent (DescribeAcls, DeleteAcls): its fields are exact."""
    return AclBinding(
        Resource(ResourceType.for_code(entry["resource_type"]), entry["resource_name"]),
        Acl(
            KafkaPrincipal.from_string(entry["principal"]),
            PermissionType.for_code(entry["permission_type"]),
            entry["host"],
            Operation.for_code(entry["operation"]),
        ),
    )
