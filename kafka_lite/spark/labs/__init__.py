"""The Spark labs' modules: the DataFrame code a learner writes over topic data that went through the
broker (lab 9: consumer lag from ``__consumer_offsets``; lab 10: request latency from
``_request_metrics``).

No Kafka twin: these are the analyses an operator runs on a Kafka cluster's own topics, written as
Spark jobs. Each function takes and returns DataFrames and uses Spark's built-in functions only: no
Python UDF, so the whole job runs in the JVM, and the graders check the physical plan for that.

``learners_module`` is how a lab's notebook finds the learner's file. ``kafka-lite lab start N``
writes the starter into a workspace wherever it runs (``kafka-lite-labs/<lab>/`` in that directory,
or ``--dir``) and records the workspace's absolute path (``kafka_lite.cli.lab.record_workspace``) in
``workspaces.json`` under the user's state directory (``$KAFKA_LITE_STATE_DIR``, else
``$XDG_STATE_HOME/kafka-lite``, else ``~/.local/state/kafka-lite``); ``lab grade`` records it again.
The notebook, which runs in ``chapters/data_pipeline/``, loads the learner's file from there, or from
a ``kafka-lite-labs/`` in a directory above it. With neither it refuses, naming the command to run:
running kafka_lite's own module instead would show the answer's tables as if they were the learner's.
The reference runs only when asked for by name, with ``KAFKA_LITE_LAB_CODE=reference`` (as the test
suite runs the notebooks).
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from types import ModuleType

WORKSPACE = "kafka-lite-labs"
WORKSPACES_FILE = "workspaces.json"
LAB_CODE_ENV = "KAFKA_LITE_LAB_CODE"  # "reference": a notebook runs kafka_lite's own lab module


class NoWorkspaceError(RuntimeError):
    """A lab notebook found no workspace of its lab; the message says which command makes one."""


def state_dir() -> Path:
    """``$KAFKA_LITE_STATE_DIR``, else ``$XDG_STATE_HOME/kafka-lite``, else ``~/.local/state/kafka-lite``."""
    explicit = os.environ.get("KAFKA_LITE_STATE_DIR")
    if explicit:
        return Path(explicit).expanduser().resolve()
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base).expanduser().resolve() / "kafka-lite"


def recorded_workspaces() -> dict[str, str]:
    """Lab slug -> the absolute path of its workspace, as ``lab start`` and ``lab grade`` last recorded."""
    path = state_dir() / WORKSPACES_FILE
    try:
        recorded = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return {}  # nothing recorded yet, or a file that is not ours to mend: start records it afresh
    return recorded if isinstance(recorded, dict) else {}


def learners_module(lab_slug: str, reference: ModuleType, start: Path | None = None) -> ModuleType:
    """The learner's version of ``reference`` (one of kafka_lite's lab modules): from the workspace
    ``lab start`` recorded for ``lab_slug``, else from a ``kafka-lite-labs/<lab_slug>/`` in ``start``
    (default: the working directory) or a directory above it. ``reference`` itself only when
    ``$KAFKA_LITE_LAB_CODE`` is ``reference``; otherwise, with no workspace, ``NoWorkspaceError``.
    The module's ``__file__`` says which file it is."""
    if os.environ.get(LAB_CODE_ENV) == "reference":
        return reference
    rel = Path(*reference.__name__.split(".")).with_suffix(".py")
    here = (start or Path.cwd()).resolve()
    candidates = []
    if lab_slug in (recorded := recorded_workspaces()):
        candidates.append(Path(recorded[lab_slug]) / rel)
    candidates += [directory / WORKSPACE / lab_slug / rel for directory in (here, *here.parents)]
    for candidate in candidates:
        if candidate.is_file():
            spec = importlib.util.spec_from_file_location(f"learners_{rel.stem}", candidate)
            loaded = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(loaded)
            return loaded
    number = int(lab_slug[3:5]) if lab_slug[3:5].isdigit() else lab_slug
    where = f" (recorded: {recorded[lab_slug]}, which has no {rel})" if lab_slug in recorded else ""
    raise NoWorkspaceError(
        f"no workspace of {lab_slug}{where}: run `kafka-lite lab start {number}` (it records where it "
        f"wrote your files, in {state_dir() / WORKSPACES_FILE}), then run this notebook again. "
        f"To run kafka_lite's own {rel.name} instead (the reference: its tables are the answer), "
        f"start Jupyter with {LAB_CODE_ENV}=reference."
    )
