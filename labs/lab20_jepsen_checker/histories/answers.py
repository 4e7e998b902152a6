"""Write ``answers.json``: what the reference checker finds in each recorded history of this folder.

Lab 20's graders hold a learner's analyses to these answers. Run it again after adding a history
(``.venv/bin/python labs/lab20_jepsen_checker/histories/answers.py``); README.md says where each
history came from.
"""

from __future__ import annotations

import json
from pathlib import Path

from kafka_lite.jepsen.checker import (
    _Index,
    cycle_cases,
    duplicate_cases,
    g1a_cases,
    lost_write_cases,
    precommitted_read_cases,
    version_orders,
)
from kafka_lite.jepsen.history import read_history

HERE = Path(__file__).parent


def answers(path: Path) -> dict:
    index = _Index(read_history(path))
    orders, inconsistent = version_orders(index)
    return {
        "version_order_lengths": {str(k): len(order.log) for k, order in orders.items()},
        "inconsistent-offsets": sorted([e["key"], e["offset"], e["values"]] for e in inconsistent),
        "duplicate": sorted([e["key"], e["value"], e["offsets"]] for e in duplicate_cases(orders)),
        "lost-write": sorted([e["key"], e["value"]] for e in lost_write_cases(index, orders)),
        "G1a": sorted([e["key"], e["value"], e["reader"]] for e in g1a_cases(index)),
        "precommitted-read": sorted([e["op"], e["key"], e["value"]] for e in precommitted_read_cases(index)),
        "cycles": {name: len(errs) for name, errs in sorted(cycle_cases(index, {}, False).items())},
    }


def main() -> None:
    found = {path.stem: answers(path) for path in sorted(HERE.glob("*.jsonl"))}
    (HERE / "answers.json").write_text(json.dumps(found, indent=1) + "\n", encoding="utf-8")
    for name, answer in found.items():
        classes = [c for c in ("inconsistent-offsets", "duplicate", "lost-write", "G1a", "precommitted-read")
                   if answer[c]] + list(answer["cycles"])  # fmt: skip
        print(f"{name}: {', '.join(classes) or 'nothing'}")


if __name__ == "__main__":
    main()
