"""MkDocs hook: links that work wherever the site is opened, the disk included.

No Kafka twin: docs tooling. Three kinds of link escape MkDocs' own checks:

- ``404.html`` is rendered with links from the server's root (``/assets/...``), since a server may
  show it for a missing page at any depth; opened from disk those links lead nowhere. The site has
  no fixed address, so this page links relative to the site's root, where it lives.
- A notebook's markdown cell links to a guide or handout by its source path (``../../labs/lab04_
  processor/README.md``), which works in Jupyter; mkdocs-jupyter leaves such links as they are, so
  on the site each becomes the URL of the page built from that source.
- mkdocs-jupyter builds a notebook page's table of contents with Python-Markdown's slugs and the
  headings' ids with nbconvert's, which differ when a heading holds code (``## Damage outside the
  CRC: `baseOffset```); each entry is pointed at the id of the heading it names.

A link that cannot be resolved is a warning, which fails ``mkdocs build --strict``.
"""

from __future__ import annotations

import html
import logging
import posixpath
import re
from urllib.parse import unquote, urlsplit

log = logging.getLogger("mkdocs.hooks.site_links")

_HREF = re.compile(r'(<a\s[^>]*?href=")([^"]*)(")')
_HEADING = re.compile(r'<h([1-6])\s[^>]*?id="([^"]+)"[^>]*>(.*?)</h\1>', re.S)


def on_template_context(context, template_name, config):
    if template_name == "404.html":
        context["base_url"] = "."
    return context


def on_page_content(content, page, config, files):
    if not page.file.src_uri.endswith(".ipynb"):
        return content
    content = _HREF.sub(lambda m: m[1] + _site_url(m[2], page, files) + m[3], content)
    _fix_toc(page, content)
    return content


def _site_url(href: str, page, files) -> str:
    parts = urlsplit(html.unescape(href))
    if parts.scheme or parts.netloc or not parts.path.endswith((".md", ".ipynb")):
        return href
    source = posixpath.normpath(posixpath.join(posixpath.dirname(page.file.src_uri), unquote(parts.path)))
    target = files.get_file_from_path(source)
    if target is None:
        log.warning(f"{page.file.src_uri}: the link {href!r} names {source}, which is not in the docs")
        return href
    url = target.url_relative_to(page.file)
    return html.escape(url + (f"#{parts.fragment}" if parts.fragment else ""))


def _heading_text(markup: str) -> str:
    text = html.unescape(re.sub(r"<[^>]*>", "", markup)).replace("¶", "")
    return re.sub(r"\s+", " ", text).strip()


def _fix_toc(page, content: str) -> None:
    headings = [(_heading_text(m[3]), m[2]) for m in _HEADING.finditer(content)]
    ids = {id_ for _, id_ in headings}

    def walk(items) -> None:
        for item in items:
            if item.id not in ids:
                # The entry's title lost the heading's code; the heading's text starts with it.
                title = _heading_text(item.title)
                found = [(text, id_) for text, id_ in headings if text.startswith(title)]
                if len(found) != 1:
                    log.warning(
                        f"{page.file.src_uri}: the contents entry {item.title!r} matches "
                        f"{len(found)} headings: {[text for text, _ in found]}"
                    )
                else:
                    item.title, item.id = html.escape(found[0][0]), found[0][1]
            walk(item.children)

    walk(page.toc)
