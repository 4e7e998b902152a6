"""A notebook page leaves out its ``check`` cells: the assertions that make running a notebook a test
follow each prompt's explanation in the notebook, and mkdocs.yml's mkdocs-jupyter
(``remove_tag_config``) keeps them off the rendered page, where they would only repeat the answer.

One step of one notebook stands for all: its check cell's first assertion is not on the page, while
its prompt and a line of its run cell are (so the search does find a cell's code through the page's
highlighting, and an absence means the cell is not there)."""

from __future__ import annotations

import json
import re

import pytest

from tests.docs.site import ROOT, normalize, readable_text

pytestmark = pytest.mark.docs

NOTEBOOK = "chapters/ch06_storage/record_batch.ipynb"
STEP = "predict-2"  # flip a bit in partitionLeaderEpoch, and one in producerId: which does the CRC catch?


def _cell(cells: list[dict], cell_id: str) -> str:
    (source,) = ["".join(c["source"]) for c in cells if c.get("id") == cell_id]
    return source


def test_a_check_cell_is_not_on_its_notebooks_page(site):
    cells = json.loads((ROOT / NOTEBOOK).read_text(encoding="utf-8"))["cells"]
    check = next(line for line in _cell(cells, f"{STEP}-check").splitlines() if line.startswith("assert "))
    shown = next(line for line in _cell(cells, f"{STEP}-run").splitlines() if line.startswith("print("))
    # The prompt as a reader sees it: the Markdown's ** and ` become tags, which the page's text drops.
    prompt = normalize(re.sub(r"[*`]", "", _cell(cells, f"{STEP}-question"))).strip()

    page = readable_text(site / NOTEBOOK.replace(".ipynb", ".html"))
    assert prompt in page, "the prompt is on the page"
    assert normalize(shown) in page, "the run cell's code is on the page"
    assert normalize(check) not in page, f"the check cell is on the page: {check}"
