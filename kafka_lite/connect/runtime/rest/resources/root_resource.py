"""``GET /``: which version of Connect this worker runs.

Mirrors: org.apache.kafka.connect.runtime.rest.resources.RootResource
         (connect/runtime/src/main/java/org/apache/kafka/connect/runtime/rest/resources/RootResource.java, Kafka 0.11)
Book:    chapter 8, 8.3
Differs: the version is kafka_lite's; the commit is ``unknown``, as Kafka's is when its build
         recorded none.

The cheapest call of the API, and so the one a script or a load balancer uses to see that a
worker is up.
"""

from __future__ import annotations

import importlib.metadata
from typing import Any

from fastapi import APIRouter

from kafka_lite.connect.runtime.rest.entities import ServerInfo


def version() -> str:
    try:
        return importlib.metadata.version("kafka-lite")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


router = APIRouter(tags=["root"])


@router.get("/", summary="The worker's version")
def server_info() -> dict[str, Any]:
    return ServerInfo(version(), "unknown").to_json()
