"""``kafka-lite configs``: describe a topic's or a broker's configs, alter a topic's, and describe or
alter in ZooKeeper a broker's dynamic configs (the replication throttle's rates), a client id's
quotas and a user's SCRAM credentials.

No Kafka twin: modelled on bin/kafka-configs.sh (kafka.admin.ConfigCommand, Kafka 0.11), over the
wire: Kafka 0.11's tool wrote ``/config/topics/<topic>`` in ZooKeeper itself; the DescribeConfigs and
AlterConfigs requests of the same release are what kafka-configs.sh's ``--bootstrap-server`` (Kafka
2.0+) uses, and so does this command. A broker's dynamic configs go the 0.11 way, ``--zookeeper``
with ``--entity-type brokers``, since 0.11's AlterConfigs refuses brokers; so do client quotas,
``--entity-type clients``, which no request of 0.11 carries.
Book:    chapter 7 (the admin tools; a topic's settings live in ZooKeeper), 7.1.6 (the throttle rates);
         chapter 10, 10.1 (client quotas); SCRAM credentials are beyond the book (Kafka 0.10.2's KIP-84)

``--alter`` reads the topic's overrides, adds ``--add-config`` and removes ``--delete-config``, and
sends the whole new set (AlterConfigs replaces a topic's overrides, it does not patch them), as
ConfigCommand does. Every broker applies the change to its logs at once, no restart. With
``--zookeeper`` the same happens to ``/config/brokers/<id>``, checked against the broker's dynamic
configs (``leader.replication.throttled.rate``, ``follower.replication.throttled.rate``) first::

    kafka-lite configs --zookeeper Z --entity-type brokers --entity-name 1 --alter \\
        --add-config leader.replication.throttled.rate=1048576
    kafka-lite configs --zookeeper Z --entity-type brokers --entity-name 1 --describe

and to ``/config/clients/<client-id>`` (``--entity-default``: ``/config/clients/<default>``, the quota
of every client id without its own), checked against ``producer_byte_rate``, ``consumer_byte_rate``
and ``request_percentage``, numbers above 0::

    kafka-lite configs --zookeeper Z --entity-type clients --entity-name clicks --alter \\
        --add-config producer_byte_rate=1048576,consumer_byte_rate=2097152
    kafka-lite configs --zookeeper Z --entity-type clients --entity-default --describe

and to ``/config/users/<user>``, where a SCRAM password is salted and hashed here, before it is
written, as ConfigCommand does (ZooKeeper and the brokers never see the password itself); describe
shows each mechanism's iterations, never its salt or keys::

    kafka-lite configs --zookeeper Z --entity-type users --entity-name alice --alter \\
        --add-config 'SCRAM-SHA-256=[iterations=4096,password=alice-secret]'
    kafka-lite configs --zookeeper Z --entity-type users --entity-name alice --delete-config SCRAM-SHA-256 --alter
"""

from __future__ import annotations

import argparse
import re

from rich.table import Table

from kafka_lite.cli import CliError, admin_client
from kafka_lite.cli.security import add_command_config

REQUEST_TIMEOUT_MS = 15_000
ENTITY_TYPES = {"topics": "TOPIC", "brokers": "BROKER", "clients": "CLIENT", "users": "USER"}
DEFAULT_ENTITY_NAME = "<default>"  # Kafka's ConfigEntityName.Default
ENTITY_DEFAULT_USAGE = (
    "--entity-default may be used instead of --entity-name when describing or altering default "
    "configuration for clients"
)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "configs", help="describe or alter a topic's configs, describe a broker's (kafka-configs.sh)"
    )
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--bootstrap-server", metavar="HOST:PORT[,...]", help="the brokers to connect to")
    add_command_config(parser, "with --bootstrap-server: ")
    where.add_argument(
        "--zookeeper",
        metavar="HOST:PORT[/CHROOT]",
        help="with --entity-type brokers or clients: the broker's dynamic configs, the client id's quotas",
    )
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--describe", action="store_true", help="list the entity's configs")
    action.add_argument("--alter", action="store_true", help="add or delete a topic's config overrides")
    parser.add_argument(
        "--entity-type", required=True, choices=sorted(ENTITY_TYPES), help="topics, brokers, clients or users"
    )
    entity = parser.add_mutually_exclusive_group(required=True)
    entity.add_argument(
        "--entity-name", metavar="NAME", help="the topic, the broker id, the client id or the user"
    )
    entity.add_argument(
        "--entity-default", action="store_true", help="with --entity-type clients: every client id's default"
    )
    parser.add_argument(
        "--add-config", metavar="K=V,K=[A,B]", help="overrides to set: comma-separated, a list value in []"
    )
    parser.add_argument("--delete-config", metavar="K,K", help="overrides to remove: comma-separated names")
    parser.add_argument("--all", action="store_true", help="with --describe: every config, defaults included")
    parser.set_defaults(handler=run)


# k=v pairs separated by commas; a value in [] may itself hold commas (ConfigCommand's format)
_PAIR = re.compile(r"([^=,\s]+)=(\[[^\]]*\]|[^,]*)")


def parse_add_config(text: str) -> dict[str, str]:
    """``"a=1,b=[x,y]"`` as ``{"a": "1", "b": "x,y"}``; anything else is a usage error."""
    configs, pos = {}, 0
    while pos < len(text):
        m = _PAIR.match(text, pos)
        if m is None:
            raise CliError(f"--add-config {text!r}: expected k=v pairs separated by commas", exit_code=2)
        key, value = m.group(1), m.group(2)
        configs[key] = value[1:-1] if value.startswith("[") else value
        pos = m.end()
        if pos < len(text):
            if text[pos] != ",":
                raise CliError(f"--add-config {text!r}: expected ',' after {key}={value}", exit_code=2)
            pos += 1
    return configs


def run(args: argparse.Namespace, console) -> int:
    from kafka_lite.clients.admin import ConfigResource, ConfigResourceType

    if args.entity_type in ("clients", "users") and args.zookeeper is None:
        raise CliError(
            f"--entity-type {args.entity_type} goes with --zookeeper: Kafka 0.11 keeps client quotas and "
            f"SCRAM credentials in ZooKeeper, and no request carries them",
            exit_code=2,
        )
    if args.entity_default and args.entity_type != "clients":
        raise CliError(ENTITY_DEFAULT_USAGE, exit_code=2)
    if args.alter:
        if args.entity_type == "brokers" and args.zookeeper is None:
            raise CliError(
                "--alter works for --entity-type topics: a broker's static configs are its server.properties "
                "(Kafka 0.11 refuses AlterConfigs of a broker too); its dynamic configs go through --zookeeper",
                exit_code=2,
            )
        if not args.add_config and not args.delete_config:
            raise CliError("--alter needs --add-config or --delete-config", exit_code=2)
        to_add = parse_add_config(args.add_config) if args.add_config else {}
    elif args.add_config or args.delete_config:
        raise CliError("--add-config and --delete-config go with --alter", exit_code=2)
    else:
        to_add = {}
    if args.zookeeper is not None:
        if args.command_config is not None:
            raise CliError("--command-config goes with --bootstrap-server, not --zookeeper", exit_code=2)
        if args.entity_type == "topics":
            raise CliError(
                "--zookeeper goes with --entity-type brokers or clients (topics take --bootstrap-server)",
                exit_code=2,
            )
        return _zookeeper_configs(args, to_add, console)
    resource_type = ConfigResourceType[ENTITY_TYPES[args.entity_type]]
    with admin_client(
        args.bootstrap_server, command_config=args.command_config, request_timeout_ms=REQUEST_TIMEOUT_MS
    ) as admin:
        described = admin.describe_configs([ConfigResource(resource_type, args.entity_name)])
        entries = described[(resource_type, args.entity_name)]
        if args.describe:
            return _describe(args, entries, console)
        return _alter(admin, args, resource_type, entries, to_add, console, ConfigResource)


def _describe(args, entries: dict, console) -> int:
    shown = [e for e in entries.values() if args.all or not e.is_default]
    label = "topic" if args.entity_type == "topics" else "broker"
    if not shown:
        console.print(f"Configs for {label} '{args.entity_name}' are (no overrides)", highlight=False)
        return 0
    table = Table("Config", "Value", "Source", title=f"Configs for {label} '{args.entity_name}'")
    for e in shown:
        source = {1: "topic override", 4: "broker file", 5: "default"}.get(e.source, str(e.source))
        table.add_row(e.name, "<sensitive>" if e.is_sensitive else str(e.value), source)
    console.print(table)
    return 0


def _alter(admin, args, resource_type, entries: dict, to_add: dict[str, str], console, ConfigResource) -> int:
    from kafka_lite.clients.admin import CONFIG_SOURCE_TOPIC

    overrides = {name: e.value for name, e in entries.items() if e.source == CONFIG_SOURCE_TOPIC}
    to_delete = [n.strip() for n in args.delete_config.split(",") if n.strip()] if args.delete_config else []
    missing = [n for n in to_delete if n not in overrides]
    if missing:
        raise CliError(
            f"Invalid config(s): {','.join(missing)} (not overridden for topic '{args.entity_name}')"
        )
    new = {k: v for k, v in {**overrides, **to_add}.items() if k not in to_delete}
    admin.alter_configs([ConfigResource(resource_type, args.entity_name, new)])
    console.print(f"Completed updating config for entity: topic '{args.entity_name}'.", highlight=False)
    return 0


# -- a broker's dynamic configs and a client id's quotas, in ZooKeeper (Kafka 0.11's ConfigCommand) -------


def _zookeeper_configs(args, to_add: dict[str, str], console) -> int:
    from kafka_lite.common.errors import ConfigException, KafkaException
    from kafka_lite.server.config_handler import validate_broker_config, validate_client_config
    from kafka_lite.zk.zk_utils import CONFIG_TYPE_USER, ZkUtils

    if args.entity_type == "clients":
        entity, validate = _client_entity(args), validate_client_config
        label = "default client-id" if entity == DEFAULT_ENTITY_NAME else f"client-id '{entity}'"
    elif args.entity_type == "users":
        entity, validate, label = (
            _user_entity(args),
            _validate_user_config,
            f"user-principal '{args.entity_name}'",
        )
        to_add = _scram_credentials(to_add)
    else:
        entity, validate = str(_broker_id(args)), validate_broker_config
        label = f"brokers '{entity}'"
    entity_type = args.entity_type  # Kafka's ConfigType: the znode under /config
    try:
        zk = ZkUtils(args.zookeeper)
    except KafkaException as e:
        raise CliError(f"--zookeeper {args.zookeeper!r}: {e}") from None
    try:
        configs = zk.fetch_entity_config(entity_type, entity)
        if args.describe:
            shown = ",".join(f"{k}={_shown_value(k, v)}" for k, v in configs.items())
            console.print(f"Configs for {label} are {shown}", markup=False, highlight=False, soft_wrap=True)
            return 0
        to_delete = (
            [n.strip() for n in args.delete_config.split(",") if n.strip()] if args.delete_config else []
        )
        missing = [n for n in to_delete if n not in configs]
        if missing:
            raise CliError(f"Invalid config(s): {','.join(missing)} (not set for {label})")
        new = {k: v for k, v in {**configs, **to_add}.items() if k not in to_delete}
        try:
            validate(new)  # before anything is written: a refused value leaves ZooKeeper as it was
        except ConfigException as e:
            raise CliError(str(e), exit_code=2) from None
        if args.entity_type == "clients":
            zk.change_client_id_config(entity, new)
        elif args.entity_type == "users":
            zk.change_entity_config(CONFIG_TYPE_USER, entity, new)
        else:
            zk.change_broker_config([int(entity)], new)
    finally:
        zk.close()
    console.print(f"Completed Updating config for entity: {label}.", markup=False, highlight=False)
    return 0


def _broker_id(args) -> int:
    if args.entity_default:
        raise CliError(ENTITY_DEFAULT_USAGE, exit_code=2)
    try:
        return int(args.entity_name)
    except ValueError:
        raise CliError(
            f"Error parsing broker {args.entity_name}. The broker's Entity Name must be a single integer value",
            exit_code=2,
        ) from None


def _client_entity(args) -> str:
    """The znode name of ``--entity-name`` (the client id as it is) or ``--entity-default``."""
    if args.entity_default:
        return DEFAULT_ENTITY_NAME
    if not args.entity_name or "/" in args.entity_name or args.entity_name == DEFAULT_ENTITY_NAME:
        raise CliError(
            f"Invalid client id {args.entity_name!r}: it names a znode under /config/clients, so it must be "
            f"non-empty, without '/', and not {DEFAULT_ENTITY_NAME} (use --entity-default for that)",
            exit_code=2,
        )
    return args.entity_name


# -- a user's SCRAM credentials (KIP-84) ------------------------------------------------------------------


def _user_entity(args) -> str:
    if args.entity_default:
        raise CliError(
            "--entity-default: kafka_lite has no user quotas, and credentials belong to one user", exit_code=2
        )
    if not args.entity_name or "/" in args.entity_name:
        raise CliError(
            f"Invalid user {args.entity_name!r}: it names a znode under /config/users", exit_code=2
        )
    return args.entity_name


def _scram_credentials(to_add: dict[str, str]) -> dict[str, str]:
    """``SCRAM-SHA-256=[iterations=4096,password=...]`` as the stored credential string
    (ConfigCommand's ``preProcessScramCredentials``): salted and hashed here, the password dropped."""
    from kafka_lite.common.security.sasl import SCRAM_SHA_256
    from kafka_lite.common.security.scram.scram_credential_utils import credential_to_string
    from kafka_lite.common.security.scram.scram_formatter import MIN_ITERATIONS, generate_credential

    out = dict(to_add)
    if SCRAM_SHA_256 in to_add:
        fields = dict(item.partition("=")[::2] for item in to_add[SCRAM_SHA_256].split(",") if item)
        unknown = sorted(set(fields) - {"iterations", "password"})
        if "password" not in fields or unknown:
            raise CliError(
                f"{SCRAM_SHA_256}: expected [iterations=<n>,password=<password>] (iterations optional)"
                + (f", not {', '.join(unknown)}" if unknown else ""),
                exit_code=2,
            )
        try:
            iterations = int(fields.get("iterations", MIN_ITERATIONS))
            out[SCRAM_SHA_256] = credential_to_string(generate_credential(fields["password"], iterations))
        except ValueError as e:
            raise CliError(f"{SCRAM_SHA_256}: {e}", exit_code=2) from None
    return out


def _validate_user_config(configs: dict[str, str]) -> None:
    from kafka_lite.common.errors import ConfigException
    from kafka_lite.common.security.sasl import SCRAM_SHA_256

    unknown = sorted(set(configs) - {SCRAM_SHA_256})
    if unknown:
        raise ConfigException(
            f"Unknown user config(s) {', '.join(unknown)}: kafka_lite keeps only {SCRAM_SHA_256} credentials "
            f"per user (its quotas are per client id)"
        )


def _shown_value(key: str, value: str) -> str:
    """A SCRAM credential shows its iterations only: its salt and keys are as good as a password
    hash to an attacker."""
    if key.startswith("SCRAM-"):
        iterations = dict(item.partition("=")[::2] for item in value.split(",")).get("iterations", "?")
        return f"[iterations={iterations}]"
    return value
