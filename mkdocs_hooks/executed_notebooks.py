"""MkDocs hook: notebook pages rendered from copies executed before the build.

No Kafka twin: docs tooling. mkdocs-jupyter executes each notebook while it renders its page, one
after another. The test suite executes them beforehand, shared among the workers that wait for
the site (``tests/docs/site.py``), and names the folder of the executed copies in
``$KAFKA_LITE_EXECUTED_NOTEBOOKS``. With it set, this hook turns mkdocs-jupyter's execution off
and renders each page from its executed copy; the notebook offered for download beside the page
stays the one in the repository, with no outputs.
A notebook with no executed copy (the Spark labs', shown unrun) is rendered from its source.
"""

from __future__ import annotations

import os
from pathlib import Path

ENV = "KAFKA_LITE_EXECUTED_NOTEBOOKS"
_sources: dict[str, str] = {}  # page's source path -> the repository's notebook, while it renders


def _executed() -> Path | None:
    folder = os.environ.get(ENV)
    return Path(folder) if folder else None


def on_config(config):
    if _executed() is not None:
        config["plugins"]["mkdocs-jupyter"].config["execute"] = False
    return config


def on_pre_page(page, config, files):
    folder = _executed()
    if folder is None or not page.file.src_uri.endswith(".ipynb"):
        return page
    copy = folder / page.file.src_uri
    if copy.is_file():
        _sources[page.file.src_uri] = page.file.abs_src_path
        page.file.abs_src_path = str(copy)
    return page


def on_page_content(html, page, config, files):
    # Rendered: the download copied after this point is the repository's notebook.
    source = _sources.pop(page.file.src_uri, None)
    if source is not None:
        page.file.abs_src_path = source
    return html
