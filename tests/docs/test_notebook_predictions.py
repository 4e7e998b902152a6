"""A chapter notebook's "predict, then run" steps ask before they answer.

A step, in the notebook's cells:

1. the prompt, a markdown cell that starts with ``**Predict, then run.**``;
2. right after it, a code cell tagged ``prediction`` where the reader writes the prediction down
   (its default is ``...``, so the notebook still runs unedited);
3. the cells that run the step and show what happens, with no ``assert`` in them: an assertion is
   the answer, written out before the reader has looked;
4. the explanation, one collapsed ``<details><summary>Why</summary>`` block;
5. after it, a code cell tagged ``check`` with the assertions that make running the notebook a test
   (mkdocs.yml's mkdocs-jupyter leaves ``check`` cells out of the rendered page).

Only the notebook's JSON is read here; running the notebooks (nbmake, the docs build) keeps their
assertions true.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "chapters").rglob("*.ipynb"))
PROMPT = "**Predict, then run.**"
WHY_OPEN = "<details><summary>Why</summary>"
MIN_STEPS = 3


@dataclass(frozen=True)
class Cell:
    kind: str
    source: str
    tags: frozenset[str]

    @property
    def is_prompt(self) -> bool:
        return self.kind == "markdown" and self.source.lstrip().startswith(PROMPT)

    @property
    def is_why(self) -> bool:
        # Recognised open as well as collapsed, so that an open one is reported as such.
        text = self.source.lstrip()
        return (
            self.kind == "markdown" and text.startswith("<details") and WHY_OPEN[9:] in text.split("\n", 1)[0]
        )


def _cells(path: Path) -> list[Cell]:
    notebook = json.loads(path.read_text(encoding="utf-8"))
    return [
        Cell(cell["cell_type"], "".join(cell["source"]), frozenset(cell.get("metadata", {}).get("tags", ())))
        for cell in notebook["cells"]
    ]


def _nodes(source: str) -> list[ast.AST]:
    # IPython magics are not Python; the steps use none.
    return list(ast.walk(ast.parse(source)))


def _asserts(cell: Cell) -> bool:
    return cell.kind == "code" and any(isinstance(node, ast.Assert) for node in _nodes(cell.source))


def _name(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else path.name


def check_steps(path: Path) -> list[int]:
    """The index of each step's prompt; fails on the first cell that breaks the shape."""
    cells = _cells(path)
    name = _name(path)
    prompts = [i for i, cell in enumerate(cells) if cell.is_prompt]
    for n, i in enumerate(prompts):
        where = f"{name}, cell {i}"
        assert cells[i].source.strip() != PROMPT, f"{where}: a prompt without a question"
        assert i + 1 < len(cells), f"{where}: the notebook ends at the prompt"
        prediction = cells[i + 1]
        assert prediction.kind == "code" and "prediction" in prediction.tags, (
            f"{where}: the cell after the prompt must be a code cell tagged 'prediction'"
        )
        assert any(
            isinstance(node, ast.Constant) and node.value is Ellipsis for node in _nodes(prediction.source)
        ), f"{where}: the prediction cell's default must be ... (so the notebook runs unedited)"
        end = prompts[n + 1] if n + 1 < len(prompts) else len(cells)
        why = next((j for j in range(i + 1, end) if cells[j].is_why), None)
        assert why is not None, f"{where}: no <details><summary>Why</summary> after the prompt"
        for j in range(i + 1, why):
            assert "check" not in cells[j].tags, f"{name}, cell {j}: a check cell before the Why"
            assert not _asserts(cells[j]), (
                f"{name}, cell {j}: an assert between prompt {i} and its Why tells the answer"
            )
        text = cells[why].source.strip()
        assert text.startswith(WHY_OPEN) and text.endswith("</details>") and text.count("<details") == 1, (
            f"{name}, cell {why}: the Why must be one collapsed {WHY_OPEN} ... </details> block"
        )
        assert len(text) > len(WHY_OPEN) + len("</details>") + 40, f"{name}, cell {why}: an empty Why"
        checks = [j for j in range(why + 1, end) if "check" in cells[j].tags]
        assert checks, f"{where}: no cell tagged 'check' after the Why (the step asserts nothing)"
    for j, cell in enumerate(cells):
        if "prediction" in cell.tags:
            assert j > 0 and cells[j - 1].is_prompt, f"{name}, cell {j}: a prediction cell without a prompt"
        if "check" in cell.tags:
            assert any(c.is_why for c in cells[:j]), f"{name}, cell {j}: a check cell before any Why"
            assert _asserts(cell), f"{name}, cell {j}: a check cell with no assert"
    return prompts


def test_there_are_notebooks():
    assert len(NOTEBOOKS) >= 14


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT / "chapters")))
def test_every_prompt_is_predicted_before_it_is_answered(path):
    found = check_steps(path)
    assert len(found) >= MIN_STEPS, (
        f"{_name(path)} has {len(found)} predict-then-run steps, needs {MIN_STEPS}"
    )


PROMPT_CELL = ("markdown", f"{PROMPT} Which nodes does `ready` return?", ())
PREDICTION = ("code", "prediction = ...  # which nodes? then run on", ("prediction",))
RUN = ("code", "ready = {0, 1}\nprint(ready)", ())
WHY = ("markdown", f"{WHY_OPEN}\n\nBecause a full batch makes its leader ready at once.\n\n</details>", ())
CHECK = ("code", "assert ready == {0, 1}", ("check",))


def _write(tmp_path: Path, name: str, cells) -> Path:
    path = tmp_path / f"{name}.ipynb"
    notebook = {
        "cells": [
            {"cell_type": kind, "source": source, "metadata": {"tags": list(tags)}}
            for kind, source, tags in cells
        ]
    }
    path.write_text(json.dumps(notebook), encoding="utf-8")
    return path


def test_the_shape_is_recognised(tmp_path):
    """Hand-made notebooks: the good step counts, and each way of breaking it fails."""
    good = [PROMPT_CELL, PREDICTION, RUN, WHY, CHECK]
    assert check_steps(_write(tmp_path, "good", good)) == [0]
    answered = ("code", "ready = {0, 1}\nassert ready == {0, 1}", ())
    broken = {
        "tagged 'prediction'": [PROMPT_CELL, RUN, WHY, CHECK],
        "runs unedited": [PROMPT_CELL, ("code", "prediction = None", ("prediction",)), RUN, WHY, CHECK],
        "tells the answer": [PROMPT_CELL, PREDICTION, answered, WHY, CHECK],
        "no <details>": [PROMPT_CELL, PREDICTION, RUN, CHECK],
        "collapsed": [
            PROMPT_CELL,
            PREDICTION,
            RUN,
            ("markdown", WHY[1].replace("<details>", "<details open>"), ()),
            CHECK,
        ],
        "asserts nothing": [PROMPT_CELL, PREDICTION, RUN, WHY],
        "check cell before the Why": [PROMPT_CELL, PREDICTION, RUN, CHECK, WHY, CHECK],
        "before any Why": [CHECK, PROMPT_CELL, PREDICTION, RUN, WHY, CHECK],
        "with no assert": [PROMPT_CELL, PREDICTION, RUN, WHY, ("code", "print(ready)", ("check",))],
        "without a prompt": [PREDICTION, *good],
    }
    for message, cells in broken.items():
        with pytest.raises(AssertionError, match=message):
            check_steps(_write(tmp_path, message.replace(" ", "_").replace("'", ""), cells))
