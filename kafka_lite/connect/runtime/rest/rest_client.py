"""One HTTP request from a worker to another worker's REST API: how a request is forwarded.

Mirrors: org.apache.kafka.connect.runtime.rest.RestServer.httpRequest and RestServer.HttpResponse
         (connect/runtime/src/main/java/org/apache/kafka/connect/runtime/rest/RestServer.java, Kafka 0.11)
Book:    chapter 8, 8.3
Differs: a module of its own (Kafka's static method sits in RestServer, which here would make the
         server and the resources import each other); the standard library's ``urllib`` is the
         client, where Kafka uses Jetty's.

The body goes as JSON and the answer is parsed as JSON (a 204 has none). An error status is
raised again as a ``ConnectRestException`` with the other worker's status and message, so the
client of the first worker sees the answer the second one gave.
"""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

from kafka_lite.connect.errors import ConnectException
from kafka_lite.connect.runtime.rest.errors.connect_rest_exception import ConnectRestException

log = logging.getLogger(__name__)

# As long as the forwarding resource waits for its own herder: the other worker has the same deadline.
HTTP_REQUEST_TIMEOUT_S = 90


@dataclass
class HttpResponse:
    status: int
    headers: dict[str, str]
    body: Any


def http_request(url: str, method: str, body: Any = None) -> HttpResponse:
    """Send ``body`` as JSON to ``url``; a status of 400 or more raises ``ConnectRestException``."""
    log.debug("Sending %s with input %s to %s", method, body, url)
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method, headers={"Accept": "application/json"})
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=HTTP_REQUEST_TIMEOUT_S) as response:
            raw = response.read()
            return HttpResponse(response.status, dict(response.headers), json.loads(raw) if raw else None)
    except urllib.error.HTTPError as e:
        raise _error_of(e.code, e.read()) from None
    except OSError as e:
        log.error("IO error forwarding REST request: %s", e)
        raise ConnectRestException(500, f"IO Error trying to forward REST request: {e}") from e
    except ValueError as e:
        raise ConnectException(f"The answer of {url} is not JSON: {e}") from e


def _error_of(status: int, raw: bytes) -> ConnectRestException:
    """The other worker's error answer, ``{"error_code": N, "message": "..."}``, as an exception."""
    try:
        error = json.loads(raw)
        return ConnectRestException(status, error["message"], error["error_code"])
    except (ValueError, KeyError, TypeError):
        return ConnectRestException(
            status, f"Unexpected status code when handling forwarded request: {status}"
        )
