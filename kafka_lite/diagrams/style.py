"""The look every diagram shares: one font, small type, and a width that fits the docs' column.

No Kafka twin: drawing conventions for the chapter guides' pictures (graphviz DOT attributes).

The guides show a picture in a column about 800 px wide. Graphviz measures in points (72 to the
inch) and an SVG point is 4/3 of a CSS pixel, so 8 inches is about 770 px. ``size`` caps a drawing
at that width (``dot`` scales a wider one down, text included), and each diagram is laid out to
stay under it at full scale: top-to-bottom ranks where a left-to-right row would be wide, and
tight node and rank separations. ``tests/diagrams`` renders every diagram and checks its width.
"""

from __future__ import annotations

import html

import graphviz

FONT = "Helvetica"
PAGE_WIDTH_IN = 8.0
"""The widest drawing, in inches, that fits the docs' column unscaled (about 770 CSS pixels)."""


def new_graph(name: str, rankdir: str = "LR", fontsize: int = 11, **graph_attrs: str) -> graphviz.Digraph:
    """A ``graphviz.Digraph`` in the diagrams' font, capped at the column's width."""
    g = graphviz.Digraph(name)
    g.attr(fontname=FONT, rankdir=rankdir, size=f"{PAGE_WIDTH_IN:g},30", **graph_attrs)
    g.attr("node", fontname=FONT, fontsize=str(fontsize))
    g.attr("edge", fontname=FONT, fontsize=str(fontsize - 1))
    return g


def wrapped(text: str, width: int = 44) -> str:
    """``text`` broken into lines of about ``width`` characters at "; " and spaces, HTML-escaped."""
    lines: list[str] = []
    for clause in text.split("; ") if text else []:
        line = ""
        for word in clause.split(" "):
            if line and len(line) + 1 + len(word) > width:
                lines.append(line)
                line = word
            else:
                line = f"{line} {word}" if line else word
        lines.append(line)
    return "<br/>".join(html.escape(line) for line in lines)
