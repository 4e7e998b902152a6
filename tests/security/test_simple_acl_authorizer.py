"""SimpleAclAuthorizer on a real ZooKeeper: Kafka 0.11's decision rules, the znodes' JSON, conflicting
writers, and a change reaching another broker's authorizer through the notifications."""

from __future__ import annotations

import json
import logging
import uuid

import pytest

from kafka_lite.common.security.auth.acl import (
    CLUSTER_RESOURCE,
    Acl,
    Operation,
    PermissionType,
    Resource,
    ResourceType,
    to_json,
)
from kafka_lite.common.security.auth.kafka_principal import KafkaPrincipal
from kafka_lite.common.time import MockTime
from kafka_lite.network.request_channel import Session
from kafka_lite.security.auth.simple_acl_authorizer import RETRY_BACKOFF_MS, SimpleAclAuthorizer
from kafka_lite.zk.zk_utils import ZkUtils
from tests.support.waiting import wait_until

pytestmark = pytest.mark.integration

ALICE = KafkaPrincipal.from_string("User:alice")
BOB = KafkaPrincipal.from_string("User:bob")
ADMIN = KafkaPrincipal.from_string("User:admin")
ANYONE = KafkaPrincipal.from_string("User:*")
HOST = "127.0.0.1"


def allow(principal, operation, host="*"):
    return Acl(principal, PermissionType.ALLOW, host, operation)


def deny(principal, operation, host="*"):
    return Acl(principal, PermissionType.DENY, host, operation)


def topic() -> Resource:
    return Resource(ResourceType.TOPIC, f"t-{uuid.uuid4().hex[:8]}")


def session(principal=ALICE, host=HOST) -> Session:
    return Session(principal, host)


@pytest.fixture(scope="module")
def zk_connect(zookeeper):
    return f"{zookeeper.connect_string}/acl-test-{uuid.uuid4().hex[:8]}"


def configured(zk_connect, **configs) -> SimpleAclAuthorizer:
    authorizer = SimpleAclAuthorizer(MockTime())
    authorizer.configure({"zookeeper.connect": zk_connect, "super.users": "User:admin", **configs})
    return authorizer


@pytest.fixture(scope="module")
def authorizer(zk_connect):
    a = configured(zk_connect)
    yield a
    a.close()


@pytest.fixture(scope="module")
def other_broker(zk_connect):
    """A second broker's authorizer on the same ZooKeeper: it learns of changes by notification."""
    a = configured(zk_connect, **{"allow.everyone.if.no.acl.found": "true"})
    yield a
    a.close()


@pytest.fixture(scope="module")
def zk(zk_connect):
    z = ZkUtils(zk_connect)
    yield z
    z.close()


def test_no_acl_denies_everyone_but_super_users(authorizer):
    t = topic()
    assert not authorizer.authorize(session(), Operation.READ, t)
    assert authorizer.authorize(session(ADMIN), Operation.READ, t)
    assert authorizer.authorize(session(ADMIN), Operation.CLUSTER_ACTION, CLUSTER_RESOURCE)


def test_allow_everyone_if_no_acl_found_opens_only_resources_without_acls(authorizer, other_broker):
    open_topic, guarded = topic(), topic()
    assert other_broker.authorize(session(), Operation.WRITE, open_topic)
    authorizer.add_acls({allow(BOB, Operation.READ)}, guarded)
    wait_until(lambda: other_broker.get_acls(guarded), what="the other broker to load the new ACL")
    assert not other_broker.authorize(session(), Operation.READ, guarded)


def test_deny_wins_over_allow(authorizer):
    t = topic()
    authorizer.add_acls({allow(ALICE, Operation.READ), deny(ALICE, Operation.READ)}, t)
    assert not authorizer.authorize(session(), Operation.READ, t)
    assert authorizer.authorize(session(ADMIN), Operation.READ, t)  # super users skip the ACLs


@pytest.mark.parametrize("granted", [Operation.READ, Operation.WRITE, Operation.DELETE, Operation.ALTER])
def test_read_write_delete_and_alter_imply_describe(authorizer, granted):
    t = topic()
    authorizer.add_acls({allow(ALICE, granted)}, t)
    assert authorizer.authorize(session(), Operation.DESCRIBE, t)
    assert not authorizer.authorize(session(), Operation.CREATE, t)


def test_what_implies_nothing(authorizer):
    t = topic()
    authorizer.add_acls({allow(ALICE, Operation.CREATE), allow(ALICE, Operation.DESCRIBE)}, t)
    assert not authorizer.authorize(session(), Operation.READ, t)  # Describe implies no Read
    t2 = topic()
    authorizer.add_acls({allow(ALICE, Operation.READ), deny(ALICE, Operation.WRITE)}, t2)
    assert authorizer.authorize(session(), Operation.DESCRIBE, t2)  # a Deny implies no other Deny


def test_alter_configs_implies_describe_configs(authorizer):
    authorizer.add_acls({allow(ALICE, Operation.ALTER_CONFIGS)}, CLUSTER_RESOURCE)
    try:
        assert authorizer.authorize(session(), Operation.DESCRIBE_CONFIGS, CLUSTER_RESOURCE)
        assert not authorizer.authorize(session(), Operation.DESCRIBE, CLUSTER_RESOURCE)
    finally:
        authorizer.remove_all_acls(CLUSTER_RESOURCE)


def test_wildcards_principal_host_and_all(authorizer):
    t = topic()
    authorizer.add_acls({allow(ANYONE, Operation.READ), allow(BOB, Operation.ALL, host="10.0.0.7")}, t)
    assert authorizer.authorize(session(ALICE), Operation.READ, t)
    assert not authorizer.authorize(session(ALICE), Operation.WRITE, t)
    assert authorizer.authorize(session(BOB, "10.0.0.7"), Operation.WRITE, t)
    assert not authorizer.authorize(session(BOB, "10.0.0.8"), Operation.WRITE, t)  # another host


def test_the_wildcard_resource_applies_to_every_resource_of_its_type(authorizer):
    group = Resource(ResourceType.GROUP, f"g-{uuid.uuid4().hex[:8]}")
    wildcard = Resource(ResourceType.GROUP, "*")
    authorizer.add_acls({allow(ALICE, Operation.READ)}, wildcard)
    try:
        assert authorizer.authorize(session(), Operation.READ, group)
        assert not authorizer.authorize(session(BOB), Operation.READ, group)
        assert not authorizer.authorize(session(), Operation.READ, topic())  # not another type
        authorizer.add_acls({deny(ALICE, Operation.READ)}, group)
        assert not authorizer.authorize(session(), Operation.READ, group)
    finally:
        authorizer.remove_all_acls(wildcard)


def test_a_denial_is_logged_with_principal_operation_resource_and_host(authorizer, caplog):
    t = topic()
    with caplog.at_level(logging.INFO, logger="kafka.authorizer.logger"):
        authorizer.authorize(session(BOB, "10.1.2.3"), Operation.WRITE, t)
    assert any(
        r.name == "kafka.authorizer.logger"
        and r.levelno == logging.INFO
        and all(s in r.getMessage() for s in ("User:bob", "Denied", "Write", "10.1.2.3", str(t)))
        for r in caplog.records
    )


def test_acls_are_kafkas_json_in_their_znode_and_the_last_removal_deletes_it(authorizer, zk):
    t = topic()
    authorizer.add_acls({allow(ALICE, Operation.READ)}, t)
    data, _, _ = zk.read_data_maybe_null(f"/kafka-acl/Topic/{t.name}")
    assert json.loads(data)["acls"] == [
        {"principal": "User:alice", "permissionType": "Allow", "operation": "Read", "host": "*"}
    ]
    notified = [
        zk.read_data_maybe_null(f"/kafka-acl-changes/{c}")[0] for c in zk.get_children("/kafka-acl-changes")
    ]
    assert str(t).encode() in notified
    assert authorizer.remove_acls({allow(ALICE, Operation.READ)}, t)
    assert not authorizer.remove_acls({allow(ALICE, Operation.READ)}, t)  # nothing left to remove
    assert zk.read_data_maybe_null(f"/kafka-acl/Topic/{t.name}")[0] is None


def test_a_conflicting_write_is_retried_and_keeps_both(authorizer, zk, monkeypatch):
    t = topic()
    path = f"/kafka-acl/Topic/{t.name}"
    authorizer.add_acls({allow(ALICE, Operation.READ)}, t)
    write_at_version = authorizer.zk_utils.conditional_write_path
    writes = []

    def another_writer_gets_there_first(p, data, expected_version):
        if not writes:  # between this authorizer's read and its write, another broker writes the znode
            zk.client.set(path, to_json({allow(ALICE, Operation.READ), allow(BOB, Operation.READ)}))
        writes.append(write_at_version(p, data, expected_version))
        return writes[-1]

    monkeypatch.setattr(authorizer.zk_utils, "conditional_write_path", another_writer_gets_there_first)
    before = authorizer.time.milliseconds()
    authorizer.add_acls({allow(ALICE, Operation.WRITE)}, t)
    assert [written for written, _ in writes] == [False, True], "the conflict is retried, once"
    assert authorizer.time.milliseconds() - before >= RETRY_BACKOFF_MS, "after a back-off"
    data, _, _ = zk.read_data_maybe_null(path)
    assert {e["principal"] + e["operation"] for e in json.loads(data)["acls"]} == {
        "User:aliceRead",
        "User:bobRead",
        "User:aliceWrite",
    }


def test_a_change_reaches_another_brokers_cache_by_its_notification(authorizer, other_broker):
    t = topic()
    authorizer.add_acls({allow(ALICE, Operation.WRITE)}, t)
    wait_until(lambda: other_broker.get_acls(t) == {allow(ALICE, Operation.WRITE)}, what="the new ACL")
    authorizer.remove_all_acls(t)
    wait_until(lambda: not other_broker.get_acls(t), what="the removal")
    assert other_broker.authorize(session(), Operation.WRITE, t)  # open again (no ACL found)
