"""ReplaceField drops, keeps and renames fields, as Kafka 0.11.0's ReplaceFieldTest checks; and its
rename-mapping errors."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import ConfigException
from kafka_lite.connect.data.schema import BOOLEAN_SCHEMA, INT32_SCHEMA, STRING_SCHEMA, SchemaBuilder
from kafka_lite.connect.data.struct import Struct
from kafka_lite.connect.sink.sink_record import SinkRecord
from kafka_lite.connect.transforms.replace_field import ReplaceFieldKey, ReplaceFieldValue

pytestmark = pytest.mark.unit


def configured(props: dict[str, str], cls: type = ReplaceFieldValue):
    xform = cls()
    xform.configure(props)
    return xform


def test_schemaless() -> None:
    xform = configured({"blacklist": "dont", "renames": "abc:xyz,foo:bar"})
    value = {"dont": "whatever", "abc": 42, "foo": True, "etc": "etc"}

    updated = xform.apply(SinkRecord("test", 0, None, None, None, value, 0)).value

    assert updated == {"xyz": 42, "bar": True, "etc": "etc"}


def test_with_schema() -> None:
    xform = configured({"whitelist": "abc,foo", "renames": "abc:xyz,foo:bar"})
    schema = (
        SchemaBuilder.struct().name("row").version(2).field("dont", STRING_SCHEMA).field("abc", INT32_SCHEMA)
        .field("foo", BOOLEAN_SCHEMA).field("etc", STRING_SCHEMA).build()
    )  # fmt: skip
    value = Struct(schema).put("dont", "whatever").put("abc", 42).put("foo", True).put("etc", "etc")

    transformed = xform.apply(SinkRecord("test", 0, None, None, schema, value, 0))

    updated = transformed.value
    assert [(f.name, f.schema) for f in updated.schema.fields()] == [
        ("xyz", INT32_SCHEMA),
        ("bar", BOOLEAN_SCHEMA),
    ]
    assert (updated.schema.name, updated.schema.version) == ("row", 2)
    assert (updated.get("xyz"), updated.get("bar")) == (42, True)


def test_blacklist_wins_over_whitelist_on_the_key() -> None:
    xform = configured({"whitelist": "a,b", "blacklist": "b"}, ReplaceFieldKey)

    transformed = xform.apply(SinkRecord("t", 0, None, {"a": 1, "b": 2, "c": 3}, None, "v", 0))

    assert transformed.key == {"a": 1}
    assert transformed.value == "v"


@pytest.mark.parametrize("mapping", ["abc", "abc:", "a:b:c"])
def test_invalid_rename_mapping(mapping: str) -> None:
    with pytest.raises(
        ConfigException, match=f"for configuration renames: Invalid rename mapping: {mapping}$"
    ):
        configured({"renames": f"foo:bar,{mapping}"})
