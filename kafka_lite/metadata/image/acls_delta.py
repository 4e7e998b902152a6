"""What a run of ACL records changes in an AclsImage: each id added (with its ACL) or removed.

Mirrors: org.apache.kafka.image.AclsDelta
         (metadata/src/main/java/org/apache/kafka/image/AclsDelta.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft), with chapter 11's ACLs

A node's authorizer takes the changes one by one, or, after a snapshot (``is_snapshot_delta``), the
new image's ACLs whole: a snapshot states every ACL there is, so an ACL it does not name is gone.
"""

from __future__ import annotations

import uuid

from kafka_lite.common.metadata.records import AccessControlEntryRecord, RemoveAccessControlEntryRecord
from kafka_lite.metadata.authorizer.standard_acl import StandardAcl
from kafka_lite.metadata.image.acls_image import AclsImage


class AclsDelta:
    def __init__(self, image: AclsImage) -> None:
        self.image = image
        self.changes: dict[uuid.UUID, StandardAcl | None] = {}  # None: removed
        self.is_snapshot_delta = False

    def finish_snapshot(self) -> None:
        self.is_snapshot_delta = True
        for acl_id in self.image.acls:
            if acl_id not in self.changes:
                self.changes[acl_id] = None

    def replay(self, record: AccessControlEntryRecord | RemoveAccessControlEntryRecord) -> None:
        if isinstance(record, AccessControlEntryRecord):
            self.changes[record.id] = StandardAcl.from_record(record)
            return
        if self.changes.get(record.id, self.image.acls.get(record.id)) is None:
            raise RuntimeError(f"Failed to find existing ACL with ID {record.id} in either image or changes")
        self.changes[record.id] = None

    def apply(self) -> AclsImage:
        acls = {acl_id: acl for acl_id, acl in self.image.acls.items() if acl_id not in self.changes}
        acls.update({acl_id: acl for acl_id, acl in self.changes.items() if acl is not None})
        return AclsImage(acls)

    def __repr__(self) -> str:
        return f"AclsDelta(is_snapshot_delta={self.is_snapshot_delta}, changes={self.changes})"
