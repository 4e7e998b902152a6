"""The clients' own rules, without a cluster: a consumer call that Kafka 0.10.1 lets block for ever
is woken after the deadline and reads as an info."""

from __future__ import annotations

import threading

import pytest

from kafka_lite.common.errors import WakeupException
from kafka_lite.common.time import SYSTEM
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.jepsen import clients
from kafka_lite.jepsen.workload import WorkloadConfig
from kafka_lite.utils.ports import free_ports

pytestmark = pytest.mark.unit


def test_a_commit_that_finds_no_coordinator_is_woken_at_the_deadline_and_is_an_info(monkeypatch):
    monkeypatch.setattr(clients, "CONSUMER_CALL_TIMEOUT_S", 0.3)
    nobody = f"127.0.0.1:{free_ports(1)}"  # a free port: every connection is refused
    client = clients.KafkaLiteClient(nobody, 0, WorkloadConfig(), SYSTEM)
    raised: list[BaseException] = []

    def commit() -> None:
        try:
            client.commit_sync()  # 0.10.1 looks for the group's coordinator for as long as it takes
        except BaseException as e:
            raised.append(e)

    try:
        client.assign([0], seek_to_beginning=False)
        client.seek(0, 5)  # a position to commit
        thread = threading.Thread(target=commit, daemon=True)
        thread.start()
        thread.join(10)  # the deadline is 0.3 s; this bounds a broken test, not the behaviour
        assert not thread.is_alive(), "the commit was not woken"
        assert isinstance(raised[0], WakeupException)
        failure = client.classify(raised[0])
        assert (failure.type, failure.end_process) == ("info", True)
    finally:
        client.close()


def test_a_workload_with_a_topic_of_its_own_reads_it_in_a_group_of_its_own():
    nobody = f"127.0.0.1:{free_ports(1)}"
    client = clients.KafkaLiteClient(nobody, 0, WorkloadConfig(topic="planted-1"), SYSTEM, reader=True)
    try:
        client.assign([0, 2], seek_to_beginning=False)
        assert client.consumer.assignment() == {
            TopicPartition("planted-1", 0),
            TopicPartition("planted-1", 2),
        }
        assert client.consumer.group_id == "planted-1-group"
    finally:
        client.close()
    assert WorkloadConfig().consumer_group == "jepsen-group"  # the default topic's, as before
