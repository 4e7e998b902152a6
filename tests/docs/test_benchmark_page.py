"""The benchmark page's "At a glance" section (``benchmarks/page.py``): a results file becomes a table
and a well-formed chart, and the page and the chart in the repository are what the committed results
make, so neither can drift from the run they claim to show."""

from __future__ import annotations

import importlib
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[2]
SVG = "{http://www.w3.org/2000/svg}"

SMALL = {
    "date": "2026-11-26 21:00 UTC",
    "command": ".venv/bin/python benchmarks/run_all.py",
    "commit": "abc1234",
    "seconds": 600,
    "machine": {
        "cores": 2,
        "memory_gib": 23.4,
        "cpu": "AMD EPYC",
        "python": "3.11.2",
        "system": "Linux 6.1",
        "load_average": [1.5, 1.2, 1.0],
    },
    "benchmarks": [
        {
            "name": "bench_producer",
            "command": ".venv/bin/python benchmarks/bench_producer.py --rounds 5",
            "status": "ok",
            "seconds": 120.0,
            "figures": [
                {
                    "name": "producer, kafka_lite over aiokafka",
                    "value": 1.52,
                    "unit": "x",
                    "goal": {"at_least": 1.4},
                    "detail": "205,877 against 135,445 records/s",
                },
                {
                    "name": "producer, kafka_lite over kafka-python",
                    "value": 7.9,
                    "unit": "x",
                    "goal": None,
                    "detail": "a | in the text",
                },
            ],
        },
        {
            "name": "bench_streams",
            "command": ".venv/bin/python benchmarks/bench_streams.py --rounds 5",
            "status": "ok",
            "seconds": 300.0,
            "figures": [
                {
                    "name": "Streams' word count, its time over the hand-written loop's",
                    "value": 4.34,
                    "unit": "x",
                    "goal": {"at_most": 1.5},
                    "detail": "8.1 s against 1.9 s",
                },
                {
                    "name": "a share",
                    "value": 0.93,
                    "unit": "%",
                    "goal": {"at_least": 0.9},
                    "detail": "",
                },
            ],
        },
        {
            "name": "bench_spark",
            "command": ".venv/bin/python benchmarks/bench_spark.py --rounds 3",
            "status": "failed",
            "seconds": 12.0,
            "error": "RuntimeError: the Parquet copy has 3 rows, expected 4",
            "figures": [],
        },
    ],
}


@pytest.fixture
def page(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    return importlib.import_module("page")


def test_a_results_file_becomes_a_row_per_figure_goals_first_with_their_verdicts(page):
    goals, others = (t.splitlines() for t in page.tables(SMALL).split("\n\n"))
    assert goals[0].startswith("| benchmark | figure | this run | goal | met |")
    assert len(goals) == 2 + 3 + 1  # header, rule, three figures with a goal, one failed script
    assert goals[2] == (
        "| [producer](#bench-producer) | producer, kafka_lite over aiokafka | **1.52x** | at least 1.4x "
        "| met | 205,877 against 135,445 records/s |"
    )
    assert "| **4.34x** | at most 1.5x | **not met** |" in goals[3]
    assert "| **93 %** | at least 90 % | met |" in goals[4]
    assert goals[5].startswith(
        "| [Spark](#bench-spark) | **failed** (`.venv/bin/python benchmarks/bench_spark.py --rounds 3`): "
        "RuntimeError: the Parquet copy has 3 rows"
    )
    assert others[0] == "| benchmark | figure | this run | measured against, in the same run |"
    assert others[2:] == [
        "| [producer](#bench-producer) | producer, kafka_lite over kafka-python | 7.90x | a \\| in the text |"
    ]


def test_the_section_names_the_date_the_machine_and_the_command(page):
    section = page.glance_section(SMALL)
    assert section.startswith(page.BEGIN) and section.endswith(page.END)
    for fact in ("2026-11-26 21:00 UTC", "abc1234", "2 cores", "23.4 GiB", "AMD EPYC", "Python 3.11.2"):
        assert fact in section, fact
    assert "```sh\n.venv/bin/python benchmarks/run_all.py\n```" in section
    assert f"]({page.CHART_LINK})" in section


def test_the_chart_is_well_formed_svg_with_a_bar_per_goal(page):
    root = ET.fromstring(page.chart_svg(SMALL).encode())
    assert root.tag == f"{SVG}svg"
    bars = [r for r in root.iter(f"{SVG}rect") if r.get("fill") != "white"]
    # one bar per figure with a goal: green where met, red where not
    assert [b.get("fill") for b in bars] == ["#2e7d32", "#c62828", "#2e7d32"]
    widths = [float(b.get("width")) for b in bars]
    goal_x = page.x_of(1.0) - page.LABEL_W
    assert widths[0] > goal_x > widths[1]  # met with room; not met (4.34 s against at most 1.5)
    texts = " ".join(t.text or "" for t in root.iter(f"{SVG}text"))
    assert "1.52x (at least 1.4x)" in texts and "4.34x (at most 1.5x)" in texts


def test_the_page_and_the_chart_are_what_the_committed_results_make(page):
    results = json.loads((ROOT / "benchmarks" / "results" / "latest.json").read_text())
    text = (ROOT / "docs" / "benchmarks.md").read_text()
    start, end = text.index(page.BEGIN), text.index(page.END) + len(page.END)
    assert text[start:end] == page.glance_section(results), (
        "docs/benchmarks.md's At a glance differs from benchmarks/results/latest.json: "
        "run .venv/bin/python benchmarks/page.py"
    )
    assert page.short_forms(text, results) == text, (
        "a section's short-form line differs from benchmarks/results/latest.json: run .venv/bin/python benchmarks/page.py"
    )
    # every script the run ran has its short form under its section's command
    for bench in results["benchmarks"]:
        assert (
            f"<!-- short-form: {bench['name']} -->\nThe figures [at a glance](#at-a-glance) are from `{bench['command']}`"
            in text
        )
    chart = (ROOT / "docs" / "images" / "benchmarks_at_a_glance.svg").read_text()
    assert chart == page.chart_svg(results), "the chart differs: run .venv/bin/python benchmarks/page.py"
    ET.fromstring(chart.encode())


def test_a_failed_script_is_recorded_with_the_exception_it_ended_with(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    run_all = importlib.import_module("run_all")
    stderr = (
        "Connection dropped: socket connection broken\n"
        "Traceback (most recent call last):\n"
        '  File "bench_spark.py", line 130, in main\n'
        '    raise RuntimeError(f"the Parquet copy has {count} rows")\n'
        "RuntimeError: the Parquet copy has 400004 rows, expected 200000\n"
        "%3|1795728654.187|FAIL|rdkafka#producer-2| Connect to ipv4#127.0.0.1:19092 failed\n"
    )
    assert run_all.error_of(stderr) == "RuntimeError: the Parquet copy has 400004 rows, expected 200000"
    assert run_all.error_of("killed\n\n") == "killed"


def test_a_figure_just_short_of_its_goal_shows_the_digits_that_show_the_miss(page):
    """0.996x rounds to the goal's 1.00x; written so, the row would say "1.00x, not met"."""
    assert page.shown({"value": 0.996, "unit": "x", "goal": {"at_least": 1.0}}) == "0.996x"
    assert page.shown({"value": 0.8996, "unit": "%", "goal": {"at_least": 0.9}}) == "89.96 %"
    assert page.shown({"value": 0.896, "unit": "%", "goal": {"at_least": 0.9}}) == "89.6 %"
    # a miss the rounding does not hide, a figure that meets its goal, and one with none: as before
    assert page.shown({"value": 1.2, "unit": "x", "goal": {"at_least": 1.4}}) == "1.20x"
    assert page.shown({"value": 1.004, "unit": "x", "goal": {"at_least": 1.0}}) == "1.00x"
    assert page.shown({"value": 22_600, "unit": "records", "goal": None}) == "22,600 records"
