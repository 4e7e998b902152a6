"""Single message transformations in the runtime, without a broker: the chain applies them in
order and stops at a drop; a connector config's ``transforms`` brings each alias's type and
settings (Kafka's ``ConnectorConfig.enrich``), refused with Kafka's messages when wrong, and
validated setting by setting through the herder and the REST API; both worker tasks run the
chain, a source task before its converters and a sink task after them."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from kafka_lite.common.config import ConfigDef, Range, Type
from kafka_lite.common.errors import ConfigException
from kafka_lite.common.record.constants import TimestampType
from kafka_lite.connect.data.schema import STRING_SCHEMA
from kafka_lite.connect.runtime import connector_factory
from kafka_lite.connect.runtime.connector_config import (
    CONNECTOR_CONFIG_DEF,
    ConnectorConfig,
    SinkConnectorConfig,
    enrich,
)
from kafka_lite.connect.runtime.rest.rest_server import RestServer
from kafka_lite.connect.runtime.standalone.standalone_herder import StandaloneHerder
from kafka_lite.connect.runtime.target_state import TargetState
from kafka_lite.connect.runtime.transformation_chain import TransformationChain
from kafka_lite.connect.runtime.worker import Worker
from kafka_lite.connect.runtime.worker_config import StandaloneConfig
from kafka_lite.connect.runtime.worker_sink_task import WorkerSinkTask
from kafka_lite.connect.sink.sink_record import SinkRecord
from kafka_lite.connect.sink.sink_task import SinkTask
from kafka_lite.connect.source.source_record import SourceRecord
from kafka_lite.connect.storage.memory_status_backing_store import MemoryStatusBackingStore
from kafka_lite.connect.storage.offset_backing_store import MemoryOffsetBackingStore
from kafka_lite.connect.transforms.transformation import Transformation
from kafka_lite.connect.util.connector_task_id import ConnectorTaskId
from kafka_lite.consumer.consumer_record import ConsumerRecord
from tests.connect.recording_listener import RecordingListener
from tests.connect.test_worker_source_task import CommitRecording, json_converter, new_worker_task

pytestmark = pytest.mark.unit

JSON = "org.apache.kafka.connect.json.JsonConverter"
APPEND = "test.transforms.Append"
DROP = "test.transforms.Drop"


class Append(Transformation):
    """Appends ``suffix`` to a string value, ``times`` times; notes its records and its close."""

    def __init__(self) -> None:
        self.seen: list[object] = []
        self.closed = False

    def config(self) -> ConfigDef:
        return (
            ConfigDef()
            .define("suffix", Type.STRING, doc="What to append.")
            .define("times", Type.INT, 1, Range.at_least(1), doc="How many times.")
        )

    def configure(self, configs):
        values = self.config().parse(configs, allow_unknown=True)
        self.suffix, self.times = values["suffix"], values["times"]

    def apply(self, record):
        self.seen.append(record.value)
        value = record.value + self.suffix * self.times
        return record.new_record(record.topic, record.kafka_partition, record.key_schema, record.key,
                                 record.value_schema, value, record.timestamp)  # fmt: skip

    def close(self):
        self.closed = True


class Drop(Transformation):
    """Drops the records whose value is ``value``."""

    def config(self) -> ConfigDef:
        return ConfigDef().define("value", Type.STRING, doc="The value of the records to drop.")

    def configure(self, configs):
        self.value = self.config().parse(configs, allow_unknown=True)["value"]

    def apply(self, record):
        return None if record.value == self.value else record


class NoConfig(Transformation):
    """A transformation whose ``config()`` fails."""

    def config(self):
        raise RuntimeError("no config today")

    def configure(self, configs):
        pass

    def apply(self, record):
        return record


@pytest.fixture(autouse=True)
def test_transformations(monkeypatch):
    for name, cls in ((APPEND, Append), (DROP, Drop), ("test.transforms.NoConfig", NoConfig)):
        monkeypatch.setitem(connector_factory.TRANSFORMATIONS, name, cls)


def configured(cls, **configs) -> Transformation:
    transformation = cls()
    transformation.configure(configs)
    return transformation


def line(value: str, position: int = 0) -> SourceRecord:
    return SourceRecord({"filename": "in.txt"}, {"position": position}, "lines", None, None, None,
                        STRING_SCHEMA, value)  # fmt: skip


# ---- the chain ----


def test_the_chain_applies_each_transformation_in_order_to_the_previous_ones_output():
    first, second = configured(Append, suffix="-a"), configured(Append, suffix="-b", times="2")
    out = TransformationChain([first, second]).apply(line("x"))
    assert out.value == "x-a-b-b"
    assert (first.seen, second.seen) == (["x"], ["x-a"])
    # The record keeps what only a source record has: new_record carries it over.
    assert (out.source_partition, out.source_offset) == ({"filename": "in.txt"}, {"position": 0})


def test_a_dropped_record_is_none_and_the_transformations_after_the_drop_never_see_it():
    before, after = configured(Append, suffix="!"), configured(Append, suffix="?")
    chain = TransformationChain([before, configured(Drop, value="skip!"), after])
    assert chain.apply(line("skip")) is None
    assert chain.apply(line("keep")).value == "keep!?"
    assert (before.seen, after.seen) == (["skip", "keep"], ["keep!"])


def test_closing_the_chain_closes_every_transformation_and_no_op_passes_records_unchanged():
    transformations = [configured(Append, suffix="a"), configured(Append, suffix="b")]
    TransformationChain(transformations).close()
    assert [t.closed for t in transformations] == [True, True]
    record = line("x")
    assert TransformationChain.no_op().apply(record) is record


# ---- ConnectorConfig: enrich and transformations ----

BASE = {"name": "src", "connector.class": "FileStreamSource"}


def test_enrich_adds_each_aliases_type_and_its_transformations_settings_under_its_prefix():
    props = {**BASE, "transforms": "a, d", "transforms.a.type": APPEND, "transforms.d.type": DROP}
    keys = enrich(CONNECTOR_CONFIG_DEF, props, require_full_config=True).keys
    added = [name for name in keys if name not in CONNECTOR_CONFIG_DEF.keys]
    assert added == ["transforms.a.type", "transforms.a.suffix", "transforms.a.times",
                     "transforms.d.type", "transforms.d.value"]  # fmt: skip
    assert keys["transforms.a.times"].default == 1 and keys["transforms.a.suffix"].required
    assert "transforms.a.type" not in CONNECTOR_CONFIG_DEF.keys, "the base definition is left as it was"
    assert enrich(CONNECTOR_CONFIG_DEF, BASE, require_full_config=True) is CONNECTOR_CONFIG_DEF


def test_transformations_are_new_configured_instances_in_the_configs_order():
    props = {**BASE, "transforms": "d,a", "transforms.a.type": APPEND, "transforms.a.suffix": "+",
             "transforms.a.times": "3", "transforms.d.type": DROP, "transforms.d.value": "x"}  # fmt: skip
    config = ConnectorConfig(props)
    first, second = config.transformations()
    assert (type(first), type(second)) == (Drop, Append)
    assert (first.value, second.suffix, second.times) == ("x", "+", 3)
    assert config.transformations()[1] is not second, "each task gets instances of its own"
    assert ConnectorConfig(BASE).transformations() == []


@pytest.mark.parametrize(
    ("transforms", "message"),
    [
        ({"transforms": "a"},
         "Missing required configuration 'transforms.a.type', which has no default value."),
        ({"transforms": "a", "transforms.a.type": "org.example.Nope"},
         "Invalid value 'org.example.Nope' for configuration transforms.a.type: "
         "Class org.example.Nope could not be found."),
        ({"transforms": "a,a", "transforms.a.type": APPEND, "transforms.a.suffix": "!"},
         "Invalid value ['a', 'a'] for configuration transforms: Duplicate alias provided."),
        ({"transforms": "a", "transforms.a.type": APPEND},
         "Missing required configuration 'transforms.a.suffix', which has no default value."),
        # The transformation's own validator names its own setting, as Kafka's embedded validator does.
        ({"transforms": "a", "transforms.a.type": APPEND, "transforms.a.suffix": "!", "transforms.a.times": "0"},
         "Invalid value 0 for configuration times: Value must be at least 1"),
        ({"transforms": "a", "transforms.a.type": "test.transforms.NoConfig"},
         "Invalid value 'test.transforms.NoConfig' for configuration transforms.a.type: "
         "Error getting config definition from Transformation: no config today"),
    ],
)  # fmt: skip
def test_a_bad_transforms_config_is_refused_with_kafkas_message(transforms, message):
    with pytest.raises(ConfigException) as e:
        ConnectorConfig({**BASE, **transforms})
    assert str(e.value) == message
    with pytest.raises(ConfigException) as e:
        SinkConnectorConfig({**BASE, "topics": "t", **transforms})
    assert str(e.value) == message


# ---- validation through the herder and the REST API ----


@pytest.fixture
def herder() -> StandaloneHerder:
    config = StandaloneConfig({"key.converter": JSON, "value.converter": JSON, "internal.key.converter": JSON,
                               "internal.value.converter": JSON, "offset.storage.file.filename": "unused",
                               "rest.host.name": "127.0.0.1", "rest.port": "0"})  # fmt: skip
    return StandaloneHerder(Worker("w1", config, MemoryOffsetBackingStore()), MemoryStatusBackingStore())


SOURCE = {**BASE, "file": "in.txt", "topic": "lines"}


def errors_of(infos) -> dict[str, list[str]]:
    return {info.definition.name: info.value.errors for info in infos.configs if info.value.errors}


def test_validation_shows_each_transformations_settings_and_puts_each_error_on_its_key(herder):
    config = {**SOURCE, "transforms": "a,b,c", "transforms.a.type": APPEND, "transforms.a.times": "0",
              "transforms.c.type": "org.example.Nope"}  # fmt: skip
    infos = herder.validate_connector_config(config)
    assert errors_of(infos) == {
        "transforms.a.suffix": ["Missing required configuration 'transforms.a.suffix', which has no default value."],
        "transforms.a.times": ["Invalid value 0 for configuration times: Value must be at least 1"],
        "transforms.b.type": ["Missing required configuration 'transforms.b.type', which has no default value."],
        "transforms.c.type": ["Invalid value 'org.example.Nope' for configuration transforms.c.type: "
                              "Class org.example.Nope could not be found."],
    }  # fmt: skip
    assert infos.error_count == 4
    shown = [info.definition.name for info in infos.configs]
    assert shown.index("transforms") < shown.index("transforms.a.type") < shown.index("transforms.a.times")
    good = {**SOURCE, "transforms": "a", "transforms.a.type": APPEND, "transforms.a.suffix": "!"}
    assert herder.validate_connector_config(good).error_count == 0


def test_a_duplicate_alias_is_an_error_on_transforms_and_refuses_the_connector(herder):
    config = {**SOURCE, "transforms": "d,d", "transforms.d.type": DROP, "transforms.d.value": "x"}
    assert errors_of(herder.validate_connector_config(config)) == {
        "transforms": ["Invalid value ['d', 'd'] for configuration transforms: Duplicate alias provided."]
    }
    refused = []
    herder.put_connector_config("src", config, False, lambda error, result: refused.append(error))
    assert "Duplicate alias provided." in str(refused[0])
    assert herder.connector_configs == {}


def test_the_rest_api_validates_a_transformations_config(herder):
    server = RestServer(herder.worker.config)
    server.start(herder)
    try:
        body = {**SOURCE, "transforms": "a", "transforms.a.type": APPEND, "transforms.a.times": "x"}
        request = urllib.request.Request(
            server.advertised_url() + "connector-plugins/FileStreamSource/config/validate",
            data=json.dumps(body).encode(), method="PUT", headers={"Content-Type": "application/json"},
        )  # fmt: skip
        with urllib.request.urlopen(request, timeout=10) as response:
            answer = json.loads(response.read())
    finally:
        server.stop()
    assert answer["error_count"] == 2
    errors = {c["value"]["name"]: c["value"]["errors"] for c in answer["configs"] if c["value"]["errors"]}
    assert errors == {
        "transforms.a.suffix": ["Missing required configuration 'transforms.a.suffix', which has no default value."],
        "transforms.a.times": ["Invalid value 'x' for configuration transforms.a.times: "
                               "Expected value to be a 32-bit integer"],
    }  # fmt: skip
    definition = next(
        c["definition"] for c in answer["configs"] if c["definition"]["name"] == "transforms.a.type"
    )
    assert definition["documentation"] == "Class for the 'a' transformation."


# ---- the worker tasks ----


def test_a_source_task_sends_what_the_chain_returns_and_tells_the_task_of_a_dropped_record_at_once():
    store = MemoryOffsetBackingStore()
    store.start()
    try:
        task = CommitRecording()
        append = configured(Append, suffix="!")
        worker_task = new_worker_task(
            store, task=task, chain=TransformationChain([configured(Drop, value="b"), append])
        )
        worker_task.to_send = [line("a", 1), line("b", 2), line("c", 3)]
        assert worker_task.send_records()
        # The converters saw the transformed records: "b" never reached them.
        values = [json.loads(value)["payload"] for value, _ in worker_task.producer.sent]
        assert values == ["a!", "c!"]
        assert [r.value for r in task.committed] == ["b"], "a dropped record is done with at once"
        worker_task.producer.sent[0][1].acknowledge(0)
        # The task is told of its own record, as it polled it, not of the transformed one.
        assert [r.value for r in task.committed] == ["b", "a"]
        worker_task.close()
        assert append.closed
    finally:
        store.stop()


class PutRecording(SinkTask):
    def __init__(self) -> None:
        super().__init__()
        self.put_records: list[SinkRecord] = []

    def version(self):
        return "test"

    def start(self, props):
        pass

    def put(self, records):
        self.put_records.extend(records)

    def stop(self):
        pass


def message(offset: int, value: str) -> ConsumerRecord:
    return ConsumerRecord("lines", 0, -1, offset, 1000 + offset, TimestampType.CREATE_TIME, b'{"schema":null,"payload":null}',
                          json.dumps({"schema": {"type": "string", "optional": False}, "payload": value}).encode(),
                          (), None, 0, 0, 0)  # fmt: skip


def test_a_sink_task_puts_what_the_chain_makes_of_the_converted_records():
    task = PutRecording()
    append = configured(Append, suffix="!")
    config = StandaloneConfig({"key.converter": JSON, "value.converter": JSON, "internal.key.converter": JSON,
                               "internal.value.converter": JSON, "offset.storage.file.filename": "unused"})  # fmt: skip
    chain = TransformationChain([append, configured(Drop, value="b!")])
    worker_task = WorkerSinkTask(ConnectorTaskId("sink", 0), task, RecordingListener(), TargetState.STARTED,
                                 config, json_converter(True), json_converter(True), chain, None)  # fmt: skip
    worker_task.convert_messages([message(5, "a"), message(6, "b"), message(7, "c")])
    worker_task.deliver_messages()
    # The transformation was given Connect data (a str), not the bytes the consumer read.
    assert append.seen == ["a", "b", "c"]
    assert [(r.value, r.kafka_offset, r.timestamp) for r in task.put_records] == [
        ("a!", 5, 1005),
        ("c!", 7, 1007),
    ]
    worker_task.close()
    assert append.closed


def test_the_worker_gives_each_task_a_chain_built_from_its_connectors_config(herder):
    props = {**SOURCE, "transforms": "a", "transforms.a.type": APPEND, "transforms.a.suffix": "!"}
    sink_task = connector_factory.connector_class("FileStreamSink")().task_class()()
    chains = [
        herder.worker._build_worker_task(
            ConnectorConfig(props), ConnectorTaskId("src", n), sink_task, RecordingListener(),
            TargetState.STARTED, json_converter(True), json_converter(True),
        ).transformation_chain
        for n in range(2)
    ]  # fmt: skip
    (first,), (second,) = (chain.transformations for chain in chains)
    assert type(first) is Append and first.suffix == "!"
    assert second is not first, "each task's chain has instances of its own"


# A config that passes validation would start the worker, which runs until stopped: fail instead.
@pytest.mark.timeout(60)
def test_connect_standalone_names_a_transformations_missing_setting_in_one_line(tmp_path, capsys):
    from kafka_lite.cli.main import main
    from tests.connect.cluster.test_standalone import quick_start_files

    worker_config, source, _ = quick_start_files(tmp_path, "127.0.0.1:1")
    with source.open("a") as f:  # Kafka's example without transforms.MakeMap.field
        f.write(
            "\ntransforms=MakeMap\ntransforms.MakeMap.type=org.apache.kafka.connect.transforms.HoistField$Value\n"
        )
    assert main(["connect", "standalone", str(worker_config), str(source)]) == 2
    err = capsys.readouterr().err
    assert "Missing required configuration 'transforms.MakeMap.field', which has no default value." in err
    assert len(err.strip().splitlines()) == 1 and str(source) in err, err
