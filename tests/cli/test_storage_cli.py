"""``kafka-lite storage`` (Kafka 3.3's kafka-storage.sh): random-uuid, format and info, run through
the CLI's own parser; what format writes is read back with the broker's and the Raft log's readers."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest

from kafka_lite.cli.main import main
from kafka_lite.common.metadata import FeatureLevelRecord, MetadataRecordSerde
from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.record.control_record_utils import (
    deserialize_snapshot_footer_record,
    deserialize_snapshot_header_record,
)
from kafka_lite.server.broker_metadata_checkpoint import (
    META_PROPERTIES,
    BrokerMetadataCheckpoint,
    MetaProperties,
    ZkMetaProperties,
    initialize_log_dirs,
)
from kafka_lite.server.kafka_config import read_properties
from kafka_lite.server.storage_tool import BINARY_BOOTSTRAP_FILENAME, uuid_from_string, uuid_to_string

pytestmark = pytest.mark.unit

CLUSTER_ID = "MkU3OEVBNTcwNTJENDM2Qg"  # the example of Kafka's quickstart


def kraft_properties(tmp_path: Path, node_id: int = 1, **extra: str) -> Path:
    props = {
        "process.roles": "broker,controller",
        "node.id": str(node_id),
        "controller.quorum.voters": f"{node_id}@localhost:9093",
        "listeners": "PLAINTEXT://:9092,CONTROLLER://:9093",
        "controller.listener.names": "CONTROLLER",
        "log.dirs": f"{tmp_path / 'data1'},{tmp_path / 'data2'}",
        "metadata.log.dir": str(tmp_path / "meta"),
        **extra,
    }
    path = tmp_path / "server.properties"
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    return path


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["storage", *args])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def usage_error(capsys, *args: str) -> str:
    with pytest.raises(SystemExit) as caught:
        main(["storage", *args])
    assert caught.value.code == 1  # kafka-storage.sh's exit code for a bad argument
    return capsys.readouterr().err


# -- random-uuid ------------------------------------------------------------------------------------------


def test_random_uuid_prints_kafkas_22_character_base64_uuid(capsys):
    printed = {run(capsys, "random-uuid")[1].strip() for _ in range(5)}
    assert len(printed) == 5
    for text in printed:
        assert re.fullmatch(r"[A-Za-z0-9_-]{22}", text) and not text.startswith("-")
        assert len(base64.urlsafe_b64decode(text + "==")) == 16
        assert uuid_to_string(uuid_from_string(text)) == text


def test_a_uuid_string_is_checked_as_kafkas_uuid_fromstring_checks_it():
    with pytest.raises(ValueError, match="is too long to be decoded as a base64 UUID"):
        uuid_from_string(CLUSTER_ID + "AAAAA")
    with pytest.raises(ValueError, match="decoded as 12 bytes, which is not equal to the expected 16 bytes"):
        uuid_from_string("AAAAAAAAAAAAAAAA")
    with pytest.raises(ValueError, match="not url-safe base64"):
        uuid_from_string("MkU3OEVBNTcwNTJENDM2Q+")


# -- format ----------------------------------------------------------------------------------------------


def test_format_writes_meta_properties_v1_and_the_bootstrap_into_every_directory(tmp_path, capsys):
    code, out, _ = run(capsys, "format", "-t", CLUSTER_ID, "-c", str(kraft_properties(tmp_path)))
    dirs = [tmp_path / d for d in ("data1", "data2", "meta")]
    assert code == 0
    assert out.splitlines() == [f"Formatting {d} with metadata.version 3.3-IV3." for d in dirs]
    for d in dirs:
        assert read_properties(d / META_PROPERTIES) == {
            "version": "1",
            "cluster.id": CLUSTER_ID,
            "node.id": "1",
        }
        assert bootstrap_records(d / BINARY_BOOTSTRAP_FILENAME) == [
            FeatureLevelRecord(name="metadata.version", feature_level=7)
        ]
    # what a KRaft node checks before it starts is what format wrote
    assert initialize_log_dirs(dirs[:2], dirs[2], node_id=1) == MetaProperties(CLUSTER_ID, 1)


def bootstrap_records(path: Path) -> list:
    """The records of a bootstrap.checkpoint, checking its frame: a snapshot header first, a footer
    last, offsets from 0, epoch 0."""
    batches = list(MemoryRecords(path.read_bytes()).batches())
    first, *middle, last = batches
    assert first.is_control_batch and last.is_control_batch and not any(b.is_control_batch for b in middle)
    assert deserialize_snapshot_header_record(next(iter(first)))["last_contained_log_timestamp"] == 0
    assert deserialize_snapshot_footer_record(next(iter(last)))["version"] == 0
    assert [b.base_offset for b in batches] == list(range(len(batches)))
    assert {b.partition_leader_epoch for b in batches} == {0}
    serde = MetadataRecordSerde()
    return [serde.deserialize(r.value).message for b in middle for r in b]


def test_format_takes_a_release_version(tmp_path, capsys):
    config = str(kraft_properties(tmp_path))
    code, out, _ = run(capsys, "format", "-t", CLUSTER_ID, "-c", config, "--release-version", "3.3-IV0")
    assert code == 0 and "with metadata.version 3.3-IV0." in out
    assert bootstrap_records(tmp_path / "meta" / BINARY_BOOTSTRAP_FILENAME)[0].feature_level == 4


def test_format_refuses_a_release_version_it_cannot_bootstrap(tmp_path, capsys):
    config = str(kraft_properties(tmp_path))
    code, _, err = run(capsys, "format", "-t", CLUSTER_ID, "-c", config, "-r", "3.2")
    assert code == 1 and "Bootstrap metadata versions before 3.3-IV0 are not supported" in err
    code, _, err = run(capsys, "format", "-t", CLUSTER_ID, "-c", config, "-r", "2.8")
    assert code == 1 and "--release-version 2.8 is not a KRaft metadata.version" in err
    assert not (tmp_path / "meta").exists()


def test_format_refuses_a_formatted_directory_unless_told_to_skip_it(tmp_path, capsys):
    config = str(kraft_properties(tmp_path))
    BrokerMetadataCheckpoint((tmp_path / "data1").mkdir() or tmp_path / "data1" / META_PROPERTIES).write(
        MetaProperties("AAAAAAAAAAAAAAAAAAAAAQ", 1).to_properties()
    )
    code, _, err = run(capsys, "format", "-t", CLUSTER_ID, "-c", config)
    assert code == 1
    assert f"Log directory {tmp_path / 'data1'} is already formatted. Use --ignore-formatted" in err
    assert not (tmp_path / "data2").exists()
    code, out, _ = run(capsys, "format", "-t", CLUSTER_ID, "-c", config, "--ignore-formatted")
    assert (
        code == 0
        and f"Formatting {tmp_path / 'data1'}" not in out
        and f"Formatting {tmp_path / 'data2'}" in out
    )
    assert read_properties(tmp_path / "data1" / META_PROPERTIES)["cluster.id"] == "AAAAAAAAAAAAAAAAAAAAAQ"
    code, out, _ = run(capsys, "format", "-t", CLUSTER_ID, "-c", config, "-g")
    assert (code, out) == (0, "All of the log directories are already formatted.\n")


def test_format_refuses_a_cluster_id_that_is_not_a_uuid(tmp_path, capsys):
    code, _, err = run(capsys, "format", "-t", "my-cluster", "-c", str(kraft_properties(tmp_path)))
    assert code == 1
    assert "Cluster ID string my-cluster does not appear to be a valid UUID" in err
    assert not (tmp_path / "meta").exists()


def test_format_refuses_a_zookeeper_mode_config(tmp_path, capsys):
    config = tmp_path / "zk.properties"
    config.write_text(f"broker.id=0\nzookeeper.connect=127.0.0.1:2181\nlog.dirs={tmp_path / 'data'}\n")
    code, _, err = run(capsys, "format", "-t", CLUSTER_ID, "-c", str(config))
    assert code == 1 and "appears to be for a legacy cluster. Formatting is only supported" in err
    assert not (tmp_path / "data").exists()


def test_format_names_a_setting_the_config_gets_wrong(tmp_path, capsys):
    config = kraft_properties(tmp_path, **{"controller.quorum.voters": "2@localhost:9093"})
    code, _, err = run(capsys, "format", "-t", CLUSTER_ID, "-c", str(config))
    assert code == 1 and "the node id 1 must be included in the set of voters controller.quorum.voters" in err


def test_format_names_a_missing_config_file(tmp_path, capsys):
    code, _, err = run(capsys, "format", "-t", CLUSTER_ID, "-c", str(tmp_path / "nowhere.properties"))
    assert code == 1 and "nowhere.properties does not exist" in err


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["format", "-c", "server.properties"], "the following arguments are required: --cluster-id/-t"),
        (["format", "-t", CLUSTER_ID], "the following arguments are required: --config/-c"),
        (["info"], "the following arguments are required: --config/-c"),
        (["info", "-c", "x", "--cluster-id", CLUSTER_ID], "unrecognized arguments: --cluster-id"),
    ],
)
def test_a_bad_argument_exits_1_naming_it(capsys, args, named):
    assert named in usage_error(capsys, *args)


def test_storage_without_a_command_exits_1(capsys):
    code, _, err = run(capsys)
    assert code == 1 and "storage needs a command: info, format or random-uuid" in err


# -- info ------------------------------------------------------------------------------------------------


def test_info_shows_formatted_directories_and_their_metadata(tmp_path, capsys):
    config = str(kraft_properties(tmp_path))
    run(capsys, "format", "-t", CLUSTER_ID, "-c", config)
    code, out, _ = run(capsys, "info", "-c", config)
    assert code == 0
    assert out == (
        "Found log directories:\n"
        f"  {tmp_path / 'data1'}\n  {tmp_path / 'data2'}\n  {tmp_path / 'meta'}\n\n"
        f"Found metadata: {{cluster.id={CLUSTER_ID}, node.id=1, version=1}}\n\n"
    )


def test_info_reports_missing_and_unformatted_directories(tmp_path, capsys):
    config = str(kraft_properties(tmp_path))
    (tmp_path / "data1").mkdir()
    (tmp_path / "meta").write_text("not a directory")
    code, out, _ = run(capsys, "info", "-c", config)
    assert code == 1
    assert out.endswith(
        "Found problems:\n"
        f"  {tmp_path / 'data1'} is not formatted.\n"
        f"  {tmp_path / 'data2'} does not exist\n"
        f"  {tmp_path / 'meta'} is not a directory\n\n"
    )


def test_info_reports_directories_that_disagree_or_belong_to_the_other_mode(tmp_path, capsys):
    config = str(kraft_properties(tmp_path))
    run(capsys, "format", "-t", CLUSTER_ID, "-c", config)
    BrokerMetadataCheckpoint(tmp_path / "data2" / META_PROPERTIES).write(
        MetaProperties(CLUSTER_ID, 2).to_properties()
    )
    code, out, _ = run(capsys, "info", "-c", config)
    assert (
        code == 1
        and f"Metadata for {tmp_path / 'data2' / META_PROPERTIES} was {{cluster.id={CLUSTER_ID}, node.id=2"
        in out
    )
    for d in ("data1", "data2", "meta"):
        BrokerMetadataCheckpoint(tmp_path / d / META_PROPERTIES).write(ZkMetaProperties(1).to_properties())
    code, out, _ = run(capsys, "info", "-c", config)
    assert code == 1
    assert (
        "appears to be for a cluster in KRaft mode, but the directories are formatted for legacy mode" in out
    )
