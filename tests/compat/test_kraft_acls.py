"""ACLs on a KRaft cluster (KIP-801), with kafka-python's admin client: created, described and deleted
through any broker (CreateAcls and DeleteAcls forwarded to the active controller, which writes the
records; DescribeAcls answered by the broker from the ACLs it replayed), and enforced by every
broker once it has replayed them."""

from __future__ import annotations

import uuid

import pytest
from kafka import KafkaProducer
from kafka.admin import (
    ACL,
    ACLFilter,
    ACLOperation,
    ACLPermissionType,
    KafkaAdminClient,
    ResourcePattern,
    ResourcePatternFilter,
)
from kafka.admin import ResourceType as KResourceType
from kafka.errors import TopicAuthorizationFailedError

from tests.support.waiting import wait_until

pytestmark = [pytest.mark.integration, pytest.mark.compat, pytest.mark.xdist_group("kraft")]


def test_kafka_pythons_acl_calls_change_what_every_kraft_broker_allows(kraft_cluster):
    topic = f"kraft-acl-{uuid.uuid4().hex[:8]}"
    kraft_cluster.create_topic(topic, partitions=1, replication_factor=3)
    pattern = ResourcePattern(KResourceType.TOPIC, topic)
    # Every client here is User:ANONYMOUS (PLAINTEXT): on this topic alone, allow it Describe (with an
    # ACL on the topic, allow.everyone.if.no.acl.found no longer applies to it) and deny it Write.
    describe = ACL("User:ANONYMOUS", "*", ACLOperation.DESCRIBE, ACLPermissionType.ALLOW, pattern)
    deny = ACL("User:ANONYMOUS", "*", ACLOperation.WRITE, ACLPermissionType.DENY, pattern)
    admin = KafkaAdminClient(bootstrap_servers=kraft_cluster.bootstrap_servers)
    producer = KafkaProducer(bootstrap_servers=kraft_cluster.bootstrap_servers, acks="all", retries=0)
    try:
        result = admin.create_acls([describe, deny])
        assert result["failed"] == [] and len(result["succeeded"]) == 2, result
        by_topic = ACLFilter(None, None, ACLOperation.ANY, ACLPermissionType.ANY,
                             ResourcePatternFilter(KResourceType.TOPIC, topic, pattern.pattern_type))  # fmt: skip

        def described():
            found, error = admin.describe_acls(by_topic)
            return error.errno == 0 and sorted((a.operation, a.permission_type) for a in found)

        assert wait_until(described, 15, "the ACLs described by the broker") == [
            (ACLOperation.WRITE, ACLPermissionType.DENY),
            (ACLOperation.DESCRIBE, ACLPermissionType.ALLOW),
        ]

        def refused() -> bool:  # the leader enforces the ACL once it has replayed it, within moments
            try:
                producer.send(topic, b"before the ACL reached the leader").get(timeout=15)
            except TopicAuthorizationFailedError:
                return True
            return False

        wait_until(refused, 15, "the partition's leader to refuse the write")

        (deleted,) = admin.delete_acls([by_topic])
        assert [a.principal for a in deleted[1]] == ["User:ANONYMOUS"] * 2, deleted
        wait_until(lambda: described() == [], 15, "the ACLs gone from the broker's answer")
        assert wait_until(
            lambda: producer.send(topic, b"allowed").get(timeout=15).offset >= 0,
            15,
            "the write allowed again",
        )
    finally:
        producer.close()
        admin.close()
