"""``kafka-lite cluster up | status | down | kill | shutdown | restart``: a local ZooKeeper and N brokers,
as separate processes.

No Kafka twin: what a Kafka user does by hand with ``zookeeper-server-start.sh`` and one
``kafka-server-start.sh`` per broker, in one command.

Everything lives under ``--dir`` (default ``.kafka-lite/``): ``cluster.json`` (pids and ports),
``zookeeper.properties`` and ``broker-N/server.properties`` (Kafka's formats, so a learner can read
and edit them), ``logs/`` and each broker's data. So ``status`` and ``down`` work from another shell.
Each process runs in its own session: ``up --detach`` returns and the cluster keeps running;
``down`` stops the brokers (a clean shutdown each, SIGKILL only after a deadline) and then ZooKeeper,
and leaves no process behind. ``kill N`` stops one broker as a crash does (SIGKILL), ``shutdown N`` as
an operator does (SIGTERM: a controlled shutdown, the controller moving its leaderships away first),
and ``restart N`` starts it again.

``up`` turns on every broker's request metrics reporter (``metric.reporters``, see
``server/metrics_reporter.py``), so a learner's cluster always has data to analyse in the
``_request_metrics`` topic: one record per request any broker served. ``--no-metrics-reporter``
leaves it off, as Kafka's brokers are by default.

``--name NAME`` (on every action) works on a second, named cluster beside the first, to mirror one
into the other on one machine: its state lives in ``<dir>-NAME`` (``.kafka-lite-NAME``), its brokers
listen from port 9192 (``--base-port``), and its metadata sits under the ZooKeeper chroot ``/NAME``.
It shares the first cluster's ZooKeeper when that one runs (one ZooKeeper, several Kafka clusters
under chroots, as Kafka's operations guide sets them up), else (none running, or the first cluster a
KRaft one) it starts its own, on port 2182 (``--zookeeper-port``). ``down --name NAME`` never stops a
shared ZooKeeper; ``down`` of the first cluster refuses while a named cluster still uses its
ZooKeeper (a foreground ``up`` stopped with Ctrl-C stops its ZooKeeper all the same: down the named
clusters first). With ``--kraft``, the named cluster is a KRaft one, with no ZooKeeper: its own
quorum and cluster id (``cli/cluster_kraft.py``), beside a first cluster of either mode.

``up --lab N`` runs the brokers on a learner's lab workspace, as the grader does: the package is
copied to ``<dir>/lab-overlay/`` with lab N's files taken from the workspace, and the brokers start
with that copy first on ``PYTHONPATH``. Such a cluster's health is read from ZooKeeper (brokers
registered, a controller elected), not through the brokers' own request path, which is the code
under test and may not answer.

``up --secure`` starts a cluster as Kafka's security guide sets one up: each broker has a
``SASL_PLAINTEXT`` listener for the clients on the cluster's port and a ``PLAINTEXT`` listener
named ``INTERNAL`` for the brokers' own traffic on a free port of its own, bound to 127.0.0.1
(``inter.broker.listener.name``, Kafka 0.10.2), which the status table's caption lists; ``SimpleAclAuthorizer``
allows ``User:admin`` everything and anyone else only what an ACL grants (see ``cli/security.py``
for the users and files). The tool's own requests to the brokers (``status``, the health waits) log
in as admin. The request metrics reporter sends on the INTERNAL listener, as the brokers do.

``up --kraft`` starts a KRaft cluster instead (Kafka 3.3, beyond the book): no ZooKeeper, nodes
formatted with one cluster id, combined nodes or, with ``--controllers C``, controller-only nodes
beside broker-only ones. ``--kraft --secure`` has the same users, files and client listeners, PLAIN
only, ``StandardAuthorizer``, and SASL on the controllers' listener as well. What KRaft adds lives in ``cli/cluster_kraft.py``; every action works on
either, told apart by the state's ``kraft`` key.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from kafka_lite.cli import CliError, security
from kafka_lite.cli.lab import DEFAULT_WORKSPACE, dir_option
from kafka_lite.grading.grader import build_overlay
from kafka_lite.grading.labs import LabError, find
from kafka_lite.server.metrics_reporter import REQUEST_METRICS_TOPIC, RequestMetricsTopicReporter
from kafka_lite.utils.ports import free_port, port_free

if TYPE_CHECKING:  # the ZooKeeper client is imported where it is used, to keep the CLI's start-up light
    from kafka_lite.zk.zk_utils import ZkUtils

STATE_FILE = "cluster.json"
DEFAULT_DIR = Path(".kafka-lite")
DEFAULT_ZOOKEEPER_PORT = 2181
DEFAULT_BASE_PORT = 9092
# A named cluster's defaults: beside the first cluster's, not on them.
NAMED_ZOOKEEPER_PORT = 2182
NAMED_BASE_PORT = 9192
# A name is a directory suffix and a ZooKeeper chroot: letters, digits, '-' and '_'.
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,39}")
HEALTHY_TIMEOUT_S = 60
SHUTDOWN_RETRY_BACKOFF_MS = 500  # the local brokers' controlled.shutdown.retry.backoff.ms


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "cluster",
        help="a local ZooKeeper + N brokers (or KRaft nodes, --kraft): up, status, down, kill, shutdown, "
        "restart, pause, resume",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True
    up = actions.add_parser("up", help="start ZooKeeper and the brokers")
    up.add_argument("--brokers", type=int, default=3, help="number of brokers (ids 0..N-1; default 3)")
    up.add_argument("--dir", type=Path, default=DEFAULT_DIR, help="state directory (default .kafka-lite)")
    _name_option(up)
    up.add_argument(
        "--zookeeper-port",
        type=int,
        help=f"ZooKeeper's client port (default {DEFAULT_ZOOKEEPER_PORT}; with --name, the first "
        f"cluster's ZooKeeper if it runs, else a new one on {NAMED_ZOOKEEPER_PORT})",
    )
    up.add_argument(
        "--base-port",
        type=int,
        help=f"broker N listens on base port + N (default {DEFAULT_BASE_PORT}; with --name {NAMED_BASE_PORT})",
    )
    up.add_argument("--detach", action="store_true", help="return once the cluster is healthy")
    up.add_argument(
        "--override", action="append", default=[], metavar="K=V", help="a setting for every broker"
    )
    up.add_argument(
        "--no-metrics-reporter",
        dest="metrics_reporter",
        action="store_false",
        help=f"do not publish every request's metrics to the {REQUEST_METRICS_TOPIC} topic "
        "(on by default, except with --lab)",
    )
    up.add_argument(
        "--secure",
        action="store_true",
        help="SASL_PLAINTEXT listeners (PLAIN, SCRAM-SHA-256) with users admin and alice, and ACLs "
        "(SimpleAclAuthorizer, super user admin); passwords in <dir>/<user>.properties",
    )
    up.add_argument(
        "--kraft",
        action="store_true",
        help="a KRaft cluster (Kafka 3.3), no ZooKeeper: --brokers combined nodes (broker and controller)",
    )
    up.add_argument(
        "--controllers",
        type=int,
        default=0,
        metavar="C",
        help="with --kraft: C controller-only nodes (ids 1000..), and --brokers broker-only nodes",
    )
    up.add_argument(
        "--lab", type=int, metavar="N", help="run the brokers with your files of lab N (from --lab-dir)"
    )
    up.add_argument(
        "--lab-dir",
        type=Path,
        default=DEFAULT_WORKSPACE,
        help="the labs workspace for --lab (default kafka-lite-labs)",
    )
    up.set_defaults(handler=_on_named_dir(run_up))
    for name, handler, text in (
        ("status", run_status, "show the cluster's processes and metadata"),
        ("down", run_down, "stop the brokers, then ZooKeeper"),
        ("kill", run_kill, "kill one broker with SIGKILL (no clean shutdown): watch the controller react"),
        (
            "shutdown",
            run_shutdown,
            "stop one broker with SIGTERM: a controlled shutdown moves its leaderships away first",
        ),
        ("restart", run_restart, "start a stopped or killed broker again with its config and data"),
        ("pause", run_pause, "freeze one broker with SIGSTOP: alive, but it answers nothing"),
        ("resume", run_resume, "let a paused broker run again with SIGCONT"),
    ):
        p = actions.add_parser(name, help=text)
        p.add_argument(
            "--dir",
            type=Path,
            default=DEFAULT_DIR,
            help="the cluster's state directory (default .kafka-lite)",
        )
        _name_option(p)
        if name in ("kill", "shutdown", "restart", "pause", "resume"):
            p.add_argument("broker", type=int, metavar="N", help="the broker id")
        p.set_defaults(handler=_on_named_dir(handler))


def _name_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--name",
        help="a second, named cluster beside the first: state in <dir>-NAME, ZooKeeper chroot /NAME "
        "(with --kraft, no ZooKeeper: a quorum of its own)",
    )


def named_dir(directory: Path, name: str) -> Path:
    """Where the cluster ``name`` keeps its state: beside the first cluster's directory."""
    if not NAME_PATTERN.fullmatch(name):
        raise CliError(
            f"--name {name!r}: a cluster name is 1-40 letters, digits, '-' or '_', starting with a "
            "letter or digit",
            exit_code=2,
        )
    return directory.with_name(f"{directory.name}-{name}")


def _on_named_dir(handler):
    """Every action runs on ``--dir``, or with ``--name`` on the named cluster's directory; the first
    cluster's stays in ``args.first_dir`` (a named cluster may share its ZooKeeper)."""

    def run(args: argparse.Namespace, console) -> int:
        args.first_dir = args.dir
        if args.name is not None:
            args.dir = named_dir(args.dir, args.name)
        return handler(args, console)

    return run


# -- state ------------------------------------------------------------------------------------------------


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie (our own exited child) is not alive
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


def load_state(directory: Path) -> dict | None:
    path = directory / STATE_FILE
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise CliError(f"{path} is unreadable ({e}); remove it if no cluster runs there") from None


def zookeeper_connect(state: dict, port: int | None = None) -> str:
    """The cluster's ``zookeeper.connect``: host and port (``port`` in front of ZooKeeper's own, if
    given), and a named cluster's chroot."""
    return f"127.0.0.1:{port or state['zookeeper']['port']}{state['zookeeper'].get('chroot', '')}"


def bootstrap_servers(state: dict) -> str:
    """The nodes with a broker's PLAINTEXT listener (a KRaft controller-only node has none)."""
    return ",".join(f"127.0.0.1:{b['port']}" for b in state["brokers"] if "port" in b)


def save_state(state: dict) -> None:
    (Path(state["dir"]) / STATE_FILE).write_text(json.dumps(state, indent=2))


def process_label(node: dict) -> str:
    """``broker N``, or ``controller N`` for a KRaft controller-only node (which has no broker role)."""
    return f"{'controller' if node.get('roles') == ['controller'] else 'broker'} {node['id']}"


def log_path(state: dict, node: dict) -> Path:
    """A node's log: ``logs/broker-N.log``, or ``logs/controller-N.log``."""
    return Path(state["dir"]) / "logs" / f"{process_label(node).replace(' ', '-')}.log"


def _spawn(args: list[str], log_path: Path, overlay: str | None = None) -> int:
    """Start ``kafka-lite ARGS`` in its own session; with ``overlay``, importing its package first."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    env, cwd = None, None
    if overlay is not None:
        path = [overlay, os.environ.get("PYTHONPATH", "")]
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(p for p in path if p),
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        cwd = overlay  # ``python -m`` puts the working directory first on sys.path: not the checkout
    with open(log_path, "ab") as log_file:
        proc = subprocess.Popen(
            [sys.executable, "-m", "kafka_lite.cli.main", *args],
            stdout=log_file,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            cwd=cwd,
            start_new_session=True,  # its own session: it outlives `up --detach` and ignores our Ctrl-C
        )
    return proc.pid


def _lab_overlay(directory: Path, lab_number: int, lab_dir: Path) -> dict:
    """Build ``directory/lab-overlay``: the package with lab ``lab_number``'s files from the workspace."""
    try:
        lab = find(lab_number)
    except LabError as e:
        raise CliError(str(e), exit_code=2) from None
    workspace = (lab_dir / lab.slug).resolve()
    if not workspace.is_dir():
        raise CliError(
            f"no workspace {workspace} for lab {lab_number}: run "
            f"`kafka-lite lab start {lab_number}{dir_option(lab_dir)}` first",
            exit_code=2,
        )
    try:
        overlay = build_overlay(lab, workspace, directory / "lab-overlay")
    except LabError as e:
        raise CliError(str(e), exit_code=2) from None
    return {
        "number": lab.number,
        "workspace": str(workspace),
        "overlay": str(overlay),
        "files": list(lab.files),
    }


# -- up ------------------------------------------------------------------------------------------------------


# --8<-- [start:up]
def _refuse_the_other_modes_data(directory: Path, kraft: bool) -> None:
    """A state directory keeps its nodes' data after ``down``, so the next ``up`` carries on with it.
    Data of the other mode cannot be carried on (a KRaft node's directories are formatted with a
    cluster id and hold a metadata log; a ZooKeeper broker's are neither): say so, and what to do."""
    kraft_nodes = sorted(p.parent.parent.name for p in directory.glob("*/metadata/meta.properties"))
    zookeeper_nodes = sorted(
        p.parent.parent.name
        for p in directory.glob("broker-*/data/meta.properties")
        if not (p.parent.parent / "metadata").exists()
    )
    other, nodes, flag = ("ZooKeeper", zookeeper_nodes, "") if kraft else ("KRaft", kraft_nodes, " --kraft")
    if nodes:
        raise CliError(
            f"{directory} holds the data of a {other} cluster ({', '.join(nodes)}) from an earlier "
            f"`cluster up{flag}`: remove it (`rm -rf {directory}`) to start a "
            f"{'KRaft' if kraft else 'ZooKeeper'} cluster there, or give --dir another directory",
            exit_code=2,
        )


def start_cluster(
    directory: Path,
    brokers: int,
    zk_port: int,
    base_port: int,
    overrides: list[str],
    lab: int | None = None,
    lab_dir: Path = DEFAULT_WORKSPACE,
    metrics_reporter: bool = False,
    name: str | None = None,
    shared_zookeeper: dict | None = None,
    secure: bool = False,
    kraft: bool = False,
    controllers: int = 0,
    fronts: dict[str, dict[int, int]] | None = None,
) -> dict:
    """Write the configs, start ZooKeeper and the brokers, and return the state (not yet waited on).
    With ``lab``, the brokers run on that lab's files from the workspace under ``lab_dir``. With
    ``metrics_reporter``, every broker publishes its request metrics (``metric.reporters``). A
    ``name``d ZooKeeper-mode cluster keeps its metadata under the chroot ``/name``; with
    ``shared_zookeeper`` (the first cluster's state entry for it) it uses that ZooKeeper instead of
    starting one. A named KRaft cluster needs neither: its metadata is its own quorum's. ``secure``
    gives the brokers SASL listeners and the authorizer (``cli/security.py``). ``kraft`` starts KRaft
    nodes instead, and no ZooKeeper: ``brokers`` combined nodes, or with ``controllers`` that many
    controller-only nodes and ``brokers`` broker-only ones (``cli/cluster_kraft.py``).

    ``fronts`` puts a port of someone else's (a proxy's) in front of each node, by role and node id:
    ``"broker"``, the port its PLAINTEXT listener is advertised at (``advertised.listeners``, KIP-103:
    listen on one port, advertise another); ``"zookeeper"``, the port it reaches ZooKeeper at; and
    ``"controller"``, the port the other voters reach its CONTROLLER listener at."""
    existing = load_state(directory)
    if existing and any(_alive(p) for p in _pids(existing)):
        raise CliError(
            f"a cluster is already running in {directory} (`kafka-lite cluster down {_where(existing)}`)"
        )
    if brokers < 1:
        raise CliError(f"--brokers must be at least 1, got {brokers}", exit_code=2)
    _refuse_the_other_modes_data(directory, kraft)
    if controllers and not kraft:
        raise CliError(
            "--controllers needs --kraft: a ZooKeeper cluster's controller is a broker", exit_code=2
        )
    if controllers < 0:
        raise CliError(f"--controllers must be at least 0, got {controllers}", exit_code=2)
    if fronts is not None and secure:
        raise CliError("a secure cluster's listeners cannot be fronted: its clients log in", exit_code=2)
    directory = directory.resolve()
    directory.mkdir(parents=True, exist_ok=True)
    # The learner's workspace first: a missing one is the mistake to report, whatever the ports.
    lab_state = _lab_overlay(directory, lab, lab_dir) if lab is not None else None
    ports = [(base_port + i, f"broker {i}") for i in range(brokers)]
    if kraft:
        from kafka_lite.cli import cluster_kraft

        _check_ports_free(ports, name)
        state = {"dir": str(directory), "brokers": [], "overrides": list(overrides)}
        if name is not None:
            state["name"] = name
        if lab_state is not None:
            state["lab"] = lab_state
        reporter = _metrics_reporter_settings(brokers) if metrics_reporter else []
        users = None
        if secure:  # PLAIN alone: its passwords in the nodes' configs, none in a quorum to write
            users = security.new_users()
            state["secure"] = {"users": security.write_client_properties(directory, users)}
        return cluster_kraft.start_nodes(state, brokers, controllers, base_port, fronts, reporter, users)
    # a secure cluster's brokers also listen on INTERNAL, on free ports beyond the brokers'
    internal_ports = (
        _internal_ports(brokers, {base_port + i for i in range(brokers)} | {zk_port}) if secure else []
    )
    _check_ports_free(([] if shared_zookeeper else [(zk_port, "ZooKeeper")]) + ports, name)
    if shared_zookeeper:
        zookeeper = dict(shared_zookeeper)
    else:
        (directory / "zookeeper.properties").write_text(
            f"dataDir={directory / 'zookeeper'}\nclientPort={zk_port}\ntickTime=500\n"
        )
        zk_pid = _spawn(
            ["zookeeper", "start", str(directory / "zookeeper.properties")],
            directory / "logs" / "zookeeper.log",
        )
        zookeeper = {"pid": zk_pid, "port": zk_port}
    if name is not None:
        zookeeper["chroot"] = f"/{name}"
    state = {
        "dir": str(directory),
        "zookeeper": zookeeper,
        "brokers": [],
        "overrides": list(overrides),  # a restarted broker gets them again
    }
    if name is not None:
        state["name"] = name
    if lab_state is not None:
        state["lab"] = lab_state
    if not shared_zookeeper:
        _wait_for_port(zk_port, zookeeper["pid"], directory / "logs" / "zookeeper.log")
    users = _secure_users(state) if secure else None
    for i in range(brokers):
        broker_dir = directory / f"broker-{i}"
        broker_dir.mkdir(exist_ok=True)
        config = broker_dir / "server.properties"
        listener = [f"listeners=PLAINTEXT://127.0.0.1:{base_port + i}"]
        write = security.write_private if secure else Path.write_text  # a secure one holds the passwords
        write(
            config,
            "\n".join(
                [
                    f"broker.id={i}",
                    *(
                        security.broker_settings(base_port + i, users, internal_ports[i])
                        if secure
                        else listener
                    ),
                    *(
                        [f"advertised.listeners=PLAINTEXT://127.0.0.1:{fronts['broker'][i]}"]
                        if fronts
                        else []
                    ),
                    f"log.dirs={broker_dir / 'data'}",
                    f"zookeeper.connect={zookeeper_connect(state, fronts['zookeeper'][i] if fronts else None)}",
                    "num.network.threads=2",
                    "num.io.threads=4",
                    # a learning cluster: topics may be deleted (Kafka 0.10.1's default is false)
                    "delete.topic.enable=true",
                    # Kafka's 5 s between controlled-shutdown attempts is what the last broker of a
                    # stopping cluster waits, twice, for nothing (see stop_cluster)
                    f"controlled.shutdown.retry.backoff.ms={SHUTDOWN_RETRY_BACKOFF_MS}",
                    *(_metrics_reporter_settings(brokers) if metrics_reporter else []),
                ]
            )
            + "\n",
        )
        pid = _spawn(_broker_args(config, state), directory / "logs" / f"broker-{i}.log", _overlay(state))
        state["brokers"].append({"id": i, "pid": pid, "port": base_port + i})
        if secure:
            state["brokers"][-1]["internal_port"] = internal_ports[i]
    save_state(state)
    return state


# --8<-- [end:up]


def _check_ports_free(ports: list[tuple[int, str]], name: str | None) -> None:
    for port, what in ports:
        if not port_free(port):
            hint = " (choose others with --base-port)" if what.startswith("broker") and name else ""
            raise CliError(f"port {port} for {what} is already in use{hint}", exit_code=2)


def _internal_ports(brokers: int, taken: set[int]) -> list[int]:
    """A free loopback port for each broker's INTERNAL listener, none of them a port in ``taken``."""
    ports: list[int] = []
    while len(ports) < brokers:
        port = free_port()
        if port not in taken and port not in ports:
            ports.append(port)
    return ports


def _secure_users(state: dict) -> dict[str, str]:
    """New passwords for a secure cluster: SCRAM credentials in its ZooKeeper, one client properties
    file per user in its directory (recorded in the state, the passwords not)."""
    users = security.new_users()
    security.add_scram_credentials(zookeeper_connect(state), users)
    state["secure"] = {"users": security.write_client_properties(Path(state["dir"]), users)}
    return users


def _metrics_reporter_settings(brokers: int) -> list[str]:
    """The request metrics reporter, with its topic sized for the whole cluster: a partition per
    broker and up to three replicas. The brokers start one by one, so a reporter that created the
    topic from the brokers alive at that moment could make it smaller; with the size given, creation
    waits until every broker is up (the reporter retries, holding its samples)."""
    reporter = RequestMetricsTopicReporter
    return [
        f"metric.reporters={reporter.__module__}:{reporter.__name__}",
        f"request.metrics.reporter.topic.num.partitions={brokers}",
        f"request.metrics.reporter.topic.replication.factor={min(3, brokers)}",
    ]


def _broker_args(config: Path, state: dict) -> list[str]:
    return ["broker", "start", str(config)] + [
        a for o in state.get("overrides", []) for a in ("--override", o)
    ]


def _overlay(state: dict) -> str | None:
    return state["lab"]["overlay"] if state.get("lab") else None


def _wait_for_port(port: int, pid: int, log_path: Path) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if not _alive(pid):
            raise CliError(f"ZooKeeper exited during start-up; see {log_path}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)  # polling a port that is not open yet; bounded by the deadline
    raise CliError(f"ZooKeeper did not open port {port} within 30 s; see {log_path}")


def cluster_health(state: dict) -> dict:
    """Processes alive, and what the brokers' metadata says (brokers registered, controller)."""
    if state.get("kraft"):
        from kafka_lite.cli import cluster_kraft

        return cluster_kraft.kraft_health(state)
    health = {
        "zookeeper_alive": _alive(state["zookeeper"]["pid"]),
        "brokers_alive": {b["id"]: _alive(b["pid"]) for b in state["brokers"]},
        "registered": [],
        "controller": None,
        "topics": [],
    }
    live = [b for b in state["brokers"] if health["brokers_alive"][b["id"]]]
    if not live:
        return health
    if state.get("lab"):
        return _health_from_zookeeper(state, health)
    return metadata_health(state, health, live)


def metadata_health(state: dict, health: dict, live: list[dict]) -> dict:
    """Into ``health``, what the ``live`` brokers' metadata says: the brokers it lists, its
    controller, the topics and the partitions' leaders and replicas."""
    from kafka_lite.clients.admin import KafkaAdminClient
    from kafka_lite.common.errors import KafkaException

    try:
        admin = KafkaAdminClient(
            ",".join(f"127.0.0.1:{b['port']}" for b in live),
            request_timeout_ms=2000,
            **security.admin_login(state),  # on a secure cluster only a super user sees everything
        )
    except KafkaException:
        return health
    try:
        cluster = admin.describe_cluster()
        health["registered"] = sorted(cluster.nodes)
        health["controller"] = cluster.controller.id if cluster.controller else None
        health["topics"] = sorted(cluster.topics())
        # Replication at a glance: who leads how many partitions, and how many need a look.
        partitions = cluster.partitions.values()
        health["leaders"] = Counter(p.leader.id for p in partitions if p.leader is not None)
        health["under_replicated"] = sum(len(p.in_sync_replicas) < len(p.replicas) for p in partitions)
        health["offline"] = sum(p.leader is None for p in partitions)
        health["partitions"] = sorted(
            (
                p.topic,
                p.partition,
                p.leader.id if p.leader is not None else None,
                p.replicas,
                p.in_sync_replicas,
            )
            for p in partitions
            if not p.topic.startswith("_")  # the internal topics' dozens of partitions would hide the rest
        )
    except KafkaException:
        pass
    finally:
        admin.close()
    return health


def _health_from_zookeeper(state: dict, health: dict) -> dict:
    """Registered brokers and the controller as ZooKeeper has them: a lab cluster's own request path
    is the learner's code, so it is not what tells us the processes are up."""
    from kafka_lite.zk.zk_utils import ZkUtils

    if not health["zookeeper_alive"]:
        return health
    try:
        zk = ZkUtils(zookeeper_connect(state), connection_timeout_ms=2000)
    except Exception:  # ZooKeeper still starting: not healthy yet
        return health
    try:
        health["registered"] = zk.get_all_broker_ids()
        controller = zk.get_controller_id()
        health["controller"] = controller if controller >= 0 else None
        health["topics"] = sorted(zk.get_all_topics())
    finally:
        zk.close()
    return health


def is_healthy(state: dict, health: dict) -> bool:
    if state.get("kraft"):
        from kafka_lite.cli import cluster_kraft

        return cluster_kraft.is_healthy(state, health)
    ids = sorted(b["id"] for b in state["brokers"])
    return (
        health["zookeeper_alive"]
        and all(health["brokers_alive"].values())
        and health["registered"] == ids
        and health["controller"] is not None
    )


def wait_healthy(state: dict, timeout_s: float = HEALTHY_TIMEOUT_S) -> dict:
    deadline = time.monotonic() + timeout_s
    while True:
        health = cluster_health(state)
        if is_healthy(state, health):
            return health
        dead = [b for b in state["brokers"] if not health["brokers_alive"][b["id"]]]
        if dead:
            raise CliError(f"{process_label(dead[0])} exited; see {log_path(state, dead[0])}")
        if not health.get("zookeeper_alive", True):
            raise CliError(f"ZooKeeper exited; see {Path(state['dir']) / 'logs' / 'zookeeper.log'}")
        if time.monotonic() > deadline:
            raise CliError(f"the cluster was not healthy within {timeout_s:.0f} s; see {state['dir']}/logs")
        time.sleep(0.2)  # polling the brokers' metadata; bounded by the deadline


def status_table(state: dict, health: dict) -> Table:
    if state.get("kraft"):
        from kafka_lite.cli import cluster_kraft

        return cluster_kraft.status_table(state, health)
    named = f" {state['name']!r}" if state.get("name") else ""
    table = Table(title=f"kafka_lite cluster{named} in {state['dir']}")
    leaders = health.get("leaders")  # known from the brokers' metadata, not for a lab's cluster
    for col in ("process", "pid", "address", "state", *(["leads"] if leaders is not None else [])):
        table.add_column(col)
    zk = state["zookeeper"]
    shared = f", shared with {zk['shared_with']}" if zk.get("shared_with") else ""
    table.add_row(
        "zookeeper",
        str(zk["pid"]),
        zookeeper_connect(state),
        ("running" if health["zookeeper_alive"] else "[red]stopped") + shared,
    )
    for b in state["brokers"]:
        alive = health["brokers_alive"][b["id"]]
        role = " (controller)" if health["controller"] == b["id"] else ""
        registered = b["id"] in health["registered"]
        if registered and not alive:
            # Killed: its ephemeral registration lasts until ZooKeeper expires the session it held.
            text = f"[red]stopped[/], still registered{role} until its ZooKeeper session expires"
        elif registered:
            text = "registered" + role
        else:
            text = "running" if alive else "[red]stopped"
        led = leaders[b["id"]] if leaders is not None else 0
        leads = [] if leaders is None else [(f"{led} partition" + "s" * (led != 1)) if alive else "-"]
        table.add_row(f"broker {b['id']}", str(b["pid"]), f"127.0.0.1:{b['port']}", text, *leads)
    table.caption = topics_caption(state, health, "brokers")
    if state.get("secure"):
        table.caption += (
            f"\nclients: SASL_PLAINTEXT with ACLs at the addresses above; admin's login in "
            f"{state['secure']['users']['admin']}"
        )
        internal = [
            f"broker {b['id']} at 127.0.0.1:{b['internal_port']}"
            for b in state["brokers"]
            if "internal_port" in b
        ]
        if internal:
            table.caption += f"\nbrokers among themselves: PLAINTEXT listener INTERNAL, {', '.join(internal)}"
    return table


def topics_caption(state: dict, health: dict, processes: str) -> str:
    """The status table's caption in both modes: the topics, the partitions that need a look, and
    the lab whose files the ``processes`` run."""
    caption = f"topics: {', '.join(health['topics']) or '(none)'}"
    if health.get("leaders") is not None and (health["under_replicated"] or health["offline"]):
        caption += (
            f"\n{health['under_replicated']} partitions under-replicated, {health['offline']} without a "
            "leader"
        )
    if state.get("lab"):
        lab = state["lab"]
        caption += f"\n{processes} run lab {lab['number']}'s files from {lab['workspace']}"
    return caption


def run_up(args: argparse.Namespace, console) -> int:
    started = time.monotonic()
    if args.secure and args.lab is not None:
        # The lab's brokers run the learner's network code, which need not speak SASL.
        raise CliError("--secure does not go with --lab: a lab cluster is PLAINTEXT", exit_code=2)
    if args.kraft:
        from kafka_lite.cli import cluster_kraft

        cluster_kraft.check_flags(args)
    # A named KRaft cluster has no ZooKeeper to share (nor a chroot): only a ZooKeeper one looks.
    shared = _shared_zookeeper(args) if args.name is not None and not args.kraft else None
    if args.name is None:
        zk_port, base_port = (
            args.zookeeper_port or DEFAULT_ZOOKEEPER_PORT,
            args.base_port or DEFAULT_BASE_PORT,
        )
    else:
        zk_port, base_port = args.zookeeper_port or NAMED_ZOOKEEPER_PORT, args.base_port or NAMED_BASE_PORT
    # A lab cluster's request path is the learner's code under test: no reporter traffic through it.
    # On a secure cluster the reporter logs in as the brokers do (their inter-broker login).
    state = start_cluster(
        args.dir,
        args.brokers,
        zk_port,
        base_port,
        args.override,
        args.lab,
        args.lab_dir,
        metrics_reporter=args.metrics_reporter and args.lab is None,
        name=args.name,
        shared_zookeeper=shared,
        secure=args.secure,
        kraft=args.kraft,
        controllers=args.controllers,
    )
    try:
        health = wait_healthy(state)
    except CliError:
        stop_cluster(state)
        raise
    console.print(status_table(state, health))
    console.print(
        f"healthy in {time.monotonic() - started:.1f} s; bootstrap servers: {bootstrap_servers(state)}",
        highlight=False,
    )
    if args.secure:
        # soft_wrap: lines to copy are printed whole, never broken at the terminal's width
        how = security.how_to_connect(state, bootstrap_servers(state))
        console.print(how, highlight=False, markup=False, soft_wrap=True)
    if args.detach:
        return 0
    console.print("Ctrl-C (or SIGTERM, or SIGHUP) stops the cluster.")
    _stop_on_signals()
    try:
        with Live(live_view(state, health), console=console, refresh_per_second=1) as live:
            while True:
                time.sleep(2)  # the live view's refresh interval
                live.update(live_view(state, cluster_health(state)))
    except KeyboardInterrupt:
        pass
    finally:
        # One stop, whatever else arrives meanwhile: a second signal must not cut the brokers' shutdown short.
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)
        stop_cluster(state)
    return 0


def _shared_zookeeper(args: argparse.Namespace) -> dict | None:
    """The first cluster's ZooKeeper, for a named cluster to share: if it runs, and unless
    ``--zookeeper-port`` asks for another one."""
    first = load_state(args.first_dir)
    if first is None or "zookeeper" not in first or not _alive(first["zookeeper"]["pid"]):
        return None
    zk = first["zookeeper"]
    if args.zookeeper_port not in (None, zk["port"]):
        return None
    return {"pid": zk["pid"], "port": zk["port"], "shared_with": first["dir"]}


def _where(state: dict) -> str:
    """The options that name this cluster on the command line."""
    directory = Path(state["dir"])
    if state.get("name"):
        first = directory.with_name(directory.name.removesuffix(f"-{state['name']}"))
        return f"--dir {shlex.quote(str(first))} --name {state['name']}"
    return f"--dir {shlex.quote(str(directory))}"


def _topics_command(state: dict, health: dict) -> str:
    """``kafka-lite topics`` pointed at this cluster, for a hint to run as it is printed: a live
    broker to ask and, on a secure cluster, the admin's login (only a super user sees every topic)."""
    brokers = [b for b in state["brokers"] if "port" in b]  # not a KRaft controller-only node
    live = [b for b in brokers if health["brokers_alive"].get(b["id"])] or brokers
    login = (
        f" --command-config {shlex.quote(state['secure']['users'][security.ADMIN_USER])}"
        if state.get("secure")
        else ""
    )
    return f"kafka-lite topics --bootstrap-server 127.0.0.1:{live[0]['port']}{login}"


def _stop_on_signals() -> None:
    """A foreground ``cluster up`` stops its cluster on SIGTERM (``kill``, a service manager) and SIGHUP
    (its terminal closed) as it does on Ctrl-C. The brokers and ZooKeeper run in sessions of their own
    so that ``--detach`` can leave them running; without this, those signals would end this process and
    leave them all behind."""

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, interrupt)


PARTITION_ROWS = 20  # the live view lists this many partitions, then counts the rest


def partitions_table(health: dict) -> Table | None:
    """Each partition's leader, replicas and ISR, as the brokers' metadata has them (chapter 7: the
    controller's decisions, seen from outside). Under-replicated partitions in yellow, leaderless in red."""
    rows = health.get("partitions")
    if not rows:
        return None
    table = Table(title="partitions (internal topics not shown)")
    for col in ("topic", "partition", "leader", "replicas", "isr"):
        table.add_column(col)
    for topic, partition, leader, replicas, isr in rows[:PARTITION_ROWS]:
        style = "red" if leader is None else "yellow" if len(isr) < len(replicas) else None
        table.add_row(
            topic, str(partition), "none" if leader is None else str(leader),
            ",".join(map(str, replicas)), ",".join(map(str, isr)), style=style,
        )  # fmt: skip
    if len(rows) > PARTITION_ROWS:
        table.caption = f"and {len(rows) - PARTITION_ROWS} more"
    return table


def live_view(state: dict, health: dict, with_hints: bool = True) -> Group:
    """What a foreground ``cluster up`` shows, refreshed: the processes, then the partitions, then
    the commands that show more (word-wrapped to the terminal; ``status`` prints them whole)."""
    partitions = partitions_table(health)
    hints = [Text(hint, style="dim") for hint in status_hints(state, health)] if with_hints else []
    return Group(status_table(state, health), *([partitions] if partitions is not None else []), *hints)


def status_hints(state: dict, health: dict) -> list[str]:
    """The commands that show what the tables leave out, each a line to copy and run as it is."""
    hints = []
    if health.get("under_replicated") or health.get("offline"):
        command = f"{_topics_command(state, health)} --describe --under-replicated-partitions --unavailable-partitions"
        hints.append(f"`{command}` lists the partitions that need a look")
    if len(health.get("partitions") or ()) > PARTITION_ROWS:
        hints.append(f"`{_topics_command(state, health)} --describe` lists every partition")
    return hints


def run_status(args: argparse.Namespace, console) -> int:
    state = load_state(args.dir)
    if state is None:
        where = _where({"dir": args.dir, "name": args.name}) if args.dir != DEFAULT_DIR else ""
        raise CliError(
            f"no cluster in {args.dir} (start one with `{f'kafka-lite cluster up {where}'.rstrip()}`)"
        )
    health = cluster_health(state)
    console.print(live_view(state, health, with_hints=False))
    for hint in status_hints(state, health):  # whole lines, so that a command copies as one
        console.print(hint, style="dim", highlight=False, markup=False, soft_wrap=True)
    return 0 if is_healthy(state, health) else 1


# -- down ----------------------------------------------------------------------------------------------------


def _pids(state: dict) -> list[int]:
    """The processes this cluster started (a shared ZooKeeper is the first cluster's)."""
    if "zookeeper" not in state:  # KRaft
        return [b["pid"] for b in state["brokers"]]
    zk = state["zookeeper"]
    return [b["pid"] for b in state["brokers"]] + ([] if zk.get("shared_with") else [zk["pid"]])


def _terminate(pid: int, timeout_s: float) -> None:
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    if not _wait_gone(pid, timeout_s):
        os.kill(pid, signal.SIGKILL)
        _wait_gone(pid, 10)


def _wait_gone(pid: int, timeout_s: float) -> bool:
    """Wait until ``pid`` has exited (reaping it if it is our child); False if it is still there at
    the deadline. A signal is delivered asynchronously, so "sent" is not "gone"."""
    deadline = time.monotonic() + timeout_s
    while _alive(pid):
        _reap(pid)
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)  # polling the process table; bounded by the deadline
    return True


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


# --8<-- [start:down]
def stop_cluster(state: dict) -> None:
    """Brokers first (each shuts down cleanly: logs flushed, clean-shutdown marker written), then
    ZooKeeper: stopping ZooKeeper first would leave the brokers waiting on a lost session.

    Each broker's SIGTERM starts with a controlled shutdown. The brokers that are not the controller
    stop together: their requests reach a controller that stays up, which moves their leaderships
    onto the brokers not yet shut down, the last of them onto itself. The controller stops last, so
    no new one is elected while the others shut down. It is then the last broker: its replicated
    partitions have no other live replica, the controller (itself) answers them as remaining, and
    it asks again after ``controlled.shutdown.retry.backoff.ms`` until its attempts run out, then
    shuts down without moving them, as Kafka's last broker does. The local brokers' backoff is short
    (``SHUTDOWN_RETRY_BACKOFF_MS``) so that this costs about a second, not Kafka's ten or more.

    A leadership may move more than once on the way down. Under ``inter.broker.protocol.version``
    0.10, a follower of a new leader truncates its log to its high watermark: the records it drops
    are fetched again only after the next start, so the stopped replicas' logs may differ by a tail.

    A KRaft cluster stops in the same spirit, its active controller last (``cluster_kraft.stop_nodes``)."""
    if state.get("kraft"):
        from kafka_lite.cli import cluster_kraft

        cluster_kraft.stop_nodes(state)
        (Path(state["dir"]) / STATE_FILE).unlink(missing_ok=True)
        return
    controller = _controller_id(state)
    last = [b for b in state["brokers"] if b["id"] == controller]
    for group in ([b for b in state["brokers"] if b not in last], last):
        for b in group:
            try:
                os.kill(b["pid"], signal.SIGCONT)  # a paused broker must run to handle the SIGTERM
                os.kill(b["pid"], signal.SIGTERM)
            except ProcessLookupError:
                pass
        for b in group:
            _terminate(b["pid"], 30)
    if not state["zookeeper"].get("shared_with"):  # a shared ZooKeeper is the first cluster's to stop
        _terminate(state["zookeeper"]["pid"], 15)
    (Path(state["dir"]) / STATE_FILE).unlink(missing_ok=True)


def clusters_sharing_zookeeper(state: dict) -> list[dict]:
    """The named clusters beside this one whose brokers run on its ZooKeeper. A named KRaft cluster
    is never one: its state has no ``zookeeper`` entry, so nothing of it says ``shared_with``."""
    directory = Path(state["dir"])
    users = []
    for candidate in sorted(directory.parent.glob(f"{directory.name}-*/{STATE_FILE}")):
        try:
            other = json.loads(candidate.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        if other.get("zookeeper", {}).get("shared_with") == state["dir"] and any(
            _alive(b["pid"]) for b in other["brokers"]
        ):
            users.append(other)
    return users


def _controller_id(state: dict) -> int | None:
    """The controller as ZooKeeper has it, or None if ZooKeeper cannot tell (then all stop together)."""
    from kafka_lite.zk.zk_utils import ZkUtils

    if not _alive(state["zookeeper"]["pid"]):
        return None
    try:
        zk = ZkUtils(zookeeper_connect(state), connection_timeout_ms=2000)
    except Exception:  # kazoo's errors are many: ZooKeeper not answering is the one case here
        return None
    try:
        controller = zk.get_controller_id()
    except Exception:
        return None
    finally:
        zk.close()
    return controller if controller >= 0 else None


# --8<-- [end:down]


def run_down(args: argparse.Namespace, console) -> int:
    state = load_state(args.dir)
    if state is None:
        console.print(f"no cluster in {args.dir}", highlight=False)
        return 0
    users = clusters_sharing_zookeeper(state)
    if users:
        raise CliError(
            f"the named cluster {users[0]['name']!r} uses this cluster's ZooKeeper: stop it first "
            f"(`kafka-lite cluster down {_where(users[0])}`)"
        )
    stop_cluster(state)
    console.print(f"cluster in {state['dir']} stopped", highlight=False)
    return 0


# -- kill and restart one broker ----------------------------------------------------------------------------------


def _broker_entry(state: dict, broker_id: int) -> dict:
    for b in state["brokers"]:
        if b["id"] == broker_id:
            return b
    raise CliError(
        f"there is no broker {broker_id} in {state['dir']} (brokers: {[b['id'] for b in state['brokers']]})",
        exit_code=2,
    )


def _running_broker(args: argparse.Namespace) -> tuple[dict, dict]:
    """The cluster's state and ``args.broker``'s entry, which must be a running process: what kill,
    shutdown, pause and resume act on."""
    state = load_state(args.dir)
    if state is None:
        raise CliError(f"no cluster in {args.dir}")
    broker = _broker_entry(state, args.broker)
    if not _alive(broker["pid"]):
        raise CliError(f"{process_label(broker)} is not running")
    return state, broker


def run_kill(args: argparse.Namespace, console) -> int:
    """SIGKILL, as a crash: no clean-shutdown marker, so the next start recovers the logs; the
    broker's ZooKeeper session expires after zookeeper.session.timeout.ms and the controller moves
    its partitions' leadership (book 7.1.3)."""
    state, broker = _running_broker(args)
    os.kill(broker["pid"], signal.SIGKILL)
    _wait_gone(broker["pid"], 10)
    console.print(
        f"{process_label(broker)} (pid {broker['pid']}) killed; `kafka-lite cluster status {_where(state)}` "
        "shows the rest",
        highlight=False,
        soft_wrap=True,  # a command to copy: one line, never broken
    )
    return 0


# The longest a broker's controlled shutdown may take: controlled.shutdown.max.retries attempts, each
# waiting up to controller.socket.timeout.ms, with the backoff between them, at Kafka's defaults
# (3 x 30 s + 2 x 5 s), then its clean shutdown. Past this, SIGKILL.
SHUTDOWN_TIMEOUT_S = 120


def run_shutdown(args: argparse.Namespace, console) -> int:
    """SIGTERM, as an operator stops a broker: the broker first asks the controller for a controlled
    shutdown (its leaderships move to other in-sync replicas, its follower replicas leave the ISR,
    book 7.4), then shuts down cleanly. What its log said about the leaderships is shown."""
    state, broker = _running_broker(args)
    log = log_path(state, broker)
    start = log.stat().st_size if log.exists() else 0
    started = time.monotonic()
    _terminate(broker["pid"], SHUTDOWN_TIMEOUT_S)
    for line in _controlled_shutdown_lines(log, start):
        console.print(line, highlight=False, markup=False)
    console.print(
        f"{process_label(broker)} (pid {broker['pid']}) shut down in {time.monotonic() - started:.1f} s; "
        f"`kafka-lite cluster restart {args.broker} {_where(state)}` starts it again",
        highlight=False,
        soft_wrap=True,  # a command to copy: one line, never broken
    )
    return 0


def _controlled_shutdown_lines(log_path: Path, start: int) -> list[str]:
    """The broker's log lines about its controlled shutdown, written since byte ``start``."""
    try:
        with open(log_path, "rb") as f:
            f.seek(start)
            text = f.read().decode(errors="replace")
    except OSError:
        return []
    keys = ("controlled shutdown", "Remaining partitions to move", "Error code from controller")
    return [line for line in text.splitlines() if any(k.lower() in line.lower() for k in keys)]


def run_restart(args: argparse.Namespace, console) -> int:
    from kafka_lite.zk.zk_utils import ZkUtils

    state = load_state(args.dir)
    if state is None:
        raise CliError(f"no cluster in {args.dir}")
    broker = _broker_entry(state, args.broker)
    if state.get("kraft"):
        from kafka_lite.cli import cluster_kraft

        console.print(status_table(state, cluster_kraft.restart_node(state, broker)))
        return 0
    if _alive(broker["pid"]):
        _terminate(broker["pid"], 30)
    if not _alive(state["zookeeper"]["pid"]):
        log = Path(state["dir"]) / "logs" / "zookeeper.log"
        raise CliError(f"the cluster's ZooKeeper is not running; see {log}")
    zk = ZkUtils(zookeeper_connect(state), connection_timeout_ms=2000)
    try:
        registered_before = _registration_epoch(zk, args.broker)
        directory = Path(state["dir"])
        config = directory / f"broker-{args.broker}" / "server.properties"
        broker["pid"] = _spawn(
            _broker_args(config, state), directory / "logs" / f"broker-{args.broker}.log", _overlay(state)
        )
        save_state(state)
        health = wait_rejoined(state, zk, args.broker, registered_before)
    finally:
        zk.close()
    console.print(status_table(state, health))
    return 0


def _registration_epoch(zk: ZkUtils, broker_id: int) -> int | None:
    """The zxid that created ``/brokers/ids/<id>`` (the registration's epoch), or None if absent."""
    broker = zk.get_broker(broker_id)
    return None if broker is None else broker.epoch


def wait_rejoined(
    state: dict,
    zk: ZkUtils,
    broker_id: int,
    registered_before: int | None,
    timeout_s: float = HEALTHY_TIMEOUT_S,
) -> dict:
    """Until the restarted broker has registered anew (a killed broker's old registration lives
    until its session expires, so the registration's epoch must change) and the cluster's metadata
    lists it. Only this broker is waited for: others may be stopped on purpose, and the status
    table shows them as they are."""
    entry = _broker_entry(state, broker_id)
    log = Path(state["dir"]) / "logs" / f"broker-{broker_id}.log"
    deadline = time.monotonic() + timeout_s
    while True:
        if not _alive(entry["pid"]):
            raise CliError(f"broker {broker_id} exited; see {log}")
        if _registration_epoch(zk, broker_id) not in (None, registered_before):
            health = cluster_health(state)
            if broker_id in health["registered"] and health["controller"] is not None:
                return health
        if time.monotonic() > deadline:
            raise CliError(
                f"broker {broker_id} did not rejoin the cluster within {timeout_s:.0f} s; see {log}"
            )
        time.sleep(0.2)  # polling ZooKeeper and the brokers' metadata; bounded by the deadline


# -- pause and resume one broker ------------------------------------------------------------------------------
#
# Jepsen's pause nemesis: a frozen process keeps its sockets and its ZooKeeper session (until the
# session times out), but answers nothing and fetches nothing, as a broker in a long garbage
# collection pause. Frozen for less than zookeeper.session.timeout.ms and replica.lag.time.max.ms,
# it is still registered and still in its partitions' ISRs when it runs again.


def _stopped(pid: int) -> bool:
    """The process is stopped by a signal (state T in /proc/<pid>/stat)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][0] == "T"
    except OSError:
        return False


def _signal_broker(args: argparse.Namespace, signum: int, stopped: bool) -> dict:
    """Send ``signum`` to the broker and wait until it is (or is no longer) stopped: a signal is
    delivered asynchronously, and whoever paused it may act at once on the pause being real."""
    _, broker = _running_broker(args)
    os.kill(broker["pid"], signum)
    deadline = time.monotonic() + 10
    while _stopped(broker["pid"]) != stopped:
        if time.monotonic() > deadline:
            raise CliError(
                f"{process_label(broker)} (pid {broker['pid']}) did not {'stop' if stopped else 'resume'}"
            )
        time.sleep(0.005)  # polling the process state; bounded by the deadline
    return broker


def run_pause(args: argparse.Namespace, console) -> int:
    broker = _signal_broker(args, signal.SIGSTOP, stopped=True)
    console.print(
        f"{process_label(broker)} (pid {broker['pid']}) paused; `kafka-lite cluster resume {args.broker} "
        f"{_where(load_state(args.dir))}` lets it run again",
        highlight=False,
        soft_wrap=True,  # a command to copy: one line, never broken
    )
    return 0


def run_resume(args: argparse.Namespace, console) -> int:
    broker = _signal_broker(args, signal.SIGCONT, stopped=False)
    console.print(f"{process_label(broker)} (pid {broker['pid']}) resumed", highlight=False)
    return 0
