"""A short run in each mode, against a cluster the run starts (kafka_lite's clients against the
ZooKeeper cluster, librdkafka's against the KRaft one): the workload's operations all completed,
every acknowledged send read back at its offset in the final phase, and the checker's verdict
(once the checker is there) valid. Each mode runs in an xdist group of its own, with the
faults' tests of the same mode, so that no other cluster's processes share its worker."""

from __future__ import annotations

import importlib.util
import threading

import pytest

from kafka_lite.jepsen.history import pairs, read_history
from kafka_lite.jepsen.run import RunConfig, run

SECONDS = 5  # of workload: a few hundred operations, a key or two rotated, a crash or two
# The final phase reads everything back within a round or two; a run whose reads never reach the
# offsets acknowledged gives up after this, and the test then says which were not read.
FINAL_LIMIT_S = 30


def check_run(directory, mode: str, client: str) -> None:
    phases: list[str] = []
    config = RunConfig(mode=mode, client=client, seconds=SECONDS, seed=1, directory=directory, processes=3,
                       final_limit_s=FINAL_LIMIT_S)  # fmt: skip
    result = run(config,
                 progress=lambda phase, fraction: phases.append(phase))  # fmt: skip
    assert list(dict.fromkeys(phases)) == ["cluster", "workload", "final", "check"]
    history = read_history(result.history_path)
    client_ops = [op for op in history if op.process != "nemesis"]
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
    if importlib.util.find_spec("kafka_lite.jepsen.checker") is not None:
        assert result.result["valid"], result.result
    assert not [t for t in threading.enumerate() if t.name.startswith("jepsen-worker")]


@pytest.mark.integration
@pytest.mark.xdist_group("jepsen_zookeeper")
def test_a_short_run_in_zookeeper_mode_reads_back_every_acknowledged_send(tmp_path):
    check_run(tmp_path, "zookeeper", client="kafka_lite")


@pytest.mark.integration
@pytest.mark.xdist_group("jepsen_kraft")
def test_a_short_run_in_kraft_mode_with_librdkafkas_client_reads_back_every_acknowledged_send(tmp_path):
    check_run(tmp_path, "kraft", client="confluent")


@pytest.mark.unit
def test_bad_run_settings_are_named(tmp_path):
    with pytest.raises(ValueError, match="mode must be one of zookeeper, kraft, not 'raft'"):
        RunConfig(mode="raft", directory=tmp_path)
    with pytest.raises(ValueError, match=r"unknown faults \['flood'\]"):
        RunConfig(faults=frozenset({"flood", "kill"}), directory=tmp_path)
    with pytest.raises(ValueError, match="processes must be at least 1"):
        RunConfig(processes=0, directory=tmp_path)


class FakeCluster:
    """Stands in for the run's cluster: remembers the topic, and whether it was stopped."""

    def __init__(self) -> None:
        self.topics: dict[str, int] = {}
        self.stopped = False
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
    assert cluster.stopped and cluster.topics == {"jepsen": 48}
    assert opened and all(client.closed for client in opened)
    assert not [t for t in threading.enumerate() if t.name.startswith("jepsen-worker")]
    history = read_history(tmp_path / "history.jsonl")
    assert history and all(completion is not None for _, completion in pairs(history))
