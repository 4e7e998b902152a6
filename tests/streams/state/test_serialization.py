import pytest

from kafka_lite.common.errors import IllegalArgumentException, SerializationException
from kafka_lite.producer.serialization import check_serializer
from kafka_lite.streams.serialization import Serdes

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("serde", "value"),
    [
        (Serdes.String(), "héllo"),
        (Serdes.ByteArray(), b"\x00\xff"),
        (Serdes.Bytes(), b"abc"),
        (Serdes.Integer(), -(2**31)),
        (Serdes.Long(), 2**63 - 1),
        (Serdes.Double(), -1.5),
        (Serdes.Json(), {"b": [1, None, "x"], "a": 2}),
    ],
)
def test_round_trip_and_none(serde, value):
    data = serde.serializer().serialize("t", value)
    assert isinstance(data, bytes)
    assert serde.deserializer().deserialize("t", data) == value
    assert serde.serializer().serialize("t", None) is None
    assert serde.deserializer().deserialize("t", None) is None


def test_long_and_integer_write_kafkas_bytes():
    assert Serdes.Long().serializer().serialize("t", 1) == b"\x00" * 7 + b"\x01"
    assert Serdes.Long().serializer().serialize("t", -1) == b"\xff" * 8
    assert Serdes.Long().serializer().serialize("t", 256) == b"\x00" * 6 + b"\x01\x00"
    assert Serdes.Integer().serializer().serialize("t", 1) == b"\x00\x00\x00\x01"
    assert Serdes.Integer().serializer().serialize("t", -2) == b"\xff\xff\xff\xfe"
    assert Serdes.Long().deserializer().deserialize("t", b"\x80" + b"\x00" * 7) == -(2**63)


@pytest.mark.parametrize(
    ("serde", "data", "message"),
    [
        (Serdes.Long(), b"\x00" * 4, "Size of data received by LongDeserializer is not 8"),
        (Serdes.Long(), b"\x00" * 9, "Size of data received by LongDeserializer is not 8"),
        (Serdes.Integer(), b"\x00" * 8, "Size of data received by IntegerDeserializer is not 4"),
        (Serdes.Integer(), b"", "Size of data received by IntegerDeserializer is not 4"),
    ],
)
def test_wrong_length_names_the_expected_size(serde, data, message):
    with pytest.raises(SerializationException, match=message):
        serde.deserializer().deserialize("t", data)


def test_out_of_range_number_is_refused_not_wrapped():
    with pytest.raises(SerializationException, match="long"):
        Serdes.Long().serializer().serialize("t", 2**63)
    with pytest.raises(SerializationException, match="int"):
        Serdes.Integer().serializer().serialize("t", 2**31)


def test_json_equal_values_give_equal_bytes():
    ser = Serdes.Json().serializer()
    assert ser.serialize("t", {"a": 1, "b": 2}) == ser.serialize("t", {"b": 2, "a": 1}) == b'{"a":1,"b":2}'


def test_a_streams_serializer_is_a_producer_serializer():
    as_producer = check_serializer("key_serializer", Serdes.Long().serializer())
    assert as_producer(1) == b"\x00" * 7 + b"\x01"


def test_serde_from_pairs_a_serializer_with_a_deserializer_and_refuses_a_missing_one():
    strings = Serdes.String()
    serde = Serdes.serde_from(strings.serializer(), Serdes.Long().deserializer())
    assert serde.serializer().serialize("t", "a") == b"a"
    assert serde.deserializer().deserialize("t", (7).to_bytes(8, "big")) == 7
    with pytest.raises(IllegalArgumentException, match="serializer must not be null"):
        Serdes.serde_from(None, strings.deserializer())
    with pytest.raises(IllegalArgumentException, match="deserializer must not be null"):
        Serdes.serde_from(strings.serializer(), None)
