"""An admin client: topics, the cluster, and consumer groups, over the Kafka protocol.

Mirrors: org.apache.kafka.clients.admin.AdminClient (KIP-117, Kafka 0.11.0): createTopics,
         deleteTopics, listTopics, describeCluster, describeConfigs, alterConfigs, and the ACL calls
         (KIP-140). Method names are Kafka's in snake_case (``list_consumer_groups`` ...), as
         kafka-python 2 named them.
Book:    chapter 7 (topic creation goes to the controller, which writes the assignment to ZooKeeper);
         chapter 5, 5.2 (the coordinator of a group, its states and members, committed offsets)
Differs: calls block until done or ``request.timeout.ms`` (Kafka's return futures); one request at a
         time. Create and delete go to the controller named in the latest metadata, as Kafka 0.11
         sends them. The calls later Kafkas added, each named with its version in its docstring:
         createPartitions (1.0), deleteRecords (1.1), the consumer-group calls (2.0, KIP-222) that
         replace what 0.10.1's Scala ``kafka.admin.AdminClient`` did for kafka-consumer-groups.sh,
         alterConsumerGroupOffsets and listOffsets (2.5, KIP-396).
         A retriable error (no coordinator yet, a coordinator still loading, a moved leader) is
         retried after ``retry.backoff.ms`` until the request timeout, as Kafka's AdminClient retries.

Usage::

    admin = KafkaAdminClient(bootstrap_servers="127.0.0.1:9092")
    admin.create_topics([NewTopic("orders", num_partitions=3, replication_factor=1)])
    admin.list_topics()
    admin.describe_consumer_groups(["billing"])

Where each group call goes: ListGroups to every broker (each knows only the groups it coordinates);
DescribeGroups, OffsetFetch and OffsetCommit to the group's coordinator, found with FindCoordinator
(the leader of the ``__consumer_offsets`` partition the group id hashes to); ListOffsets to each
partition's leader.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import NamedTuple, TypeVar

from kafka_lite.clients.acl_resource import ACL, ACLFilter
from kafka_lite.clients.client_utils import parse_bootstrap
from kafka_lite.clients.metadata import Cluster, Metadata, Node
from kafka_lite.clients.network_client import ClientRequest, ClientResponse, NetworkClient
from kafka_lite.common.errors import (
    DisconnectException,
    Errors,
    KafkaException,
    RetriableException,
    TimeoutException,
)
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.types import SchemaException
from kafka_lite.common.security.auth.acl import AclBindingFilter
from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.consumer.internals.consumer_protocol import PROTOCOL_TYPE, deserialize_assignment
from kafka_lite.consumer.offset_and_metadata import OffsetAndMetadata
from kafka_lite.network.channel_builders import client_channel_builder
from kafka_lite.network.selector import Selector

T = TypeVar("T")

# An OffsetCommit from outside the group's membership (Kafka's OffsetCommitRequest constants): the
# coordinator takes it only while the group is Empty, which is how Kafka's reset tool commits.
DEFAULT_GENERATION_ID = -1
UNKNOWN_MEMBER_ID = ""
DEFAULT_RETENTION_TIME = -1  # the broker's offsets.retention.minutes
GROUP_COORDINATOR_TYPE = 0  # FindCoordinator v1's coordinator_type: 0 a group, 1 a transaction


@dataclass
class NewTopic:
    name: str
    num_partitions: int = -1
    replication_factor: int = -1
    replica_assignment: dict[int, list[int]] = field(default_factory=dict)
    configs: dict[str, str] = field(default_factory=dict)

    def to_request(self) -> dict:
        return {
            "topic": self.name,
            "num_partitions": self.num_partitions,
            "replication_factor": self.replication_factor,
            "replica_assignment": [
                {"partition_id": p, "replicas": r} for p, r in sorted(self.replica_assignment.items())
            ],
            "config_entries": [
                {"config_name": k, "config_value": v} for k, v in sorted(self.configs.items())
            ],
        }


@dataclass
class NewPartitions:
    """How many partitions a topic should have, and where the new ones' replicas go (Kafka 1.0's
    ``NewPartitions``, kafka-python's fields): what CreatePartitions takes per topic. Each entry of
    ``new_assignments`` lists one new partition's replicas, preferred leader first."""

    total_count: int
    new_assignments: list[list[int]] | None = None


class ConfigResourceType(enum.IntEnum):
    """What a config belongs to, as DescribeConfigs and AlterConfigs code it (Kafka's
    ``ConfigResource.Type``)."""

    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    BROKER = 4


@dataclass
class ConfigResource:
    """A topic's or a broker's configs (Kafka 0.11's ``ConfigResource``, kafka-python's fields):
    ``configs`` names the keys to describe, or maps keys to the values to set. The type may be given
    by name (``"topic"``), as kafka-python takes it."""

    resource_type: ConfigResourceType | str
    name: str
    configs: list[str] | dict[str, str] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.resource_type, ConfigResourceType):
            try:
                self.resource_type = ConfigResourceType[str(self.resource_type).upper()]
            except KeyError:
                names = ", ".join(t.name.lower() for t in ConfigResourceType)
                raise ValueError(
                    f"ConfigResource: unknown resource type {self.resource_type!r} (one of {names})"
                ) from None


@dataclass(frozen=True)
class ConfigEntry:
    """One described config (Kafka 0.11's ``ConfigEntry``): its value (None for a secret), and whether
    it is the definition's default, set in the broker's file, or a topic's override (``source``, from
    DescribeConfigs v1, Kafka 1.1's: 1 topic, 4 broker file, 5 default)."""

    name: str
    value: str | None
    source: int
    read_only: bool
    is_sensitive: bool

    @property
    def is_default(self) -> bool:
        return self.source == CONFIG_SOURCE_DEFAULT


CONFIG_SOURCE_TOPIC = 1  # DescribeConfigsResponse.ConfigSource.TOPIC_CONFIG
CONFIG_SOURCE_DEFAULT = 5  # DescribeConfigsResponse.ConfigSource.DEFAULT_CONFIG


class ConsumerGroupListing(NamedTuple):
    """One group a broker coordinates (Kafka 2.0's ``ConsumerGroupListing``, KIP-222); a tuple, as
    kafka-python's ``list_consumer_groups`` returns ``(group_id, protocol_type)``."""

    group_id: str
    protocol_type: str

    @property
    def is_simple_consumer_group(self) -> bool:
        """A group that only stores offsets, with no membership (its protocol type is empty)."""
        return self.protocol_type == ""


@dataclass(frozen=True)
class MemberDescription:
    """One member of a group (Kafka 2.0's ``MemberDescription``, KIP-222; ``member_id`` is its ``consumerId``):
    the host is the address the coordinator saw the member's JoinGroup come from."""

    member_id: str
    client_id: str
    host: str
    assignment: tuple[TopicPartition, ...] = ()


@dataclass(frozen=True)
class ConsumerGroupDescription:
    """A group as its coordinator describes it (Kafka 2.0's ``ConsumerGroupDescription``, KIP-222).

    ``state`` is the coordinator's state name (Empty, PreparingRebalance, AwaitingSync, Stable, or
    Dead for a group it does not know). Only a Stable group has a ``partition_assignor`` and
    members with assignments: during a rebalance the coordinator holds no assignment to show."""

    group_id: str
    state: str
    protocol_type: str
    partition_assignor: str
    members: tuple[MemberDescription, ...]
    coordinator: Node

    @property
    def is_simple_consumer_group(self) -> bool:
        return self.protocol_type == ""


@dataclass(frozen=True)
class OffsetSpec:
    """Which offset of a partition ``list_offsets`` asks for (Kafka 2.5's ``OffsetSpec``): the earliest,
    the latest (the log end offset), or the first offset whose record's timestamp is at or after a
    time, with ListOffsets' own timestamps -2 and -1 standing for earliest and latest."""

    timestamp: int

    EARLIEST_TIMESTAMP = -2
    LATEST_TIMESTAMP = -1

    @classmethod
    def earliest(cls) -> OffsetSpec:
        return cls(cls.EARLIEST_TIMESTAMP)

    @classmethod
    def latest(cls) -> OffsetSpec:
        return cls(cls.LATEST_TIMESTAMP)

    @classmethod
    def for_timestamp(cls, timestamp_ms: int) -> OffsetSpec:
        if timestamp_ms < 0:
            raise KafkaException(f"A timestamp to look offsets up by cannot be negative: {timestamp_ms}")
        return cls(timestamp_ms)


@dataclass(frozen=True)
class ListOffsetsResultInfo:
    """An offset ``list_offsets`` found (Kafka 2.5's ``ListOffsetsResultInfo``). For a time with no record
    at or after it, the offset and the timestamp are -1, as the broker answers."""

    offset: int
    timestamp: int


class KafkaAdminClient:
    def __init__(
        self,
        bootstrap_servers: str | list[str],
        client_id: str = "kafka-lite-admin",
        request_timeout_ms: int = 30_000,
        retry_backoff_ms: int = 100,
        time: Time = SYSTEM,
        security_protocol: str = "PLAINTEXT",
        sasl_mechanism: str = "PLAIN",
        sasl_plain_username: str | None = None,
        sasl_plain_password: str | None = None,
    ) -> None:
        self.time = time
        self.request_timeout_ms = request_timeout_ms
        self.retry_backoff_ms = retry_backoff_ms
        self.metadata = Metadata(time=time)
        self.metadata.bootstrap(parse_bootstrap(bootstrap_servers), time.milliseconds())
        channel_builder = client_channel_builder(
            security_protocol, sasl_mechanism, sasl_plain_username, sasl_plain_password, client_id
        )
        self.client = NetworkClient(
            Selector(time=time, channel_builder=channel_builder),
            client_id,
            request_timeout_ms=request_timeout_ms,
            time=time,
            metadata=self.metadata,
        )

    # -- the calls ------------------------------------------------------------------------------------------

    def describe_cluster(self) -> Cluster:
        """The cluster as a broker describes it now: brokers, controller, cluster id, partitions
        (Kafka 0.11's ``describeCluster``).

        As Kafka's describeCluster, a Metadata request of the call's own to the least loaded broker:
        the client's metadata refresh waits ``retry.backoff.ms`` after the last one, and a tool that
        makes several calls in a row (each needing fresh metadata) would wait that long for each."""

        deadline = self.time.milliseconds() + self.request_timeout_ms
        while True:
            try:
                response = self._call(
                    self._node(self._least_loaded_node()), ApiKeys.METADATA, 1, {"topics": None}
                )
            except DisconnectException:
                # A broker that just died is still in the metadata: its refused connection blacks it
                # out for the reconnect backoff, so the next least loaded node is another one.
                if self.time.milliseconds() >= deadline:
                    raise
                continue
            if response["brokers"]:  # a broker that has not yet seen the cluster knows no brokers
                cluster = Cluster.from_metadata_response(response)
                self.metadata.update(cluster, self.time.milliseconds())
                return cluster
            if self.time.milliseconds() + self.retry_backoff_ms >= deadline:
                raise TimeoutException(f"Timed out after {self.request_timeout_ms} ms waiting for metadata")
            self.time.sleep(self.retry_backoff_ms)

    def list_topics(self) -> list[str]:
        return sorted(self.describe_cluster().topics())

    def create_topics(
        self, topics: list[NewTopic], timeout_ms: int = 30_000, validate_only: bool = False
    ) -> None:
        """Create topics through the controller; raise the first per-topic error, named (Kafka 0.11's
        ``createTopics``)."""
        controller = self.describe_cluster().controller
        if controller is None:
            raise KafkaException("The cluster has no controller right now; retry later")
        body = {
            "create_topic_requests": [t.to_request() for t in topics],
            "timeout": timeout_ms,
            "validate_only": validate_only,
        }
        response = self._call(controller, ApiKeys.CREATE_TOPICS, 2, body)
        for result in response["topic_errors"]:
            error = Errors.for_code(result["error_code"])
            if error is not Errors.NONE:
                raise error.exception(
                    f"{result['topic']}: {result.get('error_message') or error.description}"
                )

    def create_partitions(
        self,
        topic_partitions: dict[str, NewPartitions],
        timeout_ms: int = 30_000,
        validate_only: bool = False,
    ) -> None:
        """Grow topics to ``NewPartitions.total_count`` partitions through the controller (Kafka 1.0's
        CreatePartitions); raise the first per-topic error, named."""
        controller = self.describe_cluster().controller
        if controller is None:
            raise KafkaException("The cluster has no controller right now; retry later")
        body = {
            "topic_partitions": [
                {"topic": t, "new_partitions": {"count": p.total_count, "assignment": p.new_assignments}}
                for t, p in topic_partitions.items()
            ],
            "timeout": timeout_ms,
            "validate_only": validate_only,
        }
        response = self._call(controller, ApiKeys.CREATE_PARTITIONS, 1, body)
        for result in response["topic_errors"]:
            error = Errors.for_code(result["error_code"])
            if error is not Errors.NONE:
                raise error.exception(
                    f"{result['topic']}: {result.get('error_message') or error.description}"
                )

    # -- configs --------------------------------------------------------------------------------------------

    def describe_configs(
        self, config_resources: list[ConfigResource], include_synonyms: bool = False
    ) -> dict[tuple[ConfigResourceType, str], dict[str, ConfigEntry]]:
        """Each resource's configs by name (those ``ConfigResource.configs`` names, else all): a
        broker's from that broker, topics' from any (Kafka 0.11's ``describeConfigs``)."""
        results = {}
        for node, resources in self._config_nodes(config_resources).items():
            body = {
                "resources": [
                    {
                        "resource_type": int(r.resource_type),
                        "resource_name": r.name,
                        "config_names": list(r.configs) if r.configs else None,
                    }
                    for r in resources
                ],
                "include_synonyms": include_synonyms,
            }
            for r in self._call(node, ApiKeys.DESCRIBE_CONFIGS, 1, body)["resources"]:
                what = f"{ConfigResourceType(r['resource_type']).name.lower()} '{r['resource_name']}'"
                _raise_for_message(r["error_code"], r["error_message"], f"DescribeConfigs of {what}")
                results[(ConfigResourceType(r["resource_type"]), r["resource_name"])] = {
                    c["config_name"]: ConfigEntry(
                        c["config_name"],
                        c["config_value"],
                        c["config_source"],
                        c["read_only"],
                        c["is_sensitive"],
                    )
                    for c in r["config_entries"]
                }
        return results

    def alter_configs(self, config_resources: list[ConfigResource], validate_only: bool = False) -> None:
        """Replace each resource's overrides with ``ConfigResource.configs`` (the whole set: a key left
        out goes back to its default); raise the first error, named (Kafka 0.11's ``alterConfigs``)."""
        for node, resources in self._config_nodes(config_resources).items():
            body = {
                "resources": [
                    {
                        "resource_type": int(r.resource_type),
                        "resource_name": r.name,
                        "config_entries": [
                            {"config_name": k, "config_value": v} for k, v in dict(r.configs or {}).items()
                        ],
                    }
                    for r in resources
                ],
                "validate_only": validate_only,
            }
            for r in self._call(node, ApiKeys.ALTER_CONFIGS, 0, body)["resources"]:
                what = f"{ConfigResourceType(r['resource_type']).name.lower()} '{r['resource_name']}'"
                _raise_for_message(r["error_code"], r["error_message"], f"AlterConfigs of {what}")

    def _config_nodes(self, resources: list[ConfigResource]) -> dict[Node, list[ConfigResource]]:
        """A broker's resource goes to that broker; the others to the least loaded one."""
        by_node: dict[Node, list[ConfigResource]] = {}
        any_node = None
        for r in resources:
            if r.resource_type is ConfigResourceType.BROKER and r.name.isdigit():
                self.describe_cluster()
                node = self._node(r.name)
            else:
                any_node = any_node or self._node(self._least_loaded_node())
                node = any_node
            by_node.setdefault(node, []).append(r)
        return by_node

    # -- records --------------------------------------------------------------------------------------------

    def delete_records(
        self, records_to_delete: dict[TopicPartition, int], timeout_ms: int = 30_000
    ) -> dict[TopicPartition, int]:
        """Delete every record below each offset (-1: below the high watermark), at each partition's
        leader; return each partition's low watermark. Raise the first error, named (Kafka 1.1's
        ``deleteRecords``, over 0.11's DeleteRecords request)."""
        cluster = self.describe_cluster()
        by_leader: dict[Node, list[TopicPartition]] = {}
        for tp in sorted(records_to_delete):
            if tp[0] not in cluster.topics():
                raise Errors.UNKNOWN_TOPIC_OR_PARTITION.exception(f"{_name(tp)}: the topic does not exist")
            leader = cluster.leader_for(*tp)
            if leader is None:
                raise Errors.LEADER_NOT_AVAILABLE.exception(f"{_name(tp)} has no leader right now")
            by_leader.setdefault(leader, []).append(tp)
        low_watermarks = {}
        for leader, partitions in by_leader.items():
            topics = _by_topic(partitions, lambda tp: {"partition": tp[1], "offset": records_to_delete[tp]})
            body = {
                "topics": [{"topic": t, "partitions": ps} for t, ps in topics.items()],
                "timeout": timeout_ms,
            }
            response = self._call(leader, ApiKeys.DELETE_RECORDS, 0, body)
            for topic in response["topics"]:
                for p in topic["partitions"]:
                    tp = TopicPartition(topic["topic"], p["partition"])
                    _raise_for(p["error_code"], f"DeleteRecords of {_name(tp)} at broker {leader.id}")
                    low_watermarks[tp] = p["low_watermark"]
        return low_watermarks

    def describe_producers(
        self, partitions: list[TopicPartition], broker_id: int | None = None
    ) -> dict[TopicPartition, list[dict]]:
        """Each partition's producers as its leader's replica knows them, or ``broker_id``'s (Kafka
        3.0's ``describeProducers``, KIP-664): producer id and epoch, last sequence and timestamp,
        the epoch of the coordinator that wrote its last marker, and where its open transaction
        began (-1: none). Raise the first partition's error, named."""
        cluster = self.describe_cluster()
        by_node: dict[Node, list[TopicPartition]] = {}
        for tp in sorted(partitions):
            if tp[0] not in cluster.topics():
                raise Errors.UNKNOWN_TOPIC_OR_PARTITION.exception(f"{_name(tp)}: the topic does not exist")
            node = cluster.nodes.get(broker_id) if broker_id is not None else cluster.leader_for(*tp)
            if node is None:
                what = (
                    f"broker {broker_id} is not alive"
                    if broker_id is not None
                    else "it has no leader right now"
                )
                raise Errors.LEADER_NOT_AVAILABLE.exception(f"{_name(tp)}: {what}")
            by_node.setdefault(node, []).append(tp)
        producers = {}
        for node, tps in by_node.items():
            topics = _by_topic(tps, lambda tp: tp[1])
            body = {"topics": [{"topic": t, "partition_indexes": ps} for t, ps in topics.items()]}
            response = self._call(node, ApiKeys.DESCRIBE_PRODUCERS, 0, body)
            for topic in response["topics"]:
                for p in topic["partitions"]:
                    tp = TopicPartition(topic["topic"], p["partition_index"])
                    _raise_for(p["error_code"], f"DescribeProducers of {_name(tp)} at broker {node.id}")
                    producers[tp] = p["active_producers"]
        return producers

    def abort_transaction(
        self, tp: TopicPartition, producer_id: int, producer_epoch: int, coordinator_epoch: int
    ) -> None:
        """Write an ABORT marker for ``producer_id``'s open transaction on ``tp``, as its coordinator
        would (Kafka 3.0's ``abortTransaction``, KIP-664: WriteTxnMarkers sent by the admin to the
        partition's leader, which only a principal allowed ClusterAction may send). For a
        transaction no coordinator knows of: a hanging one."""
        leader = self.describe_cluster().leader_for(*tp)
        if leader is None:
            raise Errors.LEADER_NOT_AVAILABLE.exception(f"{_name(tp)} has no leader right now")
        marker = {
            "producer_id": producer_id,
            "producer_epoch": producer_epoch,
            "transaction_result": False,
            "topics": [{"topic": tp[0], "partitions": [tp[1]]}],
            "coordinator_epoch": coordinator_epoch,
        }
        response = self._call(leader, ApiKeys.WRITE_TXN_MARKERS, 0, {"transaction_markers": [marker]})
        for result in response["transaction_markers"]:
            for topic in result["topics"]:
                for p in topic["partitions"]:
                    _raise_for(p["error_code"], f"the ABORT marker for producer {producer_id} on {_name(tp)}")

    def delete_topics(self, topics: list[str], timeout_ms: int = 30_000) -> None:
        """Delete topics through the controller, which answers once they are gone from its metadata;
        raise the first per-topic error, named (REQUEST_TIMED_OUT: still there at ``timeout_ms``,
        as when the brokers' ``delete.topic.enable`` is false) (Kafka 0.11's ``deleteTopics``)."""
        controller = self.describe_cluster().controller
        if controller is None:
            raise KafkaException("The cluster has no controller right now; retry later")
        response = self._call(
            controller, ApiKeys.DELETE_TOPICS, 1, {"topics": list(topics), "timeout": timeout_ms}
        )
        for result in response["topic_error_codes"]:
            error = Errors.for_code(result["error_code"])
            if error is not Errors.NONE:
                raise error.exception(f"{result['topic']}: {error.description}")

    # -- consumer groups ------------------------------------------------------------------------------------

    def list_consumer_groups(self) -> list[ConsumerGroupListing]:
        """Every group of the cluster, sorted by id: ListGroups to each broker, since a broker knows only
        the groups it coordinates. Groups of any protocol type come back (Kafka Connect's workers
        form "connect" groups); ``ConsumerGroupListing.protocol_type`` tells them apart (Kafka 2.0's
        ``listConsumerGroups``, KIP-222)."""
        groups: set[ConsumerGroupListing] = set()
        for node in sorted(self.describe_cluster().nodes.values(), key=lambda n: n.id):
            groups.update(
                self._retrying(lambda node=node: self._list_groups(node), f"ListGroups at {node.id}")
            )
        return sorted(groups)

    def describe_consumer_groups(self, group_ids: Iterable[str]) -> list[ConsumerGroupDescription]:
        """Each group as its coordinator describes it, in the order asked. A group the coordinator
        does not know comes back in state Dead, with no members, as the broker answers (Kafka 2.0's
        ``describeConsumerGroups``, KIP-222)."""
        return [
            self._retrying(lambda g=group_id: self._describe_group(g), f"describing group '{group_id}'")
            for group_id in group_ids
        ]

    def list_consumer_group_offsets(
        self, group_id: str, partitions: Iterable[TopicPartition] | None = None
    ) -> dict[TopicPartition, OffsetAndMetadata]:
        """The group's committed offsets: for ``partitions``, or for every partition it has committed
        (``None``). A partition without a committed offset is left out, as Kafka's consumer leaves
        out the -1 the coordinator answers for it (Kafka 2.0's ``listConsumerGroupOffsets``, KIP-222)."""
        wanted = None if partitions is None else sorted(set(partitions))
        return self._retrying(
            lambda: self._fetch_offsets(group_id, wanted), f"the committed offsets of group '{group_id}'"
        )

    def alter_consumer_group_offsets(
        self, group_id: str, offsets: dict[TopicPartition, OffsetAndMetadata]
    ) -> None:
        """Commit ``offsets`` for the group from outside it: generation -1 and no member id, as Kafka's
        reset tool commits. The coordinator takes such a commit only while the group has no active
        members (state Empty, or a group it does not know yet); otherwise it answers UNKNOWN_MEMBER_ID
        and this raises, naming the partitions (Kafka 2.5's ``alterConsumerGroupOffsets``, KIP-396)."""
        if not offsets:
            return
        self._retrying(
            lambda: self._commit_offsets(group_id, offsets), f"committing offsets for group '{group_id}'"
        )

    def list_offsets(
        self, specs: dict[TopicPartition, OffsetSpec]
    ) -> dict[TopicPartition, ListOffsetsResultInfo]:
        """For each partition, the offset its spec asks for, from the partition's leader (ListOffsets
        v1, KIP-79): the log start offset, the log end offset, or the first offset at a time (Kafka
        2.5's ``listOffsets``, KIP-396)."""
        # A partition the cluster does not have fails at once (retrying cannot make it appear).
        cluster = self.describe_cluster()
        for tp in sorted(specs):
            if tp not in cluster.partitions:
                count = len(cluster.partitions_for_topic(tp[0]))
                known = f": {tp[0]} has partitions 0-{count - 1}" if count else ""
                raise Errors.UNKNOWN_TOPIC_OR_PARTITION.exception(
                    f"Partition {_name(tp)} does not exist{known}"
                )
        results: dict[TopicPartition, ListOffsetsResultInfo] = {}

        def remaining() -> None:
            results.update(self._list_offsets({tp: s for tp, s in specs.items() if tp not in results}))

        self._retrying(remaining, "ListOffsets")
        return {tp: results[tp] for tp in specs}

    def find_coordinator(self, group_id: str) -> Node:
        """The broker coordinating ``group_id`` (FindCoordinator v1, asked of the least loaded broker):
        kafka-python's call; Kafka's Admin (2.0, KIP-222) finds coordinators inside its group calls."""
        return self._retrying(
            lambda: self._find_coordinator(group_id), f"the coordinator of group '{group_id}'"
        )

    # -- ACLs (Kafka 0.11's DescribeAcls, CreateAcls, DeleteAcls; kafka-python's return shapes) ----------

    def describe_acls(self, acl_filter: ACLFilter) -> tuple[list[ACL], Errors]:
        """Every ACL the filter matches, and the broker's error (NONE, or SECURITY_DISABLED when it
        has no authorizer); raises on CLUSTER_AUTHORIZATION_FAILED (Describe on the cluster)."""
        body = acl_filter.to_binding_filter().to_wire()
        response = self._call(self._node(self._least_loaded_node()), ApiKeys.DESCRIBE_ACLS, 0, body)
        error = Errors.for_code(response["error_code"])
        if error is Errors.CLUSTER_AUTHORIZATION_FAILED:
            _raise_for_message(error.code, response["error_message"], "describe_acls")
        acls = [
            ACL.from_binding_filter(AclBindingFilter.from_wire({**r, **a}))
            for r in response["resources"]
            for a in r["acls"]
        ]
        return acls, error

    def create_acls(self, acls: list[ACL]) -> dict[str, list]:
        """``{"succeeded": [ACL...], "failed": [(ACL, exception)...]}``, as kafka-python answers."""
        body = {"creations": [acl.to_binding_filter().to_wire() for acl in acls]}
        response = self._call(self._node(self._least_loaded_node()), ApiKeys.CREATE_ACLS, 0, body)
        result: dict[str, list] = {"succeeded": [], "failed": []}
        for acl, r in zip(acls, response["creation_responses"], strict=True):
            error = Errors.for_code(r["error_code"])
            if error is Errors.NONE:
                result["succeeded"].append(acl)
            else:
                result["failed"].append((acl, error.exception(r["error_message"] or error.description)))
        return result

    def delete_acls(
        self, acl_filters: list[ACLFilter]
    ) -> list[tuple[ACLFilter, list[tuple[ACL, Errors]], Errors]]:
        """Per filter: the filter, the ACLs it deleted (each with its error), and the filter's error."""
        body = {"filters": [f.to_binding_filter().to_wire() for f in acl_filters]}
        response = self._call(self._node(self._least_loaded_node()), ApiKeys.DELETE_ACLS, 0, body)
        results = []
        for acl_filter, r in zip(acl_filters, response["filter_responses"], strict=True):
            deleted = [
                (ACL.from_binding_filter(AclBindingFilter.from_wire(m)), Errors.for_code(m["error_code"]))
                for m in r["matching_acls"]
            ]
            results.append((acl_filter, deleted, Errors.for_code(r["error_code"])))
        return results

    def close(self) -> None:
        self.client.close_all()

    # -- one attempt of each group call ---------------------------------------------------------------------

    def _list_groups(self, node: Node) -> list[ConsumerGroupListing]:
        response = self._call(node, ApiKeys.LIST_GROUPS, 1, {})
        _raise_for(response["error_code"], f"ListGroups at broker {node.id}")
        return [ConsumerGroupListing(g["group_id"], g["protocol_type"]) for g in response["groups"]]

    def _describe_group(self, group_id: str) -> ConsumerGroupDescription:
        coordinator = self._find_coordinator(group_id)
        response = self._call(coordinator, ApiKeys.DESCRIBE_GROUPS, 1, {"group_ids": [group_id]})
        group = next((g for g in response["groups"] if g["group_id"] == group_id), None)
        if group is None:
            raise KafkaException(
                f"The DescribeGroups response of broker {coordinator.id} has no group '{group_id}'"
            )
        _raise_for(group["error_code"], f"describing group '{group_id}' at broker {coordinator.id}")
        members = tuple(
            MemberDescription(
                m["member_id"],
                m["client_id"],
                m["client_host"],
                _assignment(group_id, group["protocol_type"], m["member_id"], m["member_assignment"]),
            )
            for m in group["members"]
        )
        return ConsumerGroupDescription(
            group_id, group["state"], group["protocol_type"], group["protocol"], members, coordinator
        )

    def _fetch_offsets(
        self, group_id: str, partitions: list[TopicPartition] | None
    ) -> dict[TopicPartition, OffsetAndMetadata]:
        coordinator = self._find_coordinator(group_id)
        topics = None if partitions is None else _by_topic(partitions, lambda tp: tp[1])
        response = self._call(
            coordinator,
            ApiKeys.OFFSET_FETCH,
            3,
            {"group_id": group_id, "topics": None if topics is None else [
                {"topic": t, "partitions": ps} for t, ps in topics.items()]},
        )  # fmt: skip
        _raise_for(response["error_code"], f"fetching the offsets of group '{group_id}'")
        offsets = {}
        for topic in response["responses"]:
            for p in topic["partition_responses"]:
                tp = TopicPartition(topic["topic"], p["partition"])
                if Errors.for_code(p["error_code"]) is Errors.UNKNOWN_TOPIC_OR_PARTITION:
                    # not retried: no refresh of our metadata makes the coordinator know the partition
                    raise KafkaException(
                        f"Fetching the offset of group '{group_id}' for {_name(tp)}: Partition "
                        f"{_name(tp)} may not exist or user may not have Describe access to topic"
                    )
                _raise_for(p["error_code"], f"fetching the offset of group '{group_id}' for {_name(tp)}")
                if p["offset"] >= 0:
                    offsets[tp] = OffsetAndMetadata(p["offset"], p["metadata"] or "")
        return offsets

    def _commit_offsets(self, group_id: str, offsets: dict[TopicPartition, OffsetAndMetadata]) -> None:
        coordinator = self._find_coordinator(group_id)
        topics = _by_topic(
            sorted(offsets),
            lambda tp: {"partition": tp[1], "offset": offsets[tp].offset, "metadata": offsets[tp].metadata},
        )
        body = {
            "group_id": group_id,
            "group_generation_id": DEFAULT_GENERATION_ID,
            "member_id": UNKNOWN_MEMBER_ID,
            "retention_time": DEFAULT_RETENTION_TIME,
            "topics": [{"topic": t, "partitions": ps} for t, ps in topics.items()],
        }
        response = self._call(coordinator, ApiKeys.OFFSET_COMMIT, 3, body)
        failed: dict[Errors, list[TopicPartition]] = {}
        for topic in response["responses"]:
            for p in topic["partition_responses"]:
                error = Errors.for_code(p["error_code"])
                if error is not Errors.NONE:
                    failed.setdefault(error, []).append((topic["topic"], p["partition"]))
        if not failed:
            return
        error, partitions = next(iter(failed.items()))
        where = ", ".join(map(_name, sorted(partitions)))
        if error is Errors.UNKNOWN_MEMBER_ID:
            # what the coordinator answers a commit from outside a group that has members
            raise error.exception(
                f"The coordinator of group '{group_id}' refused the commit for {where}: the group has "
                "active members, and only they may commit while it does (UNKNOWN_MEMBER_ID)"
            )
        raise error.exception(f"Committing offsets for group '{group_id}' failed for {where}: "
                              f"{error.name}: {error.description}")  # fmt: skip

    def _list_offsets(
        self, specs: dict[TopicPartition, OffsetSpec]
    ) -> dict[TopicPartition, ListOffsetsResultInfo]:
        cluster = self.describe_cluster()
        by_leader: dict[Node, list[TopicPartition]] = {}
        for tp in sorted(specs):
            leader = cluster.leader_for(*tp)
            if leader is None:
                raise Errors.LEADER_NOT_AVAILABLE.exception(f"{_name(tp)} has no leader right now")
            by_leader.setdefault(leader, []).append(tp)
        results = {}
        for leader, partitions in by_leader.items():
            topics = _by_topic(partitions, lambda tp: {"partition": tp[1], "timestamp": specs[tp].timestamp})
            body = {"replica_id": -1, "topics": [{"topic": t, "partitions": ps} for t, ps in topics.items()]}
            response = self._call(leader, ApiKeys.LIST_OFFSETS, 1, body)
            for topic in response["responses"]:
                for p in topic["partition_responses"]:
                    tp = TopicPartition(topic["topic"], p["partition"])
                    _raise_for(p["error_code"], f"ListOffsets for {_name(tp)} at broker {leader.id}")
                    results[tp] = ListOffsetsResultInfo(p["offset"], p["timestamp"])
        return results

    def _find_coordinator(self, group_id: str) -> Node:
        node_id = self._least_loaded_node()
        body = {"coordinator_key": group_id, "coordinator_type": GROUP_COORDINATOR_TYPE}
        response = self._call(self._node(node_id), ApiKeys.FIND_COORDINATOR, 1, body)
        error = Errors.for_code(response["error_code"])
        if error is not Errors.NONE:
            raise error.exception(
                f"Finding the coordinator of group '{group_id}': "
                f"{response.get('error_message') or error.description}"
            )
        c = response["coordinator"]
        # The coordinator's address as the broker gives it; the metadata may not list it yet.
        self.client.set_node(str(c["node_id"]), c["host"], c["port"])
        return Node(c["node_id"], c["host"], c["port"])

    # -- plumbing --------------------------------------------------------------------------------------------

    def _refresh_metadata(self) -> None:
        version = self.metadata.request_update()
        self._poll_until(lambda: self.metadata.version > version, "metadata")

    def _least_loaded_node(self) -> str:
        if self.metadata.cluster.is_bootstrap or not self.metadata.cluster.nodes:
            self._refresh_metadata()
        node = self.client.least_loaded_node(self.time.milliseconds())
        if node is None:
            raise KafkaException("No broker is reachable: every known broker failed its last connection")
        return node

    def _node(self, node_id: str) -> Node:
        known = self.metadata.cluster.nodes.get(int(node_id))
        return known if known is not None else Node(int(node_id), "", 0)

    def _retrying(self, attempt: Callable[[], T], what: str) -> T:
        """Run ``attempt`` until it succeeds, retrying a retriable error after ``retry.backoff.ms``
        (with fresh metadata, since a moved leader or coordinator is the usual cause) until the
        request timeout; then raise TimeoutException naming ``what`` and the last error."""
        deadline = self.time.hi_res_clock_ms() + self.request_timeout_ms
        while True:
            try:
                return attempt()
            except RetriableException as e:
                if self.time.hi_res_clock_ms() + self.retry_backoff_ms >= deadline:
                    raise TimeoutException(
                        f"Timed out after {self.request_timeout_ms} ms waiting for {what}; last error: {e}"
                    ) from None
                self.time.sleep(self.retry_backoff_ms)
                self.metadata.request_update()

    def _call(self, node: Node, api: ApiKeys, version: int, body: dict) -> dict:
        node_id = node.id_string
        # Until the node is ready, or its connection failed (refused: no use waiting out the timeout).
        self._poll_until(
            lambda: (
                self.client.ready(node_id, self.time.milliseconds()) or self.client.connection_failed(node_id)
            ),
            f"a connection to node {node_id}",
        )
        if not self.client.is_ready(node_id, self.time.milliseconds()):
            raise DisconnectException(
                f"the connection to node {node_id} failed before {api.api_name} was sent"
            )
        done: list[ClientResponse] = []
        self.client.send(
            ClientRequest(node_id, api, version, body, callback=done.append), self.time.milliseconds()
        )
        self._poll_until(lambda: bool(done), f"the {api.api_name} response")
        if done[0].disconnected:
            raise DisconnectException(f"node {node_id} disconnected before answering {api.api_name}")
        return done[0].body

    def _poll_until(self, condition, what: str) -> None:
        deadline = self.time.milliseconds() + self.request_timeout_ms
        while not condition():
            now = self.time.milliseconds()
            if now >= deadline:
                raise TimeoutException(f"Timed out after {self.request_timeout_ms} ms waiting for {what}")
            self.client.poll(min(100, deadline - now), now)
            if self.metadata.authentication_exception is not None:  # SASL refused us: no retry helps
                raise self.metadata.authentication_exception


def _raise_for(error_code: int, what: str) -> None:
    error = Errors.for_code(error_code)
    if error is not Errors.NONE:
        raise error.exception(f"{what}: {error.name}: {error.description}")


def _raise_for_message(error_code: int, message: str | None, what: str) -> None:
    """The broker's own message where it sent one (config errors name the key), else the code's."""
    error = Errors.for_code(error_code)
    if error is not Errors.NONE:
        raise error.exception(f"{what}: {error.name}: {message or error.description}")


def _assignment(group_id: str, protocol_type: str, member_id: str, data: bytes) -> tuple[TopicPartition, ...]:
    """A member's partitions, decoded from the consumer protocol's Assignment bytes. Only consumer
    groups (and groups with no protocol type) use that format, and only a Stable group's members
    carry one; any other member shows no partitions, as Kafka's AdminClient shows them."""
    if protocol_type not in (PROTOCOL_TYPE, "") or not data:
        return ()
    try:
        return tuple(deserialize_assignment(data).partitions)
    except SchemaException as e:
        raise KafkaException(
            f"Member {member_id} of group '{group_id}' has an assignment that is not the consumer "
            f"protocol's: {e}"
        ) from None


def _by_topic(partitions: Iterable[TopicPartition], entry: Callable[[TopicPartition], object]) -> dict:
    """Partitions grouped by topic, as the protocol's nested arrays carry them: topic -> [entry(tp)]."""
    topics: dict[str, list] = {}
    for tp in partitions:
        topics.setdefault(tp[0], []).append(entry(tp))
    return topics


def _name(tp: TopicPartition) -> str:
    """``orders-0``: how Kafka prints a TopicPartition."""
    return f"{tp[0]}-{tp[1]}"
