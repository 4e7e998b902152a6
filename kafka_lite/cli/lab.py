"""``kafka-lite lab list | start N | grade N``: the graded labs.

No Kafka twin: the course tooling, modelled on MIT 6.1810's ``make grade``. ``start`` writes the
lab's starter files (generated from the reference) into a workspace; ``grade`` runs the lab's tests
with those files in place of the reference and prints a score table. Exit code 0 only on full marks.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.console import Console
from rich.table import Table

from kafka_lite.cli import CliError
from kafka_lite.grading.grader import GradeReport, grade
from kafka_lite.grading.labs import REPO_ROOT, LabError, discover, find
from kafka_lite.grading.starter import RegionError, write_starter

DEFAULT_WORKSPACE = Path("kafka-lite-labs")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("lab", help="list, start and grade the labs")
    sub = parser.add_subparsers(dest="lab_command", metavar="ACTION")
    sub.required = True
    sub.add_parser("list", help="the labs and their files").set_defaults(handler=run_list)
    start = sub.add_parser("start", help="write lab N's starter files into a workspace")
    start.add_argument("number", type=int)
    start.add_argument(
        "--dir", type=Path, default=DEFAULT_WORKSPACE, help="workspace (default kafka-lite-labs)"
    )
    start.add_argument("--force", action="store_true", help="overwrite an existing workspace for this lab")
    start.set_defaults(handler=run_start)
    grade_ = sub.add_parser("grade", help="run lab N's tests against your files")
    grade_.add_argument("number", type=int)
    grade_.add_argument(
        "--dir", type=Path, default=DEFAULT_WORKSPACE, help="workspace (default kafka-lite-labs)"
    )
    grade_.add_argument("--reference", action="store_true", help="grade the reference implementation")
    grade_.add_argument("--json", type=Path, help="also write the results as JSON")
    grade_.set_defaults(handler=run_grade)


def run_list(args: argparse.Namespace, console: Console) -> int:
    try:
        labs = discover()
    except LabError as e:
        raise CliError(str(e)) from None
    table = Table("lab", "title", "you write", "handout")
    for lab in labs:
        table.add_row(
            str(lab.number), lab.title, "\n".join(lab.files), str(lab.handout.relative_to(REPO_ROOT))
        )
    console.print(table)
    return 0


def run_start(args: argparse.Namespace, console: Console) -> int:
    lab = _find(args.number)
    workspace = args.dir / lab.slug
    if workspace.exists() and not args.force:
        raise CliError(f"{workspace} already exists (your work?); pass --force to overwrite it", exit_code=2)
    try:
        written = write_starter(lab, REPO_ROOT, workspace)
    except RegionError as e:
        raise CliError(f"cannot make the starter: {e}") from None
    (workspace / "README.md").write_text(lab.handout.read_text(encoding="utf-8"), encoding="utf-8")
    console.print(f"[bold]Lab {lab.number}: {lab.title}[/]")
    for path in written:
        console.print(f"  wrote {path}")
    console.print(
        f"Read {workspace / 'README.md'}, edit the files above, then: kafka-lite lab grade {lab.number}"
    )
    return 0


def run_grade(args: argparse.Namespace, console: Console) -> int:
    lab = _find(args.number)
    workspace = None if args.reference else args.dir / lab.slug
    if workspace is not None and not workspace.exists():
        raise CliError(
            f"no workspace {workspace}: run `kafka-lite lab start {lab.number}` first", exit_code=2
        )
    try:
        report = grade(lab, workspace)
    except LabError as e:
        raise CliError(str(e), exit_code=2) from None
    if args.json:
        args.json.write_text(json.dumps(_as_json(report), indent=2), encoding="utf-8")
    print_report(report, console, "reference" if workspace is None else str(workspace))
    if report.collection_failed:
        console.print(report.output[-3000:], markup=False, highlight=False)
        raise CliError(
            f"lab {lab.number}'s tests could not run (pytest exit {report.pytest_exit})", exit_code=2
        )
    return 0 if report.full_marks else 1


def print_report(report: GradeReport, console: Console, source: str) -> None:
    table = Table(title=f"Lab {report.lab.number}: {report.lab.title} ({source})")
    table.add_column("test")
    table.add_column("points", justify="right")
    table.add_column("result")
    for r in report.results:
        result = "[green]PASS[/]" if r.passed else f"[red]FAIL[/] {r.error}"
        table.add_row(r.test, f"{r.points if r.passed else 0}/{r.points}", result)
    table.add_section()
    table.add_row("[bold]total", f"[bold]{report.earned}/{report.total}", "")
    console.print(table)


def _find(number: int):
    try:
        return find(number)
    except LabError as e:
        raise CliError(str(e), exit_code=2) from None


def _as_json(report: GradeReport) -> dict:
    return {
        "lab": report.lab.number,
        "earned": report.earned,
        "total": report.total,
        "results": [r.__dict__ for r in report.results],
    }
