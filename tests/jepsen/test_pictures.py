"""The pictures of a checked history: each key's offsets as each process saw them, the checker's
examples marked where the learner looks for them, a long history cut to a window; and the plots of
realtime lag and unseen sends, with the faults on them."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from kafka_lite.common.time import MockTime
from kafka_lite.jepsen import pictures, plots
from kafka_lite.jepsen.history import NEMESIS, HistoryWriter, read_history

pytestmark = pytest.mark.unit

SVG = "{http://www.w3.org/2000/svg}"
XHTML = "{http://www.w3.org/1999/xhtml}"


def _history(path: Path, steps) -> list:
    """A history from ``(process, f, invocation value, completion value[, type])`` steps, each 1 ms
    apart; the completion is ok unless the step says (a fault's is info)."""
    time = MockTime()
    with HistoryWriter(path, time) as writer:
        for process, f, value, completed, *typed in steps:
            invocation = writer.invoke(process, f, value)
            time.sleep(1)
            writer.complete(
                invocation, typed[0] if typed else "ok" if process != NEMESIS else "info", completed
            )
    return read_history(path)


def _send(process, k, v, offset):
    return (process, "send", [("send", k, v)], [("send", k, (offset, v))])


def _poll(process, k, *records):
    return (process, "poll", [("poll",)], [("poll", {k: list(records)})])


def _result(error_class: str, *examples: dict, allowed: bool = False, **extra) -> dict:
    return {
        "valid": allowed,
        "error_types": [error_class],
        "bad_error_types": [] if allowed else [error_class],
        "errors": {error_class: {"count": len(examples), "errs": list(examples)}},
        "stats": {"ops": 4, "ok": 4, "info": 0, "fail": 0, "nemesis": 0},
        **extra,
    }


def _page(tmp_path: Path, history, result, analysis=None) -> ET.Element:
    [page] = pictures.write_pictures(history, result, analysis, tmp_path / "pictures")
    assert page == tmp_path / "pictures" / pictures.PAGE_NAME
    text = page.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>\n")
    return ET.fromstring(text.split("\n", 1)[1])  # the rest is well-formed XHTML


def _cells(page: ET.Element, key: int) -> list[tuple[int, int, int, bool, set[str]]]:
    """(row's op index, offset, value, wrote?, classes) of every cell drawn for ``key``."""
    [svg] = [s for s in page.iter(f"{SVG}svg") if s.get("data-key") == str(key)]
    cells = []
    for row in svg.iter(f"{SVG}g"):
        if "row" in row.get("class", "").split():
            for cell in row.findall(f"{SVG}g"):
                classes = set(cell.get("class").split())
                cells.append((int(row.get("data-op")), int(cell.get("data-offset")), int(cell.get("data-value")),
                              "write" in classes, classes))  # fmt: skip
    return cells


def _text(page: ET.Element) -> str:
    return " ".join("".join(e.itertext()) for e in page.iter(f"{XHTML}body"))


def test_a_duplicate_rings_its_value_at_both_offsets_and_nothing_else(tmp_path):
    history = _history(tmp_path / "h.jsonl", [
        _send(0, 0, 1, 0), _send(0, 0, 2, 1), _send(0, 0, 1, 2),  # the retry of value 1 landed again
        _poll(1, 0, (0, 1), (1, 2), (2, 1)),
    ])  # fmt: skip
    result = _result("duplicate", {"key": 0, "value": 1, "count": 2, "offsets": [0, 2]})

    page = _page(tmp_path, history, result)

    cells = _cells(page, 0)
    marked = sorted((offset, value, wrote) for _, offset, value, wrote, c in cells if "marked" in c)
    assert marked == [(0, 1, False), (0, 1, True), (2, 1, False), (2, 1, True)]
    assert sorted((op, offset) for op, offset, *_ in cells) == [
        (1, 0),
        (3, 1),
        (5, 2),
        (7, 0),
        (7, 1),
        (7, 2),
    ]
    svg = next(page.iter(f"{SVG}svg"))
    shaded = sorted(
        int(r.get("data-offset")) for r in svg.iter(f"{SVG}rect") if r.get("class") == "marked-offset"
    )
    assert shaded == [0, 2]
    text = _text(page)
    assert "duplicate: " + pictures.EXPLANATIONS["duplicate"] in text
    assert "key 0, value 1, offsets 0, 2, count 2" in text
    assert "not valid" in text


def test_a_poll_skip_dashes_the_skipped_values_and_tints_both_polls(tmp_path):
    history = _history(tmp_path / "h.jsonl", [
        _send(0, 0, 10, 0), _send(0, 0, 11, 1), _send(0, 0, 12, 2), _send(0, 0, 13, 3),
        _poll(1, 0, (0, 10)),
        _poll(1, 0, (3, 13)),  # 11 and 12 never reached process 1
    ])  # fmt: skip
    result = _result("poll-skip", {"key": 0, "delta": 3, "skipped": [11, 12], "ops": [9, 11]})

    page = _page(tmp_path, history, result)

    cells = _cells(page, 0)
    assert sorted((v, op) for op, _, v, _, c in cells if "skipped" in c) == [(11, 3), (12, 5)]
    assert not [cell for cell in cells if "marked" in cell[4]]
    rows = {int(g.get("data-op")): g.get("class") for g in page.iter(f"{SVG}g") if g.get("data-op")}
    assert {op for op, classes in rows.items() if "marked-op" in classes} == {9, 11}
    assert "poll-skip: " + pictures.EXPLANATIONS["poll-skip"] in _text(page)


def test_values_fighting_over_an_offset_get_colours_of_their_own(tmp_path):
    history = _history(tmp_path / "h.jsonl", [
        _send(0, 0, 1, 0), _poll(1, 0, (0, 1)), _poll(2, 0, (0, 2)),
    ])  # fmt: skip
    result = _result("inconsistent-offsets", {"key": 0, "offset": 0, "index": 0, "values": [1, 2]})

    page = _page(tmp_path, history, result)

    fills = {}
    for g in page.iter(f"{SVG}g"):
        if "conflict" in g.get("class", "").split():
            fills.setdefault(int(g.get("data-value")), set()).add(g.find(f"{SVG}rect").get("fill"))
    assert set(fills) == {1, 2}
    assert len(fills[1]) == len(fills[2]) == 1 and fills[1] != fills[2]


def test_unseen_values_are_ringed_where_they_were_written(tmp_path):
    history = _history(tmp_path / "h.jsonl", [_send(0, 3, 7, 0), _send(0, 3, 8, 1), _poll(1, 3, (0, 7))])
    result = _result("unseen", {"key": 3, "count": 1, "values": [8]})

    page = _page(tmp_path, history, result)

    assert [(offset, value) for _, offset, value, _, c in _cells(page, 3) if "marked" in c] == [(1, 8)]
    assert "unseen: " + pictures.EXPLANATIONS["unseen"] in _text(page)


def test_a_valid_history_still_draws_a_key_to_compare_with(tmp_path):
    history = _history(tmp_path / "h.jsonl", [_send(0, 5, 1, 0), _poll(1, 5, (0, 1))])
    result = {"valid": True, "error_types": [], "bad_error_types": [], "errors": {}, "stats": {}}

    page = _page(tmp_path, history, result)

    assert [cell[:4] for cell in _cells(page, 5)] == [(1, 0, 1, True), (3, 0, 1, False)]
    text = _text(page)
    assert "Jepsen check: valid" in text and "No anomaly on this key" in text


def test_a_long_history_is_drawn_as_a_window_around_its_anomaly(tmp_path):
    steps = []
    for offset in range(3000):
        steps.append(_send(0, 0, offset, offset))
        if offset != 1500:  # the lost write: nobody reads offset 1500
            steps.append(_poll(1 + offset % 3, 0, (offset, offset)))
    history = _history(tmp_path / "h.jsonl", steps)
    lost = {"key": 0, "value": 1500, "index": 1500, "max_read_index": 2999, "writer": 6001}
    result = _result("lost-write", lost)

    page = _page(tmp_path, history, result)

    svg = next(page.iter(f"{SVG}svg"))
    cells = _cells(page, 0)
    offsets = {offset for _, offset, *_ in cells}
    assert offsets == set(range(1500 - pictures.CONTEXT, 1500 + pictures.CONTEXT + 1))
    assert [(op, offset) for op, offset, _, _, c in cells if "marked" in c] == [(6001, 1500)]
    assert len({op for op, *_ in cells}) == int(svg.get("data-rows")) <= pictures.MAX_ROWS
    assert "Drawn: 25 of the 5999 operations that touched this key, 13 of its 3000 offsets" in _text(page)


def test_the_window_makes_room_for_what_makes_the_history_invalid_first(tmp_path):
    steps = [
        step for offset in range(500) for step in (_send(0, 0, offset, offset), _poll(1, 0, (offset, offset)))
    ]
    history = _history(tmp_path / "h.jsonl", steps)
    many = {"key": 0, "values": [0, 400], "delta": 400, "skipped": list(range(1, 400, 3)), "op": 1}
    result = _result("int-send-skip", many, allowed=True)  # allowed, and first by name
    result["errors"]["lost-write"] = {"count": 1, "errs": [{"key": 0, "value": 450, "writer": 901}]}
    result["bad_error_types"] = ["lost-write"]

    page = _page(tmp_path, history, result)

    cells = _cells(page, 0)
    assert len({offset for _, offset, *_ in cells}) <= pictures.MAX_COLUMNS
    assert {(offset, value) for _, offset, value, _, c in cells if "marked" in c} >= {(450, 450)}
    captions = [li.find(f"{XHTML}span").text for li in page.iter(f"{XHTML}li")]
    assert captions == ["lost-write", "int-send-skip"]
    # Between the windows, the sends left out of process 0's rows leave a dashed line.
    assert [line for line in page.iter(f"{SVG}line") if line.get("class") == "rows-left-out"]


def test_the_keys_drawn_are_those_with_what_makes_the_history_invalid(tmp_path, monkeypatch):
    monkeypatch.setattr(pictures, "MAX_KEYS", 1)
    history = _history(tmp_path / "h.jsonl", [_send(0, k, 1, 0) for k in range(3)])
    skips = [{"key": 1, "values": [1, 3], "delta": 2, "op": 3}] * 3  # allowed, and more of them
    result = _result("int-send-skip", *skips, allowed=True)
    result["errors"]["G1a"] = {"count": 1, "errs": [{"key": 2, "value": 1, "writer": 5, "reader": 5}]}
    result["bad_error_types"] = ["G1a"]

    page = _page(tmp_path, history, result)

    assert [svg.get("data-key") for svg in page.iter(f"{SVG}svg")] == ["2"]
    assert "Not drawn: 1 more key with anomalies (the page draws 1 at most)." in _text(page)


def test_past_max_rows_the_rows_nearest_the_anomaly_are_kept(tmp_path):
    polls = [_poll(1, 0, (0, 1), (1, 2)) for _ in range(pictures.MAX_ROWS * 2)]
    history = _history(tmp_path / "h.jsonl", [_send(0, 0, 1, 0), _send(0, 0, 2, 1), *polls])
    middle = 2 * (2 + pictures.MAX_ROWS) + 1  # the completion of the poll halfway down
    result = _result("int-nonmonotonic-poll", {"key": 0, "values": [2, 1], "delta": -1, "op": middle})

    page = _page(tmp_path, history, result)

    rows = sorted({op for op, *_ in _cells(page, 0)})
    assert len(rows) == pictures.MAX_ROWS
    assert rows == list(range(middle - pictures.MAX_ROWS, middle + pictures.MAX_ROWS, 2))
    assert (
        f"Drawn: {pictures.MAX_ROWS} of the {len(polls) + 2} operations that touched this key, 2 of its 2"
        in _text(page)
    )


def test_an_aborted_reads_failed_send_shows_in_its_row_without_an_offset(tmp_path):
    history = _history(tmp_path / "h.jsonl", [
        _send(0, 0, 1, 0),
        (0, "send", [("send", 0, 2)], None, "fail"),  # completed as the invocation: no offset
        _poll(1, 0, (0, 1), (1, 2)),
    ])  # fmt: skip
    result = _result("G1a", {"key": 0, "value": 2, "writer": 3, "reader": 5})

    page = _page(tmp_path, history, result)

    [unplaced] = [t for t in page.iter(f"{SVG}text") if "unplaced" in t.get("class", "")]
    assert (unplaced.text, unplaced.get("class")) == ("sent 2, offset unknown", "unplaced marked")
    rows = {int(g.get("data-op")): g.get("class") for g in page.iter(f"{SVG}g") if g.get("data-op")}
    assert rows == {1: "row", 3: "row marked-op", 5: "row marked-op"}
    assert [(offset, value) for _, offset, value, _, c in _cells(page, 0) if "marked" in c] == [(1, 2)]


def test_the_page_needs_no_network(tmp_path):
    history = _history(tmp_path / "h.jsonl", [_send(0, 0, 1, 0), _poll(1, 0, (0, 1))])
    page = _page(tmp_path, history, _result("G1a", {"key": 0, "value": 1, "writer": 1, "reader": 3}))

    links = [e.get("href") for e in page.iter() if e.get("href")]
    assert links == ["#key-0"]  # the summary's worst example leads down to its key's picture
    assert not [e for e in page.iter() if e.get("src") or e.tag.endswith(("script", "link", "img"))]


def test_the_lag_plot_draws_each_process_and_the_faults(tmp_path):
    history = _history(tmp_path / "h.jsonl", [
        _send(0, 0, 1, 0), (NEMESIS, "kill", {"nodes": [2], "as": "leader"}, None), _poll(1, 0, (0, 1)),
    ])  # fmt: skip
    lags = [{"process": 1, "key": 0, "time": 2_000_000, "lag": 1_500_000_000},
            {"process": 1, "key": 1, "time": 2_000_000, "lag": 500_000_000}]  # fmt: skip
    result = {"valid": True, "error_types": [], "bad_error_types": [], "errors": {}, "stats": {}}

    unseen = [{"time": 1_000_000, "unseen": {0: 1}}, {"time": 4_000_000, "unseen": {0: 0}}]

    page = _page(tmp_path, history, result, {"realtime_lag": lags, "unseen": unseen})

    chart, unseen_chart = [s for s in page.iter(f"{SVG}svg") if s.get("class") == "chart"]
    # The unseen plot also marks the final phase: the history's tail of polls, here the last poll.
    assert [(line.find(f"{SVG}title").text, line.get("x1")) for line in unseen_chart.iter(f"{SVG}line")
            if line.get("class") == "event"] == [("kill nodes=2 as=leader", "410.0"), ("final phase", "410.0"), ("end", "585.0")]  # fmt: skip
    # The kill and the final phase began together: their labels sit on different lines.
    assert [t.get("y") for t in unseen_chart.iter(f"{SVG}text") if t.get("class") == "event-label"] == [
        "32",
        "43",
        "54",
    ]
    [series] = chart.iter(f"{SVG}polyline")
    assert series.get("data-name") == "process 1"
    assert [
        line.find(f"{SVG}title").text for line in chart.iter(f"{SVG}line") if line.get("class") == "event"
    ] == ["kill nodes=2 as=leader"]
    ticks = [t.text for t in chart.iter(f"{SVG}text") if t.get("class") == "y-tick"]
    assert ticks == ["0", "0.375", "0.75", "1.12", "1.5"]  # the poll's worst lag over its keys tops the axis
    # One poll is one point: a line through it alone would draw nothing, so each point is a dot too.
    assert [dot.get("cy") for dot in chart.iter(f"{SVG}circle")] == ["24.0"]  # the top of the axis


def test_downsample_keeps_what_moves_a_pixel_as_jepsen_does():
    points = [(0.0, 0.0), (0.001, 0.0), (0.002, 0.0), (50.0, 0.0), (50.001, 5.0), (49.9, 5.0), (100.0, 10.0)]
    # dx = 100/200, dy = 10/100: the two points a hair after the first go; a jump in y stays, and so
    # does a step back in x, however small.
    assert plots.downsample(points) == [(0.0, 0.0), (50.0, 0.0), (50.001, 5.0), (49.9, 5.0), (100.0, 10.0)]
    assert plots.downsample([]) == []


@pytest.mark.parametrize(
    ("error_class", "worst"),
    [("poll-skip", {"delta": 9}), ("nonmonotonic-poll", {"delta": -4}), ("G1c", {"delta": 2})],
)
def test_the_worst_example_is_the_one_condense_error_puts_at_its_end(error_class, worst):
    # condense-error sorts by delta: skips keep the largest last, nonmonotonic steps the smallest first.
    errs = {"poll-skip": [{"delta": 2}, {"delta": 9}], "nonmonotonic-poll": [{"delta": -4}, {"delta": 0}],
            "G1c": [{"delta": 2}, {"delta": 3}]}[error_class]  # fmt: skip
    assert pictures.worst_example(error_class, errs) == worst


def test_a_cycle_is_described_by_its_ops_and_marks_every_key_it_crosses():
    example = {"cycle": [3, 7, 3], "steps": [{"type": "wr", "key": 1, "value": 4},
                                             {"type": "ww", "key": 2, "value": 5, "next_value": 6}]}  # fmt: skip
    assert pictures.describe("G1c", example) == "cycle #3 -> #7 -> #3 (wr, ww)"
    marks = pictures.marks_by_key(_result("G1c", example))
    assert {k: (m.values, m.ops) for k, [m] in marks.items()} == {1: ({4}, {3, 7}), 2: ({5, 6}, {3, 7})}


def test_a_cycles_worst_example_leads_to_the_first_key_it_crosses(tmp_path):
    history = _history(tmp_path / "h.jsonl", [_send(0, 1, 4, 0), _poll(1, 1, (0, 4)), _send(1, 2, 5, 0)])
    example = {"cycle": [1, 3, 1], "steps": [{"type": "wr", "key": 1, "value": 4}, {"type": "process"}]}

    page = _page(tmp_path, history, _result("G1c", example))

    assert [e.get("href") for e in page.iter() if e.get("href")] == ["#key-1"]
    assert [svg.get("data-key") for svg in page.iter(f"{SVG}svg")] == ["1"]
