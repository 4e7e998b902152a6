"""The REST server over real HTTP with no broker: it serves every path of Kafka 0.11's API, and a
worker that may not serve a request sends it to the worker its herder names, with Kafka's
``?forward=`` rule of two hops at most."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from kafka_lite.connect.runtime.distributed.request_target_exception import (
    NotLeaderException,
    RebalanceNeededException,
)
from kafka_lite.connect.runtime.herder import Created
from kafka_lite.connect.runtime.rest.entities import ConnectorInfo
from kafka_lite.connect.runtime.rest.resources import connectors_resource
from kafka_lite.connect.runtime.rest.rest_server import RestServer
from kafka_lite.connect.runtime.worker_config import StandaloneConfig
from kafka_lite.connect.util.connector_task_id import ConnectorTaskId

pytestmark = pytest.mark.unit

JSON = "org.apache.kafka.connect.json.JsonConverter"


class ScriptedHerder:
    """Answers the config requests the way a test sets: with a result, or an exception."""

    def __init__(self) -> None:
        self.answer: tuple[BaseException | None, object] = (None, None)
        self.requests: list[str] = []

    def _answer(self, request: str, callback) -> None:
        self.requests.append(request)
        error, result = self.answer
        if error is not None or result is not None:  # (None, None): never answers
            callback(error, result)

    def connectors(self, callback) -> None:
        self._answer("connectors", callback)

    def put_connector_config(self, conn_name, config, allow_replace, callback) -> None:
        self._answer(f"put {conn_name} {config}", callback)


def rest_server(herder: ScriptedHerder) -> RestServer:
    config = StandaloneConfig({"key.converter": JSON, "value.converter": JSON, "internal.key.converter": JSON,
                               "internal.value.converter": JSON, "offset.storage.file.filename": "unused",
                               "rest.host.name": "127.0.0.1", "rest.port": "0"})  # fmt: skip
    server = RestServer(config)
    server.start(herder)
    return server


@pytest.fixture(scope="module")
def workers():
    """Two workers, a and b, each a REST server over a scripted herder."""
    herders = {"a": ScriptedHerder(), "b": ScriptedHerder()}
    servers = {name: rest_server(herder) for name, herder in herders.items()}
    yield herders, {name: server.advertised_url() for name, server in servers.items()}
    for server in servers.values():
        server.stop()


@pytest.fixture
def a_and_b(workers):
    herders, urls = workers
    for herder in herders.values():
        herder.requests.clear()
    return herders["a"], herders["b"], urls["a"], urls["b"]


def request(url: str, method: str = "GET", body=None) -> tuple[int, object, str | None]:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as response:
            return response.status, json.loads(response.read() or b"null"), response.headers["Location"]
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read()), None


def test_a_request_the_worker_may_not_serve_is_answered_by_the_worker_it_names(a_and_b):
    a, b, a_url, b_url = a_and_b
    a.answer = (NotLeaderException("not the leader", forward_url=b_url), None)
    b.answer = (None, ["from-b"])
    assert request(a_url + "connectors") == (200, ["from-b"], None)
    assert a.requests == b.requests == ["connectors"]


def test_a_forwarded_create_keeps_the_other_workers_201_and_location(a_and_b):
    a, b, a_url, b_url = a_and_b
    a.answer = (NotLeaderException("not the leader", forward_url=b_url), None)
    b.answer = (None, Created(True, ConnectorInfo("c", {"name": "c"}, [ConnectorTaskId("c", 0)])))
    status, body, location = request(a_url + "connectors", "POST", {"name": "c", "config": {"tasks.max": 1}})
    assert (status, location) == (201, "/connectors/c")
    assert body == {"name": "c", "config": {"name": "c"}, "tasks": [{"connector": "c", "task": 0}]}
    # The config went on as a's resource completed it: strings, and the name added.
    assert b.requests == ["put c {'tasks.max': '1', 'name': 'c'}"]


def test_with_forward_false_a_worker_that_cannot_serve_answers_409(a_and_b):
    a, _, a_url, b_url = a_and_b
    a.answer = (NotLeaderException("not the leader", forward_url=b_url), None)
    status, body, _ = request(a_url + "connectors?forward=false")
    assert status == 409
    assert body == {"error_code": 409, "message": "Cannot complete request because of a conflicting operation "
                                                  "(e.g. worker rebalance)"}  # fmt: skip


def test_a_request_is_forwarded_twice_at_most(a_and_b):
    # a names b, b names a: the user's request goes to b with forward=true, back to a with
    # forward=false, and a, which still cannot serve it, answers 409 through b.
    a, b, a_url, b_url = a_and_b
    a.answer = (NotLeaderException("not the leader", forward_url=b_url), None)
    b.answer = (NotLeaderException("not the leader either", forward_url=a_url), None)
    status, body, _ = request(a_url + "connectors")
    assert status == 409 and "conflicting operation" in body["message"]
    assert a.requests == ["connectors", "connectors"] and b.requests == ["connectors"]


def test_a_stale_config_is_409_and_no_answer_in_time_is_500(a_and_b, monkeypatch):
    a, _, a_url, _ = a_and_b
    a.answer = (RebalanceNeededException("stale"), None)
    status, body, _ = request(a_url + "connectors")
    assert status == 409 and "stale configuration" in body["message"]
    a.answer = (None, None)  # the herder never calls back
    monkeypatch.setattr(connectors_resource, "REQUEST_TIMEOUT_MS", 50)
    assert request(a_url + "connectors")[:2] == (500, {"error_code": 500, "message": "Request timed out"})


# Kafka 0.11's ConnectorsResource, ConnectorPluginsResource and RootResource, path by path.
KAFKA_0_11_PATHS = {
    ("GET", "/"),
    ("GET", "/connectors"), ("POST", "/connectors"),
    ("GET", "/connectors/{connector}"), ("DELETE", "/connectors/{connector}"),
    ("GET", "/connectors/{connector}/config"), ("PUT", "/connectors/{connector}/config"),
    ("GET", "/connectors/{connector}/status"),
    ("POST", "/connectors/{connector}/restart"),
    ("PUT", "/connectors/{connector}/pause"), ("PUT", "/connectors/{connector}/resume"),
    ("GET", "/connectors/{connector}/tasks"), ("POST", "/connectors/{connector}/tasks"),
    ("GET", "/connectors/{connector}/tasks/{task}/status"),
    ("POST", "/connectors/{connector}/tasks/{task}/restart"),
    ("GET", "/connector-plugins"),
    ("PUT", "/connector-plugins/{connector_type}/config/validate"),
}  # fmt: skip


def test_the_server_serves_every_path_of_kafka_0_11_and_its_interactive_page(a_and_b):
    _, _, a_url, _ = a_and_b
    status, spec, _ = request(a_url + "openapi.json")  # what /docs shows, generated from the routes
    served = {(method.upper(), path) for path, methods in spec["paths"].items() for method in methods}
    assert (status, served) == (200, KAFKA_0_11_PATHS)
    with urllib.request.urlopen(a_url + "docs", timeout=10) as response:
        assert response.status == 200 and b"swagger" in response.read().lower()
