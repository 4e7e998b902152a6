"""Jepsen checker benchmark: the analysis of a 100,000-operation history, against the goal of 10 s.

No Kafka twin: modelled on the histories Jepsen's Kafka workload records, which its checker reads
after every run; the checker's cost grows with the history, so it must stay linear in it.

    .venv/bin/python benchmarks/bench_jepsen_checker.py [--ops 100000] [--processes 10] [--keys 10]
                                                        [--rounds 3] [--seed 1] [--ww-deps]

The history is synthetic and valid: ``--processes`` clients over ``--keys`` keys, each with an op
open at a time, their invocations and completions interleaved at random. An op takes effect when it
completes, against an in-memory log per key: a send appends (its offset known), a poll reads from
the process's position up to 20 records of each key it holds, a txn polls then sends up to 3
values and leaves a transaction marker's offset that nobody reads. A few sends end info or fail
without taking effect. A last process assigns every key from the beginning and polls to each
key's end, as the workload's final phase does, so nothing acknowledged goes unseen.

Prints the history's size and ``check``'s seconds in each round (wall clock, and the process's CPU
seconds, which other work on the machine does not inflate), then the medians of the rounds against
the goal of 10 s.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from headline import add_argument, figure, write

from kafka_lite.jepsen.checker import check
from kafka_lite.jepsen.history import Op

GOAL_S = 10.0
POLL_BATCH = 20  # records of one key a poll returns at most


class Synthetic:
    """A valid history, built op by op: the log and each process's position are kept here."""

    def __init__(self, processes: int, keys: int, rng: random.Random) -> None:
        self.rng = rng
        self.keys = list(range(keys))
        self.logs: dict[int, list] = {k: [] for k in self.keys}  # offset -> value (None: a marker)
        self.next_value = dict.fromkeys(self.keys, 0)
        self.positions: dict[int, dict[int, int]] = {p: {} for p in range(processes)}
        self.ops: list[Op] = []

    def add(self, type: str, process: int, f: str, value, **fields) -> Op:
        op = Op(len(self.ops), type, process, f, value, len(self.ops) * 1_000_000, **fields)
        self.ops.append(op)
        return op

    def invocation(self, process: int) -> tuple[str, list]:
        if not self.positions[process] or self.rng.random() < 0.02:
            held = self.rng.sample(self.keys, self.rng.randint(1, len(self.keys)))
            return "assign", held
        roll = self.rng.random()
        if roll < 0.4:
            return "send", [("send", self.fresh_key(), None)]
        if roll < 0.8:
            return "poll", [("poll",)]
        mops = [("poll",)] + [("send", self.fresh_key(), None) for _ in range(self.rng.randint(1, 3))]
        return "txn", mops

    def fresh_key(self) -> int:
        return self.rng.choice(self.keys)

    def with_values(self, mops: list) -> list:
        out = []
        for mop in mops:
            if mop[0] == "send":
                k = mop[1]
                self.next_value[k] += 1
                out.append(("send", k, self.next_value[k]))
            else:
                out.append(mop)
        return out

    def complete(self, process: int, f: str, mops: list) -> tuple[str, list]:
        if f == "assign":
            self.positions[process] = {k: self.positions[process].get(k, 0) for k in mops}
            return "ok", mops
        if f == "send" and self.rng.random() < 0.02:
            return self.rng.choice(("info", "fail")), mops  # lost in flight: never took effect
        out = []
        for mop in mops:
            if mop[0] == "poll":
                out.append(("poll", self.poll(process)))
            else:
                _, k, v = mop
                self.logs[k].append(v)
                out.append(("send", k, (len(self.logs[k]) - 1, v)))
        if f == "txn":
            for k in {mop[1] for mop in mops if mop[0] == "send"}:
                self.logs[k].append(None)  # the commit marker takes an offset
        return "ok", out

    def poll(self, process: int) -> dict:
        read = {}
        for k, position in self.positions[process].items():
            log = self.logs[k]
            records = [
                (o, log[o])
                for o in range(position, min(len(log), position + POLL_BATCH))
                if log[o] is not None
            ]
            self.positions[process][k] = min(len(log), position + POLL_BATCH)
            read[k] = records
        return read

    def final_phase(self, process: int) -> None:
        """Every key assigned from the beginning and polled to its end (the workload's final phase)."""
        assign = self.add("invoke", process, "assign", self.keys, seek_to_beginning=True)
        self.add("ok", process, "assign", assign.value, seek_to_beginning=True)
        self.positions[process] = dict.fromkeys(self.keys, 0)
        while any(self.positions[process][k] < len(self.logs[k]) for k in self.keys):
            self.add("invoke", process, "poll", [("poll",)])
            self.add("ok", process, "poll", [("poll", self.poll(process))])


def synthetic_history(ops: int, processes: int, keys: int, seed: int) -> list[Op]:
    rng = random.Random(seed)
    history = Synthetic(processes, keys, rng)
    open_ops: dict[int, tuple[str, list]] = {}
    while len(history.ops) < ops - 2 * len(open_ops):
        process = rng.randrange(processes)
        if process in open_ops:
            f, mops = open_ops.pop(process)
            type, value = history.complete(process, f, mops)
            history.add(type, process, f, value)
        else:
            f, mops = history.invocation(process)
            mops = history.with_values(mops) if f != "assign" else mops
            open_ops[process] = (f, mops)
            history.add("invoke", process, f, mops)
    for process, (f, mops) in open_ops.items():
        type, value = history.complete(process, f, mops)
        history.add(type, process, f, value)
    history.final_phase(processes)
    return history.ops


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=100_000, help="operations (invocations and completions)")
    parser.add_argument("--processes", type=int, default=10)
    parser.add_argument("--keys", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--ww-deps", action="store_true", help="also infer write-write edges")
    add_argument(parser)
    args = parser.parse_args()
    if min(args.ops, args.processes, args.keys, args.rounds) < 1:
        parser.error("--ops, --processes, --keys and --rounds must be at least 1")

    history = synthetic_history(args.ops, args.processes, args.keys, args.seed)
    print(f"{len(history):,} operations, {args.processes} processes, {args.keys} keys")
    seconds, cpu_seconds = [], []
    for round in range(1, args.rounds + 1):
        started, cpu_started = time.perf_counter(), time.process_time()
        result = check(history, ww_deps=args.ww_deps)
        seconds.append(time.perf_counter() - started)
        cpu_seconds.append(time.process_time() - cpu_started)
        print(
            f"round {round}: check {seconds[-1]:.2f} s ({cpu_seconds[-1]:.2f} s of CPU),"
            f" valid {result['valid']}, errors {result['error_types']}"
        )
        if not result["valid"]:
            raise SystemExit("the synthetic history should be valid: the checker or the generator is wrong")
    median, cpu_median = statistics.median(seconds), statistics.median(cpu_seconds)
    print(
        f"median of {args.rounds} rounds: {median:.2f} s, {cpu_median:.2f} s of CPU"
        f" (goal: at most {GOAL_S:.0f} s; on a busy machine the CPU seconds are the analysis's own)"
    )
    write(
        args.json,
        "bench_jepsen_checker",
        [
            figure(
                f"Jepsen checker on a {len(history):,}-operation history",
                median,
                "s",
                at_most=GOAL_S,
                detail=f"median of {args.rounds} rounds of check(), {cpu_median:.2f} s of CPU",
            )
        ],
    )


if __name__ == "__main__":
    main()
