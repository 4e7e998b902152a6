"""Proving the checker: a bug planted in the brokers, and the Jepsen run that must catch it.

Each case breaks one of Kafka's rules in the broker processes (``planted/sitecustomize.py``: a
method patched by pytest's ``MonkeyPatch`` as the process starts; kafka_lite has no switch for it)
and runs short Jepsen runs on the package's ZooKeeper-mode cluster (``conftest.py``), seed 1, 2, ...
until one's result holds a class the bug must show, within the case's number of seeds. Three cases
replace the nemesis's schedule with one fault scripted on the cluster's state (``ScriptedCut`` and
its two subclasses): a fault struck on a clock misses its moment on a loaded machine.

The module's fixture restarts each node once with the planted module (this process's environment
names it: a restarted node inherits it, as does a node the nemesis kills and restarts); a case puts
its bug in force by naming it in the bug file, and takes it out again after each run, restarting
any replica the bug left out of an ISR (``restore_whole``). The module comes after the
run's test (``test_run.py``), which checks the clean cluster valid; the nodes keep the planted
module, no bug in force, until the stop test (``test_stop.py``) ends the cluster.
"""

from __future__ import annotations

import json
import os
import pprint
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from kafka_lite.cli import cluster as launcher
from kafka_lite.cli.main import main
from kafka_lite.common.time import wait_until
from kafka_lite.jepsen import nemesis
from kafka_lite.jepsen.fault_proxy import CLIENTS
from kafka_lite.jepsen.nemesis import STEP_TIMEOUT_S, ZOOKEEPER, Nemesis
from kafka_lite.jepsen.run import RunConfig, run
from kafka_lite.jepsen.workload import WorkloadConfig
from kafka_lite.server.replica_manager import FetchMetadata
from tests.jepsen.conftest import KEEP_HISTORIES, ZOOKEEPER_MODE
from tests.jepsen.planted.sitecustomize import BUG_FILE_VARIABLE, BUGS, BugFile, plant_all

PLANTED = Path(__file__).parent / "planted"

# ZooKeeper mode only (``conftest.py``'s ``ZOOKEEPER_MODE``): the planted code is the brokers', and
# a KRaft node's is the same.


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
    script: type[ScriptedCut] | None = None  # the one fault struck, in place of the nemesis's schedule
    keys: int = 4  # the workload's keys active at a time
    partitions: int = 6  # the topic's, every key there can be


# How long a cut leader serves alone once its partitions have moved (and a leader elected again by
# ``ScriptedReturn`` leads before the script ends).
HOLD_S = 3.0


class ScriptedCut(Nemesis):
    """One fault, struck when the cluster's state calls for it rather than on a clock: the leader of
    the run's last partition cut from ZooKeeper alone. (The generator draws its last key slot's key
    for half its operations; with as many partitions as keys, no key is ever retired, and that key
    is the last partition's.) Its session expires and the controller moves the partition to a
    follower, which stops copying from it; but it hears of this only when it reaches ZooKeeper
    again, and meanwhile the clients still reach it. Once ZooKeeper names another leader, the cut
    is held ``HOLD_S`` while the workload writes, then healed. ``stop`` waits for the script to end."""

    shape_name = "cut-from-zookeeper"

    def cut(self, node: int) -> set[frozenset]:
        return {frozenset((node, ZOOKEEPER))}

    def _run(self) -> None:
        try:
            if not self._wait(self.interval_s):
                self._script()
        except BaseException as e:  # reported by stop(), as the schedule's own errors are
            self.error = e

    def _script(self) -> None:
        topic, partition, node = self._target()
        self._cut_until_moved(topic, partition, node)
        self.time.sleep(int(HOLD_S * 1000))  # the workload writes; the cut node still leads in its own eyes
        self._heal_now()
        self.faults_done += 1

    def _target(self) -> tuple[str, int, int]:
        """The run's last partition and its leader."""
        c = self.cluster
        topic = list(c.topics)[-1]  # the run's own: the last created on the shared cluster
        partition = c.topics[topic] - 1
        return topic, partition, c.leader_of(topic, partition)

    def _cut_until_moved(self, topic: str, partition: int, node: int) -> None:
        c = self.cluster
        cut = self.cut(node)
        value = {"shape": self.shape_name, "cut": nemesis._pairs_value(cut)}
        self._record("partition", value, lambda: c.partition(cut))
        self._heal = lambda: self._record("heal", value, c.heal)
        wait_until(
            lambda: c.leader_of(topic, partition) not in (None, node),
            f"the controller to move {topic}-{partition} from node {node}",
            STEP_TIMEOUT_S,
            time=self.time,
        )


class ScriptedIsolation(ScriptedCut):
    """The same script, the leader cut from ZooKeeper and from the other brokers, while the clients
    still reach it: its followers stop copying at the cut, so that everything it appends from then on
    stays above its high watermark, and its consumers go on fetching from it until the cut heals
    (nothing tells them it has stopped leading)."""

    shape_name = "cut-from-the-cluster"

    def cut(self, node: int) -> set[frozenset]:
        return nemesis.cut_between([{node}, (set(self.cluster.node_ids) - {node}) | {ZOOKEEPER}])


class ScriptedReturn(ScriptedIsolation):
    """The isolation, then the cut node made the partition's leader again. Once ZooKeeper names
    another leader, the cut node is cut from the clients too, so that its log stops growing, and the
    cut is held until the new leader's log is longer: a follower whose log ran past its leader's
    could neither fetch nor (with unclean election off) truncate, and would stop. Healed, and once
    the node is back in the ISR, a preferred replica election for the partition, asked for as an
    operator asks for one (``kafka-lite preferred-replica-election``); the run's topic is new, so the
    node that led it first, the one cut, is its first replica, the preferred one. What it serves from
    then on is the log it rejoined with: the records it appended alone under the cut, which the new
    leader never had, are gone if it truncated to where its epoch ends in the new leader's log
    (KIP-101), and are still there, below everything it copied since, if it did not."""

    shape_name = "cut-from-the-cluster, then elected again"

    def _script(self) -> None:
        c = self.cluster
        topic, partition, node = self._target()
        self._cut_until_moved(topic, partition, node)
        alone = {frozenset((node, CLIENTS))}
        self._record("partition", {"shape": "cut-from-the-clients", "cut": nemesis._pairs_value(alone)},
                     lambda: c.partition(alone))  # fmt: skip
        ahead = c.log_end_offset(node, topic, partition)
        wait_until(lambda: (c.log_end_offset(c.leader_of(topic, partition), topic, partition) or 0) > ahead,
                   f"the new leader of {topic}-{partition} past offset {ahead}, node {node}'s log end",
                   STEP_TIMEOUT_S, time=self.time)  # fmt: skip
        self._heal_now()
        self.faults_done += 1
        wait_until(lambda: node in c.leader_and_isr(topic, partition)[1],
                   f"node {node} back in the ISR of {topic}-{partition}", STEP_TIMEOUT_S, time=self.time)  # fmt: skip
        value = {"topic": topic, "partition": partition, "preferred": node}
        self._record("elect-preferred", value, lambda: self._elect_preferred(topic, partition))
        wait_until(lambda: c.leader_of(topic, partition) == node,
                   f"node {node} to lead {topic}-{partition} again", STEP_TIMEOUT_S, time=self.time)  # fmt: skip
        self.time.sleep(int(HOLD_S * 1000))  # the workload reads and writes where it leads

    def _elect_preferred(self, topic: str, partition: int) -> None:
        wanted = self.cluster.directory / f"elect-{topic}-{partition}.json"
        wanted.write_text(json.dumps({"partitions": [{"topic": topic, "partition": partition}]}))
        zookeeper = launcher.zookeeper_connect(self.cluster.state)
        code = main(
            ["preferred-replica-election", "--zookeeper", zookeeper, "--path-to-json-file", str(wanted)]
        )
        if code != 0:
            raise RuntimeError(f"preferred-replica-election for {topic}-{partition} exited with {code}")


CASES = [
    # The leader cut from the cluster, then elected again (``ScriptedReturn``): a follower that kept
    # what it appended alone serves it as leader, at offsets where the new leader acknowledged other
    # records. Eight processes at 400 operations a second, so that the new leader takes sends from
    # processes that never reached the old one before the old one's blocked sends are retried: the
    # two logs then differ at the same offsets (retries alone mostly arrive in the old order). Caught
    # in about two seeds of three on a quiet machine, and in one to three under the suite's load: ten
    # seeds, so that a run misses it by chance about once in a hundred at worst.
    Case(
        "no-epoch-truncation",
        frozenset({"inconsistent-offsets", "lost-write"}),
        10,
        seconds=20,
        final_limit_s=10.0,
        script=ScriptedReturn,
        keys=3,
        partitions=3,
        processes=8,
        rate=400.0,
    ),
    # The leader cut from the cluster while the clients reach it (``ScriptedIsolation``): its
    # consumers read what it appended alone, which it truncates once it rejoins. As many processes
    # and as fast as the case above, so that some poll while others' sends are blocked on it. As
    # often caught per seed as the case above, and given as many seeds.
    Case(
        "fetch-past-hw",
        frozenset({"inconsistent-offsets", "lost-write"}),
        10,
        seconds=12,
        final_limit_s=10.0,
        script=ScriptedIsolation,
        keys=3,
        partitions=3,
        processes=8,
        rate=400.0,
    ),
    # Consumers take their keys sooner, so that they poll while transactions are open; six processes
    # on two keys, so that open transactions read each other's writes (G1c as well).
    Case(
        "read-committed-ignores-lso",
        frozenset({"G1a", "precommitted-read", "G1c"}),
        2,
        txn=True,
        seconds=8,
        sub_p=0.25,
        processes=6,
        rate=150.0,
        keys=2,
        partitions=2,
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
    # retried. Many processes, so that some have a send in flight as the kill lands; a kill that lands
    # between two sends leaves nothing to retry, and a loaded machine missed three seeds in a row once.
    Case("sequence-check-off", frozenset({"duplicate"}), 6, frozenset({"kill"}), processes=8, rate=400.0),
    # The leader cut from ZooKeeper (``ScriptedCut``). A correct one acknowledges nothing it appends
    # once its followers have stopped copying (acks=all waits for the whole ISR); this one
    # acknowledges its own appends, and loses them when it rejoins and truncates: lost writes, their
    # offsets given to other records; or, when the key is not written up to those offsets again
    # before the run ends, acknowledged offsets the final phase never reaches (unseen).
    Case(
        "acks-before-isr",
        frozenset({"lost-write", "inconsistent-offsets", "unseen"}),
        2,
        seconds=12,
        final_limit_s=10.0,
        script=ScriptedCut,
        keys=3,
        partitions=3,
    ),
]


def planted_in(pid: int) -> str | None:
    """The bug file the process ``pid`` was started with (the variable in its environment), or None."""
    environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    values = dict(entry.decode(errors="replace").partition("=")[::2] for entry in environ if entry)
    return values.get(BUG_FILE_VARIABLE)


def restart_unless_planted(cluster, bug_file: BugFile) -> None:
    """Restart every node not started with ``bug_file``, under this process's environment, then
    wait until the cluster is whole."""
    for node in cluster.node_ids:
        if planted_in(cluster.node(node)["pid"]) != str(bug_file.path):
            cluster.restart(node)
    cluster.wait_whole()


def restore_whole(cluster, bug_file: BugFile) -> None:
    """Take the bug out of force, and bring back any replica it left stopped. A planted follower
    that kept records its leader never had can end up ahead of its leader's log: it can then
    neither fetch nor (with unclean election off) truncate, and kafka_lite stops fetching that
    partition (Kafka halts the broker). Restarted with no bug in force, it truncates to where its
    epoch ends in its leader's log (KIP-101) and catches up, and the next seed or case starts
    from a whole cluster."""
    bug_file.write("")
    behind = {
        node
        for topic, partitions in cluster.topics.items()
        for partition in range(partitions)
        for node in set(cluster.node_ids) - set(cluster.leader_and_isr(topic, partition)[1])
    }
    for node in sorted(behind):
        cluster.restart(node)
    cluster.wait_whole()


@pytest.fixture(scope="module")
def bug_file(faulty_cluster, tmp_path_factory):
    """Every node of the cluster restarted with the planted module, no bug in force."""
    bug_file = BugFile(tmp_path_factory.mktemp("planted") / "bug")
    bug_file.write("")
    with pytest.MonkeyPatch.context() as environment:
        path = os.pathsep.join(filter(None, [str(PLANTED), os.environ.get("PYTHONPATH")]))
        environment.setenv("PYTHONPATH", path)
        environment.setenv(BUG_FILE_VARIABLE, str(bug_file.path))
        restart_unless_planted(faulty_cluster, bug_file)
        yield bug_file


@ZOOKEEPER_MODE
@pytest.mark.parametrize("case", CASES, ids=[case.bug for case in CASES])
def test_the_checker_catches_a_planted_bug(faulty_cluster, bug_file, case, tmp_path, monkeypatch):
    found: dict[int, list[str]] = {}
    if case.script is not None:
        monkeypatch.setattr(nemesis, "Nemesis", case.script)  # the run builds its nemesis from the module
    try:
        for seed in range(1, case.seeds + 1):
            bug_file.write(case.bug)
            topic = f"planted-{case.bug}-{seed}"
            workload = WorkloadConfig(txn=case.txn, topic=topic, key_count=case.keys, partitions=case.partitions,
                                      rate=case.rate, sub_p=case.sub_p)  # fmt: skip
            faults = frozenset({"partition"}) if case.script else case.faults  # a nemesis, then the script's
            config = RunConfig(mode="zookeeper", faults=faults, seconds=case.seconds, seed=seed, txn=case.txn,
                               directory=tmp_path / topic, processes=case.processes, workload=workload,
                               final_limit_s=case.final_limit_s, nemesis_interval_s=1.0, topic=topic)  # fmt: skip
            result = run(config, cluster=faulty_cluster).result
            found[seed] = result["error_types"]
            restore_whole(faulty_cluster, bug_file)
            if case.shows & set(result["bad_error_types"]):
                break
    finally:
        bug_file.write("")
    if os.environ.get(KEEP_HISTORIES):
        shutil.copyfile(
            tmp_path / topic / "history.jsonl", Path(os.environ[KEEP_HISTORIES]) / f"{case.bug}.jsonl"
        )
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


@pytest.mark.unit
def test_chapter_13s_table_is_the_cases():
    """The guide's table of planted bugs lists each case with the seeds it is caught within."""
    guide = (Path(__file__).parents[2] / "chapters/ch13_jepsen/index.md").read_text(encoding="utf-8")
    rows = {}
    for line in guide.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[0].startswith("`") and cells[0].strip("`") in BUGS:
            rows[cells[0].strip("`")] = int(cells[4])
    assert rows == {case.bug: case.seeds for case in CASES}
