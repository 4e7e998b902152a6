"""``kafka-lite jepsen``: run Jepsen's Kafka workload against a cluster it starts, or re-check a
saved history; print the checker's result map as a table.

No Kafka twin: the command-line face of ``kafka_lite.jepsen``, modelled on Jepsen's own runner
(``lein run test`` runs a test and checks it; ``lein run analyze`` re-checks a stored history), with
the result map printed as a table instead of EDN.

    kafka-lite jepsen run --mode kraft --faults kill,pause --seconds 60 --seed 1 --dir jepsen-1
    kafka-lite jepsen check jepsen-1/history.jsonl --pictures jepsen-1
    kafka-lite jepsen cut jepsen-1/history.jsonl --keys 3 --out key-3.jsonl

Exit code 0 when the history is valid, 1 when it is not (an anomaly outside the allowed set), 2 for
bad usage or a history that cannot be read (its line named).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kafka_lite.cli import CliError, positive_int, whole_number
from kafka_lite.jepsen import FAULTS

MODES = ("zookeeper", "kraft")
CLIENTS = ("kafka_lite", "confluent")


def fault_list(text: str) -> frozenset[str]:
    """An argparse type: a comma-separated list of faults (``none`` or empty for none), each named
    when it is not one of ``FAULTS``."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    if names == ["none"]:
        return frozenset()
    unknown = [name for name in names if name not in FAULTS]
    if unknown:
        raise argparse.ArgumentTypeError(
            f"{', '.join(repr(u) for u in unknown)}: choose from {', '.join(FAULTS)} (comma-separated), or none"
        )
    return frozenset(names)


def key_list(text: str) -> frozenset[int]:
    """An argparse type: a comma-separated list of keys, each a whole number."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    bad = [name for name in names if not name.isdigit()]
    if bad or not names:
        raise argparse.ArgumentTypeError(
            f"{', '.join(repr(b) for b in bad) or 'nothing'}: a key is a partition number (0, 1, ...), comma-separated"
        )
    return frozenset(int(name) for name in names)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "jepsen", help="Jepsen's Kafka workload: run it against a cluster with faults, or re-check a history"
    )
    commands = parser.add_subparsers(dest="jepsen_command", metavar="JEPSEN_COMMAND")
    commands.required = True

    run = commands.add_parser("run", help="start a cluster, run the workload with faults, check the history")
    run.add_argument(
        "--mode", choices=MODES, default="zookeeper", help="the cluster: ZooKeeper or KRaft mode"
    )
    run.add_argument("--faults", type=fault_list, default=frozenset(), metavar="FAULT,...",
                     help=f"the nemesis's faults, from {', '.join(FAULTS)} (default none)")  # fmt: skip
    run.add_argument("--seconds", type=positive_int("seconds"), default=60,
                     help="how long the workload runs before the final phase (default 60)")  # fmt: skip
    run.add_argument("--seed", type=whole_number("seed"), default=0,
                     help="the generator's and the nemesis's random seed (default 0)")  # fmt: skip
    run.add_argument("--nemesis-interval", type=whole_number("seconds"), default=10, metavar="SECONDS",
                     help="the nemesis's quiet time before each fault and after each healing "
                          "(default 10)")  # fmt: skip
    run.add_argument("--txn", action="store_true", help="transactions of up to 4 sends and polls")
    run.add_argument("--kip-890", action="store_true",
                     help="both parts of KIP-890: the brokers verify a transactional write's partition, "
                          "kafka_lite's producers bump their epoch at every transaction's end")  # fmt: skip
    run.add_argument("--client", choices=CLIENTS, default="kafka_lite",
                     help="the clients: kafka_lite's or confluent-kafka's (librdkafka)")  # fmt: skip
    run.add_argument("--dir", type=Path, default=Path(".kafka-lite-jepsen"),
                     help="where the cluster, the history and the pictures go (default .kafka-lite-jepsen)")  # fmt: skip
    run.set_defaults(handler=run_run)

    check = commands.add_parser("check", help="check a saved history and print the result map")
    check.add_argument("history", type=Path, metavar="HISTORY", help="a history file (JSON lines)")
    check.add_argument("--ww-deps", action="store_true",
                       help="infer write-write dependencies from the log's order (G1c becomes allowed)")  # fmt: skip
    check.add_argument("--subscribe", action="store_true",
                       help="the consumers subscribed (poll-skip and nonmonotonic-poll become allowed); "
                            "implied when the history holds a subscribe")  # fmt: skip
    check.add_argument("--txn", action="store_true",
                       help="the run used transactions; implied when the history holds a txn")  # fmt: skip
    check.add_argument("--pictures", type=Path, default=None, metavar="DIR",
                       help="also draw the pictures (one HTML page) into DIR")  # fmt: skip
    check.set_defaults(handler=run_check)

    cut = commands.add_parser("cut", help="write a history as if only some keys had existed, to read or keep")
    cut.add_argument("history", type=Path, metavar="HISTORY", help="a history file (JSON lines)")
    cut.add_argument("--keys", type=key_list, required=True, metavar="KEY,...",
                     help="the keys (partitions) to keep, comma-separated")  # fmt: skip
    cut.add_argument("--out", type=Path, required=True, metavar="FILE", help="where to write the cut history")
    cut.set_defaults(handler=run_cut)


def _read(path: Path) -> list:
    """The history at ``path``; one that cannot be read is the command's error (exit code 2)."""
    from kafka_lite.jepsen.history import HistoryError, read_history

    try:
        return read_history(path)
    except HistoryError as e:
        raise CliError(str(e), exit_code=2) from None


def run_check(args: argparse.Namespace, console: Console) -> int:
    history = _read(args.history)
    from kafka_lite.jepsen import checker

    # As the run that wrote it checks it: a run whose consumers subscribed allows what a rebalance
    # does to their polls (Jepsen's allowed set follows the test's sub-via), and the history says so.
    subscribe = args.subscribe or any(op.f == "subscribe" for op in history)
    txn = args.txn or any(op.f == "txn" for op in history)
    result = checker.check(history, ww_deps=args.ww_deps, subscribe=subscribe, txn=txn)
    print_result(console, result)
    if args.pictures is not None:
        _draw(console, history, result, args.pictures, args.history, args.ww_deps)
    return 0 if result["valid"] else 1


def run_cut(args: argparse.Namespace, console: Console) -> int:
    from kafka_lite.jepsen.history import restricted_to_keys, write_history

    history = _read(args.history)
    cut = restricted_to_keys(history, args.keys)
    try:
        write_history(args.out, cut)
    except OSError as e:
        raise CliError(f"{args.out}: cannot write the history: {e.strerror or e}", exit_code=2) from None
    keys = ", ".join(map(str, sorted(args.keys)))
    console.print(
        f"{args.out}: {len(cut)} of {len(history)} operations, keys {keys}", highlight=False, soft_wrap=True
    )
    return 0


def run_run(args: argparse.Namespace, console: Console) -> int:
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from kafka_lite.jepsen import run as jepsen_run
    from kafka_lite.jepsen.history import read_history

    try:
        config = jepsen_run.RunConfig(mode=args.mode, faults=args.faults, seconds=args.seconds, seed=args.seed,
                                      txn=args.txn, client=args.client, directory=args.dir,
                                      kip_890=args.kip_890, nemesis_interval_s=args.nemesis_interval)  # fmt: skip
    except ValueError as e:
        raise CliError(str(e), exit_code=2) from None
    faults = ", ".join(sorted(args.faults)) or "no faults"
    console.print(f"jepsen: {args.mode} mode, {faults}, {args.seconds} s, seed {args.seed}"
                  f"{', transactions' if args.txn else ''}{', KIP-890' if args.kip_890 else ''}, in {args.dir}",
                  highlight=False, soft_wrap=True)  # fmt: skip
    err_console = Console(stderr=True)
    bar = Progress(TextColumn("[bold]{task.description:<9}"), BarColumn(), TextColumn("{task.percentage:>3.0f}%"),
                   TimeElapsedColumn(), console=err_console, transient=True,
                   disable=not err_console.is_terminal)  # fmt: skip
    with bar:
        task = bar.add_task("cluster", total=1.0)

        def progress(phase: str, fraction: float) -> None:
            bar.update(task, description=phase, completed=fraction)

        outcome = jepsen_run.run(config, progress)
    history = read_history(outcome.history_path)
    result = outcome.result
    if result is None:
        raise CliError(f"the run's history was not checked (no checker): {outcome.history_path}")
    console.print(f"{outcome.ops} operations, {outcome.faults} faults; history {outcome.history_path}",
                  highlight=False, soft_wrap=True)  # fmt: skip
    print_result(console, result)
    _draw(console, history, result, outcome.history_path.parent, outcome.history_path, False)
    return 0 if result["valid"] else 1


def _draw(console: Console, history, result: dict, out_dir: Path, history_path: Path, ww_deps: bool) -> None:
    from kafka_lite.jepsen import checker, pictures

    analysis = checker.analysis(history, ww_deps=ww_deps)
    for path in pictures.write_pictures(
        history, result, analysis, out_dir, title=f"Jepsen check of {history_path}"
    ):
        console.print(f"pictures: {path}", highlight=False, soft_wrap=True)


def result_table(result: dict) -> Table:
    """The result map as a table: each class found, its count, whether the options allow it, and
    the worst of the examples Jepsen's ``condense-error`` keeps (the largest skip, the furthest step
    back, the shortest cycle)."""
    from kafka_lite.jepsen.pictures import describe, worst_example

    bad = set(result.get("bad_error_types") or ())
    table = Table(title="anomalies")
    table.add_column("class")
    table.add_column("count", justify="right")
    table.add_column("allowed?")
    table.add_column("worst example", overflow="fold")
    for error_class, entry in sorted((result.get("errors") or {}).items()):
        errs = entry.get("errs") or []
        worst = worst_example(error_class, errs)
        allowed = "[red]no[/]" if error_class in bad else "yes"
        table.add_row(escape(error_class), str(entry.get("count", len(errs))), allowed,
                      escape(describe(error_class, worst)) if worst else "")  # fmt: skip
    return table


def print_result(console: Console, result: dict) -> None:
    """The verdict, the table of anomalies and the run's figures (ops, worst realtime lag)."""
    if result.get("errors"):
        console.print(result_table(result))
    stats = result.get("stats") or {}
    if stats:
        console.print(", ".join(f"{name} {n}" for name, n in stats.items()), highlight=False)
    lag = result.get("worst_realtime_lag")
    if lag:
        console.print(f"worst realtime lag: {lag['lag_s']:.3f} s (process {lag['process']}, key {lag['key']}, "
                      f"at {lag['time_s']:.3f} s)", highlight=False)  # fmt: skip
    causes = result.get("info_txn_causes") or []
    if causes:
        console.print(
            "outcomes unknown (info) because of: " + ", ".join(str(c) for c in causes), highlight=False
        )
    if result["valid"]:
        console.print("[bold green]valid[/]: no anomaly outside the allowed set")
    else:
        bad = ", ".join(result.get("bad_error_types") or ())
        console.print(f"[bold red]not valid[/]: {escape(bad)}")
