"""MkDocs hook: a diagram takes its column's width, but never shrinks below a size its labels can be
read at; a diagram wider than that scrolls sideways in a box of its own.

No Kafka twin: docs tooling. The diagrams (``mkdocs_hooks/graphviz_diagrams.py``) are SVG whose size
graphviz gives in points. Each ``<img>`` of one is given its natural width in CSS pixels, with
``max-width: 100%`` (``docs/stylesheets/site.css``) so it shrinks to the column, and a ``min-width`` of
``MIN_SCALE`` of that width; it is wrapped in a ``<span class="diagram">`` that scrolls when the
column is narrower than the minimum. CSS alone cannot do this: it cannot see an image's own width.
"""

from __future__ import annotations

import logging
import re

log = logging.getLogger("mkdocs.hooks.diagram_sizes")

MIN_SCALE = 0.8  # the diagrams' smallest labels (9 pt edge labels, 12 px) stay at 9.6 CSS px or more
PX_PER_PT = 4 / 3

_IMG = re.compile(r'<img\s[^>]*?src="(?:[^"]*/)?diagrams/([\w-]+)\.svg"[^>]*>')
_SVG_WIDTH = re.compile(r'<svg\s[^>]*?width="([\d.]+)pt"')


def on_page_content(content, page, config, files):
    def wrap(m: re.Match) -> str:
        name = m[1]
        svg = files.get_file_from_path(f"diagrams/{name}.svg")
        width = _SVG_WIDTH.search(svg.content_string) if svg is not None else None
        if width is None:
            log.warning(f"{page.file.src_uri}: diagram {name!r} has no width in points to size it by")
            return m[0]
        px = float(width[1]) * PX_PER_PT
        style = f'style="width: {px:.0f}px; min-width: {px * MIN_SCALE:.0f}px"'
        return f'<span class="diagram">{m[0][:-1].rstrip("/ ")} {style}></span>'

    return _IMG.sub(wrap, content)
