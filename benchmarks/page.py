"""The benchmark page's "At a glance" section and its chart, written from one run's results.

No Kafka twin: the page's generator. ``run_all.py`` calls it after a run; on its own it writes the
page again from the results file, without running anything:

    .venv/bin/python benchmarks/page.py [--results benchmarks/results/latest.json]

It replaces what ``docs/benchmarks.md`` holds between the two ``at-a-glance`` markers with a table of
every headline figure of the run (its value, its goal where one is set, met or not, and what it was
measured against) and a line-up of the run's date, machine and command; and it draws the figures that
have a goal as ``docs/images/benchmarks_at_a_glance.svg``. The page's test regenerates both from the
committed results and compares, so the page cannot drift from the results.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import textwrap
from pathlib import Path
from xml.sax.saxutils import escape

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results" / "latest.json"
PAGE = ROOT / "docs" / "benchmarks.md"
CHART = ROOT / "docs" / "images" / "benchmarks_at_a_glance.svg"
CHART_LINK = "images/benchmarks_at_a_glance.svg"  # from docs/benchmarks.md
BEGIN = "<!-- at-a-glance: written by benchmarks/page.py from benchmarks/results/latest.json -->"
END = "<!-- end of at-a-glance -->"

# The page's section for each script, and a short name for the table's first column.
SECTIONS = {
    "bench_log_append": "log append",
    "bench_protocol": "protocol",
    "bench_broker": "broker",
    "bench_producer": "producer",
    "bench_consumer": "consumer",
    "bench_fetch_hold_back": "fetch hold-back",
    "bench_spark": "Spark",
    "bench_timer": "timer",
    "bench_replication": "replication",
    "bench_request_cost": "request cost",
    "bench_request_hops": "request hops",
    "bench_controller": "controller",
    "bench_kraft_controller": "KRaft controller",
    "bench_streams": "Streams",
    "bench_mirror_maker": "MirrorMaker",
    "bench_transactions": "transactions",
    "bench_security": "security",
    "bench_raft": "Raft quorum",
    "bench_jepsen_checker": "Jepsen checker",
}


# -- the numbers, as the page writes them ----------------------------------------------------------


def number(value: float, unit: str) -> str:
    if unit == "x":
        return f"{value:.2f}x"
    if unit == "%":
        return f"{value * 100:.0f} %"
    if unit == "records/s":
        return f"{value:,.0f} records/s"
    if unit == "ms":
        return f"{value:.1f} ms"
    if unit == "s":
        return f"{value:.2f} s"
    if unit == "records":
        return f"{value:,.0f} records"
    return f"{value:,.3g} {unit}"


def shown(fig: dict) -> str:
    """The figure as the page writes it; a figure that misses its goal by less than the rounding
    gets the digits that show the miss (0.996x is not the 1x it would round to)."""
    text = number(fig["value"], fig["unit"])
    goal = fig.get("goal")
    if goal and met(fig) is False:
        ((_, bound),) = goal.items()
        if text == number(bound, fig["unit"]) and fig["unit"] in ("x", "%"):
            scale, suffix = (100, " %") if fig["unit"] == "%" else (1, "x")
            for digits in range(1, 6):
                text = f"{fig['value'] * scale:.{digits}f}{suffix}"
                if text != f"{bound * scale:.{digits}f}{suffix}":
                    break
    return text


def goal_text(fig: dict) -> str:
    goal = fig.get("goal")
    if not goal:
        return ""
    ((kind, bound),) = goal.items()
    words = {"at_least": "at least", "at_most": "at most"}[kind]
    unit = fig["unit"]
    amount = {"x": f"{bound:g}x", "%": f"{bound * 100:g} %"}.get(unit) or f"{bound:g} {unit}"
    return f"{words} {amount}"


def met(fig: dict) -> bool | None:
    """Whether the figure meets its goal; None when it has none."""
    goal = fig.get("goal")
    if not goal:
        return None
    if "at_least" in goal:
        return fig["value"] >= goal["at_least"]
    return fig["value"] <= goal["at_most"]


def cell(text: str) -> str:
    """Text fit for one cell of a Markdown table."""
    return " ".join(text.split()).replace("|", "\\|")


# -- the section -------------------------------------------------------------------------------------


def preamble(results: dict) -> str:
    m = results["machine"]
    seconds = results.get("seconds", 0)
    took = f"{seconds / 60:.0f} minutes" if seconds >= 90 else f"{seconds:.0f} seconds"
    earlier = [b for b in results["benchmarks"] if b.get("from_earlier_run")]
    text = (
        f"Every benchmark in its short form, run once, one after another, on {results['date']} "
        f"(commit {results['commit']}), in {took}, with\n\n"
        f"```sh\n{results['command']}\n```\n\n"
        f"on {m['cores']} cores, {m['memory_gib']} GiB of memory, {m['cpu']}, Python {m['python']}, "
        f"{m['system']} (load average {', '.join(str(x) for x in m['load_average'])} when it started). "
        "Each figure is a ratio of two things measured in the same run, or a time or a rate; each "
        "script's command is in `benchmarks/results/latest.json` and the tables it printed in "
        "`benchmarks/results/logs/`. The rows and the chart are written by `benchmarks/page.py` from "
        "that file alone. The short forms use fewer records than the sections' own commands, so rates "
        "differ from theirs: compare ratios. Figures from "
        "earlier code are on [the history page](benchmarks_history.md)."
    )
    if earlier:
        names = ", ".join(f"`{b['name']}`" for b in earlier)
        text += f"\n\n{names} kept the results of an earlier run (`run_all.py --only` ran the others)."
    # Each paragraph wrapped as the page's own prose is; the command's block left as it is.
    return "\n\n".join(
        part if part.startswith("```") else textwrap.fill(part, 100, break_on_hyphens=False)
        for part in text.split("\n\n")
    )


def tables(results: dict) -> str:
    """Two tables: the figures that have a goal (and any script that failed), then the others."""
    goals = [
        "| benchmark | figure | this run | goal | met | measured against, in the same run |",
        "|---|---|---|---|---|---|",
    ]
    others = [
        "| benchmark | figure | this run | measured against, in the same run |",
        "|---|---|---|---|",
    ]
    for bench in results["benchmarks"]:
        link = f"[{SECTIONS.get(bench['name'], bench['name'])}](#{bench['name'].replace('_', '-')})"
        if bench["status"] != "ok":
            error = cell(bench.get("error", "failed"))[:400]
            goals.append(f"| {link} | **failed** (`{cell(bench['command'])}`): {error} | | | | |")
            continue
        for fig in bench["figures"]:
            value = shown(fig)
            if fig.get("goal"):
                verdict = "met" if met(fig) else "**not met**"
                goals.append(
                    f"| {link} | {cell(fig['name'])} | **{value}** | {goal_text(fig)} | {verdict} "
                    f"| {cell(fig['detail'])} |"
                )
            else:
                others.append(f"| {link} | {cell(fig['name'])} | {value} | {cell(fig['detail'])} |")
    return "\n".join(goals) + "\n\n" + "\n".join(others)


def glance_section(results: dict) -> str:
    """What the page holds between the markers."""
    chart = (
        f"![Each figure that has a goal, as its share of the goal (1 is the goal met exactly)]({CHART_LINK})"
    )
    return f"{BEGIN}\n{preamble(results)}\n\n{chart}\n\n{tables(results)}\n{END}"


def replace_section(page: str, section: str) -> str:
    start, end = page.index(BEGIN), page.index(END) + len(END)
    return page[:start] + section + page[end:]


SHORT_FORM = re.compile(r"(<!-- short-form: (\w+) -->\n)(.*?)(<!-- end short-form -->)", re.DOTALL)


def short_forms(page: str, results: dict) -> str:
    """Under each section's command, the command that measured its figures at a glance: the
    section's command is the script's full form, and ``run_all.py`` runs a shorter one."""
    commands = {bench["name"]: bench["command"] for bench in results["benchmarks"]}

    def line(m: re.Match) -> str:
        command = commands.get(m.group(2))
        said = (
            f"The figures [at a glance](#at-a-glance) are from `{command}`, as `run_all.py` ran it.\n"
            if command
            else "Not in the run [at a glance](#at-a-glance).\n"
        )
        return m.group(1) + said + m.group(4)

    return SHORT_FORM.sub(line, page)


# -- the chart ---------------------------------------------------------------------------------------

WIDTH, LABEL_W, ROW_H, TOP, BOTTOM = 960, 470, 24, 44, 40
PLOT_W = WIDTH - LABEL_W - 170
LOW, HIGH = 1 / 16, 16  # the axis's ends, as the share of the goal; beyond them a bar is cut


def standing(fig: dict) -> float:
    """How far a figure is from its goal, as one number: the figure over an at-least goal, or an
    at-most goal over the figure; 1 is the goal met exactly, above 1 met with room."""
    goal = fig["goal"]
    if "at_least" in goal:
        return fig["value"] / goal["at_least"]
    return goal["at_most"] / fig["value"] if fig["value"] > 0 else HIGH


def x_of(share: float) -> float:
    """A log scale: twice the goal and half of it are as far from the goal line."""
    share = min(max(share, LOW), HIGH)
    return LABEL_W + (math.log(share) - math.log(LOW)) / (math.log(HIGH) - math.log(LOW)) * PLOT_W


def chart_svg(results: dict) -> str:
    """The figures with a goal, one bar each from the axis's left end to the figure's standing; the
    vertical line is the goal."""
    figs = [f for b in results["benchmarks"] if b["status"] == "ok" for f in b["figures"] if f.get("goal")]
    height = TOP + ROW_H * max(len(figs), 1) + BOTTOM
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="12">',
        f"<title>Benchmarks at a glance, {escape(results['date'])}</title>",
        f'<rect width="{WIDTH}" height="{height}" fill="white"/>',
        f'<text x="{LABEL_W}" y="18" font-weight="bold">Each figure as its share of its goal '
        f"(log scale; the line is the goal)</text>",
        f'<text x="{LABEL_W}" y="34" fill="#555">{escape(results["date"])}, '
        f"{results['machine']['cores']} cores, {escape(results['machine']['cpu'])}; green: met, red: not met</text>",
    ]
    for i, fig in enumerate(figs):
        y = TOP + i * ROW_H
        share = standing(fig)
        colour = "#2e7d32" if met(fig) else "#c62828"
        label = fig["name"]
        if len(label) > 72:
            label = label[:71] + "…"
        out.append(f'<text x="{LABEL_W - 8}" y="{y + 16}" text-anchor="end">{escape(label)}</text>')
        out.append(
            f'<rect x="{LABEL_W}" y="{y + 5}" width="{x_of(share) - LABEL_W:.1f}" height="{ROW_H - 10}" '
            f'fill="{colour}"/>'
        )
        words = f"{shown(fig)} ({goal_text(fig)})"
        out.append(f'<text x="{LABEL_W + PLOT_W + 8}" y="{y + 16}">{escape(words)}</text>')
    axis_y = TOP + ROW_H * max(len(figs), 1)
    goal_x = x_of(1.0)
    out.append(
        f'<line x1="{goal_x:.1f}" y1="{TOP}" x2="{goal_x:.1f}" y2="{axis_y}" stroke="black" stroke-width="2"/>'
    )
    out.append(f'<line x1="{LABEL_W}" y1="{axis_y}" x2="{LABEL_W + PLOT_W}" y2="{axis_y}" stroke="#555"/>')
    for tick in (1 / 16, 1 / 4, 1, 4, 16):
        x = x_of(tick)
        text = f"{tick:g}" if tick >= 1 else f"1/{round(1 / tick)}"
        out.append(f'<line x1="{x:.1f}" y1="{axis_y}" x2="{x:.1f}" y2="{axis_y + 5}" stroke="#555"/>')
        out.append(f'<text x="{x:.1f}" y="{axis_y + 18}" text-anchor="middle">{text}</text>')
    out.append(
        f'<text x="{LABEL_W + PLOT_W / 2:.1f}" y="{axis_y + 34}" text-anchor="middle" fill="#555">'
        "share of the goal: the figure over an at-least goal, an at-most goal over the figure</text>"
    )
    out.append("</svg>")
    return "\n".join(out) + "\n"


# -- the command -------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    results = json.loads(args.results.read_text())
    PAGE.write_text(short_forms(replace_section(PAGE.read_text(), glance_section(results)), results))
    CHART.parent.mkdir(parents=True, exist_ok=True)
    CHART.write_text(chart_svg(results))
    print(f"wrote {PAGE.relative_to(ROOT)} (at a glance) and {CHART.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
