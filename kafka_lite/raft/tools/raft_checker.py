"""``kafka-lite raft check``: is every record a leader saw committed in every voter's log, in order?

No Kafka twin: the check Kafka's Raft system tests and Jepsen-style harnesses make after a nemesis,
reduced to the one promise Raft makes: an entry the leader reported committed is never lost, and sits
at the same offset on every voter (Raft's Leader Completeness and Log Matching properties).
Modelled on ``kafka_lite.testing.durability_checker``'s report (committed, found, lost).

Its inputs are what ``kafka-lite raft test-server`` leaves behind: each voter's data directory, with
its log in ``__cluster_metadata-0`` (read here segment by segment with ``FileRecords``, the reader
``kafka-lite dump-log`` uses, with no server running) and, from every run that led, a committed file
of ``<offset> <key>`` lines. A record counts as found on a voter when the voter's log holds a record
with that key at that offset; committed records on one offset must all agree (two leaders that each
saw a different record committed there would be a safety violation, reported as conflicting).

Raft promises a committed record to a majority of the voters, and to every voter that replicates
far enough: a voter stopped while the others went on committing simply ends before the newest
records. So a committed record missing from a voter whose log ends before its offset counts as
*behind* on that voter, not lost, as long as a majority of the voters checked holds it. It is lost on
a voter whose log reaches past its offset without it (overwritten), and on every voter that lacks it
when no majority holds it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from kafka_lite.common.record.file_records import FileRecords

LOG_DIR_NAME = "__cluster_metadata-0"
COMMITTED_FILE_NAME = "committed.txt"


def read_voter_log(data_dir: Path) -> dict[int, bytes]:
    """Offset -> key of every data record in the voter's log (control records left out)."""
    log_dir = Path(data_dir) / LOG_DIR_NAME
    if not log_dir.is_dir():
        raise FileNotFoundError(f"{data_dir}: no Raft log directory {LOG_DIR_NAME} in it")
    records: dict[int, bytes] = {}
    for segment in sorted(log_dir.glob("*.log")):
        file_records = FileRecords.open(segment, mutable=False, create=False)
        try:
            for _, batch in file_records.batches():
                if batch.is_control_batch:
                    continue
                for record in batch:
                    value = bytes(record.value or b"")
                    records[record.offset] = value.split(b" ", 1)[0]
        finally:
            file_records.close()
    return records


def read_committed(paths: Iterable[Path]) -> tuple[dict[int, bytes], list[str]]:
    """Offset -> key over every committed file, and the offsets where two files disagree."""
    committed: dict[int, bytes] = {}
    conflicts = []
    for path in paths:
        for line in Path(path).read_text().splitlines():
            parts = line.split()
            if len(parts) != 2:  # a line cut by a SIGKILL mid-write
                continue
            offset, key = int(parts[0]), parts[1].encode()
            if committed.get(offset, key) != key:
                conflicts.append(f"offset {offset}: {committed[offset].decode()} and {key.decode()}")
            committed.setdefault(offset, key)
    return committed, conflicts


@dataclass
class CheckReport:
    committed: int
    found: dict[str, int]
    lost: dict[str, list[int]] = field(default_factory=dict)
    conflicts: list[str] = field(default_factory=list)
    behind: dict[str, list[int]] = field(default_factory=dict)

    @property
    def lost_count(self) -> int:
        return sum(len(offsets) for offsets in self.lost.values())

    @property
    def ok(self) -> bool:
        return self.committed > 0 and self.lost_count == 0 and not self.conflicts

    def lines(self) -> list[str]:
        out = [f"committed: {self.committed} records reported committed by a leader"]
        for voter, found in self.found.items():
            lost = self.lost.get(voter, [])
            sample = f" (first offsets: {', '.join(map(str, lost[:5]))})" if lost else ""
            behind = self.behind.get(voter, [])
            tail = f", behind {len(behind)} (its log ends before offset {behind[0]})" if behind else ""
            out.append(f"{voter}: found {found}, lost {len(lost)}{sample}{tail}")
        out.append(f"lost: {self.lost_count}")
        out.extend(f"conflicting: {c}" for c in self.conflicts)
        if self.committed == 0:
            out.append("nothing was reported committed: no leader ran the workload")
        return out


def check(data_dirs: Iterable[Path], committed_files: Iterable[Path] | None = None) -> CheckReport:
    """Check every voter's log in ``data_dirs`` against the committed files (by default, each
    data directory's ``committed.txt``)."""
    data_dirs = [Path(d) for d in data_dirs]
    if committed_files is None:
        committed_files = [d / COMMITTED_FILE_NAME for d in data_dirs if (d / COMMITTED_FILE_NAME).exists()]
    committed, conflicts = read_committed(committed_files)
    report = CheckReport(len(committed), {}, {}, conflicts)
    logs = {str(d): read_voter_log(d) for d in data_dirs}
    majority = len(logs) // 2 + 1
    held_by = {
        offset: sum(log.get(offset) == key for log in logs.values()) for offset, key in committed.items()
    }
    for voter, log in logs.items():
        log_end = max(log, default=-1) + 1
        missing = sorted(offset for offset, key in committed.items() if log.get(offset) != key)
        behind = [o for o in missing if o >= log_end and held_by[o] >= majority]
        lost = [o for o in missing if o < log_end or held_by[o] < majority]
        report.found[voter] = len(committed) - len(missing)
        if lost:
            report.lost[voter] = lost
        if behind:
            report.behind[voter] = behind
    return report
