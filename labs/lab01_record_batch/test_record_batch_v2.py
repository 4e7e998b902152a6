"""Lab 1 graded tests: zig-zag varints and the v2 record, checked against Kafka's bytes.

"Kafka's bytes" come from two places: byte vectors worked out from Kafka's ``ByteUtils`` and
``DefaultRecord`` (each one annotated field by field below), and kafka-python's record builder and
reader, an implementation written independently from Kafka's Java source.

Every test calls one of the four functions you write (``write_varint``, ``read_varint``,
``DefaultRecord.write_to``, ``DefaultRecord.read_from``, directly or through ``MemoryRecordsBuilder``
and ``MemoryRecords``) before anything else can fail, so on the untouched starter each one fails
with the lab's NotImplementedError.

When bytes differ, the failure message names the first wrong field and shows both encodings with a
caret under the first wrong byte; when a corrupt input is reported at the wrong byte, it prints the
input field by field and marks where the error should have pointed. The field trees of kafka-python's
bytes are decoded with kafka-python's own varint reader, so they are right even while yours is not.
"""

from __future__ import annotations

import io
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatch as KpBatch
from kafka.record.default_records import DefaultRecordBatchBuilder as KpBuilder
from kafka.record.util import decode_varint as kp_decode_varint
from kafka.record.util import encode_varint as kp_encode_varint
from kafka.record.util import size_of_varint as kp_size_of_varint
from rich.console import Console

from kafka_lite.common.errors import CorruptRecordException
from kafka_lite.common.record import CompressionType, Header, MemoryRecords, MemoryRecordsBuilder
from kafka_lite.common.record import inspect as record_inspect
from kafka_lite.common.record.default_record import DefaultRecord
from kafka_lite.common.record.default_record_batch import RECORD_BATCH_OVERHEAD, write_header
from kafka_lite.common.record.inspect import FieldNode, caret_dump, describe_batch, render_tree
from kafka_lite.common.record.varint import read_varint, read_varlong, write_varint

pytestmark = [pytest.mark.lab(1)]
TS = 1_500_000_000_000
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

# -- explaining failures ---------------------------------------------------------------------------------


def _varint(value: int) -> bytes:
    out = bytearray()
    write_varint(value, out)
    return bytes(out)


def _groups_value(data: bytes) -> int:
    """The number ``data``'s 7-bit groups hold, lowest group first (continuation bits ignored)."""
    return sum((b & 0x7F) << (7 * i) for i, b in enumerate(data))


def _bits(data: bytes) -> str:
    """Each byte as ``d8 = 1 1011000 (more)``: the continuation bit, then the 7 payload bits."""
    parts = []
    for b in data:
        parts.append(f"{b:02x} = {b >> 7} {b & 0x7F:07b} ({'more' if b & 0x80 else 'last'})")
    return "; ".join(parts) or "(no bytes)"


def _kp_read_varint(buf, pos: int, max_bytes: int = 5) -> tuple[int, int]:
    """kafka-python's varint reader behind kafka_lite's signature: the trees below never use yours."""
    try:
        return kp_decode_varint(buf, pos)
    except IndexError:
        raise CorruptRecordException(f"varint at byte {pos} runs past the end", position=pos) from None


def _render(node: FieldNode, highlight: int) -> str:
    out = io.StringIO()
    Console(file=out, width=110, no_color=True, color_system=None).print(render_tree(node, highlight))
    return out.getvalue().rstrip()


def _describe(buf: bytes) -> FieldNode:
    with mock.patch.object(record_inspect, "read_varint", _kp_read_varint):
        return describe_batch(buf)


def _record_holding(root: FieldNode, at: int) -> tuple[int, FieldNode] | None:
    for records in (c for c in root.children if c.name.startswith("records")):
        for i, record in enumerate(records.children):
            if record.offset <= at < record.offset + record.size:
                return i, record
    return None


def _tree_text(buf: bytes, highlight: int, like: bytes | None = None) -> str:
    """The field tree around byte ``highlight`` (the record holding it, or the header), as text.

    If ``buf`` does not decode as a whole, and ``like`` (a correct batch, equal to ``buf`` before
    ``highlight``) says which record holds the byte, that one record is decoded on its own.
    """
    try:
        root = _describe(buf)
    except Exception as e:  # the bytes may be too broken to decode; say so instead of hiding the failure
        found = _record_holding(_describe(like), highlight) if like is not None else None
        if found is None:
            return f"  (these bytes do not decode as a v2 batch: {e})"
        index, record = found
        try:
            with mock.patch.object(record_inspect, "read_varint", _kp_read_varint):
                node, _ = record_inspect._describe_record(buf, record.offset, index)
        except Exception as e:
            return f"  (record {index}, at byte {record.offset}, does not decode: {e})"
        return _render(node, highlight)
    found = _record_holding(root, highlight)
    if found is not None:
        return _render(found[1], highlight)
    header = [c for c in root.children if not c.children]
    return _render(FieldNode(root.name, root.offset, root.size, None, header), highlight)


def _field_at(buf: bytes, at: int) -> str:
    try:
        node = _describe(buf)
    except Exception:
        return "?"
    path = []
    while node.children:
        inside = [c for c in node.children if c.offset <= at < c.offset + max(c.size, 1)]
        if not inside:
            break
        node = inside[-1]
        path.append(node.name)
    return " > ".join(path) or "?"


# batchLength (bytes 8-11) and crc (17-20) follow from the records: when a record is wrong they differ
# too, so the first difference worth showing is the first one outside them.
_DERIVED = set(range(8, 12)) | set(range(17, 21))


def _explain_batches(expected: bytes, actual: bytes, source: str) -> str:
    """Where your batch first differs from ``source``'s: the field, both bytes in context, both trees."""
    diffs = [i for i, (a, b) in enumerate(zip(expected, actual, strict=False)) if a != b]
    at = next((i for i in diffs if i not in _DERIVED), diffs[0] if diffs else min(len(expected), len(actual)))
    lines = [
        f"your batch differs from {source}'s at byte {at}, in field '{_field_at(expected, at)}' "
        f"({source}: {len(expected)} bytes, yours: {len(actual)} bytes)",
    ]
    if any(i in _DERIVED for i in diffs) and at not in _DERIVED:
        lines.append("(batchLength and crc differ too: they follow from the records)")
    lines += [
        f"{source}:",
        caret_dump(expected, at) if at < len(expected) else "  (ends before this byte)",
        "yours:",
        caret_dump(actual, at) if at < len(actual) else "  (ends before this byte)",
        f"{source}'s fields there:",
        _tree_text(expected, at),
        "your fields there (decoded with kafka-python's varint reader):",
        _tree_text(actual, at, like=expected),
    ]
    return "\n".join(lines)


# -- hand-made records, field by field -------------------------------------------------------------------

Fields = list[tuple[str, str]]  # (field name, bytes in hex)


def _batch_around(records: list[Fields]) -> tuple[bytes, list[tuple[int, str, str]]]:
    """A valid v2 header (written by the given ``write_header``) around hand-made record bytes.

    Returns the batch and its record fields as ``(absolute position, "record i > name", hex)``, so
    a test can name the byte an error should point at and a failure can show the input field by field.
    """
    body, layout = bytearray(), []
    for i, fields in enumerate(records):
        for name, hexed in fields:
            layout.append((RECORD_BATCH_OVERHEAD + len(body), f"record {i} > {name}", hexed))
            body += bytes.fromhex(hexed)
    size = RECORD_BATCH_OVERHEAD + len(body)
    buf = bytearray(size)
    buf[RECORD_BATCH_OVERHEAD:] = body
    write_header(
        buf, 0, base_offset=0, size_in_bytes=size, partition_leader_epoch=0, attributes=0,
        last_offset_delta=len(records) - 1, first_timestamp=TS, max_timestamp=TS, producer_id=-1,
        producer_epoch=-1, base_sequence=-1, num_records=len(records),
    )  # fmt: skip
    return bytes(buf), layout


def _position_of(layout, field: str) -> int:
    return next(pos for pos, name, _ in layout if name == field)


def _corrupt_position(buf: bytes, case: str) -> int | None:
    """Decode every record of ``buf``; return the ``position`` of the CorruptRecordException raised."""
    try:
        records = list(MemoryRecords(buf).records())
    except CorruptRecordException as e:
        return e.position
    except NotImplementedError:
        raise
    except Exception as e:
        pytest.fail(
            f"{case}: reading these bytes raised {type(e).__name__}: {e}; a reader reports damage as a "
            f"CorruptRecordException that gives the byte (position=...)"
        )
    pytest.fail(f"{case}: these bytes are malformed, but they decoded to {records}")


def _explain_position(case: str, buf: bytes, layout, expected: int, got: int | None) -> str:
    def name_of(pos):
        if pos < RECORD_BATCH_OVERHEAD:
            return "the batch header"
        return next((name for p, name, h in layout if p <= pos < p + len(bytes.fromhex(h))), "past the end")

    lines = [
        f"{case}: the error should point at byte {expected} ({name_of(expected)}); "
        f"yours points at {got} ({'no position' if got is None else name_of(got)}).",
        "The records, field by field (>> where the error belongs, ?? where yours points, >? both):",
    ]
    for pos, name, hexed in layout:
        end = pos + len(bytes.fromhex(hexed))
        mark = {(True, False): ">>", (False, True): "??", (True, True): ">?", (False, False): "  "}[
            (pos <= expected < end, got is not None and pos <= got < end)
        ]
        lines.append(f"  {mark} {pos:>4}  {name:<34} {hexed}")
    lines.append(caret_dump(buf, expected))
    return "\n".join(lines)


# -- the tests -------------------------------------------------------------------------------------------

KNOWN_VARINTS = [
    (0, "00"), (-1, "01"), (1, "02"), (-2, "03"), (2, "04"), (63, "7e"), (-64, "7f"), (64, "8001"),
    (300, "d804"), (-300, "d704"), (INT32_MAX, "feffffff0f"), (INT32_MIN, "ffffffff0f"),
    (INT64_MAX, "feffffffffffffffff01"), (INT64_MIN, "ffffffffffffffffff01"),
]  # fmt: skip


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_write_varint_known_bytes():
    for value, encoded in KNOWN_VARINTS:
        got = _varint(value)
        assert got.hex() == encoded, (
            f"write_varint({value}) wrote {got.hex() or 'nothing'}, Kafka writes {encoded}.\n"
            f"  Kafka's bytes: {_bits(bytes.fromhex(encoded))}\n"
            f"  yours:         {_bits(got)}\n"
            f"Zig-zag first, {value} is {_groups_value(bytes.fromhex(encoded))}: Kafka's 7-bit groups, "
            f"lowest first, hold that number; yours hold {_groups_value(got)}."
        )
    out = bytearray(b"\xaa")
    write_varint(300, out)
    assert out == b"\xaa\xd8\x04", (
        f"out held aa before write_varint(300, out) and should then hold aa d8 04; it holds {out.hex() or 'nothing'}"
    )


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_read_varint_known_bytes_and_position():
    for value, encoded in KNOWN_VARINTS:
        data = b"\x07\x07" + bytes.fromhex(encoded) + b"\x99\x99"  # a prefix and trailing bytes
        got = read_varlong(data, 2) if len(encoded) > 10 else read_varint(data, 2)
        expected = (value, 2 + len(encoded) // 2)
        assert got == expected, (
            f"reading {encoded} at byte 2 of {data.hex()} should give (value, next position) = {expected}, "
            f"got {got}.\n  the bytes: {_bits(bytes.fromhex(encoded))}"
        )


@pytest.mark.stage(1)
@pytest.mark.points(2)
@settings(max_examples=300, deadline=None)
@given(st.integers(INT64_MIN, INT64_MAX), st.binary(max_size=4), st.binary(max_size=2))
def test_varint_round_trip_matches_kafka_python(value, prefix, suffix):
    ours = _varint(value)
    theirs = bytearray()
    kp_encode_varint(value, theirs.append)
    assert ours == bytes(theirs), (
        f"write_varint({value}): kafka-python writes {theirs.hex()}, you {ours.hex()}"
    )
    data = prefix + ours + suffix
    decoded, pos = read_varlong(data, len(prefix))
    assert decoded == value, f"read_varlong of {ours.hex()} gave {decoded}, not {value}"
    assert pos == len(prefix) + len(ours), (
        f"read_varlong of {ours.hex()} at byte {len(prefix)} returned next position {pos}; the number ends "
        f"before byte {len(prefix) + len(ours)}"
    )


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_bad_varints_are_corrupt_where_they_start():
    cases = [
        ("an empty buffer", b"", 0, 5, 0),
        ("continuation bits, then the buffer ends", b"\x00\x00\x80\x80", 2, 5, 2),
        ("six bytes: longer than any int32 varint", b"\x80\x80\x80\x80\x80\x01", 0, 5, 0),
        ("too long, after a prefix", b"\x07\x07\xff\xff\xff\xff\xff\x00\x00", 2, 5, 2),
        ("eleven bytes: longer than any int64 varlong", b"\x80" * 10 + b"\x01", 0, 10, 0),
    ]
    for what, data, pos, max_bytes, expected in cases:
        try:
            got = read_varint(data, pos, max_bytes)
        except CorruptRecordException as e:
            assert e.position == expected, (
                f"{what} ({data.hex()} read at byte {pos}): position should be {expected}, where the "
                f"number starts; got {e.position}"
            )
        else:
            pytest.fail(f"{what} ({data.hex()} read at byte {pos}, max {max_bytes} bytes) must raise "
                        f"CorruptRecordException(position={expected}); it returned {got}")  # fmt: skip
    # The longest legal encodings are accepted: 5 bytes for an int32, 10 for an int64.
    assert read_varint(b"\xff\xff\xff\xff\x0f", 0) == (INT32_MIN, 5)
    assert read_varlong(b"\xff" * 9 + b"\x01", 0) == (INT64_MIN, 10)


# Each known record: write_to's arguments, then Kafka's bytes field by field (checked against
# kafka-python's encoder).
KNOWN_RECORDS = [
    (
        "key b'k', value b'v', no headers",
        (0, 0, b"k", b"v", []),
        [("length", "10"), ("attributes", "00"), ("timestampDelta", "00"), ("offsetDelta", "00"),
         ("keyLength", "02"), ("key", "6b"), ("valueLength", "02"), ("value", "76"), ("headersCount", "00")],
    ),
    (
        "null key, null value, offsetDelta 5, timestampDelta -3",
        (5, -3, None, None, []),
        [("length", "0c"), ("attributes", "00"), ("timestampDelta", "05"), ("offsetDelta", "0a"),
         ("keyLength", "01"), ("valueLength", "01"), ("headersCount", "00")],
    ),
    (
        "empty key, offsetDelta 300, timestampDelta 64, header 'é' with a null value",
        (300, 64, b"", b"x", [Header("\u00e9", None)]),
        [("length", "1a"), ("attributes", "00"), ("timestampDelta", "8001"), ("offsetDelta", "d804"),
         ("keyLength", "00"), ("valueLength", "02"), ("value", "78"), ("headersCount", "02"),
         ("header 0 keyLength", "04"), ("header 0 key", "c3a9"), ("header 0 valueLength", "01")],
    ),
]  # fmt: skip


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_write_to_known_records():
    for what, args, fields in KNOWN_RECORDS:
        out = bytearray(b"\xaa\xbb")  # write_to appends after whatever is already there
        size = DefaultRecord.write_to(out, *args)
        got = bytes(out[2:])
        expected = bytes.fromhex("".join(h for _, h in fields))
        if got != expected:
            lines = [
                f"record with {what}: your bytes differ from Kafka's",
                "  field                Kafka   yours",
            ]
            pos = 0
            for name, hexed in fields:
                n = len(hexed) // 2
                mine = got[pos : pos + n].hex()
                mark = "" if mine == hexed else "   <-- differs"
                lines.append(f"  {name:<20} {hexed:<7} {mine or '(missing)'}{mark}")
                pos += n
            if len(got) > pos:
                lines.append(f"  (and {len(got) - pos} extra bytes: {got[pos:].hex()})")
            pytest.fail("\n".join(lines))
        assert out[:2] == b"\xaa\xbb", (
            f"out began aa bb before write_to and then began {bytes(out[:2]).hex()}: the bytes already there changed"
        )
        assert size == len(expected), (
            f"record with {what}: write_to wrote {len(expected)} bytes (its length field included) and returned {size}"
        )


# The sample batch: keys, a null key, a null value, headers (one with a null value, one with a
# non-ASCII key), empty key and value, a value long enough for a two-byte length, a timestamp before
# the first one (a negative delta) and a gap in the offsets (as after compaction).
SAMPLE = [
    (0, TS, b"user-1", b'{"page": "/home"}', [("trace", b"abc")]),
    (1, TS + 7, None, b"no key", []),
    (2, TS + 3, b"user-2", None, [("a", None), ("\u00e9t\u00e9", b"\x00\xff")]),
    (3, TS - 5, b"", b"", []),
    (7, TS + 1000, b"user-3", b"v" * 200, [("x" * 70, b"y")]),
]


def _kafka_python_batch(records=SAMPLE, codec=0, producer_id=-1, base_sequence=-1) -> bytes:
    epoch = 3 if producer_id >= 0 else -1
    builder = KpBuilder(2, codec, 0, producer_id, epoch, base_sequence, 1 << 20)
    for offset, ts, key, value, headers in records:
        builder.append(offset, timestamp=ts, key=key, value=value, headers=list(headers))
    return bytes(builder.build())


def _our_batch(records=SAMPLE, codec=CompressionType.NONE, producer_id=-1, base_sequence=-1) -> bytes:
    builder = MemoryRecordsBuilder(
        compression=codec,
        producer_id=producer_id,
        producer_epoch=3 if producer_id >= 0 else -1,
        base_sequence=base_sequence,
        partition_leader_epoch=0,  # kafka-python's builder writes 0 here; the broker overwrites it anyway
    )
    for offset, ts, key, value, headers in records:
        builder.append_with_offset(offset, ts, key, value, [Header(*h) for h in headers])
    return bytes(builder.build().buffer())


def _rows(records) -> list[tuple]:
    return [(r.offset, r.timestamp, r.key, r.value, [tuple(h) for h in r.headers]) for r in records]


EXPECTED_ROWS = [(o, ts, k, v, [tuple(h) for h in hs]) for o, ts, k, v, hs in SAMPLE]


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_batch_bytes_match_kafka_python():
    ours = _our_batch(producer_id=42, base_sequence=10)  # calls your write_to for each record
    theirs = _kafka_python_batch(producer_id=42, base_sequence=10)
    assert ours == theirs, _explain_batches(theirs, ours, "kafka-python")


@pytest.mark.stage(3)
@pytest.mark.points(2)
def test_read_from_decodes_kafka_python_batches():
    for codec in (CompressionType.NONE, CompressionType.GZIP, CompressionType.LZ4):
        theirs = _kafka_python_batch(codec=int(codec), producer_id=42, base_sequence=10)
        records = list(MemoryRecords(theirs).records())  # calls your read_from for each record
        assert _rows(records) == EXPECTED_ROWS, (
            f"{codec.config_name} batch from kafka-python: decoded {_rows(records)}\n"
            f"expected {EXPECTED_ROWS}\n"
            + _tree_text(_kafka_python_batch(producer_id=42, base_sequence=10), 61)
        )
        assert [r.sequence for r in records] == [10, 11, 12, 13, 17], (
            f"{codec.config_name}: the records at offset deltas 0, 1, 2, 3 and 7 of a batch whose baseSequence "
            f"is 10 have sequences [10, 11, 12, 13, 17]; yours decoded {[r.sequence for r in records]}"
        )
        # kafka-python's size_in_bytes leaves out the length varint; Kafka's (and ours) includes it.
        sizes = [kp_size_of_varint(r.size_in_bytes) + r.size_in_bytes for r in KpBatch(theirs)]
        assert [r.size_in_bytes for r in records] == sizes, (
            f"{codec.config_name}: the records take {sizes} bytes each (their length varints included); "
            f"yours decoded sizes {[r.size_in_bytes for r in records]}"
        )


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_kafka_python_decodes_our_batches():
    for codec in CompressionType:
        ours = _our_batch(codec=codec)  # calls your write_to for each record
        try:
            theirs = KpBatch(ours)
            crc_ok = theirs.validate_crc()
            rows = _rows(theirs)
        except Exception as e:
            pytest.fail(
                f"kafka-python cannot read your batch ({codec.config_name}) ({type(e).__name__}: {e}). "
                f"Your records, uncompressed, against kafka-python's:\n"
                + _explain_batches(_kafka_python_batch(), _our_batch(), "kafka-python")
            )
        assert crc_ok, f"{codec.config_name}: kafka-python computes a different CRC-32C for your batch"
        assert rows == EXPECTED_ROWS, (
            f"{codec.config_name}: kafka-python decodes your batch to {rows}\nexpected {EXPECTED_ROWS}"
        )


@pytest.mark.stage(3)
@pytest.mark.points(1)
@settings(max_examples=150, deadline=None)
@given(
    offset_delta=st.integers(0, INT32_MAX),
    timestamp_delta=st.integers(-(2**40), 2**40),  # a varlong: wider than an int32
    key=st.none() | st.binary(max_size=40),
    value=st.none() | st.binary(max_size=300),
    headers=st.lists(
        st.tuples(
            st.text(st.characters(blacklist_categories=("Cs",)), max_size=8),  # any encodable text
            st.none() | st.binary(max_size=8),
        ),
        max_size=3,
    ),
    base_sequence=st.sampled_from([-1, 0, 1000, INT32_MAX]),
    log_append_time=st.none() | st.just(TS + 99),
)
def test_record_round_trip(
    offset_delta, timestamp_delta, key, value, headers, base_sequence, log_append_time
):
    headers = [Header(*h) for h in headers]
    out = bytearray(b"pad")
    size = DefaultRecord.write_to(out, offset_delta, timestamp_delta, key, value, headers)
    out += b"\x00next record"
    record, end = DefaultRecord.read_from(out, 3, 1000, TS, base_sequence, log_append_time)
    assert end == 3 + size, (
        f"the record written at byte 3 ends before byte {3 + size}; read_from returned next position {end}"
    )
    expected_ts = TS + timestamp_delta if log_append_time is None else log_append_time
    assert (record.offset, record.timestamp, record.key, record.value, record.headers) == (
        1000 + offset_delta, expected_ts, key, value, tuple(headers)
    )  # fmt: skip
    # Sequences wrap from 2**31 - 1 to 0, as Kafka's DefaultRecordBatch.incrementSequence does.
    expected_sequence = -1 if base_sequence < 0 else (base_sequence + offset_delta) % 2**31
    assert record.sequence == expected_sequence, (
        f"offsetDelta {offset_delta} in a batch with baseSequence {base_sequence}: sequence {record.sequence}, "
        f"expected {expected_sequence}"
    )
    assert record.size_in_bytes == size, (
        f"the record took {size} bytes (its length field included); size_in_bytes says {record.size_in_bytes}"
    )


GOOD = [("length", "10"), ("attributes", "00"), ("timestampDelta", "00"), ("offsetDelta", "02"),
        ("keyLength", "02"), ("key", "6b"), ("valueLength", "02"), ("value", "76"), ("headersCount", "00")]  # fmt: skip


def _check_corrupt_at(case: str, records: list[Fields], field: str) -> None:
    buf, layout = _batch_around(records)
    expected = _position_of(layout, field)
    got = _corrupt_position(buf, case)
    assert got == expected, _explain_position(case, buf, layout, expected, got)


@pytest.mark.stage(3)
@pytest.mark.points(2)
def test_cut_records_and_varints_are_corrupt_at_the_right_byte():
    # The batch ends 4 bytes into record 1, which says it has 8 bytes after its length.
    _check_corrupt_at(
        "a record cut short by the end of the batch",
        [GOOD, [("length", "10"), ("attributes", "00"), ("timestampDelta", "00"), ("offsetDelta", "02")]],
        "record 1 > length",
    )
    # headersCount, the last byte of record 0, has its continuation bit set: the varint runs past the
    # end of the record. (Reading on into record 1 would be wrong: a record ends where its length says.)
    _check_corrupt_at(
        "a varint that runs past the end of its record",
        [[("length", "0c"), ("attributes", "00"), ("timestampDelta", "00"), ("offsetDelta", "00"),
          ("keyLength", "01"), ("valueLength", "01"), ("headersCount", "80")], GOOD],
        "record 0 > headersCount",
    )  # fmt: skip
    _check_corrupt_at(
        "a six-byte offsetDelta (an int32 varint has at most 5)",
        [[("length", "16"), ("attributes", "00"), ("timestampDelta", "00"), ("offsetDelta", "808080808000"),
          ("keyLength", "01"), ("valueLength", "01"), ("headersCount", "00")], GOOD],
        "record 0 > offsetDelta",
    )  # fmt: skip
    _check_corrupt_at(
        "a record length that runs past the end of the batch",
        [GOOD, [("length", "7e"), *GOOD[1:]]],
        "record 1 > length",
    )
    _check_corrupt_at(
        "a negative record length (-2)",
        [GOOD, [("length", "03"), *GOOD[1:]]],
        "record 1 > length",
    )


@pytest.mark.stage(3)
@pytest.mark.points(1)
def test_lying_lengths_are_corrupt_at_the_right_byte():
    _check_corrupt_at(
        "a keyLength (63) that overruns its record",
        [[("length", "10"), ("attributes", "00"), ("timestampDelta", "00"), ("offsetDelta", "00"),
          ("keyLength", "7e"), ("key", "6b"), ("valueLength", "02"), ("value", "76"), ("headersCount", "00")], GOOD],
        "record 0 > keyLength",
    )  # fmt: skip
    _check_corrupt_at(
        "a valueLength of -2 (only -1, null, may be negative)",
        [[("length", "0c"), ("attributes", "00"), ("timestampDelta", "00"), ("offsetDelta", "00"),
          ("keyLength", "01"), ("valueLength", "03"), ("headersCount", "00")], GOOD],
        "record 0 > valueLength",
    )  # fmt: skip
    _check_corrupt_at(
        "a negative headersCount",
        [[("length", "0c"), ("attributes", "00"), ("timestampDelta", "00"), ("offsetDelta", "00"),
          ("keyLength", "01"), ("valueLength", "01"), ("headersCount", "01")], GOOD],
        "record 0 > headersCount",
    )  # fmt: skip
    _check_corrupt_at(
        "a record whose fields end a byte before its length says",
        [[("length", "12"), ("attributes", "00"), ("timestampDelta", "00"), ("offsetDelta", "00"),
          ("keyLength", "02"), ("key", "6b"), ("valueLength", "02"), ("value", "76"), ("headersCount", "00"),
          ("(one byte too many)", "00")], GOOD],
        "record 0 > length",
    )  # fmt: skip
    _check_corrupt_at(
        "a header key that is not UTF-8 (the error points at the key's length)",
        [[("length", "12"), ("attributes", "00"), ("timestampDelta", "00"), ("offsetDelta", "00"),
          ("keyLength", "01"), ("valueLength", "01"), ("headersCount", "02"), ("header 0 keyLength", "02"),
          ("header 0 key", "ff"), ("header 0 valueLength", "01")], GOOD],
        "record 0 > header 0 keyLength",
    )  # fmt: skip
    _check_corrupt_at(
        "a null header key (keyLength -1)",
        [[("length", "10"), ("attributes", "00"), ("timestampDelta", "00"), ("offsetDelta", "00"),
          ("keyLength", "01"), ("valueLength", "01"), ("headersCount", "02"), ("header 0 keyLength", "01"),
          ("header 0 valueLength", "01")], GOOD],
        "record 0 > header 0 keyLength",
    )  # fmt: skip
