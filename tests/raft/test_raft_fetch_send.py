"""The quorum's listener sends a Fetch answer's records as the broker sends a fetch's: a slice of
64 KiB or more goes from the segment file with ``os.sendfile``, a smaller one is read into the
frame; either way the bytes on the wire are the frame the codec writes with the records in memory."""

from __future__ import annotations

import gc
import os
import socket
import struct
import uuid

import pytest

from kafka_lite.common.protocol.raft_messages import RaftApiKeys, encode_raft_response, write_raft_response
from kafka_lite.common.record.file_records import FileRecords
from kafka_lite.common.record.memory_records_builder import MemoryRecordsBuilder
from kafka_lite.network.transfer import FileRegion, PieceWriter, ResponseSend
from kafka_lite.raft import raft_util
from kafka_lite.raft.raft_socket_server import _file_regions
from kafka_lite.raft.tools.raft_manager import METADATA_PARTITION

pytestmark = pytest.mark.unit

FETCH_VERSION = 13


def _segment(path, records: int) -> FileRecords:
    """A segment file holding ``records`` records of 100 bytes in batches of 100."""
    log = FileRecords.open(path)
    offset = 0
    while offset < records:
        builder = MemoryRecordsBuilder(base_offset=offset)
        for _ in range(min(100, records - offset)):
            builder.append(1_700_000_000_000, None, os.urandom(100))
        offset += 100
        log.append(bytes(builder.build().buffer()))
    return log


def _answer(records) -> dict:
    return raft_util.fetch_response(
        uuid.UUID(int=1),
        METADATA_PARTITION,
        0,
        records=records,
        high_watermark=7,
        leader_id=1,
        leader_epoch=2,
    )


def _sent(send: ResponseSend) -> bytes:
    """What ``send`` writes to a socket, size prefix and all."""
    a, b = socket.socketpair()
    with a, b:
        a.setblocking(False)
        out = bytearray()
        while not send.completed():
            send.write_to(a)
            out += b.recv(1 << 20)
        return bytes(out)


@pytest.mark.parametrize("records", [1_000, 30], ids=["a slice of 64 KiB or more", "a smaller slice"])
def test_the_fetch_answer_on_the_wire_is_the_frame_with_the_records_in_memory(tmp_path, records):
    log = _segment(tmp_path / "00000000000000000000.log", records)
    whole = log.read(0, log.size_in_bytes())
    answer = _answer(whole)

    _file_regions(answer)

    sent = answer["responses"][0]["partitions"][0]["records"]
    assert isinstance(sent, FileRegion) == (whole.size_in_bytes() >= 64 * 1024)
    out = PieceWriter()
    write_raft_response(out, RaftApiKeys.FETCH, FETCH_VERSION, 5, answer)
    expected = encode_raft_response(RaftApiKeys.FETCH, FETCH_VERSION, 5, _answer(whole.read_bytes()))
    assert _sent(ResponseSend("peer", out.finish())) == struct.pack(">i", len(expected)) + expected


def test_a_send_keeps_its_segment_open_after_the_log_and_the_answer_let_go(tmp_path):
    """The listener lets go of its answer once the send is made; the send still holds the slice,
    so a segment closed (or deleted) meanwhile is read whole, never a closed or reused descriptor."""
    log = _segment(tmp_path / "00000000000000000000.log", 1_000)
    expected = log.read_bytes()
    answer = _answer(log.read(0, log.size_in_bytes()))
    _file_regions(answer)
    out = PieceWriter()
    write_raft_response(out, RaftApiKeys.FETCH, FETCH_VERSION, 5, answer)
    send = ResponseSend("peer", out.finish())
    del answer, out
    log.close()
    gc.collect()
    assert expected in _sent(send)
