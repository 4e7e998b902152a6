"""``kafka-metadata-quorum describe``: how the KRaft quorum stands, from its leader's DescribeQuorum.

Mirrors: kafka.admin.MetadataQuorumCommand (core/src/main/scala/kafka/admin/MetadataQuorumCommand.scala,
         Kafka 3.3.0; Java's org.apache.kafka.tools.MetadataQuorumCommand from 3.5), with the
         admin client's QuorumInfo and ToolsUtils.prettyPrintTable
Book:    beyond the book: chapter 12 (KRaft)
Differs: the admin is any object with ``describe_metadata_quorum()`` and ``cluster_id()``;
         ``QuorumAdmin`` tries each address until one answers as the leader (a broker, which
         forwards the request to the active controller, or a voter), where Kafka 3.3's Admin sends
         it to one broker; with controllers' addresses it asks the active controller first, as
         Kafka 3.7's Admin does (``_kafka_3_7_active_controller``).

The tool asks one question, DescribeQuorum, which only the leader answers (a follower says
NOT_LEADER_OR_FOLLOWER): the leader is the one replica that knows how far every other has fetched,
since each follower's Fetch tells it. The answer, as Kafka's Admin client hands it over
(``QuorumInfo``): the leader, its epoch, the high watermark, and for each voter and each observer
its log end offset and two times on the leader's clock, its last Fetch and the last time it had
fetched everything the leader had (KIP-836, DescribeQuorum v1). An unknown time is -1 on the wire
and empty here, as Kafka's ``OptionalLong``.

``describe --status`` sums it up::

    ClusterId:              null
    LeaderId:               1
    LeaderEpoch:            3
    HighWatermark:          1204
    MaxFollowerLag:         12
    MaxFollowerLagTimeMs:   40
    CurrentVoters:          [1,2,3]
    CurrentObservers:       []

MaxFollowerLag is how many offsets the voter furthest behind trails the leader's end, and
MaxFollowerLagTimeMs how long ago, on the leader's clock, that voter was last caught up (0 when the
leader itself is the furthest behind, -1 when a time is unknown). ``describe --replication`` prints
one row a replica, the leader first, then the followers, then the observers, as
``prettyPrintTable`` does: each column padded to its widest value and ended by a tab.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from kafka_lite.common.errors import Errors


class TerseFailure(Exception):
    """A failure the tool reports in one line and exit code 1 (Kafka's ``kafka.tools.TerseFailure``)."""


@dataclass(frozen=True)
class ReplicaState:
    """One replica in the leader's view (Kafka's ``QuorumInfo.ReplicaState``)."""

    replica_id: int
    log_end_offset: int
    last_fetch_timestamp: int | None = None
    last_caught_up_timestamp: int | None = None


@dataclass(frozen=True)
class QuorumInfo:
    """The leader's DescribeQuorum answer (Kafka's ``org.apache.kafka.clients.admin.QuorumInfo``)."""

    leader_id: int
    leader_epoch: int
    high_watermark: int
    voters: tuple[ReplicaState, ...]
    observers: tuple[ReplicaState, ...]

    @classmethod
    def from_partition(cls, partition: dict[str, Any]) -> QuorumInfo:
        """From DescribeQuorum's partition data, as KafkaAdminClient.describeMetadataQuorum builds it:
        a timestamp of -1 (unknown, or a v0 answer without it) becomes None."""

        def replica(state: dict[str, Any]) -> ReplicaState:
            def known(key: str) -> int | None:
                value = state.get(key, -1)
                return None if value == -1 else value

            return ReplicaState(
                state["replica_id"], state["log_end_offset"],
                known("last_fetch_timestamp"), known("last_caught_up_timestamp"),
            )  # fmt: skip

        return cls(
            partition["leader_id"], partition["leader_epoch"], partition["high_watermark"],
            tuple(replica(s) for s in partition["current_voters"]),
            tuple(replica(s) for s in partition["observers"]),
        )  # fmt: skip


class Admin(Protocol):
    """What the tool asks of Kafka's Admin: ``describeMetadataQuorum`` and ``describeCluster``'s id."""

    def describe_metadata_quorum(self) -> QuorumInfo: ...

    def cluster_id(self) -> str | None: ...


class QuorumAdmin:
    """An Admin over brokers or voters: DescribeQuorum to the active controller when a controller
    among the addresses names it, then to each address in turn, until one answers as leader (a
    KRaft broker forwards it to the leader; a voter answers only if it leads).
    ``describe_quorum(address)`` sends the request and returns the answer's partition data
    (``kafka_lite.raft.tools.quorum_client.describe_quorum``, passed in by the CLI).

    ``describe_cluster(address)`` asks for the cluster id: a broker from its Metadata, a KRaft
    controller with DescribeCluster, which it answers on its listener as Kafka 3.7's does (KIP-919,
    with ``--bootstrap-controller``); a bare Raft voter (``raft test-server``) answers neither, and
    then the id prints as Kafka prints a null one."""

    def __init__(
        self,
        addresses: Sequence[tuple[str, int]],
        describe_quorum: Callable[[tuple[str, int]], dict[str, Any]],
        describe_cluster: Callable[[tuple[str, int]], dict[str, Any]] | None = None,
    ) -> None:
        self._addresses = list(addresses)
        self._describe_quorum = describe_quorum
        self._describe_cluster = describe_cluster

    def describe_metadata_quorum(self) -> QuorumInfo:
        answers = []
        active = self._kafka_3_7_active_controller()
        for host, port in (
            [active, *(a for a in self._addresses if a != active)] if active else self._addresses
        ):
            try:
                partition = self._describe_quorum((host, port))
            except OSError as e:
                answers.append(f"{host}:{port}: {e.strerror or e}")
                continue
            error = partition.get("error_code", 0)
            if error == 0:
                return QuorumInfo.from_partition(partition)
            answers.append(f"{host}:{port}: {_error_name(error)}")
        raise TerseFailure(
            "no address answered DescribeQuorum as the quorum's leader (only the leader can): "
            + "; ".join(answers)
        )

    def _kafka_3_7_active_controller(self) -> tuple[str, int] | None:
        """The quorum's leader and its address, as a controller's DescribeCluster names them among
        the controllers, or None (no controller among the addresses, or no leader now). Kafka 3.7's
        Admin, given ``--bootstrap-controller``, learns the controllers so and sends DescribeQuorum
        to the active one (KIP-919), so that one controller's address is enough."""
        if self._describe_cluster is None:
            return None
        for address in self._addresses:
            try:
                answer = self._describe_cluster(address)
            except OSError:
                continue
            nodes = {n["broker_id"]: (n["host"], n["port"]) for n in answer.get("brokers", [])}
            if answer.get("error_code") == 0 and answer.get("controller_id") in nodes:
                return nodes[answer["controller_id"]]
        return None

    def cluster_id(self) -> str | None:
        """The first address's answer to DescribeCluster (any controller knows the id), or None."""
        if self._describe_cluster is None:
            return None
        for address in self._addresses:
            try:
                answer = self._describe_cluster(address)
            except OSError:  # not a KRaft controller, or not reachable: ask the next one
                continue
            if answer.get("error_code") == 0:
                return answer["cluster_id"]
        return None


def _error_name(code: int) -> str:
    # Code 6 is NOT_LEADER_FOR_PARTITION in the book's error table; Kafka 2.6 renamed it
    # NOT_LEADER_OR_FOLLOWER, the name a Raft follower's answer goes by.
    return (
        "NOT_LEADER_OR_FOLLOWER"
        if code == Errors.NOT_LEADER_FOR_PARTITION.code
        else Errors.for_code(code).name
    )


def describe(admin: Admin, status: bool, replication: bool) -> list[str]:
    """The ``describe`` sub-command: its lines, or a TerseFailure with Kafka's wording."""
    if status and replication:
        raise TerseFailure(
            "Only one of --status or --replication should be specified with describe sub-command"
        )
    if replication:
        return handle_describe_replication(admin)
    if status:
        return handle_describe_status(admin)
    raise TerseFailure("One of --status or --replication must be specified with describe sub-command")


def _leader(quorum_info: QuorumInfo) -> ReplicaState:
    return next(v for v in quorum_info.voters if v.replica_id == quorum_info.leader_id)


def handle_describe_status(admin: Admin) -> list[str]:
    cluster_id = admin.cluster_id()
    quorum_info = admin.describe_metadata_quorum()
    leader = _leader(quorum_info)
    # The furthest behind: the first voter of the lowest log end offset (Scala's minBy).
    max_lag_follower = min(quorum_info.voters, key=lambda v: v.log_end_offset)
    max_follower_lag = leader.log_end_offset - max_lag_follower.log_end_offset
    if max_lag_follower == leader:
        max_follower_lag_time_ms = 0
    elif (
        leader.last_caught_up_timestamp is not None and max_lag_follower.last_caught_up_timestamp is not None
    ):
        max_follower_lag_time_ms = leader.last_caught_up_timestamp - max_lag_follower.last_caught_up_timestamp
    else:
        max_follower_lag_time_ms = -1
    return [
        f"ClusterId:              {'null' if cluster_id is None else cluster_id}",
        f"LeaderId:               {quorum_info.leader_id}",
        f"LeaderEpoch:            {quorum_info.leader_epoch}",
        f"HighWatermark:          {quorum_info.high_watermark}",
        f"MaxFollowerLag:         {max_follower_lag}",
        f"MaxFollowerLagTimeMs:   {max_follower_lag_time_ms}",
        f"CurrentVoters:          [{','.join(str(v.replica_id) for v in quorum_info.voters)}]",
        f"CurrentObservers:       [{','.join(str(o.replica_id) for o in quorum_info.observers)}]",
    ]


REPLICATION_HEADERS = (
    "NodeId",
    "LogEndOffset",
    "Lag",
    "LastFetchTimestamp",
    "LastCaughtUpTimestamp",
    "Status",
)


def handle_describe_replication(admin: Admin) -> list[str]:
    quorum_info = admin.describe_metadata_quorum()
    leader = _leader(quorum_info)

    def rows(infos: Sequence[ReplicaState], status: str) -> list[list[str]]:
        return [
            [
                str(info.replica_id),
                str(info.log_end_offset),
                str(leader.log_end_offset - info.log_end_offset),
                str(-1 if info.last_fetch_timestamp is None else info.last_fetch_timestamp),
                str(-1 if info.last_caught_up_timestamp is None else info.last_caught_up_timestamp),
                status,
            ]
            for info in infos
        ]

    followers = [v for v in quorum_info.voters if v.replica_id != quorum_info.leader_id]
    return pretty_print_table(
        REPLICATION_HEADERS,
        rows([leader], "Leader") + rows(followers, "Follower") + rows(quorum_info.observers, "Observer"),
    )


def pretty_print_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """Kafka's ``ToolsUtils.prettyPrintTable``: each value left-aligned in its column's width, and a
    tab after every column (the last one too)."""
    widths = [max([len(h), *(len(row[i]) for row in rows)]) for i, h in enumerate(headers)]
    return [
        "".join(value.ljust(width) + "\t" for value, width in zip(row, widths)) for row in [headers, *rows]
    ]
