"""MkDocs hook: the notebook pages share one stylesheet, fetched once, instead of each carrying it.

No Kafka twin: docs tooling. mkdocs-jupyter's template opens every notebook page's content with
JupyterLab's theme as inline ``<style>`` blocks, over half a megabyte, the same on every page. At
``on_page_content`` this hook takes the blocks that come before the notebook's cells (the
``jupyter-wrapper`` element; a cell's own output may carry a ``<style>`` of its own, which stays)
and writes their text, in order, as ``assets/stylesheets/notebook-<hash>.css``, linked where the
first block was. The hash is of the text, so two pages share the file only if their styles are the
same. The link stands where the blocks stood, so the cascade is unchanged.

A reader's browser then fetches and parses the theme once for all the notebook pages, and the
build's search pass and every check that reads the site's pages do not read it twenty times over.
At ``on_post_build`` each stylesheet is written into the site.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from mkdocs.utils import get_relative_url

FOLDER = "assets/stylesheets"
CELLS = '<div class="jupyter-wrapper">'
_STYLE = re.compile(r"<style[^>]*>(.*?)</style>\s*", re.DOTALL)

_sheets: dict[str, str] = {}  # file name in FOLDER -> stylesheet, for on_post_build


def on_page_content(html, page, config, files):
    cells = html.find(CELLS)
    if not page.file.src_uri.endswith(".ipynb") or cells < 0:
        return html
    head = html[:cells]
    blocks = list(_STYLE.finditer(head))
    if not blocks:
        return html
    css = "\n".join(block[1].strip() for block in blocks) + "\n"
    name = f"notebook-{hashlib.sha256(css.encode()).hexdigest()[:12]}.css"
    _sheets[name] = css
    link = f'<link rel="stylesheet" href="{get_relative_url(f"{FOLDER}/{name}", page.url)}">\n'
    rest = _STYLE.sub("", head[blocks[0].start() :])
    return head[: blocks[0].start()] + link + rest + html[cells:]


def on_post_build(config):
    folder = Path(config.site_dir) / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    for name, css in _sheets.items():
        (folder / name).write_text(css, encoding="utf-8")
