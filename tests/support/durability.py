"""The durability checker's run as the durability tests read it, in either mode: every round
completed, every acknowledged record read back, none out of order."""

from __future__ import annotations

import time
from pathlib import Path

from kafka_lite.testing import durability_checker


def check_no_acknowledged_record_is_lost(
    cluster_dir: Path, rounds: int, victim: str, records_per_round: int
) -> tuple[durability_checker.DurabilityReport, str]:
    """Run the checker's rounds against the cluster in ``cluster_dir`` and assert what must hold in
    both modes; return the report and its summary (the rounds' lines) for the caller's own checks."""
    started = time.monotonic()
    lines: list[str] = []
    report = durability_checker.check(cluster_dir, rounds, victim, records_per_round, log=lines.append)
    summary = "\n".join(lines + report.lines()) + f"\nwall time {time.monotonic() - started:.1f} s"
    print(summary)
    assert len(lines) == rounds, summary  # every round killed, re-elected, restarted, rejoined
    assert report.verdict.acknowledged >= (rounds + 1) * records_per_round, summary
    assert report.verdict.lost == [], summary
    assert not any(report.out_of_order.values()), summary
    return report, summary
