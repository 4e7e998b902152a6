"""Run every benchmark in its short form, one after another, and write the results and the page.

No Kafka twin: the one command behind the benchmark page's "At a glance" table.

    .venv/bin/python benchmarks/run_all.py [--only bench_producer ...] [--no-page]

Each script runs as its own process with the arguments of its short form (``SHORT`` below: fewer
records or repeats than its default, five rounds where the page states a median and it fits), and
``--json`` for its headline figures (``headline.py``). Scripts run one after another, never two at
once: each starts its own brokers on the same ports, and two would measure each other. A script that
fails or runs past ``TIMEOUT_S`` is recorded as failed, with the end of its error output, and the run
goes on with the next.

The run writes:

* ``results/latest.json``: the date, the machine (cores, memory, CPU model, Python), the commit, the
  exact command, and per script its command, status, seconds and figures;
* ``results/logs/<script>.txt``: what each script printed, the tables behind its figures;
* the page (``page.py``): the "At a glance" section of ``docs/benchmarks.md`` and its chart, from
  ``results/latest.json`` alone, so the page can be written again without running anything.

With ``--only``, the named scripts run and the others keep their results from the last run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results" / "latest.json"
LOGS = HERE / "results" / "logs"
TIMEOUT_S = 900

# Each script's short form, in the page's order. The sizes keep a whole run to about a quarter of an
# hour on a 2-core machine; the ratios hold at these sizes, which is what the page states. Medians are
# of five rounds, but for the controllers' (three rounds of 1,000 partitions, a minute and a half each)
# and Spark's (three reads of each kind, after a warm-up read of each).
SHORT: dict[str, list[str]] = {
    "bench_log_append": ["--mib", "32", "--repeat", "5"],
    "bench_protocol": ["--repeat", "50"],
    "bench_broker": ["--records", "1000000"],
    "bench_producer": ["--records", "50000", "--rounds", "5", "--codec", "both"],
    "bench_consumer": ["--records", "50000", "--rounds", "5"],
    "bench_fetch_hold_back": ["--rounds", "5"],
    "bench_spark": ["--records", "200000", "--rounds", "3"],
    "bench_timer": ["--sizes", "1000", "1000000", "--ops", "10000"],
    "bench_replication": ["--records", "200000", "--rounds", "5", "--seconds", "5"],
    "bench_request_cost": ["--requests", "2000", "--rounds", "5"],
    "bench_request_hops": ["--requests", "2000", "--rounds", "3"],
    "bench_controller": ["--rounds", "3"],
    "bench_kraft_controller": ["--rounds", "3"],
    "bench_streams": ["--rounds", "5", "--lines", "5000", "--records", "20000", "--restore-records", "50000"],
    "bench_mirror_maker": ["--records", "50000", "--rounds", "5", "--part", "a"],
    "bench_transactions": ["--records", "30000", "--rounds", "5"],
    "bench_security": ["--records", "20000", "--rounds", "5"],
    "bench_raft": ["--rounds", "5", "--seconds", "3"],
    "bench_jepsen_checker": ["--rounds", "5"],
}


def machine() -> dict:
    """What the figures were measured on."""
    cpu = platform.processor() or platform.machine()
    memory_gib = None
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory_gib = round(int(line.split()[1]) / 2**20, 1)
                break
    except OSError:
        pass  # not Linux: the platform module's names are what there is
    return {
        "cores": os.cpu_count(),
        "memory_gib": memory_gib,
        "cpu": cpu,
        "python": platform.python_version(),
        "system": f"{platform.system()} {platform.release()}",
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def commit() -> str:
    out = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    dirty = subprocess.run(
        # the code a run measures: the library, the tools it runs, the benchmarks themselves
        ["git", "status", "--porcelain", "--untracked-files=no", "--", "kafka_lite", "benchmarks"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    return out.stdout.strip() + (" with uncommitted changes" if dirty.stdout.strip() else "")


def error_of(stderr: str) -> str:
    """The exception a failed script ended with: the last line of its last traceback, not the clients'
    log lines printed after it (librdkafka's connection errors as the broker stops)."""
    lines = stderr.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("Traceback (most recent call last)")]
    if starts:
        after = lines[starts[-1] + 1 :]
        for line in after:
            if line and not line.startswith((" ", "\t")):
                return line.strip()  # the first unindented line after the frames: "SomeError: ..."
    rest = [line for line in lines if line.strip()]
    return rest[-1].strip() if rest else ""


def run_one(name: str, args: list[str]) -> dict:
    """Run one script's short form; its entry in the results."""
    command = [".venv/bin/python", f"benchmarks/{name}.py", *args]
    print(f"== {shlex.join(command)}", flush=True)
    entry: dict = {"name": name, "command": shlex.join(command), "status": "failed", "figures": []}
    LOGS.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="kafka-lite-bench-json-") as d:
        out_path = Path(d) / "figures.json"
        start = time.monotonic()
        proc = subprocess.Popen(
            [sys.executable, str(HERE / f"{name}.py"), *args, "--json", str(out_path)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            stdout, stderr = proc.communicate(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            # Ctrl-C, not a kill: the script stops the brokers it started on its way out, so that the
            # next script finds its ports free.
            proc.send_signal(signal.SIGINT)
            try:
                stdout, stderr = proc.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                stdout, stderr = proc.communicate()
            entry["seconds"] = round(time.monotonic() - start, 1)
            entry["error"] = f"no result after {TIMEOUT_S} s"
            (LOGS / f"{name}.txt").write_text(f"{stdout}\n--- stderr ---\n{stderr}\n{entry['error']}\n")
            print(f"   failed: {entry['error']}", flush=True)
            return entry
        entry["seconds"] = round(time.monotonic() - start, 1)
        (LOGS / f"{name}.txt").write_text(stdout + (f"\n--- stderr ---\n{stderr}" if proc.returncode else ""))
        if proc.returncode != 0:
            entry["error"] = error_of(stderr) or f"exit status {proc.returncode}"
        elif not out_path.exists():
            entry["error"] = "the script wrote no figures"
        else:
            entry["status"] = "ok"
            entry["figures"] = json.loads(out_path.read_text())["figures"]
    print(f"   {entry['status']} in {entry['seconds']:.0f} s", flush=True)
    return entry


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=list(SHORT), metavar="SCRIPT", help="run only these")
    parser.add_argument("--no-page", action="store_true", help="write the results, not the page")
    args = parser.parse_args()
    names = args.only or list(SHORT)
    earlier = {}
    if args.only and RESULTS.exists():
        earlier = {b["name"]: b for b in json.loads(RESULTS.read_text())["benchmarks"]}
    started = datetime.now(UTC)
    results = {
        "date": started.strftime("%Y-%m-%d %H:%M UTC"),
        "command": shlex.join([".venv/bin/python", "benchmarks/run_all.py", *sys.argv[1:]]),
        "machine": machine(),
        "commit": commit(),
        "benchmarks": [],
    }
    start = time.monotonic()
    for name in SHORT:
        if name in names:
            results["benchmarks"].append(run_one(name, SHORT[name]))
        elif name in earlier:
            results["benchmarks"].append({**earlier[name], "from_earlier_run": True})
    results["seconds"] = round(time.monotonic() - start)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    print(f"results: {RESULTS.relative_to(ROOT)} ({results['seconds']} s)")
    failed = [b["name"] for b in results["benchmarks"] if b["status"] != "ok"]
    if failed:
        print(f"failed: {', '.join(failed)} (see benchmarks/results/logs/)")
    if not args.no_page:
        import page

        page.main([])


if __name__ == "__main__":
    main()
