"""Lab 20 graded tests: the analyses of Jepsen's Kafka checker, on small histories and recorded ones.

Each stage's tests first hold the learner's functions to a history of a few operations written out
here, one rule at a time, then to histories recorded from kafka_lite's own clusters
(``histories/``, with their provenance in ``histories/README.md``): runs of the workload, clean and
with bugs planted in the brokers, and the chapter 10 reproductions, cut to the keys that matter. A
failure names the history, the key, the values and the operations (by their index in the history,
which is their line in the file, counted from 0).

The functions are called the way the checker's ``analysis`` calls them, on an ``_Index`` of the
history: ``version_orders``, ``duplicate_cases``, ``lost_write_cases``, ``g1a_cases``,
``precommitted_read_cases``, and for the wr-cycle ``cycle_cases`` (whose search is given; it finds
the cycles in the graph the learner's ``data_edges`` builds).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafka_lite.jepsen.checker import (
    WR,
    _Index,
    cycle_cases,
    data_edges,
    duplicate_cases,
    g1a_cases,
    lost_write_cases,
    precommitted_read_cases,
    version_orders,
)
from kafka_lite.jepsen.history import Op, read_history

pytestmark = [pytest.mark.lab(20)]

HISTORIES = Path(__file__).parent / "histories"
ANSWERS = json.loads((HISTORIES / "answers.json").read_text(encoding="utf-8"))
RECORDED = sorted(ANSWERS)


class Script:
    """A history written out by hand: ``op`` appends an invocation and its completion."""

    def __init__(self) -> None:
        self.ops: list[Op] = []

    def _append(self, type: str, process: int, f: str, value) -> Op:
        op = Op(len(self.ops), type, process, f, value, len(self.ops) * 1_000_000)
        self.ops.append(op)
        return op

    def told(self) -> str:
        """The history as the tests wrote it: one line per completed operation."""
        lines = ["the history (op: the completion's index):"]
        for op in self.ops:
            if op.is_invoke:
                continue
            parts = []
            for mop in op.value:
                if mop[0] == "send":
                    offset, v = mop[2]
                    parts.append(f"send {mop[1]} <- {v} @{'?' if offset is None else offset}")
                else:
                    reads = "; ".join(
                        f"{k}: " + ", ".join(f"{v} @{o}" for o, v in pairs) for k, pairs in mop[1].items()
                    )
                    parts.append(f"poll {reads}")
            lines.append(f"  op {op.index:>2}  process {op.process}  {op.type:<4}  " + " | ".join(parts))
        return "\n".join(lines)

    def op(self, process: int, *mops, type: str = "ok", f: str = "txn") -> int:
        """A txn (or ``f``) of ``mops``, written completed: ``send(k, v, offset)`` and
        ``poll({k: [(offset, v), ...]})``. Returns the completion's index."""
        invoked = [("send", m[1], m[2][1] if isinstance(m[2], tuple) else m[2]) if m[0] == "send" else ("poll",)
                   for m in mops]  # fmt: skip
        self._append("invoke", process, f, invoked)
        return self._append(type, process, f, list(mops)).index


def send(k: int, v: int, offset: int | None = None) -> tuple:
    return ("send", k, (offset, v))


def poll(records: dict[int, list[tuple[int, int]]]) -> tuple:
    return ("poll", records)


def recorded(name: str) -> tuple[list[Op], dict]:
    return read_history(HISTORIES / f"{name}.jsonl"), ANSWERS[name]


def every_recorded_history(check) -> None:
    """``check(name)`` on each recorded history; the test fails with every history's failure."""
    assert RECORDED, f"no recorded history in {HISTORIES / 'answers.json'}: the checkout is incomplete"
    failures = []
    for name in RECORDED:
        try:
            check(name)
        except AssertionError as e:
            failures.append(str(e))
    assert not failures, f"{len(failures)} of the {len(RECORDED)} recorded histories:\n\n" + "\n\n".join(
        failures
    )


def where(name: str) -> str:
    return f"the recorded history {name}.jsonl (labs/lab20_jepsen_checker/histories/)"


def orders_of(script: Script) -> tuple[dict, list[dict]]:
    try:
        orders, inconsistent = version_orders(_Index(script.ops))
    except NotImplementedError:
        raise
    except Exception as e:
        raise AssertionError(f"version_orders raised {type(e).__name__}: {e}\n{script.told()}") from e
    return {k: order.log for k, order in orders.items()}, inconsistent


def keyed(errors: list[dict], *fields: str) -> list[tuple]:
    return sorted(tuple(e[f] for f in fields) for e in errors)


# --- stage 1: the version order ----------------------------------------------------------------------


def differences(expected: dict, got: dict) -> str:
    """The keys whose version orders differ, each with both."""
    keys = sorted(set(expected) | set(got))
    return "\n".join(
        f"  key {k}: expected {expected.get(k, 'no version order')}, got {got.get(k, 'no version order')}"
        for k in keys
        if expected.get(k) != got.get(k)
    )


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_each_keys_version_order_is_built_from_every_poll_and_the_committed_sends():
    s = Script()
    s.op(0, send(0, 1, 0), f="send")
    s.op(0, send(0, 2, 1), f="send")
    s.op(1, poll({0: [(0, 1), (1, 2), (3, 4)]}), f="poll")  # 4 at offset 3: sent by an op still unknown
    s.op(2, send(0, 4, 3), type="info", f="send")
    s.op(2, send(1, 9, 0), type="fail")  # failed: its offset says nothing about the log
    s.op(3, poll({1: [(1, 7)]}), send(1, 8, None), type="fail")  # a failed op's poll still saw 7 at 1
    s.op(4, send(0, 5, None), f="send")  # acknowledged, its offset unknown
    s.op(5, send(2, 20, 0), send(2, 21, 1), type="info")  # unknown, but 20 was read: it committed
    s.op(6, poll({2: [(0, 20)]}), f="poll")
    orders, inconsistent = orders_of(s)
    expected = {0: [[1], [2], [4]], 1: [[7]], 2: [[20], [21]]}
    assert orders == expected and not inconsistent, (
        "the version orders (each key's values, offset by offset, skipping the offsets nobody saw) differ:\n"
        f"{differences(expected, orders)}\ninconsistent offsets reported: {inconsistent}\n{s.told()}"
    )


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_two_values_at_one_offset_are_inconsistent_offsets():
    s = Script()
    s.op(0, send(0, 1, 0), f="send")
    s.op(1, send(0, 2, 0), f="send")  # acknowledged at the same offset
    s.op(2, poll({0: [(0, 2), (1, 3)]}), f="poll")
    s.op(3, poll({1: [(5, 10)]}), f="poll")
    s.op(3, poll({1: [(5, 11), (6, 12)]}), f="poll")
    orders, inconsistent = orders_of(s)
    want = {0: [[1, 2], [3]], 1: [[10, 11], [12]]}
    assert orders == want, f"the version orders differ:\n{differences(want, orders)}\n{s.told()}"
    expected = [{"key": 0, "offset": 0, "index": 0, "values": [1, 2]},
                {"key": 1, "offset": 5, "index": 0, "values": [10, 11]}]  # fmt: skip
    got = sorted(inconsistent, key=lambda e: e["key"])
    assert got == expected, (
        f"the inconsistent offsets differ:\nexpected {expected}\ngot      {got}\n{s.told()}"
    )


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_one_value_at_two_offsets_is_a_duplicate():
    s = Script()
    s.op(0, send(0, 1, 0), f="send")
    s.op(0, send(0, 2, 1), f="send")
    s.op(1, poll({0: [(0, 1), (1, 2), (2, 1), (3, 3)]}), f="poll")  # 1 again, at offset 2
    s.op(1, poll({1: [(0, 5)]}), f="poll")
    s.op(2, send(2, 1, 0), f="send")  # 1 again, but on another key
    s.op(2, poll({2: [(0, 1)]}), f="poll")
    orders, _ = orders_of(s)
    errors = duplicate_cases(version_orders(_Index(s.ops))[0])
    expected = [{"key": 0, "value": 1, "count": 2, "offsets": [0, 2]}]
    assert errors == expected, (
        f"the duplicates differ:\nexpected {expected}\ngot      {errors}\nthe version orders: {orders}\n{s.told()}"
    )


@pytest.mark.stage(1)
@pytest.mark.points(3)
def test_the_recorded_histories_version_orders():
    def check(name: str) -> None:
        ops, answers = recorded(name)
        index = _Index(ops)
        orders, inconsistent = version_orders(index)
        lengths = {str(k): len(order.log) for k, order in orders.items()}
        assert lengths == answers["version_order_lengths"], (
            f"{where(name)}: each key's version order has one entry per offset anybody saw a value at; "
            f"expected these lengths, by key: {answers['version_order_lengths']}, got {lengths}"
        )
        got = keyed(inconsistent, "key", "offset", "values")
        want = [tuple(e) for e in answers["inconsistent-offsets"]]
        assert got == want, (
            f"{where(name)}: the inconsistent offsets, as (key, offset, values): expected {want}, got {got}"
        )
        got = keyed(duplicate_cases(orders), "key", "value", "offsets")
        want = [tuple(e) for e in answers["duplicate"]]
        assert got == want, (
            f"{where(name)}: the duplicates, as (key, value, offsets): expected {want}, got {got}"
        )

    every_recorded_history(check)


# --- stage 2: lost writes ----------------------------------------------------------------------------


def lost(ops: list[Op]) -> list[tuple]:
    index = _Index(ops)
    return keyed(lost_write_cases(index, version_orders(index)[0]), "key", "value")


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_an_acknowledged_write_below_a_value_somebody_read_is_lost_if_nobody_read_it():
    s = Script()
    for v in (1, 2, 3, 4):
        s.op(0, send(0, v, v - 1), f="send")
    reader = s.op(1, poll({0: [(0, 1), (2, 3)]}), f="poll")  # 3 read; 2, below it, never
    index = _Index(s.ops)
    (error,) = lost_write_cases(index, version_orders(index)[0]) or [None]
    expected = {"key": 0, "value": 2, "index": 1, "max_read_index": 2, "writer": 3, "max_read": reader}
    assert error == expected, (
        f"the lost writes found: {lost_write_cases(index, version_orders(index)[0])}\nexpected one, {expected}\n"
        f"{s.told()}"
    )
    assert lost(s.ops) == [(0, 2)], (
        f"lost writes (key, value): expected [(0, 2)], got {lost(s.ops)}\n{s.told()}"
    )
    s.op(2, poll({0: [(1, 2)]}), type="info", f="poll")
    assert lost(s.ops) == [(0, 2)], (
        f"after an info poll returned 2, lost writes (key, value): expected [(0, 2)], got {lost(s.ops)}\n"
        f"{s.told()}"
    )
    s.op(3, poll({0: [(1, 2)]}), f="poll")
    assert lost(s.ops) == [], (
        f"after an ok poll read 2, lost writes (key, value): expected none, got {lost(s.ops)}\n{s.told()}"
    )


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_only_a_write_that_must_have_committed_can_be_lost():
    s = Script()
    s.op(0, send(0, 1, 0), f="send")
    s.op(
        0, send(0, 2, 1), type="info", f="send"
    )  # unknown, and nobody read it: it may never have been written
    s.op(1, send(0, 3, 2), type="fail", f="send")
    s.op(2, send(0, 4, 3), f="send")
    s.op(3, poll({0: [(0, 1), (3, 4)]}), f="poll")
    s.op(4, poll({0: [(2, 3)]}), type="fail", f="poll")  # a failed op's read: evidence of the log, not a read
    got = lost(s.ops)
    assert got == [], f"lost writes (key, value): expected none, got {got}\n{s.told()}"
    s.op(5, send(0, 5, 4), f="send")
    s.op(6, poll({0: [(4, 5)]}), f="poll")
    s.op(6, send(0, 6, 5), type="info", f="send")
    s.op(7, poll({0: [(5, 6)]}), f="poll")
    s.op(8, poll({1: [(0, 1)]}), f="poll")
    got = lost(s.ops)
    assert got == [], f"lost writes (key, value): expected none, got {got}\n{s.told()}"


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_the_bound_is_the_highest_value_read_by_an_ok_op():
    s = Script()
    for v in (1, 2, 3):
        s.op(0, send(0, v, v - 1), f="send")
    s.op(1, poll({0: [(0, 1)]}), f="poll")
    s.op(1, poll({0: [(2, 3)]}), type="info", f="poll")  # not ok: its reads set no bound
    got = lost(s.ops)
    assert got == [], f"lost writes (key, value): expected none, got {got}\n{s.told()}"


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_a_value_at_two_places_is_accused_only_where_no_reading_excuses_it():
    # 1 sits at offset 0 and again at offset 2 (an info poll saw it there): an ok read of 1 may have
    # been of either place.
    s = Script()
    s.op(0, send(0, 1, 0), f="send")
    s.op(0, send(0, 2, 1), f="send")
    s.op(1, poll({0: [(2, 1)]}), type="info", f="poll")
    s.op(2, poll({0: [(0, 1)]}), f="poll")
    got = lost(s.ops)
    assert got == [], (
        f"an ok op read 1, which sits at offsets 0 and 2; lost writes (key, value): expected none, got {got}\n"
        f"{s.told()}"
    )
    # 2 read: is 1, at offset 0 below it and at offset 2 above it, lost?
    s = Script()
    s.op(0, send(0, 1, 0), f="send")
    s.op(0, send(0, 2, 1), f="send")
    s.op(1, poll({0: [(2, 1)]}), type="info", f="poll")
    s.op(2, poll({0: [(1, 2)]}), f="poll")
    got = lost(s.ops)
    assert got == [], (
        f"an ok op read 2 at offset 1; 1 sits at offsets 0 and 2; lost writes (key, value): expected none, got "
        f"{got}\n{s.told()}"
    )


@pytest.mark.stage(2)
@pytest.mark.points(3)
def test_the_recorded_histories_lost_writes():
    def check(name: str) -> None:
        ops, answers = recorded(name)
        got = lost(ops)
        want = [tuple(e) for e in answers["lost-write"]]
        assert got == want, f"{where(name)}: the lost writes, as (key, value): expected {want}, got {got}"

    every_recorded_history(check)


# --- stage 3: aborted reads --------------------------------------------------------------------------


@pytest.mark.stage(3)
@pytest.mark.points(2)
def test_an_ok_read_of_a_failed_write_is_g1a():
    s = Script()
    aborted = s.op(0, send(0, 1, 0), send(1, 2, 0), send(1, 5, 1), type="fail")
    s.op(1, poll({0: [(0, 1)]}), f="poll")
    reader = s.op(2, poll({1: [(0, 2), (1, 5)]}), send(1, 3, 2))
    s.op(3, poll({0: [(0, 1)]}), type="fail")
    s.op(4, send(0, 4, 1), type="info")
    s.op(5, poll({0: [(1, 4)]}), f="poll")
    got = sorted(g1a_cases(_Index(s.ops)), key=lambda e: (e["key"], e["reader"], e["value"]))
    expected = [{"key": 0, "value": 1, "writer": aborted, "reader": 3},
                {"key": 1, "value": 2, "writer": aborted, "reader": reader},
                {"key": 1, "value": 5, "writer": aborted, "reader": reader}]  # fmt: skip
    assert got == expected, f"the G1a cases differ:\nexpected {expected}\ngot      {got}\n{s.told()}"


@pytest.mark.stage(3)
@pytest.mark.points(2)
def test_a_transaction_that_reads_its_own_write_read_it_before_it_committed():
    s = Script()
    own = s.op(0, send(0, 3, 0), send(0, 1, 1), poll({0: [(0, 3), (1, 1)]}))  # 3 read first; 1 is smaller
    s.op(1, send(1, 5, 0), poll({1: [(0, 4)]}))  # 4 is someone else's
    both = s.op(2, send(2, 7, 0), send(2, 8, 1), poll({2: [(0, 7), (1, 8)]}), type="info")
    twice = s.op(3, send(3, 1, 0), send(4, 2, 0), poll({4: [(0, 2)], 3: [(0, 1)]}))  # sent to 3 first
    got = sorted(precommitted_read_cases(_Index(s.ops)), key=lambda e: e["op"])
    expected = [{"op": own, "key": 0, "value": 1}, {"op": both, "key": 2, "value": 7},
                {"op": twice, "key": 3, "value": 1}]  # fmt: skip
    assert got == expected, f"the precommitted reads differ:\nexpected {expected}\ngot      {got}\n{s.told()}"


@pytest.mark.stage(3)
@pytest.mark.points(3)
def test_the_recorded_histories_aborted_reads():
    def check(name: str) -> None:
        ops, answers = recorded(name)
        index = _Index(ops)
        got = keyed(g1a_cases(index), "key", "value", "reader")
        want = [tuple(e) for e in answers["G1a"]]
        assert got == want, (
            f"{where(name)}: the G1a reads, as (key, value, reader op): expected {want}, got {got}"
        )
        got = keyed(precommitted_read_cases(index), "op", "key", "value")
        want = [tuple(e) for e in answers["precommitted-read"]]
        assert got == want, (
            f"{where(name)}: the precommitted reads, as (op, key, value): expected {want}, got {got}"
        )

    every_recorded_history(check)


# --- stage 4: the wr-cycle ---------------------------------------------------------------------------


def cycles(ops: list[Op]) -> dict:
    return {name: [e["cycle"] for e in errs] for name, errs in cycle_cases(_Index(ops), {}, False).items()}


@pytest.mark.stage(4)
@pytest.mark.points(2)
def test_two_transactions_that_read_each_others_writes_are_a_g1c_cycle():
    s = Script()
    t1 = s.op(0, send(0, 1, 0), poll({1: [(0, 2)]}))
    t2 = s.op(1, send(1, 2, 0), poll({0: [(0, 1)]}))
    got = cycles(s.ops)
    expected = {"G1c": [[t1, t2, t1]]}
    assert got == expected, (
        f"the cycles found (by class, the ops round each): expected {expected}, got {got}\n{s.told()}"
    )


@pytest.mark.stage(4)
@pytest.mark.points(2)
def test_a_chain_is_no_cycle_and_a_cycle_closed_by_a_processs_order_is_g1c_process():
    s = Script()
    s.op(0, send(0, 1, 0))
    s.op(1, poll({0: [(0, 1)]}), send(1, 2, 0))
    s.op(0, poll({1: [(0, 2)]}))
    got = cycles(s.ops)
    assert got == {}, f"the cycles found (by class, the ops round each): expected none, got {got}\n{s.told()}"
    s = Script()
    t1 = s.op(0, poll({1: [(0, 2)]}), send(0, 1, 0))
    s.op(1, poll({0: [(0, 1)]}))
    t3 = s.op(0, send(1, 2, 0))  # process 0 ran t1 first, yet t1 read t3's write
    got = cycles(s.ops)
    expected = {"G1c-process": [[t1, t3, t1]]}
    assert got == expected, (
        f"the cycles found (by class, the ops round each): expected {expected}, got {got}\n{s.told()}"
    )


@pytest.mark.stage(4)
@pytest.mark.points(1)
def test_within_a_component_only_the_writers_in_it_link():
    s = Script()
    outside = s.op(0, send(0, 1, 0))
    writer = s.op(1, send(0, 2, 1))
    reader = s.op(2, poll({0: [(0, 1), (1, 2)]}))
    edges: dict = {}
    data_edges(_Index(s.ops), {}, False, edges, among={writer, reader})
    assert edges == {writer: {reader: WR}}, (
        f"the edges data_edges added for one component, among={{{writer}, {reader}}} (op {outside} is outside it): "
        f"expected {{{writer}: {{{reader}: WR}}}}, got {edges}\n{s.told()}"
    )


@pytest.mark.stage(4)
@pytest.mark.points(1)
def test_a_value_nobody_sent_makes_no_edge():
    s = Script()
    t1 = s.op(0, send(0, 1, 0), poll({1: [(0, 99)]}))  # 99: nobody sent it
    t2 = s.op(1, send(1, 2, 1), poll({0: [(0, 1)]}))
    got = cycles(s.ops)
    assert got == {}, f"the cycles found (by class, the ops round each): expected none, got {got}\n{s.told()}"
    edges: dict = {}
    data_edges(_Index(s.ops), {}, False, edges, among={t1, t2})
    assert edges == {t1: {t2: WR}}, (
        f"the edges data_edges added for the component among={{{t1}, {t2}}}: expected {{{t1}: {{{t2}: WR}}}}, "
        f"got {edges}\n{s.told()}"
    )


@pytest.mark.stage(4)
@pytest.mark.points(3)
def test_the_recorded_histories_wr_cycles():
    def check(name: str) -> None:
        ops, answers = recorded(name)
        got = {k: len(v) for k, v in cycles(ops).items()}
        want = answers["cycles"]
        assert got == want, f"{where(name)}: the cycles found, by class, how many: expected {want}, got {got}"

    every_recorded_history(check)
