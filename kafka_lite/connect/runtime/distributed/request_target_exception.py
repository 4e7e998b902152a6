"""Why a worker cannot answer a request itself, and where the request should go instead.

Mirrors: org.apache.kafka.connect.runtime.distributed.RequestTargetException, NotLeaderException,
         NotAssignedException and RebalanceNeededException
         (connect/runtime/src/main/java/org/apache/kafka/connect/runtime/distributed/, Kafka 0.11)
Book:    chapter 8, 8.3
Differs: nothing beyond being Python exceptions.

In a distributed Connect cluster only the leader worker writes configs, and only the worker
running a task restarts it. A request that reaches another worker fails with a
``RequestTargetException`` carrying the REST URL of the worker that can serve it; the REST
resource forwards the request there (at most two hops). ``RebalanceNeededException`` means the
worker's view of the configs is stale; the REST API answers it with 409 Conflict.
"""

from __future__ import annotations

from kafka_lite.connect.errors import ConnectException


class RequestTargetException(ConnectException):
    """The request must be served by the worker at ``forward_url`` (None: no worker is known yet)."""

    def __init__(self, message: str, forward_url: str | None) -> None:
        super().__init__(message)
        self.forward_url = forward_url


class NotLeaderException(RequestTargetException):
    """Only the group's leader worker may serve this request (config writes, task configs)."""


class NotAssignedException(RequestTargetException):
    """The connector or task runs on another worker, which must serve this request (a restart)."""


class RebalanceNeededException(ConnectException):
    """The worker's config state is behind the config topic; the request waits for a rebalance."""
