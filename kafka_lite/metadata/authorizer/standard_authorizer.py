"""The KRaft authorizer: the ACLs it decides on are metadata records, replayed into it by the node's
metadata listener; a change to them goes to the active controller, which writes the records.

Mirrors: org.apache.kafka.metadata.authorizer.{StandardAuthorizer, StandardAuthorizerData}
         (metadata/src/main/java/org/apache/kafka/metadata/authorizer/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft), with chapter 11's authorizer
Differs: chapter 11's ``Authorizer`` interface (``authorize(session, operation, resource)``), not
         Kafka 2.4's (KIP-504), so KafkaApis asks either authorizer the same way; the authorizer's
         state is copied on each change behind a lock, as 3.3 copies its ``StandardAuthorizerData``,
         and read without one. Changes come only from the metadata (3.3's ``AclMutator`` is not
         needed: a KRaft broker forwards CreateAcls and DeleteAcls whole). The search for the ACLs
         that apply is Kafka 3.4's, with two fixes of 3.3's (``_kafka_3_4_find_acl_rule``).

What it decides, as chapter 11's ``SimpleAclAuthorizer`` does: a super user may do anything; a DENY
ACL that matches wins over any ALLOW; an ALLOW for Read, Write, Delete or Alter also allows Describe,
and an ALLOW for AlterConfigs allows DescribeConfigs; an ACL on the resource name ``*`` applies to
every resource of its type; with no matching ACL, ``allow.everyone.if.no.acl.found`` decides. New
with KRaft (KIP-801): until the node has loaded the metadata it is starting from, it decides nothing
(``AuthorizerNotReadyException``), since a missing DENY would let a request through.

How it finds the ACLs that apply (Kafka's ``findAclRule``): the ACLs are kept sorted by resource type,
then resource name in reverse (``StandardAcl.sort_key``). Starting at the resource's own name and
stepping forward meets the ACLs on that name, then those on each shorter prefix of it, and stops at
the first name that is not a prefix. Then the wildcard ACLs (name ``*``) of the type are checked.
"""

from __future__ import annotations

import bisect
import logging
import threading
import uuid
from collections.abc import Iterator, Mapping
from typing import Any

from kafka_lite.common.errors import KafkaException
from kafka_lite.common.security.auth.acl import (
    IMPLIED_BY,
    WILDCARD_HOST,
    WILDCARD_PRINCIPAL,
    WILDCARD_RESOURCE,
    Acl,
    Operation,
    PermissionType,
    Resource,
)
from kafka_lite.common.security.auth.kafka_principal import KafkaPrincipal
from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.metadata.authorizer.standard_acl import PatternType, StandardAcl
from kafka_lite.network.request_channel import Session
from kafka_lite.security.auth.authorizer import Authorizer

log = logging.getLogger("kafka.authorizer.logger")

SUPER_USERS_CONFIG = "super.users"
ALLOW_EVERYONE_IF_NO_ACL_IS_FOUND_CONFIG = "allow.everyone.if.no.acl.found"


class AuthorizerNotReadyException(KafkaException):
    """The authorizer has not yet loaded the ACLs the metadata log holds (Kafka's, in errors)."""


class StandardAuthorizer(Authorizer):
    def __init__(self, time: Time = SYSTEM) -> None:
        """``time``: the broker's clock, which it gives every authorizer; this one keeps no time."""
        # Sorted by StandardAcl.sort_key (Kafka's TreeSet); replaced whole on each change.
        self._acls_by_resource: list[StandardAcl] = []
        self._acls_by_id: dict[uuid.UUID, StandardAcl] = {}
        self._super_users: frozenset[str] = frozenset()
        self._allow_if_no_acl = False
        self._loading_complete = False
        self._lock = threading.Lock()  # one writer at a time; readers take the current copy

    def configure(self, configs: Mapping[str, Any]) -> None:
        super_users = str(configs.get(SUPER_USERS_CONFIG) or "")
        self._super_users = frozenset(u.strip() for u in super_users.split(";") if u.strip())
        allow = str(configs.get(ALLOW_EVERYONE_IF_NO_ACL_IS_FOUND_CONFIG, "false")).strip().lower()
        self._allow_if_no_acl = allow == "true"

    # -- the metadata listener's side -----------------------------------------------------------------

    def add_acl(self, acl_id: uuid.UUID, acl: StandardAcl) -> None:
        """An ``AccessControlEntryRecord`` replayed: the ACL with the id the controller gave it."""
        with self._lock:
            if acl_id in self._acls_by_id:
                raise KafkaException(f"An ACL with ID {acl_id} already exists.")
            acls = list(self._acls_by_resource)
            bisect.insort(acls, acl, key=StandardAcl.sort_key)
            self._acls_by_resource = acls
            self._acls_by_id = {**self._acls_by_id, acl_id: acl}
        log.debug("Added ACL %s with ID %s", acl, acl_id)

    def remove_acl(self, acl_id: uuid.UUID) -> None:
        """A ``RemoveAccessControlEntryRecord`` replayed."""
        with self._lock:
            acl = self._acls_by_id.get(acl_id)
            if acl is None:
                raise KafkaException(f"ID {acl_id} not found in authorizer data.")
            acls = list(self._acls_by_resource)
            acls.remove(acl)
            self._acls_by_resource = acls
            self._acls_by_id = {k: v for k, v in self._acls_by_id.items() if k != acl_id}
        log.debug("Removed ACL %s with ID %s", acl, acl_id)

    def load_snapshot(self, acls: Mapping[uuid.UUID, StandardAcl]) -> None:
        """A snapshot's ACLs replace every ACL the authorizer had."""
        with self._lock:
            self._acls_by_resource = sorted(acls.values(), key=StandardAcl.sort_key)
            self._acls_by_id = dict(acls)

    def complete_initial_load(self) -> None:
        """The node has caught up with the metadata log it started from: decide from now on."""
        self._loading_complete = True

    # -- deciding ---------------------------------------------------------------------------------------

    def authorize(self, session: Session, operation: Operation, resource: Resource) -> bool:
        principal = session.principal
        if str(principal) in self._super_users:
            rule, allowed = "SuperUser", True
        elif not self._loading_complete:
            raise AuthorizerNotReadyException("The authorizer has not loaded the cluster's ACLs yet")
        else:
            rule, allowed = self._kafka_3_4_find_acl_rule(
                {principal, WILDCARD_PRINCIPAL}, session.client_address, operation, resource
            )
        log.debug("Principal = %s is %s Operation = %s from host = %s on resource = %s based on rule %s",
                  principal, "Allowed" if allowed else "Denied", operation, session.client_address, resource,
                  rule)  # fmt: skip
        return allowed

    def _kafka_3_4_find_acl_rule(
        self, principals: set[KafkaPrincipal], host: str, operation: Operation, resource: Resource
    ) -> tuple[str, bool]:
        """The rule that decides, and its answer: a matching DENY, else a matching ALLOW, first among
        the ACLs on the resource's name and its prefixes, then among the type's wildcard ACLs; with
        neither, ``allow.everyone.if.no.acl.found`` if no ACL is on the resource at all, else DENY.

        Kafka 3.4's search, with two fixes of 3.3's. KAFKA-14265: 3.3 stops at the first ACL name
        that is not a prefix of the resource's, so an ACL on ``fooa`` hid a PREFIXED one on ``foo``
        from ``foobar``; 3.4 jumps back to the longest common prefix and goes on from there.
        KAFKA-14435: 3.3 applied ``allow.everyone.if.no.acl.found`` whenever no ACL matched the
        request, even on a resource that has ACLs for others; 3.4, as chapter 11's authorizer, only
        when the resource has none."""
        acls = self._acls_by_resource  # this change's copy, whatever the writers do meanwhile
        allow: StandardAcl | None = None
        has_resource_acls = False
        for name, pattern in ((resource.name, PatternType.UNKNOWN), (WILDCARD_RESOURCE, PatternType.LITERAL)):
            key = _exemplar(resource, name, pattern).sort_key()
            candidates = _from_key(acls, key)
            while (acl := next(candidates, None)) is not None:
                if acl.resource_type is not resource.resource_type:
                    break  # past the section of this resource type
                common = _matches_up_to(resource.name, acl.resource_name)
                if common == len(acl.resource_name):
                    if acl.pattern_type is PatternType.LITERAL and common != len(resource.name):
                        continue  # a literal ACL on a shorter name: a prefixed one may follow
                elif not (acl.resource_name == WILDCARD_RESOURCE and acl.pattern_type is PatternType.LITERAL):
                    # Not a prefix of the name: the next candidates are the common prefix and shorter.
                    shorter = _exemplar(resource, name[:common], pattern).sort_key()
                    if shorter == key:
                        break
                    key, candidates = shorter, _from_key(acls, shorter)
                    continue
                has_resource_acls = True
                result = _find_result(operation, principals, host, acl)
                if result is False:
                    return f"MatchingAcl(acl={acl})", False
                if result is True:
                    allow = acl
        if allow is not None:
            return f"MatchingAcl(acl={allow})", True
        if has_resource_acls:
            return "DefaultDeny", False
        return ("DefaultAllow", True) if self._allow_if_no_acl else ("DefaultDeny", False)

    # -- reading the ACLs (DescribeAcls, the tools) -------------------------------------------------------

    def get_all_acls(self) -> dict[Resource, frozenset[Acl]]:
        by_resource: dict[Resource, set[Acl]] = {}
        for acl in self._acls_by_resource:
            binding = acl.to_binding()
            by_resource.setdefault(binding.resource, set()).add(binding.acl)
        return {resource: frozenset(acls) for resource, acls in by_resource.items()}

    def get_acls(self, resource: Resource) -> frozenset[Acl]:
        return self.get_all_acls().get(resource, frozenset())

    def get_acls_for_principal(self, principal: KafkaPrincipal) -> dict[Resource, frozenset[Acl]]:
        return {
            resource: mine
            for resource, acls in self.get_all_acls().items()
            if (mine := frozenset(a for a in acls if a.principal == principal))
        }

    # -- changing the ACLs: only through the controller ---------------------------------------------------

    def add_acls(self, acls: set[Acl], resource: Resource) -> None:
        raise KafkaException("a KRaft cluster's ACLs change only through the active controller (CreateAcls)")

    def remove_acls(self, acls: set[Acl], resource: Resource) -> bool:
        raise KafkaException("a KRaft cluster's ACLs change only through the active controller (DeleteAcls)")

    def remove_all_acls(self, resource: Resource) -> bool:
        raise KafkaException("a KRaft cluster's ACLs change only through the active controller (DeleteAcls)")

    def close(self) -> None:
        """Nothing to release: the ACLs live in the metadata log."""


def _from_key(acls: list[StandardAcl], key: tuple) -> Iterator[StandardAcl]:
    """The ACLs from the first whose sort key is at or after ``key`` (Kafka's ``tailSet``)."""
    start = bisect.bisect_left(acls, key, key=StandardAcl.sort_key)
    return iter(acls[start:])


def _exemplar(resource: Resource, name: str, pattern: PatternType) -> StandardAcl:
    """The key that sorts just before every ACL on ``name`` (UNKNOWN sorts before every other value)."""
    return StandardAcl(
        resource.resource_type, name, pattern, "", "", Operation.UNKNOWN, PermissionType.UNKNOWN
    )


def _matches_up_to(resource_name: str, acl_name: str) -> int:
    """How many leading characters the two names share."""
    common = 0
    for a, b in zip(resource_name, acl_name, strict=False):
        if a != b:
            break
        common += 1
    return common


def _find_result(
    operation: Operation, principals: set[KafkaPrincipal], host: str, acl: StandardAcl
) -> bool | None:
    """Whether ``acl`` allows (True) or denies (False) ``operation`` for one of ``principals`` from
    ``host``, or None if it does not apply. Only an ALLOW implies other operations."""
    if acl.kafka_principal() not in principals:
        return None
    if acl.host != WILDCARD_HOST and acl.host != host:
        return None
    if acl.operation is not Operation.ALL:
        if acl.permission_type is PermissionType.ALLOW:
            if acl.operation not in IMPLIED_BY.get(operation, frozenset({operation})):
                return None
        elif acl.operation is not operation:
            return None
    return acl.permission_type is PermissionType.ALLOW
