"""Protocol primitive types and schemas, with decoding that never trusts a claimed length.

Mirrors: org.apache.kafka.common.protocol.types (Type, Schema, Field, ArrayOf, Struct,
         SchemaException; clients/.../common/protocol/types/, Kafka 0.11.0)
Book:    chapter 2, 2.1.2 (the sender thread builds each request from a schema), 2.3 (the
         server reads each request back with the same schema)
Differs: a decoded struct is a plain ``dict`` (field name -> value) rather than Kafka's ``Struct``,
         and a value to encode is any mapping with those keys (a missing key takes the field's
         default); ``Reader`` plays the part of Java's ``ByteBuffer``; an error carries the field
         path and the byte offset, where Kafka's chains one "Error reading field" message per level.

A schema is data: an ordered list of fields, each with a type. ``Schema.read`` walks its fields and
lets each type read itself from the ``Reader``, exactly as Kafka's ``Schema.read`` does; a field
that is itself a schema or an array of schemas walks in turn. ``Schema.write`` is the same walk.
Record data (``RECORDS``) decodes to a ``memoryview`` into the frame: the protocol layer never copies
record batches nor looks inside them; the record and log layers read them.

Safety, because a broker reads bytes from anyone: before anything is allocated, every length is
checked against the bytes that remain: a string of 2 GiB claimed in a 40-byte frame fails at once,
and an array's claimed count is checked against the fewest bytes that many elements could take, so
a 4-byte count of two billion cannot make the decoder build a two-billion-element list. A
fixed-width read lets ``struct`` check that its bytes are there, as a ``ByteBuffer`` get does, and
only a failed one builds the error. Every failure is a ``SchemaException`` naming the field path and
the byte offset.

The types of flexible versions (KIP-482, Kafka 2.4 and later: compact lengths, UUID, tagged fields)
follow at the end, read and written as Kafka 3.3.0's generated ``*Data.java`` classes and its
``RawTaggedFieldWriter`` do; kafka_lite uses them for the Raft quorum's RPCs only.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kafka_lite.common.errors import KafkaException


class SchemaException(KafkaException):
    """Bytes that do not match the schema; ``field`` is the path, ``position`` the byte offset."""

    def __init__(self, message: str, field: str = "", position: int | None = None) -> None:
        self.reason = message
        self.field = field
        self.position = position
        where = f"field '{field}'" if field else "frame"
        at = f" at byte {position}" if position is not None else ""
        super().__init__(f"{where}{at}: {message}")

    def under(self, parent: str) -> SchemaException:
        """The same error, with its field path prefixed by the enclosing field's name."""
        path = (
            f"{parent}.{self.field}"
            if self.field and not self.field.startswith("[")
            else f"{parent}{self.field}"
        )
        return SchemaException(self.reason, path, self.position)


class Reader:
    """A cursor over a frame: ``buf[pos:]`` is what remains to be read (Java's ``ByteBuffer``)."""

    __slots__ = ("buf", "end", "pos")

    def __init__(self, buf: bytes | bytearray | memoryview, pos: int = 0) -> None:
        self.buf = buf
        self.pos = pos
        self.end = len(buf)

    @property
    def remaining(self) -> int:
        return self.end - self.pos

    def need(self, n: int, what: str) -> None:
        if n > self.end - self.pos:
            raise self.underflow(n, what)

    def underflow(self, n: int, what: str) -> SchemaException:
        """The error for ``what`` needing ``n`` bytes where fewer remain (Java's
        ``BufferUnderflowException``, which Kafka's ``Schema.read`` turns into a ``SchemaException``)."""
        return SchemaException(f"{what} needs {n} bytes, {self.end - self.pos} remain", position=self.pos)


class Type:
    """A wire type: how to read one value from a ``Reader`` and append one to a ``bytearray``."""

    name = "?"
    min_size = 0  # the fewest bytes one value can take: bounds array counts before allocating

    def read(self, r: Reader) -> Any:
        raise NotImplementedError

    def write(self, out: bytearray, value: Any) -> None:
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.name


class _Number(Type):
    """A big-endian integer of fixed width (``fmt`` is its ``struct`` format), from ``lo`` to ``hi``."""

    def __init__(self, name: str, fmt: str, lo: int, hi: int) -> None:
        self.name = name
        self.format = struct.Struct(fmt)
        self.min_size = self.format.size
        self.lo, self.hi = lo, hi

    def read(self, r: Reader) -> int:
        try:
            (value,) = self.format.unpack_from(r.buf, r.pos)
        except struct.error:  # fewer bytes remain than the number takes
            raise r.underflow(self.min_size, self.name) from None
        r.pos += self.min_size
        return value

    def write(self, out: bytearray, value: int) -> None:
        out += self.format.pack(value)  # struct.error for a value out of range or not an int


class _Boolean(Type):
    name = "BOOLEAN"
    min_size = 1

    def read(self, r: Reader) -> bool:
        try:
            value = r.buf[r.pos] != 0
        except IndexError:
            raise r.underflow(1, self.name) from None
        r.pos += 1
        return value

    def write(self, out: bytearray, value: bool) -> None:
        out.append(1 if value else 0)


def _read_size(r: Reader, fmt: struct.Struct, what: str, nullable: bool) -> int | None:
    """A length or count in the book's framing: a signed int of ``fmt`` (int16 for a string, int32
    for bytes and arrays), -1 meaning null where ``nullable``. ``_read_compact_length`` is the
    flexible versions' twin."""
    start = r.pos
    try:
        (size,) = fmt.unpack_from(r.buf, start)
    except struct.error:
        raise r.underflow(fmt.size, what) from None
    r.pos += fmt.size
    if size < 0:
        if size == -1 and nullable:
            return None
        raise SchemaException(f"{what} {size} is negative", position=start)
    return size


class _String(Type):
    """int16 length + UTF-8; NULLABLE_STRING also allows length -1 (None). The compact forms of
    flexible versions (``_CompactString``) differ only in how the length is written, so they override
    ``_read_length``/``_write_length`` and nothing else, as ``CompactArrayOf`` does for a count."""

    min_size = 2

    def __init__(self, nullable: bool, name: str = "") -> None:
        self.nullable = nullable
        self.name = name or ("NULLABLE_STRING" if nullable else "STRING")

    def _read_length(self, r: Reader) -> int | None:
        """The byte length, or None for a null string."""
        return _read_size(r, _INT16, f"{self.name} length", self.nullable)

    def _write_length(self, out: bytearray, length: int | None) -> None:
        out += _INT16.pack(-1 if length is None else length)

    def read(self, r: Reader) -> str | None:
        start = r.pos
        length = self._read_length(r)
        if length is None:
            return None
        if length > 32767:  # only a varint length can claim more; Kafka's "had invalid length"
            raise SchemaException(f"{self.name} had invalid length {length}", position=start)
        end = r.pos + length
        if end > r.end:
            raise SchemaException(f"{self.name} of {length} bytes, {r.end - r.pos} remain", position=start)
        try:
            value = bytes(r.buf[r.pos : end]).decode("utf-8")
        except UnicodeDecodeError:
            raise SchemaException(f"{self.name} is not valid UTF-8", position=start) from None
        r.pos = end
        return value

    def write(self, out: bytearray, value: str | None) -> None:
        if value is None:
            if not self.nullable:
                raise SchemaException(f"null is not allowed for a {self.name}")
            self._write_length(out, None)
            return
        data = value.encode("utf-8")
        if len(data) > 32767:
            raise SchemaException(f"string of {len(data)} bytes is longer than 32767")
        self._write_length(out, len(data))
        out += data


class _Bytes(Type):
    """int32 length + bytes; NULLABLE_BYTES also allows -1 (None). RECORDS is nullable bytes that
    hold record batches: it decodes to a ``memoryview`` into the frame, never a copy, and writes its
    value through ``RecordsWriter.write_records`` when the output is one. ``CompactBytes`` overrides
    the two length hooks only."""

    min_size = 4

    def __init__(self, name: str, nullable: bool, records: bool = False) -> None:
        self.name = name
        self.nullable = nullable
        self.records = records

    def _read_length(self, r: Reader) -> int | None:
        """The byte length, or None for null bytes."""
        return _read_size(r, _INT32, f"{self.name} length", self.nullable)

    def _write_length(self, out: bytearray, length: int | None) -> None:
        out += _INT32.pack(-1 if length is None else length)

    def read(self, r: Reader) -> bytes | memoryview | None:
        start = r.pos
        length = self._read_length(r)
        if length is None:
            return None
        end = r.pos + length
        if end > r.end:
            raise SchemaException(f"{self.name} of {length} bytes, {r.end - r.pos} remain", position=start)
        begin, r.pos = r.pos, end
        if self.records:
            return memoryview(r.buf)[begin:end]
        return bytes(r.buf[begin:end])

    def write(self, out: bytearray, value: bytes | bytearray | memoryview | None) -> None:
        if value is None:
            if not self.nullable:
                raise SchemaException(f"null is not allowed for {self.name}")
            self._write_length(out, None)
            return
        self._write_length(out, len(value))
        if self.records and isinstance(out, RecordsWriter):
            out.write_records(value)
        else:
            out += value


class RecordsWriter(bytearray):
    """An output for ``Schema.write`` that is told where record data goes.

    Every field appends its bytes; a ``RECORDS`` value, after its length, goes to
    ``write_records``. Here the records are copied in like any bytes; the network layer's
    ``PieceWriter`` keeps fetched records (a file region, a large buffer) as a piece of the send of
    their own, as Kafka's ``FetchResponse`` sends each partition's records with a ``RecordsSend``
    behind the struct's buffer.
    """

    def write_records(self, records: bytes | bytearray | memoryview) -> None:
        self += records


_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")
# What a primitive's write raises for a value of the wrong kind (``struct.pack("x")``, ``None.encode``,
# a number out of range); Schema and ArrayOf turn it into a SchemaException naming the field.
_WRITE_ERRORS = (struct.error, TypeError, ValueError, AttributeError)


class _Varint(Type):
    """Variable-length integers: zig-zag signed (VARINT, VARLONG; as in record batches) or unsigned
    (UNSIGNED_VARINT; the lengths of Kafka's later "flexible" versions). kafka_lite's advertised
    versions use none of them in request or response bodies, but they are protocol primitives, and
    the record layer's encoding is the same one."""

    min_size = 1

    def __init__(self, name: str, signed: bool, max_bytes: int) -> None:
        self.name = name
        self.signed = signed
        self.max_bytes = max_bytes

    def read(self, r: Reader) -> int:
        n, shift, start = 0, 0, r.pos
        while True:
            if r.pos >= r.end:
                raise SchemaException(f"{self.name} runs past the end of the frame", position=start)
            if r.pos - start >= self.max_bytes:
                raise SchemaException(f"{self.name} is longer than {self.max_bytes} bytes", position=start)
            b = r.buf[r.pos]
            r.pos += 1
            n |= (b & 0x7F) << shift
            if b < 0x80:
                return (n >> 1) ^ -(n & 1) if self.signed else n
            shift += 7

    def write(self, out: bytearray, value: int) -> None:
        if self.signed:
            value = (value << 1) ^ (value >> 63) if value < 0 else value << 1
        elif value < 0:
            raise SchemaException(f"{value} is negative: not an {self.name}")
        while value >= 0x80:
            out.append((value & 0x7F) | 0x80)
            value >>= 7
        out.append(value)


INT8 = _Number("INT8", ">b", -(2**7), 2**7 - 1)
INT16 = _Number("INT16", ">h", -(2**15), 2**15 - 1)
INT32 = _Number("INT32", ">i", -(2**31), 2**31 - 1)
INT64 = _Number("INT64", ">q", -(2**63), 2**63 - 1)
UINT32 = _Number("UINT32", ">I", 0, 2**32 - 1)
# Kafka 3.3's flexible messages give a listener's port as uint16 (BrokerRegistration, RegisterBrokerRecord).
UINT16 = _Number("UINT16", ">H", 0, 2**16 - 1)
BOOLEAN = _Boolean()
VARINT = _Varint("VARINT", signed=True, max_bytes=5)
VARLONG = _Varint("VARLONG", signed=True, max_bytes=10)
UNSIGNED_VARINT = _Varint("UNSIGNED_VARINT", signed=False, max_bytes=5)
STRING = _String(nullable=False)
NULLABLE_STRING = _String(nullable=True)
BYTES = _Bytes("BYTES", nullable=False)
NULLABLE_BYTES = _Bytes("NULLABLE_BYTES", nullable=True)
RECORDS = _Bytes("RECORDS", nullable=True, records=True)


class Field:
    """A named, documented slot of a schema (Kafka's ``Field``)."""

    __slots__ = ("default", "doc", "name", "type")

    def __init__(self, name: str, type: Type, doc: str = "", default: Any = None) -> None:
        self.name = name
        self.type = type
        self.doc = doc
        self.default = default

    def __repr__(self) -> str:
        return f"{self.name}: {self.type!r}"


class Schema(Type):
    """An ordered list of fields; a value is a ``dict`` with one key per field."""

    def __init__(self, *fields: Field, name: str = "") -> None:
        self.fields = tuple(fields)
        self.name = name or "Schema(" + ", ".join(f.name for f in fields) + ")"
        names = [f.name for f in fields]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate field names in schema: {names}")
        self.min_size = sum(f.type.min_size for f in fields)

    def read(self, r: Reader) -> dict[str, Any]:
        """Read each field in order with its own type (Kafka's ``Schema.read``)."""
        value: dict[str, Any] = {}
        for f in self.fields:
            try:
                value[f.name] = f.type.read(r)
            except SchemaException as e:
                raise e.under(f.name) from None
        return value

    def write(self, out: bytearray, value: Mapping[str, Any]) -> None:
        """Append each field in order with its own type (Kafka's ``Schema.write``). On an error,
        nothing of this value stays in ``out``."""
        if not isinstance(value, (dict, Mapping)):  # a dict answers before the ABC is asked
            raise SchemaException(f"{value!r} is not a struct of {self.name}")
        start = len(out)
        try:
            for f in self.fields:
                item = value.get(f.name, f.default)
                try:
                    f.type.write(out, item)
                except SchemaException as e:
                    raise e.under(f.name) from None
                except _WRITE_ERRORS as e:
                    raise SchemaException(f"cannot write {item!r} as {f.type!r}: {e}", field=f.name) from None
        except SchemaException:
            del out[start:]
            raise

    def __getitem__(self, name: str) -> Field:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(name)


class ArrayOf(Type):
    """int32 count + elements; ``nullable`` allows count -1 (None)."""

    min_size = 4

    def __init__(self, element: Type, nullable: bool = False) -> None:
        self.element = element
        self.nullable = nullable
        self.name = f"ARRAY({element!r})"
        # A zero-size element (an empty schema) could make any count cheap to claim; count it as one byte.
        self._element_min = max(1, element.min_size)

    def _read_count(self, r: Reader) -> int | None:
        """The element count, or None for a null array."""
        return _read_size(r, _INT32, "array count", self.nullable)

    def _write_count(self, out: bytearray, count: int | None) -> None:
        out += _INT32.pack(-1 if count is None else count)

    def read(self, r: Reader) -> list | None:
        start = r.pos
        count = self._read_count(r)
        if count is None:
            return None
        if count * self._element_min > r.end - r.pos:
            raise SchemaException(
                f"array claims {count} elements of at least {self._element_min} bytes, {r.end - r.pos} bytes remain",
                position=start,
            )
        values = []
        for i in range(count):
            try:
                values.append(self.element.read(r))
            except SchemaException as e:
                raise e.under(f"[{i}]") from None
        return values

    def write(self, out: bytearray, values: Sequence | None) -> None:
        if values is None:
            if not self.nullable:
                raise SchemaException("null is not allowed for a non-nullable array")
            self._write_count(out, None)
            return
        self._write_count(out, len(values))
        for i, v in enumerate(values):
            try:
                self.element.write(out, v)
            except SchemaException as e:
                raise e.under(f"[{i}]") from None
            except _WRITE_ERRORS as e:
                raise SchemaException(
                    f"cannot write {v!r} as {self.element!r}: {e}", field=f"[{i}]"
                ) from None


# --- Flexible versions (KIP-482) ------------------------------------------------------------------
# Kafka 2.4 added "flexible" versions to its message specs: in such a version every string, bytes
# and array length is an unsigned varint holding length + 1 (0 meaning null), and every struct ends
# with a section of tagged fields, which a newer sender may add without a new version and an older
# reader skips. kafka_lite's broker advertises none of these versions (its client APIs stop at the
# 0.11 era); the Raft quorum's RPCs, which Kafka 3.3 defines as flexible, are read and written with
# them (``raft_messages.py``). Kafka writes these from generated ``*Data.java`` classes; here, as for
# the older versions, a schema is data and one walk reads and writes it.


def _read_compact_length(r: Reader, name: str, nullable: bool) -> int | None:
    """The length of a compact string, bytes or array: an unsigned varint of length + 1, where 0
    is null (Kafka's generated ``read``: ``readUnsignedVarint() - 1``, negative meaning null)."""
    start = r.pos
    try:
        n = UNSIGNED_VARINT.read(r)
    except SchemaException as e:
        raise SchemaException(f"{name} length: {e.reason}", position=start) from None
    if n == 0:
        if nullable:
            return None
        raise SchemaException(f"non-nullable {name} was serialized as null", position=start)
    return n - 1


class _CompactString(_String):
    """Unsigned varint (length + 1) + UTF-8; COMPACT_NULLABLE_STRING also allows 0 (None)."""

    min_size = 1

    def __init__(self, nullable: bool) -> None:
        super().__init__(nullable, "COMPACT_NULLABLE_STRING" if nullable else "COMPACT_STRING")

    def _read_length(self, r: Reader) -> int | None:
        return _read_compact_length(r, self.name, self.nullable)

    def _write_length(self, out: bytearray, length: int | None) -> None:
        UNSIGNED_VARINT.write(out, 0 if length is None else length + 1)


class CompactBytes(_Bytes):
    """Unsigned varint (length + 1) + bytes; nullable allows 0 (None). COMPACT_RECORDS decodes to a
    ``memoryview`` into the frame and writes through ``RecordsWriter``, as RECORDS does."""

    min_size = 1

    def _read_length(self, r: Reader) -> int | None:
        return _read_compact_length(r, self.name, self.nullable)

    def _write_length(self, out: bytearray, length: int | None) -> None:
        UNSIGNED_VARINT.write(out, 0 if length is None else length + 1)


class _Uuid(Type):
    """16 bytes, most significant first (Kafka's ``Uuid``: two longs). Decodes to ``uuid.UUID``;
    Kafka's ``Uuid.ZERO_UUID`` (all zero bits) is the default, meaning "no id"."""

    name = "UUID"
    min_size = 16

    def read(self, r: Reader) -> uuid.UUID:
        r.need(16, self.name)
        value = uuid.UUID(bytes=bytes(r.buf[r.pos : r.pos + 16]))
        r.pos += 16
        return value

    def write(self, out: bytearray, value: uuid.UUID | bytes) -> None:
        data = value.bytes if isinstance(value, uuid.UUID) else bytes(value)
        if len(data) != 16:
            raise SchemaException(f"a UUID is 16 bytes, not {len(data)}")
        out += data


COMPACT_STRING = _CompactString(nullable=False)
COMPACT_NULLABLE_STRING = _CompactString(nullable=True)
COMPACT_BYTES = CompactBytes("COMPACT_BYTES", nullable=False)
COMPACT_NULLABLE_BYTES = CompactBytes("COMPACT_NULLABLE_BYTES", nullable=True)
COMPACT_RECORDS = CompactBytes("COMPACT_RECORDS", nullable=True, records=True)
UUID = _Uuid()
ZERO_UUID = uuid.UUID(int=0)


class CompactArrayOf(ArrayOf):
    """Unsigned varint (count + 1) + elements; ``nullable`` allows 0 (None). Only the count's
    encoding differs from ``ArrayOf``; the elements are read and written the same way."""

    min_size = 1

    def __init__(self, element: Type, nullable: bool = False) -> None:
        super().__init__(element, nullable)
        self.name = f"COMPACT_ARRAY({element!r})"

    def _read_count(self, r: Reader) -> int | None:
        return _read_compact_length(r, "array", self.nullable)

    def _write_count(self, out: bytearray, count: int | None) -> None:
        UNSIGNED_VARINT.write(out, 0 if count is None else count + 1)


class TaggedField(Field):
    """A field of a flexible struct's tagged section: read by its ``tag``, written only when its
    value differs from its default (Kafka's ``"taggedVersions"``/``"tag"`` in a message spec)."""

    __slots__ = ("tag",)

    def __init__(self, tag: int, name: str, type: Type, doc: str = "", default: Any = None) -> None:
        super().__init__(name, type, doc, default)
        self.tag = tag

    def __repr__(self) -> str:
        return f"{self.name}: {self.type!r} (tag {self.tag})"


UNKNOWN_TAGGED_FIELDS = "_unknown_tagged_fields"


class FlexibleSchema(Schema):
    """A struct in a flexible version: its fields in order, then the tagged-field section::

        count uvarint, then per field:  tag uvarint  size uvarint  size bytes of the value

    Known tags are read with their field's type; unknown ones are kept, as Kafka's generated
    classes keep them in ``_unknownTaggedFields``, under the key ``_unknown_tagged_fields`` as
    ``(tag, bytes)`` pairs (present only when there are some), and written back in tag order among
    the known ones. A tagged field absent from the bytes reads as its default; one equal to its
    default is not written (the generated ``write`` compares with the default, too). A known tagged
    field must take exactly the bytes its size claims: Kafka's generated code reads the value and
    trusts the size; here a size that disagrees is a SchemaException naming the field, so that a
    malformed section cannot shift the rest of the frame.
    """

    def __init__(self, *fields: Field, name: str = "", tagged: Sequence[TaggedField] = ()) -> None:
        super().__init__(*fields, *tagged, name=name)
        self.fields = tuple(fields)
        self.tagged = tuple(sorted(tagged, key=lambda f: f.tag))
        self.by_tag = {f.tag: f for f in self.tagged}
        if len(self.by_tag) != len(self.tagged):
            raise ValueError(f"duplicate tags in schema: {[f.tag for f in self.tagged]}")
        self.min_size = sum(f.type.min_size for f in fields) + 1  # + the tagged-field count

    def read(self, r: Reader) -> dict[str, Any]:
        value = super().read(r)
        for f in self.tagged:  # a struct default is copied: each decoded value is the caller's own
            value[f.name] = dict(f.default) if isinstance(f.default, dict) else f.default
        unknown: list[tuple[int, bytes]] = []
        try:
            count = UNSIGNED_VARINT.read(r)
        except SchemaException as e:
            raise e.under("tagged_fields") from None
        for _ in range(count):
            tag, size = self._read_tag_and_size(r)
            f = self.by_tag.get(tag)
            if f is None:
                unknown.append((tag, bytes(r.buf[r.pos : r.pos + size])))
                r.pos += size
                continue
            bounded = Reader(r.buf, r.pos)
            bounded.end = r.pos + size
            try:
                value[f.name] = f.type.read(bounded)
                if bounded.pos != bounded.end:
                    raise SchemaException(
                        f"tagged field {tag} claims {size} bytes, its value took {bounded.pos - r.pos}",
                        position=r.pos,
                    )
            except SchemaException as e:
                raise e.under(f.name) from None
            r.pos = bounded.end
        if unknown:
            value[UNKNOWN_TAGGED_FIELDS] = unknown
        return value

    @staticmethod
    def _read_tag_and_size(r: Reader) -> tuple[int, int]:
        """One tagged field's tag and size; a size beyond the frame names the tag that claims it."""
        field = "tagged_fields"
        try:
            tag = UNSIGNED_VARINT.read(r)
            field = f"tagged_fields[tag {tag}]"
            start = r.pos
            size = UNSIGNED_VARINT.read(r)
        except SchemaException as e:
            raise e.under(field) from None
        if size > r.end - r.pos:
            raise SchemaException(
                f"tagged field {tag} claims {size} bytes, {r.end - r.pos} remain", field=field, position=start
            )
        return tag, size

    def write(self, out: bytearray, value: Mapping[str, Any]) -> None:
        start = len(out)
        super().write(out, value)
        try:
            fields = self._tagged_to_write(value)
            UNSIGNED_VARINT.write(out, len(fields))
            for tag, data in fields:
                UNSIGNED_VARINT.write(out, tag)
                UNSIGNED_VARINT.write(out, len(data))
                out += data
        except SchemaException:
            del out[start:]
            raise

    def _tagged_to_write(self, value: Mapping[str, Any]) -> list[tuple[int, bytes]]:
        """(tag, bytes) of each tagged field to write, known and unknown, in tag order."""
        fields = []
        for f in self.tagged:
            item = value.get(f.name, f.default)
            if item is None and f.default is None:
                continue
            data = bytearray()
            try:
                f.type.write(data, item)
            except SchemaException as e:
                raise e.under(f.name) from None
            except _WRITE_ERRORS as e:
                raise SchemaException(f"cannot write {item!r} as {f.type!r}: {e}", field=f.name) from None
            if f.default is not None and bytes(data) == encode(f.type, f.default):
                continue
            fields.append((f.tag, bytes(data)))
        for tag, data in value.get(UNKNOWN_TAGGED_FIELDS) or ():
            if tag in self.by_tag:  # RawTaggedFieldWriter: "Attempted to use tag N as an undefined tag."
                raise SchemaException(
                    f"Attempted to use tag {tag} as an undefined tag", field=UNKNOWN_TAGGED_FIELDS
                )
            fields.append((tag, bytes(data)))
        fields.sort(key=lambda field: field[0])
        tags = [tag for tag, _ in fields]
        if len(set(tags)) != len(tags):
            raise SchemaException(f"a tag appears twice among {tags}", field=UNKNOWN_TAGGED_FIELDS)
        return fields


def is_flexible(schema: Type | None) -> bool:
    """Whether a message version is flexible: its top-level struct ends with tagged fields."""
    return isinstance(schema, FlexibleSchema)


def decode(
    schema: Type, buf: bytes | bytearray | memoryview, pos: int = 0, allow_trailing: bool = False
) -> Any:
    """Decode one value that must take the whole of ``buf[pos:]`` (trailing bytes are an error)."""
    r = Reader(buf, pos)
    value = schema.read(r)
    if not allow_trailing and r.pos != r.end:
        raise SchemaException(f"{r.end - r.pos} unexpected trailing bytes", position=r.pos)
    return value


def encode(schema: Type, value: Any) -> bytes:
    out = bytearray()
    schema.write(out, value)
    return bytes(out)


def walk(schema: Type, prefix: str = "") -> Iterable[tuple[str, Type]]:
    """Every field path in a schema (``topics[].partitions[].partition``): for docs and tests."""
    if isinstance(schema, Schema):
        tagged = schema.tagged if isinstance(schema, FlexibleSchema) else ()
        for f in (*schema.fields, *tagged):
            path = f"{prefix}.{f.name}" if prefix else f.name
            yield path, f.type
            yield from walk(f.type, path)
    elif isinstance(schema, ArrayOf):
        yield from walk(schema.element, prefix + "[]")
