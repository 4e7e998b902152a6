"""What the transformations share: schema copying, the checks on a record's shape, the schema cache,
and the data model additions they need (SchemaBuilder's type builders and ``parameters``, the
Timestamp logical type)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from kafka_lite.connect.data import timestamp as Timestamp
from kafka_lite.connect.data.schema import INT64_SCHEMA, SchemaBuilder, Type
from kafka_lite.connect.errors import DataException
from kafka_lite.connect.transforms.util.lru_cache import LRUCache
from kafka_lite.connect.transforms.util.requirements import require_map, require_schema, require_struct
from kafka_lite.connect.transforms.util.schema_util import copy_schema_basics

pytestmark = pytest.mark.unit


def test_copy_schema_basics_copies_name_version_doc_and_parameters_not_optionality() -> None:
    source = SchemaBuilder.struct().name("n").version(3).doc("d").parameter("a", "1").optional().build()

    copy = copy_schema_basics(source).field("x", INT64_SCHEMA).build()

    assert (copy.type, copy.name, copy.version, copy.doc, copy.parameters) == (
        Type.STRUCT,
        "n",
        3,
        "d",
        {"a": "1"},
    )
    assert not copy.optional


def test_schema_builder_parameters_adds_to_those_already_set() -> None:
    schema = SchemaBuilder.string().parameter("a", "1").parameters({"b": "2", "c": "3"}).build()

    assert schema.parameters == {"a": "1", "b": "2", "c": "3"}


@pytest.mark.parametrize(
    ("builder", "type_"),
    [(SchemaBuilder.int8, Type.INT8), (SchemaBuilder.int16, Type.INT16), (SchemaBuilder.int32, Type.INT32),
     (SchemaBuilder.int64, Type.INT64), (SchemaBuilder.float32, Type.FLOAT32), (SchemaBuilder.float64, Type.FLOAT64),
     (SchemaBuilder.bool, Type.BOOLEAN), (SchemaBuilder.string, Type.STRING), (SchemaBuilder.bytes, Type.BYTES)],
)  # fmt: skip
def test_schema_builder_type_builders(builder, type_) -> None:
    assert builder().build().type is type_
    assert SchemaBuilder.type(type_).build() == builder().build()


def test_requirements_name_the_purpose_and_what_was_found() -> None:
    with pytest.raises(DataException, match=r"^Schema required for \[updating schema metadata\]$"):
        require_schema(None, "updating schema metadata")
    with pytest.raises(DataException, match=r"for \[p\], found: null$"):
        require_map(None, "p")
    with pytest.raises(DataException, match=r"^Only Struct objects supported for \[p\], found: dict$"):
        require_struct({}, "p")
    assert require_map({"a": 1}, "p") == {"a": 1}


def test_lru_cache_evicts_the_least_recently_used() -> None:
    cache: LRUCache[str, int] = LRUCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # "a" is now more recent than "b"

    cache.put("c", 3)

    assert (cache.get("a"), cache.get("b"), cache.get("c"), cache.size()) == (1, None, 3, 2)


def test_timestamp_round_trips_milliseconds_exactly() -> None:
    instant = datetime(2017, 6, 28, 12, 30, 15, 999000, tzinfo=UTC)
    millis = 1498653015999

    assert Timestamp.from_logical(Timestamp.SCHEMA, instant) == millis
    assert Timestamp.to_logical(Timestamp.SCHEMA, millis) == instant
    assert Timestamp.to_logical(Timestamp.SCHEMA, -1) == datetime(
        1969, 12, 31, 23, 59, 59, 999000, tzinfo=UTC
    )
    assert (Timestamp.SCHEMA.type, Timestamp.SCHEMA.name, Timestamp.SCHEMA.version) == (
        Type.INT64, "org.apache.kafka.connect.data.Timestamp", 1)  # fmt: skip


def test_timestamp_refuses_a_schema_that_is_not_its_own() -> None:
    with pytest.raises(
        DataException, match=r"^Requested conversion of Timestamp object but the schema does not match\.$"
    ):
        Timestamp.to_logical(INT64_SCHEMA, 0)
