"""Controller benchmark: how long the controller takes to elect new leaders for many partitions when
their broker dies, and how long a new controller takes to fail over, on a 3-broker in-process
kafka_lite cluster with a real ZooKeeper, in one run.

No Kafka twin: the two times Kafka's controller work of 1.1 set out to shorten (a broker's failure
and a controller's failover with many partitions), measured on this cluster.

    .venv/bin/python benchmarks/bench_controller.py [--partitions 1000] [--replication-factor 3]
        [--rounds 5] [--part a|b|both]

One topic of ``--partitions`` partitions, replication factor ``--replication-factor`` (3 unless
given), Kafka's round-robin assignment, so each broker leads about a third of them.

Part a, election on a broker's death: a broker other than the controller dies without a controlled
shutdown: its ZooKeeper client is closed, so its session ends at once and its registration
znode goes (an expired session, without the wait for the timeout), then the rest of it stops. The
time runs from the start of the controller's handling of the broker-change event to the last
LeaderAndIsr answer among the requests that event sent. The broker then starts again and a
preferred replica election gives it back its partitions before the next round.

Part b, failover: the controller's broker dies the same way. The time runs from the start of the
new controller's ``on_controller_failover`` to the later of its end and the last answer to the
requests it sent (UpdateMetadata to every live broker, LeaderAndIsr for partitions it elected
leaders for). The broker then starts again (as a broker, not the controller).

The hooks wrap ``KafkaController`` and ``ControllerChannelManager`` methods from this script; the
code measured carries nothing for the benchmark. Each part prints every round, then the median, the
minimum and the maximum against the goal (5 s).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from headline import add_argument, figure, write

from kafka_lite.controller.controller_channel_manager import ControllerChannelManager
from kafka_lite.controller.kafka_controller import KafkaController
from kafka_lite.zk.embedded import EmbeddedZooKeeper
from tests.support.cluster import LiteCluster
from tests.support.waiting import wait_until

TOPIC = "bench-controller"
GOAL_S = 5.0


class Measurement:
    """One timed controller step: its start, its end, and the answers to the requests it sent."""

    def __init__(self) -> None:
        self.start: float | None = None
        self.returned: float | None = None
        self.sent = 0
        self.answered = 0
        self.last_answer = 0.0
        self.lock = threading.Lock()

    def done(self) -> bool:
        with self.lock:
            return self.returned is not None and self.answered == self.sent

    def seconds(self) -> float:
        return max(self.returned, self.last_answer) - self.start


class Hooks:
    """Wraps the controller's event handlers and its request sending, class-wide."""

    def __init__(self) -> None:
        self.armed: str | None = None  # the handler to time next: "broker_change" or "failover"
        self.current: Measurement | None = None
        self.results: list[Measurement] = []
        hooks = self

        def timed(name, original):
            def wrapper(controller, *args, **kwargs):
                if hooks.armed != name:
                    return original(controller, *args, **kwargs)
                hooks.armed = None
                m = Measurement()
                m.start = time.perf_counter()
                hooks.current = m
                try:
                    return original(controller, *args, **kwargs)
                finally:
                    m.returned = time.perf_counter()
                    hooks.current = None
                    hooks.results.append(m)

            return wrapper

        KafkaController.handle_broker_change = timed("broker_change", KafkaController.handle_broker_change)
        KafkaController.on_controller_failover = timed("failover", KafkaController.on_controller_failover)
        original_send = ControllerChannelManager.send_request

        def send_request(manager, broker_id, api, version, body, callback=None):
            m = hooks.current
            if m is None or api.api_name not in ("LeaderAndIsr", "UpdateMetadata"):
                return original_send(manager, broker_id, api, version, body, callback)
            with m.lock:
                m.sent += 1

            def answered(response):
                try:
                    if callback is not None:
                        callback(response)
                finally:
                    with m.lock:
                        m.answered += 1
                        m.last_answer = max(m.last_answer, time.perf_counter())

            return original_send(manager, broker_id, api, version, body, answered)

        ControllerChannelManager.send_request = send_request


def kill(cluster: LiteCluster, broker_id: int) -> None:
    """Close the broker's ZooKeeper client (its session and ephemeral znodes end at once), then stop
    the rest of it."""
    server = cluster.server(broker_id)
    server.zk.client.stop()
    try:
        server.shutdown()
    except Exception:  # its ZooKeeper client is gone: the parts that talk to ZooKeeper fail
        pass


def restore(cluster: LiteCluster, broker_id: int, partitions: int) -> None:
    """Start the broker again and give every partition back to its preferred replica."""
    cluster.restart_broker(broker_id)
    controller = cluster.controller()
    replicas = controller.context.partition_replica_assignment
    asked = [0.0]

    def balanced() -> bool:
        # A replica is elected once it is back in the ISR: ask again until every partition is home.
        moved = {
            (TOPIC, p) for p in range(partitions) if cluster.leader_of(TOPIC, p) != replicas[(TOPIC, p)][0]
        }
        if moved and time.monotonic() - asked[0] > 1:
            asked[0] = time.monotonic()
            controller.put_event(
                "PreferredReplicaLeaderElection", lambda: controller.on_preferred_replica_election(moved)
            )
        return not moved

    wait_until(balanced, what="every partition led by its preferred replica", timeout_s=120)


def summary(name: str, times: list[float]) -> None:
    med = statistics.median(times)
    print(
        f"{name}: median {med:.3f} s, min {min(times):.3f} s, max {max(times):.3f} s "
        f"over {len(times)} rounds (goal: under {GOAL_S:.0f} s, {'met' if med < GOAL_S else 'not met'})"
    )


def main(argv=None) -> dict[str, list[float]]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--partitions", type=int, default=1000)
    parser.add_argument("--replication-factor", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--part", choices=["a", "b", "both"], default="both")
    add_argument(parser)
    args = parser.parse_args(argv)
    hooks = Hooks()
    results: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-controller-") as tmp:
        zk = EmbeddedZooKeeper(Path(tmp) / "zookeeper")
        zk.start()
        cluster = LiteCluster(zk.connect_string, Path(tmp) / "cluster", brokers=3)
        try:
            cluster.start()
            cluster.create_topic(TOPIC, args.partitions, args.replication_factor)
            print(f"{args.partitions} partitions, replication factor {args.replication_factor}, 3 brokers")
            if args.part in ("a", "both"):
                times = []
                for r in range(args.rounds):
                    controller_id = cluster.controller().broker_id
                    victim = next(s.broker_id for s in cluster.servers if s.broker_id != controller_id)
                    led = sum(cluster.leader_of(TOPIC, p) == victim for p in range(args.partitions))
                    hooks.armed = "broker_change"
                    before = len(hooks.results)
                    kill(cluster, victim)
                    wait_until(
                        lambda before=before: len(hooks.results) > before,
                        what="the broker change",
                        timeout_s=120,
                    )
                    m = hooks.results[-1]
                    wait_until(m.done, what="every LeaderAndIsr answered", timeout_s=120)
                    times.append(m.seconds())
                    print(
                        f"  a round {r + 1}: broker {victim} led {led} partitions; "
                        f"{m.sent} requests; {m.seconds():.3f} s"
                    )
                    restore(cluster, victim, args.partitions)
                summary("a, election on a broker's death", times)
                results["a"] = times
            if args.part in ("b", "both"):
                times = []
                for r in range(args.rounds):
                    old = cluster.controller().broker_id
                    hooks.armed = "failover"
                    before = len(hooks.results)
                    kill(cluster, old)
                    wait_until(
                        lambda before=before: len(hooks.results) > before, what="the failover", timeout_s=120
                    )
                    m = hooks.results[-1]
                    wait_until(m.done, what="every failover request answered", timeout_s=120)
                    times.append(m.seconds())
                    new = cluster.controller().broker_id
                    print(
                        f"  b round {r + 1}: controller {old} died, {new} took over; "
                        f"{m.sent} requests; {m.seconds():.3f} s"
                    )
                    restore(cluster, old, args.partitions)
                summary("b, controller failover", times)
                results["b"] = times
        finally:
            cluster.stop()
            zk.stop()
    names = {"a": "controller, leader election on a broker's death", "b": "controller failover"}
    write(
        args.json,
        "bench_controller",
        [
            figure(
                f"{names[part]}, {args.partitions:,} partitions",
                statistics.median(times),
                "s",
                at_most=GOAL_S,
                detail=f"median of {len(times)} rounds, {min(times):.2f} to {max(times):.2f} s",
            )
            for part, times in results.items()
        ],
    )
    return results


if __name__ == "__main__":
    main()
