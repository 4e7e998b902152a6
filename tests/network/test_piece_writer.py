"""A response's schema writer into a ``PieceWriter``: fetched records stay pieces of their own (a
file region, a large buffer: never copied), everything else is bytes, and the pieces add up to the
same frame the plain encoder writes."""

from __future__ import annotations

import os

import pytest

from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.messages import RESPONSE_HEADER
from kafka_lite.common.protocol.types import RecordsWriter, encode
from kafka_lite.network.transfer import FileRegion, PieceWriter

pytestmark = pytest.mark.unit
FETCH_V4 = ApiKeys.FETCH.response_schema(4)


def fetch_response(record_sets: list) -> dict:
    header = {
        "partition": 0, "error_code": 0, "high_watermark": 9, "last_stable_offset": 9,
        "log_start_offset": 0, "aborted_transactions": None,
    }  # fmt: skip
    return {
        "throttle_time_ms": 0,
        "responses": [
            {
                "topic": "orders",
                "partition_responses": [
                    {"partition_header": {**header, "partition": p}, "record_set": r}
                    for p, r in enumerate(record_sets)
                ],
            }
        ],
    }


def write(body: dict) -> list:
    out = PieceWriter()
    RESPONSE_HEADER.write(out, {"correlation_id": 7})
    FETCH_V4.write(out, body)
    return out.finish()


def test_large_record_sets_are_pieces_of_their_own_and_small_ones_are_copied():
    large, small = os.urandom(64 * 1024), os.urandom(100)
    pieces = write(fetch_response([large, small, large]))
    # a record set ends its partition's struct, and the last one ends the frame
    assert [p is large for p in pieces] == [False, True, False, True]
    assert small in pieces[2]  # copied into the bytes between the two large pieces
    expected = encode(RESPONSE_HEADER, {"correlation_id": 7}) + encode(
        FETCH_V4, fetch_response([large, small, large])
    )
    assert b"".join(pieces) == expected


def test_a_file_region_is_left_to_the_send(tmp_path):
    path = tmp_path / "records"
    path.write_bytes(b"x" * 1000)
    fd = os.open(path, os.O_RDONLY)
    try:
        region = FileRegion(fd, 10, 500)
        pieces = write(fetch_response([region]))
        assert len(pieces) == 2 and pieces[1] is region
        assert pieces[0].endswith((500).to_bytes(4, "big"))  # the records' length, then the region
    finally:
        os.close(fd)


def test_a_plain_records_writer_copies_records_in():
    data = os.urandom(64 * 1024)
    out = RecordsWriter()
    FETCH_V4.write(out, fetch_response([data]))
    assert bytes(out) == encode(FETCH_V4, fetch_response([data]))
