"""The transaction state table and TransactionMetadata's two-step transitions (after Kafka 0.11's
TransactionMetadataTest): every transition the table refuses raises, every one it allows is
prepared, and a completed transition changes exactly what Kafka's does."""

from __future__ import annotations

import itertools

import pytest

from kafka_lite.common.errors import IllegalStateException
from kafka_lite.coordinator.transaction.transaction_metadata import (
    NO_PRODUCER_EPOCH,
    SHORT_MAX,
    TRANSITION_EVENTS,
    VALID_PREVIOUS_STATES,
    TransactionMetadata,
    TransactionState,
    byte_to_state,
    is_valid_transition,
)

pytestmark = pytest.mark.unit

TxnState = TransactionState
TP0, TP1 = ("orders", 0), ("orders", 1)


def test_the_state_bytes_are_kafkas():
    assert {s.kafka_name: s.byte for s in TxnState} == {
        "Empty": 0, "Ongoing": 1, "PrepareCommit": 2, "PrepareAbort": 3,
        "CompleteCommit": 4, "CompleteAbort": 5, "Dead": 6,
    }  # fmt: skip
    assert all(byte_to_state(s.byte) is s for s in TxnState)
    with pytest.raises(IllegalStateException, match="Unknown transaction state byte 7"):
        byte_to_state(7)


def test_the_table_is_kafkas_valid_previous_states():
    assert VALID_PREVIOUS_STATES == {
        TxnState.EMPTY: {TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT},
        TxnState.ONGOING: {
            TxnState.ONGOING,
            TxnState.EMPTY,
            TxnState.COMPLETE_COMMIT,
            TxnState.COMPLETE_ABORT,
        },
        TxnState.PREPARE_COMMIT: {TxnState.ONGOING},
        TxnState.PREPARE_ABORT: {TxnState.ONGOING},
        TxnState.COMPLETE_COMMIT: {TxnState.PREPARE_COMMIT},
        TxnState.COMPLETE_ABORT: {TxnState.PREPARE_ABORT},
        TxnState.DEAD: {TxnState.EMPTY, TxnState.COMPLETE_ABORT, TxnState.COMPLETE_COMMIT},
    }
    # the picture's edges are exactly the table's
    assert set(TRANSITION_EVENTS) == {
        (old, new) for new, olds in VALID_PREVIOUS_STATES.items() for old in olds
    }


def metadata(state: TxnState, partitions=(TP0,)) -> TransactionMetadata:
    start = -1 if state is TxnState.EMPTY else 100
    return TransactionMetadata(
        "txn", 7, 3, 60_000, state, () if state is TxnState.EMPTY else partitions, start, 100
    )


def prepare(m: TransactionMetadata, target: TxnState):
    """The prepare_* method that aims at ``target`` (Kafka's call for that transition)."""
    if target is TxnState.EMPTY:
        return m.prepare_increment_producer_epoch(60_000, 200)
    if target is TxnState.ONGOING:
        return m.prepare_add_partitions({TP1}, 200)
    if target in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
        return m.prepare_abort_or_commit(target, 200)
    if target in (TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT):
        return m.prepare_complete(200)
    return m.prepare_dead()


@pytest.mark.parametrize(
    "old,new",
    [(o, n) for o, n in itertools.product(TxnState, TxnState) if not is_valid_transition(o, n) and n is not TxnState.COMPLETE_ABORT
     and n is not TxnState.COMPLETE_COMMIT],
    ids=str,
)  # fmt: skip
def test_every_transition_the_table_refuses_raises(old, new):
    m = metadata(old)
    with pytest.raises(IllegalStateException, match=f"transition to {new} failed") as e:
        prepare(m, new)
    assert f"current state {old}" in str(e.value)
    assert m.pending_state is None and m.state is old


@pytest.mark.parametrize(
    "old",
    [s for s in TxnState if s is not TxnState.PREPARE_COMMIT and s is not TxnState.PREPARE_ABORT],
    ids=str,
)
def test_complete_is_refused_unless_prepared(old):
    """prepare_complete aims at CompleteCommit or CompleteAbort by the current state; from any
    state but Prepare* the table refuses it."""
    m = metadata(old)
    with pytest.raises(IllegalStateException, match="is not a valid previous state"):
        m.prepare_complete(200)
    assert m.pending_state is None


@pytest.mark.parametrize(
    "old,new",
    [(o, n) for n, olds in VALID_PREVIOUS_STATES.items() for o in sorted(olds, key=lambda s: s.byte)],
    ids=str,
)
def test_every_transition_the_table_allows_is_prepared(old, new):
    m = metadata(old)
    if new in (TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT):
        transit = m.prepare_complete(200)
    else:
        transit = prepare(m, new)
    assert transit.txn_state is new and m.pending_state is new
    assert m.state is old  # nothing changes before complete_transition_to


def test_a_second_prepare_while_one_is_pending_is_refused():
    m = metadata(TxnState.ONGOING)
    m.prepare_abort_or_commit(TxnState.PREPARE_COMMIT, 200)
    with pytest.raises(IllegalStateException, match="while it already a pending state PrepareCommit"):
        m.prepare_abort_or_commit(TxnState.PREPARE_ABORT, 200)


def test_a_whole_transaction_from_init_to_complete_commit():
    m = TransactionMetadata("txn", 7, NO_PRODUCER_EPOCH, 60_000, TxnState.EMPTY, txn_last_update_timestamp=0)
    m.complete_transition_to(m.prepare_increment_producer_epoch(30_000, 10))
    assert (m.producer_epoch, m.txn_timeout_ms, m.state) == (0, 30_000, TxnState.EMPTY)
    m.complete_transition_to(m.prepare_add_partitions({TP0}, 20))
    assert (m.state, m.topic_partitions, m.txn_start_timestamp) == (TxnState.ONGOING, {TP0}, 20)
    m.complete_transition_to(m.prepare_add_partitions({TP1}, 30))
    assert m.topic_partitions == {TP0, TP1} and m.txn_start_timestamp == 20  # the start stays
    m.complete_transition_to(m.prepare_abort_or_commit(TxnState.PREPARE_COMMIT, 40))
    assert m.state is TxnState.PREPARE_COMMIT and m.topic_partitions == {TP0, TP1}
    complete = m.prepare_complete(50)
    m.remove_partition(TP0)
    m.remove_partition(TP1)
    m.complete_transition_to(complete)
    assert (m.state, m.topic_partitions, m.txn_last_update_timestamp) == (TxnState.COMPLETE_COMMIT, set(), 50)
    # the next transaction starts anew
    m.complete_transition_to(m.prepare_add_partitions({TP1}, 60))
    assert m.txn_start_timestamp == 60


def test_fencing_bumps_the_epoch_at_once_and_the_next_init_bumps_it_again():
    m = metadata(TxnState.ONGOING)
    transit = m.prepare_fence_producer_epoch()
    assert m.producer_epoch == transit.producer_epoch == 4 and m.pending_state is None
    with pytest.raises(IllegalStateException, match=r"Short\.MaxValue"):
        TransactionMetadata("t", 1, SHORT_MAX, 1, TxnState.ONGOING).prepare_fence_producer_epoch()


def test_an_exhausted_epoch_rotates_the_producer_id():
    m = TransactionMetadata("t", 1, SHORT_MAX - 1, 1000, TxnState.COMPLETE_COMMIT, (), 5, 5)
    assert m.is_producer_epoch_exhausted()
    with pytest.raises(IllegalStateException, match="Cannot allocate any more producer epochs"):
        m.prepare_increment_producer_epoch(1000, 10)
    m.complete_transition_to(m.prepare_producer_id_rotation(2, 1000, 10))
    assert (m.producer_id, m.producer_epoch) == (2, 0)


def test_complete_refuses_a_transition_other_than_the_one_prepared():
    m = metadata(TxnState.ONGOING)
    other = metadata(TxnState.ONGOING).prepare_abort_or_commit(TxnState.PREPARE_ABORT, 200)
    m.prepare_abort_or_commit(TxnState.PREPARE_COMMIT, 200)
    with pytest.raises(IllegalStateException, match="failed transition to state"):
        m.complete_transition_to(other)
    with pytest.raises(IllegalStateException, match="does not have a pending state"):
        metadata(TxnState.ONGOING).complete_transition_to(other)


def test_dead_is_never_completed_and_partitions_are_removed_only_while_prepared():
    m = metadata(TxnState.EMPTY)
    with pytest.raises(IllegalStateException, match="only acceptable completion"):
        m.complete_transition_to(m.prepare_dead())
    with pytest.raises(IllegalStateException, match="txn marker has been sent"):
        metadata(TxnState.ONGOING).remove_partition(TP0)
