"""ConfigDef: parsing from strings and Python values, defaults, and errors that name key and value."""

from __future__ import annotations

import pytest

from kafka_lite.common.config import ConfigDef, Importance, Range, Type, ValidString
from kafka_lite.common.errors import ConfigException

pytestmark = pytest.mark.unit


def _defs() -> ConfigDef:
    return (
        ConfigDef()
        .define(
            "linger.ms", Type.LONG, 0, Range.at_least(0), Importance.MEDIUM, "Wait up to this long to batch"
        )
        .define("acks", Type.STRING, "1", ValidString.in_("all", "-1", "0", "1"), Importance.HIGH, "Acks")
        .define("bootstrap.servers", Type.LIST, doc="Where to start")
        .define("enable.idempotence", Type.BOOLEAN, False)
        .define("min.cleanable.dirty.ratio", Type.DOUBLE, 0.5, Range.between(0, 1))
    )


def test_defaults_and_string_parsing():
    values = _defs().parse(
        {"bootstrap.servers": "a:9092, b:9092", "linger.ms": "5", "enable.idempotence": "TRUE"}
    )
    assert values == {
        "linger.ms": 5,
        "acks": "1",
        "bootstrap.servers": ["a:9092", "b:9092"],
        "enable.idempotence": True,
        "min.cleanable.dirty.ratio": 0.5,
    }


def test_kafka_python_style_names():
    values = _defs().parse({"bootstrap_servers": ["x:1"], "linger_ms": 7})
    assert values["linger.ms"] == 7 and values["bootstrap.servers"] == ["x:1"]


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"linger.ms": -1}, "Invalid value -1 for configuration linger.ms: Value must be at least 0"),
        (
            {"linger.ms": "soon"},
            "Invalid value 'soon' for configuration linger.ms: Expected value to be a 64-bit",
        ),
        ({"acks": "2"}, "Invalid value '2' for configuration acks: String must be one of: all, -1, 0, 1"),
        (
            {"enable.idempotence": "yes"},
            "configuration enable.idempotence: Expected value to be either true or false",
        ),
        ({"min.cleanable.dirty.ratio": 1.5}, "Value must be no more than 1"),
        ({"linger.ms": 2**63}, "does not fit in a 64-bit integer"),
        ({}, "Missing required configuration 'bootstrap.servers'"),
        (
            {"bootstrap.servers": "a", "lingr.ms": 1},
            "Unknown configuration 'lingr.ms' (did you mean linger.ms?)",
        ),
    ],
)
def test_bad_values_name_key_value_and_rule(props, message):
    props = (
        {"bootstrap.servers": "a", **props}
        if props and "bootstrap.servers" not in props and "Missing" not in message
        else props
    )
    with pytest.raises(ConfigException) as e:
        _defs().parse(props)
    assert message in str(e.value)


def test_unknown_keys_kept_when_allowed_and_bad_defaults_fail_at_definition():
    assert (
        _defs().parse({"bootstrap.servers": "a", "custom.thing": "1"}, allow_unknown=True)["custom.thing"]
        == "1"
    )
    with pytest.raises(ConfigException, match="at least 0"):
        ConfigDef().define("x", Type.INT, -1, Range.at_least(0))
    with pytest.raises(ValueError, match="defined twice"):
        ConfigDef().define("x", Type.INT, 1).define("x", Type.INT, 1)


def test_markdown_table_lists_every_key():
    table = _defs().to_markdown()
    for name in _defs().names():
        assert f"`{name}`" in table
    assert "(required)" in table


def test_the_log_config_table_says_each_validators_rule_in_words():
    """The docs' log config table (chapter 6) shows each validator's text, as Kafka's generated config
    docs show a validator's toString: a rule a reader can use, never a Python object's repr."""
    from kafka_lite.log.log_config import CONFIG_DEF, FOLLOWER_REPLICATION_THROTTLED_REPLICAS_PROP

    table = CONFIG_DEF.to_markdown()
    assert " at 0x" not in table and "<function" not in table and "object>" not in table
    row = next(
        line for line in table.splitlines() if f"`{FOLLOWER_REPLICATION_THROTTLED_REPLICAS_PROP}`" in line
    )
    assert "[partitionId]:[brokerId],[partitionId]:[brokerId],..." in row
