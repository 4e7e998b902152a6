"""The built site in headless Chromium: pages load without console errors, broken images or any
request leaving the machine; the sidebar lists every page; diagrams and notebook outputs fit the page
and stay readable; search works; and all of it works opened from disk (file://) as well as served."""

from __future__ import annotations

import functools
import http.server
import re
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from tests.docs.site import guide_pages

# One worker runs the module, so that one Chromium and one set of page loads serve every test.
pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]
ROOT = Path(__file__).resolve().parents[2]
DESKTOP = {"width": 1280, "height": 900}  # wide enough for mkdocs-material's sidebar (>= 76.25em)
PHONE = {"width": 480, "height": 900}
MIN_TEXT_PX = 9.5  # the smallest diagram label, in CSS pixels, a reader can still read
# Chapter 6's guide, split into a landing page and a page per section group of the book.
STORAGE_PAGES = ("index", "message_formats", "log", "reads_and_writes", "delayed_operations")
# A guide page's height at DESKTOP width, as served (lab code folded): a guide longer than this is
# split into a landing page and a page per section group, as chapter 6's is.
MAX_GUIDE_PAGE_PX = 30_000
OPEN_AT_ONCE = 3  # pages loading at the same time in ``looks.open_ahead``


@pytest.fixture(scope="module")
def site_url(site):
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}", site
    server.shutdown()
    server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def _open(browser, base, path, viewport=DESKTOP, search=False):
    """Open ``base/path`` with every request that does not start with ``base`` blocked and recorded
    (``_start``), and wait until it has loaded (``_finish``)."""
    opening = _start(browser, base, path, viewport, search)
    _finish(opening[0])
    return opening


def _start(browser, base, path, viewport=DESKTOP, search=False):
    """Start loading ``base/path`` in a new page and return as soon as the navigation is under way:
    ``(page, problems, blocked)``, the last two filled as the page reports console errors and
    requests that would leave ``base``.

    Unless ``search``, the theme's search worker is served empty: on every page it builds the index
    of the whole site (with the Chinese pipeline) while its script's request stays open, so waiting
    for the network to go idle would wait seconds per page for a search no test but the search tests
    (which ask for it) uses."""
    page = browser.new_page(viewport=viewport)
    problems, blocked = [], []
    page.on(
        "console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None
    )
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))

    def block(r):
        blocked.append(r.request.url)
        r.abort()

    # Only requests leaving ``base`` are routed here: a pattern (unlike a function) is matched in the
    # browser's driver, so the page's own requests are not each held for a round trip to this process.
    page.route(re.compile(f"^(?!{re.escape(base)})"), block)
    if not search:  # after the route above: the handler added last is asked first
        page.route(
            f"{base}/assets/javascripts/workers/search.*.js",
            lambda r: r.fulfill(status=200, content_type="text/javascript", body=""),
        )
    page.goto(f"{base}/{path}", wait_until="commit")
    return page, problems, blocked


def _finish(page) -> None:
    """Wait until the page has loaded: the network idle (no request for half a second, so a late
    request would have been seen) and the load event. Network idle is not a parsed page: on a loaded
    machine the parser can still be working through a long guide after its last byte arrived; the
    load event comes after the whole document."""
    page.wait_for_load_state("networkidle")
    page.wait_for_load_state("load")


def _broken_images(page) -> list[str]:
    return page.eval_on_selector_all(
        "img", "imgs => imgs.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src)"
    )


def _pages(site: Path, pattern: str) -> list[str]:
    return sorted(p.relative_to(site).as_posix() for p in site.glob(pattern))


def _notebook_pages(site: Path) -> list[str]:
    # the pages made from a chapter's notebooks (a chapter may have Markdown pages beside its guide)
    return [p for p in _pages(site, "chapters/*/*.html") if (ROOT / p).with_suffix(".ipynb").exists()]


def _pages_with_diagrams(site: Path) -> list[str]:
    return [p for p in _pages(site, "**/*.html") if "diagrams/" in (site / p).read_text(encoding="utf-8")]


def _page_width(page) -> tuple[int, int]:
    """The page's width and the window's, once the page is no wider than the window or 5 s have
    passed: the theme's header slides its title in after load, overhanging the window meanwhile."""
    fits = "document.documentElement.scrollWidth <= window.innerWidth"
    try:
        page.wait_for_function(fits, timeout=5_000)
    except PlaywrightTimeoutError:
        pass
    return tuple(page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]"))


def _search(page, term: str) -> int:
    page.keyboard.press("/")
    page.keyboard.type(term)
    page.wait_for_selector(".md-search-result__item", timeout=15_000)
    return page.locator(".md-search-result__item").count()


@dataclass
class Look:
    """What a page showed at one width: the tests below read these instead of each opening the page
    again (a notebook page with its outputs takes seconds to load and lay out)."""

    path: str
    title: str
    article: str
    problems: list[str]
    blocked: list[str]
    height: int
    width: tuple[int, int]
    diagrams: list[dict]
    tables: list[dict]
    outputs: int
    broken_images: list[str]


def _look(page, path: str, problems: list[str], blocked: list[str]) -> Look:
    width = _page_width(page)  # first: it waits for the header to settle
    article = page.locator("article")
    return Look(
        path,
        title=page.title(),
        article=article.first.inner_text() if article.count() else "",
        problems=list(problems),
        blocked=list(blocked),
        height=page.evaluate("document.documentElement.scrollHeight"),
        width=width,
        diagrams=page.eval_on_selector_all("img[src*='diagrams/']", _DIAGRAM_GEOMETRY),
        tables=page.eval_on_selector_all(".jp-OutputArea-output", _OUTPUT_TABLES),
        outputs=page.locator(".jp-OutputArea-output, .output_area, .jp-RenderedText").count(),
        broken_images=_broken_images(page),
    )


@pytest.fixture(scope="module")
def looks(chromium_browser, site_url):
    """``looks(path, viewport)``: the page's ``Look``, taken on first asking and kept. A page is loaded
    once: another width is the same page with its window resized, as a reader turning a tablet sees
    it, so the layout is redone and the page is not fetched and parsed again.

    ``looks.open_ahead(paths)`` starts loading the pages a test is about to look at, a few at a time.
    A page spends much of its load waiting (for its scripts, for its network to go quiet), and
    Chromium loads the next ones meanwhile."""
    opened: dict[str, tuple] = {}
    loaded: set[str] = set()
    seen: dict[tuple[str, int], Look] = {}

    def look(path: str, viewport: dict = DESKTOP) -> Look:
        key = (path, viewport["width"])
        if key not in seen:
            if path not in opened:
                opened[path] = _start(chromium_browser, site_url[0], path, viewport)
            page, problems, blocked = opened[path]
            if path not in loaded:
                _finish(page)
                loaded.add(path)
            if page.viewport_size != viewport:
                page.set_viewport_size(viewport)
            seen[key] = _look(page, path, problems, blocked)
        return seen[key]

    def open_ahead(paths: list[str], at_once: int = OPEN_AT_ONCE) -> None:
        waiting = [p for p in dict.fromkeys(paths) if p not in opened]
        for i, path in enumerate(waiting):
            opened[path] = _start(chromium_browser, site_url[0], path)
            if i >= at_once - 1:  # keep at most ``at_once`` pages loading
                earlier = waiting[i - at_once + 1]
                _finish(opened[earlier][0])
                loaded.add(earlier)

    look.open_ahead = open_ahead
    yield look
    for page, _, _ in opened.values():
        page.close()


CLEAN_PAGES = [
    "index.html", "chapters/ch06_storage/index.html", "chapters/ch06_storage/message_formats.html",
    "chapters/ch06_storage/log.html", "chapters/ch06_storage/replication.html",
    "chapters/ch06_storage/delayed_operations.html", "api/record.html", "labs/lab01_record_batch/index.html",
    "benchmarks.html", "404.html",
]  # fmt: skip


@pytest.mark.parametrize("path", CLEAN_PAGES)
def test_page_loads_cleanly(looks, path):
    looks.open_ahead(CLEAN_PAGES)
    look = looks(path)
    assert look.title, f"{path}: no title"
    assert not look.problems, look.problems
    assert not look.blocked, f"requests left the machine: {look.blocked}"
    assert not look.broken_images, look.broken_images


def test_sidebar_lists_every_page(chromium_browser, site_url):
    """Every page is reachable from the sidebar, and each chapter and lab shows there by its own title
    (with navigation.indexes a section's index page can swallow a chapter or a lab)."""
    base, site = site_url
    page, problems, _ = _open(chromium_browser, base, "index.html")
    sidebar = page.locator(".md-sidebar--primary")
    for title in ("1. Getting started", "3. The old consumer", "10. Advanced features", "Lab 1:", "Lab 4:"):
        entry = sidebar.locator(".md-nav__link", has_text=title).first
        assert entry.count() and entry.is_visible(), f"the sidebar does not show {title!r}"
    hrefs = page.eval_on_selector_all(
        ".md-sidebar--primary a.md-nav__link[href]", "links => links.map(a => a.href)"
    )
    linked = set(hrefs)
    # Chapter 6's guide pages, in the book's order, its index first (the section's own link).
    storage = [h.rsplit("/", 1)[1].removesuffix(".html") for h in hrefs if "/chapters/ch06_storage/" in h]
    assert [n for n in dict.fromkeys(storage) if n in STORAGE_PAGES] == list(STORAGE_PAGES), storage
    pages = {f"{base}/{p}" for p in _pages(site, "**/*.html") if p != "404.html"}
    assert not pages - linked, f"pages the sidebar does not link to: {sorted(pages - linked)}"
    assert not problems, problems
    page.close()


def test_no_guide_page_is_too_long_to_find_ones_way_in(looks):
    """A guide's page is a length a reader can find their way in: every chapter's index, and the
    pages a split guide (chapter 6) is made of."""
    guides = [page.relative_to(ROOT).with_suffix(".html").as_posix() for page in guide_pages()]
    assert "chapters/ch06_storage/log.html" in guides and len(guides) >= 15, guides
    looks.open_ahead(guides)
    heights = {}
    for path in guides:
        look = looks(path)
        assert not look.problems, (path, look.problems)
        heights[path] = look.height
    too_long = {path: h for path, h in heights.items() if h > MAX_GUIDE_PAGE_PX}
    assert not too_long, f"guide pages taller than {MAX_GUIDE_PAGE_PX}px: {too_long} (all: {heights})"


def test_guide_shows_generated_diagrams(looks):
    sizes, articles = {}, {}
    looks.open_ahead([f"chapters/ch06_storage/{name}.html" for name in STORAGE_PAGES])
    for name in STORAGE_PAGES:
        look = looks(f"chapters/ch06_storage/{name}.html")
        assert not look.problems, (name, look.problems)
        sizes[name] = [d["natural"] for d in look.diagrams]
        articles[name] = look.article
    # record batch; segment; replication, one round of replication; timing wheel
    assert {name: len(s) for name, s in sizes.items()} == {
        "index": 0, "message_formats": 1, "log": 1, "reads_and_writes": 2, "delayed_operations": 1,
    }, sizes  # fmt: skip
    assert all(w > 0 for s in sizes.values() for w in s), sizes
    assert "def _maybe_roll" in articles["log"]  # code included from the source by snippet markers
    for name, article in articles.items():  # a lab's code is the reference, folded, never a stub
        assert "NotImplementedError" not in article, name


def test_a_reference_block_opens_to_the_code(chromium_browser, site_url):
    """The code a lab asks for is on the guide folded: hidden until the reader opens its block."""
    page, problems, _ = _open(chromium_browser, site_url[0], "chapters/ch06_storage/log.html")
    block = page.locator("details.reference", has_text="lab 2 asks you to write this").first
    code = block.locator("pre").first
    assert block.count() and block.is_visible(), "no reference block for lab 2"
    assert not code.is_visible(), "the reference block is open before the reader opens it"
    assert "physical_position" not in page.inner_text("article")
    block.locator("summary").click()
    code.wait_for(state="visible", timeout=5_000)
    assert "def append" in code.inner_text() and "physical_position" in code.inner_text()
    assert block.locator(".code-caption").inner_text().startswith("kafka_lite/log/log_segment.py, lines ")
    assert not problems, problems
    page.close()


# Each diagram: where its box and the image sit against the column, and how large its smallest label is
# drawn (graphviz gives sizes in points: a label of font-size f in an SVG w pt wide, drawn W px wide,
# is f * W / w px tall).
_DIAGRAM_GEOMETRY = """
async imgs => Promise.all(imgs.map(async img => {
  const svg = new DOMParser().parseFromString(await (await fetch(img.src)).text(), "image/svg+xml");
  const points = parseFloat(svg.documentElement.getAttribute("width"));
  const fonts = [...svg.querySelectorAll("[font-size]")].map(e => parseFloat(e.getAttribute("font-size")));
  const box = img.closest(".diagram") || img;
  const column = img.closest(".md-content__inner").getBoundingClientRect();
  const b = box.getBoundingClientRect(), i = img.getBoundingClientRect();
  return {src: img.src.split("/").pop(), boxLeft: b.left, boxRight: b.right, colLeft: column.left,
          colRight: column.right, width: i.width, natural: img.naturalWidth,
          smallest: Math.min(...fonts) * i.width / points};
}))
"""


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_diagrams_fit_their_column_and_stay_readable(looks, site_url, viewport):
    pages = _pages_with_diagrams(site_url[1])
    assert len(pages) >= 3, pages
    looks.open_ahead(pages)
    seen = []
    for path in pages:
        look = looks(path, viewport)
        assert not look.problems, (path, look.problems)
        for d in look.diagrams:
            seen.append(d["src"])
            where = f"{path}: {d['src']} at {viewport['width']}px"
            assert d["colLeft"] - 1 <= d["boxLeft"] and d["boxRight"] <= d["colRight"] + 1, (
                f"{where}: the diagram overflows its column ({d})"
            )
            assert d["width"] <= d["natural"] + 1, f"{where}: drawn larger than its own size ({d})"
            assert d["smallest"] >= MIN_TEXT_PX, (
                f"{where}: its smallest label is drawn {d['smallest']:.1f}px tall (< {MIN_TEXT_PX}px): {d}"
            )
        width = look.width
        assert width[0] <= width[1], f"{path} at {viewport['width']}px: the page is {width[0]}px wide"
    assert len(seen) >= 5, f"diagrams found on {pages}: {seen}"


def test_notebook_pages_render_outputs(looks, site_url):
    # The Spark labs' notebooks are shown unrun (mkdocs.yml's execute_ignore): they are for working in.
    pages = [p for p in _notebook_pages(site_url[1]) if not p.startswith("chapters/data_pipeline/lab")]
    assert len(pages) >= 5, f"notebook pages in the built site: {pages}"
    looks.open_ahead(pages)
    for path in pages:
        look = looks(path)
        assert not look.problems and not look.blocked, (path, look.problems, look.blocked)
        assert not look.broken_images, (path, look.broken_images)
        assert look.outputs > 0, f"{path}: no outputs"


# Each text output that draws a table: how many rows its first line was broken into, whether its
# box scrolls sideways, how many characters its top line has and how many the box shows.
_OUTPUT_TABLES = """
outs => outs.filter(o => /[┏┌╭]/.test(o.textContent)).map(o => {
  const pre = o.querySelector("pre"), walker = document.createTreeWalker(pre, NodeFilter.SHOW_TEXT);
  let node = walker.nextNode();
  while (node && !/[┏┌╭]/.test(node.data)) node = walker.nextNode();
  const start = node.data.search(/[┏┌╭]/), end = node.data.indexOf("\\n", start);
  const range = document.createRange();
  range.setStart(node, start);
  range.setEnd(node, end < 0 ? node.data.length : end);
  const scrolls = [o, pre].some(e => e.scrollWidth > e.clientWidth + 1);
  const chars = (end < 0 ? node.data.length : end) - start;
  const charWidth = range.getBoundingClientRect().width / chars;
  return {rows: range.getClientRects().length, scrolls, chars,
          fit: Math.floor(Math.min(o.clientWidth, pre.clientWidth) / charWidth),
          top: node.data.slice(start, start + 20)};
})
"""


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_notebook_tables_fit_the_page(looks, site_url, viewport):
    """A table a notebook prints keeps each row on one line, and the page never scrolls sideways: an
    output wider than its column scrolls inside its own box. On a desktop every table fits its box,
    whole (a column the reader is asked to predict must not be scrolled out of sight); on a phone
    some table must need the scroll, or the check would show nothing."""
    tables = scrolling = 0
    looks.open_ahead(_notebook_pages(site_url[1]))
    for path in _notebook_pages(site_url[1]):
        look = looks(path, viewport)
        width = look.width
        assert width[0] <= width[1], f"{path} at {viewport['width']}px: the page is {width[0]}px wide"
        for table in look.tables:
            tables += 1
            scrolling += table["scrolls"]
            assert table["rows"] == 1, (
                f"{path} at {viewport['width']}px: a table's top line {table['top']!r}... is broken "
                f"into {table['rows']} lines"
            )
            if viewport is DESKTOP:
                assert table["chars"] <= table["fit"], (
                    f"{path} at {viewport['width']}px: a table ({table['top']!r}...) is {table['chars']} "
                    f"characters wide, its box shows {table['fit']}: print it narrower"
                )
    assert tables >= 5, f"only {tables} printed tables in the notebooks"
    if viewport is PHONE:
        assert scrolling, "no printed table is wider than its column at this width: the check shows nothing"


def test_search_finds_a_term(chromium_browser, site_url):
    page, problems, _ = _open(chromium_browser, site_url[0], "index.html", search=True)
    assert _search(page, "compaction") > 0
    assert not problems, problems
    page.close()


def test_site_works_opened_from_disk(chromium_browser, site_url):
    """Opened as files: the pages, their links and the search work without a server or a network."""
    _, site = site_url
    base = site.resolve().as_uri()
    page, problems, blocked = _open(chromium_browser, base, "index.html", search=True)
    assert not _broken_images(page)
    page.locator(".md-sidebar--primary a.md-nav__link", has_text="6. Storage").first.click()
    page.wait_for_load_state("load")
    assert page.url == f"{base}/chapters/ch06_storage/index.html", page.url
    assert "Storage" in page.title() and not _broken_images(page)
    styled = page.evaluate("getComputedStyle(document.querySelector('.md-header')).position")
    assert styled in {"sticky", "fixed"}, "the theme's stylesheet did not load"
    assert _search(page, "compaction") > 0
    page.locator(".md-search-result__item a").first.click()
    page.wait_for_load_state("load")
    assert re.match(rf"{re.escape(base)}/.+\.html", page.url), page.url
    assert not problems, problems
    assert not blocked, f"requests left the disk: {blocked}"
    page.close()
