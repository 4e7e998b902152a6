"""``kafka-lite lab list | start N | grade N | solution N | data``: the graded labs, and the Spark labs' data.

No Kafka twin: the course tooling, modelled on MIT 6.1810's ``make grade``. ``start`` writes the
lab's starter files (generated from the reference) and its handout (links re-aimed at the checkout;
the steps and hints apart, in HINTS.md) into a workspace, and records where, in the user's state
directory (``record_workspace``: the lab notebooks and ``list`` read it); ``grade`` runs the lab's
tests with those files in place of the reference and prints the points per stage, then each failing
test's whole message (the tests explain a failure over many lines: bit diagrams, fields side by
side) under the learner's line it came from, with a hint where the message does not say the cause,
and with ``--verbose`` all the learner's frames and what the tests printed (less the clients'
connection warnings). Exit code 0 only when every selected test passes. A grade of a workspace,
whole or of one stage, is remembered in the workspace's ``.scores.json``, which ``list`` shows (for
each lab, from the workspace it was last started or graded in, unless ``--dir`` names one) and
``solution`` reads: it shows the reference's regions of a lab (or stage) once its last grade had
full marks, and otherwise says how to see them anyway. ``data`` prepares the Spark labs' topic data
(``kafka_lite.spark.lab_data``) ahead of time, and prints where it is.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import shlex
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console
from rich.markup import escape as _escape

from kafka_lite.cli import CliError
from kafka_lite.grading import feedback
from kafka_lite.grading.grader import GradeReport, TestResult, grade
from kafka_lite.grading.labs import REPO_ROOT, Lab, LabError, discover, find
from kafka_lite.grading.starter import (
    HINTS_FILE,
    RegionError,
    solution_regions,
    workspace_handout,
    write_starter,
)
from kafka_lite.spark.labs import WORKSPACES_FILE, recorded_workspaces, state_dir

DEFAULT_WORKSPACE = Path("kafka-lite-labs")
SCORES_FILE = ".scores.json"


def _command() -> str:
    """How the learner ran us (``.venv/bin/kafka-lite`` or ``kafka-lite``), for the hints we print."""
    ran = sys.argv[0] if sys.argv else ""
    return ran if Path(ran).name == "kafka-lite" else "kafka-lite"


def dir_option(directory: Path) -> str:
    """`` --dir D`` when the workspace is not the default one, so that a printed hint runs as shown."""
    return "" if directory == DEFAULT_WORKSPACE else f" --dir {shlex.quote(str(directory))}"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("lab", help="list, start and grade the labs")
    sub = parser.add_subparsers(dest="lab_command", metavar="ACTION")
    sub.required = True
    list_ = sub.add_parser("list", help="the labs: time, what each builds on, your last score")
    list_.add_argument(
        "--dir",
        type=Path,
        default=None,
        help="workspace (default: each lab's, where `lab start` last wrote it, else kafka-lite-labs)",
    )
    list_.set_defaults(handler=run_list)
    start = sub.add_parser("start", help="write lab N's starter files into a workspace")
    start.add_argument("number", type=int, help="the lab's number (kafka-lite lab list)")
    start.add_argument(
        "--dir", type=Path, default=DEFAULT_WORKSPACE, help="workspace (default kafka-lite-labs)"
    )
    start.add_argument("--force", action="store_true", help="overwrite an existing workspace for this lab")
    start.set_defaults(handler=run_start)
    grade_ = sub.add_parser("grade", help="run lab N's tests against your files")
    grade_.add_argument("number", type=int, help="the lab's number (kafka-lite lab list)")
    grade_.add_argument(
        "--dir", type=Path, default=DEFAULT_WORKSPACE, help="workspace (default kafka-lite-labs)"
    )
    grade_.add_argument("--reference", action="store_true", help="grade the reference implementation")
    grade_.add_argument("--stage", type=int, metavar="S", help="run only stage S's tests")
    grade_.add_argument(
        "-k", dest="keyword", metavar="EXPR", help="run only the tests matching EXPR (pytest's -k)"
    )
    grade_.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="also show passing tests' output, and the frames of your code in each failure",
    )
    grade_.add_argument("--json", type=Path, help="also write the results as JSON")
    grade_.set_defaults(handler=run_grade)
    solution = sub.add_parser(
        "solution", help="show lab N's reference code, once your last grade of it had full marks"
    )
    solution.add_argument("number", type=int, help="the lab's number (kafka-lite lab list)")
    solution.add_argument("--stage", type=int, metavar="S", help="only stage S's regions")
    solution.add_argument(
        "--dir", type=Path, default=DEFAULT_WORKSPACE, help="workspace (default kafka-lite-labs)"
    )
    solution.add_argument("--anyway", action="store_true", help="show it without full marks")
    solution.set_defaults(handler=run_solution)
    data = sub.add_parser(
        "data", help="prepare the Spark labs' topic data (a real cluster's log dirs) and say where it is"
    )
    data.add_argument("--force", action="store_true", help="prepare it afresh even if it is there")
    data.set_defaults(handler=run_data)


# -- list ---------------------------------------------------------------------------------------------------


def load_scores(workspace_root: Path) -> dict:
    path = workspace_root / SCORES_FILE
    if not path.exists():
        return {}
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise CliError(f"{path} is unreadable ({e}); delete it and grade again") from None


def save_score(workspace_root: Path, report: GradeReport, stage: int | None = None) -> None:
    """Remember a grade of the whole lab, or (``stage``) of one stage: its points replace that
    stage's, and the whole lab's last total stays as it was. Two grades at once (of two labs of one
    workspace) both count: see ``record_workspace``."""
    workspace_root.mkdir(parents=True, exist_ok=True)
    with _locked(workspace_root / SCORES_FILE):
        _save_score(workspace_root, report, stage)


def forget_score(workspace_root: Path, lab_number: int) -> None:
    """Drop lab ``lab_number``'s remembered grade (its workspace was started afresh)."""
    if not (workspace_root / SCORES_FILE).exists():
        return
    with _locked(workspace_root / SCORES_FILE):
        scores = load_scores(workspace_root)
        if scores.pop(str(lab_number), None) is not None:
            _replace_json(workspace_root / SCORES_FILE, scores)


def _save_score(workspace_root: Path, report: GradeReport, stage: int | None) -> None:
    scores = load_scores(workspace_root)
    now = datetime.now(UTC).isoformat(timespec="seconds")
    stages = {str(s.number): [s.earned, s.total] for s in report.stage_scores()}
    if stage is None:
        scores[str(report.lab.number)] = {
            "earned": report.earned,
            "total": report.total,
            "stages": stages,
            "graded_at": now,
        }
    else:
        entry = scores.setdefault(str(report.lab.number), {})
        entry.setdefault("stages", {}).update(stages)
        entry["graded_at"] = now
    _replace_json(workspace_root / SCORES_FILE, scores)


def run_list(args: argparse.Namespace, console: Console) -> int:
    try:
        labs = discover()
    except LabError as e:
        raise CliError(str(e)) from None
    recorded = recorded_workspaces() if args.dir is None else {}
    scores_in: dict[Path, dict] = {}  # a workspace directory -> its scores, read once
    for lab in labs:
        workspace = _workspace_of(lab, args.dir, recorded)
        if workspace.parent not in scores_in:
            scores_in[workspace.parent] = load_scores(workspace.parent)
        score = scores_in[workspace.parent].get(str(lab.number))
        if score is not None and "total" in score:
            last = f"your last score {score['earned']}/{score['total']} ({score['graded_at'][:10]})"
        elif score is not None:
            last = f"graded by stage ({score['graded_at'][:10]})"
        elif workspace.exists():
            last = "started, not graded yet"
        else:
            last = "not started"
        print_ = _Printer(console)
        print_.line(f"[bold]Lab {lab.number}: {_escape(lab.title)}[/]  ({lab.time}; {last})")
        if workspace.exists() and workspace.parent.resolve() != (args.dir or DEFAULT_WORKSPACE).resolve():
            print_.line(f"  workspace: {_escape(str(workspace))}")
        if lab.builds_on:
            print_.line(f"  builds on: {_escape('; '.join(lab.builds_on))}")
        for stage in lab.stages:
            points = (score or {}).get("stages", {}).get(str(stage.number))
            got = f"  {points[0]}/{points[1]}" if points else ""
            print_.line(f"  stage {stage.number}: {_escape(stage.name)}{got}")
        print_.line(f"  handout: {lab.handout.relative_to(REPO_ROOT)}")
    console.print(
        f"Start a lab with: {_command()} lab start N{dir_option(args.dir or DEFAULT_WORKSPACE)}",
        highlight=False,
        soft_wrap=True,
    )
    return 0


def _workspace_of(lab: Lab, directory: Path | None, recorded: dict[str, str]) -> Path:
    """Lab ``lab``'s workspace: in ``directory`` when ``--dir`` names one; else where ``lab start`` or
    ``lab grade`` last recorded it (a lab started with ``--dir`` elsewhere has its scores there), if
    it is still there; else in the default workspace."""
    if directory is not None:
        return directory / lab.slug
    if lab.slug in recorded and Path(recorded[lab.slug]).is_dir():
        return Path(recorded[lab.slug])
    return DEFAULT_WORKSPACE / lab.slug


# -- the records: where each lab's workspace is, and its scores -----------------------------------------------


def record_workspace(lab_slug: str, workspace: Path) -> Path:
    """Remember ``workspace`` as the workspace of ``lab_slug`` in the user's state directory, where
    the lab notebooks and ``lab list`` look for it (``kafka_lite.spark.labs.recorded_workspaces``);
    returns the file it is recorded in.

    The file is one for every lab, so it is read, changed and written back under a lock: two
    ``lab start``s at once (two terminals, a script) would otherwise both read the old record, and
    the second write would drop the first's lab."""
    path = state_dir() / WORKSPACES_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    with _locked(path):
        recorded = recorded_workspaces()
        recorded[lab_slug] = str(Path(workspace).resolve())
        _replace_json(path, recorded)
    return path


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock for a read-modify-write of ``path``: ``flock`` on ``<path>.lock`` beside
    it (not on ``path`` itself, which ``_replace_json`` replaces by another file). The lock belongs to
    the open file, so it is released when the file closes, also when the process dies."""
    with open(path.with_name(path.name + ".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _replace_json(path: Path, data: dict) -> None:
    """Write ``data`` to ``path`` whole or not at all: a temporary file in the same directory, then
    ``os.replace`` (atomic), so that a reader sees the old file or the new one, never half of one."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(json.dumps(data, indent=2, sort_keys=True) + "\n")
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


# -- start --------------------------------------------------------------------------------------------------


def run_start(args: argparse.Namespace, console: Console) -> int:
    lab = _find(args.number)
    workspace = args.dir / lab.slug
    if workspace.exists() and not args.force:
        raise CliError(f"{workspace} already exists (your work?); pass --force to overwrite it", exit_code=2)
    try:
        written = write_starter(lab, REPO_ROOT, workspace)
    except RegionError as e:
        raise CliError(f"cannot make the starter: {e}") from None
    forget_score(args.dir, lab.number)  # the work it graded is gone: neither list nor solution may use it
    readme, hints = workspace_handout(lab.handout, workspace)
    (workspace / "README.md").write_text(readme, encoding="utf-8")
    if hints:
        (workspace / HINTS_FILE).write_text(hints, encoding="utf-8")
    recorded_in = record_workspace(lab.slug, workspace)
    out = _Printer(console)
    out.line(f"[bold]Lab {lab.number}: {_escape(lab.title)}[/] ({lab.time})")
    for path in written:
        out.line(f"  wrote {_escape(str(path))}")
    if lab.stages:
        first = lab.stages[0]
        out.line(f"Start with stage 1, {_escape(first.name)}: {', '.join(first.regions)}.")
    out.line(
        f"Read {_escape(str(workspace / 'README.md'))} (the steps and hints, when stuck: {HINTS_FILE} beside "
        "it), edit the files above, then:"
    )
    out.line(f"  {_command()} lab grade {lab.number}{_escape(dir_option(args.dir))}")
    out.line(
        f"Edit and read these copies, not the checkout's kafka_lite/: it holds the reference, the answer. "
        f"(Recorded in {_escape(str(recorded_in))}, where the lab notebooks look for your files.)"
    )
    return 0


# -- solution -----------------------------------------------------------------------------------------------


def run_solution(args: argparse.Namespace, console: Console) -> int:
    """The reference's solution regions of lab N (or of its stage S), after full marks or ``--anyway``."""
    lab = _find(args.number)
    stage = None
    if args.stage is not None:
        try:
            stage = lab.stage(args.stage)
        except LabError as e:
            raise CliError(str(e), exit_code=2) from None
    what = f"lab {lab.number}" + (f", stage {stage.number}" if stage else "")
    if not args.anyway and not _had_full_marks(load_scores(args.dir), lab, stage):
        again = f"{_command()} lab solution {lab.number}" + (f" --stage {stage.number}" if stage else "")
        raise CliError(
            f"{what} has not had full marks in your last grade ({_last_grade(args.dir, lab, stage)}), so the "
            f"reference stays hidden: it is the answer. Grade it with `{_command()} lab grade {lab.number}"
            f"{' --stage ' + str(stage.number) if stage else ''}{dir_option(args.dir)}`. To see it anyway: "
            f"`{again}{dir_option(args.dir)} --anyway`, or read the code between `# BEGIN SOLUTION` and "
            f"`# END SOLUTION` in the checkout's {', '.join(lab.files)}.",
            exit_code=1,
        )
    out = _Printer(console)
    out.line(f"[bold]The reference of {_escape(what)}: {_escape(lab.title)}[/]")
    wanted = set(stage.regions) if stage else None
    for rel in lab.files:
        try:
            regions = solution_regions((REPO_ROOT / rel).read_text(encoding="utf-8"), rel)
        except RegionError as e:
            raise CliError(str(e)) from None
        for qualname, first, lines in regions:
            if wanted is not None and qualname not in wanted:
                continue
            out.line("")
            out.line(f"[bold]{_escape(qualname)}[/]  ({_escape(rel)}:{first})")
            out.raw(textwrap.dedent("\n".join(lines)))  # as the handout's code blocks, from column 0
    return 0


def _had_full_marks(scores: dict, lab: Lab, stage) -> bool:
    score = scores.get(str(lab.number)) or {}
    whole = "total" in score and score["total"] > 0 and score["earned"] == score["total"]
    if stage is None or whole:
        return whole
    points = score.get("stages", {}).get(str(stage.number))
    return bool(points) and points[1] > 0 and points[0] == points[1]


def _last_grade(directory: Path, lab: Lab, stage) -> str:
    score = load_scores(directory).get(str(lab.number)) or {}
    points = score.get("stages", {}).get(str(stage.number)) if stage else None
    if points:
        return f"{points[0]}/{points[1]}, {score['graded_at'][:10]}"
    if "total" in score:
        return f"{score['earned']}/{score['total']}, {score['graded_at'][:10]}"
    return f"no grade yet in {directory / SCORES_FILE}"


# -- data ---------------------------------------------------------------------------------------------------


def run_data(args: argparse.Namespace, console: Console) -> int:
    """Prepare the Spark labs' data once (a scripted day on a real cluster, then its log dirs kept),
    or find it prepared, and print what a notebook or a job passes as ``kafka_lite.log.dirs``."""
    from kafka_lite.spark import lab_data

    out = _Printer(console)
    try:
        directory = lab_data.ensure(force=args.force, log=lambda message: out.line(_escape(message)))
    except lab_data.LabDataError as e:
        raise CliError(str(e)) from None
    manifest = lab_data.manifest()
    out.line(f"[bold]The Spark labs' data[/] (version {manifest['version']}) in {_escape(str(directory))}")
    for topic, partitions in manifest["topics"].items():
        out.line(f"  {_escape(topic)}: {partitions} partitions")
    out.line("Read it with the kafka_lite source's offline back-end:")
    out.line(f'  .option("kafka_lite.log.dirs", "{_escape(lab_data.log_dirs_option())}")')
    return 0


# -- grade --------------------------------------------------------------------------------------------------


def run_grade(args: argparse.Namespace, console: Console) -> int:
    lab = _find(args.number)
    workspace = None if args.reference else args.dir / lab.slug
    if workspace is not None and not workspace.exists():
        elsewhere = _workspace_of(lab, None, recorded_workspaces())
        if elsewhere.is_dir() and elsewhere.parent.resolve() != args.dir.resolve():
            # started with another --dir: say which command grades it
            raise CliError(
                f"no workspace {workspace}; lab {lab.number} was started in {elsewhere}: run "
                f"`{_command()} lab grade {lab.number}{dir_option(elsewhere.parent)}`",
                exit_code=2,
            )
        raise CliError(
            f"no workspace {workspace}: run `{_command()} lab start {lab.number}{dir_option(args.dir)}` first",
            exit_code=2,
        )
    try:
        report = grade(
            lab, workspace, stages=() if args.stage is None else [args.stage], keyword=args.keyword,
            grade_command=f"{_command()} lab grade {lab.number}{dir_option(args.dir)}",
        )  # fmt: skip
    except LabError as e:
        raise CliError(str(e), exit_code=2) from None
    if args.json:
        args.json.write_text(json.dumps(_as_json(report), indent=2), encoding="utf-8")
    if report.pytest_exit == 5 and args.keyword:
        raise CliError(f"no test of lab {lab.number} matches -k {args.keyword!r}", exit_code=2)
    if report.pytest_exit == 4 and args.keyword:  # pytest's usage error: the expression does not parse
        why = [line for line in report.output.splitlines() if "-k" in line]
        raise CliError(why[-1].removeprefix("ERROR: ") if why else f"bad -k {args.keyword!r}", exit_code=2)
    if workspace is not None:
        record_workspace(lab.slug, workspace)
    if report.collection_failed:
        console.print(report.output[-3000:], markup=False, highlight=False, soft_wrap=True)
        if report.hint:
            _Printer(console).line(f"[bold]{_escape(report.hint)}[/]")
        raise CliError(
            f"lab {lab.number}'s tests could not run (pytest exit {report.pytest_exit})", exit_code=2
        )
    print_report(
        report, console, "reference" if workspace is None else str(workspace), args.verbose, args.dir
    )
    if workspace is not None and not args.keyword:
        save_score(args.dir, report, args.stage)
    return 0 if report.full_marks else 1


def print_report(
    report: GradeReport,
    console: Console,
    source: str,
    verbose: bool = False,
    directory: Path = DEFAULT_WORKSPACE,
) -> None:
    """Points per stage and per test, then every failure's whole message, where in the learner's code
    it happened and its hint (and, verbose, all the learner's frames of each failure and every test's
    output, the clients' connection warnings counted, not shown). Lines are never cut or re-wrapped: a
    bit diagram must keep its columns."""
    out = _Printer(console)
    lab = report.lab
    selection = f", {report.selection}" if report.selection else ""
    out.line(f"[bold]Lab {lab.number}: {_escape(lab.title)}[/] ({_escape(source + selection)})")
    by_stage: dict[int | None, list[TestResult]] = {}
    for r in report.results:
        by_stage.setdefault(r.stage, []).append(r)
    names = {s.number: s.name for s in lab.stages}
    for number, results in sorted(by_stage.items(), key=lambda kv: (kv[0] is None, kv[0] or 0)):
        earned = sum(r.points for r in results if r.passed)
        total = sum(r.points for r in results)
        title = f"stage {number}: {names.get(number, '?')}" if number is not None else "no stage"
        mark = " [green]done[/]" if earned == total else ""
        out.line("")
        out.line(f"[bold]{_escape(title)}[/]  {earned}/{total}{mark}")
        for r in results:
            verdict = "[green]PASS[/]" if r.passed else "[red]FAIL[/]"
            out.line(f"  {verdict} {r.points if r.passed else 0:>2}/{r.points:<2} {_escape(r.test)}")
    out.line("")
    out.line(f"[bold]total {report.earned}/{report.total}[/]")
    failed = [r for r in report.results if not r.passed]
    shown: dict[str, str] = {}  # a message already printed -> the test it was printed for
    for r in report.results:
        if r.passed and not (verbose and r.output):
            continue
        out.line("")
        head = "[red]FAIL[/]" if not r.passed else "[green]PASS[/]"
        out.line(f"{head} [bold]{_escape(r.test)}[/] (stage {r.stage}, {r.points} points)")
        if not r.passed:
            # Where in the learner's code it happened, always: the innermost of their frames, or with
            # --verbose all of them.
            where = (
                feedback.format_frames(r.frames, r.hidden_frames) if verbose else feedback.innermost(r.frames)
            )
            text = "\n".join([*where, r.error])
            if text in shown:
                out.raw(f"the same failure as {shown[text]}")
            else:
                shown[text] = r.test
                out.raw(text)
                if r.hint:
                    out.raw(r.hint)
        if verbose and r.output:
            out.raw(feedback.quiet_clients(r.output))
    if failed and not report.selection and lab.stages:
        scores = {s.number: s for s in report.stage_scores()}
        todo = [
            s for s in lab.stages if s.number in scores and scores[s.number].earned < scores[s.number].total
        ]
        if todo:
            nxt = todo[0]
            out.line("")
            out.line(f"[bold]Next: stage {nxt.number}, {_escape(nxt.name)}[/] ({', '.join(nxt.regions)}).")
            out.line(f"  Passing looks like: {_escape(nxt.passing)}")
            out.line(
                f"  Run just its tests: {_command()} lab grade {lab.number} --stage {nxt.number}"
                f"{_escape(dir_option(directory))}"
            )


class _Printer:
    def __init__(self, console: Console) -> None:
        self.console = console

    def line(self, text: str) -> None:
        """One line of rich markup (escape what comes from outside with ``_escape``)."""
        self.console.print(text, highlight=False, soft_wrap=True)

    def raw(self, text: str) -> None:
        """Text as it is (no markup), indented, each line whole."""
        for line in text.rstrip().splitlines():
            self.console.print("    " + line, markup=False, highlight=False, soft_wrap=True)


def _find(number: int) -> Lab:
    try:
        return find(number)
    except LabError as e:
        raise CliError(str(e), exit_code=2) from None


def _as_json(report: GradeReport) -> dict:
    return {
        "lab": report.lab.number,
        "selection": report.selection,
        "earned": report.earned,
        "total": report.total,
        "stages": [s.__dict__ for s in report.stage_scores()],
        "results": [r.__dict__ for r in report.results],
    }
