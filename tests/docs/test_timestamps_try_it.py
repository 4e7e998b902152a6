"""Chapter 10.2's "Try it", run as the page writes it, twice: its three commands (a topic with
``message.timestamp.type=LogAppendTime``, one record produced, the consumer from the beginning
printing its timestamp), read out of the page's console block; what the consumer prints has the
shape of the page's output line, with the broker's time of the append. The second run, on the
topic the first made, creates nothing (``--if-not-exists``) and prints the first record again,
with the same timestamp, as the page says.

The page's cluster is ``cluster up``'s on 127.0.0.1:9092; the test's is the worker's session
cluster, so that address becomes its bootstrap servers. Nothing else changes."""

from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("cluster")]

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "chapters" / "ch10_advanced" / "timestamps.md"
PRINTED = re.compile(r"^LogAppendTime:(\d+)\thello$")


def try_it() -> tuple[list[str], list[str]]:
    """The "Try it" block's commands (continuation lines joined) and the lines it shows printed."""
    section = PAGE.read_text(encoding="utf-8").split("\n## Try it\n", 1)[1].split("\n## ", 1)[0]
    console = re.search(r"```console\n(.*?)```", section, re.S)[1].replace("\\\n", " ")
    commands = [" ".join(line[2:].split()) for line in console.splitlines() if line.startswith("$ ")]
    shown = [line for line in console.splitlines() if line and not line.startswith("$ ")]
    return commands, shown


def test_the_try_it_block_prints_the_brokers_timestamp_twice(cluster):
    commands, shown = try_it()
    assert len(commands) == 3 and "--if-not-exists" in commands[0], commands
    assert len(shown) == 1 and PRINTED.match(shown[0]), shown
    env = dict(os.environ, PATH=f"{ROOT / '.venv' / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")
    ours = [c.replace("127.0.0.1:9092", cluster.bootstrap_servers) for c in commands]
    assert all(cluster.bootstrap_servers in c for c in ours), ours

    printed = []
    for attempt in ("first", "second"):
        said = []
        started = int(time.time() * 1000)
        for command in ours:
            done = subprocess.run(["bash", "-o", "pipefail", "-c", command], env=env, capture_output=True,
                                  text=True, timeout=120)  # fmt: skip
            assert done.returncode == 0, f"{attempt} run: {command}\n{done.stdout}{done.stderr}"
            said.append(done.stdout)
        assert ('Created topic "stamped".' in said[0]) == (attempt == "first"), said[0]
        lines = [line for line in said[2].splitlines() if PRINTED.match(line)]
        assert len(lines) == 1, said[2]
        printed.append(lines[0])
        if attempt == "first":  # the broker's clock at the append, between the run's start and now
            assert started <= int(PRINTED.match(lines[0])[1]) <= int(time.time() * 1000), lines[0]
    assert printed[1] == printed[0], "the second run prints the first record, with its first timestamp"
