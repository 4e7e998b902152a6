"""What a cluster leaves behind: the processes still running under its directory."""

from __future__ import annotations

from pathlib import Path

from kafka_lite.cli import cluster as launcher


def processes_under(directory: Path) -> list[str]:
    """The running processes whose command line names ``directory`` (a cluster's nodes and
    ZooKeeper), as "pid: command line"."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if str(directory) in cmdline and launcher._alive(int(entry.name)):
                pids.append(f"{entry.name}: {cmdline}")
    return pids
