"""Every diagram the docs render fits the guides' column (about 800 px) without shrinking its text."""

from __future__ import annotations

import re

import pytest

from kafka_lite.diagrams import DIAGRAMS
from kafka_lite.diagrams.style import PAGE_WIDTH_IN

pytestmark = pytest.mark.unit
SVG_SIZE = re.compile(r'<svg width="(\d+)pt" height="(\d+)pt"')
SCALE = re.compile(r'<g id="graph0" class="graph" transform="scale\(([\d.]+) ([\d.]+)\)')
MIN_SCALE = 0.9  # dot shrinks a drawing wider than ``size``; text below 90 % of its size is too small


@pytest.mark.parametrize("name", sorted(DIAGRAMS))
def test_diagram_fits_the_column_at_a_readable_scale(name):
    svg = DIAGRAMS[name]().pipe(format="svg").decode("utf-8")
    width_pt, _ = map(int, SVG_SIZE.search(svg).groups())
    assert width_pt <= PAGE_WIDTH_IN * 72, f"{name} is {width_pt} pt wide"
    scale = float(SCALE.search(svg).group(1))
    assert scale >= MIN_SCALE, (
        f"{name} is drawn {width_pt / scale:.0f} pt wide and shrunk to {scale:.2f} to fit "
        f"{PAGE_WIDTH_IN * 72:.0f} pt: lay it out narrower (rankdir, nodesep, ranksep, shorter labels)"
    )
