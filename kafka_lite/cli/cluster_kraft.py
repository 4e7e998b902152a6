"""``kafka-lite cluster up --kraft``: a local KRaft cluster, its nodes as separate processes, no ZooKeeper.

No Kafka twin: what a Kafka 3.3 user does by hand with ``kafka-storage.sh random-uuid``, one
``kafka-storage.sh format`` and one ``kafka-server-start.sh`` per node, and reads back with
``kafka-metadata-quorum.sh describe --status``, in one command. ``cli/cluster.py`` holds what both
modes share (the state file, processes, signals, the partitions table); this module holds what
KRaft adds: the nodes' roles and settings, the quorum in the health and the status table, the order
of a stop and what "back" means for a restarted node.

Two layouts, as Kafka's KRaft quick start and its production guide describe them:

- *combined* (``--kraft --brokers N``): N nodes with ``process.roles=broker,controller``, all of
  them voters; node N is broker N on base port + N and has a CONTROLLER listener of its own.
- *separate* (``--kraft --controllers C --brokers N``): C controller-only nodes, ids 1000 to
  1000 + C - 1 (the voters), and N broker-only nodes, ids 0 to N - 1, which observe the quorum.

Broker ids are 0 to N - 1 in both, so ``cluster kill 0`` names the same node either way. The
CONTROLLER listeners take free ports, recorded in ``cluster.json`` with ``controller.quorum.voters``
and the cluster id that ``storage format`` wrote into every node's directories.

``--kraft --name NAME`` starts a second KRaft cluster beside the first (of either mode), as chapter
8's mirroring runs need: its state in ``<dir>-NAME``, its brokers from port 9192, and a cluster id,
CONTROLLER ports and quorum of its own. It shares nothing with the first cluster, so the first's
``down`` never waits for it (a named ZooKeeper-mode cluster may share the first's ZooKeeper; a
KRaft one has none to share).

Two facts of Kafka 3.3 shape the status table. A Metadata response lists only the registered,
unfenced brokers, so a client sees a fenced broker only as a live process it is not told about; and
its ``controller_id`` is a random live broker (brokers cannot reach the active controller's id
through their metadata), so the active controller is asked of the quorum: DescribeQuorum, which
only the Raft leader answers.

The request metrics reporter is on, as ``cluster up`` has it (``--no-metrics-reporter`` leaves it
off): every broker-role node loads it (``metric.reporters``), sized for the N brokers; a
controller-only node serves no clients' requests and has none.
"""

from __future__ import annotations

import argparse
import functools
import io
import os
import signal
import time
from pathlib import Path
from typing import TYPE_CHECKING

from rich.table import Table

from kafka_lite.cli import CliError, security
from kafka_lite.cli import cluster as base

if TYPE_CHECKING:  # imported where used, to keep the CLI's start-up light
    from collections.abc import Sequence

    from kafka_lite.tools.metadata_quorum_command import QuorumInfo

BROKER_ROLE, CONTROLLER_ROLE = "broker", "controller"
# A controller-only node's id: far from the brokers' 0..N-1, so that the two never meet.
CONTROLLER_ID_BASE = 1000
# Kafka 3.3's default, what a restart waits for a killed broker's session to expire.
DEFAULT_SESSION_TIMEOUT_MS = 9000
# A voter this close to the leader's log end offset is caught up (the leader appends while we ask).
CAUGHT_UP_RECORDS = 5
# How long ``down`` lets voters without a majority try to finish their controlled shutdown (it
# cannot: nothing commits without a majority) before it kills them.
LOST_MAJORITY_GRACE_S = 3


def check_flags(args: argparse.Namespace) -> None:
    """What ``up --kraft`` refuses (``--controllers`` without ``--kraft`` is start_cluster's to refuse).
    ``--name`` it takes: a named KRaft cluster is a quorum of its own, sharing nothing with the first;
    and ``--secure``, with PLAIN alone (``security.kraft_node_settings``)."""
    if args.zookeeper_port is not None:
        raise CliError(
            "--kraft does not go with --zookeeper-port: a KRaft cluster has no ZooKeeper", exit_code=2
        )


# -- the nodes -----------------------------------------------------------------------------------------------


def is_broker(node: dict) -> bool:
    return BROKER_ROLE in node["roles"]


def is_controller(node: dict) -> bool:
    return CONTROLLER_ROLE in node["roles"]


def node_directory(state: dict, node: dict) -> Path:
    """``broker-N/`` or ``controller-N/``: the node's config, data and metadata log."""
    return Path(state["dir"]) / base.process_label(node).replace(" ", "-")


def plan_nodes(brokers: int, controllers: int, base_port: int, taken: set[int]) -> list[dict]:
    """Each node's id, roles and ports (no pid yet). ``taken`` are ports no CONTROLLER listener may use."""
    broker_ports = {base_port + i for i in range(brokers)}
    if controllers == 0:  # combined: every node both a broker and a voter
        extra = base._internal_ports(brokers, taken | broker_ports)
        return [
            {
                "id": i,
                "roles": [BROKER_ROLE, CONTROLLER_ROLE],
                "port": base_port + i,
                "controller_port": extra[i],
            }
            for i in range(brokers)
        ]
    extra = base._internal_ports(controllers, taken | broker_ports)
    return [
        {"id": CONTROLLER_ID_BASE + c, "roles": [CONTROLLER_ROLE], "controller_port": extra[c]}
        for c in range(controllers)
    ] + [{"id": i, "roles": [BROKER_ROLE], "port": base_port + i} for i in range(brokers)]


def quorum_voters(nodes: list[dict]) -> str:
    """``controller.quorum.voters``: every controller-role node, ``id@host:port``, where the others
    reach it (its ``voter_port`` when a proxy fronts its CONTROLLER listener)."""
    return ",".join(
        f"{n['id']}@127.0.0.1:{n.get('voter_port', n['controller_port'])}" for n in nodes if is_controller(n)
    )


def node_properties(
    node: dict,
    voters: str,
    node_dir: Path,
    reporter: Sequence[str] = (),
    users: dict[str, str] | None = None,
) -> str:
    """A node's ``server.properties`` in Kafka 3.3's names. ``broker.session.timeout.ms`` and
    ``broker.heartbeat.interval.ms`` stay at Kafka's defaults (9 s, 2 s): ``--override`` shortens them
    for a test that wants fencing within a second or two. ``reporter`` is the request metrics
    reporter's settings (``cluster._metrics_reporter_settings``), for a broker-role node. With
    ``users`` (a secure cluster's passwords) the listeners are ``security.kraft_node_settings``'."""
    if users is not None:
        listener_lines = security.kraft_node_settings(
            users, node.get("port"), node.get("internal_port"), node.get("controller_port")
        )
    else:
        listeners = [f"PLAINTEXT://127.0.0.1:{node['port']}"] if is_broker(node) else []
        if is_controller(node):
            listeners.append(f"CONTROLLER://127.0.0.1:{node['controller_port']}")
        listener_lines = [
            f"listeners={','.join(listeners)}",
            *(
                [f"advertised.listeners=PLAINTEXT://127.0.0.1:{node['advertised_port']}"]
                if "advertised_port" in node
                else []
            ),
            "controller.listener.names=CONTROLLER",
            *(["inter.broker.listener.name=PLAINTEXT"] if is_broker(node) else []),
        ]
    lines = [
        f"process.roles={','.join(node['roles'])}",
        f"node.id={node['id']}",
        f"controller.quorum.voters={voters}",
        *listener_lines,
        f"log.dirs={node_dir / 'data'}",
        # the metadata log apart from the partitions' data, so that `dump-log` finds it by name
        f"metadata.log.dir={node_dir / 'metadata'}",
        "num.network.threads=2",
        "num.io.threads=4",
        "delete.topic.enable=true",
        *(reporter if is_broker(node) else []),
    ]
    return "\n".join(lines) + "\n"


def format_storage(config: Path, cluster_id: str) -> None:
    """``kafka-lite storage format -t <id> -c <config>``, in this process: one cluster id for every node."""
    from kafka_lite.server.storage_tool import TerseFailure, load_config, run_format

    try:
        run_format(load_config(config), cluster_id, None, False, io.StringIO())
    except TerseFailure as e:
        raise CliError(f"formatting {config.parent.name}: {e}") from None


def start_nodes(
    state: dict,
    brokers: int,
    controllers: int,
    base_port: int,
    fronts: dict[str, dict[int, int]] | None = None,
    reporter: Sequence[str] = (),
    users: dict[str, str] | None = None,
) -> dict:
    """Format every node's directories with one new cluster id (or keep the cluster an earlier ``up``
    left there: ``kept_cluster_id``), then start the nodes: the voters
    first, so that the brokers find a quorum to register with. Returns the state, written to disk.
    ``fronts`` (see ``cluster.start_cluster``) gives each node the ports a proxy takes in front of its
    listeners: its PLAINTEXT listener is advertised there, and the voters reach its CONTROLLER there.
    ``reporter``: the request metrics reporter's settings for the broker-role nodes, or none.
    ``users``: a secure cluster's passwords; each broker-role node then also has an INTERNAL
    listener on a free port of its own, and its config is readable by its owner only."""
    from kafka_lite.server.storage_tool import random_uuid

    nodes = plan_nodes(brokers, controllers, base_port, set())
    for node in nodes if fronts else ():
        if is_broker(node):
            node["advertised_port"] = fronts["broker"][node["id"]]
        if is_controller(node):
            node["voter_port"] = fronts["controller"][node["id"]]
    if users is not None:
        broker_nodes = [n for n in nodes if is_broker(n)]
        taken = {n.get("port") for n in nodes} | {n.get("controller_port") for n in nodes}
        for node, port in zip(broker_nodes, base._internal_ports(len(broker_nodes), taken), strict=True):
            node["internal_port"] = port
    voters = quorum_voters(nodes)
    kept = kept_cluster_id(state, nodes)
    state["kraft"] = {"cluster_id": kept or random_uuid(), "voters": voters}
    for node in nodes:
        node_dir = node_directory(state, node)
        node_dir.mkdir(exist_ok=True)
        config = node_dir / "server.properties"
        write = security.write_private if users is not None else Path.write_text  # passwords inside
        write(config, node_properties(node, voters, node_dir, reporter, users))
        if kept is None:
            format_storage(config, state["kraft"]["cluster_id"])
    for node in nodes:
        node["pid"] = spawn_node(state, node)
        state["brokers"].append(node)
    base.save_state(state)
    return state


def kept_cluster_id(state: dict, nodes: list[dict]) -> str | None:
    """The cluster id of the KRaft cluster an earlier ``up`` left in the state directory, if any: its
    nodes then start again on their formatted directories, their metadata logs and data as they were
    (with new ports: Kafka 3.3's voters are configuration, not metadata). Only the same nodes can carry
    on; another layout is refused, naming what to do."""
    from kafka_lite.server.broker_metadata_checkpoint import META_PROPERTIES, BrokerMetadataCheckpoint

    found = {}
    for meta in sorted(Path(state["dir"]).glob(f"*/metadata/{META_PROPERTIES}")):
        raw = BrokerMetadataCheckpoint(meta).read_raw()
        if raw is not None:
            found[meta.parent.parent.name] = raw.cluster_id
    if not found:
        return None
    planned = sorted(node_directory(state, n).name for n in nodes)
    if sorted(found) != planned or len(set(found.values())) != 1:
        raise CliError(
            f"{state['dir']} holds a KRaft cluster of nodes {', '.join(sorted(found))} (cluster id "
            f"{', '.join(sorted(set(found.values())))}), not of {', '.join(planned)}: give `cluster up --kraft` "
            f"the same --brokers and --controllers to carry on with it, or remove {state['dir']} to start a new one"
        )
    return next(iter(found.values()))


def spawn_node(state: dict, node: dict) -> int:
    config = node_directory(state, node) / "server.properties"
    return base._spawn(base._broker_args(config, state), base.log_path(state, node), base._overlay(state))


# -- health --------------------------------------------------------------------------------------------------


def describe_quorum(state: dict) -> QuorumInfo | None:
    """The quorum as its leader describes it (a ``QuorumInfo``), or None if no voter answers as leader."""
    from kafka_lite.raft.tools.quorum_client import find_leader
    from kafka_lite.tools.metadata_quorum_command import QuorumInfo

    addresses = {
        n["id"]: ("127.0.0.1", n["controller_port"])
        for n in state["brokers"]
        if is_controller(n) and base._alive(n["pid"]) and not base._stopped(n["pid"])
    }
    answer = find_leader(addresses, login=controller_login(state))
    return None if answer is None else QuorumInfo.from_partition(answer)


def controller_login(state: dict) -> tuple[str, str] | None:
    """The username and password the nodes log in to the controllers with, when their CONTROLLER
    listener is SASL_PLAINTEXT (PLAIN), read from a node's ``server.properties`` and the cluster's
    ``--override``s, as the node itself reads them; None on a PLAINTEXT one."""
    path = node_directory(state, state["brokers"][0]) / "server.properties"
    try:
        modified = path.stat().st_mtime_ns
    except OSError:  # the health check reports a node without its config
        return None
    return _controller_login(str(path), modified, tuple(state.get("overrides", [])))


@functools.lru_cache(maxsize=8)
def _controller_login(path: str, modified_ns: int, overrides: tuple[str, ...]) -> tuple[str, str] | None:
    """``controller_login`` for one version of one node's file: read once, though a health check asks
    on every poll while the cluster comes up."""
    from kafka_lite.cli.broker import parse_overrides
    from kafka_lite.common.errors import ConfigException
    from kafka_lite.server.kafka_config import KafkaConfig

    try:
        login = KafkaConfig.from_file(path, parse_overrides(list(overrides))).controller_login()
    except ConfigException:  # the nodes refuse it too, and exit saying why: the health check reports that
        return None
    return None if login is None else (login[1], login[2])


def answering_brokers(state: dict, excluding: int | None = None) -> list[dict]:
    """The broker-role nodes running, not paused: a paused one is alive but answers nothing, and
    asking it would only wait out the request timeout."""
    return [
        n
        for n in state["brokers"]
        if is_broker(n) and n["id"] != excluding and base._alive(n["pid"]) and not base._stopped(n["pid"])
    ]


def kraft_health(state: dict) -> dict:
    """Processes alive, the quorum (its leader is the active controller) and what the brokers'
    metadata says: the unfenced brokers, topics and partitions."""
    health = {
        "brokers_alive": {n["id"]: base._alive(n["pid"]) for n in state["brokers"]},
        "registered": [],
        "controller": None,
        "topics": [],
        "quorum": describe_quorum(state),
    }
    live = answering_brokers(state)
    if live:
        base.metadata_health(state, health, live)
    # Whatever the Metadata response said: its controller_id is a random broker in KRaft.
    health["controller"] = health["quorum"].leader_id if health["quorum"] is not None else None
    return health


def is_healthy(state: dict, health: dict) -> bool:
    brokers = sorted(n["id"] for n in state["brokers"] if is_broker(n))
    return (
        all(health["brokers_alive"].values())
        and health["controller"] is not None
        and health["registered"] == brokers
    )


def voter_lag(health: dict, node_id: int) -> int | None:
    """How many records the voter's log ends behind the leader's, or None if the quorum is unknown."""
    quorum = health.get("quorum")
    if quorum is None:
        return None
    ends = {v.replica_id: v.log_end_offset for v in quorum.voters}
    if node_id not in ends:
        return None
    return max(0, ends[quorum.leader_id] - ends[node_id])


def node_state(node: dict, health: dict) -> str:
    """The state column: what the process is, what the quorum and the brokers' metadata make of it."""
    if not health["brokers_alive"][node["id"]]:
        return "[red]stopped"
    parts = ["[yellow]paused[/]"] if base._stopped(node["pid"]) else []
    if is_controller(node):
        lag = voter_lag(health, node["id"])
        if health["controller"] == node["id"]:
            parts.append("[bold]active controller[/]")
        elif lag is None:
            parts.append("voter")
        else:
            parts.append("voter" + (f", {lag} behind" if lag else ", caught up"))
    if is_broker(node):
        # Kafka 3.3's Metadata lists only unfenced brokers: alive but not listed is how a client
        # sees a fenced broker (or one not yet registered, which the controller holds fenced too).
        # With no Metadata answer at all (just after a kill, the client may try the dead node
        # first) nothing is known of fencing, and the row says so rather than "fenced".
        if "leaders" not in health:
            parts.append("[yellow]no metadata answer[/]")
        else:
            parts.append("unfenced" if node["id"] in health["registered"] else "[red]fenced[/]")
    return ", ".join(parts)


def status_table(state: dict, health: dict) -> Table:
    """One row per node, as ``kafka-metadata-quorum --status`` and the brokers' metadata see it."""
    named = f" {state['name']!r}" if state.get("name") else ""
    table = Table(title=f"kafka_lite KRaft cluster{named} in {state['dir']}")
    leaders = health.get("leaders")
    # An address is what the next command needs (a controller's port is random): each listener's
    # name and address on lines of their own, so that in a narrow terminal the columns around it
    # wrap and the address stays whole.
    for col in ("process", "pid", "address", "roles", "state", *(["leads"] if leaders is not None else [])):
        table.add_column(col)
    secure = state.get("secure")
    for node in state["brokers"]:
        client_listener = security.SASL_PLAINTEXT if secure else "PLAINTEXT"
        addresses = [f"{client_listener}\n127.0.0.1:{node['port']}"] if is_broker(node) else []
        if is_broker(node) and secure:
            addresses.append(f"{security.INTERNAL_LISTENER}\n127.0.0.1:{node['internal_port']}")
        if is_controller(node):
            addresses.append(f"CONTROLLER\n127.0.0.1:{node['controller_port']}")
        alive = health["brokers_alive"][node["id"]]
        led = leaders[node["id"]] if leaders is not None else 0
        leads = [] if leaders is None else [str(led) if alive and is_broker(node) else "-"]
        table.add_row(
            base.process_label(node),
            str(node["pid"]),
            "\n".join(addresses),
            ",\n".join(node["roles"]),
            node_state(node, health),
            *leads,
        )
    table.caption = f"{quorum_caption(health)}\n{base.topics_caption(state, health, 'nodes')}"
    if secure:
        table.caption += (
            f"\nclients: SASL_PLAINTEXT (PLAIN) with ACLs, on the brokers' and the controllers' listeners; "
            f"admin's login in {secure['users'][security.ADMIN_USER]}"
        )
    return table


def quorum_caption(health: dict) -> str:
    """``describe --status`` in one line: leader, epoch, high watermark and the furthest voter's lag."""
    quorum = health.get("quorum")
    if quorum is None:
        return "quorum: no leader answers DescribeQuorum"
    ends = [v.log_end_offset for v in quorum.voters]
    leader_end = next(v.log_end_offset for v in quorum.voters if v.replica_id == quorum.leader_id)
    return (
        f"quorum: leader {quorum.leader_id}, epoch {quorum.leader_epoch}, high watermark "
        f"{quorum.high_watermark}, max follower lag {leader_end - min(ends)}"
    )


# -- stop and restart ----------------------------------------------------------------------------------------


def stop_nodes(state: dict) -> None:
    """Broker-only nodes first, while the controllers they ask for a controlled shutdown still run;
    then every voter together, the active controller signalled last.

    Not one voter after another: a combined node's broker asks the quorum to let it go, and that
    needs a majority of voters to commit the records. A combined node stopped after the others
    would wait for a majority that no longer runs (Kafka 3.3's broker waits five minutes for it).
    Signalled together, each broker's controlled shutdown is usually committed while the voters
    still run. When it is not (an election under way as they stop), the voters left without a
    majority get ``LOST_MAJORITY_GRACE_S`` and then SIGKILL: their next start recovers their logs."""
    quorum = describe_quorum(state)
    active = quorum.leader_id if quorum is not None else None
    voters = sorted((n for n in state["brokers"] if is_controller(n)), key=lambda n: n["id"] == active)
    brokers = [n for n in state["brokers"] if not is_controller(n)]
    _signal_all(brokers, signal.SIGTERM)
    for node in brokers:
        base._terminate(node["pid"], 30)
    _signal_all(voters, signal.SIGTERM)
    deadline, lost_since = time.monotonic() + 30, None
    while left := [n for n in voters if base._alive(n["pid"])]:
        for node in left:
            base._reap(node["pid"])
        if 2 * len(left) > len(voters):
            lost_since = None
        elif lost_since is None:
            lost_since = time.monotonic()
        if time.monotonic() > deadline or (
            lost_since is not None and time.monotonic() - lost_since > LOST_MAJORITY_GRACE_S
        ):
            _signal_all(left, signal.SIGKILL)
            for node in left:
                base._wait_gone(node["pid"], 10)
            return
        time.sleep(0.05)  # polling the process table; bounded by the deadline


def _signal_all(nodes: list[dict], signum: int) -> None:
    for node in nodes:
        try:
            os.kill(node["pid"], signal.SIGCONT)  # a paused node must run to handle the SIGTERM
            os.kill(node["pid"], signum)
        except ProcessLookupError:
            pass


def session_timeout_s(state: dict) -> float:
    """``broker.session.timeout.ms`` as the nodes run with it: the last ``--override`` of it, else Kafka's."""
    value = DEFAULT_SESSION_TIMEOUT_MS
    for override in state.get("overrides", []):
        key, _, text = override.partition("=")
        if key.strip() == "broker.session.timeout.ms" and text.strip().isdigit():
            value = int(text)
    return value / 1000


def listed_brokers(state: dict, excluding: int | None = None) -> list[int] | None:
    """The unfenced brokers the live broker-role nodes (but ``excluding``) tell clients of; None if
    none answers."""
    live = answering_brokers(state, excluding)
    if not live:
        return []
    health = {"registered": None}
    base.metadata_health(state, health, live)
    return health["registered"]


def restart_node(state: dict, node: dict) -> dict:
    """Start ``node`` again and wait until it is really back, not its old self in the metadata.

    A killed broker's registration outlives it until its session expires (``broker.session.timeout.ms``),
    and the controller refuses a new registration while the old one lives; a broker stopped by a
    controlled shutdown is fenced already. So the new process starts once no live broker lists the
    node, and is back when they list it again. A voter is back when the leader's DescribeQuorum
    shows its log caught up."""
    if base._alive(node["pid"]):
        os.kill(node["pid"], signal.SIGCONT)  # a paused node must run to handle the SIGTERM
        base._terminate(node["pid"], 30)
    if is_broker(node):
        deadline = time.monotonic() + session_timeout_s(state) + 5
        while node["id"] in (listed_brokers(state, excluding=node["id"]) or []):
            if time.monotonic() > deadline:
                raise CliError(
                    f"broker {node['id']} is still listed by the other brokers {session_timeout_s(state) + 5:.0f} s "
                    "after it stopped: is the active controller running?"
                )
            time.sleep(0.2)  # polling the brokers' metadata; bounded by the deadline
    started_ms = time.time() * 1000  # the leader stamps a follower's fetches with its wall clock
    node["pid"] = spawn_node(state, node)
    base.save_state(state)
    deadline = time.monotonic() + base.HEALTHY_TIMEOUT_S
    while True:
        if not base._alive(node["pid"]):
            raise CliError(f"{base.process_label(node)} exited; see {base.log_path(state, node)}")
        health = kraft_health(state)
        if is_back(node, health, started_ms):
            return health
        if time.monotonic() > deadline:
            raise CliError(
                f"{base.process_label(node)} was not back within {base.HEALTHY_TIMEOUT_S} s; "
                f"see {base.log_path(state, node)}"
            )
        time.sleep(0.2)  # polling the quorum and the brokers' metadata; bounded by the deadline


def is_back(node: dict, health: dict, started_ms: float) -> bool:
    """Listed by the brokers, for a broker; for a voter, leading, or fetching from the leader since
    ``started_ms`` and caught up (the leader's view of a stopped voter is its last fetch, which may
    look caught up when the log has not moved since)."""
    if is_broker(node) and node["id"] not in health["registered"]:
        return False
    if not is_controller(node) or health["controller"] == node["id"]:
        return True
    quorum = health["quorum"]
    voter = next((v for v in quorum.voters if v.replica_id == node["id"]), None) if quorum else None
    if voter is None or (voter.last_fetch_timestamp or 0) < started_ms:
        return False
    return voter_lag(health, node["id"]) <= CAUGHT_UP_RECORDS
