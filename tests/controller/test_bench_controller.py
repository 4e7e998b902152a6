"""The controller benchmark (``benchmarks/bench_controller.py``) runs end to end with tiny sizes: both
parts time a step that sent requests and had them answered, and the killed broker's partitions found
new leaders."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


def test_the_controller_benchmark_runs_with_a_few_partitions():
    # A subprocess: the benchmark wraps controller methods class-wide, which must not leak into tests.
    out = subprocess.run(
        [sys.executable, "benchmarks/bench_controller.py", "--partitions", "12", "--rounds", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    a = re.search(r"a round 1: broker \d led (\d+) partitions; (\d+) requests", out.stdout)
    b = re.search(r"b round 1: controller (\d) died, (\d) took over; (\d+) requests", out.stdout)
    assert a and b, out.stdout
    assert int(a.group(1)) == 4 and int(a.group(2)) >= 1  # a third of 12, round-robin leaders
    assert b.group(1) != b.group(2) and int(b.group(3)) >= 2  # UpdateMetadata to each live broker
    assert "a, election on a broker's death: median" in out.stdout
    assert "b, controller failover: median" in out.stdout
