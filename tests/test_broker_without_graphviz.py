"""The broker runs without graphviz: only the diagrams on top of the layers need it.

A real broker (``kafka-lite broker start``) runs in a process where ``import graphviz`` fails, and a
real client (kafka-python) talks to it: ApiVersions and Metadata, a topic created, a record
produced and fetched back, so the network, server, controller and log layers all run. A runtime
module that imported graphviz would stop the broker at start-up, and the test with it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from kafka_lite.utils.ports import free_port
from tests.support.waiting import wait_until

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[1]
HIDDEN = "graphviz is hidden by tests/test_broker_without_graphviz.py"


@pytest.fixture
def without_graphviz(tmp_path) -> dict[str, str]:
    """An environment whose ``import graphviz`` raises ImportError, as on a machine without it."""
    shadow = tmp_path / "no-graphviz"
    (shadow / "graphviz").mkdir(parents=True)
    (shadow / "graphviz" / "__init__.py").write_text(f"raise ImportError({HIDDEN!r})\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(shadow), str(ROOT)])}
    # The environment really lacks graphviz, and the diagrams (which need it) really fail in it.
    for module in ("graphviz", "kafka_lite.diagrams"):
        probe = subprocess.run(
            [sys.executable, "-c", f"import {module}"], env=env, capture_output=True, text=True, timeout=60
        )
        assert probe.returncode != 0 and HIDDEN in probe.stderr, probe.stderr
    return env


def test_a_broker_serves_clients_without_graphviz(zookeeper, tmp_path, without_graphviz):
    from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer
    from kafka.admin import NewTopic

    port = free_port()
    config = tmp_path / "server.properties"
    config.write_text(
        "\n".join(
            [
                "broker.id=0",
                f"listeners=PLAINTEXT://127.0.0.1:{port}",
                f"log.dirs={tmp_path / 'data'}",
                f"zookeeper.connect={zookeeper.connect_string}/no-graphviz-{uuid.uuid4().hex[:8]}",
                "num.network.threads=1",
                "num.io.threads=2",
                "log.cleaner.enable=false",
                "zookeeper.session.timeout.ms=6000",
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    log_file = tmp_path / "broker.log"
    with log_file.open("wb") as out:
        broker = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import sys; from kafka_lite.cli.main import main; sys.exit(main(sys.argv[1:]))",
                "broker",
                "start",
                str(config),
            ],
            env=without_graphviz,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    bootstrap = f"127.0.0.1:{port}"
    admin = producer = consumer = None
    try:

        def described():
            if broker.poll() is not None:
                return "exited"  # stop waiting: the broker is not coming up
            nonlocal admin
            admin = admin or KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=5000)
            cluster = admin.describe_cluster()  # ApiVersions on connecting, then Metadata
            return cluster if [b["broker_id"] for b in cluster["brokers"]] == [0] else None

        cluster = wait_until(described, timeout_s=60, what="the broker to list itself in Metadata")
        assert cluster != "exited", f"the broker exited ({broker.returncode}):\n{log_file.read_text()}"
        assert cluster["controller_id"] == 0
        admin.create_topics([NewTopic("plain", num_partitions=1, replication_factor=1)])
        producer = KafkaProducer(bootstrap_servers=bootstrap)
        producer.send("plain", b"no pictures needed").get(timeout=30)
        consumer = KafkaConsumer(
            "plain", bootstrap_servers=bootstrap, auto_offset_reset="earliest", consumer_timeout_ms=20_000
        )
        # the first record, or StopIteration after 20 s without one (iterating on would wait that long)
        assert next(consumer).value == b"no pictures needed"
        assert broker.poll() is None
        assert "graphviz" not in log_file.read_text()
    finally:
        for client in (consumer, producer, admin):
            if client is not None:
                client.close()
        broker.send_signal(signal.SIGTERM)
        try:
            broker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            broker.kill()
            broker.wait()
