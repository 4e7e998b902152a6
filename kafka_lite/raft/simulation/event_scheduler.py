"""One queue of events over simulated time: what makes a simulated quorum deterministic.

Mirrors: org.apache.kafka.raft.RaftEventSimulationTest (EventScheduler, Event and PeriodicEvent)
         (raft/src/test/java/org/apache/kafka/raft/RaftEventSimulationTest.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: ``run_until`` is bounded by simulated time as well as by a number of events, so a scenario
         can state how soon something must happen (an election within a few timeouts); a failure
         is a ``SimulationFailure`` that carries the seed and the command that replays it.

Events are ordered by deadline, then by the sequence number they got when scheduled: two events due
at the same millisecond always run in the order they were scheduled, never in an order a hash or a
thread decides. The clock jumps straight to the next deadline, so a simulated hour costs only the
events in it. A periodic event reschedules itself after its period plus a jitter drawn from the
scheduler's seeded random: the jitter is what shakes the interleavings from one seed to the next.
"""

from __future__ import annotations

import heapq
import itertools
import random as _random
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from kafka_lite.common.time import MockTime

# Kafka's bound on the events of one runUntil.
MAX_ITERATIONS = 500_000


class SimulationFailure(AssertionError):
    """An invariant broken, a condition never reached, or a node that crashed while polling."""

    def __init__(
        self, check: str, seed: int, time_ms: int, nodes: Iterable[int], detail: str, scenario: str | None
    ) -> None:
        self.check = check
        self.seed = seed
        self.time_ms = time_ms
        self.nodes = sorted(nodes)
        self.detail = detail
        self.scenario = scenario
        replay = scenario or "<scenario>"
        super().__init__(
            f"{check} violated (seed {seed}, simulated time {time_ms} ms, nodes {self.nodes}): {detail}\n"
            f"replay: .venv/bin/python -m kafka_lite.raft.simulation {replay} --seed {seed}"
        )


@dataclass(order=True)
class Event:
    deadline_ms: int
    event_id: int
    action: Callable[[], None] = field(compare=False)
    period_ms: int | None = field(default=None, compare=False)
    jitter_ms: int = field(default=0, compare=False)
    # Whether the invariants run after it: see ``schedule``.
    check_invariants: bool = field(default=True, compare=False)


class EventScheduler:
    def __init__(
        self, random: _random.Random, time: MockTime, seed: int, scenario: str | None = None
    ) -> None:
        self.random = random
        self.time = time
        self.seed = seed
        self.scenario = scenario
        self._start_ms = time.milliseconds()
        self._event_ids = itertools.count(1)
        self._queue: list[Event] = []
        # Invariants run after every event; validations once, when a run_until ends.
        self.invariants: list = []
        self.validations: list = []

    def add_invariant(self, invariant) -> None:
        self.invariants.append(invariant)

    def add_validation(self, validation) -> None:
        self.validations.append(validation)

    def elapsed_ms(self) -> int:
        """Simulated time since the scheduler was made: what a failure reports."""
        return self.time.milliseconds() - self._start_ms

    def schedule(
        self, action: Callable[[], None], delay_ms: int, period_ms: int, jitter_ms: int,
        check_invariants: bool = True,
    ) -> None:  # fmt: skip
        """Run ``action`` after ``delay_ms``, then every ``period_ms`` plus up to ``jitter_ms``.

        ``check_invariants=False`` is for events that only put a message in a client's queue or an
        append in its accumulator: nothing the invariants read (stores, logs, high watermarks)
        changes until the next poll, so checking after them would only repeat the last check.
        Kafka checks after every event; the states checked are the same."""
        heapq.heappush(self._queue, Event(
            self.time.milliseconds() + delay_ms, next(self._event_ids), action, period_ms, jitter_ms,
            check_invariants,
        ))  # fmt: skip

    def schedule_once(self, action: Callable[[], None], delay_ms: int, check_invariants: bool = True) -> None:
        heapq.heappush(self._queue, Event(
            self.time.milliseconds() + delay_ms, next(self._event_ids), action, None, 0, check_invariants
        ))  # fmt: skip

    def fail(self, check: str, nodes: Iterable[int], detail: str) -> SimulationFailure:
        return SimulationFailure(check, self.seed, self.elapsed_ms(), nodes, detail, self.scenario)

    def check_invariants(self) -> None:
        """Verify every invariant now (also after a scenario's own step: a kill, a restart)."""
        for invariant in self.invariants:
            invariant.verify(self)

    def run_for(self, duration_ms: int) -> None:
        """Run every event due within ``duration_ms`` of simulated time: a scenario's "sleep"."""
        deadline_ms = self.time.milliseconds() + duration_ms
        self.run_until(
            lambda: bool(self._queue) and self._queue[0].deadline_ms > deadline_ms, "run for a while"
        )
        self.time.sleep(max(deadline_ms - self.time.milliseconds(), 0))

    def run_until(
        self,
        exit_condition: Callable[[], bool],
        what: str,
        within_ms: int | None = None,
        validate: bool = True,
    ) -> None:
        """Run events until ``exit_condition`` holds; fail if it has not within ``within_ms`` of
        simulated time (or ``MAX_ITERATIONS`` events). The validations run at the end unless
        ``validate`` is False (a scenario's short pauses; its next wait validates)."""
        deadline_ms = None if within_ms is None else self.time.milliseconds() + within_ms
        for _ in range(MAX_ITERATIONS):
            if exit_condition():
                break
            if not self._queue:
                raise self.fail(what, [], "the event queue is empty before the condition holds")
            event = heapq.heappop(self._queue)
            if deadline_ms is not None and event.deadline_ms > deadline_ms:
                heapq.heappush(self._queue, event)
                break
            self.time.sleep(max(event.deadline_ms - self.time.milliseconds(), 0))
            try:
                event.action()
            except SimulationFailure:
                raise
            except Exception as e:
                # A node that throws from poll is a bug as surely as a broken invariant.
                raise self.fail("no uncaught exception", getattr(e, "node_ids", []), f"{e!r}") from e
            if event.period_ms is not None:
                jitter = self.random.randrange(event.jitter_ms) if event.jitter_ms else 0
                self.schedule(
                    event.action,
                    event.period_ms + jitter,
                    event.period_ms,
                    event.jitter_ms,
                    event.check_invariants,
                )
            if event.check_invariants:
                self.check_invariants()
        if not exit_condition():
            bound = (
                f"{within_ms} ms of simulated time" if within_ms is not None else f"{MAX_ITERATIONS} events"
            )
            raise self.fail(what, [], f"not reached within {bound}")
        if validate:
            for validation in self.validations:
                validation.validate(self)
