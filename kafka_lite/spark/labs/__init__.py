"""The Spark labs' modules: the DataFrame code a learner writes over topic data that went through the
broker (lab 9: consumer lag from ``__consumer_offsets``; lab 10: request latency from
``_request_metrics``).

No Kafka twin: these are the analyses an operator runs on a Kafka cluster's own topics, written as
Spark jobs. Each function takes and returns DataFrames and uses Spark's built-in functions only: no
Python UDF, so the whole job runs in the JVM, and the graders check the physical plan for that.

``learners_module`` is how a lab's notebook finds the learner's file: ``kafka-lite lab start N``
writes it under ``kafka-lite-labs/<lab>/`` in the directory it ran in (the checkout, usually), and
the notebook, which runs in ``chapters/data_pipeline/``, looks for that workspace in the directories
above it. Without one it uses kafka_lite's own module, the reference.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

WORKSPACE = "kafka-lite-labs"


def learners_module(lab_slug: str, reference: ModuleType, start: Path | None = None) -> ModuleType:
    """The learner's version of ``reference`` (one of kafka_lite's lab modules) from the workspace of
    lab ``lab_slug`` found in ``start`` (default: the working directory) or a directory above it;
    ``reference`` itself when there is none. Its ``__file__`` says which it is."""
    rel = Path(*reference.__name__.split(".")).with_suffix(".py")
    here = (start or Path.cwd()).resolve()
    for directory in (here, *here.parents):
        candidate = directory / WORKSPACE / lab_slug / rel
        if candidate.is_file():
            spec = importlib.util.spec_from_file_location(f"learners_{rel.stem}", candidate)
            loaded = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(loaded)
            return loaded
    return reference
