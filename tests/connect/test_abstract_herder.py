"""What every herder shares, without a broker: a config validated setting by setting, with every
error at once; statuses written by the listeners and read back; the plugins listed."""

from __future__ import annotations

import pytest

from kafka_lite.connect.errors import NotFoundException
from kafka_lite.connect.runtime.abstract_status import State, TaskStatus
from kafka_lite.connect.runtime.rest.errors.connect_rest_exception import BadRequestException
from kafka_lite.connect.runtime.standalone.standalone_herder import StandaloneHerder
from kafka_lite.connect.runtime.worker import Worker
from kafka_lite.connect.runtime.worker_config import StandaloneConfig
from kafka_lite.connect.storage.memory_status_backing_store import MemoryStatusBackingStore
from kafka_lite.connect.storage.offset_backing_store import MemoryOffsetBackingStore
from kafka_lite.connect.util.callback import FutureCallback
from kafka_lite.connect.util.connector_task_id import ConnectorTaskId

pytestmark = pytest.mark.unit

JSON = "org.apache.kafka.connect.json.JsonConverter"
SINK = {"name": "s", "connector.class": "FileStreamSink", "file": "out.txt", "topics": "a,b"}


@pytest.fixture
def herder() -> StandaloneHerder:
    config = StandaloneConfig({"key.converter": JSON, "value.converter": JSON, "internal.key.converter": JSON,
                               "internal.value.converter": JSON, "offset.storage.file.filename": "unused"})  # fmt: skip
    return StandaloneHerder(Worker("w1", config, MemoryOffsetBackingStore()), MemoryStatusBackingStore())


def errors_of(infos) -> dict[str, list[str]]:
    return {info.definition.name: info.value.errors for info in infos.configs if info.value.errors}


def test_a_good_config_has_no_errors_and_every_setting_is_shown(herder):
    infos = herder.validate_connector_config(SINK)
    assert infos.error_count == 0 and infos.name == "FileStreamSink"
    shown = {info.definition.name: info.value.value for info in infos.configs}
    assert shown["topics"] == "a,b" and shown["tasks.max"] == "1" and shown["file"] == "out.txt"
    assert infos.to_json()["configs"][0]["definition"]["type"] == "STRING"


def test_every_missing_setting_is_an_error_of_its_own(herder):
    config = {k: v for k, v in SINK.items() if k not in ("topics", "file")}
    infos = herder.validate_connector_config({**config, "tasks.max": "zero"})
    assert infos.error_count == 3
    assert errors_of(infos) == {
        "topics": ["Missing required configuration 'topics', which has no default value."],
        "file": ["Missing required configuration 'file', which has no default value."],
        "tasks.max": [
            "Invalid value 'zero' for configuration tasks.max: Expected value to be a 32-bit integer"
        ],
    }


def test_a_config_without_a_known_connector_class_is_a_bad_request(herder):
    with pytest.raises(BadRequestException, match="contains no connector type"):
        herder.validate_connector_config({"name": "x"})
    with pytest.raises(BadRequestException, match="known connectors: FileStreamSinkConnector"):
        herder.validate_connector_config({"name": "x", "connector.class": "Nope"})


def test_an_invalid_config_is_refused_whole(herder):
    created = FutureCallback()
    herder.put_connector_config("s", {k: v for k, v in SINK.items() if k != "file"}, False, created)
    with pytest.raises(BadRequestException, match=r"contains the following 1 error\(s\):\nMissing required"):
        created.result(0)
    listed = FutureCallback()
    herder.connectors(listed)
    assert listed.result(0) == []


def test_the_listeners_write_statuses_that_connector_status_reads(herder):
    task = ConnectorTaskId("c", 0)
    herder.on_startup("c")
    herder.on_startup(task)
    herder.on_pause(ConnectorTaskId("c", 1))
    status = herder.connector_status("c").to_json()
    assert status == {"name": "c", "connector": {"state": "RUNNING", "worker_id": "w1"},
                      "tasks": [{"id": 0, "state": "RUNNING", "worker_id": "w1"},
                                {"id": 1, "state": "PAUSED", "worker_id": "w1"}]}  # fmt: skip
    herder.on_failure(task, ValueError("broken"))
    failed = herder.task_status(task)
    assert failed.state == "FAILED" and "ValueError: broken" in failed.trace
    assert herder.status_backing_store.get(task) == TaskStatus(task, State.FAILED, "w1", 0, failed.trace)
    herder.on_deletion("c")
    with pytest.raises(NotFoundException, match="No status found for connector c"):
        herder.connector_status("c")
    with pytest.raises(NotFoundException, match="No status found for task c-0"):
        herder.task_status(task)


def test_the_plugins_are_kafkas_file_connectors_and_the_sqlite_ones(herder):
    plugins = [p.to_json() for p in herder.connector_plugins()]
    assert [(p["class"], p["type"]) for p in plugins] == [
        ("kafka_lite.connect.sqlite.SqliteSinkConnector", "sink"),
        ("kafka_lite.connect.sqlite.SqliteSourceConnector", "source"),
        ("org.apache.kafka.connect.file.FileStreamSinkConnector", "sink"),
        ("org.apache.kafka.connect.file.FileStreamSourceConnector", "source"),
    ]
