"""The Jepsen results table: every mode, nemesis and workload, a few seeds each, run and tabled.

No Kafka twin: the matrix of runs behind a Jepsen analysis's results (Jepsen's ``lein run test-all``
runs a test for each combination of its options), written as the table on chapter 13's page and on
the benchmark page. Not a speed benchmark: ``run_all.py`` does not run it.

    .venv/bin/python benchmarks/jepsen_table.py [--seeds 5] [--seconds 60] [--modes zookeeper kraft]
        [--nemeses kill pause partition mixed] [--workloads plain txn] [--nemesis-interval 10]
        [--json benchmarks/results/jepsen_table.json] [--page-only]

For each mode (ZooKeeper, KRaft), nemesis (kill, pause, partition, or all three mixed), workload
(plain, or ``txn``: transactions with read_committed consumers) and seed (1 to ``--seeds``), one
``kafka_lite.jepsen.run.run``: a cluster of its own, the workload for ``--seconds`` with the nemesis
striking ``--nemesis-interval`` seconds after each healing, the final phase, the history checked.
Runs go one after another, never two at once: each starts a cluster, and two would share the
machine's two cores and each other's faults. Each run's history stays in
``results/jepsen/<mode>-<nemesis>-<workload>-<seed>/`` with the clients' log lines (its cluster's
data is removed), so that an anomaly can be looked at afterwards (``kafka-lite jepsen check HISTORY
--pictures DIR``).

Each run is one row of the JSON file: its key (mode, nemesis, workload, seed), its seconds, the
operations, the faults done, the verdict and the error classes found (allowed or not), the history's
path, and a ``note`` the explanation of an anomaly is written into by hand. A re-run keeps the note
of a row with the same key, and the rows of an earlier run that this one does not repeat. A run that
fails (its cluster did not start, a fault did not heal) is a row with its error, and the matrix goes
on. Ctrl-C stops the current run (``run`` stops everything it started) and keeps the rows done.

The pages (``chapters/ch13_jepsen/index.md`` and ``docs/benchmarks.md``) hold the table between the
``jepsen-table`` markers, one line per mode, nemesis and workload, written from the JSON file alone
(``--page-only`` writes them again without running anything); a unit test checks both pages against
the committed file.
"""

from __future__ import annotations

import argparse
import json
import logging
import shlex
import shutil
import sys
import textwrap
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from page import cell
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from run_all import commit, machine

from kafka_lite.cli import positive_int
from kafka_lite.jepsen.run import MODES, RunConfig, run

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results" / "jepsen_table.json"
RUNS = HERE / "results" / "jepsen"  # one directory per run, its history kept (not in git)
PAGES = [ROOT / "chapters" / "ch13_jepsen" / "index.md", ROOT / "docs" / "benchmarks.md"]
BEGIN = "<!-- jepsen-table:start: written by benchmarks/jepsen_table.py from benchmarks/results/jepsen_table.json -->"
END = "<!-- jepsen-table:end -->"

NEMESES = {
    "kill": frozenset({"kill"}),
    "pause": frozenset({"pause"}),
    "partition": frozenset({"partition"}),
    "mixed": frozenset({"kill", "pause", "partition"}),
}
WORKLOADS = ("plain", "txn")
MODE_NAMES = {"zookeeper": "ZooKeeper", "kraft": "KRaft"}
# The matrix the project's table states: anything less is called a trial on the pages.
FULL_SEEDS = 5
FULL_SECONDS = 60
NEMESIS_INTERVAL_S = RunConfig().nemesis_interval_s


def key_of(row: dict) -> tuple:
    return (row["mode"], row["nemesis"], row["workload"], row["seed"])


def shown(path: Path) -> str:
    """A path as the rows keep it: from the checkout's root when it is inside it."""
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def run_name(mode: str, nemesis: str, workload: str, seed: int) -> str:
    return f"{mode}-{nemesis}-{workload}-{seed}"


# -- the options -------------------------------------------------------------------------------------


def non_negative_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} seconds: cannot be negative")
    return value


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=positive_int("seeds"), help=f"seeds 1 to N of each (default {FULL_SEEDS})")
    p.add_argument(
        "--seconds",
        type=positive_int("seconds"),
        help=f"how long each run's workload runs (default {FULL_SECONDS})",
    )
    p.add_argument("--modes", nargs="+", choices=MODES, help="default: both")
    p.add_argument("--nemeses", nargs="+", choices=list(NEMESES), help="default: all four")
    p.add_argument("--workloads", nargs="+", choices=WORKLOADS, help="default: both")
    p.add_argument(
        "--nemesis-interval",
        type=non_negative_seconds,
        metavar="SECONDS",
        help=f"the nemesis's quiet time before each fault (default {NEMESIS_INTERVAL_S:g})",
    )
    p.add_argument(
        "--json",
        type=Path,
        default=RESULTS,
        metavar="PATH",
        help="the rows, read for their notes and written after each run "
        "(default benchmarks/results/jepsen_table.json)",
    )
    p.add_argument("--page-only", action="store_true", help="write the pages from the JSON file, run nothing")
    return p


RUN_OPTIONS = ("seeds", "seconds", "modes", "nemeses", "workloads", "nemesis_interval")


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = parser()
    args = p.parse_args(argv)
    if args.page_only:
        given = [f"--{name.replace('_', '-')}" for name in RUN_OPTIONS if getattr(args, name) is not None]
        if given:
            p.error(f"--page-only runs nothing, so {', '.join(given)} would be ignored: leave them out")
        if not args.json.exists():
            p.error(
                f"--page-only writes the pages from {args.json}, which does not exist: run the matrix first"
            )
    for name, default in (
        ("seeds", FULL_SEEDS),
        ("seconds", FULL_SECONDS),
        ("modes", list(MODES)),
        ("nemeses", list(NEMESES)),
        ("workloads", list(WORKLOADS)),
        ("nemesis_interval", NEMESIS_INTERVAL_S),
    ):
        if getattr(args, name) is None:
            setattr(args, name, default)
    for name in ("modes", "nemeses", "workloads"):
        values = getattr(args, name)
        if len(set(values)) != len(values):
            p.error(f"--{name} names {', '.join(sorted({v for v in values if values.count(v) > 1}))} twice")
    return args


# -- the runs ----------------------------------------------------------------------------------------


def matrix(args: argparse.Namespace) -> list[tuple[str, str, str, int]]:
    """Every run's key, in the table's order: mode, nemesis, workload, then seed."""
    return [
        (mode, nemesis, workload, seed)
        for mode in MODES
        if mode in args.modes
        for nemesis in NEMESES
        if nemesis in args.nemeses
        for workload in WORKLOADS
        if workload in args.workloads
        for seed in range(1, args.seeds + 1)
    ]


def run_row(key: tuple, args: argparse.Namespace, progress) -> dict:
    """One run, as its row (its note left to ``merge``)."""
    mode, nemesis, workload, seed = key
    directory = RUNS / run_name(*key)
    shutil.rmtree(directory, ignore_errors=True)  # an earlier run's history would be mixed with this one's
    config = RunConfig(
        mode=mode,
        faults=NEMESES[nemesis],
        seconds=args.seconds,
        seed=seed,
        txn=workload == "txn",
        directory=directory,
        nemesis_interval_s=args.nemesis_interval,
    )
    row = {
        "mode": mode,
        "nemesis": nemesis,
        "workload": workload,
        "seed": seed,
        "seconds": args.seconds,
        "nemesis_interval_s": args.nemesis_interval,
        "history": shown(directory / "history.jsonl"),
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
    }
    start = time.monotonic()
    # The clients' warnings (each retry, each refused connection while a node is down) go to a file
    # beside the history, where they can be read against it, and not between the progress lines.
    directory.mkdir(parents=True)
    log = logging.FileHandler(directory / "clients.log", encoding="utf-8")
    log.setFormatter(logging.Formatter("%(asctime)s %(threadName)s %(name)s %(levelname)s %(message)s"))
    logging.getLogger().addHandler(log)
    try:
        outcome = run(config, progress)
    except Exception as e:  # the matrix goes on; the row says why this run has no verdict
        row.update(status="failed", error=f"{type(e).__name__}: {e}", valid=None)
    else:
        result = outcome.result or {}
        row.update(
            status="ok",
            operations=outcome.ops,
            faults=outcome.faults,
            valid=result.get("valid"),
            error_types=result.get("error_types", []),
            bad_error_types=result.get("bad_error_types", []),
        )
    finally:
        logging.getLogger().removeHandler(log)
        log.close()
        # The brokers' data: large, and what the checker needs of it is in the history.
        shutil.rmtree(directory / "cluster", ignore_errors=True)
    row["took_s"] = round(time.monotonic() - start, 1)
    return row


def merge(earlier: list[dict], done: list[dict]) -> list[dict]:
    """This run's rows, each with the note of the earlier row of its key, and the earlier rows it
    did not repeat; in the table's order."""
    notes = {key_of(r): r.get("note", "") for r in earlier}
    rows = {key_of(r): r for r in earlier}
    for row in done:
        rows[key_of(row)] = {**row, "note": notes.get(key_of(row), "")}
    order = {name: i for i, name in enumerate([*MODES, *NEMESES, *WORKLOADS])}
    return sorted(
        rows.values(), key=lambda r: (order[r["mode"]], order[r["nemesis"]], order[r["workload"]], r["seed"])
    )


def outcome_text(row: dict) -> str:
    if row["status"] != "ok":
        return f"[red]failed[/]: {row['error']}"
    verdict = (
        "[green]valid[/]" if row["valid"] else f"[bold red]not valid[/]: {', '.join(row['bad_error_types'])}"
    )
    allowed = sorted(set(row["error_types"]) - set(row["bad_error_types"]))
    also = f" (allowed: {', '.join(allowed)})" if allowed else ""
    return f"{verdict}{also}, {row['operations']:,} operations, {row['faults']} faults, {row['took_s']:.0f} s"


def run_with_bar(key: tuple, args: argparse.Namespace, console: Console) -> dict:
    """``run_row``, its phases on a bar that goes when the run ends (the line of its outcome stays)."""
    bar = Progress(
        TextColumn("  [bold]{task.description:<9}"),
        BarColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=not console.is_terminal,
    )
    with bar:
        task = bar.add_task("cluster", total=1.0)
        return run_row(
            key, args, lambda phase, fraction: bar.update(task, description=phase, completed=fraction)
        )


def run_matrix(
    args: argparse.Namespace, console: Console, save: Callable[[list[dict]], None]
) -> tuple[list[dict], bool]:
    """Run every key of the matrix, one after another, ``save``-ing the rows done after each (a run
    of hours stopped part-way keeps what it measured); the rows done, and whether Ctrl-C stopped it."""
    keys = matrix(args)
    done: list[dict] = []
    for i, key in enumerate(keys, 1):
        console.print(f"[{i}/{len(keys)}] {run_name(*key)}: {args.seconds} s", highlight=False)
        try:
            row = run_with_bar(key, args, console)
        except KeyboardInterrupt:
            console.print(
                f"interrupted: {len(done)} of {len(keys)} runs done, the rest not run", highlight=False
            )
            return done, True
        console.print(f"  {outcome_text(row)}", highlight=False)
        done.append(row)
        save(done)
    return done, False


# -- the table ----------------------------------------------------------------------------------------


def classes_text(rows: list[dict]) -> str:
    """The classes a line's runs found, those outside the allowed set in bold, and any run that failed."""
    found = sorted({c for r in rows if r["status"] == "ok" for c in r["error_types"]})
    bad = {c for r in rows if r["status"] == "ok" for c in r["bad_error_types"]}
    parts = [f"**{c}** (not allowed)" if c in bad else c for c in found]
    failed = [str(r["seed"]) for r in rows if r["status"] != "ok"]
    if failed:
        parts.append(f"**no verdict** (seed {', '.join(failed)}: the run failed)")
    return ", ".join(parts) or "none"


def table(rows: list[dict]) -> str:
    lines = [
        "| mode | nemesis | workload | runs | valid | operations | faults | classes found | notes |",
        "|---|---|---|---:|---:|---:|---:|---|---|",
    ]
    groups: dict[tuple, list[dict]] = {}
    for row in rows:
        groups.setdefault(key_of(row)[:3], []).append(row)
    for (mode, nemesis, workload), group in groups.items():
        ok = [r for r in group if r["status"] == "ok"]
        notes = "; ".join(f"seed {r['seed']}: {r['note']}" for r in group if r.get("note"))
        lines.append(
            f"| {MODE_NAMES[mode]} | {nemesis} | {workload} | {len(group)} | {sum(1 for r in ok if r['valid'])} "
            f"| {sum(r['operations'] for r in ok):,} | {sum(r['faults'] for r in ok)} | {cell(classes_text(group))} "
            f"| {cell(notes)} |"
        )
    return "\n".join(lines)


def spread(values: set[float]) -> str:
    """One number, or the range of several: rows of an earlier run may differ from this run's."""
    low, high = min(values), max(values)
    return f"{low:g}" if low == high else f"{low:g} to {high:g}"


def preamble(results: dict) -> str:
    rows = results["rows"]
    if not rows:
        return f"No run has finished yet (`{results['command']}` was stopped before its first run ended)."
    m = results["machine"]
    seeds: dict[tuple, set] = {}
    for row in rows:
        seeds.setdefault(key_of(row)[:3], set()).add(row["seed"])
    per_line = {len(s) for s in seeds.values()}
    seconds = {r["seconds"] for r in rows}
    intervals = {r["nemesis_interval_s"] for r in rows}
    full = (
        len(seeds) == len(MODES) * len(NEMESES) * len(WORKLOADS)
        and min(per_line) >= FULL_SEEDS
        and min(seconds) >= FULL_SECONDS
    )
    seed_words = f"{spread(per_line)} seed{'s' if max(per_line) > 1 else ''}"
    kind = (
        f"The full matrix: {len(rows)} runs"
        if full
        else f"A short trial run ({seed_words}, {spread(seconds)} s), not yet the full matrix "
        f"({FULL_SEEDS} seeds of {FULL_SECONDS} s for each line of both modes, every nemesis and both workloads): "
        f"{len(rows)} runs"
    )
    took = results.get("seconds", 0)
    took_text = f"{took / 60:.0f} minutes" if took >= 90 else f"{took:.0f} seconds"
    text = (
        f"{kind}, one after another, on {results['date']} (commit {results['commit']}), in "
        f"{took_text}, with\n\n```sh\n{results['command']}\n```\n\n"
        f"on {m['cores']} cores, {m['memory_gib']} GiB of memory, {m['cpu']}, Python {m['python']} (load average "
        f"{', '.join(str(x) for x in m['load_average'])} when it started). Each run starts a cluster of its own "
        f"(ZooKeeper and three brokers, or three combined KRaft nodes), runs the workload with kafka_lite's clients "
        f"for {spread(seconds)} s with the nemesis striking {spread(intervals)} s after each "
        "healing, heals, runs the final phase and checks the history. A line adds up its seeds' runs; a class in "
        "bold is outside Jepsen's allowed set. Each run's row (its seed, operations, faults, classes, history) "
        "is in `benchmarks/results/jepsen_table.json`, and the table is written from that file alone."
    )
    earlier = sum(1 for r in rows if r.get("from_earlier_run"))
    if earlier:
        text += f"\n\n{earlier} of the rows were kept from an earlier run (the file gives each row's date)."
    return "\n\n".join(
        part if part.startswith("```") else textwrap.fill(part, 100, break_on_hyphens=False)
        for part in text.split("\n\n")
    )


def table_section(results: dict) -> str:
    """What both pages hold between the markers."""
    return f"{BEGIN}\n{preamble(results)}\n\n{table(results['rows'])}\n{END}"


def write_pages(results: dict) -> None:
    section = table_section(results)
    for path in PAGES:
        text = path.read_text(encoding="utf-8")
        if BEGIN not in text or END not in text:
            raise SystemExit(f"{path} has no jepsen-table markers ({BEGIN!r} ... {END!r})")
        start, end = text.index(BEGIN), text.index(END) + len(END)
        path.write_text(text[:start] + section + text[end:], encoding="utf-8")


# -- the command --------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    console = Console()
    earlier = json.loads(args.json.read_text()) if args.json.exists() else None
    if args.page_only:
        write_pages(earlier)
        console.print(f"wrote the table into {', '.join(shown(p) for p in PAGES)}", highlight=False)
        return 0
    started = time.monotonic()
    results = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "command": shlex.join(
            [".venv/bin/python", "benchmarks/jepsen_table.py", *(sys.argv[1:] if argv is None else argv)]
        ),
        "machine": machine(),
        "commit": commit(),
    }
    kept = [{**r, "from_earlier_run": True} for r in (earlier or {}).get("rows", [])]

    def save(done: list[dict]) -> None:
        results["rows"] = merge(kept, done)
        results["seconds"] = round(time.monotonic() - started)
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")

    done, interrupted = run_matrix(args, console, save)
    save(done)
    write_pages(results)
    failed = [run_name(*key_of(r)) for r in done if r["valid"] is not True]
    runs = f"{len(done)} run{'' if len(done) == 1 else 's'}"
    named = f": {', '.join(failed)}" if failed else ""
    console.print(
        f"{runs}, {len(failed)} not valid or failed{named}; rows in {shown(args.json)}, the table on the pages",
        highlight=False,
    )
    if interrupted:
        return 130
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
