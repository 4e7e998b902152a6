"""Hostile bytes: mutated and random frames either decode or raise the typed ``SchemaException``,
and no claimed length makes the decoder allocate more than the frame could justify."""

from __future__ import annotations

import random
import re
import struct
import tracemalloc

import pytest

from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.requests import (
    RequestHeader,
    encode_request,
    parse_request,
    parse_request_header,
)
from kafka_lite.common.protocol.types import ArrayOf, Reader, SchemaException, encode, walk
from kafka_lite.common.record import MemoryRecords

pytestmark = pytest.mark.unit
FRAMES = 12_000


def _valid_frames() -> list[bytes]:
    """One real frame for a handful of APIs, to mutate."""
    records = bytes(MemoryRecords.with_records([(1_500_000_000_000, b"k", b"v" * 30)] * 3).buffer())
    bodies = {
        (ApiKeys.PRODUCE, 3): {"transactional_id": None, "acks": -1, "timeout": 30000,
                               "topic_data": [{"topic": "orders", "data": [{"partition": 0, "record_set": records}]}]},
        (ApiKeys.FETCH, 5): {"replica_id": -1, "max_wait_time": 500, "min_bytes": 1, "max_bytes": 1 << 20,
                             "isolation_level": 0, "topics": [{"topic": "orders", "partitions": [
                                 {"partition": 0, "fetch_offset": 42, "log_start_offset": -1, "max_bytes": 1 << 20}]}]},
        (ApiKeys.METADATA, 4): {"topics": ["orders", "clicks"], "allow_auto_topic_creation": True},
        (ApiKeys.JOIN_GROUP, 2): {"group_id": "g", "session_timeout": 10000, "rebalance_timeout": 30000,
                                  "member_id": "", "protocol_type": "consumer",
                                  "group_protocols": [{"protocol_name": "range", "protocol_metadata": b"\x00\x01"}]},
        (ApiKeys.CREATE_TOPICS, 2): {"create_topic_requests": [{"topic": "t", "num_partitions": 3,
                                     "replication_factor": 1, "replica_assignment": [],
                                     "config_entries": [{"config_name": "cleanup.policy", "config_value": "compact"}]}],
                                     "timeout": 1000, "validate_only": False},
        (ApiKeys.API_VERSIONS, 0): {},
    }  # fmt: skip
    return [encode_request(RequestHeader(api, v, 7, "fuzz"), body) for (api, v), body in bodies.items()]


def _mutate(rng: random.Random, frame: bytes) -> bytes:
    data = bytearray(frame)
    kind = rng.randrange(6)
    if kind == 0 and data:  # flip some bytes
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] ^= rng.randint(1, 255)
    elif kind == 1:  # cut
        data = data[: rng.randrange(len(data) + 1)]
    elif kind == 2:  # trailing garbage
        data += rng.randbytes(rng.randint(1, 16))
    elif kind == 3 and len(data) >= 4:  # a huge or negative length or count somewhere
        at = rng.randrange(len(data) - 3)
        struct.pack_into(">i", data, at, rng.choice([2**31 - 1, -2, -(2**31), 0x7FFF0000, 1 << 24]))
    elif kind == 4 and len(data) >= 4:  # unknown api key or version
        struct.pack_into(">hh", data, 0, rng.choice([17, 21, 99, -1, 0]), rng.choice([-1, 7, 99, 3]))
    else:  # pure noise
        data = bytearray(rng.randbytes(rng.randint(0, 64)))
    return bytes(data)


def test_mutated_and_random_frames_raise_only_the_typed_error():
    rng = random.Random(20261122)
    frames = _valid_frames()
    decoded = rejected = 0
    for i in range(FRAMES):
        frame = _mutate(rng, frames[i % len(frames)])
        try:
            parse_request(frame)
            decoded += 1
        except SchemaException as e:
            assert e.position is None or 0 <= e.position <= len(frame), e
            rejected += 1
    assert decoded + rejected == FRAMES
    assert rejected > FRAMES // 2 and decoded > 0  # the mutations really do hit both outcomes


@pytest.mark.parametrize("claim", [2**31 - 1, 1 << 30, 0x00FFFFFF])
def test_claimed_lengths_never_drive_allocation(claim):
    """A frame claiming a huge array, string or bytes field costs memory proportional to the frame,
    not to the claim: the decoder checks each claim against the bytes that remain first."""
    frames = []
    for base in _valid_frames():
        for at in range(14, len(base) - 3, 3):
            frame = bytearray(base)
            struct.pack_into(">i", frame, at, claim)
            frames.append(bytes(frame))
    largest = max(len(f) for f in frames)
    limit = 64 * largest + 64 * 1024

    def peak(frame: bytes) -> int:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        try:
            parse_request(frame)
        except SchemaException:
            pass
        return tracemalloc.get_traced_memory()[1] - before

    tracemalloc.start()
    try:
        # tracemalloc counts every thread's allocations, and a worker may have a session cluster's
        # threads running: a frame over the limit is decoded twice more and judged by its least
        # peak. An allocation the claim drives happens on every decode, so it still fails.
        worst = max(min(peak(frame) for _ in range(3)) if peak(frame) >= limit else 0 for frame in frames)
    finally:
        tracemalloc.stop()
    assert worst < limit, f"peak {worst} bytes while decoding frames of at most {largest} bytes"


def test_a_damaged_frame_decodes_to_what_re_encodes_to_its_bytes_or_fails_at_a_real_field():
    """On any bytes at all, the decoder either reads a value that encodes back to exactly the bytes
    it consumed (so it read every field where the encoder writes it, and stopped where the value
    ends), or raises an error naming a field path the schema has, at a byte inside the body."""
    rng = random.Random(7)
    frames = _valid_frames()
    accepted = rejected = 0
    for i in range(4000):
        frame = _mutate(rng, frames[i % len(frames)])
        try:
            header, start = parse_request_header(frame)
        except SchemaException:
            continue
        api = header.api
        if api is None or not api.is_version_supported(header.api_version):
            continue
        schema = api.request_schema(header.api_version)
        r = Reader(frame, start)
        try:
            value = schema.read(r)
        except SchemaException as e:
            assert re.sub(r"\[\d+\]", "[]", e.field) in _paths(schema), (e, frame.hex())
            assert e.position is not None and start <= e.position <= len(frame), (e, frame.hex())
            rejected += 1
            continue
        consumed = frame[start : r.pos]
        again = encode(schema, value)
        # A BOOLEAN reads any non-zero byte as true and writes true as 1: the only byte that may differ.
        differ = [j for j in range(len(again)) if j >= len(consumed) or again[j] != consumed[j]]
        assert len(again) == len(consumed) and all(again[j] == 1 and consumed[j] > 1 for j in differ), (
            frame.hex()
        )
        accepted += 1
    assert accepted + rejected > 1000 and accepted > 500 and rejected > 500, (accepted, rejected)


def _paths(schema) -> set[str]:
    """Every field path of ``schema``, array elements included (``topics[]`` as well as ``topics``)."""
    paths = set()
    for path, type_ in walk(schema):
        paths.add(path)
        if isinstance(type_, ArrayOf):
            paths.add(path + "[]")
    return paths
