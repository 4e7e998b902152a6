"""Lab 16 graded tests: a quota's throttle time over its rate's windows, then the transaction
coordinator's state machine. No broker process, no sleeping: everything runs on a ``MockTime``.

Stage 1 drives a real ``ClientQuotaManager`` (the produce quota, its reaper thread stopped so the test
sends the held responses itself, as Kafka's ClientQuotaManagerTest does): the learner's
``Rate.window_size`` is what every measured rate is divided by, and the learner's
``ClientQuotaManager.throttle_time`` is how long a response over the quota is held. Stage 2 drives a
``TransactionMetadata`` through the learner's ``_prepare_transition_to`` and ``complete_transition_to``
(through the same ``prepare_*`` methods the coordinator calls), and then a real
``TransactionCoordinator`` over an in-process replica manager that leads every ``__transaction_state``
partition, as tests/coordinator/transaction/ builds one.

On the untouched starter the first measured rate (stage 1) or the first transition (stage 2) raises
the lab's own NotImplementedError. Failure messages print what happened, step by step: each request's
time, bytes and throttle time, or each transition with the state before and after it.
"""

from __future__ import annotations

import dataclasses
import itertools

import pytest

from kafka_lite.clients.network_client import ClientRequest, ClientResponse
from kafka_lite.common.errors import Errors, IllegalStateException
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.time import MockTime
from kafka_lite.coordinator.transaction.transaction_coordinator import TransactionCoordinator
from kafka_lite.coordinator.transaction.transaction_log import TRANSACTION_STATE_TOPIC_NAME
from kafka_lite.coordinator.transaction.transaction_marker_channel_manager import (
    TransactionMarkerChannelManager,
)
from kafka_lite.coordinator.transaction.transaction_metadata import (
    NO_PRODUCER_EPOCH,
    VALID_PREVIOUS_STATES,
    TransactionMetadata,
    TransactionState,
    is_valid_transition,
)
from kafka_lite.coordinator.transaction.transaction_state_manager import (
    TransactionConfig,
    TransactionStateManager,
)
from kafka_lite.server.client_quota_manager import ClientQuotaManager, ClientQuotaManagerConfig
from kafka_lite.server.metadata_cache import MetadataCache
from kafka_lite.server.replication_quota_manager import QuotaType
from kafka_lite.testing.in_process_replicas import in_process_brokers, leader_and_isr
from kafka_lite.utils.scheduler import MockScheduler

pytestmark = [pytest.mark.lab(16), pytest.mark.timeout(20)]

# -- stage 1: the throttle time ------------------------------------------------------------------------

# Kafka's defaults: ten whole one-second windows and the current one (quota.window.num=11)
ELEVEN_WINDOWS = dict(num_quota_samples=11, quota_window_size_seconds=1)


class Client:
    """One client id's requests against a produce quota manager, with what each got, as a story."""

    def __init__(self, time: MockTime, quota: float, **windows: int) -> None:
        self.time = time
        config = ClientQuotaManagerConfig(quota_bytes_per_second_default=quota, **(windows or ELEVEN_WINDOWS))
        self.manager = ClientQuotaManager(config, QuotaType.PRODUCE, time)
        self.manager.throttled_request_reaper.shutdown()  # the test sends held responses itself
        self.start = time.milliseconds()
        self.sent: list[int] = []  # throttle times of the responses sent, in order
        self.story: list[str] = []

    def produce(self, size: float) -> int:
        throttle = self.manager.record_and_maybe_throttle("client-a", size, self.sent.append)
        self.story.append(
            f"t={self.time.milliseconds() - self.start:>6} ms  produce {size:g} B  -> "
            f"rate {self.manager.rate('client-a'):.1f} B/s, throttle_time {throttle} ms"
        )
        return throttle

    def window_size(self) -> int:
        return self.manager.get_or_create_quota_sensors("client-a").quota_sensor.window_size()

    def told(self) -> str:
        return "\n".join(["what happened:", *self.story[-12:]])

    def close(self) -> None:
        self.manager.shutdown()


@pytest.fixture
def time() -> MockTime:
    return MockTime()


@pytest.fixture
def client_at(time):
    made: list[Client] = []

    def make(quota: float, **windows: int) -> Client:
        made.append(Client(time, quota, **windows))
        return made[-1]

    yield make
    for client in made:
        client.close()


@pytest.mark.stage(1)
@pytest.mark.points(3)
def test_a_new_clients_first_burst_is_measured_over_ten_whole_windows(client_at, time):
    client = client_at(500)
    assert client.produce(400) == 0, client.told()
    assert client.window_size() == 10_000, (
        "a new client has 0 ms of history; Rate divides by at least samples - 1 = 10 whole windows "
        f"(10000 ms), got {client.window_size()} ms\n{client.told()}"
    )
    assert client.manager.rate("client-a") == pytest.approx(40.0), (
        f"400 B over 10 windows is 40 B/s, not 400 B over 1 ms\n{client.told()}"
    )
    assert client.sent == [0], f"within its quota, the response goes at once\n{client.told()}"
    time.sleep(300)
    assert client.window_size() == 10_300, (
        f"0.3 s into the first window: the 10 whole windows plus 300 ms, got {client.window_size()}\n"
        f"{client.told()}"
    )
    # Then the live windows' own span, once it is more than ten windows: one request a second from
    # t=1.3 s to t=14.3 s opens a window each; the ring holds 11, so at t=14.5 s the oldest live
    # window is the one opened at t=4.3 s.
    for _ in range(14):
        time.sleep(1000)
        client.produce(100)
    time.sleep(200)
    assert client.window_size() == 10_200, (
        f"at t=14.5 s the live windows began at t=4.3 s: 10200 ms, got {client.window_size()}\n{client.told()}"
    )


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_a_client_at_twice_its_quota_is_held_for_one_window(client_at, time):
    # two samples of one second: a new client's rate is over one whole window
    client = client_at(1000, num_quota_samples=2, quota_window_size_seconds=1)
    throttle = client.produce(2000)
    assert throttle == 1000, (
        f"2000 B/s against 1000 B/s: X = (2000 - 1000) / 1000 * 1000 ms = 1000 ms, got {throttle}\n"
        f"{client.told()}"
    )
    assert client.sent == [], f"the response is held, not sent\n{client.told()}"
    assert len(client.manager.delay_queue) == 1
    assert client.manager.throttle_time_sensor("client-a").max == 1000
    time.sleep(999)
    assert client.manager.delay_queue.poll(0) is None, "the response is not due 1 ms early"
    time.sleep(1)
    client.manager.throttled_request_reaper.do_work()
    assert client.sent == [1000], f"due after one window, sent with its throttle time\n{client.told()}"


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_the_throttle_time_is_kafkas_formula_rounded_to_the_millisecond(client_at, time):
    # Kafka's ClientQuotaManagerTest.testQuotaViolation: 400 B a second for 10 s, then 2300 B at 10.5 s:
    # 6300 B over 10.5 s is 600 B/s; against 500 B/s, X = (600 - 500) / 500 * 10500 = 2100 ms.
    client = client_at(500)
    for _ in range(10):
        assert client.produce(400) == 0, client.told()
        time.sleep(1000)
    time.sleep(500)
    assert client.produce(2300) == 2100, f"Kafka's own case: 2100 ms\n{client.told()}"
    # Rounded to the nearest millisecond (Scala's Math.round), not truncated nor always up: over one
    # window of 1000 ms against 1000 B/s, 2.4 ms over gives 2 ms and 2.6 ms over gives 3 ms.
    for size, expected in ((1002.4, 2), (1002.6, 3)):
        other = client_at(1000, num_quota_samples=2, quota_window_size_seconds=1)
        got = other.produce(size)
        assert got == expected, (
            f"X = ({size:g} - 1000) / 1000 * 1000 ms = {size - 1000:.1f} ms, rounded: {expected}, got {got}\n"
            f"{other.told()}"
        )


@pytest.mark.stage(1)
@pytest.mark.points(3)
def test_a_client_that_waits_out_its_throttle_settles_at_its_quota(client_at, time):
    """A producer that sends 100 B as soon as its last response comes: every 10 ms when it is not held,
    else after the throttle time. Over a minute of simulated time it sends about its quota."""
    client = client_at(1000)
    sent_at: list[int] = []
    throttles: list[int] = []
    while time.milliseconds() - client.start < 60_000:
        sent_at.append(time.milliseconds() - client.start)
        throttles.append(client.produce(100))
        time.sleep(throttles[-1] if throttles[-1] else 10)
    per_ten_seconds = [
        sum(100 for t in sent_at if start <= t < start + 10_000) / 10 for start in range(0, 60_000, 10_000)
    ]
    story = f"bytes per second in each 10 s: {per_ten_seconds}\n{client.told()}"
    assert any(throttles), f"a client sending as fast as it may must be held at times\n{story}"
    for rate in per_ten_seconds[1:]:
        # Kafka's rate runs about a window's worth over the quota (the oldest window is dropped whole)
        assert 900 <= rate <= 1150, f"after the first 10 s the client should send about 1000 B/s\n{story}"


# -- stage 2: the transaction state machine ------------------------------------------------------------

T = TransactionState
TP0, TP1 = ("orders", 0), ("orders", 1)
ALL_EDGES = [(old, new) for new in T for old in T]
LEGAL = [(old, new) for old, new in ALL_EDGES if old in VALID_PREVIOUS_STATES[new]]
ILLEGAL = [(old, new) for old, new in ALL_EDGES if old not in VALID_PREVIOUS_STATES[new]]


def metadata_in(state: T) -> TransactionMetadata:
    """A transactional id in ``state``, as the coordinator would hold it there."""
    partitions = () if state is T.EMPTY else (TP0,)
    start = -1 if state is T.EMPTY else 100
    return TransactionMetadata("txn-a", 7, 3, 60_000, state, partitions, start, 100)


def prepare_to(m: TransactionMetadata, target: T):
    partitions = frozenset() if target in (T.EMPTY, T.COMPLETE_COMMIT, T.COMPLETE_ABORT) else frozenset({TP0})
    start = -1 if target is T.EMPTY else 100
    return m._prepare_transition_to(target, m.producer_id, m.producer_epoch, m.txn_timeout_ms, partitions,
                                    start, 200)  # fmt: skip


def table_row(target: T) -> str:
    return f"VALID_PREVIOUS_STATES[{target}] = {sorted(str(s) for s in VALID_PREVIOUS_STATES[target])}"


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_every_edge_of_the_table_is_accepted():
    for old, new in LEGAL:
        assert is_valid_transition(old, new), (
            f"is_valid_transition({old}, {new}) should be True: {table_row(new)}"
        )
        m = metadata_in(old)
        transit = prepare_to(m, new)
        assert transit.txn_state is new and m.pending_state is new, (
            f"{old} -> {new} is in the table: prepare should return a transit to {new} and set pending_state "
            f"to it; got transit {transit}, pending_state {m.pending_state}"
        )
        assert m.state is old, f"{old} -> {new}: prepare must not change the state yet (it is {m.state})"


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_every_edge_not_in_the_table_is_refused():
    for old, new in ILLEGAL:
        assert not is_valid_transition(old, new), (
            f"is_valid_transition({old}, {new}) should be False: {table_row(new)}"
        )
        m = metadata_in(old)
        with pytest.raises(IllegalStateException) as refused:
            prepare_to(m, new)
        message = str(refused.value)
        assert str(old) in message and str(new) in message, (
            f"refusing {old} -> {new}, the message should name both states in Kafka's names; got {message!r}"
        )
        assert m.state is old and m.pending_state is None, (
            f"a refused {old} -> {new} leaves the metadata as it was; state {m.state}, pending {m.pending_state}"
        )


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_a_pending_transition_blocks_a_second_one_until_it_completes():
    m = metadata_in(T.ONGOING)
    assert not m.pending_transition_in_progress()
    transit = m.prepare_abort_or_commit(T.PREPARE_COMMIT, 200)
    assert m.pending_transition_in_progress() and m.state is T.ONGOING, (
        f"after prepare, before the log append: pending {m.pending_state}, state still {m.state}"
    )
    with pytest.raises(IllegalStateException, match="pending"):
        m.prepare_abort_or_commit(T.PREPARE_ABORT, 201)  # a second change while the first is in flight
    assert m.pending_state is T.PREPARE_COMMIT, "the refused second change must not replace the first"
    # complete_transition_to applies only the transit that was prepared
    wrong_epoch = dataclasses.replace(transit, producer_epoch=4)
    with pytest.raises(IllegalStateException):
        m.complete_transition_to(wrong_epoch)
    wrong_state = dataclasses.replace(transit, txn_state=T.PREPARE_ABORT)
    with pytest.raises(IllegalStateException):
        m.complete_transition_to(wrong_state)
    m.complete_transition_to(transit)
    assert (m.state, m.pending_state, m.txn_last_update_timestamp) == (T.PREPARE_COMMIT, None, 200)
    with pytest.raises(IllegalStateException, match="pending state"):
        m.complete_transition_to(transit)  # nothing is pending any more


@pytest.mark.stage(2)
@pytest.mark.points(1)
def test_a_commit_goes_empty_ongoing_prepare_commit_complete_commit():
    m = TransactionMetadata("txn-a", 1000, NO_PRODUCER_EPOCH, 60_000, T.EMPTY, txn_last_update_timestamp=0)
    steps: list[str] = []

    def step(transit, expected: T) -> None:
        before = m.state
        m.complete_transition_to(transit)
        steps.append(
            f"{before} -> {m.state} (epoch {m.producer_epoch}, partitions {sorted(m.topic_partitions)})"
        )
        assert m.state is expected and m.pending_state is None, "\n".join(steps)

    step(m.prepare_increment_producer_epoch(60_000, 10), T.EMPTY)
    assert m.producer_epoch == 0, "InitProducerId gives the first epoch, 0\n" + "\n".join(steps)
    step(m.prepare_add_partitions({TP0}, 20), T.ONGOING)
    assert m.txn_start_timestamp == 20, "the transaction starts with its first partition\n" + "\n".join(steps)
    step(m.prepare_add_partitions({TP1}, 30), T.ONGOING)
    assert m.topic_partitions == {TP0, TP1} and m.txn_start_timestamp == 20, "\n".join(steps)
    step(m.prepare_abort_or_commit(T.PREPARE_COMMIT, 40), T.PREPARE_COMMIT)
    assert m.topic_partitions == {TP0, TP1}, "the markers still have to go to both\n" + "\n".join(steps)
    step(m.prepare_complete(50), T.COMPLETE_COMMIT)
    assert m.topic_partitions == set() and m.txn_last_update_timestamp == 50, "\n".join(steps)


@pytest.mark.stage(2)
@pytest.mark.points(1)
def test_an_abort_goes_through_prepare_abort_and_the_id_starts_again():
    m = metadata_in(T.ONGOING)
    with pytest.raises(IllegalStateException):
        m.prepare_complete(150)  # Ongoing -> CompleteAbort skips PrepareAbort: refused
    m.complete_transition_to(m.prepare_abort_or_commit(T.PREPARE_ABORT, 200))
    assert m.state is T.PREPARE_ABORT
    with pytest.raises(IllegalStateException):
        m.prepare_abort_or_commit(T.PREPARE_COMMIT, 250)  # the abort is decided
    m.complete_transition_to(m.prepare_complete(300))
    assert (m.state, m.topic_partitions) == (T.COMPLETE_ABORT, set())
    m.complete_transition_to(m.prepare_increment_producer_epoch(60_000, 400))
    assert (m.state, m.producer_epoch) == (T.EMPTY, 4), "InitProducerId after the abort bumps the epoch"


# -- stage 2, the real coordinator ----------------------------------------------------------------------

PARTITIONS = 2


class _ProducerIds:
    def __init__(self) -> None:
        self._ids = itertools.count(1000)

    def generate_producer_id(self) -> int:
        return next(self._ids)


class _NoNetwork:
    def wakeup(self) -> None:
        pass


def answer_markers(request) -> None:
    """Answer a drained WriteTxnMarkers as every partition's leader would: no error."""
    body = {
        "transaction_markers": [
            {"producer_id": m["producer_id"], "topics": [
                {"topic": t["topic"], "partitions": [{"partition": p, "error_code": 0} for p in t["partitions"]]}
                for t in m["topics"]
            ]}
            for m in request.body["transaction_markers"]
        ]
    }  # fmt: skip
    client_request = ClientRequest(str(request.destination), ApiKeys.WRITE_TXN_MARKERS, 0, request.body)
    request.handler(ClientResponse(client_request, 0, body, False))


@pytest.fixture
def coordinator(tmp_path, time):
    """A TransactionCoordinator on MockTime whose __transaction_state partitions this broker leads."""
    with in_process_brokers(tmp_path, time, count=1) as (replica_manager,):
        for p in range(PARTITIONS):
            replica_manager.become_leader_or_follower(
                leader_and_isr((TRANSACTION_STATE_TOPIC_NAME, p), 0, [0], [0])
            )
        cache = MetadataCache(0)
        live = [{"id": 0, "end_points": [{"port": 9092, "host": "127.0.0.1", "listener_name": "PLAINTEXT",
                                          "security_protocol_type": 0}], "rack": None}]  # fmt: skip
        states = [{"topic": t, "partition": p, "controller_epoch": 1, "leader": 0, "leader_epoch": 1,
                   "isr": [0], "zk_version": 0, "replicas": [0]} for t, p in (TP0, TP1)]  # fmt: skip
        cache.update_cache(0, 1, {"live_brokers": live, "partition_states": states}, 3)
        scheduler = MockScheduler(time)
        scheduler.startup()
        config = TransactionConfig(
            transaction_log_num_partitions=PARTITIONS, transaction_max_timeout_ms=60_000
        )
        state_manager = TransactionStateManager(0, scheduler, replica_manager, config, time)
        markers = TransactionMarkerChannelManager(0, cache, _NoNetwork(), state_manager, time)
        txn_coordinator = TransactionCoordinator(0, scheduler, _ProducerIds(), state_manager, markers, time)
        for p in range(PARTITIONS):
            txn_coordinator.handle_txn_immigration(p, 1)
        scheduler.tick()
        yield txn_coordinator, state_manager, markers


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_the_coordinator_runs_a_transaction_on_your_state_machine(coordinator):
    txn_coordinator, state_manager, markers = coordinator
    answers: list = []
    story: list[str] = []

    def state() -> TransactionMetadata:
        return state_manager.get_transaction_state("txn-a")[1].transaction_metadata

    def told(what: str) -> str:
        story.append(f"{what}: answered {answers[-1]}, metadata {state()!r}")
        return "\n".join(story)

    txn_coordinator.handle_init_producer_id("txn-a", 10_000, answers.append)
    init = answers[-1]
    assert init.error is Errors.NONE and init.producer_epoch == 0, told("InitProducerId")
    pid = init.producer_id
    txn_coordinator.handle_add_partitions_to_transaction("txn-a", pid, 0, [TP0, TP1], answers.append)
    assert answers[-1] is Errors.NONE and state().state is T.ONGOING, told("AddPartitionsToTxn")

    # A change in flight (prepared, its log append not yet done) makes the coordinator answer
    # CONCURRENT_TRANSACTIONS to the next request, which the producer retries.
    in_flight = state().prepare_abort_or_commit(T.PREPARE_COMMIT, 0)
    txn_coordinator.handle_add_partitions_to_transaction("txn-a", pid, 0, [TP0], answers.append)
    assert answers[-1] is Errors.CONCURRENT_TRANSACTIONS, told("AddPartitionsToTxn while a change is pending")
    state().pending_state = None  # that append "failed": Kafka's state manager clears the pending state
    assert in_flight.txn_state is T.PREPARE_COMMIT

    txn_coordinator.handle_end_transaction("txn-a", pid, 0, True, lambda error, *_: answers.append(error))
    assert answers[-1] is Errors.NONE and state().state is T.PREPARE_COMMIT, told("EndTxn(commit)")
    for request in markers.drain_queued_transaction_markers():
        answer_markers(request)
    assert state().state is T.COMPLETE_COMMIT and state().topic_partitions == set(), told("markers written")
    txn_coordinator.handle_init_producer_id("txn-a", 10_000, answers.append)
    assert (answers[-1].error, answers[-1].producer_epoch) == (Errors.NONE, 1), told("InitProducerId again")
    assert state().state is T.EMPTY, told("InitProducerId again")
