"""Repository rules a reviewer would otherwise check by hand: module headers, clean notebooks."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[1]


def test_every_module_names_its_kafka_twin_or_says_it_has_none():
    missing = []
    for path in sorted((ROOT / "kafka_lite").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if path.name == "__init__.py" and len(text) < 400:
            continue  # package markers: a one-line docstring
        if "Mirrors:" not in text[:3000] and "No Kafka twin" not in text[:3000]:
            missing.append(str(path.relative_to(ROOT)))
    assert not missing, f"modules without a 'Mirrors:' or 'No Kafka twin' header: {missing}"


def test_notebooks_are_stored_without_outputs():
    notebooks = sorted((ROOT / "chapters").rglob("*.ipynb"))
    assert notebooks
    for path in notebooks:
        nb = json.loads(path.read_text(encoding="utf-8"))
        dirty = [
            i
            for i, c in enumerate(nb["cells"])
            if c["cell_type"] == "code" and (c.get("outputs") or c.get("execution_count"))
        ]
        assert not dirty, f"{path.relative_to(ROOT)} has outputs in cells {dirty}"
        assert nb["metadata"]["kernelspec"]["name"] == "python3"


def test_notebooks_are_valid_for_jupyter():
    """nbformat's schema (a cell id is letters, digits, ``-`` and ``_``): the docs build and Jupyter
    refuse a notebook that breaks it, while running it cell by cell does not notice."""
    notebooks = sorted((ROOT / "chapters").rglob("*.ipynb"))
    assert notebooks
    for path in notebooks:
        nbformat.validate(nbformat.read(path, as_version=nbformat.NO_CONVERT))
