"""Kafka's serializer class names, as the console tools take them, and what they do to a line.

No Kafka twin for this module itself: the console tools of Kafka load a serializer or deserializer
by its Java class name (``Class.forName``); here the names Kafka's own built-in classes have map to
kafka_lite's twins of them (``kafka_lite.streams.serialization``), which write and read the same
bytes. Two places use them:

- ``console-consumer``: the formatter's ``key.deserializer`` and ``value.deserializer`` properties
  (Kafka 0.10.1's ``DefaultMessageFormatter.init``), also given as ``--key-deserializer`` and
  ``--value-deserializer``, which Kafka 0.11 hands to the formatter. The formatter prints what
  ``deserialize(...).toString`` gives, so a count stored as 8 bytes prints as ``3``::

      --property print.key=true \\
      --property value.deserializer=org.apache.kafka.common.serialization.LongDeserializer

- ``console-producer``: ``--key-serializer`` and ``--value-serializer`` (Kafka 0.10.1's
  ``ConsoleProducer`` options, whose default is ``kafka.serializer.DefaultEncoder``: the bytes as
  they are).

Differs: Kafka's console producer hands these two options to the old Scala producer only, as
         ``kafka.serializer.Encoder`` classes; its Java producer ignores them and sends each line's
         bytes. Here they are Kafka's serializers and act: a line's text is read as the type the
         serializer writes, so ``LongSerializer`` sends ``42`` as the 8 bytes a Streams
         ``Serdes.Long()`` reads, and a line that is not a number is an error naming the line.
         The ``ByteArrayDeserializer`` prints the bytes as they are (Java's ``byte[].toString``
         prints ``[B@`` and an identity hash). A null key or value prints as ``null`` and is not
         deserialized (Kafka 0.10.1 deserializes the four bytes of ``"null"``, which fails for a
         long). Only these classes are known; there is no class path to load another from.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal

from kafka_lite.common.errors import KafkaException, SerializationException
from kafka_lite.streams.serialization import (
    ByteArrayDeserializer,
    ByteArraySerializer,
    Deserializer,
    DoubleDeserializer,
    DoubleSerializer,
    IntegerDeserializer,
    IntegerSerializer,
    LongDeserializer,
    LongSerializer,
    Serializer,
    StringDeserializer,
    StringSerializer,
)
from kafka_lite.tools.console_producer import LineMessageReader, ReaderException

PACKAGE = "org.apache.kafka.common.serialization."

# Kafka's built-in deserializers, by class name.
DESERIALIZERS: dict[str, type[Deserializer]] = {
    PACKAGE + "StringDeserializer": StringDeserializer,
    PACKAGE + "LongDeserializer": LongDeserializer,
    PACKAGE + "IntegerDeserializer": IntegerDeserializer,
    PACKAGE + "DoubleDeserializer": DoubleDeserializer,
    PACKAGE + "ByteArrayDeserializer": ByteArrayDeserializer,
}

# Kafka's built-in serializers, and the old producer's two encoders that ConsoleProducer names.
SERIALIZERS: dict[str, type[Serializer]] = {
    PACKAGE + "StringSerializer": StringSerializer,
    PACKAGE + "LongSerializer": LongSerializer,
    PACKAGE + "IntegerSerializer": IntegerSerializer,
    PACKAGE + "DoubleSerializer": DoubleSerializer,
    PACKAGE + "ByteArraySerializer": ByteArraySerializer,
    "kafka.serializer.DefaultEncoder": ByteArraySerializer,  # ConsoleProducer's default
    "kafka.serializer.StringEncoder": StringSerializer,
}
DEFAULT_ENCODER = "kafka.serializer.DefaultEncoder"


class UnknownClassException(KafkaException):
    """A class name the tool has no twin for; the message lists the ones it has."""


def _known(what: str, where: str, name: str, known: dict) -> type:
    if name in known:
        return known[name]
    listed = "\n  ".join(known)
    raise UnknownClassException(
        f"{where}: no {what} class {name!r} (ClassNotFoundException); the known ones are:\n  {listed}"
    )


def deserializer_for(name: str, where: str) -> Deserializer:
    """The deserializer Kafka's class ``name`` stands for; ``where`` names the option in an error."""
    return _known("deserializer", where, name, DESERIALIZERS)()


def serializer_for(name: str, where: str) -> Serializer:
    """The serializer Kafka's class ``name`` stands for; ``where`` names the option in an error."""
    return _known("serializer", where, name, SERIALIZERS)()


# -- the console consumer: bytes to the text Java's toString gives ------------------------------------


def java_to_string(value: object) -> str:
    """``value.toString`` as Java writes it for the types the built-in deserializers return."""
    if isinstance(value, float):
        return java_double_to_string(value)
    return str(value)


def java_double_to_string(d: float) -> str:
    """Java's ``Double.toString``: plain decimals from 10^-3 up to 10^7 (``0.5``, ``3.0``), else
    ``1.0E7``-style, always with a digit after the point; ``NaN``, ``Infinity``."""
    if math.isnan(d):
        return "NaN"
    if math.isinf(d):
        return "Infinity" if d > 0 else "-Infinity"
    if d == 0 or 1e-3 <= abs(d) < 1e7:
        text = repr(d)  # the shortest digits that read back as d, as Java's
        return text if "." in text else text + ".0"  # repr never drops the point in this range
    sign, digit_tuple, exponent = Decimal(repr(d)).as_tuple()
    power = exponent + len(digit_tuple) - 1  # where the point goes after the first digit
    digits = "".join(map(str, digit_tuple)).rstrip("0") or "0"
    return f"{'-' if sign else ''}{digits[0]}.{digits[1:] or '0'}E{power}"


class DeserializingFormatter:
    """The formatter, with the key and value first deserialized and written as their ``toString``
    (Kafka's ``DefaultMessageFormatter`` with ``key.deserializer``/``value.deserializer`` set).

    ``formatter`` is the ``DefaultMessageFormatter`` that writes the line; each deserializer is None
    when not asked for, and the key is deserialized only when the line shows it."""

    def __init__(
        self,
        formatter,
        key_deserializer: tuple[str, Deserializer] | None,
        value_deserializer: tuple[str, Deserializer] | None,
    ) -> None:
        self.formatter = formatter
        self.key_deserializer = key_deserializer if formatter.print_key else None
        self.value_deserializer = value_deserializer if formatter.print_value else None

    def write_to(self, record, output) -> None:
        key = self._text(self.key_deserializer, record, "key", record.key)
        value = self._text(self.value_deserializer, record, "value", record.value)
        self.formatter.write_to(record._replace(key=key, value=value), output)

    @staticmethod
    def _text(deserializer: tuple[str, Deserializer] | None, record, part: str, data):
        if deserializer is None or data is None:
            return data
        name, instance = deserializer
        try:
            value = instance.deserialize(record.topic, data)
        except SerializationException as e:
            raise SerializationException(
                f"{e}: the {part} of {record.topic}-{record.partition} at offset {record.offset} "
                f"({len(data)} bytes) is not what {name.rsplit('.', 1)[-1]} reads"
            ) from None
        if isinstance(value, bytes):  # ByteArrayDeserializer: the bytes as they are
            return value
        return java_to_string(value).encode()


# -- the console producer: a line's text to the bytes a serializer writes -------------------------------

_WHOLE = re.compile(r"[+-]?[0-9]+")


def _parse(serializer: Serializer, text: str):
    """The line's text as the type ``serializer`` takes (as Java's ``Long.parseLong`` etc. read it)."""
    if isinstance(serializer, (LongSerializer, IntegerSerializer)):
        if not _WHOLE.fullmatch(text):
            raise ValueError("not a whole number")
        return int(text)
    if isinstance(serializer, DoubleSerializer):
        if "_" in text:
            raise ValueError("not a number")
        return float({"NaN": "nan", "Infinity": "inf", "-Infinity": "-inf"}.get(text, text))
    return text


class SerializingReader:
    """The line reader, with each key and value turned into the bytes of the serializer the options
    name; the default encoder's bytes pass as they are."""

    def __init__(self, reader: LineMessageReader, key_serializer: str, value_serializer: str) -> None:
        self.reader = reader
        self.key_serializer = (key_serializer, serializer_for(key_serializer, "--key-serializer"))
        self.value_serializer = (value_serializer, serializer_for(value_serializer, "--value-serializer"))

    def read_message(self) -> tuple[bytes | None, bytes | None] | None:
        message = self.reader.read_message()
        if message is None:
            return None
        key, value = message
        return self._bytes(self.key_serializer, "key", key), self._bytes(
            self.value_serializer, "value", value
        )

    def _bytes(self, serializer: tuple[str, Serializer], part: str, data: bytes | None) -> bytes | None:
        name, instance = serializer
        if data is None or isinstance(instance, ByteArraySerializer):
            return data
        try:
            text = data.decode()
            return instance.serialize(None, _parse(instance, text))
        except (UnicodeDecodeError, ValueError, SerializationException) as e:
            option = f"--{part}-serializer"
            raise ReaderException(
                f"line {self.reader.line_number}: the {part} {data.decode(errors='replace')!r} cannot be "
                f"written by {option} {name.rsplit('.', 1)[-1]} ({e})"
            ) from None
