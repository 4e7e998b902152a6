"""The history of a Jepsen-style run: every operation's invocation and completion, as JSON lines.

No Kafka twin: Jepsen's history model (``jepsen.history``), as its Kafka workload
(``jepsen/src/jepsen/tests/kafka.clj``) records it. Beyond the book: the book's chapters show how
Kafka keeps its promises; a history is how a test checks that it did, from the outside, with only
what clients were told.

An operation is a process's call into a client: first its invocation (``type`` "invoke"), then its
completion, "ok" (it happened), "fail" (it certainly did not) or "info" (nobody knows: a timeout, a
crash). Its ``f`` says what it does:

- ``send``, ``poll`` and ``txn`` carry a list of micro-operations. ``["send", k, v]`` writes the value
  ``v`` to the key ``k`` (a partition) and completes as ``["send", k, [offset, v]]`` (offset ``None``
  when the client could not say); ``["poll"]`` completes as ``["poll", {k: [[offset, v], ...]}]``. A
  ``send`` or ``poll`` op holds one micro-operation; a ``txn`` up to four, all in one transaction.
- ``assign`` and ``subscribe`` carry the keys the consumer takes; ``seek_to_beginning`` (assign
  only) rewinds them.
- ``crash`` is a client thrown away: its process never runs again; the next op of its thread is a
  new process's.

The nemesis (the faults) records its actions in the same history, as process ``"nemesis"``: its
``f`` names the fault (``kill``, ``pause``, ``partition``...) and its value says whom it struck. The
checker skips them; they tell a reader when each fault began and ended.

An op may carry ``rebalance_log``: the keys a consumer's rebalance took away or gave it during the op.
Values are unique per key, so a value read names its send.

The writer appends each operation as one line and flushes it at once: a run killed part-way leaves
every operation it recorded, each on a whole line, and the checker reads what is there.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kafka_lite.common.time import Time

TYPES = ("invoke", "ok", "info", "fail")
FUNCTIONS = ("send", "poll", "txn", "assign", "subscribe", "crash")
_MOPS = ("send", "poll")
_MOP_FUNCTIONS = ("send", "poll", "txn")  # the functions whose value is a list of micro-operations
NEMESIS = "nemesis"  # the process that the faults' operations carry


class HistoryError(ValueError):
    """A history that cannot be read: the message names the file, the line and what is wrong."""


@dataclass(frozen=True)
class Op:
    """One invocation or completion. ``index`` is its place in the history; ``time`` nanoseconds
    since the run began. Keys are ints; a ``send``'s completed value is ``(offset, value)``, a
    ``poll``'s ``{key: [(offset, value), ...]}``."""

    index: int
    type: str
    process: int | str  # an int, or NEMESIS for a fault
    f: str
    value: Any
    time: int
    error: str | None = None
    rebalance_log: tuple = ()
    seek_to_beginning: bool = False
    extra: dict = field(default_factory=dict, compare=False)

    @property
    def is_invoke(self) -> bool:
        return self.type == "invoke"

    @property
    def is_ok(self) -> bool:
        return self.type == "ok"

    @property
    def is_info(self) -> bool:
        return self.type == "info"

    @property
    def is_fail(self) -> bool:
        return self.type == "fail"

    def mops(self) -> list:
        """The op's micro-operations (empty for assign, subscribe and crash)."""
        return list(self.value) if self.f in _MOP_FUNCTIONS and self.value is not None else []

    def to_json(self) -> dict:
        data: dict[str, Any] = {
            "index": self.index,
            "type": self.type,
            "process": self.process,
            "time": self.time,
            "f": self.f,
            "value": _value_to_json(self.f, self.value),
        }
        if self.error is not None:
            data["error"] = self.error
        if self.rebalance_log:
            data["rebalance_log"] = list(self.rebalance_log)
        if self.seek_to_beginning:
            data["seek_to_beginning"] = True
        data.update(self.extra)
        return data


def _value_to_json(f: str, value: Any) -> Any:
    if f not in _MOP_FUNCTIONS or value is None:
        return list(value) if isinstance(value, (tuple, list)) else value
    out = []
    for mop in value:
        if mop[0] == "poll" and len(mop) > 1:
            out.append(["poll", {str(k): [list(p) for p in pairs] for k, pairs in mop[1].items()}])
        elif mop[0] == "send" and isinstance(mop[2], (tuple, list)):
            out.append(["send", mop[1], list(mop[2])])
        else:
            out.append(list(mop))
    return out


class _LineError(Exception):
    pass


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _LineError(f"{what} should be an integer, not {value!r}")
    return value


def _key(value: Any, what: str) -> int:
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            raise _LineError(f"{what} should be an integer key, not {value!r}") from None
    return _int(value, what)


def _offset(value: Any, what: str) -> int | None:
    return None if value is None else _int(value, what)


def _mop_from_json(mop: Any, completed: bool, at: str) -> tuple:
    if not isinstance(mop, list) or not mop or mop[0] not in _MOPS:
        raise _LineError(f'{at} should be a micro-operation ["send", k, v] or ["poll", ...], not {mop!r}')
    if mop[0] == "send":
        if len(mop) != 3:
            raise _LineError(f'{at}: a send is ["send", key, value], not {mop!r}')
        key = _key(mop[1], f"{at}'s key")
        if completed and isinstance(mop[2], list):
            if len(mop[2]) != 2:
                raise _LineError(f"{at}: a completed send's value is [offset, value], not {mop[2]!r}")
            return ("send", key, (_offset(mop[2][0], f"{at}'s offset"), _int(mop[2][1], f"{at}'s value")))
        return ("send", key, _int(mop[2], f"{at}'s value"))
    if len(mop) == 1:
        return ("poll",)
    if len(mop) != 2 or not isinstance(mop[1], dict):
        raise _LineError(f'{at}: a completed poll is ["poll", {{key: [[offset, value], ...]}}], not {mop!r}')
    polled = {}
    for k, pairs in mop[1].items():
        key = _key(k, f"{at}'s key")
        if not isinstance(pairs, list):
            raise _LineError(f"{at}: key {k}'s records should be a list of [offset, value], not {pairs!r}")
        records = []
        for pair in pairs:
            if not isinstance(pair, list) or len(pair) != 2:
                raise _LineError(f"{at}: key {k}'s record should be [offset, value], not {pair!r}")
            records.append((_offset(pair[0], f"{at}'s offset"), _int(pair[1], f"{at}'s value")))
        polled[key] = records
    return ("poll", polled)


def op_from_json(data: Any) -> Op:
    """An ``Op`` from one line's JSON object; ``HistoryError``'s message (without the line) if the
    object is not one."""
    try:
        if not isinstance(data, dict):
            raise _LineError(f"an operation is a JSON object, not {type(data).__name__}")
        missing = [name for name in ("index", "type", "process", "f", "time") if name not in data]
        if missing:
            raise _LineError(f"missing {', '.join(repr(m) for m in missing)}")
        if data["type"] not in TYPES:
            raise _LineError(f"'type' should be one of {', '.join(TYPES)}, not {data['type']!r}")
        f = data["f"]
        if data["process"] == NEMESIS:
            if not isinstance(f, str):
                raise _LineError(f"a fault's 'f' should be a string, not {f!r}")
            return Op(data["index"], data["type"], NEMESIS, f, data.get("value"), _int(data["time"], "'time'"),
                      None if data.get("error") is None else str(data["error"]))  # fmt: skip
        if f not in FUNCTIONS:
            raise _LineError(f"'f' should be one of {', '.join(FUNCTIONS)}, not {f!r}")
        value = data.get("value")
        if f in _MOP_FUNCTIONS:
            if not isinstance(value, list):
                raise _LineError(f"a {f}'s value should be a list of micro-operations, not {value!r}")
            completed = data["type"] != "invoke"
            value = [_mop_from_json(m, completed, f"micro-operation {i}") for i, m in enumerate(value)]
        elif f in ("assign", "subscribe"):
            if not isinstance(value, list):
                raise _LineError(f"an {f}'s value should be a list of keys, not {value!r}")
            value = [_key(k, "a key") for k in value]
        rebalance_log = data.get("rebalance_log", [])
        if not isinstance(rebalance_log, list):
            raise _LineError(f"'rebalance_log' should be a list, not {rebalance_log!r}")
        known = {
            "index",
            "type",
            "process",
            "f",
            "time",
            "value",
            "error",
            "rebalance_log",
            "seek_to_beginning",
        }
        return Op(
            index=_int(data["index"], "'index'"),
            type=data["type"],
            process=_int(data["process"], "'process'"),
            f=f,
            value=value,
            time=_int(data["time"], "'time'"),
            error=None if data.get("error") is None else str(data["error"]),
            rebalance_log=tuple(rebalance_log),
            seek_to_beginning=bool(data.get("seek_to_beginning", False)),
            extra={k: v for k, v in data.items() if k not in known},
        )
    except _LineError as e:
        raise HistoryError(str(e)) from None


def read_history(path: Path) -> list[Op]:
    """Every operation in the JSON-lines file ``path``, in order. A line that is cut short, not JSON
    or not an operation is a ``HistoryError`` naming the file and the line."""
    ops = []
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise HistoryError(f"{path}: cannot read the history: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise HistoryError(f"{path}: not a history (not UTF-8 text)") from None
    lines = text.splitlines()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as e:
            # The writer ends every line it finishes: a last line without its end was cut short.
            cut = number == len(lines) and not text.endswith("\n")
            what = "cut short (the run stopped while writing it?)" if cut else f"not JSON ({e.msg})"
            raise HistoryError(f"{path} line {number}: {what}") from None
        try:
            op = op_from_json(data)
        except HistoryError as e:
            raise HistoryError(f"{path} line {number}: {e}") from None
        if op.index != len(ops):
            raise HistoryError(
                f"{path} line {number}: 'index' is {op.index}, but this is operation {len(ops)}"
            )
        ops.append(op)
    return ops


class HistoryWriter:
    """Records operations as a run makes them, one JSON line each, flushed at once. Safe to call from
    every worker thread of a run: the lock gives each op its index and its line in one step."""

    def __init__(self, path: Path, time: Time) -> None:
        self._path = Path(path)
        self._time = time
        self._start_ns = time.nanoseconds()
        self._lock = threading.Lock()
        self._file = open(self._path, "w", encoding="utf-8")
        self._ops: list[Op] = []

    @property
    def path(self) -> Path:
        return self._path

    def invoke(self, process: int | str, f: str, value: Any, **fields: Any) -> Op:
        return self._append("invoke", process, f, value, fields)

    def complete(self, invocation: Op, type: str, value: Any = None, **fields: Any) -> Op:
        """The completion of ``invocation``: ok, info or fail, with the value the client returned
        (the invocation's value when ``None``)."""
        if type not in ("ok", "info", "fail"):
            raise ValueError(f"a completion's type is ok, info or fail, not {type!r}")
        return self._append(
            type, invocation.process, invocation.f, invocation.value if value is None else value, fields
        )

    def _append(self, type: str, process: int | str, f: str, value: Any, fields: dict) -> Op:
        if f not in FUNCTIONS and process != NEMESIS:
            raise ValueError(f"an op's f is one of {', '.join(FUNCTIONS)}, not {f!r}")
        with self._lock:
            op = Op(
                index=len(self._ops),
                type=type,
                process=process,
                f=f,
                value=value,
                time=self._time.nanoseconds() - self._start_ns,
                error=fields.pop("error", None),
                rebalance_log=tuple(fields.pop("rebalance_log", ())),
                seek_to_beginning=bool(fields.pop("seek_to_beginning", False)),
                extra=fields,
            )
            self._ops.append(op)
            self._file.write(_line(op))
            self._file.flush()
            return op

    def ops(self) -> list[Op]:
        with self._lock:
            return list(self._ops)

    def close(self) -> None:
        with self._lock:
            self._file.close()

    def __enter__(self) -> HistoryWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def pairs(history: Iterable[Op]) -> Iterator[tuple[Op, Op | None]]:
    """Each invocation with its completion (``None`` when the history ends first), in invocation
    order. A process runs one op at a time, so its next op after an invocation completes it."""
    open_by_process: dict[int, Op] = {}
    completed: dict[int, Op] = {}
    invocations: list[Op] = []
    for op in history:
        if op.is_invoke:
            open_by_process[op.process] = op
            invocations.append(op)
        else:
            invocation = open_by_process.pop(op.process, None)
            if invocation is not None:
                completed[invocation.index] = op
    for invocation in invocations:
        yield invocation, completed.get(invocation.index)


def restricted_to_keys(history: Iterable[Op], keys: Iterable[int]) -> list[Op]:
    """The history as if only ``keys`` had existed: each op's sends and polls of other keys left out,
    an op left with nothing of ``keys`` (no send, no record polled, no key assigned) left out with
    its invocation, and the ops numbered again.

    Every promise the checker holds a run to is a key's (the version order, lost writes, skips) or
    a chain through the keys it names (a cycle's reads and writes); an op left out touched none of
    them, and real time and each process's order still run past it. So a key's anomalies survive
    the cut, and the cut adds none: a small history to read whole, or to keep as an example."""
    keys = set(keys)
    history = list(history)
    dropped: set[int] = set()
    for invocation, completion in pairs(history):
        last = completion or invocation
        if last.process != NEMESIS and not _touches(_op_restricted(last, keys)):
            dropped.update(op.index for op in (invocation, completion) if op is not None)
    out: list[Op] = []
    for op in history:
        if op.index not in dropped:
            out.append(replace(_op_restricted(op, keys), index=len(out)))
    return out


def _op_restricted(op: Op, keys: set) -> Op:
    value = op.value
    if op.f in _MOP_FUNCTIONS and value is not None:
        value = [_mop_restricted(mop, keys) for mop in value if mop[0] == "poll" or mop[1] in keys]
    elif op.f in ("assign", "subscribe") and value is not None:
        value = [k for k in value if k in keys]
    rebalance_log = tuple(filter(None, (_entry_restricted(entry, keys) for entry in op.rebalance_log)))
    return replace(op, value=value, rebalance_log=rebalance_log)


def _touches(op: Op) -> bool:
    """The op (cut already) still sends, reads a record, or takes a key; a crash always counts."""
    if op.f in _MOP_FUNCTIONS:
        return any(mop[0] == "send" or (len(mop) > 1 and any(mop[1].values())) for mop in op.mops())
    if op.f in ("assign", "subscribe"):
        return bool(op.value)
    return True


def _entry_restricted(entry: Any, keys: set) -> Any:
    """A rebalance log's entry (a key, or a dict naming ``keys``) cut to ``keys``; None if nothing is left."""
    if not isinstance(entry, dict):
        return entry if entry in keys else None
    kept = [k for k in entry.get("keys", ()) if k in keys]
    return {**entry, "keys": kept} if kept else None


def _mop_restricted(mop: Any, keys: set) -> Any:
    if mop[0] == "poll" and len(mop) > 1:
        return ("poll", {k: records for k, records in mop[1].items() if k in keys})
    return mop


def write_history(path: Path, history: Iterable[Op]) -> None:
    """``history`` as JSON lines, as a run's writer leaves it."""
    with open(path, "w", encoding="utf-8") as f:
        for op in history:
            f.write(_line(op))


def _line(op: Op) -> str:
    return json.dumps(op.to_json(), separators=(",", ":")) + "\n"
