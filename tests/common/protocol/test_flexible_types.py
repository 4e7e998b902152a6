"""Flexible versions' types (KIP-482): compact lengths, tagged fields kept or skipped, and malformed
bytes that fail with a SchemaException naming the field."""

from __future__ import annotations

import random

import pytest

from kafka_lite.common.protocol.raft_messages import (
    FETCH_SNAPSHOT_REQUEST_V0,
    QUORUM_STATE_DATA_V0,
    VOTE_REQUEST_V0,
)
from kafka_lite.common.protocol.types import (
    COMPACT_NULLABLE_STRING,
    INT32,
    UNKNOWN_TAGGED_FIELDS,
    Field,
    FlexibleSchema,
    SchemaException,
    TaggedField,
    decode,
    encode,
)
from tests.common.protocol.test_raft_golden import RPC_CASES

pytestmark = pytest.mark.unit

TAGGED = FlexibleSchema(
    Field("id", INT32),
    tagged=(
        TaggedField(2, "note", COMPACT_NULLABLE_STRING, "", None),
        TaggedField(0, "epoch", INT32, "", -1),
    ),
)


def h(*fields: str) -> bytes:
    return bytes.fromhex("".join(fields))


def test_tagged_fields_at_their_defaults_are_not_written_and_read_back_as_defaults():
    assert encode(TAGGED, {"id": 1}) == h("00000001", "00")
    assert decode(TAGGED, h("00000001", "00")) == {"id": 1, "note": None, "epoch": -1}


def test_known_tagged_fields_are_written_in_tag_order():
    golden = h("00000001", "02", "00 04 00000005", "02 02 0278")  # id; 2 tags: epoch=5, note="x" (2 bytes)
    assert encode(TAGGED, {"id": 1, "note": "x", "epoch": 5}) == golden
    assert decode(TAGGED, golden) == {"id": 1, "note": "x", "epoch": 5}


def test_unknown_tagged_fields_are_kept_and_written_back_among_the_known_ones():
    golden = h("00000001", "03", "00 04 00000005", "01 02 abcd", "07 00")  # tags 0 (known), 1 and 7 (unknown)
    value = decode(TAGGED, golden)
    assert value == {"id": 1, "note": None, "epoch": 5, UNKNOWN_TAGGED_FIELDS: [(1, b"\xab\xcd"), (7, b"")]}
    assert encode(TAGGED, value) == golden


def test_an_unknown_tagged_field_may_not_reuse_a_known_tag():
    with pytest.raises(SchemaException, match="Attempted to use tag 2 as an undefined tag"):
        encode(TAGGED, {"id": 1, UNKNOWN_TAGGED_FIELDS: [(2, b"")]})


def test_a_truncated_compact_string_names_the_field():
    with pytest.raises(SchemaException) as e:
        decode(VOTE_REQUEST_V0, h("0b 6162"))  # cluster_id claims 10 bytes, 2 remain
    assert e.value.field == "cluster_id"
    assert "COMPACT_NULLABLE_STRING of 10 bytes, 2 remain" in str(e.value)


def test_a_varint_longer_than_five_bytes_names_the_field():
    with pytest.raises(SchemaException) as e:
        decode(VOTE_REQUEST_V0, h("ffffffffff01"))
    assert e.value.field == "cluster_id"
    assert "UNSIGNED_VARINT is longer than 5 bytes" in str(e.value)


def test_a_varint_that_runs_past_the_frame_names_the_field():
    with pytest.raises(SchemaException) as e:
        decode(VOTE_REQUEST_V0, h("03 6162", "02", "02 6d", "82"))  # partitions' count never ends
    assert e.value.field == "topics[0].partitions"
    assert "runs past the end of the frame" in str(e.value)


def test_a_non_nullable_compact_array_sent_as_null_names_the_field():
    with pytest.raises(SchemaException) as e:
        decode(VOTE_REQUEST_V0, h("00", "00", "00"))  # cluster_id null (allowed), topics null (not)
    assert e.value.field == "topics"
    assert "non-nullable array was serialized as null" in str(e.value)


def test_a_compact_array_that_claims_more_elements_than_bytes_remain_fails_before_allocating():
    with pytest.raises(SchemaException) as e:
        decode(QUORUM_STATE_DATA_V0, h("01", "ffffffff" * 3, "00" * 8, "ffffffff0f"))
    assert e.value.field == "current_voters"
    assert "array claims" in str(e.value)


FETCH_SNAPSHOT_HEAD = h("00000002 7fffffff", "01")  # replica_id, max_bytes, topics: empty


def test_a_tagged_field_whose_size_overruns_the_frame_names_its_tag():
    with pytest.raises(SchemaException) as e:
        decode(
            FETCH_SNAPSHOT_REQUEST_V0, FETCH_SNAPSHOT_HEAD + h("01", "00 10", "03 6162")
        )  # size 16, 3 remain
    assert e.value.field == "tagged_fields[tag 0]"
    assert "tagged field 0 claims 16 bytes, 3 remain" in str(e.value)


def test_a_known_tagged_field_whose_size_disagrees_with_its_value_names_the_field():
    with pytest.raises(SchemaException) as e:
        decode(FETCH_SNAPSHOT_REQUEST_V0, FETCH_SNAPSHOT_HEAD + h("01", "00 04", "03 6162 00"))
    assert e.value.field == "cluster_id"
    assert "claims 4 bytes, its value took 3" in str(e.value)


def test_a_value_inside_a_tagged_field_cannot_read_past_its_size():
    with pytest.raises(SchemaException) as e:
        decode(FETCH_SNAPSHOT_REQUEST_V0, FETCH_SNAPSHOT_HEAD + h("01", "00 02", "03 6162"))
    assert e.value.field == "cluster_id"


def test_a_failed_write_leaves_nothing_of_the_struct_behind():
    out = bytearray(b"x")
    with pytest.raises(SchemaException) as e:
        FlexibleSchema(Field("id", INT32), tagged=(TaggedField(0, "n", INT32, "", 0),)).write(
            out, {"id": 1, "n": "?"}
        )
    assert e.value.field == "n" and out == b"x"


def test_mutated_raft_frames_decode_or_raise_schema_exception():
    """Hostile bytes in a flexible version: a flipped, cut or lengthened frame either decodes or fails
    with the typed error, never with another exception."""
    rng = random.Random(482)
    for api, version, kind, _, golden in RPC_CASES:
        schema = api.request_schema(version) if kind == "request" else api.response_schema(version)
        for _ in range(150):
            data = bytearray(golden)
            if rng.random() < 0.5:
                for _ in range(rng.randint(1, 3)):
                    data[rng.randrange(len(data))] = rng.choice((0x00, 0x7F, 0x80, 0xFF, rng.randrange(256)))
            else:
                data = data[: rng.randrange(len(data))]
            try:
                decode(schema, bytes(data))
            except SchemaException as e:
                assert e.field or e.position is not None, f"{api.name} {kind}: {e} names no field or byte"
