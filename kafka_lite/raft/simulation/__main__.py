"""Run a simulation scenario from the command line, to replay a failing seed or to search many.

No Kafka twin: Kafka replays a failed jqwik property by re-running it with the reported seed; this
is that, as a command::

    python -m kafka_lite.raft.simulation canElectInitialLeader --seed 7
    python -m kafka_lite.raft.simulation canRecoverAfterAllNodesKilled --seeds 0..99
    python -m kafka_lite.raft.simulation all --seeds 0..499

``all`` runs every scenario on each seed; a failure prints the invariant, the seed, the simulated
time, the nodes and the one command that replays it.
"""

from __future__ import annotations

import argparse
import sys

from kafka_lite.raft.simulation.event_scheduler import SimulationFailure
from kafka_lite.raft.simulation.scenarios import SCENARIOS


def _seed_range(text: str) -> range:
    low, _, high = text.partition("..")
    return range(int(low), int(high) + 1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m kafka_lite.raft.simulation", description=__doc__.split("\n")[0]
    )
    parser.add_argument("scenario", choices=["all", *sorted(SCENARIOS)])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--seed", type=int)
    group.add_argument("--seeds", type=_seed_range, help="an inclusive range, A..B")
    args = parser.parse_args(argv)
    seeds = [args.seed] if args.seed is not None else args.seeds
    names = sorted(SCENARIOS) if args.scenario == "all" else [args.scenario]
    failures = 0
    # Seed by seed, every scenario on each: a batch stopped early has covered its first seeds fully.
    for seed in seeds:
        for name in names:
            prefix = f"{name} " if len(names) > 1 else ""
            try:
                sim = SCENARIOS[name](seed)
            except SimulationFailure as e:
                failures += 1
                print(f"{prefix}seed {seed}: FAILED\n{e}", flush=True)
                continue
            print(f"{prefix}seed {seed}: ok ({sim.scheduler.elapsed_ms()} ms simulated, leader {sim.cluster.latest_leader()}, "
                  f"high watermark {sim.cluster.max_high_watermark_reached()})", flush=True)  # fmt: skip
    runs = len(names) * len(seeds)
    print(f"{runs - failures}/{runs} {'runs' if len(names) > 1 else 'seeds'} passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
