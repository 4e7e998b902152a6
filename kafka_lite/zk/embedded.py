"""Debian's ZooKeeper server, started as a child process on a loopback port with its own data dir.

Mirrors: kafka.zk.EmbeddedZookeeper (core/src/test/scala/unit/kafka/zk/EmbeddedZookeeper.scala, Kafka 0.10.1)
Book:    chapter 7, 7.1 (ZooKeeper holds the cluster's state: brokers, topics, the controller)
Differs: Kafka's tests run ZooKeeper's server inside their own JVM; Python cannot, so this runs the real
         server (``QuorumPeerMain`` from the ``zookeeper`` package's jars, as
         ``bin/zookeeper-server-start.sh`` does) in a child JVM.

Its own data directory and port mean that a learner needs nothing else installed and that several
clusters (or test sessions) never share state by accident. It is tied to its owner: started with
``PR_SET_PDEATHSIG``, it gets SIGTERM when the thread that started it dies, however it dies (a
``kill -9`` of the Python process included), so no orphan JVM keeps a port and 100 MB of memory.
"""

from __future__ import annotations

import ctypes
import functools
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

from kafka_lite.utils.ports import free_port, port_free

ZOOKEEPER_JAR_DIR = Path("/usr/share/java")
MAIN_CLASS = "org.apache.zookeeper.server.quorum.QuorumPeerMain"
# A ZooKeeper for one machine's few clients: a small heap with the serial collector, and only the
# JVM's quick (C1) compiler, which starts the server on about a third less CPU than the optimizing
# one would spend compiling code these clients never make hot (kafka-lite starts many: one per
# cluster, notebook and test session).
JVM_OPTIONS = ("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1")
_PR_SET_PDEATHSIG = 1


class ZooKeeperStartError(Exception):
    """ZooKeeper could not be started: Java or the jars are missing, the port is taken, or the server
    did not answer in time (the message quotes the end of its log)."""


def find_java() -> str:
    """The ``java`` to run ZooKeeper with: ``$JAVA_HOME/bin/java`` (as Kafka's scripts prefer) or the PATH's."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home and os.access(Path(java_home) / "bin" / "java", os.X_OK):
        return str(Path(java_home) / "bin" / "java")
    java = shutil.which("java")
    if java is None:
        raise ZooKeeperStartError(
            "java is not installed: ZooKeeper needs it (apt-get install openjdk-17-jre-headless, "
            "which scripts/bootstrap does)"
        )
    return java


def zookeeper_classpath() -> str:
    """``zookeeper.jar``, whose manifest names its dependencies (jute, netty, slf4j-api...), plus the
    slf4j-to-log4j binding and log4j 1.2, so the server logs to its file through our log4j settings.

    Not ``/usr/share/java/*``: that directory holds every Debian Java package's jars, among them
    five slf4j bindings (slf4j-nop included) and log4j-over-slf4j; slf4j would pick one at random
    and, with slf4j-nop, the server would log nothing at all.
    """
    jar = ZOOKEEPER_JAR_DIR / "zookeeper.jar"
    if not jar.exists():
        raise ZooKeeperStartError(
            f"{jar} is missing: install Debian's ZooKeeper (apt-get install zookeeper, which scripts/bootstrap does)"
        )
    logging_jars = [ZOOKEEPER_JAR_DIR / "slf4j-log4j12.jar", ZOOKEEPER_JAR_DIR / "log4j-1.2.jar"]
    if all(j.exists() for j in logging_jars):  # both come with the zookeeper package's dependencies
        return ":".join(str(j) for j in [jar, *logging_jars])
    return str(jar)  # it still runs, without a log (slf4j falls back to no-op)


def _die_with_parent(parent_pid: int) -> None:
    """Runs in the child between fork and exec: ask the kernel for SIGTERM when the parent goes.

    SIGTERM's action is set back to the default first. An ignored signal stays ignored across exec,
    and the JVM keeps ignoring a shutdown signal it was started ignoring (as ``nohup`` relies on), so
    a parent that ignores SIGTERM, as a foreground command does once its shutdown has begun, would
    start a ZooKeeper that neither ``stop()`` nor its parent's death could end but by SIGKILL.

    If the parent died before the prctl took effect, the signal will never come: exit at once.
    Linux only; elsewhere the child simply does not follow its parent (``stop()`` still works).
    """
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent_pid:
        os._exit(1)


class EmbeddedZooKeeper:
    """One ZooKeeper server: ``start()``, ``connect_string``, ``stop()``; also a context manager.

    ``port=0`` picks a free loopback port at ``start()``; a given port that is taken is an error, not
    silently changed. ``tick_time`` is ZooKeeper's tickTime in ms; sessions may last from
    2 to 20 ticks unless ``maxSessionTimeout`` (60 s here) allows more, so 500 ms lets tests ask for
    sessions as short as 1 s.
    """

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
        if self._proc is not None and self._proc.poll() is None:
            raise ZooKeeperStartError(
                f"ZooKeeper is already running (pid {self._proc.pid}, port {self.port})"
            )
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
                [java, *JVM_OPTIONS, f"-Dlog4j.configuration=file:{log4j}", f"-Dzookeeper.log.dir={self.data_dir}",
                 "-cp", classpath, MAIN_CLASS, str(config)],
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                preexec_fn=functools.partial(_die_with_parent, os.getpid()),
            )  # fmt: skip
        deadline = time.monotonic() + timeout_ms / 1000
        # Ready means both: the port answers ``ruok`` with ``imok``, and a real client gets a session.
        while not (self._answers() and self._client_connects(deadline)):
            if self._proc.poll() is not None:
                code, self._proc = self._proc.returncode, None
                raise ZooKeeperStartError(
                    f"ZooKeeper exited with code {code} on port {self.port}: {self._log_tail()}"
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

    def _client_connects(self, deadline: float) -> bool:
        """A kazoo session can be opened (the server has loaded its database and serves clients)."""
        from kazoo.client import (
            KazooClient,
        )  # imported here: the CLI imports this module without kazoo's cost

        client = KazooClient(hosts=self.connect_string, timeout=10)
        try:
            client.start(timeout=max(0.1, min(5.0, deadline - time.monotonic())))
            return True
        except Exception:
            return False
        finally:
            client.stop()
            client.close()

    def _log_tail(self, lines: int = 5) -> str:
        try:
            tail = self.log_file.read_text(errors="replace").splitlines()[-lines:]
        except OSError:
            return f"(no log at {self.log_file})"
        return f"see {self.log_file}: " + " | ".join(tail)

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after 5 s; returns once the process is gone. Safe to call twice."""
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

    def __repr__(self) -> str:
        state = f"pid {self.pid}" if self._proc else "stopped"
        return f"EmbeddedZooKeeper({self.connect_string}, {state}, data_dir={str(self.data_dir)!r})"
