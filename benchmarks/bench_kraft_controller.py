"""KRaft controller benchmark: the quorum controller beside the ZooKeeper controller at 1,000 partitions,
both clusters started as a user starts them, measured in one run in alternating rounds.

No Kafka twin: KIP-500's argument, measured. A ZooKeeper controller that takes over reads every
partition's state from ZooKeeper before it serves; a KRaft standby controller already holds the
metadata in its replica of the metadata log, so its failover should be a small part of the other's.

    .venv/bin/python benchmarks/bench_kraft_controller.py [--partitions 1000] [--rounds 5] [--json PATH]

Two clusters run side by side for the whole run: ``kafka-lite cluster up`` (ZooKeeper and 3
brokers) and ``kafka-lite cluster up --kraft`` (3 combined nodes), each through
``cli.cluster.start_cluster``, each with one topic of ``--partitions`` partitions, replication factor
3. Detection is set equal where the two correspond: the brokers' ZooKeeper session
(``zookeeper.session.timeout.ms``) and the voters' ``controller.quorum.fetch.timeout.ms`` are both
2 s, and so are the KRaft brokers' sessions with the controller (``broker.session.timeout.ms``).

Each round is a ZooKeeper round, then a KRaft round; each measures, in this order:

* failover: the active controller's process is SIGKILLed. The script then creates a new topic of one
  partition through a broker (replication factor 2, what the two survivors can hold), retrying
  until it is accepted, and polls the surviving brokers' Metadata every 10 ms until both list it
  with a leader: the new controller has served its first metadata change. Timed (1) from the kill and (2) from the moment the new
  controller is chosen: the new ``/controller`` znode's ctime, or the first DescribeQuorum (polled
  every 10 ms) that names a new leader. The killed node then starts again and rejoins.
* re-election: the broker (not the controller) that leads most of the topic's partitions is
  SIGKILLed. Timed from the controller's decision (ZooKeeper: the broker's ``/brokers/ids`` znode
  going, polled every 10 ms; KRaft: the broker fenced, seen as it leaving the brokers of a Metadata
  response) to the first moment both surviving brokers' Metadata show every one of its partitions
  led by another broker. The broker then starts again and rejoins.

Neither cluster balances leaders back (``auto.leader.rebalance.enable=false``; kafka_lite's quorum
controller has no leader balancing, as Kafka 3.3's has none in this form), so the victim of a
re-election round is whoever leads most at that time, and its count is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from headline import add_argument, figure, write

from kafka_lite.cli import CliError, cluster_kraft
from kafka_lite.cli import cluster as base
from kafka_lite.clients.admin import KafkaAdminClient, NewTopic
from kafka_lite.clients.metadata import Cluster
from kafka_lite.common.errors import Errors
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.raft.tools.quorum_client import find_leader
from kafka_lite.utils.ports import free_ports
from kafka_lite.zk.zk_utils import ZkUtils
from tests.support.waiting import wait_until
from tests.support.wire import WireClient

TOPIC = "bench-kraft-controller"
POLL_S = 0.01
DETECTION_MS = 2000
FAILOVER_GOAL = 0.1  # KRaft's failover from the choice, as a share of the ZooKeeper controller's
REELECTION_GOAL_S = 1.0
ROUND_TIMEOUT_S = 180
REJOIN_TIMEOUT_S = 300
COMMON = ["auto.create.topics.enable=false", "auto.leader.rebalance.enable=false"]
OVERRIDES = {
    "ZooKeeper": [*COMMON, f"zookeeper.session.timeout.ms={DETECTION_MS}"],
    "KRaft": [
        *COMMON,
        f"controller.quorum.fetch.timeout.ms={DETECTION_MS}",
        f"broker.session.timeout.ms={DETECTION_MS}",
        "broker.heartbeat.interval.ms=500",
    ],
}


@dataclass
class Mode:
    """One of the two clusters: its state (``cluster.json``'s content) and, for ZooKeeper, a client."""

    name: str
    state: dict
    zk: ZkUtils | None = None
    failover: list[tuple[float, float]] = field(default_factory=list)  # (from the death, from the choice)
    reelection: list[tuple[float, float]] = field(default_factory=list)  # (from the decision, from the death)

    @property
    def kraft(self) -> bool:
        return self.zk is None

    def node(self, node_id: int) -> dict:
        return next(n for n in self.state["brokers"] if n["id"] == node_id)

    def controller(self) -> int:
        if self.kraft:
            quorum = cluster_kraft.describe_quorum(self.state)
            if quorum is None:
                raise RuntimeError("no KRaft voter answers DescribeQuorum as the leader")
            return quorum.leader_id
        return self.zk.get_controller_id()


# -- the clients' view ----------------------------------------------------------------------------------------


def metadata(port: int, topics: list[str]) -> Cluster | None:
    """One Metadata request (v1: brokers, controller id, the topics' partitions), or None if the broker
    does not answer."""
    try:
        client = WireClient(port, timeout_s=5)
    except OSError:
        return None
    try:
        return Cluster.from_metadata_response(client.call(ApiKeys.METADATA, 1, {"topics": topics}))
    except (OSError, EOFError):
        return None
    finally:
        client.close()


def create_topic(mode: Mode, survivors: list[dict], topic: str) -> None:
    """Create a one-partition topic through a broker, as a client does: to the controller id a
    surviving broker's Metadata names (a ZooKeeper broker refuses CreateTopics unless it is the
    controller; a KRaft broker forwards it), again until it is accepted."""
    body = {
        "create_topic_requests": [NewTopic(topic, 1, 2).to_request()],
        "timeout": 10_000,
        "validate_only": False,
    }
    deadline = time.monotonic() + ROUND_TIMEOUT_S
    last = "no surviving broker answered Metadata"
    while time.monotonic() < deadline:
        for node in survivors:
            cluster = metadata(node["port"], [])
            target = cluster.controller if cluster is not None else None
            if target is None:
                last = f"broker {node['id']}'s Metadata named no live controller"
                continue
            try:
                client = WireClient(target.port, timeout_s=15)
                try:
                    response = client.call(ApiKeys.CREATE_TOPICS, 2, body)
                finally:
                    client.close()
            except (OSError, EOFError) as e:
                last = f"broker {target.id} did not answer CreateTopics ({e})"
                continue
            code = response["topic_errors"][0]["error_code"]
            if code in (Errors.NONE.code, Errors.TOPIC_ALREADY_EXISTS.code):
                return
            last = f"broker {target.id} answered {Errors.for_code(code).name}"
        time.sleep(POLL_S)  # a retry's backoff; bounded by the deadline
    raise RuntimeError(f"{mode.name}: {topic} was not accepted within {ROUND_TIMEOUT_S} s: {last}")


def led_by(cluster: Cluster, topic: str) -> Counter:
    return Counter(p.leader.id for p in cluster.partitions.values() if p.topic == topic and p.leader)


# -- the clusters ---------------------------------------------------------------------------------------------


def start(name: str, directory: Path, partitions: int) -> Mode:
    kraft = name == "KRaft"
    port = free_ports(4)
    state = base.start_cluster(directory, 3, port, port + 1, OVERRIDES[name], kraft=kraft)
    mode = Mode(name, state)
    try:
        prepare(mode, partitions)
    except BaseException:
        stop(mode)
        raise
    return mode


def prepare(mode: Mode, partitions: int) -> None:
    """Wait for the cluster, then create the topic and wait until every partition has a leader."""
    name, state, kraft = mode.name, mode.state, mode.name == "KRaft"
    base.wait_healthy(state, timeout_s=120)
    if not kraft:
        mode.zk = ZkUtils(base.zookeeper_connect(state), connection_timeout_ms=5000)
    admin = KafkaAdminClient(base.bootstrap_servers(state), request_timeout_ms=120_000)
    try:
        admin.create_topics([NewTopic(TOPIC, partitions, 3)], timeout_ms=120_000)
    finally:
        admin.close()

    def every_partition_led() -> bool:
        cluster = metadata(state["brokers"][0]["port"], [TOPIC])
        return cluster is not None and sum(led_by(cluster, TOPIC).values()) == partitions

    wait_until(every_partition_led, what=f"{name}: every partition of {TOPIC} led", timeout_s=300)


def stop(mode: Mode) -> None:
    if mode.zk is not None:
        mode.zk.close()
    try:
        base.stop_cluster(mode.state)
    finally:  # whatever did not stop cleanly: these are this script's own processes
        pids = [n["pid"] for n in mode.state["brokers"]] + (
            [] if mode.kraft else [mode.state["zookeeper"]["pid"]]
        )
        for pid in pids:
            if base._alive(pid):
                os.kill(pid, signal.SIGKILL)


def kill(mode: Mode, node_id: int) -> float:
    """SIGKILL the node's process, as a crash; the moment it was sent."""
    pid = mode.node(node_id)["pid"]
    at = time.time()
    os.kill(pid, signal.SIGKILL)
    return at


def rejoin(mode: Mode, node_id: int) -> None:
    """Start the node again and wait until it is back, as ``kafka-lite cluster restart N`` does, with a
    longer deadline: a broker killed with 1,000 partitions recovers every log before it registers."""
    node = mode.node(node_id)
    try:
        if mode.kraft:
            # restart_node's deadline is the cluster command's, read when it runs: set it for this process
            base.HEALTHY_TIMEOUT_S = REJOIN_TIMEOUT_S
            cluster_kraft.restart_node(mode.state, node)
            return
        before = base._registration_epoch(mode.zk, node_id)
        config = Path(mode.state["dir"]) / f"broker-{node_id}" / "server.properties"
        node["pid"] = base._spawn(base._broker_args(config, mode.state), base.log_path(mode.state, node))
        base.save_state(mode.state)
        base.wait_rejoined(mode.state, mode.zk, node_id, before, timeout_s=REJOIN_TIMEOUT_S)
    except CliError as e:
        raise RuntimeError(f"{mode.name}: {e}") from None


# -- the moments the controllers decide ------------------------------------------------------------------------


def watch(condition, stop: threading.Event) -> list[float]:
    """Poll ``condition`` every 10 ms in a thread; the list gets the moment it first returned one."""
    seen: list[float] = []

    def run() -> None:
        while not stop.is_set():
            try:
                moment = condition()
            except Exception:  # a voter or ZooKeeper not answering this once: ask again
                moment = None
            if moment is not None:
                seen.append(moment)
                return
            time.sleep(POLL_S)

    threading.Thread(target=run, daemon=True).start()
    return seen


def new_controller_chosen(mode: Mode, old: int):
    """When a controller other than ``old`` was chosen, or None while none is."""
    if mode.kraft:
        voters = {
            n["id"]: ("127.0.0.1", n["controller_port"]) for n in mode.state["brokers"] if n["id"] != old
        }

        def chosen() -> float | None:
            answer = find_leader(voters, timeout_s=0.5)
            return time.time() if answer is not None and answer["leader_id"] != old else None

        return chosen

    def znode() -> float | None:
        data, stat = mode.zk.client.get("/controller")
        return stat.ctime / 1000 if json.loads(data)["brokerid"] != old else None

    return znode


def broker_znode_gone(mode: Mode, victim: int):
    def gone() -> float | None:
        return time.time() if mode.zk.client.exists(f"/brokers/ids/{victim}") is None else None

    return gone


# -- the rounds ------------------------------------------------------------------------------------------------


def failover_round(mode: Mode, r: int) -> str:
    old = mode.controller()
    survivors = [n for n in mode.state["brokers"] if n["id"] != old]
    topic = f"{TOPIC}-failover-{mode.name.lower()}-{r}"
    done = threading.Event()
    died = kill(mode, old)
    chosen = watch(new_controller_chosen(mode, old), done)
    try:
        create_topic(mode, survivors, topic)
        seen: dict[int, float] = {}
        deadline = time.monotonic() + ROUND_TIMEOUT_S
        while len(seen) < len(survivors):
            for node in survivors:
                if node["id"] in seen:
                    continue
                cluster = metadata(node["port"], [topic])
                if cluster is not None and cluster.leader_for(topic, 0) is not None:
                    seen[node["id"]] = time.time()
            if time.monotonic() > deadline:
                raise RuntimeError(f"{mode.name}: {topic} had no leader within {ROUND_TIMEOUT_S} s")
            time.sleep(POLL_S)
        wait_until(
            lambda: chosen, what=f"{mode.name}: the new controller's choice", timeout_s=ROUND_TIMEOUT_S
        )
    finally:
        done.set()
    served = max(seen.values())
    mode.failover.append((served - died, served - chosen[0]))
    new = mode.controller()
    rejoin(mode, old)
    return (
        f"controller {old} killed, {new} took over; from the death {served - died:.3f} s, "
        f"from the choice {served - chosen[0]:.3f} s"
    )


def reelection_round(mode: Mode, r: int) -> str:
    controller = mode.controller()
    first = mode.state["brokers"][0]["port"] if controller != 0 else mode.state["brokers"][1]["port"]
    leaders = led_by(metadata(first, [TOPIC]), TOPIC)
    victim, led = max(((b, n) for b, n in leaders.items() if b != controller), key=lambda x: x[1])
    survivors = [n for n in mode.state["brokers"] if n["id"] != victim]
    done = threading.Event()
    died = kill(mode, victim)
    decided = [] if mode.kraft else watch(broker_znode_gone(mode, victim), done)
    seen: dict[int, float] = {}
    last = "no surviving broker answered Metadata"
    deadline = time.monotonic() + ROUND_TIMEOUT_S
    try:
        while len(seen) < len(survivors):
            for node in survivors:
                if node["id"] in seen:
                    continue
                cluster = metadata(node["port"], [TOPIC])
                if cluster is None:
                    continue
                last = (
                    f"broker {node['id']} lists brokers {sorted(cluster.nodes)}, leaders "
                    f"{dict(led_by(cluster, TOPIC))}"
                )
                now = time.time()
                if mode.kraft and not decided and victim not in cluster.nodes:
                    decided.append(now)  # fenced: the broker has left the Metadata's brokers
                if victim not in led_by(cluster, TOPIC) and sum(led_by(cluster, TOPIC).values()) > 0:
                    seen[node["id"]] = now
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"{mode.name}: broker {victim}'s partitions not re-elected in {ROUND_TIMEOUT_S} s: {last}"
                )
            time.sleep(POLL_S)
        wait_until(lambda: decided, what=f"{mode.name}: the decision", timeout_s=ROUND_TIMEOUT_S)
    finally:
        done.set()
    moved = max(seen.values())
    mode.reelection.append((max(0.0, moved - decided[0]), moved - died))
    rejoin(mode, victim)
    return (
        f"broker {victim} led {led} partitions; from the decision {moved - decided[0]:.3f} s, "
        f"from the death {moved - died:.3f} s"
    )


# -- the report ------------------------------------------------------------------------------------------------


def spread(times: list[float]) -> str:
    return f"median {statistics.median(times):.3f} s, min {min(times):.3f} s, max {max(times):.3f} s"


def report(zk: Mode, kraft: Mode, partitions: int) -> list[dict]:
    rounds = len(zk.failover)
    print(f"\nmedians of {rounds} rounds, {partitions:,} partitions:")
    rows = {}
    for what, index, attr in (
        ("failover from the death", 0, "failover"),
        ("failover from the choice", 1, "failover"),
        ("re-election from the decision", 0, "reelection"),
        ("re-election from the death", 1, "reelection"),
    ):
        for mode in (zk, kraft):
            times = [t[index] for t in getattr(mode, attr)]
            rows[(what, mode.name)] = statistics.median(times)
            print(f"  {what:32s} {mode.name:9s} {spread(times)}")
    ratio = rows[("failover from the choice", "KRaft")] / rows[("failover from the choice", "ZooKeeper")]
    ratio_death = rows[("failover from the death", "KRaft")] / rows[("failover from the death", "ZooKeeper")]
    reelect = rows[("re-election from the decision", "KRaft")]
    print(
        f"KRaft/ZooKeeper failover from the choice: {ratio:.3f} (goal: at most {FAILOVER_GOAL}, "
        f"{'met' if ratio <= FAILOVER_GOAL else 'not met'}); from the death: {ratio_death:.3f}"
    )
    print(
        f"KRaft re-election from the decision: {reelect:.3f} s (goal: under {REELECTION_GOAL_S:.0f} s, "
        f"{'met' if reelect < REELECTION_GOAL_S else 'not met'})"
    )
    size = f"{partitions:,} partitions, median of {rounds} rounds"
    return [
        figure(
            f"KRaft controller failover over the ZooKeeper controller's, from the choice, {size}",
            ratio,
            "x",
            at_most=FAILOVER_GOAL,
            detail=f"{rows[('failover from the choice', 'KRaft')]:.3f} s against "
            f"{rows[('failover from the choice', 'ZooKeeper')]:.3f} s",
        ),
        figure(
            f"KRaft re-election of a dead broker's partitions, from its fencing, {size}",
            reelect,
            "s",
            at_most=REELECTION_GOAL_S,
            detail=f"the ZooKeeper controller's from the broker's znode going: "
            f"{rows[('re-election from the decision', 'ZooKeeper')]:.3f} s",
        ),
        figure(
            f"KRaft controller failover over the ZooKeeper controller's, from the death, {size}",
            ratio_death,
            "x",
            detail=f"{rows[('failover from the death', 'KRaft')]:.3f} s against "
            f"{rows[('failover from the death', 'ZooKeeper')]:.3f} s, detection 2 s in both",
        ),
    ]


def main(argv=None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--partitions", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    add_argument(parser)
    args = parser.parse_args(argv)
    if args.partitions < 1 or args.rounds < 1:
        parser.error("--partitions and --rounds must be at least 1")
    modes: list[Mode] = []
    with tempfile.TemporaryDirectory(prefix="bench-kraft-controller-") as tmp:
        try:
            for name in ("ZooKeeper", "KRaft"):
                modes.append(start(name, Path(tmp) / name.lower(), args.partitions))
            print(
                f"{args.partitions:,} partitions, replication factor 3; 3 ZooKeeper brokers, 3 KRaft combined nodes"
            )
            for r in range(args.rounds):
                for mode in modes:
                    print(
                        f"  round {r + 1} {mode.name:9s} failover:    {failover_round(mode, r)}", flush=True
                    )
                    print(
                        f"  round {r + 1} {mode.name:9s} re-election: {reelection_round(mode, r)}", flush=True
                    )
            figures = report(modes[0], modes[1], args.partitions)
        except CliError as e:
            raise RuntimeError(str(e)) from None
        finally:
            for mode in modes:
                stop(mode)
    write(args.json, "bench_kraft_controller", figures)
    return figures


if __name__ == "__main__":
    main()
