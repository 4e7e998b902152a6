"""The checker: what a history of sends and polls proves about the promises Kafka makes per partition.

No Kafka twin: a port of the analysis in Jepsen's Kafka workload (``analysis``, ``condense-error``,
``allowed-error-types`` and ``checker`` in ``jepsen/src/jepsen/tests/kafka.clj``), with Elle's cycle
search (``elle.txn``) done by networkx. Jepsen's names, in snake_case, throughout.
Book:    beyond the book: chapter 13 (testing Kafka's promises)
Labs:    lab 20 (``version_orders``, ``duplicate_cases``; ``lost_write_cases``; ``g1a_cases``,
         ``precommitted_read_cases``; the wr edges of ``data_edges``)
Differs: Jepsen searches each strongly connected component with a time-boxed BFS; here the shortest
         cycle through at most ``CANDIDATE_EDGES`` edges of the kind a class needs is reported, so
         a huge component yields a short cycle, not always the shortest. Process edges are built
         beside the realtime ones (Jepsen asks Elle for realtime only, so it names a cycle one
         process closes ``-realtime``). Where an offset holds two values the version order takes
         the smallest (Jepsen's pick depends on hashing); a value nobody sent is skipped where
         Jepsen stops with an error. A history with no send, poll or txn op is
         ``empty-transaction-graph``, Elle's verdict on a run that checked nothing.

Kafka promises, for each partition (here a key): one value per offset, offsets that only grow, each
acknowledged record kept, an idempotent producer's record written once, a read_committed consumer
never shown an aborted record or an open transaction's, and a consumer's polls walking the log in
order within an assignment. A client sees none of that directly: it sees offsets and values. So the
checker rebuilds, for every key, the *version order* (the log as every client saw it, offset ->
values) and holds each op's sends and polls against it:

- the log itself: ``inconsistent-offsets`` (two values at one offset), ``duplicate`` (one value at
  two offsets);
- transactions: ``G1a`` (a failed op's write read), ``precommitted-read`` (an op read its own
  write before committing), and the cycles ``G0`` / ``G1c`` over write-write and write-read
  dependencies (with ``-process`` and ``-realtime`` when a process's order or real time closes them);
- durability: ``lost-write`` (a write below what somebody read, never read itself), ``unseen`` (an
  acknowledged write nobody ever read);
- order: ``poll-skip`` / ``nonmonotonic-poll`` across a process's polls, ``int-poll-skip`` /
  ``int-nonmonotonic-poll`` within one op, ``nonmonotonic-send`` / ``int-nonmonotonic-send`` /
  ``int-send-skip`` for a producer's sends.

The log is built in *dense indexes* as well as offsets: transaction markers take offsets no client
reads, so a skip is measured in records, not offsets.
"""

from __future__ import annotations

import gc
import itertools
import math
from collections import defaultdict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from operator import itemgetter
from typing import Any

import networkx as nx

from kafka_lite.jepsen.history import NEMESIS, Op

CLIENT_FUNCTIONS = ("send", "poll", "txn")
_first, _second = itemgetter(0), itemgetter(1)

# The edges of the dependency graph, as bits so one pair of ops carries every relation between them.
WW = 1  # a wrote the value just before b's in some key's version order
WR = 2  # b read a value a wrote
PROCESS = 4  # one process ran a, then b
REALTIME = 8  # a completed before b was invoked

# Elle's cycle classes as (name, edges allowed, edges required), in Elle's order of depth: a class
# found in a component makes the classes it implies (below) redundant there.
CYCLE_SPECS = (
    ("G0", WW, ()),
    ("G0-process", WW | PROCESS, (PROCESS,)),
    ("G1c", WW | WR, (WR,)),
    ("G0-realtime", WW | PROCESS | REALTIME, (REALTIME,)),
    ("G1c-process", WW | WR | PROCESS, (WR, PROCESS)),
    ("G1c-realtime", WW | WR | PROCESS | REALTIME, (WR, REALTIME)),
)
_IMPLIED = {
    "G0": {"G1c", "G0-process", "G1c-process", "G0-realtime", "G1c-realtime"},
    "G0-process": {"G1c-process", "G0-realtime", "G1c-realtime"},
    "G0-realtime": {"G1c-realtime"},
    "G1c": {"G1c-process", "G1c-realtime"},
    "G1c-process": {"G1c-realtime"},
    "G1c-realtime": set(),
}
CANDIDATE_EDGES = 32  # edges tried as a cycle's start in each component, per class

# condense-error: how many examples of each class to keep, and which end of the order by the sort key.
_CONDENSE = {
    "duplicate": (lambda e: e["count"], 32, "first"),
    "inconsistent-offsets": (lambda e: len(e["values"]), 32, "first"),
    "int-nonmonotonic-poll": (lambda e: e["delta"], 8, "first"),
    "int-nonmonotonic-send": (lambda e: e["delta"], 8, "first"),
    "nonmonotonic-poll": (lambda e: e["delta"], 8, "first"),
    "nonmonotonic-send": (lambda e: e["delta"], 8, "first"),
    "int-poll-skip": (lambda e: e["delta"], 8, "last"),
    "int-send-skip": (lambda e: e["delta"], 8, "last"),
    "poll-skip": (lambda e: e["delta"], 8, "last"),
    **{name: (lambda e: len(e["steps"]), 8, "first") for name, _, _ in CYCLE_SPECS},
}
UNSEEN_EXAMPLES = 32


def allowed_error_types(*, ww_deps: bool = False, subscribe: bool = False) -> set[str]:
    """The classes a run may show and still be valid (Jepsen's ``allowed-error-types``).

    ``int-send-skip``: a transaction's sends interleave with other producers' in the log; Kafka
    promises no gap-free run of one producer's records. ``G0`` in every form: Kafka isolates no
    writes, so two transactions may order their writes to two partitions differently. With
    ``subscribe``, the group coordinator moves partitions between consumers at any time, so a
    process's next poll may start anywhere: ``poll-skip`` and ``nonmonotonic-poll``. With ww
    edges, ``G1c``: t0 <ww t1 <wr t0 is ordinary without write isolation."""
    allowed = {"int-send-skip", "G0", "G0-process", "G0-realtime"}
    if subscribe:
        allowed |= {"poll-skip", "nonmonotonic-poll"}
    if ww_deps:
        allowed |= {"G1c", "G1c-process", "G1c-realtime"}
    return allowed


class VersionOrder:
    """One key's log as the clients saw it: ``offsets[i]`` is the i-th offset anybody saw a value at
    (the dense index i), ``log[i]`` the values seen there (sorted), ``by_index[i]`` one of them and
    ``by_value`` each value's dense index. Two values at one offset are an error reported
    elsewhere; ``by_index`` picks the smallest so the order does not depend on hashing."""

    def __init__(self, log: dict[Any, set]) -> None:
        self.offsets = sorted(log)
        self.log = [sorted(log[offset]) for offset in self.offsets]
        self.by_index = [values[0] for values in self.log]
        self.by_value = {value: i for i, value in enumerate(self.by_index)}

    def previous_value(self, value: Any) -> Any:
        i = self.by_value.get(value)
        return self.by_index[i - 1] if i else None

    def value_first_index(self) -> dict:
        """Each value's first dense index (``log->value->first-index``)."""
        first: dict = {}
        for i, values in enumerate(self.log):
            for value in values:
                first.setdefault(value, i)
        return first

    def last_index_values(self) -> list[list]:
        """For each dense index, the values seen *last* there (``log->last-index->values``)."""
        last = {value: i for i, values in enumerate(self.log) for value in values}
        out: list[list] = [[] for _ in self.log]
        for value, i in last.items():
            out[i].append(value)
        return [sorted(values) for values in out]


class _Index:
    """The indexes every rule reads, built in one pass over the history (Jepsen's ``op-reads``,
    ``writer-of``, ``reads-by-type``, ``writes-by-type``, ``by-process``). Readers are found
    through ``reads`` and ``writer_of`` rather than a ``readers-of`` map: only a lost write's
    example needs to name one."""

    def __init__(self, history: Iterable[Op]) -> None:
        self.ops: list[Op] = [op for op in history if op.process != NEMESIS]
        self.completions: list[Op] = []  # the completed send, poll and txn ops, in order
        self.reads: dict[int, dict[Any, list]] = {}  # completion index -> key -> values in order
        self.read_offsets: dict[int, dict[Any, list]] = {}  # ... -> key -> offsets polled
        self.writes: dict[int, dict[Any, list]] = {}  # completion index -> key -> values sent
        self.write_offsets: dict[int, dict[Any, list]] = {}  # ... -> key -> offsets (or None)
        self.invocation: dict[int, Op] = {}  # completion index -> its invocation
        self.completion: dict[int, Op] = {}  # invocation index -> its completion
        self.writer_of: dict[Any, dict[Any, Op]] = defaultdict(dict)
        self.ok_reads: dict[Any, set] = defaultdict(set)
        self.failed_writes: dict[Any, set] = defaultdict(set)
        self.by_process: dict[Any, list[Op]] = defaultdict(list)
        open_by_process: dict[Any, Op] = {}
        for op in self.ops:
            self.by_process[op.process].append(op)
            if op.is_invoke:
                open_by_process[op.process] = op
                continue
            invocation = open_by_process.pop(op.process, None)
            if invocation is not None:
                self.invocation[op.index] = invocation
                self.completion[invocation.index] = op
            if op.f in CLIENT_FUNCTIONS:
                self.completions.append(op)
                self._index_mops(op)
        # Key -> value -> where its writer completed ok (infinity when it did not): an op invoked
        # later follows the writer in real time.
        self.done_at: dict[Any, dict[Any, float]] = {
            k: {v: op.index if op.is_ok else math.inf for v, op in writers.items()}
            for k, writers in self.writer_of.items()
        }

    def _index_mops(self, op: Op) -> None:
        reads: dict[Any, list] = {}
        read_offsets: dict[Any, list] = {}
        writes: dict[Any, list] = {}
        write_offsets: dict[Any, list] = {}
        for mop in op.mops():
            if mop[0] == "send":
                _, k, sent = mop
                offset, value = sent if isinstance(sent, (tuple, list)) else (None, sent)
                writes.setdefault(k, []).append(value)
                write_offsets.setdefault(k, []).append(offset)
            elif len(mop) > 1:
                for k, pairs in mop[1].items():
                    reads.setdefault(k, []).extend(map(_second, pairs))
                    read_offsets.setdefault(k, []).extend(map(_first, pairs))
        self.reads[op.index], self.read_offsets[op.index] = reads, read_offsets
        self.writes[op.index], self.write_offsets[op.index] = writes, write_offsets
        for k, values in writes.items():
            self.writer_of[k].update(dict.fromkeys(values, op))  # the last op to send it wins
            if op.is_fail:
                self.failed_writes[k].update(values)
        if op.is_ok:
            for k, values in reads.items():
                self.ok_reads[k].update(values)

    def readers(self, k: Any, value: Any) -> Iterable[Op]:
        return (op for op in self.completions if value in self.reads[op.index].get(k, ()))

    def must_have_committed(self, op: Op) -> bool:
        """ok, or info with one of its sends read by an ok op: a read of an uncommitted write would
        itself be an anomaly, so Jepsen assumes the op committed."""
        if op.is_ok:
            return True
        return op.is_info and any(
            not self.ok_reads.get(k, set()).isdisjoint(values)
            for k, values in self.writes.get(op.index, {}).items()
        )


def version_orders(index: _Index) -> tuple[dict[Any, VersionOrder], list[dict]]:
    """Each key's version order, and the ``inconsistent-offsets`` errors.

    Polls count whatever their op's outcome: a consumer must never be handed a record that is not
    in the log, so even an aborted transaction's polls are evidence. Sends count only when their
    op must have committed: a failed send's offset may have been given to another record."""
    # BEGIN SOLUTION
    first: dict[Any, dict] = defaultdict(dict)  # key -> offset -> the first value seen there
    more: dict[Any, dict] = defaultdict(lambda: defaultdict(set))  # key -> offset -> other values

    def saw(k: Any, offsets: list, values: list) -> None:
        log = first[k]
        if list(map(log.get, offsets)) == values:
            return  # a re-read of records already seen: nothing new
        for offset, value in zip(offsets, values, strict=True):
            if log.setdefault(offset, value) != value:
                more[k][offset].add(value)

    for op in index.completions:
        if index.must_have_committed(op):
            for k, offsets in index.write_offsets[op.index].items():
                saw(k, offsets, index.writes[op.index][k])
        for k, offsets in index.read_offsets[op.index].items():
            saw(k, offsets, index.reads[op.index][k])
    orders = {}
    for k, log in sorted(first.items()):
        log.pop(None, None)  # an offset nobody knows places nothing
        orders[k] = VersionOrder({offset: {value, *more[k].get(offset, ())} for offset, value in log.items()})
    errors = [
        {"key": k, "offset": offset, "index": i, "values": values}
        for k, order in orders.items()
        for i, (offset, values) in enumerate(zip(order.offsets, order.log, strict=True))
        if len(values) > 1
    ]
    return orders, errors
    # END SOLUTION


def g1a_cases(index: _Index) -> list[dict]:
    """An ok op read a value whose send failed: an aborted read. A read_committed consumer must
    never see a record its transaction aborted."""
    # BEGIN SOLUTION
    errors = []
    for op in index.completions:
        if op.is_ok:
            for k, values in index.reads[op.index].items():
                failed = index.failed_writes.get(k)
                if failed and not failed.isdisjoint(values):
                    errors.extend(
                        {"key": k, "value": v, "writer": index.writer_of[k][v].index, "reader": op.index}
                        for v in values
                        if v in failed
                    )
    return errors
    # END SOLUTION


def precommitted_read_cases(index: _Index) -> list[dict]:
    """An op read a value it sent itself. Kafka hides a transaction's records from every consumer
    (its own included) until the commit marker is written, so this is a read of uncommitted data."""
    # BEGIN SOLUTION
    errors = []
    for op in index.completions:
        reads = index.reads[op.index]
        for k, values in index.writes[op.index].items():
            own = set(values) & set(reads.get(k, ()))
            if own:
                errors.append({"op": op.index, "key": k, "value": min(own)})
                break
    return errors
    # END SOLUTION


def lost_write_cases(index: _Index, orders: dict[Any, VersionOrder]) -> list[dict]:
    """Writes below the highest value somebody read, that nobody read: lost.

    For each key, the bound is the highest of the first indexes of the values ok ops read; every
    value whose *last* index is at or below the bound should have been read too (first and last
    because, with inconsistent offsets, a value may sit at several). Only values whose writer must
    have committed count: an unacknowledged send may never have reached the log."""
    # BEGIN SOLUTION
    errors = []
    for k, read in sorted(index.ok_reads.items()):
        order = orders.get(k)
        if order is None:
            continue
        first_index = order.value_first_index()
        last_index_values = order.last_index_values()
        bound = max((first_index[v] for v in read if v in first_index), default=-1)
        must_read = [v for values in last_index_values[: bound + 1] for v in values]
        for value in must_read:
            writer = index.writer_of[k].get(value)
            if value in read or writer is None or not index.must_have_committed(writer):
                continue
            witnesses = last_index_values[bound]
            readers = list(itertools.islice(index.readers(k, witnesses[0]), 1)) if witnesses else []
            errors.append({
                "key": k, "value": value, "index": first_index[value], "max_read_index": bound,
                "writer": writer.index, "max_read": readers[0].index if readers else None,
            })  # fmt: skip
    return errors
    # END SOLUTION


def _step(order: VersionOrder | None, v1: Any, v2: Any) -> tuple[int, list]:
    """The dense-index delta from v1 to v2 and the values skipped between them; 1 (no news) when
    either index is unknown, as Jepsen assumes."""
    i1 = None if order is None else order.by_value.get(v1)
    i2 = None if order is None else order.by_value.get(v2)
    if i1 is None or i2 is None:
        return 1, []
    return i2 - i1, order.by_index[i1 + 1 : i2]


def _internal_cases(
    op: Op, k: Any, values: list, order: VersionOrder | None, skips: list, backs: list
) -> None:
    """Successive values of one key within one op, held against the version order: a step of more
    than one record is a skip, of less than one (back, or the same record again) nonmonotonic."""
    if order is None or len(values) < 2:
        return
    indexes = list(map(order.by_value.get, values))
    if indexes[0] is not None and indexes == list(range(indexes[0], indexes[0] + len(indexes))):
        return  # one record after another, the usual case
    for j in range(1, len(values)):
        i1, i2 = indexes[j - 1], indexes[j]
        if i1 is None or i2 is None or i2 - i1 == 1:
            continue
        error = {"key": k, "values": [values[j - 1], values[j]], "delta": i2 - i1, "op": op.index}
        if i2 - i1 > 1:
            skips.append({**error, "skipped": order.by_index[i1 + 1 : i2]})
        else:
            backs.append(error)


def _rebalanced_keys(op: Op) -> set:
    keys: set = set()
    for entry in op.rebalance_log:
        keys.update(entry.get("keys", ()) if isinstance(entry, dict) else (entry,))
    return keys


def int_poll_cases(index: _Index, orders: dict[Any, VersionOrder]) -> dict[str, list[dict]]:
    """Within one op, two successive values polled from a key that skip a record we know exists
    (``int-poll-skip``) or go back or repeat (``int-nonmonotonic-poll``). A consumer's position
    only moves forward one record at a time; a rebalance during the op (its ``rebalance_log``)
    resets the position, so its keys are exempt."""
    skips: list[dict] = []
    nonmonotonic: list[dict] = []
    for op in index.completions:
        exempt = _rebalanced_keys(op) if op.rebalance_log else ()
        for k, values in index.reads[op.index].items():
            if k not in exempt:
                _internal_cases(op, k, values, orders.get(k), skips, nonmonotonic)
    return {"int-poll-skip": skips, "int-nonmonotonic-poll": nonmonotonic}


def int_send_cases(index: _Index, orders: dict[Any, VersionOrder]) -> dict[str, list[dict]]:
    """Within one op, two successive sends to a key that land apart (``int-send-skip``: other
    producers' records between them, normal) or in the wrong order (``int-nonmonotonic-send``: a
    producer's records must reach a partition in the order it sent them)."""
    skips: list[dict] = []
    nonmonotonic: list[dict] = []
    for op in index.completions:
        for k, values in index.writes[op.index].items():
            _internal_cases(op, k, values, orders.get(k), skips, nonmonotonic)
    return {"int-send-skip": skips, "int-nonmonotonic-send": nonmonotonic}


def _reassigned(op: Op, last: dict) -> dict:
    """An assign or subscribe keeps what is tracked only for the keys it still takes: a consumer's
    position in a partition it gives up means nothing when it gets the partition back."""
    return {k: v for k, v in last.items() if k in op.value}


def poll_cases(index: _Index, orders: dict[Any, VersionOrder]) -> dict[str, list[dict]]:
    """Across a process's ops, its first value of a key against the last value its previous ok op
    read there: a gap (``poll-skip``) or a step back (``nonmonotonic-poll``). A consumer's next
    poll starts where its last one ended. Failed and crashed ops do not move the position: an
    aborted transaction's consumer must rewind to it."""
    skips, nonmonotonic = [], []
    for ops in index.by_process.values():
        last_reads: dict[Any, Op] = {}
        for op in ops:
            if op.f in ("assign", "subscribe"):
                if op.is_ok or op.is_info:
                    last_reads = _reassigned(op, last_reads)
                continue
            if op.f not in ("poll", "txn") or op.is_invoke:
                continue
            reads = index.reads[op.index]
            for k, values in reads.items():
                last_op = last_reads.get(k)
                if last_op is None:
                    continue
                previous = index.reads[last_op.index][k]
                v1 = previous[-1] if previous else None
                v2 = values[0] if values else None
                delta, skipped = _step(orders.get(k), v1, v2)
                ops_pair = [last_op.index, op.index]
                if delta > 1:
                    skips.append({"key": k, "delta": delta, "skipped": skipped, "ops": ops_pair})
                elif delta < 1:
                    nonmonotonic.append({"key": k, "values": [v1, v2], "delta": delta, "ops": ops_pair})
            if op.is_ok:
                last_reads.update(dict.fromkeys(reads, op))
    return {"poll-skip": skips, "nonmonotonic-poll": nonmonotonic}


def nonmonotonic_send_cases(index: _Index, orders: dict[Any, VersionOrder]) -> list[dict]:
    """A process's first send to a key in this op landing at or before its last send there in an
    earlier op: one producer's records must reach a partition in the order it sent them."""
    errors = []
    for ops in index.by_process.values():
        last_sends: dict[Any, Op] = {}
        for op in ops:
            if not (op.is_ok or op.is_info):
                continue
            if op.f in ("assign", "subscribe"):
                last_sends = _reassigned(op, last_sends)
                continue
            if op.f not in ("send", "txn"):
                continue
            writes = index.writes[op.index]
            for k, values in writes.items():
                last_op = last_sends.get(k)
                if last_op is None:
                    continue
                v1, v2 = index.writes[last_op.index][k][-1], values[0]
                delta, _ = _step(orders.get(k), v1, v2)
                if delta < 1:
                    errors.append(
                        {"key": k, "values": [v1, v2], "delta": delta, "ops": [last_op.index, op.index]}
                    )
            last_sends.update(dict.fromkeys(writes, op))
    return errors


def duplicate_cases(orders: dict[Any, VersionOrder]) -> list[dict]:
    """A value at more than one offset of a key: an idempotent producer's retry written twice."""
    # BEGIN SOLUTION
    errors = []
    for k, order in orders.items():
        offsets_of: dict[Any, list] = defaultdict(list)
        for offset, values in zip(order.offsets, order.log, strict=True):
            for value in values:
                offsets_of[value].append(offset)
        errors.extend(
            {"key": k, "value": value, "count": len(offsets), "offsets": offsets}
            for value, offsets in offsets_of.items()
            if len(offsets) > 1
        )
    return errors
    # END SOLUTION


def unseen(index: _Index) -> list[dict]:
    """After each ok op, how many acknowledged sends of each key no ok op has read yet (Jepsen's
    ``unseen``); the last entry also names them (``messages``). The final phase polls every key to
    its end, so at the end of a run anything still unseen was acknowledged and is not there."""
    out: list[dict] = []
    pending: dict[Any, set] = {}
    polled: dict[Any, set] = defaultdict(set)
    for op in index.completions:
        if not op.is_ok:
            continue
        for k, values in index.reads[op.index].items():
            polled[k].update(values)
            if k in pending:
                pending[k].difference_update(values)
        for k, values in index.writes[op.index].items():
            pending.setdefault(k, set()).update(v for v in values if v not in polled[k])
        out.append({"time": op.time, "unseen": {k: len(vs) for k, vs in sorted(pending.items())}})
    if out:
        out[-1]["messages"] = {k: sorted(vs) for k, vs in sorted(pending.items())}
    return out


def _max_offsets(index: _Index, op: Op) -> dict:
    """The highest offset of each key this op polled (-1 for a key polled empty) or sent
    (Jepsen's ``op->max-offsets``)."""
    offsets = {}
    for k, polled in index.read_offsets[op.index].items():
        known = [o for o in polled if o is not None] if None in polled else polled
        offsets[k] = max(known, default=-1)
    for k, sent in index.write_offsets[op.index].items():
        known = [o for o in sent if o is not None]
        if known:
            offsets[k] = max(offsets.get(k, -1), *known)
    return offsets


def realtime_lag(index: _Index) -> list[dict]:
    """For each ok poll and each key its process holds, how long before the poll began the
    highest offset the process had read stopped being the end of the log (a lower bound, in ns).

    ``expired[k][o]`` is the earliest time offset o is known to exist (an op completed having sent
    or polled it or a later one). A process that has read up to offset o, polling at time t, lags
    by at least ``t - expired[k][o + 1]``. Assign starts untracked keys at -1 (the workload reads from
    the beginning); subscribe forgets everything, since the group decides what the process holds."""
    expired: dict[Any, list] = defaultdict(list)
    max_offsets: dict[int, dict] = {}
    for op in index.completions:
        if not (op.is_ok or op.is_info):
            continue
        max_offsets[op.index] = known_offsets = _max_offsets(index, op)
        for k, known in known_offsets.items():
            times = expired[k]
            if len(times) <= known:
                times.extend([None] * (known + 1 - len(times)))
            i = known
            while i >= 0 and times[i] is None:
                times[i] = op.time
                i -= 1
    lags: list[dict] = []
    positions: dict[Any, dict] = defaultdict(dict)
    for op in index.ops:
        if not op.is_ok:
            continue
        if op.f == "assign":
            held = positions[op.process]
            positions[op.process] = {k: held.get(k, -1) for k in op.value}
        elif op.f == "subscribe":
            positions[op.process] = {}
        elif op.f in ("poll", "txn"):
            invocation = index.invocation.get(op.index)
            began = invocation.time if invocation is not None else op.time
            held = positions[op.process]
            for k, offset in max_offsets[op.index].items():
                if offset > held.get(k, -1):
                    held[k] = offset
            for k, offset in held.items():
                times = expired.get(k, ())
                at = times[offset + 1] if offset + 1 < len(times) else None
                lag = began - at if at is not None and began > at else 0
                lags.append({"time": began, "process": op.process, "key": k, "lag": lag})
    return lags


def worst_realtime_lag(lags: list[dict]) -> dict | None:
    return max(lags, key=lambda lag: lag["lag"], default=None)


def _link(edges: dict[int, dict[int, int]], a: Op, b: Op, rel: int) -> None:
    if a is not b:
        row = edges.setdefault(a.index, {})
        row[b.index] = row.get(b.index, 0) | rel


def _follows_in_real_time(index: _Index, a: Op, b: Op) -> bool:
    """a is ok and completed before b was invoked: the realtime edges already lead from a to b."""
    invocation = index.invocation.get(b.index)
    return a.is_ok and invocation is not None and a.index < invocation.index


def order_edges(index: _Index) -> dict[int, dict[int, int]]:
    """The PROCESS and REALTIME edges between completed send, poll and txn ops, as a -> b -> bits
    (Elle's process and realtime graphs). The realtime edges are Elle's transitive reduction: each
    ok op links to the ops invoked after it completed, until an op completing after it has taken
    over that role; a path still leads from every op to every op invoked after it completed."""
    edges: dict[int, dict[int, int]] = {}
    last_ok: dict[Any, Op] = {}
    buffer: dict[int, Op] = {}  # ok ops no later ok op is yet known to follow
    predecessors: dict[int, list[int]] = {}
    for op in index.ops:
        if op.f not in CLIENT_FUNCTIONS:
            continue
        if op.is_invoke:
            completion = index.completion.get(op.index)
            if completion is not None:
                for a in buffer.values():
                    _link(edges, a, completion, REALTIME)
                predecessors[completion.index] = list(buffer)
        elif op.is_ok:
            for a in predecessors.pop(op.index, ()):
                buffer.pop(a, None)
            buffer[op.index] = op
            if op.process in last_ok:
                _link(edges, last_ok[op.process], op, PROCESS)
            last_ok[op.process] = op
    return edges


def data_edges(
    index: _Index,
    orders: dict[Any, VersionOrder],
    ww_deps: bool,
    edges: dict[int, dict[int, int]],
    among: set[int] | None = None,
) -> None:
    """Adds the WR edges (writer -> each reader of its value, Jepsen's ``wr-graph``) and, with
    ``ww_deps``, the WW edges (the writer of a key's previous value -> the writer of the next,
    ``ww-graph``) to ``edges``. Over the whole history (``among`` None) an edge that real time
    already implies is left out: it joins nothing the realtime edges do not, and the components
    come out the same. Within one component (``among``, its op indexes) every edge goes in, so each
    cycle's steps can be named."""
    ops = index.completions if among is None else [op for op in index.completions if op.index in among]
    # BEGIN SOLUTION
    for reader in ops:
        invocation = index.invocation.get(reader.index)
        invoked = invocation.index if invocation is not None and among is None else -1
        for k, values in index.reads[reader.index].items():
            # Only the values whose writer did not complete ok before this op began need an edge.
            done = index.done_at.get(k, {})
            if (
                invoked >= 0
                and max(map(done.get, values, itertools.repeat(invoked)), default=invoked) <= invoked
            ):
                continue  # every writer completed ok before this op began
            for value in [v for v in values if done.get(v, invoked) > invoked] if invoked >= 0 else values:
                writer = index.writer_of[k].get(value)  # a value nobody sent has no writer to depend on
                if writer is not None and (among is None or writer.index in among):
                    _link(edges, writer, reader, WR)
    # END SOLUTION
    if not ww_deps:
        return
    for writer in ops:
        for k, values in index.writes[writer.index].items():
            writers, order = index.writer_of[k], orders.get(k)
            for value in values:
                previous = order.previous_value(value) if order else None
                before = writers.get(previous) if previous is not None else None
                if before is None or writers[value] is not writer:
                    continue
                if among is None and _follows_in_real_time(index, before, writer):
                    continue
                if among is None or before.index in among:
                    _link(edges, before, writer, WW)


def _mop_index(op: Op, f: str, k: Any, value: Any) -> int | None:
    for i, mop in enumerate(op.mops()):
        if f == "send" and mop[0] == "send" and mop[1] == k:
            sent = mop[2][1] if isinstance(mop[2], (tuple, list)) else mop[2]
            if sent == value:
                return i
        if (
            f == "poll"
            and mop[0] == "poll"
            and len(mop) > 1
            and any(v == value for _, v in mop[1].get(k, ()))
        ):
            return i
    return None


class _Explainer:
    """Says why one op precedes another, for the steps of a reported cycle (Elle's explainers)."""

    def __init__(self, index: _Index, orders: dict[Any, VersionOrder]) -> None:
        self.index, self.orders = index, orders
        self.ops = {op.index: op for op in index.ops}

    def explain(self, a: int, b: int, rel: int) -> dict:
        op_a, op_b, index = self.ops[a], self.ops[b], self.index
        if rel == WW:
            for k, values in index.writes[b].items():
                for value in values:
                    order = self.orders.get(k)
                    previous = order.previous_value(value) if order else None
                    if previous is not None and index.writer_of[k].get(previous) is op_a:
                        return {"type": "ww", "key": k, "value": previous, "next_value": value,
                                "a_mop_index": _mop_index(op_a, "send", k, previous),
                                "b_mop_index": _mop_index(op_b, "send", k, value)}  # fmt: skip
        if rel == WR:
            for k, values in index.reads[b].items():
                for value in values:
                    if index.writer_of[k].get(value) is op_a:
                        return {"type": "wr", "key": k, "value": value,
                                "a_mop_index": _mop_index(op_a, "send", k, value),
                                "b_mop_index": _mop_index(op_b, "poll", k, value)}  # fmt: skip
        if rel == PROCESS:
            return {"type": "process", "process": op_a.process}
        return {"type": "realtime", "completed": op_a.time, "invoked": index.invocation[b].time}


def _shortest_cycle(graph: nx.DiGraph, allowed: int, required: tuple, candidates: int) -> list | None:
    """The shortest cycle found in ``graph`` using only ``allowed`` edges and at least one edge of
    each ``required`` kind, as [(a, b, rel), ...]. It starts from up to ``candidates`` edges of
    the first required kind (any edge when none is required) in each component of the filtered
    graph, and comes back through whichever edge of a second required kind makes the shortest
    detour."""
    sub = nx.DiGraph(
        (a, b, {"rels": d["rels"] & allowed}) for a, b, d in graph.edges(data=True) if d["rels"] & allowed
    )
    best: list | None = None
    for component in nx.strongly_connected_components(sub):
        if len(component) < 2:
            continue
        scc = sub.subgraph(component)
        first = required[0] if required else allowed
        starts = [(a, b) for a, b, rels in scc.edges(data="rels") if rels & first][:candidates]
        for a, b in starts:
            # A second required kind is met on the way back, unless this edge is of that kind too.
            through = required[1] if len(required) > 1 and not scc[a][b]["rels"] & required[1] else None
            path = _path_back(scc, b, a, through)
            if path is not None and (best is None or len(path) + 1 < len(best)):
                best = [(a, b), *itertools.pairwise(path)]
    if best is None:
        return None
    steps = []
    for i, (a, b) in enumerate(best):
        rels = sub[a][b]["rels"]
        if i == 0:
            wanted = required[0] if required else 0
        else:
            wanted = required[1] if len(required) > 1 and rels & required[1] else 0
        rel = next(r for r in (wanted, WW, WR, PROCESS, REALTIME) if r and rels & r)
        steps.append((a, b, rel))
    return steps


def _path_back(scc: nx.DiGraph, source: int, target: int, through: int | None) -> list | None:
    """A shortest path from ``source`` to ``target``, through an edge of kind ``through`` if given."""
    if through is None:
        return nx.shortest_path(scc, source, target)
    ahead = nx.single_source_shortest_path_length(scc, source)
    behind = nx.single_source_shortest_path_length(scc.reverse(copy=False), target)
    detours = [
        (ahead[x] + behind[y], x, y)
        for x, y, rels in scc.edges(data="rels")
        if rels & through and x in ahead and y in behind
    ]
    if not detours:
        return None
    _, x, y = min(detours)
    return nx.shortest_path(scc, source, x) + nx.shortest_path(scc, y, target)


def cycle_cases(index: _Index, orders: dict[Any, VersionOrder], ww_deps: bool) -> dict[str, list[dict]]:
    """The G0 and G1c families, one cycle per class per strongly connected component, searched in
    Elle's order and skipping the classes a class already found there implies."""
    edges = order_edges(index)
    data_edges(index, orders, ww_deps, edges)
    graph = nx.DiGraph()
    graph.add_edges_from((a, b) for a, row in edges.items() for b in row)
    explainer = _Explainer(index, orders)
    found: dict[str, list[dict]] = defaultdict(list)
    for component in nx.strongly_connected_components(graph):
        if len(component) < 2:
            continue
        within = {a: {b: rels for b, rels in edges.get(a, {}).items() if b in component} for a in component}
        data_edges(index, orders, ww_deps, within, among=component)
        scc = nx.DiGraph()
        scc.add_edges_from((a, b, {"rels": rels}) for a, row in within.items() for b, rels in row.items())
        implied: set[str] = set()
        for name, allowed, required in CYCLE_SPECS:
            if name in implied:
                continue
            steps = _shortest_cycle(scc, allowed, required, CANDIDATE_EDGES)
            if steps is None:
                continue
            implied |= _IMPLIED[name]
            start = min(range(len(steps)), key=lambda i: steps[i][0])  # begin at the earliest op
            steps = steps[start:] + steps[:start]
            found[name].append({
                "cycle": [a for a, _, _ in steps] + [steps[0][0]],
                "steps": [explainer.explain(a, b, rel) for a, b, rel in steps],
            })  # fmt: skip
    return dict(found)


def analysis(history: Iterable[Op], *, ww_deps: bool = False) -> dict:
    """Every error found, uncondensed, with the structures behind them: ``errors`` maps each class
    found to its error dicts (op indexes, keys, values); ``version_orders`` maps each key to its
    values per dense index and ``offsets`` to the offset of each dense index; ``unseen`` and
    ``realtime_lag`` are Jepsen's series (times in ns)."""
    with _cyclic_gc_paused():
        return _analysis(history, ww_deps)


@contextmanager
def _cyclic_gc_paused() -> Iterator[None]:
    """The analysis builds millions of small lists, sets and dicts and frees none of them until it
    ends; CPython's cyclic collector would walk the whole history again every few thousand of
    them, for nothing. So it waits, as ``timeit`` makes it wait, and runs as before afterwards."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _analysis(history: Iterable[Op], ww_deps: bool) -> dict:
    index = _Index(history)
    orders, inconsistent = version_orders(index)
    lags = realtime_lag(index)
    unseen_series = unseen(index)
    errors: dict[str, list | dict] = {
        "duplicate": duplicate_cases(orders),
        **int_poll_cases(index, orders),
        **int_send_cases(index, orders),
        "inconsistent-offsets": inconsistent,
        "precommitted-read": precommitted_read_cases(index),
        "G1a": g1a_cases(index),
        "lost-write": lost_write_cases(index, orders),
        **poll_cases(index, orders),
        "nonmonotonic-send": nonmonotonic_send_cases(index, orders),
    }
    last = unseen_series[-1] if unseen_series else None
    if last and any(last["unseen"].values()):
        errors["unseen"] = [
            {"key": k, "count": n, "values": last["messages"][k]} for k, n in last["unseen"].items() if n
        ]
    if not index.completions:
        errors["empty-transaction-graph"] = [{"ops": len(index.ops)}]
    errors.update(cycle_cases(index, orders, ww_deps))
    return {
        "errors": {name: errs for name, errs in errors.items() if errs},
        "version_orders": {k: order.log for k, order in orders.items()},
        "offsets": {k: order.offsets for k, order in orders.items()},
        "unseen": unseen_series,
        "realtime_lag": lags,
        "worst_realtime_lag": worst_realtime_lag(lags),
    }


def condense_error(name: str, errs: list[dict]) -> dict:
    """Jepsen's ``condense-error``: the count, and the most telling examples: the biggest skips,
    the worst steps back, the shortest cycles, the most conflicted offsets."""
    if name == "unseen":
        return {"count": sum(e["count"] for e in errs),
                "errs": [{**e, "values": e["values"][:UNSEEN_EXAMPLES]} for e in errs]}  # fmt: skip
    if name not in _CONDENSE:
        return {"count": len(errs), "errs": list(errs)}
    key, n, end = _CONDENSE[name]
    ordered = sorted(errs, key=key)
    return {"count": len(errs), "errs": ordered[:n] if end == "first" else ordered[-n:]}


def check(
    history: Iterable[Op], *, ww_deps: bool = False, subscribe: bool = False, txn: bool = False
) -> dict:
    """Jepsen's Kafka checker: the result map of a history. ``valid`` is false iff a class outside
    ``allowed_error_types`` appears. ``txn`` says the run used transactions; Jepsen's allowed set
    does not depend on it, so it is only recorded in ``options``."""
    history = list(history)
    result = analysis(history, ww_deps=ww_deps)
    errors = result["errors"]
    bad = sorted(set(errors) - allowed_error_types(ww_deps=ww_deps, subscribe=subscribe))
    last_unseen = result["unseen"][-1] if result["unseen"] else None
    worst = result["worst_realtime_lag"]
    client = [op for op in history if op.process != NEMESIS]
    completions = [op for op in client if not op.is_invoke]
    return {
        "valid": not bad,
        "error_types": sorted(errors),
        "bad_error_types": bad,
        "errors": {name: condense_error(name, errs) for name, errs in sorted(errors.items())},
        "unseen": None
        if last_unseen is None
        else {
            "time_s": last_unseen["time"] / 1e9,
            "unseen": {k: n for k, n in last_unseen["unseen"].items() if n},
            "messages": {k: vs[:UNSEEN_EXAMPLES] for k, vs in last_unseen["messages"].items() if vs},
        },
        "worst_realtime_lag": None
        if worst is None
        else {
            "process": worst["process"],
            "key": worst["key"],
            "lag_s": worst["lag"] / 1e9,
            "time_s": worst["time"] / 1e9,
        },
        "info_txn_causes": list(
            dict.fromkeys(op.error for op in completions if op.is_info and op.f in CLIENT_FUNCTIONS)
        ),
        "stats": {
            "ops": sum(1 for op in client if op.is_invoke),
            "ok": sum(1 for op in completions if op.is_ok),
            "info": sum(1 for op in completions if op.is_info),
            "fail": sum(1 for op in completions if op.is_fail),
            "nemesis": sum(1 for op in history if op.process == NEMESIS and not op.is_invoke),
        },
        "options": {"ww_deps": ww_deps, "subscribe": subscribe, "txn": txn},
    }
