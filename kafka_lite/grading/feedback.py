"""What a failed grade tells the learner besides the test's own message: the learner's paths, the
learner's frames, and a one-line hint for the failures whose message does not say what went wrong.

No Kafka twin: the teaching half of kafka_lite's lab grader, modelled on how Python's own traceback
folds a repeated line ("[Previous line repeated 996 more times]") and on gradelib's one-line verdicts.

The tests run on a temporary *overlay* of the package (``grader.py`` says why), which is gone once
grading ends; so every path in what pytest wrote is mapped back before the learner sees it: the lab's
files to the learner's workspace, the rest of the package to the checkout, and paths pytest wrote
relative to the run's directory made absolute. A traceback then shows only the learner's frames: the
lab's tests and pytest are the grader's, and a learner reads them only when a test's message says so.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

FRAME_LINES = 20  # a verbose traceback shows at most this many lines of the learner's frames

RECURSION_HINT = (
    "Hint: RecursionError: a function of yours calls itself (or calls one that calls it back) with no "
    "case that stops; {where}"
)
TIMEOUT_HINT = (
    "Hint: the test ran over its {seconds} s and was stopped: most likely a loop of yours whose "
    "condition never changes, or a wait for something your code never does; {where}"
)
IMPORT_HINT = (
    "Hint: {kind}: {path} does not import, and no test that uses it can run; Python stops at the "
    "first error{line}: fix it and grade again"
)
IMPORT_ERRORS = ("SyntaxError", "IndentationError", "TabError", "ImportError", "ModuleNotFoundError")


def path_mapper(
    run_dir: Path, overlay: Path, package_root: Path, workspace: Path | None, lab_files: Sequence[str]
) -> Callable[[str], str]:
    """A function that rewrites the paths in a text written by the grading run (in ``run_dir``, on the
    package copied to ``overlay``): the lab's files to ``workspace`` (the checkout's with no
    workspace), the other files of the copy to ``package_root``'s, relative paths to absolute ones."""
    package_dir = overlay / package_root.name
    checkout = package_root.parent
    mine = {rel: (workspace or checkout) / rel for rel in lab_files}

    def absolute(path: str) -> str:
        if path.startswith("/") or re.match(r"^[A-Za-z]:[\\/]", path):
            return path
        return str((run_dir / path).resolve(strict=False))

    def rewrite(path: str) -> str:
        full = Path(absolute(path))
        try:
            rel = full.relative_to(package_dir)
        except ValueError:
            return str(full)
        rel_name = (Path(package_root.name) / rel).as_posix()
        return str(mine.get(rel_name, checkout / rel_name))

    # A path pytest wrote: absolute, or relative to the run's directory (overlay/..., ../../...),
    # ending in .py and followed by a line number, a quote or the end of the word.
    pattern = re.compile(r"(?P<path>(?:/|\.\./|overlay/)[^\s:\"'()]*?\.py)(?=[:\"'),\s]|$)", re.MULTILINE)

    def mapper(text: str) -> str:
        return pattern.sub(lambda m: rewrite(m.group("path")), text) if text else text

    return mapper


def learners_frames(frames: Sequence[dict], mine: Sequence[Path]) -> tuple[list[dict], int]:
    """The frames in the learner's files (``mine``), and how many other frames there were."""
    paths = {str(p) for p in mine}
    kept = [f for f in frames if f["path"] in paths]
    return kept, len(frames) - len(kept)


def format_frames(frames: Sequence[dict], hidden: int, limit: int = FRAME_LINES) -> list[str]:
    """The learner's frames as lines (``path:line in function`` and its source line), outermost first,
    cut at ``limit`` lines with the rest summed up in one line."""
    lines: list[str] = []
    for f in frames:
        lines.append(f"{f['path']}:{f['line']}: in {f['function']}")
        if f["source"]:
            lines.append(f"    {f['source']}")
        if f.get("repeated"):
            lines.append(f"    [the line above repeated {f['repeated']} more times]")
    if not frames:
        lines.append(
            "(no frame of your code: the failure is the test's own check of what your code returned)"
        )
    shown = lines[:limit]
    if len(lines) > limit:
        rest = len(frames) - sum(1 for line in shown if not line.startswith("    "))
        shown.append(f"... {len(lines) - limit} more lines: {rest} more frames of your code")
    if hidden:
        shown.append(f"({hidden} frames of the lab's tests, kafka_lite and pytest not shown)")
    return shown


def hint(error_type: str | None, error: str, frames: Sequence[dict], timeout_s: int) -> str | None:
    """A one-line hint for a failure whose message does not teach by itself; ``frames`` are the
    learner's (the innermost names where it happened)."""
    where = _where(frames)
    if error_type == "RecursionError":
        return RECURSION_HINT.format(where=where)
    if "Timeout" in error and "pytest-timeout" in error:
        return TIMEOUT_HINT.format(seconds=timeout_s, where=where)
    if error_type in IMPORT_ERRORS:
        path = frames[-1]["path"] if frames else "a file of yours"
        return IMPORT_HINT.format(kind=error_type, path=path, line="")
    return None


def collection_hint(output: str, mine: Sequence[Path]) -> str | None:
    """The hint for a run in which no test could even be collected: a learner's file that does not
    import (pytest's output, paths already the learner's, names the file and the error)."""
    kinds = [k for k in IMPORT_ERRORS if re.search(rf"^E\s+{k}\b", output, re.MULTILINE)]
    if not kinds:
        return None
    named = [p for p in mine if str(p) in output]
    path = str(named[0]) if named else "a file of the lab"
    line = ""
    if named:
        found = re.search(rf'File "{re.escape(str(named[0]))}", line (\d+)', output)
        line = f" (here line {found.group(1)})" if found else ""
    return IMPORT_HINT.format(kind=kinds[0], path=path, line=line)


def _where(frames: Sequence[dict]) -> str:
    if not frames:
        return "the frames of your code do not show where (run with --verbose)"
    last = frames[-1]
    return f"it was in {last['function']} at {last['path']}:{last['line']}"
