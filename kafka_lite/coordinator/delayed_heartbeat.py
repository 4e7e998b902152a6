"""The delayed heartbeat: a member's session, expiring unless the member is heard from in time.

Mirrors: kafka.coordinator.DelayedHeartbeat (core/src/main/scala/kafka/coordinator/DelayedHeartbeat.scala,
         Kafka 0.10.1) and kafka.server.MemberKey (core/src/main/scala/kafka/server/DelayedOperationKey.scala)
Book:    chapter 5, 5.4.6 (rebalance timeouts and session timeouts), 5.4.7 (the delayed heartbeat)

Each time the coordinator hears from a member (a heartbeat, the JoinGroup answer, its SyncGroup
answer), it completes the member's pending ``DelayedHeartbeat`` and parks a new one in the heartbeat
purgatory under the member's key, due a session timeout later. Completing the old one is a check:
it completes because the member's latest heartbeat now lies beyond that operation's deadline (or the
member is leaving). If nothing completes it, the timer expires it and the coordinator counts the
member as failed, unless a parked JoinGroup or SyncGroup shows it is alive (heartbeats pause during a
rebalance).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from kafka_lite.utils.delayed_operation import DelayedOperation

if TYPE_CHECKING:
    from kafka_lite.coordinator.group_coordinator import GroupCoordinator
    from kafka_lite.coordinator.group_metadata import GroupMetadata
    from kafka_lite.coordinator.member_metadata import MemberMetadata


@dataclass(frozen=True)
class MemberKey:
    """The heartbeat purgatory's key for a member's delayed heartbeat (Kafka's ``MemberKey``)."""

    group_id: str
    consumer_id: str

    def key_label(self) -> str:
        return f"{self.group_id}-{self.consumer_id}"


class DelayedHeartbeat(DelayedOperation):
    """A member's session: due ``session_timeout_ms`` after its latest heartbeat (``heartbeat_deadline``)."""

    def __init__(
        self,
        coordinator: GroupCoordinator,
        group: GroupMetadata,
        member: MemberMetadata,
        heartbeat_deadline: int,
        session_timeout_ms: int,
    ) -> None:
        super().__init__(session_timeout_ms)
        self.coordinator = coordinator
        self.group = group
        self.member = member
        self.heartbeat_deadline = heartbeat_deadline

    def try_complete(self) -> bool:
        return self.coordinator.try_complete_heartbeat(
            self.group, self.member, self.heartbeat_deadline, self.force_complete
        )

    def on_expiration(self) -> None:
        self.coordinator.on_expire_heartbeat(self.group, self.member, self.heartbeat_deadline)

    def on_complete(self) -> None:
        self.coordinator.on_complete_heartbeat()
