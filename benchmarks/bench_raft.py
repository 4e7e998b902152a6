"""Raft benchmark: committed throughput and commit latency of a quorum of 1 and of 3 voters, each a
``kafka-lite raft test-server`` process on loopback.

No Kafka twin: the measurement Kafka's TestRaftServer exists for (KIP-595's "raft performance"
runs: ``bin/test-kraft-server-start.sh`` on each voter, a workload on the leader), made into one
script that compares a quorum that replicates with one that does not.

    .venv/bin/python benchmarks/bench_raft.py [--rounds 5] [--seconds 4] [--linger-ms 5]

Each round starts fresh voters (new data directories) and runs two phases for each quorum size, the
sizes taking turns in an order that rotates each round:

- throughput: the leader appends far more records a second (``--offered``, 400,000) than the quorum
  can commit, 100 bytes each (a quorum of one commits well over 100,000 a second, so a smaller offer
  would measure the offer, not the quorum); the figure is the records committed over the time from the first append to the end
  of the run, as the leader's workload reports it (TestRaftServer's committed rate);
- latency: the leader appends a moderate ``--rate`` records a second; the figure is each record's
  time from ``schedule_append`` to the ``handle_commit`` that returns it (median, 99th percentile and
  maximum), which covers the linger, the leader's flush, the followers' Fetch round trips and their
  flushes.

Medians over the rounds; the ratio of 3 voters' throughput to 1 voter's (goal: at least 50 %: a
replicated write costs a round of Fetch, not a halving) and the 3-voter p99 latency against
``linger + 10 ms``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from headline import add_argument, figure, write

from kafka_lite.utils.ports import free_ports

ROOT = Path(__file__).resolve().parent.parent
GOAL_RATIO = 0.5
LATENCY_SLACK_MS = 10
RECORD_SIZE = 100


def start_voter(
    node_id: int, voters_arg: str, root: Path, throughput: int, seconds: int, linger_ms: int
) -> subprocess.Popen:
    command = [
        sys.executable, "-m", "kafka_lite.cli.main", "raft", "test-server", "--node-id", str(node_id),
        "--voters", voters_arg, "--data-dir", str(root / f"voter-{node_id}"), "--throughput", str(throughput),
        "--record-size", str(RECORD_SIZE), "--linger-ms", str(linger_ms), "--duration", str(seconds),
    ]  # fmt: skip
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=ROOT)


def run_quorum(voters: int, throughput: int, seconds: int, linger_ms: int) -> dict:
    """Start ``voters`` test-server processes for ``seconds``; the summary of the voter that led."""
    with tempfile.TemporaryDirectory(prefix="bench-raft-") as root:
        port = free_ports(voters)
        voters_arg = ",".join(f"{i + 1}@127.0.0.1:{port + i}" for i in range(voters))
        processes = [
            start_voter(i + 1, voters_arg, Path(root), throughput, seconds, linger_ms) for i in range(voters)
        ]
        summaries = []
        for process in processes:
            out, _ = process.communicate(timeout=seconds + 60)
            lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
            summaries += [line for line in lines if line.get("event") == "summary"]
    led = max(summaries, key=lambda s: s["committed"])
    if led["committed"] == 0:
        raise RuntimeError(f"no voter committed anything with {voters} voter(s): {summaries}")
    # Each voter's CPU as a share of one core over the run, the leader's first: three processes on a
    # machine of two cores share them.
    others = [s for s in summaries if s is not led]
    return {**led, "cores": [s["cpu_s"] / seconds for s in [led, *others]]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=int, default=4, help="length of each phase's run")
    parser.add_argument("--linger-ms", type=int, default=5, help="controller.quorum.append.linger.ms")
    parser.add_argument(
        "--offered", type=int, default=400_000, help="records/s offered in the throughput phase"
    )
    parser.add_argument("--rate", type=int, default=1_000, help="records/s in the latency phase")
    add_argument(parser)
    args = parser.parse_args()

    throughput: dict[int, list[float]] = {1: [], 3: []}
    per_batch: dict[int, list[float]] = {1: [], 3: []}  # records in a committed batch, under the offered load
    cores: dict[int, list[list[float]]] = {1: [], 3: []}  # each voter's share of a core, the leader's first
    latency: dict[int, dict[str, list[float]]] = {n: {"p50": [], "p99": [], "max": []} for n in (1, 3)}
    for round_ in range(args.rounds):
        order = (1, 3) if round_ % 2 == 0 else (3, 1)
        for voters in order:
            saturated = run_quorum(voters, args.offered, args.seconds, args.linger_ms)
            throughput[voters].append(saturated["throughput"])
            per_batch[voters].append(saturated["records_per_batch"])
            cores[voters].append(saturated["cores"])
            paced = run_quorum(voters, args.rate, args.seconds, args.linger_ms)
            for key in ("p50", "p99", "max"):
                latency[voters][key].append(paced[f"latency_{key}_ms"])
            print(f"round {round_ + 1}, {voters} voter(s): {saturated['throughput']:>9,.0f} records/s committed, "
                  f"{saturated['records_per_batch']:,.0f} a batch, "
                  f"CPU {' + '.join(f'{c:.0%}' for c in saturated['cores'])} of a core; "
                  f"at {args.rate:,}/s p50 {paced['latency_p50_ms']:.0f} ms, p99 {paced['latency_p99_ms']:.0f} ms, "
                  f"max {paced['latency_max_ms']:.0f} ms", flush=True)  # fmt: skip

    median = {n: statistics.median(throughput[n]) for n in (1, 3)}
    lat = {n: {k: statistics.median(v) for k, v in latency[n].items()} for n in (1, 3)}
    batch = {n: statistics.median(per_batch[n]) for n in (1, 3)}
    ratio = median[3] / median[1]
    bound = args.linger_ms + LATENCY_SLACK_MS
    print()
    print(f"medians of {args.rounds} rounds, {RECORD_SIZE}-byte records, linger {args.linger_ms} ms")
    print(
        f"{'voters':>6} {'committed records/s':>20} {'records a batch':>16} {'p50 ms':>7} {'p99 ms':>7} {'max ms':>7}"
    )
    for n in (1, 3):
        print(f"{n:>6} {median[n]:>20,.0f} {batch[n]:>16,.0f} "
              f"{lat[n]['p50']:>7.0f} {lat[n]['p99']:>7.0f} {lat[n]['max']:>7.0f}")  # fmt: skip
    busy = {n: [statistics.median(c) for c in zip(*cores[n], strict=True)] for n in (1, 3)}
    print(
        "CPU under the offered load, each voter's share of a core, the leader's first: "
        + "; ".join(f"{n} voter(s) {' + '.join(f'{c:.0%}' for c in busy[n])}" for n in (1, 3))
    )
    print(f"3 voters' throughput as a share of 1 voter's: {ratio:.0%} (goal: at least {GOAL_RATIO:.0%})")
    print(
        f"3 voters' p99 commit latency: {lat[3]['p99']:.0f} ms (goal: at most linger + {LATENCY_SLACK_MS} = {bound} ms)"
    )

    write(args.json, "bench_raft", [
        figure("3 voters' committed throughput / 1 voter's", ratio, "%", at_least=GOAL_RATIO,
               detail=f"{median[3]:,.0f} records/s against {median[1]:,.0f}; CPU, shares of a core, "
                      f"leader first: {' + '.join(f'{c:.0%}' for c in busy[3])} against {busy[1][0]:.0%}"),
        figure("3 voters' p99 commit latency", lat[3]["p99"], "ms", at_most=bound,
               detail=f"at {args.rate:,} records/s, linger {args.linger_ms} ms; p50 {lat[3]['p50']:.0f} ms"),
        figure("1 voter's p99 commit latency", lat[1]["p99"], "ms",
               detail=f"p50 {lat[1]['p50']:.0f} ms"),
        figure("3 voters' records in a committed batch, under the offered load", batch[3], "records",
               detail=f"1 voter's: {batch[1]:,.0f}; offered {args.offered:,} records/s, linger {args.linger_ms} ms"),
    ])  # fmt: skip


if __name__ == "__main__":
    main()
