"""A short run in each mode with kills and pauses, on the package's cluster of that mode
(``conftest.py``; kafka_lite's clients against the ZooKeeper cluster, librdkafka's against the KRaft
one): the checker's verdict valid, every acknowledged send read back at its offset in the final
phase, both faults struck and healed (a killed node restarted as a new process, each fault held
past the timeouts). The run's test comes after the nemesis's tests of its mode, and before the
planted bugs' (``test_run_with_planted_bugs.py``), whose brokers keep their planted module until
the stop test (``test_stop.py``) ends the shared cluster."""

from __future__ import annotations

import pprint
import threading

import pytest

from kafka_lite.jepsen.history import NEMESIS, pairs, read_history
from kafka_lite.jepsen.run import RunConfig, run
from kafka_lite.jepsen.workload import WorkloadConfig

# Of workload: a few hundred operations, a key or two rotated, a crash or two. The nemesis strikes
# NEMESIS_INTERVAL_S after each healing and holds a fault under 4 s (the conftest's settings): seed
# 7's pauses a node other than the controller at about 2 s, resumes it, then kills the controller
# at about 8 s and restarts it, both held to their end within the run.
SECONDS = 16
NEMESIS_INTERVAL_S = 2.0
SEED = 7
# The final phase reads everything back within a round or two; a run whose reads never reach the
# offsets acknowledged gives up after this, and the test then says which were not read.
FINAL_LIMIT_S = 30
HEALED_BY = {"kill": "restart", "pause": "resume"}


def test_a_short_run_with_kills_and_pauses_is_valid(faulty_cluster, tmp_path):
    faulty = faulty_cluster
    mode, client = ("kraft", "confluent") if faulty.kraft else ("zookeeper", "kafka_lite")
    pids = {n: faulty.node(n)["pid"] for n in faulty.node_ids}
    phases: list[str] = []
    config = RunConfig(mode=mode, client=client, faults=frozenset({"kill", "pause"}), seconds=SECONDS,
                       seed=SEED, directory=tmp_path, processes=3, final_limit_s=FINAL_LIMIT_S,
                       nemesis_interval_s=NEMESIS_INTERVAL_S)  # fmt: skip
    result = run(config, progress=lambda phase, fraction: phases.append(phase), cluster=faulty)
    assert list(dict.fromkeys(phases)) == ["cluster", "workload", "final", "check"]
    assert result.result["valid"], pprint.pformat(result.result, sort_dicts=False)

    history = read_history(result.history_path)
    client_ops = [op for op in history if op.process != NEMESIS]
    assert result.ops == sum(op.is_invoke for op in client_ops) >= 30
    assert all(completion is not None for _, completion in pairs(client_ops))
    acknowledged, read = {}, {}
    for op in client_ops:
        if op.is_ok:
            for mop in op.mops():
                if mop[0] == "send":
                    acknowledged[(mop[1], mop[2][1])] = mop[2][0]
                else:
                    read.update({(k, v): o for k, records in mop[1].items() for o, v in records})
    assert acknowledged and {kv: read.get(kv) for kv in acknowledged} == acknowledged
    assert not [t for t in threading.enumerate() if t.name.startswith("jepsen-worker")]

    # The faults: each struck, healed on the same node, and held past the timeouts (but the last,
    # which the run's end may cut short); the cluster serves again.
    actions = [(invocation, completion) for invocation, completion in pairs(history)
               if invocation.process == NEMESIS and invocation.f != "whole"]  # fmt: skip
    assert all(c is not None and c.is_ok for _, c in actions), actions
    struck = [i for i, (invocation, _) in enumerate(actions) if invocation.f in HEALED_BY]
    assert {actions[i][0].f for i in struck} == {"kill", "pause"}, [inv.f for inv, _ in actions]
    assert result.faults == len(struck)
    for n, i in enumerate(struck):
        (fault, done), (heal, _) = actions[i], actions[i + 1]
        assert (heal.f, heal.value["nodes"]) == (HEALED_BY[fault.f], fault.value["nodes"])
        if n < len(struck) - 1:
            assert (heal.time - done.time) / 1e9 >= faulty.hold_s(), (fault, heal)
    killed = {actions[i][0].value["nodes"][0] for i in struck if actions[i][0].f == "kill"}
    assert all(faulty.node(n)["pid"] != pids[n] for n in killed)  # killed, then restarted
    # Serving again: every node's metadata names each partition's leader. A broker hears of the last
    # election in an UpdateMetadata of its own, which may come a moment after the run has ended.
    faulty.wait_whole(isr=False)


@pytest.mark.unit
def test_bad_run_settings_are_named(tmp_path):
    with pytest.raises(ValueError, match="mode must be one of zookeeper, kraft, not 'raft'"):
        RunConfig(mode="raft", directory=tmp_path)
    with pytest.raises(ValueError, match=r"unknown faults \['flood'\]"):
        RunConfig(faults=frozenset({"flood", "kill"}), directory=tmp_path)
    with pytest.raises(ValueError, match="processes must be at least 1"):
        RunConfig(processes=0, directory=tmp_path)
    with pytest.raises(ValueError, match="nemesis_interval_s must be at least 0, not -1"):
        RunConfig(nemesis_interval_s=-1, directory=tmp_path)
    with pytest.raises(
        ValueError, match="the workload's topic 'planted bugs': Topic name \"planted bugs\" is illegal"
    ):
        RunConfig(topic="planted bugs", directory=tmp_path)
    with pytest.raises(
        ValueError, match="the workload's topic '__consumer_offsets' is one of the brokers' own"
    ):
        RunConfig(topic="__consumer_offsets", directory=tmp_path)
    with pytest.raises(
        ValueError, match="the workload's txn, client, topic and transaction version must be the run's"
    ):
        RunConfig(topic="planted", workload=WorkloadConfig(), directory=tmp_path)
    with pytest.raises(
        ValueError, match="the workload's txn, client, topic and transaction version must be the run's"
    ):
        RunConfig(kip_890=True, workload=WorkloadConfig(), directory=tmp_path)  # a producer without part 2
    with pytest.raises(ValueError, match="the cluster given is not a kraft mode cluster"):
        run(RunConfig(mode="kraft", directory=tmp_path), cluster=FakeCluster())


class FakeCluster:
    """Stands in for the run's cluster: remembers the topic and the group, and whether it was stopped."""

    def __init__(self) -> None:
        self.topics: dict[str, int] = {}
        self.groups: set[str] = set()
        self.stopped = False
        self.kraft = False
        self.bootstrap_servers = "fake:9092"

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.stopped = True

    def create_topic(self, topic, partitions, replication_factor=3, configs=None) -> None:
        self.topics[topic] = partitions


@pytest.mark.unit
def test_an_interrupted_run_closes_every_client_stops_the_cluster_and_leaves_its_history(
    tmp_path, monkeypatch
):
    from kafka_lite.jepsen import run as run_module
    from tests.jepsen.fake_client import FakeClient, Log

    cluster, log, opened = FakeCluster(), Log(), []

    def factory(workload, servers, time, reader=False):
        def open_client(process):
            opened.append(FakeClient(log, process))
            return opened[-1]

        return open_client

    def progress(phase, fraction):
        if phase == "workload" and len(log.partitions) > 0:
            raise KeyboardInterrupt  # Ctrl-C while the workers run

    monkeypatch.setattr(run_module, "_cluster", lambda config, time: cluster)
    monkeypatch.setattr(run_module, "client_factory", factory)
    with pytest.raises(KeyboardInterrupt):
        run(RunConfig(seconds=60, directory=tmp_path, processes=2), progress=progress)
    assert cluster.stopped and cluster.topics == {"jepsen": 48} and cluster.groups == {"jepsen-group"}
    assert opened and all(client.closed for client in opened)
    assert not [t for t in threading.enumerate() if t.name.startswith("jepsen-worker")]
    history = read_history(tmp_path / "history.jsonl")
    assert history and all(completion is not None for _, completion in pairs(history))
