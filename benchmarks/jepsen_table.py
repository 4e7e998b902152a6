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

Two choices are outside the matrix, for chapter 13's finding "Kafka's own transactions, delayed":
the ``delay`` nemesis (a partition's leader's Produce requests held past the transaction timeout, then
let go) and the ``txn-kip-890`` workload (``txn`` with both parts of KIP-890 on). The matrix never
runs them; they are asked for by name, into a JSON file of their own:

    .venv/bin/python benchmarks/jepsen_table.py --modes zookeeper kraft --nemeses delay \\
        --workloads txn txn-kip-890 --seeds 3 --seconds 35 --json benchmarks/results/jepsen_delay.json

Each JSON file has its own markers, named after it (``jepsen-delay`` for ``jepsen_delay.json``), and
its table goes on each page that holds them (the matrix's on both pages, which must hold them). Each
row also records the ``kafka-lite jepsen run`` command that makes the same run on its own.
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
from kafka_lite.jepsen.nemesis import DELAY_S
from kafka_lite.jepsen.run import MODES, RunConfig, run

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results" / "jepsen_table.json"
RUNS = HERE / "results" / "jepsen"  # one directory per run, its history kept (not in git)
PAGES = [ROOT / "chapters" / "ch13_jepsen" / "index.md", ROOT / "docs" / "benchmarks.md"]

# The matrix: every mode, these nemeses and these workloads.
NEMESES = {
    "kill": frozenset({"kill"}),
    "pause": frozenset({"pause"}),
    "partition": frozenset({"partition"}),
    "mixed": frozenset({"kill", "pause", "partition"}),
}
WORKLOADS = ("plain", "txn")
# Outside the matrix, run only when named: chapter 13's finding "Kafka's own transactions, delayed".
OTHER_NEMESES = {"delay": frozenset({"delay"})}
OTHER_WORKLOADS = ("txn-kip-890",)
ALL_NEMESES = {**NEMESES, **OTHER_NEMESES}
ALL_WORKLOADS = (*WORKLOADS, *OTHER_WORKLOADS)
# Each workload's RunConfig settings, and the ``kafka-lite jepsen run`` options that ask for them.
WORKLOAD_CONFIGS = {
    "plain": {"txn": False, "kip_890": False},
    "txn": {"txn": True, "kip_890": False},
    "txn-kip-890": {"txn": True, "kip_890": True},
}
NEMESIS_WORDS = {
    "delay": f"the delay nemesis (a partition's leader's Produce requests held {DELAY_S:g} s, then let go)"
}
WORKLOAD_WORDS = {
    "plain": "plain (no transactions)",
    "txn": "txn (transactions under Kafka 0.11's protocol, kafka_lite's default)",
    "txn-kip-890": "txn-kip-890 (the same with both parts of KIP-890 on)",
}
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


def markers(path: Path) -> tuple[str, str]:
    """The markers a JSON file's table sits between on a page, named after the file."""
    name = path.stem.replace("_", "-")
    return (
        f"<!-- {name}:start: written by benchmarks/jepsen_table.py from {shown(path.resolve())} -->",
        f"<!-- {name}:end -->",
    )


BEGIN, END = markers(RESULTS)


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
    p.add_argument(
        "--nemeses",
        nargs="+",
        choices=list(ALL_NEMESES),
        help=f"default: the matrix's {', '.join(NEMESES)} ({', '.join(OTHER_NEMESES)} only when named)",
    )
    p.add_argument(
        "--workloads",
        nargs="+",
        choices=ALL_WORKLOADS,
        help=f"default: the matrix's {', '.join(WORKLOADS)} ({', '.join(OTHER_WORKLOADS)} only when named)",
    )
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
        for nemesis in ALL_NEMESES
        if nemesis in args.nemeses
        for workload in ALL_WORKLOADS
        if workload in args.workloads
        for seed in range(1, args.seeds + 1)
    ]


def run_command(config: RunConfig) -> str:
    """The ``kafka-lite jepsen run`` command that makes the same run as ``config`` on its own."""
    words = ["kafka-lite", "jepsen", "run", "--mode", config.mode]
    words += ["--txn"] if config.txn else []
    words += ["--faults", ",".join(sorted(config.faults))] if config.faults else []
    words += ["--seconds", f"{config.seconds:g}", "--seed", str(config.seed)]
    words += ["--nemesis-interval", f"{config.nemesis_interval_s:g}"]
    words += ["--kip-890"] if config.kip_890 else []
    return shlex.join([*words, "--dir", shown(config.directory)])


def run_row(key: tuple, args: argparse.Namespace, progress) -> dict:
    """One run, as its row (its note left to ``merge``)."""
    mode, nemesis, workload, seed = key
    directory = RUNS / run_name(*key)
    shutil.rmtree(directory, ignore_errors=True)  # an earlier run's history would be mixed with this one's
    config = RunConfig(
        mode=mode,
        faults=ALL_NEMESES[nemesis],
        seconds=args.seconds,
        seed=seed,
        directory=directory,
        nemesis_interval_s=args.nemesis_interval,
        **WORKLOAD_CONFIGS[workload],
    )
    row = {
        "mode": mode,
        "nemesis": nemesis,
        "workload": workload,
        "seed": seed,
        "seconds": args.seconds,
        "nemesis_interval_s": args.nemesis_interval,
        "history": shown(directory / "history.jsonl"),
        "command": run_command(config),
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
    order = {name: i for i, name in enumerate([*MODES, *ALL_NEMESES, *ALL_WORKLOADS])}
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
        noted: dict[str, list[str]] = {}  # a note several seeds share is written once
        for r in group:
            if r.get("note"):
                noted.setdefault(r["note"], []).append(str(r["seed"]))
        notes = "; ".join(
            f"seed{'s' if len(seeds) > 1 else ''} {', '.join(seeds)}: {note}" for note, seeds in noted.items()
        )
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


def words(names: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def seeds_text(seeds: set[int]) -> str:
    ordered = sorted(seeds)
    if len(ordered) == 1:
        return f"seed {ordered[0]}"
    if len(ordered) > 2 and ordered == list(range(ordered[0], ordered[-1] + 1)):
        return f"seeds {ordered[0]} to {ordered[-1]}"
    return f"seeds {words([str(s) for s in ordered])}"


def in_matrix(rows: list[dict]) -> bool:
    return all(r["nemesis"] in NEMESES and r["workload"] in WORKLOADS for r in rows)


def machine_text(results: dict) -> str:
    m = results["machine"]
    return (
        f"on {m['cores']} cores, {m['memory_gib']} GiB of memory, {m['cpu']}, Python {m['python']} (load average "
        f"{', '.join(str(x) for x in m['load_average'])} when it started)"
    )


def finding_preamble(results: dict, path: Path) -> str:
    """What a table of runs outside the matrix is: its nemeses, workloads, modes, seeds and seconds."""
    rows = results["rows"]
    nemeses = [
        NEMESIS_WORDS.get(n, f"the {n} nemesis") for n in ALL_NEMESES if any(r["nemesis"] == n for r in rows)
    ]
    workloads = [WORKLOAD_WORDS[w] for w in ALL_WORKLOADS if any(r["workload"] == w for r in rows)]
    modes = [m for m in MODES if any(r["mode"] == m for r in rows)]
    modes_text = "both modes" if len(modes) == len(MODES) else f"{MODE_NAMES[modes[0]]} mode"
    seconds = {r["seconds"] for r in rows}
    intervals = {r["nemesis_interval_s"] for r in rows}
    took_text = took_words(results)
    return (
        f"{words(nemeses)[0].upper()}{words(nemeses)[1:]}, striking {spread(intervals)} s after each healing, on the "
        f"workload{'s' if len(workloads) > 1 else ''} {words(workloads)}: {seeds_text({r['seed'] for r in rows})} "
        f"of {spread(seconds)} s in {modes_text}, {len(rows)} run{'s' if len(rows) > 1 else ''} one after "
        f"another on {results['date']} (commit {results['commit']}), in {took_text}, with\n\n"
        f"```sh\n{results['command']}\n```\n\n"
        f"{machine_text(results)}. A class in bold is outside Jepsen's allowed set. Each run's row (its "
        f"classes, history and `kafka-lite jepsen run` command) is in `{shown(path.resolve())}`."
    )


def took_words(results: dict) -> str:
    """How long the whole run took, in the unit that reads best."""
    took = results.get("seconds", 0)
    return f"{took / 60:.0f} minutes" if took >= 90 else f"{took:.0f} seconds"


def preamble(results: dict, path: Path = RESULTS) -> str:
    rows = results["rows"]
    if not rows:
        return f"No run has finished yet (`{results['command']}` was stopped before its first run ended)."
    text = matrix_preamble(results, path) if in_matrix(rows) else finding_preamble(results, path)
    earlier = sum(1 for r in rows if r.get("from_earlier_run"))
    if earlier:
        text += f"\n\n{earlier} of the rows were kept from an earlier run (the file gives each row's date)."
    return "\n\n".join(
        part if part.startswith("```") else textwrap.fill(part, 100, break_on_hyphens=False)
        for part in text.split("\n\n")
    )


def matrix_preamble(results: dict, path: Path) -> str:
    rows = results["rows"]
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
    took_text = took_words(results)
    return (
        f"{kind}, one after another, on {results['date']} (commit {results['commit']}), in "
        f"{took_text}, with\n\n```sh\n{results['command']}\n```\n\n"
        f"{machine_text(results)}. Each run starts a cluster of its own "
        f"(ZooKeeper and three brokers, or three combined KRaft nodes), runs the workload with kafka_lite's clients "
        f"for {spread(seconds)} s with the nemesis striking {spread(intervals)} s after each "
        "healing, heals, runs the final phase and checks the history. A line adds up its seeds' runs; a class in "
        "bold is outside Jepsen's allowed set. Each run's row (its seed, operations, faults, classes, history) "
        f"is in `{shown(path.resolve())}`, and the table is written from that file alone."
    )


def table_section(results: dict, path: Path = RESULTS) -> str:
    """What the pages hold between the markers of ``path``, the JSON file ``results`` was read from."""
    begin, end = markers(path)
    return f"{begin}\n{preamble(results, path)}\n\n{table(results['rows'])}\n{end}"


def write_pages(results: dict, path: Path = RESULTS) -> list[Path]:
    """The table into each page that holds ``path``'s markers (the matrix's file: every page must);
    the pages written."""
    begin, end = markers(path)
    section = table_section(results, path)
    written = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        if begin not in text or end not in text:
            if path.resolve() == RESULTS:
                raise SystemExit(f"{page} has no jepsen-table markers ({begin!r} ... {end!r})")
            continue
        start, stop = text.index(begin), text.index(end) + len(end)
        page.write_text(text[:start] + section + text[stop:], encoding="utf-8")
        written.append(page)
    return written


def pages_text(written: list[Path], path: Path) -> str:
    if written:
        return f"the table on {', '.join(shown(p) for p in written)}"
    begin, end = markers(path)
    return f"no page holds its markers ({begin} ... {end}), so no page was written"


# -- the command --------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    console = Console()
    earlier = json.loads(args.json.read_text()) if args.json.exists() else None
    if args.page_only:
        written = write_pages(earlier, args.json)
        console.print(f"{shown(args.json)}: {pages_text(written, args.json)}", highlight=False)
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
    written = write_pages(results, args.json)
    failed = [run_name(*key_of(r)) for r in done if r["valid"] is not True]
    runs = f"{len(done)} run{'' if len(done) == 1 else 's'}"
    named = f": {', '.join(failed)}" if failed else ""
    console.print(
        f"{runs}, {len(failed)} not valid or failed{named}; rows in {shown(args.json)}, "
        f"{pages_text(written, args.json)}",
        highlight=False,
    )
    if interrupted:
        return 130
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
