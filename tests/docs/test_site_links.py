"""Every link on the built site resolves: each internal href/src names a file of the site, each #anchor an
id on its target page, and no link starts at the server's root or leaves the site.

``mkdocs build --strict`` checks the links written in the guides' markdown; this check covers what it
cannot see: the theme's own links (``404.html``), the links inside notebooks' cells, and the tables
of contents made from notebooks.
"""

from __future__ import annotations

import os
import shutil

import pytest

from tests.docs.site import broken_links, page_links

pytestmark = pytest.mark.docs


def test_no_broken_link_on_the_site(site):
    problems = broken_links(site)
    assert not problems, f"{len(problems)} broken links:\n" + "\n".join(problems)


def test_the_check_sees_every_kind_of_link(site):
    """The link check is only as good as what it reads: the pages it walks hold links into other
    pages, to anchors, to assets, from notebooks' cells and from 404.html."""
    links = {
        path.relative_to(site).as_posix(): {value for _, _, value in page_links(path).links}
        for path in site.rglob("*.html")
    }
    assert len(links) >= 25, sorted(links)
    every = set().union(*links.values())
    assert any("#" in v and not v.startswith("#") for v in every), "no link to another page's anchor"
    assert any(v.startswith("#") and len(v) > 1 for v in every), "no link to an anchor on its own page"
    assert any(v.endswith(".css") for v in every) and any(v.endswith(".js") for v in every)
    assert "../../labs/lab04_processor/index.html" in links["chapters/ch02_producer/socket_server.html"]
    assert "assets/images/favicon.png" in {v.removeprefix("./") for v in links["404.html"]}


@pytest.mark.parametrize(
    ("link", "why"),
    [
        ("chapters/ch06_storage/index.html#no-such-heading", "no element with id"),
        ("chapters/no_such_page.html", "no such file"),
        ("/assets/images/favicon.png", "server's root"),
        ("https://example.com/", "leaves the site"),
        ("chapters/ch06_storage/", "names a directory"),
    ],
)
def test_the_check_finds_a_broken_link(site, tmp_path, link, why):
    """The check fails on each kind of broken link, put on a copy of the home page. (The copy's files
    are hard links to the site's; its home page is a file of its own.)"""
    copy = shutil.copytree(site, tmp_path / "site", copy_function=os.link)
    index = (copy / "index.html").read_text(encoding="utf-8")
    (copy / "index.html").unlink()
    (copy / "index.html").write_text(
        index.replace("</body>", f'<a href="{link}">x</a></body>'), encoding="utf-8"
    )
    problems = broken_links(copy, ["index.html"])
    assert len(problems) == 1 and why in problems[0], problems
