"""SubscriptionState as Kafka 0.10.1's: the three subscription types and their exclusion, pattern
matching, assignment, positions and resets, pausing, the offsets to commit, committed offsets and
their refresh flag, the listener, unsubscribing and the leader's group subscription."""

from __future__ import annotations

import re

import pytest

from kafka_lite.common.errors import InvalidTopicException
from kafka_lite.consumer.consumer_rebalance_listener import ConsumerRebalanceListener
from kafka_lite.consumer.internals.subscription_state import (
    SUBSCRIPTION_EXCEPTION_MESSAGE,
    IllegalArgumentException,
    IllegalStateException,
    SubscriptionState,
    SubscriptionType,
)
from kafka_lite.consumer.offset_and_metadata import OffsetAndMetadata
from kafka_lite.consumer.offset_reset_strategy import OffsetResetStrategy

pytestmark = pytest.mark.unit

TOPIC = "topic"
TP0 = (TOPIC, 0)
TP1 = (TOPIC, 1)
OTHER = ("other", 0)


class RecordingListener(ConsumerRebalanceListener):
    def __init__(self) -> None:
        self.calls: list[tuple[str, set]] = []

    def on_partitions_revoked(self, partitions):
        self.calls.append(("revoked", set(partitions)))

    def on_partitions_assigned(self, partitions):
        self.calls.append(("assigned", set(partitions)))


def state(strategy: OffsetResetStrategy = OffsetResetStrategy.EARLIEST) -> SubscriptionState:
    return SubscriptionState(strategy)


def subscribed(*topics: str) -> SubscriptionState:
    s = state()
    s.subscribe(list(topics), RecordingListener())
    return s


def assigned(*partitions) -> SubscriptionState:
    s = state()
    s.assign_from_user(partitions)
    return s


# -- the three subscription types ------------------------------------------------------------------


def test_a_new_state_has_no_subscription_and_needs_the_committed_offsets():
    s = state()
    assert s.subscription_type is SubscriptionType.NONE
    assert s.has_no_subscription_or_user_assignment()
    assert not s.partitions_auto_assigned()
    assert s.subscription() == frozenset()
    assert s.assigned_partitions() == set()
    assert s.refresh_commits_needed()


def test_subscribe_to_topics_is_auto_assigned_and_assigns_nothing_yet():
    s = subscribed(TOPIC, "other")
    assert s.subscription_type is SubscriptionType.AUTO_TOPICS
    assert s.partitions_auto_assigned()
    assert not s.has_pattern_subscription()
    assert not s.has_no_subscription_or_user_assignment()
    assert s.subscription() == {TOPIC, "other"}
    assert s.group_subscription() == {TOPIC, "other"}
    assert s.assigned_partitions() == set()


def test_subscribing_again_to_topics_replaces_the_subscription():
    s = subscribed(TOPIC)
    s.subscribe(["other"], RecordingListener())
    assert s.subscription() == {"other"}


def test_subscribe_to_a_pattern_is_auto_assigned_and_the_matches_become_the_subscription():
    s = state()
    pattern = re.compile(r"logs\..*")
    s.subscribe(pattern, RecordingListener())
    assert s.subscription_type is SubscriptionType.AUTO_PATTERN
    assert s.has_pattern_subscription()
    assert s.partitions_auto_assigned()
    assert s.subscribed_pattern() is pattern
    assert s.subscription() == frozenset()  # until the coordinator lists the matching topics

    s.subscribe_from_pattern(["logs.a", "logs.b"])
    assert s.subscription() == {"logs.a", "logs.b"}
    assert s.group_subscription() == {"logs.a", "logs.b"}
    s.assign_from_subscribed([("logs.a", 0)])
    assert s.assigned_partitions() == {("logs.a", 0)}


def test_the_pattern_must_match_the_whole_topic_name():
    s = state()
    s.subscribe(re.compile("test"), RecordingListener())
    assert s.matches_subscribed_pattern("test")
    # re.search or re.match would accept these: Java's Pattern.matcher(topic).matches() does not.
    assert not s.matches_subscribed_pattern("test-1")
    assert not s.matches_subscribed_pattern("my-test")
    s.subscribe(re.compile("test.*"), RecordingListener())
    assert s.matches_subscribed_pattern("test-1")
    assert not s.matches_subscribed_pattern("my-test")


def test_matching_without_a_pattern_subscription_is_refused():
    with pytest.raises(IllegalStateException, match="No pattern subscription"):
        subscribed(TOPIC).matches_subscribed_pattern(TOPIC)


def test_subscribe_from_pattern_needs_a_pattern_subscription():
    s = subscribed(TOPIC)
    with pytest.raises(
        IllegalArgumentException,
        match="Attempt to subscribe from pattern while subscription type set to AUTO_TOPICS",
    ):
        s.subscribe_from_pattern(["x"])
    assert s.subscription() == {TOPIC}


def test_assign_from_user_is_not_auto_assigned():
    s = assigned(TP0, OTHER)
    assert s.subscription_type is SubscriptionType.USER_ASSIGNED
    assert not s.partitions_auto_assigned()
    assert not s.has_no_subscription_or_user_assignment()
    assert s.assigned_partitions() == {TP0, OTHER}
    assert s.subscription() == frozenset()
    assert s.listener() is None


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("topics", "pattern"),
        ("topics", "assign"),
        ("pattern", "topics"),
        ("pattern", "assign"),
        ("assign", "topics"),
        ("assign", "pattern"),
    ],
)
def test_the_subscription_types_are_mutually_exclusive(first, second):
    s = state()
    actions = {
        "topics": lambda: s.subscribe([TOPIC], RecordingListener()),
        "pattern": lambda: s.subscribe(re.compile("t.*"), RecordingListener()),
        "assign": lambda: s.assign_from_user([TP0]),
    }
    actions[first]()
    before = s.subscription_type
    with pytest.raises(IllegalStateException) as raised:
        actions[second]()
    assert str(raised.value) == SUBSCRIPTION_EXCEPTION_MESSAGE
    assert (
        SUBSCRIPTION_EXCEPTION_MESSAGE
        == "Subscription to topics, partitions and pattern are mutually exclusive"
    )
    assert s.subscription_type is before


def test_unsubscribe_allows_another_subscription_type():
    s = subscribed(TOPIC)
    s.unsubscribe()
    s.assign_from_user([TP0])
    assert s.subscription_type is SubscriptionType.USER_ASSIGNED
    s.unsubscribe()
    s.subscribe(re.compile("t.*"), RecordingListener())
    assert s.has_pattern_subscription()


def test_unsubscribe_clears_the_subscription_pattern_and_assignment():
    s = state()
    s.subscribe(re.compile("t.*"), RecordingListener())
    s.subscribe_from_pattern([TOPIC])
    s.assign_from_subscribed([TP0, TP1])
    s.seek(TP0, 5)
    s.pause(TP1)

    s.unsubscribe()
    assert s.subscription_type is SubscriptionType.NONE
    assert s.has_no_subscription_or_user_assignment()
    assert s.subscribed_pattern() is None
    assert s.subscription() == frozenset()
    assert s.assigned_partitions() == set()
    assert s.fetchable_partitions() == []
    assert s.paused_partitions() == set()
    assert s.all_consumed() == {}
    assert s.has_all_fetch_positions()  # nothing assigned, nothing missing
    with pytest.raises(IllegalStateException, match="No current assignment for partition topic-0"):
        s.position(TP0)


def test_unsubscribe_after_assign_clears_the_assignment():
    s = assigned(TP0, TP1)
    s.unsubscribe()
    assert s.assigned_partitions() == set()
    assert not s.is_assigned(TP0)


# -- bad arguments ---------------------------------------------------------------------------------


def test_subscribe_needs_a_listener():
    with pytest.raises(IllegalArgumentException, match="RebalanceListener cannot be null"):
        state().subscribe([TOPIC], None)
    with pytest.raises(IllegalArgumentException, match="RebalanceListener cannot be null"):
        state().subscribe(re.compile("t"), None)
    with pytest.raises(IllegalArgumentException, match="must be a ConsumerRebalanceListener, not object"):
        state().subscribe([TOPIC], object())


def test_subscribe_refuses_a_bare_string_and_empty_topic_names():
    s = state()
    with pytest.raises(IllegalArgumentException, match=r"not the str 'topic'; write \['topic'\]"):
        s.subscribe(TOPIC, RecordingListener())
    with pytest.raises(IllegalArgumentException, match="cannot contain null or empty topic: ''"):
        s.subscribe([TOPIC, ""], RecordingListener())
    with pytest.raises(IllegalArgumentException, match="cannot contain null or empty topic: None"):
        s.subscribe([None], RecordingListener())
    with pytest.raises(IllegalArgumentException, match="Topic collection to subscribe to cannot be null"):
        s.subscribe(None, RecordingListener())
    with pytest.raises(IllegalArgumentException, match=r"must hold topic names, not the list \['a'\]"):
        s.subscribe([["a"]], RecordingListener())
    with pytest.raises(InvalidTopicException, match=r'Topic name "a b" is illegal, it contains a character'):
        s.subscribe([TOPIC, "a b"], RecordingListener())
    # A refused subscribe changes nothing.
    assert s.has_no_subscription_or_user_assignment()


def test_assign_from_user_refuses_malformed_partitions():
    s = state()
    with pytest.raises(IllegalArgumentException, match="cannot have null or empty topic"):
        s.assign_from_user([("", 0)])
    with pytest.raises(IllegalArgumentException, match=r"must be \(topic, partition\) pairs, not 'topic'"):
        s.assign_from_user(["topic"])
    with pytest.raises(
        IllegalArgumentException, match="Topic partition collection to assign to cannot be null"
    ):
        s.assign_from_user(None)
    with pytest.raises(IllegalArgumentException, match=r"must be \(topic, partition\) pairs, not \['a', 0\]"):
        s.assign_from_user([["a", 0]])
    with pytest.raises(InvalidTopicException, match="can't be longer than 249 characters"):
        s.assign_from_user([("t" * 250, 0)])
    assert s.has_no_subscription_or_user_assignment()


def test_the_default_reset_strategy_must_be_an_offset_reset_strategy():
    with pytest.raises(IllegalArgumentException, match="must be an OffsetResetStrategy, not 'earliest'"):
        SubscriptionState("earliest")


# -- assignment ------------------------------------------------------------------------------------


def test_assign_from_subscribed_rejects_a_partition_of_an_unsubscribed_topic():
    s = subscribed(TOPIC)
    s.assign_from_subscribed([TP0])
    with pytest.raises(IllegalArgumentException) as raised:
        s.assign_from_subscribed([TP1, OTHER])
    assert str(raised.value) == "Assigned partition other-0 for non-subscribed topic."
    assert s.assigned_partitions() == {TP0}  # unchanged


def test_assign_from_subscribed_is_refused_with_a_manual_assignment():
    s = assigned(TP0)
    with pytest.raises(
        IllegalArgumentException,
        match="Attempt to dynamically assign partitions while manual assignment in use",
    ):
        s.assign_from_subscribed([TP1])
    assert s.assigned_partitions() == {TP0}


def test_assign_from_subscribed_starts_every_partition_afresh():
    s = subscribed(TOPIC)
    s.assign_from_subscribed([TP0, TP1])
    s.seek(TP0, 10)
    s.pause(TP1)
    s.committed(TP0, OffsetAndMetadata(10))
    s.commits_refreshed()

    s.assign_from_subscribed([TP0, TP1])
    assert s.position(TP0) is None
    assert s.committed(TP0) is None
    assert not s.is_paused(TP1)
    assert s.refresh_commits_needed()


def test_assign_from_user_keeps_the_state_of_partitions_kept():
    s = assigned(TP0, TP1)
    s.seek(TP0, 7)
    s.pause(TP0)
    s.commits_refreshed()

    s.assign_from_user([TP0, OTHER])
    assert s.assigned_partitions() == {TP0, OTHER}
    assert s.position(TP0) == 7
    assert s.is_paused(TP0)
    assert s.position(OTHER) is None
    assert s.refresh_commits_needed()


def test_assign_from_user_with_the_same_partitions_changes_nothing():
    s = assigned(TP0)
    s.seek(TP0, 3)
    s.commits_refreshed()
    s.assign_from_user([TP0])
    assert s.position(TP0) == 3
    assert not s.refresh_commits_needed()


def test_the_fetch_order_groups_partitions_by_topic_and_rotates():
    s = assigned(("b", 1), ("a", 1), ("b", 0), ("a", 0))
    for tp in s.assigned_partitions():
        s.seek(tp, 0)
    assert s.fetchable_partitions() == [("a", 0), ("a", 1), ("b", 0), ("b", 1)]
    s.move_partition_to_end(("a", 0))
    assert s.fetchable_partitions() == [("a", 1), ("b", 0), ("b", 1), ("a", 0)]
    s.move_partition_to_end(("c", 0))  # not assigned: nothing moves
    assert s.fetchable_partitions() == [("a", 1), ("b", 0), ("b", 1), ("a", 0)]


# -- positions, seek and resets --------------------------------------------------------------------


def test_a_partition_has_no_position_until_a_seek():
    s = assigned(TP0, TP1)
    assert s.position(TP0) is None
    assert not s.has_valid_position(TP0)
    assert not s.has_all_fetch_positions()
    assert s.missing_fetch_positions() == {TP0, TP1}

    s.seek(TP0, 42)
    assert s.position(TP0) == 42
    assert s.has_valid_position(TP0)
    assert s.missing_fetch_positions() == {TP1}
    assert not s.has_all_fetch_positions()

    s.seek(TP1, 0)
    assert s.has_all_fetch_positions()
    assert s.missing_fetch_positions() == set()


def test_position_moves_only_from_a_valid_position():
    s = assigned(TP0)
    with pytest.raises(
        IllegalStateException, match="Cannot set a new position without a valid current position"
    ):
        s.position(TP0, 5)
    assert s.position(TP0) is None
    s.seek(TP0, 5)
    s.position(TP0, 9)
    assert s.position(TP0) == 9


def test_a_partition_not_assigned_is_refused_by_name():
    s = assigned(TP0)
    for call in (
        lambda: s.seek(OTHER, 0),
        lambda: s.position(OTHER),
        lambda: s.committed(OTHER),
        lambda: s.need_offset_reset(OTHER),
        lambda: s.pause(OTHER),
        lambda: s.resume(OTHER),
        lambda: s.is_offset_reset_needed(OTHER),
        lambda: s.reset_strategy(OTHER),
    ):
        with pytest.raises(IllegalStateException, match=r"^No current assignment for partition other-0$"):
            call()
    # The questions asked of any partition answer False instead.
    assert not s.is_assigned(OTHER)
    assert not s.is_paused(OTHER)
    assert not s.is_fetchable(OTHER)


def test_need_offset_reset_uses_the_default_strategy_and_drops_the_position():
    s = SubscriptionState(OffsetResetStrategy.LATEST)
    s.assign_from_user([TP0])
    s.seek(TP0, 10)
    assert not s.is_offset_reset_needed(TP0)
    assert s.reset_strategy(TP0) is None

    s.need_offset_reset(TP0)
    assert s.is_offset_reset_needed(TP0)
    assert s.reset_strategy(TP0) is OffsetResetStrategy.LATEST
    assert s.position(TP0) is None
    assert s.missing_fetch_positions() == {TP0}
    assert not s.is_fetchable(TP0)


def test_need_offset_reset_with_an_explicit_strategy_as_seek_to_beginning_does():
    s = SubscriptionState(OffsetResetStrategy.LATEST)
    s.assign_from_user([TP0])
    s.need_offset_reset(TP0, OffsetResetStrategy.EARLIEST)
    assert s.reset_strategy(TP0) is OffsetResetStrategy.EARLIEST


def test_a_seek_completes_the_reset():
    s = assigned(TP0)
    s.need_offset_reset(TP0)
    s.seek(TP0, 0)
    assert not s.is_offset_reset_needed(TP0)
    assert s.reset_strategy(TP0) is None
    assert s.position(TP0) == 0
    assert s.is_fetchable(TP0)


@pytest.mark.parametrize(
    ("strategy", "has_default"),
    [
        (OffsetResetStrategy.EARLIEST, True),
        (OffsetResetStrategy.LATEST, True),
        (OffsetResetStrategy.NONE, False),
    ],
)
def test_has_default_offset_reset_policy(strategy, has_default):
    assert SubscriptionState(strategy).has_default_offset_reset_policy() is has_default


def test_offset_reset_strategy_reads_the_auto_offset_reset_config():
    assert [OffsetResetStrategy(v) for v in ("latest", "earliest", "none")] == [
        OffsetResetStrategy.LATEST,
        OffsetResetStrategy.EARLIEST,
        OffsetResetStrategy.NONE,
    ]


# -- pause, resume and what is fetchable -----------------------------------------------------------


def test_fetchable_partitions_are_assigned_not_paused_and_with_a_position():
    s = assigned(TP0, TP1, OTHER)
    s.seek(TP0, 0)
    s.seek(OTHER, 0)
    assert s.fetchable_partitions() == [OTHER, TP0]  # TP1 has no position

    s.pause(TP0)
    assert s.is_paused(TP0)
    assert s.paused_partitions() == {TP0}
    assert not s.is_fetchable(TP0)
    assert s.fetchable_partitions() == [OTHER]
    # Pausing keeps the position.
    assert s.position(TP0) == 0
    assert TP0 in s.all_consumed()

    s.resume(TP0)
    assert not s.is_paused(TP0)
    assert s.paused_partitions() == set()
    assert s.is_fetchable(TP0)
    assert s.fetchable_partitions() == [OTHER, TP0]


# -- the offsets to commit and the committed offsets -----------------------------------------------


def test_all_consumed_gives_the_positions_of_the_partitions_that_have_one():
    s = assigned(TP0, TP1, OTHER)
    s.seek(TP0, 5)
    s.position(TP0, 8)
    s.seek(OTHER, 0)
    assert s.all_consumed() == {TP0: OffsetAndMetadata(8), OTHER: OffsetAndMetadata(0, "")}


def test_committed_offsets_are_kept_per_partition():
    s = assigned(TP0, TP1)
    assert s.committed(TP0) is None
    s.committed(TP0, OffsetAndMetadata(17, "from host-1"))
    assert s.committed(TP0) == OffsetAndMetadata(17, "from host-1")
    assert s.committed(TP1) is None
    # The committed offset is not the position.
    assert s.position(TP0) is None


def test_the_refresh_flag_for_committed_offsets():
    s = assigned(TP0)
    assert s.refresh_commits_needed()
    s.commits_refreshed()
    assert not s.refresh_commits_needed()
    s.need_refresh_commits()
    assert s.refresh_commits_needed()


def test_offset_and_metadata_stores_no_metadata_as_empty():
    assert OffsetAndMetadata(3) == OffsetAndMetadata(3, "")
    assert OffsetAndMetadata(3, None).metadata == ""
    assert OffsetAndMetadata(3, "m") != OffsetAndMetadata(3, "")
    assert OffsetAndMetadata(3, "m") != OffsetAndMetadata(4, "m")


# -- the listener ----------------------------------------------------------------------------------


def test_the_listener_is_stored_and_returned():
    s = state()
    first = RecordingListener()
    s.subscribe([TOPIC], first)
    assert s.listener() is first
    second = RecordingListener()
    s.subscribe([TOPIC], second)
    assert s.listener() is second
    third = RecordingListener()
    s.unsubscribe()
    s.subscribe(re.compile("t.*"), third)
    assert s.listener() is third


def test_the_listener_is_the_coordinators_to_call():
    # SubscriptionState stores the listener and never calls it: the ConsumerCoordinator does, around
    # a rebalance.
    listener = RecordingListener()
    s = state()
    s.subscribe([TOPIC], listener)
    s.assign_from_subscribed([TP0])
    s.unsubscribe()
    assert listener.calls == []
    s.subscribe([TOPIC], listener)
    s.assign_from_subscribed([TP0])
    s.listener().on_partitions_assigned(s.assigned_partitions())
    assert listener.calls == [("assigned", {TP0})]


def test_the_listener_interface_has_both_methods_to_write():
    class OnlyRevoked(ConsumerRebalanceListener):
        def on_partitions_revoked(self, partitions):
            pass

    with pytest.raises(TypeError, match="on_partitions_assigned"):
        OnlyRevoked()


# -- the group subscription, for the leader --------------------------------------------------------


def test_the_leader_adds_the_groups_topics_and_the_next_join_drops_them():
    s = subscribed(TOPIC)
    s.group_subscribe([TOPIC, "other", "third"])
    assert s.group_subscription() == {TOPIC, "other", "third"}
    assert s.subscription() == {TOPIC}  # the member's own subscription is unchanged
    # Only the member's own topics may be assigned to it, whatever the group reads.
    with pytest.raises(
        IllegalArgumentException, match=re.escape("Assigned partition other-0 for non-subscribed topic.")
    ):
        s.assign_from_subscribed([OTHER])

    s.reset_group_subscription()
    assert s.group_subscription() == {TOPIC}


def test_the_group_subscription_is_refused_with_a_manual_assignment():
    s = assigned(TP0)
    with pytest.raises(IllegalStateException, match=SUBSCRIPTION_EXCEPTION_MESSAGE):
        s.group_subscribe(["other"])
    assert s.group_subscription() == frozenset()


def test_a_changed_subscription_widens_the_group_subscription_until_reset():
    s = subscribed(TOPIC)
    s.subscribe(["other"], RecordingListener())
    assert s.group_subscription() == {TOPIC, "other"}
    s.reset_group_subscription()
    assert s.group_subscription() == {"other"}


def test_unsubscribe_leaves_the_group_subscription_to_the_next_join_as_kafka_does():
    s = subscribed(TOPIC)
    s.unsubscribe()
    assert s.group_subscription() == {TOPIC}
    s.reset_group_subscription()
    assert s.group_subscription() == frozenset()


def test_partition_lag_is_the_last_high_watermark_less_the_position():
    s = assigned(TP0)
    assert s.partition_lag(TP0) is None, "no position, no high watermark yet"
    s.seek(TP0, 5)
    assert s.partition_lag(TP0) is None, "no fetch response has given the high watermark"
    s.update_high_watermark(TP0, 12)
    assert s.partition_lag(TP0) == 7
    s.position(TP0, 12)
    assert s.partition_lag(TP0) == 0
    s.assign_from_user([TP0, TP1])  # a partition kept keeps its state
    assert s.partition_lag(TP0) == 0
    s.assign_from_user([TP1])
    s.assign_from_user([TP0])  # assigned again: it starts afresh
    assert s.partition_lag(TP0) is None
