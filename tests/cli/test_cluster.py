"""``kafka-lite cluster up | status | down``, ``topics`` and ``demo``: real processes on free ports."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys

import pytest

from kafka_lite.cli.main import main
from kafka_lite.utils.ports import free_port
from kafka_lite.zk.zk_utils import ZkUtils
from tests.support.processes import alive, base_port
from tests.support.waiting import wait_until

pytestmark = pytest.mark.integration


def test_up_status_topics_down_leave_no_process(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    d = tmp_path / "state"
    zk_port, base = free_port(), base_port()
    args = ["--dir", str(d)]
    up = [
        "cluster",
        "up",
        "--detach",
        "--brokers",
        "3",
        "--zookeeper-port",
        str(zk_port),
        "--base-port",
        str(base),
        # the request metrics reporter creates its topic a moment after start, which would change the
        # partitions counted below between the describe and the status
        "--no-metrics-reporter",
    ]
    started = main([*up, *args])
    try:  # from here on, whatever fails, the cluster is taken down
        assert started == 0
        out = capsys.readouterr().out
        seconds = float(re.search(r"healthy in ([\d.]+) s", out).group(1))
        assert seconds < 15, "a healthy 3-broker cluster within 15 seconds"
        assert out.count("registered") == 3 and "(controller)" in out
        state = json.loads((d / "cluster.json").read_text())
        pids = [b["pid"] for b in state["brokers"]] + [state["zookeeper"]["pid"]]
        assert main(["cluster", "status", *args]) == 0
        bootstrap = f"127.0.0.1:{base}"

        def create(partitions: str, replication: str) -> int:
            return main(["topics", "--bootstrap-server", bootstrap, "--create", "--topic", "cli",
                         "--partitions", partitions, "--replication-factor", replication])  # fmt: skip

        assert create("3", "2") == 0
        capsys.readouterr()

        def listed() -> bool:  # every broker learns of the topic from the controller, a moment apart
            capsys.readouterr()
            assert main(["topics", "--bootstrap-server", bootstrap, "--list"]) == 0
            return "cli" in capsys.readouterr().out.split()

        wait_until(listed, what="the new topic in the --list output")
        assert main(["topics", "--bootstrap-server", bootstrap, "--describe", "--topic", "cli"]) == 0
        described = capsys.readouterr().out
        assert len(re.findall(r"│ cli\s+│ \d", described)) == 3
        # the status counts each broker's leaderships: every partition of the cluster has one leader
        assert main(["topics", "--bootstrap-server", bootstrap, "--describe"]) == 0
        partitions = len(re.findall(r"^│ \S+\s+│ \d+\s+│ \d", capsys.readouterr().out, re.M))
        assert main(["cluster", "status", *args]) == 0
        status = capsys.readouterr().out
        leads = re.findall(r"│ broker \d .*│ (\d+) partitions? +│", status)
        assert len(leads) == 3 and sum(map(int, leads)) == partitions >= 3, (leads, partitions)
        # below the processes, each partition's leader, replicas and ISR (two replicas each, all in sync)
        rows = re.findall(r"^│ cli\s+│ (\d)\s+│ (\d)\s+│ (\d,\d)\s+│ (\d,\d)\s+│", status, re.M)
        assert sorted(int(r[0]) for r in rows) == [0, 1, 2], status
        assert all(
            r[1] in r[2].split(",") and sorted(r[3].split(",")) == sorted(r[2].split(",")) for r in rows
        )
        assert create("1", "1") == 1
        assert "already exists" in capsys.readouterr().err
        assert main(["cluster", "up", "--detach", "--zookeeper-port", str(free_port()), *args]) == 1
        assert "already running" in capsys.readouterr().err
        # a learner's cluster deletes topics (delete.topic.enable=true in every broker's config)
        assert main(["topics", "--bootstrap-server", bootstrap, "--create", "--topic", "gone",
                     "--partitions", "1", "--replication-factor", "1"]) == 0  # fmt: skip
        assert main(["topics", "--bootstrap-server", bootstrap, "--delete", "--topic", "gone"]) == 0
        assert "Topic gone is deleted." in capsys.readouterr().out
        # a crash and a restart: the killed broker is gone from the cluster, then back with its data
        killed = state["brokers"][2]["pid"]
        assert main(["cluster", "kill", "2", *args]) == 0
        assert not alive(killed)
        capsys.readouterr()
        zk = ZkUtils(f"127.0.0.1:{state['zookeeper']['port']}")
        try:
            registered_before = zk.get_broker(2) is not None
            assert main(["cluster", "status", *args]) == 1
            registered_after = zk.get_broker(2) is not None
        finally:
            zk.close()
        row = next(line for line in capsys.readouterr().out.splitlines() if "broker 2" in line)
        # until ZooKeeper expires the killed broker's session (6 s), its registration stays: said, not
        # hidden; the status ran well inside those seconds, with the registration there before and after
        assert registered_before and registered_after, "the killed broker's session outlived the status"
        still = r"stopped, still registered( \(controller\))? until its ZooKeeper session expires"
        assert re.search(still, row), row
        # two brokers down: restarting one waits for that one only, and the table shows the other
        assert main(["cluster", "kill", "1", *args]) == 0
        capsys.readouterr()
        assert main(["cluster", "restart", "1", *args]) == 0
        rows = {
            n: line for line in capsys.readouterr().out.splitlines() for n in (1, 2) if f"broker {n}" in line
        }
        assert "registered" in rows[1] and "stopped" not in rows[1], rows[1]
        assert "stopped" in rows[2], rows[2]
        assert main(["cluster", "restart", "2", *args]) == 0
        assert main(["cluster", "status", *args]) == 0
        state = json.loads((d / "cluster.json").read_text())
        pids = [b["pid"] for b in state["brokers"]] + [state["zookeeper"]["pid"]]
        assert main(["cluster", "kill", "9", *args]) == 2
    finally:
        downed = main(["cluster", "down", *args])
    assert downed == 0
    assert not [p for p in pids if alive(p)], "cluster down leaves no process behind"
    assert not [p for p in _java_children() if str(d) in p], "no ZooKeeper JVM either"
    assert main(["cluster", "status", *args]) == 1
    assert "no cluster" in capsys.readouterr().err


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_foreground_cluster_stops_on_sigterm_and_sighup_as_on_ctrl_c(tmp_path, sig):
    """``kill`` (or a closed terminal) on a foreground ``cluster up`` takes the whole cluster down: the
    brokers and ZooKeeper run in sessions of their own, so nothing else would stop them."""
    d = tmp_path / "state"
    command = [sys.executable, "-m", "kafka_lite.cli.main", "cluster", "up", "--dir", str(d), "--brokers", "1",
               "--zookeeper-port", str(free_port()), "--base-port", str(base_port()), "--no-metrics-reporter"]  # fmt: skip
    out = tmp_path / "up.out"
    with open(out, "wb") as sink:
        up = subprocess.Popen(
            command, stdout=sink, stderr=subprocess.STDOUT, env={**os.environ, "COLUMNS": "200"}
        )
    try:
        wait_until(lambda: b"stops the cluster" in out.read_bytes(), timeout_s=60, what="the cluster healthy")
        state = json.loads((d / "cluster.json").read_text())
        pids = [b["pid"] for b in state["brokers"]] + [state["zookeeper"]["pid"]]
        assert all(alive(p) for p in pids)
        up.send_signal(sig)
        assert up.wait(timeout=60) == 0, out.read_text()
    finally:  # whatever failed, nothing is left running
        if up.poll() is None:
            up.kill()
            up.wait()
        if (d / "cluster.json").exists():
            main(["cluster", "down", "--dir", str(d)])
    assert not [p for p in pids if alive(p)], "the signal stopped the brokers and ZooKeeper too"
    assert not (d / "cluster.json").exists()


def _java_children() -> list[str]:
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    found.append(f.read().replace(b"\0", b" ").decode(errors="replace"))
            except OSError:
                continue
    return [c for c in found if "QuorumPeerMain" in c]


def test_a_taken_port_is_reported_not_changed(tmp_path, capsys):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        taken = s.getsockname()[1]
        code = main(
            [
                "cluster",
                "up",
                "--detach",
                "--dir",
                str(tmp_path),
                "--zookeeper-port",
                str(free_port()),
                "--base-port",
                str(taken),
                "--brokers",
                "1",
            ]
        )
    assert code == 2
    assert f"port {taken} for broker 0 is already in use" in capsys.readouterr().err


def test_broker_start_reports_a_bad_config_in_one_line(tmp_path, capsys):
    config = tmp_path / "server.properties"
    config.write_text("broker.id=0\nzookeeper.connect=127.0.0.1:1\nnum.io.threads=zero\n")
    assert main(["broker", "start", str(config)]) == 2
    err = capsys.readouterr().err
    assert "num.io.threads" in err and "Traceback" not in err
    assert main(["broker", "start", str(tmp_path / "missing.properties")]) == 2
    assert "does not exist" in capsys.readouterr().err
    # The message is printed as it is: brackets in it are text, not the terminal's markup.
    config.write_text("broker.id=0\nzookeeper.connect=zk:port\n")
    assert main(["broker", "start", str(config)]) == 2
    err = capsys.readouterr().err
    assert "zookeeper.connect: expected host:port[,host:port...][/chroot]" in err, err


def _lab_cluster_serves(tmp_path, name: str, solved: frozenset[str]) -> bool:
    """Start a one-broker cluster on a lab 4 workspace (the regions named in ``solved`` hold the
    reference's code, the rest the starter's stubs) and ask it for metadata with confluent-kafka.
    True if it answered; False if the request timed out. The cluster is torn down either way."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    from kafka_lite.grading.labs import REPO_ROOT, find
    from kafka_lite.grading.starter import write_starter

    lab = find(4)
    workspace_root = tmp_path / f"{name}-labs"
    write_starter(lab, REPO_ROOT, workspace_root / lab.slug, solved=solved)
    d, base = tmp_path / f"{name}-state", base_port()
    args = ["--dir", str(d)]
    # A processor that never hands a request over leaves the broker's own ControlledShutdown request
    # (sent to itself, the controller) unanswered too: one attempt of 2 s, not three of 30 s, before
    # `cluster down` sees it stop without one.
    quick_shutdown = ["--override", "controller.socket.timeout.ms=2000",
                      "--override", "controlled.shutdown.max.retries=1"]  # fmt: skip
    up = ["cluster", "up", "--detach", "--brokers", "1", "--zookeeper-port", str(free_port()),
          "--base-port", str(base), "--lab", "4", "--lab-dir", str(workspace_root), *quick_shutdown,
          *args]  # fmt: skip
    assert main(up) == 0
    state = json.loads((d / "cluster.json").read_text())
    try:
        assert state["lab"]["number"] == 4
        overlay_file = os.path.join(state["lab"]["overlay"], "kafka_lite", "network", "socket_server.py")
        with open(overlay_file, encoding="utf-8") as f:
            assert f.read() == (workspace_root / lab.slug / lab.files[0]).read_text(encoding="utf-8")
        with open(f"/proc/{state['brokers'][0]['pid']}/environ", "rb") as f:
            environ = f.read().split(b"\0")
        assert any(e.startswith(b"PYTHONPATH=" + state["lab"]["overlay"].encode()) for e in environ)
        # healthy as ZooKeeper sees it (registered, a controller), whether or not the processor answers
        assert main(["cluster", "status", *args]) == 0
        admin = AdminClient({"bootstrap.servers": f"127.0.0.1:{base}", "socket.timeout.ms": 3000})
        try:
            metadata = admin.list_topics(timeout=8)
        except KafkaException:
            return False
        return list(metadata.brokers) == [0]
    finally:
        assert main(["cluster", "down", *args]) == 0
        assert not [p for p in [state["brokers"][0]["pid"], state["zookeeper"]["pid"]] if alive(p)]


def test_cluster_up_with_lab_runs_the_workspaces_processor(tmp_path, capsys, monkeypatch):
    """`cluster up --lab 4` runs the brokers on the learner's socket_server.py: with the starter's
    hand-over (which raises instead of handing the request over) a real client's request goes
    unanswered; with the reference's it is served."""
    monkeypatch.setenv("COLUMNS", "200")
    both = frozenset({"Processor.process_completed_receives", "Processor.process_completed_sends"})
    assert _lab_cluster_serves(tmp_path, "reference", both), "the reference workspace serves Metadata"
    assert "brokers run lab 4's files from" in capsys.readouterr().out
    assert not _lab_cluster_serves(tmp_path, "starter", frozenset()), (
        "a processor that never hands a request over must leave the client waiting"
    )


def test_cluster_up_with_lab_needs_a_workspace(tmp_path, capsys):
    code = main(["cluster", "up", "--detach", "--dir", str(tmp_path / "state"), "--lab", "4",
                 "--lab-dir", str(tmp_path / "nothing"), "--zookeeper-port", str(free_port()),
                 "--base-port", str(base_port())])  # fmt: skip
    assert code == 2
    assert f"run `kafka-lite lab start 4 --dir {tmp_path / 'nothing'}` first" in capsys.readouterr().err
    assert main(["cluster", "up", "--detach", "--dir", str(tmp_path / "state"), "--lab", "99"]) == 2
    assert "there is no lab 99" in capsys.readouterr().err
