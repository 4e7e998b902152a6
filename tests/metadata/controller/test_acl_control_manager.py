"""ACLs as metadata on the quorum controller (KIP-801): CreateAcls and DeleteAcls written as records
by the active controller, replayed by every controller into its ACLs and its authorizer, kept in
snapshots, and answered only once committed."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import InvalidRequestException
from kafka_lite.common.metadata import AccessControlEntryRecord, RemoveAccessControlEntryRecord
from kafka_lite.common.security.auth.acl import (
    Acl,
    AclBinding,
    AclBindingFilter,
    Operation,
    PermissionType,
    Resource,
    ResourceType,
)
from kafka_lite.common.security.auth.kafka_principal import KafkaPrincipal
from kafka_lite.metadata.authorizer.standard_authorizer import StandardAuthorizer
from kafka_lite.network.request_channel import Session
from kafka_lite.testing.quorum_controller_test_env import QuorumControllerTestEnv

pytestmark = pytest.mark.unit

ALICE = KafkaPrincipal.from_string("User:alice")
ORDERS = Resource(ResourceType.TOPIC, "orders")


def binding(operation: Operation = Operation.READ, resource: Resource = ORDERS) -> AclBinding:
    return AclBinding(resource, Acl(ALICE, PermissionType.ALLOW, "*", operation))


def acl_records(env: QuorumControllerTestEnv) -> list:
    return [
        r.message
        for batch in env.shared.batches
        for r in batch.records
        if isinstance(r.message, AccessControlEntryRecord | RemoveAccessControlEntryRecord)
    ]


def with_authorizers(env: QuorumControllerTestEnv) -> dict[int, StandardAuthorizer]:
    authorizers = {}
    for node_id, controller in env.controllers.items():
        authorizers[node_id] = controller.acl_control.authorizer = StandardAuthorizer()
        authorizers[node_id].complete_initial_load()
    return authorizers


def alice_may_read(authorizer: StandardAuthorizer) -> bool:
    return authorizer.authorize(Session(ALICE, "10.0.0.1"), Operation.READ, ORDERS)


def test_a_created_acl_is_one_record_every_controller_replays_and_a_retry_writes_nothing():
    env = QuorumControllerTestEnv()
    authorizers = with_authorizers(env)
    active = env.elect(0)
    created = active.create_acls([binding()])
    env.poll()
    assert [r.exception for r in created.result(timeout=0)] == [None]
    (record,) = acl_records(env)
    assert (record.resource_name, record.principal, record.operation) == ("orders", "User:alice", 3)
    for node_id, controller in env.controllers.items():
        assert list(controller.acl_control.id_to_acl.keys()) == [record.id], f"controller {node_id}"
        assert alice_may_read(authorizers[node_id]), f"controller {node_id}'s authorizer"
    again = active.create_acls([binding(), binding()])
    env.poll()
    assert [r.exception for r in again.result(timeout=0)] == [None, None]
    assert len(acl_records(env)) == 1, "an ACL that exists is answered SUCCESS with no record"


def test_an_acl_no_rule_can_be_is_refused_and_the_others_of_the_request_go_on():
    env = QuorumControllerTestEnv()
    active = env.elect(0)
    created = active.create_acls(
        [binding(Operation.ANY), binding(resource=Resource(ResourceType.ANY, "x")), binding()]
    )
    env.poll()
    errors = [r.exception for r in created.result(timeout=0)]
    assert isinstance(errors[0], InvalidRequestException) and "Invalid operation ANY" in str(errors[0])
    assert isinstance(errors[1], InvalidRequestException) and "Invalid resourceType ANY" in str(errors[1])
    assert errors[2] is None and len(acl_records(env)) == 1


def test_a_delete_removes_every_acl_its_filter_matches_on_every_controller():
    env = QuorumControllerTestEnv()
    authorizers = with_authorizers(env)
    active = env.elect(0)
    active.create_acls([binding(), binding(Operation.WRITE)])
    env.poll()
    deleted = active.delete_acls(
        [AclBindingFilter(resource_type=ResourceType.TOPIC, operation=Operation.READ)]
    )
    env.poll()
    (result,) = deleted.result(timeout=0)
    assert result.exception is None and result.deleted == (binding(),)
    assert isinstance(acl_records(env)[-1], RemoveAccessControlEntryRecord)
    for node_id, controller in env.controllers.items():
        assert [a.operation for a in controller.acl_control.id_to_acl.values()] == [Operation.WRITE]
        assert not alice_may_read(authorizers[node_id]), f"controller {node_id}'s authorizer still allows"


def test_the_acls_are_in_the_snapshot_a_restarted_controller_loads():
    env = QuorumControllerTestEnv(snapshot_max_new_records=3)
    active = env.elect(0)
    for operation in (Operation.READ, Operation.WRITE, Operation.DELETE, Operation.ALTER):
        active.create_acls([binding(operation)])
        env.poll()
    snapshot = env.shared.latest_snapshot()
    assert snapshot is not None
    in_snapshot = [
        r.message
        for batch in snapshot.batches
        for r in batch
        if isinstance(r.message, AccessControlEntryRecord)
    ]
    assert in_snapshot, "the snapshot holds no ACL"
    env.stop(1)
    restarted = env.add_controller(1)
    restarted.acl_control.authorizer = authorizer = StandardAuthorizer()
    authorizer.complete_initial_load()
    env.poll()
    assert restarted.records_replayed_from_snapshot > 0
    assert sorted(a.operation.code for a in restarted.acl_control.id_to_acl.values()) == [3, 4, 6, 7]
    assert alice_may_read(authorizer), "the snapshot's ACLs reached the restarted controller's authorizer"
