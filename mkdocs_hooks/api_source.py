"""MkDocs hook: an API page's source views name the file as the repository has it, and stay out of
the search index.

No Kafka twin: docs tooling. mkdocstrings shows each module, class and function's code in a folded
``<details class="mkdocstrings-source">`` captioned "Source code in <path>". It reads the package
from the copy ``lab_starters.py`` writes (the labs' files as their starters), so the caption would
name ``.cache/site-source/kafka_lite/...``, a path no reader has; at ``on_page_content`` the caption
names ``kafka_lite/...``, where the reader finds the file.

The docstrings above the views stay in the index; the code itself is the bulk of the site's text
(most of a 6-MB index), and with it a search for a name answers with every view whose code mentions
it before the heading that defines it. So each view is marked ``data-search-exclude``, and more than
that, the search plugin never reads one: at ``on_page_content`` each view is set aside and a
placeholder stands in its place while the plugin indexes the page; ``on_post_page`` puts the views
back into the page's HTML. The views are nearly half of the site's HTML, and the search plugin parses
every tag of what it is given, excluded or not.
"""

from __future__ import annotations

import re

from mkdocs.plugins import event_priority

from mkdocs_hooks.lab_starters import SITE_SOURCE

SOURCE_VIEW = '<details class="mkdocstrings-source">'
_MARKED = '<details class="mkdocstrings-source" data-search-exclude>'
_CAPTION = f"Source code in <code>{SITE_SOURCE}/"
# A view holds highlighted code, in which a "</details>" of the code's own is escaped: the first
# closing tag after a view opens is the view's.
_VIEW = re.compile(re.escape(_MARKED) + r".*?</details>", re.DOTALL)
_PLACEHOLDER = "<!-- kafka-lite source view {} -->"
_PLACEHOLDERS = re.compile(r"<!-- kafka-lite source view (\d+) -->")
_set_aside: dict[str, list[str]] = {}  # page's source path -> its views, while the page is built


def on_page_content(html, page, config, files):
    if SOURCE_VIEW not in html:
        return html
    html = html.replace(SOURCE_VIEW, _MARKED).replace(_CAPTION, "Source code in <code>")
    views: list[str] = []

    def set_aside(match: re.Match) -> str:
        views.append(match.group(0))
        return _PLACEHOLDER.format(len(views) - 1)

    html = _VIEW.sub(set_aside, html)
    _set_aside[page.file.src_uri] = views
    return html


@event_priority(100)  # first, so that every other hook's on_post_page sees the page whole
def on_post_page(output, page, config):
    views = _set_aside.pop(page.file.src_uri, None)
    if views is None:
        return output
    return _PLACEHOLDERS.sub(lambda m: views[int(m.group(1))], output)
