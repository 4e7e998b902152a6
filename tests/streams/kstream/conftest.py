"""Every test driver a DSL test made is closed when the test ends, whatever the test did with it."""

from __future__ import annotations

import pytest

from tests.streams.kstream.support import OPEN_DRIVERS


@pytest.fixture(autouse=True)
def close_the_drivers():
    yield
    while OPEN_DRIVERS:
        OPEN_DRIVERS.pop().close()  # does nothing to one the test closed itself
