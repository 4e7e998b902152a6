"""An ACL as the KRaft metadata keeps it: one flat value with its resource's pattern type, and the id
the controller gave it.

Mirrors: org.apache.kafka.metadata.authorizer.{StandardAcl, StandardAclWithId, PatternType}
         (metadata/src/main/java/org/apache/kafka/metadata/authorizer/ and clients' resource
         package, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft), with chapter 11's ACLs
Differs: the resource types, operations and permissions are chapter 11's enums (their wire codes are
         Kafka's); a pattern type is kept, but kafka_lite's CreateAcls (version 0) has none, so every
         ACL a client creates is LITERAL.

Chapter 11's ZooKeeper broker keeps a resource's ACLs in one znode; a KRaft cluster keeps each ACL
as one ``AccessControlEntryRecord`` in the metadata log (KIP-801), and its removal as a
``RemoveAccessControlEntryRecord`` that names only the ACL's id. ``StandardAcl`` sorts by resource
type, then by resource name **reversed**, then the other fields: in that order the ACLs that can
apply to a resource name (the literal one, and every prefix of it) follow it, which is how the
authorizer finds them (``standard_authorizer.py``).
"""

from __future__ import annotations

import enum
import uuid
from dataclasses import dataclass

from kafka_lite.common.metadata.records import AccessControlEntryRecord
from kafka_lite.common.security.auth.acl import (
    Acl,
    AclBinding,
    Operation,
    PermissionType,
    Resource,
    ResourceType,
)
from kafka_lite.common.security.auth.kafka_principal import KafkaPrincipal


class PatternType(enum.IntEnum):
    """How an ACL's resource name matches (Kafka 2.0's KIP-290): exactly, or as a prefix."""

    UNKNOWN = 0
    ANY = 1  # filters only
    MATCH = 2  # filters only
    LITERAL = 3
    PREFIXED = 4


class _Reversed(str):
    """A string that sorts in reverse: ``StandardAcl``'s order on resource names."""

    __slots__ = ()

    def __lt__(self, other: str) -> bool:
        return str.__gt__(self, other)

    def __gt__(self, other: str) -> bool:
        return str.__lt__(self, other)

    def __le__(self, other: str) -> bool:
        return str.__ge__(self, other)

    def __ge__(self, other: str) -> bool:
        return str.__le__(self, other)


@dataclass(frozen=True)
class StandardAcl:
    resource_type: ResourceType
    resource_name: str
    pattern_type: PatternType
    principal: str
    host: str
    operation: Operation
    permission_type: PermissionType

    def sort_key(self) -> tuple:
        """Kafka's ``compareTo``: type, name reversed, pattern type, operation, principal, host,
        permission; the enums by their codes, as Java compares enums by their declaration order."""
        return (self.resource_type.code, _Reversed(self.resource_name), int(self.pattern_type),
                self.operation.code, self.principal, self.host, self.permission_type.code)  # fmt: skip

    def kafka_principal(self) -> KafkaPrincipal:
        return KafkaPrincipal.from_string(self.principal)

    @classmethod
    def from_acl_binding(cls, binding: AclBinding) -> StandardAcl:
        acl = binding.acl
        return cls(binding.resource.resource_type, binding.resource.name, PatternType.LITERAL,
                   str(acl.principal), acl.host, acl.operation, acl.permission_type)  # fmt: skip

    def to_binding(self) -> AclBinding:
        acl = Acl(self.kafka_principal(), self.permission_type, self.host, self.operation)
        return AclBinding(Resource(self.resource_type, self.resource_name), acl)

    @classmethod
    def from_record(cls, record: AccessControlEntryRecord) -> StandardAcl:
        return cls(
            ResourceType.for_code(record.resource_type),
            record.resource_name,
            PatternType(record.pattern_type),
            record.principal,
            record.host,
            Operation.for_code(record.operation),
            PermissionType.for_code(record.permission_type),
        )


@dataclass(frozen=True)
class StandardAclWithId:
    id: uuid.UUID
    acl: StandardAcl

    def to_record(self) -> AccessControlEntryRecord:
        acl = self.acl
        return AccessControlEntryRecord(
            id=self.id,
            resource_type=acl.resource_type.code,
            resource_name=acl.resource_name,
            pattern_type=int(acl.pattern_type),
            principal=acl.principal,
            host=acl.host,
            operation=acl.operation.code,
            permission_type=acl.permission_type.code,
        )

    @classmethod
    def from_record(cls, record: AccessControlEntryRecord) -> StandardAclWithId:
        return cls(record.id, StandardAcl.from_record(record))
