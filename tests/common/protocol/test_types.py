"""Schema encoding and decoding errors name the field path and byte offset."""

from __future__ import annotations

import pytest

from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.types import SchemaException, decode, encode

pytestmark = pytest.mark.unit
PRODUCE = ApiKeys.PRODUCE.request_schema(3)


def _produce(partition) -> dict:
    return {"transactional_id": None, "acks": 1, "timeout": 1000,
            "topic_data": [{"topic": "t", "data": [{"partition": partition, "record_set": b"xyz"}]}]}  # fmt: skip


def test_a_bad_value_names_its_field_path_and_leaves_the_output_clean():
    out = bytearray(b"prefix")
    with pytest.raises(SchemaException, match=r"field 'topic_data\[0\]\.data\[0\]\.partition'"):
        PRODUCE.write(out, _produce("zero"))
    assert out == b"prefix", "a failed write must not leave half a message behind"
    with pytest.raises(SchemaException, match="null is not allowed for a STRING"):
        encode(PRODUCE, {**_produce(0), "topic_data": [{"topic": None, "data": []}]})


def test_a_cut_frame_names_the_field_and_offset():
    frame = encode(PRODUCE, _produce(0))
    with pytest.raises(SchemaException) as e:
        decode(PRODUCE, frame[:-2])
    assert e.value.field == "topic_data[0].data[0].record_set" and e.value.position == len(frame) - 7
    with pytest.raises(SchemaException, match="1 unexpected trailing bytes"):
        decode(PRODUCE, frame + b"\x00")


def test_an_array_count_is_checked_against_the_bytes_left_before_any_element_is_read():
    import struct

    frame = encode(PRODUCE, _produce(0))
    at = 2 + 2 + 4  # transactional_id (null), acks, timeout: then the topic_data count
    claimed = frame[:at] + struct.pack(">i", 1_000_000) + frame[at + 4 :]
    with pytest.raises(SchemaException) as e:
        decode(PRODUCE, claimed)
    assert (e.value.field, e.value.position) == ("topic_data", at)
    assert "claims 1000000 elements" in e.value.reason


def test_varint_types_match_the_record_layers_encoding_and_reject_garbage():
    from kafka_lite.common.protocol.api_keys import api_versions
    from kafka_lite.common.protocol.types import UNSIGNED_VARINT, VARINT, VARLONG, Field, Schema
    from kafka_lite.common.record.varint import write_varint

    schema = Schema(Field("a", VARINT), Field("b", VARLONG), Field("c", UNSIGNED_VARINT))
    value = {"a": -300, "b": 2**40, "c": 300}
    encoded = encode(schema, value)
    expected = bytearray()
    write_varint(-300, expected)
    write_varint(2**40, expected)
    assert encoded == bytes(expected) + b"\xac\x02"  # unsigned 300: no zig-zag
    assert decode(schema, encoded) == value
    with pytest.raises(SchemaException, match="longer than 5 bytes"):
        decode(Schema(Field("a", VARINT)), b"\x80\x80\x80\x80\x80\x01")
    with pytest.raises(SchemaException, match="runs past the end"):
        decode(Schema(Field("a", UNSIGNED_VARINT)), b"\x80")
    table = api_versions({ApiKeys.PRODUCE, ApiKeys.API_VERSIONS})
    assert table == [
        {"api_key": 0, "min_version": 0, "max_version": 3},
        {"api_key": 18, "min_version": 0, "max_version": 2},
    ]


def test_request_header_v0_has_no_client_id():
    import struct

    from kafka_lite.common.protocol.requests import parse_request_header

    frame = struct.pack(">hhi", 7, 0, 42) + b"body"
    header, body_start = parse_request_header(frame, header_version=0)
    assert (header.api_key, header.api_version, header.correlation_id, header.client_id) == (7, 0, 42, None)
    assert body_start == 8
    # ControlledShutdown v0 is the one request sent with it: chosen from the api key and version
    assert parse_request_header(frame) == (header, 8)
    v1 = struct.pack(">hhih", 7, 1, 42, 1) + b"x" + b"body"
    assert parse_request_header(v1)[0].client_id == "x"
