"""ConfigurationControlManager, as Kafka 3.3's ConfigurationControlManagerTest: each operation's
records and answers, replayed as the controller replays them, and reverted with the registry."""

import pytest

from kafka_lite.common.errors import Errors
from kafka_lite.common.metadata import ConfigRecord
from kafka_lite.common.metadata.api_message_and_version import ApiMessageAndVersion
from kafka_lite.metadata.config_resource import ConfigResource
from kafka_lite.metadata.controller.configuration_control_manager import (
    ApiError,
    ConfigurationControlManager,
    OpType,
)
from kafka_lite.metadata.timeline import SnapshotRegistry

pytestmark = pytest.mark.unit

BROKER0 = ConfigResource(ConfigResource.Type.BROKER, "0")
MYTOPIC = ConfigResource(ConfigResource.Type.TOPIC, "mytopic")


def _record(resource, name, value):
    return ApiMessageAndVersion(
        ConfigRecord(resource_type=int(resource.type), resource_name=resource.name, name=name, value=value), 0
    )


def _replay(manager, result):
    for record in result.records:
        manager.replay(record.message)


def test_replay_sets_and_deletes_keys_and_drops_an_empty_resource():
    manager = ConfigurationControlManager(SnapshotRegistry())
    manager.replay(ConfigRecord(resource_type=4, resource_name="0", name="foo.bar", value="1"))
    manager.replay(ConfigRecord(resource_type=2, resource_name="mytopic", name="retention.ms", value="100"))
    assert manager.config_properties(BROKER0) == {"foo.bar": "1"}
    assert manager.config_properties(MYTOPIC) == {"retention.ms": "100"}
    manager.replay(ConfigRecord(resource_type=4, resource_name="0", name="foo.bar", value=None))
    assert manager.config_properties(BROKER0) == {}
    assert BROKER0 not in manager.config_resources()


def test_incremental_alter_configs_writes_one_record_per_changed_key():
    manager = ConfigurationControlManager(SnapshotRegistry())
    result = manager.incremental_alter_configs(
        {MYTOPIC: {"retention.ms": (OpType.SET, "1000"), "cleanup.policy": (OpType.APPEND, "compact")}}, True
    )
    assert result.response == {MYTOPIC: ApiError.NONE}
    assert result.is_atomic
    # APPEND starts from the definition's default (delete) when the key is not set.
    assert result.records == [
        _record(MYTOPIC, "retention.ms", "1000"),
        _record(MYTOPIC, "cleanup.policy", "delete,compact"),
    ]
    _replay(manager, result)
    # Setting a topic key to the value it has writes nothing; a broker's is written anyway.
    assert (
        manager.incremental_alter_configs({MYTOPIC: {"retention.ms": (OpType.SET, "1000")}}, False).records
        == []
    )
    same = manager.incremental_alter_configs({BROKER0: {"foo": (OpType.SET, "1")}}, False)
    assert same.records == [_record(BROKER0, "foo", "1")]


def test_subtract_and_delete():
    manager = ConfigurationControlManager(SnapshotRegistry())
    manager.replay(
        ConfigRecord(resource_type=2, resource_name="mytopic", name="cleanup.policy", value="delete,compact")
    )
    manager.replay(ConfigRecord(resource_type=2, resource_name="mytopic", name="retention.ms", value="5"))
    result = manager.incremental_alter_configs(
        {MYTOPIC: {"cleanup.policy": (OpType.SUBTRACT, "delete"), "retention.ms": (OpType.DELETE, None)}},
        False,
    )
    assert result.records == [
        _record(MYTOPIC, "cleanup.policy", "compact"),
        _record(MYTOPIC, "retention.ms", None),
    ]
    _replay(manager, result)
    assert manager.config_properties(MYTOPIC) == {"cleanup.policy": "compact"}


def test_append_to_a_key_that_is_not_a_list_fails_the_whole_resource():
    manager = ConfigurationControlManager(SnapshotRegistry())
    result = manager.incremental_alter_configs(
        {MYTOPIC: {"retention.ms": (OpType.SET, "1"), "segment.bytes": (OpType.APPEND, "2")}}, True
    )
    assert result.records == []
    assert result.response[MYTOPIC] == ApiError(
        Errors.INVALID_CONFIG, "Can't APPEND to key segment.bytes because its type is not LIST."
    )


@pytest.mark.parametrize(
    ("key", "value", "named"),
    [("no.such.config", "1", "no.such.config"), ("segment.bytes", "abc", "segment.bytes"),
     ("cleanup.policy", "compact,bogus", "bogus")],
)  # fmt: skip
def test_a_bad_topic_config_is_invalid_config_naming_it(key, value, named):
    manager = ConfigurationControlManager(SnapshotRegistry())
    other = ConfigResource(ConfigResource.Type.TOPIC, "other")
    result = manager.incremental_alter_configs(
        {MYTOPIC: {key: (OpType.SET, value)}, other: {"retention.ms": (OpType.SET, "7")}}, True
    )
    error = result.response[MYTOPIC]
    assert error.error is Errors.INVALID_CONFIG
    assert named in error.message
    # One resource failing does not stop another.
    assert result.response[other] == ApiError.NONE
    assert result.records == [_record(other, "retention.ms", "7")]


def test_existence_is_checked_unless_the_resource_is_new():
    def exists(resource):
        if resource.type == ConfigResource.Type.TOPIC and resource.name != "mytopic":
            raise Errors.UNKNOWN_TOPIC_OR_PARTITION.exception(f"The topic '{resource.name}' does not exist.")

    manager = ConfigurationControlManager(SnapshotRegistry(), existence_checker=exists)
    missing = ConfigResource(ConfigResource.Type.TOPIC, "missing")
    changes = {missing: {"retention.ms": (OpType.SET, "1")}, MYTOPIC: {"retention.ms": (OpType.SET, "1")}}
    result = manager.incremental_alter_configs(changes, False)
    assert result.response[missing] == ApiError(
        Errors.UNKNOWN_TOPIC_OR_PARTITION, "The topic 'missing' does not exist."
    )
    assert result.response[MYTOPIC] == ApiError.NONE
    assert manager.incremental_alter_configs(changes, True).response[missing] == ApiError.NONE


def test_legacy_alter_configs_deletes_the_keys_it_does_not_name():
    manager = ConfigurationControlManager(SnapshotRegistry())
    manager.replay(ConfigRecord(resource_type=2, resource_name="mytopic", name="retention.ms", value="5"))
    manager.replay(ConfigRecord(resource_type=2, resource_name="mytopic", name="segment.ms", value="6"))
    result = manager.legacy_alter_configs({MYTOPIC: {"segment.ms": "6", "flush.ms": "9"}}, False)
    assert result.response == {MYTOPIC: ApiError.NONE}
    assert result.records == [_record(MYTOPIC, "flush.ms", "9"), _record(MYTOPIC, "retention.ms", None)]
    _replay(manager, result)
    assert manager.config_properties(MYTOPIC) == {"segment.ms": "6", "flush.ms": "9"}


def test_a_broker_resource_must_be_named_by_an_id():
    manager = ConfigurationControlManager(SnapshotRegistry())
    bad = ConfigResource(ConfigResource.Type.BROKER, "one")
    default = ConfigResource(ConfigResource.Type.BROKER, "")
    result = manager.incremental_alter_configs(
        {bad: {"x": (OpType.SET, "1")}, default: {"x": (OpType.SET, "1")}}, False
    )
    assert result.response[bad].error is Errors.INVALID_REQUEST
    assert result.response[default] == ApiError.NONE


def test_revert_undoes_uncommitted_configs_and_describe_reads_the_committed_ones():
    registry = SnapshotRegistry()
    manager = ConfigurationControlManager(registry)
    manager.replay(ConfigRecord(resource_type=2, resource_name="mytopic", name="retention.ms", value="5"))
    registry.get_or_create_snapshot(10)
    manager.replay(ConfigRecord(resource_type=2, resource_name="mytopic", name="retention.ms", value="6"))
    manager.replay(ConfigRecord(resource_type=4, resource_name="0", name="foo", value="1"))
    assert manager.config_properties(MYTOPIC) == {"retention.ms": "6"}
    described = manager.describe_configs(10, {MYTOPIC: [], BROKER0: []})
    assert described[MYTOPIC].result == {"retention.ms": "5"}
    assert described[BROKER0].result == {}
    registry.revert_to_snapshot(10)
    assert manager.config_properties(MYTOPIC) == {"retention.ms": "5"}
    assert manager.config_properties(BROKER0) == {}


def test_delete_topic_configs():
    manager = ConfigurationControlManager(SnapshotRegistry())
    manager.replay(ConfigRecord(resource_type=2, resource_name="mytopic", name="retention.ms", value="5"))
    manager.delete_topic_configs("mytopic")
    assert manager.config_properties(MYTOPIC) == {}
