"""The ZooKeeper launcher: a real server that starts, answers, stops, and never outlives its owner."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from kazoo.client import KazooClient

from kafka_lite.zk import embedded
from kafka_lite.zk.embedded import EmbeddedZooKeeper, ZooKeeperStartError, find_java, zookeeper_classpath
from tests.support.waiting import wait_until

REPO = Path(__file__).resolve().parents[2]


def started_at(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (/proc/PID/stat's 22nd field), None if gone:
    with the pid, it names one process, where a pid alone may be a new process's on a busy machine."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except OSError:
        return None


def process_gone(pid: int, started: str | None = None) -> bool:
    """No such process, or only a zombie waiting for a parent (in a container, PID 1 may never reap),
    or (given ``started``) another process that has since been given the same pid."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True
    return "State:\tZ" in status or (started is not None and started_at(pid) != started)


# -- without a server -----------------------------------------------------------------------------------------


def test_missing_java_names_the_package(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv("JAVA_HOME", raising=False)
    with pytest.raises(ZooKeeperStartError, match="openjdk-17-jre-headless"):
        find_java()


def test_missing_jars_name_the_package(monkeypatch, tmp_path):
    monkeypatch.setattr(embedded, "ZOOKEEPER_JAR_DIR", tmp_path)
    with pytest.raises(ZooKeeperStartError, match="apt-get install zookeeper"):
        zookeeper_classpath()


def test_classpath_is_the_jar_and_one_logging_binding():
    assert zookeeper_classpath() == (
        "/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-log4j12.jar:/usr/share/java/log4j-1.2.jar"
    )


# -- with a server of the test's own ------------------------------------------------------------------------


@pytest.mark.integration
def test_starts_answers_and_stops_without_leftovers(tmp_path):
    zk = EmbeddedZooKeeper(tmp_path / "zk")
    zk.start()
    pid = zk.pid
    assert zk.connect_string == f"127.0.0.1:{zk.port}" and zk.port > 0
    with socket.create_connection(("127.0.0.1", zk.port), timeout=5) as s:
        s.sendall(b"ruok")
        assert s.recv(4) == b"imok"
    client = KazooClient(zk.connect_string)
    client.start(timeout=10)
    client.create("/hello", b"world")
    assert client.get("/hello")[0] == b"world"
    client.stop()
    client.close()

    config = (tmp_path / "zk" / "zoo.cfg").read_text()
    for line in (
        "tickTime=500",
        f"clientPort={zk.port}",
        "clientPortAddress=127.0.0.1",
        "admin.enableServer=false",
        "maxSessionTimeout=60000",
    ):
        assert line in config.splitlines()
    log = zk.log_file.read_text()
    assert f"clientPortAddress is 127.0.0.1:{zk.port}" in log, "the server logs to its file"
    assert "No appenders" not in log and "SLF4J" not in log

    zk.stop()
    assert process_gone(pid)
    assert zk.pid is None
    zk.stop()  # idempotent
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", zk.port), timeout=1).close()


@pytest.mark.integration
def test_context_manager_and_a_fixed_port(tmp_path):
    port = embedded.free_port()
    with EmbeddedZooKeeper(tmp_path / "zk", port=port) as zk:
        assert zk.port == port and zk.connect_string == f"127.0.0.1:{port}"
        pid = zk.pid
        with pytest.raises(ZooKeeperStartError, match="already running"):
            zk.start()
    assert process_gone(pid)


@pytest.mark.integration
def test_a_taken_port_is_reported_not_changed(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        zk = EmbeddedZooKeeper(tmp_path / "zk", port=port)
        with pytest.raises(ZooKeeperStartError, match=f"port {port} for ZooKeeper is already in use"):
            zk.start()
        assert zk.pid is None, "no process was started"


@pytest.mark.integration
def test_a_server_that_exits_is_reported_with_its_log(tmp_path, monkeypatch):
    """A class that does not exist makes the JVM exit at once: the error quotes the log's last lines."""
    monkeypatch.setattr(embedded, "MAIN_CLASS", "org.example.NoSuchMain")
    zk = EmbeddedZooKeeper(tmp_path / "zk")
    with pytest.raises(ZooKeeperStartError, match=r"exited with code 1 .*NoSuchMain") as info:
        zk.start(timeout_ms=30_000)
    assert str(zk.log_file) in str(info.value)
    assert zk.pid is None


@pytest.mark.integration
def test_a_killed_owner_takes_zookeeper_with_it(tmp_path):
    """PR_SET_PDEATHSIG: SIGKILL the Python process that started ZooKeeper; the JVM goes too. The owner
    ignores SIGTERM, as a foreground command does once its shutdown has begun, and the JVM must not
    inherit that (it would then ignore the SIGTERM its owner's death sends)."""
    owner = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import signal, sys\n"
            "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
            "from kafka_lite.zk.embedded import EmbeddedZooKeeper\n"
            f"zk = EmbeddedZooKeeper({str(tmp_path / 'zk')!r})\n"
            "zk.start()\n"
            "print(zk.pid, zk.port, flush=True)\n"
            "sys.stdin.read()\n",  # block until killed
        ],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        pid, port = map(int, owner.stdout.readline().split())
        started = started_at(pid)
        assert not process_gone(pid, started)
        os.kill(owner.pid, signal.SIGKILL)
        owner.wait(10)
        # SIGTERM reaches the JVM at once; its shutdown can take a while on a loaded machine
        wait_until(
            lambda: process_gone(pid, started),
            timeout_s=40,
            what=f"ZooKeeper (pid {pid}) to die with its owner",
        )
        wait_until(lambda: embedded.port_free(port), timeout_s=10, what=f"port {port} to be released")
    finally:
        owner.kill()
        owner.wait(10)
