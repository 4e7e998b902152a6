"""The records of __consumer_offsets (offsets_topic_records), byte for byte as Kafka's
GroupMetadataManager writes them, and the partition of a group as Kafka picks it (partition_for).

No Kafka library here decodes these records (kafka-python, confluent-kafka and kcat have nothing for
them), so the expected bytes are written out field by field from Kafka 0.10.1's schemas, and Java's
own String.hashCode is the oracle for the partition."""

from __future__ import annotations

import shutil
import struct
import subprocess

import pytest

from kafka_lite.common.errors import KafkaException
from kafka_lite.coordinator.group_metadata_manager import partition_for
from kafka_lite.coordinator.offset_and_metadata import OffsetAndMetadata
from kafka_lite.coordinator.offsets_topic_records import (
    GroupMetadataKey,
    GroupTopicPartition,
    OffsetKey,
    OffsetsTopicRecordException,
    StoredGroupMetadata,
    StoredMemberMetadata,
    group_metadata_key,
    group_metadata_value,
    offset_commit_key,
    offset_commit_value,
    read_group_message_value,
    read_message_key,
    read_offset_message_value,
)

pytestmark = pytest.mark.unit


# Kafka's wire types, spelled out with struct so that the expected bytes do not come from our schemas.
def int16(n: int) -> bytes:
    return struct.pack(">h", n)


def int32(n: int) -> bytes:
    return struct.pack(">i", n)


def int64(n: int) -> bytes:
    return struct.pack(">q", n)


def string(s: str | None) -> bytes:  # STRING / NULLABLE_STRING: int16 length, UTF-8; -1 for null
    if s is None:
        return int16(-1)
    data = s.encode("utf-8")
    return int16(len(data)) + data


def blob(b: bytes) -> bytes:  # BYTES: int32 length
    return int32(len(b)) + b


ALICE = StoredMemberMetadata(
    "consumer-1-5f1e", "consumer-1", "/127.0.0.1", 60_000, 10_000, b"\x00\x00sub-a", b"\x00\x00asg-a"
)
BOB = StoredMemberMetadata("rdkafka-9c2d", "rdkafka", "/10.0.0.7", 300_000, 6_000, b"sub-b", b"")


# --- Exact bytes -------------------------------------------------------------------------------------------


def test_offset_commit_key_is_version_1_then_group_topic_partition():
    expected = int16(1) + string("my-group") + string("orders") + int32(3)
    assert offset_commit_key("my-group", ("orders", 3)) == expected


def test_group_metadata_key_is_version_2_then_the_group():
    assert group_metadata_key("my-group") == int16(2) + string("my-group")


def test_offset_commit_value_is_version_1_with_commit_and_expire_timestamps():
    value = OffsetAndMetadata(
        42, "meta", commit_timestamp=1_500_000_000_000, expire_timestamp=1_500_086_400_000
    )
    expected = int16(1) + int64(42) + string("meta") + int64(1_500_000_000_000) + int64(1_500_086_400_000)
    assert offset_commit_value(value) == expected


def test_offset_commit_value_with_no_metadata_and_unset_timestamps():
    expected = int16(1) + int64(7) + string("") + int64(-1) + int64(-1)
    assert offset_commit_value(OffsetAndMetadata(7)) == expected


def member_v1(m: StoredMemberMetadata) -> bytes:
    return (
        string(m.member_id) + string(m.client_id) + string(m.client_host)
        + int32(m.rebalance_timeout) + int32(m.session_timeout)
        + blob(m.subscription) + blob(m.assignment)
    )  # fmt: skip


def member_v0(m: StoredMemberMetadata) -> bytes:
    return (
        string(m.member_id) + string(m.client_id) + string(m.client_host)
        + int32(m.session_timeout)
        + blob(m.subscription) + blob(m.assignment)
    )  # fmt: skip


def test_group_metadata_value_v1_field_by_field():
    expected = (
        int16(1) + string("consumer") + int32(5) + string("range") + string(ALICE.member_id)
        + int32(2) + member_v1(ALICE) + member_v1(BOB)
    )  # fmt: skip
    assert group_metadata_value("consumer", 5, "range", ALICE.member_id, [ALICE, BOB]) == expected


def test_group_metadata_value_v0_has_no_rebalance_timeout():
    expected = (
        int16(0) + string("consumer") + int32(5) + string("range") + string(ALICE.member_id)
        + int32(2) + member_v0(ALICE) + member_v0(BOB)
    )  # fmt: skip
    assert group_metadata_value("consumer", 5, "range", ALICE.member_id, [ALICE, BOB], version=0) == expected


def test_an_empty_group_has_null_protocol_and_leader_and_no_members():
    expected = int16(1) + string("consumer") + int32(8) + string(None) + string(None) + int32(0)
    assert group_metadata_value("consumer", 8, None, None, []) == expected


def test_a_group_with_no_protocol_type_is_written_with_an_empty_one():
    # Kafka writes groupMetadata.protocolType.getOrElse("").
    assert group_metadata_value(None, 0, None, None, []) == group_metadata_value("", 0, None, None, [])
    assert group_metadata_value(None, 0, None, None, [])[2:4] == int16(0)


def test_members_may_be_plain_tuples_in_the_records_order():
    assert group_metadata_value("consumer", 1, "range", "x", [tuple(ALICE)]) == group_metadata_value(
        "consumer", 1, "range", "x", [ALICE]
    )


# --- Reading, and round trips for every version ------------------------------------------------------------


def test_offset_keys_of_version_0_and_1_read_as_offset_keys():
    body = string("g") + string("clicks") + int32(11)
    for version in (0, 1):
        key = read_message_key(int16(version) + body)
        assert key == OffsetKey(version, GroupTopicPartition("g", ("clicks", 11)))
    assert str(read_message_key(int16(0) + body).key) == "[g,clicks,11]"  # Kafka's toString


def test_offset_commit_key_round_trips():
    key = read_message_key(offset_commit_key("group-é", ("topic.with.dots", 2_147_483_647)))
    assert key == OffsetKey(1, GroupTopicPartition("group-é", ("topic.with.dots", 2_147_483_647)))


def test_group_metadata_key_round_trips():
    assert read_message_key(group_metadata_key("spark-kafka-source")) == GroupMetadataKey(
        2, "spark-kafka-source"
    )


def test_a_key_in_a_memoryview_reads_the_same():
    data = b"xx" + group_metadata_key("g")  # a key inside a larger buffer, as a record's key is
    assert read_message_key(memoryview(data)[2:]) == GroupMetadataKey(2, "g")


def test_offset_commit_value_v1_round_trips():
    value = OffsetAndMetadata(2**63 - 1, "checkpoint-ü", 1, 2)
    assert read_offset_message_value(offset_commit_value(value)) == value


def test_offset_commit_value_v0_reads_its_timestamp_as_the_commit_time():
    v0 = int16(0) + int64(100) + string("old") + int64(1_400_000_000_000)
    assert read_offset_message_value(v0) == OffsetAndMetadata(100, "old", 1_400_000_000_000, -1)


def test_offset_commit_value_v1_reads_each_field_in_place():
    v1 = int16(1) + int64(100) + string("new") + int64(1_000) + int64(2_000)
    assert read_offset_message_value(v1) == OffsetAndMetadata(100, "new", 1_000, 2_000)


def test_offset_and_metadata_prints_as_kafka_does():
    assert (
        str(OffsetAndMetadata(5, "", 10, 20))
        == "[OffsetMetadata[5,NO_METADATA],CommitTime 10,ExpirationTime 20]"
    )


def test_group_metadata_value_v1_round_trips():
    data = group_metadata_value("consumer", 5, "roundrobin", BOB.member_id, [ALICE, BOB])
    assert read_group_message_value("g", data) == StoredGroupMetadata(
        "g", "consumer", 5, "roundrobin", BOB.member_id, [ALICE, BOB]
    )


def test_group_metadata_value_v0_reads_the_session_timeout_as_the_rebalance_timeout():
    data = group_metadata_value("consumer", 5, "range", ALICE.member_id, [ALICE, BOB], version=0)
    group = read_group_message_value("g", data)
    assert group.members == [
        ALICE._replace(rebalance_timeout=ALICE.session_timeout),
        BOB._replace(rebalance_timeout=BOB.session_timeout),
    ]
    assert (group.protocol_type, group.generation, group.protocol, group.leader) == (
        "consumer", 5, "range", ALICE.member_id,
    )  # fmt: skip


def test_an_empty_group_round_trips():
    data = group_metadata_value("consumer", 8, None, None, [])
    assert read_group_message_value("g", data) == StoredGroupMetadata("g", "consumer", 8, None, None, [])


def test_tombstones_read_as_none():
    assert read_offset_message_value(None) is None
    assert read_group_message_value("g", None) is None


# --- Errors ------------------------------------------------------------------------------------------------


def test_the_error_is_a_kafka_exception():
    assert issubclass(OffsetsTopicRecordException, KafkaException)


@pytest.mark.parametrize("version", [3, -1, 32767])
def test_an_unknown_key_version_is_named(version):
    with pytest.raises(
        OffsetsTopicRecordException, match=f"Unknown offset schema version {version} in a __consumer"
    ):
        read_message_key(int16(version) + string("g"))


def test_an_unknown_offset_value_version_is_named():
    data = int16(2) + int64(1) + string("") + int64(1) + int64(1)
    with pytest.raises(
        OffsetsTopicRecordException, match="Unknown offset schema version 2 in an offset commit value"
    ):
        read_offset_message_value(data)


def test_an_unknown_group_value_version_is_named_for_reading_and_writing():
    data = group_metadata_value("consumer", 1, None, None, [])
    with pytest.raises(
        OffsetsTopicRecordException,
        match="Unknown group metadata version 2 in the group metadata value of group 'g'",
    ):
        read_group_message_value("g", int16(2) + data[2:])
    with pytest.raises(OffsetsTopicRecordException, match="Unknown group metadata version 2"):
        group_metadata_value("consumer", 1, None, None, [], version=2)


VALID = [
    ("key", read_message_key, offset_commit_key("my-group", ("orders", 3))),
    ("key", read_message_key, group_metadata_key("my-group")),
    ("offset", read_offset_message_value, offset_commit_value(OffsetAndMetadata(42, "meta", 1, 2))),
    ("offset", read_offset_message_value, int16(0) + int64(42) + string("meta") + int64(1)),
    (
        "group",
        lambda b: read_group_message_value("g", b),
        group_metadata_value("c", 1, "r", "a", [ALICE, BOB]),
    ),
    (
        "group",
        lambda b: read_group_message_value("g", b),
        group_metadata_value("c", 1, "r", "a", [ALICE], version=0),
    ),
]


@pytest.mark.parametrize(("kind", "read", "data"), VALID)
def test_every_truncation_is_an_error(kind, read, data):
    read(data)  # the whole of it reads
    for n in range(len(data)):
        with pytest.raises(OffsetsTopicRecordException):
            read(data[:n])


def test_a_truncated_value_names_the_field_and_the_byte():
    data = offset_commit_value(OffsetAndMetadata(42, "meta", 1, 2))[:-3]
    with pytest.raises(OffsetsTopicRecordException) as e:
        read_offset_message_value(data)
    # version (2) + offset (8) + metadata (2 + 4) + commit_timestamp (8) = 24: expire_timestamp starts there.
    assert "an offset commit value v1" in str(e.value)
    assert "field 'expire_timestamp' at byte 24: INT64 needs 8 bytes, 5 remain" in str(e.value)


def test_a_value_too_short_for_its_version_says_so():
    with pytest.raises(OffsetsTopicRecordException, match="of 1 bytes is too short for its int16 version"):
        read_offset_message_value(b"\x00")


@pytest.mark.parametrize(("kind", "read", "data"), VALID)
def test_bytes_left_over_are_an_error(kind, read, data):
    with pytest.raises(OffsetsTopicRecordException, match="1 unexpected trailing bytes"):
        read(data + b"\x00")


def test_a_record_with_no_key_is_an_error():
    with pytest.raises(OffsetsTopicRecordException, match="has no key"):
        read_message_key(None)


def test_a_member_that_is_not_a_seven_tuple_is_named():
    with pytest.raises(
        OffsetsTopicRecordException, match=r"member \[1\] of a group metadata value is \('m',\)"
    ):
        group_metadata_value("consumer", 1, "range", "a", [ALICE, ("m",)])


def test_a_value_that_cannot_be_written_names_the_field():
    with pytest.raises(OffsetsTopicRecordException, match="offset commit value v1: field 'metadata'"):
        offset_commit_value(OffsetAndMetadata(1, None))
    with pytest.raises(OffsetsTopicRecordException, match="offset commit key v1: field 'partition'"):
        offset_commit_key("g", ("t", 2**31))


# --- partition_for -----------------------------------------------------------------------------------------


def hash_code(s: str) -> int:
    """Java's String.hashCode from its definition: s[0]*31^(n-1) + ... + s[n-1] over UTF-16 code
    units, in int arithmetic (so modulo 2^32, read as signed)."""
    utf16 = s.encode("utf-16-be")
    n = len(utf16) // 2
    units = struct.unpack(f">{n}H", utf16)
    total = sum(u * 31 ** (n - 1 - i) for i, u in enumerate(units)) % 2**32
    return total - 2**32 if total >= 2**31 else total


def kafka_abs(n: int) -> int:
    """Kafka's Utils.abs: Math.abs, but 0 for Integer.MIN_VALUE."""
    return 0 if n == -(2**31) else abs(n)


GROUP_IDS = [
    "my-group",
    "polygenelubricants",
    "",
    "a",
    "console-consumer-40623",
    "spark-kafka-source-6f2c1e4a-driver-0",
    "groupe-é",
    "消费组",
    "𝄞-music",  # outside the BMP: two UTF-16 code units
    "x" * 300,
]


def test_hash_code_of_known_strings():
    assert hash_code("my-group") == -1_906_497_762
    assert hash_code("polygenelubricants") == -(2**31)  # Integer.MIN_VALUE
    assert hash_code("") == 0
    assert hash_code("a") == 97
    assert hash_code("ab") == 97 * 31 + 98


@pytest.mark.parametrize("group_id", GROUP_IDS)
@pytest.mark.parametrize("partitions", [50, 1, 7])
def test_partition_for_is_kafka_abs_of_the_java_hash_code_modulo_the_count(group_id, partitions):
    assert partition_for(group_id, partitions) == kafka_abs(hash_code(group_id)) % partitions


def test_a_negative_hash_code_is_made_positive_by_abs_not_by_masking():
    # "my-group" hashes to -1906497762: abs gives 1906497762, partition 12 of 50; masking with
    # 0x7fffffff (Utils.toPositive, the producer's) would give 240985886, partition 36.
    assert partition_for("my-group", 50) == 12


def test_the_integer_min_value_hash_code_goes_to_partition_0():
    # Math.abs(Integer.MIN_VALUE) is negative; Kafka's Utils.abs returns 0 for it.
    for partitions in (1, 3, 50, 64):
        assert partition_for("polygenelubricants", partitions) == 0


def test_a_partition_count_below_1_is_refused():
    with pytest.raises(ValueError, match="at least 1 partition, not 0"):
        partition_for("g", 0)


JAVA_PARTITION_FOR = """
import java.io.*;
import java.nio.charset.StandardCharsets;

public class PartitionFor {
    // Kafka's Utils.abs, as written in clients/.../common/utils/Utils.java.
    static int abs(int n) { return (n == Integer.MIN_VALUE) ? 0 : Math.abs(n); }

    public static void main(String[] args) throws IOException {
        int partitions = Integer.parseInt(args[0]);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String groupId; (groupId = in.readLine()) != null; )
            System.out.println(groupId.hashCode() + " " + abs(groupId.hashCode()) % partitions);
    }
}
"""


def test_partition_for_agrees_with_java(tmp_path):
    """Java's own String.hashCode, Math.abs and %, with Kafka's Utils.abs copied in."""
    java = shutil.which("java")
    if java is None:
        pytest.fail(
            "java is not on PATH: kafka_lite needs a JDK (for ZooKeeper and PySpark) and so does this test"
        )
    source = tmp_path / "PartitionFor.java"
    source.write_text(JAVA_PARTITION_FOR)
    group_ids = [g for g in GROUP_IDS if g]  # readLine cannot give back an empty last line
    answer = subprocess.run(
        [java, str(source), "50"],
        input="\n".join(group_ids).encode("utf-8"),
        capture_output=True,
        check=True,
        timeout=120,
    )
    lines = answer.stdout.decode().split()
    assert len(lines) == 2 * len(group_ids)
    for i, group_id in enumerate(group_ids):
        java_hash, java_partition = int(lines[2 * i]), int(lines[2 * i + 1])
        assert hash_code(group_id) == java_hash, group_id
        assert partition_for(group_id, 50) == java_partition, group_id
