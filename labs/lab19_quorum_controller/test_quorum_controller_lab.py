"""Lab 19 graded tests: the quorum controller's elections and fencing (Kafka 3.3), unit by unit, then
inside the real QuorumController.

Stage 1 drives ``PartitionChangeBuilder`` directly: a partition as it is, the targets a caller asks
for, and the record ``build`` returns, compared field by field with the one Kafka 3.3 writes (and
``PartitionRegistration.merge``, given, shows what the partition becomes). Stage 2 drives
``BrokerHeartbeatManager`` on a MockTime clock: sessions, the stale broker, the decision table of a
heartbeat. Stage 3 is the controller's fencing event: first its pieces on one controller's managers
without the controller (``ClusterControlManager`` and ``ReplicationControlManager`` on a MockTime, the
records each call returns replayed only when the test says), then everything where it lives: three
``QuorumController``s over one ``LocalLogManager`` log, each on a deterministic event queue
(``QuorumControllerTestEnv``), with brokers that register, heartbeat, stop heartbeating or shut down,
and checks what the controller wrote to the log; a failure shows the scenario and the records, offset
by offset.

Before a controller runs, the stage's function, then stages 1 and 2's, are checked to be written:
the controller turns an exception inside an event into an error reply (and a renounce), so the
untouched starter would otherwise fail on a confusing reply rather than the lab's own
NotImplementedError naming the function to write.
"""

from __future__ import annotations

import os
import random
import signal
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

from kafka_lite.cli import cluster_kraft
from kafka_lite.cli.cluster import (
    _alive,
    _wait_gone,
    bootstrap_servers,
    load_state,
    metadata_health,
    start_cluster,
    wait_healthy,
)
from kafka_lite.cli.main import main
from kafka_lite.clients.admin import KafkaAdminClient, NewTopic
from kafka_lite.clients.network_client import ClientRequest, ClientResponse
from kafka_lite.common.metadata import (
    ConfigRecord,
    FenceBrokerRecord,
    MetadataRecordSerde,
    PartitionChangeRecord,
    PartitionRecord,
    RegisterBrokerRecord,
    TopicRecord,
    UnfenceBrokerRecord,
)
from kafka_lite.common.protocol.controller_messages import ControllerApiKeys
from kafka_lite.common.record import FileRecords
from kafka_lite.common.time import MockTime
from kafka_lite.metadata.broker_state import BrokerState
from kafka_lite.metadata.controller.broker_control_states import BrokerControlState
from kafka_lite.metadata.controller.broker_heartbeat_manager import LONG_MAX, BrokerHeartbeatManager
from kafka_lite.metadata.controller.cluster_control_manager import ClusterControlManager
from kafka_lite.metadata.controller.configuration_control_manager import ConfigurationControlManager
from kafka_lite.metadata.controller.feature_control_manager import FeatureControlManager
from kafka_lite.metadata.controller.partition_change_builder import (
    Election,
    ElectionResult,
    PartitionChangeBuilder,
)
from kafka_lite.metadata.controller.quorum_controller import MAYBE_FENCE_REPLICAS, QuorumController
from kafka_lite.metadata.controller.replication_control_manager import ReplicationControlManager
from kafka_lite.metadata.leader_constants import NO_LEADER, NO_LEADER_CHANGE
from kafka_lite.metadata.leader_recovery_state import LeaderRecoveryState
from kafka_lite.metadata.partition_registration import PartitionRegistration
from kafka_lite.metadata.placement import StripedReplicaPlacer
from kafka_lite.metadata.timeline import SnapshotRegistry
from kafka_lite.server.broker_lifecycle_manager import BrokerLifecycleManager
from kafka_lite.server.kafka_config import KafkaConfig
from kafka_lite.testing.deterministic_event_queue import DeterministicEventQueue
from kafka_lite.testing.lab_stubs import written
from kafka_lite.testing.quorum_controller_test_env import CLUSTER_ID, QuorumControllerTestEnv
from kafka_lite.utils.ports import free_ports

pytestmark = [pytest.mark.lab(19), pytest.mark.timeout(60)]

STAGE1 = (
    PartitionChangeBuilder._elect_any_leader,
    PartitionChangeBuilder._try_election,
    PartitionChangeBuilder.trigger_leader_epoch_bump_if_needed,
    PartitionChangeBuilder.build,
)
STAGE2 = (
    BrokerHeartbeatManager.touch,
    BrokerHeartbeatManager._has_valid_session,
    BrokerHeartbeatManager.find_one_stale_broker,
    BrokerHeartbeatManager.calculate_next_broker_state,
)
STAGE3 = (
    ReplicationControlManager.maybe_fence_one_stale_broker,
    ReplicationControlManager.handle_broker_fenced,
    QuorumController._reschedule_maybe_fence_stale_brokers,
    BrokerHeartbeatManager.next_check_time_ns,
)

FENCED = BrokerControlState.FENCED
UNFENCED = BrokerControlState.UNFENCED
CONTROLLED_SHUTDOWN = BrokerControlState.CONTROLLED_SHUTDOWN
SHUTDOWN_NOW = BrokerControlState.SHUTDOWN_NOW

# -- stage 1: the election -------------------------------------------------------------------------------

TOPIC_ID = uuid.UUID("15bae675-c7e2-47e2-820d-8f244c85a6ae")


def partition(
    replicas, isr, leader, leader_epoch=10, partition_epoch=20, state=LeaderRecoveryState.RECOVERED
):
    return PartitionRegistration(
        replicas=tuple(replicas),
        isr=tuple(isr),
        removing_replicas=(),
        adding_replicas=(),
        leader=leader,
        leader_recovery_state=state,
        leader_epoch=leader_epoch,
        partition_epoch=partition_epoch,
    )


def may_lead(*brokers):
    """The builder's ``is_acceptable_leader``: only these brokers (registered, unfenced, not shutting
    down, in the controller's words) may lead."""
    return lambda replica: replica in brokers


def change(**fields) -> PartitionChangeRecord:
    """The record Kafka 3.3 writes: every field not given says "no change"."""
    return PartitionChangeRecord(topic_id=TOPIC_ID, partition_id=0, **fields)


def built(part, acceptable, target_isr=None, election=Election.ONLINE):
    builder = PartitionChangeBuilder(part, TOPIC_ID, 0, acceptable)
    if target_isr is not None:
        builder.set_target_isr(target_isr)
    builder.set_election(election)
    record = builder.build()
    return None if record is None else record.message


def explain(case: str, part, got, expected, rule: str) -> str:
    return (
        f"{case}\n  the partition: replicas {list(part.replicas)}, isr {list(part.isr)}, leader "
        f"{part.leader}, leader epoch {part.leader_epoch}\n  expected: {expected!r}\n  got:      {got!r}\n"
        f"  the rule: {rule}"
    )


def elected(part, acceptable, target_isr, election=Election.ONLINE):
    builder = PartitionChangeBuilder(part, TOPIC_ID, 0, acceptable).set_target_isr(target_isr)
    return builder.set_election(election).elect_leader()


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_the_new_leader_is_the_first_replica_in_replica_order_that_is_in_the_isr_and_may_lead():
    # Broker 2, the leader, is fenced: the ISR loses it and a new leader is chosen.
    part = partition(replicas=(2, 3, 1), isr=(1, 2, 3), leader=2)
    got = elected(part, may_lead(1, 3), target_isr=[1, 3])
    expected = ElectionResult(3, False)
    assert got == expected, explain(
        "elect_leader(): leader 2 fenced, target ISR [1, 3], brokers 1 and 3 may lead", part, got, expected,
        "the new leader is the first replica, in the partition's replica order (not the ISR's order), "
        "that is in the target ISR and may lead",
    )  # fmt: skip
    # Broker 3 is shutting down: it is in the ISR but may not lead; broker 5 may lead but is not in it.
    part = partition(replicas=(2, 5, 3, 1), isr=(2, 3, 1), leader=2)
    got = elected(part, may_lead(1, 5), target_isr=[3, 1])
    expected = ElectionResult(1, False)
    assert got == expected, explain(
        "elect_leader(): leader 2 fenced, target ISR [3, 1], broker 3 in it but shutting down, broker 5 "
        "alive but out of it", part, got, expected,
        "a clean election takes only a replica that is both in the target ISR and may lead: broker 5 "
        "has not copied every committed record, broker 3 may not lead",
    )  # fmt: skip


@pytest.mark.stage(1)
@pytest.mark.points(1)
def test_a_leader_that_may_still_lead_keeps_its_leadership():
    part = partition(replicas=(1, 2, 3), isr=(1, 2, 3), leader=2)
    got = elected(part, may_lead(1, 2, 3), target_isr=[1, 2, 3])
    expected = ElectionResult(2, False)
    assert got == expected, explain(
        "elect_leader(): every broker may lead, the ISR unchanged; the leader (2) is not the first replica",
        part, got, expected,
        "the current leader stays while it is in the target ISR and may lead: moving it to the first "
        "replica is the preferred election's job, not every change's",
    )  # fmt: skip


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_an_unclean_election_only_when_the_topic_allows_it():
    # The ISR's only member, broker 1, is fenced; brokers 2 and 3 are alive but behind.
    part = partition(replicas=(1, 2, 3), isr=(1,), leader=1)
    got = built(part, may_lead(2, 3), target_isr=[], election=Election.ONLINE)
    expected = change(leader=NO_LEADER)
    assert got == expected, explain(
        "the last ISR member fenced, unclean.leader.election.enable=false", part, got, expected,
        "with nobody in the ISR able to lead, a clean election finds no leader: NO_LEADER (-1), and the "
        "ISR is not emptied (its last member keeps its place, KIP-841)",
    )  # fmt: skip
    got = built(part, may_lead(2, 3), target_isr=[], election=Election.UNCLEAN)
    expected = change(leader=2, isr=[2], leader_recovery_state=int(LeaderRecoveryState.RECOVERING))
    assert got == expected, explain(
        "the last ISR member fenced, unclean.leader.election.enable=true", part, got, expected,
        "an unclean election takes the first replica, in replica order, that may lead; it becomes the "
        "whole ISR, and the partition is RECOVERING (1) until the new leader has settled its log",
    )  # fmt: skip
    part = partition(replicas=(1, 2, 3), isr=(1, 3), leader=1)
    got = built(part, may_lead(2, 3), target_isr=[3], election=Election.UNCLEAN)
    expected = change(leader=3, isr=[3])
    assert got == expected, explain(
        "leader 1 fenced, broker 3 in the ISR, unclean elections allowed", part, got, expected,
        "an unclean election is the last resort: while an ISR member may lead, it is a clean one "
        "(no RECOVERING state, no data lost)",
    )  # fmt: skip


@pytest.mark.stage(1)
@pytest.mark.points(1)
def test_no_leader_when_nobody_in_the_isr_may_lead():
    part = partition(replicas=(1, 2, 3), isr=(1, 2), leader=1)
    got = elected(part, may_lead(3), target_isr=[2])
    expected = ElectionResult(NO_LEADER, False)
    assert got == expected, explain(
        "elect_leader(): leader 1 fenced, broker 2 (the rest of the ISR) shutting down, broker 3 out of "
        "the ISR, unclean.leader.election.enable=false", part, got, expected,
        "no acceptable replica in the target ISR and no unclean election: the leader is NO_LEADER (-1), "
        "never a replica that is out of the ISR or may not lead",
    )  # fmt: skip
    got = elected(part, may_lead(3), target_isr=[2], election=Election.UNCLEAN)
    expected = ElectionResult(3, True)
    assert got == expected, explain(
        "elect_leader(): the same, with unclean.leader.election.enable=true", part, got, expected,
        "an unclean election, once nobody in the ISR may lead, takes the first replica in replica order "
        "that may lead, and says it was unclean",
    )  # fmt: skip


@pytest.mark.stage(1)
@pytest.mark.points(1)
def test_no_record_when_nothing_changes():
    part = partition(replicas=(1, 2, 3), isr=(1, 2), leader=1)
    got = built(part, may_lead(1, 2, 3), target_isr=[1, 2])
    assert got is None, explain(
        "the target ISR is the ISR, the leader may lead", part, got, None,
        "a change with every field at 'no change' is no record at all: build returns None",
    )  # fmt: skip
    part = partition(replicas=(1, 2, 3), isr=(3,), leader=NO_LEADER)
    got = built(part, may_lead(1, 2), target_isr=[3])
    assert got is None, explain(
        "a partition without a leader whose last ISR member (3) is still fenced", part, got, None,
        "no leader before and none after (broker 3 may not lead, and no unclean election), the ISR as "
        "it was: nothing to write",
    )  # fmt: skip


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_the_leader_epoch_is_bumped_when_the_isr_shrinks_not_when_it_grows():
    part = partition(replicas=(1, 2, 3), isr=(1, 2, 3), leader=1, leader_epoch=10, partition_epoch=20)
    builder = PartitionChangeBuilder(part, TOPIC_ID, 0, may_lead(1, 2)).set_target_isr([1, 2])
    got = change(isr=[1, 2])
    builder.trigger_leader_epoch_bump_if_needed(got)
    expected = change(leader=1, isr=[1, 2])
    assert got == expected, explain(
        "trigger_leader_epoch_bump_if_needed(a record with isr [1, 2]): broker 3 leaves the ISR, leader 1 "
        "stays", part, got, expected,
        "a replica leaving the ISR bumps the leader epoch, so that it is refused if it fetches with the "
        "old one; replayed, this record left the leader epoch where it was",
    )  # fmt: skip
    after = part.merge(got)
    assert (after.leader, after.leader_epoch, after.partition_epoch) == (1, 11, 21), after
    elected_now = change(leader=2, isr=[2])
    builder.trigger_leader_epoch_bump_if_needed(elected_now)
    assert elected_now == change(leader=2, isr=[2]), (
        f"a record that already elects a leader bumps the epoch by itself: the bump must leave it be; "
        f"got {elected_now!r}"
    )
    shrunk = partition(replicas=(1, 2, 3), isr=(1, 2), leader=1, leader_epoch=10, partition_epoch=20)
    builder = PartitionChangeBuilder(shrunk, TOPIC_ID, 0, may_lead(1, 2, 3)).set_target_isr([1, 2, 3])
    got = change(isr=[1, 2, 3])
    builder.trigger_leader_epoch_bump_if_needed(got)
    expected = change(isr=[1, 2, 3])
    assert got == expected, explain(
        "trigger_leader_epoch_bump_if_needed(a record with isr [1, 2, 3]): broker 3 rejoins the ISR, "
        "leader 1 stays", shrunk, got, expected,
        "an ISR that grows changes the partition epoch only: the leader field stays NO_LEADER_CHANGE "
        f"({NO_LEADER_CHANGE}), so followers are not fenced for nothing",
    )  # fmt: skip
    after = shrunk.merge(got)
    assert (after.leader, after.leader_epoch, after.partition_epoch) == (1, 10, 21), after


@pytest.mark.stage(1)
@pytest.mark.points(1)
def test_an_isr_or_replica_list_only_reordered_does_not_bump_the_leader_epoch():
    part = partition(replicas=(1, 2, 3), isr=(1, 2, 3), leader=1, leader_epoch=10, partition_epoch=20)

    def builder():
        return PartitionChangeBuilder(part, TOPIC_ID, 0, may_lead(1, 2, 3))

    cases = [
        ("set_target_isr([3, 1, 2])", builder().set_target_isr([3, 1, 2]), change(isr=[3, 1, 2])),
        ("set_target_replicas([3, 1, 2])", builder().set_target_replicas([3, 1, 2]), change(replicas=[3, 1, 2])),
    ]  # fmt: skip
    for setter, reordered, expected in cases:
        record = reordered.build()
        got = None if record is None else record.message
        epoch = None if got is None else part.merge(got).leader_epoch
        assert got == expected, explain(
            f"build() after {setter}: the same brokers in another order, leader 1 stays", part, got,
            expected,
            "nobody left, so there is nobody to fence: the record carries the new order, and replayed it "
            f"should leave the leader epoch at 10; this one leaves it at {epoch}, and a bumped epoch has "
            "the leader refuse every follower's fetch until that follower has replayed the change",
        )  # fmt: skip


@pytest.mark.stage(1)
@pytest.mark.points(1)
def test_an_empty_target_replica_list_is_never_written():
    part = partition(replicas=(1, 2, 3), isr=(1, 2, 3), leader=1)
    builder = PartitionChangeBuilder(part, TOPIC_ID, 0, may_lead(1, 2, 3)).set_target_replicas([])
    record = builder.build()
    got = None if record is None else record.message
    assert got is None or got.replicas is None, explain(
        "build() after set_target_replicas([]), the ISR unchanged", part, got,
        "a record whose replicas field is None (no change), or no record",
        "a partition's replicas are never emptied: replayed, a record with replicas [] leaves it no broker "
        "to hold its data and nobody ever again to elect",
    )  # fmt: skip


@pytest.mark.stage(1)
@pytest.mark.points(1)
def test_the_record_carries_every_target_that_changed():
    # An unclean leader (broker 1) has settled its log: the caller sets the recovery state back.
    part = partition(replicas=(1, 2, 3), isr=(1,), leader=1, state=LeaderRecoveryState.RECOVERING)
    builder = PartitionChangeBuilder(part, TOPIC_ID, 0, may_lead(1, 2, 3))
    record = builder.set_target_leader_recovery_state(LeaderRecoveryState.RECOVERED).build()
    got = None if record is None else record.message
    expected = change(leader_recovery_state=int(LeaderRecoveryState.RECOVERED))
    assert got == expected, explain(
        "build() after set_target_leader_recovery_state(RECOVERED), the partition RECOVERING, nothing "
        "else asked", part, got, expected,
        "the record carries every target that differs from the partition: replayed without the recovery "
        "state, the partition would stay RECOVERING, and no follower would be let back into its ISR",
    )  # fmt: skip

    def reassigning(replicas, isr, removing, adding):
        return PartitionRegistration(
            replicas=replicas, isr=isr, removing_replicas=removing, adding_replicas=adding, leader=1,
            leader_recovery_state=LeaderRecoveryState.RECOVERED, leader_epoch=10, partition_epoch=20,
        )  # fmt: skip

    cases = [
        ("a reassignment moving broker 4 out: replicas [1, 2, 3, 4], removing [4], ISR [1, 2, 3]",
         reassigning((1, 2, 3, 4), (1, 2, 3), (4,), ()),
         change(leader=1, replicas=[1, 2, 3], removing_replicas=[]),
         "once the replicas that stay are all in the ISR the reassignment completes: broker 4 leaves the "
         "replicas (a replica removed: the leader epoch goes up) and the removing list empties"),
        ("a reassignment moving broker 4 in: replicas [1, 2, 3, 4], adding [4], ISR [1, 2, 3, 4]",
         reassigning((1, 2, 3, 4), (1, 2, 3, 4), (), (4,)),
         change(adding_replicas=[]),
         "once the replica being added is in the ISR the reassignment completes: the adding list empties, "
         "and nobody is removed"),
    ]  # fmt: skip
    for case, part, expected, rule in cases:
        record = PartitionChangeBuilder(part, TOPIC_ID, 0, may_lead(1, 2, 3, 4)).build()
        got = None if record is None else record.message
        assert got == expected, explain(
            f"build(), nothing asked, {case}", part, got, expected,
            f"{rule}; replayed without that list, every controller and broker would go on thinking the "
            "reassignment still under way",
        )  # fmt: skip


# -- stage 2: the session and fencing ----------------------------------------------------------------------

SESSION_MS = 9000


def manager(time=None):
    return BrokerHeartbeatManager(time or MockTime(), session_timeout_ms=SESSION_MS)


def heartbeat(broker_id=1, offset=100, want_fence=False, want_shut_down=False):
    return {
        "broker_id": broker_id,
        "broker_epoch": 7,
        "current_metadata_offset": offset,
        "want_fence": want_fence,
        "want_shut_down": want_shut_down,
    }


def next_state(m, request, registration_offset=50, leads=False):
    states = m.calculate_next_broker_state(request["broker_id"], request, registration_offset, lambda: leads)
    return states.current, states.next


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_a_session_lasts_the_session_timeout_after_the_last_touch():
    time = MockTime()
    m = manager(time)
    m.touch(1, False, 40)
    assert m.brokers[1].metadata_offset == 40, "touch records the metadata offset the heartbeat reported"
    assert m.has_valid_session(1), "an unfenced broker touched just now has a valid session"
    time.sleep(SESSION_MS)
    assert m.has_valid_session(1), (
        f"{SESSION_MS} ms after its last heartbeat, exactly broker.session.timeout.ms, the session is "
        "still valid: a session lasts up to and including the timeout"
    )
    time.sleep(1)
    assert not m.has_valid_session(1), (
        f"{SESSION_MS + 1} ms after its last heartbeat the session has expired: the broker is stale"
    )
    m.touch(1, False, 41)
    assert m.has_valid_session(1), "a heartbeat after the expiry starts a new session: contact is now"
    m.touch(2, True, 41)
    assert not m.has_valid_session(2), (
        "a fenced broker has no session to keep, however recent its heartbeat: only unfenced brokers "
        "are in the unfenced list"
    )


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_the_stale_broker_is_the_one_heard_from_longest_ago():
    time = MockTime()
    m = manager(time)
    for broker_id in (1, 2, 3):
        m.touch(broker_id, False, 10)
        time.sleep(1000)
    m.touch(1, False, 11)  # broker 1 heartbeats again at 3 s: now broker 2 is the oldest contact
    assert m.find_one_stale_broker() is None, "nobody's session has expired yet (the oldest is 2 s old)"
    time.sleep(SESSION_MS - 1000)  # 11 s: broker 2 last heard at 1 s (10 s ago), broker 3 at 2 s (9 s ago)
    found = m.find_one_stale_broker()
    assert found == 2, (
        f"at 11 s, broker 2 (last heartbeat at 1 s) is stale; broker 1 heartbeat again at 3 s and broker "
        f"3 at 2 s is exactly at its timeout: find_one_stale_broker should be 2, got {found} (the broker "
        "heard from longest ago)"
    )
    m.fence(2)
    assert m.find_one_stale_broker() is None, (
        "broker 3's session is valid up to and including 9 s after its heartbeat; broker 2 is fenced"
    )
    time.sleep(1)
    assert m.find_one_stale_broker() == 3, "at 11.001 s broker 3's session has expired too"
    m.touch(3, True, 12)
    assert m.find_one_stale_broker() is None, "a fenced broker is never stale: it has no session"


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_a_fenced_broker_is_unfenced_once_it_has_caught_up_with_its_registration():
    m = manager()
    m.touch(1, True, 10)
    cases = [
        (heartbeat(offset=49), FENCED, "it has not replayed its own registration record (offset 50) yet"),
        (heartbeat(offset=50), UNFENCED, "it has caught up with its registration record's offset"),
        (heartbeat(offset=60, want_fence=True), FENCED, "it asks to stay fenced (it is still starting)"),
        (heartbeat(offset=60, want_shut_down=True), SHUTDOWN_NOW, "a fenced broker that wants to shut down "
         "leads nothing and serves nobody: it may go at once"),
    ]  # fmt: skip
    for request, expected, why in cases:
        got = next_state(m, request)
        assert got == (FENCED, expected), (
            f"a FENCED broker, registration at offset 50, heartbeat {request}: expected FENCED -> "
            f"{expected.name} ({why}); got {got[0].name} -> {got[1].name}"
        )


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_an_unfenced_broker_is_fenced_or_shut_down_as_it_asks():
    m = manager()
    m.touch(1, False, 60)
    cases = [
        (heartbeat(offset=60), False, UNFENCED, "an ordinary heartbeat"),
        (heartbeat(offset=60, want_fence=True), False, FENCED, "it asks to be fenced"),
        (heartbeat(offset=60, want_fence=True, want_shut_down=True), True, SHUTDOWN_NOW,
         "it asks to be fenced and to shut down"),
        (heartbeat(offset=60, want_shut_down=True), True, CONTROLLED_SHUTDOWN,
         "it wants to shut down and still leads partitions: they move away first"),
        (heartbeat(offset=60, want_shut_down=True), False, SHUTDOWN_NOW,
         "it wants to shut down and leads nothing"),
    ]  # fmt: skip
    for request, leads, expected, why in cases:
        got = next_state(m, request, leads=leads)
        assert got == (UNFENCED, expected), (
            f"an UNFENCED broker ({'leading partitions' if leads else 'leading nothing'}), heartbeat "
            f"{request}: expected UNFENCED -> {expected.name} ({why}); got {got[0].name} -> {got[1].name}"
        )


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_a_controlled_shutdown_waits_until_the_broker_leads_nothing_and_the_others_have_seen_it():
    m = manager()
    for broker_id in (1, 2, 3):
        m.touch(broker_id, False, 90)
    m.update_controlled_shutdown_offset(1, 100)  # the records moving broker 1's leaderships end at 100
    request = heartbeat(offset=100, want_shut_down=True)
    got = next_state(m, request, leads=True)
    assert got == (CONTROLLED_SHUTDOWN, CONTROLLED_SHUTDOWN), (
        f"broker 1 in controlled shutdown still leads partitions: it stays in CONTROLLED_SHUTDOWN; got "
        f"{got[0].name} -> {got[1].name}"
    )
    got = next_state(m, request, leads=False)
    assert got == (CONTROLLED_SHUTDOWN, CONTROLLED_SHUTDOWN), (
        "broker 1 leads nothing now, but brokers 2 and 3 have reported only offset 90, below its "
        "controlled-shutdown offset 100: they have not seen the records that moved its leaderships, and "
        f"would still send clients to it. It stays; got {got[0].name} -> {got[1].name}"
    )
    m.touch(2, False, 100)
    m.touch(3, False, 101)
    got = next_state(m, request, leads=True)
    assert got == (CONTROLLED_SHUTDOWN, CONTROLLED_SHUTDOWN), (
        "every active broker has reached broker 1's controlled-shutdown offset, but broker 1 still leads "
        "partitions (a leadership that could not move yet): it stays in CONTROLLED_SHUTDOWN; got "
        f"{got[0].name} -> {got[1].name}"
    )
    got = next_state(m, request, leads=False)
    assert got == (CONTROLLED_SHUTDOWN, SHUTDOWN_NOW), (
        "broker 1 leads nothing and every active broker has reached offset 100, its controlled-shutdown "
        f"offset: SHUTDOWN_NOW; got {got[0].name} -> {got[1].name}"
    )


@pytest.mark.stage(2)
@pytest.mark.points(1)
def test_a_controlled_shutdown_with_no_active_broker_left_is_held_back_by_nobody():
    cases = []
    m = manager()
    m.touch(1, False, 90)
    m.update_controlled_shutdown_offset(1, 100)
    cases.append(("broker 1 is the only broker", m))
    m = manager()
    for broker_id in (1, 2, 3):
        m.touch(broker_id, False, 90)
    m.update_controlled_shutdown_offset(1, 100)
    m.update_controlled_shutdown_offset(2, 100)
    m.fence(3)
    cases.append(("broker 2 is in controlled shutdown too, broker 3 fenced, each last at offset 90", m))
    request = heartbeat(offset=100, want_shut_down=True)
    for case, m in cases:
        got = next_state(m, request, leads=False)
        assert got == (CONTROLLED_SHUTDOWN, SHUTDOWN_NOW), (
            f"broker 1 in controlled shutdown (offset 100) leads nothing; {case}, so no broker is active: "
            "nobody is left who could send clients to it on older metadata, and nothing holds it back. "
            f"Expected CONTROLLED_SHUTDOWN -> SHUTDOWN_NOW; got {got[0].name} -> {got[1].name}"
        )


@pytest.mark.stage(2)
@pytest.mark.points(1)
def test_a_broker_touched_as_fenced_is_no_longer_in_controlled_shutdown():
    m = manager()
    for broker_id in (1, 2, 3):
        m.touch(broker_id, False, 90)
    m.update_controlled_shutdown_offset(1, 100)  # broker 1 in controlled shutdown, brokers 2 and 3 at 90
    m.touch(1, True, 100)  # then a contact leaves it fenced (the heartbeat that let it go, say)
    cases = [
        (heartbeat(offset=100, want_shut_down=True), SHUTDOWN_NOW,
         "fenced, it leads nothing and is in no ISR: asking to shut down, it may go at once"),
        (heartbeat(offset=100), UNFENCED,
         "caught up with its registration (offset 50) and not asking to stay fenced, it is unfenced"),
    ]  # fmt: skip
    for request, expected, why in cases:
        got = next_state(m, request)
        assert got == (FENCED, expected), (
            f"broker 1 was in controlled shutdown (offset 100, brokers 2 and 3 still at 90), then touched as "
            f"fenced; heartbeat {request}: expected FENCED -> {expected.name} ({why}); got {got[0].name} -> "
            f"{got[1].name}"
        )


@pytest.mark.stage(2)
@pytest.mark.points(1)
def test_a_broker_the_manager_has_no_state_for_is_answered_as_a_fenced_one():
    m = manager()
    m.touch(1, False, 60)
    cases = [
        (heartbeat(broker_id=4, offset=49), FENCED, "it has not replayed its registration record (offset 50)"),
        (heartbeat(broker_id=4, offset=50), UNFENCED, "it has caught up with its registration record"),
        (heartbeat(broker_id=4, offset=60, want_shut_down=True), SHUTDOWN_NOW,
         "a fenced broker that wants to shut down may go at once"),
    ]  # fmt: skip
    for request, expected, why in cases:
        try:
            got = next_state(m, request)
        except NotImplementedError:
            raise
        except Exception as exc:
            pytest.fail(
                f"broker 4, never touched by this manager (only broker 1 was), heartbeat {request}: "
                f"calculate_next_broker_state raised {exc!r}; the controller would answer the heartbeat "
                f"with an error. Expected FENCED -> {expected.name} ({why})"
            )
        assert got == (FENCED, expected), (
            f"broker 4, never touched by this manager (only broker 1 was), heartbeat {request}: expected "
            f"FENCED -> {expected.name} ({why}); got {got[0].name} -> {got[1].name}"
        )


# -- stage 3: the controller at work ---------------------------------------------------------------------

BROKERS = (1, 2, 3)
# Partition -> replicas: every broker leads one partition and broker 1 two (partitions 0 and 3).
ASSIGNMENT = {0: [1, 2, 3], 1: [2, 3, 1], 2: [3, 1, 2], 3: [1, 3, 2]}
HEARTBEAT_MS = 1500
# Fencing checks scheduled for a time already come, at one instant of the clock, beyond which the
# controller is taken to be rescheduling its check forever: two stale brokers make two, a hundred
# would be a hundred brokers' sessions ending at once.
CHECKS_DUE_AT_ONCE = 100


def registration(broker_id):
    return {
        "broker_id": broker_id,
        "cluster_id": CLUSTER_ID,
        "incarnation_id": uuid.UUID(int=broker_id + 1),
        "listeners": [
            {"name": "PLAINTEXT", "host": "localhost", "port": 9092 + broker_id, "security_protocol": 0}
        ],
        "features": [{"name": "metadata.version", "min_supported_version": 1, "max_supported_version": 7}],
        "rack": None,
    }


def topic_request(name, assignment):
    return {
        "topic": name, "num_partitions": -1, "replication_factor": -1, "config_entries": [],
        "replica_assignment": [{"partition_id": p, "replicas": r} for p, r in assignment.items()],
    }  # fmt: skip


def heartbeat_request(broker_id, epoch, offset, want_fence=False, want_shut_down=False):
    return {
        "broker_id": broker_id,
        "broker_epoch": epoch,
        "current_metadata_offset": offset,
        "want_fence": want_fence,
        "want_shut_down": want_shut_down,
    }


def show_records(records) -> str:
    return "\n".join(f"    {n}: {r!r}" for n, r in enumerate(records)) or "    (no records)"


class Managers:
    """One active controller's managers without the controller, its queue or its log: brokers 1, 2
    and 3 registered and unfenced at time 0 (heartbeats at time 0, in that order), topic foo created
    with ASSIGNMENT. Registrations, heartbeats and the topic have their records replayed at once, as
    the controller replays an event's; what ``maybe_fence_one_stale_broker`` returns is replayed only
    when the test calls ``replay``."""

    def __init__(self):
        written(*STAGE3, *STAGE1, *STAGE2)
        self.time = MockTime()
        registry = SnapshotRegistry()
        self.features = FeatureControlManager(registry)
        self.configs = ConfigurationControlManager(registry)
        self.cluster_control = ClusterControlManager(
            self.time, registry, SESSION_MS, StripedReplicaPlacer(random.Random(0)), self.features, CLUSTER_ID
        )
        self.cluster_control.activate()
        self.replication_control = ReplicationControlManager(
            registry, 3, 1, self.configs, self.cluster_control
        )
        self.offset = 0  # the next record's offset
        self.epochs = {}
        for broker_id in BROKERS:
            result = self.cluster_control.register_broker(
                registration(broker_id), self.offset, self.features.finalized_features()
            )
            self.replay(result.records)
            self.epochs[broker_id] = result.response.epoch
        for broker_id in BROKERS:
            assert not self.heartbeat(broker_id).is_fenced, f"broker {broker_id} caught up: unfenced"
        created = self.replication_control.create_topics(
            {
                "create_topic_requests": [topic_request("foo", ASSIGNMENT)],
                "timeout": 30_000,
                "validate_only": False,
            }
        )
        self.replay(created.records)
        self.foo = self.replication_control.get_topic_id("foo")

    def replay(self, records) -> None:
        for record in records:
            message = getattr(record, "message", record)  # an ApiMessageAndVersion, or its record
            if isinstance(message, RegisterBrokerRecord):
                self.cluster_control.replay(message, self.offset)
            elif isinstance(message, FenceBrokerRecord | UnfenceBrokerRecord):
                self.cluster_control.replay(message)
            elif isinstance(message, TopicRecord | PartitionRecord | PartitionChangeRecord):
                self.replication_control.replay(message)
            elif isinstance(message, ConfigRecord):
                self.configs.replay(message)
            else:
                raise AssertionError(f"a record these tests do not expect: {message!r}")
            self.offset += 1

    def heartbeat(self, broker_id):
        request = heartbeat_request(broker_id, self.epochs[broker_id], self.offset - 1)
        result = self.replication_control.process_broker_heartbeat(request)
        self.replay(result.records)
        return result.response

    def advance(self, ms, beating=()):
        """Let ``ms`` pass, the brokers in ``beating`` heartbeating every HEARTBEAT_MS."""
        while ms > 0:
            step = min(ms, HEARTBEAT_MS)
            self.time.sleep(step)
            ms -= step
            if ms > 0 or step == HEARTBEAT_MS:
                for broker_id in beating:
                    self.heartbeat(broker_id)

    def check(self):
        """One fencing check, as the controller's event runs it: its records, not yet replayed."""
        return [r.message for r in self.replication_control.maybe_fence_one_stale_broker().records]

    def partitions(self):
        return {p: self.replication_control.get_partition(self.foo, p) for p in ASSIGNMENT}


def fenced_ids(records):
    return [r.id for r in records if isinstance(r, FenceBrokerRecord)]


class Cluster:
    """Three controllers over one log, three brokers registered and unfenced, topic foo created with
    ASSIGNMENT (and, if asked, a topic bar of one replica on broker 1)."""

    def __init__(self, with_bar=False):
        written(*STAGE3, *STAGE1, *STAGE2)
        self.env = QuorumControllerTestEnv(num_controllers=3, session_timeout_ms=SESSION_MS)
        self.looping = None  # (clock ns, the deadline asked) once the check was due at once too often
        self.due_at_once: dict[int, int] = {}
        for controller in self.env.controllers.values():
            self._count_checks_due_at_once(controller)
        self.start_ms = self.env.time.milliseconds()
        self.active = self.env.elect(0)
        self.epochs = {}
        for broker_id in BROKERS:
            future = self.active.register_broker(registration(broker_id))
            self.poll()
            self.epochs[broker_id] = future.result(timeout=0).epoch
        for broker_id in BROKERS:
            reply = self.heartbeat(broker_id)
            assert not reply.is_fenced, f"broker {broker_id} caught up with its registration: {reply}"
        topics = [topic_request("foo", ASSIGNMENT)] + ([topic_request("bar", {0: [1]})] if with_bar else [])
        created = self.active.create_topics(
            {"create_topic_requests": topics, "timeout": 30_000, "validate_only": False}
        )
        self.poll()
        errors = [t["error_code"] for t in created.result(timeout=0)["topic_errors"]]
        assert errors == [0] * len(topics), f"CreateTopics failed: {created.result(timeout=0)}"
        self.mark = self.end()
        self.start_ms = self.env.time.milliseconds()  # the scenarios' time 0

    def _count_checks_due_at_once(self, controller):
        """Count the deferred events the controller schedules for a time already come; past
        CHECKS_DUE_AT_ONCE at one instant, schedule no more and say so at the next ``poll``: an event
        that reschedules itself for a time already come would otherwise run forever, the MockTime
        never moving."""
        schedule = controller._schedule_deferred_write_event

        def counted(name, deadline_ns, op):
            now = self.env.time.nanoseconds()
            if deadline_ns <= now:
                self.due_at_once[now] = self.due_at_once.get(now, 0) + 1
                if self.due_at_once[now] > CHECKS_DUE_AT_ONCE:
                    self.looping = self.looping or (now, deadline_ns)
                    return
            schedule(name, deadline_ns, op)

        controller._schedule_deferred_write_event = counted

    def poll(self):
        self.env.poll()
        if self.looping:
            now, deadline = self.looping
            ms = self.env.time.milliseconds() - self.start_ms
            raise AssertionError(
                f"at {ms} ms (clock {now} ns) the controller had scheduled its fencing check "
                f"{CHECKS_DUE_AT_ONCE} times for a time already come, the clock standing still: each "
                f"check scheduled the next for a time no later than the one it ran at (the last asked "
                f"for {deadline} ns), so it would run forever without the clock moving. "
                f"next_check_time_ns() is now {self.active.cluster_control.heartbeat_manager().next_check_time_ns()} "
                f"ns. The records since the set-up:\n{self.timeline(self.mark if hasattr(self, 'mark') else 0)}"
            )

    def heartbeat(self, broker_id, want_shut_down=False, offset=None, want_fence=False):
        offset = self.active.last_committed_offset() if offset is None else offset
        request = heartbeat_request(broker_id, self.epochs[broker_id], offset, want_fence, want_shut_down)
        future = self.active.process_broker_heartbeat(request)
        self.poll()
        return future.result(timeout=0)

    def advance(self, ms, beating=()):
        """Let ``ms`` pass, the brokers in ``beating`` heartbeating every HEARTBEAT_MS."""
        while ms > 0:
            step = min(ms, HEARTBEAT_MS)
            self.env.time.sleep(step)
            self.poll()
            ms -= step
            if ms > 0 or step == HEARTBEAT_MS:
                for broker_id in beating:
                    self.heartbeat(broker_id)

    def end(self):
        return self.env.shared.end_offset

    def records(self, since=0, with_time=False):
        """(offset, record) of every record in the log from offset ``since`` (with ``with_time``,
        (offset, ms since the set-up, record))."""
        return [
            (batch.base_offset + i, batch.append_timestamp - self.start_ms, r.message)
            if with_time
            else (batch.base_offset + i, r.message)
            for batch in self.env.shared.batches
            for i, r in enumerate(batch.records)
            if batch.base_offset + i >= since
        ]

    def batches(self, since=0):
        """(base offset, ms since the set-up, records) of every batch from offset ``since``: one
        batch is one event's records."""
        return [
            (batch.base_offset, batch.append_timestamp - self.start_ms, [r.message for r in batch.records])
            for batch in self.env.shared.batches
            if batch.base_offset >= since
        ]

    def timeline(self, since=0):
        lines = []
        for base, ms, records in self.batches(since):
            shown = [r for r in records if not isinstance(r, RegisterBrokerRecord | PartitionRecord)]
            if shown:  # the set-up's, the same in every run, are left out
                lines.append(f"    batch at offset {base}, written at {ms} ms:")
                lines += [f"      offset {base + i:>3}: {r!r}" for i, r in enumerate(records) if r in shown]
        return "\n".join(lines) or "    (nothing)"

    def partitions(self, topic="foo"):
        return topic_partitions([r for _, r in self.records()], topic)

    def fences(self, broker_id, since=0):
        return [o for o, r in self.records(since) if isinstance(r, FenceBrokerRecord) and r.id == broker_id]


def topic_partitions(records, topic: str) -> dict[int, PartitionRegistration]:
    """Each partition of ``topic`` as ``records`` (in log order) make it: its PartitionRecord, merged
    with every PartitionChangeRecord after it."""
    topic_id = next(r.topic_id for r in records if isinstance(r, TopicRecord) and r.name == topic)
    parts = {}
    for record in records:
        if isinstance(record, PartitionRecord) and record.topic_id == topic_id:
            parts[record.partition_id] = PartitionRegistration.from_record(record)
        elif isinstance(record, PartitionChangeRecord) and record.topic_id == topic_id:
            parts[record.partition_id] = parts[record.partition_id].merge(record)
    return parts


def show(parts):
    return "\n".join(
        f"    partition {p}: replicas {list(part.replicas)}, isr {list(part.isr)}, leader {part.leader}, "
        f"leader epoch {part.leader_epoch}"
        for p, part in sorted(parts.items())
    )


# The partitions of foo once broker 1 is fenced with 2 and 3 alive: out of every ISR, its two
# leaderships (partitions 0 and 3) moved to the first replica in replica order left in the ISR.
WITHOUT_BROKER_1 = {0: (2, (2, 3)), 1: (2, (2, 3)), 2: (3, (3, 2)), 3: (3, (3, 2))}


@pytest.mark.stage(3)
@pytest.mark.points(2)
def test_a_fence_takes_the_broker_out_of_every_isr_and_leadership_before_its_fence_record():
    m = Managers()
    m.advance(SESSION_MS + 1, beating=(2, 3))
    before = m.partitions()
    records = m.check()
    case = (
        f"one controller's managers: brokers 1, 2, 3 heartbeat at 0 ms, then only 2 and 3, every "
        f"{HEARTBEAT_MS} ms; at {SESSION_MS + 1} ms (broker.session.timeout.ms={SESSION_MS}) "
        f"maybe_fence_one_stale_broker() returned these records:\n{show_records(records)}"
    )
    epoch = m.epochs[1]
    assert fenced_ids(records) == [1] and FenceBrokerRecord(id=1, epoch=epoch) in records, (
        f"{case}\n  broker 1's session is over: expected one FenceBrokerRecord, for broker 1 with its "
        f"registration's epoch {epoch}"
    )
    changes = [r for r in records if isinstance(r, PartitionChangeRecord)]
    assert len(changes) + 1 == len(records) and records[-1] == FenceBrokerRecord(id=1, epoch=epoch), (
        f"{case}\n  the FenceBrokerRecord is record {records.index(FenceBrokerRecord(id=1, epoch=epoch))} "
        f"of {len(records)}: a broker replaying them in order would see broker 1 fenced while partitions "
        "whose changes come after it still name it leader or in their ISR"
    )
    from_records = dict(before)
    for change in changes:
        from_records[change.partition_id] = from_records[change.partition_id].merge(change)
    got = {p: (part.leader, part.isr) for p, part in from_records.items()}
    assert got == WITHOUT_BROKER_1 and all(
        from_records[p].leader_epoch == before[p].leader_epoch + 1 for p in before
    ), (
        f"{case}\n  every partition of foo holds broker 1 in its ISR: each needs a change taking it out, "
        "and the two it leads (0 and 3) a new leader, the first replica in replica order left in the "
        "ISR; each leader epoch bumped once.\n  expected (leader, isr): "
        f"{WITHOUT_BROKER_1}\n  the partitions before:\n{show(before)}\n  as the records make them:\n"
        f"{show(from_records)}"
    )


@pytest.mark.stage(3)
@pytest.mark.points(1)
def test_a_broker_is_not_fenced_before_the_last_valid_instant_of_its_session():
    m = Managers()
    m.advance(SESSION_MS, beating=(2, 3))
    records = m.check()
    heartbeats = m.cluster_control.heartbeat_manager()
    assert records == [] and heartbeats.is_broker_unfenced(1), (
        f"one controller's managers: brokers 1, 2, 3 heartbeat at 0 ms, then only 2 and 3; at "
        f"{SESSION_MS} ms, the last instant broker 1's session is valid (broker.session.timeout.ms="
        f"{SESSION_MS}), maybe_fence_one_stale_broker() returned:\n{show_records(records)}\n  and the "
        f"heartbeat manager holds broker 1 {'unfenced' if heartbeats.is_broker_unfenced(1) else 'fenced'}; "
        "expected no records and broker 1 still unfenced"
    )
    m.time.sleep(1)
    records = m.check()
    assert fenced_ids(records) == [1], (
        f"one controller's managers: brokers 1, 2, 3 heartbeat at 0 ms, then only 2 and 3; at "
        f"{SESSION_MS + 1} ms broker 1's session is over, and only broker 1's: maybe_fence_one_stale_broker() "
        f"should fence it, and returned:\n{show_records(records)}"
    )


@pytest.mark.stage(3)
@pytest.mark.points(2)
def test_two_stale_brokers_are_fenced_one_per_check_each_from_the_partitions_the_last_left():
    m = Managers()
    m.advance(1000)
    m.heartbeat(2)
    m.advance(SESSION_MS + 1, beating=(3,))  # broker 1's session over at 9000 ms, broker 2's at 10000
    case = (
        "one controller's managers: brokers 1, 2, 3 heartbeat at 0 ms, broker 2 once more at 1000 ms, "
        f"broker 3 every {HEARTBEAT_MS} ms after; at {SESSION_MS + 1001} ms both broker 1's and broker "
        "2's sessions are over"
    )
    first = m.check()
    assert fenced_ids(first) == [1], (
        f"{case}. The first check should fence broker 1 alone (heard from longest ago), and returned:\n"
        f"{show_records(first)}\n  records for two brokers built in one check come from the same "
        "partitions, none of them replayed: the second broker's changes still see the first in the "
        "ISRs and as a leader, and replaying them would put it back"
    )
    m.replay(first)
    second = m.check()
    m.replay(second)
    parts = m.partitions()
    got = {p: (part.leader, part.isr) for p, part in parts.items()}
    expected = {p: (3, (3,)) for p in ASSIGNMENT}
    assert fenced_ids(second) == [2] and got == expected, (
        f"{case}. The first check's records replayed, the second check should fence broker 2, from "
        "the partitions as the first left them, leaving broker 3 the leader of every partition, alone "
        f"in its ISR.\n  the first check's records:\n{show_records(first)}\n  the second's:\n"
        f"{show_records(second)}\n  the partitions once both are replayed:\n{show(parts)}"
    )
    third = m.check()
    assert third == [], (
        f"{case}. Both fenced, a third check has nobody to fence; it returned:\n{show_records(third)}"
    )


@pytest.mark.stage(3)
@pytest.mark.points(3)
def test_a_broker_that_stops_heartbeating_is_fenced_after_the_session_timeout():
    cluster = Cluster()
    before = cluster.partitions()
    scenario = (
        f"scenario: brokers 1, 2, 3 heartbeat at time 0; then only 2 and 3 do, every {HEARTBEAT_MS} ms; "
        f"broker.session.timeout.ms={SESSION_MS}"
    )
    cluster.advance(SESSION_MS, beating=(2, 3))
    assert not cluster.fences(1), (
        f"{scenario}\n  at {SESSION_MS} ms broker 1's session is still valid (it expires once the "
        f"timeout has passed), but the controller fenced it:\n{cluster.timeline(cluster.mark)}"
    )
    cluster.advance(1, beating=(2, 3))
    assert cluster.fences(1) and not cluster.fences(2) and not cluster.fences(3), (
        f"{scenario}\n  at {SESSION_MS + 1} ms broker 1's session has expired and only broker 1's: the "
        "controller should have fenced it by then, writing a FenceBrokerRecord. The records since the "
        f"set-up:\n{cluster.timeline(cluster.mark)}"
    )
    after = cluster.partitions()
    expected = WITHOUT_BROKER_1
    got = {p: (part.leader, part.isr) for p, part in after.items()}
    assert got == expected and all(after[p].leader_epoch == before[p].leader_epoch + 1 for p in after), (
        f"{scenario}\n  after the fencing, each partition of foo (replicas as assigned) should have "
        "broker 1 out of its ISR, a leader that is the first replica in replica order still in the ISR "
        "(partitions 0 and 3 lose leader 1; 1 and 2 keep theirs), and its leader epoch bumped once "
        f"(a new leader, or the ISR shrunk).\n  expected (leader, isr): {expected}\n  the partitions "
        f"before:\n{show(before)}\n  after:\n{show(after)}\n  the records since the set-up:\n"
        f"{cluster.timeline(cluster.mark)}"
    )
    for node, controller in cluster.env.controllers.items():
        assert not controller.cluster_control.unfenced(1), f"controller {node} replayed the fencing"


@pytest.mark.stage(3)
@pytest.mark.points(2)
def test_brokers_that_stop_one_after_the_other_are_fenced_each_at_its_own_timeout():
    cluster = Cluster()
    scenario = (
        f"scenario: broker 1 stops heartbeating at time 0, broker 2 at {2 * HEARTBEAT_MS} ms, broker 3 "
        f"goes on every {HEARTBEAT_MS} ms; broker.session.timeout.ms={SESSION_MS}"
    )
    cluster.advance(2 * HEARTBEAT_MS, beating=(2, 3))
    fence1 = cluster.end()
    cluster.advance(SESSION_MS - 2 * HEARTBEAT_MS + 1, beating=(3,))
    assert cluster.fences(1, cluster.mark) and not cluster.fences(2, cluster.mark), (
        f"{scenario}\n  at {SESSION_MS + 1} ms broker 1 should be fenced and broker 2 not yet.\n  the "
        f"records since the set-up:\n{cluster.timeline(cluster.mark)}"
    )
    cluster.advance(2 * HEARTBEAT_MS - 1, beating=(3,))
    assert cluster.fences(2, fence1) == [], (
        f"{scenario}\n  at {SESSION_MS + 2 * HEARTBEAT_MS} ms broker 2's session is still valid:\n"
        f"{cluster.timeline(cluster.mark)}"
    )
    cluster.advance(1, beating=(3,))
    assert cluster.fences(2, fence1) and not cluster.fences(3), (
        f"{scenario}\n  at {SESSION_MS + 2 * HEARTBEAT_MS + 1} ms broker 2's session has expired, and "
        f"the controller should have fenced it by then.\n  the records since the set-up:\n"
        f"{cluster.timeline(cluster.mark)}"
    )
    parts = cluster.partitions()
    assert all(part.leader == 3 and part.isr == (3,) for part in parts.values()), (
        f"{scenario}\n  only broker 3 is left: it leads every partition, alone in its ISR:\n{show(parts)}"
    )


@pytest.mark.stage(3)
@pytest.mark.points(2)
def test_brokers_whose_sessions_end_together_are_fenced_by_one_event_each():
    cluster = Cluster()
    scenario = (
        f"scenario: brokers 1 and 2 stop heartbeating at time 0, broker 3 goes on every {HEARTBEAT_MS} "
        f"ms; broker.session.timeout.ms={SESSION_MS}"
    )
    cluster.advance(SESSION_MS, beating=(3,))
    assert not cluster.fences(1) and not cluster.fences(2), (
        f"{scenario}\n  at {SESSION_MS} ms both sessions are still valid, but the controller fenced:\n"
        f"{cluster.timeline(cluster.mark)}"
    )
    cluster.advance(1, beating=(3,))
    fencing = [(base, fenced_ids(records), records) for base, _, records in cluster.batches(cluster.mark)]
    fencing = [(base, ids, records) for base, ids, records in fencing if ids]
    assert [ids for _, ids, _ in fencing] == [[1], [2]], (
        f"{scenario}\n  at {SESSION_MS + 1} ms both sessions are over: expected broker 1 fenced by one "
        "event (one batch), then broker 2 by the next, each batch's records built once the one before "
        f"was replayed; the batches that fence, by the brokers they fence: "
        f"{[ids for _, ids, _ in fencing]}.\n  the records since the set-up:\n"
        f"{cluster.timeline(cluster.mark)}"
    )
    last = [base for base, _, records in fencing if not isinstance(records[-1], FenceBrokerRecord)]
    assert not last, (
        f"{scenario}\n  the batch at offset {last[0]} has partition changes after its FenceBrokerRecord: "
        "a broker replaying it would see the broker fenced while those partitions still name it.\n  "
        f"the records since the set-up:\n{cluster.timeline(cluster.mark)}"
    )
    parts = cluster.partitions()
    assert all((part.leader, part.isr) == (3, (3,)) for part in parts.values()), (
        f"{scenario}\n  with brokers 1 and 2 fenced, broker 3 should lead every partition, alone in its "
        f"ISR:\n{show(parts)}\n  the records since the set-up:\n{cluster.timeline(cluster.mark)}"
    )


@pytest.mark.stage(3)
@pytest.mark.points(2)
def test_a_partition_whose_last_isr_member_is_fenced_waits_for_it_to_come_back():
    cluster = Cluster(with_bar=True)
    scenario = (
        "scenario: topic bar has one replica, on broker 1; broker 1 stops heartbeating, then comes back"
    )
    cluster.advance(SESSION_MS + 1, beating=(2, 3))
    bar = cluster.partitions("bar")[0]
    assert cluster.fences(1) and (bar.leader, bar.isr) == (NO_LEADER, (1,)), (
        f"{scenario}\n  once broker 1 is fenced, bar-0 has no leader (-1) and keeps broker 1 in its ISR "
        f"(the ISR is never emptied: it is the last replica known to hold every committed record); "
        f"got leader {bar.leader}, isr {list(bar.isr)}, FenceBrokerRecords for broker 1 at offsets "
        f"{cluster.fences(1)}.\n  the records since the set-up:\n"
        f"{cluster.timeline(cluster.mark)}"
    )
    back = cluster.end()
    reply = cluster.heartbeat(1)
    bar = cluster.partitions("bar")[0]
    assert not reply.is_fenced and (bar.leader, bar.isr) == (1, (1,)), (
        f"{scenario}\n  broker 1 heartbeats again, caught up: it is unfenced and elected leader of bar-0 "
        f"again; got reply {reply}, leader {bar.leader}, isr {list(bar.isr)}.\n  the records since it "
        f"came back:\n{cluster.timeline(back)}"
    )
    assert any(isinstance(r, UnfenceBrokerRecord) for _, r in cluster.records(back))


@pytest.mark.stage(3)
@pytest.mark.points(3)
def test_a_controlled_shutdown_moves_the_leaders_away_before_the_broker_may_go():
    cluster = Cluster()
    scenario = "scenario: broker 1, leader of foo-0 and foo-3, asks to shut down"
    reply = cluster.heartbeat(1, want_shut_down=True)
    parts = cluster.partitions()
    assert reply.in_controlled_shutdown and not reply.should_shut_down and not reply.is_fenced, (
        f"{scenario}\n  broker 1 leads partitions: it enters controlled shutdown (in_controlled_shutdown, "
        f"not should_shut_down, not fenced: it still serves while its leaders move); got {reply}"
    )
    expected = WITHOUT_BROKER_1
    got = {p: (part.leader, part.isr) for p, part in parts.items()}
    assert got == expected and not cluster.fences(1), (
        f"{scenario}\n  entering controlled shutdown moves broker 1's leaderships to the first replica "
        "in replica order left in each ISR and takes it out of the ISRs, without fencing it.\n  "
        f"expected (leader, isr): {expected}\n  the partitions:\n{show(parts)}\n  the records since the "
        f"set-up:\n{cluster.timeline(cluster.mark)}"
    )
    moved = cluster.end() - 1  # the last offset of the records that moved the leaderships
    reply = cluster.heartbeat(1, want_shut_down=True)
    assert reply.in_controlled_shutdown and not reply.should_shut_down, (
        f"{scenario}\n  broker 1 leads nothing now, but brokers 2 and 3 last reported offsets below "
        f"{moved}, where its leaderships moved: they would still send clients to it, so it must wait; got "
        f"{reply}"
    )
    cluster.heartbeat(2)
    cluster.heartbeat(3)
    reply = cluster.heartbeat(1, want_shut_down=True)
    assert reply.should_shut_down and cluster.fences(1), (
        f"{scenario}\n  brokers 2 and 3 have reported offsets past {moved}: broker 1 may shut down now "
        f"(should_shut_down) and is fenced; got {reply}.\n  the records since the set-up:\n"
        f"{cluster.timeline(cluster.mark)}"
    )


@pytest.mark.stage(3)
@pytest.mark.points(1)
def test_with_no_unfenced_broker_there_is_no_check_to_schedule():
    time = MockTime()
    m = manager(time)

    def check(case):
        got = m.next_check_time_ns()
        assert got == LONG_MAX, (
            f"every broker the manager knows is fenced ({case}), so no session can expire: expected "
            f"next_check_time_ns() to be LONG_MAX ({LONG_MAX}, never); got {got!r}, a fencing check the "
            f"controller would schedule with nothing to check (the clock is at {time.nanoseconds()} ns)"
        )

    check("no broker has been heard from yet")
    m.touch(1, False, 10)
    time.sleep(SESSION_MS + 1)
    m.fence(1)
    check("broker 1's session expired and it was fenced")
    m.touch(2, True, 10)
    check("broker 2 heartbeat and stays fenced: a fenced broker has no session")


@pytest.mark.stage(3)
@pytest.mark.points(1)
def test_once_every_broker_is_fenced_the_controller_has_no_fencing_check_pending():
    cluster = Cluster()
    queue = cluster.env.queues[0]
    assert MAYBE_FENCE_REPLICAS in queue.deferred_tags(), (
        "scenario: brokers 1, 2, 3 registered and unfenced at time 0: three sessions that can expire, "
        f"yet the active controller has no fencing check ({MAYBE_FENCE_REPLICAS!r}) pending; its "
        f"deferred events: {queue.deferred_tags()}"
    )
    for broker_id in BROKERS:
        reply = cluster.heartbeat(broker_id, want_fence=True)
        assert reply.is_fenced, f"broker {broker_id} asked to be fenced: {reply}"
    assert MAYBE_FENCE_REPLICAS not in queue.deferred_tags(), (
        "scenario: brokers 1, 2, 3 registered and unfenced at time 0, then each heartbeats asking to be "
        "fenced, and is: no session is left to expire, yet the active controller still has a fencing "
        f"check ({MAYBE_FENCE_REPLICAS!r}) pending; its queue's next deadline is {queue.next_deadline_ns()} "
        f"ns, the clock {cluster.env.time.nanoseconds()} ns"
    )


# -- stage 4: the controller on a real cluster -----------------------------------------------------------

# Three combined KRaft nodes (`kafka-lite cluster up --kraft`), each a broker and a voter, whose
# processes import your files: the active controller elects with your builder and fences with your
# sessions, and every broker heartbeats through your answers. Elections within about 300 ms, a broker
# heartbeating every 200 ms and fenced 1.5 s after its last heartbeat, so that a killed node's
# partitions move within a couple of seconds.
SESSION_S, HEARTBEAT_S = 1.5, 0.2
REAL_CLUSTER_OVERRIDES = [
    "controller.quorum.election.timeout.ms=300",
    "controller.quorum.fetch.timeout.ms=300",
    f"broker.session.timeout.ms={int(SESSION_S * 1000)}",
    f"broker.heartbeat.interval.ms={int(HEARTBEAT_S * 1000)}",
    "replica.fetch.wait.max.ms=100",
    "replica.fetch.backoff.ms=100",
    "replica.lag.time.max.ms=4000",
    "offsets.topic.num.partitions=2",
    "num.network.threads=1",
    "num.io.threads=2",
    "log.cleaner.enable=false",
]
STAGE4 = (
    BrokerLifecycleManager._answer_in_recovery,
    BrokerLifecycleManager._answer_in_pending_controlled_shutdown,
)
HEARTBEAT_INTERVAL_MS = 2000  # the broker's side, alone: Kafka's default broker.heartbeat.interval.ms
QUICK_ASK_MS = 50  # FIRST_CONTROLLED_SHUTDOWN_HEARTBEAT_MS


class ControllerChannel:
    """The broker's channel to the controller: it keeps each request the broker sends, for the test to
    answer (Kafka's MockBrokerToControllerChannelManager)."""

    def __init__(self) -> None:
        self.sent: list[tuple[object, dict, object]] = []
        self.shut_down = False

    def start(self) -> None:
        pass

    def shutdown(self) -> None:
        self.shut_down = True

    def send_request(self, api, body: dict, handler) -> None:
        self.sent.append((api, body, handler))


class LifecycleBroker:
    """One broker's BrokerLifecycleManager on a MockTime and a deterministic event queue, registered
    (epoch 1000), its heartbeats answered as each test says."""

    def __init__(self) -> None:
        written(*STAGE4)
        self.time = MockTime()
        self.queue = DeterministicEventQueue(self.time)
        self.channel = ControllerChannel()
        config = KafkaConfig({
            "process.roles": "broker", "node.id": 1, "log.dirs": "/tmp/lab19-unused",
            "controller.quorum.voters": "2@localhost:9093", "controller.listener.names": "CONTROLLER",
            "listeners": "PLAINTEXT://localhost:9092",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "broker.heartbeat.interval.ms": HEARTBEAT_INTERVAL_MS, "broker.session.timeout.ms": SESSION_MS,
        })  # fmt: skip
        self.manager = BrokerLifecycleManager(config, self.time, self.queue, random.Random(7))
        listeners = [{"name": "PLAINTEXT", "host": "localhost", "port": 9092, "security_protocol": 0}]
        self.manager.start(lambda: 0, self.channel, CLUSTER_ID, listeners, {})
        self.queue.run_pending()
        self.answer(broker_epoch=1000)  # the registration; the first heartbeat goes at once

    def answer(self, **body) -> dict:
        """Answer the one request waiting; return what it asked."""
        assert len(self.channel.sent) == 1, (
            f"expected one request waiting, the broker sent {self.channel.sent}"
        )
        api, request, handler = self.channel.sent.pop(0)
        handler.on_complete(
            ClientResponse(ClientRequest("3000", api, 0, request), 0, {"throttle_time_ms": 0, "error_code": 0, **body})
        )  # fmt: skip
        self.queue.run_pending()
        return request

    def heartbeat(self, **answer) -> dict:
        body = {"is_caught_up": True, "is_fenced": True, "should_shut_down": False, **answer}
        assert self.channel.sent and self.channel.sent[0][0] == ControllerApiKeys.BROKER_HEARTBEAT, (
            f"expected a heartbeat waiting for its answer, the broker sent {self.channel.sent}"
        )
        return self.answer(**body)

    def next_heartbeat_ms(self, limit_ms: int) -> int | None:
        """Milliseconds from now until the broker's next request goes out (None if none within
        ``limit_ms``), the clock moved a millisecond at a time."""
        for ms in range(limit_ms + 1):
            if self.channel.sent:
                return ms
            self.time.sleep(1)
            self.queue.run_pending()
        return None

    def in_recovery(self) -> None:
        self.heartbeat(is_caught_up=True)  # STARTING -> RECOVERY (given), the next heartbeat in 10 ms
        assert self.manager.state == BrokerState.RECOVERY, self.manager.state
        assert self.next_heartbeat_ms(10) is not None


@pytest.mark.stage(4)
@pytest.mark.points(2)
def test_a_broker_in_recovery_serves_only_once_the_controller_unfences_it():
    broker = LifecycleBroker()
    broker.in_recovery()
    broker.heartbeat(is_fenced=True)
    scenario = "a broker in RECOVERY (caught up with the metadata log), its heartbeat answered is_fenced=True"
    assert (
        broker.manager.state == BrokerState.RECOVERY and not broker.manager.initial_unfence_future.done()
    ), (
        f"{scenario}: it must not serve yet, since no client may be sent to a broker the others do not know "
        f"as live; it is {broker.manager.state.name}, initial_unfence_future "
        f"{'completed' if broker.manager.initial_unfence_future.done() else 'waiting'} (its start-up waits on it)"
    )
    got = broker.next_heartbeat_ms(3 * HEARTBEAT_INTERVAL_MS)
    assert got == HEARTBEAT_INTERVAL_MS, (
        f"{scenario}: it should heartbeat again after broker.heartbeat.interval.ms ({HEARTBEAT_INTERVAL_MS} "
        f"ms), to be unfenced once the controller agrees; the next heartbeat went "
        f"{'never (within 6000 ms)' if got is None else f'after {got} ms'}"
    )
    broker.heartbeat(is_fenced=False)
    scenario = "a broker in RECOVERY, its heartbeat answered is_fenced=False"
    assert broker.manager.state == BrokerState.RUNNING and broker.manager.initial_unfence_future.done(), (
        f"{scenario}: the controller has unfenced it, so it serves: RUNNING, with initial_unfence_future "
        f"completed (the broker's start-up waits on it before it serves); it is {broker.manager.state.name}, "
        f"initial_unfence_future {'completed' if broker.manager.initial_unfence_future.done() else 'waiting'}"
    )
    got = broker.next_heartbeat_ms(3 * HEARTBEAT_INTERVAL_MS)
    assert got == HEARTBEAT_INTERVAL_MS, (
        f"{scenario}: a running broker keeps its session with a heartbeat every {HEARTBEAT_INTERVAL_MS} ms; "
        f"the next heartbeat went {'never (within 6000 ms)' if got is None else f'after {got} ms'}"
    )


@pytest.mark.stage(4)
@pytest.mark.points(2)
def test_a_broker_waiting_to_shut_down_asks_again_and_stops_only_when_told():
    broker = LifecycleBroker()
    broker.in_recovery()
    broker.heartbeat(is_fenced=False)
    assert broker.manager.state == BrokerState.RUNNING, (
        f"a broker in RECOVERY whose heartbeat is answered is_fenced=False should be RUNNING (the test "
        f"above); it is {broker.manager.state.name}"
    )
    broker.manager.begin_controlled_shutdown()
    broker.queue.run_pending()  # PENDING_CONTROLLED_SHUTDOWN (given): a heartbeat at once, want_shut_down
    timeline = []
    expected_waits = [QUICK_ASK_MS, HEARTBEAT_INTERVAL_MS, HEARTBEAT_INTERVAL_MS]
    for expected in expected_waits:
        asked = broker.heartbeat(is_fenced=False, should_shut_down=False)
        state = broker.manager.state
        got = broker.next_heartbeat_ms(3 * HEARTBEAT_INTERVAL_MS)
        timeline.append(
            f"heartbeat (want_shut_down={asked['want_shut_down']}) answered should_shut_down=False: "
            f"{state.name}, the next heartbeat {'never (within 6000 ms)' if got is None else f'after {got} ms'}"
        )
        assert state == BrokerState.PENDING_CONTROLLED_SHUTDOWN and got == expected, (
            "a broker in PENDING_CONTROLLED_SHUTDOWN keeps asking until the controller lets it go: after the "
            f"first 'not yet' again after {QUICK_ASK_MS} ms (its leaderships have just been moved, and the "
            "controller often lets it go within milliseconds), after any later one at the heartbeat interval "
            f"({HEARTBEAT_INTERVAL_MS} ms). Expected waits {expected_waits}; what happened:\n    "
            + "\n    ".join(timeline)
        )
    broker.heartbeat(is_fenced=True, should_shut_down=True)
    assert (
        broker.manager.state == BrokerState.SHUTTING_DOWN and broker.manager.controlled_shutdown_future.done()
    ), (
        "a broker in PENDING_CONTROLLED_SHUTDOWN whose heartbeat is answered should_shut_down=True stops: "
        f"SHUTTING_DOWN, controlled_shutdown_future completed (the broker's shutdown waits on it); it is "
        f"{broker.manager.state.name}, controlled_shutdown_future "
        f"{'completed' if broker.manager.controlled_shutdown_future.done() else 'waiting'}"
    )
    assert broker.next_heartbeat_ms(3 * HEARTBEAT_INTERVAL_MS) is None, (
        f"a broker let go sends nothing more; it sent {broker.channel.sent}"
    )


STEP_S = 30  # each wait: an election, a fence, a restart
# A test's backstop, over the module's 60 s for the in-process stages: the first test also starts the
# cluster, and a restart waits out a session, then a node's start-up; each step has its own deadline.
REAL_CLUSTER_TIMEOUT_S = 180
METADATA_SERDE = MetadataRecordSerde()
SHUTDOWN_S = 20  # a controlled shutdown of a node that leads two partitions takes well under a second


@dataclass
class LoggedBatch:
    """A batch of a node's metadata log: when the active controller began it (its wall clock, in
    ms), and its records as ``(offset, record)``."""

    append_ms: int
    records: list[tuple[int, object]]


class KRaftLabCluster:
    """The cluster as the tests see it: the quorum's leader through DescribeQuorum, and the brokers,
    leaders and ISRs through the live brokers' Metadata (which lists only unfenced brokers)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @property
    def state(self) -> dict:
        return load_state(self.directory)  # a restart writes the node's new pid there

    def cli(self, *args: str) -> None:
        """``kafka-lite cluster ACTION ... --dir DIR``, as you would type it."""
        code = main(["cluster", *args, "--dir", str(self.directory)])
        assert code == 0, f"kafka-lite cluster {' '.join(args)} failed ({code}); see {self.directory}/logs"

    def pid(self, node: int) -> int:
        return next(n["pid"] for n in self.state["brokers"] if n["id"] == node)

    def active_controller(self) -> int | None:
        quorum = cluster_kraft.describe_quorum(self.state)
        return None if quorum is None else quorum.leader_id

    def active(self) -> int:
        """The active controller, once the quorum has one (node 0 is one: not a falsy answer)."""
        return self.wait(lambda: [self.active_controller()] if self.active_controller() is not None else None,
                         "an active controller")[0]  # fmt: skip

    def listed(self, excluding: int | None = None) -> list[int]:
        """The brokers the live nodes (but ``excluding``) list: the registered, unfenced ones."""
        return cluster_kraft.listed_brokers(self.state, excluding=excluding) or []

    def partitions(self, topic: str, excluding: int | None = None) -> dict[int, tuple[int | None, list[int]]]:
        """Partition -> (leader, ISR), as the live brokers' metadata (but ``excluding``'s) has them."""
        live = [n for n in self.state["brokers"] if n["id"] != excluding and _alive(n["pid"])]
        health = metadata_health(self.state, {}, live)
        return {p: (leader, list(isr)) for t, p, leader, _, isr in health.get("partitions", []) if t == topic}

    def create_topic(self, name: str, assignment: dict[int, list[int]]) -> None:
        admin = KafkaAdminClient(bootstrap_servers(self.state))
        try:
            admin.create_topics([NewTopic(name, -1, -1, assignment)])
        finally:
            admin.close()
        self.wait(
            lambda: (
                {p: sorted(isr) for p, (_, isr) in self.partitions(name).items()}
                == {p: sorted(r) for p, r in assignment.items()}
            ),
            f"{name}'s partitions {assignment} online, every replica in its ISR",
        )

    def wait(self, condition, what: str, timeout_s: float = STEP_S, poll_s: float = 0.05):
        """Until ``condition()`` is truthy (and return it), or fail naming ``what``."""
        deadline = time.monotonic() + timeout_s
        while not (result := condition()):
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"timed out after {timeout_s} s waiting for {what}; the nodes' logs are in "
                    f"{self.directory / 'logs'}"
                )
            time.sleep(poll_s)  # polling the cluster; bounded by the deadline
        return result

    def metadata_log(self, node: int) -> list[LoggedBatch]:
        """``node``'s metadata log as its segment files hold it now, batch by batch: what the node's
        Raft client has appended, which no later replay changes. Raft's control batches, and a batch
        still being written at the tail, are left out."""
        node_dir = cluster_kraft.node_directory(
            self.state, next(n for n in self.state["brokers"] if n["id"] == node)
        )
        batches = []
        for segment in sorted((node_dir / "metadata" / "__cluster_metadata-0").glob("*.log")):
            records = FileRecords.open(segment, mutable=False)
            try:
                for _, batch in records.batches():
                    if not batch.is_control_batch:
                        batches.append(LoggedBatch(batch.max_timestamp, [
                            (r.offset, METADATA_SERDE.deserialize(r.value).message) for r in batch
                        ]))  # fmt: skip
            finally:
                records.close()
        return batches

    def restart(self, node: int) -> None:
        """Start ``node`` again: the command waits for its old registration to go and the node to be
        listed again."""
        self.cli("restart", str(node))

    def make_whole(self) -> None:
        """Restart whatever node an earlier test left stopped, so that each test finds the cluster
        whole (done here, not at each test's end, so that the last test restarts nothing)."""
        for node in self.state["brokers"]:
            if not _alive(node["pid"]):
                self.restart(node["id"])


@pytest.fixture(scope="module")
def kraft_cluster(tmp_path_factory):
    directory = tmp_path_factory.mktemp("lab19-cluster")
    port = free_ports(4)  # the first is a ZooKeeper port, which a KRaft cluster leaves unused
    state = start_cluster(directory, 3, port, port + 1, REAL_CLUSTER_OVERRIDES, kraft=True)
    try:
        wait_healthy(state)
        yield KRaftLabCluster(directory)
    finally:
        # Killed, not stopped: nothing is read from them afterwards, and three controlled shutdowns
        # would only cost time.
        for node in load_state(directory)["brokers"]:
            if _alive(node["pid"]):
                os.kill(node["pid"], signal.SIGKILL)
                _wait_gone(node["pid"], 10)


def real_cluster(request) -> KRaftLabCluster:
    written(*STAGE4, *STAGE1, *STAGE2, *STAGE3)
    c = request.getfixturevalue("kraft_cluster")
    c.make_whole()
    return c


def lab_topic(c: KRaftLabCluster, prefix: str, assignment: dict[int, list[int]]) -> str:
    name = f"{prefix}-{uuid.uuid4().hex[:6]}"
    c.create_topic(name, assignment)
    return name


def led_by_a_follower(c: KRaftLabCluster, prefix: str) -> tuple[int, int, int, dict, str]:
    """A node that is not the active controller (``n``), the other two (``a``, then the active
    controller ``b``), and a new topic where ``n`` leads partitions 0 and 1 and follows in 2, partition
    1's replica order not the ISR's: ``(n, a, b, assignment, topic)``."""
    active = c.active()
    n, a, b = [node for node in (0, 1, 2) if node != active] + [active]
    assignment = {0: [n, a, b], 1: [n, b, a], 2: [a, n, b]}
    return n, a, b, assignment, lab_topic(c, prefix, assignment)


@pytest.mark.stage(4)
@pytest.mark.timeout(REAL_CLUSTER_TIMEOUT_S)
@pytest.mark.points(4)
def test_a_killed_broker_is_fenced_at_its_session_timeout_and_its_partitions_move_within_the_isr(request):
    c = real_cluster(request)
    victim, a, b, assignment, t = led_by_a_follower(c, "lab19-fence")
    ends = {n: log_end(c.metadata_log(n)) for n in (b, a)}
    # SIGKILL, as `kafka-lite cluster kill` sends it, timed on the wall clock the controller stamps
    # its batches with; the node is restarted below.
    killed_ms = time.time() * 1000
    os.kill(c.pid(victim), signal.SIGKILL)
    _wait_gone(c.pid(victim), 10)
    try:
        c.wait(lambda: victim not in c.listed(excluding=victim),
               f"node {victim}, killed, to be fenced (no longer listed by the live brokers)")  # fmt: skip
        # When the controller fenced it: the time its batch with the FenceBrokerRecord began, which
        # the brokers that no longer list the node have in their logs.
        found = first_fence(c, victim, ends)
        assert found is not None, f"node {victim} is no longer listed, but no metadata log holds its fence"
        _, batches, i = found
        fenced_after = (batches[i].append_ms - killed_ms) / 1000
        # Its session runs from its last heartbeat the controller had, at most a heartbeat interval
        # before the kill on an idle machine, and later still when a loaded one ran the node late.
        # Half a session leaves a late heartbeat 0.55 s and still fails a controller that fences a
        # broker for a missed heartbeat or two.
        assert fenced_after >= SESSION_S / 2, (
            f"node {victim} was fenced {fenced_after:.2f} s after it was killed: its session "
            f"(broker.session.timeout.ms, {SESSION_S} s after its last heartbeat, which came every "
            f"{HEARTBEAT_S} s) had not expired"
        )
        expected = {0: (a, [a, b]), 1: (b, [b, a]), 2: (a, [a, b])}
        c.wait(lambda: all(leader is not None and victim not in isr
                           for leader, isr in c.partitions(t, excluding=victim).values()),
               f"{t}'s partitions to leave node {victim}")  # fmt: skip
        got = c.partitions(t, excluding=victim)
        assert {p: (leader, sorted(isr)) for p, (leader, isr) in got.items()} == {
            p: (leader, sorted(isr)) for p, (leader, isr) in expected.items()
        }, (
            f"{t} assigned {assignment}, node {victim} killed: each partition it led goes to the first "
            f"replica in replica order that is in the ISR (partition 1 to node {b}, not the ISR's first), "
            f"partition 2 keeps its leader, and node {victim} leaves every ISR. "
            f"(leader, ISR) expected {expected}, the brokers say {got}"
        )
    finally:
        c.restart(victim)
    assert victim in c.listed(), f"node {victim}, restarted, is unfenced (listed again): {c.listed()}"
    c.wait(lambda: all(victim in isr for _, isr in c.partitions(t).values()),
           f"node {victim}, restarted, to rejoin the ISR of each partition of {t}")  # fmt: skip


@pytest.mark.stage(4)
@pytest.mark.timeout(REAL_CLUSTER_TIMEOUT_S)
@pytest.mark.points(4)
def test_a_killed_active_controller_is_replaced_and_the_new_one_fences_it(request):
    c = real_cluster(request)
    old = c.active()
    a, b = [n for n in (0, 1, 2) if n != old]
    t = lab_topic(c, "lab19-controller", {0: [old, a, b], 1: [b, old, a]})
    c.cli("kill", str(old))  # restarted by the next test's make_whole
    c.wait(lambda: c.active_controller() not in (None, old),
           f"another voter to become the active controller after node {old} was killed")  # fmt: skip
    new = c.active()
    c.wait(lambda: old not in c.listed(excluding=old),
           f"the new active controller, node {new}, to fence node {old} once its session expired")  # fmt: skip
    c.wait(lambda: all(old not in isr for _, isr in c.partitions(t, excluding=old).values()),
           f"node {old} to leave {t}'s ISRs")  # fmt: skip
    got = c.partitions(t, excluding=old)
    assert got[0][0] == a and got[1][0] == b, (
        f"{t} assigned {{0: {[old, a, b]}, 1: {[b, old, a]}}}: partition 0's leader, node {old}, "
        f"killed with the controller, is replaced by node {a} (the first in replica order in the "
        f"ISR) and partition 1 keeps node {b}; the brokers say (leader, ISR) {got}"
    )


@pytest.mark.stage(4)
@pytest.mark.timeout(REAL_CLUSTER_TIMEOUT_S)
@pytest.mark.points(4)
def test_a_controlled_shutdown_moves_the_nodes_leaderships_away_before_it_stops(request):
    c = real_cluster(request)
    leaving, a, b, _, t = led_by_a_follower(c, "lab19-shutdown")
    survivors = (b, a)  # the active controller's log first: it wrote the records
    pid = c.pid(leaving)
    # Where each survivor's metadata log ends now: what the shutdown leaves behind comes after.
    ends = {n: log_end(c.metadata_log(n)) for n in survivors}
    # What `kafka-lite cluster shutdown` sends, with a shorter deadline than its SIGKILL's; the node
    # is restarted by the next test's make_whole.
    os.kill(pid, signal.SIGTERM)
    if not _wait_gone(pid, SHUTDOWN_S):
        os.kill(pid, signal.SIGKILL)
        _wait_gone(pid, 10)
        pytest.fail(
            f"node {leaving} had not stopped {SHUTDOWN_S} s after SIGTERM: its controlled shutdown "
            "never ended. It heartbeats with want_shut_down; once the controller answers "
            f"should_shut_down the broker stops (see {c.directory / 'logs' / f'broker-{leaving}.log'})"
        )
    # What the node left behind, read from the survivors' metadata logs now that its process has
    # ended: a log holds what it holds, with no replay to wait for. The controller answers
    # should_shut_down only once the FenceBrokerRecord is committed, so on two of the three voters:
    # on a survivor at least. A killed node leaves no such record until its session expires, and
    # then its leaderships move in the fence's own batch, not before it.
    found = first_fence(c, leaving, ends)
    assert found is not None, (
        f"node {leaving} stopped under control, and when its process had ended no survivor's "
        f"metadata log held a FenceBrokerRecord for it: the controller answers should_shut_down only "
        f"with the broker fenced (that record committed), and the broker stops only on that answer. "
        f"The records since SIGTERM in node {b}'s log (the active controller's):\n"
        f"{show_batches(c.metadata_log(b), ends[b])}"
    )
    holder, batches, i = found
    before_fence = [r for batch in batches[:i] for _, r in batch.records]
    got = {p: (part.leader, sorted(part.isr)) for p, part in topic_partitions(before_fence, t).items()}
    expected = {0: (a, sorted([a, b])), 1: (b, sorted([a, b])), 2: (a, sorted([a, b]))}
    assert got == expected, (
        f"node {leaving} stopped under control: before the batch that fenced it, its leaderships "
        f"had moved (to the first replica in replica order in the ISR) and it had left every ISR, by "
        f"records of their own, while it still served (a killed node's move with its fence, in one "
        f"batch). "
        f"(leader, ISR) of {t} as the records before the fence make them, expected {expected}, got "
        f"{got}. The records since SIGTERM in node {holder}'s log:\n{show_batches(batches, ends[holder])}"
    )


def fence_batch(batches: list[LoggedBatch], broker: int, since: int) -> int | None:
    """The index of the first batch at offset ``since`` or later that fences ``broker``, if any."""
    return next(
        (i for i, batch in enumerate(batches)
         if any(o >= since and isinstance(r, FenceBrokerRecord) and r.id == broker for o, r in batch.records)),
        None,
    )  # fmt: skip


def first_fence(
    c: KRaftLabCluster, broker: int, ends: dict[int, int]
) -> tuple[int, list[LoggedBatch], int] | None:
    """The first node of ``ends`` whose metadata log fences ``broker`` at or after the offset
    ``ends`` gives it: ``(node, its log, the fence's batch)``."""
    for node, since in ends.items():
        batches = c.metadata_log(node)
        i = fence_batch(batches, broker, since)
        if i is not None:
            return node, batches, i
    return None


def log_end(batches: list[LoggedBatch]) -> int:
    """The offset after the last record of ``batches``."""
    return batches[-1].records[-1][0] + 1 if batches else 0


def show_batches(batches: list[LoggedBatch], since: int) -> str:
    lines = []
    for batch in batches:
        shown = [(o, r) for o, r in batch.records if o >= since]
        if shown:
            lines.append(f"    a batch of {len(batch.records)}:")
            lines += [f"      offset {o:>4}: {r!r}" for o, r in shown]
    return "\n".join(lines) or "    (nothing)"
