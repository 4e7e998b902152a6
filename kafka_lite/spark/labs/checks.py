"""What the Spark labs check about a learner's DataFrame: that its plan runs no Python per row, and
how its rows differ from the expected ones.

No Kafka twin: the graders' side of the Spark labs, also handy in the lab notebooks.

A Python UDF (``@udf``, ``@pandas_udf``, ``mapInPandas``/``mapInArrow``) moves every row from the JVM
to a Python worker and back; Spark's built-in functions run in the JVM, inside its generated code.
The handouts ask for built-in functions only, and ``python_in_plan`` finds the physical operators
that evaluate Python (``BatchEvalPython``, ``ArrowEvalPython``, ``MapInArrow``, ...). The plan comes
from ``DataFrame.explain``, which prints it the same way in classic PySpark and under Spark Connect
(where there is no ``_jdf`` to ask).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import re
from collections import defaultdict
from collections.abc import Sequence

PYTHON_OPERATORS = re.compile(
    r"BatchEvalPython|ArrowEvalPython|EvalPythonUDTF|PythonUDF|InPandas|MapInArrow|FlatMapGroupsInArrow"
)


def plan_of(df) -> str:
    """The DataFrame's plans as ``df.explain(mode="formatted")`` prints them."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        df.explain(mode="formatted")
    return out.getvalue()


def python_in_plan(df) -> list[str]:
    """The operators of ``df``'s plan that run Python per row, sorted; empty when there are none."""
    return sorted(set(PYTHON_OPERATORS.findall(plan_of(df))))


def assert_no_python(df, function: str) -> None:
    found = python_in_plan(df)
    assert not found, (
        f"{function} runs Python code for each row ({', '.join(found)} in its physical plan): the lab "
        f"asks for Spark's built-in functions only (pyspark.sql.functions, Window), no UDF.\n"
        f"The plan:\n{plan_of(df)}"
    )


def assert_columns(df, expected: Sequence[str], function: str) -> None:
    assert df.columns == list(expected), (
        f"{function} returns the columns {df.columns}; expected {list(expected)}"
    )


def fmt(value) -> str:
    """A value as the failure messages show it: times (µs since the epoch) as UTC clock times."""
    if isinstance(value, int) and not isinstance(value, bool) and value > 10**15:
        return dt.datetime.fromtimestamp(value / 1e6, dt.UTC).strftime("%H:%M:%S.%f")[:-3]
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def table_differences(
    got: Sequence[tuple],
    expected: Sequence[tuple],
    columns: Sequence[str],
    key_width: int,
    limit: int = 8,
    tolerance: float = 1e-6,
) -> list[str]:
    """Lines naming the rows that are missing, extra or different, at most ``limit`` of them.

    Rows are tuples in ``columns``' order; the first ``key_width`` columns identify a row (several
    rows may share a key: then their counts and values are compared). Floats match within
    ``tolerance``."""

    def keyed(rows):
        table = defaultdict(list)
        for row in rows:
            table[row[:key_width]].append(row)
        return table

    def same(a_rows, b_rows) -> bool:
        if len(a_rows) != len(b_rows):
            return False
        for a_row, b_row in zip(a_rows, b_rows, strict=True):
            for a, b in zip(a_row, b_row, strict=True):
                if isinstance(a, float) or isinstance(b, float):
                    if a is None or b is None or abs(a - b) > tolerance:
                        return False
                elif a != b:
                    return False
        return True

    def show(row) -> str:
        return ", ".join(f"{c}={fmt(v)}" for c, v in zip(columns[key_width:], row[key_width:], strict=True))

    got_by, expected_by = keyed(got), keyed(expected)
    lines: list[str] = []
    for key in sorted(set(expected_by) | set(got_by), key=str):
        g, e = sorted(got_by.get(key, []), key=str), sorted(expected_by.get(key, []), key=str)
        if same(g, e):
            continue
        name = ", ".join(f"{c}={fmt(v)}" for c, v in zip(columns, key, strict=False))
        if not g:
            lines.append(f"  missing  {name}" + (f": expected {show(e[0])}" if show(e[0]) else ""))
        elif not e:
            lines.append(f"  extra    {name}" + (f": got {show(g[0])}" if show(g[0]) else ""))
        elif len(g) != len(e):
            lines.append(f"  {len(g)} rows for {name}, expected {len(e)}")
        else:
            lines.append(f"  differs  {name}:\n      got      {show(g[0])}\n      expected {show(e[0])}")
        if len(lines) >= limit:
            lines.append("  ...")
            break
    return lines


def assert_rows(got, expected, columns, key_width: int, what: str) -> None:
    lines = table_differences(got, expected, columns, key_width)
    assert not lines, (
        f"{what}: {len(got)} rows came back, {len(expected)} expected. First differences "
        f"(times are UTC):\n" + "\n".join(lines)
    )
