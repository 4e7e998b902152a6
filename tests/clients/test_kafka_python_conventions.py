"""kafka_lite's public types and names follow kafka-python's, and the API page lists every difference.

The program test in tests/compat/test_kafka_python_idioms.py runs one kafka-python program on both
clients; these tests check the shapes it relies on without a cluster, and hold the page
docs/api/kafka_python.md to the clients as they are.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import kafka
import kafka.admin
import kafka.errors
import pytest

import kafka_lite
import kafka_lite.admin
import kafka_lite.errors

PAGE = Path(__file__).resolve().parents[2] / "docs" / "api" / "kafka_python.md"
CLIENTS = ["KafkaConsumer", "KafkaProducer", "KafkaAdminClient"]


def public_methods(cls: type) -> set[str]:
    return {name for name, member in inspect.getmembers(cls, callable) if not name.startswith("_")}


def test_the_front_door_exports_kafka_pythons_names():
    for name in [*CLIENTS, "TopicPartition", "OffsetAndMetadata", "ConsumerRebalanceListener"]:
        assert hasattr(kafka, name), f"kafka-python has no {name}: the list is wrong"
        assert hasattr(kafka_lite, name), f"kafka_lite does not export {name}"
    assert kafka_lite.admin.KafkaAdminClient is kafka_lite.KafkaAdminClient
    assert kafka_lite.admin.NewTopic("t", 1, 1).name == "t"
    for name in ["NewTopic", "NewPartitions", "ConfigResource", "OffsetSpec"]:
        assert hasattr(kafka.admin, name), f"kafka-python's admin has no {name}: the list is wrong"
        assert hasattr(kafka_lite.admin, name), f"kafka_lite.admin does not export {name}"


def test_admin_value_types_take_kafka_pythons_arguments():
    theirs = kafka.admin.NewPartitions(total_count=6, new_assignments=[[0, 1]])
    ours = kafka_lite.admin.NewPartitions(total_count=6, new_assignments=[[0, 1]])
    assert (ours.total_count, ours.new_assignments) == (theirs.total_count, theirs.new_assignments)
    theirs = kafka.admin.ConfigResource("topic", "orders", {"retention.ms": "1000"})
    ours = kafka_lite.admin.ConfigResource("topic", "orders", {"retention.ms": "1000"})
    assert int(ours.resource_type) == int(theirs.resource_type) == 2
    assert (ours.name, ours.configs) == (theirs.name, theirs.configs)
    with pytest.raises(ValueError, match="unknown resource type 'table'"):
        kafka_lite.admin.ConfigResource("table", "orders")


def test_topic_partition_is_a_named_tuple_with_kafka_pythons_fields():
    tp = kafka_lite.TopicPartition("t", 3)
    assert tp._fields == kafka.TopicPartition._fields == ("topic", "partition")
    assert (tp.topic, tp.partition) == ("t", 3)
    assert tp == ("t", 3) and hash(tp) == hash(("t", 3)), "it equals the protocol's plain pairs"
    assert sorted([kafka_lite.TopicPartition("b", 0), kafka_lite.TopicPartition("a", 1)])[0].topic == "a"


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        ("kafka_lite.OffsetAndMetadata", "kafka.OffsetAndMetadata"),
        ("kafka_lite.consumer.ConsumerRecord", "kafka.consumer.fetcher.ConsumerRecord"),
        ("kafka_lite.producer.RecordMetadata", "kafka.producer.future.RecordMetadata"),
    ],
)
def test_value_types_have_kafka_pythons_fields_in_its_order(ours, theirs):
    import importlib

    def resolve(path: str):
        module, _, name = path.rpartition(".")
        return getattr(importlib.import_module(module), name)

    assert resolve(ours)._fields == resolve(theirs)._fields


def test_offset_and_metadata_defaults_as_kafka_python():
    assert tuple(kafka_lite.OffsetAndMetadata(5)) == (5, "", -1)
    assert kafka_lite.OffsetAndMetadata(5, None, -1).metadata == "", "a null metadata is stored as ''"


def test_every_kafka_python_error_name_kafka_lite_can_raise_is_in_kafka_lite_errors():
    for code_error in kafka_lite.errors.ERROR_TABLE:
        code = code_error[0]
        theirs = [
            name
            for name, cls in vars(kafka.errors).items()
            if inspect.isclass(cls) and getattr(cls, "errno", None) == code and cls.__name__ == name
        ]
        ours = kafka_lite.errors.RAISED_BY_THE_CONSUMER.get(
            code, kafka_lite.errors.Errors.for_code(code).exception_class
        )
        for name in theirs:
            assert getattr(kafka_lite.errors, name, None) is ours, f"kafka_lite.errors.{name} is not {ours}"
    for name in ["KafkaError", "KafkaTimeoutError", "CommitFailedError", "NoOffsetForPartitionError"]:
        assert issubclass(getattr(kafka_lite.errors, name), kafka_lite.errors.KafkaException)
    assert issubclass(kafka_lite.errors.TopicAlreadyExistsError, kafka_lite.errors.KafkaError)
    # what the consumer raises with auto.offset.reset=none is caught under kafka-python's name
    from kafka_lite.consumer import OffsetOutOfRangeException

    assert kafka_lite.errors.OffsetOutOfRangeError is OffsetOutOfRangeException


def page_names(section: str) -> set[str]:
    """The method names in backquotes under ``### section`` on the page (up to the next heading)."""
    text = PAGE.read_text()
    body = text.split(f"### {section}\n", 1)[1]
    body = re.split(r"\n#{1,3} ", body, maxsplit=1)[0]
    return set(re.findall(r"`([a-z_]+)\(", body)) | set(re.findall(r"`([a-z_]+)`", body))


@pytest.mark.parametrize("client", CLIENTS)
def test_the_page_names_every_method_the_two_clients_do_not_share(client):
    theirs = public_methods(getattr(kafka, client))
    ours = public_methods(getattr(kafka_lite, client))
    named = page_names(client)
    assert theirs - ours <= named, f"kafka-python's {sorted(theirs - ours - named)} are not on {PAGE.name}"
    assert ours - theirs <= named, f"kafka_lite's {sorted(ours - theirs - named)} are not on {PAGE.name}"
    # and nothing on the page is said to be missing that the client has
    for line in PAGE.read_text().split(f"### {client}\n", 1)[1].splitlines():
        if "not in kafka_lite" in line:
            for name in re.findall(r"`([a-z_]+)\(", line):
                assert name not in ours, f"{PAGE.name} says kafka_lite's {client} has no {name}"
