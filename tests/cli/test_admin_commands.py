"""``kafka-lite configs`` (a client id's quotas too), ``topics --alter --partitions`` (both paths) and
``delete-records`` on the session's real cluster, and their arguments that cannot work: one line
naming what is wrong."""

from __future__ import annotations

import json
import uuid

import pytest
from kafka import KafkaProducer

from kafka_lite.cli.configs import parse_add_config
from kafka_lite.cli.main import main
from kafka_lite.zk.zk_utils import ZkUtils
from tests.support.topics import topic_name
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.xdist_group("cluster")]  # the compat tests share the session cluster


def _run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


@pytest.mark.unit
def test_add_config_takes_kafkas_list_brackets():
    assert parse_add_config("retention.ms=1000,cleanup.policy=[compact,delete]") == {
        "retention.ms": "1000",
        "cleanup.policy": "compact,delete",
    }
    assert parse_add_config("a=") == {"a": ""}


@pytest.mark.unit
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["configs", "--bootstrap-server", "h:1", "--alter", "--entity-type", "topics", "--entity-name", "t"],
         "--alter needs --add-config or --delete-config"),
        (["configs", "--bootstrap-server", "h:1", "--alter", "--entity-type", "brokers", "--entity-name", "0",
          "--add-config", "a=1"], "--alter works for --entity-type topics"),
        (["configs", "--bootstrap-server", "h:1", "--describe", "--entity-type", "topics", "--entity-name", "t",
          "--add-config", "a=1"], "--add-config and --delete-config go with --alter"),
        (["configs", "--bootstrap-server", "h:1", "--alter", "--entity-type", "topics", "--entity-name", "t",
          "--add-config", "retention.ms"], "--add-config 'retention.ms': expected k=v pairs"),
        (["configs", "--bootstrap-server", "h:1", "--entity-type", "clients", "--entity-name", "c", "--describe"],
         "--entity-type clients goes with --zookeeper"),
        (["configs", "--zookeeper", "h:1", "--entity-type", "brokers", "--entity-default", "--describe"],
         "--entity-default may be used instead of --entity-name"),
        (["configs", "--zookeeper", "h:1", "--entity-type", "clients", "--entity-name", "a/b", "--describe"],
         "Invalid client id 'a/b'"),
        (["configs", "--zookeeper", "h:1", "--entity-type", "clients", "--entity-name", "<default>", "--describe"],
         "use --entity-default"),
        (["configs", "--zookeeper", "h:1", "--entity-type", "clients", "--entity-name", "c", "--alter"],
         "--alter needs --add-config or --delete-config"),
        (["topics", "--alter", "--topic", "t", "--partitions", "3"], "--bootstrap-server is required (or --zookeeper with --alter or --delete)"),
        (["topics", "--zookeeper", "h:1", "--list"], "--zookeeper goes with --alter"),
        (["topics", "--bootstrap-server", "h:1", "--alter", "--topic", "t"], "--alter needs --topic and --partitions"),
    ],
)  # fmt: skip
def test_arguments_that_cannot_work_are_named(capsys, args, message):
    code, _, err = _run(capsys, *args)
    assert code == 2 and message in err


@pytest.mark.integration
def test_configs_describes_and_alters_a_brokers_throttle_rates_in_zookeeper(zookeeper, capsys):
    """The 0.11 way: ``--zookeeper`` writes ``/config/brokers/<id>``, checked first; a bad rate or an
    unknown name is refused and nothing is written."""
    import uuid

    connect = f"{zookeeper.connect_string}/configs-cli-{uuid.uuid4().hex[:8]}"
    zk = ZkUtils(connect)
    zk.setup_common_paths()
    try:
        base = ["configs", "--zookeeper", connect, "--entity-type", "brokers", "--entity-name", "1"]
        code, out, _ = _run(capsys, *base, "--alter", "--add-config", "leader.replication.throttled.rate=1024,follower.replication.throttled.rate=2048")  # fmt: skip
        assert (code, out.strip()) == (0, "Completed Updating config for entity: brokers '1'.")
        assert zk.fetch_entity_config("brokers", "1") == {
            "leader.replication.throttled.rate": "1024",
            "follower.replication.throttled.rate": "2048",
        }
        assert zk.get_config_change_notifications(), "the brokers are told"
        code, out, _ = _run(capsys, *base, "--describe")
        assert out.strip() == (
            "Configs for brokers '1' are leader.replication.throttled.rate=1024,follower.replication.throttled.rate=2048"
        )
        code, _, _ = _run(capsys, *base, "--alter", "--delete-config", "follower.replication.throttled.rate")
        assert zk.fetch_entity_config("brokers", "1") == {"leader.replication.throttled.rate": "1024"}

        for bad, message in [
            ("leader.replication.throttled.rate=-1", "Value must be at least 0"),
            ("leader.replication.throttled.rate=fast", "Expected value to be a 64-bit integer"),
            ("log.retention.ms=5", "Unknown configuration 'log.retention.ms'"),
        ]:
            code, _, err = _run(capsys, *base, "--alter", "--add-config", bad)
            assert code == 2 and message in err
        assert zk.fetch_entity_config("brokers", "1") == {"leader.replication.throttled.rate": "1024"}
        code, _, err = _run(capsys, *base[:-1], "one", "--describe")
        assert code == 2 and "must be a single integer value" in err
        code, _, err = _run(capsys, "configs", "--zookeeper", connect, "--entity-type", "topics", "--entity-name", "t", "--describe")  # fmt: skip
        assert code == 2 and "--zookeeper goes with --entity-type brokers" in err
    finally:
        zk.close()


@pytest.mark.unit
def test_entity_name_and_entity_default_exclude_each_other(capsys):
    with pytest.raises(SystemExit) as e:
        main(["configs", "--zookeeper", "h:1", "--entity-type", "clients", "--entity-name", "c",
              "--entity-default", "--describe"])  # fmt: skip
    assert e.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


@pytest.mark.integration
def test_configs_alters_and_describes_client_quotas_in_zookeeper(zookeeper, capsys):
    connect = f"{zookeeper.connect_string}/configs-clients-{uuid.uuid4().hex[:8]}"
    zk = ZkUtils(connect)
    zk.setup_common_paths()
    try:
        base = ["configs", "--zookeeper", connect, "--entity-type", "clients"]
        code, out, _ = _run(capsys, *base, "--entity-name", "clicks", "--alter", "--add-config",
                            "producer_byte_rate=1048576,consumer_byte_rate=2097152")  # fmt: skip
        assert (code, out.strip()) == (0, "Completed Updating config for entity: client-id 'clicks'.")
        assert zk.fetch_entity_config("clients", "clicks") == {
            "producer_byte_rate": "1048576",
            "consumer_byte_rate": "2097152",
        }
        notifications = zk.get_config_change_notifications()
        data, _ = zk.get_config_change_notification(notifications[-1])
        assert data == {"version": 2, "entity_path": "clients/clicks"}, "the brokers are told which entity"

        code, out, _ = _run(capsys, *base, "--entity-name", "clicks", "--describe")
        assert (
            out.strip()
            == "Configs for client-id 'clicks' are producer_byte_rate=1048576,consumer_byte_rate=2097152"
        )
        _run(capsys, *base, "--entity-name", "clicks", "--alter", "--delete-config", "consumer_byte_rate")
        assert zk.fetch_entity_config("clients", "clicks") == {"producer_byte_rate": "1048576"}

        code, out, _ = _run(
            capsys, *base, "--entity-default", "--alter", "--add-config", "request_percentage=12.5"
        )
        assert (code, out.strip()) == (0, "Completed Updating config for entity: default client-id.")
        assert zk.fetch_entity_config("clients", "<default>") == {"request_percentage": "12.5"}
        code, out, _ = _run(capsys, *base, "--entity-default", "--describe")
        assert out.strip() == "Configs for default client-id are request_percentage=12.5"

        for bad, message in [
            (
                "producer_byte_rate=-5",
                "Invalid value -5 for configuration producer_byte_rate: Value must be above 0",
            ),
            (
                "producer_byte_rate=abc",
                "Invalid value 'abc' for configuration producer_byte_rate: Expected value to be a 64-bit integer",
            ),
            ("request_percentage=-5", "Invalid value -5.0 for configuration request_percentage"),
            ("consumer_byte_rate=abc", "Invalid value 'abc' for configuration consumer_byte_rate"),
            ("retention.ms=5", "Unknown Dynamic Configuration 'retention.ms'"),
        ]:
            code, _, err = _run(capsys, *base, "--entity-name", "clicks", "--alter", "--add-config", bad)
            assert code == 2 and message in err, err
        assert zk.fetch_entity_config("clients", "clicks") == {"producer_byte_rate": "1048576"}, (
            "nothing written"
        )
        code, _, err = _run(capsys, *base, "--entity-name", "clicks", "--alter", "--delete-config", "nope")
        assert code == 1 and "Invalid config(s): nope (not set for client-id 'clicks')" in err
    finally:
        zk.close()


@pytest.mark.unit
@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", "not JSON"),
        ('{"partitions": [{"topic": "t", "partition": "0", "offset": 1}]}', 'expected {"topic": <string>'),
        ('{"partitions": [{"topic": "t", "partition": 0, "offset": 1}, {"topic": "t", "partition": 0, "offset": 2}]}',
         "duplicate topic partitions: t-0"),
        ('{"partitions": []}', "no partitions"),
    ],
)  # fmt: skip
def test_a_bad_offset_json_file_is_named(capsys, tmp_path, content, message):
    path = tmp_path / "offsets.json"
    path.write_text(content)
    code, _, err = _run(
        capsys, "delete-records", "--bootstrap-server", "h:1", "--offset-json-file", str(path)
    )
    assert code == 2 and message in err


@pytest.mark.compat
def test_configs_describe_add_and_delete_a_topic_override(cluster, capsys):
    topic = topic_name("cli-configs")
    cluster.create_topic(topic, partitions=1)
    base = [
        "configs",
        "--bootstrap-server",
        cluster.bootstrap_servers,
        "--entity-type",
        "topics",
        "--entity-name",
        topic,
    ]
    code, out, _ = _run(capsys, *base, "--describe")
    assert code == 0 and "(no overrides)" in out
    code, out, _ = _run(
        capsys, *base, "--alter", "--add-config", "retention.ms=60000,cleanup.policy=[compact,delete]"
    )
    assert code == 0 and f"Completed updating config for entity: topic '{topic}'." in out
    code, out, _ = _run(capsys, *base, "--describe")
    assert "retention.ms" in out and "60000" in out and "compact,delete" in out
    log = cluster.server(cluster.leader_of(topic, 0)).log_manager.get_log((topic, 0))
    wait_until(
        lambda: log.config.retention_ms == 60000 and log.config.compact, what="the leader's log to take it"
    )

    code, out, _ = _run(capsys, *base, "--alter", "--delete-config", "cleanup.policy")
    assert code == 0
    wait_until(lambda: not log.config.compact, what="cleanup.policy back to its default")
    assert log.config.retention_ms == 60000  # the other override stays
    code, _, err = _run(capsys, *base, "--alter", "--delete-config", "segment.ms")
    assert code == 1 and "Invalid config(s): segment.ms" in err
    code, _, err = _run(capsys, *base, "--alter", "--add-config", "retention.ms=soon")
    assert code == 1 and "INVALID_REQUEST" in err and "retention.ms" in err
    code, out, _ = _run(capsys, "configs", "--bootstrap-server", cluster.bootstrap_servers, "--describe",
                        "--entity-type", "brokers", "--entity-name", "1", "--all")  # fmt: skip
    assert code == 0 and "broker.id" in out


@pytest.mark.compat
@pytest.mark.parametrize("path", ["--bootstrap-server", "--zookeeper"])
def test_topics_alter_partitions_by_either_path(cluster, capsys, path):
    topic = topic_name("cli-grow")
    cluster.create_topic(topic, partitions=1, replication_factor=2)
    where = cluster.bootstrap_servers if path == "--bootstrap-server" else cluster.zk_connect
    code, out, _ = _run(capsys, "topics", path, where, "--alter", "--topic", topic, "--partitions", "3")
    assert code == 0 and "Adding partitions succeeded!" in out
    cluster.wait_for_leaders(topic, 3)
    code, _, err = _run(capsys, "topics", path, where, "--alter", "--topic", topic, "--partitions", "2")
    assert code == 1 and "Topic currently has 3 partitions, which is higher than the requested 2." in err
    zk = ZkUtils(cluster.zk_connect)
    try:
        assert len(zk.get_partition_assignment(topic)) == 3
    finally:
        zk.close()


@pytest.mark.compat
def test_delete_records_with_an_offset_json_file(cluster, capsys, tmp_path):
    topic = topic_name("cli-delete")
    cluster.create_topic(topic, partitions=2, replication_factor=2)
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks="all")
    for i in range(6):
        producer.send(topic, value=b"%d" % i, partition=i % 2)
    producer.flush()
    producer.close()
    path = tmp_path / "offsets.json"
    entries = [{"topic": topic, "partition": 0, "offset": 2}, {"topic": topic, "partition": 1, "offset": 9}]
    path.write_text(json.dumps({"partitions": entries, "version": 1}))
    code, out, _ = _run(capsys, "delete-records", "--bootstrap-server", cluster.bootstrap_servers,
                        "--offset-json-file", str(path))  # fmt: skip
    assert code == 1  # partition 1 has 3 records: offset 9 is beyond its high watermark
    assert out.startswith("Executing records delete operation\nRecords delete operation completed:\n")
    assert f"partition: {topic}-0\tlow_watermark: 2" in out
    assert f"partition: {topic}-1\terror:" in out and "OFFSET_OUT_OF_RANGE" in out
    log = cluster.server(cluster.leader_of(topic, 1)).log_manager.get_log((topic, 1))
    assert log.log_start_offset == 0
