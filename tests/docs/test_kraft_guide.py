"""Chapter 12's guide: its transition tables say what ``quorum_state``'s tables say, and its bytes are
the golden bytes the protocol tests hold the codec to."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from kafka_lite.common.protocol import raft_messages
from kafka_lite.common.protocol.types import decode
from kafka_lite.raft import quorum_state
from mkdocs_hooks import generated_tables
from tests.common.protocol import test_raft_golden

pytestmark = pytest.mark.docs

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "chapters" / "ch12_kraft" / "index.md"
RULES = {cell: rule for rule, cell in generated_tables.EPOCH_CELLS.items()}


def rendered_guide() -> str:
    return generated_tables.on_page_markdown(GUIDE.read_text(encoding="utf-8"), None, None, None)


def tables_of(markdown: str) -> list[dict[str, dict[str, quorum_state.EpochRule]]]:
    """Every "from \\ to" grid on the page, read back into a transition table."""
    found = []
    lines = markdown.splitlines()
    for i, line in enumerate(lines):
        if not line.startswith("| from \\ to |"):
            continue
        targets = [c.strip() for c in line.strip("|").split("|")][1:]
        table: dict[str, dict[str, quorum_state.EpochRule]] = {}
        for row in lines[i + 2 :]:
            if not row.startswith("|"):
                break
            cells = [c.strip() for c in row.strip("|").split("|")]
            source = cells[0].strip("*")
            table[source] = {t: RULES[c] for t, c in zip(targets, cells[1:], strict=True) if c}
        found.append(table)
    return found


def test_the_guides_transition_tables_are_the_codes_tables():
    assert tables_of(rendered_guide()) == [quorum_state.VOTER_TRANSITIONS, quorum_state.OBSERVER_TRANSITIONS]


def test_a_changed_table_would_show_on_the_page(monkeypatch):
    # The page is drawn from the data at build time, not copied from it: change the data, the page changes.
    changed = {
        **quorum_state.VOTER_TRANSITIONS,
        quorum_state.LEADER: {quorum_state.RESIGNED: quorum_state._S},
    }
    monkeypatch.setattr(quorum_state, "VOTER_TRANSITIONS", changed)
    assert tables_of(rendered_guide())[0] == changed


def test_every_epoch_rule_has_a_cell_and_the_guide_gives_each_cells_meaning():
    assert set(generated_tables.EPOCH_CELLS) == set(quorum_state.EpochRule)
    guide = GUIDE.read_text(encoding="utf-8")
    assert "against the node's current epoch *e*" in guide


def test_the_guides_vote_request_is_the_golden_bytes_field_by_field():
    chunks = generated_tables.golden_chunks("VOTE_REQUEST")
    value, golden = test_raft_golden.VOTE_REQUEST
    assert bytes.fromhex("".join(chunk for chunk, _ in chunks)) == golden
    assert all(comment for _, comment in chunks), chunks
    assert decode(raft_messages.VOTE_REQUEST_V0, golden) == value
    page = rendered_guide()
    for chunk, comment in chunks:
        assert f"| `{chunk}` | {comment} |" in page


def test_the_guides_simulation_command_runs_as_written():
    # The replay recipe, as the page gives it: the one ``sh`` block of the simulation's opening
    # section, run in the project's Python.
    text = GUIDE.read_text(encoding="utf-8")
    section = text.split("\n## A quorum on one clock: the simulation\n", 1)[1].split("\n### ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
    assert len(blocks) == 1, blocks
    command = shlex.split(blocks[0].strip())
    assert command[:3] == ["python", "-m", "kafka_lite.raft.simulation"], command
    done = subprocess.run(
        [sys.executable, *command[1:]], capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1/1 seeds passed" in done.stdout, done.stdout


def test_the_guide_links_its_lab_and_no_longer_lists_it_as_not_yet():
    text = GUIDE.read_text(encoding="utf-8")
    lab = ROOT / "labs" / "lab18_raft"
    assert (lab / "lab.toml").is_file() and (lab / "README.md").is_file()
    assert "[Lab 18: Raft](../../labs/lab18_raft/README.md)" in text
    not_yet = text.split("\n## Not yet in kafka_lite\n", 1)[1].split("--8<--", 1)[0]
    assert not re.search(r"\blab 18\b", not_yet, re.I), f"the lab is still listed as not yet:\n{not_yet}"


def test_the_labs_repeat_runner_names_its_tests_and_runs_as_written(monkeypatch, capsys):
    # Lab 18's handout: each line of its repeat runner sets the seeds and picks a random-seed test of
    # the lab by name. One is run as written (the reference graded instead of a workspace, two seeds).
    from kafka_lite.cli.main import main

    handout = (ROOT / "labs" / "lab18_raft" / "README.md").read_text(encoding="utf-8")
    runner = handout.split("### The repeat runner\n", 1)[1]
    (block,) = re.findall(r"```sh\n(.*?)```", runner.split("\n## ", 1)[0], re.S)
    tests = (ROOT / "labs" / "lab18_raft" / "test_raft_lab.py").read_text(encoding="utf-8")
    commands = [shlex.split(line) for line in block.strip().splitlines()]
    for command in commands:
        seeds, program, *args = command
        assert re.fullmatch(r"KAFKA_LITE_LAB18_SEEDS=\d+\.\.\d+", seeds), command
        assert program == ".venv/bin/kafka-lite" and args[:3] == ["lab", "grade", "18"], command
        # -k selects by substring: the name must start a test function's, one of the random-seed ones.
        assert args[3] == "-k" and re.search(rf"def {args[4]}\w*\(", tests), command
        assert args[4].endswith("_on_random_seeds"), command
    monkeypatch.setenv("KAFKA_LITE_LAB18_SEEDS", "3..4")
    assert main([*commands[0][2:], "--reference"]) == 0
    assert "1/1 done" in capsys.readouterr().out


def test_the_guides_quorum_commands_parse_as_written():
    # Each `kafka-lite raft` command of the page's quorum section, its continuation lines joined, is
    # one the CLI accepts as it stands: each goes in a terminal of its own, where no shell variable
    # set in another one is known (running them is the process test's work).
    from kafka_lite.cli.main import build_parser

    text = GUIDE.read_text(encoding="utf-8")
    section = text.split("\n## A quorum of processes", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
    script = "\n".join(blocks).replace("\\\n", " ")
    commands = [line for line in script.splitlines() if line.startswith("kafka-lite raft ")]
    assert not [c for c in commands if "$" in c], "a command needs a variable set elsewhere"
    assert {shlex.split(c)[2] for c in commands} == {"test-server", "describe", "check"}, commands
    parser = build_parser()
    for command in commands:
        args = parser.parse_args(shlex.split(command)[1:])
        assert args.handler is not None, command


def test_the_reading_paths_name_classes_and_methods_that_exist():
    """Each name a reading path gives (``Class.method``, ``method``) is a class or function of
    kafka_lite's, so a path cannot send a reader to a method that was renamed or removed."""
    import ast

    defined = set()
    for path in (ROOT / "kafka_lite").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                defined.add(node.name)
    pages = {
        GUIDE: "\n## Reading it: three paths through the code",
        GUIDE.with_name("quorum_controller.md"): "\n## Reading it: one fencing",
    }
    named = []
    for page, heading in pages.items():
        section = page.read_text(encoding="utf-8").split(heading, 1)[1].split("\n## ", 1)[0]
        refs = re.findall(r"`([^`]+)`", section)
        named += [
            ref for ref in refs if re.fullmatch(r"[A-Za-z_]\w*(\.\w+)*", ref) and not ref.endswith(".py")
        ]
    assert len(named) > 40, named
    missing = sorted({part for ref in named for part in ref.split(".") if part not in defined})
    assert not missing, f"the reading paths name what kafka_lite does not define: {missing}"
