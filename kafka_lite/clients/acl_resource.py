"""The admin client's ACL values, in kafka-python's shape: ``ACL``, ``ACLFilter``, ``ResourcePattern``.

Mirrors: org.apache.kafka.common.acl.{AclBinding, AclBindingFilter} and
         org.apache.kafka.common.resource.{Resource, ResourceFilter}
         (clients/src/main/java/org/apache/kafka/common/, Kafka 0.11.0), under kafka-python's names
         (``kafka.admin.acl_resource``: ``ACL``, ``ACLFilter``, ``ResourcePattern``,
         ``ResourcePatternFilter``, ``ACLOperation``, ``ACLPermissionType``, ``ResourceType``)
Book:    beyond the book: chapter 11 (security, Kafka 0.10.2–0.11)
Differs: no pattern types (Kafka 2.0's prefixed ACLs): every pattern is a literal name or ``*``;
         the enums are the broker's own (``common/security/auth/acl.py``), with kafka-python's names.

A program written for kafka-python's admin ACL calls runs unchanged against kafka_lite::

    admin.create_acls([ACL("User:alice", "*", ACLOperation.READ, ACLPermissionType.ALLOW,
                           ResourcePattern(ResourceType.TOPIC, "orders"))])
"""

from __future__ import annotations

from dataclasses import dataclass

from kafka_lite.common.security.auth.acl import AclBindingFilter, Operation, PermissionType, ResourceType

ACLOperation = Operation
ACLPermissionType = PermissionType

__all__ = ["ACL", "ACLFilter", "ACLOperation", "ACLPermissionType", "ResourcePattern", "ResourcePatternFilter",
           "ResourceType"]  # fmt: skip


@dataclass(frozen=True)
class ResourcePatternFilter:
    resource_type: ResourceType = ResourceType.ANY
    resource_name: str | None = None  # None: any name


@dataclass(frozen=True)
class ResourcePattern(ResourcePatternFilter):
    """One resource: a type and a name (``*`` for every resource of the type)."""


@dataclass(frozen=True)
class ACLFilter:
    """What DescribeAcls and DeleteAcls match: None (or ANY) in a field matches every value."""

    principal: str | None = None
    host: str | None = None
    operation: Operation = Operation.ANY
    permission_type: PermissionType = PermissionType.ANY
    resource_pattern: ResourcePatternFilter = ResourcePatternFilter()

    def to_binding_filter(self) -> AclBindingFilter:
        p = self.resource_pattern
        return AclBindingFilter(
            p.resource_type, p.resource_name, self.principal, self.host, self.operation, self.permission_type
        )

    @classmethod
    def from_binding_filter(cls, f: AclBindingFilter) -> ACLFilter:
        return cls(
            f.principal,
            f.host,
            f.operation,
            f.permission_type,
            ResourcePattern(f.resource_type, f.resource_name),
        )


@dataclass(frozen=True)
class ACL(ACLFilter):
    """One ACL on one resource: every field set (``User:*`` and ``*`` are the wildcards)."""

    principal: str = ""
    host: str = "*"
    resource_pattern: ResourcePattern = ResourcePattern(ResourceType.UNKNOWN, "")
