"""Fail a lab test at once when a function it needs is still the starter's stub.

No Kafka twin: a helper of kafka_lite's graded lab tests.

A starter's function is its docstring and one ``raise NotImplementedError("Lab N: ...")``. Some
code swallows what the functions it calls raise (a controller's state machine logs a failed
change and goes on; a cluster's broker logs it in its own process), so a test of such code would
fail later, on a confusing assertion or a timeout. ``written`` calls each stub first, and its
NotImplementedError, naming the function to write, is the test's failure.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable


def written(*functions: Callable) -> None:
    """Call each of ``functions`` whose body is still a single ``raise`` (after its docstring), with
    ``None`` for every argument: the starter's NotImplementedError fails the test there."""
    for fn in functions:
        body = ast.parse(textwrap.dedent(inspect.getsource(fn))).body[0].body
        if (
            body
            and isinstance(body[0], ast.Expr)
            and isinstance(getattr(body[0], "value", None), ast.Constant)
        ):
            body = body[1:]  # the docstring
        if len(body) == 1 and isinstance(body[0], ast.Raise):
            fn(*(None for _ in inspect.signature(fn).parameters))
