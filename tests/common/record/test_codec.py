"""The compiled codec is the reference codec, faster: for any records, any compression, with or
without keys, values and headers, at any timestamps, the compiled ``MemoryRecordsBuilder`` writes the
reference's bytes and takes the same records into a batch of a given size; the compiled
``DefaultRecordBatch`` reads the reference's records, and fails where the reference fails, with the
same exception; the size bounds agree. And ``codec`` switches between the two.

The compiled builder hands a batch back to the reference whenever a record is one it does not take
(see compiled.py), so the tests drive both builders with the same calls, good and bad, and compare
every answer and every exception; and they check that on a producer's records the batch stays with
the compiled builder, so the property tests hold the compiled path itself equal, not the reference
twice."""

from __future__ import annotations

import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_lite.common.errors import CorruptRecordException
from kafka_lite.common.record import CompressionType, Header, TimestampType, codec, compiled
from kafka_lite.common.record import default_record_batch as reference_batch
from kafka_lite.common.record import memory_records_builder as reference_builder
from kafka_lite.common.record.constants import MAGIC_VALUE_V1
from kafka_lite.common.record.default_record_batch import set_log_append_time
from kafka_lite.common.record.memory_records import MemoryRecords
from kafka_lite.common.record.varint import read_varint
from tests.common.record.strategies import (
    BASE_TS,
    codecs,
    keys,
    legacy_codecs,
    records_legacy,
    records_v2,
    values,
)
from tests.common.record.strategies import (
    headers as header_lists,
)

pytestmark = pytest.mark.unit

CODECS = {"python": reference_builder.MemoryRecordsBuilder, "compiled": compiled.MemoryRecordsBuilder}


def _fields(records) -> list[tuple]:
    """What a client reads of each record (compiled records have no sequence or size_in_bytes)."""
    return [(r.offset, r.timestamp, r.key, r.value, [tuple(h) for h in r.headers]) for r in records]


def _read(batch_type, buf) -> list:
    """Each batch's records as ``batch_type`` reads them, or the exception type it raised."""
    out = []
    for batch in MemoryRecords(buf).batches():
        try:
            out.append(_fields(batch_type(batch.buffer())))
        except CorruptRecordException:
            out.append(CorruptRecordException)
    return out


def _build(builder_type, records, codec_, gap=1, base_offset=40, **kwargs):
    builder = builder_type(base_offset=base_offset, compression=codec_, **kwargs)
    for i, (timestamp, key, value, headers) in enumerate(records):
        builder.append_with_offset(
            base_offset + i * gap, timestamp, key, value, headers
        )  # gaps, as compaction leaves
    return builder.build().buffer()


# -- building ------------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    records=records_v2,
    codec_=codecs,
    gap=st.integers(min_value=1, max_value=5),
    base_offset=st.integers(min_value=0, max_value=2**40),
    transactional=st.booleans(),
)
def test_the_compiled_builder_writes_the_references_bytes(records, codec_, gap, base_offset, transactional):
    kwargs = {"is_transactional": transactional, "producer_id": 7 if transactional else -1}
    ours = _build(reference_builder.MemoryRecordsBuilder, records, codec_, gap, base_offset, **kwargs)
    theirs = _build(compiled.MemoryRecordsBuilder, records, codec_, gap, base_offset, **kwargs)
    assert bytes(theirs) == bytes(ours)


def _fill(builder, records) -> int:
    """Append records until one does not fit; how many did."""
    for n, (timestamp, key, value, record_headers) in enumerate(records):
        if not builder.try_append(timestamp, key, value, list(record_headers)):
            return n
    return len(records)


@settings(max_examples=60, deadline=None)
@given(
    records=records_v2,
    codec_=codecs,
    write_limit=st.integers(min_value=0, max_value=4_000),
    producer_state=st.none()
    | st.tuples(st.integers(0, 2**40), st.integers(0, 2**15 - 1), st.integers(0, 2**31 - 1)),
)
def test_both_builders_take_the_same_records_into_a_batch_of_a_given_size(
    records, codec_, write_limit, producer_state
):
    ours = reference_builder.MemoryRecordsBuilder(compression=codec_, write_limit=write_limit)
    theirs = compiled.MemoryRecordsBuilder(compression=codec_, write_limit=write_limit)
    # Each takes the same records: room is sized exactly, and the first record always fits.
    assert _fill(theirs, records) == _fill(ours, records) >= 1
    assert theirs.num_records == ours.num_records
    assert theirs.estimated_size_in_bytes() == ours.estimated_size_in_bytes()
    assert theirs.is_full() == ours.is_full()
    for builder in (ours, theirs):
        if producer_state is not None:
            builder.producer_id, builder.producer_epoch, builder.base_sequence = producer_state
    assert bytes(theirs.build().buffer()) == bytes(ours.build().buffer())
    assert theirs.build() is theirs.build(), "built once"


@pytest.mark.parametrize("name", CODECS)
def test_a_record_that_fills_the_batch_exactly_fits(name):
    """Kafka's ``hasRoomFor`` takes a record that ends the batch exactly at its write limit."""
    builder_type = CODECS[name]
    probe = builder_type(compression=CompressionType.NONE, write_limit=10_000)
    for _ in range(2):
        assert probe.try_append(BASE_TS, None, b"v", [])
    exact = probe.estimated_size_in_bytes()  # the size two such records make
    builder = builder_type(compression=CompressionType.NONE, write_limit=exact)
    assert builder.try_append(BASE_TS, None, b"v", [])
    assert builder.try_append(BASE_TS, None, b"v", []), f"{name} refused an exact fit"
    assert builder.estimated_size_in_bytes() == exact and builder.is_full()
    assert not builder.try_append(BASE_TS, None, b"v", [])


@pytest.mark.parametrize("name", CODECS)
def test_both_builders_raise_the_same_errors(name):
    builder = CODECS[name](compression=CompressionType.NONE, write_limit=1_000)
    assert builder.try_append(BASE_TS, None, b"v", [])
    with pytest.raises(ValueError, match="not larger than the last appended offset"):
        builder.append_with_offset(0, BASE_TS, None, b"v")
    with pytest.raises(ValueError, match="invalid negative timestamp"):
        builder.append(-5, None, b"v")
    with pytest.raises(ValueError, match="a header key cannot be null"):
        builder.append(BASE_TS, None, b"v", [(None, b"h")])
    builder.close_for_record_appends()
    assert builder.is_full() and not builder.try_append(BASE_TS, None, b"v", [])
    with pytest.raises(RuntimeError, match="closed for record appends"):
        builder.append(BASE_TS, None, b"v")
    assert builder.num_records == 1


def test_log_append_time_and_old_formats_are_written_by_the_reference():
    records = [(BASE_TS, b"k", b"v", ())]
    kwargs = {"timestamp_type": TimestampType.LOG_APPEND_TIME, "log_append_time": BASE_TS + 5}
    assert bytes(_build(compiled.MemoryRecordsBuilder, records, CompressionType.NONE, **kwargs)) == bytes(
        _build(reference_builder.MemoryRecordsBuilder, records, CompressionType.NONE, **kwargs)
    )
    legacy = [(BASE_TS, b"k", b"v", ())]
    assert bytes(
        _build(compiled.MemoryRecordsBuilder, legacy, CompressionType.GZIP, magic=MAGIC_VALUE_V1)
    ) == bytes(
        _build(reference_builder.MemoryRecordsBuilder, legacy, CompressionType.GZIP, magic=MAGIC_VALUE_V1)
    )


@settings(max_examples=100, deadline=None)
@given(key=keys, value=values, record_headers=header_lists)
def test_the_size_bounds_agree(key, value, record_headers):
    assert compiled.record_size_upper_bound(
        key, value, record_headers
    ) == reference_batch.record_size_upper_bound(key, value, record_headers)
    assert compiled.estimate_size_in_bytes_upper_bound(
        key, value, record_headers
    ) == reference_batch.estimate_size_in_bytes_upper_bound(key, value, record_headers)


# -- the same calls, good and bad -------------------------------------------------------------------

# Inputs beside the producer's: what Kafka writes but the producer never sends (NO_TIMESTAMP, a
# negative timestamp), bytes-likes, header forms the reference takes, and mistakes.
timestamps_ok = st.integers(min_value=BASE_TS - 10_000, max_value=BASE_TS + 10_000_000)
any_timestamps = timestamps_ok | st.sampled_from([-1, -5, 0, 2**63, 1.5, None, True])
any_bytes = (
    st.none()
    | st.binary(max_size=40)
    | st.binary(max_size=10).map(bytearray)
    | st.binary(max_size=10).map(memoryview)
    | st.sampled_from(["text", 5])
)
any_header = (
    st.builds(Header, st.text(max_size=5), st.none() | st.binary(max_size=5))
    | st.tuples(st.text(max_size=5), st.binary(max_size=5))
    | st.sampled_from(
        [["k", b"v"], ("k", bytearray(b"v")), (None, b"v"), (b"k", b"v"), ("k", b"v", b"w"), ("\ud800", b"v")]
    )
)
any_headers = (
    st.lists(any_header, max_size=2)
    | st.lists(any_header, max_size=2).map(tuple)
    | st.sampled_from([None, "", "ab", ()])
)
record_args = st.tuples(any_timestamps, any_bytes, any_bytes, any_headers)
# append_with_offset's offset, from the next one: a gap, the same again, before the base, too far, a float.
offset_steps = st.sampled_from([1, 1, 1, 3, 0, -1, "before base", "too far", "float"])
calls = st.lists(
    st.one_of(
        st.tuples(st.just("try_append"), record_args),
        st.tuples(st.just("append"), record_args),
        st.tuples(st.just("append_with_offset"), st.tuples(offset_steps, record_args)),
        st.tuples(st.just("has_room_for"), record_args),
        st.sampled_from(
            [("is_full", None), ("estimated_size_in_bytes", None), ("close_for_record_appends", None)]
        ),
        st.just(("build", None)),
    ),
    min_size=1,
    max_size=30,
)


def _outcome(fn, *args):
    """What a call returned, or the exception it raised (its type and message)."""
    try:
        result = fn(*args)
    except Exception as e:  # any exception is an outcome to compare
        return ("raised", type(e), str(e))
    if hasattr(result, "buffer"):  # build()'s MemoryRecords
        return ("built", bytes(result.buffer()))
    return ("returned", result)


def _call(builder, name, args):
    if name == "append_with_offset":
        step, record = args
        base, last = builder.base_offset, builder._last_offset
        nxt = base if last is None else last + 1
        offset = {"before base": base - 1, "too far": base + 2**31, "float": float(nxt)}.get(step)
        offset = nxt - 1 + step if offset is None else offset
        return _outcome(builder.append_with_offset, offset, *_copied(record))
    if args is None:
        return _outcome(getattr(builder, name))
    return _outcome(getattr(builder, name), *_copied(args))


def _copied(record):
    """The same record for each builder (a memoryview is a view, so each gets the bytes again)."""
    return tuple(memoryview(bytes(x)) if isinstance(x, memoryview) else x for x in record)


@settings(max_examples=150, deadline=None)
@given(
    calls=calls,
    codec_=codecs,
    write_limit=st.none() | st.integers(min_value=0, max_value=600),
    base_offset=st.integers(min_value=0, max_value=2**40),
)
def test_both_builders_answer_every_call_alike_and_raise_the_same_errors(
    calls, codec_, write_limit, base_offset
):
    ours = reference_builder.MemoryRecordsBuilder(
        compression=codec_, write_limit=write_limit, base_offset=base_offset
    )
    theirs = compiled.MemoryRecordsBuilder(
        compression=codec_, write_limit=write_limit, base_offset=base_offset
    )
    for name, args in calls:
        expected = _call(ours, name, args)
        assert _call(theirs, name, args) == expected, (name, args)
    assert theirs.num_records == ours.num_records
    assert _outcome(theirs.build) == _outcome(ours.build)


@settings(max_examples=60, deadline=None)
@given(records=records_v2, codec_=codecs, write_limit=st.none() | st.integers(min_value=0, max_value=4_000))
def test_a_producers_records_stay_with_the_compiled_builder_until_build(records, codec_, write_limit):
    """On the records a producer sends (CreateTime, bytes, ``Header`` lists) the compiled builder
    writes the batch itself: it is not handed to the reference, except by ``build``."""
    builder = compiled.MemoryRecordsBuilder(compression=codec_, write_limit=write_limit)
    for timestamp, key, value, record_headers in records:
        builder.is_full()
        builder.has_room_for(timestamp, key, value, list(record_headers))
        if not builder.try_append(timestamp, key, value, list(record_headers)):
            break
        assert builder._compiled is not None, "a producer's record was handed to the reference"
    builder.build()
    assert builder._compiled is None


@pytest.mark.parametrize("name", CODECS)
def test_no_timestamp_records_are_written_as_the_reference_writes_them(name):
    """A record without a timestamp (-1, as a v2 batch may hold) is the reference's to write: the
    compiled builder would take a first timestamp of -1 for "none yet"."""
    records = [(-1, b"k", b"a", ()), (BASE_TS, None, b"b", ()), (-1, None, b"c", ())]
    built = _build(CODECS[name], records, CompressionType.NONE)
    assert bytes(built) == bytes(
        _build(reference_builder.MemoryRecordsBuilder, records, CompressionType.NONE)
    )
    assert [r.timestamp for r in next(MemoryRecords(built).batches())] == [-1, BASE_TS, -1]


@settings(max_examples=100, deadline=None)
@given(key=any_bytes, value=any_bytes, record_headers=any_headers)
def test_the_size_bounds_agree_on_any_input(key, value, record_headers):
    for ours, theirs in (
        (reference_batch.record_size_upper_bound, compiled.record_size_upper_bound),
        (reference_batch.estimate_size_in_bytes_upper_bound, compiled.estimate_size_in_bytes_upper_bound),
    ):
        assert _outcome(theirs, key, value, record_headers) == _outcome(ours, key, value, record_headers)


def test_a_key_of_wider_items_is_sized_by_its_bytes_in_the_compiled_builder():
    """The one documented difference in what the builders take: a buffer of 4-byte items."""
    key = memoryview(array.array("i", [1, 2]))
    assert compiled.record_size_upper_bound(key, None) == reference_batch.record_size_upper_bound(
        b"12345678", None
    )


# -- reading -------------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    records=records_v2, codec_=codecs, gap=st.integers(min_value=1, max_value=5), append_time=st.booleans()
)
def test_the_compiled_batch_reads_the_references_records(records, codec_, gap, append_time):
    buf = bytearray(_build(reference_builder.MemoryRecordsBuilder, records, codec_, gap))
    if append_time:
        set_log_append_time(buf, 0, BASE_TS + 123)
        assert next(MemoryRecords(buf).batches()).timestamp_type == TimestampType.LOG_APPEND_TIME
    ours = _read(reference_batch.DefaultRecordBatch, buf)
    assert _read(compiled.DefaultRecordBatch, buf) == ours and ours[0]


@settings(max_examples=200, deadline=None)
@given(
    records=records_v2,
    damage=st.lists(st.tuples(st.integers(min_value=0), st.integers(0, 255)), min_size=1, max_size=3),
)
def test_on_corrupt_records_the_compiled_batch_fails_as_the_reference_does(records, damage):
    """Damage past the header (which a CRC check would catch, and a reader without one does not).

    Two known differences, both on bytes no Kafka writes. aiokafka reads a record's attributes byte
    as a varint, so one with its top bit set shifts every field after it, where the reference (as
    Kafka) skips the byte: the damage here leaves that bit clear. And aiokafka reads any negative
    key or value length as null (as Kafka's ``DefaultRecord.readFrom`` does), where the reference
    accepts only -1 and raises.
    """
    buf = bytearray(_build(reference_builder.MemoryRecordsBuilder, records, CompressionType.NONE))
    attributes_at = set(_attributes_positions(buf))
    for at, byte in damage:
        at = reference_batch.RECORD_BATCH_OVERHEAD + at % (len(buf) - reference_batch.RECORD_BATCH_OVERHEAD)
        buf[at] = byte & 0x7F if at in attributes_at else byte
    ours = _read(reference_batch.DefaultRecordBatch, buf)
    theirs = _read(compiled.DefaultRecordBatch, buf)
    if theirs != ours and ours != [CorruptRecordException]:
        # The first difference reached another way: a damaged length varint that grew a byte moves
        # every field after it, and the byte the reference now reads as attributes has its top bit set.
        assert any(buf[at] & 0x80 for at in _attributes_positions(buf)), (ours, theirs)
    elif theirs != ours:
        with pytest.raises(CorruptRecordException, match=r"length -\d+ at byte"):
            list(next(MemoryRecords(buf).batches()))


def _attributes_positions(buf) -> list[int]:
    """Where each record's attributes byte is, in an uncompressed batch the reference reads."""
    (batch,) = MemoryRecords(buf).batches()
    out, pos = [], reference_batch.RECORD_BATCH_OVERHEAD
    for _ in range(batch.num_records):
        length, at = read_varint(buf, pos)
        out.append(at)
        pos = at + length
    return out


def test_a_record_damaged_inside_its_batch_raises_kafka_lites_error():
    records = [(BASE_TS + i, b"k", b"value-%d" % i, ()) for i in range(5)]
    buf = bytearray(MemoryRecords.with_records(records, compression=CompressionType.NONE).buffer())
    buf[reference_batch.RECORD_BATCH_OVERHEAD] = (
        0x7E  # a length of 63 bytes: the first record runs into the next
    )
    for batch_type in (reference_batch.DefaultRecordBatch, compiled.DefaultRecordBatch):
        with pytest.raises(CorruptRecordException, match="record batch at byte 0"):
            list(batch_type(buf))


def test_the_records_before_the_damage_come_out_of_both_readers():
    """Both readers are lazy: a damaged third record is raised on after the first two are read."""
    records = [(BASE_TS + i, b"k", b"value-%d" % i, ()) for i in range(5)]
    buf = bytearray(MemoryRecords.with_records(records, compression=CompressionType.NONE).buffer())
    third_length_at = _attributes_positions(buf)[2] - 1  # each length here is one varint byte
    buf[third_length_at] = 0x7E  # 63 bytes: the third record runs into the fourth
    for batch_type in (reference_batch.DefaultRecordBatch, compiled.DefaultRecordBatch):
        read = iter(batch_type(buf))
        assert [record.value for record in (next(read), next(read))] == [b"value-0", b"value-1"]
        with pytest.raises(CorruptRecordException, match="record batch at byte 0"):
            next(read)


# -- the switch ----------------------------------------------------------------------------------


@pytest.fixture
def restore_codec():
    name = codec.codec_name()
    yield
    codec.use_codec(name)


@settings(max_examples=20, deadline=None)
@given(records=records_legacy, codec_=legacy_codecs)
def test_old_formats_are_read_by_the_legacy_reader_under_either_codec(records, codec_):
    buf = MemoryRecords.with_records(records, magic=MAGIC_VALUE_V1, compression=codec_).buffer()
    batches = list(MemoryRecords(buf).batches())
    expected = [_fields(batch) for batch in batches]
    for name in CODECS:
        codec.use_codec(name)
        assert [_fields(codec.records(batch)) for batch in batches] == expected
    codec.use_codec("compiled")


def test_use_codec_rebinds_the_names_callers_look_up(restore_codec):
    codec.use_codec("python")
    assert codec.codec_name() == "python"
    assert codec.MemoryRecordsBuilder is reference_builder.MemoryRecordsBuilder
    assert codec.DefaultRecordBatch is reference_batch.DefaultRecordBatch
    codec.use_codec("compiled")
    assert codec.MemoryRecordsBuilder is compiled.MemoryRecordsBuilder
    assert codec.DefaultRecordBatch is compiled.DefaultRecordBatch
    assert codec.estimate_size_in_bytes_upper_bound is compiled.estimate_size_in_bytes_upper_bound
    with pytest.raises(ValueError, match="KAFKA_LITE_RECORDS must be one of python, compiled"):
        codec.use_codec("rust")


def test_the_compiled_builder_has_the_references_signature():
    import inspect

    assert inspect.signature(compiled.MemoryRecordsBuilder) == inspect.signature(
        reference_builder.MemoryRecordsBuilder
    )
