"""What the guides state about the code, checked against the code, and pages that point nowhere
outside the project."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from kafka_lite.server.kafka_config import CONFIG_DEF
from tests.docs.site import guide_pages

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[2]
PAGES = [
    *(page for page in guide_pages() if page.parent.name.startswith("ch")),
    *sorted((ROOT / "docs").glob("*.md")),
    ROOT / "README.md",
]


def test_pages_point_nowhere_outside_the_project():
    outside = re.compile(r"\bDESIGN\b|\bSTYLE\b|\.\./shared|\bshared/|project's book map")
    for page in PAGES:
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            assert not outside.search(line), f"{page.relative_to(ROOT)}:{number} points outside: {line}"


def test_ch01_times_a_leader_move_with_the_brokers_session_timeout():
    guide = (ROOT / "chapters" / "ch01_introduction" / "index.md").read_text(encoding="utf-8")
    timeout_ms = CONFIG_DEF.parse({"zookeeper.connect": "127.0.0.1:2181"})["zookeeper.session.timeout.ms"]
    assert f"`zookeeper.session.timeout.ms`, {timeout_ms} ms by" in " ".join(guide.split())
    assert f"about {timeout_ms // 1000} s" in " ".join(guide.split())
    # "which `cluster up` leaves as it is", and the ZooKeeper it starts grants that timeout.
    cluster = (ROOT / "kafka_lite" / "cli" / "cluster.py").read_text(encoding="utf-8")
    assert "zookeeper.session.timeout.ms=" not in cluster
    assert "tickTime=500" in cluster and "`tickTime=500`" in guide
    embedded = (ROOT / "kafka_lite" / "zk" / "embedded.py").read_text(encoding="utf-8")
    assert "maxSessionTimeout=60000" in embedded and "`maxSessionTimeout=60000`" in guide
    assert 2 * 500 <= timeout_ms <= 60000


def test_whatever_is_missing_is_in_the_last_section_of_a_guide():
    # The last section of the guide's own text; only its questions (included from questions.md,
    # tests/docs/test_exercises.py) come after it on the page.
    for guide in sorted((ROOT / "chapters").glob("ch*_*/index.md")):
        text = guide.read_text(encoding="utf-8")
        body, _, missing = text.partition("\n## Not yet in kafka_lite")
        assert missing, f"{guide.parent.name}: no 'Not yet in kafka_lite' section"
        assert "\n## " not in missing, f"{guide.parent.name}: a section after 'Not yet in kafka_lite'"
        questions = guide.parent / "questions.md"
        if questions.exists():
            body += questions.read_text(encoding="utf-8")
        # A split guide's other pages come before its index's last section too.
        for page in guide_pages():
            if page.parent == guide.parent and page != guide:
                assert "\n## Not yet in kafka_lite" not in page.read_text(encoding="utf-8"), page.name
                body += page.read_text(encoding="utf-8")
        for phrase in ("to come", "still to come", "(written)", ", written)", "comes with", "later)"):
            assert phrase not in body, f"{guide.parent.name}: {phrase!r} outside 'Not yet in kafka_lite'"


def test_a_split_guides_pages_each_have_a_title_and_lead_to_the_next_in_the_books_order():
    """A guide split into pages (chapter 6) reads in the order its index maps them: each page has
    its own title and ends by linking to the page before it and the one after it."""
    by_chapter: dict[Path, list[Path]] = {}
    for page in guide_pages():
        by_chapter.setdefault(page.parent, []).append(page)
    split = {folder: pages for folder, pages in by_chapter.items() if len(pages) > 1}
    assert ROOT / "chapters" / "ch06_storage" in split
    for folder, pages in split.items():
        assert pages[0].name == "index.md"
        titles = {}
        for page in pages:
            first = page.read_text(encoding="utf-8").splitlines()[0]
            assert first.startswith("# "), f"{folder.name}/{page.name}: no title on its first line"
            titles[page.name] = first.removeprefix("# ")
        for i, page in enumerate(pages[1:], 1):
            last = [line for line in page.read_text(encoding="utf-8").splitlines() if line.strip()][-1]
            expected = f"Previous: [{titles[pages[i - 1].name]}]({pages[i - 1].name})"
            if i + 1 < len(pages):
                expected += f" · Next: [{titles[pages[i + 1].name]}]({pages[i + 1].name})"
            assert last == expected, f"{folder.name}/{page.name}: ends {last!r}"


def test_no_two_sources_become_the_same_page():
    """MkDocs builds ``log.md`` and ``log.ipynb`` of one folder into the same ``log.html``, the one
    overwriting the other without a warning; a guide's page must not share a notebook's name."""
    docs = ROOT / "docs"
    pages: dict[str, list[str]] = {}
    # chapters/ and labs/ are symlinks into the repository, which rglob does not follow
    sources = [Path(d) / name for d, _, names in os.walk(docs, followlinks=True) for name in names]
    for source in sorted(sources):
        if source.suffix not in (".md", ".ipynb") or source.name == "questions.md":
            continue
        rel = source.relative_to(docs)
        if ".ipynb_checkpoints" in rel.parts:
            continue
        stem = "index" if source.stem in ("index", "README") else source.stem
        pages.setdefault(rel.with_name(f"{stem}.html").as_posix(), []).append(rel.as_posix())
    assert "chapters/ch06_storage/reads_and_writes.html" in pages  # the walk sees the chapters
    clashes = {page: sources for page, sources in pages.items() if len(sources) > 1}
    assert not clashes, f"sources built into one page: {clashes}"
