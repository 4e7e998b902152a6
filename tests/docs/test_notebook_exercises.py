"""Every chapter notebook asks the learner to predict before it runs: at least three steps, each a
question, a cell that runs it and asserts the outcome, and the explanation folded after it.

A step is three cells in a row: a markdown cell that starts with ``**Predict, then run.**``, a code
cell with an ``assert``, and a markdown cell that is one ``<details><summary>Why</summary>`` block
(plain HTML, which the site's notebook pages render collapsed). Running the notebooks (nbmake, and
the docs build) keeps the assertions true; this test keeps the shape. That they are stored without
outputs (so an answer is not printed under its question) is ``tests/test_repository.py``'s check.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "chapters").rglob("*.ipynb"))
QUESTION = "**Predict, then run.**"
WHY_OPEN = "<details><summary>Why</summary>"
MIN_STEPS = 3


def _name(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else path.name


def _cells(path: Path) -> list[tuple[str, str]]:
    notebook = json.loads(path.read_text(encoding="utf-8"))
    return [(cell["cell_type"], "".join(cell["source"])) for cell in notebook["cells"]]


def _asserts(source: str) -> bool:
    # IPython magics are not Python; the notebooks use none in their steps.
    tree = ast.parse(source)
    return any(isinstance(node, ast.Assert) for node in ast.walk(tree))


def steps(path: Path) -> list[int]:
    """The index of each step's question cell; fails on a step that is not shaped as one."""
    cells = _cells(path)
    found = []
    for i, (kind, source) in enumerate(cells):
        if not (kind == "markdown" and source.lstrip().startswith(QUESTION)):
            continue
        where = f"{_name(path)}, cell {i}"
        assert source.strip() != QUESTION, f"{where}: a step without a question"
        assert i + 2 < len(cells), f"{where}: the notebook ends before the step's run and answer"
        (run_kind, run), (why_kind, why) = cells[i + 1], cells[i + 2]
        assert run_kind == "code" and _asserts(run), f"{where}: the next cell must run it and assert"
        assert why_kind == "markdown", f"{where}: the explanation must follow the run"
        why = why.strip()
        assert why.startswith(WHY_OPEN) and why.endswith("</details>"), (
            f"{where}: the explanation must be one collapsed {WHY_OPEN} ... </details> block"
        )
        assert why.count("<details") == 1 and " open" not in why.split(">", 1)[0], (
            f"{where}: one block, collapsed"
        )
        assert len(why) > len(WHY_OPEN) + len("</details>") + 40, f"{where}: an empty explanation"
        found.append(i)
    return found


def test_there_are_notebooks():
    assert len(NOTEBOOKS) >= 14


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT / "chapters")))
def test_every_notebook_has_three_predict_then_run_steps(path):
    found = steps(path)
    assert len(found) >= MIN_STEPS, (
        f"{_name(path)} has {len(found)} predict-then-run steps, needs {MIN_STEPS}"
    )


def test_the_shape_is_recognised(tmp_path):
    """A hand-made notebook: one good step counts, and a step whose answer is open fails."""
    good = [
        ("markdown", f"{QUESTION} What does `ready` return?"),
        ("code", "assert 1 + 1 == 2"),
        ("markdown", f"{WHY_OPEN}\n\nBecause the accumulator's deque is drained per node.\n\n</details>"),
    ]
    bad = [*good[:2], ("markdown", "<details open><summary>Why</summary>\n\nVisible.\n\n</details>")]

    def write(cells, name):
        path = tmp_path / f"{name}.ipynb"
        notebook = {"cells": [{"cell_type": k, "source": s} for k, s in cells]}
        path.write_text(json.dumps(notebook), encoding="utf-8")
        return path

    assert steps(write(good, "good")) == [0]
    with pytest.raises(AssertionError, match="collapsed"):
        steps(write(bad, "open"))
    with pytest.raises(AssertionError, match="ends before"):
        steps(write(good[:2], "unanswered"))
