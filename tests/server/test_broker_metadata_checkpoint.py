"""``meta.properties`` (Kafka 3.3's BrokerMetadataCheckpoint): version 0 for a ZooKeeper broker,
version 1 for a KRaft node, written whole and read back, with errors naming the file and the field;
and what a KRaft node checks of its directories at start-up (KafkaRaftServer.initializeLogDirs)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kafka_lite.common.errors import KafkaException
from kafka_lite.common.time import MockTime
from kafka_lite.server.broker_metadata_checkpoint import (
    META_PROPERTIES,
    METADATA_PARTITION_DIR,
    BrokerMetadataCheckpoint,
    InconsistentBrokerMetadataException,
    InconsistentNodeIdException,
    MetaProperties,
    MetaPropertiesException,
    RawMetaProperties,
    ZkMetaProperties,
    get_broker_metadata,
    initialize_log_dirs,
)
from kafka_lite.server.kafka_config import KafkaConfig, read_properties
from kafka_lite.server.kafka_server import InconsistentBrokerIdException, KafkaServer

pytestmark = pytest.mark.unit

CLUSTER_ID = "MkU3OEVBNTcwNTJENDM2Qg"  # the example of Kafka's quickstart


def write(directory: Path, props: dict[str, str]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    BrokerMetadataCheckpoint(directory / META_PROPERTIES, MockTime()).write(props)
    return directory / META_PROPERTIES


def test_version_1_is_written_as_kafka_writes_it_and_read_back(tmp_path):
    file = write(tmp_path, MetaProperties(CLUSTER_ID, 3).to_properties())
    lines = file.read_text().splitlines()
    # Properties.store: an empty comment, the date, then the fields
    assert lines[0] == "#" and lines[1].startswith("#")
    assert lines[2:] == [f"cluster.id={CLUSTER_ID}", "node.id=3", "version=1"]
    raw = BrokerMetadataCheckpoint(file).read_raw()
    assert MetaProperties.parse(raw) == MetaProperties(CLUSTER_ID, 3)
    assert str(raw) == f"{{cluster.id={CLUSTER_ID}, node.id=3, version=1}}"


def test_version_0_has_the_broker_id_and_no_cluster_id(tmp_path):
    file = write(tmp_path, ZkMetaProperties(5).to_properties())
    assert read_properties(file) == {"version": "0", "broker.id": "5"}
    raw = BrokerMetadataCheckpoint(file).read_raw()
    assert (raw.version, raw.broker_id, raw.node_id, raw.cluster_id) == (0, 5, None, None)


def test_a_missing_version_field_means_version_0(tmp_path):
    (tmp_path / META_PROPERTIES).write_text("broker.id=2\n")
    raw = BrokerMetadataCheckpoint(tmp_path / META_PROPERTIES).read_raw()
    assert (raw.version, raw.broker_id) == (0, 2)


def test_a_missing_file_reads_as_none_and_a_left_over_temporary_file_is_removed(tmp_path):
    (tmp_path / (META_PROPERTIES + ".tmp")).write_text("version=1\n")
    assert BrokerMetadataCheckpoint(tmp_path / META_PROPERTIES).read() is None
    assert not (tmp_path / (META_PROPERTIES + ".tmp")).exists()


def test_write_replaces_the_whole_file(tmp_path):
    file = write(tmp_path, {"version": "0", "broker.id": "1", "extra": "x"})
    write(tmp_path, MetaProperties(CLUSTER_ID, 1).to_properties())
    assert "extra" not in read_properties(file)
    assert not (tmp_path / (META_PROPERTIES + ".tmp")).exists()


def test_version_0_is_not_a_kraft_nodes_file(tmp_path):
    file = write(tmp_path, ZkMetaProperties(5).to_properties())
    with pytest.raises(
        MetaPropertiesException, match=rf"{re.escape(str(file))}: Expected version 1, but got version 0"
    ):
        MetaProperties.parse(BrokerMetadataCheckpoint(file).read_raw())


@pytest.mark.parametrize("field", ["cluster.id", "node.id"])
def test_a_missing_field_is_named_with_the_file(tmp_path, field):
    props = MetaProperties(CLUSTER_ID, 1).to_properties()
    del props[field]
    file = write(tmp_path, props)
    with pytest.raises(
        MetaPropertiesException, match=rf"{re.escape(str(file))}: Failed to find required property {field}\."
    ):
        MetaProperties.parse(BrokerMetadataCheckpoint(file).read_raw())


def test_a_field_that_is_not_an_int_is_named_with_the_file(tmp_path):
    file = write(tmp_path, {"version": "1", "cluster.id": CLUSTER_ID, "node.id": "one"})
    with pytest.raises(
        MetaPropertiesException,
        match=rf"{re.escape(str(file))}: Failed to parse node\.id property as an int: 'one'",
    ):
        MetaProperties.parse(BrokerMetadataCheckpoint(file).read_raw())


def test_raw_properties_are_equal_by_their_fields_not_their_file(tmp_path):
    a = RawMetaProperties({"version": "1", "node.id": "1"}, source=tmp_path / "a")
    b = RawMetaProperties({"version": "1", "node.id": "1"}, source=tmp_path / "b")
    assert a == b and a != RawMetaProperties({"version": "1", "node.id": "2"})


# -- the directories of one node ------------------------------------------------------------------------------


def test_directories_must_agree(tmp_path):
    write(tmp_path / "a", MetaProperties(CLUSTER_ID, 1).to_properties())
    write(tmp_path / "b", MetaProperties(CLUSTER_ID, 2).to_properties())
    with pytest.raises(
        InconsistentBrokerMetadataException, match=r"not consistent across log\.dirs"
    ) as caught:
        get_broker_metadata([tmp_path / "a", tmp_path / "b"], ignore_missing=False)
    assert f"- {tmp_path / 'b'} -> {{cluster.id={CLUSTER_ID}, node.id=2, version=1}}" in str(caught.value)


def test_missing_files_are_an_error_unless_ignored(tmp_path):
    write(tmp_path / "a", ZkMetaProperties(1).to_properties())
    (tmp_path / "b").mkdir()
    assert get_broker_metadata([tmp_path / "a", tmp_path / "b"], ignore_missing=True).broker_id == 1
    with pytest.raises(
        KafkaException,
        match=rf"No `meta.properties` found in {re.escape(str(tmp_path / 'b'))}.*storage format",
    ):
        get_broker_metadata([tmp_path / "a", tmp_path / "b"], ignore_missing=False)
    assert get_broker_metadata([tmp_path / "b"], ignore_missing=True) == RawMetaProperties()


def test_a_kraft_node_starts_on_directories_formatted_for_it(tmp_path):
    for d in ("a", "meta"):
        write(tmp_path / d, MetaProperties(CLUSTER_ID, 1).to_properties())
    meta = initialize_log_dirs([tmp_path / "a"], tmp_path / "meta", node_id=1)
    assert meta == MetaProperties(CLUSTER_ID, 1)


def test_a_kraft_node_refuses_an_unformatted_metadata_dir(tmp_path):
    write(tmp_path / "a", MetaProperties(CLUSTER_ID, 1).to_properties())
    (tmp_path / "meta").mkdir()
    with pytest.raises(
        KafkaException, match=rf"No `meta.properties` found in {re.escape(str(tmp_path / 'meta'))}"
    ):
        initialize_log_dirs([tmp_path / "a"], tmp_path / "meta", node_id=1)


def test_a_kraft_node_refuses_another_nodes_directories(tmp_path):
    write(tmp_path / "a", MetaProperties(CLUSTER_ID, 1).to_properties())
    with pytest.raises(
        InconsistentNodeIdException, match=r"Configured node.id `2` doesn't match stored node.id `1`"
    ):
        initialize_log_dirs([tmp_path / "a"], tmp_path / "a", node_id=2)


def test_a_kraft_node_refuses_a_zookeeper_brokers_directories(tmp_path):
    write(tmp_path / "a", ZkMetaProperties(1).to_properties())
    with pytest.raises(MetaPropertiesException, match=r"Expected version 1, but got version 0"):
        initialize_log_dirs([tmp_path / "a"], tmp_path / "a", node_id=1)


def test_a_kraft_node_refuses_a_metadata_log_outside_the_metadata_dir(tmp_path):
    for d in ("a", "meta"):
        write(tmp_path / d, MetaProperties(CLUSTER_ID, 1).to_properties())
    (tmp_path / "a" / METADATA_PARTITION_DIR).mkdir()
    with pytest.raises(KafkaException, match="Found unexpected metadata location in data directory"):
        initialize_log_dirs([tmp_path / "a"], tmp_path / "meta", node_id=1)


# -- the ZooKeeper broker's own file ----------------------------------------------------------------------


def zookeeper_broker(tmp_path: Path, broker_id: int = 0) -> KafkaServer:
    dirs = f"{tmp_path / 'a'},{tmp_path / 'b'}"
    config = KafkaConfig({"broker.id": broker_id, "zookeeper.connect": "127.0.0.1:2181", "log.dirs": dirs})
    return KafkaServer(config, MockTime())


def test_a_zookeeper_broker_writes_version_0_into_each_directory(tmp_path):
    zookeeper_broker(tmp_path, broker_id=3)._check_broker_id()
    for d in ("a", "b"):
        assert read_properties(tmp_path / d / META_PROPERTIES) == {"version": "0", "broker.id": "3"}
    zookeeper_broker(tmp_path, broker_id=3)._check_broker_id()  # and starts again on them


def test_a_zookeeper_broker_refuses_another_brokers_or_a_kraft_nodes_directories(tmp_path):
    zookeeper_broker(tmp_path, broker_id=3)._check_broker_id()
    with pytest.raises(InconsistentBrokerIdException, match=r"doesn't match stored broker\.id 3"):
        zookeeper_broker(tmp_path, broker_id=4)._check_broker_id()
    for d in ("a", "b"):
        write(tmp_path / d, MetaProperties(CLUSTER_ID, 3).to_properties())
    with pytest.raises(KafkaException, match=r"Zk-based brokers only support version 0"):
        zookeeper_broker(tmp_path, broker_id=3)._check_broker_id()
