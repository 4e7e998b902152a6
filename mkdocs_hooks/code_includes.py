"""MkDocs hook: a page's code includes show the real code, captioned, and a lab's answer only folded.

No Kafka twin: docs tooling. A guide includes code by a named snippet marker, one include per fenced
block::

    ```python
    --8<-- "kafka_lite/log/log_segment.py:append"
    ```

At ``on_page_markdown`` this hook replaces each such include with the section's lines as they are in
the checkout (the snippet and solution markers left out), under a caption naming the file, the lines
and the Kafka class the code mirrors (the module header's ``Mirrors:`` line, or ``No Kafka twin``),
linked to the module's API page. Captions are made from the markers themselves, so they cannot drift
from the code.

An include whose section overlaps a lab's solution region is the one way a lab's answer reaches the
site, so the hook decides where it goes, not the page: it always wraps such an include in a collapsed
admonition of type ``reference``, "kafka_lite's code (lab N asks you to write this)". A page cannot
show a lab's answer open, and a guide never shows the lab's ``NotImplementedError`` stub where the
algorithm should be. An include the hook does not handle (outside a fenced block) falls through to
``pymdownx.snippets``, which reads the labs' starters (``lab_starters.py``), never the answers.

At ``on_page_content`` the ``reference`` blocks are marked ``data-search-exclude``: the search index
is text anyone can read, outside any folded block.
"""

from __future__ import annotations

import ast
import posixpath
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from mkdocs.exceptions import PluginError

from kafka_lite.grading import labs, starter
from mkdocs_hooks.generated_pages import api_pages, mirrors_text, module_tree, parse_mirrors

ROOT = Path(__file__).resolve().parents[1]

INCLUDE = re.compile(r'^(?P<indent>[ \t]*)-+8<-+[ \t]+"(?P<path>[^":]+):(?P<section>[\w-]+)"[ \t]*$')
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^`]*)$")
# A snippet section marker, as pymdownx.snippets recognises it: the line is never shown.
SECTION_MARKER = re.compile(r"-+8<-+[ \t]+\[[ \t]*(?P<type>start|end)[ \t]*:[ \t]*(?P<name>[\w-]+)[ \t]*\]")
SOLUTION_MARKERS = (starter.BEGIN, starter.END)
REFERENCE_OPEN = '<details class="reference">'


@dataclass(frozen=True)
class Include:
    """One section of a file, as a page shows it."""

    path: str  # "kafka_lite/log/log_segment.py", relative to the repository's root
    section: str
    first: int  # the first and last line shown, 1-based, in the file as it is in the checkout
    last: int
    lines: tuple[str, ...]  # the lines shown: the section without any marker line
    labs: tuple[int, ...]  # the labs whose solution regions the section overlaps


@cache
def _lab_of_file(root: Path) -> dict[str, int]:
    return {rel: lab.number for lab in labs.discover(root / "labs", root) for rel in lab.files}


def _is_marker(line: str) -> bool:
    return bool(SECTION_MARKER.search(line)) or line.strip() in SOLUTION_MARKERS


def read_include(path: str, section: str, root: Path = ROOT) -> Include:
    """The lines ``--8<-- "path:section"`` shows, where they are, and which labs ask for them."""
    file = root / path
    if not file.is_file():
        raise PluginError(f"code_includes: no file {path!r} for the include {path}:{section}")
    source = file.read_text(encoding="utf-8")
    lines = source.splitlines()
    marks = [(n, m) for n, line in enumerate(lines, 1) if (m := SECTION_MARKER.search(line))]
    start = next((n for n, m in marks if m["type"] == "start" and m["name"] == section), None)
    end = next(
        (n for n, m in marks if m["type"] == "end" and m["name"] == section and n > (start or 0)), None
    )
    if start is None or end is None:
        raise PluginError(f"code_includes: {path} has no section {section!r} (start and end markers)")
    shown = [(n, lines[n - 1]) for n in range(start + 1, end) if not _is_marker(lines[n - 1])]
    while shown and not shown[-1][1].strip():  # the caption's last line is the code's
        shown.pop()
    while shown and not shown[0][1].strip():
        shown.pop(0)
    if not shown:
        raise PluginError(f"code_includes: the section {path}:{section} is empty")
    regions = starter.find_regions(source, path)
    overlapping = [(b, e) for b, e in regions if b < end and e > start]
    lab = _lab_of_file(root).get(path)
    if overlapping and lab is None:
        raise PluginError(f"code_includes: {path} has solution regions but no lab lists it")
    return Include(
        path, section, shown[0][0], shown[-1][0], tuple(t for _, t in shown), (lab,) if overlapping else ()
    )


# -- the caption ----------------------------------------------------------------------------------------


def _enclosing_class(source: str, line: int) -> str | None:
    innermost = None
    for node in ast.walk(module_tree(source)):
        if isinstance(node, ast.ClassDef) and node.lineno <= line <= (node.end_lineno or node.lineno):
            if innermost is None or node.lineno > innermost.lineno:
                innermost = node
    return innermost.name if innermost else None


def mirrors(path: str, line: int, root: Path = ROOT) -> str:
    """What the code at ``path:line`` mirrors, as a caption says it: "mirrors LogSegment (Kafka 0.10.1)",
    "no Kafka twin", or "" for a file whose header says neither."""
    source = (root / path).read_text(encoding="utf-8")
    text = mirrors_text(source)
    if not text:
        doc = ast.get_docstring(module_tree(source)) or ""
        return "no Kafka twin" if re.search(r"^No Kafka twin", doc, re.MULTILINE) else ""
    twins, packages = parse_mirrors(text)
    if not twins:
        return f"mirrors {packages[0]}" if packages else ""
    # The class the section sits in, when the header names it; else the header's first class.
    enclosing = _enclosing_class(source, line)
    twin = next((t for t in twins if t.name == enclosing), twins[0])
    return f"mirrors {twin.name}" + (f" (Kafka {twin.version})" if twin.version else "")


def caption(include: Include, page_uri: str, root: Path = ROOT) -> str:
    """The caption's Markdown: the file (linked to its API page where it has one), lines, twin."""
    module = include.path.removesuffix(".py").replace("/", ".")
    page = api_pages(root / "docs").get(module)
    name = f"`{include.path}`"
    if page:
        link = posixpath.relpath(page, posixpath.dirname(page_uri) or ".")
        name = f"[{name}]({link}#{module})"
    parts = [f"{name}, lines {include.first}-{include.last}", mirrors(include.path, include.first, root)]
    return " · ".join(p for p in parts if p)


def reference_title(include: Include) -> str:
    numbers = " and ".join(str(n) for n in include.labs)
    labs_ask = f"lab {numbers} asks" if len(include.labs) == 1 else f"labs {numbers} ask"
    return f"kafka_lite's code ({labs_ask} you to write this)"


# -- the page -------------------------------------------------------------------------------------------


def _render(indent: str, fence: str, info: str, include: Include, page_uri: str, root: Path) -> list[str]:
    inner = indent + ("    " if include.labs else "")
    block = [
        f"{inner}{caption(include, page_uri, root)}",
        f"{inner}{{: .code-caption }}",
        "",
        f"{inner}{fence}{info}",
        *(f"{inner}{line}" if line.strip() else "" for line in include.lines),
        f"{inner}{fence}",
    ]
    if include.labs:
        block = [f'{indent}??? reference "{reference_title(include)}"', "", *block, ""]
    return block


def render_includes(markdown: str, page_uri: str, root: Path = ROOT) -> str:
    """``markdown`` with every fenced code include replaced by its captioned code (see the module's
    docstring); ``page_uri`` is the page's path in the docs, for the links."""
    lines = markdown.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            out.append(lines[i])
            i += 1
            continue
        indent, fence = opening["indent"], opening["fence"]
        closing = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        j = i + 1
        while j < len(lines) and not closing.match(lines[j]):
            j += 1
        body = [line for line in lines[i + 1 : j] if line.strip()]
        includes = [INCLUDE.match(line) for line in body]
        if body and any(includes):
            if len(body) != 1:
                raise PluginError(
                    f"code_includes: {page_uri}:{i + 1}: a code block holds one include and nothing else"
                )
            include = read_include(includes[0]["path"], includes[0]["section"], root)
            out.extend(_render(indent, fence, opening["info"], include, page_uri, root))
        else:
            out.extend(lines[i : j + 1])
        i = j + 1
    return "\n".join(out)


def on_page_markdown(markdown, page, config, files):
    if not page.file.src_uri.endswith(".md"):
        return markdown
    return render_includes(markdown, page.file.src_uri, Path(config.config_file_path).parent)


def on_page_content(html, page, config, files):
    return html.replace(REFERENCE_OPEN, '<details class="reference" data-search-exclude>')
