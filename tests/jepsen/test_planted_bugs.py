"""Proving the checker: a bug planted in the brokers, and the Jepsen run that must catch it.

Each case breaks one of Kafka's rules in the broker processes (``planted/sitecustomize.py``: a
method patched by pytest's ``MonkeyPatch`` as the process starts; kafka_lite has no switch for it)
and runs short Jepsen runs on the package's ZooKeeper-mode cluster (``conftest.py``), seed 1, 2, ...
until one's result holds a class the bug must show, within the case's number of seeds.

The module's fixture restarts each node once with the planted module (this process's environment
names it: a restarted node inherits it, as does a node the nemesis kills and restarts); a case puts
its bug in force by naming it in the bug file, and takes it out again. At the end the fixture
restarts every node without the planted module, before the run's test (``test_run.py``) checks the
cluster valid and stops it.
"""

from __future__ import annotations

import os
import pprint
from dataclasses import dataclass
from pathlib import Path

import pytest

from kafka_lite.jepsen.run import RunConfig, run
from kafka_lite.jepsen.workload import WorkloadConfig
from kafka_lite.server.replica_manager import FetchMetadata
from tests.jepsen.planted.sitecustomize import BUG_FILE_VARIABLE, BugFile, plant_all

PLANTED = Path(__file__).parent / "planted"

# ZooKeeper mode only: the planted code is the brokers', and a KRaft node's is the same. The
# package's cluster of that mode, with its marks (``conftest.py``).
ZOOKEEPER_MODE = pytest.mark.parametrize(
    "faulty_cluster",
    [pytest.param(False, id="zookeeper", marks=[pytest.mark.integration, pytest.mark.xdist_group("jepsen_zookeeper")])],
    indirect=True,
)  # fmt: skip


@dataclass(frozen=True)
class Case:
    bug: str
    shows: frozenset[str]  # the classes that catch it: any one of them in a run's result
    seeds: int  # caught within this many seeds
    faults: frozenset[str] = frozenset()
    txn: bool = False
    seconds: float = 6.0
    processes: int = 4
    rate: float = 100.0  # the workload's operations a second
    sub_p: float = 1 / 64  # the workload's chance of an assign or subscribe before an operation
    final_limit_s: float = 30.0  # as the run's test: a healthy cluster's final phase ends well within it


CASES = [
    # Consumers take their keys sooner, so that they poll while transactions are open.
    Case(
        "read-committed-ignores-lso",
        frozenset({"G1a", "precommitted-read"}),
        2,
        txn=True,
        seconds=5,
        sub_p=0.25,
    ),
    # A partition left with an open transaction holds every read_committed consumer at its LSO for
    # good, so the final phase never reads it to its end: unseen, once the final phase has had a
    # healthy cluster's time several times over.
    Case(
        "marker-missing",
        frozenset({"G1a", "lost-write", "unseen"}),
        2,
        txn=True,
        seconds=5,
        final_limit_s=10.0,
    ),
    # A kill holds acks=all sends past their request timeout until the ISR shrinks: they are
    # retried. Many processes, so that some have a send in flight as the kill lands.
    Case("sequence-check-off", frozenset({"duplicate"}), 3, frozenset({"kill"}), processes=8, rate=400.0),
]


def planted_in(pid: int) -> str | None:
    """The bug file the process ``pid`` was started with (the variable in its environment), or None."""
    environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    values = dict(entry.decode(errors="replace").partition("=")[::2] for entry in environ if entry)
    return values.get(BUG_FILE_VARIABLE)


def restart_unless_planted(cluster, bug_file: BugFile | None) -> None:
    """Restart every node not started with ``bug_file`` (None: with none), under this process's
    environment, then wait until the cluster is whole."""
    wanted = None if bug_file is None else str(bug_file.path)
    for node in cluster.node_ids:
        if planted_in(cluster.node(node)["pid"]) != wanted:
            cluster.restart(node)
    cluster.wait_whole()


@pytest.fixture(scope="module")
def bug_file(faulty_cluster, tmp_path_factory):
    """Every node of the cluster restarted with the planted module, no bug in force; at the end,
    every node restarted without it."""
    bug_file = BugFile(tmp_path_factory.mktemp("planted") / "bug")
    bug_file.write("")
    with pytest.MonkeyPatch.context() as environment:
        path = os.pathsep.join(filter(None, [str(PLANTED), os.environ.get("PYTHONPATH")]))
        environment.setenv("PYTHONPATH", path)
        environment.setenv(BUG_FILE_VARIABLE, str(bug_file.path))
        restart_unless_planted(faulty_cluster, bug_file)
        yield bug_file
    restart_unless_planted(faulty_cluster, None)


@ZOOKEEPER_MODE
@pytest.mark.parametrize("case", CASES, ids=[case.bug for case in CASES])
def test_the_checker_catches_a_planted_bug(faulty_cluster, bug_file, case, tmp_path):
    found: dict[int, list[str]] = {}
    bug_file.write(case.bug)
    try:
        for seed in range(1, case.seeds + 1):
            topic = f"planted-{case.bug}-{seed}"
            workload = WorkloadConfig(txn=case.txn, topic=topic, key_count=4, partitions=6, rate=case.rate,
                                      sub_p=case.sub_p)  # fmt: skip
            config = RunConfig(mode="zookeeper", faults=case.faults, seconds=case.seconds, seed=seed, txn=case.txn,
                               directory=tmp_path / topic, processes=case.processes, workload=workload,
                               final_limit_s=case.final_limit_s, nemesis_interval_s=1.0, topic=topic)  # fmt: skip
            result = run(config, cluster=faulty_cluster).result
            found[seed] = result["error_types"]
            if case.shows & set(result["bad_error_types"]):
                break
    finally:
        bug_file.write("")
    assert case.shows & set(found[seed]), (
        f"{case.bug} not caught in {case.seeds} seeds: the classes found, by seed: {found}\n"
        f"the last result: {pprint.pformat(result, sort_dicts=False)}"
    )


@pytest.mark.unit
def test_a_planted_method_is_kafka_lites_own_but_while_the_bug_file_names_its_bug(tmp_path):
    bug_file = BugFile(tmp_path / "bug")
    consumers = FetchMetadata(min_bytes=1, max_bytes=1024, replica_id=-1, partitions={})
    patch = plant_all(bug_file)
    try:
        assert consumers.fetch_only_committed  # no file yet
        bug_file.write("fetch-past-hw")
        assert not consumers.fetch_only_committed
        bug_file.write("acks-before-isr")
        assert consumers.fetch_only_committed
        with pytest.raises(
            ValueError, match="no planted bug 'acks-after-lunch': the planted bugs are acks-before-isr, "
        ):
            bug_file.write("acks-after-lunch")
        bug_file.path.write_text("acks-after-lunch")  # written by hand: the brokers refuse it too
        with pytest.raises(
            ValueError, match="names no planted bug: 'acks-after-lunch'; the planted bugs are "
        ):
            consumers.fetch_only_committed  # noqa: B018
    finally:
        patch.undo()
    assert consumers.fetch_only_committed
