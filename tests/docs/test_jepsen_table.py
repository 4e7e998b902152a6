"""The Jepsen results table (``benchmarks/jepsen_table.py``): rows of runs become one line per mode,
nemesis and workload; a re-run keeps the notes written by hand; Ctrl-C keeps the rows done; bad
options are named; and chapter 13's page and the benchmark page hold exactly the table the committed
JSON file makes, so neither can drift from the runs it claims to show.

No cluster: the runs here are a stand-in for ``kafka_lite.jepsen.run.run`` (``tests/jepsen/test_run.py``
runs the real one)."""

from __future__ import annotations

import importlib
import json
import logging
import re
import shlex
from pathlib import Path

import pytest

from kafka_lite.jepsen.run import RunResult
from tests.docs.test_benchmark_page import SMALL

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[2]

MACHINE = SMALL["machine"]  # the benchmark page's test's machine


def row(
    mode, nemesis, workload, seed, *, seconds=10, valid=True, classes=(), bad=(), ops=100, faults=1, note=""
):
    return {
        "mode": mode,
        "nemesis": nemesis,
        "workload": workload,
        "seed": seed,
        "seconds": seconds,
        "nemesis_interval_s": 3.0,
        "history": f"benchmarks/results/jepsen/{mode}-{nemesis}-{workload}-{seed}/history.jsonl",
        "status": "ok",
        "operations": ops,
        "faults": faults,
        "valid": valid,
        "error_types": list(classes),
        "bad_error_types": list(bad),
        "note": note,
    }


SMALL = {
    "date": "2026-11-28 01:00 UTC",
    "command": ".venv/bin/python benchmarks/jepsen_table.py --seeds 2 --seconds 10",
    "commit": "abc1234",
    "seconds": 300,
    "machine": MACHINE,
    "rows": [
        row("zookeeper", "kill", "plain", 1, ops=1200, faults=1),
        row("zookeeper", "kill", "plain", 2, ops=1300, faults=2, classes=["int-send-skip"]),
        row(
            "zookeeper",
            "kill",
            "txn",
            1,
            valid=False,
            classes=["G1a", "unseen"],
            bad=["G1a"],
            ops=900,
            note="an aborted read | the marker's partition was down",
        ),
        {
            **row("kraft", "pause", "plain", 1),
            "status": "failed",
            "valid": None,
            "error": "TimeoutError: the cluster to be whole",
        },
    ],
}


@pytest.fixture
def table(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    return importlib.import_module("jepsen_table")


def test_rows_become_a_line_per_mode_nemesis_and_workload_with_their_sums(table):
    lines = table.table(SMALL["rows"]).splitlines()
    assert (
        lines[0]
        == "| mode | nemesis | workload | runs | valid | operations | faults | classes found | notes |"
    )
    assert lines[2:] == [
        "| ZooKeeper | kill | plain | 2 | 2 | 2,500 | 3 | int-send-skip |  |",
        "| ZooKeeper | kill | txn | 1 | 0 | 900 | 1 | **G1a** (not allowed), unseen "
        "| seed 1: an aborted read \\| the marker's partition was down |",
        "| KRaft | pause | plain | 1 | 0 | 0 | 0 | **no verdict** (seed 1: the run failed) |  |",
    ]


def test_a_matrix_short_of_the_full_one_is_called_a_trial(table):
    section = table.table_section(SMALL)
    assert section.startswith(table.BEGIN) and section.endswith(table.END)
    assert " ".join(section.split()).startswith(
        f"{table.BEGIN} A short trial run (1 to 2 seeds, 10 s), not yet the full matrix"
    )
    for fact in ("2026-11-28 01:00 UTC", "abc1234", "2 cores", "AMD EPYC", "in 5 minutes", "striking 3 s"):
        assert fact in " ".join(section.split()), fact
    assert f"```sh\n{SMALL['command']}\n```" in section

    full = {**SMALL, "rows": [row(*key, seconds=60) for key in table.matrix(table.parse([]))]}
    assert len(full["rows"]) == 80
    assert "The full matrix: 80 runs, one after another" in table.preamble(full)
    assert "trial" not in table.preamble(full)
    one_short = {**full, "rows": full["rows"][1:]}  # a line with 4 seeds
    assert "A short trial run (4 to 5 seeds, 60 s)" in table.preamble(one_short)


def test_a_rerun_keeps_the_notes_of_its_keys_and_the_rows_it_does_not_repeat(table):
    earlier = SMALL["rows"]
    again = [row("zookeeper", "kill", "txn", 1, ops=950), row("zookeeper", "pause", "txn", 1)]
    merged = table.merge(earlier, again)
    assert [table.key_of(r) for r in merged] == [
        ("zookeeper", "kill", "plain", 1),
        ("zookeeper", "kill", "plain", 2),
        ("zookeeper", "kill", "txn", 1),
        ("zookeeper", "pause", "txn", 1),
        ("kraft", "pause", "plain", 1),
    ]
    assert (merged[2]["operations"], merged[2]["note"]) == (950, earlier[2]["note"])
    assert merged[3]["note"] == ""


def test_a_failed_run_is_a_row_and_ctrl_c_keeps_the_rows_done(table, tmp_path, monkeypatch, capsys):
    pages = []
    for name in ("index.md", "benchmarks.md"):
        page = tmp_path / name
        page.write_text(f"# {name}\n\n{table.BEGIN}\nold\n{table.END}\n\nafter\n")
        pages.append(page)
    monkeypatch.setattr(table, "PAGES", pages)
    monkeypatch.setattr(table, "RUNS", tmp_path / "runs")
    results = tmp_path / "table.json"
    noted = row("zookeeper", "kill", "plain", 1, note="held by hand")
    results.write_text(json.dumps({**SMALL, "rows": [noted]}))

    calls = []

    def fake_run(config, progress):
        calls.append(config)
        (config.directory / "cluster").mkdir(parents=True)
        progress("workload", 0.5)
        logging.getLogger("kafka_lite.clients").warning("retrying the produce")
        if len(calls) == 2:
            raise TimeoutError("the cluster to be whole")
        if len(calls) == 3:
            raise KeyboardInterrupt
        result = {"valid": True, "error_types": ["int-send-skip"], "bad_error_types": []}
        return RunResult(config.directory / "history.jsonl", 321, 2, result)

    monkeypatch.setattr(table, "run", fake_run)
    argv = ["--seeds", "4", "--seconds", "7", "--modes", "zookeeper", "--nemeses", "kill", "--workloads", "plain",
            "--nemesis-interval", "2.5", "--json", str(results)]  # fmt: skip
    assert table.main(argv) == 130
    out, err = capsys.readouterr()
    assert "interrupted: 2 of 4 runs done" in out
    assert "retrying" not in out + err  # the clients' warnings go to each run's clients.log

    first = calls[0]
    assert (first.mode, first.faults, first.seconds, first.seed, first.txn, first.nemesis_interval_s) == (
        "zookeeper", frozenset({"kill"}), 7, 1, False, 2.5
    )  # fmt: skip
    assert first.directory == tmp_path / "runs" / "zookeeper-kill-plain-1"
    assert not (first.directory / "cluster").exists()  # the brokers' data goes, the history stays
    assert "WARNING retrying the produce" in (first.directory / "clients.log").read_text()
    rows = json.loads(results.read_text())["rows"]
    assert [(r["seed"], r["status"], r.get("valid"), r["note"]) for r in rows] == [
        (1, "ok", True, "held by hand"),
        (2, "failed", None, ""),
    ]
    assert (rows[0]["operations"], rows[0]["faults"], rows[0]["error_types"]) == (321, 2, ["int-send-skip"])
    assert rows[1]["error"] == "TimeoutError: the cluster to be whole"
    section = table.table_section(json.loads(results.read_text()))
    for page in pages:
        assert page.read_text() == f"# {page.name}\n\n{section}\n\nafter\n"


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--seeds", "0"], "0 seeds: give at least 1"),
        (["--seconds", "ten"], "'ten' is not a whole number of seconds"),
        (["--modes", "raft"], "invalid choice: 'raft'"),
        (["--nemeses", "kill", "kill"], "--nemeses names kill twice"),
        (["--nemesis-interval", "-1"], "-1 seconds: cannot be negative"),
        (["--page-only", "--seeds", "2"], "--page-only runs nothing, so --seeds would be ignored"),
        (
            ["--page-only", "--json", "/nonexistent/table.json"],
            "/nonexistent/table.json, which does not exist",
        ),
    ],
)
def test_bad_options_are_named(table, capsys, argv, message):
    with pytest.raises(SystemExit) as exited:
        table.parse(argv)
    assert exited.value.code == 2
    assert message in capsys.readouterr().err


def test_the_pages_command_is_the_full_matrix_as_written(table):
    for page in table.PAGES:
        # The command the page gives, not the one the table below it was written by.
        text = page.read_text(encoding="utf-8").split(table.BEGIN)[0]
        (command,) = [c for c in re.findall(r"```sh\n(.*?)\n```", text, re.S) if "jepsen_table.py" in c]
        args = table.parse(shlex.split(command)[2:])
        assert (args.seeds, args.seconds) == (table.FULL_SEEDS, table.FULL_SECONDS), page
        assert len(table.matrix(args)) == 80


def test_both_pages_hold_the_table_the_committed_json_makes(table):
    results = json.loads(table.RESULTS.read_text())
    section = table.table_section(results)
    for page in table.PAGES:
        text = page.read_text(encoding="utf-8")
        start, end = text.index(table.BEGIN), text.index(table.END) + len(table.END)
        assert text[start:end] == section, (
            f"{page.relative_to(ROOT)}'s Jepsen table differs from benchmarks/results/jepsen_table.json: "
            "run .venv/bin/python benchmarks/jepsen_table.py --page-only"
        )
