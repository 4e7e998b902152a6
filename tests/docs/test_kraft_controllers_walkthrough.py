"""Chapter 12's controllers as processes, run as the page writes them, twice: the page's
``node-1.properties`` and its ``node-2`` and ``node-3`` (the same with their own id, port and
directory, as its "and node-2, node-3" asks), each formatted and started with the page's commands,
then ``metadata-quorum describe --status`` until the quorum answers, and the page's ``dump-log`` of
node 1's metadata log. The second round runs the same commands on the same directories, as a reader
trying again does: ``format`` refuses the formatted directories in one line, and the nodes start on
them and elect again.

Two things change: ``/tmp/kraft`` becomes a directory of the test's, and the ports 9093-9095 free
ones."""

from __future__ import annotations

import re
import signal
import subprocess
from pathlib import Path

import pytest

from kafka_lite.utils.ports import free_ports
from tests.support.processes import terminate
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "chapters" / "ch12_kraft" / "kraft_brokers.md"
PAGE_PORTS = ("9093", "9094", "9095")
KAFKA_LITE = str(ROOT / ".venv" / "bin" / "kafka-lite")


def page_blocks() -> tuple[str, list[str], str]:
    """The controller-only node's properties, the commands that format and start it and ask the
    quorum, and the dump-log command of "Reading the metadata log"."""
    text = PAGE.read_text(encoding="utf-8")
    section = text.split("\n## The controller as a process\n", 1)[1].split("\n## ", 1)[0]
    properties = re.search(r"```properties\n(.*?)```", section, re.S)[1]
    commands = [line for line in re.search(r"```sh\n(.*?)```", section, re.S)[1].splitlines() if line]
    reading = text.split("\n## Reading the metadata log\n", 1)[1].split("\n## ", 1)[0]
    dump = re.search(r"```sh\n(.*?)```", reading, re.S)[1].strip()
    return properties, commands, dump


def test_the_controller_processes_run_as_written_twice(tmp_path):
    properties, commands, dump = page_blocks()
    port = free_ports(3)
    here = {"/tmp/kraft": str(tmp_path / "kraft"), "kafka-lite ": f"{KAFKA_LITE} "}
    here.update({page: str(port + i) for i, page in enumerate(PAGE_PORTS)})

    def ours(text: str) -> str:
        for page, mine in here.items():
            text = text.replace(page, mine)
        return text

    # node-N.properties: the page's node 1, with node N's id, listener and directory.
    for n in (1, 2, 3):
        node = re.sub(r"^node\.id=1$", f"node.id={n}", properties, flags=re.M)
        node = re.sub(
            r"^(listeners=CONTROLLER://127\.0\.0\.1:)9093$", rf"\g<1>{PAGE_PORTS[n - 1]}", node, flags=re.M
        )
        node = re.sub(r"^log\.dirs=/tmp/kraft/1$", f"log.dirs=/tmp/kraft/{n}", node, flags=re.M)
        (tmp_path / f"node-{n}.properties").write_text(ours(node))
    format_, start, describe = (ours(c.split("#")[0].strip()) for c in commands)
    assert "and node-2, node-3" in commands[0] and "and node-2, node-3" in commands[1], commands

    for attempt in ("first", "second"):
        for n in (1, 2, 3):
            formatted = subprocess.run(
                ["bash", "-c", format_.replace("node-1", f"node-{n}")],
                cwd=tmp_path,
                capture_output=True,
                text=True,
                timeout=60,
            )
            if attempt == "first":
                assert formatted.returncode == 0, formatted.stdout + formatted.stderr
            else:
                said = formatted.stdout + formatted.stderr
                assert formatted.returncode != 0 and "is already formatted" in said, said
                assert "--ignore-formatted" in said and len(said.strip().splitlines()) == 1, said
        nodes = [
            subprocess.Popen(
                ["bash", "-c", "exec " + start.replace("node-1", f"node-{n}")],
                cwd=tmp_path,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            for n in (1, 2, 3)
        ]
        try:
            status = wait_until(
                lambda: (
                    (
                        done := subprocess.run(
                            ["bash", "-c", describe], capture_output=True, text=True, timeout=30
                        )
                    ).returncode
                    == 0
                    and done.stdout
                ),
                60,
                f"the quorum to answer describe --status ({attempt} round)",
            )
            assert re.search(r"^LeaderId:\s+[123]$", status, re.M), status
        finally:
            for node in nodes:  # Ctrl-C in each terminal
                node.send_signal(signal.SIGTERM)
            said = [terminate(node) for node in nodes]
        failed = [
            f"node {n} ({attempt} round) exited {node.returncode}:\n{out[-4000:]}"
            for n, (node, out) in enumerate(zip(nodes, said, strict=True), start=1)
            if node.returncode != 0
        ]
        assert not failed, "\n\n".join(failed)
        dumped = subprocess.run(["bash", "-c", ours(dump)], capture_output=True, text=True, timeout=60)
        assert dumped.returncode == 0, dumped.stderr
        assert "LEADER_CHANGE" in dumped.stdout, dumped.stdout
