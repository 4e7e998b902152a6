"""A benchmark's headline figures, written as JSON beside what it prints for people.

No Kafka twin: the machine-readable half of a benchmark's report, which ``run_all.py`` collects into
``results/latest.json`` and ``page.py`` turns into the benchmark page's "At a glance" table.

Every script takes ``--json PATH``; with it, the script prints exactly what it prints without it and
also writes one object::

    {"benchmark": "bench_producer", "argv": [...],
     "figures": [{"name": "...", "value": 1.52, "unit": "x", "goal": {"at_least": 1.4},
                  "detail": "205,877 records/s against aiokafka's 138,949"}, ...]}

A figure is a ratio or a rate measured in that run. Its goal, where the project sets one, is a bound
(``at_least`` or ``at_most``) in the figure's own unit; the page says whether the run met it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def figure(
    name: str,
    value: float,
    unit: str,
    *,
    at_least: float | None = None,
    at_most: float | None = None,
    detail: str = "",
) -> dict[str, Any]:
    """One headline figure; ``unit`` is "x" for a ratio, "%" for a share (value 0.93 is 93 %), or a
    unit of measure ("records/s", "s", "ms", "µs")."""
    goal = None
    if at_least is not None:
        goal = {"at_least": at_least}
    elif at_most is not None:
        goal = {"at_most": at_most}
    return {"name": name, "value": float(value), "unit": unit, "goal": goal, "detail": detail}


def write(path: str | Path | None, benchmark: str, figures: list[dict[str, Any]]) -> None:
    """Write ``figures`` to ``path`` (nothing when ``path`` is None: ``--json`` was not given)."""
    if path is None:
        return
    document = {"benchmark": benchmark, "argv": sys.argv[1:], "figures": figures}
    Path(path).write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n")


def add_argument(parser: Any) -> None:
    """The ``--json PATH`` option every benchmark shares."""
    parser.add_argument(
        "--json", metavar="PATH", help="also write the headline figures to PATH (for run_all.py)"
    )
