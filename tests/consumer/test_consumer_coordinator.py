"""ConsumerCoordinator against a scripted group coordinator (a real socket peer that answers each group
request as the test says, through a real NetworkClient and ConsumerNetworkClient): the leader's
assignment, the follower's sync, the rebalance listener's calls, rejoining after errors, commits and
committed offsets, LeaveGroup, and the heartbeat thread's heartbeats and KIP-62 leave.

Every blocking call runs in a thread joined with a deadline; the heartbeat-thread tests run on the real
clock with short intervals and wait on conditions, never on sleeps."""

from __future__ import annotations

import threading

import pytest

from kafka_lite.clients.metadata import Metadata
from kafka_lite.clients.network_client import NetworkClient
from kafka_lite.common.errors import Errors, InconsistentGroupProtocolException
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.requests import encode_response
from kafka_lite.common.time import SYSTEM, MockTime, Time
from kafka_lite.common.utils import INT32_MAX
from kafka_lite.consumer import CommitFailedException
from kafka_lite.consumer.consumer_rebalance_listener import ConsumerRebalanceListener
from kafka_lite.consumer.internals.abstract_coordinator import MemberState
from kafka_lite.consumer.internals.consumer_coordinator import ConsumerCoordinator
from kafka_lite.consumer.internals.consumer_network_client import ConsumerNetworkClient
from kafka_lite.consumer.internals.consumer_protocol import (
    Assignment,
    Subscription,
    deserialize_assignment,
    deserialize_subscription,
    serialize_assignment,
    serialize_subscription,
)
from kafka_lite.consumer.internals.subscription_state import SubscriptionState
from kafka_lite.consumer.offset_and_metadata import OffsetAndMetadata
from kafka_lite.consumer.offset_reset_strategy import OffsetResetStrategy
from kafka_lite.consumer.range_assignor import RangeAssignor
from kafka_lite.consumer.round_robin_assignor import RoundRobinAssignor
from kafka_lite.network.selector import Selector
from tests.support.scripted_broker import ScriptedServer
from tests.support.waiting import wait_until

pytestmark = pytest.mark.unit
DEADLINE_S = 10
TOPIC = "orders"
GROUP = "billing"
ME, OTHER = "member-a", "member-b"


class GroupBroker(ScriptedServer):
    """A one-broker cluster (node 0) that is its own group coordinator. Each group API answers from
    a queue of error codes the test fills (empty: success); every request is recorded."""

    def __init__(self, partitions: int = 4) -> None:
        self.partitions = partitions
        self.requests: list[tuple[ApiKeys, dict]] = []
        self.errors: dict[ApiKeys, list[int]] = {}
        self.leader = ME  # who the JoinGroup names as leader
        self.other_members = {OTHER: serialize_subscription(Subscription([TOPIC]))}
        self.generation = 0
        self.assignment_for_me = Assignment([(TOPIC, 0), (TOPIC, 1)])  # a follower's SyncGroup answer
        self.committed: dict[tuple[str, int], int] = {}
        self.topic_exists = True  # False: Metadata answers UNKNOWN_TOPIC_OR_PARTITION for the topic
        self._lock = threading.Lock()
        super().__init__()

    def next_error(self, api: ApiKeys) -> int:
        queue = self.errors.get(api, [])
        return queue.pop(0) if queue else 0

    def sent(self, api: ApiKeys) -> list[dict]:
        with self._lock:
            return [body for a, body in self.requests if a == api]

    def apis(self) -> list[ApiKeys]:
        with self._lock:
            return [a for a, _ in self.requests if a != ApiKeys.METADATA]

    def answer(self, header, body):
        api, version, correlation = header.api, header.api_version, header.correlation_id
        with self._lock:
            self.requests.append((api, body))
        error = 0 if api == ApiKeys.METADATA else self.next_error(api)
        if api == ApiKeys.METADATA:
            response = self.metadata_body(TOPIC, self.partitions)
            if not self.topic_exists:
                response["topic_metadata"] = [{"topic_error_code": Errors.UNKNOWN_TOPIC_OR_PARTITION.code,
                                               "topic": TOPIC, "is_internal": False, "partition_metadata": []}]  # fmt: skip
        elif api == ApiKeys.FIND_COORDINATOR:
            response = {
                "error_code": error,
                "coordinator": {"node_id": 0, "host": "127.0.0.1", "port": self.port},
            }
        elif api == ApiKeys.JOIN_GROUP:
            self.generation += 1
            mine = body["group_protocols"][0]["protocol_metadata"]
            members = {ME: mine, **self.other_members} if self.leader == ME else {}
            response = {
                "error_code": error,
                "generation_id": self.generation,
                "group_protocol": body["group_protocols"][0]["protocol_name"],
                "leader_id": self.leader,
                "member_id": ME,
                "members": [{"member_id": m, "member_metadata": b} for m, b in members.items()],
            }
        elif api == ApiKeys.SYNC_GROUP:
            given = {a["member_id"]: a["member_assignment"] for a in body["group_assignment"]}
            mine = given.get(ME) or serialize_assignment(self.assignment_for_me)
            response = {"error_code": error, "member_assignment": mine}
        elif api in (ApiKeys.HEARTBEAT, ApiKeys.LEAVE_GROUP):
            response = {"error_code": error}
        elif api == ApiKeys.OFFSET_COMMIT:
            topics = []
            for t in body["topics"]:
                for p in t["partitions"]:
                    if error == 0:
                        self.committed[(t["topic"], p["partition"])] = p["offset"]
                topics.append({"topic": t["topic"], "partition_responses": [
                    {"partition": p["partition"], "error_code": error} for p in t["partitions"]]})  # fmt: skip
            response = {"responses": topics}
        elif api == ApiKeys.OFFSET_FETCH:
            topics = [
                {
                    "topic": t["topic"],
                    "partition_responses": [self._committed(t["topic"], p, error) for p in t["partitions"]],
                }
                for t in body["topics"]
            ]
            response = {"responses": topics}
        else:
            raise AssertionError(f"unexpected request {api}")
        return encode_response(api, version, correlation, response)

    def _committed(self, topic: str, partition: int, error: int) -> dict:
        offset = self.committed.get((topic, partition), -1)
        return {"partition": partition, "offset": offset, "metadata": "", "error_code": error}


class RecordingListener(ConsumerRebalanceListener):
    def __init__(self) -> None:
        self.events: list[tuple[str, set]] = []

    def on_partitions_revoked(self, partitions):
        self.events.append(("revoked", set(partitions)))

    def on_partitions_assigned(self, partitions):
        self.events.append(("assigned", set(partitions)))


def in_thread(call, what: str):
    outcome: dict = {}

    def run():
        try:
            outcome["value"] = call()
        except BaseException as e:
            outcome["error"] = e

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(DEADLINE_S)
    assert not thread.is_alive(), f"{what} did not finish within {DEADLINE_S} s"
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


@pytest.fixture
def make():
    made: list[tuple[GroupBroker, ConsumerCoordinator]] = []

    def build(
        auto_commit: bool = False,
        session_timeout_ms: int = 10_000,
        heartbeat_interval_ms: int = 3_000,
        max_poll_interval_ms: int = 60_000,
        assignors=None,
        partitions: int = 4,
        time: Time = SYSTEM,
        topic_exists: bool = True,
    ):
        server = GroupBroker(partitions)
        server.topic_exists = topic_exists
        metadata = Metadata(refresh_backoff_ms=50, time=time)
        metadata.bootstrap([("127.0.0.1", server.port)], time.milliseconds())
        metadata.topics = {TOPIC}
        network = NetworkClient(
            Selector(), "coordinator-test", request_timeout_ms=30_000, time=time, metadata=metadata
        )
        client = ConsumerNetworkClient(network, metadata, time, 50, 30_000)
        subscriptions = SubscriptionState(OffsetResetStrategy.EARLIEST)
        listener = RecordingListener()
        subscriptions.subscribe([TOPIC], listener)
        coordinator = ConsumerCoordinator(
            client,
            GROUP,
            max_poll_interval_ms,
            session_timeout_ms,
            heartbeat_interval_ms,
            assignors or [RangeAssignor(), RoundRobinAssignor()],
            metadata,
            subscriptions,
            time,
            50,
            auto_commit,
            5000,
        )
        made.append((server, coordinator))
        return server, coordinator, subscriptions, listener

    yield build
    for server, coordinator in made:
        thread = coordinator.heartbeat_thread
        if thread is not None:
            thread.close()
            thread.join(DEADLINE_S)
        coordinator.client.close()
        server.close()


def join(coordinator: ConsumerCoordinator) -> None:
    clock = coordinator.time
    in_thread(lambda: coordinator.poll(clock.milliseconds()), "the coordinator's poll (find, join, sync)")


# -- joining -------------------------------------------------------------------------------------------------


def test_the_leader_assigns_with_the_chosen_assignor_and_takes_its_share(make):
    server, coordinator, subscriptions, listener = make()
    join(coordinator)

    assert server.apis()[:3] == [ApiKeys.FIND_COORDINATOR, ApiKeys.JOIN_GROUP, ApiKeys.SYNC_GROUP]
    (join_request,) = server.sent(ApiKeys.JOIN_GROUP)
    assert join_request["group_id"] == GROUP and join_request["member_id"] == ""
    assert join_request["protocol_type"] == "consumer"
    assert join_request["rebalance_timeout"] == 60_000 and join_request["session_timeout"] == 10_000
    protocols = join_request["group_protocols"]
    assert [p["protocol_name"] for p in protocols] == ["range", "roundrobin"]
    assert deserialize_subscription(protocols[0]["protocol_metadata"]).topics == [TOPIC]

    # The leader ran the range assignor over both members: each gets two consecutive partitions.
    (sync_request,) = server.sent(ApiKeys.SYNC_GROUP)
    assert sync_request["generation_id"] == 1 and sync_request["member_id"] == ME
    given = {
        a["member_id"]: deserialize_assignment(a["member_assignment"]).partitions
        for a in sync_request["group_assignment"]
    }
    assert given == {ME: [(TOPIC, 0), (TOPIC, 1)], OTHER: [(TOPIC, 2), (TOPIC, 3)]}

    assert subscriptions.assigned_partitions() == {(TOPIC, 0), (TOPIC, 1)}
    assert listener.events == [("revoked", set()), ("assigned", {(TOPIC, 0), (TOPIC, 1)})]
    assert coordinator.generation().generation_id == 1 and coordinator.generation().member_id == ME
    assert not coordinator.need_rejoin() and coordinator.is_leader
    # The coordinator has a connection of its own, under node id 2**31 - 1 - broker id.
    assert coordinator.coordinator().id == INT32_MAX - 0


def test_the_leader_uses_the_protocol_the_coordinator_chose(make):
    server, coordinator, subscriptions, _ = make(assignors=[RoundRobinAssignor()])
    join(coordinator)
    (sync_request,) = server.sent(ApiKeys.SYNC_GROUP)
    given = {
        a["member_id"]: deserialize_assignment(a["member_assignment"]).partitions
        for a in sync_request["group_assignment"]
    }
    assert given == {ME: [(TOPIC, 0), (TOPIC, 2)], OTHER: [(TOPIC, 1), (TOPIC, 3)]}
    assert subscriptions.assigned_partitions() == {(TOPIC, 0), (TOPIC, 2)}


def test_a_follower_syncs_with_no_assignments_and_takes_the_leaders(make):
    server, coordinator, subscriptions, listener = make()
    server.leader = OTHER
    server.assignment_for_me = Assignment([(TOPIC, 3)])
    join(coordinator)
    (sync_request,) = server.sent(ApiKeys.SYNC_GROUP)
    assert sync_request["group_assignment"] == []
    assert subscriptions.assigned_partitions() == {(TOPIC, 3)}
    assert listener.events[-1] == ("assigned", {(TOPIC, 3)})
    assert not coordinator.is_leader


@pytest.mark.parametrize(
    "error", [Errors.UNKNOWN_MEMBER_ID, Errors.REBALANCE_IN_PROGRESS, Errors.ILLEGAL_GENERATION]
)
def test_a_sync_that_fails_with_a_rebalance_error_rejoins_at_once(make, error):
    server, coordinator, subscriptions, _ = make()
    server.errors[ApiKeys.SYNC_GROUP] = [error.code]
    join(coordinator)
    assert [a for a in server.apis() if a in (ApiKeys.JOIN_GROUP, ApiKeys.SYNC_GROUP)] == [
        ApiKeys.JOIN_GROUP, ApiKeys.SYNC_GROUP, ApiKeys.JOIN_GROUP, ApiKeys.SYNC_GROUP,
    ]  # fmt: skip
    second_join = server.sent(ApiKeys.JOIN_GROUP)[1]
    # Dropped from the generation: it rejoins as a new member; a rebalance keeps its id.
    assert second_join["member_id"] == ("" if error is not Errors.REBALANCE_IN_PROGRESS else ME)
    assert subscriptions.assigned_partitions() == {(TOPIC, 0), (TOPIC, 1)}


def test_not_coordinator_marks_the_coordinator_dead_and_finds_it_again(make):
    server, coordinator, subscriptions, _ = make()
    server.errors[ApiKeys.JOIN_GROUP] = [Errors.NOT_COORDINATOR.code]
    join(coordinator)
    assert server.apis()[:5] == [
        ApiKeys.FIND_COORDINATOR, ApiKeys.JOIN_GROUP, ApiKeys.FIND_COORDINATOR, ApiKeys.JOIN_GROUP, ApiKeys.SYNC_GROUP,
    ]  # fmt: skip
    assert subscriptions.assigned_partitions() == {(TOPIC, 0), (TOPIC, 1)}


def test_a_fatal_join_error_is_raised(make):
    server, coordinator, _, _ = make()
    server.errors[ApiKeys.JOIN_GROUP] = [Errors.INCONSISTENT_GROUP_PROTOCOL.code]
    with pytest.raises(InconsistentGroupProtocolException):
        join(coordinator)


def test_a_rejoin_revokes_the_old_partitions_after_an_auto_commit(make):
    server, coordinator, subscriptions, listener = make(auto_commit=True)
    join(coordinator)
    subscriptions.seek((TOPIC, 0), 42)
    coordinator.request_rejoin()
    assert coordinator.need_rejoin()
    join(coordinator)
    apis = server.apis()
    # The positions were committed before the member rejoined, and before the revocation.
    assert apis.index(ApiKeys.OFFSET_COMMIT) < len(apis) - 1 - apis[::-1].index(ApiKeys.JOIN_GROUP)
    assert server.committed == {(TOPIC, 0): 42}
    assert listener.events == [
        ("revoked", set()),
        ("assigned", {(TOPIC, 0), (TOPIC, 1)}),
        ("revoked", {(TOPIC, 0), (TOPIC, 1)}),
        ("assigned", {(TOPIC, 0), (TOPIC, 1)}),
    ]
    assert coordinator.generation().generation_id == 2


def test_a_new_subscription_makes_the_member_rejoin(make):
    server, coordinator, subscriptions, listener = make()
    join(coordinator)
    subscriptions.subscribe([TOPIC, "refunds"], listener)
    assert coordinator.need_rejoin()
    join(coordinator)
    second_join = server.sent(ApiKeys.JOIN_GROUP)[1]
    assert deserialize_subscription(second_join["group_protocols"][0]["protocol_metadata"]).topics == [
        "orders",
        "refunds",
    ]


def test_the_leader_rejoins_when_a_subscribed_topics_partition_count_changes(make):
    server, coordinator, subscriptions, _ = make()
    join(coordinator)
    assert not coordinator.need_rejoin()
    server.partitions = 6  # the topic grew: the leader's assignment no longer covers it
    in_thread(lambda: coordinator.client.await_metadata_update(5000), "a metadata update")
    join(coordinator)
    assert len(server.sent(ApiKeys.JOIN_GROUP)) == 2
    given = {
        a["member_id"]: deserialize_assignment(a["member_assignment"]).partitions
        for a in server.sent(ApiKeys.SYNC_GROUP)[1]["group_assignment"]
    }
    assert given == {ME: [(TOPIC, 0), (TOPIC, 1), (TOPIC, 2)], OTHER: [(TOPIC, 3), (TOPIC, 4), (TOPIC, 5)]}
    assert subscriptions.assigned_partitions() == {(TOPIC, 0), (TOPIC, 1), (TOPIC, 2)}


def test_a_follower_does_not_rejoin_for_a_partition_count_change(make):
    server, coordinator, _, _ = make()
    server.leader = OTHER
    join(coordinator)
    server.partitions = 6
    in_thread(lambda: coordinator.client.await_metadata_update(5000), "a metadata update")
    join(coordinator)
    assert len(server.sent(ApiKeys.JOIN_GROUP)) == 1


def test_a_subscribed_topic_missing_from_the_metadata_is_asked_for_again_after_retry_backoff(make):
    """The leader joins before its topic exists and assigns nothing. Kafka 0.10.2.1's rule asks for
    metadata again after retry.backoff.ms (50 ms here), so the topic's creation is seen at once and
    the group rebalances onto it; 0.10.1 would wait for metadata.max.age.ms (5 minutes)."""
    clock = MockTime()
    server, coordinator, subscriptions, listener = make(time=clock, topic_exists=False)
    metadata = coordinator._metadata
    server.other_members = {}  # a group of one: it takes every partition it assigns
    join(coordinator)
    assert listener.events[-1] == ("assigned", set()), "the leader had no partitions of the topic to assign"
    assert TOPIC in metadata.unavailable_topics
    assert metadata.time_to_next_update(clock.milliseconds()) <= 50, (
        "a subscribed topic is missing from the metadata: the next refresh must come after "
        f"retry.backoff.ms, not in {metadata.time_to_next_update(clock.milliseconds())} ms"
    )

    server.topic_exists = True  # the topic is created
    clock.advance(50)
    version = metadata.version
    in_thread(lambda: coordinator.client.await_metadata_update(5000), "the early metadata refresh")
    assert metadata.version == version + 1 and not metadata.unavailable_topics
    join(coordinator)  # the leader sees the topic's partitions, so its assignment is stale: it rejoins
    assert len(server.sent(ApiKeys.JOIN_GROUP)) == 2
    assert subscriptions.assigned_partitions() == {(TOPIC, p) for p in range(4)}
    # Every subscribed topic is known now: back to refreshing every metadata.max.age.ms.
    assert metadata.time_to_next_update(clock.milliseconds()) > 60_000


# -- heartbeats ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "error, rejoin, member_id",
    [
        (Errors.REBALANCE_IN_PROGRESS, True, ME),
        (Errors.ILLEGAL_GENERATION, True, ""),
        (Errors.UNKNOWN_MEMBER_ID, True, ""),
    ],
)
def test_heartbeat_errors_make_the_member_rejoin(make, error, rejoin, member_id):
    server, coordinator, _, _ = make()
    join(coordinator)
    server.errors[ApiKeys.HEARTBEAT] = [error.code]
    future = coordinator.send_heartbeat_request()
    in_thread(lambda: coordinator.client.poll_future(future), "the heartbeat")
    assert future.failed() and isinstance(future.exception(), error.exception_class)
    assert coordinator.need_rejoin() is rejoin
    assert coordinator._generation.member_id == member_id


def test_the_heartbeat_thread_sends_heartbeats_every_interval_while_stable(make):
    server, coordinator, _, _ = make(session_timeout_ms=2000, heartbeat_interval_ms=100)
    join(coordinator)
    assert coordinator.heartbeat_thread is not None and coordinator.heartbeat_thread.daemon
    wait_until(
        lambda: len(server.sent(ApiKeys.HEARTBEAT)) >= 3, what="three heartbeats from the heartbeat thread"
    )
    beat = server.sent(ApiKeys.HEARTBEAT)[0]
    assert beat == {"group_id": GROUP, "group_generation_id": 1, "member_id": ME}
    assert coordinator.state is MemberState.STABLE


def test_the_heartbeat_thread_leaves_the_group_when_poll_is_not_called_within_max_poll_interval(make):
    server, coordinator, _, _ = make(
        session_timeout_ms=2000, heartbeat_interval_ms=100, max_poll_interval_ms=600
    )
    join(coordinator)
    # No poll from here on: after max.poll.interval.ms the thread leaves, and the next poll rejoins.
    wait_until(lambda: server.sent(ApiKeys.LEAVE_GROUP), what="a LeaveGroup from the heartbeat thread")
    assert server.sent(ApiKeys.LEAVE_GROUP) == [{"group_id": GROUP, "member_id": ME}]
    assert coordinator.need_rejoin() and coordinator.generation() is None
    joins = len(server.sent(ApiKeys.JOIN_GROUP))
    join(coordinator)
    assert len(server.sent(ApiKeys.JOIN_GROUP)) == joins + 1
    assert coordinator.state is MemberState.STABLE


def test_polling_keeps_the_member_past_max_poll_interval(make):
    server, coordinator, _, _ = make(
        session_timeout_ms=2000, heartbeat_interval_ms=100, max_poll_interval_ms=600
    )
    join(coordinator)
    start = SYSTEM.milliseconds()

    def polled_past_twice_the_interval() -> bool:
        coordinator.poll(SYSTEM.milliseconds())
        return SYSTEM.milliseconds() - start > 1200

    wait_until(polled_past_twice_the_interval, what="1.2 s of polling")
    assert server.sent(ApiKeys.LEAVE_GROUP) == []
    assert len(server.sent(ApiKeys.HEARTBEAT)) >= 3


# -- offsets ----------------------------------------------------------------------------------------------------


def test_a_sync_commit_carries_the_generation_and_records_the_committed_offsets(make):
    server, coordinator, subscriptions, _ = make()
    join(coordinator)
    offsets = {(TOPIC, 0): OffsetAndMetadata(7, "note"), (TOPIC, 1): OffsetAndMetadata(9)}
    assert in_thread(lambda: coordinator.commit_offsets_sync(offsets), "commit_offsets_sync") is True
    (commit,) = server.sent(ApiKeys.OFFSET_COMMIT)
    assert commit["group_generation_id"] == 1 and commit["member_id"] == ME
    assert commit["retention_time"] == -1
    assert commit["topics"] == [{"topic": TOPIC, "partitions": [
        {"partition": 0, "offset": 7, "metadata": "note"}, {"partition": 1, "offset": 9, "metadata": ""}]}]  # fmt: skip
    assert subscriptions.committed((TOPIC, 0)) == OffsetAndMetadata(7, "note")


@pytest.mark.parametrize(
    "error", [Errors.ILLEGAL_GENERATION, Errors.UNKNOWN_MEMBER_ID, Errors.REBALANCE_IN_PROGRESS]
)
def test_a_commit_from_a_member_the_group_moved_on_from_fails(make, error):
    server, coordinator, _, _ = make()
    join(coordinator)
    server.errors[ApiKeys.OFFSET_COMMIT] = [error.code]
    with pytest.raises(CommitFailedException, match="group has already rebalanced"):
        in_thread(lambda: coordinator.commit_offsets_sync({(TOPIC, 0): OffsetAndMetadata(1)}), "commit")
    assert coordinator.need_rejoin()


def test_a_retriable_commit_error_is_retried(make):
    server, coordinator, _, _ = make()
    join(coordinator)
    server.errors[ApiKeys.OFFSET_COMMIT] = [Errors.COORDINATOR_LOAD_IN_PROGRESS.code]
    assert in_thread(lambda: coordinator.commit_offsets_sync({(TOPIC, 0): OffsetAndMetadata(3)}), "commit")
    assert len(server.sent(ApiKeys.OFFSET_COMMIT)) == 2 and server.committed == {(TOPIC, 0): 3}


def test_an_async_commits_callback_runs_on_a_later_poll(make):
    server, coordinator, _, _ = make()
    join(coordinator)
    done: list = []
    coordinator.commit_offsets_async(
        {(TOPIC, 1): OffsetAndMetadata(5)}, lambda offsets, e: done.append((offsets, e))
    )
    wait_until(lambda: server.committed, what="the asynchronous commit at the broker")
    assert done == []  # not yet: callbacks run in the consumer's thread, from poll

    def called_back() -> bool:
        coordinator.client.poll(50)
        coordinator.poll(SYSTEM.milliseconds())
        return bool(done)

    wait_until(called_back, what="the commit callback")
    assert done == [({(TOPIC, 1): OffsetAndMetadata(5)}, None)]


def test_an_auto_commit_with_the_coordinator_unknown_starts_looking_for_it(make):
    """Partitions assigned by hand: nothing joins, so nothing else finds the coordinator. The auto-commit
    looks for it (Kafka 1.1, KAFKA-6362) and commits once it is known; 0.10.1 to 1.0 only wait."""
    clock = MockTime()
    server, coordinator, subscriptions, _ = make(auto_commit=True, time=clock)
    subscriptions.unsubscribe()
    subscriptions.assign_from_user([(TOPIC, 0)])
    subscriptions.seek((TOPIC, 0), 7)
    assert coordinator.poll(clock.milliseconds()) and coordinator.coordinator_unknown()

    def committed() -> bool:
        coordinator.client.poll(50)
        clock.advance(5000)  # auto.commit.interval.ms
        coordinator.poll(clock.milliseconds())
        return bool(server.committed)

    wait_until(committed, what="the auto-commit once the coordinator is known")
    assert server.committed == {(TOPIC, 0): 7}
    assert server.apis()[:2] == [ApiKeys.FIND_COORDINATOR, ApiKeys.OFFSET_COMMIT]


def test_committed_offsets_are_fetched_and_partitions_without_one_left_out(make):
    server, coordinator, subscriptions, _ = make()
    join(coordinator)
    server.committed = {(TOPIC, 0): 11}
    in_thread(coordinator.refresh_committed_offsets_if_needed, "refresh_committed_offsets_if_needed")
    (fetch,) = server.sent(ApiKeys.OFFSET_FETCH)
    assert fetch == {"group_id": GROUP, "topics": [{"topic": TOPIC, "partitions": [0, 1]}]}
    assert subscriptions.committed((TOPIC, 0)) == OffsetAndMetadata(11, "")
    assert subscriptions.committed((TOPIC, 1)) is None
    assert not subscriptions.refresh_commits_needed()


# -- leaving -------------------------------------------------------------------------------------------------------


def test_close_commits_stops_the_heartbeat_thread_and_leaves(make):
    server, coordinator, subscriptions, _ = make(auto_commit=True)
    join(coordinator)
    subscriptions.seek((TOPIC, 1), 5)
    thread = coordinator.heartbeat_thread
    in_thread(lambda: coordinator.close(5000), "close")
    assert not thread.is_alive()
    assert server.committed == {(TOPIC, 1): 5}
    wait_until(lambda: server.sent(ApiKeys.LEAVE_GROUP), what="the LeaveGroup")
    assert server.sent(ApiKeys.LEAVE_GROUP) == [{"group_id": GROUP, "member_id": ME}]
    assert coordinator.generation() is None
