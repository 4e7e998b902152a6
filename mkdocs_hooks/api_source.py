"""MkDocs hook: an API page's source views name the file as the repository has it, and stay out of
the search index.

No Kafka twin: docs tooling. mkdocstrings shows each module, class and function's code in a folded
``<details class="mkdocstrings-source">`` captioned "Source code in <path>". It reads the package
from the copy ``lab_starters.py`` writes (the labs' files as their starters), so the caption would
name ``.cache/site-source/kafka_lite/...``, a path no reader has; at ``on_page_content`` the caption
names ``kafka_lite/...``, where the reader finds the file.

The same hook marks each source view ``data-search-exclude``. The docstrings above the views stay
in the index; the code itself is the bulk of the site's text (most of a 6-MB index), and with it a
search for a name answers with every view whose code mentions it before the heading that defines it.
"""

from __future__ import annotations

from mkdocs_hooks.lab_starters import SITE_SOURCE

SOURCE_VIEW = '<details class="mkdocstrings-source">'
_CAPTION = f"Source code in <code>{SITE_SOURCE}/"


def on_page_content(html, page, config, files):
    if SOURCE_VIEW not in html:
        return html
    html = html.replace(SOURCE_VIEW, '<details class="mkdocstrings-source" data-search-exclude>')
    return html.replace(_CAPTION, "Source code in <code>")
