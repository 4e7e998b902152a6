"""``kafka-lite configs --entity-type clients``: a client id's quotas (or the default's) written to
and read from ZooKeeper as Kafka 0.11's kafka-configs.sh does, and the arguments and values it refuses
before anything is written."""

from __future__ import annotations

import uuid

import pytest

from kafka_lite.cli.main import main
from kafka_lite.zk.zk_utils import ZkUtils


def _run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


@pytest.mark.unit
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--bootstrap-server", "h:1", "--entity-type", "clients", "--entity-name", "c", "--describe"],
         "--entity-type clients goes with --zookeeper"),
        (["--zookeeper", "h:1", "--entity-type", "brokers", "--entity-default", "--describe"],
         "--entity-default may be used instead of --entity-name"),
        (["--zookeeper", "h:1", "--entity-type", "clients", "--entity-name", "a/b", "--describe"],
         "Invalid client id 'a/b'"),
        (["--zookeeper", "h:1", "--entity-type", "clients", "--entity-name", "<default>", "--describe"],
         "use --entity-default"),
        (["--zookeeper", "h:1", "--entity-type", "clients", "--entity-name", "c", "--alter"],
         "--alter needs --add-config or --delete-config"),
    ],
)  # fmt: skip
def test_client_arguments_that_cannot_work_are_named(capsys, args, message):
    code, _, err = _run(capsys, "configs", *args)
    assert code == 2 and message in err


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
