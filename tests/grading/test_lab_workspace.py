"""A lab's workspace and its records: the handout's steps and hints apart in HINTS.md, the recorded
workspaces kept whole under concurrent starts, and ``lab list`` finding a lab started with ``--dir``."""

from __future__ import annotations

import json
import re
import threading

import pytest

from kafka_lite.cli import lab as lab_cli
from kafka_lite.cli.main import main
from kafka_lite.grading.grader import GradeReport
from kafka_lite.grading.grader import TestResult as Result
from kafka_lite.grading.labs import discover, find
from kafka_lite.grading.starter import HINTS_FILE, workspace_handout
from kafka_lite.spark.labs import WORKSPACES_FILE, recorded_workspaces, state_dir

pytestmark = pytest.mark.unit


def _moved_lines(handout: str) -> list[str]:
    """The lines of a handout's folded steps (between ``### Step by step`` and ``## Stages``, the
    self-check's order) and of its hints (``## Hints`` up to ``## Differs from Kafka``), the folding
    markup left out."""
    steps = handout[handout.index("### Step by step\n") : handout.index("\n## Stages\n")]
    hints = handout[handout.index("## Hints\n") : handout.index("\n## Differs from Kafka\n")]
    lines = steps.splitlines()[1:] + hints.splitlines()[1:]
    return [line for line in lines if line.strip() and not re.match(r"</?(details|summary)\b", line)]


@pytest.mark.parametrize("lab", discover(), ids=lambda lab: lab.slug)
def test_the_workspace_readme_shows_the_behaviour_and_links_the_steps_and_hints(lab, tmp_path):
    original = lab.handout.read_text(encoding="utf-8")
    readme, hints = workspace_handout(lab.handout, tmp_path / lab.slug)
    moved = _moved_lines(original)
    assert moved, f"{lab.slug}'s handout has steps and hints to move"
    assert "<details" not in readme and "<summary" not in readme, "nothing folded is left in README.md"
    assert f"]({HINTS_FILE})" in readme and f"]({HINTS_FILE}#hints)" in readme
    left = _moved_lines(readme)  # what README.md's own steps and hints sections now hold
    for line in moved:
        assert line not in left, f"README.md still holds: {line}"
        assert line in hints.splitlines(), f"{HINTS_FILE} lacks: {line}"
    assert "<details" not in hints and "<summary" not in hints, f"{HINTS_FILE} reads as plain markdown"
    steps = re.findall(r"<summary>(.*)</summary>", original)
    assert re.findall(r"^### (.*)$", hints, re.MULTILINE)[: len(steps)] == steps
    # Everything else is the handout as it was: the behaviour, the stages, what the tests check.
    behaviour = original[original.index("### Behaviour") : original.index("### Step by step")]
    assert behaviour in readme
    assert original[original.index("## Stages") : original.index("## Hints")] in readme


def test_concurrent_records_keep_every_lab(monkeypatch, tmp_path):
    """Starts at once (threads here; processes lock the same way, flock being per open file) each read,
    change and write the one workspaces file: every lab must be in it after, and a reader meanwhile
    must always find whole JSON."""
    threads, per_thread = 4, 25
    barrier = threading.Barrier(threads + 1)
    torn: list[str] = []
    done = threading.Event()

    def start(n: int) -> None:
        barrier.wait()
        for i in range(per_thread):
            lab_cli.record_workspace(f"lab{n}_{i}", tmp_path / f"ws{n}" / f"lab{n}_{i}")

    def read() -> None:
        barrier.wait()
        path = state_dir() / WORKSPACES_FILE
        while not done.is_set():
            if path.exists():
                text = path.read_text(encoding="utf-8")
                try:
                    json.loads(text)
                except json.JSONDecodeError:
                    torn.append(text)

    workers = [threading.Thread(target=start, args=(n,)) for n in range(threads)]
    reader = threading.Thread(target=read)
    for t in [*workers, reader]:
        t.start()
    for t in workers:
        t.join()
    done.set()
    reader.join()
    recorded = recorded_workspaces()
    missing = [
        f"lab{n}_{i}" for n in range(threads) for i in range(per_thread) if f"lab{n}_{i}" not in recorded
    ]
    assert not missing, f"{len(missing)} labs lost by a start that wrote over another's: {missing[:5]}"
    assert recorded["lab3_7"] == str((tmp_path / "ws3" / "lab3_7").resolve())
    assert not torn, f"a reader saw a half-written file: {torn[0][:200]!r}"
    leftovers = [p.name for p in state_dir().iterdir() if p.name.endswith(".tmp")]
    assert not leftovers, f"temporary files left behind: {leftovers}"


def _report(lab, passed: dict[int, bool]) -> GradeReport:
    """A grade of ``lab``: one test per stage, worth 2 points, passed or not as ``passed`` says."""
    results = tuple(
        Result(f"test_stage_{n}", n, 2, ok, None if ok else "AssertionError", "" if ok else "no")
        for n, ok in passed.items()
    )
    return GradeReport(lab, results, 0 if all(passed.values()) else 1, "")


def test_list_shows_the_score_of_a_lab_started_with_dir(tmp_path, capsys, monkeypatch):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # no kafka-lite-labs/ here: only the record says where lab 3 is
    mine = tmp_path / "my labs"
    assert main(["lab", "start", "3", "--dir", str(mine)]) == 0
    assert f"{HINTS_FILE} beside it" in capsys.readouterr().out
    lab = find(3)
    workspace = mine / lab.slug
    assert (workspace / HINTS_FILE).read_text(encoding="utf-8") == workspace_handout(lab.handout, workspace)[
        1
    ]
    assert f"]({HINTS_FILE})" in (workspace / "README.md").read_text(encoding="utf-8")
    lab_cli.save_score(mine, _report(lab, {1: True, 2: False}))

    assert main(["lab", "list"]) == 0
    out = capsys.readouterr().out
    block = out[out.index("Lab 3: ") : out.index("Lab 4: ")]
    assert "your last score 2/4" in block
    assert f"workspace: {workspace.resolve()}" in block
    assert f"stage 1: {lab.stages[0].name}  2/2" in block and f"stage 2: {lab.stages[1].name}  0/2" in block
    assert "Lab 4: " in out and "not started" in out[out.index("Lab 4: ") :].splitlines()[0]

    # grade without --dir: not the default workspace's, but the command that grades the recorded one
    assert main(["lab", "grade", "3"]) == 2
    err = capsys.readouterr().err
    assert f"lab 3 was started in {workspace.resolve()}" in err
    assert f"lab grade 3 --dir '{mine.resolve()}'" in err
