"""Make a lab's starter code from the reference: each solution region becomes a NotImplementedError.

No Kafka twin: the starter generator of kafka_lite's labs (one source of truth: the reference).

A region is a run of lines inside a function body::

    def lookup(self, target):
        # BEGIN SOLUTION
        ...the reference implementation...
        # END SOLUTION

and becomes ``raise NotImplementedError("Lab 2: implement OffsetIndex.lookup (see labs/...)")`` at
the same indentation. Regions must pair up, must not nest, and must sit inside a function, so
the generated module always imports: a student's first failure is the lab's own error, never a
syntax or import error.

The lab self-check also writes *mistaken* workspaces (``write_mistaken``): the whole reference with
planted mistakes, each an exact edit inside one region, which the lab's graded tests must notice.

The same regions are what ``kafka-lite lab solution`` shows (``solution_regions``), and
``handout_for`` is the handout as ``lab start`` copies it into the workspace, its links re-aimed;
``workspace_handout`` splits that copy into README.md and HINTS.md (the steps and the hints).
"""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

BEGIN = "# BEGIN SOLUTION"
END = "# END SOLUTION"


class RegionError(Exception):
    """A malformed solution region; the message names the file and line."""


def find_regions(source: str, path: str = "<source>") -> list[tuple[int, int]]:
    """``(begin_line, end_line)`` pairs (1-based, the marker lines themselves)."""
    regions, begin = [], None
    for n, line in enumerate(source.splitlines(), start=1):
        marker = line.strip()
        if marker == BEGIN:
            if begin is not None:
                raise RegionError(f"{path}:{n}: BEGIN SOLUTION inside the region opened at line {begin}")
            begin = n
        elif marker == END:
            if begin is None:
                raise RegionError(f"{path}:{n}: END SOLUTION without a BEGIN SOLUTION")
            regions.append((begin, n))
            begin = None
    if begin is not None:
        raise RegionError(f"{path}:{begin}: BEGIN SOLUTION is never closed")
    return regions


def _enclosing_functions(tree: ast.AST) -> list[tuple[int, int, str]]:
    """``(first_line, last_line, qualname)`` of every function, methods as ``Class.method``."""
    found: list[tuple[int, int, str]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = f"{prefix}{child.name}"
                found.append((child.lineno, child.end_lineno or child.lineno, name))
                visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return found


def _owners(source: str, path: str) -> list[tuple[int, int, str]]:
    """``(begin_line, end_line, qualname)`` of each region, named by its innermost enclosing function."""
    regions = find_regions(source, path)
    functions = _enclosing_functions(ast.parse(source, filename=path))
    owned = []
    for begin, end in regions:
        # The END marker may follow the function's last statement (comments are not in the AST),
        # so a region belongs to the innermost function whose body contains its BEGIN line.
        inside = [f for f in functions if f[0] < begin <= f[1]]
        if not inside:
            raise RegionError(f"{path}:{begin}: a solution region must be inside a function body")
        owned.append((begin, end, max(inside, key=lambda f: f[0])[2]))
    return owned


def region_qualnames(source: str, path: str = "<source>") -> list[str]:
    """The qualname of the function holding each solution region, in file order."""
    return [name for _, _, name in _owners(source, path)]


def solution_regions(source: str, path: str = "<source>") -> list[tuple[str, int, list[str]]]:
    """``(qualname, first_line, lines)`` of each region: the reference's lines between its markers."""
    lines = source.splitlines()
    return [(name, begin + 1, lines[begin : end - 1]) for begin, end, name in _owners(source, path)]


def make_starter(
    source: str, lab_number: int, handout: str, path: str = "<source>", solved: frozenset[str] = frozenset()
) -> str:
    """The starter version of ``source``: every region replaced by the lab's NotImplementedError.

    Regions whose function's qualname is in ``solved`` keep the reference's lines instead: that is
    how the lab self-check assembles a workspace in which only some stages are done.
    """
    lines = source.splitlines(keepends=True)
    for begin, end, qualname in reversed(_owners(source, path)):
        if qualname in solved:
            continue
        indent = lines[begin - 1][: len(lines[begin - 1]) - len(lines[begin - 1].lstrip())]
        message = f"Lab {lab_number}: implement {qualname} (see {handout})"
        lines[begin - 1 : end] = [f"{indent}raise NotImplementedError({message!r})\n"]
    starter = "".join(lines)
    compile(starter, path, "exec")  # the starter must at least parse
    return starter


ENTERED = '__import__("kafka_lite.grading.region_entries").grading.region_entries.entered'


def mark_entries(source: str, path: str = "<source>") -> str:
    """The reference ``source`` with each region's BEGIN marker line made a call, at the marker's own
    indentation, that tells the grading run the region was entered (``region_entries.entered``).
    Nothing moves (the call takes the comment's line), so tracebacks keep their line numbers. The
    lab self-check grades the reference so, and learns which stages' code each test reaches."""
    lines = source.splitlines(keepends=True)
    for begin, _, qualname in _owners(source, path):
        marker = lines[begin - 1]
        indent = marker[: len(marker) - len(marker.lstrip())]
        lines[begin - 1] = f"{indent}{ENTERED}({qualname!r})  {BEGIN}\n"
    marked = "".join(lines)
    try:
        compile(marked, path, "exec")
    except SyntaxError as e:  # a marker indented unlike the code after it
        raise RegionError(f"{path}:{e.lineno}: a BEGIN SOLUTION marker must be indented as its region") from e
    return marked


def write_starter(lab, repo_root: Path, workspace: Path, solved: frozenset[str] = frozenset()) -> list[Path]:
    """Write the lab's starter files under ``workspace`` at their repo-relative paths (the regions
    of the functions named in ``solved`` keep the reference's code)."""
    handout = f"labs/{lab.slug}/README.md"
    # Generate every starter before writing any, so a bad region leaves no half-made workspace.
    starters = {
        rel: make_starter((repo_root / rel).read_text(encoding="utf-8"), lab.number, handout, rel, solved)
        for rel in lab.files
    }
    written = []
    for rel, text in starters.items():
        target = workspace / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        written.append(target)
    return written


def plant_mistake(source: str, region: str, old: str, new: str, path: str = "<source>") -> str:
    """``source`` with ``old`` replaced by ``new`` inside the solution region of function ``region``.

    ``old`` must occur exactly once in the region's lines (the markers excluded): a mistake whose text
    the reference no longer holds, or holds twice, would plant nothing or something unmeant, so it is
    an error naming the region, not a silent pass."""
    lines = source.splitlines(keepends=True)
    owned = [(begin, end) for begin, end, name in _owners(source, path) if name == region]
    if not owned:
        raise RegionError(f"{path}: no solution region in a function {region}")
    ((begin, end),) = owned
    body = "".join(lines[begin : end - 1])
    count = body.count(old)
    if count != 1:
        found = "not found" if count == 0 else f"found {count} times"
        raise RegionError(
            f"{path}:{begin}: the mistake's old text is {found} in the region of {region}; it must be "
            f"there exactly once:\n{old}"
        )
    mistaken = "".join(lines[:begin]) + body.replace(old, new) + "".join(lines[end - 1 :])
    try:
        compile(mistaken, path, "exec")
    except SyntaxError as e:
        raise RegionError(
            f"{path}:{e.lineno}: the mistake planted in {region} does not parse: {e.msg}"
        ) from e
    return mistaken


def write_mistaken(lab, mistakes, repo_root: Path, workspace: Path, mark: bool = False) -> list[Path]:
    """Write the lab's files under ``workspace``: the full reference with each of ``mistakes``
    (``labs.Mistake``) planted in the file that holds its region. The self-check plants several at
    once only in distinct regions, and then ``mark`` makes each region's BEGIN line note its entry
    (``mark_entries``), so the grading shows which planted regions each test reached."""
    texts = {rel: (repo_root / rel).read_text(encoding="utf-8") for rel in lab.files}
    for mistake in mistakes:
        holders = [rel for rel, text in texts.items() if mistake.region in region_qualnames(text, rel)]
        if len(holders) != 1:
            raise RegionError(
                f"lab {lab.number}: mistake {mistake.name}: {len(holders)} files hold region {mistake.region}"
            )
        (rel,) = holders
        texts[rel] = plant_mistake(texts[rel], mistake.region, mistake.old, mistake.new, rel)
    written = []
    for rel, text in texts.items():
        target = workspace / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(mark_entries(text, rel) if mark else text, encoding="utf-8")
        written.append(target)
    return written


# A markdown link or image's target: ](target) or ](target "title"), up to its closing parenthesis.
_LINK = re.compile(r"(\]\()([^)\s]+)((?:\s+\"[^\"]*\")?\))")


def handout_for(handout: Path, directory: Path) -> str:
    """The text of ``handout`` with each relative link re-aimed from ``directory``: a copy of the
    handout there links to the same chapters, notebooks and labs of the checkout as the original.
    Web links and anchors within the page stay as they are."""

    def rebase(match: re.Match) -> str:
        target = match.group(2)
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith(("#", "/")):
            return match.group(0)
        path, _, anchor = target.partition("#")
        where = (handout.parent / path).resolve()
        try:
            moved = os.path.relpath(where, directory.resolve())
        except ValueError:  # another drive (Windows): a relative path cannot reach it
            moved = str(where)
        return f"{match.group(1)}{Path(moved).as_posix()}{'#' + anchor if anchor else ''}{match.group(3)}"

    return _LINK.sub(rebase, handout.read_text(encoding="utf-8"))


HINTS_FILE = "HINTS.md"
STEPS_HEADING = "### Step by step"
HINTS_HEADING = "## Hints"
# A folded step-by-step guide of a handout: <details markdown="1"><summary>Stage N, step by step</summary>.
_FOLDED = re.compile(
    r"^<details[^>]*>\n<summary>(?P<title>.*?)</summary>\n(?P<body>.*?)^</details>\n", re.M | re.S
)


def workspace_handout(handout: Path, directory: Path) -> tuple[str, str]:
    """The handout as ``lab start`` writes it into ``directory``: ``README.md`` and ``HINTS.md``.

    On the site a handout's step-by-step guides are folded (``<details>``), to be opened when stuck;
    in a terminal ``cat README.md`` would print them unfolded, the answer's outline beside the
    behaviour it is meant to make the learner work out. So the workspace's README.md keeps everything
    else (the behaviour, the stages, what the tests check) and says, where the steps and the hints
    were, that they are in HINTS.md, which holds them as plain markdown. Links are re-aimed at the
    checkout in both (``handout_for``)."""
    text = handout_for(handout, directory)
    lines = text.splitlines(keepends=True)
    steps = _section(lines, STEPS_HEADING)
    hints = _section(lines, HINTS_HEADING)
    if steps is None or hints is None:  # not a handout of the usual shape: copied whole
        return text, ""
    pointer = {
        steps: f"The steps, a stage at a time, are in [{HINTS_FILE}]({HINTS_FILE}): open it when a stage\n"
        "has you stuck, once you have read the behaviour above.\n\n",
        hints: f"In [{HINTS_FILE}]({HINTS_FILE}#hints), after the steps.\n\n",
    }
    readme = list(lines)
    for start, end in sorted(pointer, reverse=True):  # the later section first: indexes stay right
        readme[start + 1 : end] = ["\n", pointer[(start, end)]]
    title = lines[0].removeprefix("# ").strip() if lines and lines[0].startswith("# ") else "the lab"
    unfolded = _FOLDED.sub(
        lambda m: f"### {m.group('title')}\n\n{m.group('body').lstrip()}", "".join(lines[slice(*steps)][1:])
    )
    hints_md = (
        f"# {title}: steps and hints\n\n"
        "The step-by-step guides and the hints of [README.md](README.md), kept out of it so that reading\n"
        "the behaviour does not show them.\n\n"
        f"## Step by step\n{unfolded.rstrip()}\n\n"
        f"{''.join(lines[slice(*hints)]).rstrip()}\n"
    )
    return "".join(readme), hints_md


def _section(lines: list[str], heading: str) -> tuple[int, int] | None:
    """``(first, end)``: the line of ``heading`` and the line of the next heading of its level or
    above (or the end); lines in code fences are not headings."""
    level = len(heading) - len(heading.lstrip("#"))
    start, fenced = None, False
    for n, line in enumerate(lines):
        if line.startswith("```"):
            fenced = not fenced
        if fenced:
            continue
        if start is None:
            start = n if line.rstrip() == heading else None
            continue
        marks = len(line) - len(line.lstrip("#"))
        if 0 < marks <= level and line[marks : marks + 1] == " ":
            return start, n
    return (start, len(lines)) if start is not None else None
