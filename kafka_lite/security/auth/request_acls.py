"""Which ACL each request needs, and what a caller without it gets back: the table, as data.

Mirrors: the ``authorize(...)`` calls of kafka.server.KafkaApis
         (core/src/main/scala/kafka/server/KafkaApis.scala, Kafka 0.11.0; CreatePartitions: 1.0)
Book:    beyond the book: chapter 11 (security, Kafka 0.10.2–0.11)
Differs: nothing: this is the table of what ``kafka_apis.py`` checks, in its order, for the guide to
         render and for the test that walks every API the broker serves with a principal allowed
         nothing (``tests/security/test_authorizer_cluster.py``), which holds the two equal.

Each API lists its checks in the order the handler makes them. A check names the resource (a topic
of the request: each one, separately), the operation, and what the caller gets when it is refused.
Three shapes recur:

* **Describe before anything else on a topic.** A caller who may not even Describe a topic is told
  it does not exist (UNKNOWN_TOPIC_OR_PARTITION), so that an ACL never leaks a topic's name; one
  who may Describe but not Read/Write/Delete gets TOPIC_AUTHORIZATION_FAILED.
* **Cluster actions** (the controller's and the brokers' own requests) refuse the whole request
  with CLUSTER_AUTHORIZATION_FAILED and change nothing; only the brokers' principal, normally a
  super user, may send them.
* **Per-item answers**: a request naming several topics or groups is answered item by item, the
  allowed ones served as usual.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafka_lite.common.errors import Errors
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.security.auth.acl import Operation, ResourceType


@dataclass(frozen=True)
class AclCheck:
    resource_type: ResourceType  # CLUSTER: the one cluster resource; else the request's topic, group or id
    operation: Operation
    error: Errors  # what a refused caller gets
    refused: str  # how: the request as a whole, each item, or left out

    def describe(self) -> str:
        target = "the cluster" if self.resource_type is ResourceType.CLUSTER else f"each {self.resource_type}"
        return f"{self.operation} on {target}"


C = ResourceType.CLUSTER
TOPIC = ResourceType.TOPIC
G = ResourceType.GROUP
X = ResourceType.TRANSACTIONAL_ID
O = Operation  # noqa: E741
E = Errors

_CLUSTER_ACTION = (
    AclCheck(C, O.CLUSTER_ACTION, E.CLUSTER_AUTHORIZATION_FAILED, "the whole request; nothing changes"),
)
_TOPIC_DESCRIBE = AclCheck(
    TOPIC, O.DESCRIBE, E.UNKNOWN_TOPIC_OR_PARTITION, "each partition of the topic, as if it did not exist"
)
_GROUP_READ = AclCheck(G, O.READ, E.GROUP_AUTHORIZATION_FAILED, "the whole request")
# a topic whose configs are refused: its name is not confirmed to a caller who may not even Describe it
_CONFIGS_TOPIC_DESCRIBE = AclCheck(
    TOPIC, O.DESCRIBE, E.UNKNOWN_TOPIC_OR_PARTITION, "the refused topic resource, unnamed"
)
_TXN_WRITE = AclCheck(X, O.WRITE, E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, "the whole request")

# --8<-- [start:request_acls]
REQUEST_ACLS: dict[ApiKeys, tuple[AclCheck, ...]] = {
    ApiKeys.PRODUCE: (
        AclCheck(X, O.WRITE, E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, "every partition (a transactional producer)"),
        AclCheck(C, O.IDEMPOTENT_WRITE, E.CLUSTER_AUTHORIZATION_FAILED, "every partition (an idempotent producer)"),
        _TOPIC_DESCRIBE,
        AclCheck(TOPIC, O.WRITE, E.TOPIC_AUTHORIZATION_FAILED, "each partition of the topic"),
    ),
    ApiKeys.FETCH: (
        _TOPIC_DESCRIBE,
        AclCheck(TOPIC, O.READ, E.TOPIC_AUTHORIZATION_FAILED, "each partition of the topic"),
    ),
    ApiKeys.LIST_OFFSETS: (_TOPIC_DESCRIBE,),
    ApiKeys.METADATA: (
        AclCheck(TOPIC, O.DESCRIBE, E.UNKNOWN_TOPIC_OR_PARTITION, "each topic named; left out of all topics"),
        AclCheck(C, O.CREATE, E.TOPIC_AUTHORIZATION_FAILED, "each topic it would auto-create"),
    ),
    ApiKeys.LEADER_AND_ISR: _CLUSTER_ACTION,
    ApiKeys.STOP_REPLICA: _CLUSTER_ACTION,
    ApiKeys.UPDATE_METADATA: _CLUSTER_ACTION,
    ApiKeys.CONTROLLED_SHUTDOWN: _CLUSTER_ACTION,
    ApiKeys.OFFSET_COMMIT: (
        AclCheck(G, O.READ, E.GROUP_AUTHORIZATION_FAILED, "every partition"),
        _TOPIC_DESCRIBE,
        AclCheck(TOPIC, O.READ, E.TOPIC_AUTHORIZATION_FAILED, "each partition of the topic"),
    ),
    ApiKeys.OFFSET_FETCH: (
        _GROUP_READ,
        AclCheck(TOPIC, O.DESCRIBE, E.UNKNOWN_TOPIC_OR_PARTITION, "each partition named; left out of all"),
    ),
    ApiKeys.FIND_COORDINATOR: (
        AclCheck(G, O.DESCRIBE, E.GROUP_AUTHORIZATION_FAILED, "the whole request (a group)"),
        AclCheck(X, O.DESCRIBE, E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, "the whole request (a transactional id)"),
    ),
    ApiKeys.JOIN_GROUP: (_GROUP_READ,),
    ApiKeys.HEARTBEAT: (_GROUP_READ,),
    ApiKeys.LEAVE_GROUP: (_GROUP_READ,),
    ApiKeys.SYNC_GROUP: (_GROUP_READ,),
    ApiKeys.DESCRIBE_GROUPS: (AclCheck(G, O.DESCRIBE, E.GROUP_AUTHORIZATION_FAILED, "each group"),),
    ApiKeys.LIST_GROUPS: (AclCheck(C, O.DESCRIBE, E.CLUSTER_AUTHORIZATION_FAILED, "the whole request; no groups"),),
    # The SASL exchange is the authenticator's, before any request reaches the handlers; one that
    # arrives later gets ILLEGAL_SASL_STATE, whoever sends it.
    ApiKeys.SASL_HANDSHAKE: (),
    ApiKeys.API_VERSIONS: (),  # anyone may ask what the broker speaks
    ApiKeys.CREATE_TOPICS: (AclCheck(C, O.CREATE, E.CLUSTER_AUTHORIZATION_FAILED, "each topic; none created"),),
    ApiKeys.DELETE_TOPICS: (
        AclCheck(TOPIC, O.DESCRIBE, E.UNKNOWN_TOPIC_OR_PARTITION, "each topic, as if it did not exist"),
        AclCheck(TOPIC, O.DELETE, E.TOPIC_AUTHORIZATION_FAILED, "each topic; not deleted"),
    ),
    ApiKeys.DELETE_RECORDS: (
        _TOPIC_DESCRIBE,
        AclCheck(TOPIC, O.DELETE, E.TOPIC_AUTHORIZATION_FAILED, "each partition of the topic; nothing deleted"),
    ),
    ApiKeys.INIT_PRODUCER_ID: (
        AclCheck(X, O.WRITE, E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, "the whole request (a transactional id)"),
        AclCheck(C, O.IDEMPOTENT_WRITE, E.CLUSTER_AUTHORIZATION_FAILED, "the whole request (no transactional id)"),
    ),
    ApiKeys.OFFSETS_FOR_LEADER_EPOCH: (
        AclCheck(C, O.CLUSTER_ACTION, E.CLUSTER_AUTHORIZATION_FAILED, "every partition"),
    ),
    ApiKeys.ADD_PARTITIONS_TO_TXN: (
        AclCheck(C, O.CLUSTER_ACTION, E.CLUSTER_AUTHORIZATION_FAILED, "v4 (a leader's verification): the whole request"),
        AclCheck(X, O.WRITE, E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, "every partition"),
        AclCheck(TOPIC, O.DESCRIBE, E.UNKNOWN_TOPIC_OR_PARTITION, "its partitions; the rest OPERATION_NOT_ATTEMPTED"),
        AclCheck(TOPIC, O.WRITE, E.TOPIC_AUTHORIZATION_FAILED, "its partitions; the rest OPERATION_NOT_ATTEMPTED"),
    ),
    ApiKeys.ADD_OFFSETS_TO_TXN: (_TXN_WRITE, _GROUP_READ),
    ApiKeys.END_TXN: (_TXN_WRITE,),
    ApiKeys.WRITE_TXN_MARKERS: (
        AclCheck(C, O.CLUSTER_ACTION, E.CLUSTER_AUTHORIZATION_FAILED, "every partition; no marker written"),
    ),
    ApiKeys.TXN_OFFSET_COMMIT: (
        AclCheck(X, O.WRITE, E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, "every partition"),
        AclCheck(G, O.READ, E.GROUP_AUTHORIZATION_FAILED, "every partition"),
        _TOPIC_DESCRIBE,
        AclCheck(TOPIC, O.READ, E.TOPIC_AUTHORIZATION_FAILED, "each partition of the topic"),
    ),
    ApiKeys.DESCRIBE_ACLS: (AclCheck(C, O.DESCRIBE, E.CLUSTER_AUTHORIZATION_FAILED, "the whole request"),),
    ApiKeys.CREATE_ACLS: (AclCheck(C, O.ALTER, E.CLUSTER_AUTHORIZATION_FAILED, "every ACL; none created"),),
    ApiKeys.DELETE_ACLS: (AclCheck(C, O.ALTER, E.CLUSTER_AUTHORIZATION_FAILED, "every filter; none deleted"),),
    ApiKeys.DESCRIBE_CONFIGS: (
        AclCheck(C, O.DESCRIBE_CONFIGS, E.CLUSTER_AUTHORIZATION_FAILED, "each broker resource"),
        AclCheck(TOPIC, O.DESCRIBE_CONFIGS, E.TOPIC_AUTHORIZATION_FAILED, "each topic resource"),
        _CONFIGS_TOPIC_DESCRIBE,
    ),
    ApiKeys.ALTER_CONFIGS: (
        AclCheck(C, O.ALTER_CONFIGS, E.CLUSTER_AUTHORIZATION_FAILED, "each broker resource; not altered"),
        AclCheck(TOPIC, O.ALTER_CONFIGS, E.TOPIC_AUTHORIZATION_FAILED, "each topic resource; not altered"),
        _CONFIGS_TOPIC_DESCRIBE,
    ),
    ApiKeys.SASL_AUTHENTICATE: (),
    ApiKeys.CREATE_PARTITIONS: (
        AclCheck(TOPIC, O.ALTER, E.TOPIC_AUTHORIZATION_FAILED, "each topic; no partition added"),
    ),
    ApiKeys.DESCRIBE_PRODUCERS: (
        AclCheck(TOPIC, O.READ, E.TOPIC_AUTHORIZATION_FAILED, "each partition of the topic"),
    ),
}  # fmt: skip
# --8<-- [end:request_acls]


def request_acls_table() -> list[tuple[str, str, str, str]]:
    """The table as rows (API, what is checked, the error, how it is refused), in api-key order,
    for the guide and the tool to print."""
    return [
        (api.api_name, check.describe(), check.error.name, check.refused)
        for api in sorted(REQUEST_ACLS)
        for check in (REQUEST_ACLS[api] or (None,))
        if check is not None
    ] + [
        (api.api_name, "nothing", "-", "always answered")
        for api in sorted(REQUEST_ACLS)
        if not REQUEST_ACLS[api]
    ]
