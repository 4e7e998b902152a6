"""Authentication and authorization together, end to end: a broker with a SASL_PLAINTEXT listener and
SimpleAclAuthorizer, real clients logging in as users the ACLs name.

The principal the authorizer decides on is the one the SASL exchange proved: ``bob`` may Describe a
topic but not Read it, so his fetches get TOPIC_AUTHORIZATION_FAILED and no records; ``alice`` may
Read the topic but not her group, so she cannot join it; given the group as well, she consumes. The
broker's own principal, ``admin``, is a super user, so its controller's requests to itself pass.
"""

from __future__ import annotations

import uuid

import kafka
import kafka.errors
import pytest
from confluent_kafka import Consumer as CkConsumer
from confluent_kafka import KafkaError, TopicPartition

from kafka_lite.admin import KafkaAdminClient, NewTopic
from kafka_lite.common.security.auth.acl import Acl, Operation, PermissionType, Resource, ResourceType
from kafka_lite.common.security.auth.kafka_principal import KafkaPrincipal
from kafka_lite.producer.kafka_producer import KafkaProducer as LiteProducer
from tests.support.cluster import LiteCluster, sasl_broker

pytestmark = pytest.mark.integration

JAAS = (
    'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
    'password="admin-secret" user_admin="admin-secret" user_alice="alice-secret" user_bob="bob-secret";'
)


def login(user: str) -> dict:
    return {"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "PLAIN",
            "sasl_plain_username": user, "sasl_plain_password": f"{user}-secret"}  # fmt: skip


@pytest.fixture(scope="module")
def secured(zookeeper, tmp_path_factory):
    cluster = LiteCluster(
        zookeeper.connect_string,
        tmp_path_factory.mktemp("secure"),
        brokers=1,
        **sasl_broker(JAAS, **{"authorizer.class.name": "SimpleAclAuthorizer", "super.users": "User:admin"}),
    )
    cluster.start()
    yield cluster
    cluster.stop()


def allow(secured, user: str, operation: Operation, resource_type: ResourceType, name: str) -> None:
    acl = Acl(KafkaPrincipal.from_string(f"User:{user}"), PermissionType.ALLOW, "*", operation)
    secured.servers[0].authorizer.add_acls({acl}, Resource(resource_type, name))


@pytest.fixture
def topic(secured) -> str:
    """A topic with three records, written by the super user."""
    name = f"secure-{uuid.uuid4().hex[:8]}"
    admin = KafkaAdminClient(secured.bootstrap_servers, **login("admin"))
    try:
        admin.create_topics([NewTopic(name, 1, 1)])
    finally:
        admin.close()
    secured.wait_for_leaders(name, 1)
    producer = LiteProducer(bootstrap_servers=secured.bootstrap_servers, **login("admin"))
    try:
        for i in range(3):
            producer.send(name, f"record {i}".encode()).get(30)
    finally:
        producer.close()
    return name


def test_without_read_a_consumer_gets_topic_authorization_failed_and_no_records(secured, topic):
    allow(secured, "bob", Operation.DESCRIBE, ResourceType.TOPIC, topic)
    consumer = kafka.KafkaConsumer(bootstrap_servers=secured.bootstrap_servers, auto_offset_reset="earliest",
                                   enable_auto_commit=False, **login("bob"))  # fmt: skip
    try:
        consumer.assign([kafka.TopicPartition(topic, 0)])
        with pytest.raises(kafka.errors.TopicAuthorizationFailedError):
            for _ in range(50):  # until the first fetch is answered
                assert not consumer.poll(200), "records reached a principal without Read"
    finally:
        consumer.close()

    # librdkafka reports the same refusal as an error event, with no message ever delivered
    ck = CkConsumer({"bootstrap.servers": secured.bootstrap_servers, "group.id": f"bob-{topic}",
                     "security.protocol": "SASL_PLAINTEXT", "sasl.mechanisms": "PLAIN",
                     "sasl.username": "bob", "sasl.password": "bob-secret", "auto.offset.reset": "earliest",
                     "enable.auto.commit": False})  # fmt: skip
    try:
        ck.assign([TopicPartition(topic, 0, 0)])
        errors = []
        for _ in range(40):
            message = ck.poll(0.5)
            if message is None:
                continue
            assert message.error() is not None, "a record reached a principal without Read"
            errors.append(message.error().code())
            if KafkaError.TOPIC_AUTHORIZATION_FAILED in errors:
                break
        assert KafkaError.TOPIC_AUTHORIZATION_FAILED in errors, errors
    finally:
        ck.close()


def test_without_group_read_a_consumer_cannot_join_and_with_it_consumes(secured, topic):
    allow(secured, "alice", Operation.READ, ResourceType.TOPIC, topic)
    group = f"alice-{topic}"
    consumer = kafka.KafkaConsumer(topic, group_id=group, bootstrap_servers=secured.bootstrap_servers,
                                   auto_offset_reset="earliest", **login("alice"))  # fmt: skip
    try:
        with pytest.raises(kafka.errors.GroupAuthorizationFailedError):
            for _ in range(50):
                assert not consumer.poll(200), "records reached a member of a group it may not read"
    finally:
        consumer.close()

    allow(secured, "alice", Operation.READ, ResourceType.GROUP, group)
    consumer = kafka.KafkaConsumer(topic, group_id=group, bootstrap_servers=secured.bootstrap_servers,
                                   auto_offset_reset="earliest", consumer_timeout_ms=20_000, **login("alice"))  # fmt: skip
    try:
        assert [m.value for _, m in zip(range(3), consumer, strict=False)] == [
            b"record 0",
            b"record 1",
            b"record 2",
        ]
    finally:
        consumer.close()
