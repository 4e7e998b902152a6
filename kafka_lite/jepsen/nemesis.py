"""The nemesis: a cluster behind fault proxies, and the faults a Jepsen run strikes it with.

No Kafka twin: Jepsen's nemeses (``jepsen.nemesis``: kill, pause and partition, healed on a
schedule) as its Kafka workload combines them, for kafka_lite's local clusters. Beyond the book:
the book's chapters 6 and 7 (replication, the controller) and 12 (KRaft) say what Kafka does when a
broker dies, stalls or is cut off; this module makes those things happen while clients run.

``FaultyCluster`` starts a cluster as ``kafka-lite cluster up`` does (ZooKeeper and three brokers,
or with ``kraft`` three combined KRaft nodes) with a fault proxy on loopback in front of every
listener. Each broker listens on one port and advertises the proxy's (KIP-103's listeners); each
voter is reached at a proxy's port (``controller.quorum.voters``); each broker reaches ZooKeeper at
a proxy port of its own (``zookeeper.connect``), so a broker can be cut from ZooKeeper alone. The
tool's own look at the cluster (who leads, who is the controller) goes around the proxies, to the
listeners themselves: what the nemesis asks must not depend on the faults it made.

The proxy (``fault_proxy.py``) knows who is at each end of a connection: a node, ZooKeeper, or
the clients (everyone else). A network partition is a set of pairs that cannot talk: the proxy
resets every connection between such a pair and every new one as it arrives; healing allows them
again. No root needed.

``Nemesis`` runs the schedule in a thread: wait, strike one fault, hold it past the session and
fetch timeouts, heal it, and again; every action is a pair of ``"nemesis"`` operations in the
history (the invocation, then ``ok``, or ``info`` when the action failed part-way). Faults:

- ``kill``: SIGKILL a node (a partition's leader, the controller, or any node), restart it later.
- ``pause``: SIGSTOP a node, held past the session and fetch timeouts, then SIGCONT.
- ``partition``: one node cut from everyone and from the clients; a minority and a majority (the
  clients on either side); the controller isolated; the consumers' group coordinator isolated; in
  ZooKeeper mode, a broker cut from ZooKeeper alone.
- ``delay``: the clients' Produce requests to one node (a partition's leader, or as ``target``
  says) held in the network past the workload's transaction timeout (``DELAY_S``), then let go in
  their order. A producer retries a Produce that timed out, and its retries are held too; the
  application gives up first, and the coordinator aborts the transaction it left open. The late
  writes then reach the leader after their transaction has ended, as the 2024 analysis of Kafka's
  transactions had them do. Nothing is lost on the way: a delay is not a drop.

Differs: Jepsen cuts with iptables on real machines and kills over ssh; here the nodes are local
processes and the cut is the proxy's (a reset, not silence: see ``fault_proxy.py``).
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import os
import random
import signal
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from kafka_lite.cli import cluster as launcher
from kafka_lite.cli import cluster_kraft
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.time import SYSTEM, Time, wait_until
from kafka_lite.jepsen import FAULTS
from kafka_lite.jepsen.fault_proxy import CLIENTS, FaultProxy
from kafka_lite.jepsen.history import NEMESIS, HistoryWriter
from kafka_lite.testing.durability_checker import CLUSTER_OVERRIDES, KRAFT_OVERRIDES, _Quiet
from kafka_lite.utils.ports import free_ports

ZOOKEEPER = "zookeeper"  # the ZooKeeper-mode cluster's ZooKeeper, as one end of a cut
# Whom a kill or a pause strikes: a partition's leader, the controller, any node, or any node but
# the controller (a bystander, whose fault moves leaderships but not the controller's duties).
TARGETS = ("leader", "controller", "any", "bystander")
SHAPES = (
    "isolated",
    "majority-minority",
    "controller-isolated",
    "coordinator-isolated",
    "cut-from-zookeeper",
)

HOLD_FACTOR = 1.5  # a pause or a kill is held this many times the longest timeout it must outlast
# A delay is held past the workload's transaction timeout (10 s) and the coordinator's sweep after it
# (``SWEEP_OVERRIDE``): a transaction whose producer gave up is aborted before its late writes land.
DELAY_S = 15.0
# The transaction coordinator looks for transactions past their timeout every second (Kafka's default
# is a minute), so that one a crashed client left open is aborted within a run.
SWEEP_OVERRIDE = "transaction.abort.timed.out.transaction.cleanup.interval.ms=1000"
STEP_TIMEOUT_S = 60.0  # each wait for the cluster: a restart, an election, the ISR complete again
POLL_MS = 100
ISR_TIMEOUT_S = 30.0  # after the cluster serves again, how long its ISRs get to be full again
# Kafka's defaults of the timeouts a fault is held past (0.10.1's for the first two, 3.3's for KRaft's).
KAFKA_TIMEOUTS_MS = {
    "zookeeper.session.timeout.ms": 6000,
    "replica.lag.time.max.ms": 10_000,
    "broker.session.timeout.ms": 9000,
    "controller.quorum.fetch.timeout.ms": 2000,
}


def cut_between(components: Iterable[Iterable[int | str]]) -> set[frozenset]:
    """The pairs that cannot talk when only members of one component can: every pair across two."""
    groups = [set(c) for c in components]
    return {frozenset((a, b)) for i, g in enumerate(groups) for h in groups[i + 1 :] for a in g for b in h}


# -- the cluster ------------------------------------------------------------------------------------------


class FaultyCluster:
    """A local cluster with a fault proxy in front of every listener (see the module's docstring).

    A context manager; ``stop`` (also on exit, at interpreter exit, and on SIGTERM or SIGHUP when
    started from the main thread) heals every cut, SIGKILLs every process it started and closes
    every proxy, so that a run leaves nothing behind however it ends."""

    def __init__(
        self,
        directory: Path,
        *,
        kraft: bool,
        brokers: int = 3,
        time: Time = SYSTEM,
        overrides: Iterable[str] = (),
    ) -> None:
        if brokers < 1:
            raise ValueError(f"a faulty cluster needs at least 1 broker, got {brokers}")
        self.directory = Path(directory)
        self.kraft = kraft
        self.time = time
        self.overrides = [*(KRAFT_OVERRIDES if kraft else CLUSTER_OVERRIDES), SWEEP_OVERRIDE, *overrides]
        self.node_ids = list(range(brokers))
        self.bootstrap_servers = ""
        self.proxy: FaultProxy | None = None
        self.fronts: dict[str, dict[int, int]] = {}
        self.killed: set[int] = set()
        self.paused: set[int] = set()
        self.cut: set[frozenset] = set()
        self.topics: dict[str, int] = {}  # the topics created here, with their partition counts
        self.groups: set[str] = set()  # the consumer groups of the runs on this cluster
        self._replication: dict[str, int] = {}
        self._pids: set[int] = set()  # every process this cluster started, restarts too
        self._zk = None
        self._signals: dict[int, Any] = {}
        self._lock = threading.RLock()

    # -- start and stop -------------------------------------------------------------------------------------

    def start(self) -> None:
        brokers = len(self.node_ids)
        self.proxy = FaultProxy()
        atexit.register(self.stop)
        self._stop_on_signals()
        try:
            zk_port = free_ports(
                brokers + 1
            )  # ZooKeeper's, then the brokers' (with kraft the first is unused)
            roles = ("broker", "controller") if self.kraft else ("broker", "zookeeper")
            first = free_ports(len(roles) * brokers)
            self.fronts = {
                role: {n: first + r * brokers + n for n in self.node_ids} for r, role in enumerate(roles)
            }
            for n in self.node_ids:
                self.proxy.listen(self.fronts["broker"][n], zk_port + 1 + n, n)
                if not self.kraft:
                    self.proxy.listen(self.fronts["zookeeper"][n], zk_port, ZOOKEEPER, source=n)
            state = launcher.start_cluster(
                self.directory,
                brokers,
                zk_port,
                zk_port + 1,
                self.overrides,
                kraft=self.kraft,
                fronts=self.fronts,
            )
            self._pids.update(launcher._pids(state))
            for node in state["brokers"] if self.kraft else ():
                self.proxy.listen(self.fronts["controller"][node["id"]], node["controller_port"], node["id"])
            launcher.wait_healthy(state)
            if not self.kraft:
                from kafka_lite.zk.zk_utils import ZkUtils

                self._zk = ZkUtils(launcher.zookeeper_connect(state), connection_timeout_ms=5000)
            self.bootstrap_servers = ",".join(f"127.0.0.1:{p}" for p in self.fronts["broker"].values())
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """Heal, SIGKILL every process this cluster started, close the proxies. Idempotent."""
        with self._lock:
            if self.proxy is not None and not self.proxy.closed:
                self.proxy.cut(())
            self.cut.clear()
            if self._zk is not None:  # before ZooKeeper goes, so that the client says goodbye
                with contextlib.suppress(Exception):
                    self._zk.close()
                self._zk = None
            state = self.state
            if state is not None:
                self._pids.update(launcher._pids(state))
            # Each process started in a session of its own, as its group's leader: the group's
            # signal reaches its children too (ZooKeeper's JVM under its launcher).
            for pid in self._pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(pid, signal.SIGKILL)
            for pid in self._pids:
                launcher._wait_gone(pid, 10)
            pids, self._pids = self._pids, set()
            wait_until(
                lambda: not _groups_running(pids),
                f"the process groups {sorted(pids)} to end",
                10,
                time=self.time,
                poll_ms=POLL_MS,
            )
            (self.directory / launcher.STATE_FILE).unlink(missing_ok=True)
            if self.proxy is not None:
                self.proxy.close()
            self.killed.clear()
            self.paused.clear()
            self._restore_signals()
            atexit.unregister(self.stop)

    def __enter__(self) -> FaultyCluster:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def _stop_on_signals(self) -> None:
        """SIGTERM and SIGHUP end a run as Ctrl-C does (``KeyboardInterrupt``, so ``stop`` runs),
        where the process would otherwise die with the nodes still running in their own sessions.
        Only from the main thread, and only where nobody handles those signals already."""
        if threading.current_thread() is not threading.main_thread():
            return

        def interrupt(signum, frame):
            raise KeyboardInterrupt

        for sig in (signal.SIGTERM, signal.SIGHUP):
            if signal.getsignal(sig) == signal.SIG_DFL:
                self._signals[sig] = signal.signal(sig, interrupt)

    def _restore_signals(self) -> None:
        if threading.current_thread() is threading.main_thread():
            for sig, previous in self._signals.items():
                signal.signal(sig, previous)
            self._signals.clear()

    # -- what the cluster says, asked around the proxies ----------------------------------------------------

    @property
    def state(self) -> dict | None:
        return launcher.load_state(self.directory)

    def node(self, node_id: int) -> dict:
        state = self.state
        if state is None:
            raise RuntimeError(f"no cluster runs in {self.directory}")
        for node in state["brokers"]:
            if node["id"] == node_id:
                return node
        raise ValueError(f"there is no node {node_id} (nodes: {self.node_ids})")

    def partitions(self, asking: Iterable[int] | None = None) -> list[tuple]:
        """(topic, partition, leader, replicas, isr) as the metadata of the nodes ``asking`` (by
        default every broker running, not paused) has them: each asked node's rows in turn, a
        Metadata request to its own listener each."""
        state = self.state
        if asking is None:
            asking = [n["id"] for n in state["brokers"] if "port" in n and self._answering(n)]
        rows = []
        for node_id in asking:
            cluster = self.metadata_of(node_id)
            rows += [
                (p.topic, p.partition, None if p.leader is None else p.leader.id, list(p.replicas),
                 list(p.in_sync_replicas))
                for p in cluster.partitions.values()
            ]  # fmt: skip
        return rows

    @staticmethod
    def _answering(node: dict) -> bool:
        """Running, not paused: a paused node would only let a request time out."""
        return launcher._alive(node["pid"]) and not launcher._stopped(node["pid"])

    def metadata_of(self, node_id: int, timeout_ms: int = 2000):
        """The node's metadata (a ``Cluster``), from a Metadata request to its listener itself, around
        the proxy. A client's ``describe_cluster`` would ask whichever node it likes best."""
        from kafka_lite.clients.metadata import Cluster

        return Cluster.from_metadata_response(
            self._ask(node_id, ApiKeys.METADATA, 1, {"topics": None}, timeout_ms)
        )

    def log_end_offset(self, node_id: int, topic: str, partition: int, timeout_ms: int = 2000) -> int | None:
        """The partition's log end offset in the node's own replica, leader or follower (a debugging
        consumer's ListOffsets, which any replica answers, around the proxy), or None if the node
        has no replica of it."""
        from kafka_lite.common.protocol.fetch_request import DEBUGGING_CONSUMER_ID
        from kafka_lite.log.log import LATEST_TIMESTAMP

        body = {
            "replica_id": DEBUGGING_CONSUMER_ID,
            "topics": [
                {"topic": topic, "partitions": [{"partition": partition, "timestamp": LATEST_TIMESTAMP}]}
            ],
        }
        answer = self._ask(node_id, ApiKeys.LIST_OFFSETS, 1, body, timeout_ms)
        found = answer["responses"][0]["partition_responses"][0]
        return found["offset"] if found["error_code"] == 0 else None

    def _ask(self, node_id: int, api: ApiKeys, version: int, body: dict, timeout_ms: int) -> dict:
        """One request to the node's listener itself, around the proxy (so a cut does not stop it);
        the answer's body."""
        from kafka_lite.clients.network_client import ClientRequest, NetworkClient
        from kafka_lite.network.selector import Selector

        client = NetworkClient(Selector(time=self.time), "jepsen-nemesis", time=self.time)
        client.set_node(str(node_id), "127.0.0.1", self.node(node_id)["port"])
        answers: list = []
        try:
            deadline = self.time.milliseconds() + timeout_ms
            sent = False
            while not answers and self.time.milliseconds() < deadline:
                if not sent and client.ready(str(node_id), self.time.milliseconds()):
                    client.send(ClientRequest(str(node_id), api, version, body, callback=answers.append),
                                self.time.milliseconds())  # fmt: skip
                    sent = True
                client.poll(POLL_MS)
        finally:
            client.close_all()
        if not answers or answers[0].disconnected:
            raise ConnectionError(
                f"node {node_id} did not answer a {api.name} request within {timeout_ms} ms"
            )
        return answers[0].body

    def coordinator(self) -> int | None:
        """The group coordinator of the runs' consumer groups (the first, by name): the leader of the
        ``__consumer_offsets`` partition that holds the group (``partition_for``). None if there is
        no group yet, or no such topic (the first FindCoordinator creates it)."""
        from kafka_lite.common.topic import GROUP_METADATA_TOPIC_NAME
        from kafka_lite.coordinator.group_metadata_manager import partition_for

        count = len({p for t, p, *_ in self.partitions() if t == GROUP_METADATA_TOPIC_NAME})  # rows per node
        if not self.groups or not count:
            return None
        return self.leader_of(GROUP_METADATA_TOPIC_NAME, partition_for(min(self.groups), count))

    def leader_of(self, topic: str, partition: int) -> int | None:
        """The partition's leader: ZooKeeper's word in ZooKeeper mode, the brokers' metadata in KRaft."""
        return self.leader_and_isr(topic, partition)[0]

    def leader_and_isr(
        self, topic: str, partition: int, asking: Iterable[int] | None = None
    ) -> tuple[int | None, list[int]]:
        """The partition's leader (None if it has none) and ISR: in ZooKeeper mode as ZooKeeper has
        them (the brokers learn them from the controller, which a partition may cut off), in KRaft
        as the metadata of the nodes ``asking`` has them (see ``partitions``)."""
        if self._zk is not None:
            found = self._zk.get_partition_state(topic, partition)
            leader, isr = (
                (None, []) if found is None else (found.leader_and_isr.leader, found.leader_and_isr.isr)
            )
        else:
            rows = [r for r in self.partitions(asking) if r[:2] == (topic, partition)]
            leader, isr = (rows[0][2], rows[0][4]) if rows else (None, [])
        return (leader if leader is not None and leader >= 0 else None), list(isr)

    def controller(self) -> int | None:
        """The ZooKeeper controller, or KRaft's active controller (the quorum's leader)."""
        if self._zk is not None:
            controller = self._zk.get_controller_id()
            return controller if controller >= 0 else None
        quorum = cluster_kraft.describe_quorum(self.state)
        return None if quorum is None else quorum.leader_id

    def create_topic(
        self, topic: str, partitions: int, replication_factor: int = 3, configs: dict | None = None
    ) -> None:
        """Create the topic and wait until every partition has a leader and its whole ISR.

        On a loaded machine a creation can outlast its request's timeout; the request sent again
        finds the topic the first one made and is answered TOPIC_ALREADY_EXISTS. A topic of that
        name with the partitions asked for is taken as this call's own.

        A broker answers a CreateTopics from its metadata cache's live brokers, which hears of a
        broker registered again after a fault from the controller's UpdateMetadata, after ZooKeeper
        does: asked meanwhile for three replicas, it counts two brokers and refuses. So the creation
        waits until every node's metadata names every node."""
        from kafka_lite.clients.admin import KafkaAdminClient, NewTopic
        from kafka_lite.common.errors import TopicExistsException

        wait_until(
            lambda: self._brokers_unknown() is None,
            "every node's metadata to name every node",
            STEP_TIMEOUT_S,
            time=self.time,
            poll_ms=POLL_MS,
        )
        admin = KafkaAdminClient(bootstrap_servers=launcher.bootstrap_servers(self.state))
        try:
            admin.create_topics(
                [NewTopic(topic, partitions, replication_factor, configs=dict(configs or {}))]
            )
        except TopicExistsException:
            found = {p for t, p, *_ in self.partitions() if t == topic}
            if found != set(range(partitions)):
                raise
        finally:
            admin.close()
        self.topics[topic] = partitions
        self._replication[topic] = replication_factor
        wait_until(
            lambda: self._topics_not_whole() is None,
            f"{topic}'s {partitions} partitions led, their ISRs full",
            STEP_TIMEOUT_S,
            time=self.time,
            poll_ms=POLL_MS,
        )

    def _brokers_unknown(self) -> str | None:
        """A node whose metadata lacks a live broker (which, and what it names), or None."""
        for node in self.node_ids:
            named = sorted(self.metadata_of(node).nodes)
            if named != sorted(self.node_ids):
                return f"node {node}'s metadata names brokers {named}"
        return None

    def _topics_not_whole(self, isr: bool = True) -> str | None:
        """What keeps the created topics from being whole, or None: each partition led, with ``isr``
        its ISR full (``leader_and_isr``), and every broker's metadata naming that leader (a broker
        told later than the others would refuse a client the partition for a while). A
        ZooKeeper-mode broker's metadata is not asked for the ISR: the controller passes ISR changes
        on in batches, seconds late."""
        leaders = {}
        for topic, count in self.topics.items():
            for p in range(count):
                leader, in_sync = self.leader_and_isr(topic, p)
                if leader is None or (isr and len(in_sync) < self._replication[topic]):
                    return f"{topic}-{p} has leader {leader} and ISR {in_sync}"
                leaders[topic, p] = leader
        for node in self.node_ids:
            told = {(t, p): leader for t, p, leader, _, _ in self.partitions([node])}
            for (topic, p), leader in leaders.items():
                if told.get((topic, p)) != leader:
                    return f"node {node}'s metadata has leader {told.get((topic, p))} for {topic}-{p}, not {leader}"
        return None

    def not_whole(self, isr: bool = True) -> str | None:
        """Why the cluster is not whole, or None when it is: no fault in force, every node
        registered, a controller, and every partition of the created topics led (with ``isr``, its
        ISR full too; without, the cluster serves its clients, and may yet be short of replicas)."""
        state = self.state
        if state is None:
            return f"no cluster runs in {self.directory}"
        faults = [f"{name} {sorted(nodes, key=str)}" for name, nodes in
                  (("killed", self.killed), ("paused", self.paused), ("cut", self.cut)) if nodes]  # fmt: skip
        if faults:
            return ", ".join(faults)
        stopped = [node["id"] for node in state["brokers"] if launcher._stopped(node["pid"])]
        if stopped:
            return f"nodes {stopped} are stopped"
        health = launcher.cluster_health(state)
        if not launcher.is_healthy(state, health):
            return f"not healthy: registered {health['registered']}, controller {health['controller']}"
        return self._topics_not_whole(isr)

    def is_whole(self) -> bool:
        return self.not_whole() is None

    def wait_whole(self, timeout_s: float = STEP_TIMEOUT_S, isr: bool = True) -> None:
        """Until the cluster is whole (``not_whole``), or raise ``TimeoutError`` saying what is not."""
        reason: list[str | None] = [None]

        def whole() -> bool:
            reason[0] = self.not_whole(isr)
            return reason[0] is None

        try:
            wait_until(whole, "the cluster to be whole", timeout_s, time=self.time, poll_ms=POLL_MS)
        except TimeoutError as e:
            raise TimeoutError(f"{e}; at the end: {reason[0]}") from None

    def hold_s(self) -> float:
        """How long a kill or a pause is held: past the longest of the timeouts after which the
        others act on a silent node (its session, a follower's lag, a voter's fetch), so that they do."""
        names = (
            ("broker.session.timeout.ms", "controller.quorum.fetch.timeout.ms")
            if self.kraft
            else ("zookeeper.session.timeout.ms",)
        )
        return HOLD_FACTOR * max(self.setting_ms(name) for name in (*names, "replica.lag.time.max.ms")) / 1000

    def setting_ms(self, name: str) -> int:
        """One of ``KAFKA_TIMEOUTS_MS`` as the nodes run with it: its last override, else Kafka's default."""
        value = KAFKA_TIMEOUTS_MS[name]
        for override in self.overrides:
            key, _, text = override.partition("=")
            if key.strip() == name:
                value = int(text)
        return value

    # -- faults ---------------------------------------------------------------------------------------------

    def kill(self, node_id: int) -> None:
        node = self.node(node_id)
        with self._lock:
            os.kill(node["pid"], signal.SIGKILL)
            self.killed.add(node_id)
        wait_until(
            lambda: not launcher._alive(node["pid"]),
            f"node {node_id} to die",
            10,
            time=self.time,
            poll_ms=POLL_MS,
        )

    def restart(self, node_id: int) -> None:
        """Start a killed node again and wait until the cluster has it back (``cluster restart``)."""
        launcher.run_restart(argparse.Namespace(dir=self.directory, broker=node_id), _Quiet())
        with self._lock:
            self._pids.add(self.node(node_id)["pid"])
            self.killed.discard(node_id)

    def pause(self, node_id: int) -> None:
        self._signal(node_id, signal.SIGSTOP, stopped=True)
        self.paused.add(node_id)

    def resume(self, node_id: int) -> None:
        self._signal(node_id, signal.SIGCONT, stopped=False)
        self.paused.discard(node_id)

    def _signal(self, node_id: int, signum: int, stopped: bool) -> None:
        pid = self.node(node_id)["pid"]
        os.kill(pid, signum)
        what = f"node {node_id} to {'stop' if stopped else 'run again'}"
        wait_until(lambda: launcher._stopped(pid) == stopped, what, 10, time=self.time, poll_ms=POLL_MS)

    def partition(self, pairs: Iterable[frozenset]) -> None:
        """Cut the ``pairs`` (node ids, ``ZOOKEEPER``, ``CLIENTS``), on top of any cut in force."""
        known = {*self.node_ids, CLIENTS, *(() if self.kraft else (ZOOKEEPER,))}
        pairs = set(pairs)
        for pair in pairs:
            if len(pair) != 2 or not pair <= known:
                raise ValueError(
                    f"cannot cut {sorted(pair, key=str)}: a cut is two of {sorted(known, key=str)}"
                )
        self.cut |= pairs
        self.proxy.cut(self.cut)

    def heal(self) -> None:
        self.cut.clear()
        self.proxy.cut(())


def _groups_running(groups: set[int]) -> list[int]:
    """The processes (zombies aside) whose process group is one of ``groups``."""
    running = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(") ", 1)[1].split()
        except (OSError, IndexError):
            continue  # a process that ended as we looked
        if fields[0] != "Z" and int(fields[2]) in groups:
            running.append(int(entry.name))
    return running


# -- the schedule -----------------------------------------------------------------------------------------


class Nemesis:
    """Strikes ``faults`` (a subset of ``FAULTS``) in a thread: wait ``interval_s``, strike one fault
    chosen by ``rng``, hold it (``FaultyCluster.hold_s``), heal it, and again until ``stop``."""

    def __init__(
        self,
        cluster: FaultyCluster,
        faults: set[str],
        history: HistoryWriter,
        rng: random.Random,
        time: Time,
        interval_s: float = 10.0,
    ) -> None:
        unknown = set(faults) - set(FAULTS)
        if unknown or not faults:
            raise ValueError(f"faults are some of {', '.join(FAULTS)}; got {sorted(faults)}")
        if interval_s < 0:
            raise ValueError(f"interval_s must be at least 0, got {interval_s}")
        self.cluster = cluster
        self.faults = sorted(faults)
        self.history = history
        self.rng = rng
        self.time = time
        self.interval_s = interval_s
        self.faults_done = 0
        self.error: BaseException | None = None
        self._stopping = False
        self._condition = threading.Condition()
        self._thread: threading.Thread | None = None
        self._heal: Callable[[], None] | None = None  # the fault in force's healing, once struck

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="nemesis", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            while not self._wait(self.interval_s):
                self.run_one(self.rng.choice(self.faults))
        except BaseException as e:  # reported by stop(): a nemesis that died must not pass for a quiet one
            self.error = e

    def _wait(self, seconds: float) -> bool:
        """Wait ``seconds`` or until ``stop``; True if stopping."""
        with self._condition:
            return self.time.wait_for(self._condition, lambda: self._stopping, int(seconds * 1000))

    def run_one(self, fault: str, target: str | None = None) -> None:
        """Strike ``fault``, hold it (cut short by ``stop``), heal it. A kill or a pause strikes a
        node of the kind ``target`` names (``TARGETS``), or of a kind drawn at random."""
        if fault not in FAULTS:
            raise ValueError(f"a fault is one of {', '.join(FAULTS)}, not {fault!r}")
        if target is not None and fault == "partition":
            raise ValueError(f"a partition strikes no one node: no target, not {target!r}")
        self._heal = self._partition() if fault == "partition" else getattr(self, f"_{fault}")(target)
        self._wait(self._hold_s(fault))
        self._heal_now()
        self.faults_done += 1

    def _hold_s(self, fault: str) -> float:
        """How long ``fault`` is held: a delay past the workload's transaction timeout, so that the
        coordinator aborts the transaction first; the others past the cluster's session and fetch
        timeouts (``hold_s``), so that the cluster acts on them."""
        return DELAY_S if fault == "delay" else self.cluster.hold_s()

    def _heal_now(self) -> None:
        heal, self._heal = self._heal, None
        if heal is not None:
            heal()

    def stop(self) -> None:
        """Stop the schedule, heal whatever is in force (and anything left struck), wait until the
        cluster serves its clients again, then until it is whole (``_record_whole``). Raises what
        ended the schedule's thread, if anything did."""
        with self._condition:
            self._stopping = True
            self._condition.notify_all()
        if self._thread is not None:
            self._thread.join(STEP_TIMEOUT_S * 2)
            if self._thread.is_alive():
                raise TimeoutError("the nemesis did not finish healing its last fault")
        self._heal_now()
        c = self.cluster
        for node in sorted(c.paused):
            self._record("resume", {"nodes": [node]}, lambda node=node: c.resume(node))
        for node in sorted(c.killed):
            self._record("restart", {"nodes": [node]}, lambda node=node: c.restart(node))
        if c.cut:
            self._record("heal", {"cut": _pairs_value(c.cut)}, c.heal)
        c.wait_whole(isr=False)
        self._record_whole()
        if self.error is not None:
            raise RuntimeError(f"the nemesis failed: {self.error!r}") from self.error

    def _record_whole(self) -> None:
        """Wait until every partition's ISR is full again, as a ``whole`` operation: ok, or info
        naming what is still short after ``ISR_TIMEOUT_S``. Not an error: under Kafka 0.10's
        ZooKeeper controller an ISR can stay short for good after a fault. A controller paused past
        its session resumes believing it still is one and removes a replica from an ISR in
        ZooKeeper that its successor's leader has just grown; the leader ignores that old
        controller's LeaderAndIsr, keeps the larger ISR in memory, and never writes it again
        (Kafka fences such a controller's writes from 2.1 on, KAFKA-6082). The run's final phase
        needs a cluster that serves, which ``stop`` has already waited for."""
        invocation = self.history.invoke(NEMESIS, "whole", {"nodes": list(self.cluster.node_ids)})
        try:
            self.cluster.wait_whole(ISR_TIMEOUT_S)
        except TimeoutError as e:
            self.history.complete(invocation, "info", error=str(e))
        else:
            self.history.complete(invocation, "ok")

    def _record(self, f: str, value: dict, action: Callable[[], None]) -> None:
        """Invoke, act, complete: ``ok``, or ``info`` naming the error (the action's outcome is then
        unknown: a restart may have started the process and not seen it back)."""
        invocation = self.history.invoke(NEMESIS, f, value)
        try:
            action()
        except Exception as e:
            self.history.complete(invocation, "info", error=f"{type(e).__name__}: {e}")
            raise
        self.history.complete(invocation, "ok")

    # -- the faults: each strikes, records, and returns its healing -------------------------------------

    def _victim(self, target: str | None) -> tuple[int, str]:
        """A node to kill or pause (of the kind ``target`` names, one drawn from ``TARGETS`` if None),
        and what it was."""
        if target is None:
            target = self.rng.choice(TARGETS)
        elif target not in TARGETS:
            raise ValueError(f"a target is one of {', '.join(TARGETS)}, not {target!r}")
        node = None
        if target == "leader" and self.cluster.topics:
            topic = self.rng.choice(sorted(self.cluster.topics))
            partition = self.rng.randrange(self.cluster.topics[topic])
            node, target = self.cluster.leader_of(topic, partition), f"leader of {topic}-{partition}"
        elif target == "controller":
            node = self.cluster.controller()
        elif target == "bystander":
            controller = self.cluster.controller()
            node = self.rng.choice(
                [n for n in self.cluster.node_ids if n != controller] or self.cluster.node_ids
            )
        if node is None:
            node, target = self.rng.choice(self.cluster.node_ids), "any"
        return node, target

    def _kill(self, target: str | None = None) -> Callable[[], None]:
        node, target = self._victim(target)
        self._record("kill", {"nodes": [node], "as": target}, lambda: self.cluster.kill(node))
        return lambda: self._record("restart", {"nodes": [node]}, lambda: self.cluster.restart(node))

    def _pause(self, target: str | None = None) -> Callable[[], None]:
        node, target = self._victim(target)
        self._record("pause", {"nodes": [node], "as": target}, lambda: self.cluster.pause(node))
        return lambda: self._record("resume", {"nodes": [node]}, lambda: self.cluster.resume(node))

    def _delay(self, target: str | None = None) -> Callable[[], None]:
        node, target = self._victim(target or "leader")
        proxy = self.cluster.proxy
        held = []

        def hold() -> None:
            held.append(proxy.hold(lambda source, to, api_key, frame: (
                source == CLIENTS and to == node and api_key == ApiKeys.PRODUCE
            )))  # fmt: skip

        self._record("delay", {"nodes": [node], "as": target, "requests": "Produce"}, hold)
        return lambda: self._record("release", {"nodes": [node]}, lambda: held[0].release())

    def _partition(self) -> Callable[[], None]:
        shapes = [s for s in SHAPES if not (s == "cut-from-zookeeper" and self.cluster.kraft)]
        shape, pairs = self.shape(self.rng.choice(shapes))
        value = {"shape": shape, "cut": _pairs_value(pairs)}
        self._record("partition", value, lambda: self.cluster.partition(pairs))
        return lambda: self._record("heal", value, self.cluster.heal)

    def shape(self, shape: str) -> tuple[str, set[frozenset]]:
        """The pairs ``shape`` cuts (see ``SHAPES``), drawn with ``rng``; with the shape's name."""
        c = self.cluster
        nodes = list(c.node_ids)
        others = {CLIENTS, *(() if c.kraft else (ZOOKEEPER,))}
        if shape in ("controller-isolated", "coordinator-isolated"):
            node = c.controller() if shape == "controller-isolated" else c.coordinator()
            if node is None:
                shape = "isolated"  # none to isolate: an election under way, or no group yet
            else:
                return shape, cut_between([{node}, (set(nodes) - {node}) | others])
        if shape == "isolated":
            node = self.rng.choice(nodes)
            return shape, cut_between([{node}, (set(nodes) - {node}) | others])
        if shape == "majority-minority":
            self.rng.shuffle(nodes)
            minority, majority = set(nodes[: len(nodes) // 2 or 1]), set(nodes[len(nodes) // 2 or 1 :])
            clients = minority if self.rng.random() < 0.5 else majority
            clients.add(CLIENTS)
            majority |= others - {CLIENTS}  # ZooKeeper stays with the majority
            return shape, cut_between([minority, majority])
        if shape == "cut-from-zookeeper":
            if c.kraft:
                raise ValueError("a KRaft cluster has no ZooKeeper to cut a node from")
            return shape, {frozenset((self.rng.choice(nodes), ZOOKEEPER))}
        raise ValueError(f"a partition's shape is one of {', '.join(SHAPES)}, not {shape!r}")


def _pairs_value(pairs: Iterable[frozenset]) -> list[list]:
    """The cut as the history records it: sorted pairs, node ids before names."""
    key = lambda x: (isinstance(x, str), str(x))  # noqa: E731
    return sorted((sorted(pair, key=key) for pair in pairs), key=lambda p: [key(x) for x in p])
