"""``kafka-lite cluster up --name NAME``: a second cluster beside the first, on the first's ZooKeeper
under a chroot of its own, with its own ports and state directory."""

from __future__ import annotations

import json
import socket

import pytest

from kafka_lite.cli.main import main
from kafka_lite.utils.ports import free_port
from kafka_lite.zk.zk_utils import ZkUtils
from tests.support.processes import alive, base_port


@pytest.mark.integration
def test_a_named_cluster_runs_beside_the_first_on_its_zookeeper(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    d = tmp_path / "state"
    first, named = ["--dir", str(d)], ["--dir", str(d), "--name", "target"]
    one = ["cluster", "up", "--detach", "--brokers", "1", "--no-metrics-reporter"]
    zk_port = free_port()
    assert main([*one, "--zookeeper-port", str(zk_port), "--base-port", str(base_port(1)), *first]) == 0
    pids: list[int] = []
    try:
        assert main([*one, "--base-port", str(base_port(1)), *named]) == 0
        assert "kafka_lite cluster 'target'" in capsys.readouterr().out
        a = json.loads((d / "cluster.json").read_text())
        b = json.loads((tmp_path / "state-target" / "cluster.json").read_text())
        pids = [a["brokers"][0]["pid"], b["brokers"][0]["pid"], a["zookeeper"]["pid"]]
        # One ZooKeeper (the first cluster's), two brokers on two ports, each cluster in its own chroot.
        assert b["zookeeper"] == {**a["zookeeper"], "shared_with": str(d.resolve()), "chroot": "/target"}
        assert a["brokers"][0]["port"] != b["brokers"][0]["port"]
        assert main(["cluster", "status", *first]) == 0
        assert main(["cluster", "status", *named]) == 0
        zk = ZkUtils(f"127.0.0.1:{zk_port}")
        try:
            assert zk.get_all_broker_ids() == [0]  # the first cluster's broker 0, at the root
            assert zk.client.get_children("/target/brokers/ids") == ["0"]  # the named cluster's own broker 0
        finally:
            zk.close()
        # The first cluster's down would take the named cluster's ZooKeeper with it: refused.
        capsys.readouterr()
        assert main(["cluster", "down", *first]) == 1
        assert "kafka-lite cluster down --dir" in capsys.readouterr().err and alive(a["zookeeper"]["pid"])
        # The named cluster's down stops its broker, not the ZooKeeper it shares.
        assert main(["cluster", "down", *named]) == 0
        assert not alive(b["brokers"][0]["pid"]) and alive(a["zookeeper"]["pid"])
        assert main(["cluster", "status", *first]) == 0
    finally:
        main(["cluster", "down", *named])
        downed = main(["cluster", "down", *first])
    assert downed == 0
    assert pids and not [p for p in pids if alive(p)], "no process left behind"


def test_a_bad_name_and_a_taken_port_are_reported(tmp_path, capsys):
    up = ["cluster", "up", "--detach", "--dir", str(tmp_path / "state"), "--brokers", "1"]
    assert main([*up, "--name", "../elsewhere"]) == 2
    assert "--name '../elsewhere': a cluster name is" in capsys.readouterr().err
    assert main(["cluster", "status", "--dir", str(tmp_path), "--name", "a b"]) == 2
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        taken = s.getsockname()[1]
        code = main(
            [*up, "--name", "target", "--zookeeper-port", str(free_port()), "--base-port", str(taken)]
        )
    assert code == 2
    assert (
        f"port {taken} for broker 0 is already in use (choose others with --base-port)"
        in capsys.readouterr().err
    )
    assert not (tmp_path / "state-target" / "cluster.json").exists()
