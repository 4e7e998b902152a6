"""Suite-wide test configuration: tier markers and the hypothesis profile.

Every test belongs to one tier (unit, integration, compat, spark, notebooks, docs, browser, labs),
so each tier runs alone with ``pytest -m TIER``. A chapter notebook (collected by nbmake) is in the
``notebooks`` tier; any other test that names no tier is a unit test. This file sits at the top of
the repository so the rule covers ``tests/``, ``labs/`` and ``chapters/`` alike.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

TIERS = ("unit", "integration", "compat", "spark", "notebooks", "docs", "browser", "labs")

# Property tests are derandomized in CI so a red run can be reproduced exactly; locally they explore.
settings.register_profile(
    "ci", derandomize=True, deadline=None, max_examples=150, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", deadline=None, max_examples=100)
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


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.suffix == ".ipynb":
            item.add_marker(pytest.mark.notebooks)
        elif not any(item.get_closest_marker(tier) for tier in TIERS):
            item.add_marker(pytest.mark.unit)
