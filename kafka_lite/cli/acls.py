"""``kafka-lite acls``: add, remove and list ACLs, in ZooKeeper or through the brokers.

No Kafka twin: modelled on bin/kafka-acls.sh (kafka.admin.AclCommand, Kafka 0.11), flag for flag:
``--add | --remove | --list``, ``--allow-principal``/``--deny-principal``, ``--allow-host``/
``--deny-host``, ``--operation``, ``--topic``/``--group``/``--cluster``/``--transactional-id``, the
``--producer`` and ``--consumer`` conveniences. Kafka 0.11's tool writes ZooKeeper through the
authorizer (``--authorizer-properties zookeeper.connect=...``), and so does this one; with
``--bootstrap-server`` (Kafka 2.0's option) it sends CreateAcls, DescribeAcls and DeleteAcls instead,
which the brokers check against the caller's own ACLs (Alter, Describe on the cluster). On a SASL
listener the caller logs in with ``--command-config FILE``, Kafka's client properties file
(``security.protocol``, ``sasl.mechanism``, ``sasl.jaas.config``).
Book:    beyond the book: chapter 11 (security, Kafka 0.10.2–0.11)

Each ``--allow-principal`` is given every ``--operation`` (All if none) from every ``--allow-host``
(``*`` if none), on every resource named; likewise the deny options. An operation a resource type does
not have (Read on the cluster, Create on a group) is refused before anything is written, as
AclCommand does::

    kafka-lite acls --bootstrap-server B --add --allow-principal User:alice --operation Read --topic orders
    kafka-lite acls --bootstrap-server B --add --allow-principal User:bob --consumer --topic orders --group billing
    kafka-lite acls --authorizer-properties zookeeper.connect=Z --list --topic orders
    kafka-lite acls --bootstrap-server B --remove --topic orders            (every ACL of the topic)
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager

from kafka_lite.cli import CliError, admin_client, key_values
from kafka_lite.cli.security import add_command_config
from kafka_lite.common.errors import InvalidRequestException, KafkaException
from kafka_lite.common.security.auth.acl import (
    CLUSTER_RESOURCE,
    WILDCARD_HOST,
    Acl,
    Operation,
    PermissionType,
    Resource,
    ResourceType,
)
from kafka_lite.common.security.auth.kafka_principal import KafkaPrincipal

REQUEST_TIMEOUT_MS = 15_000
O = Operation  # noqa: E741
# The operations each resource type has (AclCommand's ResourceTypeToValidOperations, Kafka 0.11)
VALID_OPERATIONS: dict[ResourceType, frozenset[Operation]] = {
    ResourceType.TOPIC: frozenset({O.READ, O.WRITE, O.DESCRIBE, O.DELETE, O.DESCRIBE_CONFIGS, O.ALTER_CONFIGS, O.ALL}),
    ResourceType.GROUP: frozenset({O.READ, O.DESCRIBE, O.ALL}),
    ResourceType.CLUSTER: frozenset(
        {O.CREATE, O.CLUSTER_ACTION, O.DESCRIBE_CONFIGS, O.ALTER_CONFIGS, O.IDEMPOTENT_WRITE, O.ALTER, O.DESCRIBE, O.ALL}
    ),
    ResourceType.TRANSACTIONAL_ID: frozenset({O.DESCRIBE, O.WRITE, O.ALL}),
}  # fmt: skip


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("acls", help="add, remove or list ACLs (kafka-acls.sh)")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--bootstrap-server", metavar="HOST:PORT[,...]", help="through the brokers' ACL APIs")
    where.add_argument(
        "--authorizer-properties",
        metavar="K=V",
        nargs="+",
        help="directly on ZooKeeper, as Kafka 0.11's tool: zookeeper.connect=HOST:PORT[/CHROOT]",
    )
    add_command_config(parser, "with --bootstrap-server: ")
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--add", action="store_true", help="add the ACLs described")
    action.add_argument(
        "--remove", action="store_true", help="remove them (without principals: all of a resource's)"
    )
    action.add_argument(
        "--list", action="store_true", help="list the ACLs of the resources (all without one)"
    )
    parser.add_argument("--topic", action="append", default=[], metavar="NAME", help="a topic (* for all)")
    parser.add_argument(
        "--group", action="append", default=[], metavar="NAME", help="a consumer group (* for all)"
    )
    parser.add_argument("--cluster", action="store_true", help="the cluster")
    parser.add_argument(
        "--transactional-id", action="append", default=[], metavar="ID", help="a transactional id"
    )
    parser.add_argument(
        "--allow-principal",
        action="append",
        default=[],
        metavar="User:NAME",
        help="a principal to allow (User:*: all)",
    )
    parser.add_argument(
        "--deny-principal",
        action="append",
        default=[],
        metavar="User:NAME",
        help="a principal to deny (User:*: all)",
    )
    parser.add_argument(
        "--allow-host", action="append", default=[], metavar="HOST", help="default * with a principal"
    )
    parser.add_argument(
        "--deny-host", action="append", default=[], metavar="HOST", help="default * with a principal"
    )
    parser.add_argument(
        "--operation", action="append", default=[], metavar="OP", help="Read, Write, ... (default All)"
    )
    parser.add_argument(
        "--producer", action="store_true", help="Write, Describe on the topics; Create on the cluster"
    )
    parser.add_argument(
        "--consumer", action="store_true", help="Read, Describe on the topics; Read on the group"
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, console) -> int:
    resources = _resources(args)
    if args.list:
        with _backend(args) as backend:
            _print_current(console, backend, resources)
        return 0
    if not resources:
        raise CliError(
            "--add and --remove need a resource: --topic, --group, --cluster or --transactional-id", 2
        )
    acls_by_resource = _acls_by_resource(args, resources)
    with _backend(args) as backend:
        for resource, acls in acls_by_resource.items():
            if args.add:
                if not acls:
                    raise CliError("--add needs --allow-principal or --deny-principal", 2)
                _print(console, f"Adding ACLs for resource `{resource}`:", acls)
                backend.add(resource, acls)
            elif acls:
                _print(console, f"Removing ACLs for resource `{resource}`:", acls)
                backend.remove(resource, acls)
            else:
                console.print(f"Removing every ACL of resource `{resource}`", highlight=False)
                backend.remove(resource, None)
        _print_current(console, backend, list(acls_by_resource))
    return 0


def _print_current(console, backend, resources: list[Resource]) -> None:
    """The ACLs of ``resources`` (all, without any) as they stand, as AclCommand lists them."""
    for resource, acls in sorted(backend.list(resources).items(), key=lambda item: str(item[0])):
        _print(console, f"Current ACLs for resource `{resource}`:", acls)


def _print(console, title: str, acls) -> None:
    console.print(title, highlight=False)
    for acl in sorted(acls, key=str):
        console.print(f" \t{acl} ", highlight=False)


# -- what the options say -------------------------------------------------------------------------------------


def _resources(args) -> list[Resource]:
    resources = [Resource(ResourceType.TOPIC, t) for t in args.topic]
    resources += [Resource(ResourceType.GROUP, g) for g in args.group]
    resources += [Resource(ResourceType.TRANSACTIONAL_ID, t) for t in args.transactional_id]
    if args.cluster:
        resources.append(CLUSTER_RESOURCE)
    if any(not r.name for r in resources):
        raise CliError("a resource name cannot be empty", 2)
    return resources


def _principals(names: list[str], option: str) -> list[KafkaPrincipal]:
    try:
        return [KafkaPrincipal.from_string(n) for n in names]
    except ValueError as e:
        raise CliError(f"{option}: {e}", 2) from None


def _acls(args, operations: set[Operation]) -> set[Acl]:
    """Every allow principal × allow host × operation, Allow; the same for deny (AclCommand's getAcl)."""
    acls = set()
    for permission, principals, hosts, option in (
        (PermissionType.ALLOW, args.allow_principal, args.allow_host, "--allow-principal"),
        (PermissionType.DENY, args.deny_principal, args.deny_host, "--deny-principal"),
    ):
        for principal in _principals(principals, option):
            for host in hosts or [WILDCARD_HOST]:
                acls.update(Acl(principal, permission, host, op) for op in operations)
    return acls


def _operations(args) -> set[Operation]:
    try:
        return {Operation.from_string(o) for o in args.operation} or {Operation.ALL}
    except InvalidRequestException as e:
        raise CliError(f"--operation: {e}", 2) from None


def _acls_by_resource(args, resources: list[Resource]) -> dict[Resource, set[Acl]]:
    if args.producer or args.consumer:
        if args.operation:
            raise CliError("--operation does not go with --producer or --consumer", 2)
        if not args.remove and not args.topic:
            raise CliError("--producer and --consumer need --topic", 2)
        if args.consumer and not args.group:
            raise CliError("--consumer needs --group", 2)
        by_type = _convenience_operations(args)
        found = {}
        for resource in resources:
            found[resource] = _acls(args, by_type.get(resource.resource_type, set()))
        if args.producer:
            found[CLUSTER_RESOURCE] = found.get(CLUSTER_RESOURCE, set()) | _acls(args, {Operation.CREATE})
        return {r: acls for r, acls in found.items() if acls}
    operations = _operations(args)
    for resource in resources:
        invalid = operations - VALID_OPERATIONS[resource.resource_type]
        if invalid:
            valid = ", ".join(sorted(str(o) for o in VALID_OPERATIONS[resource.resource_type]))
            raise CliError(
                f"ResourceType {resource.resource_type} only supports operations {valid}; "
                f"not {', '.join(sorted(map(str, invalid)))}",
                2,
            )
    return {resource: _acls(args, operations) for resource in resources}


def _convenience_operations(args) -> dict[ResourceType, set[Operation]]:
    """``--producer``: Write and Describe on the topics (and the transactional ids); ``--consumer``:
    Read and Describe on the topics, Read on the group (AclCommand's getProducerResourceToAcls and
    getConsumerResourceToAcls)."""
    by_type: dict[ResourceType, set[Operation]] = {}
    if args.producer:
        by_type.setdefault(ResourceType.TOPIC, set()).update({Operation.WRITE, Operation.DESCRIBE})
        by_type[ResourceType.TRANSACTIONAL_ID] = {Operation.WRITE, Operation.DESCRIBE}
    if args.consumer:
        by_type.setdefault(ResourceType.TOPIC, set()).update({Operation.READ, Operation.DESCRIBE})
        by_type[ResourceType.GROUP] = {Operation.READ}
    return by_type


# -- where the ACLs are -------------------------------------------------------------------------------------------


class _ZooKeeperBackend:
    """Kafka 0.11's way: the tool's own SimpleAclAuthorizer, on the cluster's ZooKeeper."""

    def __init__(self, authorizer) -> None:
        self.authorizer = authorizer

    def add(self, resource: Resource, acls: set[Acl]) -> None:
        self.authorizer.add_acls(acls, resource)

    def remove(self, resource: Resource, acls: set[Acl] | None) -> None:
        if acls is None:
            self.authorizer.remove_all_acls(resource)
        else:
            self.authorizer.remove_acls(acls, resource)

    def list(self, resources: list[Resource]) -> dict[Resource, frozenset[Acl]]:
        every = self.authorizer.get_all_acls()
        return {r: acls for r, acls in every.items() if not resources or r in resources}


class _BrokerBackend:
    """Kafka 2.0's ``--bootstrap-server``: CreateAcls, DeleteAcls and DescribeAcls."""

    def __init__(self, admin) -> None:
        self.admin = admin

    def add(self, resource: Resource, acls: set[Acl]) -> None:
        result = self.admin.create_acls([self._acl(resource, acl) for acl in sorted(acls, key=str)])
        if result["failed"]:
            acl, error = result["failed"][0]
            raise CliError(f"cannot add {acl.principal} {acl.operation} on {resource}: {error}")

    def remove(self, resource: Resource, acls: set[Acl] | None) -> None:
        from kafka_lite.clients.acl_resource import ACLFilter, ResourcePattern

        pattern = ResourcePattern(resource.resource_type, resource.name)
        filters = (
            [ACLFilter(resource_pattern=pattern)] if acls is None else [self._acl(resource, a) for a in acls]
        )
        for _, deleted, error in self.admin.delete_acls(filters):
            failed = [e for _, e in deleted if e.code] + ([error] if error.code else [])
            if failed:
                raise CliError(f"cannot remove ACLs of {resource}: {failed[0].name}")

    def list(self, resources: list[Resource]) -> dict[Resource, frozenset[Acl]]:
        from kafka_lite.clients.acl_resource import ACLFilter

        acls, error = self.admin.describe_acls(ACLFilter())
        if error.code:
            raise CliError(f"cannot list ACLs: {error.name}: {error.description}")
        found: dict[Resource, set[Acl]] = {}
        for a in acls:
            binding = a.to_binding_filter().to_binding()
            if not resources or binding.resource in resources:
                found.setdefault(binding.resource, set()).add(binding.acl)
        return {r: frozenset(acls) for r, acls in found.items()}

    @staticmethod
    def _acl(resource: Resource, acl: Acl):
        from kafka_lite.clients.acl_resource import ACL, ResourcePattern

        pattern = ResourcePattern(resource.resource_type, resource.name)
        return ACL(str(acl.principal), acl.host, acl.operation, acl.permission_type, pattern)


@contextmanager
def _backend(args) -> Iterator:
    if args.bootstrap_server is not None:
        with admin_client(
            args.bootstrap_server, command_config=args.command_config, request_timeout_ms=REQUEST_TIMEOUT_MS
        ) as admin:
            yield _BrokerBackend(admin)
        return
    from kafka_lite.security.auth.simple_acl_authorizer import SimpleAclAuthorizer

    if args.command_config is not None:
        raise CliError("--command-config goes with --bootstrap-server, not --authorizer-properties", 2)

    props = key_values(args.authorizer_properties, "--authorizer-properties")
    if "zookeeper.connect" not in props:
        raise CliError("--authorizer-properties needs zookeeper.connect=HOST:PORT[/CHROOT]", 2)
    authorizer = SimpleAclAuthorizer()
    try:
        authorizer.configure(props)
    except KafkaException as e:
        raise CliError(f"--authorizer-properties: {e}", 2) from None
    try:
        yield _ZooKeeperBackend(authorizer)
    except KafkaException as e:
        raise CliError(str(e)) from None
    finally:
        authorizer.close()
