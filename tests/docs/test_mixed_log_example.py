"""Chapter 6's mixed-log example (``chapters/ch06_storage/mixed_log.py``) prints exactly the dump the
message-formats page shows (``mixed_log_dump.txt``), and the log it writes holds v2, v1 and v2
entries in that order, with every offset once."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit
EXAMPLE = Path(__file__).resolve().parents[2] / "chapters" / "ch06_storage" / "mixed_log.py"


def _example():
    spec = importlib.util.spec_from_file_location("mixed_log", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_page_shows_what_the_example_prints(tmp_path):
    shown = EXAMPLE.with_name("mixed_log_dump.txt").read_text(encoding="utf-8").splitlines()
    assert _example().dump_lines(tmp_path) == shown, "run the example and store its output beside it"


def test_the_example_log_holds_v2_then_v1_then_v2(tmp_path):
    log = _example().write_mixed_log(tmp_path)
    (segment,) = log.log_segments()
    entries = [(batch.magic, [r.offset for r in batch]) for _, batch in segment.log.batches()]
    assert entries == [(2, [0, 1]), (1, [2]), (1, [3]), (1, [4, 5]), (2, [6]), (2, [7, 8])]
    log.close()
