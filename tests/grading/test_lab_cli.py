"""``kafka-lite lab list | start | grade``: whole failure messages, stage and -k selection, the last
score, and hints that run as printed."""

from __future__ import annotations

import json
import re

import pytest

from kafka_lite.cli.main import main
from kafka_lite.grading.labs import REPO_ROOT, discover, find
from kafka_lite.grading.starter import HINTS_FILE, write_starter

pytestmark = pytest.mark.labs  # grades real labs: a subprocess of pytest per grade

# A write_varint that forgets the zig-zag step, defined after the reference's and so replacing it.
NO_ZIGZAG = """

def write_varint(value, out):
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value & 0x7F)
"""


@pytest.fixture
def lab1_workspace(tmp_path):
    lab = find(1)
    write_starter(lab, REPO_ROOT, tmp_path / lab.slug, solved=frozenset({"write_varint", "read_varint"}))
    varint = tmp_path / lab.slug / "kafka_lite" / "common" / "record" / "varint.py"
    varint.write_text(varint.read_text(encoding="utf-8") + NO_ZIGZAG, encoding="utf-8")
    return tmp_path


def test_grade_shows_each_failures_whole_message_at_80_columns(lab1_workspace, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    code = main(
        ["lab", "grade", "1", "--dir", str(lab1_workspace), "-k", "write_varint_known or bad_varints"]
    )
    assert code == 1
    out = capsys.readouterr().out
    assert "stage 1: varints round-trip  2/4" in out
    assert "FAIL  0/2  test_write_varint_known_bytes" in out and "PASS  2/2  test_bad_varints" in out
    # every line of the test's explanation, the bit diagrams included, not just the first line
    assert "AssertionError: write_varint(-1) wrote 7f, Kafka writes 01." in out
    assert "Kafka's bytes: 01 = 0 0000001 (last)" in out
    assert "yours:         7f = 0 1111111 (last)" in out
    assert "Zig-zag first" in out
    assert not (lab1_workspace / ".scores.json").exists(), "a selection is not the lab's score"


def test_grade_one_stage_verbose_and_the_score_lab_list_shows(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    lab = find(4)
    write_starter(
        lab, REPO_ROOT, tmp_path / lab.slug, solved=frozenset({"Processor.process_completed_receives"})
    )
    assert main(["lab", "grade", "4", "--dir", str(tmp_path), "--stage", "1", "--verbose"]) == 0
    out = capsys.readouterr().out
    assert "stage 1: hand over and mute  11/11" in out and "stage 2" not in out
    long_name = "test_a_frame_that_does_not_parse_closes_the_connection_with_one_warning"
    assert f"PASS  3/3  {long_name}" in out, "test names are never cut at the terminal's width"
    assert "--- Captured log call ---" in out, "--verbose shows what passing tests logged"

    assert main(["lab", "grade", "4", "--dir", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "stage 1: hand over and mute  11/11 done" in out
    assert "stage 2: unmute when the response is written  0/7" in out and "total 11/18" in out
    assert "Next: stage 2, unmute when the response is written" in out
    assert f"lab grade 4 --stage 2 --dir {tmp_path}" in out, "the hint names the workspace it graded"
    scores = json.loads((tmp_path / ".scores.json").read_text())
    assert scores["4"]["earned"] == 11 and scores["4"]["total"] == 18
    assert scores["4"]["stages"] == {"1": [11, 11], "2": [0, 7]}

    assert main(["lab", "list", "--dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "Lab 4: The broker's processor" in out and "your last score 11/18" in out
    assert "stage 1: hand over and mute  11/11" in out
    assert "Lab 1: Encode and decode a record batch v2  (2 to 3 hours; not started)" in out
    assert "builds on: chapter 6 guide" in out


def test_grade_reports_a_bad_selection(tmp_path, capsys):
    lab = find(4)
    write_starter(lab, REPO_ROOT, tmp_path / lab.slug)
    assert main(["lab", "grade", "4", "--dir", str(tmp_path), "--stage", "7"]) == 2
    assert "lab 4 has no stage 7 (stages: 1, 2)" in capsys.readouterr().err
    assert main(["lab", "grade", "4", "--dir", str(tmp_path), "-k", "no_such_test"]) == 2
    assert "no test of lab 4 matches -k 'no_such_test'" in capsys.readouterr().err
    assert main(["lab", "grade", "4", "--dir", str(tmp_path), "-k", "and ("]) == 2
    assert "Wrong expression passed to '-k': and (" in capsys.readouterr().err


def test_start_then_the_hints_name_a_workspace_that_is_not_the_default(tmp_path, capsys):
    workspace = tmp_path / "my labs"
    assert main(["lab", "grade", "3", "--dir", str(workspace)]) == 2
    assert f"run `kafka-lite lab start 3 --dir '{workspace}'` first" in capsys.readouterr().err
    assert main(["lab", "start", "3", "--dir", str(workspace)]) == 0
    out = capsys.readouterr().out
    assert "Start with stage 1, the size prefix" in out
    assert f"lab grade 3 --dir '{workspace}'" in out, "the printed command grades this workspace"
    assert (workspace / "lab03_network_receive" / "README.md").is_file()
    assert main(["lab", "start", "3", "--dir", str(workspace)]) == 2
    assert "already exists (your work?); pass --force to overwrite it" in capsys.readouterr().err
    # Started afresh, the lab's remembered grade goes with the work it graded (it would show the
    # reference); another lab's stays.
    graded = {"earned": 1, "total": 1, "stages": {"1": [1, 1]}, "graded_at": "2026-01-01T00:00:00+00:00"}
    (workspace / ".scores.json").write_text(json.dumps({"3": graded, "4": graded}))
    assert main(["lab", "start", "3", "--dir", str(workspace), "--force"]) == 0
    assert json.loads((workspace / ".scores.json").read_text()) == {"4": graded}


def test_solution_refuses_before_full_marks_says_how_anyway_and_shows_after(tmp_path, capsys):
    lab = find(4)
    write_starter(
        lab, REPO_ROOT, tmp_path / lab.slug, solved=frozenset({"Processor.process_completed_receives"})
    )
    # Not graded yet: refused, with the way to see it anyway.
    assert main(["lab", "solution", "4", "--dir", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "lab 4 has not had full marks in your last grade (no grade yet in" in err
    assert f"lab solution 4 --dir {tmp_path} --anyway" in err
    assert "between `# BEGIN SOLUTION` and `# END SOLUTION` in the checkout's kafka_lite/network/" in err

    assert main(["lab", "grade", "4", "--dir", str(tmp_path), "--stage", "1"]) == 0
    capsys.readouterr()
    scores = json.loads((tmp_path / ".scores.json").read_text())
    assert scores["4"]["stages"] == {"1": [11, 11]}, "a stage's grade is remembered"
    # Stage 1 had full marks: its regions show; the whole lab, and stage 2, are still refused.
    assert main(["lab", "solution", "4", "--dir", str(tmp_path), "--stage", "1"]) == 0
    out = capsys.readouterr().out
    assert "The reference of lab 4, stage 1" in out
    assert "Processor.process_completed_receives  (kafka_lite/network/socket_server.py:" in out
    assert "process_completed_sends" not in out and "# BEGIN SOLUTION" not in out
    assert main(["lab", "solution", "4", "--dir", str(tmp_path), "--stage", "2"]) == 1
    assert "lab 4, stage 2 has not had full marks in your last grade" in capsys.readouterr().err
    assert main(["lab", "solution", "4", "--dir", str(tmp_path)]) == 1
    capsys.readouterr()
    assert main(["lab", "solution", "4", "--dir", str(tmp_path), "--anyway"]) == 0
    out = capsys.readouterr().out
    assert "Processor.process_completed_sends  (kafka_lite/network/socket_server.py:" in out

    # After a whole grade with full marks the reference shows without --anyway.
    scores["4"] = {"earned": 16, "total": 16, "stages": {}, "graded_at": "2026-01-01T00:00:00+00:00"}
    (tmp_path / ".scores.json").write_text(json.dumps(scores))
    assert main(["lab", "solution", "4", "--dir", str(tmp_path)]) == 0
    assert "Processor.process_completed_sends" in capsys.readouterr().out


def _links(markdown: str) -> list[str]:
    return re.findall(r"\]\(([^)\s]+)", markdown)


def test_a_lab_started_outside_the_repository_is_recorded_and_its_handout_links_resolve(
    tmp_path, capsys, monkeypatch
):
    monkeypatch.chdir(tmp_path)  # outside the checkout: the default workspace is ./kafka-lite-labs
    from kafka_lite.spark.labs import recorded_workspaces

    for lab in discover():
        assert main(["lab", "start", str(lab.number)]) == 0
        out = capsys.readouterr().out
        assert "not the checkout's kafka_lite/: it holds the reference" in out
        workspace = tmp_path / "kafka-lite-labs" / lab.slug
        assert recorded_workspaces()[lab.slug] == str(workspace.resolve())
        # The handout's links, in README.md or, with the steps and hints, in HINTS.md; and the two
        # files' links to each other.
        copied = [(workspace / name).read_text(encoding="utf-8") for name in ("README.md", HINTS_FILE)]
        links = [link for text in copied for link in _links(text)]
        own = [link for link in links if link.split("#")[0] in ("README.md", HINTS_FILE)]
        assert len(links) - len(own) == len(_links(lab.handout.read_text(encoding="utf-8")))
        assert own, f"{lab.slug}'s README.md and {HINTS_FILE} link to each other"
        relative = [link for link in links if not re.match(r"^([a-z]+:|#)", link)]
        for link in relative:
            target = (workspace / link.split("#")[0]).resolve()
            assert target.exists(), f"{lab.slug}'s handout in the workspace links to {link}: not there"


def test_a_lab_started_outside_the_repository_grades_the_learners_code(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["lab", "start", "1"]) == 0
    capsys.readouterr()
    varint = tmp_path / "kafka-lite-labs" / "lab01_record_batch" / "kafka_lite" / "common" / "record"
    varint = varint / "varint.py"
    varint.write_text(
        varint.read_text(encoding="utf-8")
        + "\n\ndef write_varint(value, out):\n    write_varint(value, out)\n",
        encoding="utf-8",
    )
    assert main(["lab", "grade", "1", "-k", "write_varint_known", "--verbose"]) == 1
    out = capsys.readouterr().out
    assert "RecursionError" in out and "Hint: RecursionError: a function of yours calls itself" in out
    assert f"{varint}:" in out and "kafka-lite-grade-" not in out


# Lab 13's offline selector, solved, but choosing the *last* live in-sync replica instead of the first.
FIRST_IN_SYNC = "leader = next(r for r in live_assigned if r in live_in_isr)"
LAST_IN_SYNC = "leader = [r for r in live_assigned if r in live_in_isr][-1]"


def test_lab_13s_cluster_runs_the_learners_controller(tmp_path, capsys, monkeypatch):
    """Lab 13's last stage kills brokers of a real cluster: the controller that elects must be the
    learner's, in the broker processes too, not the checkout's."""
    monkeypatch.chdir(tmp_path)
    assert main(["lab", "start", "13"]) == 0
    capsys.readouterr()
    lab = find(13)
    workspace = tmp_path / "kafka-lite-labs" / lab.slug
    write_starter(lab, REPO_ROOT, workspace, solved=frozenset(r for s in lab.stages for r in s.regions))
    selector = workspace / "kafka_lite" / "controller" / "partition_leader_selector.py"
    text = selector.read_text(encoding="utf-8")
    assert FIRST_IN_SYNC in text, "the reference's offline selector changed: update this test's patch"
    selector.write_text(text.replace(FIRST_IN_SYNC, LAST_IN_SYNC), encoding="utf-8")
    assert main(["lab", "grade", "13", "-k", "killed_leader"]) == 1
    out = capsys.readouterr().out
    assert "the first live assigned replica in the" in out and "leads with a newer leader epoch" in out, out
    assert "0/3" in out, out


def test_a_workspace_started_elsewhere_is_graded_with_a_rerun_command_that_names_its_dir(
    tmp_path, capsys, monkeypatch
):
    """A test that prints a command to run again (lab 18's replay of a seed) gets the one that
    grades this workspace: with ``--dir``, since the workspace is not the default one."""
    import functools
    import subprocess

    from kafka_lite.cli import lab as lab_cli
    from kafka_lite.grading.grader import GRADE_COMMAND_ENV, grade

    monkeypatch.chdir(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    assert main(["lab", "start", "18", "--dir", str(elsewhere)]) == 0
    seen: dict[str, str] = {}

    def run(cmd, cwd, env):  # the grading run, recorded instead of run
        seen.update(env)
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(lab_cli, "grade", functools.partial(grade, run=run))
    main(["lab", "grade", "18", "--dir", str(elsewhere)])
    capsys.readouterr()
    assert seen[GRADE_COMMAND_ENV].endswith(f"lab grade 18 --dir {elsewhere}"), seen[GRADE_COMMAND_ENV]
