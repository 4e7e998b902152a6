"""The docs site builds with ``mkdocs build --strict`` (broken links, anchors or snippets fail it),
executing the chapter notebooks and drawing the diagrams from the code."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.docs.site import guide_pages

pytestmark = pytest.mark.docs
ROOT = Path(__file__).resolve().parents[2]
STORAGE = ("index", "message_formats", "log", "reads_and_writes", "delayed_operations")


def test_every_chapter_has_a_page(site):
    chapters = sorted(p.name for p in (ROOT / "chapters").iterdir() if p.is_dir())
    assert {"ch02_producer", "ch04_new_consumer", "ch06_storage", "ch07_controller", "ch09_streams"} <= set(
        chapters
    )
    for name in chapters:
        page = site / "chapters" / name / "index.html"
        assert page.exists(), f"no page for {name}"
        assert "Chapter" in page.read_text(encoding="utf-8")


def test_diagrams_are_rendered_svg(site):
    for name in ("record_batch_v2", "segment_with_index"):
        svg = (site / "diagrams" / f"{name}.svg").read_text(encoding="utf-8")
        assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    assert "baseOffset" in (site / "diagrams" / "record_batch_v2.svg").read_text(encoding="utf-8")


def test_notebooks_are_executed_into_pages(site):
    page = (site / "chapters" / "ch06_storage" / "record_batch.html").read_text(encoding="utf-8")
    assert "RecordBatch v2" in page  # output of an executed cell, not just the source


def test_snippet_markers_named_in_guides_exist():
    found = 0
    for guide in guide_pages():
        text = guide.read_text(encoding="utf-8")
        # A formatter once rewrote these lines as Python ("--8 < --"); such a line includes nothing.
        assert not re.search(r"--8\s+<", text), f"{guide}: a mangled snippet line"
        for path, section in re.findall(r'--8<-- "([^":]+):([^"]+)"', text):
            source = (ROOT / path).read_text(encoding="utf-8")
            assert f"[start:{section}]" in source and f"[end:{section}]" in source, (
                f"{guide}: {path}:{section}"
            )
            found += 1
    assert found >= 10, f"only {found} snippets found in the guides"


def test_snippets_bring_the_code_into_the_page(site):
    pages = {
        name: (site / "chapters" / "ch06_storage" / f"{name}.html").read_text(encoding="utf-8")
        for name in STORAGE
    }
    for name, page in (
        ("ensure_valid", "message_formats"),
        ("append", "log"),
        ("_index_slot_for", "log"),
        ("should_retain", "log"),
        ("try_complete", "delayed_operations"),
    ):
        assert f'<span class="nf">{name}</span>' in pages[page], (
            f"the code of {name} is not on the storage page {page}"
        )


def test_the_storage_guide_is_a_landing_page_and_a_page_per_section_group(site):
    """Chapter 6's guide, too long for one page, is its index (the map, the book's sections, the
    differences and what is missing, the questions) and one page per group of the book's sections."""
    assert [p.relative_to(ROOT).as_posix() for p in guide_pages() if p.parent.name == "ch06_storage"] == [
        f"chapters/ch06_storage/{name}.md" for name in STORAGE
    ]
    pages = {
        name: (site / "chapters" / "ch06_storage" / f"{name}.html").read_text(encoding="utf-8")
        for name in STORAGE
    }
    index = pages["index"]
    for name in STORAGE[1:]:
        assert f'href="{name}.html"' in index, f"the chapter's index does not link to {name}"
    for heading in ("Where kafka_lite differs from Kafka", "Not yet in kafka_lite", "Questions"):
        assert f">{heading}<" in index, heading
    # Each section group is on its own page, and on no other: the id of its first heading.
    for name, anchor in (
        ("message_formats", "v0-and-v1-every-message-stands-alone"),
        ("log", "612-writing-to-the-log"),
        ("reads_and_writes", "leader-epochs-kafka-011"),
        ("delayed_operations", "the-hierarchical-timing-wheel"),
    ):
        assert f'id="{anchor}"' in pages[name], (name, anchor)
        assert all(f'id="{anchor}"' not in pages[other] for other in STORAGE if other != name), anchor


def test_tables_generated_from_the_code(site):
    protocol = (site / "chapters" / "ch02_producer" / "index.html").read_text(encoding="utf-8")
    assert (
        "InitProducerId" in protocol and "OffsetsForLeaderEpoch" in protocol and "generated:" not in protocol
    )
    storage = (site / "chapters" / "ch06_storage" / "log.html").read_text(encoding="utf-8")
    assert "min.cleanable.dirty.ratio" in storage and "generated:" not in storage
    acls = (site / "chapters" / "ch11_security" / "authorization.html").read_text(encoding="utf-8")
    assert "generated:" not in acls
    assert "<td>LeaderAndIsr</td>" in acls and "CLUSTER_AUTHORIZATION_FAILED" in acls


def test_notebook_pages_link_one_shared_stylesheet_instead_of_inlining_it(site):
    """mkdocs-jupyter's JupyterLab theme is a file the notebook pages share
    (mkdocs_hooks/notebook_styles.py), not half a megabyte inlined into each."""
    pages = [
        p for p in (site / "chapters").rglob("*.html") if 'class="jupyter-wrapper"' in p.read_text("utf-8")
    ]
    assert len(pages) >= 15, pages
    linked = set()
    for page in pages:
        html = page.read_text(encoding="utf-8")
        head = html[: html.index('<div class="jupyter-wrapper">')]
        assert "<style" not in head[head.index("<body") :], f"{page}: the theme is still inline"
        linked |= set(re.findall(r'href="(?:\.\./)*(assets/stylesheets/notebook-\w+\.css)"', head))
    assert len(linked) == 1, linked  # one theme, so one file for every page
    sheet = (site / linked.pop()).read_text(encoding="utf-8")
    assert ".jupyter-wrapper" in sheet and len(sheet) > 100_000


def test_source_views_name_the_repositorys_file_and_stay_out_of_the_search_index(site):
    """An API page's "Source code in" names kafka_lite/..., not the build's copy, and the views'
    code is not in the search index (mkdocs_hooks/api_source.py); the docstrings above them are."""
    page = (site / "api" / "record.html").read_text(encoding="utf-8")
    views = page.count('<details class="mkdocstrings-source" data-search-exclude>')
    assert views >= 10 and page.count("<summary>Source code in <code>") == views, views
    assert "Source code in <code>kafka_lite/common/record/default_record_batch.py</code>" in page
    assert ".cache/site-source" not in page
    index = (site / "search" / "search_index.json").read_text(encoding="utf-8")
    assert "Source code in" not in index
    assert "A read-only view of one v2 batch" in index  # DefaultRecordBatch's docstring
