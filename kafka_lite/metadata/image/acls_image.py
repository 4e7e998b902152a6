"""The cluster's ACLs at one offset of the metadata log, each under the id the controller gave it.

Mirrors: org.apache.kafka.image.AclsImage
         (metadata/src/main/java/org/apache/kafka/image/AclsImage.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft), with chapter 11's ACLs

``write`` emits one ``AccessControlEntryRecord`` per ACL, in id order, so that equal images write
equal snapshots.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from kafka_lite.common.metadata.api_message_and_version import ApiMessageAndVersion
from kafka_lite.metadata.authorizer.standard_acl import StandardAcl, StandardAclWithId


@dataclass(frozen=True)
class AclsImage:
    EMPTY: ClassVar[AclsImage]

    acls: Mapping[uuid.UUID, StandardAcl] = field(default_factory=dict)

    def is_empty(self) -> bool:
        return not self.acls

    def write(self, out: list[ApiMessageAndVersion]) -> None:
        for acl_id in sorted(self.acls):
            out.append(ApiMessageAndVersion(StandardAclWithId(acl_id, self.acls[acl_id]).to_record(), 0))


AclsImage.EMPTY = AclsImage()
