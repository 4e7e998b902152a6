"""kafka-lite dump-log --cluster-metadata-decoder: the KRaft metadata log and its snapshots, decoded
as Kafka 3.3's DumpLogSegments prints them (ported from its testDumpMetadataRecords and
testDumpMetadataSnapshot). The log is a real KafkaMetadataLog on disk, written as a leader writes it
(a LEADER_CHANGE control batch first, then batches of metadata records); the snapshot is written with
the Raft snapshot writer over MetadataRecordSerde, as the controller writes one."""

from __future__ import annotations

import base64
import json
import uuid

import pytest

from kafka_lite.cli.main import main
from kafka_lite.common.metadata import (
    ApiMessageAndVersion,
    BrokerEndpoint,
    MetadataRecordSerde,
    PartitionChangeRecord,
    PartitionRecord,
    RegisterBrokerRecord,
    TopicRecord,
)
from kafka_lite.common.record.control_record_utils import with_leader_change_message
from kafka_lite.common.record.memory_records_builder import MemoryRecordsBuilder
from kafka_lite.common.time import MockTime
from kafka_lite.raft import snapshots
from kafka_lite.raft.kafka_metadata_log import KafkaMetadataLog
from kafka_lite.raft.offset_and_epoch import OffsetAndEpoch
from kafka_lite.raft.records_snapshot_writer import RecordsSnapshotWriter

pytestmark = pytest.mark.unit

TP = ("__cluster_metadata", 0)
BASE_TS = 1_700_000_000_000
SERDE = MetadataRecordSerde()
TOPIC_ID = uuid.UUID("6c4f6d8e-1d2b-4c3a-9e8f-0a1b2c3d4e5f")
# Kafka's Uuid.toString: URL-safe base64 of the 16 bytes, without the two '=' of padding.
TOPIC_ID_TEXT = base64.urlsafe_b64encode(TOPIC_ID.bytes).decode()[:22]
REGISTER = RegisterBrokerRecord(
    broker_id=1,
    incarnation_id=uuid.UUID(int=7),
    broker_epoch=10,
    end_points=[BrokerEndpoint(name="PLAINTEXT", host="localhost", port=9092, security_protocol=0)],
    rack=None,
)
TOPIC = TopicRecord(name="foo", topic_id=TOPIC_ID)
PARTITION = PartitionRecord(
    partition_id=0,
    topic_id=TOPIC_ID,
    replicas=[1, 2, 3],
    isr=[1, 2, 3],
    leader=1,
    leader_epoch=0,
    partition_epoch=0,
)
# Only the ISR and the leader change: every other tagged field keeps its default and is left out.
PARTITION_CHANGE = PartitionChangeRecord(partition_id=0, topic_id=TOPIC_ID, isr=[1, 2], leader=2)
# A record of type 99, which no Kafka has: the frame (version 1), the type, the version.
UNKNOWN_TYPE = bytes([1, 99, 0])


def _batch(base_offset: int, epoch: int, values: list[bytes]) -> MemoryRecordsBuilder:
    builder = MemoryRecordsBuilder(base_offset=base_offset, partition_leader_epoch=epoch)
    for i, value in enumerate(values):
        builder.append(BASE_TS + base_offset + i, None, value)
    return builder.build()


@pytest.fixture
def metadata_log_dir(tmp_path):
    """Offsets 0: LEADER_CHANGE (leader 1 of voters 1-3, voted for by 1 and 2); 1-2: a broker and a
    topic; 3: a record of an unknown type; 4: a TopicRecord cut short; 5-6: a partition and its change."""
    log_dir = tmp_path / "__cluster_metadata-0"
    log = KafkaMetadataLog.create(TP, log_dir, MockTime())
    leader_change = {
        "version": 0,
        "leader_id": 1,
        "voters": [{"voter_id": v} for v in (1, 2, 3)],
        "granting_voters": [{"voter_id": v} for v in (1, 2)],
    }
    log.append_as_leader(with_leader_change_message(0, BASE_TS, 5, leader_change), 5)
    log.append_as_leader(
        _batch(1, 5, [SERDE.serialize(ApiMessageAndVersion(REGISTER, 1)), SERDE.serialize(ApiMessageAndVersion(TOPIC, 0))]), 5
    )  # fmt: skip
    truncated = SERDE.serialize(ApiMessageAndVersion(TOPIC, 0))[:-5]
    log.append_as_leader(_batch(3, 5, [UNKNOWN_TYPE, truncated]), 5)
    log.append_as_leader(
        _batch(5, 5, [SERDE.serialize(ApiMessageAndVersion(PARTITION, 0)), SERDE.serialize(ApiMessageAndVersion(PARTITION_CHANGE, 0))]), 5
    )  # fmt: skip
    log.close()
    return log_dir


def _dump(capsys, monkeypatch, *args) -> tuple[int, list[str], str]:
    monkeypatch.setenv("COLUMNS", "1000")
    code = main(["dump-log", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out.splitlines(), err


def _payloads(lines: list[str]) -> dict[int, str]:
    """Each record line's offset and what follows ``payload: ``."""
    found = {}
    for line in lines:
        if line.startswith("| offset: ") and " payload: " in line:
            found[int(line.split()[2])] = line.split(" payload: ", 1)[1]
    return found


def test_metadata_records_are_printed_as_their_type_version_and_fields(metadata_log_dir, capsys, monkeypatch):
    segment = metadata_log_dir / "00000000000000000000.log"
    code, lines, err = _dump(capsys, monkeypatch, "--cluster-metadata-decoder", segment)
    assert code == 0, err
    assert lines[:2] == [f"Dumping {segment}", "Starting offset: 0"]
    payloads = _payloads(lines)
    assert sorted(payloads) == [1, 2, 3, 4, 5, 6], "every record but the control record has a payload"

    register = json.loads(payloads[1])
    assert (register["type"], register["version"]) == ("REGISTER_BROKER_RECORD", 1)
    assert register["data"] == {
        "brokerId": 1,
        "incarnationId": base64.urlsafe_b64encode(uuid.UUID(int=7).bytes).decode()[:22],
        "brokerEpoch": 10,
        "endPoints": [{"name": "PLAINTEXT", "host": "localhost", "port": 9092, "securityProtocol": 0}],
        "features": [],
        "rack": None,
        "fenced": True,
        "inControlledShutdown": False,
    }
    assert json.loads(payloads[2]) == {
        "type": "TOPIC_RECORD",
        "version": 0,
        "data": {"name": "foo", "topicId": TOPIC_ID_TEXT},
    }
    partition = json.loads(payloads[5])
    assert partition["type"] == "PARTITION_RECORD" and partition["data"]["replicas"] == [1, 2, 3]
    # leaderRecoveryState is a tagged field at its default (0, RECOVERED): left out, as on the wire.
    assert "leaderRecoveryState" not in partition["data"]
    assert json.loads(payloads[6]) == {
        "type": "PARTITION_CHANGE_RECORD",
        "version": 0,
        "data": {"partitionId": 0, "topicId": TOPIC_ID_TEXT, "isr": [1, 2], "leader": 2},
    }


def test_a_record_that_does_not_decode_names_its_offset_and_the_dump_goes_on(
    metadata_log_dir, capsys, monkeypatch
):
    code, lines, err = _dump(
        capsys, monkeypatch, "--cluster-metadata-decoder", metadata_log_dir / "00000000000000000000.log"
    )
    assert code == 0, err
    payloads = _payloads(lines)
    assert payloads[3].startswith("Error at 3, skipping. ") and "Unknown metadata id 99" in payloads[3]
    assert payloads[4].startswith("Error at 4, skipping. ") and "TopicRecord" in payloads[4]
    # The records after the bad ones are decoded all the same.
    assert json.loads(payloads[5])["type"] == "PARTITION_RECORD"


def test_the_leader_change_control_record_shows_who_leads_and_who_voted(
    metadata_log_dir, capsys, monkeypatch
):
    code, lines, _ = _dump(
        capsys, monkeypatch, "--cluster-metadata-decoder", metadata_log_dir / "00000000000000000000.log"
    )
    assert code == 0
    [record] = [line for line in lines if line.startswith("| offset: 0 ")]
    assert " payload: " not in record
    message = record.split("controlType: LEADER_CHANGE(2) LeaderChange ", 1)[1]
    assert json.loads(message) == {
        "version": 0,
        "leaderId": 1,
        "voters": [{"voterId": 1}, {"voterId": 2}, {"voterId": 3}],
        "grantingVoters": [{"voterId": 1}, {"voterId": 2}],
    }
    [batch] = [line for line in lines if line.startswith("baseOffset: 0 ")]
    assert "isControl: true" in batch and "partitionLeaderEpoch: 5" in batch


def test_without_the_decoder_the_values_print_as_bytes(metadata_log_dir, capsys, monkeypatch):
    code, lines, _ = _dump(
        capsys, monkeypatch, "--print-data-log", metadata_log_dir / "00000000000000000000.log"
    )
    assert code == 0
    payloads = _payloads(lines)
    assert "TOPIC_RECORD" not in payloads[2] and "foo" in payloads[2]


def test_a_snapshot_dumps_its_header_records_and_footer(tmp_path, capsys, monkeypatch):
    log_dir = tmp_path / "__cluster_metadata-0"
    log = KafkaMetadataLog.create(TP, log_dir, MockTime())
    snapshot_id = OffsetAndEpoch(7, 5)
    writer = RecordsSnapshotWriter.create_with_header(
        lambda: log.store_snapshot(snapshot_id), 8192, MockTime(), BASE_TS + 6, SERDE
    )
    with writer:
        writer.append([ApiMessageAndVersion(REGISTER, 1), ApiMessageAndVersion(TOPIC, 0)])
        writer.append([ApiMessageAndVersion(PARTITION, 0)])
        writer.freeze()
    log.close()
    path = snapshots.snapshot_path(log_dir, snapshot_id)
    assert path.name == "00000000000000000007-0000000005.checkpoint"

    code, lines, err = _dump(capsys, monkeypatch, "--cluster-metadata-decoder", "--files", path)
    assert code == 0, err
    assert lines[:2] == [f"Dumping {path}", "Snapshot end offset: 7, epoch: 5"]
    header = next(line for line in lines if line.startswith("| offset: 0 "))
    assert json.loads(header.split("SnapshotHeader ", 1)[1]) == {
        "version": 0,
        "lastContainedLogTimestamp": BASE_TS + 6,
    }
    footer = next(line for line in lines if line.startswith("| offset: 4 "))
    assert json.loads(footer.split("SnapshotFooter ", 1)[1]) == {"version": 0}
    payloads = _payloads(lines)
    assert [json.loads(payloads[o])["type"] for o in (1, 2, 3)] == [
        "REGISTER_BROKER_RECORD",
        "TOPIC_RECORD",
        "PARTITION_RECORD",
    ]
    assert json.loads(payloads[2])["data"] == {"name": "foo", "topicId": TOPIC_ID_TEXT}


def test_a_snapshot_still_being_written_is_not_a_file_to_dump(tmp_path, capsys, monkeypatch):
    partial = tmp_path / "00000000000000000007-0000000005.checkpoint.part"
    partial.write_bytes(b"x")
    code, _, err = _dump(capsys, monkeypatch, "--cluster-metadata-decoder", partial)
    assert code == 1
    assert "is not a Kafka segment file" in err and ".checkpoint" in err


def test_the_bootstrap_checkpoint_storage_format_writes_dumps_as_a_snapshot(tmp_path, capsys, monkeypatch):
    from kafka_lite.metadata.metadata_version import MetadataVersion
    from kafka_lite.server.storage_tool import write_bootstrap_checkpoint

    write_bootstrap_checkpoint(tmp_path, MetadataVersion.IBP_3_3_IV3, MockTime())
    path = tmp_path / "bootstrap.checkpoint"
    code, lines, err = _dump(capsys, monkeypatch, "--cluster-metadata-decoder", path)
    assert code == 0, err
    assert lines[:2] == [f"Dumping {path}", "KRaft bootstrap snapshot"]
    assert any("SnapshotHeader " in line for line in lines) and any(
        "SnapshotFooter " in line for line in lines
    )
    # The one record: metadata.version's level, 7 for 3.3-IV3.
    assert [json.loads(p) for p in _payloads(lines).values()] == [
        {
            "type": "FEATURE_LEVEL_RECORD",
            "version": 0,
            "data": {"name": "metadata.version", "featureLevel": 7},
        }
    ]
