"""A page's code includes (mkdocs_hooks/code_includes.py): the real code under a caption that names
its file, its lines and the Kafka class it mirrors, and a lab's code only inside a folded
``reference`` block. The hook's unit tests run without the site; the last test reads the built site
and checks every guide's captions against the files they name."""

from __future__ import annotations

import html
import re

import pytest
from mkdocs.exceptions import PluginError

from kafka_lite.grading import starter
from mkdocs_hooks.code_includes import INCLUDE, caption, mirrors, read_include, render_includes
from tests.docs.site import ROOT, guide_pages

GUIDE = "chapters/ch06_storage/index.md"


def _marker_lines(path: str, section: str) -> tuple[int, int]:
    lines = (ROOT / path).read_text(encoding="utf-8").splitlines()
    start = next(n for n, line in enumerate(lines, 1) if f"[start:{section}]" in line)
    end = next(n for n, line in enumerate(lines, 1) if n > start and f"[end:{section}]" in line)
    return start, end


@pytest.mark.unit
def test_an_include_of_a_lab_region_is_the_reference_without_markers():
    include = read_include("kafka_lite/log/log_segment.py", "append")
    start, end = _marker_lines(include.path, "append")
    assert include.labs == (2,)
    lines = (ROOT / include.path).read_text(encoding="utf-8").splitlines()
    code = [n for n in range(start + 1, end) if lines[n - 1].strip() and "SOLUTION" not in lines[n - 1]]
    assert (include.first, include.last) == (code[0], code[-1])  # no marker or blank line at either end
    text = "\n".join(include.lines)
    assert "physical_position" in text and "NotImplementedError" not in text
    assert starter.BEGIN not in text and starter.END not in text and "--8<--" not in text


@pytest.mark.unit
def test_an_include_outside_any_lab_region_names_no_lab():
    include = read_include("kafka_lite/log/log.py", "maybe_roll")
    assert include.labs == ()


@pytest.mark.unit
def test_a_lab_include_is_folded_in_a_reference_block_and_captioned():
    page = 'Text.\n\n```python\n--8<-- "kafka_lite/log/log_segment.py:append"\n```\n\nMore text.\n'
    out = render_includes(page, GUIDE)
    lines = out.splitlines()
    at = lines.index('??? reference "kafka_lite\'s code (lab 2 asks you to write this)"')
    body = lines[at + 1 : lines.index("More text.")]
    assert all(not line or line.startswith("    ") for line in body), "the block's body is not indented"
    assert body[1].startswith(
        "    [`kafka_lite/log/log_segment.py`](../../api/log.md#kafka_lite.log.log_segment), lines "
    )
    assert body[1].endswith(" · mirrors LogSegment (Kafka 0.10.1)")
    assert body[2] == "    {: .code-caption }"
    assert "    ```python" in body and "physical_position" in out and "--8<--" not in out


@pytest.mark.unit
def test_an_include_in_a_list_item_keeps_its_indentation():
    page = '- item:\n\n    ```python\n    --8<-- "kafka_lite/log/log.py:maybe_roll"\n    ```\n'
    out = render_includes(page, GUIDE)
    assert "reference" not in out
    code = out.splitlines()
    assert code[2].startswith("    [`kafka_lite/log/log.py`]") and code[5] == "    ```python"
    assert all(not line or line.startswith("    ") for line in code[2:])


@pytest.mark.unit
def test_captions_say_what_the_code_mirrors():
    assert mirrors("kafka_lite/log/log_segment.py", 1) == "mirrors LogSegment (Kafka 0.10.1)"
    assert mirrors("chapters/ch04_new_consumer/order_totals.py", 1) == "no Kafka twin"
    include = read_include("chapters/ch04_new_consumer/order_totals.py", "poll_loop")
    # A file without an API page is named, not linked.
    assert caption(include, "chapters/ch04_new_consumer/index.md").startswith(
        "`chapters/ch04_new_consumer/order_totals.py`, lines "
    )


@pytest.mark.unit
def test_a_code_block_mixing_an_include_with_other_text_is_refused():
    page = '```python\nx = 1\n--8<-- "kafka_lite/log/log.py:maybe_roll"\n```\n'
    with pytest.raises(PluginError, match="one include and nothing else"):
        render_includes(page, GUIDE)


@pytest.mark.unit
def test_a_missing_section_is_refused():
    with pytest.raises(PluginError, match="no section"):
        read_include("kafka_lite/log/log.py", "no_such_section")


_CAPTIONED = re.compile(
    r'<p class="code-caption">(?P<caption>.*?)</p>\s*<div class="(?:language-\w+ )?highlight"><pre[^>]*>(?P<code>.*?)</pre>',
    re.S,
)
_CAPTION = re.compile(r"^(?P<path>\S+\.py), lines (?P<first>\d+)-(?P<last>\d+)(?: · (?P<twin>.+))?$")


def _text(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]*>", "", fragment))


@pytest.mark.docs
def test_every_guide_include_is_captioned_with_its_file_and_lines(site):
    checked = 0
    for guide in guide_pages():
        includes = [
            m for line in guide.read_text(encoding="utf-8").splitlines() if (m := INCLUDE.match(line))
        ]
        page = (site / guide.relative_to(ROOT).with_suffix(".html")).read_text(encoding="utf-8")
        captioned = list(_CAPTIONED.finditer(page))
        name = guide.relative_to(ROOT).as_posix()
        assert len(captioned) == len(includes), f"{name}: {len(includes)} includes, {len(captioned)} captions"
        for include, block in zip(includes, captioned, strict=True):
            cap = _CAPTION.match(" ".join(_text(block["caption"]).split()))
            assert cap, f"{name}: caption {_text(block['caption'])!r}"
            assert cap["path"] == include["path"], (name, cap["path"], include["path"])
            expected = read_include(include["path"], include["section"])
            assert (int(cap["first"]), int(cap["last"])) == (expected.first, expected.last), (
                name,
                include[0],
            )
            # The code under the caption is the file's lines between those numbers, markers left out.
            lines = (ROOT / cap["path"]).read_text(encoding="utf-8").splitlines()
            wanted = [
                line.rstrip()
                for line in lines[expected.first - 1 : expected.last]
                if "--8<--" not in line and line.strip() not in (starter.BEGIN, starter.END)
            ]
            shown = [line.rstrip() for line in _text(block["code"]).strip("\n").split("\n")]
            assert shown == wanted, (
                f"{name}: the code under {include[0]} is not lines {cap['first']}-{cap['last']}"
            )
            assert cap["twin"] == mirrors(cap["path"], expected.first) or not cap["twin"], (name, cap["twin"])
            checked += 1
    assert checked > 50, checked
