"""The chapter 4 guide's kafka-python-style program (chapters/ch04_new_consumer/order_totals.py)
against the session's real cluster: as written (kafka_lite), and with its import line changed to
kafka-python's, the rest of the source untouched. Both must give the same answers."""

from __future__ import annotations

import types
from pathlib import Path

import pytest

from tests.support.topics import topic_name

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("cluster")]

EXAMPLE = Path(__file__).resolve().parents[2] / "chapters" / "ch04_new_consumer" / "order_totals.py"
IMPORT = "from kafka_lite.consumer import KafkaConsumer, OffsetAndMetadata, TopicPartition"
IMPORTS = {
    "kafka_lite": IMPORT,
    "kafka-python": "from kafka import KafkaConsumer, OffsetAndMetadata, TopicPartition",
}
ORDERS = [("ann", 250), ("bob", 100), ("ann", 1000), ("cy", 5), ("bob", 45)]


def load(client: str) -> types.ModuleType:
    source = EXAMPLE.read_text(encoding="utf-8")
    assert source.count(IMPORT) == 1, "the example has one import line naming kafka_lite"
    module = types.ModuleType(f"order_totals_{client.replace('-', '_')}")
    exec(compile(source.replace(IMPORT, IMPORTS[client]), str(EXAMPLE), "exec"), module.__dict__)
    return module


@pytest.mark.parametrize("client", sorted(IMPORTS))
# kafka-python asks for its Deserializer class and warns of plain callables, which it still takes.
@pytest.mark.filterwarnings("ignore:.*does not implement kafka.serializer.Deserializer:DeprecationWarning")
def test_the_example_runs_on_kafka_lite_and_on_kafka_python_by_its_imports_alone(cluster, client):
    from kafka_lite import KafkaProducer

    topic = topic_name("orders-example")
    cluster.create_topic(topic, partitions=1)
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers)
    for customer, amount in ORDERS:
        producer.send(topic, str(amount).encode(), key=customer.encode(), partition=0)
    producer.flush()
    producer.close()

    example = load(client)
    group = topic_name("orders-example-group")
    totals = example.order_totals(cluster.bootstrap_servers, topic, group, expected=len(ORDERS))
    assert totals == {"ann": 1250, "bob": 145, "cy": 5}

    seen = example.reread(cluster.bootstrap_servers, topic, group)
    assert seen["committed"] == 5 and seen["end"] == 5
    assert tuple(seen["with_metadata"])[:2] == (5, ""), seen["with_metadata"]
    assert seen["first"] == 0 and seen["offsets"] == [0, 1, 2, 3, 4]
    assert seen["after"] == 5
    assert [(tp.topic, tp.partition) for tp in seen["assignment"]] == [(topic, 0)]
