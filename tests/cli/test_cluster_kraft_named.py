"""``kafka-lite cluster up --kraft --name NAME``: a second KRaft cluster beside the first, with its own
state directory, ports, cluster id and quorum, and no ZooKeeper; and chapter 8's MirrorMaker, a
``kafka-lite mirror-maker`` process, copying every record between two KRaft clusters, from a
ZooKeeper cluster into a named KRaft one, and from a KRaft cluster into a named ZooKeeper one, which
then starts a ZooKeeper of its own (the first has none to share). A named KRaft cluster never holds
up the first cluster's ``down``: it uses no ZooKeeper of the first's."""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

import pytest

from kafka_lite import KafkaProducer
from kafka_lite.cli.main import main
from kafka_lite.utils.ports import free_port
from tests.support.processes import alive, base_port, cluster_up, terminate
from tests.support.topics import read_topic, topic_name
from tests.support.waiting import wait_until
from tests.tools.mirror_maker.test_mirror_maker_clusters import start_mirror_maker

pytestmark = pytest.mark.integration

# One broker per cluster: its group coordinator's topic on that broker alone, two partitions of it,
# and a group that starts at once (no initial rebalance delay) with the mirror maker's short
# sessions allowed (``start_mirror_maker``'s consumers ask for 2 s), so that it copies soon.
OVERRIDES = [
    "offsets.topic.replication.factor=1",
    "offsets.topic.num.partitions=2",
    "group.initial.rebalance.delay.ms=0",
    "group.min.session.timeout.ms=1000",
    "num.network.threads=1",
    "num.io.threads=2",
]
# A KRaft node's broker session as test_cluster_kraft.py's QUICK has it: a killed node's old
# registration, which its restart waits out, lapses within 2 s rather than Kafka's 9.
KRAFT_OVERRIDES = ["broker.session.timeout.ms=2000", "broker.heartbeat.interval.ms=250"]
RECORDS = 100


def _up(directory: Path, *flags: str) -> dict:
    """``cluster up --detach`` of one broker (one combined node with ``--kraft``) on a free port, new
    ones if it was taken meanwhile; the cluster's state as ``cluster.json`` has it."""
    for _ in range(3):
        args = ["cluster", "up", "--detach", "--dir", str(directory), "--brokers", "1", "--base-port",
                str(base_port(1)), "--no-metrics-reporter", *flags]  # fmt: skip
        overrides = OVERRIDES + (KRAFT_OVERRIDES if "--kraft" in flags else [])
        if main(args + [a for o in overrides for a in ("--override", o)]) == 0:
            return _state(directory, *flags)
    pytest.fail(f"kafka-lite cluster up {' '.join(flags)} failed three times on fresh ports (see stderr)")


def _state(directory: Path, *flags: str) -> dict:
    name = flags[flags.index("--name") + 1] if "--name" in flags else None
    where = directory if name is None else directory.with_name(f"{directory.name}-{name}")
    return json.loads((where / "cluster.json").read_text())


def _pids(state: dict) -> list[int]:
    zookeeper = state.get("zookeeper")
    return [n["pid"] for n in state["brokers"]] + ([zookeeper["pid"]] if zookeeper else [])


@contextmanager
def _downed_at_the_end(directory: Path, started: list[dict]):
    """``cluster down`` of every cluster ``started`` holds (named ones first), whatever the test did
    meanwhile; then no process of theirs may be left."""
    try:
        yield
    finally:
        for state in reversed(started):
            name = ["--name", state["name"]] if state.get("name") else []
            main(["cluster", "down", "--dir", str(directory), *name])
        left = [p for state in started for p in _pids(state) if alive(p)]
        assert started and not left, f"processes left behind: {left}"


def _bootstrap(state: dict) -> str:
    return f"127.0.0.1:{state['brokers'][0]['port']}"


def _mirror_every_record(source: str, target: str, tmp_path: Path) -> None:
    """A topic on both clusters, ``RECORDS`` keyed records written to the source, and
    ``kafka-lite mirror-maker`` running until the target has them: every one, each once."""
    topic = topic_name("mirrored")
    for bootstrap in (source, target):
        assert main(["topics", "--bootstrap-server", bootstrap, "--create", "--topic", topic,
                     "--partitions", "2", "--replication-factor", "1"]) == 0  # fmt: skip
    values = [f"v{i}".encode() for i in range(RECORDS)]
    with KafkaProducer(bootstrap_servers=source, acks="all") as producer:
        for i, value in enumerate(values):
            producer.send(topic, value, f"k{i % 7}".encode())
        producer.flush()
    process = start_mirror_maker(tmp_path, SimpleNamespace(bootstrap_servers=source),
                                 SimpleNamespace(bootstrap_servers=target), topic_name("mirror"), topic, 1)  # fmt: skip
    try:
        wait_until(lambda: process.poll() is not None or len(read_topic(target, topic)) >= RECORDS, 30,
                   f"{RECORDS} records on the target")  # fmt: skip
        assert process.poll() is None, (tmp_path / "mirror-maker-1.log").read_text()
    finally:
        terminate(process)
    assert sorted(r.value for r in read_topic(target, topic)) == sorted(values)


def test_mirror_maker_copies_every_record_from_a_kraft_cluster_into_a_named_kraft_cluster(
    tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv("COLUMNS", "200")
    directory, started = tmp_path / "state", []
    with _downed_at_the_end(directory, started):
        started.append(first := _up(directory, "--kraft"))
        started.append(named := _up(directory, "--kraft", "--name", "target"))
        # Its own directory, ports, cluster id and quorum; no ZooKeeper.
        assert (named["dir"], named["name"]) == (str((tmp_path / "state-target").resolve()), "target")
        assert "zookeeper" not in named and named["kraft"]["cluster_id"] != first["kraft"]["cluster_id"]
        [a], [b] = first["brokers"], named["brokers"]
        assert len({a["port"], a["controller_port"], b["port"], b["controller_port"]}) == 4
        capsys.readouterr()
        assert main(["cluster", "status", "--dir", str(directory), "--name", "target"]) == 0
        assert "kafka_lite KRaft cluster 'target' in" in capsys.readouterr().out

        _mirror_every_record(_bootstrap(first), _bootstrap(named), tmp_path)

        # Each action on the named cluster acts on it alone.
        assert main(["cluster", "kill", "0", "--dir", str(directory), "--name", "target"]) == 0
        assert not alive(b["pid"]) and alive(a["pid"])
        assert main(["cluster", "restart", "0", "--dir", str(directory), "--name", "target"]) == 0
        started.append(_state(directory, "--name", "target"))  # the restarted node's pid, to stop
        assert main(["cluster", "status", "--dir", str(directory)]) == 0


def test_mirror_maker_copies_from_a_zookeeper_cluster_into_a_named_kraft_cluster_beside_it(tmp_path, capsys):
    directory, started = tmp_path / "state", []
    with _downed_at_the_end(directory, started):
        cluster_up(["--dir", str(directory), "--brokers", "1"], OVERRIDES)
        started.append(first := _state(directory))
        started.append(named := _up(directory, "--kraft", "--name", "kraft"))
        assert "zookeeper" not in named

        _mirror_every_record(_bootstrap(first), _bootstrap(named), tmp_path)

        # The first cluster's down stops its ZooKeeper: no named KRaft cluster runs on it.
        assert main(["cluster", "down", "--dir", str(directory)]) == 0
        assert not alive(first["zookeeper"]["pid"]) and alive(named["brokers"][0]["pid"])
        assert main(["cluster", "status", "--dir", str(directory), "--name", "kraft"]) == 0


def test_mirror_maker_copies_from_a_kraft_cluster_into_a_named_zookeeper_cluster_with_its_own_zookeeper(
    tmp_path,
):
    directory, started = tmp_path / "state", []
    with _downed_at_the_end(directory, started):
        started.append(first := _up(directory, "--kraft"))
        zk_port = free_port()
        started.append(named := _up(directory, "--name", "zk", "--zookeeper-port", str(zk_port)))
        # A KRaft cluster has no ZooKeeper to share: the named one started its own, under its chroot.
        assert named["zookeeper"] == {"pid": named["zookeeper"]["pid"], "port": zk_port, "chroot": "/zk"}

        _mirror_every_record(_bootstrap(first), _bootstrap(named), tmp_path)
