"""Timer benchmark: Kafka's timing wheel against a heap timer, on request timeouts that are mostly cancelled.

No Kafka twin: modelled on the workload Kafka's purgatory puts on its timer: every waiting request
starts a timeout, and nearly every request completes first and cancels it.

    .venv/bin/python benchmarks/bench_timer.py [--sizes 1000 10000 100000 1000000] [--ops 20000]
                                               [--cancelled 0.99] [--seed 1]

For each number n of outstanding tasks, two timers are filled with n tasks whose delays are spread
over 30 s (a request timeout), then both run the same ``--ops`` rounds: add a task with a fresh
30 s-spread delay, and with probability ``--cancelled`` cancel one outstanding task chosen at random
(the request completed). The rounds go in blocks of 100, alternating between the two timers, so
both meet the same machine conditions. The clock (a ``MockTime``) stands still during the rounds,
so nothing expires while starting and stopping timers is measured. Then the clock moves past every
deadline and each timer expires what it holds: the cost that lazy deletion defers. As ``timeit``
does, the garbage collector is off while a size is measured: its full collections walk every live
object (millions at 10^6 tasks) and would land on whichever timer happened to be running.

* **wheel**: kafka_lite's ``SystemTimer`` (1 ms tick, 20 slots: Kafka's defaults), its ``add`` and
  ``TimerTask.cancel``, with no reaper thread. ``add`` files a task in a bucket by arithmetic
  (O(m) for m wheels, a handful); ``cancel`` unlinks it from its bucket's list, O(1).
* **heap**: the obvious alternative, a ``heapq`` of (expiration, sequence, task) under a lock, with
  lazy deletion: ``cancel`` marks the task and leaves its entry in the heap until its expiration
  comes round. ``add`` is O(log N) at worst (a random expiration sifts up only a few levels on
  average), and N counts the cancelled entries not yet due, not only the live ones: under this
  workload the heap holds every task started in the last timeout period.

Prints, for each n: ns per insert and per cancel for each timer, and ns per task started for
expiring everything at the end (the wheel flushes its buckets, where cancelled tasks no longer are;
the heap pops every entry, cancelled or not, each pop O(log N)); with heap/wheel ratios (above 1:
the wheel is cheaper). heapq is C and the wheel is Python, so the heap can win at every n here;
what the table shows is how each cost grows with n.
"""

from __future__ import annotations

import argparse
import gc
import heapq
import itertools
import random
import statistics
import threading
import time
from dataclasses import dataclass

from headline import add_argument, figure, write

from kafka_lite.common.time import MockTime
from kafka_lite.utils.timer import SystemTimer, TimerTask

TIMEOUT_SPREAD_MS = 30_000  # request.timeout.ms: delays are spread over one timeout period
BLOCK = 100  # rounds timed together, to keep the clock reads out of the per-operation cost


class WheelTask(TimerTask):
    def run(self) -> None:
        pass


class InlineTimer(SystemTimer):
    """A ``SystemTimer`` that runs expired tasks on the thread moving its clock (as ``MockTimer``
    does), so that expiring is measured without a hand-off to the executor thread; ``add`` and
    ``cancel`` are ``SystemTimer``'s own."""

    def _execute(self, timer_task: TimerTask) -> None:
        timer_task.run()

    def expire_all(self) -> None:
        while self.advance_clock(0):
            pass


class HeapTask:
    __slots__ = ("cancelled", "delay_ms")

    def __init__(self, delay_ms: int) -> None:
        self.delay_ms = delay_ms
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True  # lazy deletion: the entry stays in the heap until it is popped

    def run(self) -> None:
        pass


class HeapTimer:
    """A priority-queue timer with lazy deletion: one heap of every task, cancelled or not."""

    def __init__(self, time: MockTime) -> None:
        self.time = time
        self._heap: list[tuple[int, int, HeapTask]] = []
        self._seq = itertools.count()
        self._cond = threading.Condition()

    def add(self, task: HeapTask) -> None:
        with self._cond:
            heapq.heappush(self._heap, (self.time.hi_res_clock_ms() + task.delay_ms, next(self._seq), task))
            self._cond.notify()

    def expire_all(self) -> None:
        """The reaper's loop, until nothing is due: pop, skip a cancelled task, run a live one."""
        now = self.time.hi_res_clock_ms()
        with self._cond:
            while self._heap and self._heap[0][0] <= now:
                _, _, task = heapq.heappop(self._heap)
                if not task.cancelled:
                    task.run()

    def __len__(self) -> int:
        return len(self._heap)


@dataclass
class Side:
    """One timer under test, the tasks it holds, and the time it spent."""

    name: str
    timer: SystemTimer | HeapTimer
    new_task: type
    outstanding: list
    insert_ns: int = 0
    cancel_ns: int = 0
    expire_ns: int = 0
    inserts: int = 0
    cancels: int = 0

    def fill(self, delays: list[int]) -> None:
        for delay in delays:
            task = self.new_task(delay)
            self.timer.add(task)
            self.outstanding.append(task)

    def insert_block(self, delays: list[int]) -> None:
        tasks = [self.new_task(delay) for delay in delays]
        add = self.timer.add
        start = time.perf_counter_ns()
        for task in tasks:
            add(task)
        self.insert_ns += time.perf_counter_ns() - start
        self.inserts += len(tasks)
        self.outstanding.extend(tasks)

    def cancel_block(self, picks: list[float]) -> None:
        victims = []
        for pick in picks:  # remove a random outstanding task (swap with the last: O(1))
            i = int(pick * len(self.outstanding))
            self.outstanding[i], self.outstanding[-1] = self.outstanding[-1], self.outstanding[i]
            victims.append(self.outstanding.pop())
        start = time.perf_counter_ns()
        for task in victims:
            task.cancel()
        self.cancel_ns += time.perf_counter_ns() - start
        self.cancels += len(victims)

    def expire(self) -> None:
        self.timer.time.advance(TIMEOUT_SPREAD_MS + 1)
        start = time.perf_counter_ns()
        self.timer.expire_all()
        self.expire_ns += time.perf_counter_ns() - start


def measure(n: int, ops: int, cancelled: float, rng: random.Random) -> tuple[Side, Side, int]:
    gc.collect()
    gc.disable()
    try:
        return _measure(n, ops, cancelled, rng)
    finally:
        gc.enable()


def _measure(n: int, ops: int, cancelled: float, rng: random.Random) -> tuple[Side, Side, int]:
    fill = [rng.randint(1, TIMEOUT_SPREAD_MS) for _ in range(n)]
    wheel = Side("wheel", InlineTimer("bench", time=MockTime()), WheelTask, [])
    heap = Side("heap", HeapTimer(MockTime()), HeapTask, [])
    wheel.fill(fill)
    heap.fill(fill)
    for block in range(0, ops, BLOCK):
        rounds = min(BLOCK, ops - block)
        delays = [rng.randint(1, TIMEOUT_SPREAD_MS) for _ in range(rounds)]
        picks = [rng.random() for _ in range(rounds) if rng.random() < cancelled]
        first, second = (
            (wheel, heap) if block // BLOCK % 2 == 0 else (heap, wheel)
        )  # alternate who goes first
        for side in (first, second):
            side.insert_block(delays)
        for side in (first, second):
            side.cancel_block(picks)
    assert wheel.timer.size() == len(wheel.outstanding), "the wheel lost or kept a task"
    heap_entries = len(heap.timer)
    wheel.expire()
    heap.expire()
    assert wheel.timer.size() == 0 and len(heap.timer) == 0, "a timer kept a task past its deadline"
    wheel.timer.shutdown()
    return wheel, heap, heap_entries


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000, 1_000_000])
    parser.add_argument("--ops", type=int, default=20_000, help="rounds measured at each size")
    parser.add_argument("--cancelled", type=float, default=0.99, help="share of rounds that cancel a task")
    parser.add_argument("--seed", type=int, default=1)
    add_argument(parser)
    args = parser.parse_args()
    if not 0 <= args.cancelled <= 1:
        parser.error(f"--cancelled must be between 0 and 1, not {args.cancelled}")
    if args.ops < 1 or any(n < 1 for n in args.sizes):
        parser.error("--ops and every --sizes value must be at least 1")
    rng = random.Random(args.seed)

    print(f"{args.ops:,} rounds per size: add one task, cancel one ({args.cancelled:.0%} of rounds)")
    print(
        f"{'outstanding':>11} {'heap size':>10} | {'wheel ins':>9} {'heap ins':>8} {'ratio':>5} |"
        f" {'wheel can':>9} {'heap can':>8} {'ratio':>5} | {'wheel exp':>9} {'heap exp':>8} {'ratio':>5}"
        "   (ns per insert, per cancel, and per task started for expiring all at the end)"
    )
    insert_ratios = []
    figures = []
    for n in args.sizes:
        wheel, heap, heap_entries = measure(n, args.ops, args.cancelled, rng)
        w_ins, h_ins = wheel.insert_ns / wheel.inserts, heap.insert_ns / heap.inserts
        w_can = wheel.cancel_ns / max(wheel.cancels, 1)
        h_can = heap.cancel_ns / max(heap.cancels, 1)
        started = n + args.ops
        w_exp, h_exp = wheel.expire_ns / started, heap.expire_ns / started
        insert_ratios.append(h_ins / w_ins)
        print(
            f"{n:>11,} {heap_entries:>10,} | {w_ins:>9.0f} {h_ins:>8.0f} {h_ins / w_ins:>5.2f} |"
            f" {w_can:>9.0f} {h_can:>8.0f} {h_can / w_can:>5.2f} | {w_exp:>9.0f} {h_exp:>8.0f} {h_exp / w_exp:>5.2f}"
        )
        if n in (args.sizes[0], args.sizes[-1]):
            figures.append(
                figure(
                    f"timer insert at {n:,} outstanding tasks, the heap's time over the wheel's",
                    h_ins / w_ins,
                    "x",
                    detail=f"{w_ins:,.0f} ns against the heap's {h_ins:,.0f} ns",
                )
            )
    if len(insert_ratios) > 1:
        print(
            f"insert ratio heap/wheel from {args.sizes[0]:,} to {args.sizes[-1]:,}: "
            f"{insert_ratios[0]:.2f} -> {insert_ratios[-1]:.2f} (median {statistics.median(insert_ratios):.2f})"
        )
    write(args.json, "bench_timer", figures)


if __name__ == "__main__":
    main()
