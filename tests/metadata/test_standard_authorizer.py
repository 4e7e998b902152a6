"""The KRaft authorizer on ACLs given to it as the metadata listener gives them: who may do what,
DENY over ALLOW, implied operations, the wildcard resource and principal, prefixed ACLs (with Kafka
3.4's fix of 3.3's search), ``allow.everyone.if.no.acl.found`` (with 3.4's fix), super users, and
nothing decided before the first load."""

from __future__ import annotations

import importlib.util
import uuid
from pathlib import Path

import pytest

from kafka_lite.common.security.auth.acl import AclBinding, Operation, PermissionType, Resource, ResourceType
from kafka_lite.common.security.auth.kafka_principal import KafkaPrincipal
from kafka_lite.metadata.authorizer.standard_acl import PatternType, StandardAcl, StandardAclWithId
from kafka_lite.metadata.authorizer.standard_authorizer import AuthorizerNotReadyException, StandardAuthorizer
from kafka_lite.network.request_channel import Session

pytestmark = pytest.mark.unit

ALICE, BOB = "User:alice", "User:bob"
READ, WRITE, DESCRIBE = Operation.READ, Operation.WRITE, Operation.DESCRIBE
ALLOW, DENY = PermissionType.ALLOW, PermissionType.DENY


def acl(name: str, principal: str = ALICE, operation: Operation = READ, permission: PermissionType = ALLOW,
        pattern: PatternType = PatternType.LITERAL, host: str = "*") -> StandardAcl:  # fmt: skip
    return StandardAcl(ResourceType.TOPIC, name, pattern, principal, host, operation, permission)


def authorizer(*acls: StandardAcl, **configs: str) -> StandardAuthorizer:
    a = StandardAuthorizer()
    a.configure(configs)
    for each in acls:
        a.add_acl(uuid.uuid4(), each)
    a.complete_initial_load()
    return a


def may(
    a: StandardAuthorizer, principal: str, operation: Operation, topic: str, host: str = "10.0.0.1"
) -> bool:
    return a.authorize(
        Session(KafkaPrincipal.from_string(principal), host), operation, Resource(ResourceType.TOPIC, topic)
    )


def test_an_allow_acl_allows_its_principal_its_operation_on_its_topic_only():
    a = authorizer(acl("orders"))
    assert may(a, ALICE, READ, "orders")
    assert not may(a, BOB, READ, "orders")
    assert not may(a, ALICE, WRITE, "orders")
    assert not may(a, ALICE, READ, "orders2")


def test_deny_wins_and_only_an_allow_implies_describe():
    a = authorizer(acl("orders"), acl("orders", operation=Operation.ALL, permission=DENY, principal="User:*"))
    assert not may(a, ALICE, READ, "orders"), "a DENY for every user beats alice's ALLOW"
    b = authorizer(
        acl("orders", operation=WRITE), acl("payments", permission=DENY), acl("payments", principal=BOB)
    )
    assert may(b, ALICE, DESCRIBE, "orders"), "an ALLOW of Write implies Describe"
    assert not may(b, ALICE, DESCRIBE, "payments"), "a DENY of Read implies nothing"


def test_the_wildcard_resource_and_host():
    a = authorizer(acl("*"), acl("orders", principal=BOB, host="10.0.0.9"))
    assert may(a, ALICE, READ, "anything")
    assert may(a, BOB, READ, "orders", host="10.0.0.9") and not may(a, BOB, READ, "orders")


def test_prefixed_acls_match_every_name_they_start_and_a_longer_name_does_not_hide_them():
    a = authorizer(acl("foo", pattern=PatternType.PREFIXED), acl("fooa", principal=BOB))
    assert may(a, ALICE, READ, "foobar"), (
        "Kafka 3.3 stopped at fooa and missed the PREFIXED foo (KAFKA-14265)"
    )
    assert may(a, ALICE, READ, "foo") and not may(a, ALICE, READ, "fo")
    b = authorizer(acl("foob"))  # literal: no prefix of anything
    assert not may(b, ALICE, READ, "foobar")


def test_allow_everyone_if_no_acl_found_only_for_a_resource_without_acls():
    a = authorizer(acl("orders"), **{"allow.everyone.if.no.acl.found": "true"})
    assert may(a, BOB, READ, "payments"), "no ACL on payments: everyone"
    assert not may(a, BOB, READ, "orders"), "orders has an ACL (for alice): bob is denied (KAFKA-14435)"


def test_super_users_may_anything_even_before_the_first_load_and_others_wait_for_it():
    a = StandardAuthorizer()
    a.configure({"super.users": "User:admin;User:broker"})
    assert may(a, "User:broker", WRITE, "orders")
    with pytest.raises(AuthorizerNotReadyException):
        may(a, ALICE, READ, "orders")


def test_removing_and_loading_a_snapshot_change_what_is_allowed():
    a = authorizer()
    acl_id = uuid.uuid4()
    a.add_acl(acl_id, acl("orders"))
    assert may(a, ALICE, READ, "orders")
    a.remove_acl(acl_id)
    assert not may(a, ALICE, READ, "orders")
    a.load_snapshot({uuid.uuid4(): acl("payments")})
    assert may(a, ALICE, READ, "payments") and not may(a, ALICE, READ, "orders")
    assert {str(r) for r in a.get_all_acls()} == {"Topic:payments"}


def test_an_acl_goes_through_its_record_unchanged():
    with_id = StandardAclWithId(uuid.uuid4(), acl("foo", pattern=PatternType.PREFIXED, permission=DENY))
    assert StandardAclWithId.from_record(with_id.to_record()) == with_id


# -- chapter 11's decision tables, asked of KRaft's authorizer ---------------------------------------------

LAB_17 = Path(__file__).resolve().parents[2] / "labs" / "lab17_security" / "test_security_lab.py"


@pytest.mark.parametrize(
    "table",
    [
        "test_a_deny_wins_over_an_allow_through_each_wildcard",
        "test_read_write_delete_or_alter_implies_describe_and_a_deny_implies_nothing",
        "test_a_super_user_beats_a_deny",
        "test_a_resource_without_acls_follows_allow_everyone_if_no_acl_found",
    ],
)
def test_chapter_11s_decision_tables_hold_for_the_kraft_authorizer(table):
    """Lab 17's tables of questions and answers for ``SimpleAclAuthorizer``, on its ACLs, asked of
    ``StandardAuthorizer``: the same decision, wherever the ACLs are kept."""
    spec = importlib.util.spec_from_file_location("lab17_decision_tables", LAB_17)
    lab = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lab)

    def loaded(**configs: str) -> StandardAuthorizer:
        a = StandardAuthorizer()
        a.configure({"super.users": "User:admin", **configs})
        for resource, acls in lab.ACLS.items():
            for each in acls:
                a.add_acl(uuid.uuid4(), StandardAcl.from_acl_binding(AclBinding(resource, each)))
        a.complete_initial_load()
        return a

    getattr(lab, table)(
        {"strict": loaded(), "allow everyone": loaded(**{"allow.everyone.if.no.acl.found": "true"})}
    )
