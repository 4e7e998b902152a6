"""The ACL authorizer: ACLs kept in ZooKeeper, cached by every broker, checked on every request.

Mirrors: kafka.security.auth.SimpleAclAuthorizer
         (core/src/main/scala/kafka/security/auth/SimpleAclAuthorizer.scala, Kafka 0.11.0)
Book:    beyond the book: chapter 11 (security, Kafka 0.10.2–0.11)
Differs: a denial is logged at INFO on ``kafka.authorizer.logger`` (0.11 logs every decision at
         DEBUG; later Kafkas log denials at INFO), so that a refused client is visible in the
         broker's log without turning on debug logging.
Labs:    lab 17, stage 2 (``SimpleAclAuthorizer.authorize``, ``_acl_match``)

Where the ACLs live, and how a change reaches every broker::

    /kafka-acl/Topic/orders          {"version":1,"acls":[{"principal":"User:alice",
                                       "permissionType":"Allow","operation":"Read","host":"*"}]}
    /kafka-acl-changes/acl_changes_0000000012     Topic:orders      ("re-read that resource")

The writer (a broker answering CreateAcls, or the ``acls`` tool on ZooKeeper) changes a resource's
znode with a conditional write at the version it read: if another writer got there first, the write
fails, the writer reads again and retries, so two concurrent ``add``s never lose one another. Then it
creates the notification. Every broker's authorizer watches ``/kafka-acl-changes``
(``ZkNodeChangeNotificationListener``) and re-reads the named resource into its cache; ``authorize``
reads only the cache, never ZooKeeper.

The decision (``authorize``), in Kafka's order:

1. a super user (``super.users``, a ``;``-list of principals) may do anything;
2. a resource with no ACL at all (on itself or on the wildcard resource of its type) is allowed only
   if ``allow.everyone.if.no.acl.found`` is true;
3. otherwise a matching Deny wins; failing that, a matching Allow allows. An ACL matches if its
   principal is the session's or ``User:*``, its host the client's or ``*``, and its operation the
   one asked or ``All``. An Allow of Read, Write, Delete or Alter also allows Describe, and an Allow
   of AlterConfigs also DescribeConfigs (``IMPLIED_BY``); a Deny implies nothing beyond itself.
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Mapping
from typing import Any

from kafka_lite.common.errors import IllegalStateException
from kafka_lite.common.security.auth.acl import (
    IMPLIED_BY,
    WILDCARD_HOST,
    WILDCARD_PRINCIPAL,
    WILDCARD_RESOURCE,
    Acl,
    Operation,
    PermissionType,
    Resource,
    ResourceType,
    from_json,
    to_json,
)
from kafka_lite.common.security.auth.kafka_principal import KafkaPrincipal
from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.network.request_channel import Session
from kafka_lite.security.auth.authorizer import Authorizer
from kafka_lite.zk.zk_node_change_notification_listener import ZkNodeChangeNotificationListener
from kafka_lite.zk.zk_utils import KAFKA_ACL_CHANGES_PATH, KAFKA_ACL_PATH, ZkUtils

log = logging.getLogger(__name__)
authorizer_logger = logging.getLogger("kafka.authorizer.logger")  # Kafka's audit logger, by its name

SUPER_USERS_PROP = "super.users"
ALLOW_EVERYONE_IF_NO_ACL_IS_FOUND_PROP = "allow.everyone.if.no.acl.found"
ZK_URL_PROP = "authorizer.zookeeper.url"  # optional: the ACLs in another ZooKeeper than the broker's
ACL_CHANGED_PREFIX = "acl_changes_"
MAX_UPDATE_RETRIES = 10  # a safeguard: conflicting writers all retry, one wins each round
RETRY_BACKOFF_MS = 100
RETRY_BACKOFF_JITTER_MS = 50


def parse_super_users(value: str | None) -> frozenset[KafkaPrincipal]:
    """``User:admin;User:broker`` (Kafka's ``super.users``: a semicolon, since a principal's name
    may hold a comma)."""
    return frozenset(KafkaPrincipal.from_string(s.strip()) for s in (value or "").split(";") if s.strip())


class SimpleAclAuthorizer(Authorizer):
    def __init__(self, time: Time = SYSTEM) -> None:
        self.time = time
        self.super_users: frozenset[KafkaPrincipal] = frozenset()
        self.should_allow_everyone_if_no_acl_is_found = False
        self.zk_utils: ZkUtils | None = None
        self.acl_change_listener: ZkNodeChangeNotificationListener | None = None
        # resource -> (its ACLs, the znode's version they were read at); only resources with ACLs
        self._acl_cache: dict[Resource, tuple[frozenset[Acl], int]] = {}
        # Kafka's read-write lock: writers (add/remove and the change handler) hold it across the read
        # of ZooKeeper and the cache update, so a notification cannot put back an older set.
        self._lock = threading.RLock()

    def configure(self, configs: Mapping[str, Any]) -> None:
        """Read the settings, connect to ZooKeeper, load every ACL, then watch for changes."""
        self.super_users = parse_super_users(configs.get(SUPER_USERS_PROP))
        self.should_allow_everyone_if_no_acl_is_found = (
            str(configs.get(ALLOW_EVERYONE_IF_NO_ACL_IS_FOUND_PROP, False)).lower() == "true"
        )
        zk_url = configs.get(ZK_URL_PROP) or configs["zookeeper.connect"]
        self.zk_utils = ZkUtils(
            zk_url,
            int(configs.get("zookeeper.session.timeout.ms", 6000)),
            int(configs.get("zookeeper.connection.timeout.ms", 6000)),
        )
        self.zk_utils.make_sure_persistent_path_exists(KAFKA_ACL_PATH)
        self._load_cache()
        self.acl_change_listener = ZkNodeChangeNotificationListener(
            self.zk_utils, KAFKA_ACL_CHANGES_PATH, ACL_CHANGED_PREFIX, self._process_acl_change, self.time
        )
        self.acl_change_listener.init()

    # --8<-- [start:authorize]
    def authorize(self, session: Session, operation: Operation, resource: Resource) -> bool:
        """Whether ``session`` may do ``operation`` on ``resource``, decided from the cached ACLs of the
        resource and of its type's wildcard resource; every decision goes to the audit log."""
        # BEGIN SOLUTION
        principal, host = session.principal, session.client_address
        acls = self.get_acls(resource) | self.get_acls(Resource(resource.resource_type, WILDCARD_RESOURCE))
        deny_match = self._acl_match(operation, principal, host, PermissionType.DENY, acls)
        allow_ops = IMPLIED_BY.get(operation, frozenset({operation}))
        allow_match = any(
            self._acl_match(op, principal, host, PermissionType.ALLOW, acls) for op in allow_ops
        )
        authorized = (
            self.is_super_user(principal)
            or self._is_empty_acl_and_authorized(resource, acls)
            or (not deny_match and allow_match)
        )
        self._log_audit_message(principal, authorized, operation, resource, host)
        return authorized
        # END SOLUTION

    def is_super_user(self, principal: KafkaPrincipal) -> bool:
        return principal in self.super_users

    def _is_empty_acl_and_authorized(self, resource: Resource, acls: frozenset[Acl]) -> bool:
        if acls:
            return False
        authorizer_logger.debug(
            "No acl found for resource %s, authorized = %s",
            resource,
            self.should_allow_everyone_if_no_acl_is_found,
        )
        return self.should_allow_everyone_if_no_acl_is_found

    @staticmethod
    def _acl_match(
        operation: Operation, principal: KafkaPrincipal, host: str, permission_type: PermissionType, acls
    ) -> bool:
        """Whether one of ``acls`` of ``permission_type`` names the principal (or ``User:*``), the host
        (or ``*``) and the operation (or ``All``)."""
        # BEGIN SOLUTION
        return any(
            acl.permission_type is permission_type
            and acl.principal in (principal, WILDCARD_PRINCIPAL)
            and acl.operation in (operation, Operation.ALL)
            and acl.host in (host, WILDCARD_HOST)
            for acl in acls
        )
        # END SOLUTION

    # --8<-- [end:authorize]

    @staticmethod
    def _log_audit_message(
        principal: KafkaPrincipal, authorized: bool, operation: Operation, resource: Resource, host: str
    ) -> None:
        authorizer_logger.log(
            logging.DEBUG if authorized else logging.INFO,
            "Principal = %s is %s Operation = %s from host = %s on resource = %s",
            principal, "Allowed" if authorized else "Denied", operation, host, resource,
        )  # fmt: skip

    # -- the ACLs -----------------------------------------------------------------------------------------------

    def add_acls(self, acls: set[Acl], resource: Resource) -> None:
        if acls:
            with self._lock:
                self._update_resource_acls(resource, lambda current: current | frozenset(acls))

    def remove_acls(self, acls: set[Acl], resource: Resource) -> bool:
        with self._lock:
            return self._update_resource_acls(resource, lambda current: current - frozenset(acls))

    def remove_all_acls(self, resource: Resource) -> bool:
        with self._lock:
            path = self.to_resource_path(resource)
            existed = self.zk_utils.read_data_maybe_null(path)[0] is not None
            self.zk_utils.delete_path(path)
            self._update_cache(resource, frozenset(), -1)
            self._update_acl_changed_flag(resource)
            return existed

    def get_acls(self, resource: Resource) -> frozenset[Acl]:
        with self._lock:
            entry = self._acl_cache.get(resource)
            return entry[0] if entry else frozenset()

    def get_acls_for_principal(self, principal: KafkaPrincipal) -> dict[Resource, frozenset[Acl]]:
        with self._lock:
            found = {
                resource: frozenset(a for a in acls if a.principal == principal)
                for resource, (acls, _) in self._acl_cache.items()
            }
        return {resource: acls for resource, acls in found.items() if acls}

    def get_all_acls(self) -> dict[Resource, frozenset[Acl]]:
        with self._lock:
            return {resource: acls for resource, (acls, _) in self._acl_cache.items()}

    def close(self) -> None:
        if self.acl_change_listener is not None:
            self.acl_change_listener.close()
        if self.zk_utils is not None:
            self.zk_utils.close()

    # -- ZooKeeper and the cache -----------------------------------------------------------------------------------

    @staticmethod
    def to_resource_path(resource: Resource) -> str:
        return f"{KAFKA_ACL_PATH}/{resource.resource_type}/{resource.name}"

    def _load_cache(self) -> None:
        """Every resource's ACLs as ZooKeeper has them now (Kafka's ``loadCache``)."""
        with self._lock:
            for type_name in self.zk_utils.get_children(KAFKA_ACL_PATH):
                resource_type = ResourceType.from_string(type_name)
                for name in self.zk_utils.get_children(f"{KAFKA_ACL_PATH}/{type_name}"):
                    resource = Resource(resource_type, name)
                    self._update_cache(resource, *self._get_acls_from_zk(resource))

    def _get_acls_from_zk(self, resource: Resource) -> tuple[frozenset[Acl], int]:
        data, version, _ = self.zk_utils.read_data_maybe_null(self.to_resource_path(resource))
        return from_json(data), version

    def _update_cache(self, resource: Resource, acls: frozenset[Acl], version: int) -> None:
        if acls:
            self._acl_cache[resource] = (acls, version)
        else:
            self._acl_cache.pop(resource, None)

    # --8<-- [start:update_resource_acls]
    def _update_resource_acls(self, resource: Resource, get_new_acls) -> bool:
        """Write ``get_new_acls(current)`` at the version the current set was read at; on a conflict
        (another writer, another broker) read ZooKeeper again and retry. True if the set changed,
        in which case every broker is told (Kafka's ``updateResourceAcls``)."""
        path = self.to_resource_path(resource)
        current, version = (
            self._acl_cache[resource] if resource in self._acl_cache else self._get_acls_from_zk(resource)
        )
        for _ in range(MAX_UPDATE_RETRIES + 1):
            new_acls = get_new_acls(current)
            if new_acls:
                written, new_version = self.zk_utils.conditional_write_path(path, to_json(new_acls), version)
            else:
                written, new_version = self.zk_utils.conditional_delete_path(path, version), -1
            if written:
                break
            log.debug("Conflicting update of the ACLs of %s at version %d: reading again", resource, version)
            self.time.sleep(RETRY_BACKOFF_MS + random.randrange(RETRY_BACKOFF_JITTER_MS))
            current, version = self._get_acls_from_zk(resource)
        else:
            raise IllegalStateException(
                f"Failed to update ACLs for {resource} after trying a maximum of {MAX_UPDATE_RETRIES} times"
            )
        self._update_cache(resource, new_acls, new_version)
        if new_acls == current:
            return False
        log.debug(
            "Updated ACLs for %s to %s with version %d", resource, sorted(map(str, new_acls)), new_version
        )
        self._update_acl_changed_flag(resource)
        return True

    # --8<-- [end:update_resource_acls]

    def _update_acl_changed_flag(self, resource: Resource) -> None:
        self.zk_utils.create_sequential_persistent_path(
            f"{KAFKA_ACL_CHANGES_PATH}/{ACL_CHANGED_PREFIX}", str(resource).encode()
        )

    def _process_acl_change(self, notification: bytes) -> None:
        """``AclChangedNotificationHandler``: re-read the resource the notification names."""
        resource = Resource.from_string(notification.decode())
        with self._lock:
            self._update_cache(resource, *self._get_acls_from_zk(resource))
