"""Connect's interactive API page in headless Chromium, with no network but loopback: a standalone
worker's REST server serves ``/docs`` (Swagger UI) with every script and stylesheet it loads; the
page lists every operation of the worker's OpenAPI schema and runs one against the worker's herder.
Every request the page makes that would leave the worker is blocked and recorded, and the test fails
if there is one."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request

import pytest

from kafka_lite.connect.runtime.rest.rest_server import RestServer
from kafka_lite.connect.runtime.standalone.standalone_herder import StandaloneHerder
from kafka_lite.connect.runtime.worker import Worker
from kafka_lite.connect.runtime.worker_config import StandaloneConfig
from kafka_lite.connect.storage.file_offset_backing_store import FileOffsetBackingStore

# The same worker as test_site's, so that with xdist one Chromium at a time runs on this machine.
pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]
JSON = "org.apache.kafka.connect.json.JsonConverter"
LOAD_TIMEOUT_MS = 15_000  # a page and Swagger UI's rendering of the schema, on a loaded machine


@pytest.fixture(scope="module")
def worker_url(tmp_path_factory):
    """A standalone worker's REST server on loopback, over a real herder with no connectors. No broker
    is needed: the herder reaches Kafka only when a connector's task starts, and none does here."""
    config = StandaloneConfig({
        "bootstrap.servers": "127.0.0.1:1",
        "key.converter": JSON, "value.converter": JSON,
        "internal.key.converter": JSON, "internal.value.converter": JSON,
        "offset.storage.file.filename": str(tmp_path_factory.mktemp("connect-docs") / "connect.offsets"),
        "rest.host.name": "127.0.0.1", "rest.port": "0",
    })  # fmt: skip
    herder = StandaloneHerder(Worker("connect-docs-test", config, FileOffsetBackingStore()))
    rest = RestServer(config)
    herder.start()
    rest.start(herder)
    yield rest.advertised_url().rstrip("/")
    rest.stop()
    herder.stop()


@pytest.fixture
def open_page(chromium_browser, worker_url):
    """Opens a path of the worker in a new page whose requests to anywhere but the worker are blocked
    and recorded; yields ``(open, requested, blocked, errors)``, every request's URL, the blocked
    ones and the page's console errors."""
    pages, requested, blocked, errors = [], [], [], []

    def block(route):
        blocked.append(route.request.url)
        route.abort()

    def open_(path: str):
        page = chromium_browser.new_page()
        pages.append(page)
        page.on("request", lambda r: requested.append(r.url))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.route(re.compile(f"^(?!{re.escape(worker_url)}/)"), block)
        page.goto(f"{worker_url}{path}", wait_until="commit")  # the test waits for what it looks for
        return page

    yield open_, requested, blocked, errors
    for page in pages:
        page.close()


def openapi_schema(worker_url: str) -> dict:
    with urllib.request.urlopen(f"{worker_url}/openapi.json", timeout=10) as response:
        return json.load(response)


def assert_only_the_worker_was_asked(worker_url: str, requested: list[str], blocked: list[str]) -> None:
    assert not blocked, f"the page asked for files outside the worker: {blocked}"
    assert requested and all(url.startswith(f"{worker_url}/") for url in requested), requested


def test_swagger_ui_lists_every_operation_and_runs_one_with_nothing_but_the_worker(open_page, worker_url):
    schema = openapi_schema(worker_url)
    operations = {(method.upper(), path) for path, item in schema["paths"].items() for method in item}
    # Opened at GET /connectors (Swagger UI's deep link, #/tag/operationId), so that it is unfolded.
    get_connectors = schema["paths"]["/connectors"]["get"]
    open_, requested, blocked, errors = open_page
    page = open_(f"/docs#/{get_connectors['tags'][0]}/{get_connectors['operationId']}")
    page.wait_for_load_state("load", timeout=LOAD_TIMEOUT_MS)  # the page's scripts and styles
    assert_only_the_worker_was_asked(worker_url, requested, blocked)
    page.wait_for_selector(".opblock-summary", timeout=LOAD_TIMEOUT_MS)
    shown = page.eval_on_selector_all(
        ".opblock-summary",
        """summaries => summaries.map(s => [
            s.querySelector('.opblock-summary-method').textContent.trim(),
            s.querySelector('.opblock-summary-path').textContent.replace(/\\u200b/g, '').trim()])""",
    )
    shown = {(method, path) for method, path in shown}
    assert ("GET", "/connectors") in shown
    assert shown == operations
    assert page.title() == "Kafka Connect REST API (kafka_lite) - Swagger UI"
    assert any(url.endswith("/swagger-ui-bundle.js") for url in requested), requested

    # "Try it out": the page asks the worker, whose herder has no connectors.
    operation = page.locator(f"#operations-{get_connectors['tags'][0]}-{get_connectors['operationId']}")
    operation.locator(".try-out__btn").click(timeout=LOAD_TIMEOUT_MS)
    operation.locator(".execute").click()
    status = operation.locator(".live-responses-table tr.response .response-col_status").first
    status.wait_for(timeout=LOAD_TIMEOUT_MS)
    assert status.inner_text().strip() == "200"
    body = operation.locator(".live-responses-table tr.response .response-col_description pre").first
    assert json.loads(body.inner_text()) == []
    assert f"{worker_url}/connectors" in requested
    assert_only_the_worker_was_asked(worker_url, requested, blocked)
    assert not errors, errors


def test_there_is_no_redoc_page(worker_url):
    """FastAPI's other page, ReDoc, is not served: its bundle fetches its maker's logo from a CDN."""
    with pytest.raises(urllib.error.HTTPError) as answer:
        urllib.request.urlopen(f"{worker_url}/redoc", timeout=10)
    assert answer.value.code == 404
