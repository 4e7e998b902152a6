"""The delayed JoinGroup: a rebalance waiting for the group's members to rejoin.

Mirrors: kafka.coordinator.DelayedJoin (core/src/main/scala/kafka/coordinator/DelayedJoin.scala,
         Kafka 0.10.1), kafka.coordinator.group.InitialDelayedJoin (Kafka 0.11.0's
         DelayedJoin.scala, for ``group.initial.rebalance.delay.ms``) and kafka.server.GroupKey
         (core/src/main/scala/kafka/server/DelayedOperationKey.scala)
Book:    chapter 5, 5.3.1-5.3.3 (preparing a rebalance, the delayed join in the purgatory, trying
         to complete it)
Differs: Kafka 0.11 sets a ``newMemberAdded`` flag on the group when a member joins a
         generation-0 group that is preparing its rebalance; here ``InitialDelayedJoin`` keeps the
         members it started with and waits again when a member it did not start with is in the group
         (and the group is still at generation 0), so the decision lives in the operation and the
         group carries no flag. Kafka's flag is cleared only when a delay is extended, so it can
         outlive the first rebalance and extend a later one once; here only generation 0 extends.

When a group starts a rebalance (``prepare_rebalance``), the coordinator parks one ``DelayedJoin``
in its join purgatory under the group's key, with the group's rebalance timeout (the largest of its
members'). Every JoinGroup re-checks it: once every known member has rejoined, it completes and
the next generation starts. If the timeout passes first, the members that did not rejoin are
dropped and the generation starts with the rest.

``group.initial.rebalance.delay.ms`` (Kafka 0.11, KIP-134): the first rebalance of an Empty group
waits that long even when every member is in, because consumers of a new group start one after
another and each one joining would otherwise rebalance the group again. An ``InitialDelayedJoin``
never completes early; when its delay ends and new members came in meanwhile, it waits another
delay (never more than what remains of the rebalance timeout); otherwise it completes as a
``DelayedJoin`` does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from kafka_lite.utils.delayed_operation import DelayedOperation, DelayedOperationPurgatory

if TYPE_CHECKING:
    from kafka_lite.coordinator.group_coordinator import GroupCoordinator
    from kafka_lite.coordinator.group_metadata import GroupMetadata


@dataclass(frozen=True)
class GroupKey:
    """The join purgatory's key for a group's delayed join (Kafka's ``GroupKey``)."""

    group_id: str

    def key_label(self) -> str:
        return self.group_id


class DelayedJoin(DelayedOperation):
    """A rebalance waiting until every known member has rejoined, or the rebalance timeout."""

    def __init__(
        self, coordinator: GroupCoordinator, group: GroupMetadata, rebalance_timeout_ms: int
    ) -> None:
        super().__init__(rebalance_timeout_ms)
        self.coordinator = coordinator
        self.group = group

    def try_complete(self) -> bool:
        return self.coordinator.try_complete_join(self.group, self.force_complete)

    def on_expiration(self) -> None:
        self.coordinator.on_expire_join()

    def on_complete(self) -> None:
        self.coordinator.on_complete_join(self.group)


class InitialDelayedJoin(DelayedJoin):
    """The first rebalance of an Empty group: waits ``delay_ms``, and again while members keep coming.

    ``configured_rebalance_delay_ms`` is ``group.initial.rebalance.delay.ms``; ``remaining_ms`` is
    how much of the rebalance timeout is left after this delay."""

    def __init__(
        self,
        coordinator: GroupCoordinator,
        purgatory: DelayedOperationPurgatory,
        group: GroupMetadata,
        configured_rebalance_delay_ms: int,
        delay_ms: int,
        remaining_ms: int,
    ) -> None:
        super().__init__(coordinator, group, delay_ms)
        self.purgatory = purgatory
        self.configured_rebalance_delay_ms = configured_rebalance_delay_ms
        self.remaining_ms = remaining_ms
        self.members_at_start = group.all_members()

    def try_complete(self) -> bool:
        return False  # only the delay ends it

    def new_member_added(self) -> bool:
        """Whether a member joined the group's first generation since this delay started."""
        return self.group.generation_id == 0 and bool(self.group.all_members() - self.members_at_start)

    # --8<-- [start:initial_delayed_join]
    def on_complete(self) -> None:
        with self.group.lock:
            if self.new_member_added() and self.remaining_ms != 0:
                delay = min(self.configured_rebalance_delay_ms, self.remaining_ms)
                remaining = max(self.remaining_ms - self.delay_ms, 0)
                self.purgatory.try_complete_else_watch(
                    InitialDelayedJoin(
                        self.coordinator,
                        self.purgatory,
                        self.group,
                        self.configured_rebalance_delay_ms,
                        delay,
                        remaining,
                    ),
                    [GroupKey(self.group.group_id)],
                )
            else:
                super().on_complete()

    # --8<-- [end:initial_delayed_join]
