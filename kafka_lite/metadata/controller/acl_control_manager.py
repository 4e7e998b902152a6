"""The controller's part for ACLs (KIP-801): CreateAcls and DeleteAcls turned into records, and the
records replayed into the controller's view of the ACLs and its own authorizer.

Mirrors: org.apache.kafka.controller.AclControlManager
         (metadata/src/main/java/org/apache/kafka/controller/AclControlManager.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft), with chapter 11's ACLs
Differs: an ACL's id is a random UUID as in Kafka, drawn from the controller's ``random.Random``
         (so a test's controller draws the same ids on every run).

A creation is checked first (a resource type, pattern type, operation and permission a rule can
have: not ANY or UNKNOWN), and an ACL that already exists is answered SUCCESS with no record, so a
retried CreateAcls writes nothing twice. A deletion writes one ``RemoveAccessControlEntryRecord`` per
ACL a filter matches, all in one atomic batch: the ACLs go together or not at all. The maps are
timeline structures, so a controller that loses its leadership reverts what it had not yet seen
committed. The controller's authorizer (a controller is asked, too, for the requests it serves)
takes each ACL as it is replayed from the log; one loaded from a snapshot reaches it whole, when
the snapshot has been read.
"""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass

from kafka_lite.common.errors import InvalidRequestException
from kafka_lite.common.metadata.api_message_and_version import ApiMessageAndVersion
from kafka_lite.common.metadata.records import AccessControlEntryRecord, RemoveAccessControlEntryRecord
from kafka_lite.common.security.auth.acl import (
    AclBinding,
    AclBindingFilter,
    Operation,
    PermissionType,
    ResourceType,
)
from kafka_lite.metadata.authorizer.standard_acl import StandardAcl, StandardAclWithId
from kafka_lite.metadata.authorizer.standard_authorizer import StandardAuthorizer
from kafka_lite.metadata.controller.controller_result import ControllerResult
from kafka_lite.metadata.timeline.snapshot_registry import SnapshotRegistry
from kafka_lite.metadata.timeline.timeline_hash_map import TimelineHashMap
from kafka_lite.metadata.timeline.timeline_hash_set import TimelineHashSet
from kafka_lite.raft.offset_and_epoch import OffsetAndEpoch


@dataclass(frozen=True)
class AclCreateResult:
    """One creation's answer: None, or the error that refused it."""

    exception: Exception | None = None


@dataclass(frozen=True)
class AclDeleteResult:
    """One filter's answer: the bindings it deleted, or the error that refused the filter."""

    deleted: tuple[AclBinding, ...] = ()
    exception: Exception | None = None


class AclControlManager:
    def __init__(
        self,
        snapshot_registry: SnapshotRegistry,
        authorizer: StandardAuthorizer | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.id_to_acl: TimelineHashMap[uuid.UUID, StandardAcl] = TimelineHashMap(snapshot_registry)
        self.existing_acls: TimelineHashSet[StandardAcl] = TimelineHashSet(snapshot_registry)
        self.authorizer = authorizer
        self._random = rng or random.Random()

    # -- CreateAcls ------------------------------------------------------------------------------------

    def create_acls(self, bindings: list[AclBinding]) -> ControllerResult[list[AclCreateResult]]:
        results: list[AclCreateResult] = []
        records: list[ApiMessageAndVersion] = []
        pending: set[StandardAcl] = set()  # this request's own duplicates write one record
        for binding in bindings:
            try:
                validate_new_acl(binding)
            except InvalidRequestException as e:
                results.append(AclCreateResult(e))
                continue
            acl = StandardAcl.from_acl_binding(binding)
            if acl not in self.existing_acls and acl not in pending:
                pending.add(acl)
                records.append(
                    ApiMessageAndVersion(StandardAclWithId(self._new_acl_id(), acl).to_record(), 0)
                )
            results.append(AclCreateResult())
        return ControllerResult.at_least_once(records, results)

    def _new_acl_id(self) -> uuid.UUID:
        while True:
            acl_id = uuid.UUID(int=self._random.getrandbits(128), version=4)
            if acl_id not in self.id_to_acl:
                return acl_id

    # -- DeleteAcls ------------------------------------------------------------------------------------

    def delete_acls(self, filters: list[AclBindingFilter]) -> ControllerResult[list[AclDeleteResult]]:
        results: list[AclDeleteResult] = []
        records: dict[uuid.UUID, ApiMessageAndVersion] = {}  # an ACL two filters match is removed once
        for acl_filter in filters:
            try:
                validate_filter(acl_filter)
            except InvalidRequestException as e:
                results.append(AclDeleteResult(exception=e))
                continue
            deleted = []
            for acl_id, acl in self.id_to_acl.items():
                binding = acl.to_binding()
                if acl_filter.matches(binding):
                    deleted.append(binding)
                    records[acl_id] = ApiMessageAndVersion(RemoveAccessControlEntryRecord(id=acl_id), 0)
            results.append(AclDeleteResult(tuple(deleted)))
        return ControllerResult.of(list(records.values()), results)

    # -- replay ----------------------------------------------------------------------------------------

    def replay(
        self,
        record: AccessControlEntryRecord | RemoveAccessControlEntryRecord,
        snapshot_id: OffsetAndEpoch | None,
    ) -> None:
        if isinstance(record, AccessControlEntryRecord):
            with_id = StandardAclWithId.from_record(record)
            self.id_to_acl.put(with_id.id, with_id.acl)
            self.existing_acls.add(with_id.acl)
            if snapshot_id is None and self.authorizer is not None:
                self.authorizer.add_acl(with_id.id, with_id.acl)
            return
        acl = self.id_to_acl.remove(record.id)
        if acl is None:
            raise RuntimeError(f"Unable to replay {record}: no acl with that ID found.")
        if not self.existing_acls.remove(acl):
            raise RuntimeError(f"Unable to replay {record} for {acl}: acl not found in existingAcls.")
        if snapshot_id is None and self.authorizer is not None:
            self.authorizer.remove_acl(record.id)

    def complete_snapshot_load(self) -> None:
        """A snapshot has been read: the controller's authorizer takes its ACLs whole."""
        if self.authorizer is not None:
            self.authorizer.load_snapshot(dict(self.id_to_acl.items()))


def validate_new_acl(binding: AclBinding) -> None:
    """Kafka's ``validateNewAcl``: a rule names one resource type, operation and permission."""
    resource_type = binding.resource.resource_type
    if resource_type in (ResourceType.UNKNOWN, ResourceType.ANY):
        raise InvalidRequestException(f"Invalid resourceType {resource_type.name}")
    operation = binding.acl.operation
    if operation in (Operation.UNKNOWN, Operation.ANY):
        raise InvalidRequestException(f"Invalid operation {operation.name}")
    permission = binding.acl.permission_type
    if permission not in (PermissionType.ALLOW, PermissionType.DENY):
        raise InvalidRequestException(f"Invalid permissionType {permission.name}")


def validate_filter(acl_filter: AclBindingFilter) -> None:
    """Kafka's ``validateFilter``: a filter with an UNKNOWN field matches nothing anyone meant."""
    if acl_filter.resource_type is ResourceType.UNKNOWN:
        raise InvalidRequestException("Unknown patternFilter.")
    if Operation.UNKNOWN is acl_filter.operation or PermissionType.UNKNOWN is acl_filter.permission_type:
        raise InvalidRequestException("Unknown entryFilter.")
