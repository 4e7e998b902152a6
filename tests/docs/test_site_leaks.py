"""The site teaches without giving a lab's answer away: a lab's reference code is on the site only
inside the guides' folded ``reference`` blocks (mkdocs_hooks/code_includes.py); no other page, script,
notebook or search index holds a run of its lines, no guide shows a lab's ``NotImplementedError`` stub
where the algorithm should be, and no page holds the solution markers themselves.

The needles are runs of three consecutive lines of a solution region, joined as a page's text joins
them, with at least one line long enough to mean something alone, and found nowhere in the code the
site may show openly (every module, with the labs' files as their starters). Controls make their absence mean something: each
region yields needles that are in the reference and not in the starter, each region a guide includes
is found, by the same search, inside a reference block on that guide's page (so the search sees code
through its highlighting), and the API pages still show each region's starter stub.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from functools import cache

import ahocorasick
import pytest

from kafka_lite.grading import labs, starter
from mkdocs_hooks.code_includes import INCLUDE, read_include
from mkdocs_hooks.lab_starters import site_source
from tests.docs.site import ROOT, guide_pages, normalize, readable_text, split_reference, text_files

pytestmark = pytest.mark.docs

MIN_NEEDLE = 24  # characters of a run's longest line: "return None" or "if size == 0:" could be anyone's
RUN = 3  # consecutive solution lines: a line or two may be quoted in prose; three are the answer
MARKERS = ("BEGIN SOLUTION", "END SOLUTION")


@dataclass(frozen=True)
class Region:
    lab: labs.Lab
    file: str
    begin: int  # the marker lines, 1-based
    end: int
    needles: tuple[str, ...]  # normalized solution lines
    stub: str  # the normalized line the starter has in the region's place


@cache
def _site_source() -> dict[str, str]:
    return site_source(ROOT)


@cache
def regions() -> tuple[Region, ...]:
    texts = _site_source()
    shown = normalize("\n".join(texts.values()))
    found = []
    for lab in labs.discover():
        for rel in lab.files:
            source = (ROOT / rel).read_text(encoding="utf-8")
            lines = source.splitlines()
            starter_lines = texts[rel].splitlines()
            removed = 0  # lines the regions before this one lost: each region becomes one line
            for begin, end in starter.find_regions(source, rel):
                body = [s for line in lines[begin : end - 1] if (s := normalize(line).strip())]
                # A run counts when one of its lines means something alone: a handout's pseudo-code may
                # share "else: return mid / return lo" with the answer and give nothing away.
                runs = dict.fromkeys(
                    " ".join(run)
                    for i in range(max(1, len(body) - RUN + 1))
                    if max(map(len, run := body[i : i + RUN])) >= MIN_NEEDLE
                )
                needles = tuple(n for n in runs if n not in shown)
                stub = normalize(starter_lines[begin - 1 - removed]).strip()
                found.append(Region(lab, rel, begin, end, needles, stub))
                removed += end - begin
    return tuple(found)


@dataclass(frozen=True)
class PageText:
    outside: str  # what a reader sees without opening a reference block, normalized
    inside: str  # the reference blocks' text, normalized


@pytest.fixture(scope="module")
def site_text(site) -> dict[str, PageText]:
    pages = {}
    for path in text_files(site):
        raw = path.read_text(encoding="utf-8", errors="replace")
        outside, inside = split_reference(raw) if path.suffix == ".html" else (raw, "")
        pages[path.relative_to(site).as_posix()] = PageText(
            readable_text(path, outside), readable_text(path, inside) if inside else ""
        )
    return pages


def _where(site_text: dict[str, PageText], needles) -> dict[str, list[str]]:
    """Each needle found -> the pages showing it outside a reference block. One Aho-Corasick pass over
    each page finds them all: the site is tens of megabytes, and searching it once per needle (a
    thousand of them) takes minutes."""
    needles = set(needles)
    if not needles:
        return {}
    automaton = ahocorasick.Automaton()
    for needle in needles:
        automaton.add_word(needle, needle)
    automaton.make_automaton()
    found = defaultdict(list)
    for name, text in site_text.items():
        for needle in dict.fromkeys(needle for _, needle in automaton.iter(text.outside)):
            found[needle].append(name)
    return found


def _guides() -> dict[str, list[str]]:
    """Each guide page on the site (a split guide has several) -> the ``path:section`` its code
    blocks include."""
    found = {}
    for guide in guide_pages():
        text = guide.read_text(encoding="utf-8")
        page = guide.relative_to(ROOT).with_suffix(".html").as_posix()
        found[page] = [
            f"{m['path']}:{m['section']}" for line in text.splitlines() if (m := INCLUDE.match(line))
        ]
    return found


def test_every_lab_region_has_needles_from_the_reference():
    found = regions()
    assert {r.lab.number for r in found} == {lab.number for lab in labs.discover()}, "a lab with no regions"
    for r in found:
        where = f"lab {r.lab.number}, {r.file}:{r.begin}-{r.end}"
        assert r.needles, (
            f"{where}: no run of {RUN} lines, one of at least {MIN_NEEDLE} characters, only in the solution"
        )
        reference = normalize((ROOT / r.file).read_text(encoding="utf-8"))
        starter_text = normalize(_site_source()[r.file])
        for needle in r.needles:
            assert needle in reference and needle not in starter_text, (where, needle)
        assert r.stub.startswith("raise NotImplementedError(") and r.stub in starter_text, (where, r.stub)


def test_no_run_of_solution_lines_outside_a_reference_block(site_text):
    where = _where(site_text, (needle for r in regions() for needle in r.needles))
    leaks = [
        f"lab {r.lab.number}, {r.file}:{r.begin}-{r.end}: {needle!r} in {', '.join(where[needle])}"
        for r in regions()
        for needle in r.needles
        if needle in where
    ]
    assert not leaks, "the site shows lab solutions outside a reference block:\n" + "\n".join(leaks)


def test_every_lab_region_a_guide_includes_sits_in_a_reference_block(site_text):
    """The control of the search above, and the rule for guides: each include that overlaps a
    solution region is on its guide's page whole, inside a reference block titled with its lab."""
    checked = 0
    for page, includes in _guides().items():
        for spec in includes:
            include = read_include(*spec.split(":"))
            if not include.labs:
                continue
            code = normalize(" ".join(line.strip() for line in include.lines)).strip()
            assert code in site_text[page].inside, f"{page}: {spec} is not inside a reference block"
            assert code not in site_text[page].outside, f"{page}: {spec} is outside a reference block"
            title = f"lab {include.labs[0]} asks you to write this"
            assert title in site_text[page].inside, f"{page}: no reference block titled {title!r}"
            checked += 1
    assert checked, "no guide includes a lab's code: the search above is not seen to find code"


def test_no_stub_in_any_guide(site_text):
    stubs = {r.stub for r in regions()}
    guides = [name for name in site_text if name.startswith("chapters/") and name.endswith(".html")]
    found = [
        f"{name}: {stub}"
        for name in guides
        for stub in stubs
        if stub in site_text[name].outside or stub in site_text[name].inside
    ]
    found += [
        f"{name}: a NotImplementedError"
        for name in guides
        if re.search(r"raise NotImplementedError\(", site_text[name].outside + site_text[name].inside)
    ]
    assert not found, "guides show a lab's stub:\n" + "\n".join(found)


def test_the_api_pages_show_each_regions_stub(site_text):
    """The API pages' source views show a lab's function as the starter has it (they read the package
    as lab_starters.py copies it): the reader of an API page meets the lab's stub, not its answer."""
    where = _where(site_text, (r.stub for r in regions()))
    missing = [
        f"lab {r.lab.number}, {r.file}:{r.begin}: {r.stub}"
        for r in regions()
        if not any(name.startswith("api/") for name in where.get(r.stub, ()))
    ]
    assert not missing, "stubs not found on the API pages:\n" + "\n".join(missing)


def test_no_solution_marker_on_the_site(site_text):
    found = [
        f"{marker!r} in {name}"
        for marker in MARKERS
        for name, text in site_text.items()
        if marker in text.outside or marker in text.inside
    ]
    assert not found, found


def test_site_source_is_the_starter():
    """The hook's copy of the package, which the snippets and API pages read, has the labs' files as
    their starters and every other module as it is."""
    texts = site_source(ROOT)
    package = {p.relative_to(ROOT).as_posix() for p in (ROOT / "kafka_lite").rglob("*.py")}
    assert set(texts) == {p for p in package if "__pycache__" not in p}
    lab_files = {rel for lab in labs.discover() for rel in lab.files}
    for rel, text in texts.items():
        original = (ROOT / rel).read_text(encoding="utf-8")
        if rel in lab_files:
            assert text != original and not starter.find_regions(text, rel), rel
        else:
            assert text == original, rel
