"""The timing wheel picture is drawn from a live timer: every wheel with its tick, size, interval and
clock, every bucket's time range and tasks in its own slot, the clock's slot highlighted, and the
tasks moving down a level in the picture when they cascade in the timer."""

from __future__ import annotations

import re

import pytest

from kafka_lite.common.time import MockTime
from kafka_lite.diagrams import DIAGRAMS
from kafka_lite.diagrams.timer import NOW, timer_diagram, timing_wheel
from kafka_lite.testing.mock_timer import MockTimer
from kafka_lite.utils.timer import TimerTask

pytestmark = pytest.mark.unit


class Named(TimerTask):
    def __init__(self, name: str, delay_ms: int, fired: list[str]) -> None:
        super().__init__(delay_ms)
        self.name, self.fired = name, fired

    def run(self) -> None:
        self.fired.append(self.name)


def cell(source: str, level: int, slot: int) -> tuple[str, list[str]]:
    """The background colour and the text lines of one slot's cell."""
    match = re.search(rf'<td bgcolor="([^"]+)" port="l{level}s{slot}"[^>]*>(.*?)</td>', source)
    assert match, f"no cell for level {level} slot {slot}"
    lines = [re.sub(r"<[^>]*>", "", line) for line in match.group(2).split("<br/>")]
    return match.group(1), lines


def filled(source: str, level: int, slots: int) -> dict[int, list[str]]:
    """Each slot of a level whose cell says more than its number (the clock's slot aside)."""
    found = {}
    for slot in range(slots):
        _, lines = cell(source, level, slot)
        rest = [line for line in lines[1:] if line != "clock"]
        assert lines[0] == str(slot), f"level {level}: slot {slot}'s cell starts with {lines[0]!r}"
        if rest:
            found[slot] = rest
    return found


def title(source: str, level: int) -> str:
    match = re.search(rf"<b>level {level}: (.*?)</td>", source)
    assert match, f"no wheel at level {level}"
    return re.sub(r"<[^>]*>", " ", match.group(1))


def highlighted(source: str, level: int, slots: int) -> list[int]:
    return [slot for slot in range(slots) if cell(source, level, slot)[0] == NOW]


@pytest.fixture
def timer() -> tuple[MockTimer, list[str]]:
    """A wheel of 4 slots of 1 ms, with tasks on it and on two overflow wheels (4 ms and 16 ms ticks)."""
    time = MockTime()
    assert time.hi_res_clock_ms() == 0, "the expected times below count from 0"
    timer, fired = MockTimer(time, tick_ms=1, wheel_size=4), []
    for name, delay in [("a", 2), ("b", 7), ("c", 13), ("d", 30), ("e", 50), ("f", 52)]:
        timer.add(Named(name, delay, fired))
    return timer, fired


def test_each_wheel_is_drawn_with_its_tick_size_interval_and_clock(timer):
    source = timer_diagram(timer[0]).source
    assert "tick 1 ms, 4 slots, interval 4 ms" in title(source, 1)
    assert "tick 4 ms, 4 slots, interval 16 ms" in title(source, 2)
    assert "tick 16 ms, 4 slots, interval 64 ms" in title(source, 3)
    assert "clock at 0 ms" in title(source, 1) and "clock at 0 ms" in title(source, 3)
    assert "<b>level 4:" not in source, "no task needs a fourth wheel, so there is none"
    edges = re.findall(r"^\s*(\S+) -> (\S+) \[label=\"\s*([^\"]*)\"", source, re.MULTILINE)
    assert edges == [
        ("timer", "level1:title:n", "advance_clock"),
        ("level1:s", "level2:title:n", "overflow wheel: tick 4 ms"),
        ("level2:s", "level3:title:n", "overflow wheel: tick 16 ms"),
    ]


def test_every_task_is_in_its_buckets_slot_with_the_buckets_range_and_its_due_time(timer):
    source = timer_diagram(timer[0]).source
    assert filled(source, 1, 4) == {2: ["2", "a @2"]}
    assert filled(source, 2, 4) == {1: ["4-7", "b @7"], 3: ["12-15", "c @13"]}
    assert filled(source, 3, 4) == {1: ["16-31", "d @30"], 3: ["48-63", "e @50", "f @52"]}
    assert [highlighted(source, level, 4) for level in (1, 2, 3)] == [[0], [0], [0]]


def test_the_picture_follows_the_timer_as_tasks_run_cascade_and_are_cancelled(timer):
    mock_timer, fired = timer
    mock_timer.advance_clock(4)  # level 2's bucket 4-7 expires: b is re-added and lands on level 1
    assert fired == ["a"]
    source = timer_diagram(mock_timer).source
    assert filled(source, 1, 4) == {3: ["7", "b @7"]}
    assert filled(source, 2, 4) == {3: ["12-15", "c @13"]}
    assert "clock at 4 ms" in title(source, 1) and "clock at 4 ms" in title(source, 2)
    assert "clock at 0 ms" in title(source, 3), "level 3 moves in steps of 16 ms"
    assert [highlighted(source, level, 4) for level in (1, 2, 3)] == [[0], [1], [0]]

    mock_timer.advance_clock(44)  # 48 ms: b, c, d have run; level 3's 48-63 expired: e and f came down
    assert fired == ["a", "b", "c", "d"]
    source = timer_diagram(mock_timer).source
    assert filled(source, 1, 4) == {2: ["50", "e @50"]}
    assert filled(source, 2, 4) == {1: ["52-55", "f @52"]}
    assert filled(source, 3, 4) == {}
    e = next(t for t in _tasks(mock_timer) if t.name == "e")
    e.cancel()
    source = timer_diagram(mock_timer).source
    assert filled(source, 1, 4) == {}, "a cancelled task is in no bucket"
    assert "MockTimer at 48 ms: 1 task waiting" in source
    assert f"delay queue: {len(mock_timer.delay_queue)} bucket" in source


def test_the_timer_box_counts_the_waiting_tasks_and_names_the_next_bucket(timer):
    mock_timer = timer[0]
    source = timer_diagram(mock_timer).source
    assert mock_timer.size() == 6 and len(mock_timer.delay_queue) == 5
    assert "MockTimer at 0 ms: 6 tasks waiting\ndelay queue: 5 buckets, next due at 2 ms" in source


def test_times_are_drawn_from_the_origin_given(timer):
    source = timer_diagram(timer[0].timing_wheel, origin_ms=-1000).source
    assert filled(source, 2, 4) == {1: ["1,004-1,007", "b @1,007"], 3: ["1,012-1,015", "c @1,013"]}
    assert "MockTimer" not in source, "a bare wheel has no timer to describe"
    with pytest.raises(TypeError, match="draws a SystemTimer, a MockTimer or a TimingWheel, not 42"):
        timer_diagram(42)


def test_the_docs_picture_is_kafkas_wheel_after_a_cascade():
    source = timing_wheel().source
    assert "tick 1 ms, 20 slots, interval 20 ms" in title(source, 1)
    assert "tick 400 ms, 20 slots, interval 8,000 ms" in title(source, 3)
    assert filled(source, 1, 20) == {4: ["24", "fetch-1 @24"]}, "fetch-1 came down from level 2"
    assert filled(source, 3, 20)[3] == ["1,200-1,599", "produce-1 @1,500"], "produce-2 was cancelled"
    assert "join-1" not in source, "join-1 ran at 3 ms"
    assert "MockTimer at 22 ms: 5 tasks waiting" in source
    assert DIAGRAMS["timing_wheel"] is timing_wheel
    timing_wheel().pipe(format="svg")  # every port an edge names exists


def _tasks(timer: MockTimer) -> list[Named]:
    found, wheel = [], timer.timing_wheel
    while wheel is not None:
        for bucket in wheel.buckets:
            bucket.foreach(found.append)
        wheel = wheel.overflow_wheel
    return found
