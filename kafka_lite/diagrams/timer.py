"""The purgatory's timer, drawn from a live timing wheel: every wheel, its buckets and their tasks.

No Kafka twin: a picture of ``TimingWheel`` (kafka.utils.timer.TimingWheel, Kafka 0.10.1) and the
overflow wheels above it. Kafka draws the wheel only in the class's comment, as text; the book draws
it by hand.
Book:    chapter 6, 6.3 (the hierarchical timing wheel behind the delayed operations)

Nothing here is drawn by hand. ``timer_diagram`` walks ``timing_wheel.overflow_wheel`` from the
finest wheel up and reads each wheel's ``tick_ms``, ``wheel_size``, ``interval`` and
``current_time``, then each bucket's expiration (``TimerTaskList.get_expiration``: -1 for a slot
that holds nothing this turn) and its tasks (``TimerTaskList.foreach``, which skips cancelled ones).
The slot the wheel's clock is in is drawn in yellow: its bucket is the one expiring now (or, on an
overflow wheel, the range the finer wheels below are covering). Given a timer rather than a bare
wheel, it also says how many tasks wait and which bucket the delay queue hands over next: the
earliest expiration of any queued bucket, which is the head of the queue.

``timing_wheel`` builds the picture the docs show: a ``MockTimer`` with Kafka's tick (1 ms) and
size (20 slots), a few timeouts added, and the clock moved so that one of them has cascaded down.

It returns a ``graphviz.Digraph``; in a notebook it renders itself, and ``.source`` is the DOT text,
which the tests read.
"""

from __future__ import annotations

import html
from collections.abc import Callable

import graphviz

from kafka_lite.common.time import MockTime
from kafka_lite.diagrams.style import new_graph
from kafka_lite.testing.mock_timer import MockTimer
from kafka_lite.utils.timer.system_timer import SystemTimer
from kafka_lite.utils.timer.timer_task import TimerTask
from kafka_lite.utils.timer.timer_task_list import TimerTaskList
from kafka_lite.utils.timer.timing_wheel import TimingWheel

NOW = "#fde68a"  # the slot the wheel's clock is in
FILLED = "#dbeafe"  # a bucket holding tasks this turn
EMPTY = "#f9fafb"  # a slot with nothing in it
GREY = "#6b7280"
TABLE = '<<table border="0" cellborder="1" cellspacing="0" cellpadding="2">{}</table>>'
COLUMNS = 10  # slots per row: Kafka's 20 slots make two rows that fit the docs' column
MAX_TASKS = 3  # tasks listed per bucket; more are counted


def task_name(task: TimerTask) -> str:
    """A task's label: its ``name`` attribute if it has one (the notebook's and the tests' tasks
    do), else its class's name."""
    name = getattr(task, "name", None)
    return str(name) if name is not None else type(task).__name__


def wheels_of(wheel: TimingWheel) -> list[TimingWheel]:
    """The wheel and its overflow wheels, finest first."""
    found = []
    while wheel is not None:
        found.append(wheel)
        wheel = wheel.overflow_wheel
    return found


def tasks_in(bucket: TimerTaskList) -> list[TimerTask]:
    """The bucket's tasks that are not cancelled, in the order they were added."""
    found: list[TimerTask] = []
    bucket.foreach(found.append)
    return found


def current_slot(wheel: TimingWheel) -> int:
    """The slot whose tick holds the wheel's clock (the same arithmetic ``add`` files a task by)."""
    return (wheel.current_time // wheel.tick_ms) % wheel.wheel_size


def _ms(ms: int) -> str:
    return f"{ms:,} ms"


def _slot_cell(
    wheel: TimingWheel,
    slot: int,
    level: int,
    origin_ms: int,
    label: Callable[[TimerTask], str],
) -> str:
    """One slot: its number, and for a bucket holding tasks this turn its time range and the tasks
    with the time each is due."""
    bucket = wheel.buckets[slot]
    expiration = bucket.get_expiration()
    tasks = tasks_in(bucket) if expiration >= 0 else []
    is_now = slot == current_slot(wheel)
    lines = [f"<b>{slot}</b>" if tasks or is_now else f'<font color="{GREY}">{slot}</font>']
    if tasks:
        start = expiration - origin_ms
        end = start + wheel.tick_ms - 1
        lines.append(f"{start:,}" if wheel.tick_ms == 1 else f"{start:,}-{end:,}")
        for task in tasks[:MAX_TASKS]:
            entry = task.get_timer_task_entry()
            due = "" if entry is None else f" @{entry.expiration_ms - origin_ms:,}"
            lines.append(html.escape(label(task) + due))
        if len(tasks) > MAX_TASKS:
            lines.append(f"+{len(tasks) - MAX_TASKS} more")
    if is_now:
        lines.append("<i>clock</i>")
    colour = NOW if is_now else FILLED if tasks else EMPTY
    return f'<td bgcolor="{colour}" port="l{level}s{slot}" valign="top">{"<br/>".join(lines)}</td>'


def _wheel_table(wheel: TimingWheel, level: int, origin_ms: int, label: Callable[[TimerTask], str]) -> str:
    columns = min(COLUMNS, wheel.wheel_size)
    title = (
        f"<b>level {level}: tick {_ms(wheel.tick_ms)}, {wheel.wheel_size} slots, "
        f"interval {_ms(wheel.interval)}</b><br/>"
        f"clock at {_ms(wheel.current_time - origin_ms)}; slot = (time // {wheel.tick_ms:,}) "
        f"% {wheel.wheel_size}"
    )
    rows = [f'<tr><td colspan="{columns}" bgcolor="#f3f4f6" port="title">{title}</td></tr>']
    for first in range(0, wheel.wheel_size, columns):
        cells = [
            _slot_cell(wheel, slot, level, origin_ms, label)
            for slot in range(first, min(first + columns, wheel.wheel_size))
        ]
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return TABLE.format("".join(rows))


def _queue_text(wheels: list[TimingWheel], timer: SystemTimer, origin_ms: int) -> str:
    """What the timer's delay queue holds: the buckets with an expiration (each was offered once
    this turn); its head is the earliest of them."""
    queued = [b.get_expiration() for w in wheels for b in w.buckets if b.get_expiration() >= 0]
    tasks = timer.size()
    now = timer.time.hi_res_clock_ms() - origin_ms
    text = f"{type(timer).__name__} at {_ms(now)}: {tasks} task{'' if tasks == 1 else 's'} waiting\n"
    if not queued:
        return text + "delay queue: empty"
    return text + (
        f"delay queue: {len(queued)} bucket{'' if len(queued) == 1 else 's'}, "
        f"next due at {_ms(min(queued) - origin_ms)}"
    )


def timer_diagram(
    timer: SystemTimer | TimingWheel,
    origin_ms: int = 0,
    label: Callable[[TimerTask], str] = task_name,
) -> graphviz.Digraph:
    """The timer's wheels, finest on top, each a table of its slots (``COLUMNS`` to a row).

    A slot whose bucket holds tasks this turn shows the range of times it covers (``origin_ms`` is
    subtracted from every time drawn: pass the clock's start to draw times from 0) and each task
    with the time it is due (``@``); the slot holding the wheel's clock is yellow. An edge goes
    from each wheel to its overflow wheel, whose tick is the wheel's interval."""
    if isinstance(timer, SystemTimer):
        wheel, system_timer = timer.timing_wheel, timer
    elif isinstance(timer, TimingWheel):
        wheel, system_timer = timer, None
    else:
        raise TypeError(f"timer_diagram draws a SystemTimer, a MockTimer or a TimingWheel, not {timer!r}")
    wheels = wheels_of(wheel)
    g = new_graph("timing_wheel", rankdir="TB", fontsize=10, nodesep="0.2", ranksep="0.35")
    g.attr("node", shape="plain")
    if system_timer is not None:
        g.node(
            "timer",
            _queue_text(wheels, system_timer, origin_ms),
            shape="box",
            style="rounded",
            color=GREY,
        )
        g.edge("timer", "level1:title:n", label="  advance_clock", color=GREY)
    for level, w in enumerate(wheels, start=1):
        g.node(f"level{level}", _wheel_table(w, level, origin_ms, label))
        if level > 1:
            g.edge(
                f"level{level - 1}:s",
                f"level{level}:title:n",
                label=f"  overflow wheel: tick {_ms(w.tick_ms)}",
            )
    return g


class _Timeout(TimerTask):
    """A named request timeout for the docs' picture; it does nothing when it runs."""

    def __init__(self, name: str, delay_ms: int) -> None:
        super().__init__(delay_ms)
        self.name = name

    def run(self) -> None:
        pass


def timing_wheel() -> graphviz.Digraph:
    """A ``MockTimer`` with Kafka's 1 ms tick and 20 slots, after a few request timeouts were added
    and 22 ms have passed: ``join-1`` (due at 3 ms) has run, ``fetch-1`` (due at 24 ms) has cascaded
    down from the 400 ms wheel into the 20 ms wheel when the clock reached 20 ms, the 400 ms wheel
    holds the fetches due later, the 8 s wheel the produce and the heartbeat timeouts, and
    ``produce-2`` was cancelled (its request completed), so no bucket holds it."""
    time = MockTime()
    start = time.hi_res_clock_ms()
    timer = MockTimer(time, tick_ms=1, wheel_size=20)
    for name, delay in [
        ("join-1", 3),
        ("fetch-1", 24),
        ("fetch-2", 44),
        ("fetch-3", 350),
        ("produce-1", 1500),
        ("produce-2", 1520),
        ("heartbeat-1", 7351),
    ]:
        task = _Timeout(name, delay)
        timer.add(task)
        if name == "produce-2":
            task.cancel()
    timer.advance_clock(22)
    return timer_diagram(timer, origin_ms=start)
