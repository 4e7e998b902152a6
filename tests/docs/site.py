"""The docs site as the tests read it: one ``mkdocs build --strict`` per test run, its pages' text as a
reader (or a search engine) sees it, and every link and anchor on its pages.

The build executes every chapter notebook, so it is made once per run by the session fixture ``site``
(``tests/conftest.py``) and shared by the docs, link, leak and browser tests, on every xdist worker.
"""

from __future__ import annotations

import fcntl
import fnmatch
import functools
import html
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

ROOT = Path(__file__).resolve().parents[2]

# Files the site serves that hold no text a reader could see.
BINARY_SUFFIXES = {".png", ".jpg", ".jpeg", ".gif", ".ico", ".woff", ".woff2", ".ttf", ".gz", ".inv"}


# The notebooks the site shows unrun (mkdocs.yml's execute_ignore): the Spark labs', for working in.
NOT_EXECUTED = "chapters/data_pipeline/lab*.ipynb"
NOTEBOOK_TIMEOUT_S = 300  # a cell's limit, as nbmake's per notebook when the notebook tier runs alone


def build_site(out: Path, executed: Path | None = None) -> Path:
    """``mkdocs build --strict`` into ``out``, its notebooks executed against the code under test.

    mkdocs-jupyter would execute them one after another as it renders their pages (and its cache is
    keyed by the notebook's text alone, so the build does not use it). They are executed first, into
    ``executed`` (``execute_notebooks``), so that every worker waiting for the site can take a share
    instead of sleeping, and the build renders the executed copies (mkdocs_hooks/executed_notebooks.py)."""
    if executed is None:
        executed = out.parent / f"{out.name}-notebooks"
    execute_notebooks(executed)
    env = {
        **os.environ,
        "NO_MKDOCS_2_WARNING": "1",
        "MKDOCS_JUPYTER_CACHE": "false",
        "KAFKA_LITE_EXECUTED_NOTEBOOKS": str(executed / "docs"),
    }
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    return out


def execute_notebooks(executed: Path) -> None:
    """Execute each notebook the site shows run into ``executed``. Processes that share ``executed``
    (the run's xdist workers that need the site) share the work: each notebook is executed by whoever
    takes its lock first, one at a time in each process (the workers already fill the cores), and a
    process that finds all the rest taken waits for them instead of running them again. A failure
    fails the test that asked, with the cell's error."""
    notebooks = [p for p in sorted((ROOT / "chapters").rglob("*.ipynb")) if _executed_by_the_build(p)]
    first = [_execute_once(nb, executed, wait=False) for nb in notebooks]
    # Those another process was executing: wait for it, and run any it could not.
    busy = [nb for nb, outcome in zip(notebooks, first, strict=True) if outcome == "busy"]
    failures = [
        f for f in first + [_execute_once(nb, executed, wait=True) for nb in busy] if f and f != "busy"
    ]
    assert not failures, "\n\n".join(failures)


def _execute_once(notebook: Path, executed: Path, wait: bool) -> str | None:
    """None once ``notebook``'s executed copy is there, "busy" if another process holds it (and not
    ``wait``), else the failure of this process's run of it."""
    target = executed / "docs" / notebook.relative_to(ROOT)
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.with_suffix(".lock"), "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            return "busy"
        if target.exists():  # the copy is written whole, under the lock, after a run that passed
            return None
        return _execute(notebook, target)


def _executed_by_the_build(notebook: Path) -> bool:
    rel = notebook.relative_to(ROOT).as_posix()
    return ".ipynb_checkpoints" not in rel and not fnmatch.fnmatch(rel, NOT_EXECUTED)


def _execute(notebook: Path, target: Path) -> str | None:
    """Run ``notebook`` top to bottom in its own folder, as Jupyter would, and write the executed copy
    to ``target``; a failure is described instead."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    rel = notebook.relative_to(ROOT).as_posix()
    nb = nbformat.read(notebook, as_version=4)
    client = NotebookClient(
        nb, timeout=NOTEBOOK_TIMEOUT_S, resources={"metadata": {"path": str(notebook.parent)}}
    )
    try:
        client.execute()
    except (CellExecutionError, TimeoutError, RuntimeError) as e:
        return f"{rel}: {e}"[-4000:]
    nbformat.write(nb, target)
    return None


def guide_pages() -> list[Path]:
    """Every page of every chapter guide in the repository: each ``index.md`` and the pages a split
    guide's index links to beside it (``mkdocs_hooks/book_map.py``'s ``guide_pages``)."""
    from mkdocs_hooks.book_map import guide_pages as pages

    return [ROOT / page for page in pages(ROOT)]


# -- text -------------------------------------------------------------------------------------------


def normalize(text: str) -> str:
    """Runs of whitespace become one space, so a line of code matches however it was wrapped."""
    return re.sub(r"\s+", " ", text)


def _strip_tags(text: str) -> str:
    # Code in a page is highlighted token by token (<span class="n">data</span><span class="o">=</span>...);
    # without the tags, and with entities decoded, it reads as the source line it came from.
    return html.unescape(re.sub(r"<[^>]*>", "", text))


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def readable_text(path: Path, raw: str | None = None) -> str:
    """What ``path`` shows or feeds a reader: a page's text without its markup, the strings of a JSON
    file (the search index, a notebook) likewise, and any other text file as it is. The raw text is
    kept as well, so nothing hidden in markup or an attribute escapes a search. ``raw`` stands for the
    file's text when given (a page without its reference blocks, say)."""
    if raw is None:
        raw = path.read_text(encoding="utf-8", errors="replace")
    parts = [raw]
    if path.suffix in {".html", ".htm", ".svg", ".xml"}:
        parts.append(_strip_tags(raw))
    elif path.suffix in {".json", ".ipynb"} or raw.startswith("var __index = "):
        try:
            data = json.loads(raw.removeprefix("var __index = "))
        except json.JSONDecodeError:
            pass
        else:
            parts.extend(_strip_tags(s) for s in _strings(data))
    return normalize("\n".join(parts))


_DETAILS = re.compile(r"<details\b[^>]*>|</details>")
REFERENCE_BLOCK = '<details class="reference" data-search-exclude>'


def split_reference(raw: str) -> tuple[str, str]:
    """A page's HTML as two texts: outside and inside its ``reference`` blocks (the folded
    ``<details class="reference">`` of a lab's code, mkdocs_hooks/code_includes.py), blocks nested in
    a reference block counting as inside it. A block only counts as one folded and kept out of the
    search index, as the hook writes it: an open ``reference`` block shows its code to every reader."""
    outside, inside = [], []
    depth = 0  # details elements open since the reference block opened (0: not in one)
    at = 0
    for m in _DETAILS.finditer(raw):
        (inside if depth else outside).append(raw[at : m.start()])
        tag = m.group(0)
        if depth:
            depth += -1 if tag == "</details>" else 1
            inside.append(tag)
        elif tag == REFERENCE_BLOCK:
            depth = 1
            inside.append(tag)
        else:
            outside.append(tag)
        at = m.end()
    (inside if depth else outside).append(raw[at:])
    return "".join(outside), "".join(inside)


def text_files(site: Path) -> list[Path]:
    return sorted(p for p in site.rglob("*") if p.is_file() and p.suffix not in BINARY_SUFFIXES)


# -- links ------------------------------------------------------------------------------------------

LINK_ATTRIBUTES = {"href", "src", "poster", "data"}
NOT_A_LOCATION = ("mailto:", "data:", "javascript:", "blob:", "about:")


@dataclass
class PageLinks:
    """The ids a page defines (anchor targets) and the links it makes, as (tag, attribute, value)."""

    ids: set[str] = field(default_factory=set)
    links: list[tuple[str, str, str]] = field(default_factory=list)


class _LinkParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.page = PageLinks()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value is None:
                continue
            if name == "id" or (name == "name" and tag == "a"):
                self.page.ids.add(value)
            elif name in LINK_ATTRIBUTES and not (tag == "form" or (tag == "object" and name != "data")):
                self.page.links.append((tag, name, value))


@functools.cache
def page_links(path: Path) -> PageLinks:
    """A page's ids and links, parsed once per run: the site is built once and never changes."""
    parser = _LinkParser()
    parser.feed(path.read_text(encoding="utf-8"))
    parser.close()
    return parser.page


def broken_links(site: Path, pages: Iterable[str] | None = None) -> list[str]:
    """Every link on every page of ``site`` (or on ``pages``, paths within it) that does not resolve: a
    missing file, a missing anchor, a path from the server's root (it breaks when the site is opened
    from disk or served below the root) or a link leaving the site. Each is described as
    ``page: <tag attr="value">: why``. A page is parsed when its links or its ids are first needed."""
    if pages is None:
        pages = sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html"))
    problems = []
    for name in pages:
        for tag, attribute, value in page_links(site / name).links:
            where = f'{name}: <{tag} {attribute}="{value}">'
            why = _why_broken(site, name, value)
            if why:
                problems.append(f"{where}: {why}")
    return problems


def _why_broken(site: Path, name: str, value: str) -> str | None:
    if value.startswith(NOT_A_LOCATION):
        return None
    parts = urlsplit(value)
    if parts.scheme or parts.netloc:
        return "leaves the site"
    if parts.path.startswith("/"):
        return "a path from the server's root, which breaks when the site is opened from disk"
    target = (Path(name).parent / unquote(parts.path)).as_posix() if parts.path else name
    target = os.path.normpath(target)
    if target.startswith(".."):
        return "points above the site's root"
    file = site / target
    if file.is_dir():
        return "names a directory: opened from disk it shows a listing, not a page"
    if not file.is_file():
        return "no such file"
    fragment = unquote(parts.fragment)
    if fragment and target.endswith(".html") and fragment not in page_links(file).ids:
        return f"no element with id {fragment!r} in {target}"
    return None
