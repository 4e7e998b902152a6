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
