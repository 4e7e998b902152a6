"""ZooKeeper for kafka_lite: Debian's ZooKeeper server, started as a child process on a loopback port.

Mirrors: what Kafka's bin/zookeeper-server-start.sh does (run QuorumPeerMain on a config file);
         Kafka's tests use an embedded ZooKeeper the same way (kafka.zk.EmbeddedZookeeper)
Book:    chapter 7 (ZooKeeper holds the cluster's state: brokers, topics, the controller)

The server is real (``org.apache.zookeeper.server.quorum.QuorumPeerMain`` from the ``zookeeper``
package's jars), with its own data directory and port, so a learner needs nothing else installed and
several clusters (or test sessions) never share state by accident. It is tied to its owner: started
with ``PR_SET_PDEATHSIG``, it gets SIGTERM when the Python process that started it dies, however it
dies.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

ZOOKEEPER_JAR_DIR = Path("/usr/share/java")
MAIN_CLASS = "org.apache.zookeeper.server.quorum.QuorumPeerMain"
_PR_SET_PDEATHSIG = 1


class ZooKeeperStartError(Exception):
    pass


def find_java() -> str:
    java = shutil.which("java")
    if java is None:
        raise ZooKeeperStartError(
            "java is not installed: ZooKeeper needs it (apt-get install openjdk-17-jre-headless, "
            "which scripts/bootstrap does)"
        )
    return java


def zookeeper_classpath() -> str:
    jar = ZOOKEEPER_JAR_DIR / "zookeeper.jar"
    if not jar.exists():
        raise ZooKeeperStartError(
            f"{jar} is missing: install Debian's ZooKeeper (apt-get install zookeeper, which scripts/bootstrap does)"
        )
    return f"{jar}:{ZOOKEEPER_JAR_DIR}/*"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_free(port: int) -> bool:
    """Whether ``port`` can be bound on loopback now (a port in TIME_WAIT counts as free, as for a server)."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _die_with_parent() -> None:  # runs in the child between fork and exec
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except OSError:
        pass


class EmbeddedZooKeeper:
    def __init__(self, data_dir: str | os.PathLike, port: int = 0, tick_time: int = 500) -> None:
        self.data_dir = Path(data_dir)
        self.requested_port = port
        self.port = port
        self.tick_time = tick_time
        self._proc: subprocess.Popen | None = None

    @property
    def connect_string(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    @property
    def log_file(self) -> Path:
        return self.data_dir / "zookeeper.log"

    # --8<-- [start:start]
    def start(self, timeout_ms: int = 30_000) -> None:
        """Write ``zoo.cfg``, start the server, and wait until it answers (or fail naming its log)."""
        java, classpath = find_java(), zookeeper_classpath()
        if self.requested_port and not port_free(self.requested_port):
            raise ZooKeeperStartError(f"port {self.requested_port} for ZooKeeper is already in use")
        self.port = self.requested_port or free_port()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        (self.data_dir / "data").mkdir(exist_ok=True)
        config = self.data_dir / "zoo.cfg"
        config.write_text(
            f"tickTime={self.tick_time}\n"
            f"dataDir={self.data_dir / 'data'}\n"
            f"clientPort={self.port}\n"
            "clientPortAddress=127.0.0.1\n"
            "admin.enableServer=false\n"  # no admin HTTP server on port 8080
            "maxSessionTimeout=60000\n"
            "4lw.commands.whitelist=ruok,srvr\n"
        )
        log4j = self.data_dir / "log4j.properties"
        log4j.write_text(
            "log4j.rootLogger=INFO, file\n"
            "log4j.appender.file=org.apache.log4j.FileAppender\n"
            f"log4j.appender.file.File={self.log_file}\n"
            "log4j.appender.file.layout=org.apache.log4j.PatternLayout\n"
            "log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n\n"
        )
        with open(self.log_file, "ab") as out:
            self._proc = subprocess.Popen(
                [java, "-Xmx256m", f"-Dlog4j.configuration=file:{log4j}", f"-Dzookeeper.log.dir={self.data_dir}",
                 "-cp", classpath, MAIN_CLASS, str(config)],
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, preexec_fn=_die_with_parent,
            )  # fmt: skip
        deadline = time.monotonic() + timeout_ms / 1000
        while not self._answers():
            if self._proc.poll() is not None:
                raise ZooKeeperStartError(
                    f"ZooKeeper exited with code {self._proc.returncode}: {self._log_tail()}"
                )
            if time.monotonic() > deadline:
                self.stop()
                raise ZooKeeperStartError(
                    f"ZooKeeper did not answer on port {self.port} within {timeout_ms} ms: {self._log_tail()}"
                )
            time.sleep(0.05)  # polling a server that is starting; bounded by the deadline

    # --8<-- [end:start]

    def _answers(self) -> bool:
        """ZooKeeper's four-letter ``ruok``: ``imok`` once it serves clients."""
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                s.sendall(b"ruok")
                return s.recv(4) == b"imok"
        except OSError:
            return False

    def _log_tail(self, lines: int = 5) -> str:
        try:
            tail = self.log_file.read_text(errors="replace").splitlines()[-lines:]
        except OSError:
            return f"(no log at {self.log_file})"
        return f"see {self.log_file}: " + " | ".join(tail)

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)

    def __enter__(self) -> EmbeddedZooKeeper:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
