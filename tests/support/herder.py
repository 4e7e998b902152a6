"""Asking a Connect herder from a test as a REST client would: its callback waited for, and a request
refused while a rebalance is due asked again."""

from __future__ import annotations

import time

from kafka_lite.connect.runtime.distributed.request_target_exception import RebalanceNeededException
from kafka_lite.connect.util.callback import FutureCallback


def call(method, *args, timeout_s: float = 30):
    """A herder request, waited for: its result, or its exception raised. A request made while a
    rebalance is due is refused (the REST API's 409); like a REST client, ask again once it is done."""
    deadline = time.monotonic() + timeout_s
    while True:
        future = FutureCallback()
        method(*args, future)
        try:
            return future.result(max(0.1, deadline - time.monotonic()))
        except RebalanceNeededException:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)  # polling the herder, bounded by the deadline
