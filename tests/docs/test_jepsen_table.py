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


DELAY_ARGV = ["--modes", "zookeeper", "kraft", "--nemeses", "delay", "--workloads", "txn", "txn-kip-890",
              "--seeds", "3", "--seconds", "35", "--json", "benchmarks/results/jepsen_delay.json"]  # fmt: skip
NOTE = "an aborted read under Kafka 0.11's protocol: see the explanation above"


def delay_results(table) -> dict:
    rows = []
    for mode, _, workload, seed in table.matrix(table.parse(DELAY_ARGV)):
        bad = workload == "txn" and (mode, seed) != ("kraft", 3)
        rows.append(row(mode, "delay", workload, seed, seconds=35, valid=not bad, classes=["G1a"] * bad,
                        bad=["G1a"] * bad, note=NOTE if bad else "", faults=2))  # fmt: skip
    return {**SMALL, "command": shlex.join([".venv/bin/python", "benchmarks/jepsen_table.py", *DELAY_ARGV]),
            "seconds": 900, "rows": rows}  # fmt: skip


def test_the_default_matrix_is_four_nemeses_two_workloads_both_modes_and_five_seeds(table):
    args = table.parse([])
    assert (args.nemeses, args.workloads, args.seeds, args.seconds) == (
        ["kill", "pause", "partition", "mixed"], ["plain", "txn"], 5, 60
    )  # fmt: skip
    keys = table.matrix(args)
    assert (
        len(keys) == 80
        and {k[1] for k in keys} == set(table.NEMESES)
        and {k[2] for k in keys} == {"plain", "txn"}
    )
    assert (table.BEGIN, table.END) == (
        "<!-- jepsen-table:start: written by benchmarks/jepsen_table.py from benchmarks/results/jepsen_table.json -->",
        "<!-- jepsen-table:end -->",
    )
    assert table.markers(table.RESULTS) == (table.BEGIN, table.END)


def test_the_delay_finding_runs_its_own_nemesis_and_workloads(table, tmp_path, monkeypatch):
    args = table.parse(DELAY_ARGV)
    keys = table.matrix(args)
    assert keys == [
        (mode, "delay", workload, seed)
        for mode in ("zookeeper", "kraft") for workload in ("txn", "txn-kip-890") for seed in (1, 2, 3)
    ]  # fmt: skip
    monkeypatch.setattr(table, "RUNS", tmp_path / "runs")
    configs = []

    def fake_run(config, progress):
        configs.append(config)
        return RunResult(config.directory / "history.jsonl", 50, 2, {"valid": True, "error_types": []})

    monkeypatch.setattr(table, "run", fake_run)
    rows = [table.run_row(key, args, lambda *_: None) for key in (keys[0], keys[-1])]
    assert [(c.mode, c.faults, c.seconds, c.seed, c.txn, c.kip_890) for c in configs] == [
        ("zookeeper", frozenset({"delay"}), 35, 1, True, False),
        ("kraft", frozenset({"delay"}), 35, 3, True, True),
    ]
    assert rows[-1]["command"] == (
        "kafka-lite jepsen run --mode kraft --txn --faults delay --seconds 35 --seed 3 --nemesis-interval 10 "
        f"--kip-890 --dir {tmp_path / 'runs' / 'kraft-delay-txn-kip-890-3'}"
    )
    # The command a row records makes the same run: the CLI's options give the same RunConfig.
    from kafka_lite.cli.main import build_parser

    cli = build_parser().parse_args(shlex.split(rows[-1]["command"])[1:])
    assert (cli.mode, cli.faults, cli.seconds, cli.seed, cli.txn, cli.kip_890, cli.nemesis_interval, cli.dir) == (
        "kraft", frozenset({"delay"}), 35, 3, True, True, 10, configs[-1].directory
    )  # fmt: skip


def test_the_delay_findings_table_has_its_own_markers_and_says_what_it_is(table):
    results = delay_results(table)
    path = table.ROOT / "benchmarks" / "results" / "jepsen_delay.json"
    section = table.table_section(results, path)
    begin, _ = table.markers(path)
    assert begin == (
        "<!-- jepsen-delay:start: written by benchmarks/jepsen_table.py from benchmarks/results/jepsen_delay.json -->"
    )
    assert section.startswith(begin) and section.endswith("<!-- jepsen-delay:end -->")
    assert table.BEGIN not in section and table.END not in section
    prose = " ".join(table.preamble(results, path).split())
    assert prose.startswith(
        "The delay nemesis (a partition's leader's Produce requests held 15 s, then let go), striking 3 s "
        "after each healing, on the workloads txn (transactions under Kafka 0.11's protocol, kafka_lite's "
        "default) and txn-kip-890 (the same with both parts of KIP-890 on): seeds 1 to 3 of 35 s in both "
        "modes, 12 runs one after another on 2026-11-28 01:00 UTC (commit abc1234), in 15 minutes, with"
    ), prose
    for fact in (
        "2 cores",
        "AMD EPYC",
        "`benchmarks/results/jepsen_delay.json`",
        f"```sh {results['command']} ```",
    ):
        assert fact in prose, fact
    assert "trial" not in prose and "matrix" not in prose
    assert table.table(results["rows"]).splitlines()[2:] == [
        f"| ZooKeeper | delay | txn | 3 | 0 | 300 | 6 | **G1a** (not allowed) | seeds 1, 2, 3: {NOTE} |",
        "| ZooKeeper | delay | txn-kip-890 | 3 | 3 | 300 | 6 | none |  |",
        f"| KRaft | delay | txn | 3 | 1 | 300 | 6 | **G1a** (not allowed) | seeds 1, 2: {NOTE} |",
        "| KRaft | delay | txn-kip-890 | 3 | 3 | 300 | 6 | none |  |",
    ]


def test_a_files_table_goes_only_where_its_markers_are(table, tmp_path, monkeypatch):
    delay = tmp_path / "jepsen_delay.json"
    begin, end = table.markers(delay)
    chapter, bench = tmp_path / "index.md", tmp_path / "benchmarks.md"
    chapter.write_text(f"{table.BEGIN}\nmatrix\n{table.END}\n{begin}\nold\n{end}\n")
    bench.write_text(f"{table.BEGIN}\nmatrix\n{table.END}\n")
    monkeypatch.setattr(table, "PAGES", [chapter, bench])
    results = delay_results(table)
    assert table.write_pages(results, delay) == [chapter]
    assert (
        chapter.read_text() == f"{table.BEGIN}\nmatrix\n{table.END}\n{table.table_section(results, delay)}\n"
    )
    assert bench.read_text() == f"{table.BEGIN}\nmatrix\n{table.END}\n"
    assert table.write_pages(results, tmp_path / "elsewhere.json") == []  # no page holds its markers
    bench.write_text("no markers\n")  # the matrix's table must be on every page
    with pytest.raises(SystemExit, match=r"benchmarks\.md has no jepsen-table markers"):
        table.write_pages(SMALL, table.RESULTS)


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
    results = tmp_path / "table.json"
    begin, end = table.markers(results)  # a JSON file's table goes between markers named after it
    assert (begin, end) == (
        f"<!-- table:start: written by benchmarks/jepsen_table.py from {results} -->",
        "<!-- table:end -->",
    )
    pages = []
    for name in ("index.md", "benchmarks.md"):
        page = tmp_path / name
        page.write_text(f"# {name}\n\n{begin}\nold\n{end}\n\nafter\n")
        pages.append(page)
    monkeypatch.setattr(table, "PAGES", pages)
    monkeypatch.setattr(table, "RUNS", tmp_path / "runs")
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
    assert rows[0]["command"] == (
        "kafka-lite jepsen run --mode zookeeper --faults kill --seconds 7 --seed 1 --nemesis-interval 2.5 "
        f"--dir {tmp_path / 'runs' / 'zookeeper-kill-plain-1'}"
    )
    section = table.table_section(json.loads(results.read_text()), results)
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
        text = re.sub(r"<!-- ([\w-]+):start: .*?<!-- \1:end -->", "", text, flags=re.S)  # other files' tables
        (command,) = [c for c in re.findall(r"```sh\n(.*?)\n```", text, re.S) if "jepsen_table.py" in c]
        args = table.parse(shlex.split(command)[2:])
        assert (args.seeds, args.seconds) == (table.FULL_SEEDS, table.FULL_SECONDS), page
        assert len(table.matrix(args)) == 80


@pytest.mark.parametrize(
    "name,pages",
    [
        ("jepsen_table.json", ["chapters/ch13_jepsen/index.md", "docs/benchmarks.md"]),
        ("jepsen_delay.json", ["chapters/ch13_jepsen/index.md"]),  # in the section of the delay's finding
    ],
)
def test_the_pages_hold_the_tables_the_committed_json_files_make(table, name, pages):
    path = table.RESULTS.with_name(name)
    section = table.table_section(json.loads(path.read_text()), path)
    begin, end = table.markers(path)
    for page in table.PAGES:
        text = page.read_text(encoding="utf-8")
        if str(page.relative_to(ROOT)) not in pages:
            assert begin not in text, page
            continue
        start, stop = text.index(begin), text.index(end) + len(end)
        assert text[start:stop] == section, (
            f"{page.relative_to(ROOT)}'s Jepsen table differs from benchmarks/results/{name}: "
            f"run .venv/bin/python benchmarks/jepsen_table.py --page-only --json benchmarks/results/{name}"
        )
    if name == "jepsen_delay.json":
        chapter = (ROOT / pages[0]).read_text(encoding="utf-8")
        finding = chapter.split("### A finding: Kafka's own transactions, delayed\n")[1].split("\n## ")[0]
        assert section in finding
