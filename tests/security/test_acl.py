"""The ACL model without a broker: names and codes, ZooKeeper's JSON, and the admin API's filters."""

from __future__ import annotations

import json

import pytest

from kafka_lite.common.errors import InvalidRequestException
from kafka_lite.common.security.auth.acl import (
    CLUSTER_RESOURCE,
    Acl,
    AclBinding,
    AclBindingFilter,
    Operation,
    PermissionType,
    Resource,
    ResourceType,
    from_json,
    to_json,
)
from kafka_lite.common.security.auth.kafka_principal import KafkaPrincipal

pytestmark = pytest.mark.unit

ALICE = KafkaPrincipal.from_string("User:alice")
READ = Acl(ALICE, PermissionType.ALLOW, "*", Operation.READ)
ORDERS = Resource(ResourceType.TOPIC, "orders")


def test_names_are_read_in_any_case_and_with_dashes():
    assert Operation.from_string("read") is Operation.READ
    assert Operation.from_string("cluster-action") is Operation.CLUSTER_ACTION
    assert ResourceType.from_string("transactionalid") is ResourceType.TRANSACTIONAL_ID
    assert PermissionType.from_string("DENY") is PermissionType.DENY


def test_an_unknown_name_is_refused_naming_it_and_the_valid_ones():
    with pytest.raises(
        InvalidRequestException, match=r"'Frobnicate' is not a valid operation.*IdempotentWrite"
    ):
        Operation.from_string("Frobnicate")
    with pytest.raises(InvalidRequestException, match="'Any' is not a valid resource type"):
        ResourceType.from_string("Any")  # ANY is for filters, never a stored ACL


def test_wire_codes_are_kafkas():
    assert [o.code for o in (Operation.ALL, Operation.READ, Operation.IDEMPOTENT_WRITE)] == [2, 3, 12]
    assert [r.code for r in (ResourceType.TOPIC, ResourceType.CLUSTER, ResourceType.TRANSACTIONAL_ID)] == [
        2,
        4,
        5,
    ]
    assert (PermissionType.DENY.code, PermissionType.ALLOW.code) == (2, 3)
    assert Operation.for_code(99) is Operation.UNKNOWN


def test_zookeeper_json_is_kafkas_and_reads_back():
    data = to_json({READ})
    assert json.loads(data) == {
        "version": 1,
        "acls": [{"principal": "User:alice", "permissionType": "Allow", "operation": "Read", "host": "*"}],
    }
    assert list(json.loads(data)["acls"][0]) == ["principal", "permissionType", "operation", "host"]
    assert from_json(data) == {READ}
    # what Kafka's own tool writes reads the same (its whitespace and key order differ)
    kafka_written = (
        b'{"version":1,"acls":[{"host":"10.0.0.1","permissionType":"Deny",'
        b'"operation":"Write","principal":"User:bob"}]}'
    )
    assert from_json(kafka_written) == {
        Acl(KafkaPrincipal.from_string("User:bob"), PermissionType.DENY, "10.0.0.1", Operation.WRITE)
    }
    assert from_json(None) == frozenset()


def test_resource_strings_round_trip():
    assert Resource.from_string(str(ORDERS)) == ORDERS
    assert str(CLUSTER_RESOURCE) == "Cluster:kafka-cluster"
    with pytest.raises(InvalidRequestException):
        Resource.from_string("orders")


def test_filters_match_field_by_field_without_expanding_wildcards():
    binding = AclBinding(ORDERS, READ)
    assert AclBindingFilter().matches(binding)
    assert AclBindingFilter(ResourceType.TOPIC, "orders", "User:alice").matches(binding)
    assert not AclBindingFilter(ResourceType.GROUP).matches(binding)
    assert not AclBindingFilter(principal="User:*").matches(binding)
    assert not AclBindingFilter(operation=Operation.WRITE).matches(binding)


def test_an_exact_filter_is_one_binding_and_the_wire_form_round_trips():
    exact = AclBindingFilter.for_binding(AclBinding(ORDERS, READ))
    assert exact.matches_at_most_one()
    assert AclBindingFilter.from_wire(exact.to_wire()).to_binding() == AclBinding(ORDERS, READ)
    assert AclBindingFilter(ResourceType.TOPIC, "orders").find_indefinite_field() == "principal"


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"operation": Operation.ANY}, "operation of an ACL to create cannot be ANY"),
        ({"operation": Operation.UNKNOWN}, "unknown operation"),
        ({"resource_type": ResourceType.UNKNOWN}, "unknown resource type"),
        ({"resource_name": ""}, "Invalid empty resource name"),
        ({"principal": "alice"}, "Type:name"),
        ({"resource_type": ResourceType.CLUSTER, "resource_name": "c1"}, "only valid name for the CLUSTER"),
    ],
)
def test_a_bad_acl_to_create_is_refused_naming_what_is_wrong(changes, message):
    fields = {**AclBindingFilter.for_binding(AclBinding(ORDERS, READ)).__dict__, **changes}
    with pytest.raises(InvalidRequestException, match=message):
        AclBindingFilter(**fields).to_binding()
