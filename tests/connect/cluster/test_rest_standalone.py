"""Connect's REST API over real HTTP, served by a standalone worker on the test cluster: connectors
created, read, paused, resumed, restarted, replaced and deleted, and every bad request answered
with its status and ``{"error_code", "message"}``."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from kafka_lite.connect.runtime.rest.rest_server import RestServer
from kafka_lite.connect.runtime.standalone.standalone_herder import StandaloneHerder
from kafka_lite.connect.runtime.worker import Worker
from kafka_lite.connect.runtime.worker_config import StandaloneConfig
from kafka_lite.connect.storage.file_offset_backing_store import FileOffsetBackingStore
from kafka_lite.connect.util.connector_task_id import ConnectorTaskId
from tests.connect.cluster.test_standalone import lines_of, worker_config
from tests.support.topics import read_topic, topic_name
from tests.support.waiting import wait_until

pytestmark = pytest.mark.integration


class Api:
    """A client of one worker's REST API: ``(status, body)`` for each request, errors included."""

    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/")

    def call(self, method: str, path: str, body=None, raw: bytes | None = None):
        data = raw if raw is not None else None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})  # fmt: skip
        try:
            with urllib.request.urlopen(req, timeout=30) as response:
                self.location = response.headers["Location"]
                body = response.read()
                return response.status, json.loads(body) if body else None
        except urllib.error.HTTPError as e:
            self.location = None
            return e.code, json.loads(e.read())

    def get(self, path: str):
        return self.call("GET", path)

    def states(self, name: str) -> tuple[str, list[str]]:
        """The connector's state and its tasks', from ``GET .../status``."""
        status, body = self.get(f"/connectors/{name}/status")
        assert status == 200, body
        return body["connector"]["state"], [task["state"] for task in body["tasks"]]


@pytest.fixture(scope="module")
def worker(cluster, tmp_path_factory):
    """One standalone herder and its REST server on port 0, for the whole module."""
    directory = tmp_path_factory.mktemp("rest")
    config = worker_config(cluster.bootstrap_servers, directory / "offsets")
    config = StandaloneConfig({**config.originals, "rest.host.name": "127.0.0.1", "rest.port": "0"})
    herder = StandaloneHerder(Worker("rest-test", config, FileOffsetBackingStore()))
    herder.start()
    rest = RestServer(config)
    rest.start(herder)
    yield herder, Api(rest.advertised_url()), directory
    rest.stop()
    herder.stop()


def source_config(source: Path, topic: str) -> dict:
    return {"connector.class": "FileStreamSource", "tasks.max": 1, "file": str(source), "topic": topic}


def sink_config(sink: Path, topic: str) -> dict:
    return {"connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector", "file": str(sink),
            "topics": topic}  # fmt: skip


def append(path: Path, lines: list[str]) -> None:
    with path.open("a") as f:
        f.write("".join(line + "\n" for line in lines))


def test_a_pipeline_is_created_paused_resumed_restarted_replaced_and_deleted(cluster, worker):
    herder, api, directory = worker
    topic = topic_name("rest-pipeline")
    cluster.create_topic(topic, partitions=1)
    source, sink = directory / "in.txt", directory / "out.txt"
    append(source, ["one", "two"])

    status, info = api.call(
        "POST", "/connectors", {"name": "rest-source", "config": source_config(source, topic)}
    )
    assert (status, api.location) == (201, "/connectors/rest-source")
    assert info == {"name": "rest-source", "tasks": [{"connector": "rest-source", "task": 0}],
                    "config": {**{k: str(v) for k, v in source_config(source, topic).items()},
                               "name": "rest-source"}}  # fmt: skip
    assert (
        api.call("POST", "/connectors", {"name": "rest-sink", "config": sink_config(sink, topic)})[0] == 201
    )
    assert api.get("/connectors")[1] == ["rest-sink", "rest-source"]
    assert api.get("/connectors/rest-source") == (200, info)
    assert api.get("/connectors/rest-source/config") == (200, info["config"])
    status, tasks = api.get("/connectors/rest-source/tasks")
    assert status == 200 and tasks[0]["id"] == {"connector": "rest-source", "task": 0}
    assert tasks[0]["config"]["task.class"].endswith("FileStreamSourceTask")
    wait_until(lambda: lines_of(sink) == ["one", "two"], what="the lines in the sink file")
    assert api.states("rest-source") == ("RUNNING", ["RUNNING"])
    assert api.get("/connectors/rest-sink/tasks/0/status") == (
        200, {"id": 0, "state": "RUNNING", "worker_id": "rest-test"})  # fmt: skip

    # Paused, the sink task's consumer pauses its partitions: what the source adds stays in the topic.
    assert api.call("PUT", "/connectors/rest-sink/pause") == (202, None)
    wait_until(lambda: api.states("rest-sink") == ("PAUSED", ["PAUSED"]), what="the sink PAUSED")
    consumer = herder.worker.tasks[ConnectorTaskId("rest-sink", 0)].consumer
    assert consumer.paused() == consumer.assignment() != set()
    append(source, ["three"])
    wait_until(
        lambda: len(read_topic(cluster.bootstrap_servers, topic)) == 3, what="the third line in the topic"
    )
    assert lines_of(sink) == ["one", "two"]
    assert api.call("PUT", "/connectors/rest-sink/resume") == (202, None)
    wait_until(lambda: lines_of(sink) == ["one", "two", "three"], what="the third line in the sink file")
    assert api.states("rest-sink") == ("RUNNING", ["RUNNING"])

    # Paused, the source task stops polling; resumed, it reads on from where it was.
    assert api.call("PUT", "/connectors/rest-source/pause")[0] == 202
    wait_until(lambda: api.states("rest-source") == ("PAUSED", ["PAUSED"]), what="the source PAUSED")
    api.call("PUT", "/connectors/rest-source/resume")
    append(source, ["four"])
    wait_until(lambda: lines_of(sink)[-1:] == ["four"], what="the line added after the resume")

    # A restarted task is a new task, running; a restarted connector runs again.
    before = herder.worker.tasks[ConnectorTaskId("rest-sink", 0)]
    assert api.call("POST", "/connectors/rest-sink/tasks/0/restart") == (204, None)
    assert herder.worker.tasks[ConnectorTaskId("rest-sink", 0)] is not before
    wait_until(lambda: api.states("rest-sink") == ("RUNNING", ["RUNNING"]), what="the restarted task RUNNING")
    assert api.call("POST", "/connectors/rest-sink/restart") == (204, None)
    assert api.states("rest-sink")[0] == "RUNNING"

    # PUT replaces an existing connector (200) and creates a new one (201).
    replaced = {**sink_config(directory / "out2.txt", topic), "name": "rest-sink"}
    status, body = api.call("PUT", "/connectors/rest-sink/config", replaced)
    assert (status, api.location, body["config"]["file"]) == (200, None, str(directory / "out2.txt"))
    append(source, ["five"])  # the group's committed offsets stay: only new lines go to the new file
    wait_until(lambda: lines_of(directory / "out2.txt") == ["five"], what="the replaced sink's new file")
    status, body = api.call(
        "PUT", "/connectors/rest-other/config", source_config(directory / "none.txt", topic)
    )
    assert (status, api.location, body["name"]) == (201, "/connectors/rest-other", "rest-other")

    for name in ("rest-source", "rest-sink", "rest-other"):
        assert api.call("DELETE", f"/connectors/{name}") == (204, None)
        assert api.get(f"/connectors/{name}")[0] == 404
        assert api.get(f"/connectors/{name}/status")[0] == 404
    assert api.get("/connectors") == (200, [])


def test_a_bad_connector_config_is_refused_whole(worker):
    _, api, _ = worker
    before = api.get("/connectors")
    status, body = api.call(
        "POST", "/connectors", {"name": "bad", "config": {"connector.class": "NoSuchConnector"}}
    )
    assert status == 400 and "known connectors: FileStreamSinkConnector" in body["message"]
    assert body["error_code"] == 400
    status, body = api.call("POST", "/connectors", {"name": "bad", "config": {"connector.class": "FileStreamSink",
                                                                               "file": "x"}})  # fmt: skip
    assert status == 400
    assert "Missing required configuration 'topics', which has no default value." in body["message"]
    assert api.get("/connectors") == before


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "message"),
    [
        ("POST", "/connectors", b'{"name": "x", "config": {', 400, "the body is not valid JSON"),
        ("POST", "/connectors", {"config": {}}, 400, "name: Field required"),
        ("POST", "/connectors", {"name": "a/b", "config": {}}, 400, "connector name should not contain '/'"),
        ("PUT", "/connectors/x/config", {"name": "y"}, 400,
         "Connector name configuration (y) doesn't match connector name in the URL (x)"),
        ("POST", "/connectors/x/tasks", [{}], 500, "does not support externally setting task configurations"),
        ("GET", "/no/such/path", None, 404, "Not Found"),
    ],
)  # fmt: skip
def test_a_bad_request_is_answered_with_its_status_and_message(worker, method, path, body, status, message):
    _, api, _ = worker
    raw = body if isinstance(body, bytes) else None
    answer = api.call(method, path, None if raw else body, raw)
    assert answer[0] == status and message in answer[1]["message"], answer
    assert answer[1]["error_code"] == status


def test_a_name_taken_is_409(worker):
    _, api, directory = worker
    config = {"name": "taken", "config": source_config(directory / "missing.txt", "t")}
    assert api.call("POST", "/connectors", config)[0] == 201
    try:
        assert api.call("POST", "/connectors", config) == (409, {"error_code": 409,
                                                                  "message": "Connector taken already exists"})  # fmt: skip
    finally:
        api.call("DELETE", "/connectors/taken")


@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", ""), ("DELETE", ""), ("GET", "/config"), ("GET", "/status"), ("POST", "/restart"),
     ("PUT", "/pause"), ("PUT", "/resume"), ("GET", "/tasks"), ("GET", "/tasks/0/status"),
     ("POST", "/tasks/0/restart")],
)  # fmt: skip
def test_an_unknown_connector_is_404_on_every_path(worker, method, path):
    _, api, _ = worker
    status, body = api.call(method, f"/connectors/nobody{path}")
    assert status == 404 and body["error_code"] == 404 and "nobody" in body["message"], body


def test_validate_shows_every_missing_setting_and_plugins_lists_the_connectors(worker):
    _, api, _ = worker
    for plugin in ("FileStreamSourceConnector", "org.apache.kafka.connect.file.FileStreamSourceConnector"):
        status, body = api.call("PUT", f"/connector-plugins/{plugin}/config/validate",
                                {"connector.class": "FileStreamSource", "name": "v"})  # fmt: skip
        assert status == 200 and body["error_count"] == 2, body
        errors = {
            c["definition"]["name"]: c["value"]["errors"] for c in body["configs"] if c["value"]["errors"]
        }
        assert set(errors) == {"file", "topic"}
    status, body = api.call("PUT", "/connector-plugins/FileStreamSink/config/validate",
                            {"connector.class": "FileStreamSource"})  # fmt: skip
    assert status == 400 and "does not match request type FileStreamSink" in body["message"]
    assert api.get("/connector-plugins") == (200, [
        {"class": "kafka_lite.connect.sqlite.SqliteSinkConnector", "type": "sink", "version": "0.10.1.0"},
        {"class": "kafka_lite.connect.sqlite.SqliteSourceConnector", "type": "source", "version": "0.10.1.0"},
        {"class": "org.apache.kafka.connect.file.FileStreamSinkConnector", "type": "sink", "version": "0.10.1.0"},
        {"class": "org.apache.kafka.connect.file.FileStreamSourceConnector", "type": "source",
         "version": "0.10.1.0"},
    ])  # fmt: skip
    assert api.get("/")[1]["version"]
