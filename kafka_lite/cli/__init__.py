"""The ``kafka-lite`` command.

No Kafka twin: modelled on Kafka's ``bin/*.sh`` scripts (one sub-command per script, flag for flag
where one exists), with rich output. Nothing in kafka_lite imports this package.
"""

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class CliError(Exception):
    """A failure the user can act on; printed as one line, without a traceback.

    ``exit_code`` is 2 for bad usage (a wrong argument, a missing file) and 1 when the work itself
    failed (a corrupt file, a lab not at full marks).
    """

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def _causes(error: BaseException) -> Iterator[BaseException]:
    """The errors under ``error``, nearest first, as Python's own traceback follows them: the
    explicit cause (``raise ... from e``), else the error being handled when it was raised, unless
    ``from None`` suppressed it."""
    seen = {id(error)}
    while True:
        error = error.__cause__ or (None if error.__suppress_context__ else error.__context__)
        if error is None or id(error) in seen:
            return
        seen.add(id(error))
        yield error


def with_causes(error: BaseException) -> str:
    """``Type: message``, then a ``Caused by: Type: message`` line for each error under it, as a
    Java stack trace names its causes: an application that stops on a wrapper ("Failed to
    rebalance") shows what went wrong underneath."""
    return "\n".join([f"{type(error).__name__}: {error}", *causes_under(error)])


def causes_under(error: BaseException) -> list[str]:
    """A ``Caused by: Type: message`` line for each error under ``error``: what a command prints
    below its one-line message when the client's error wraps another."""
    return [f"Caused by: {type(cause).__name__}: {cause}" for cause in _causes(error)]


def message_with_causes(error: BaseException) -> str:
    """The error's own message, then its causes' lines (none for an error that wraps nothing)."""
    return "\n".join([str(error), *causes_under(error)])


def brokers_not_answering(error: Exception, bootstrap_server: str) -> CliError:
    """A client's timeout, as the one line that says which brokers did not answer."""
    return CliError(
        "\n".join(
            [
                f"{error} (from --bootstrap-server {bootstrap_server}: are the brokers up?)",
                *causes_under(error),
            ]
        )
    )


@contextmanager
def admin_client(
    bootstrap_server: str, option: str = "--bootstrap-server", command_config: str | None = None, **configs
) -> Iterator:
    """A ``KafkaAdminClient`` for a command, closed on the way out, logged in as the
    ``--command-config`` file says (if given). A bootstrap list it cannot read is a usage error
    naming ``option``; brokers that do not answer are named; any other error from the cluster is
    its one line."""
    from kafka_lite.cli.security import command_config as login
    from kafka_lite.clients.admin import KafkaAdminClient
    from kafka_lite.common.errors import KafkaException, TimeoutException

    configs = {**configs, **login(command_config)}

    try:
        admin = KafkaAdminClient(bootstrap_server, **configs)
    except KafkaException as e:
        raise CliError(f"{option} {bootstrap_server!r}: {message_with_causes(e)}", exit_code=2) from None
    try:
        yield admin
    except TimeoutException as e:
        raise brokers_not_answering(e, bootstrap_server) from None
    except KafkaException as e:
        raise CliError(message_with_causes(e)) from None
    finally:
        admin.close()


def key_values(items: list[str], option: str) -> dict[str, str]:
    """``["k=v", ...]`` from a repeatable option as a dict; an item without ``=`` or without a key
    is a usage error naming the option and the item."""
    result = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise CliError(f"{option} expects key=value, got {item!r}", exit_code=2)
        result[key.strip()] = value
    return result


def properties_file(path: str | Path | None, option: str) -> dict[str, str]:
    """The settings in a Java properties file given with ``option`` (none if ``path`` is None); a file
    that cannot be read is a usage error naming the option and what is wrong."""
    from kafka_lite.common.errors import ConfigException
    from kafka_lite.server.kafka_config import read_properties

    if path is None:
        return {}
    try:
        return dict(read_properties(path))
    except ConfigException as e:
        raise CliError(f"{option}: {e}", exit_code=2) from None


def positive_int(unit: str):
    """An argparse type: a whole number of ``unit`` of at least 1, with an error naming what is wrong."""
    return whole_number(unit, 1, "give at least 1")


def whole_number(unit: str, least: int = 0, too_small: str = "cannot be negative"):
    """An argparse type: a whole number of ``unit`` of at least ``least``; below it, the error says
    ``too_small``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of {unit}") from None
        if value < least:
            raise argparse.ArgumentTypeError(f"{text} {unit}: {too_small}")
        return value

    return parse


def offset_time(text: str) -> int:
    """An argparse type for a ListOffsets time: -1 (the latest offset a consumer may read, the high
    watermark), -2 (the log start) or a timestamp in ms."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not -1 (latest), -2 (earliest) or a timestamp in ms"
        ) from None
    if value < -2:
        raise argparse.ArgumentTypeError(f"{text}: give -1 (latest), -2 (earliest) or a timestamp in ms")
    return value
