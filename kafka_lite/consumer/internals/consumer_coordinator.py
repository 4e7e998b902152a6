"""The consumer's coordinator: the group protocol with the consumer's subscriptions, assignors and offsets.

Mirrors: org.apache.kafka.clients.consumer.internals.ConsumerCoordinator, with its MetadataSnapshot,
         OffsetCommitCompletion and DefaultOffsetCommitCallback
         (clients/src/main/java/org/apache/kafka/clients/consumer/internals/ConsumerCoordinator.java,
         Kafka 0.10.1)
Book:    chapter 4, 4.2 (the consumer's coordinator), 4.4 (committing offsets: 4.4.1 the auto-commit task,
         4.4.2 the fetch positions as the offsets to commit, 4.4.3 synchronous and asynchronous commits);
         chapter 5, 5.1.1 (metadata and assignors), 5.1.3 (the leader runs the assignment), 5.1.4 (the
         join's preparation and completion)
Differs: Kafka registers a ``Metadata.Listener``; kafka_lite's ``Metadata`` has no listeners, so
         ``poll`` checks the metadata's version and runs the same update (pattern matching, the
         snapshot of partition counts) when it changed. The commit callback is an
         ``OffsetCommitCallback`` callable; an object with ``on_complete`` is accepted too.
         Internal topics are recognised by name (``__consumer_offsets``, ``__transaction_state``),
         as kafka_lite's ``Cluster`` does not keep the metadata's ``is_internal`` flag. Three later
         Kafkas' behaviours sit behind named helpers that say why: a search for the coordinator
         bounded by the poll's or the commit's timeout (``ensure_coordinator_ready_within``),
         an auto-commit that starts looking for an unknown coordinator
         (``_look_for_coordinator_to_auto_commit``), and a refresh at ``retry.backoff.ms`` pace while
         a subscribed topic is missing from the metadata
         (``_request_update_while_subscribed_topics_unavailable``). Its one sensor, the commits' latency, is a
         plain ``Sensor``. OffsetCommit goes out at v2 and OffsetFetch at v1, as 0.10.1 sends
         them. The ``Metadata`` is kept as ``_metadata``, since ``metadata()`` is the member's
         protocols (Java keeps a field and a method of one name apart; Python cannot).

What it adds to ``AbstractCoordinator``:

- **The member's metadata** (``metadata()``): for each configured assignor, in order of preference,
  its name and the member's ``Subscription`` in the consumer protocol's bytes. The coordinator
  chooses the first assignor every member supports.
- **The leader's assignment** (``perform_assignment``): decode every member's subscription, make the
  metadata cover every topic any member wants (the group subscription), refresh it, and run the
  chosen assignor over it.
- **Around a rebalance**: ``on_join_prepare`` commits (when auto-commit is on) and tells the listener
  its partitions are revoked; ``on_join_complete`` takes the new assignment into the
  ``SubscriptionState`` and tells the listener what it got.
- **When to rejoin** (``need_rejoin``): the subscription changed since the join (a pattern matched a
  new topic), or, for the leader, a subscribed topic's partition count changed since it assigned.
- **Offsets**: ``commit_offsets_sync`` and ``commit_offsets_async`` (OffsetCommit, with the member's
  generation, so a member that has been replaced cannot commit: ``CommitFailedException``),
  ``fetch_committed_offsets`` (OffsetFetch), and auto-commit every ``auto.commit.interval.ms`` from
  ``poll``. An asynchronous commit's callback runs on the consumer's thread, in a later ``poll`` or
  commit, never on the heartbeat thread that may have received its response.

This module is long because it mirrors one Java file and its inner classes (the commit handlers, the
auto-commit task), which the book's 4.4 and 5.1 read together.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Iterable, Mapping
from typing import Any

from kafka_lite.clients.metadata import Cluster, Metadata
from kafka_lite.common.errors import (
    Errors,
    IllegalStateException,
    KafkaException,
    RetriableException,
    WakeupException,
)
from kafka_lite.common.metrics import Sensor
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.time import Time
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.consumer.commit_failed_exception import CommitFailedException
from kafka_lite.consumer.consumer_interceptors import ConsumerInterceptors
from kafka_lite.consumer.internals.abstract_coordinator import (
    NO_GENERATION,
    AbstractCoordinator,
    CoordinatorResponseHandler,
    group_authorization_failed,
)
from kafka_lite.consumer.internals.consumer_network_client import ConsumerNetworkClient
from kafka_lite.consumer.internals.consumer_protocol import (
    PROTOCOL_TYPE,
    Subscription,
    deserialize_assignment,
    deserialize_subscription,
    serialize_assignment,
    serialize_subscription,
)
from kafka_lite.consumer.internals.partition_assignor import PartitionAssignor, partition_count_for_topic
from kafka_lite.consumer.internals.request_future import RequestFuture, RequestFutureListener
from kafka_lite.consumer.internals.subscription_state import SubscriptionState
from kafka_lite.consumer.offset_and_metadata import OffsetAndMetadata
from kafka_lite.consumer.offset_commit_callback import OffsetCommitCallback
from kafka_lite.consumer.retriable_commit_failed_exception import RetriableCommitFailedException

log = logging.getLogger(__name__)

OFFSET_COMMIT_VERSION = 2
OFFSET_FETCH_VERSION = 1
DEFAULT_RETENTION_TIME = -1  # OffsetCommitRequest.DEFAULT_RETENTION_TIME: the broker's retention
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})


def _tp_str(tp: TopicPartition) -> str:
    return f"{tp[0]}-{tp[1]}"


def default_offset_commit_callback(
    offsets: dict[TopicPartition, OffsetAndMetadata], exception: Exception | None
) -> None:
    """Used when ``commit_async`` is given no callback: a failure is logged (Kafka's
    ``DefaultOffsetCommitCallback``)."""
    if exception is not None:
        log.error("Offset commit failed: %s", exception)


def _as_callback(callback: object) -> OffsetCommitCallback | None:
    if callback is None:
        return None
    on_complete = getattr(callback, "on_complete", None)
    if callable(on_complete):
        return on_complete
    if callable(callback):
        return callback
    raise IllegalStateException(
        f"The commit callback must be callable as callback(offsets, exception), not {callback!r}"
    )


class OffsetCommitCompletion:
    """A finished asynchronous commit, waiting for the consumer's thread to run its callback."""

    def __init__(
        self,
        callback: OffsetCommitCallback,
        offsets: dict[TopicPartition, OffsetAndMetadata],
        exception: Exception | None,
    ) -> None:
        self.callback = callback
        self.offsets = offsets
        self.exception = exception

    def invoke(self) -> None:
        if self.callback is not None:
            self.callback(self.offsets, self.exception)


class MetadataSnapshot:
    """The partition count of each topic in the group subscription, to see when it changes."""

    def __init__(self, subscriptions: SubscriptionState, cluster: Cluster) -> None:
        self.partitions_per_topic = {
            topic: partition_count_for_topic(cluster, topic) for topic in subscriptions.group_subscription()
        }

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MetadataSnapshot) and self.partitions_per_topic == other.partitions_per_topic

    def __hash__(self) -> int:
        return hash(frozenset(self.partitions_per_topic.items()))


class ConsumerCoordinator(AbstractCoordinator):
    def __init__(
        self,
        client: ConsumerNetworkClient,
        group_id: str,
        rebalance_timeout_ms: int,
        session_timeout_ms: int,
        heartbeat_interval_ms: int,
        assignors: list[PartitionAssignor],
        metadata: Metadata,
        subscriptions: SubscriptionState,
        time: Time,
        retry_backoff_ms: int,
        auto_commit_enabled: bool,
        auto_commit_interval_ms: int,
        exclude_internal_topics: bool = True,
        default_offset_commit_callback: OffsetCommitCallback = default_offset_commit_callback,
        interceptors: ConsumerInterceptors | None = None,
    ) -> None:
        super().__init__(
            client,
            group_id,
            rebalance_timeout_ms,
            session_timeout_ms,
            heartbeat_interval_ms,
            time,
            retry_backoff_ms,
        )
        if not assignors:
            raise IllegalStateException("The consumer coordinator needs at least one partition assignor")
        self._metadata = metadata
        self.subscriptions = subscriptions
        self.assignors = list(assignors)
        self.default_offset_commit_callback = default_offset_commit_callback
        self.auto_commit_enabled = auto_commit_enabled
        self.auto_commit_interval_ms = auto_commit_interval_ms
        self.exclude_internal_topics = exclude_internal_topics
        self.interceptors = interceptors
        self.commit_latency = Sensor("commit-latency")  # Kafka's ConsumerCoordinatorMetrics
        # Filled by whichever thread receives a commit's response; emptied by the consumer's thread.
        self.completed_offset_commits: deque[OffsetCommitCompletion] = deque()
        self.is_leader = False
        self.joined_subscription: frozenset[str] | None = None
        self.metadata_snapshot = MetadataSnapshot(subscriptions, metadata.cluster)
        self.assignment_snapshot: MetadataSnapshot | None = None
        self._seen_metadata_version = metadata.version
        self.next_auto_commit_deadline = time.milliseconds() + auto_commit_interval_ms
        self._metadata.request_update()

    # -- the member's metadata and the assignment -----------------------------------------------------

    def protocol_type(self) -> str:
        return PROTOCOL_TYPE

    def metadata(self) -> list[tuple[str, bytes]]:
        self.joined_subscription = self.subscriptions.subscription()
        return [
            (assignor.name(), serialize_subscription(assignor.subscription(self.joined_subscription)))
            for assignor in self.assignors
        ]

    def _lookup_assignor(self, name: str) -> PartitionAssignor | None:
        return next((assignor for assignor in self.assignors if assignor.name() == name), None)

    def perform_assignment(
        self, leader_id: str, assignment_strategy: str, all_subscriptions: dict[str, bytes]
    ) -> dict[str, bytes]:
        assignor = self._lookup_assignor(assignment_strategy)
        if assignor is None:
            raise IllegalStateException(
                f"Coordinator selected invalid assignment protocol: {assignment_strategy}"
            )
        all_subscribed_topics: set[str] = set()
        subscriptions: dict[str, Subscription] = {}
        for member_id, member_metadata in all_subscriptions.items():
            subscription = deserialize_subscription(member_metadata)
            subscriptions[member_id] = subscription
            all_subscribed_topics.update(subscription.topics)

        # The leader needs metadata for every topic of the group, not only its own.
        self.subscriptions.group_subscribe(all_subscribed_topics)
        self._set_metadata_topics(self.subscriptions.group_subscription())
        self.client.ensure_fresh_metadata()
        self._on_metadata_update_if_changed()

        self.is_leader = True
        # The partition counts this assignment is made from: if they change, the leader rejoins.
        self.assignment_snapshot = self.metadata_snapshot

        log.debug("Performing assignment for group %s using strategy %s with subscriptions %s",
                  self.group_id, assignor.name(), subscriptions)  # fmt: skip
        assignment = assignor.assign(self._metadata.cluster, subscriptions)
        log.debug("Finished assignment for group %s: %s", self.group_id, assignment)
        return {member_id: serialize_assignment(a) for member_id, a in assignment.items()}

    # --8<-- [start:on_join_prepare]
    def on_join_prepare(self, generation: int, member_id: str) -> None:
        """Before (re)joining: with auto-commit on, commit the positions synchronously (a failed
        commit is logged, not raised); then tell the rebalance listener that every assigned
        partition is revoked (its exception is logged, except a ``WakeupException``, which goes
        on); then this member is no longer the leader, and the group subscription shrinks back to
        its own topics."""
        # BEGIN SOLUTION
        # Commit before the partitions may move, so their next owner starts where this one stopped.
        self._maybe_auto_commit_offsets_sync()
        listener = self.subscriptions.listener()
        revoked = self.subscriptions.assigned_partitions()
        log.info("Revoking previously assigned partitions %s for group %s", sorted(revoked), self.group_id)
        try:
            listener.on_partitions_revoked(revoked)
        except WakeupException:
            raise
        except Exception:
            log.exception("User provided listener %s for group %s failed on partition revocation",
                          type(listener).__name__, self.group_id)  # fmt: skip
        self.is_leader = False
        self.subscriptions.reset_group_subscription()
        # END SOLUTION

    # --8<-- [end:on_join_prepare]

    # --8<-- [start:on_join_complete]
    def on_join_complete(
        self, generation: int, member_id: str, assignment_strategy: str, assignment_bytes: bytes
    ) -> None:
        """Once the group is synced: take this member's assignment (the SyncGroup answer's bytes)
        into the subscription state, to start afresh with its committed offsets fetched again, tell
        the assignor, put the next auto-commit a full interval away, and tell the rebalance
        listener which partitions are assigned (its exception is logged, except a
        ``WakeupException``). A follower forgets the leader's partition-count snapshot; a protocol
        this member does not have is an ``IllegalStateException``."""
        # BEGIN SOLUTION
        # Only the leader watches partition counts; a follower's snapshot is the leader's business.
        if not self.is_leader:
            self.assignment_snapshot = None
        assignor = self._lookup_assignor(assignment_strategy)
        if assignor is None:
            raise IllegalStateException(
                f"Coordinator selected invalid assignment protocol: {assignment_strategy}"
            )
        assignment = deserialize_assignment(assignment_bytes)
        # The committed offsets of the new partitions are fetched before they are used.
        self.subscriptions.need_refresh_commits()
        self.subscriptions.assign_from_subscribed(assignment.partitions)
        assignor.on_assignment(assignment)
        # The first auto-commit of the new assignment is a full interval away.
        self.next_auto_commit_deadline = self.time.milliseconds() + self.auto_commit_interval_ms

        listener = self.subscriptions.listener()
        assigned = self.subscriptions.assigned_partitions()
        log.info("Setting newly assigned partitions %s for group %s", sorted(assigned), self.group_id)
        try:
            listener.on_partitions_assigned(assigned)
        except WakeupException:
            raise
        except Exception:
            log.exception("User provided listener %s for group %s failed on partition assignment",
                          type(listener).__name__, self.group_id)  # fmt: skip
        # END SOLUTION

    # --8<-- [end:on_join_complete]

    def need_rejoin(self) -> bool:
        if not self.subscriptions.partitions_auto_assigned():
            return False
        # The leader assigned from partition counts that have changed since.
        if self.assignment_snapshot is not None and self.assignment_snapshot != self.metadata_snapshot:
            return True
        # The subscription changed since the join (a pattern matched a new topic, or subscribe again).
        if (
            self.joined_subscription is not None
            and self.joined_subscription != self.subscriptions.subscription()
        ):
            return True
        return super().need_rejoin()

    # -- metadata ---------------------------------------------------------------------------------------

    def update_pattern_subscription(self, cluster: Cluster) -> None:
        """Subscribe to the cluster's topics whose whole name matches the pattern."""
        topics_to_subscribe = {
            topic
            for topic in cluster.topics()
            if self.subscriptions.matches_subscribed_pattern(topic)
            and not (self.exclude_internal_topics and topic in INTERNAL_TOPICS)
        }
        self.subscriptions.subscribe_from_pattern(topics_to_subscribe)

    def _set_metadata_topics(self, topics: Iterable[str]) -> None:
        """Which topics the metadata covers (Kafka's ``Metadata.setTopics``). A pattern needs every
        topic, which the network client asks for when the set is empty."""
        wanted = set() if self.subscriptions.has_pattern_subscription() else set(topics)
        if self._metadata.topics != wanted:
            self._metadata.topics = wanted
            self._metadata.request_update()

    def _on_metadata_update_if_changed(self) -> None:
        """Kafka's metadata listener, run when the metadata's version moved since the last look."""
        if self._metadata.version == self._seen_metadata_version:
            return
        self._seen_metadata_version = self._metadata.version
        cluster = self._metadata.cluster
        if cluster.unauthorized_topics:
            raise Errors.TOPIC_AUTHORIZATION_FAILED.exception(
                f"Not authorized to access topics: {sorted(cluster.unauthorized_topics)}"
            )
        if self.subscriptions.has_pattern_subscription():
            self.update_pattern_subscription(cluster)
        if self.subscriptions.partitions_auto_assigned():
            snapshot = MetadataSnapshot(self.subscriptions, cluster)
            if snapshot != self.metadata_snapshot:
                self.metadata_snapshot = snapshot
        self._request_update_while_subscribed_topics_unavailable()

    def _request_update_while_subscribed_topics_unavailable(self) -> None:
        """Kafka 0.10.2.1's rule, kept in 0.11: if the update just seen could not describe a topic the
        metadata is kept for (it does not exist yet, or a partition has no leader), ask for another
        update at once; the refresh back-off still spaces them ``retry.backoff.ms`` apart.

        Without it (0.10.1), a consumer that subscribes before its topic exists, or whose leader's
        metadata comes before the topic's leaders are elected, assigns the group nothing for that
        topic and learns of it only at the next scheduled refresh, ``metadata.max.age.ms`` (5
        minutes) later, while the group sits stable with no partitions. A Connect sink started
        beside the source that creates its topic, as in Kafka's quick start, is that consumer."""
        if not self._metadata.topics.isdisjoint(self._metadata.unavailable_topics):
            self._metadata.request_update()

    # -- the consumer's poll ----------------------------------------------------------------------------

    # --8<-- [start:poll]
    def poll(self, now: int, timeout_ms: int | None = None) -> bool:
        """The coordinator's share of the consumer's ``poll``: commit callbacks, the coordinator, a
        rejoin if needed, the heartbeat clock's poll time, and auto-commit. False if the group's
        coordinator was still unknown after ``timeout_ms``: the consumer's poll then returns nothing."""
        self.invoke_completed_offset_commit_callbacks()
        self._on_metadata_update_if_changed()

        if self.subscriptions.partitions_auto_assigned() and self.coordinator_unknown():
            # 0.10.1 waits here for as long as it takes; the poll's timeout bounds the search.
            if not self.ensure_coordinator_ready_within(timeout_ms):
                return False
            now = self.time.milliseconds()

        if self.need_rejoin():
            # A pattern subscription must see the newest topics before it joins, or the member
            # would join with a stale subscription and rejoin at once.
            if self.subscriptions.has_pattern_subscription():
                self.client.ensure_fresh_metadata()
                self._on_metadata_update_if_changed()
            self.ensure_active_group()
            now = self.time.milliseconds()

        self.poll_heartbeat(now)
        self._maybe_auto_commit_offsets_async(now)
        return True

    # --8<-- [end:poll]

    def time_to_next_poll(self, now: int) -> int:
        """How long the consumer's network poll may block before the coordinator has work."""
        if not self.auto_commit_enabled:
            return self.time_to_next_heartbeat(now)
        if now > self.next_auto_commit_deadline:
            return 0
        return min(self.next_auto_commit_deadline - now, self.time_to_next_heartbeat(now))

    # -- committed offsets ------------------------------------------------------------------------------

    # --8<-- [start:refresh_committed]
    def refresh_committed_offsets_if_needed(self) -> None:
        """Fetch the group's committed offsets of the assigned partitions, if asked to since the last fetch."""
        if self.subscriptions.refresh_commits_needed():
            offsets = self.fetch_committed_offsets(self.subscriptions.assigned_partitions())
            for tp, offset in offsets.items():
                # The assignment may have changed while the request was out.
                if self.subscriptions.is_assigned(tp):
                    self.subscriptions.committed(tp, offset)
            self.subscriptions.commits_refreshed()

    # --8<-- [end:refresh_committed]

    def fetch_committed_offsets(
        self, partitions: Iterable[TopicPartition]
    ) -> dict[TopicPartition, OffsetAndMetadata]:
        """The group's committed offsets of ``partitions`` (a partition with none is left out); blocks
        until the coordinator answers, retrying retriable errors."""
        partitions = set(partitions)
        while True:
            self.ensure_coordinator_ready()
            future = self._send_offset_fetch_request(partitions)
            self.client.poll_future(future)
            if future.succeeded():
                return future.value()
            if not future.is_retriable():
                raise future.exception()
            self.time.sleep(self.retry_backoff_ms)

    def _send_offset_fetch_request(
        self, partitions: set[TopicPartition]
    ) -> RequestFuture[dict[TopicPartition, OffsetAndMetadata]]:
        coordinator = self.coordinator()
        if coordinator is None:
            return RequestFuture.coordinator_not_available()
        by_topic: dict[str, list[int]] = {}
        for topic, partition in sorted(partitions):
            by_topic.setdefault(topic, []).append(partition)
        body = {
            "group_id": self.group_id,
            "topics": [{"topic": topic, "partitions": ps} for topic, ps in by_topic.items()],
        }
        log.debug("Fetching committed offsets for partitions: %s", sorted(partitions))
        future = self.client.send(coordinator, ApiKeys.OFFSET_FETCH, OFFSET_FETCH_VERSION, body)
        return future.compose(_OffsetFetchResponseHandler(self))

    # -- committing ---------------------------------------------------------------------------------------

    def invoke_completed_offset_commit_callbacks(self) -> None:
        while self.completed_offset_commits:
            try:
                completion = self.completed_offset_commits.popleft()
            except IndexError:
                break
            completion.invoke()

    # --8<-- [start:commit_offsets_async]
    def commit_offsets_async(
        self, offsets: Mapping[TopicPartition, OffsetAndMetadata], callback: object = None
    ) -> None:
        """Send a commit and return; ``callback(offsets, exception)`` runs in a later poll or commit."""
        self.invoke_completed_offset_commit_callbacks()
        offsets = dict(offsets)
        cb = _as_callback(callback)
        if not self.coordinator_unknown():
            self._do_commit_offsets_async(offsets, cb)
        else:
            # Commit once the coordinator is found; a failure to find it fails the commit.
            self.lookup_coordinator().add_listener(_CommitWhenCoordinatorFound(self, offsets, cb))
        # Get the commit on its way, without blocking.
        self.client.poll_no_wakeup()

    # --8<-- [end:commit_offsets_async]

    def _do_commit_offsets_async(
        self, offsets: dict[TopicPartition, OffsetAndMetadata], callback: OffsetCommitCallback | None
    ) -> None:
        self.subscriptions.need_refresh_commits()
        future = self._send_offset_commit_request(offsets)
        cb = self.default_offset_commit_callback if callback is None else callback
        future.add_listener(_AsyncCommitListener(self, offsets, cb))

    # --8<-- [start:commit_offsets_sync]
    def commit_offsets_sync(
        self, offsets: Mapping[TopicPartition, OffsetAndMetadata], timeout_ms: int | None = None
    ) -> bool:
        """Commit and wait for the answer, retrying retriable errors; False if ``timeout_ms`` passed first."""
        self.invoke_completed_offset_commit_callbacks()
        offsets = dict(offsets)
        if not offsets:
            return True
        start = self.time.milliseconds()
        while True:
            remaining = None if timeout_ms is None else timeout_ms - (self.time.milliseconds() - start)
            if remaining is not None and remaining <= 0:
                return False
            if not self.ensure_coordinator_ready_within(remaining):
                return False
            future = self._send_offset_commit_request(offsets)
            remaining = None if timeout_ms is None else timeout_ms - (self.time.milliseconds() - start)
            self.client.poll_future(future, remaining)
            if not future.is_done():
                return False
            if future.succeeded():
                if self.interceptors is not None:
                    self.interceptors.on_commit(offsets)
                return True
            if not future.is_retriable():
                raise future.exception()
            self.time.sleep(self.retry_backoff_ms)

    # --8<-- [end:commit_offsets_sync]

    # --8<-- [start:auto_commit]
    def _maybe_auto_commit_offsets_async(self, now: int) -> None:
        if not self.auto_commit_enabled:
            return
        if self.coordinator_unknown():
            self._look_for_coordinator_to_auto_commit()
            self.next_auto_commit_deadline = now + self.retry_backoff_ms
        elif now >= self.next_auto_commit_deadline:
            self.next_auto_commit_deadline = now + self.auto_commit_interval_ms
            self._do_auto_commit_offsets_async()

    # --8<-- [end:auto_commit]

    def _look_for_coordinator_to_auto_commit(self) -> None:
        """Start looking for the unknown coordinator, so a later auto-commit can go: Kafka 1.1's.
        0.10.1 only waits, and with partitions assigned by hand nothing else looks for the
        coordinator (the join does, for a subscription), so such a consumer never auto-commits."""
        self.lookup_coordinator()

    def maybe_auto_commit_offsets_now(self) -> None:
        if self.auto_commit_enabled and not self.coordinator_unknown():
            self._do_auto_commit_offsets_async()

    def _do_auto_commit_offsets_async(self) -> None:
        self.commit_offsets_async(self.subscriptions.all_consumed(), self._on_auto_commit_complete)

    def _on_auto_commit_complete(
        self, offsets: dict[TopicPartition, OffsetAndMetadata], exception: Exception | None
    ) -> None:
        if exception is not None:
            log.warning("Auto offset commit failed for group %s: %s", self.group_id, exception)
            if isinstance(exception, RetriableException):
                self.next_auto_commit_deadline = min(
                    self.time.milliseconds() + self.retry_backoff_ms, self.next_auto_commit_deadline
                )
        else:
            log.debug("Completed auto-commit of offsets %s for group %s", offsets, self.group_id)

    def _maybe_auto_commit_offsets_sync(self, timeout_ms: int | None = None) -> None:
        if not self.auto_commit_enabled:
            return
        try:
            self.commit_offsets_sync(self.subscriptions.all_consumed(), timeout_ms)
        except WakeupException:
            raise
        except KafkaException as e:
            # A failed auto-commit does not stop a rebalance or a close.
            log.warning("Auto offset commit failed for group %s: %s", self.group_id, e)

    def _send_offset_commit_request(
        self, offsets: dict[TopicPartition, OffsetAndMetadata]
    ) -> RequestFuture[None]:
        if not offsets:
            return RequestFuture.void_success()
        coordinator = self.coordinator()
        if coordinator is None:
            return RequestFuture.coordinator_not_available()
        # A member of a group commits in its generation; a consumer with assigned partitions commits
        # outside any generation (the coordinator accepts that only while the group has no members).
        generation = self.generation() if self.subscriptions.partitions_auto_assigned() else NO_GENERATION
        if generation is None:
            return RequestFuture.failure(CommitFailedException())
        by_topic: dict[str, list[dict[str, Any]]] = {}
        for (topic, partition), offset in sorted(offsets.items()):
            by_topic.setdefault(topic, []).append(
                {"partition": partition, "offset": offset.offset, "metadata": offset.metadata}
            )
        body = {
            "group_id": self.group_id,
            "group_generation_id": generation.generation_id,
            "member_id": generation.member_id,
            "retention_time": DEFAULT_RETENTION_TIME,
            "topics": [{"topic": topic, "partitions": ps} for topic, ps in by_topic.items()],
        }
        log.debug("Sending offset-commit request with %s to coordinator %s for group %s",
                  offsets, coordinator, self.group_id)  # fmt: skip
        future = self.client.send(coordinator, ApiKeys.OFFSET_COMMIT, OFFSET_COMMIT_VERSION, body)
        return future.compose(_OffsetCommitResponseHandler(self, offsets))

    def close(self, timeout_ms: int | None = None) -> None:
        """Commit (with auto-commit on), stop the heartbeat thread and leave the group."""
        # No wakeup may interrupt the last commit.
        self.client.disable_wakeups()
        try:
            self._maybe_auto_commit_offsets_sync(timeout_ms)
        finally:
            super().close()


# -- listeners and response handlers -----------------------------------------------------------------


class _CommitWhenCoordinatorFound(RequestFutureListener[None]):
    def __init__(
        self,
        coordinator: ConsumerCoordinator,
        offsets: dict[TopicPartition, OffsetAndMetadata],
        callback: OffsetCommitCallback | None,
    ) -> None:
        self.coordinator = coordinator
        self.offsets = offsets
        self.callback = callback

    def on_success(self, value: None) -> None:
        self.coordinator._do_commit_offsets_async(self.offsets, self.callback)

    def on_failure(self, e: Exception) -> None:
        c = self.coordinator
        cb = c.default_offset_commit_callback if self.callback is None else self.callback
        c.completed_offset_commits.append(
            OffsetCommitCompletion(cb, self.offsets, RetriableCommitFailedException(e))
        )


class _AsyncCommitListener(RequestFutureListener[None]):
    def __init__(
        self,
        coordinator: ConsumerCoordinator,
        offsets: dict[TopicPartition, OffsetAndMetadata],
        callback: OffsetCommitCallback,
    ) -> None:
        self.coordinator = coordinator
        self.offsets = offsets
        self.callback = callback

    def on_success(self, value: None) -> None:
        if self.coordinator.interceptors is not None:
            self.coordinator.interceptors.on_commit(self.offsets)
        self.coordinator.completed_offset_commits.append(
            OffsetCommitCompletion(self.callback, self.offsets, None)
        )

    def on_failure(self, e: Exception) -> None:
        commit_exception = RetriableCommitFailedException(e) if isinstance(e, RetriableException) else e
        self.coordinator.completed_offset_commits.append(
            OffsetCommitCompletion(self.callback, self.offsets, commit_exception)
        )


class _OffsetCommitResponseHandler(CoordinatorResponseHandler[None]):
    def __init__(
        self, coordinator: ConsumerCoordinator, offsets: dict[TopicPartition, OffsetAndMetadata]
    ) -> None:
        super().__init__(coordinator)
        self.offsets = offsets

    def handle(self, body: dict[str, Any], future: RequestFuture[None]) -> None:
        c: ConsumerCoordinator = self.coordinator  # type: ignore[assignment]
        c.commit_latency.record(self.response.request_latency_ms)
        unauthorized_topics: set[str] = set()
        for topic in body.get("responses", ()):
            for p in topic["partition_responses"]:
                tp = TopicPartition(topic["topic"], p["partition"])
                offset = self.offsets.get(tp)
                error = Errors.for_code(p["error_code"])
                if error is Errors.NONE:
                    log.debug(
                        "Group %s committed offset %s for partition %s", c.group_id, offset, _tp_str(tp)
                    )
                    if offset is not None and c.subscriptions.is_assigned(tp):
                        c.subscriptions.committed(tp, offset)
                elif error is Errors.GROUP_AUTHORIZATION_FAILED:
                    log.error("Not authorized to commit offsets for group %s", c.group_id)
                    future.raise_(group_authorization_failed(c.group_id))
                    return
                elif error is Errors.TOPIC_AUTHORIZATION_FAILED:
                    unauthorized_topics.add(tp[0])
                elif error is Errors.OFFSET_METADATA_TOO_LARGE or error is Errors.INVALID_COMMIT_OFFSET_SIZE:
                    log.debug("Offset commit for group %s failed on partition %s: %s",
                              c.group_id, _tp_str(tp), error.description)  # fmt: skip
                    future.raise_(error)
                    return
                elif error is Errors.COORDINATOR_LOAD_IN_PROGRESS:
                    future.raise_(error)  # retriable: the coordinator is loading the group
                    return
                elif error in (
                    Errors.COORDINATOR_NOT_AVAILABLE,
                    Errors.NOT_COORDINATOR,
                    Errors.REQUEST_TIMED_OUT,
                ):
                    c.coordinator_dead()
                    future.raise_(error)
                    return
                elif error in (
                    Errors.UNKNOWN_MEMBER_ID,
                    Errors.ILLEGAL_GENERATION,
                    Errors.REBALANCE_IN_PROGRESS,
                ):
                    # The member is no longer in the generation: it must rejoin, and this commit fails.
                    log.debug("Offset commit for group %s failed: %s", c.group_id, error.name)
                    c.reset_generation()
                    future.raise_(CommitFailedException())
                    return
                elif error is Errors.UNKNOWN_TOPIC_OR_PARTITION:
                    future.raise_(
                        KafkaException(
                            f"Partition {_tp_str(tp)} may not exist or user may not have Describe access to topic"
                        )
                    )
                    return
                else:
                    log.error("Group %s failed to commit partition %s at offset %s: %s",
                              c.group_id, _tp_str(tp), offset, error.description)  # fmt: skip
                    future.raise_(KafkaException(f"Unexpected error in commit: {error.description}"))
                    return
        if unauthorized_topics:
            log.error(
                "Not authorized to commit to topics %s for group %s", sorted(unauthorized_topics), c.group_id
            )
            future.raise_(
                Errors.TOPIC_AUTHORIZATION_FAILED.exception(
                    f"Not authorized to access topics: {sorted(unauthorized_topics)}"
                )
            )
        else:
            future.complete(None)


class _OffsetFetchResponseHandler(CoordinatorResponseHandler[dict[TopicPartition, OffsetAndMetadata]]):
    def handle(
        self, body: dict[str, Any], future: RequestFuture[dict[TopicPartition, OffsetAndMetadata]]
    ) -> None:
        c = self.coordinator
        offsets: dict[TopicPartition, OffsetAndMetadata] = {}
        for topic in body.get("responses", ()):
            for p in topic["partition_responses"]:
                tp = TopicPartition(topic["topic"], p["partition"])
                error = Errors.for_code(p["error_code"])
                if error is not Errors.NONE:
                    log.debug("Group %s failed to fetch offset for partition %s: %s",
                              c.group_id, _tp_str(tp), error.description)  # fmt: skip
                    if error is Errors.COORDINATOR_LOAD_IN_PROGRESS:
                        future.raise_(error)
                    elif error is Errors.NOT_COORDINATOR:
                        c.coordinator_dead()
                        future.raise_(error)
                    elif error is Errors.UNKNOWN_TOPIC_OR_PARTITION:
                        future.raise_(
                            KafkaException(
                                f"Partition {_tp_str(tp)} may not exist or user may not have Describe access to topic"
                            )
                        )
                    else:
                        future.raise_(
                            KafkaException(f"Unexpected error in fetch offset response: {error.description}")
                        )
                    return
                if p["offset"] >= 0:
                    # -1: the group has no offset for the partition.
                    offsets[tp] = OffsetAndMetadata(p["offset"], p["metadata"])
                else:
                    log.debug("Found no committed offset for partition %s", _tp_str(tp))
        future.complete(offsets)
