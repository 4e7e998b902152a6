"""Suite-wide test configuration: tier markers and the hypothesis profile.

Every test belongs to one tier (unit, integration, compat, spark, notebooks, docs, browser, labs),
so each tier runs alone with ``pytest -m TIER``. A chapter notebook (collected by nbmake) is in the
``notebooks`` tier; any other test that names no tier is a unit test. This file sits at the top of
the repository so the rule covers ``tests/``, ``labs/`` and ``chapters/`` alike.
"""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, settings

from tests.docs.site import NOT_EXECUTED

ROOT = Path(__file__).resolve().parent

TIERS = ("unit", "integration", "compat", "spark", "notebooks", "docs", "browser", "labs")

# Property tests are derandomized in CI so a red run can be reproduced exactly; locally they explore.
# A failing test's example is shrunk, but not explained: Hypothesis's explain phase (which parts of
# the shrunk example do not matter) runs the failing test again hundreds of times, a second or more
# per test, and a lab's starter fails every property test of its lab in each grading.
PHASES = tuple(p for p in Phase if p is not Phase.explain)
settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    max_examples=150,
    suppress_health_check=[HealthCheck.too_slow],
    phases=PHASES,
)
settings.register_profile("dev", deadline=None, max_examples=100, phases=PHASES)
settings.load_profile("ci" if os.environ.get("CI") else os.environ.get("HYPOTHESIS_PROFILE", "dev"))


def _kazoo_draws_from_its_own_random() -> None:
    """kazoo's connection thread draws a jitter from the *global* ``random`` on every pass of its
    loop (several times a second per client). The session-scoped test cluster keeps three brokers'
    clients running in a worker while other tests run there, and Hypothesis checks that the global
    ``random`` does not change during a draw: a ZooKeeper ping landing mid-draw made it warn, on
    whichever property test was running. kazoo gets a generator of its own; it only needs jitter."""
    import random

    from kazoo import retry
    from kazoo.protocol import connection

    connection.random = random.Random()
    retry.random = random.Random()


_kazoo_draws_from_its_own_random()


# Notebooks that use Spark: they connect to the test run's JVM, so they run where it is.
SPARK_NOTEBOOKS = "chapters/data_pipeline"


# The lab self-check grades each lab's tests against the reference in a subprocess, with the points;
# when it runs, the same tests collected straight from labs/ would run the reference a second time.
LAB_SELF_CHECK = "tests/labs/test_lab_selfcheck.py"


# First: pytest-xdist's own hook reads the xdist_group marks once, into each test's id (``...@spark``),
# so a mark added after it would send the test wherever the scheduler likes, with a JVM of its own.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if any(item.nodeid.startswith(LAB_SELF_CHECK) for item in items):
        _deselect(config, items, lambda item: item.nodeid.startswith("labs/"))
    for item in items:
        if item.path.suffix == ".ipynb":
            item.add_marker(pytest.mark.notebooks)
        elif not any(item.get_closest_marker(tier) for tier in TIERS):
            item.add_marker(pytest.mark.unit)
        if item.get_closest_marker("spark") or _is_spark_notebook(item):
            # One JVM for the whole run: every test that uses Spark goes to the same xdist worker.
            item.add_marker(pytest.mark.xdist_group("spark"))


def _deselect(config: pytest.Config, items: list[pytest.Item], which) -> None:
    dropped = [item for item in items if which(item)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if not which(item)]


# The docs site's build executes every chapter notebook but the Spark labs' (tests/docs/site.py, as
# mkdocs.yml's execute_ignore), and a notebook whose cell raises fails the build, which every docs and
# browser test needs. In a run that builds the site, running those notebooks through nbmake as well
# would only run them twice; the notebooks tier alone still runs them all.
SITE_BUILD_SKIPS_NOTEBOOKS = NOT_EXECUTED


class _SiteBuildRunsTheChapterNotebooks:
    # Last, after ``-m`` has chosen the run's tiers: only a run that still builds the site drops them.
    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        if any("site" in getattr(item, "fixturenames", ()) for item in items):
            _deselect(config, items, _executed_by_the_site_build)


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(
        _SiteBuildRunsTheChapterNotebooks(), "site-build-runs-the-chapter-notebooks"
    )


def _executed_by_the_site_build(item: pytest.Item) -> bool:
    if item.path.suffix != ".ipynb":
        return False
    return not fnmatch.fnmatch(item.path.relative_to(ROOT).as_posix(), SITE_BUILD_SKIPS_NOTEBOOKS)


def _is_spark_notebook(item: pytest.Item) -> bool:
    return item.path.suffix == ".ipynb" and SPARK_NOTEBOOKS in item.path.as_posix()


# --- Spark: one JVM per test run ------------------------------------------------------------------
#
# Starting Spark costs several seconds, so the run starts it once, in the xdist worker that the
# "spark" group goes to, and serves it through Spark Connect: a lab's grading subprocess and a
# notebook's kernel connect to it (kafka_lite.spark.session() honours KAFKA_LITE_SPARK_REMOTE)
# instead of starting a JVM each. Inside such a subprocess the variable is already set and the
# fixture connects too. A missing Java or PySpark fails the tests with kafka_lite's message; Spark
# tests never skip.

_spark_session = None


def shared_spark():
    """The run's SparkSession, started on first use (and served through Spark Connect)."""
    global _spark_session
    if _spark_session is None:
        from kafka_lite.spark.session import REMOTE_ENV, session

        if os.environ.get(REMOTE_ENV):
            _spark_session = session()
        else:
            port = _free_port()
            _spark_session = session(app_name="kafka_lite tests", serve_connect=port)
            os.environ[REMOTE_ENV] = f"sc://127.0.0.1:{port}"
    return _spark_session


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def spark():
    """The test run's SparkSession, with the kafka_lite format registered."""
    return shared_spark()


def pytest_runtest_setup(item: pytest.Item) -> None:
    if _is_spark_notebook(item):
        shared_spark()  # the kernel inherits KAFKA_LITE_SPARK_REMOTE and connects
        # The lab notebooks run the learner's workspace, and refuse without one; the suite runs them
        # on kafka_lite's own lab modules, asked for by name (kafka_lite.spark.labs.learners_module).
        os.environ["KAFKA_LITE_LAB_CODE"] = "reference"


def pytest_runtest_teardown(item: pytest.Item) -> None:
    if _is_spark_notebook(item):
        os.environ.pop("KAFKA_LITE_LAB_CODE", None)  # only the lab notebooks run the reference by name


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _spark_session is not None:
        _spark_session.stop()
