"""The built site in headless Chromium: pages load without console errors, broken images or any
request leaving the machine, and search works."""

from __future__ import annotations

import functools
import http.server
import shutil
import threading
from pathlib import Path

import pytest

from tests.docs.site import build_site

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


@pytest.fixture(scope="module")
def site_url(tmp_path_factory):
    out = build_site(tmp_path_factory.mktemp("site"))
    handler = functools.partial(_QuietHandler, directory=str(out))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}", out
    server.shutdown()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def chromium_browser():
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists(), "Chromium is missing: run scripts/bootstrap"
    with sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run"],
        )  # fmt: skip
        yield b
        b.close()


def _open(browser, site_url, path):
    base, _ = site_url
    page = browser.new_page()
    problems, blocked = [], []
    page.on(
        "console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None
    )
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))

    def route(r):
        if r.request.url.startswith(base):
            r.continue_()
        else:
            blocked.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    page.goto(f"{base}/{path}", wait_until="networkidle")
    return page, problems, blocked


def _broken_images(page) -> list[str]:
    return page.eval_on_selector_all(
        "img", "imgs => imgs.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src)"
    )


def _notebook_pages(site_url) -> list[str]:
    _, out = site_url
    return sorted(str(p.parent.relative_to(out)) + "/" for p in out.glob("chapters/*/*/index.html"))


@pytest.mark.parametrize(
    "path", ["", "chapters/ch06_storage/", "api/record/", "labs/lab01_record_batch/", "benchmarks/"]
)
def test_page_loads_cleanly(chromium_browser, site_url, path):
    page, problems, blocked = _open(chromium_browser, site_url, path)
    assert page.title(), f"{path}: no title"
    assert not problems, problems
    assert not blocked, f"requests left the machine: {blocked}"
    assert not _broken_images(page), _broken_images(page)
    page.close()


def test_guide_shows_generated_diagrams(chromium_browser, site_url):
    page, problems, _ = _open(chromium_browser, site_url, "chapters/ch06_storage/")
    assert not problems, problems
    sizes = page.eval_on_selector_all("img[src*='diagrams/']", "imgs => imgs.map(i => i.naturalWidth)")
    assert len(sizes) == 2 and all(w > 0 for w in sizes), sizes
    assert "def append" in page.inner_text("article")  # code included from the source by snippet markers
    page.close()


def test_notebook_pages_render_outputs(chromium_browser, site_url):
    pages = _notebook_pages(site_url)
    assert pages, "no notebook pages in the built site"
    for path in pages:
        page, problems, blocked = _open(chromium_browser, site_url, path)
        assert not problems and not blocked, (path, problems, blocked)
        assert not _broken_images(page)
        assert page.locator(".jp-OutputArea-output, .output_area, .jp-RenderedText").count() > 0, (
            f"{path}: no outputs"
        )
        page.close()


def test_search_finds_a_term(chromium_browser, site_url):
    page, problems, _ = _open(chromium_browser, site_url, "")
    page.keyboard.press("/")
    page.keyboard.type("compaction")
    page.wait_for_selector(".md-search-result__item", timeout=15_000)
    assert page.locator(".md-search-result__item").count() > 0
    assert not problems, problems
    page.close()
