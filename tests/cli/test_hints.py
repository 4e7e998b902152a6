"""Every command a kafka-lite command prints as a hint is itself a command that works: each test
brings about the situation a hint is printed in, takes the hint out of the output (a hint is
printed between backquotes, on one line), runs it, and checks that it does what the hint says.

The cluster's hints need a cluster started by ``kafka-lite cluster up`` (its state directory is what
they name); the others run on the session's cluster."""

from __future__ import annotations

import re
import shlex

import pytest

from kafka_lite.cli.main import main
from kafka_lite.utils.ports import free_port
from tests.support.processes import base_port
from tests.support.topics import topic_name
from tests.support.waiting import wait_until

pytestmark = pytest.mark.integration

HINT = re.compile(r"`(kafka-lite [^`]+)`")


def hints(text: str) -> list[str]:
    return HINT.findall(text)


def run(capsys, hint: str, *extra: str) -> tuple[int, str, str]:
    """Run ``hint`` as a shell would split it (plus ``extra``); its exit code, stdout and stderr."""
    argv = shlex.split(hint)
    assert argv[0] == "kafka-lite", hint
    capsys.readouterr()
    code = main([*argv[1:], *extra])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_cluster_commands_hints_run(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # the tables' cells whole, for the checks below
    d = tmp_path / "state"
    assert main(["cluster", "status", "--dir", str(d)]) == 1
    (up,) = hints(capsys.readouterr().err)
    assert up == f"kafka-lite cluster up --dir {d}"
    # The options a test adds: free ports, and --detach (the hint's cluster runs until Ctrl-C).
    code, out, _ = run(capsys, up, "--detach", "--brokers", "2", "--zookeeper-port", str(free_port()),
                       "--base-port", str(base_port(2)), "--no-metrics-reporter")  # fmt: skip
    try:
        assert code == 0 and "healthy in" in out
        bootstrap = re.search(r"bootstrap servers: (\S+)", out).group(1)
        # More partitions than the status lists: the hint lists them all.
        assert main(["topics", "--bootstrap-server", bootstrap, "--create", "--topic", "wide",
                     "--partitions", "22", "--replication-factor", "2"]) == 0  # fmt: skip

        def status_hints() -> list[str]:
            capsys.readouterr()
            main(["cluster", "status", "--dir", str(d)])
            return hints(capsys.readouterr().out)

        listed = wait_until(
            status_hints, what="the status's hint for the partitions it leaves out", interval_s=0.2
        )
        code, out, _ = run(capsys, listed[0])
        assert code == 0 and len(re.findall(r"^│ wide\s+│ \d+", out, re.M)) == 22, out

        assert main(["cluster", "pause", "1", "--dir", str(d)]) == 0
        (resume,) = hints(capsys.readouterr().out)
        code, out, _ = run(capsys, resume)
        assert code == 0 and "broker 1" in out and "resumed" in out, out

        def under_replicated() -> str | None:
            return next((h for h in status_hints() if "--under-replicated-partitions" in h), None)

        # A controlled shutdown moves a leadership only to a replica in the ISR (book 7.4); a pause
        # that outlasted replica.lag.time.max.ms or the ZooKeeper session on a loaded machine leaves
        # broker 1 out of some ISRs, or broker 0 out of those broker 1 leads, until it catches up.
        wait_until(lambda: under_replicated() is None, what="every partition back in sync after the pause",
                   interval_s=0.2)  # fmt: skip
        # A controlled shutdown takes broker 1 out of every ISR: the status names those partitions.
        assert main(["cluster", "shutdown", "1", "--dir", str(d)]) == 0
        (restart,) = hints(capsys.readouterr().out)

        # The hint comes with the first partition out of its ISR; the controller takes broker 1 out
        # of each partition's ISR in turn, so the hint's listing is waited on until it names all 22.
        last = {"hint": None, "output": ""}

        def every_partition_listed() -> str | None:
            last["hint"] = hint = under_replicated()
            if hint is None:
                return None
            code, out, err = run(capsys, hint)
            last["output"] = out + err
            rows = re.findall(r"^│ wide\s+│ \d+\s+│ 0\s+│ \d,\d\s+│ 0\s+│", out, re.M)
            return out if code == 0 and len(rows) == 22 else None

        try:
            # The controller shrinks the 22 ISRs one ZooKeeper write at a time: a loaded machine has
            # taken over 15 s. Bounded by the controlled shutdown's own limit: the broker's
            # controlled.shutdown.max.retries (3) times controller.socket.timeout.ms (30 s).
            wait_until(every_partition_listed, what="the under-replicated partitions' hint listing all 22",
                       interval_s=0.2, timeout_s=90)  # fmt: skip
        except AssertionError as e:
            raise AssertionError(f"{e}; the last hint {last['hint']!r} printed:\n{last['output']}") from None
        code, out, _ = run(capsys, restart)
        assert code == 0 and re.search(r"│ broker 1 .*registered", out), out

        assert main(["cluster", "kill", "1", "--dir", str(d)]) == 0
        (status,) = hints(capsys.readouterr().out)
        code, out, _ = run(capsys, status)
        # status's exit code says whether the cluster is healthy: with a broker killed, it is not
        assert code == 1 and re.search(r"│ broker 1 .*stopped", out), out

        assert main(["cluster", "up", "--detach", "--dir", str(d), "--zookeeper-port", str(free_port())]) == 1
        (down,) = hints(capsys.readouterr().err)
        assert down == f"kafka-lite cluster down --dir {d}"
        code, out, _ = run(capsys, down)
        assert code == 0 and "stopped" in out
    finally:
        main(["cluster", "down", "--dir", str(d)])


@pytest.mark.xdist_group("cluster")
def test_the_streams_and_topics_hints_run(cluster, capsys):
    bootstrap, topic = cluster.bootstrap_servers, topic_name("wordcount-input")
    code = main(["streams", "wordcount", "--bootstrap-server", bootstrap, "--input-topic", topic])
    (create,) = hints(capsys.readouterr().err)
    assert code == 1
    code, out, _ = run(capsys, create)
    assert (code, out) == (0, f'Created topic "{topic}".\n')

    code = main(["topics", "--bootstrap-server", bootstrap, "--alter", "--topic", topic,
                 "--partitions", "4", "--config", "retention.ms=3600000", "--config", "cleanup.policy=compact"])  # fmt: skip
    (configs,) = hints(capsys.readouterr().err)
    assert code == 2
    code, _, err = run(capsys, configs)
    assert code == 0, err
    code, out, _ = run(capsys, f"kafka-lite configs --bootstrap-server {bootstrap} --entity-type topics "
                               f"--entity-name {topic} --describe")  # fmt: skip
    assert (
        code == 0
        and re.search(r"retention\.ms\s+│ 3600000 ", out)
        and re.search(r"cleanup\.policy\s+│ compact ", out)
    ), out
