"""Kafka's ZooKeeper layout: the paths, the JSON written at each, and the reads and writes over them.

Mirrors: kafka.utils.ZkUtils (core/src/main/scala/kafka/utils/ZkUtils.scala, Kafka 0.10.1)
Mirrors: kafka.utils.ReplicationUtils (core/src/main/scala/kafka/utils/ReplicationUtils.scala, Kafka 0.10.1)
Mirrors: kafka.server.ZookeeperLeaderElector (core/src/main/scala/kafka/server/ZookeeperLeaderElector.scala, Kafka 0.10.1)
Mirrors: kafka.cluster.EndPoint (core/src/main/scala/kafka/cluster/EndPoint.scala, Kafka 0.10.2)
Mirrors: kafka.cluster.Broker (core/src/main/scala/kafka/cluster/Broker.scala, Kafka 0.10.2)
Book:    chapter 7, 7.1 (what the controller keeps in ZooKeeper; 7.1.3, the ISR-change notifications
         its listener reads); chapter 6, 6.2.2 (a leader writing its partition's ISR)
Differs: over kazoo (Python's ZooKeeper client) instead of ZkClient; watches are kazoo's
         ``ChildrenWatch``/``DataWatch``, which re-register themselves as ZkClient's listeners do.

The layout (a learner can browse it with ``zkCli``)::

    /brokers/ids/<id>                       ephemeral: a live broker's end points, one per listener
                                            (version 4 adds each name's protocol, KIP-103)
    /brokers/topics/<topic>                 {"version":1,"partitions":{"0":[1,2]}}: the assignment
    /brokers/topics/<t>/partitions/<p>/state  {"leader","leader_epoch","isr","controller_epoch"}
    /controller                             ephemeral: {"brokerid": <the controller>}
    /controller_epoch                       bumped by every new controller
    /config/topics/<topic>                  {"version":1,"config":{...}}: a topic's setting overrides
    /config/brokers/<id>                    {"version":1,"config":{...}}: a broker's dynamic configs
                                            (the replication throttle's rates, KIP-73)
    /config/clients/<client-id>             {"version":1,"config":{...}}: a client id's quotas
                                            (<default> for every client id without its own)
    /config/changes/config_change_<n>       {"version":2,"entity_path":"topics/<t>"}: "re-read these
                                            overrides", for every broker's DynamicConfigManager
    /cluster/id                             the cluster id (Metadata v2+ reports it)
    /isr_change_notification/isr_change_<n> {"version":1,"partitions":[{"topic","partition"}]}:
                                            a leader's ISR changes, for the controller to announce
    /admin/reassign_partitions              {"version":1,"partitions":[{"topic","partition","replicas"}]}:
                                            the reassignments under way (the tool writes, the controller removes)
    /admin/preferred_replica_election       {"version":1,"partitions":[{"topic","partition"}]}: an election asked for
    /latest_producer_id_block               Kafka 0.11: the last block of producer ids handed out
                                            (``get_new_producer_id_block``; ``server/producer_id_manager.py`` hands them out)
    /kafka-acl/<ResourceType>/<name>        {"version":1,"acls":[{"principal","permissionType","operation","host"}]}:
                                            a resource's ACLs (``security/auth/simple_acl_authorizer.py``)
    /kafka-acl-changes/acl_changes_<n>      "Topic:orders": "re-read this resource's ACLs", for every
                                            broker's authorizer

Every write is Kafka's JSON byte for byte, keys in Kafka's order included, so a real Kafka tool
pointed at this ZooKeeper sees a Kafka cluster. Kafka builds each object as a Scala ``Map``, whose
iteration order is insertion order up to four keys and the hash trie's order beyond: that is why a
broker's znode starts with ``jmx_port`` and a partition state with ``controller_epoch``
(``scala_map_order`` below computes it). A topic's config overrides keep the caller's order (Kafka's
is a ``java.util.Properties``'s, which no reader depends on).
"""

from __future__ import annotations

import base64
import json
import logging
import re
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError, SessionExpiredError
from kazoo.retry import KazooRetry, RetryFailedError

from kafka_lite.common.errors import Errors, KafkaException
from kafka_lite.common.topic_partition import TopicPartition

log = logging.getLogger(__name__)

BROKER_IDS_PATH = "/brokers/ids"
BROKER_TOPICS_PATH = "/brokers/topics"
BROKER_SEQUENCE_ID_PATH = "/brokers/seqid"
CONTROLLER_PATH = "/controller"
CONTROLLER_EPOCH_PATH = "/controller_epoch"
ADMIN_PATH = "/admin"
DELETE_TOPICS_PATH = "/admin/delete_topics"
REASSIGN_PARTITIONS_PATH = "/admin/reassign_partitions"
PREFERRED_REPLICA_ELECTION_PATH = "/admin/preferred_replica_election"
ISR_CHANGE_NOTIFICATION_PATH = "/isr_change_notification"
ENTITY_CONFIG_PATH = "/config"
TOPIC_CONFIG_PATH = "/config/topics"
ENTITY_CONFIG_CHANGES_PATH = "/config/changes"
CLUSTER_ID_PATH = "/cluster/id"
PRODUCER_ID_BLOCK_PATH = "/latest_producer_id_block"
PRODUCER_ID_BLOCK_SIZE = 1000
KAFKA_ACL_PATH = "/kafka-acl"  # ZkUtils.KafkaAclPath
KAFKA_ACL_CHANGES_PATH = "/kafka-acl-changes"  # ZkUtils.KafkaAclChangesPath
ISR_CHANGE_NOTIFICATION_PREFIX = "isr_change_"  # ReplicationUtils.IsrChangeNotificationPrefix
ISR_CHANGE_NOTIFICATION_VERSION = 1  # IsrChangeNotificationListener.version
ENTITY_CONFIG_CHANGE_ZNODE_PREFIX = "config_change_"  # AdminUtils.EntityConfigChangeZnodePrefix
CONFIG_TYPE_TOPIC = "topics"  # kafka.server.ConfigType.Topic
CONFIG_TYPE_BROKER = "brokers"  # kafka.server.ConfigType.Broker
CONFIG_TYPE_CLIENT = "clients"  # kafka.server.ConfigType.Client
CONFIG_TYPE_USER = "users"  # kafka.server.ConfigType.User: SCRAM credentials (KIP-84)
# ZooKeeper refuses a znode larger than jute.maxbuffer (0xfffff bytes by default), and drops the
# connection of the client that sends one: a topic's whole assignment must fit in one znode.
ZK_MAX_BUFFER = 0xFFFFF

COMMON_PATHS = (
    BROKER_IDS_PATH,
    BROKER_TOPICS_PATH,
    BROKER_SEQUENCE_ID_PATH,
    TOPIC_CONFIG_PATH,
    ENTITY_CONFIG_CHANGES_PATH,
    DELETE_TOPICS_PATH,
    ISR_CHANGE_NOTIFICATION_PATH,
)


def topic_path(topic: str) -> str:
    return f"{BROKER_TOPICS_PATH}/{topic}"


def topic_partition_state_path(topic: str, partition: int) -> str:
    return f"{BROKER_TOPICS_PATH}/{topic}/partitions/{partition}/state"


def delete_topic_path(topic: str) -> str:
    return f"{DELETE_TOPICS_PATH}/{topic}"


def _is_one_znode(name: str) -> bool:
    """Whether ``name`` names one child znode: the recursive deletes below must never reach a parent."""
    return bool(name) and "/" not in name and name not in (".", "..")


def isr_change_notification_path(child: str) -> str:
    return f"{ISR_CHANGE_NOTIFICATION_PATH}/{child}"


class TopicAlreadyMarkedForDeletionException(KafkaException):
    """Kafka's ``kafka.common.TopicAlreadyMarkedForDeletionException``: ``/admin/delete_topics/<topic>``
    exists already. DeleteTopics swallows it and waits for the deletion like the first request."""


class BrokerIdInUseException(KafkaException, NodeExistsError):
    """``/brokers/ids/<id>`` exists and is not this broker's own crashed session's: two brokers share
    a ``broker.id``. A ``NodeExistsError`` too, for code that catches kazoo's error."""


class BrokerEndPointNotAvailableException(KafkaException):
    """Kafka's ``BrokerEndPointNotAvailableException``: a broker has no end point for a listener."""


# Kafka's ``EndPoint.DefaultSecurityProtocolMap``: each security protocol is also a listener name.
DEFAULT_SECURITY_PROTOCOL_MAP = {"PLAINTEXT": "PLAINTEXT", "SASL_PLAINTEXT": "SASL_PLAINTEXT"}
_END_POINT = re.compile(r"^(?P<name>.*)://\[?(?P<host>[0-9a-zA-Z\-%._:]*)\]?:(?P<port>-?[0-9]+)$")


@dataclass(frozen=True)
class EndPoint:
    """One listener of a broker (Kafka 0.10.2's ``kafka.cluster.EndPoint``, KIP-103): its name, the
    security protocol the name maps to, and its address. Before 0.10.2 the name *was* the protocol,
    so a broker could not have two listeners of one protocol (an internal and an external
    PLAINTEXT, say); the name is what clients, the controller and the followers now pick by."""

    host: str
    port: int
    listener_name: str
    security_protocol: str

    @property
    def connection_string(self) -> str:
        return f"{self.listener_name}://{self.host}:{self.port}"

    @classmethod
    def create(cls, connection_string: str, protocol_map: Mapping[str, str] | None = None) -> EndPoint:
        """Kafka's ``EndPoint.createEndPoint``: ``NAME://host:port`` with the name's protocol from
        ``protocol_map`` (``listener.security.protocol.map``; by default each protocol is a name).
        Names are upper-cased, as ``ListenerName.normalised`` does."""
        m = _END_POINT.match(connection_string.strip())
        if m is None:
            raise KafkaException(f"Unable to parse {connection_string} to a broker endpoint")
        name = m["name"].upper()
        protocol = (DEFAULT_SECURITY_PROTOCOL_MAP if protocol_map is None else protocol_map).get(name)
        if protocol is None:
            raise KafkaException(f"No security protocol defined for listener {name}")
        return cls(m["host"], int(m["port"]), name, protocol)


@dataclass(frozen=True)
class Broker:
    """A live broker as its registration has it (Kafka's ``kafka.cluster.Broker``). ``host`` and
    ``port`` are the registration's top-level pair (the first PLAINTEXT end point, for clients that
    predate end points); ``endpoints`` are all its listeners, and ``end_point(name)`` picks one, as
    Kafka's ``getBrokerEndPoint(listenerName)``. Given only ``host`` and ``port``, it has the one
    end point ``PLAINTEXT://host:port``, which is what a registration before end points means."""

    id: int
    host: str
    port: int
    rack: str | None = None
    # Not in 0.10.1's Broker: the registration znode's creation zxid, which tells two registrations
    # under one id apart (the same id, host and port come back when a broker restarts). Kafka 2.2
    # names it the broker epoch (KIP-380); the controller's ``bounced_brokers`` and ``cluster
    # restart``'s wait for a new registration read it.
    epoch: int = field(default=-1, compare=False)
    endpoints: tuple[EndPoint, ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        if not self.endpoints:
            object.__setattr__(self, "endpoints", (EndPoint(self.host, self.port, "PLAINTEXT", "PLAINTEXT"),))
        names = [e.listener_name for e in self.endpoints]
        if len(set(names)) != len(names):
            raise ValueError(
                f"There is more than one end point with the same listener name: "
                f"{','.join(e.connection_string for e in self.endpoints)}"
            )

    def end_point(self, listener_name: str) -> EndPoint:
        for e in self.endpoints:
            if e.listener_name == listener_name:
                return e
        raise BrokerEndPointNotAvailableException(
            f"End point with listener name {listener_name} not found for broker {self.id}"
        )

    def has_listener(self, listener_name: str) -> bool:
        return any(e.listener_name == listener_name for e in self.endpoints)


def broker_from_registration(broker_id: int, info: dict, epoch: int = -1) -> Broker:
    """Kafka's ``Broker.createBroker``: a ``/brokers/ids/<id>`` JSON of any version. Version 1 has
    only ``host`` and ``port`` (a PLAINTEXT listener); versions 2 and 3 list ``endpoints`` named by
    their protocol; version 4 (Kafka 0.10.2) adds ``listener_security_protocol_map`` for names that
    are not protocols."""
    version = info.get("version", 1)
    if version < 1:
        raise KafkaException(f"Unsupported version of broker registration: {info}")
    if version == 1 or "endpoints" not in info:
        endpoints = (EndPoint(info["host"], info["port"], "PLAINTEXT", "PLAINTEXT"),)
    else:
        protocol_map = info.get("listener_security_protocol_map")
        endpoints = tuple(EndPoint.create(e, protocol_map) for e in info["endpoints"])
    host, port = info.get("host"), info.get("port", -1)
    if host is None or port == -1:  # no PLAINTEXT listener: Kafka writes null and -1
        host, port = endpoints[0].host, endpoints[0].port
    return Broker(broker_id, host, port, info.get("rack"), epoch, endpoints)


def registration_version(endpoints: Sequence[EndPoint]) -> int:
    """The version of a broker's registration JSON. Kafka 0.10.2 writes version 4, which adds
    ``listener_security_protocol_map``, on every broker; kafka_lite writes it only when some
    listener's name is not its security protocol (``INTERNAL`` for PLAINTEXT, say), the one case
    version 3 (Kafka 0.10.1's) cannot say. A broker whose listeners are named by their protocols
    keeps 0.10.1's bytes, which every reader of either version parses the same way."""
    return 4 if any(e.listener_name != e.security_protocol for e in endpoints) else 3


@dataclass(frozen=True)
class LeaderAndIsr:
    """Kafka's ``kafka.api.LeaderAndIsr``: a partition's leader, its epoch, the ISR, and the version of
    the state znode it was read from (conditional writes compare against it). ``NO_LEADER`` and
    ``LEADER_DURING_DELETE`` are its companion object's ``NoLeader`` and ``LeaderDuringDelete``."""

    NO_LEADER: ClassVar[int] = -1
    LEADER_DURING_DELETE: ClassVar[int] = -2  # UpdateMetadata's mark of a partition being deleted

    leader: int
    leader_epoch: int
    isr: list[int]
    zk_version: int


@dataclass(frozen=True)
class LeaderIsrAndControllerEpoch:
    leader_and_isr: LeaderAndIsr
    controller_epoch: int


def _json(value) -> bytes:
    """Kafka's ``Json.encode``: no spaces, keys in the order given."""
    return json.dumps(value, separators=(",", ":")).encode()


def _scala_hash(key: str | int) -> int:
    """Scala 2.11's ``immutable.HashMap.computeHash``: Java's ``hashCode``, then ``improve``."""
    if isinstance(key, str):
        h = 0
        utf16 = key.encode("utf-16-be")  # Java hashes UTF-16 code units
        for i in range(0, len(utf16), 2):
            h = (31 * h + int.from_bytes(utf16[i : i + 2], "big")) & 0xFFFFFFFF
    else:
        h = key & 0xFFFFFFFF
    h = (h + (~(h << 9) & 0xFFFFFFFF)) & 0xFFFFFFFF
    h ^= h >> 14
    h = (h + (h << 4)) & 0xFFFFFFFF
    return h ^ (h >> 10)


def scala_map_order(keys: list[str]) -> list[str]:
    """The order in which Scala iterates an immutable ``Map`` built from ``keys`` (so the order of
    the keys in the JSON Kafka writes from it). Up to four keys Scala keeps them as given (``Map1`` to
    ``Map4``); beyond, a ``HashTrieMap`` orders them by 5-bit slices of their hash, lowest slice first.

    >>> scala_map_order(["version", "leader", "leader_epoch", "controller_epoch", "isr"])
    ['controller_epoch', 'leader', 'version', 'leader_epoch', 'isr']
    """
    if len(keys) <= 4:
        return list(keys)

    def trie_path(key: str) -> tuple[int, ...]:
        h = _scala_hash(key)
        return tuple((h >> shift) & 0x1F for shift in range(0, 32, 5))

    return sorted(keys, key=trie_path)


def _kafka_json(value: dict) -> bytes:
    """``_json`` with the keys of ``value`` (not nested objects) in the order Kafka's Scala map has them."""
    return _json({k: value[k] for k in scala_map_order(list(value))})


def _partitions_order(partitions: list[int]) -> list[int]:
    """The order of the partitions in ``/brokers/topics/<t>`` as Kafka writes an assignment that
    ``AdminUtils`` computed: it comes from a ``mutable.HashMap[Int, _]`` (iterated from its last bucket
    down) copied into an immutable map, then re-keyed by ``toString``. Up to four partitions that copy
    keeps the mutable map's order; beyond, the string keys' hash-trie order rules."""
    if len(partitions) > 4:
        return [int(k) for k in scala_map_order([str(p) for p in partitions])]

    def bucket(p: int) -> int:  # mutable.HashTable.index for a 16-bucket table (seed 4)
        hc = (p * 0x9E3779B9) & 0xFFFFFFFF  # scala.util.hashing.byteswap32
        hc = int.from_bytes(hc.to_bytes(4, "big"), "little")
        hc = (hc * 0x9E3779B9) & 0xFFFFFFFF
        rotated = ((hc >> 4) | (hc << 28)) & 0xFFFFFFFF
        return rotated >> 28  # the top 4 bits (an arithmetic shift, masked to 4 bits, is the same)

    return sorted(partitions, key=bucket, reverse=True)


def _assignment_json(topic: str, assignment: dict[int, list[int]]) -> bytes:
    """``/brokers/topics/<topic>``'s JSON; INVALID_PARTITIONS if ZooKeeper could never store it."""
    partitions = {str(p): list(assignment[p]) for p in _partitions_order(list(assignment))}
    data = _kafka_json({"version": 1, "partitions": partitions})
    if len(data) > ZK_MAX_BUFFER:
        raise Errors.INVALID_PARTITIONS.exception(
            f"The assignment of topic '{topic}' ({len(assignment)} partitions) takes {len(data)} bytes, more "
            f"than a ZooKeeper znode holds ({ZK_MAX_BUFFER})"
        )
    return data


def _parse_isr_change_notification(data: bytes) -> set[TopicPartition]:
    """The partitions of an ISR-change notification's JSON; ValueError naming what is wrong."""
    try:
        value = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"not JSON: {e}") from None
    if not isinstance(value, dict) or not isinstance(value.get("partitions"), list):
        raise ValueError('expected an object with a "partitions" list')
    partitions = set()
    for entry in value["partitions"]:
        topic = entry.get("topic") if isinstance(entry, dict) else None
        partition = entry.get("partition") if isinstance(entry, dict) else None
        if not isinstance(topic, str) or not isinstance(partition, int) or isinstance(partition, bool):
            raise ValueError(f'expected {{"topic": <string>, "partition": <int>}}, got {entry!r}')
        partitions.add((topic, partition))
    return partitions


def parse_partition_reassignment_data_without_dedup(
    data: bytes | str,
) -> list[tuple[TopicPartition, list[int]]]:
    """The (partition, new replicas) pairs of ``/admin/reassign_partitions``'s JSON
    (``{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2]}]}``), in the file's order,
    duplicates kept (Kafka's ``parsePartitionReassignmentDataWithoutDedup``: the tool reports them).
    ValueError naming what is wrong, where Kafka's casts would throw."""
    try:
        value = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"not JSON: {e}") from None
    if not isinstance(value, dict):
        raise ValueError('expected an object with a "partitions" list')
    if "partitions" not in value:
        return []  # Kafka reads an object without "partitions" as no partitions
    if not isinstance(value["partitions"], list):
        raise ValueError('"partitions" must be a list')
    pairs = []
    for entry in value["partitions"]:
        topic = entry.get("topic") if isinstance(entry, dict) else None
        partition = entry.get("partition") if isinstance(entry, dict) else None
        replicas = entry.get("replicas") if isinstance(entry, dict) else None
        if (
            not isinstance(topic, str)
            or not _is_int(partition)
            or not isinstance(replicas, list)
            or not all(_is_int(r) for r in replicas)
        ):
            raise ValueError(
                f'expected {{"topic": <string>, "partition": <int>, "replicas": [<int>, ...]}}, got {entry!r}'
            )
        pairs.append(((topic, partition), list(replicas)))
    return pairs


def parse_partition_reassignment_data(data: bytes | str) -> dict[TopicPartition, list[int]]:
    """Kafka's ``parsePartitionReassignmentData``: as above, a later entry for a partition replacing
    an earlier one."""
    return dict(parse_partition_reassignment_data_without_dedup(data))


def format_as_reassignment_json(assignment: dict[TopicPartition, list[int]]) -> str:
    """Kafka's ``ZkUtils.formatAsReassignmentJson``: what ``/admin/reassign_partitions`` holds and what
    the reassignment tool prints (partitions sorted here; Kafka's follow its map's order)."""
    return _json(
        {
            "version": 1,
            "partitions": [
                {"topic": t, "partition": p, "replicas": list(assignment[(t, p)])}
                for t, p in sorted(assignment)
            ],
        }
    ).decode()


def parse_preferred_replica_election_data(data: bytes | str) -> set[TopicPartition]:
    """The partitions of ``/admin/preferred_replica_election``'s JSON
    (``{"version":1,"partitions":[{"topic":"t","partition":0}]}``), as Kafka's
    ``PreferredReplicaLeaderElectionCommand.parsePreferredReplicaElectionData`` reads them: ValueError
    with Kafka's message for no partitions or a duplicate, naming what is wrong otherwise."""
    try:
        value = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ValueError("Preferred replica election data is empty") from None
    if not isinstance(value, dict) or "partitions" not in value:
        raise ValueError("Preferred replica election data is empty")
    if not isinstance(value["partitions"], list):
        raise ValueError('"partitions" must be a list')
    partitions: list[TopicPartition] = []
    for entry in value["partitions"]:
        topic = entry.get("topic") if isinstance(entry, dict) else None
        partition = entry.get("partition") if isinstance(entry, dict) else None
        if not isinstance(topic, str) or not _is_int(partition):
            raise ValueError(f'expected {{"topic": <string>, "partition": <int>}}, got {entry!r}')
        partitions.append((topic, partition))
    duplicates = sorted({tp for tp in partitions if partitions.count(tp) > 1})
    if duplicates:
        raise ValueError(
            "Preferred replica election data contains duplicate partitions: "
            + ",".join(f"[{t},{p}]" for t, p in duplicates)
        )
    return set(partitions)


def preferred_replica_leader_election_zk_data(partitions) -> bytes:
    """Kafka's ``ZkUtils.preferredReplicaLeaderElectionZkData`` (partitions sorted here)."""
    return _json({"version": 1, "partitions": [{"topic": t, "partition": p} for t, p in sorted(partitions)]})


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class ZkUtils:
    def __init__(
        self, zk_connect: str, session_timeout_ms: int = 6000, connection_timeout_ms: int = 6000
    ) -> None:
        self.session_timeout_ms = session_timeout_ms
        hosts, _, chroot = zk_connect.partition("/")
        timeout_s = connection_timeout_ms / 1000
        if chroot:
            # Kafka creates a missing chroot before connecting under it (ZkPath.createPersistent).
            bootstrap = KazooClient(hosts=hosts, timeout=session_timeout_ms / 1000)
            try:
                bootstrap.start(timeout=timeout_s)
                bootstrap.ensure_path("/" + chroot)
            except Exception as e:
                raise KafkaException(f"Cannot connect to ZooKeeper at {hosts}: {e}") from None
            finally:
                bootstrap.stop()
                bootstrap.close()
        self.client = KazooClient(hosts=zk_connect, timeout=session_timeout_ms / 1000)
        try:
            self.client.start(timeout=timeout_s)
        except Exception as e:
            self.client.close()
            raise KafkaException(f"Cannot connect to ZooKeeper at {zk_connect}: {e}") from None

    def close(self) -> None:
        try:
            self.client.stop()
        finally:
            self.client.close()

    def setup_common_paths(self) -> None:
        for path in COMMON_PATHS:
            self.client.ensure_path(path)

    def _read_json(self, path: str):
        try:
            data, stat = self.client.get(path)
        except NoNodeError:
            return None, None
        return (json.loads(data) if data else None), stat

    # -- brokers --------------------------------------------------------------------------------------------

    # --8<-- [start:register_broker]
    def register_broker(
        self,
        broker_id: int,
        host: str,
        port: int,
        rack: str | None = None,
        jmx_port: int = -1,
        *,
        security_protocol: str = "PLAINTEXT",
        endpoints: Sequence[EndPoint] | None = None,
    ) -> None:
        """The ephemeral ``/brokers/ids/<id>``: it lives as long as this broker's ZooKeeper session,
        which is how the controller learns that a broker died (book 7.1). It lists every advertised
        listener in ``endpoints`` (``SASL_PLAINTEXT://host:port`` on a SASL listener); without
        ``endpoints``, the one listener ``security_protocol://host:port``. ``host`` and ``port``
        are also written at the top level, for readers older than end points (Kafka's
        ``KafkaHealthcheck.register`` picks the first PLAINTEXT end point for them)."""
        if endpoints is None:
            endpoints = [EndPoint(host, port, security_protocol, security_protocol)]
        version = registration_version(endpoints)
        info = {
            "version": version,
            "host": host,
            "port": port,
            "endpoints": [e.connection_string for e in endpoints],
            "jmx_port": jmx_port,
            "timestamp": str(self._now_ms()),
        }
        if rack is not None:
            info["rack"] = rack
        if version >= 4:
            info["listener_security_protocol_map"] = {e.listener_name: e.security_protocol for e in endpoints}
        path = f"{BROKER_IDS_PATH}/{broker_id}"
        # A broker restarted right after a crash finds its own node, left by its old session, which
        # ZooKeeper removes only when that session times out. Kafka 0.10.1's ZKCheckedEphemeral
        # refuses it (NODEEXISTS: "restarted it faster than the zookeeper timeout") and the broker
        # stops; kafka_lite waits for it to go when it names this broker's own address, so that a
        # restart right after a kill works. Another address means a real conflict.
        # ZooKeeper expires a session up to a tick after its timeout, and a busy server later still:
        # twice the timeout bounds the wait without mistaking a slow expiry for a conflict.
        deadline = time.monotonic() + 2 * self.session_timeout_ms / 1000 + 2
        while True:
            try:
                self.client.create(path, _kafka_json(info), ephemeral=True, makepath=True)
                return
            except NodeExistsError:
                existing = self.get_broker(broker_id)
                if existing is None:
                    continue  # the old session expired between our create and this read: create again
                same = set(existing.endpoints) == set(endpoints)
                if not same or time.monotonic() > deadline:
                    raise BrokerIdInUseException(
                        f"broker id {broker_id} is already registered at {path}: either there is another "
                        f"broker with the same broker.id {broker_id} or ZooKeeper has not yet expired the "
                        "session of this broker's previous run"
                    ) from None
                log.info("Waiting for the previous session's %s to expire", path)
                time.sleep(0.2)  # the old session's expiry is ZooKeeper's to decide; bounded by the deadline

    # --8<-- [end:register_broker]

    @staticmethod
    def _now_ms() -> int:
        return int(time.time() * 1000)

    def get_all_broker_ids(self) -> list[int]:
        try:
            return sorted(int(c) for c in self.client.get_children(BROKER_IDS_PATH))
        except NoNodeError:
            return []

    def get_broker(self, broker_id: int) -> Broker | None:
        info, stat = self._read_json(f"{BROKER_IDS_PATH}/{broker_id}")
        if info is None:
            return None
        return broker_from_registration(broker_id, info, stat.czxid)

    def get_all_brokers(self) -> list[Broker]:
        return [b for b in (self.get_broker(i) for i in self.get_all_broker_ids()) if b is not None]

    # -- topics -----------------------------------------------------------------------------------------------

    def get_all_topics(self) -> list[str]:
        try:
            return sorted(self.client.get_children(BROKER_TOPICS_PATH))
        except NoNodeError:
            return []

    # --8<-- [start:create_topic]
    def create_topic(
        self, topic: str, assignment: dict[int, list[int]], config: dict[str, str] | None = None
    ) -> None:
        """Kafka's ``AdminUtils.createOrUpdateTopicPartitionAssignmentPathInZK``: the config first, then
        the assignment, whose appearance is what the controller's topic watch reacts to."""
        if self.client.exists(topic_path(topic)):
            raise Errors.TOPIC_ALREADY_EXISTS.exception(f"Topic '{topic}' already exists.")
        self.client.ensure_path(TOPIC_CONFIG_PATH)
        config_data = _kafka_json({"version": 1, "config": dict(config or {})})
        try:
            self.client.create(f"{TOPIC_CONFIG_PATH}/{topic}", config_data)
        except NodeExistsError:
            self.client.set(f"{TOPIC_CONFIG_PATH}/{topic}", config_data)
        data = _assignment_json(topic, assignment)
        try:
            self.client.create(topic_path(topic), data, makepath=True)
        except NodeExistsError:
            raise Errors.TOPIC_ALREADY_EXISTS.exception(f"Topic '{topic}' already exists.") from None

    # --8<-- [end:create_topic]

    def update_partition_assignment(self, topic: str, assignment: dict[int, list[int]]) -> None:
        """Rewrite a topic's whole assignment with partitions added (Kafka's
        ``createOrUpdateTopicPartitionAssignmentPathInZK`` with ``update = true``): the config is
        left alone, and the controller's watch on the topic's znode sees the new partitions. A
        reassignment rewrites it the same way (``KafkaController.updateAssignedReplicasForPartition``)."""
        try:
            self.client.set(topic_path(topic), _assignment_json(topic, assignment))
        except NoNodeError:
            raise Errors.UNKNOWN_TOPIC_OR_PARTITION.exception(
                f"The topic '{topic}' does not exist."
            ) from None

    # --8<-- [start:delete_topic]
    def create_delete_topic_path(self, topic: str) -> None:
        """Mark ``topic`` for deletion (Kafka's ``AdminUtils.deleteTopic``): the controller's watch on
        ``/admin/delete_topics`` does the rest. Raises UNKNOWN_TOPIC_OR_PARTITION for a topic that
        does not exist, and ``TopicAlreadyMarkedForDeletionException`` if the mark is there already."""
        if not _is_one_znode(topic) or not self.client.exists(topic_path(topic)):
            raise Errors.UNKNOWN_TOPIC_OR_PARTITION.exception(f"Topic `{topic}` to delete does not exist")
        try:
            self.client.create(delete_topic_path(topic), b"", makepath=True)
        except NodeExistsError:
            raise TopicAlreadyMarkedForDeletionException(
                f"topic {topic} is already marked for deletion"
            ) from None

    # --8<-- [end:delete_topic]

    def get_topics_to_be_deleted(self) -> list[str]:
        """The children of ``/admin/delete_topics`` (Kafka's ``getChildrenParentMayNotExist``)."""
        try:
            return sorted(self.client.get_children(DELETE_TOPICS_PATH))
        except NoNodeError:
            return []

    def delete_topic_znodes(self, topic: str) -> None:
        """What a completed deletion removes (Kafka's ``completeDeleteTopic``): the topic's assignment
        and partition states, its config, and last its mark under ``/admin/delete_topics``."""
        if not _is_one_znode(topic):
            raise ValueError(f"not a topic name: {topic!r}")
        self.client.delete(topic_path(topic), recursive=True)
        self.client.delete(f"{TOPIC_CONFIG_PATH}/{topic}", recursive=True)
        self.delete_delete_topic_path(topic)

    def delete_delete_topic_path(self, topic: str) -> None:
        """Remove the deletion mark (already gone is fine: Kafka's ``deletePathRecursive``)."""
        if not _is_one_znode(topic):
            raise ValueError(f"not a topic name: {topic!r}")
        self.client.delete(delete_topic_path(topic), recursive=True)

    def get_partition_assignment(self, topic: str) -> dict[int, list[int]]:
        value, _ = self._read_json(topic_path(topic))
        if value is None:
            return {}
        return {int(p): list(r) for p, r in value.get("partitions", {}).items()}

    def get_topic_config(self, topic: str) -> dict[str, str]:
        """A topic's overrides: none if it has no znode."""
        return self.fetch_entity_config(CONFIG_TYPE_TOPIC, topic)

    def fetch_entity_config(self, entity_type: str, entity: str) -> dict[str, str]:
        """The overrides at ``/config/<entity_type>/<entity>`` (Kafka's ``AdminUtils.fetchEntityConfig``)."""
        value, _ = self._read_json(f"{ENTITY_CONFIG_PATH}/{entity_type}/{entity}")
        return {k: str(v) for k, v in value.get("config", {}).items()} if value else {}

    def fetch_all_topic_configs(self) -> dict[str, dict[str, str]]:
        """Every topic's overrides, for a broker starting up (Kafka's ``fetchAllTopicConfigs``)."""
        return {topic: self.get_topic_config(topic) for topic in self.get_all_topics()}

    def get_all_entities_with_config(self, entity_type: str) -> list[str]:
        """The entities of a type with a config znode (Kafka's ``getAllEntitiesWithConfig``)."""
        try:
            return sorted(self.client.get_children(f"{ENTITY_CONFIG_PATH}/{entity_type}"))
        except NoNodeError:
            return []

    def fetch_all_entity_configs(self, entity_type: str) -> dict[str, dict[str, str]]:
        """Every entity's configs of one type (Kafka's ``AdminUtils.fetchAllEntityConfigs``)."""
        return {
            e: self.fetch_entity_config(entity_type, e)
            for e in self.get_all_entities_with_config(entity_type)
        }

    # --8<-- [start:change_topic_config]
    def change_topic_config(self, topic: str, configs: dict[str, str]) -> str:
        """Replace a topic's overrides and tell every broker (Kafka's ``AdminUtils.changeTopicConfig``
        after its validation, which is the caller's): first ``/config/topics/<topic>`` with the whole
        new set, then a sequential ``/config/changes/config_change_<n>`` naming the entity. The
        notification carries no configs: a broker reads the topic's znode when it sees it, so it
        always applies the latest set, however many notifications it missed. Return its path."""
        if not self.client.exists(topic_path(topic)):
            raise Errors.UNKNOWN_TOPIC_OR_PARTITION.exception(f"Topic '{topic}' does not exist.")
        return self.change_entity_config(CONFIG_TYPE_TOPIC, topic, configs)

    def change_entity_config(self, entity_type: str, entity: str, configs: dict[str, str]) -> str:
        """Kafka's ``AdminUtils.changeEntityConfig``: the entity's whole new set, then the notification."""
        data = _kafka_json({"version": 1, "config": dict(configs)})
        path = f"{ENTITY_CONFIG_PATH}/{entity_type}/{entity}"
        try:
            self.client.set(path, data)
        except NoNodeError:  # no overrides before (or a topic created by a tool that wrote no config znode)
            self.client.create(path, data, makepath=True)
        return self.client.create(
            f"{ENTITY_CONFIG_CHANGES_PATH}/{ENTITY_CONFIG_CHANGE_ZNODE_PREFIX}",
            _kafka_json({"version": 2, "entity_path": f"{entity_type}/{entity}"}),
            sequence=True,
            makepath=True,
        )

    # --8<-- [end:change_topic_config]

    def change_broker_config(self, broker_ids: list[int], configs: dict[str, str]) -> None:
        """Replace each broker's dynamic configs at ``/config/brokers/<id>`` and tell every broker
        (Kafka's ``AdminUtils.changeBrokerConfig`` after its validation, which is the caller's)."""
        for broker_id in broker_ids:
            self.change_entity_config(CONFIG_TYPE_BROKER, str(broker_id), configs)

    def change_client_id_config(self, client_id: str, configs: dict[str, str]) -> str:
        """Replace a client id's quotas at ``/config/clients/<client-id>`` (``<default>``: every client
        id's without its own) and tell every broker (Kafka's ``AdminUtils.changeClientIdConfig`` after
        its validation, which is the caller's)."""
        return self.change_entity_config(CONFIG_TYPE_CLIENT, client_id, configs)

    def get_config_change_notifications(self) -> list[str]:
        """The ``config_change_<n>`` children, oldest first."""
        try:
            children = self.client.get_children(ENTITY_CONFIG_CHANGES_PATH)
        except NoNodeError:
            return []
        return sorted(c for c in children if c.startswith(ENTITY_CONFIG_CHANGE_ZNODE_PREFIX))

    def get_config_change_notification(self, child: str) -> tuple[dict | None, int]:
        """A notification's JSON (None if gone or unreadable) and its creation time (ms)."""
        try:
            data, stat = self.client.get(f"{ENTITY_CONFIG_CHANGES_PATH}/{child}")
        except NoNodeError:
            return None, -1
        try:
            value = json.loads(data)
        except (UnicodeDecodeError, json.JSONDecodeError):
            value = None
        return (value if isinstance(value, dict) else None), stat.ctime

    def delete_config_change_notification(self, child: str) -> None:
        try:
            self.client.delete(f"{ENTITY_CONFIG_CHANGES_PATH}/{child}")
        except NoNodeError:
            pass

    # -- partition state -----------------------------------------------------------------------------------

    def get_partition_state(self, topic: str, partition: int) -> LeaderIsrAndControllerEpoch | None:
        value, stat = self._read_json(topic_partition_state_path(topic, partition))
        if value is None:
            return None
        lai = LeaderAndIsr(value["leader"], value["leader_epoch"], list(value["isr"]), stat.version)
        return LeaderIsrAndControllerEpoch(lai, value["controller_epoch"])

    @staticmethod
    def _state_json(lai: LeaderAndIsr, controller_epoch: int) -> bytes:
        """Kafka's ``ZkUtils.leaderAndIsrZkData``."""
        return _kafka_json(
            {
                "version": 1,
                "leader": lai.leader,
                "leader_epoch": lai.leader_epoch,
                "controller_epoch": controller_epoch,
                "isr": list(lai.isr),
            }
        )

    def create_partition_state(
        self, topic: str, partition: int, lai: LeaderAndIsr, controller_epoch: int
    ) -> None:
        """Raises kazoo's ``NodeExistsError`` if it exists (the controller then gives up on it)."""
        self.client.create(
            topic_partition_state_path(topic, partition),
            self._state_json(lai, controller_epoch),
            makepath=True,
        )

    def conditional_update_partition_state(
        self, topic: str, partition: int, lai: LeaderAndIsr, controller_epoch: int
    ) -> tuple[bool, int]:
        """Write only if the znode is still at ``lai.zk_version`` (nobody changed it since we read it);
        return (written, the new version)."""
        try:
            stat = self.client.set(
                topic_partition_state_path(topic, partition),
                self._state_json(lai, controller_epoch),
                version=lai.zk_version,
            )
        except (BadVersionError, NoNodeError):
            return False, -1
        return True, stat.version

    # --8<-- [start:update_leader_and_isr]
    def update_leader_and_isr(
        self, topic: str, partition: int, leader_and_isr: LeaderAndIsr, controller_epoch: int
    ) -> tuple[bool, int]:
        """How a partition's leader writes the ISR it shrank or expanded (Kafka's
        ``ReplicationUtils.updateLeaderAndIsr``); return (written, the state znode's new version).

        The write is the controller's conditional update: it succeeds only if the znode is still at
        ``leader_and_isr.zk_version``, the version the leader was given in its last LeaderAndIsr or
        got back from its last write. A controller that changed the partition since (a new leader, a
        dead replica taken out of the ISR) has moved the version on, and the leader's stale ISR is
        refused. ``controller_epoch`` is the epoch of the controller that made the leadership decision,
        kept as it is, not the current controller's.

        A refused write is checked as Kafka's ``checkLeaderAndIsrZkData`` does: if the znode already
        holds exactly this state, the write counts as done. That is the case of a leader retrying
        after its first write went through but the answer was lost with the connection.
        """
        written = self.conditional_update_partition_state(topic, partition, leader_and_isr, controller_epoch)
        if written[0]:
            return written
        current = self.get_partition_state(topic, partition)
        if current is None:
            return False, -1
        held = current.leader_and_isr
        if (held.leader, held.leader_epoch, held.isr, current.controller_epoch) == (
            leader_and_isr.leader,
            leader_and_isr.leader_epoch,
            list(leader_and_isr.isr),
            controller_epoch,
        ):
            return True, held.zk_version
        return False, -1

    # --8<-- [end:update_leader_and_isr]

    # -- ISR-change notifications ----------------------------------------------------------------------------------

    # --8<-- [start:propagate_isr_changes]
    def propagate_isr_changes(self, partitions: set[TopicPartition]) -> str:
        """Tell the controller that these partitions' ISRs changed (Kafka's
        ``ReplicationUtils.propagateIsrChanges``): one persistent sequential znode
        ``/isr_change_notification/isr_change_<n>`` holding
        ``{"version":1,"partitions":[{"topic":"t","partition":0},...]}``. Return its path.

        The leader has already written each partition's state; the notification only says where to
        look. The controller's ``IsrChangeNotificationListener`` re-reads those states and sends
        UpdateMetadata, so every broker's metadata shows the ISR as it is. A leader collects its
        changes and writes one notification for many partitions (``ReplicaManager``'s
        ``maybePropagateIsrChanges``), so a cluster-wide shrink does not become one znode per partition.
        Kafka lists the partitions in its ``Set``'s order, which no reader depends on; they are sorted
        here.
        """
        if not partitions:
            raise ValueError("propagate_isr_changes needs at least one partition whose ISR changed")
        data = _json(
            {
                "version": ISR_CHANGE_NOTIFICATION_VERSION,
                "partitions": [{"topic": t, "partition": p} for t, p in sorted(partitions)],
            }
        )
        path = self.client.create(
            isr_change_notification_path(ISR_CHANGE_NOTIFICATION_PREFIX), data, sequence=True
        )
        log.debug("Added %s for %s", path, sorted(partitions))
        return path

    # --8<-- [end:propagate_isr_changes]

    def get_isr_change_notifications(self) -> list[str]:
        """The notifications waiting for the controller (child names, oldest first)."""
        try:
            return sorted(self.client.get_children(ISR_CHANGE_NOTIFICATION_PATH))
        except NoNodeError:
            return []

    def get_isr_change_partitions(self, child: str) -> set[TopicPartition]:
        """The partitions named by the notification ``child`` (the controller listener's
        ``getTopicAndPartition``). A notification already gone gives none. A malformed one gives none
        either: it is logged as an error naming the znode and what is wrong with it, and deleted, since
        no controller could ever read it."""
        path = isr_change_notification_path(child)
        try:
            data, _ = self.client.get(path)
        except NoNodeError:
            return set()
        try:
            return _parse_isr_change_notification(data)
        except ValueError as e:
            log.error("Invalid topic and partition JSON: %r in ZK: %s (%s); deleting it", data, path, e)
            self.delete_isr_change_notification(child)
            return set()

    def delete_isr_change_notification(self, child: str) -> None:
        """Delete a processed notification (already gone is fine: Kafka's ``deletePath``)."""
        try:
            self.client.delete(isr_change_notification_path(child))
        except NoNodeError:
            pass

    # -- partition reassignment and preferred replica election (the two admin paths) ----------------------------

    def get_partitions_being_reassigned(self) -> dict[TopicPartition, list[int]]:
        """``/admin/reassign_partitions`` as (partition -> new replicas); empty when absent (Kafka's
        ``getPartitionsBeingReassigned``). Raises ValueError if it holds malformed JSON."""
        try:
            data, _ = self.client.get(REASSIGN_PARTITIONS_PATH)
        except NoNodeError:
            return {}
        return parse_partition_reassignment_data(data) if data else {}

    def create_partition_reassignment_data(self, assignment: dict[TopicPartition, list[int]]) -> None:
        """What the reassignment tool writes; raises kazoo's ``NodeExistsError`` while one is in progress."""
        self.client.create(
            REASSIGN_PARTITIONS_PATH, format_as_reassignment_json(assignment).encode(), makepath=True
        )

    def update_partition_reassignment_data(self, assignment: dict[TopicPartition, list[int]]) -> None:
        """Kafka's ``updatePartitionReassignmentData``: rewrite the path with what is left, or delete it
        when nothing is (which is how the tool's ``--verify`` and a new ``--execute`` see it done)."""
        if not assignment:
            self.delete_path(REASSIGN_PARTITIONS_PATH)
            log.info(
                "No more partitions need to be reassigned. Deleting zk path %s", REASSIGN_PARTITIONS_PATH
            )
            return
        data = format_as_reassignment_json(assignment).encode()
        try:
            self.client.set(REASSIGN_PARTITIONS_PATH, data)
        except NoNodeError:
            try:
                self.client.create(REASSIGN_PARTITIONS_PATH, data, makepath=True)
            except NodeExistsError:
                self.client.set(REASSIGN_PARTITIONS_PATH, data)

    def get_partitions_undergoing_preferred_replica_election(self) -> set[TopicPartition]:
        """``/admin/preferred_replica_election``'s partitions; empty when absent. Raises ValueError if
        it holds malformed JSON."""
        try:
            data, _ = self.client.get(PREFERRED_REPLICA_ELECTION_PATH)
        except NoNodeError:
            return set()
        return parse_preferred_replica_election_data(data)

    def create_preferred_replica_election_data(self, partitions) -> bytes:
        """What the preferred-replica-election tool writes; raises kazoo's ``NodeExistsError`` while
        an election is in progress. Returns the JSON written."""
        data = preferred_replica_leader_election_zk_data(partitions)
        self.client.create(PREFERRED_REPLICA_ELECTION_PATH, data, makepath=True)
        return data

    def delete_path(self, path: str) -> None:
        """Kafka's ``deletePath``: already gone is fine."""
        try:
            self.client.delete(path)
        except NoNodeError:
            pass

    # -- controller -------------------------------------------------------------------------------------------

    # --8<-- [start:elect]
    def try_elect_controller(self, broker_id: int) -> bool:
        """Create the ephemeral ``/controller``; whoever creates it is the controller."""
        data = _kafka_json({"version": 1, "brokerid": broker_id, "timestamp": str(self._now_ms())})
        try:
            self.client.create(CONTROLLER_PATH, data, ephemeral=True)
            return True
        except NodeExistsError:
            return False

    # --8<-- [end:elect]

    def delete_controller_path(self, broker_id: int) -> None:
        """Delete ``/controller`` if it still names ``broker_id`` (the elector's ``resign``).

        ZkClient retries an operation through a lost connection until it reconnects; kazoo raises
        ``ConnectionLoss`` instead, so the delete is retried here, for as long as the session could
        still be alive (once it has expired, the ephemeral znode went with it). The znode is deleted
        only at the version read, so a newer controller's znode is never taken."""
        retry = KazooRetry(max_tries=-1, deadline=2 * self.session_timeout_ms / 1000, ignore_expire=False)

        def delete_if_ours() -> None:
            try:
                data, stat = self.client.get(CONTROLLER_PATH)
                if json.loads(data)["brokerid"] == broker_id:
                    self.client.delete(CONTROLLER_PATH, version=stat.version)
            except (NoNodeError, BadVersionError):
                pass

        try:
            retry(delete_if_ours)
        except SessionExpiredError:
            pass
        except RetryFailedError:
            log.warning(
                "Could not delete %s for broker %d before its session could expire",
                CONTROLLER_PATH,
                broker_id,
            )

    def get_controller_id(self) -> int:
        value, _ = self._read_json(CONTROLLER_PATH)
        return -1 if value is None else int(value["brokerid"])

    def get_controller_epoch(self) -> int:
        try:
            data, _ = self.client.get(CONTROLLER_EPOCH_PATH)
        except NoNodeError:
            return 0
        return int(data)

    def increment_controller_epoch(self) -> tuple[int, int]:
        """Bump ``/controller_epoch`` (conditionally: two controllers cannot both win); return
        (the new epoch, the znode's version)."""
        while True:
            try:
                data, stat = self.client.get(CONTROLLER_EPOCH_PATH)
            except NoNodeError:
                try:
                    self.client.create(CONTROLLER_EPOCH_PATH, b"1")
                    return 1, 0
                except NodeExistsError:
                    continue
            epoch = int(data) + 1
            try:
                stat = self.client.set(CONTROLLER_EPOCH_PATH, str(epoch).encode(), version=stat.version)
                return epoch, stat.version
            except BadVersionError:
                continue

    # -- cluster id, producer ids --------------------------------------------------------------------------------

    def get_or_create_cluster_id(self) -> str:
        value, _ = self._read_json(CLUSTER_ID_PATH)
        if value is not None:
            return value["id"]
        proposed = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        try:
            self.client.create(CLUSTER_ID_PATH, _kafka_json({"version": "1", "id": proposed}), makepath=True)
            return proposed
        except NodeExistsError:
            value, _ = self._read_json(CLUSTER_ID_PATH)
            return value["id"]

    def get_new_producer_id_block(
        self, broker_id: int, block_size: int = PRODUCER_ID_BLOCK_SIZE
    ) -> tuple[int, int]:
        """Reserve the next ``block_size`` producer ids: (first, last), both inclusive."""
        while True:
            value, stat = self._read_json(PRODUCER_ID_BLOCK_PATH)
            start = 0 if value is None else int(value["block_end"]) + 1
            end = start + block_size - 1
            data = _json(
                {"version": 1, "broker": broker_id, "block_start": str(start), "block_end": str(end)}
            )
            try:
                if stat is None:
                    self.client.create(PRODUCER_ID_BLOCK_PATH, data)
                else:
                    self.client.set(PRODUCER_ID_BLOCK_PATH, data, version=stat.version)
                return start, end
            except (NodeExistsError, BadVersionError):
                continue  # another broker took this block: read again

    # -- watches -------------------------------------------------------------------------------------------------

    def watch_children(self, path: str, callback: Callable[[list[str]], bool | None]) -> None:
        """``callback(children)`` now and after every change, until it returns False."""
        self.client.ensure_path(path)
        self.client.ChildrenWatch(path, callback)

    def watch_data(self, path: str, callback: Callable) -> None:
        """``callback(data, stat)`` now and after every change (data None once deleted), until it returns False."""
        self.client.DataWatch(path, callback)

    # -- generic reads and writes (the ACLs' znodes and any sequential notifications) --------------------------

    def make_sure_persistent_path_exists(self, path: str) -> None:
        self.client.ensure_path(path)

    def get_children(self, path: str) -> list[str]:
        """The children of ``path``, sorted; none if it does not exist."""
        try:
            return sorted(self.client.get_children(path))
        except NoNodeError:
            return []

    def read_data_maybe_null(self, path: str) -> tuple[bytes | None, int, int]:
        """The znode's data, version and creation time (ms); ``(None, -1, -1)`` if it does not exist."""
        try:
            data, stat = self.client.get(path)
        except NoNodeError:
            return None, -1, -1
        return data, stat.version, stat.ctime

    def conditional_write_path(self, path: str, data: bytes, expected_version: int) -> tuple[bool, int]:
        """Write only if the znode is at ``expected_version`` (create it if it does not exist and
        ``expected_version`` is -1): ``(True, new version)``, or ``(False, -1)`` if someone else
        changed it since it was read (Kafka's ``conditionalUpdatePersistentPathIfExists``, then
        ``createPersistentPath`` for a new znode)."""
        try:
            if expected_version < 0:
                self.client.create(path, data, makepath=True)
                return True, 0
            return True, self.client.set(path, data, version=expected_version).version
        except (BadVersionError, NodeExistsError, NoNodeError):
            return False, -1

    def conditional_delete_path(self, path: str, expected_version: int) -> bool:
        """Delete only if the znode is at ``expected_version`` (gone already counts as done)."""
        try:
            self.client.delete(path, version=expected_version)
        except NoNodeError:
            return True
        except BadVersionError:
            return False
        return True

    def create_sequential_persistent_path(self, path_prefix: str, data: bytes) -> str:
        """A persistent sequential znode ``<path_prefix><10 digits>``; returns its path."""
        return self.client.create(path_prefix, data, sequence=True, makepath=True)
