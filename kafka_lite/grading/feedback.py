"""What a failed grade tells the learner besides the test's own message: the learner's paths, the
learner's frames, and a one-line hint for the failures whose message does not say what went wrong.

No Kafka twin: the teaching half of kafka_lite's lab grader, modelled on how Python's own traceback
folds a repeated line ("[Previous line repeated 996 more times]") and on gradelib's one-line verdicts.

The tests run on a temporary *overlay* of the package (``grader.py`` says why), which is gone once
grading ends; so every path in what pytest wrote is mapped back before the learner sees it: the lab's
files to the learner's workspace, the rest of the package to the checkout, and paths pytest wrote
relative to the run's directory made absolute. A traceback then shows only the learner's frames: the
lab's tests and pytest are the grader's, and a learner reads them only when a test's message says so.
Without ``--verbose`` the innermost of them is still shown: where in the learner's code it happened.

Two more things keep a failure readable. A few mistakes are common enough, and their error far enough
from the cause, to have a hint of their own (``TRAPS``: an error and the learner's line that it comes
from). And the clients the lab's tests run warn at every connection that fails (a broker still
starting, one the test killed): ``quiet_clients`` folds those lines into one count in what is shown.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Trap:
    """A known mistake: an error (``error``, searched in "Type: message") raised from a learner's
    line like ``source`` (searched in the statement of the learner's innermost frame; None: any
    line). The hint may name the groups of either pattern, and ``{where}`` (the line is shown above
    the hint already, so a hint names it only when it points elsewhere)."""

    error: str
    source: str | None
    hint: str


TRAPS = (
    # kafka-python's KafkaConsumer, and kafka_lite's after it, take the partitions of these four as
    # separate arguments, where assign() and end_offsets() take a list: a list passed here is taken
    # for one partition and fails as a dict key, far from the call.
    Trap(
        error=r"^TypeError: unhashable type: '(list|set)'",
        source=r"\.(?P<call>seek_to_beginning|seek_to_end|pause|resume)\((?!\s*\*|\s*\))",
        hint="Hint: {call} takes the partitions as separate arguments, as kafka-python's does: "
        "{call}(*partitions), not {call}(partitions) (assign and end_offsets are the ones that take a "
        "list)",
    ),
    # Bytes from a client (a SASL token, a record's key) need not be UTF-8; the handouts say which
    # error a malformed input raises, and a bare UnicodeDecodeError is never it.
    Trap(
        error=r"^UnicodeDecodeError: ",
        source=None,
        hint="Hint: UnicodeDecodeError: bytes that are not UTF-8 reached a decode of yours; they come "
        "from the network and may be anything, so decode inside try/except UnicodeDecodeError and "
        "raise the error the handout names for a malformed input (a token's is SaslException)",
    ),
)

# What the clients a lab's tests run log while a broker is not there (still starting, or killed by
# the test): kafka_lite's selector and network client, kafka-python's (kafka.conn, kafka.client),
# aiokafka's, and librdkafka's own lines on stderr (confluent-kafka). One pattern per line shape.
CLIENT_NOISE = (
    # pytest's "WARNING  logger:file.py:197 message", or logging's own "WARNING:logger:message"
    re.compile(
        r"^\s*WARNING[\s:]+kafka_lite\.(network\.selector|clients\.\w+):.*(refused|disconnected|established again)"
    ),
    re.compile(
        r"^\s*(WARNING|ERROR)[\s:]+kafka\.(conn|client|client_async):.*"
        r"(refused|[Cc]onnect attempt|Disconnect|DNS lookup failed|Unable to connect)"
    ),
    re.compile(r"^\s*(WARNING|ERROR)[\s:]+aiokafka(\.\w+)*:.*(Connect call failed|Unable connect|refused)"),
    # librdkafka's "%3|1700000000.123|FAIL|rdkafka#consumer-1| [thrd:...]: ... Connection refused" on
    # stderr, or "FAIL [rdkafka#consumer-1] [thrd:...]: ..." through a Python logger given to the client
    re.compile(r"\b(FAIL|ERROR)\b\W+rdkafka#.*(refused|brokers are down|Disconnected)"),
)


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
    return trap_hint(error, frames)


def trap_hint(error: str, frames: Sequence[dict]) -> str | None:
    """The hint of the first of ``TRAPS`` that ``error`` and the learner's innermost statement match."""
    source = frames[-1]["source"] if frames else ""
    for trap in TRAPS:
        found = re.search(trap.error, error, re.MULTILINE)
        at = re.search(trap.source, source) if trap.source is not None else None
        if found and (trap.source is None or at):
            named = {**found.groupdict(), **(at.groupdict() if at else {})}
            return trap.hint.format(**named, where=_where(frames))
    return None


def innermost(frames: Sequence[dict]) -> list[str]:
    """Where in the learner's code a failure happened, without ``--verbose``: the innermost of their
    frames (``path:line in function``) and its statement; nothing when none of their code ran."""
    return format_frames(frames[-1:], hidden=0) if frames else []


def quiet_clients(output: str) -> str:
    """``output`` (what a test printed and logged) without the clients' connection warnings, counted
    in one line where the first of them was."""
    kept: list[str] = []
    dropped, at = 0, 0
    for line in output.splitlines():
        if not any(pattern.search(line) for pattern in CLIENT_NOISE):
            kept.append(line)
            continue
        if not dropped:
            at = len(kept)
            kept.append("")  # the count goes here, where the first of them was
        dropped += 1
    if dropped:
        kept[at] = (
            f"({dropped} connection warnings of the clients not shown: a broker not up yet, or stopped)"
        )
    return "\n".join(kept)


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
