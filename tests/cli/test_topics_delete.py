"""``kafka-lite topics --delete``: through a broker (DeleteTopics) and through ZooKeeper (the mark
written by the tool, as 0.11's TopicCommand does), on the session's cluster; and on a broker whose
``delete.topic.enable`` is false, where the mark stays and the tool says so."""

from __future__ import annotations

import pytest

from kafka_lite.cli import topics
from kafka_lite.cli.main import main
from tests.support.cluster import LiteCluster
from tests.support.topics import topic_name
from tests.support.waiting import wait_until

pytestmark = pytest.mark.integration

NOTE = "Note: This will have no impact if delete.topic.enable is not set to true."


def _run(capsys, *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["topics", *args])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def _gone(cluster, topic: str) -> bool:
    return all(not s.metadata_cache.contains(topic) for s in cluster.servers if s.running) and not list(
        cluster.directory.glob(f"broker-*/{topic}-*")
    )


@pytest.mark.xdist_group("cluster")
def test_delete_through_a_broker(cluster, capsys):
    topic = topic_name("cli-delete")
    cluster.create_topic(topic, partitions=2)
    code, out, _ = _run(capsys, "--bootstrap-server", cluster.bootstrap_servers, "--delete", "--topic", topic)
    assert (code, out) == (0, f"Topic {topic} is deleted.\n")
    wait_until(lambda: _gone(cluster, topic), what=f"{topic} deleted")

    code, out, err = _run(
        capsys, "--bootstrap-server", cluster.bootstrap_servers, "--delete", "--topic", topic
    )
    assert (code, out) == (1, "") and f"Topic '{topic}' does not exist as expected" in err
    args = ("--bootstrap-server", cluster.bootstrap_servers, "--delete", "--topic", topic, "--if-exists")
    assert _run(capsys, *args)[:2] == (0, "")


@pytest.mark.xdist_group("cluster")
def test_delete_through_zookeeper(cluster, capsys):
    topic = topic_name("cli-delete-zk")
    cluster.create_topic(topic, partitions=2)
    code, out, _ = _run(capsys, "--zookeeper", cluster.zk_connect, "--delete", "--topic", topic)
    assert (code, out) == (0, f"Topic {topic} is marked for deletion.\n{NOTE}\n")
    wait_until(lambda: _gone(cluster, topic), what=f"{topic} deleted")
    wait_until(
        lambda: not cluster.controller().zk.client.exists(f"/brokers/topics/{topic}"), what="its znode"
    )

    code, out, err = _run(capsys, "--zookeeper", cluster.zk_connect, "--delete", "--topic", topic)
    assert (code, out) == (1, "") and f"Topic {topic} does not exist on ZK path {cluster.zk_connect}" in err
    args = ("--zookeeper", cluster.zk_connect, "--delete", "--topic", topic, "--if-exists")
    assert _run(capsys, *args)[:2] == (0, "")


def test_with_deletion_disabled_the_topic_stays_and_the_tool_says_why(
    zookeeper, tmp_path, capsys, monkeypatch
):
    cluster = LiteCluster(
        zookeeper.connect_string, tmp_path, brokers=1, **{"delete.topic.enable": False}
    ).start()
    try:
        topic = topic_name("kept")
        cluster.create_topic(topic, partitions=1)
        monkeypatch.setattr(topics, "DELETE_TIMEOUT_MS", 300)
        code, out, err = _run(
            capsys, "--bootstrap-server", cluster.bootstrap_servers, "--delete", "--topic", topic
        )
        assert (code, out) == (1, f"Topic {topic} is marked for deletion.\n")
        assert f"topic {topic} still exists after 300 ms. {NOTE}" in err
        code, out, _ = _run(capsys, "--zookeeper", cluster.zk_connect, "--delete", "--topic", topic)
        assert (code, out) == (0, f"Topic {topic} is already marked for deletion.\n")
        zk = cluster.servers[0].zk
        assert zk.get_topics_to_be_deleted() == [topic] and topic in zk.get_all_topics()
        assert cluster.servers[0].metadata_cache.contains(topic)
    finally:
        cluster.stop()
