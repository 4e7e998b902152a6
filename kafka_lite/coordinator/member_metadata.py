"""One member of a group, as the coordinator holds it: who it is, its timeouts, its protocols, its assignment.

Mirrors: kafka.coordinator.MemberMetadata and MemberSummary
         (core/src/main/scala/kafka/coordinator/MemberMetadata.scala, Kafka 0.10.1)
Book:    chapter 5, 5.1.1 (the protocols a member offers, and its vote), 5.2.2 (consumer metadata)
Differs: a bad argument raises ``IllegalArgumentException`` naming the member and the protocols
         (Kafka's message says only "Member does not support protocol").

A member joins with a *protocol type* (``"consumer"`` for consumers; Kafka Connect's workers say
``"connect"``) and an ordered list of *protocols*, each a name and an opaque metadata blob. For a
consumer a protocol is a partition assignor (``range``, ``roundrobin``), and its metadata is the
member's subscription, encoded by the client. The coordinator never reads the blobs: it picks the
protocol every member supports (each member votes for the first of its own it finds among the
candidates, so the list's order is the member's preference), hands the leader every member's
blob for that protocol, and hands each member the assignment bytes the leader wrote for it.

Two callbacks park a member's request while the group cannot answer it yet: the JoinGroup's while
the group prepares to rebalance (``awaiting_join_callback``), and the SyncGroup's while the group
waits for the leader's assignment (``awaiting_sync_callback``). A member with a parked request is
alive by definition: the coordinator does not expire its session while either is set.

Like Kafka's (``@nonthreadsafe``), a member is guarded by its group's lock, never by its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from kafka_lite.common.errors import IllegalArgumentException

# A protocol a member offers: its name (an assignor's, for consumers) and the member's metadata for it.
Protocol = tuple[str, bytes]


@dataclass(frozen=True)
class MemberSummary:
    """One member as DescribeGroups shows it (Kafka's ``MemberSummary`` case class)."""

    member_id: str
    client_id: str
    client_host: str
    metadata: bytes
    assignment: bytes


class MemberMetadata:
    """A group member: its identity, its two timeouts, its protocols, and its place in a rebalance.

    ``rebalance_timeout_ms`` is how long the coordinator waits for this member to rejoin once a
    rebalance starts (a consumer sends its ``max.poll.interval.ms``); ``session_timeout_ms`` is how
    long it may go without a heartbeat before the coordinator counts it as failed. Both are ints in
    milliseconds, as the JoinGroup request carries them.
    """

    def __init__(
        self,
        member_id: str,
        group_id: str,
        client_id: str,
        client_host: str,
        rebalance_timeout_ms: int,
        session_timeout_ms: int,
        protocol_type: str,
        supported_protocols: Sequence[Protocol],
    ) -> None:
        for name, value in (
            ("member_id", member_id),
            ("group_id", group_id),
            ("client_id", client_id),
            ("client_host", client_host),
            ("protocol_type", protocol_type),
        ):
            if not isinstance(value, str):
                raise TypeError(
                    f"MemberMetadata: {name} must be a str, not {type(value).__name__} ({value!r})"
                )
        for name, value in (
            ("rebalance_timeout_ms", rebalance_timeout_ms),
            ("session_timeout_ms", session_timeout_ms),
        ):
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError(
                    f"MemberMetadata: {name} must be an int number of milliseconds, "
                    f"not {type(value).__name__} ({value!r})"
                )
        self.member_id = member_id
        self.group_id = group_id
        self.client_id = client_id
        self.client_host = client_host
        self.rebalance_timeout_ms = rebalance_timeout_ms
        self.session_timeout_ms = session_timeout_ms
        self.protocol_type = protocol_type
        self.supported_protocols = supported_protocols  # checked by the setter below

        # What the leader assigned this member in the current generation (empty until SyncGroup).
        self.assignment: bytes = b""
        # The parked JoinGroup response (called with the coordinator's JoinGroupResult) and the parked
        # SyncGroup response (called with the assignment bytes and its Errors).
        self.awaiting_join_callback: Callable[[Any], None] | None = None
        self.awaiting_sync_callback: Callable[[bytes, int], None] | None = None
        # When the coordinator last heard from the member (ms, from the coordinator's Time); -1: never.
        self.latest_heartbeat: int = -1
        # Set by LeaveGroup, so the member's pending heartbeat expiry completes instead of failing it.
        self.is_leaving: bool = False

    # -- protocols ----------------------------------------------------------------------------------------

    @property
    def supported_protocols(self) -> list[Protocol]:
        """The member's protocols, most preferred first (Kafka's ``supportedProtocols``, a ``var``:
        a member rejoining with new metadata replaces them)."""
        return self._supported_protocols

    @supported_protocols.setter
    def supported_protocols(self, protocols: Sequence[Protocol]) -> None:
        self._supported_protocols = _checked_protocols(protocols, self.member_id)

    def protocols(self) -> set[str]:
        """The names of the member's protocols, as a set (the group intersects them across members)."""
        return {name for name, _ in self._supported_protocols}

    def metadata(self, protocol: str) -> bytes:
        """The member's metadata for ``protocol``: what the leader reads to compute the assignment."""
        for name, metadata in self._supported_protocols:
            if name == protocol:
                return metadata
        raise IllegalArgumentException(
            f"Member does not support protocol {protocol!r}: member {self.member_id} supports "
            f"{self._protocol_names()}"
        )

    def matches(self, protocols: Sequence[Protocol]) -> bool:
        """Whether ``protocols`` are the member's own, in the same order with the same metadata.

        A member that rejoins with matching protocols changed nothing, so a stable group can answer it
        with the current generation instead of rebalancing."""
        if len(protocols) != len(self._supported_protocols):
            return False
        return all(
            name == own_name and metadata == own_metadata
            for (name, metadata), (own_name, own_metadata) in zip(protocols, self._supported_protocols)
        )

    def vote(self, candidates: Iterable[str]) -> str:
        """The member's vote among the group's ``candidates``: the first of its own protocols, in its
        order of preference, that is one of them."""
        candidates = set(candidates)
        for name, _ in self._supported_protocols:
            if name in candidates:
                return name
        raise IllegalArgumentException(
            f"Member does not support any of the candidate protocols: member {self.member_id} supports "
            f"{self._protocol_names()}, the candidates are {sorted(candidates)}"
        )

    # -- DescribeGroups -----------------------------------------------------------------------------------

    def summary(self, protocol: str) -> MemberSummary:
        """The member as a stable group describes it: with its metadata for the group's protocol."""
        return MemberSummary(
            self.member_id, self.client_id, self.client_host, self.metadata(protocol), self.assignment
        )

    def summary_no_metadata(self) -> MemberSummary:
        """The member as a group that is not stable describes it: no metadata, no assignment (neither
        belongs to a finished generation yet)."""
        return MemberSummary(self.member_id, self.client_id, self.client_host, b"", b"")

    def __str__(self) -> str:
        # Kafka's toString: [memberId,clientId,clientHost,sessionTimeoutMs]
        return f"[{self.member_id},{self.client_id},{self.client_host},{self.session_timeout_ms}]"

    __repr__ = __str__

    def _protocol_names(self) -> list[str]:
        return [name for name, _ in self._supported_protocols]


def _checked_protocols(protocols: Sequence[Protocol], member_id: str) -> list[Protocol]:
    """``protocols`` as a list of (name, metadata bytes) pairs, or a TypeError naming the bad entry."""
    if isinstance(protocols, (str, bytes)) or not isinstance(protocols, Sequence):
        raise TypeError(
            f"MemberMetadata {member_id}: supported_protocols must be a list of (name, metadata) pairs, "
            f"not {type(protocols).__name__}"
        )
    checked = []
    for i, entry in enumerate(protocols):
        if not (isinstance(entry, tuple) and len(entry) == 2):
            raise TypeError(
                f"MemberMetadata {member_id}: supported_protocols[{i}] must be a (name, metadata) pair, "
                f"not {entry!r}"
            )
        name, metadata = entry
        if not isinstance(name, str) or not isinstance(metadata, bytes):
            raise TypeError(
                f"MemberMetadata {member_id}: supported_protocols[{i}] must be (str, bytes), "
                f"not ({type(name).__name__}, {type(metadata).__name__})"
            )
        checked.append((name, metadata))
    return checked
