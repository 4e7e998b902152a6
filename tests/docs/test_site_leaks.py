"""The site teaches without giving a lab's answer away: no page, script, notebook or search index of the
built site holds a line of a lab's reference solution, or the solution markers themselves.

The needles are the solution regions' distinctive lines: long enough to mean something, and found
nowhere in the code the site may show (every module, with the labs' files as their starters). Two
checks make their absence mean something: each region yields needles that are in the reference and
not in the starter, and each region's starter stub is found on the site by the same search, so the
site does show those functions' code and the search sees code through its highlighting.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import pytest

from kafka_lite.grading import labs, starter
from mkdocs_hooks.lab_starters import site_source
from tests.docs.site import ROOT, normalize, readable_text, text_files

pytestmark = pytest.mark.docs

MIN_NEEDLE = 24  # characters: "return None" or "if size == 0:" could be anyone's code
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
def regions() -> tuple[Region, ...]:
    texts = site_source(ROOT)
    shown = normalize("\n".join(texts.values()))
    found = []
    for lab in labs.discover():
        for rel in lab.files:
            source = (ROOT / rel).read_text(encoding="utf-8")
            lines = source.splitlines()
            starter_lines = texts[rel].splitlines()
            removed = 0  # lines the regions before this one lost: each region becomes one line
            for begin, end in starter.find_regions(source, rel):
                body = [normalize(line).strip() for line in lines[begin : end - 1]]
                # A line, and its code without a trailing comment (a page may quote the code alone).
                candidates = dict.fromkeys(c for line in body for c in (line, line.split(" # ")[0]))
                needles = tuple(n for n in candidates if len(n) >= MIN_NEEDLE and n not in shown)
                stub = normalize(starter_lines[begin - 1 - removed]).strip()
                found.append(Region(lab, rel, begin, end, needles, stub))
                removed += end - begin
    return tuple(found)


@pytest.fixture(scope="module")
def site_text(site) -> dict[str, str]:
    return {p.relative_to(site).as_posix(): readable_text(p) for p in text_files(site)}


def _where(site_text: dict[str, str], needle: str) -> list[str]:
    return [name for name, text in site_text.items() if needle in text]


def test_every_lab_region_has_needles_from_the_reference():
    found = regions()
    assert {r.lab.number for r in found} == {lab.number for lab in labs.discover()}, "a lab with no regions"
    for r in found:
        where = f"lab {r.lab.number}, {r.file}:{r.begin}-{r.end}"
        assert r.needles, f"{where}: no line of at least {MIN_NEEDLE} characters found only in the solution"
        reference = normalize((ROOT / r.file).read_text(encoding="utf-8"))
        starter_text = normalize(site_source(ROOT)[r.file])
        for needle in r.needles:
            assert needle in reference and needle not in starter_text, (where, needle)
        assert r.stub.startswith("raise NotImplementedError(") and r.stub in starter_text, (where, r.stub)


def test_the_site_shows_each_regions_stub(site_text):
    """The control: each lab region's function is on the site (its API page's source, or a guide), as
    the starter has it, and the search finds its code through the highlighting."""
    missing = [
        f"lab {r.lab.number}, {r.file}:{r.begin}: {r.stub}"
        for r in regions()
        if not _where(site_text, r.stub)
    ]
    assert not missing, "stubs not found on the site:\n" + "\n".join(missing)


def test_no_solution_line_on_the_site(site_text):
    leaks = [
        f"lab {r.lab.number}, {r.file}:{r.begin}-{r.end}: {needle!r} in {', '.join(where)}"
        for r in regions()
        for needle in r.needles
        if (where := _where(site_text, needle))
    ]
    assert not leaks, "the site shows lab solutions:\n" + "\n".join(leaks)


def test_no_solution_marker_on_the_site(site_text):
    found = [f"{marker!r} in {name}" for marker in MARKERS for name in _where(site_text, marker)]
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
