"""The consumer's record of what it reads and where it is: subscription, assignment, positions.

Mirrors: org.apache.kafka.clients.consumer.internals.SubscriptionState, with its TopicPartitionState,
         and the ordering of org.apache.kafka.common.internals.PartitionStates
         (clients/src/main/java/org/apache/kafka/clients/consumer/internals/SubscriptionState.java,
         Kafka 0.10.1)
Book:    chapter 4, 4.1.1 (the subscription state), 4.1.2 (positions to fetch from, committed offsets
         to refresh), 4.4.2 (fetch positions as the offsets to commit); chapter 5, 5.1.3 (the
         leader's group subscription)
Differs: the assignment is kept sorted by topic, then partition, where Kafka's comes out of a
         ``HashMap`` grouped by topic: both batch a topic's partitions together, ours repeatably.
         ``subscribe`` and ``assign_from_user`` also check their arguments as ``KafkaConsumer``
         does (a bare string, an empty topic name, a pattern that is not compiled), so every caller
         gets the same clear error; a topic name the brokers would refuse raises
         ``InvalidTopicException`` here, where 0.10.1 only logs the metadata's error, and waits.
         Three helpers are later Kafkas' and say which and why: ``has_valid_position(tp)``,
         ``matches_subscribed_pattern``, and the high watermark kept per partition
         (``update_high_watermark``, ``partition_lag``). The book (0.10.0) also
         keeps ``needsPartitionAssignment`` here; Kafka 0.10.1 moved that question to the
         coordinator (``ConsumerCoordinator.needRejoin``), and so does kafka_lite. Kafka's unread
         ``userAssignment`` field is left out (the assignment itself is what is read).

What a consumer consumes is set in one of three exclusive ways, the subscription type:

- ``AUTO_TOPICS``: ``subscribe(topics, listener)``; the group's coordinator divides the partitions of
  the subscribed topics among the members, and hands this member its share through
  ``assign_from_subscribed``, which refuses a partition of a topic not subscribed.
- ``AUTO_PATTERN``: ``subscribe(pattern, listener)``; on every metadata update the coordinator lists
  the cluster's topics whose whole name matches the pattern and passes them to
  ``subscribe_from_pattern``; from there it is as ``AUTO_TOPICS``.
- ``USER_ASSIGNED``: ``assign_from_user(partitions)``; no group, no rebalance, no listener.

Mixing them raises ``IllegalStateException("Subscription to topics, partitions and pattern are
mutually exclusive")``; ``unsubscribe`` returns to ``NONE``, from which any type may be chosen.

Each assigned partition has a ``TopicPartitionState``: the position (the offset of the next record
to fetch, ``None`` until known), the last committed offset, whether the user paused it, and the reset
strategy while it waits for a reset. A new assignment starts every partition afresh. A partition is
fetchable when it is assigned, not paused and has a position; before the first fetch the consumer
gives each partition without a position the group's committed offset, or resets it by the strategy.
``all_consumed`` returns the positions as the offsets to commit.

Not thread-safe, as Kafka's is not: a consumer is used from one thread at a time (Kafka's
``KafkaConsumer`` refuses a second thread with ``ConcurrentModificationException``), and only that
thread reaches this object; the heartbeat thread never does.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable
from typing import overload

from kafka_lite.common.errors import IllegalArgumentException, IllegalStateException
from kafka_lite.common.topic import validate_topic_name
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.consumer.consumer_rebalance_listener import ConsumerRebalanceListener
from kafka_lite.consumer.offset_and_metadata import OffsetAndMetadata
from kafka_lite.consumer.offset_reset_strategy import OffsetResetStrategy

SUBSCRIPTION_EXCEPTION_MESSAGE = "Subscription to topics, partitions and pattern are mutually exclusive"


class SubscriptionType(enum.Enum):
    NONE = "NONE"
    AUTO_TOPICS = "AUTO_TOPICS"
    AUTO_PATTERN = "AUTO_PATTERN"
    USER_ASSIGNED = "USER_ASSIGNED"


def _tp_str(tp: TopicPartition) -> str:
    """A partition as Kafka's ``TopicPartition.toString`` writes it: ``topic-0``."""
    return f"{tp[0]}-{tp[1]}"


# --8<-- [start:topic_partition_state]
class TopicPartitionState:
    """What the consumer knows of one assigned partition."""

    __slots__ = ("committed", "high_watermark", "paused", "position", "reset_strategy")

    def __init__(self) -> None:
        self.position: int | None = None  # the offset of the next record to fetch
        self.high_watermark: int | None = None  # the last fetch response's: see partition_lag
        self.committed: OffsetAndMetadata | None = None  # the group's last committed offset
        self.paused = False  # paused by the user: assigned, but not fetched
        self.reset_strategy: OffsetResetStrategy | None = None  # set while waiting for a reset

    def await_reset(self, strategy: OffsetResetStrategy) -> None:
        # The position is dropped: the partition is not fetchable until the reset gives it one.
        self.reset_strategy = strategy
        self.position = None

    def awaiting_reset(self) -> bool:
        return self.reset_strategy is not None

    def has_valid_position(self) -> bool:
        return self.position is not None

    def seek(self, offset: int) -> None:
        # A seek is also how a reset completes: it gives the position and ends the wait.
        self.position = offset
        self.reset_strategy = None

    def set_position(self, offset: int) -> None:
        # Moving the position forward (the fetcher, after returning records) needs one to start from:
        # the first position always comes from a seek, a committed offset or a reset.
        if not self.has_valid_position():
            raise IllegalStateException("Cannot set a new position without a valid current position")
        self.position = offset

    def is_fetchable(self) -> bool:
        return not self.paused and self.has_valid_position()


# --8<-- [end:topic_partition_state]


class SubscriptionState:
    def __init__(self, default_reset_strategy: OffsetResetStrategy) -> None:
        if not isinstance(default_reset_strategy, OffsetResetStrategy):
            raise IllegalArgumentException(
                f"default_reset_strategy must be an OffsetResetStrategy, not {default_reset_strategy!r}"
            )
        self.default_reset_strategy = default_reset_strategy
        self.subscription_type = SubscriptionType.NONE
        self._subscribed_pattern: re.Pattern[str] | None = None
        # The topics this member subscribed to (subscribe, or subscribe_from_pattern's matches).
        self._subscription: frozenset[str] = frozenset()
        # The topics of the whole group, which only the leader learns (from the JoinGroup response)
        # and needs metadata for, to compute the assignment; a follower's is its own subscription.
        self._group_subscription: set[str] = set()
        # The assigned partitions and their states, in the order the fetcher visits them (Kafka's
        # PartitionStates, a LinkedHashMap): grouped by topic, and rotated by move_partition_to_end.
        self._assignment: dict[TopicPartition, TopicPartitionState] = {}
        # A consumer starts by asking the coordinator for its group's committed offsets.
        self._needs_fetch_committed_offsets = True
        self._listener: ConsumerRebalanceListener | None = None

    # -- choosing what to consume ------------------------------------------------------------------

    def _set_subscription_type(self, type_: SubscriptionType) -> None:
        """Take ``type_`` if no type is set yet; otherwise it must be the type already in use."""
        if self.subscription_type is SubscriptionType.NONE:
            self.subscription_type = type_
        elif self.subscription_type is not type_:
            raise IllegalStateException(SUBSCRIPTION_EXCEPTION_MESSAGE)

    @overload
    def subscribe(self, topics: Iterable[str], listener: ConsumerRebalanceListener) -> None: ...
    @overload
    def subscribe(self, topics: re.Pattern[str], listener: ConsumerRebalanceListener) -> None: ...

    def subscribe(self, topics: Iterable[str] | re.Pattern[str], listener: ConsumerRebalanceListener) -> None:
        """Subscribe to a collection of topics (AUTO_TOPICS) or to a compiled pattern (AUTO_PATTERN).

        Kafka has two ``subscribe`` methods, one per argument type; here the type of ``topics``
        chooses. Subscribing again with the same type replaces the subscription.
        """
        if listener is None:
            raise IllegalArgumentException("RebalanceListener cannot be null")
        if not isinstance(listener, ConsumerRebalanceListener):
            raise IllegalArgumentException(
                f"RebalanceListener must be a ConsumerRebalanceListener, not {type(listener).__name__}"
            )
        if isinstance(topics, re.Pattern):
            self._subscribe_pattern(topics, listener)
            return
        topic_set = self._topic_set(topics)
        self._set_subscription_type(SubscriptionType.AUTO_TOPICS)
        self._listener = listener
        self._change_subscription(topic_set)

    def _subscribe_pattern(self, pattern: re.Pattern[str], listener: ConsumerRebalanceListener) -> None:
        self._set_subscription_type(SubscriptionType.AUTO_PATTERN)
        self._listener = listener
        self._subscribed_pattern = pattern

    @staticmethod
    def _topic_set(topics: object) -> frozenset[str]:
        if topics is None:
            raise IllegalArgumentException("Topic collection to subscribe to cannot be null")
        if isinstance(topics, str | bytes):
            raise IllegalArgumentException(
                f"Topic collection to subscribe to must be a collection of topic names, not the "
                f"{type(topics).__name__} {topics!r}; write [{topics!r}] for one topic, or pass a "
                f"compiled re.Pattern to subscribe to a pattern"
            )
        if not isinstance(topics, Iterable):
            raise IllegalArgumentException(
                f"Topic collection to subscribe to must be a collection of topic names, not {topics!r}"
            )
        topic_list = list(topics)
        for topic in topic_list:
            if topic is None or (isinstance(topic, str) and not topic.strip()):
                raise IllegalArgumentException(
                    f"Topic collection to subscribe to cannot contain null or empty topic: {topic!r}"
                )
            if not isinstance(topic, str):
                raise IllegalArgumentException(
                    f"Topic collection to subscribe to must hold topic names, not the "
                    f"{type(topic).__name__} {topic!r}"
                )
            validate_topic_name(topic)
        return frozenset(topic_list)

    def subscribe_from_pattern(self, topics: Iterable[str]) -> None:
        """Set the subscription to the topics matching the pattern (the coordinator lists them)."""
        if self.subscription_type is not SubscriptionType.AUTO_PATTERN:
            raise IllegalArgumentException(
                f"Attempt to subscribe from pattern while subscription type set to {self.subscription_type.name}"
            )
        self._change_subscription(frozenset(topics))

    def matches_subscribed_pattern(self, topic: str) -> bool:
        """Whether the whole of ``topic`` matches the subscribed pattern (Java's ``matches()``):
        Kafka 2.3's helper for the test 0.10.1's coordinator spells out itself
        (``Pattern.matcher(topic).matches()``), kept here so the full-match rule is stated once.

        A full match, not a search: the pattern ``test`` matches the topic ``test`` only, not
        ``test-1`` or ``my-test``; write ``test.*`` for every topic that starts with ``test``.
        """
        if self._subscribed_pattern is None:
            raise IllegalStateException("No pattern subscription")
        return self._subscribed_pattern.fullmatch(topic) is not None

    def _change_subscription(self, topics_to_subscribe: frozenset[str]) -> None:
        if self._subscription != topics_to_subscribe:
            self._subscription = topics_to_subscribe
            self._group_subscription.update(topics_to_subscribe)

    def group_subscribe(self, topics: Iterable[str]) -> None:
        """Add the other members' topics to the group subscription (the leader, on JoinGroup), so
        that the leader's metadata covers every topic it must assign."""
        if self.subscription_type is SubscriptionType.USER_ASSIGNED:
            raise IllegalStateException(SUBSCRIPTION_EXCEPTION_MESSAGE)
        self._group_subscription.update(topics)

    def reset_group_subscription(self) -> None:
        """Shrink the group subscription back to this member's own topics (before rejoining, when
        this member may no longer be the leader)."""
        self._group_subscription.intersection_update(self._subscription)

    def assign_from_user(self, partitions: Iterable[TopicPartition]) -> None:
        """Assign these partitions by hand (USER_ASSIGNED). Partitions kept keep their state."""
        partition_set = self._partition_set(partitions)
        self._set_subscription_type(SubscriptionType.USER_ASSIGNED)
        if set(self._assignment) != partition_set:
            kept = self._assignment
            self._set_assignment(
                {tp: kept[tp] if tp in kept else TopicPartitionState() for tp in partition_set}
            )
            self._needs_fetch_committed_offsets = True

    @staticmethod
    def _partition_set(partitions: object) -> frozenset[TopicPartition]:
        if partitions is None:
            raise IllegalArgumentException("Topic partition collection to assign to cannot be null")
        if isinstance(partitions, str | bytes) or not isinstance(partitions, Iterable):
            raise IllegalArgumentException(
                f"Topic partition collection to assign to must be a collection of (topic, partition) "
                f"pairs, not {partitions!r}"
            )
        partition_list = list(partitions)
        for tp in partition_list:
            if not (isinstance(tp, tuple) and len(tp) == 2 and isinstance(tp[1], int)):
                raise IllegalArgumentException(
                    f"Topic partitions to assign to must be (topic, partition) pairs, not {tp!r}"
                )
            if not isinstance(tp[0], str) or not tp[0].strip():
                raise IllegalArgumentException(
                    f"Topic partitions to assign to cannot have null or empty topic: {tp!r}"
                )
            validate_topic_name(tp[0])
        return frozenset(TopicPartition(*tp) for tp in partition_list)

    def assign_from_subscribed(self, assignments: Iterable[TopicPartition]) -> None:
        """Take the partitions the group's leader assigned to this member (after SyncGroup).

        Every partition starts afresh: no position, not paused, and the committed offsets are to be
        fetched again.
        """
        if not self.partitions_auto_assigned():
            raise IllegalArgumentException(
                "Attempt to dynamically assign partitions while manual assignment in use"
            )
        assigned = [TopicPartition(*tp) for tp in assignments]
        for tp in assigned:
            if tp[0] not in self._subscription:
                raise IllegalArgumentException(f"Assigned partition {_tp_str(tp)} for non-subscribed topic.")
        self._set_assignment({tp: TopicPartitionState() for tp in assigned})
        self._needs_fetch_committed_offsets = True

    def _set_assignment(self, partition_to_state: dict[TopicPartition, TopicPartitionState]) -> None:
        # Kafka's PartitionStates.set: a topic's partitions side by side, so a fetch request (which
        # nests partitions under their topic) names each topic once.
        self._assignment = {tp: partition_to_state[tp] for tp in sorted(partition_to_state)}

    def unsubscribe(self) -> None:
        """Drop the subscription, pattern and assignment, and return to no subscription type.

        As in Kafka, the listener, the group subscription and the refresh flag are left: the next
        join's preparation shrinks the group subscription to the (new) subscription.
        """
        self._subscription = frozenset()
        self._assignment.clear()
        self._subscribed_pattern = None
        self.subscription_type = SubscriptionType.NONE

    # -- what is subscribed and assigned -----------------------------------------------------------

    def has_pattern_subscription(self) -> bool:
        return self.subscription_type is SubscriptionType.AUTO_PATTERN

    def has_no_subscription_or_user_assignment(self) -> bool:
        return self.subscription_type is SubscriptionType.NONE

    def partitions_auto_assigned(self) -> bool:
        """Whether the group assigns the partitions (a topic or pattern subscription)."""
        return self.subscription_type in (SubscriptionType.AUTO_TOPICS, SubscriptionType.AUTO_PATTERN)

    def subscribed_pattern(self) -> re.Pattern[str] | None:
        """The pattern subscribed to (Kafka 0.10.1's ``getSubscribedPattern``)."""
        return self._subscribed_pattern

    def subscription(self) -> frozenset[str]:
        """This member's topics: those subscribed, or those matching the pattern."""
        return self._subscription

    def group_subscription(self) -> frozenset[str]:
        """The topics of the whole group for the leader; a follower's own subscription (and topics
        it subscribed to before, until the next join shrinks it)."""
        return frozenset(self._group_subscription)

    def assigned_partitions(self) -> set[TopicPartition]:
        return set(self._assignment)

    def is_assigned(self, tp: TopicPartition) -> bool:
        return tp in self._assignment

    def listener(self) -> ConsumerRebalanceListener | None:
        return self._listener

    def _assigned_state(self, tp: TopicPartition) -> TopicPartitionState:
        state = self._assignment.get(tp)
        if state is None:
            raise IllegalStateException(f"No current assignment for partition {_tp_str(tp)}")
        return state

    # -- positions ---------------------------------------------------------------------------------

    def seek(self, tp: TopicPartition, offset: int) -> None:
        """Fetch ``tp`` from ``offset`` next; this also ends a wait for a reset."""
        self._assigned_state(tp).seek(offset)

    @overload
    def position(self, tp: TopicPartition) -> int | None: ...
    @overload
    def position(self, tp: TopicPartition, offset: int) -> None: ...

    def position(self, tp: TopicPartition, offset: int | None = None) -> int | None:
        """``position(tp)``: the offset of the next record to fetch, ``None`` until one is known.
        ``position(tp, offset)``: move it, from a valid position (the fetcher, after records)."""
        state = self._assigned_state(tp)
        if offset is None:
            return state.position
        state.set_position(offset)
        return None

    def has_valid_position(self, tp: TopicPartition) -> bool:
        """Whether ``tp`` has a position, paused or not: Kafka 0.10.2's, for the fetcher's
        ``_has_position`` (0.10.1 asks ``is_fetchable``, which is False for a paused partition)."""
        return self._assigned_state(tp).has_valid_position()

    def has_all_fetch_positions(self) -> bool:
        return all(state.has_valid_position() for state in self._assignment.values())

    def missing_fetch_positions(self) -> set[TopicPartition]:
        """The assigned partitions without a position: the consumer finds them one before fetching."""
        return {tp for tp, state in self._assignment.items() if not state.has_valid_position()}

    def all_consumed(self) -> dict[TopicPartition, OffsetAndMetadata]:
        """The positions of the partitions that have one, as the offsets to commit."""
        return {
            tp: OffsetAndMetadata(state.position)
            for tp, state in self._assignment.items()
            if state.position is not None
        }

    def move_partition_to_end(self, tp: TopicPartition) -> None:
        """Put ``tp`` last in the fetch order, so that a partition whose records filled the last
        response does not crowd out the others (a response's size is limited)."""
        state = self._assignment.pop(tp, None)
        if state is not None:
            self._assignment[tp] = state

    # -- resets ------------------------------------------------------------------------------------

    def need_offset_reset(
        self, tp: TopicPartition, offset_reset_strategy: OffsetResetStrategy | None = None
    ) -> None:
        """Drop ``tp``'s position until it is reset by ``offset_reset_strategy`` (by default the
        consumer's ``auto.offset.reset``)."""
        strategy = self.default_reset_strategy if offset_reset_strategy is None else offset_reset_strategy
        self._assigned_state(tp).await_reset(strategy)

    def has_default_offset_reset_policy(self) -> bool:
        return self.default_reset_strategy is not OffsetResetStrategy.NONE

    def is_offset_reset_needed(self, tp: TopicPartition) -> bool:
        return self._assigned_state(tp).awaiting_reset()

    def reset_strategy(self, tp: TopicPartition) -> OffsetResetStrategy | None:
        return self._assigned_state(tp).reset_strategy

    # -- committed offsets -------------------------------------------------------------------------

    @overload
    def committed(self, tp: TopicPartition) -> OffsetAndMetadata | None: ...
    @overload
    def committed(self, tp: TopicPartition, offset: OffsetAndMetadata) -> None: ...

    def committed(
        self, tp: TopicPartition, offset: OffsetAndMetadata | None = None
    ) -> OffsetAndMetadata | None:
        """``committed(tp)``: the group's last committed offset for ``tp`` as this consumer knows it.
        ``committed(tp, offset)``: record one (fetched from the coordinator, or just committed)."""
        state = self._assigned_state(tp)
        if offset is None:
            return state.committed
        state.committed = offset
        return None

    def need_refresh_commits(self) -> None:
        self._needs_fetch_committed_offsets = True

    def refresh_commits_needed(self) -> bool:
        """Whether to fetch the committed offsets from the coordinator before using them."""
        return self._needs_fetch_committed_offsets

    def commits_refreshed(self) -> None:
        self._needs_fetch_committed_offsets = False

    # -- pausing -----------------------------------------------------------------------------------

    def pause(self, tp: TopicPartition) -> None:
        self._assigned_state(tp).paused = True

    def resume(self, tp: TopicPartition) -> None:
        self._assigned_state(tp).paused = False

    def is_paused(self, tp: TopicPartition) -> bool:
        return self.is_assigned(tp) and self._assigned_state(tp).paused

    def paused_partitions(self) -> set[TopicPartition]:
        return {tp for tp, state in self._assignment.items() if state.paused}

    def is_fetchable(self, tp: TopicPartition) -> bool:
        return self.is_assigned(tp) and self._assigned_state(tp).is_fetchable()

    def update_high_watermark(self, tp: TopicPartition, high_watermark: int) -> None:
        """The partition's high watermark, from a fetch response: Kafka 0.10.2's
        ``updateHighWatermark``, kept for ``records-lag-max`` and the fetcher's opt-in hold-back
        (0.10.1 reads the high watermark into a fetch metric only)."""
        self._assigned_state(tp).high_watermark = high_watermark

    def partition_lag(self, tp: TopicPartition) -> int | None:
        """How far the position is behind the last high watermark seen; None until a fetch told it
        (Kafka 0.10.2's ``partitionLag``, with ``update_high_watermark``)."""
        state = self._assigned_state(tp)
        if state.high_watermark is None or state.position is None:
            return None
        return state.high_watermark - state.position

    def fetchable_partitions(self) -> list[TopicPartition]:
        """The partitions to fetch, in fetch order: assigned, not paused, with a position."""
        return [tp for tp, state in self._assignment.items() if state.is_fetchable()]
