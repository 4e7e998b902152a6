"""The browser tier's one headless Chromium, shared by its modules (they run on one xdist worker)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

# Chromium's headless shell (scripts/bootstrap installs it): the same engine as the browser, without
# the browser's windows, as Playwright runs Chromium headless.
CHROMIUM = shutil.which("chromium-headless-shell") or "/usr/bin/chromium-headless-shell"


@pytest.fixture(scope="session")
def chromium_browser():
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists(), "Chromium's headless shell is missing: run scripts/bootstrap"
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run"],
        )  # fmt: skip
        yield browser
        browser.close()
