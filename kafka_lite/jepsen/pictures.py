"""The pictures of a checked history: what each process saw of each key, with the anomalies marked.

No Kafka twin: a port of the pictures Jepsen's Kafka checker draws (``key-order-viz`` and
``render-order-viz!`` in ``jepsen/src/jepsen/tests/kafka.clj``; its lag and unseen plots are in
``plots``), drawn as one self-contained HTML page of inline SVG (no network, no script) instead of
Jepsen's one SVG per key and its gnuplot PNGs, so a learner opens one file beside the history and
reads it in any browser.

The order picture of a key puts offsets across (x is the offset Kafka gave the record, as in
Jepsen) and operations down, grouped by process in the order each process made them: a row is one
completed operation, a cell one record it read (blue) or wrote (green) at that offset. A process
that reads its partition in order draws a staircase; a skip is a gap in it, a nonmonotonic poll a
step back, a lost write a green cell no blue cell ever sits under. The checker's examples are drawn
on top: their values ringed in red (skipped values dashed), their offsets shaded, their operations'
rows tinted, each caption naming the class and saying in a sentence what Kafka promised.

A long run has thousands of offsets and operations per key; drawing them all (as Jepsen does) makes
a picture nobody can read. A key's picture keeps a window of offsets around its anomalies and the
operations that touch it, closest first; the lag and unseen plots drop points that would not move
a pixel, as Jepsen's ``downsample-plot`` does.
"""

from __future__ import annotations

import html
import xml.etree.ElementTree as ET
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafka_lite.jepsen.history import NEMESIS, Op
from kafka_lite.jepsen.plots import element, final_phase, lag_chart, nemesis_events, unseen_chart

PAGE_NAME = "pictures.html"
MAX_KEYS = 12  # keys drawn on one page: those with the most anomalies first
MAX_COLUMNS = 96  # offsets drawn across one key's picture
MAX_ROWS = 240  # operations drawn down one key's picture
CONTEXT = 6  # offsets drawn either side of a marked one
SAMPLE_KEYS = 2  # keys drawn when the history is valid, so a clean staircase is there to compare with

# What each class means, in a sentence a learner reads beside the picture.
EXPLANATIONS = {
    "inconsistent-offsets": "clients saw different values at one offset; a partition's log holds one record per offset",
    "duplicate": "one value sits at more than one offset; an idempotent producer writes each record once",
    "G1a": "an ok poll read a value whose send failed (an aborted read)",
    "precommitted-read": "a transaction read its own send; Kafka hides a transaction's records until it commits",
    "lost-write": "a send that must have committed sits below an offset a client read, yet no ok poll read it",
    "poll-skip": "a process's poll began past the record after the last one it had read",
    "nonmonotonic-poll": "a process's poll began at or before a record it had already read",
    "int-poll-skip": "one poll jumped over records between two it returned",
    "int-nonmonotonic-poll": "one poll went back (or stood still) between two records it returned",
    "int-send-skip": "two sends of one transaction landed with other records between them (transactions interleave)",
    "int-nonmonotonic-send": "a later send of one transaction landed at or below an earlier one",
    "nonmonotonic-send": "a process's send landed at or below its previous send to the key",
    "unseen": "acknowledged sends that no ok poll read, even after the final phase read every key",
    "G0": "a cycle of write-write dependencies (Kafka isolates no writes)",
    "G0-process": "a cycle of write-write and process-order dependencies",
    "G0-realtime": "a cycle of write-write and real-time dependencies",
    "G1c": "a cycle of write-read (and write-write) dependencies: each transaction saw the other's effect",
    "G1c-process": "a G1c cycle closed by one process's order",
    "G1c-realtime": "a G1c cycle closed by real time",
    "empty-transaction-graph": "the history holds no send, poll or txn: a run that checked nothing passes nothing",
}

# The fields of an example, in the order a description names them.
_DESCRIBED = ("value", "values", "offset", "offsets", "index", "max_read_index", "delta", "count", "skipped")
# The fields that name operations: one op (an index, or the op as a dict) or a list of them.
_OP_FIELDS = ("op", "writer", "reader", "max_read")
_OPS_FIELDS = ("ops", "writers", "readers", "cycle")


# -- the checker's examples, as marks on a key --------------------------------------------------


@dataclass
class Mark:
    """What one example of the checker names on one key: the picture rings its values, shades its
    offsets and tints its operations' rows."""

    error_class: str
    key: int
    values: set = field(default_factory=set)
    skipped: set = field(default_factory=set)
    offsets: set = field(default_factory=set)
    ops: set = field(default_factory=set)
    text: str = ""


def _as_key(k: Any) -> int | None:
    try:
        return int(k)
    except (TypeError, ValueError):
        return None


def _ints(x: Any) -> set[int]:
    """The integers in a field that holds one or a list (Jepsen's values may also hold nil)."""
    items = x if isinstance(x, (list, tuple, set, frozenset)) else [x]
    return {i for i in items if isinstance(i, int) and not isinstance(i, bool)}


def _op_indexes(x: Any) -> set[int]:
    """Op indexes from a field holding an index, an op as a dict (``{"index": ...}``) or a list."""
    if isinstance(x, dict):
        return _ints(x.get("index"))
    if isinstance(x, (list, tuple)):
        return _union(_op_indexes(i) for i in x)
    return _ints(x)


def _example_ops(example: dict) -> set[int]:
    # A list field lists ops; the same name holding a number is a count (a history with no client
    # op says how many ops it had), not an op.
    return _union(_op_indexes(example.get(n)) for n in _OP_FIELDS) | _union(
        _op_indexes(example[n]) for n in _OPS_FIELDS if isinstance(example.get(n), (list, tuple))
    )


def _short(values: Iterable, limit: int = 8) -> str:
    items = [str(v) for v in values]
    return ", ".join(items[:limit]) + (f" ... ({len(items) - limit} more)" if len(items) > limit else "")


def describe(error_class: str, example: dict) -> str:
    """One line naming what an example of ``error_class`` holds: the key, values, offsets, gap and
    the operations (``#index``). The table of ``kafka-lite jepsen`` and the pictures' captions both
    print it."""
    parts = []
    if "key" in example:
        parts.append(f"key {example['key']}")
    for name in _DESCRIBED:
        if name in example and example[name] is not None:
            value = example[name]
            parts.append(f"{name} {_short(value) if isinstance(value, (list, tuple, set)) else value}")
    cycle, steps = example.get("cycle"), example.get("steps")
    if isinstance(cycle, list) and cycle:
        kinds = [s.get("type") for s in steps if isinstance(s, dict)] if isinstance(steps, list) else []
        parts.append("cycle " + " -> ".join(f"#{i.get('index') if isinstance(i, dict) else i}" for i in cycle)
                     + (f" ({', '.join(str(k) for k in kinds)})" if kinds else ""))  # fmt: skip
    else:
        ops = sorted(_example_ops(example))
        if ops:
            parts.append("ops " + _short(f"#{i}" for i in ops))
        elif isinstance(example.get("ops"), int):
            parts.append(f"ops {example['ops']}")
    return ", ".join(parts) if parts else str(example)[:120]


def worst_example(error_class: str, errs: Sequence[dict]) -> dict | None:
    """The example a summary shows first: Jepsen's ``condense-error`` keeps skips with the largest
    gap last and nonmonotonic steps with the smallest first; any other class's first is its worst."""
    if not errs:
        return None
    return errs[-1] if error_class.endswith("skip") else errs[0]


def _examples(result: dict) -> Iterable[tuple[str, dict]]:
    for error_class, entry in sorted((result.get("errors") or {}).items()):
        errs = entry.get("errs") if isinstance(entry, dict) else entry
        if isinstance(errs, list):
            for example in errs:
                if isinstance(example, dict):
                    yield error_class, example


def _example_keys(example: dict) -> list[int]:
    """The keys an example names: its own, or (a cycle's) those of its steps, in order."""
    steps = example.get("steps") if isinstance(example.get("steps"), list) else []
    named = [example.get("key")] + [s.get("key") for s in steps if isinstance(s, dict)]
    return list(dict.fromkeys(k for k in map(_as_key, named) if k is not None))


def marks_by_key(result: dict) -> dict[int, list[Mark]]:
    """Every key an example of the result names, with its marks. A cycle's example names its keys
    in its steps; its marks tint the cycle's operations on each of them."""
    marks: dict[int, list[Mark]] = defaultdict(list)
    for error_class, example in _examples(result):
        text = describe(error_class, example)
        ops = _example_ops(example)
        steps = [s for s in example.get("steps") or () if isinstance(s, dict)]
        for step in steps:
            ops |= _op_indexes(step.get("op"))
        for k in _example_keys(example):
            step_values = _union(
                _ints(s.get("value")) | _ints(s.get("next_value"))
                for s in steps
                if _as_key(s.get("key")) == k
            )
            marks[k].append(Mark(
                error_class, k,
                values=_ints(example.get("value")) | _ints(example.get("values")) | step_values,
                skipped=_ints(example.get("skipped")),
                offsets=_ints(example.get("offset")) | _ints(example.get("offsets")),
                ops=ops, text=text,
            ))  # fmt: skip
    return marks


# -- what each operation saw of a key ----------------------------------------------------------


@dataclass(frozen=True)
class Cell:
    offset: int
    value: int
    wrote: bool  # a send's record, else a poll's


@dataclass
class Row:
    op: Op
    cells: list[Cell]
    unplaced: list[int] = field(default_factory=list)  # values it sent whose offsets nobody knows


def key_rows(history: Iterable[Op], keys: set[int]) -> dict[int, list[Row]]:
    """Per key, each completed client operation that read or wrote it, in history order (Jepsen
    draws every completion, ok, info and fail alike). A send that failed or timed out has no
    offset: its value is kept aside, so an example that names it (an aborted read's writer) can
    still show its row."""
    rows: dict[int, list[Row]] = defaultdict(list)
    for op in history:
        if op.is_invoke or op.process == NEMESIS:
            continue
        # Cells only for the keys drawn: a long history has a hundred thousand ops, and most of
        # their records belong to keys nobody looks at.
        touched: dict[int, Row] = {}
        for mop in op.mops():
            if mop[0] == "send":
                k, sent = mop[1], mop[2]
                if k not in keys:
                    continue
                row = touched.setdefault(k, Row(op, []))
                if isinstance(sent, tuple) and sent[0] is not None:
                    row.cells.append(Cell(sent[0], sent[1], True))
                else:
                    row.unplaced.append(sent[1] if isinstance(sent, tuple) else sent)
            elif len(mop) > 1:
                for k, records in mop[1].items():
                    if k in keys:
                        row = touched.setdefault(k, Row(op, []))
                        row.cells.extend(Cell(o, v, False) for o, v in records if o is not None)
        for k, row in touched.items():
            if row.cells or row.unplaced:
                rows[k].append(row)
    return rows


def _columns(rows: list[Row], marks: list[Mark]) -> list[range]:
    """The offsets a key's picture draws, as ranges left to right: all of them when they fit, else
    windows around each mark's offsets and values, the first marks first (the caller puts the
    classes that make the history invalid first), until MAX_COLUMNS are taken."""
    offsets_of_value: dict[int, set[int]] = defaultdict(set)
    offsets_of_op: dict[int, set[int]] = defaultdict(set)
    for r in rows:
        for c in r.cells:
            offsets_of_value[c.value].add(c.offset)
            offsets_of_op[r.op.index].add(c.offset)
    offsets = sorted(_union(offsets_of_value.values()))
    if not offsets:
        return []
    if offsets[-1] - offsets[0] < MAX_COLUMNS:
        return [range(offsets[0], offsets[-1] + 1)]
    wanted: list[int] = []
    for m in marks:
        centres = m.offsets | _union(offsets_of_value[v] for v in m.values | m.skipped)
        # An example that names no value or offset here (a cycle's op) is drawn where its ops are.
        wanted.extend(sorted(centres or _union(offsets_of_op[i] for i in m.ops)))
    if not wanted:
        return [range(offsets[0], offsets[0] + MAX_COLUMNS)]
    chosen: set[int] = set()
    for centre in wanted:
        window = set(range(max(offsets[0], centre - CONTEXT), min(offsets[-1], centre + CONTEXT) + 1))
        if len(chosen | window) <= MAX_COLUMNS:
            chosen |= window
        elif len(chosen) < MAX_COLUMNS:
            chosen.add(centre)  # no room left for its surroundings: the marked offset alone
    ordered = sorted(chosen)
    starts = [o for i, o in enumerate(ordered) if i == 0 or ordered[i - 1] != o - 1]
    ends = [o for i, o in enumerate(ordered) if i == len(ordered) - 1 or ordered[i + 1] != o + 1]
    return [range(a, b + 1) for a, b in zip(starts, ends, strict=True)]


def _pick_rows(rows: list[Row], visible: set[int], marked_ops: set[int]) -> list[Row]:
    """The rows with a cell in a visible column, and marked rows of sends with no offset; past
    MAX_ROWS, the marked ones and then those nearest a marked one in the history, so the anomaly
    keeps its surroundings."""
    shown = [r for r in rows if any(c.offset in visible for c in r.cells)
             or (r.unplaced and r.op.index in marked_ops)]  # fmt: skip
    if len(shown) <= MAX_ROWS:
        return shown
    anchors = sorted(r.op.index for r in shown if r.op.index in marked_ops) or [shown[0].op.index]

    def distance(row: Row) -> int:
        i = bisect_left(anchors, row.op.index)
        near = [anchors[j] for j in (i - 1, i) if 0 <= j < len(anchors)]
        return min(abs(row.op.index - a) for a in near)

    kept = sorted(shown, key=distance)[:MAX_ROWS]
    return sorted(kept, key=lambda r: r.op.index)


# -- SVG ----------------------------------------------------------------------------------------

_ROW_H = 16
_LEFT = 210
_TOP = 30
_TYPE_STROKE = {"ok": "#9aa0a6", "info": "#f29900", "fail": "#e52592"}


def _value_colour(value: int) -> str:
    # The golden angle spreads neighbouring values far apart on the colour wheel, so the values
    # that fight over one offset are told apart at a glance (Jepsen colours them at random).
    return f"hsl({value * 137.508 % 360:.0f}, 70%, 78%)"


def _seconds(ns: int) -> str:
    return f"{ns / 1e9:.3f} s"


class _OrderPicture:
    """One key's order picture, laid out: which offsets are columns, which operations rows, and
    what the checker's marks ring, shade and tint."""

    def __init__(self, key: int, rows: list[Row], marks: list[Mark]) -> None:
        self.key = key
        self.windows = _columns(rows, marks)
        self.x_of: dict[int, int] = {}
        column = 0
        for n, window in enumerate(self.windows):
            column += 1 if n else 0  # one empty column stands for the offsets left out between windows
            for offset in window:
                self.x_of[offset] = column
                column += 1
        self.marked_ops = _union(m.ops for m in marks)
        self.marked_values = _union(m.values for m in marks)
        self.skipped_values = _union(m.skipped for m in marks)
        self.marked_offsets = _union(m.offsets for m in marks)
        self.rows = rows
        self.shown = _pick_rows(rows, set(self.x_of), self.marked_ops)
        self.values_at: dict[int, set[int]] = defaultdict(set)
        for r in rows:
            for c in r.cells:
                self.values_at[c.offset].add(c.value)
        widest = max(
            [len(str(c.value)) for r in self.shown for c in r.cells] + [len(str(max(self.x_of, default=0)))]
        )
        self.cw = max(22, 6 * widest + 10)
        self.by_process = _by_process(self.shown)
        self.unplaced_x = _LEFT + column * self.cw + 6  # sends with no offset are named right of the offsets
        self.width = self.unplaced_x + (150 if any(r.unplaced for r in self.shown) else 4)
        self.height = _TOP + (len(self.shown) + len(self.by_process)) * _ROW_H + 10

    def svg(self) -> ET.Element:
        offsets_touched = {c.offset for r in self.rows for c in r.cells}
        svg = element(None, "svg", xmlns="http://www.w3.org/2000/svg", width=self.width, height=self.height,
                  viewBox=f"0 0 {self.width} {self.height}", class_="order", data_key=self.key,
                  data_rows=len(self.shown), data_offsets=len(set(self.x_of) & offsets_touched))  # fmt: skip
        element(svg, "title", f"key {self.key}: offsets across, each process's operations down")
        self._draw_offsets(svg)
        # A process's rows left out (no cell in view, or past MAX_ROWS) leave a dashed line behind.
        place = {
            id(r): n for process_rows in _by_process(self.rows).values() for n, r in enumerate(process_rows)
        }
        y = _TOP
        for process, process_rows in self.by_process.items():
            element(svg, "line", x1=4, x2=self.width - 4, y1=y + 1, y2=y + 1, stroke="#dadce0")
            element(svg, "text", f"process {process}", x=6, y=y + 12, class_="process")
            y += _ROW_H
            before = -1
            for r in process_rows:
                if place[id(r)] != before + 1 and before >= 0:
                    element(svg, "line", x1=18, x2=self.width - 4, y1=y, y2=y, stroke="#9aa0a6",
                        stroke_dasharray="2,3", class_="rows-left-out")  # fmt: skip
                before = place[id(r)]
                self._draw_row(svg, r, y)
                y += _ROW_H
        return svg

    def _draw_offsets(self, svg: ET.Element) -> None:
        first = min(self.x_of, default=0)
        for offset, col in self.x_of.items():
            x = _LEFT + col * self.cw
            if offset in self.marked_offsets:
                element(svg, "rect", x=x, y=_TOP - 14, width=self.cw, height=self.height - _TOP + 4,
                    class_="marked-offset", fill="#fde2e1", data_offset=offset)  # fmt: skip
            if offset % 5 == 0 or offset == first or offset in self.marked_offsets or len(self.x_of) <= 20:
                element(
                    svg,
                    "text",
                    str(offset),
                    x=x + self.cw / 2,
                    y=_TOP - 4,
                    class_="offset",
                    text_anchor="middle",
                )
        for window in self.windows[1:]:
            x = _LEFT + (self.x_of[window.start] - 1) * self.cw
            element(svg, "text", "...", x=x + self.cw / 2, y=_TOP - 4, text_anchor="middle", class_="gap")
        element(svg, "text", "offset", x=_LEFT - 8, y=_TOP - 4, text_anchor="end", class_="axis")

    def _draw_row(self, svg: ET.Element, row: Row, y: int) -> None:
        op = row.op
        marked = op.index in self.marked_ops
        g = element(svg, "g", class_="row marked-op" if marked else "row", data_op=op.index)
        if marked:
            element(g, "rect", x=2, y=y, width=self.width - 4, height=_ROW_H, fill="#fce8e6")
        label = f"#{op.index} {op.type} {op.f} {_seconds(op.time)}"
        element(g, "text", label, x=18, y=y + 12, class_="label marked" if marked else "label")
        for c in row.cells:
            if c.offset in self.x_of:
                self._draw_cell(g, op, c, _LEFT + self.x_of[c.offset] * self.cw, y)
        if row.unplaced:
            marked_values = [v for v in row.unplaced if v in self.marked_values]
            element(g, "text", f"sent {_short(row.unplaced, 4)}, offset unknown", x=self.unplaced_x, y=y + 12,
                class_="unplaced marked" if marked_values else "unplaced", data_values=_short(row.unplaced, 4))  # fmt: skip

    def _draw_cell(self, g: ET.Element, op: Op, c: Cell, x: float, y: int) -> None:
        classes = ["cell", "write" if c.wrote else "read"]
        if len(self.values_at[c.offset]) > 1:
            fill = _value_colour(c.value)
            classes.append("conflict")
        else:
            fill = "#ceead6" if c.wrote else "#d2e3fc"
        stroke, stroke_width, dash = _TYPE_STROKE.get(op.type, "#9aa0a6"), 1, {}
        if c.value in self.marked_values:
            stroke, stroke_width = "#c5221f", 2.5
            classes.append("marked")
        elif c.value in self.skipped_values:
            stroke, stroke_width, dash = "#c5221f", 1.5, {"stroke_dasharray": "3,2"}
            classes.append("skipped")
        cell = element(g, "g", class_=" ".join(classes), data_offset=c.offset, data_value=c.value)
        element(cell, "rect", x=x + 1, y=y + 1, width=self.cw - 2, height=_ROW_H - 2, rx=2, fill=fill, stroke=stroke,
            stroke_width=stroke_width, **dash)  # fmt: skip
        element(cell, "text", str(c.value), x=x + self.cw / 2, y=y + 12, text_anchor="middle")
        what = "wrote" if c.wrote else "read"
        element(cell, "title", f"process {op.process}, op #{op.index} ({op.type} {op.f}) {what} "
                           f"value {c.value} at offset {c.offset}")  # fmt: skip


def _union(sets: Iterable[set]) -> set:
    out: set = set()
    for s in sets:
        out |= s
    return out


def _by_process(rows: list[Row]) -> dict[Any, list[Row]]:
    grouped: dict[Any, list[Row]] = {}
    for r in rows:
        grouped.setdefault(r.op.process, []).append(r)
    return grouped


def order_svg(key: int, rows: list[Row], marks: list[Mark]) -> ET.Element:
    """The order picture of one key: offsets across, each process's operations down, in the order
    it made them."""
    return _OrderPicture(key, rows, marks).svg()


# -- the page -----------------------------------------------------------------------------------

_STYLE = """
body { font-family: Helvetica, Arial, sans-serif; margin: 24px; color: #202124; }
h1 { font-size: 20px; } h2 { font-size: 16px; margin-top: 32px; }
.valid { color: #188038; font-weight: bold; } .invalid { color: #c5221f; font-weight: bold; }
table.summary { border-collapse: collapse; } table.summary td, table.summary th
  { border: 1px solid #dadce0; padding: 3px 8px; text-align: left; font-size: 13px; }
.scroll { overflow: auto; max-height: 80vh; border: 1px solid #dadce0; }
svg text { font-size: 10px; } svg .process { font-weight: bold; font-size: 11px; }
svg .label.marked, svg .unplaced.marked { fill: #c5221f; font-weight: bold; } svg .chart-title { font-size: 13px; }
ul.captions li { margin: 4px 0; } .class { font-weight: bold; } .allowed { color: #5f6368; }
"""

_LEGEND = """<p>How to read a key's picture: offsets run left to right; each process's operations run
top to bottom in the order it made them (the row's label gives the op's index, type, function and time).
A <b style="background:#d2e3fc">blue</b> cell is a record a poll read, a
<b style="background:#ceead6">green</b> one a record a send wrote, at that offset; a grey border means the
op was ok, orange info (outcome unknown), pink fail. Two colours at one offset are values that fight over it.
The anomaly is in red: its values ringed (skipped values dashed), its offsets shaded, its operations'
rows tinted. Hover over a cell for the op that read or wrote it.</p>"""


def _summary_table(result: dict, anchors: dict[int, str]) -> str:
    bad = set(result.get("bad_error_types") or ())
    rows = []
    for error_class, entry in sorted((result.get("errors") or {}).items()):
        errs = entry.get("errs", []) if isinstance(entry, dict) else []
        count = entry.get("count", len(errs)) if isinstance(entry, dict) else ""
        worst = worst_example(error_class, errs)
        text = html.escape(describe(error_class, worst)) if worst else ""
        keys = _example_keys(worst) if worst else []
        key = next((k for k in keys if k in anchors), None)
        if key is not None:
            text = f'<a href="#{anchors[key]}">{text}</a>'
        allowed = "no" if error_class in bad else "yes"
        rows.append(
            f"<tr><td>{html.escape(error_class)}</td><td>{count}</td><td>{allowed}</td><td>{text}</td></tr>"
        )
    if not rows:
        return "<p>No anomaly of any class.</p>"
    head = "<tr><th>class</th><th>count</th><th>allowed?</th><th>worst example</th></tr>"
    return f'<table class="summary">{head}{"".join(rows)}</table>'


def _captions(marks: list[Mark], bad: set[str]) -> str:
    if not marks:
        return "<p>No anomaly on this key: each process read it in offset order.</p>"
    items = []
    for m in marks[:16]:
        allowed = ' <span class="allowed">(allowed)</span>' if m.error_class not in bad else ""
        items.append(f'<li><span class="class">{html.escape(m.error_class)}</span>{allowed}: '
                     f"{html.escape(EXPLANATIONS.get(m.error_class, ''))}. <i>{html.escape(m.text)}</i></li>")  # fmt: skip
    more = f"<li>... and {len(marks) - 16} more examples</li>" if len(marks) > 16 else ""
    return f'<ul class="captions">{"".join(items)}{more}</ul>'


def _keys_to_draw(history: Sequence[Op], marks: dict[int, list[Mark]], bad: set[str]) -> list[int]:
    """The keys with the most examples of classes that make the history invalid, then with the
    most examples; for a valid history, the keys most operations touched."""
    if marks:

        def weight(k: int) -> tuple:
            return -sum(m.error_class in bad for m in marks[k]), -len(marks[k]), k

        return sorted(marks, key=weight)[:MAX_KEYS]
    counts: dict[int, int] = defaultdict(int)
    for op in history:
        if op.process != NEMESIS and not op.is_invoke:
            for mop in op.mops():
                for k in [mop[1]] if mop[0] == "send" else (mop[1] if len(mop) > 1 else {}):
                    counts[k] += 1
    return sorted(counts, key=lambda k: (-counts[k], k))[:SAMPLE_KEYS]


def render_page(history: Sequence[Op], result: dict, analysis: dict | None = None, title: str = "") -> str:
    """The whole page, as well-formed XHTML (so it parses as XML as well as in any browser)."""
    marks = marks_by_key(result)
    bad = set(result.get("bad_error_types") or ())
    keys = _keys_to_draw(history, marks, bad)
    rows = key_rows(history, set(keys))
    anchors = {k: f"key-{k}" for k in keys}
    valid = result.get("valid")
    verdict = '<span class="valid">valid</span>' if valid else '<span class="invalid">not valid</span>'
    stats = result.get("stats") or {}
    parts = [
        "<!DOCTYPE html>",
        '<html xmlns="http://www.w3.org/1999/xhtml"><head><meta charset="utf-8"/>',
        f"<title>{html.escape(title or 'Jepsen check')}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{html.escape(title or 'Jepsen check')}: {verdict}</h1>",
        "<p>" + html.escape(", ".join(f"{k} {v}" for k, v in stats.items())) + "</p>",
        _summary_table(result, anchors),
        _LEGEND,
    ]
    if len(marks) > len(keys):
        left = len(marks) - len(keys)
        parts.append(f"<p>Not drawn: {left} more key{'s' if left > 1 else ''} with anomalies (the page draws "
                     f"{MAX_KEYS} at most).</p>")  # fmt: skip
    for k in keys:
        parts.append(f'<h2 id="{anchors[k]}">key {k}</h2>')
        # The classes that make the history invalid come first: in the captions and in the window.
        key_marks = sorted(marks.get(k, []), key=lambda m: m.error_class not in bad)
        parts.append(_captions(key_marks, bad))
        svg = order_svg(k, rows[k], key_marks)
        offsets = {c.offset for r in rows[k] for c in r.cells}
        if svg.get("data-rows") != str(len(rows[k])) or svg.get("data-offsets") != str(len(offsets)):
            parts.append(f"<p>Drawn: {svg.get('data-rows')} of the {len(rows[k])} operations that touched this "
                         f"key, {svg.get('data-offsets')} of its {len(offsets)} offsets, around the anomaly.</p>")  # fmt: skip
        parts.append(f'<div class="scroll">{ET.tostring(svg, encoding="unicode")}</div>')
    events = nemesis_events(history)
    for chart in (lag_chart(analysis, events), unseen_chart(analysis, events + final_phase(history))):
        if chart is not None:
            parts.append(ET.tostring(chart, encoding="unicode"))
    parts.append("</body></html>")
    return "\n".join(parts)


def write_pictures(
    history: Sequence[Op], result: dict, analysis: dict | None, out_dir: Path, *, title: str = "Jepsen check"
) -> list[Path]:
    """Write the page of pictures for a checked history into ``out_dir`` and return the files
    written. ``result`` is the checker's result map; ``analysis`` (optional) its analysis, whose
    realtime lag and unseen series are plotted when present."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    page = out_dir / PAGE_NAME
    page.write_text(render_page(history, result, analysis, title=title), encoding="utf-8")
    return [page]
