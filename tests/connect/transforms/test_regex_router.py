"""RegexRouter renames a topic the regex matches whole, with Java's replacement syntax, as Kafka
0.11.0's RegexRouterTest checks; and its config errors."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import ConfigException
from kafka_lite.connect.errors import DataException
from kafka_lite.connect.sink.sink_record import SinkRecord
from kafka_lite.connect.transforms.regex_router import RegexRouter

pytestmark = pytest.mark.unit


def apply(regex: str, replacement: str, topic: str) -> str:
    router = RegexRouter()
    router.configure({"regex": regex, "replacement": replacement})
    return router.apply(SinkRecord(topic, 0, None, None, None, None, 0)).topic


@pytest.mark.parametrize(
    ("regex", "replacement", "topic", "expected"),
    [
        ("foo", "bar", "foo", "bar"),  # static replacement
        ("foo", "bar", "orig", "orig"),  # no match
        ("foo", "bar", "food", "food"),  # the regex must match the whole topic
        ("(.*)", "$1", "orig", "orig"),  # identity
        ("(.*)", "prefix-$1", "orig", "prefix-orig"),
        ("(.*)", "$1-suffix", "orig", "orig-suffix"),
        (r"(.*)-(\d\d\d\d\d\d\d\d)", "$1", "index-20160117", "index"),  # slice
        (r"(?<name>\w+)\.(\w+)", "${name}_$2", "db.users", "db_users"),  # Java's named group
        ("(a)(b)", "$12", "ab", "a2"),  # "$12": no group 12, so group 1 then "2", as Java reads it
        ("(.*)", r"\$1 $1", "x", "$1 x"),  # an escaped dollar is literal
    ],
)
def test_routing(regex: str, replacement: str, topic: str, expected: str) -> None:
    assert apply(regex, replacement, topic) == expected


def test_the_record_is_unchanged_when_the_topic_does_not_match() -> None:
    router = RegexRouter()
    router.configure({"regex": "foo", "replacement": "bar"})
    record = SinkRecord("orig", 0, None, None, None, None, 0)

    assert router.apply(record) is record


def test_replacement_naming_a_group_the_regex_lacks() -> None:
    with pytest.raises(DataException, match=r"^No group 2$"):
        apply("(.*)", "$2", "orig")


def test_invalid_regex() -> None:
    with pytest.raises(ConfigException, match=r"for configuration regex: Invalid regex: "):
        apply("(unclosed", "x", "orig")


def test_replacement_is_required() -> None:
    with pytest.raises(ConfigException, match="Missing required configuration 'replacement'"):
        RegexRouter().configure({"regex": "x"})
