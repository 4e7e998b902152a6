"""``kafka-lite cluster pause | resume``: a broker frozen with SIGSTOP and let run again with SIGCONT,
on a real one-broker cluster."""

from __future__ import annotations

import json

import pytest

from kafka_lite.cli.main import main
from kafka_lite.clients.admin import KafkaAdminClient
from kafka_lite.common.errors import KafkaException
from tests.support.processes import cluster_up

pytestmark = pytest.mark.integration


def _state_letter(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][0]
    except OSError:
        return None


def _answers(port: int, timeout_ms: int) -> bool:
    """Whether the broker answers a metadata request within ``timeout_ms``."""
    admin = KafkaAdminClient(f"127.0.0.1:{port}", request_timeout_ms=timeout_ms)
    try:
        return admin.describe_cluster().controller is not None
    except KafkaException:
        return False
    finally:
        admin.close()


def test_a_paused_broker_keeps_its_socket_answers_nothing_and_runs_again_on_resume(tmp_path, capsys):
    d = tmp_path / "state"
    args = ["--dir", str(d)]
    _, base = cluster_up(["--brokers", "1", *args], [])
    try:
        pid = json.loads((d / "cluster.json").read_text())["brokers"][0]["pid"]
        assert _answers(base, 5000), "the running broker answers"

        assert main(["cluster", "pause", "0", *args]) == 0
        assert _state_letter(pid) == "T", "pause returns once the broker is stopped"
        assert "paused" in capsys.readouterr().out
        # The kernel still accepts the connection (the listening socket is open), but nobody reads it.
        assert not _answers(base, 1000), "a paused broker answers nothing"

        assert main(["cluster", "resume", "0", *args]) == 0
        assert _state_letter(pid) not in ("T", None), "resume returns once the broker runs again"
        assert _answers(base, 5000), "the resumed broker answers again"

        assert main(["cluster", "pause", "7", *args]) == 2  # no such broker
        assert main(["cluster", "pause", "0", *args]) == 0
    finally:
        main(["cluster", "down", *args])
    # down lets a paused broker run again, so that it can handle the SIGTERM and shut down cleanly
    assert _state_letter(pid) in (None, "Z"), (
        "down leaves no process, paused or not (Z: exited, our unreaped child)"
    )
