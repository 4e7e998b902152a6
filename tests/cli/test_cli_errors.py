"""How a command reports an application's failure: the error and every cause under it."""

from __future__ import annotations

import pytest

from kafka_lite.cli import with_causes

pytestmark = pytest.mark.unit


def test_an_error_shows_each_cause_under_it_as_a_java_trace_does():
    try:
        try:
            try:
                raise KeyError("the checkpoint")
            except KeyError as e:
                raise ValueError("task [1_0] could not restore") from e
        except ValueError as e:
            raise RuntimeError("Failed to rebalance") from e
    except RuntimeError as e:
        assert with_causes(e).splitlines() == [
            "RuntimeError: Failed to rebalance",
            "Caused by: ValueError: task [1_0] could not restore",
            "Caused by: KeyError: 'the checkpoint'",
        ]


def test_a_clients_error_keeps_its_one_line_and_adds_only_the_causes_under_it():
    from kafka_lite.cli import message_with_causes
    from kafka_lite.common.errors import KafkaException

    assert message_with_causes(KafkaException("Topic 'test' already exists")) == "Topic 'test' already exists"
    try:
        try:
            raise ConnectionRefusedError(111, "Connection refused")
        except OSError as e:
            raise KafkaException("Failed to create new KafkaAdminClient") from e
    except KafkaException as e:
        assert message_with_causes(e).splitlines() == [
            "Failed to create new KafkaAdminClient",
            "Caused by: ConnectionRefusedError: [Errno 111] Connection refused",
        ]
    # an error raised "from None" hides what it was handling, as Python's own traceback does
    try:
        try:
            raise KeyError("internal")
        except KeyError:
            raise KafkaException("Unknown topic") from None
    except KafkaException as e:
        assert message_with_causes(e) == "Unknown topic"


def test_the_topics_command_prints_the_cause_under_a_clients_error(monkeypatch, capsys):
    """A wrapper the admin client raises reaches the terminal with what it wraps."""
    from kafka_lite.cli import main as cli_main
    from kafka_lite.clients import admin
    from kafka_lite.common.errors import KafkaException

    def refuse(*args, **kwargs):
        try:
            raise ConnectionRefusedError(111, "Connection refused")
        except OSError as e:
            raise KafkaException("Failed to create new KafkaAdminClient") from e

    monkeypatch.setattr(admin, "KafkaAdminClient", refuse)
    code = cli_main.main(["topics", "--bootstrap-server", "127.0.0.1:1", "--list"])
    err = capsys.readouterr().err
    assert code == 2
    assert "Failed to create new KafkaAdminClient" in err
    assert "Caused by: ConnectionRefusedError: [Errno 111] Connection refused" in err
