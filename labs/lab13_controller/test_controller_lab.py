"""Lab 13 graded tests: the controller's leader selectors, the partition state machine's elections, a
partition reassignment, and a broker's failure, the last on a real cluster running your controller.

Stage 1 is pure: the selectors over a ``ControllerContext`` the tests fill in. Stages 2 and 3, and the
first test of stage 4, run kafka_lite's controller (with your files) on a real ZooKeeper through
``kafka_lite.testing.controller_harness``: its requests are recorded instead of sent, brokers "start"
and "die" by their ``/brokers/ids`` znodes, and each event is handed to the controller on the test's
thread, in order, as its event thread would. The rest of stage 4 runs on three broker processes
(``kafka-lite cluster``) whose controllers run your files; the tests kill brokers with SIGKILL.

The state machines catch what a transition raises and log it (a partition whose change fails keeps
its state), so a function still the starter's stub would only show as a state that did not change.
Each test therefore calls the lab's functions it relies on first (``written``): a stub fails the test
at once, with the starter's NotImplementedError naming the function to write.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from kafka_lite.cli.cluster import bootstrap_servers, load_state, stop_cluster
from kafka_lite.cli.main import main
from kafka_lite.clients.admin import KafkaAdminClient, NewTopic
from kafka_lite.common.errors import InvalidReplicaAssignmentException
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.controller.kafka_controller import ControllerContext, KafkaController
from kafka_lite.controller.partition_leader_selector import (
    LeaderElectionNotNeededException,
    NoReplicaOnlineException,
    OfflinePartitionLeaderSelector,
    ReassignedPartitionLeaderSelector,
    ReassignedPartitionsContext,
)
from kafka_lite.controller.partition_reassignment import PartitionReassignment
from kafka_lite.controller.partition_state_machine import PartitionState, PartitionStateMachine
from kafka_lite.controller.replica_state_machine import ReplicaState
from kafka_lite.testing import durability_checker
from kafka_lite.testing.controller_harness import ControllerHarness, running_controller
from kafka_lite.testing.lab_stubs import written
from kafka_lite.zk.embedded import EmbeddedZooKeeper
from kafka_lite.zk.zk_utils import REASSIGN_PARTITIONS_PATH, Broker, LeaderAndIsr, ZkUtils

pytestmark = [pytest.mark.lab(13)]

P, R = PartitionState, ReplicaState
TP = ("t", 0)

STAGE_1 = (OfflinePartitionLeaderSelector.select_leader, ReassignedPartitionLeaderSelector.select_leader)
STAGE_2 = (
    PartitionStateMachine._initialize_leader_and_isr_for_partition,
    PartitionStateMachine.elect_leader_for_partition,
)
STAGE_3 = (
    PartitionReassignment.on_partition_reassignment,
    PartitionReassignment.move_reassigned_partition_leader_if_required,
)
STAGE_4 = (KafkaController.on_broker_failure,)


def lai(leader: int, epoch: int, isr: list[int], version: int) -> LeaderAndIsr:
    return LeaderAndIsr(leader, epoch, isr, version)


def show(value: LeaderAndIsr) -> str:
    return f"leader {value.leader}, leader epoch {value.leader_epoch}, ISR {value.isr}, zk_version {value.zk_version}"


# -- stage 1: the leader selectors ----------------------------------------------------------------------------


def context(live: list[int], assigned: list[int] | None) -> ControllerContext:
    """Brokers ``live`` registered, partition ``[t,0]`` assigned to ``assigned`` (None: not at all)."""
    ctx = ControllerContext()
    ctx.live_brokers_by_id = {b: Broker(b, "127.0.0.1", 9000 + b) for b in live}
    if assigned is not None:
        ctx.partition_replica_assignment[TP] = assigned
    return ctx


class UncleanSetting:
    """The topic's ``unclean.leader.election.enable``, counting how often the selector asked."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.asked: list[str] = []

    def __call__(self, topic: str) -> bool:
        self.asked.append(topic)
        return self.enabled


def offline(
    live: list[int], assigned: list[int] | None, unclean: bool = False
) -> tuple[OfflinePartitionLeaderSelector, UncleanSetting]:
    """The offline selector over ``context(live, assigned)``, the topic's unclean setting ``unclean``."""
    setting = UncleanSetting(unclean)
    return OfflinePartitionLeaderSelector(context(live, assigned), setting), setting


def refusal(select: Callable[[], object]) -> str:
    """The message of the NoReplicaOnlineException ``select()`` raises; fails if it raises none."""
    try:
        got = select()
    except NoReplicaOnlineException as e:
        return str(e)
    raise AssertionError(f"expected NoReplicaOnlineException, the selector returned {got}")


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_offline_elects_the_first_live_assigned_replica_in_the_isr():
    selector, unclean = offline(live=[2, 3], assigned=[1, 2, 3])
    current = lai(1, 4, [3, 2, 1], 7)
    new, recipients = selector.select_leader(TP, current)
    assert new.leader == 2, (
        f"assigned [1, 2, 3], ISR [3, 2, 1], live brokers 2 and 3: the leader is the first live assigned replica "
        f"(in assignment order) that is in the ISR, broker 2; got broker {new.leader}"
    )
    assert new.isr == [3, 2], (
        f"the new ISR is the old ISR's live members, in the ISR's order: [3, 2]; got {new.isr}"
    )
    assert (new.leader_epoch, new.zk_version) == (5, 8), (
        f"the leader epoch and the zk_version each one up from the current {show(current)}: 5 and 8; "
        f"got {new.leader_epoch} and {new.zk_version}"
    )
    assert recipients == [2, 3], (
        f"LeaderAndIsr goes to the live assigned replicas, in assignment order: [2, 3]; got {recipients}"
    )
    assert unclean.asked == [], (
        "with a live replica in the ISR the election is clean: the topic's unclean setting is not read "
        f"(Kafka reads it from ZooKeeper only when it must), but it was read {len(unclean.asked)} time(s)"
    )


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_offline_without_a_live_in_sync_replica_refuses_unless_unclean_election_is_allowed():
    selector, unclean = offline(live=[2, 3], assigned=[1, 2, 3], unclean=False)
    message = refusal(lambda: selector.select_leader(TP, lai(1, 4, [1], 7)))
    expected = "No broker in ISR for partition [t,0] is alive. Live brokers are: [2,3], ISR brokers are: [1]"
    assert message == expected, f"Kafka's message:\n  {expected}\ngot:\n  {message}"
    assert unclean.asked == ["t"], (
        f"the selector asks the topic's unclean setting (of topic 't') before refusing; asked: {unclean.asked}"
    )


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_an_unclean_election_takes_the_first_live_assigned_replica_alone():
    selector, _ = offline(live=[2, 3], assigned=[1, 3, 2], unclean=True)
    new, recipients = selector.select_leader(TP, lai(1, 4, [1], 7))
    assert (new.leader, new.isr, new.leader_epoch, new.zk_version) == (3, [3], 5, 8), (
        "the ISR [1] is dead and the topic allows unclean election: the first live assigned replica "
        "(assigned [1, 3, 2], live 2 and 3) leads alone, ISR [3], epoch and version one up (5, 8); "
        f"got {show(new)}"
    )
    assert recipients == [3, 2], f"LeaderAndIsr to the live assigned replicas [3, 2]; got {recipients}"


@pytest.mark.stage(1)
@pytest.mark.points(1)
def test_offline_with_no_live_replica_at_all_refuses_even_unclean():
    selector, _ = offline(live=[5], assigned=[1, 2], unclean=True)
    message = refusal(lambda: selector.select_leader(TP, lai(1, 4, [1, 2], 7)))
    expected = "No replica for partition [t,0] is alive. Live brokers are: [5], Assigned replicas are: [1,2]"
    assert message == expected, f"Kafka's message:\n  {expected}\ngot:\n  {message}"
    selector, _ = offline(live=[5], assigned=None)
    message = refusal(lambda: selector.select_leader(TP, lai(1, 4, [1, 2], 7)))
    expected = "Partition [t,0] doesn't have replicas assigned to it"
    assert message == expected, (
        f"a partition with no assignment; Kafka's message:\n  {expected}\ngot:\n  {message}"
    )


def reassigned(live: list[int], new_replicas: list[int]) -> ReassignedPartitionLeaderSelector:
    ctx = context(live=live, assigned=[1, 2])
    ctx.partitions_being_reassigned[TP] = ReassignedPartitionsContext(new_replicas)
    return ReassignedPartitionLeaderSelector(ctx)


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_reassigned_elects_the_first_live_new_replica_in_the_isr_and_keeps_the_isr():
    # Broker 4 died after it caught up: it is still in the ISR (the leader has not yet dropped it), so
    # only a liveness check keeps it from leading.
    selector = reassigned(live=[1, 2, 3], new_replicas=[4, 3, 2])
    current = lai(1, 4, [1, 4, 2, 3], 7)
    new, recipients = selector.select_leader(TP, current)
    assert new.leader == 3, (
        "reassigned to [4, 3, 2], ISR [1, 4, 2, 3], broker 4 dead (still in the ISR): the leader is the first "
        f"reassigned replica that is alive and in the ISR, broker 3; got broker {new.leader}"
    )
    assert (new.isr, new.leader_epoch, new.zk_version) == ([1, 4, 2, 3], 5, 8), (
        "the ISR stays as it is (the old replicas leave it later, as they go offline; a dead member leaves "
        f"it when its broker's failure is handled), epoch and version one up: ISR [1, 4, 2, 3], 5, 8; got {show(new)}"
    )
    assert recipients == [4, 3, 2], f"LeaderAndIsr to the reassigned replicas [4, 3, 2]; got {recipients}"


@pytest.mark.stage(1)
@pytest.mark.points(1)
def test_reassigned_refuses_when_no_new_replica_is_in_sync():
    current = lai(1, 4, [1, 2], 7)
    message = refusal(lambda: reassigned(live=[1, 2, 3, 4], new_replicas=[3, 4]).select_leader(TP, current))
    expected = (
        "None of the reassigned replicas for partition [t,0] are in-sync with the leader. "
        'Current leader and ISR: [{"leader":1,"leader_epoch":4,"isr":[1,2]}]'
    )
    assert message == expected, f"Kafka's message:\n  {expected}\ngot:\n  {message}"
    message = refusal(lambda: reassigned(live=[1, 2], new_replicas=[]).select_leader(TP, current))
    expected = (
        "List of reassigned replicas for partition  [t,0] is empty. "
        'Current leader and ISR: [{"leader":1,"leader_epoch":4,"isr":[1,2]}]'
    )
    assert message == expected, (
        f"an empty list; Kafka's message (two spaces and all):\n  {expected}\ngot:\n  {message}"
    )


# -- the controller on real ZooKeeper --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def zookeeper(tmp_path_factory):
    with EmbeddedZooKeeper(tmp_path_factory.mktemp("zookeeper")) as zk:
        yield zk


def harness(request, *functions: Callable) -> ControllerHarness:
    """A controller (broker 0) elected in a ZooKeeper chroot of its own, brokers 0 to 3 registered;
    first, each of ``functions`` must be written."""
    written(*functions)
    zookeeper = request.getfixturevalue("zookeeper")
    running = running_controller(zookeeper.connect_string, name="lab13")
    h = running.__enter__()
    request.addfinalizer(lambda: running.__exit__(None, None, None))
    return h


def topic(what: str) -> str:
    return f"{what}-{uuid.uuid4().hex[:6]}"


def states_sent(h: ControllerHarness, api: ApiKeys, t: str) -> dict[int, list[tuple[int, int, list[int]]]]:
    """Per broker, (leader, leader epoch, ISR) of each partition state about ``t`` sent with ``api``."""
    sent: dict[int, list] = {}
    for s in h.requests(api):
        for p in s.body["partition_states"]:
            if p["topic"] == t:
                sent.setdefault(s.broker_id, []).append((p["leader"], p["leader_epoch"], p["isr"]))
    return dict(sorted(sent.items()))


def errors(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]


# -- stage 2: the partition state machine's elections -----------------------------------------------------------


@pytest.mark.stage(2)
@pytest.mark.points(3)
def test_a_new_partition_goes_online_under_its_first_live_replica(request):
    h = harness(request, *STAGE_2)
    t = topic("created")
    h.create_topic(t, {0: [5, 1, 3]})  # broker 5 never registered
    state = h.zk.get_partition_state(t, 0)
    assert state is not None, (
        f"New -> Online creates the partition's state znode; there is none for [{t},0]. Transitions taken: "
        f"{h.taken('partition')}"
    )
    assert state.leader_and_isr == lai(1, 0, [1, 3], 0), (
        "assigned [5, 1, 3] with broker 5 not alive: the first live assigned replica leads and the live ones "
        f"are the ISR, leader epoch 0: leader 1, ISR [1, 3], zk_version 0 (a new znode); ZooKeeper has {show(state.leader_and_isr)}"
    )
    assert state.controller_epoch == h.controller.epoch, (
        f"the znode records the controller's epoch {h.controller.epoch}; it has {state.controller_epoch}"
    )
    assert h.partition_state(t) is P.ONLINE, f"the partition is Online; it is {h.partition_state(t).value}"
    leadership = h.controller.context.partition_leadership.get((t, 0))
    assert leadership == (state.leader_and_isr, h.controller.epoch), (
        "the controller's context holds the new leader and ISR with its epoch (what later LeaderAndIsr and "
        f"UpdateMetadata requests are built from); it holds {leadership}"
    )
    sent = states_sent(h, ApiKeys.LEADER_AND_ISR, t)
    assert sent == {1: [(1, 0, [1, 3])], 3: [(1, 0, [1, 3])]}, (
        "LeaderAndIsr (leader 1, epoch 0, ISR [1, 3]) to the live assigned replicas, brokers 1 and 3, once each; "
        f"sent (broker: [(leader, epoch, ISR)]): {sent}"
    )


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_a_new_partition_with_no_live_replica_stays_new(request, caplog):
    h = harness(request, *STAGE_2)
    t = topic("unplaced")
    with caplog.at_level(logging.ERROR):
        h.create_topic(t, {0: [5, 6]})  # neither broker registered
    assert h.partition_state(t) is P.NEW, (
        f"no assigned replica is alive: the partition stays New; it is {h.partition_state(t).value}"
    )
    assert h.zk.get_partition_state(t, 0) is None, "no state znode may be written when nobody can lead"
    assert states_sent(h, ApiKeys.LEADER_AND_ISR, t) == {}, "no LeaderAndIsr either"
    expected = "No assigned replica is alive."
    assert any(expected in m and f"[{t},0]" in m for m in errors(caplog)), (
        f"the refusal is a StateChangeFailedException whose message ends {expected!r} (the state machine "
        f"logs it); the errors logged: {errors(caplog)}"
    )


@pytest.mark.stage(2)
@pytest.mark.points(1)
def test_new_to_online_gives_way_to_a_state_another_controller_created(request, caplog):
    h = harness(request, *STAGE_2)
    t = topic("raced")
    theirs = lai(2, 3, [2], 0)
    h.zk.create_topic(t, {0: [1, 2]})
    h.zk.create_partition_state(t, 0, theirs, h.controller.epoch + 1)
    with caplog.at_level(logging.ERROR):
        h.controller.handle_topic_change(h.zk.get_all_topics())
    assert h.leader_and_isr(t) == theirs, (
        f"the state znode existed (a newer controller wrote it): it is left as it was, {show(theirs)}; "
        f"ZooKeeper has {show(h.leader_and_isr(t))}"
    )
    assert h.partition_state(t) is P.NEW, f"the partition stays New; it is {h.partition_state(t).value}"
    assert any("LeaderAndIsr path already exists" in m for m in errors(caplog)), (
        "the refusal is a StateChangeFailedException saying the 'LeaderAndIsr path already exists' with its "
        f"value; the errors logged: {errors(caplog)}"
    )


def gone(h: ControllerHarness, *brokers: int) -> None:
    """Brokers' znodes go without the controller hearing of it (no broker-change event)."""
    for b in brokers:
        h.zk.client.delete(f"/brokers/ids/{b}")


@pytest.mark.stage(2)
@pytest.mark.points(3)
def test_a_new_controller_elects_a_live_in_sync_replica_for_an_offline_partition(request, caplog):
    h = harness(request, *STAGE_1, *STAGE_2)
    t = topic("offline")
    h.create_topic(t, {0: [1, 2, 3], 1: [1]})
    gone(h, 1)
    h.transitions.clear()
    h.forget_requests()
    with caplog.at_level(logging.ERROR):
        h.failover_again()  # a controller that finds broker 1 gone: both partitions Offline
    epoch = h.controller.epoch
    state = h.zk.get_partition_state(t, 0)
    assert state.leader_and_isr == lai(2, 1, [2, 3], 1), (
        "partition 0 (assigned [1, 2, 3], leader 1 dead): the offline selector elects broker 2 with ISR [2, 3]; "
        "the conditional write over version 0 makes zk_version 1, and the leader epoch goes from 0 to 1; "
        f"ZooKeeper has {show(state.leader_and_isr)}"
    )
    assert state.controller_epoch == epoch, (
        f"the znode records this controller's epoch {epoch}; it has {state.controller_epoch}"
    )
    taken = [x for x in h.taken("partition") if x[0] == (t, 0)]
    assert taken == [((t, 0), "OfflinePartition", "OnlinePartition")], (
        f"partition 0 goes Offline -> Online; transitions taken: {taken}"
    )
    sent = states_sent(h, ApiKeys.LEADER_AND_ISR, t)
    electing = {b: [s for s in states if s[0] == 2] for b, states in sent.items()}
    assert {b: states for b, states in electing.items() if states} == {
        2: [(2, 1, [2, 3])],
        3: [(2, 1, [2, 3])],
    }, (
        f"LeaderAndIsr (leader 2, epoch 1, ISR [2, 3]) to the replicas the selector names, 2 and 3; sent: {sent}"
    )
    assert h.partition_state(t, 1) is P.OFFLINE and h.leader_and_isr(t, 1) == lai(1, 0, [1], 0), (
        "partition 1's only replica (and ISR) is dead: the selector's NoReplicaOnlineException leaves it "
        f"Offline and its znode as it was; it is {h.partition_state(t, 1).value}, {show(h.leader_and_isr(t, 1))}"
    )
    assert any(f"No broker in ISR for partition [{t},1] is alive" in m for m in errors(caplog)), (
        f"the state machine logs the selector's refusal for partition 1; the errors logged: {errors(caplog)}"
    )


class InterruptedSelector:
    """The offline selector, but the first time it is asked, the partition's leader writes a larger
    ISR to ZooKeeper before the answer is written (as ``Partition.maybe_expand_isr`` may, any time)."""

    def __init__(self, h: ControllerHarness, t: str) -> None:
        self.h, self.t = h, t
        self.seen: list[LeaderAndIsr] = []

    def select_leader(self, tp, current):
        self.seen.append(current)
        if len(self.seen) == 1:
            ok, _ = self.h.zk.update_leader_and_isr(
                self.t,
                0,
                lai(current.leader, current.leader_epoch, [1, 2, 3], current.zk_version),
                self.h.controller.epoch,
            )
            assert ok, "the test's own write failed"
        new_leader = next(r for r in current.isr if r != current.leader)
        return LeaderAndIsr(new_leader, current.leader_epoch + 1, current.isr, current.zk_version + 1), [
            1,
            2,
            3,
        ]


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_the_election_writes_only_over_the_version_it_read(request):
    h = harness(request, *STAGE_2)
    t = topic("racing")
    h.create_topic(t, {0: [1, 2, 3]})
    h.zk.update_leader_and_isr(t, 0, lai(1, 0, [1, 2], 0), h.controller.epoch)  # broker 3 fell behind
    selector = InterruptedSelector(h, t)
    h.controller.partition_state_machine.handle_state_changes([(t, 0)], P.ONLINE, selector)
    seen = [show(s) for s in selector.seen]
    assert len(selector.seen) == 2, (
        "the first write must fail (the leader changed the ISR after the election read the znode) and the "
        f"election read the znode again and ask the selector again: the selector saw {seen}"
    )
    assert selector.seen[1].isr == [1, 2, 3] and selector.seen[1].zk_version == 2, (
        f"the second read sees the leader's ISR [1, 2, 3] at version 2; it saw {seen[1]}"
    )
    assert h.leader_and_isr(t) == lai(2, 1, [1, 2, 3], 3), (
        "what is written is the selector's second answer (leader 2, epoch 1, ISR [1, 2, 3]) at version 3; "
        f"ZooKeeper has {show(h.leader_and_isr(t))}"
    )
    leadership = h.controller.context.partition_leadership[(t, 0)][0]
    assert leadership == h.leader_and_isr(t), (
        "the context holds what was written, with the zk_version the write returned, so the next conditional "
        f"write (by the leader or the controller) expects it: {show(leadership)}"
    )


@pytest.mark.stage(2)
@pytest.mark.points(1)
def test_a_state_a_newer_controller_wrote_aborts_the_election(request, caplog):
    h = harness(request, *STAGE_1, *STAGE_2)
    t = topic("deposed")
    h.create_topic(t, {0: [1, 2]})
    theirs = lai(1, 0, [1, 2], 0)
    h.zk.update_leader_and_isr(t, 0, theirs, h.controller.epoch + 1)
    h.forget_requests()
    with caplog.at_level(logging.ERROR):
        h.controller.partition_state_machine.handle_state_changes(
            [(t, 0)], P.ONLINE, h.controller.offline_partition_selector
        )
    assert h.zk.get_partition_state(t, 0).controller_epoch == h.controller.epoch + 1, (
        "the znode a newer controller wrote is not overwritten"
    )
    assert states_sent(h, ApiKeys.LEADER_AND_ISR, t) == {}, (
        "and nobody is told of an election that did not happen"
    )
    assert any("aborted leader election" in m and "another controller" in m for m in errors(caplog)), (
        "the election raises a StateChangeFailedException: 'aborted leader election for partition ... since the "
        f"LeaderAndIsr path was already written by another controller ...'; the errors logged: {errors(caplog)}"
    )


class SettledSelector:
    """A selector that finds no election to hold, as the preferred replica selector does when the
    preferred replica already leads (a preferred replica election over partitions that need none)."""

    def select_leader(self, tp, current):
        raise LeaderElectionNotNeededException(
            f"Preferred replica {current.leader} is already the current leader for partition {list(tp)}"
        )


@pytest.mark.stage(2)
@pytest.mark.points(1)
def test_an_election_the_selector_finds_not_needed_changes_nothing_and_is_no_error(request, caplog):
    h = harness(request, *STAGE_2)
    t = topic("settled")
    h.create_topic(t, {0: [1, 2]})
    before = h.leader_and_isr(t)
    h.forget_requests()
    with caplog.at_level(logging.ERROR):
        h.controller.partition_state_machine.handle_state_changes([(t, 0)], P.ONLINE, SettledSelector())
    assert errors(caplog) == [], (
        "a partition whose leader is already the one the selector wants is no failure, yet the "
        f"election logged errors: {errors(caplog)}"
    )
    assert h.leader_and_isr(t) == before, (
        f"nothing to elect, yet ZooKeeper now has {show(h.leader_and_isr(t))} where it had {show(before)}"
    )
    assert states_sent(h, ApiKeys.LEADER_AND_ISR, t) == {}, (
        "nobody is told of an election that did not happen"
    )


# -- stage 3: a reassignment -----------------------------------------------------------------------------------


def reassign(h: ControllerHarness, t: str, new_replicas: list[int]) -> None:
    """The tool writes ``/admin/reassign_partitions``; the controller's watch queues the event; it runs."""
    h.zk.create_partition_reassignment_data({(t, 0): new_replicas})
    h.run_events("PartitionReassignment")


def reassignment_under_way(request, old: list[int], new: list[int]) -> tuple[ControllerHarness, str]:
    h = harness(request, *STAGE_1, *STAGE_2, *STAGE_3)
    t = topic("moving")
    h.create_topic(t, {0: old})
    h.transitions.clear()
    h.forget_requests()
    reassign(h, t, new)
    return h, t


@pytest.mark.stage(3)
@pytest.mark.points(3)
def test_the_first_steps_make_the_assignment_oar_plus_rar_and_start_the_new_replicas(request):
    h, t = reassignment_under_way(request, old=[1, 2], new=[2, 3])
    assignment = h.zk.get_partition_assignment(t)
    assert assignment == {0: [1, 2, 3]}, (
        f"step 1: the assignment in ZooKeeper becomes OAR + RAR, [1, 2] + [3]; it is {assignment}"
    )
    assert h.controller.context.partition_replica_assignment[(t, 0)] == [1, 2, 3], "and in the context"
    assert h.leader_and_isr(t) == lai(1, 1, [1, 2], 1), (
        "step 2: the same leader and ISR with the leader epoch bumped (a broker ignores a LeaderAndIsr whose "
        f"epoch is not newer): leader 1, epoch 1, ISR [1, 2]; ZooKeeper has {show(h.leader_and_isr(t))}"
    )
    told = {
        s.broker_id: p["replicas"]
        for s in h.requests(ApiKeys.LEADER_AND_ISR)
        for p in s.body["partition_states"]
        if p["topic"] == t and p["leader_epoch"] == 1
    }
    assert told == {1: [1, 2, 3], 2: [1, 2, 3], 3: [1, 2, 3]}, (
        "step 2: LeaderAndIsr with epoch 1 and AR = [1, 2, 3] to every replica of OAR + RAR; sent "
        f"(broker: replicas): {told}"
    )
    assert h.taken("replica") == [((t, 0, 3), "NonExistentReplica", "NewReplica")], (
        f"step 3: the replica in RAR - OAR (broker 3) goes NewReplica, and no other; taken: {h.taken('replica')}"
    )
    assert h.zk.get_partitions_being_reassigned() == {(t, 0): [2, 3]}, (
        "the partition stays in /admin/reassign_partitions until the reassignment completes"
    )
    assert h.requests(ApiKeys.STOP_REPLICA) == [], "no old replica is stopped before the new ones are in sync"


@pytest.mark.stage(3)
@pytest.mark.points(2)
def test_nothing_more_happens_until_every_new_replica_is_in_the_isr_even_after_a_failover(request):
    h, t = reassignment_under_way(request, old=[1, 2], new=[3, 0])
    h.follower_catches_up(t, 0, [1, 2, 3])  # broker 0 has not caught up yet
    h.run_events("PartitionReassignmentIsrChange")
    assert h.zk.get_partition_assignment(t) == {0: [1, 2, 3, 0]} and h.requests(ApiKeys.STOP_REPLICA) == [], (
        "one of the two new replicas in the ISR is not enough: the assignment stays OAR + RAR [1, 2, 3, 0] and "
        f"nothing is stopped; the assignment is {h.zk.get_partition_assignment(t)}, StopReplica sent to "
        f"{[s.broker_id for s in h.requests(ApiKeys.STOP_REPLICA)]}"
    )
    before = h.leader_and_isr(t)
    h.failover_again()  # a new controller resumes the reassignment from ZooKeeper: steps 1 to 3 again
    assert h.zk.get_partition_assignment(t) == {0: [1, 2, 3, 0]}, (
        "resumed by a new controller, whose AR is already OAR + RAR: step 1 adds only the replicas of RAR not "
        f"already assigned, so the assignment stays [1, 2, 3, 0]; it is {h.zk.get_partition_assignment(t)}"
    )
    after = h.leader_and_isr(t)
    assert (after.leader, after.isr, after.leader_epoch) == (
        before.leader,
        before.isr,
        before.leader_epoch + 1,
    ), (
        f"step 2 again: the leader epoch bumped once more, leader and ISR kept; before {show(before)}, after {show(after)}"
    )


@pytest.mark.stage(3)
@pytest.mark.points(4)
def test_once_in_sync_the_leader_moves_into_rar_and_the_old_replicas_are_deleted(request):
    h, t = reassignment_under_way(request, old=[1, 2], new=[2, 3])
    h.follower_catches_up(t, 0, [1, 2, 3])
    h.transitions.clear()
    h.forget_requests()
    h.run_events("PartitionReassignmentIsrChange")
    replica = h.taken("replica")
    for step, what in [
        (((t, 0, 2), "OnlineReplica", "OnlineReplica"), "step 5: the replicas of RAR go OnlineReplica"),
        (((t, 0, 3), "NewReplica", "OnlineReplica"), "step 5: the replicas of RAR go OnlineReplica"),
        (((t, 0, 1), "OnlineReplica", "OfflineReplica"), "step 8: the replica of OAR - RAR goes Offline"),
        (((t, 0, 1), "OfflineReplica", "ReplicaDeletionStarted"), "step 9: then its deletion starts"),
        (((t, 0, 1), "ReplicaDeletionSuccessful", "NonExistentReplica"), "step 9: and it is gone"),
    ]:
        assert step in replica, f"{what}: {step} was not taken; replica transitions taken: {replica}"
    assert h.taken("partition") == [((t, 0), "OnlinePartition", "OnlinePartition")], (
        "step 7: the leader, broker 1, is not in RAR [2, 3]: the partition goes Online -> Online with the "
        f"reassigned selector; partition transitions taken: {h.taken('partition')}"
    )
    final = h.leader_and_isr(t)
    assert (final.leader, final.isr) == (2, [2, 3]), (
        "broker 2 (the first of RAR alive and in the ISR) leads, and the ISR loses broker 1 as its replica goes "
        f"offline: leader 2, ISR [2, 3]; ZooKeeper has {show(final)}"
    )
    deletes = h.stop_replica_deletes()
    assert deletes == [(1, t, 0)], f"step 9: StopReplica (delete) to broker 1 only; sent {deletes}"
    assert h.zk.get_partition_assignment(t) == {0: [2, 3]}, (
        f"step 10: the assignment in ZooKeeper becomes RAR [2, 3]; it is {h.zk.get_partition_assignment(t)}"
    )
    assert not h.zk.client.exists(REASSIGN_PARTITIONS_PATH), (
        "step 11: the partition leaves /admin/reassign_partitions, and the path goes with its last partition"
    )
    assert (t, 0) not in h.controller.context.partitions_being_reassigned, (
        "nor is it being reassigned any more"
    )
    told = sorted({s.broker_id for s in h.requests(ApiKeys.UPDATE_METADATA)})
    assert told == [0, 1, 2, 3], f"step 12: UpdateMetadata to every live broker, 0 to 3; sent to {told}"


@pytest.mark.stage(3)
@pytest.mark.points(3)
def test_a_leader_already_in_rar_keeps_leading_with_its_epoch_bumped(request):
    h, t = reassignment_under_way(request, old=[1, 2], new=[1, 3])
    h.follower_catches_up(t, 0, [1, 2, 3])
    before = h.leader_and_isr(t)
    h.transitions.clear()
    h.forget_requests()
    h.run_events("PartitionReassignmentIsrChange")
    assert h.taken("partition") == [], (
        "the leader, broker 1, is alive and in RAR [1, 3]: no election (no partition transition); "
        f"taken: {h.taken('partition')}"
    )
    bumped = [
        (s.broker_id, p["leader"], p["leader_epoch"], p["replicas"])
        for s in h.requests(ApiKeys.LEADER_AND_ISR)
        for p in s.body["partition_states"]
        if p["topic"] == t and p["leader_epoch"] == before.leader_epoch + 1
    ]
    expected = [(b, 1, before.leader_epoch + 1, [1, 3]) for b in (1, 2, 3)]
    assert sorted(bumped) == expected, (
        "step 7: the leader epoch bumped and LeaderAndIsr sent to OAR + RAR (1, 2, 3) carrying AR = RAR [1, 3], "
        "so the leader adds no old replica back to the ISR: (broker, leader, epoch, replicas) "
        f"{expected}; sent {sorted(bumped)}"
    )
    final = h.leader_and_isr(t)
    assert (final.leader, final.isr) == (1, [1, 3]), (
        f"leader 1, ISR [1, 3] at the end; ZooKeeper has {show(final)}"
    )
    assert h.stop_replica_deletes() == [(2, t, 0)], (
        f"broker 2's replica is deleted; sent {h.stop_replica_deletes()}"
    )
    assert h.zk.get_partition_assignment(t) == {0: [1, 3]} and not h.zk.client.exists(
        REASSIGN_PARTITIONS_PATH
    )


# -- stage 4: a broker's failure ------------------------------------------------------------------------------


@pytest.mark.stage(4)
@pytest.mark.points(3)
def test_a_dead_brokers_partitions_go_offline_then_online_and_its_replicas_offline(request):
    h = harness(request, *STAGE_1, *STAGE_2, *STAGE_4)
    t, quiet = topic("failing"), topic("quiet")
    h.create_topic(t, {0: [1, 2, 3], 1: [2, 1], 2: [1]})
    h.create_topic(quiet, {0: [2]})
    h.transitions.clear()
    h.forget_requests()
    h.kill(1)
    partition = h.taken("partition")
    assert partition == [
        ((t, 0), "OnlinePartition", "OfflinePartition"),
        ((t, 2), "OnlinePartition", "OfflinePartition"),
        ((t, 0), "OfflinePartition", "OnlinePartition"),
    ], (
        "the partitions broker 1 led (0 and 2) go Offline, then every Offline partition goes Online with the "
        "offline selector: partition 0 gets broker 2, partition 2 (its only replica dead) stays Offline; "
        f"partition 1, led by broker 2, is not touched. Transitions taken: {partition}"
    )
    replica = sorted(x for x in h.taken("replica") if x[0][2] == 1)
    assert replica == [((t, p, 1), "OnlineReplica", "OfflineReplica") for p in (0, 1, 2)], (
        f"every replica on broker 1 goes OfflineReplica; taken: {replica}"
    )
    assert (h.leader_and_isr(t, 0).leader, h.leader_and_isr(t, 0).isr) == (2, [2, 3]), (
        f"partition 0: broker 2 leads, ISR [2, 3]; ZooKeeper has {show(h.leader_and_isr(t, 0))}"
    )
    assert (h.leader_and_isr(t, 1).leader, h.leader_and_isr(t, 1).isr) == (2, [2]), (
        "partition 1: broker 2 still leads, and broker 1 has left the ISR (its replica went Offline); "
        f"ZooKeeper has {show(h.leader_and_isr(t, 1))}"
    )
    told = sorted({s.broker_id for s in h.requests(ApiKeys.UPDATE_METADATA)})
    assert told == [0, 2, 3], (
        "every live broker hears of the failure, through the UpdateMetadata that goes with each "
        f"LeaderAndIsr (to 0, 2, 3); sent to {told}"
    )
    announced = updated_partitions(h)
    assert (quiet, 0) not in announced, (
        "partitions needed a new leader, so no whole UpdateMetadata is sent: the elections' LeaderAndIsr "
        f"carried the news, and {quiet}-0 (led by broker 2, no replica on broker 1) did not change; "
        f"UpdateMetadata named {sorted(announced)}"
    )

    h.forget_requests()
    h.kill(3)  # a follower only: no partition needs a new leader
    told = sorted({s.broker_id for s in h.requests(ApiKeys.UPDATE_METADATA)})
    announced = updated_partitions(h)
    assert told == [0, 2] and (quiet, 0) in announced, (
        "broker 3 led nothing: no election tells the brokers it died, so every live broker (0, 2) gets an "
        f"UpdateMetadata of every partition, {quiet}-0 included; sent to {told}, naming {sorted(announced)}"
    )


def updated_partitions(h: ControllerHarness) -> set[tuple[str, int]]:
    """The partitions the UpdateMetadata requests sent since the last step named."""
    return {
        (s["topic"], s["partition"])
        for r in h.requests(ApiKeys.UPDATE_METADATA)
        for s in r.body["partition_states"]
    }


# The cluster: three broker processes whose controllers run your files, with a short ZooKeeper session,
# so that a killed broker is noticed in about two seconds (durability_checker.CLUSTER_OVERRIDES).
STEP_S = 30  # each wait: an election, a restart, a reassignment


class LabCluster:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.state = load_state(directory)
        self.bootstrap_servers = bootstrap_servers(self.state)
        self.zk = ZkUtils(f"127.0.0.1:{self.state['zookeeper']['port']}", connection_timeout_ms=5000)

    def cli(self, *args: str) -> None:
        """``kafka-lite cluster ACTION ... --dir DIR``, as you would type it."""
        code = main(["cluster", *args, "--dir", str(self.directory)])
        assert code == 0, f"kafka-lite cluster {' '.join(args)} failed ({code}); see {self.directory}/logs"

    def create_topic(self, name: str, assignment: dict[int, list[int]]) -> None:
        # A broker checks an assignment against its metadata cache's live brokers, which hears of a
        # broker started again (the last test's) from the controller after ZooKeeper does: until
        # then it refuses a replica on that broker, and the creation is asked again.
        def created() -> bool:
            admin = KafkaAdminClient(self.bootstrap_servers)
            try:
                admin.create_topics([NewTopic(name, -1, -1, assignment)])
                return True
            except InvalidReplicaAssignmentException:
                return False
            finally:
                admin.close()

        self.wait(created, f"[{name}] created with the assignment {assignment}")
        for p, replicas in assignment.items():
            self.wait(lambda p=p, r=replicas: sorted(self.state_of(name, p).isr) == sorted(r),
                      f"[{name},{p}] to be online with every replica in its ISR")  # fmt: skip

    def state_of(self, name: str, partition: int = 0) -> LeaderAndIsr:
        return self.zk.get_partition_state(name, partition).leader_and_isr

    def registered(self) -> list[int]:
        return self.zk.get_all_broker_ids()

    def wait(self, condition: Callable[[], object], what: str) -> None:
        try:
            durability_checker.wait_for(condition, what, STEP_S)
        except TimeoutError as e:
            raise AssertionError(f"{e}; the brokers' logs are in {self.directory / 'logs'}") from None

    @contextmanager
    def killed(self, broker: int) -> Iterator[None]:
        """``broker`` killed (SIGKILL) for the block; then started again and waited on until it is
        registered, so that the next test gets a whole cluster."""
        self.cli("kill", str(broker))
        try:
            yield
        finally:
            self.cli("restart", str(broker))
            self.wait(lambda: broker in self.registered(), f"broker {broker} to register again")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory) -> Iterator[LabCluster]:
    directory = tmp_path_factory.mktemp("lab13-cluster")
    durability_checker.start(directory)
    c = LabCluster(directory)
    try:
        yield c
    finally:
        c.zk.close()
        stop_cluster(load_state(directory))


def real_cluster(request) -> LabCluster:
    written(*STAGE_1, *STAGE_2, *STAGE_3, *STAGE_4)
    return request.getfixturevalue("cluster")


@pytest.mark.stage(4)
@pytest.mark.points(3)
def test_a_killed_leader_is_replaced_from_the_isr_on_a_real_cluster(request):
    c = real_cluster(request)
    controller = c.zk.get_controller_id()
    victim, *others = [b for b in (0, 1, 2) if b != controller] + [controller]
    t = topic("lab13-leader")
    c.create_topic(t, {0: [victim, *others], 1: [others[0], victim, others[1]]})
    before = {p: c.state_of(t, p) for p in (0, 1)}
    with c.killed(victim):
        c.wait(lambda: c.state_of(t, 0).leader in others,
               f"a new leader for [{t},0] after its leader, broker {victim}, was killed")  # fmt: skip
        c.wait(lambda: victim not in c.state_of(t, 1).isr, f"broker {victim} to leave [{t},1]'s ISR")
        after = {p: c.state_of(t, p) for p in (0, 1)}
        assert after[0].leader == others[0] and after[0].leader_epoch > before[0].leader_epoch, (
            f"[{t},0] assigned {[victim, *others]}: broker {others[0]}, the first live assigned replica in the "
            f"ISR, leads with a newer leader epoch; before {show(before[0])}, after {show(after[0])}"
        )
        assert sorted(after[0].isr) == sorted(others), (
            f"[{t},0]'s ISR is its live members {sorted(others)}; it is {after[0].isr}"
        )
        assert after[1].leader == before[1].leader, (
            f"[{t},1] was led by broker {before[1].leader}, which is alive: it keeps its leader; after {show(after[1])}"
        )


@pytest.mark.stage(4)
@pytest.mark.points(3)
def test_a_killed_controller_is_replaced_and_the_new_one_completes_a_reassignment(request):
    c = real_cluster(request)
    old = c.zk.get_controller_id()
    follower, spare = [b for b in (0, 1, 2) if b != old]
    t = topic("lab13-controller")
    c.create_topic(t, {0: [old, follower]})
    with c.killed(old):
        c.wait(
            lambda: c.zk.get_controller_id() not in (old, -1),
            f"a new controller after broker {old} was killed",
        )
        c.wait(lambda: c.state_of(t).leader == follower,
               f"the new controller to elect broker {follower} for [{t},0], which the killed broker {old} led")  # fmt: skip
        c.zk.create_partition_reassignment_data({(t, 0): [follower, spare]})
        c.wait(lambda: not c.zk.client.exists(REASSIGN_PARTITIONS_PATH),
               f"the reassignment of [{t},0] to [{follower}, {spare}] to complete (the path to go)")  # fmt: skip
        assignment = c.zk.get_partition_assignment(t)
        assert assignment == {0: [follower, spare]}, (
            f"the reassignment completed: the assignment is RAR [{follower}, {spare}]; it is {assignment}"
        )
        state = c.state_of(t)
        assert state.leader == follower and sorted(state.isr) == sorted([follower, spare]), (
            f"broker {follower} leads and both new replicas are in the ISR; ZooKeeper has {show(state)}"
        )


@pytest.mark.stage(4)
@pytest.mark.points(3)
def test_nothing_acknowledged_with_acks_all_is_lost_when_leaders_are_killed(request):
    c = real_cluster(request)
    report = durability_checker.check(
        c.directory, rounds=2, victim="leader", records_per_round=50, log=lambda _: None
    )
    assert report.ok, (
        "a producer with acks=all (min.insync.replicas=2, three replicas) ran while the partition's leader was "
        "killed twice; every acknowledged value must be read back, in order:\n  "
        + "\n  ".join(report.lines())
        + f"\nlost: {[a.value for a in report.verdict.lost][:20]}\nthe brokers' logs: {c.directory / 'logs'}"
    )
