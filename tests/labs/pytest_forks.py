"""The lab self-check's gradings, each a fork of one warm Python instead of a Python started cold.

``grade`` runs a lab's tests as ``python -m pytest ...`` in a process of its own, with the learner's
files first on ``PYTHONPATH``. The self-check grades about a hundred times a run, and each of those
processes spends most of a second importing pytest and Hypothesis before it collects a test. Here
one server process per xdist worker imports them once; for each grading it forks, and the child
takes the command's environment, working directory and ``sys.path`` as ``python -m pytest`` would
have had them, and runs pytest. Nothing the grading imports from the overlay is in the server
(kafka_lite, the lab's tests, the plugins named with ``-p``): those the child imports fresh, from
the overlay, as a cold process would.

``run`` has ``grader.run_pytest``'s signature, and falls back to it for any other command.
"""

from __future__ import annotations

import atexit
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from kafka_lite.grading.grader import run_pytest

# The server: imports what every grading imports and nothing a grading takes from its overlay, then
# forks a child per request line (JSON: argv, cwd, env, where to write stdout and stderr) and answers
# with the child's exit code.
SERVER = r"""
import json, os, sys
import pytest, hypothesis, hypothesis.strategies, hypothesis.stateful  # noqa: F401

base_path = [p for p in sys.path if p not in ("", os.getcwd())]
for line in sys.stdin:
    request = json.loads(line)
    pid = os.fork()
    if pid == 0:
        try:
            os.chdir(request["cwd"])
            os.environ.clear()
            os.environ.update(request["env"])
            sys.dont_write_bytecode = bool(os.environ.get("PYTHONDONTWRITEBYTECODE"))
            python_path = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
            sys.path[:] = [os.getcwd(), *python_path, *base_path]
            sys.argv = ["pytest", *request["args"]]
            os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
            for fd, path in ((1, request["stdout"]), (2, request["stderr"])):
                os.dup2(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), fd)
            code = pytest.console_main()
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:
            import traceback
            traceback.print_exc()
            code = 99
        os._exit(code if isinstance(code, int) else 1)
    _, status = os.waitpid(pid, 0)
    print(json.dumps(os.waitstatus_to_exitcode(status)), flush=True)
"""

_server: subprocess.Popen | None = None


def _started() -> subprocess.Popen:
    global _server
    if _server is None or _server.poll() is not None:
        _server = subprocess.Popen(
            [sys.executable, "-c", SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            cwd=tempfile.gettempdir(),
        )  # fmt: skip
        atexit.register(_stop, _server)
    return _server


def _stop(server: subprocess.Popen) -> None:
    if server.poll() is None:
        server.stdin.close()
        server.wait(timeout=30)


def run(cmd: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    """``cmd`` (``python -m pytest ...``) run in a fork of the warm server; its exit code and output."""
    if cmd[:3] != [sys.executable, "-m", "pytest"]:
        return run_pytest(cmd, cwd, env)
    server = _started()
    with tempfile.TemporaryDirectory(prefix="kafka-lite-fork-") as tmp:
        out, err = Path(tmp) / "stdout", Path(tmp) / "stderr"
        request = {"args": cmd[3:], "cwd": str(cwd), "env": env, "stdout": str(out), "stderr": str(err)}
        server.stdin.write(json.dumps(request) + "\n")
        server.stdin.flush()
        answer = server.stdout.readline()
        if not answer:
            raise RuntimeError(f"the grading fork server (pid {server.pid}) ended with {server.wait()}")
        code = json.loads(answer)
        read = lambda p: p.read_text(encoding="utf-8", errors="replace") if p.exists() else ""  # noqa: E731
        return subprocess.CompletedProcess(cmd, code, read(out), read(err))
