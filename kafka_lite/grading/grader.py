"""Grade a lab: run its tests with the student's files in place of the reference modules.

No Kafka twin: modelled on MIT 6.1810's gradelib (points per test, a score table, exit code),
with points summed per stage of the lab.

How the student's files replace the reference without touching the checkout: the whole
``kafka_lite`` package is copied to a temporary *overlay*, the lab's files are overwritten there
with the student's versions, and pytest runs in a subprocess whose ``PYTHONPATH`` puts the
overlay first, so ``import kafka_lite`` finds it before the installed (editable) package. The
lab's tests and everything else come from the reference. What the run wrote goes through
``feedback.py`` before anyone reads it: the paths become the learner's, and the failures that do not
explain themselves (a RecursionError, a timeout, a file that does not import) get a hint.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path

from kafka_lite.grading import feedback, region_entries, starter
from kafka_lite.grading.labs import PACKAGE_ROOT, REPO_ROOT, Lab, LabError

# The command that grades the workspace being graded, for the tests' "run it again" hints.
GRADE_COMMAND_ENV = "KAFKA_LITE_LAB_GRADE_COMMAND"

TEST_TIMEOUT_S = 60  # per test: a student's infinite loop must not hang grading


@dataclass(frozen=True)
class TestResult:
    test: str
    stage: int | None
    points: int
    passed: bool
    error_type: str | None
    error: str  # the failure's whole message: the tests explain themselves over many lines
    traceback: str = ""  # pytest's short traceback of a failure
    output: str = ""  # what the test printed or logged
    frames: tuple[dict, ...] = ()  # the failure's frames in the learner's files, outermost first
    hidden_frames: int = 0  # the failure's other frames (the lab's tests, kafka_lite, pytest)
    hint: str = ""  # one line on the likely cause, for failures whose message does not say
    regions: tuple[str, ...] = ()  # the solution regions the test reached (a marked reference only)


@dataclass(frozen=True)
class StageScore:
    number: int
    name: str
    earned: int
    total: int


@dataclass(frozen=True)
class GradeReport:
    lab: Lab
    results: tuple[TestResult, ...]
    pytest_exit: int
    output: str  # pytest's own output, for when something went wrong before any test ran
    selection: str = ""  # "" for the whole lab, else what was selected ("stage 2", "-k varint")
    hint: str = ""  # when no test could run: the likely cause (a file of the learner's that does not import)
    # The solution regions reached outside any test's call (a marked reference only): by a shared
    # fixture, say, so they may count for every test.
    reached_outside_tests: tuple[str, ...] = ()

    @property
    def earned(self) -> int:
        return sum(r.points for r in self.results if r.passed)

    @property
    def total(self) -> int:
        return sum(r.points for r in self.results)

    @property
    def full_marks(self) -> bool:
        return bool(self.results) and self.earned == self.total

    def stage_scores(self) -> list[StageScore]:
        """Points per stage, in the lab's stage order (stages with no test in this run left out)."""
        scores = []
        for stage in self.lab.stages:
            mine = [r for r in self.results if r.stage == stage.number]
            if mine:
                earned = sum(r.points for r in mine if r.passed)
                scores.append(StageScore(stage.number, stage.name, earned, sum(r.points for r in mine)))
        return scores

    @property
    def collection_failed(self) -> bool:
        """pytest could not even run the tests (an import error in a lab test file, no tests)."""
        return not self.results or self.pytest_exit not in (0, 1)


def build_overlay(lab: Lab, workspace: Path, overlay: Path, package_root: Path = PACKAGE_ROOT) -> Path:
    """Copy the package to ``overlay/<package>`` with the lab's files taken from ``workspace``.

    Put ``overlay`` first on ``PYTHONPATH`` (and start Python outside the checkout) and
    ``import kafka_lite`` loads the student's files, the reference for everything else.
    """
    missing = [workspace / rel for rel in lab.files if not (workspace / rel).is_file()]
    if missing:
        raise LabError(f"{missing[0]} is missing: run `kafka-lite lab start {lab.number}` to create it")
    if overlay.exists():
        shutil.rmtree(overlay)
    copy_package(package_root, overlay)
    for rel in lab.files:
        replace_file(overlay / rel, (workspace / rel).read_bytes())
    return overlay


def copy_package(package_root: Path, overlay: Path) -> None:
    """The package copied to ``overlay/<package>`` with its compiled modules (``__pycache__``).

    A grading's Python writes no bytecode into the overlay it throws away, so without the checkout's
    it would compile every module it imports, every run: a second or more before its first test.
    A compiled module is read only while its source is unchanged (Python checks the source's time
    and size, which the copy keeps); the files a grading puts in place of the reference's lose
    theirs (``replace_file``).

    Each file is a hard link to the checkout's where the two share a file system (a real copy
    elsewhere): the package's thousand-odd files, read by every grading, are then not written again
    for each one. A linked file is the checkout's own, so nothing may write into it: a grading
    replaces a file only through ``replace_file``, which unlinks it first."""
    shutil.copytree(package_root, overlay / package_root.name, copy_function=_link_or_copy)


def _link_or_copy(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:  # another file system, or one without hard links
        shutil.copy2(source, target)


def replace_file(path: Path, content: bytes) -> None:
    """Put ``content`` at ``path`` in an overlay as a file of its own (never writing through a link
    into the checkout), and remove its compiled copies, so Python compiles the file now there."""
    path.unlink()
    path.write_bytes(content)
    drop_compiled(path)


def drop_compiled(source: Path) -> None:
    """Remove the compiled copies of ``source`` beside it, so Python compiles the file now there."""
    for compiled in (source.parent / "__pycache__").glob(f"{source.stem}.*.pyc"):
        compiled.unlink()


def run_pytest(cmd: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    """Run a grading's pytest command line in a Python process of its own; its output captured."""
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)


def grade(
    lab: Lab,
    workspace: Path | None,
    repo_root: Path = REPO_ROOT,
    package_root: Path = PACKAGE_ROOT,
    stages: Collection[int] = (),
    keyword: str | None = None,
    mark_entries: bool = False,
    run: Callable[[list[str], Path, dict[str, str]], subprocess.CompletedProcess] = run_pytest,
    grade_command: str | None = None,
) -> GradeReport:
    """Run lab ``lab``'s tests against the student's files in ``workspace`` (None: the reference);
    only the tests of the stages in ``stages`` (one for ``lab grade --stage``; the self-check grades a
    stage with those it needs), and only those matching pytest's ``-k keyword``, when given.

    ``mark_entries`` (the reference only): grade the reference with each solution region marked
    (``starter.mark_entries``), so each result names the regions its test reached.

    ``run`` runs the pytest command line (``run_pytest``: a new Python process; the lab self-check,
    which grades a hundred times a run, forks a warm one instead). ``grade_command`` is how the
    learner grades this workspace (``lab grade N --dir D`` for one started elsewhere): a test that
    prints a command to run again says that one (``GRADE_COMMAND_ENV``)."""
    if mark_entries and workspace is not None:
        raise ValueError("only the reference is graded with its regions marked")
    chosen = sorted(set(stages))
    for number in chosen:
        lab.stage(number)  # a LabError naming the lab's stages if there is no such stage
    workspace = workspace.resolve() if workspace is not None else None  # paths shown are absolute
    with tempfile.TemporaryDirectory(prefix=f"kafka-lite-grade-{lab.number}-") as tmp:
        tmp_path = Path(tmp)
        overlay = tmp_path / "overlay"
        if workspace is not None:
            build_overlay(lab, workspace, overlay, package_root)
        else:
            copy_package(package_root, overlay)
            for rel in lab.files if mark_entries else ():
                marked = starter.mark_entries((overlay / rel).read_text(encoding="utf-8"), rel)
                replace_file(overlay / rel, marked.encode("utf-8"))
        report_path = tmp_path / "report.json"
        # The reporting plugin is copied beside the overlay under its own name, so it loads even when
        # the overlay's package is not kafka_lite's (the machinery's own tests grade a toy package).
        plugin_dir = tmp_path / "plugin"
        plugin_dir.mkdir()
        shutil.copyfile(
            Path(__file__).with_name("pytest_plugin.py"), plugin_dir / "kafka_lite_grade_plugin.py"
        )
        path = [str(overlay), str(plugin_dir), os.environ.get("PYTHONPATH", "")]
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(p for p in path if p),
            "KAFKA_LITE_LAB": str(lab.number),
            GRADE_COMMAND_ENV: grade_command or f".venv/bin/kafka-lite lab grade {lab.number}",
            "KAFKA_LITE_GRADE_REPORT": str(report_path),
            "PYTHONDONTWRITEBYTECODE": "1",
            "KAFKA_LITE_STAGE": ",".join(str(n) for n in chosen),
            # where the processes a marked reference's tests start note the regions they enter
            region_entries.ENTRIES_ENV: str(tmp_path / "entries") if mark_entries else "",
            # The learner's tests run the reference record codec (common/record/codec.py), so the
            # records a lab's code builds or reads go through the Python code the lab is about.
            "KAFKA_LITE_RECORDS": "python",
            # Only the plugins a lab's tests use, named below: loading every installed one (xdist,
            # nbmake, anyio...) would cost each grading run about a second before any test runs.
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        }
        cmd = [
            sys.executable, "-m", "pytest", str(lab.directory), "-q", "--tb=short", "-p", "no:cacheprovider",
            "-p", "kafka_lite_grade_plugin", "-p", "pytest_timeout", "-p", "_hypothesis_pytestplugin",
            "-o", "addopts=",
            f"--timeout={TEST_TIMEOUT_S}", "--rootdir", str(repo_root), "-c", str(repo_root / "pyproject.toml"),
            "--import-mode=importlib",
        ]  # fmt: skip
        if keyword:
            cmd += ["-k", keyword]
        # Run from the temp dir with importlib imports: ``python -m`` would put the working directory,
        # and pytest's default import mode each conftest's directory, on sys.path *ahead* of the
        # overlay, and the reference package in the checkout would shadow the student's files.
        proc = run(cmd, tmp_path, env)
        learners = feedback.path_mapper(tmp_path, overlay, package_root, workspace, lab.files)
        mine = [(workspace or package_root.parent) / rel for rel in lab.files]
        results: tuple[TestResult, ...] = ()
        outside: tuple[str, ...] = ()
        if report_path.exists():
            data = json.loads(report_path.read_text(encoding="utf-8"))
            results = tuple(_as_learners(r, learners, mine) for r in data["results"])
            outside = tuple(data.get("reached_outside_tests", ()))
        selection = " ".join(
            part
            for part in (
                f"stage{'s' if len(chosen) > 1 else ''} {', '.join(map(str, chosen))}" if chosen else "",
                f"-k {keyword}" if keyword else "",
            )
            if part
        )
        output = learners(proc.stdout + proc.stderr)
        hint = feedback.collection_hint(output, mine) if not results else None
        return GradeReport(lab, results, proc.returncode, output, selection, hint or "", outside)


def _as_learners(raw: dict, learners, mine: list[Path]) -> TestResult:
    """A result of the run as the learner reads it: their paths, their frames, and a hint."""
    frames = [{**f, "path": learners(f["path"])} for f in raw.pop("frames", [])]
    kept, hidden = feedback.learners_frames(frames, mine)
    text = {key: learners(raw[key]) for key in ("error", "traceback", "output")}
    hint = "" if raw["passed"] else feedback.hint(raw["error_type"], text["error"], kept, TEST_TIMEOUT_S)
    regions = tuple(raw.pop("regions", ()))
    return TestResult(
        **{**raw, **text}, frames=tuple(kept), hidden_frames=hidden, hint=hint or "", regions=regions
    )
