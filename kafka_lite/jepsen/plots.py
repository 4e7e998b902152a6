"""The plots of a checked history: realtime lag and unseen sends over time, with the faults marked.

No Kafka twin: Jepsen's Kafka checker's ``plot-realtime-lag!`` and ``plot-unseen!`` (with
``downsample-plot``), in ``jepsen/src/jepsen/tests/kafka.clj``, drawn as inline SVG for the page of
``pictures`` instead of gnuplot PNGs. The lag plot says how far behind the log's end each process
read; the unseen plot how many acknowledged sends no poll had read yet, which the final phase must
bring to zero for each key.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from kafka_lite.jepsen.history import NEMESIS, Op


def element(parent: ET.Element | None, tag: str, text: str | None = None, **attrs: Any) -> ET.Element:
    """An SVG element, its attributes given in Python's spelling (``class_``, ``text_anchor``,
    ``data_key``) and written in SVG's (``class``, ``text-anchor``, ``data-key``)."""
    attrs = {k.rstrip("_").replace("_", "-"): str(v) for k, v in attrs.items()}
    e = ET.Element(tag, attrs) if parent is None else ET.SubElement(parent, tag, attrs)
    if text is not None:
        e.text = text
    return e


def downsample(points: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """Jepsen's ``downsample-plot``: drop a point that moves less than 1/200 of the x range and 1/100
    of the y range from the last one kept; keep any point that goes back in x."""
    if not points:
        return []
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    dx, dy = (max(xs) - min(xs)) / 200, (max(ys) - min(ys)) / 100
    kept: list[tuple[float, float]] = []
    last_x = last_y = float("-inf")
    for x, y in points:
        if x < last_x or abs(x - last_x) > dx or abs(y - last_y) > dy:
            kept.append((x, y))
            last_x, last_y = x, y
    return kept


_SERIES_COLOURS = ("#1a73e8", "#d93025", "#188038", "#f29900", "#9334e6", "#12b5cb", "#e52592", "#5f6368")


def line_chart(title: str, y_label: str, series: dict[str, list[tuple[float, float]]],
               events: Sequence[tuple[float, str]] = ()) -> ET.Element:  # fmt: skip
    """A plot of each series (x in seconds), downsampled, with vertical lines at ``events`` (the
    nemesis's actions), as Jepsen's perf plots shade its faults."""
    w, h, left, bottom, top = 760, 300, 60, 40, 24
    series = {name: downsample(points) for name, points in series.items() if points}
    xs = [x for pts in series.values() for x, _ in pts] + [x for x, _ in events]
    ys = [y for pts in series.values() for _, y in pts]
    x_max, y_max = max(xs, default=1.0) or 1.0, max(ys, default=1.0) or 1.0
    svg = element(None, "svg", xmlns="http://www.w3.org/2000/svg", width=w + 180, height=h, class_="chart")
    element(svg, "text", title, x=left, y=16, class_="chart-title")

    def px(x: float, y: float) -> tuple[float, float]:
        return left + x / x_max * (w - left), h - bottom - y / y_max * (h - bottom - top)

    element(svg, "line", x1=left, x2=w, y1=h - bottom, y2=h - bottom, stroke="#5f6368")
    element(svg, "line", x1=left, x2=left, y1=top, y2=h - bottom, stroke="#5f6368")
    for i in range(5):
        x_val, y_val = x_max * i / 4, y_max * i / 4
        element(svg, "text", f"{x_val:.3g}", x=px(x_val, 0)[0], y=h - bottom + 14, text_anchor="middle")
        element(
            svg, "text", f"{y_val:.3g}", x=left - 4, y=px(0, y_val)[1] + 4, text_anchor="end", class_="y-tick"
        )
    element(svg, "text", "time (s)", x=(left + w) / 2, y=h - 6, text_anchor="middle", class_="axis")
    element(svg, "text", y_label, x=12, y=top - 6, class_="axis")
    for n, (x, label) in enumerate(events):
        ex = px(x, 0)[0]
        line = element(svg, "line", x1=ex, x2=ex, y1=top, y2=h - bottom, stroke="#f29900",
                   stroke_dasharray="4,3", class_="event")  # fmt: skip
        element(line, "title", label)
        # Labels step down in three rows, so faults close in time do not write over each other.
        element(
            svg, "text", label[:24], x=ex + 2, y=top + 8 + 11 * (n % 3), fill="#b06000", class_="event-label"
        )
    for n, (name, points) in enumerate(series.items()):
        colour = _SERIES_COLOURS[n % len(_SERIES_COLOURS)]
        path = " ".join(f"{px(x, y)[0]:.1f},{px(x, y)[1]:.1f}" for x, y in points)
        element(svg, "polyline", points=path, fill="none", stroke=colour, stroke_width=1.5, class_="series",
            data_name=name)  # fmt: skip
        for x, y in points:  # points as well as lines (Jepsen's linespoints): a lone poll still shows
            cx, cy = px(x, y)
            element(svg, "circle", cx=f"{cx:.1f}", cy=f"{cy:.1f}", r=2, fill=colour)
        element(svg, "text", name, x=w + 30, y=top + 14 * n + 10, fill=colour)  # clear of a fault's label
    return svg


def fault_label(op: Op) -> str:
    """A fault's action in a few words: ``kill nodes=2 as=any`` for ``{"nodes": [2], "as": "any"}``."""

    def text(v: Any) -> str:
        return ",".join(map(str, v)) if isinstance(v, (list, tuple)) else str(v)

    if isinstance(op.value, dict):
        return " ".join([op.f, *(f"{k}={text(v)}" for k, v in op.value.items())])
    return op.f if op.value is None else f"{op.f} {text(op.value)}"


def nemesis_events(history: Sequence[Op]) -> list[tuple[float, str]]:
    return [(op.time / 1e9, fault_label(op)) for op in history if op.process == NEMESIS and not op.is_invoke]


def final_phase(history: Sequence[Op]) -> list[tuple[float, str]]:
    """When the final phase began and ended: as Jepsen finds it, the history's longest tail of
    polls, assigns and crashes (the faults' ops aside)."""
    client = [op for op in history if op.process != NEMESIS]
    tail = 0
    while tail < len(client) and client[-1 - tail].f in ("poll", "assign", "crash"):
        tail += 1
    if not tail:
        return []
    return [(client[-tail].time / 1e9, "final phase"), (client[-1].time / 1e9, "end")]


def lag_chart(analysis: dict | None, events) -> ET.Element | None:
    """Jepsen's realtime lag by process: at each poll, the largest lag over the keys it holds."""
    lags = (analysis or {}).get("realtime_lag") or []
    worst: dict[tuple, float] = {}
    for lag in lags:
        at = (lag["process"], lag["time"])
        worst[at] = max(worst.get(at, 0.0), lag["lag"] / 1e9)
    series: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for (process, time), lag in sorted(worst.items(), key=lambda item: item[0][1]):
        series[f"process {process}"].append((time / 1e9, lag))
    if not series:
        return None
    busiest = dict(sorted(series.items(), key=lambda s: -max(y for _, y in s[1]))[:8])
    return line_chart("realtime lag (the 8 processes that lagged most)", "lag (s)", busiest, events)


def unseen_chart(analysis: dict | None, events) -> ET.Element | None:
    """Jepsen's unseen plot: per key, the acknowledged sends no ok poll had read yet, over time."""
    points = (analysis or {}).get("unseen") or []
    if not isinstance(points, list):
        return None
    series: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for point in points:
        for k, n in (point.get("unseen") or {}).items():
            series[f"key {k}"].append((point["time"] / 1e9, float(n)))
    if not any(y for pts in series.values() for _, y in pts):
        return None
    largest = dict(sorted(series.items(), key=lambda s: -max(y for _, y in s[1]))[:8])
    return line_chart("unseen acknowledged sends (the 8 keys with most)", "records", largest, events)
