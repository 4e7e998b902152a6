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
    assert client.produce(400) == 0, (
        f"a new client's 400 B at once, against a quota of 500 B/s, was throttled\n{client.told()}"
    )
    assert client.window_size() == 10_000, (
        f"a new client's first request is measured over {client.window_size()} ms; expected 10000 ms "
        f"(11 windows of a second)\n{client.told()}"
    )
    assert client.manager.rate("client-a") == pytest.approx(40.0), (
        f"a new client's 400 B at once reads as {client.manager.rate('client-a'):.1f} B/s; expected 40 B/s\n"
        f"{client.told()}"
    )
    assert client.sent == [0], f"a response within the quota was not sent at once\n{client.told()}"
    time.sleep(300)
    assert client.window_size() == 10_300, (
        f"0.3 s into a new client's first window its rate is measured over {client.window_size()} ms; "
        f"expected 10300 ms\n{client.told()}"
    )
    # Then the live windows' own span, once it is more than ten windows: one request a second from
    # t=1.3 s to t=14.3 s opens a window each; the ring holds 11, so at t=14.5 s the oldest live
    # window is the one opened at t=4.3 s.
    for _ in range(14):
        time.sleep(1000)
        client.produce(100)
    time.sleep(200)
    assert client.window_size() == 10_200, (
        f"at t=14.5 s, the oldest live window opened at t=4.3 s, the rate is measured over "
        f"{client.window_size()} ms; expected 10200 ms\n{client.told()}"
    )
    # Then idle for 20 s, longer than the 11 windows together: every window has aged out, and the
    # client is measured as a new one again.
    time.sleep(20_000)
    client.story.append(f"t={time.milliseconds() - client.start:>6} ms  (idle for 20 s)")
    assert client.window_size() == 10_000, (
        f"after 20 s idle (the 11 windows span 11 s) the rate is measured over {client.window_size()} ms; "
        f"expected 10000 ms, as for a new client\n{client.told()}"
    )


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_a_client_at_twice_its_quota_is_held_for_one_window(client_at, time):
    # two samples of one second: a new client's rate is over one whole window
    client = client_at(1000, num_quota_samples=2, quota_window_size_seconds=1)
    throttle = client.produce(2000)
    assert throttle == 1000, (
        f"a client measured at 2000 B/s over 1000 ms, against a quota of 1000 B/s, was held {throttle} ms; "
        f"expected 1000 ms\n{client.told()}"
    )
    assert client.sent == [], f"a response over the quota was sent at once\n{client.told()}"
    assert len(client.manager.delay_queue) == 1, f"the held response is not queued\n{client.told()}"
    assert client.manager.throttle_time_sensor("client-a").max == 1000, client.told()
    time.sleep(999)
    assert client.manager.delay_queue.poll(0) is None, (
        f"the held response was due 1 ms early\n{client.told()}"
    )
    time.sleep(1)
    client.manager.throttled_request_reaper.do_work()
    assert client.sent == [1000], f"after 1000 ms the held response was not sent\n{client.told()}"


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
    got = client.produce(2300)
    assert got == 2100, (
        f"6300 B over 10.5 s against 500 B/s (Kafka's own case) was held {got} ms; expected 2100 ms\n"
        f"{client.told()}"
    )
    # Rounded to the nearest millisecond (Scala's Math.round), not truncated nor always up: over one
    # window of 1000 ms against 1000 B/s, 2.4 ms over gives 2 ms and 2.6 ms over gives 3 ms.
    for size, expected in ((1002.4, 2), (1002.6, 3)):
        other = client_at(1000, num_quota_samples=2, quota_window_size_seconds=1)
        got = other.produce(size)
        assert got == expected, (
            f"{size:g} B over one window of 1000 ms against 1000 B/s was held {got} ms; expected {expected} ms, "
            f"the nearest millisecond\n{other.told()}"
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
    assert any(throttles), f"a client sending as fast as it may was never held\n{story}"
    for rate in per_ten_seconds[1:]:
        # Kafka's rate runs about a window's worth over the quota (the oldest window is dropped whole)
        assert 900 <= rate <= 1150, (
            f"after the first 10 s a client held as told sent {rate:g} B/s over 10 s; expected about its "
            f"quota, 1000 B/s (900 to 1150)\n{story}"
        )


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


def snapshot(m: TransactionMetadata) -> dict:
    """Every field a transition may change, to compare before and after."""
    return dict(state=m.state, pending_state=m.pending_state, producer_id=m.producer_id,
                producer_epoch=m.producer_epoch, txn_timeout_ms=m.txn_timeout_ms,
                topic_partitions=sorted(m.topic_partitions), txn_start_timestamp=m.txn_start_timestamp,
                txn_last_update_timestamp=m.txn_last_update_timestamp)  # fmt: skip


def changed(before: dict, after: dict) -> str:
    return ", ".join(f"{k} {before[k]} -> {after[k]}" for k in before if before[k] != after[k])


def must_refuse(call, error: type[Exception], what: str, m: TransactionMetadata) -> Exception:
    """``call()`` must raise ``error`` and leave ``m`` as it was; the message says what was done."""
    before = snapshot(m)
    try:
        call()
    except error as e:
        refused = e
    except NotImplementedError:
        raise
    except Exception as e:
        raise AssertionError(
            f"{what}: refused with {type(e).__name__} ({e}); expected {error.__name__}"
        ) from e
    else:
        raise AssertionError(f"{what}: accepted; expected {error.__name__}, and the metadata unchanged\n"
                             f"the metadata now: {m!r}")  # fmt: skip
    after = snapshot(m)
    if after != before:
        raise AssertionError(f"{what}: refused, but the metadata changed: {changed(before, after)}")
    return refused


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_every_edge_of_the_table_is_accepted():
    for old, new in LEGAL:
        assert is_valid_transition(old, new), (
            f"is_valid_transition({old}, {new}) returned False; the table allows it: {table_row(new)}"
        )
        m = metadata_in(old)
        transit = prepare_to(m, new)
        assert transit.txn_state is new and m.pending_state is new, (
            f"preparing {old} -> {new} (in the table) gave a transit to {transit.txn_state} and pending state "
            f"{m.pending_state}; expected {new} for both"
        )
        assert m.state is old, (
            f"after preparing {old} -> {new}, before the log holds it, the state is already {m.state}"
        )


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_every_edge_not_in_the_table_is_refused():
    for old, new in ILLEGAL:
        assert not is_valid_transition(old, new), (
            f"is_valid_transition({old}, {new}) returned True; the table does not allow it: {table_row(new)}"
        )
        m = metadata_in(old)
        refused = must_refuse(
            lambda m=m, new=new: prepare_to(m, new), IllegalStateException, f"preparing {old} -> {new}", m
        )
        message = str(refused)
        assert str(old) in message and str(new) in message, (
            f"preparing {old} -> {new} was refused with {message!r}, which does not name both states in "
            "Kafka's names"
        )


@pytest.mark.stage(2)
@pytest.mark.points(1)
def test_an_id_without_a_producer_id_or_epoch_is_never_prepared():
    # An AddPartitionsToTxn reaching an id that never had its InitProducerId: -1 is "no producer id"
    # and "no epoch" (RecordBatch.NO_PRODUCER_ID, NO_PRODUCER_EPOCH), and must not be logged as a producer's.
    no_id = TransactionMetadata("txn-a", -1, 0, 60_000, T.EMPTY, txn_last_update_timestamp=0)
    must_refuse(lambda: no_id.prepare_add_partitions({TP0}, 10), ValueError,
                "preparing Empty -> Ongoing for producer id -1", no_id)  # fmt: skip
    no_epoch = TransactionMetadata(
        "txn-a", 1000, NO_PRODUCER_EPOCH, 60_000, T.EMPTY, txn_last_update_timestamp=0
    )
    must_refuse(lambda: no_epoch.prepare_add_partitions({TP0}, 10), ValueError,
                "preparing Empty -> Ongoing for producer epoch -1", no_epoch)  # fmt: skip


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_a_pending_transition_blocks_a_second_one_until_it_completes():
    m = metadata_in(T.ONGOING)
    assert not m.pending_transition_in_progress(), f"nothing prepared yet, a transition is in progress: {m!r}"
    transit = m.prepare_abort_or_commit(T.PREPARE_COMMIT, 200)
    assert m.pending_transition_in_progress() and m.state is T.ONGOING, (
        f"after preparing Ongoing -> PrepareCommit, before the log append: in progress "
        f"{m.pending_transition_in_progress()}, pending {m.pending_state}, state {m.state}; expected in "
        "progress, pending PrepareCommit, state Ongoing"
    )
    refused = must_refuse(lambda: m.prepare_abort_or_commit(T.PREPARE_ABORT, 201), IllegalStateException,
                          "preparing PrepareAbort while PrepareCommit is pending", m)  # fmt: skip
    assert "PrepareCommit" in str(refused), (
        f"a second change refused while PrepareCommit is pending, with {str(refused)!r}, which does not "
        "name the pending state"
    )
    # complete_transition_to applies only the transit that was prepared
    must_refuse(lambda: m.complete_transition_to(dataclasses.replace(transit, producer_epoch=4)),
                IllegalStateException, "completing PrepareCommit with epoch 4 where the id has epoch 3", m)  # fmt: skip
    must_refuse(lambda: m.complete_transition_to(dataclasses.replace(transit, txn_state=T.PREPARE_ABORT)),
                IllegalStateException, "completing a transit to PrepareAbort while PrepareCommit is pending", m)  # fmt: skip
    m.complete_transition_to(transit)
    got = (m.state, m.pending_state, m.txn_last_update_timestamp)
    assert got == (T.PREPARE_COMMIT, None, 200), (
        f"completing the prepared PrepareCommit (updated at 200) left state, pending state and last update "
        f"{got}; expected (PrepareCommit, None, 200)"
    )
    assert not m.pending_transition_in_progress(), f"after the completion a transition is in progress: {m!r}"
    must_refuse(lambda: m.complete_transition_to(transit), IllegalStateException,
                "completing PrepareCommit a second time, with nothing pending", m)  # fmt: skip


def completes(m: TransactionMetadata, transit, what: str) -> None:
    try:
        m.complete_transition_to(transit)
    except NotImplementedError:
        raise
    except Exception as e:
        raise AssertionError(f"{what}: the prepared transit was refused: {type(e).__name__}: {e}") from e


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_a_completion_that_is_not_the_prepared_change_is_refused_and_changes_nothing():
    """Each transition prepared by the method the coordinator calls, then completed with one field of
    its transit changed: refused, the metadata untouched, its pending state kept; then the transit as
    prepared completes."""

    def tampered(m, transit, **fields):
        def shown(v):
            return sorted(v) if isinstance(v, frozenset) else v

        what = ", ".join(
            f"{k}={shown(v)} (prepared: {shown(getattr(transit, k))})" for k, v in fields.items()
        )
        must_refuse(lambda: m.complete_transition_to(dataclasses.replace(transit, **fields)),
                    IllegalStateException, f"{m.state} -> {transit.txn_state}, the transit changed to {what}", m)  # fmt: skip

    # InitProducerId after a commit: the next epoch and the new timeout; no partitions, no start
    m = TransactionMetadata("txn-a", 7, 3, 60_000, T.COMPLETE_COMMIT, (), 100, 100)
    transit = m.prepare_increment_producer_epoch(30_000, 200)
    tampered(m, transit, producer_epoch=6)
    tampered(m, transit, topic_partitions=frozenset({TP0}))
    tampered(m, transit, txn_start_timestamp=100)
    completes(m, transit, "InitProducerId after a commit")
    got = (m.producer_id, m.producer_epoch, m.txn_timeout_ms, m.state)
    assert got == (7, 4, 30_000, T.EMPTY), (
        f"InitProducerId (timeout 30000) after a commit at epoch 3 left producer id, epoch, timeout, state "
        f"{got}; expected (7, 4, 30000, Empty)"
    )
    # its epochs ran out: a new producer id, at epoch 0
    m = TransactionMetadata("txn-a", 7, 3, 60_000, T.COMPLETE_ABORT, (), 100, 100)
    completes(m, m.prepare_producer_id_rotation(8, 60_000, 200), "InitProducerId with a new producer id")
    got = (m.producer_id, m.producer_epoch, m.state)
    assert got == (8, 0, T.EMPTY), (
        f"InitProducerId giving producer id 8 at epoch 0 left producer id, epoch, state {got}; "
        "expected (8, 0, Empty)"
    )

    # AddPartitionsToTxn in an open transaction: partitions only added, the rest unchanged
    m = TransactionMetadata("txn-a", 7, 3, 60_000, T.ONGOING, (TP0,), 100, 100)
    transit = m.prepare_add_partitions({TP1}, 200)
    tampered(m, transit, topic_partitions=frozenset({TP1}))
    tampered(m, transit, producer_epoch=4)
    tampered(m, transit, producer_id=8)
    tampered(m, transit, txn_timeout_ms=30_000)
    tampered(m, transit, txn_start_timestamp=50)
    completes(m, transit, "AddPartitionsToTxn in an open transaction")

    # EndTxn: the decision changes nothing but the state
    m = TransactionMetadata("txn-a", 7, 3, 60_000, T.ONGOING, (TP0, TP1), 100, 100)
    transit = m.prepare_abort_or_commit(T.PREPARE_COMMIT, 200)
    tampered(m, transit, topic_partitions=frozenset({TP0}))
    tampered(m, transit, txn_timeout_ms=30_000)
    tampered(m, transit, txn_start_timestamp=150)
    tampered(m, transit, producer_id=8)
    completes(m, transit, "EndTxn(commit)")

    # every marker written: the partitions cleared, the transaction's start kept
    m = TransactionMetadata("txn-a", 7, 3, 60_000, T.PREPARE_ABORT, (TP0,), 100, 100)
    transit = m.prepare_complete(200)
    tampered(m, transit, txn_start_timestamp=-1)
    tampered(m, transit, txn_timeout_ms=30_000)
    tampered(m, transit, producer_epoch=4)
    completes(m, transit, "the abort markers written")

    # an expired id leaves the cache: its Dead is never completed
    m = TransactionMetadata("txn-a", 7, 3, 60_000, T.EMPTY, (), -1, 100)
    transit = m.prepare_dead()
    must_refuse(lambda: m.complete_transition_to(transit), IllegalStateException,
                "completing Empty -> Dead (an expired id)", m)  # fmt: skip


@pytest.mark.stage(2)
@pytest.mark.points(1)
def test_a_commit_goes_empty_ongoing_prepare_commit_complete_commit():
    m = TransactionMetadata("txn-a", 1000, NO_PRODUCER_EPOCH, 60_000, T.EMPTY, txn_last_update_timestamp=0)
    steps: list[str] = []

    def step(transit, expected: T) -> None:
        before = m.state
        m.complete_transition_to(transit)
        steps.append(
            f"{before} -> {m.state} (epoch {m.producer_epoch}, partitions {sorted(m.topic_partitions)}, "
            f"start {m.txn_start_timestamp}, pending {m.pending_state})"
        )
        assert m.state is expected and m.pending_state is None, (
            f"expected {expected}, nothing pending\n" + "\n".join(steps)
        )

    step(m.prepare_increment_producer_epoch(60_000, 10), T.EMPTY)
    assert m.producer_epoch == 0, "the first InitProducerId did not give epoch 0\n" + "\n".join(steps)
    step(m.prepare_add_partitions({TP0}, 20), T.ONGOING)
    assert m.txn_start_timestamp == 20, (
        "the transaction's first partition, added at 20, did not start it at 20\n" + "\n".join(steps)
    )
    step(m.prepare_add_partitions({TP1}, 30), T.ONGOING)
    assert m.topic_partitions == {TP0, TP1} and m.txn_start_timestamp == 20, (
        "after adding orders-0 at 20 and orders-1 at 30: expected both partitions, start 20\n"
        + "\n".join(steps)
    )
    step(m.prepare_abort_or_commit(T.PREPARE_COMMIT, 40), T.PREPARE_COMMIT)
    assert m.topic_partitions == {TP0, TP1}, (
        "the commit is decided, its markers not yet written, and the partitions are gone\n" + "\n".join(steps)
    )
    step(m.prepare_complete(50), T.COMPLETE_COMMIT)
    assert m.topic_partitions == set() and m.txn_last_update_timestamp == 50, (
        "every marker written at 50: expected no partitions left, last update 50\n" + "\n".join(steps)
    )


@pytest.mark.stage(2)
@pytest.mark.points(1)
def test_an_abort_goes_through_prepare_abort_and_the_id_starts_again():
    m = metadata_in(T.ONGOING)
    must_refuse(lambda: m.prepare_complete(150), IllegalStateException,
                "completing an abort (Ongoing -> CompleteAbort) that was never decided", m)  # fmt: skip
    m.complete_transition_to(m.prepare_abort_or_commit(T.PREPARE_ABORT, 200))
    assert m.state is T.PREPARE_ABORT, f"EndTxn(abort) completed, the state is {m.state}"
    must_refuse(lambda: m.prepare_abort_or_commit(T.PREPARE_COMMIT, 250), IllegalStateException,
                "a commit (PrepareAbort -> PrepareCommit) after the abort was decided", m)  # fmt: skip
    m.complete_transition_to(m.prepare_complete(300))
    got = (m.state, m.topic_partitions)
    assert got == (T.COMPLETE_ABORT, set()), f"the abort markers written: state, partitions {got}"
    m.complete_transition_to(m.prepare_increment_producer_epoch(60_000, 400))
    got = (m.state, m.producer_epoch)
    assert got == (T.EMPTY, 4), (
        f"InitProducerId after the abort at epoch 3: state, epoch {got}; expected (Empty, 4)"
    )


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
