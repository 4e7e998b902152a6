"""The shared base of the metadata records: one small class per record type over its schema table.

Mirrors: org.apache.kafka.common.protocol.Message and ApiMessage (the interfaces every generated
         ``*Record`` class implements; clients/src/main/java/.../common/protocol/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: Kafka's generator writes a Java class per record, with a field, a getter, a setter and
         the read, write, equals and toString code spelled out for each; here a class names its
         schemas (one per version, ``types.FlexibleSchema``) and this base reads the fields, their
         defaults and their wire form from the newest one.

What a reader of ``records.py`` needs to know about this base:

- ``SCHEMAS[v]`` is the record's schema at version ``v``; a version's fields are in order, then its
  tagged fields. A record's attributes are the fields of its newest version, in snake_case; each
  ``Field``'s ``default`` is the spec's default (Kafka's generated constructor sets the same ones).
- ``STRUCTS`` names the array fields whose elements are nested structs (``end_points`` holds
  ``BrokerEndpoint`` objects), which are read into and written from their own small classes.
- Writing a field its version does not have is refused unless the field holds its default, as
  Kafka's generated ``write`` refuses it ("Attempted to write a non-default inControlledShutdown at
  version 0"): a value that would be silently dropped is a bug in the caller.
- Equality, hash and repr are by value over every field, as the generated ``equals``, ``hashCode``
  and ``toString`` are. Like Kafka's, the objects are mutable and hash by value: do not change a
  record that is a key of a dict.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

# A record read or written at a version its class does not have: the same exception a request of an
# unknown version raises (Kafka's generated read and write throw UnsupportedVersionException too).
from kafka_lite.common.protocol.requests import UnsupportedVersionException
from kafka_lite.common.protocol.types import (
    UNKNOWN_TAGGED_FIELDS,
    ArrayOf,
    Field,
    FlexibleSchema,
    Reader,
)


class Message:
    """A struct of a flexible message: a nested struct (``BrokerEndpoint``) or a whole record."""

    SCHEMAS: ClassVar[tuple[FlexibleSchema, ...]] = ()
    STRUCTS: ClassVar[dict[str, type[Message]]] = {}
    # Every field of the newest version, plain then tagged: the attributes, in the spec's order.
    # Computed once per class in ``__init_subclass__`` from ``SCHEMAS[-1]``.
    FIELDS: ClassVar[tuple[Field, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.SCHEMAS:
            newest = cls.SCHEMAS[-1]
            cls.FIELDS = (*newest.fields, *newest.tagged)

    def __init__(self, **values: Any) -> None:
        names = {f.name for f in self.FIELDS}
        for name in values:
            if name not in names:
                raise TypeError(
                    f"{type(self).__name__}() has no field {name!r}; its fields are {[f.name for f in self.FIELDS]}"
                )
        for f in self.FIELDS:
            value = values[f.name] if f.name in values else f.default
            if isinstance(f.type, ArrayOf) and value is not None:
                value = list(value)  # a fresh list, never the default's, and a tuple becomes a list
            setattr(self, f.name, value)
        # The tagged fields a newer writer added that this version does not know, as (tag, bytes):
        # kept so that a record read and written back is the same bytes (Kafka's _unknownTaggedFields).
        self.unknown_tagged_fields: list[tuple[int, bytes]] = []

    # --- versions -------------------------------------------------------------------------------

    @classmethod
    def lowest_supported_version(cls) -> int:
        return 0

    @classmethod
    def highest_supported_version(cls) -> int:
        return len(cls.SCHEMAS) - 1

    @classmethod
    def schema(cls, version: int) -> FlexibleSchema:
        if not 0 <= version < len(cls.SCHEMAS):
            raise UnsupportedVersionException(
                f"Can't read version {version} of {cls.__name__} "
                f"(versions {cls.lowest_supported_version()}-{cls.highest_supported_version()})"
            )
        return cls.SCHEMAS[version]

    # --- to and from the schema's dict ----------------------------------------------------------

    def to_struct(self, version: int) -> dict[str, Any]:
        """The dict ``schema(version).write`` takes; refuses a non-default field the version lacks."""
        schema = self.schema(version)
        present = {f.name for f in (*schema.fields, *schema.tagged)}
        value: dict[str, Any] = {}
        for f in self.FIELDS:
            item = getattr(self, f.name)
            if f.name not in present:
                if item != f.default:
                    raise UnsupportedVersionException(
                        f"Attempted to write a non-default {f.name} at version {version} of {type(self).__name__}"
                    )
                continue
            if f.name in self.STRUCTS and item is not None:
                item = [element.to_struct(version) for element in item]
            value[f.name] = item
        if self.unknown_tagged_fields:
            value[UNKNOWN_TAGGED_FIELDS] = self.unknown_tagged_fields
        return value

    @classmethod
    def from_struct(cls, value: Mapping[str, Any]) -> Message:
        """The object for a dict ``schema(version).read`` returned."""
        fields = {}
        for name, item in value.items():
            if name == UNKNOWN_TAGGED_FIELDS:
                continue
            if name in cls.STRUCTS and item is not None:
                item = [cls.STRUCTS[name].from_struct(element) for element in item]
            fields[name] = item
        message = cls(**fields)
        message.unknown_tagged_fields = list(value.get(UNKNOWN_TAGGED_FIELDS, ()))
        return message

    def write(self, out: bytearray, version: int) -> None:
        """Append this message at ``version`` (the generated ``write(Writable, cache, version)``)."""
        self.schema(version).write(out, self.to_struct(version))

    @classmethod
    def read(cls, r: Reader, version: int) -> Message:
        """Read one message at ``version`` from ``r`` (the generated ``read(Readable, version)``)."""
        return cls.from_struct(cls.schema(version).read(r))

    def duplicate(self) -> Message:
        """A deep copy (the generated ``duplicate()``)."""
        return type(self).from_struct(self.to_struct(self.highest_supported_version()))

    # --- value semantics ------------------------------------------------------------------------

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, f.name) for f in self.FIELDS)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._values() == other._values() and self.unknown_tagged_fields == other.unknown_tagged_fields

    def __hash__(self) -> int:
        return hash((type(self).__name__, *(tuple(v) if isinstance(v, list) else v for v in self._values())))

    def __repr__(self) -> str:
        fields = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in self.FIELDS)
        return f"{type(self).__name__}({fields})"


class ApiMessage(Message):
    """A whole record: a message with an api key (Kafka's ``ApiMessage``)."""

    API_KEY: ClassVar[int] = -1

    @classmethod
    def api_key(cls) -> int:
        return cls.API_KEY
