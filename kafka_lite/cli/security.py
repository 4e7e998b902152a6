"""The command line's side of SASL: the client properties a ``--command-config`` file holds, and the
users, passwords and broker settings of ``kafka-lite cluster up --secure``.

No Kafka twin: modelled on what Kafka's security guide has an operator do by hand for SASL/PLAIN and
SCRAM (a JAAS line in each broker's ``server.properties``, SCRAM credentials written with
``kafka-configs.sh --entity-type users``, ``SimpleAclAuthorizer`` with the brokers' principal as a
super user) and on the client properties file Kafka's tools take with ``--command-config``.
Book:    beyond the book: chapter 11 (security, Kafka 0.10.2–0.11)

A secure local cluster's brokers have two listeners (Kafka 0.10.2's KIP-103), as Kafka's security
guide sets up a cluster whose clients authenticate and whose brokers sit on a trusted network: the
clients' ``SASL_PLAINTEXT`` listener on the cluster's ports, and a ``PLAINTEXT`` listener named
``INTERNAL`` on a port of its own, bound to 127.0.0.1, which ``inter.broker.listener.name`` gives to
the brokers' own connections (replica fetchers, the controller, transaction markers). A connection
there does not authenticate, so its principal is ``User:ANONYMOUS``, which is therefore a super
user beside admin: the port is for the brokers, reachable from this machine only.

A secure local cluster has two users. ``admin`` is the super user for clients: as such it may do
everything, which is why ``cluster status`` logs in as admin. ``alice`` is an ordinary user: she
may do nothing until an ACL allows it, which is the lesson. Both passwords are drawn per cluster
with ``secrets`` and kept in files only their owner may read (mode 0600): the brokers'
``server.properties``, whose JAAS line holds every user's password as PLAIN's ``user_<name>``
options, and one client properties file per user. The state file records where the client files
are, never a password.

Each user may log in with PLAIN (checked against the JAAS line) or SCRAM-SHA-256 (checked against
a salted credential in ZooKeeper under ``/config/users/<name>``, written before the brokers start,
as ``kafka-configs --alter --add-config SCRAM-SHA-256=[...]`` would).
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from kafka_lite.cli import CliError, properties_file
from kafka_lite.common.errors import ConfigException
from kafka_lite.common.security.jaas_config import SASL_JAAS_CONFIG, client_credentials
from kafka_lite.common.security.sasl import MECHANISMS, PLAIN, SCRAM_SHA_256

SASL_PLAINTEXT = "SASL_PLAINTEXT"
ADMIN_USER = "admin"  # the brokers' own principal and the cluster's one super user
ORDINARY_USER = "alice"
LOGIN_MODULES = {
    PLAIN: "org.apache.kafka.common.security.plain.PlainLoginModule",
    SCRAM_SHA_256: "org.apache.kafka.common.security.scram.ScramLoginModule",
}


# -- a --command-config file ------------------------------------------------------------------------------


def client_login(props: dict[str, str], option: str = "--command-config") -> dict[str, str]:
    """Kafka's client security properties (``security.protocol``, ``sasl.mechanism``,
    ``sasl.jaas.config``) as kafka_lite's client arguments. kafka_lite's clients take the username
    and password as kafka-python does, so they are read from the JAAS line's options."""
    protocol = props.get("security.protocol", "PLAINTEXT")
    if protocol == "PLAINTEXT":
        return {}
    if protocol != SASL_PLAINTEXT:
        raise CliError(f"{option}: security.protocol {protocol!r}: kafka_lite's clients speak PLAINTEXT "
                       f"or {SASL_PLAINTEXT}", exit_code=2)  # fmt: skip
    mechanism = props.get("sasl.mechanism", PLAIN)
    if mechanism not in MECHANISMS:
        raise CliError(f"{option}: sasl.mechanism {mechanism!r}: expected one of {', '.join(MECHANISMS)}", 2)
    if SASL_JAAS_CONFIG not in props:
        raise CliError(f"{option}: {SASL_PLAINTEXT} needs {SASL_JAAS_CONFIG} with a username and password", 2)
    try:
        username, password = client_credentials(props[SASL_JAAS_CONFIG])
    except ConfigException as e:
        raise CliError(f"{option}: {e}", exit_code=2) from None
    return {
        "security_protocol": SASL_PLAINTEXT,
        "sasl_mechanism": mechanism,
        "sasl_plain_username": username,
        "sasl_plain_password": password,
    }


def command_config(path: str | Path | None, option: str = "--command-config") -> dict[str, str]:
    """The client arguments of a ``--command-config`` file (none without one)."""
    return client_login(properties_file(path, option), option) if path is not None else {}


def add_command_config(parser, where: str = "") -> None:
    """The ``--command-config FILE`` option of a tool that talks to the brokers (Kafka's tools take
    the same file: its ``security.protocol``, ``sasl.mechanism`` and ``sasl.jaas.config``)."""
    parser.add_argument(
        "--command-config",
        metavar="FILE",
        help=f"{where}client properties to log in with (security.protocol, sasl.mechanism, sasl.jaas.config)",
    )


# -- a secure local cluster -------------------------------------------------------------------------------


def new_users() -> dict[str, str]:
    """Each user's password, fresh for this cluster (URL-safe, so it needs no escaping in JAAS)."""
    return {ADMIN_USER: secrets.token_urlsafe(18), ORDINARY_USER: secrets.token_urlsafe(18)}


def jaas_line(mechanism: str, username: str, password: str, users: dict[str, str] | None = None) -> str:
    """One ``sasl.jaas.config`` line: the login of ``username``, and on a broker's PLAIN line the
    users it accepts (``user_<name>="<password>"``)."""
    accepted = "".join(f' user_{name}="{pw}"' for name, pw in (users or {}).items())
    return f'{LOGIN_MODULES[mechanism]} required username="{username}" password="{password}"{accepted};'


INTERNAL_LISTENER = "INTERNAL"  # the brokers' own listener on a secure cluster


def broker_settings(port: int, users: dict[str, str], internal_port: int) -> list[str]:
    """A secure broker's ``server.properties`` lines: the clients' SASL listener on ``port``, the
    brokers' PLAINTEXT ``INTERNAL`` listener on ``internal_port`` (loopback only) as the inter-broker
    listener, and the authorizer with admin and the internal listener's anonymous principal as super
    users. SCRAM's JAAS entry has no users: its credentials are in ZooKeeper."""
    admin = users[ADMIN_USER]
    return [
        f"listeners={SASL_PLAINTEXT}://127.0.0.1:{port},{INTERNAL_LISTENER}://127.0.0.1:{internal_port}",
        f"listener.security.protocol.map={SASL_PLAINTEXT}:{SASL_PLAINTEXT},{INTERNAL_LISTENER}:PLAINTEXT",
        f"inter.broker.listener.name={INTERNAL_LISTENER}",
        f"sasl.enabled.mechanisms={PLAIN},{SCRAM_SHA_256}",
        f"listener.name.sasl_plaintext.plain.{SASL_JAAS_CONFIG}={jaas_line(PLAIN, ADMIN_USER, admin, users)}",
        f"listener.name.sasl_plaintext.scram-sha-256.{SASL_JAAS_CONFIG}={LOGIN_MODULES[SCRAM_SHA_256]} required;",
        "authorizer.class.name=SimpleAclAuthorizer",
        f"super.users=User:{ADMIN_USER};User:ANONYMOUS",  # ANONYMOUS: the brokers, on INTERNAL
    ]  # fmt: skip


STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
CONTROLLER_LISTENER = "CONTROLLER"


def kraft_node_settings(
    users: dict[str, str],
    port: int | None = None,
    internal_port: int | None = None,
    controller_port: int | None = None,
) -> list[str]:
    """A secure KRaft node's ``server.properties`` lines, by the roles its ports say it has: a broker
    (``port``, ``internal_port``) listens as a secure ZooKeeper-mode broker does (the clients'
    SASL_PLAINTEXT listener, the brokers' PLAINTEXT ``INTERNAL`` one); a controller
    (``controller_port``) takes SASL_PLAINTEXT on ``CONTROLLER``, with every user's PLAIN password,
    so that any user may log in and only a super user is let do anything there. Every node logs in
    to the controllers as admin (``sasl.mechanism.controller.protocol``), and the voters must be a
    super user: they vote before their StandardAuthorizer has read an ACL (KIP-801). PLAIN only:
    Kafka 3.3's KRaft keeps no SCRAM credentials (``KafkaConfig`` says why)."""
    admin = users[ADMIN_USER]
    listeners, protocols = [], []
    if port is not None:
        listeners += [
            f"{SASL_PLAINTEXT}://127.0.0.1:{port}",
            f"{INTERNAL_LISTENER}://127.0.0.1:{internal_port}",
        ]
        protocols += [f"{SASL_PLAINTEXT}:{SASL_PLAINTEXT}", f"{INTERNAL_LISTENER}:PLAINTEXT"]
    if controller_port is not None:
        listeners.append(f"{CONTROLLER_LISTENER}://127.0.0.1:{controller_port}")
    protocols.append(f"{CONTROLLER_LISTENER}:{SASL_PLAINTEXT}")
    controller_jaas = jaas_line(PLAIN, ADMIN_USER, admin, users if controller_port is not None else None)
    return [
        f"listeners={','.join(listeners)}",
        f"listener.security.protocol.map={','.join(protocols)}",
        f"controller.listener.names={CONTROLLER_LISTENER}",
        *([f"inter.broker.listener.name={INTERNAL_LISTENER}"] if port is not None else []),
        f"sasl.enabled.mechanisms={PLAIN}",
        f"sasl.mechanism.controller.protocol={PLAIN}",
        *([f"listener.name.sasl_plaintext.plain.{SASL_JAAS_CONFIG}={jaas_line(PLAIN, ADMIN_USER, admin, users)}"]
          if port is not None else []),
        f"listener.name.controller.plain.{SASL_JAAS_CONFIG}={controller_jaas}",
        f"authorizer.class.name={STANDARD_AUTHORIZER}",
        f"super.users=User:{ADMIN_USER};User:ANONYMOUS",  # ANONYMOUS: the brokers, on INTERNAL
    ]  # fmt: skip


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` readable by its owner only: created 0600, never briefly wider, and
    a file left by an earlier cluster narrowed too."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def write_client_properties(directory: Path, users: dict[str, str]) -> dict[str, str]:
    """One ``<user>.properties`` per user in ``directory``, in Kafka's ``--command-config`` form;
    return each user's file."""
    files = {}
    for user, password in users.items():
        path = directory / f"{user}.properties"
        write_private(
            path,
            f"security.protocol={SASL_PLAINTEXT}\nsasl.mechanism={PLAIN}\n"
            f"{SASL_JAAS_CONFIG}={jaas_line(PLAIN, user, password)}\n",
        )
        files[user] = str(path)
    return files


def add_scram_credentials(zookeeper_connect: str, users: dict[str, str]) -> None:
    """Each user's SCRAM-SHA-256 credential (salted, hashed: no password) under ``/config/users``."""
    from kafka_lite.common.security.scram.scram_credential_utils import credential_to_string
    from kafka_lite.common.security.scram.scram_formatter import generate_credential
    from kafka_lite.zk.zk_utils import ZkUtils

    zk = ZkUtils(zookeeper_connect, connection_timeout_ms=10_000)
    try:
        for user, password in users.items():
            credential = credential_to_string(generate_credential(password))
            zk.change_entity_config("users", user, {SCRAM_SHA_256: credential})
    finally:
        zk.close()


def admin_login(state: dict) -> dict[str, str]:
    """The client arguments to log in to the cluster as admin: none for a PLAINTEXT cluster."""
    secure = state.get("secure")
    return command_config(secure["users"][ADMIN_USER], "the admin's properties file") if secure else {}


def how_to_connect(state: dict, bootstrap: str) -> str:
    """What ``up --secure`` prints: the files, a consumer of each library as alice, and the ACLs that
    let her consume a topic (Read on the topic, and on the group for a consumer in one)."""
    files = state["secure"]["users"]
    alice, admin = files[ORDINARY_USER], files[ADMIN_USER]
    password = f"<the password in {alice}>"
    # KRaft (Kafka 3.3): PLAIN only, and the ACLs are metadata records (KIP-801)
    mechanisms, authorizer = (PLAIN, "StandardAuthorizer") if state.get("kraft") else (
        f"PLAIN or {SCRAM_SHA_256}", "SimpleAclAuthorizer")  # fmt: skip
    return "\n".join([
        f"secure: {SASL_PLAINTEXT} ({mechanisms}), {authorizer}, super user User:{ADMIN_USER}",
        f"  {ADMIN_USER}'s client properties: {admin}",
        f"  {ORDINARY_USER}'s client properties: {alice} (allowed nothing until an ACL says so)",
        "kafka-python:",
        f'  KafkaConsumer("TOPIC", bootstrap_servers="{bootstrap}", security_protocol="{SASL_PLAINTEXT}",',
        f'                sasl_mechanism="{PLAIN}", sasl_plain_username="{ORDINARY_USER}", '
        f'sasl_plain_password="{password}")',
        "confluent-kafka:",
        f'  Consumer({{"bootstrap.servers": "{bootstrap}", "group.id": "GROUP", "security.protocol": "{SASL_PLAINTEXT}",',
        f'            "sasl.mechanisms": "{PLAIN}", "sasl.username": "{ORDINARY_USER}", "sasl.password": "{password}"}})',
        f"let {ORDINARY_USER} read TOPIC, in GROUP (as {ADMIN_USER}; --producer instead lets her write):",
        f"  kafka-lite acls --bootstrap-server {bootstrap} --command-config {admin} \\",
        f"      --add --allow-principal User:{ORDINARY_USER} --consumer --topic TOPIC --group GROUP",
    ])  # fmt: skip
