"""``kafka-lite docs build | serve``: the docs site (mkdocs-material), built or served locally.

No Kafka twin: kafka_lite's own tooling. Runs mkdocs from the repository root with the same
interpreter, so it works without activating the virtual environment.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys

from rich.console import Console

from kafka_lite.cli import CliError
from kafka_lite.grading.labs import REPO_ROOT


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("docs", help="build or serve the docs site")
    sub = parser.add_subparsers(dest="docs_command", metavar="ACTION")
    sub.required = True
    build = sub.add_parser("build", help="build the static site (strict: broken links fail)")
    build.add_argument("--site-dir", default="site", help="output directory (default: site)")
    build.set_defaults(handler=run_build)
    serve = sub.add_parser("serve", help="serve the site with live reload")
    serve.add_argument(
        "--dev-addr", default="127.0.0.1:8000", help="address to listen on (default 127.0.0.1:8000)"
    )
    serve.set_defaults(handler=run_serve)


def _mkdocs(args: list[str]) -> int:
    if importlib.util.find_spec("mkdocs") is None:
        raise CliError(
            "mkdocs is not installed: run scripts/bootstrap (it installs the docs extra)", exit_code=2
        )
    if not (REPO_ROOT / "mkdocs.yml").exists():
        raise CliError(f"no mkdocs.yml in {REPO_ROOT}: the docs need a kafka_lite checkout", exit_code=2)
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", *args], cwd=REPO_ROOT, env=env, check=False
    ).returncode


def run_build(args: argparse.Namespace, console: Console) -> int:
    if _mkdocs(["build", "--strict", "--site-dir", str(args.site_dir)]) != 0:
        raise CliError("the docs build failed (see mkdocs' messages above)")
    console.print(f"site built in {REPO_ROOT / args.site_dir}")
    return 0


def run_serve(args: argparse.Namespace, console: Console) -> int:
    return _mkdocs(["serve", "--dev-addr", args.dev_addr])
