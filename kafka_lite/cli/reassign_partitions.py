"""``kafka-lite reassign-partitions``: move partitions' replicas to other brokers.

Mirrors: bin/kafka-reassign-partitions.sh (kafka.admin.ReassignPartitionsCommand, Kafka 0.11),
         which writes ``/admin/reassign_partitions`` in ZooKeeper: Kafka had no request for it
         until AlterPartitionReassignments (Kafka 2.4, KIP-455)
Book:    chapter 7, 7.1.6 (partition reassignment)
Differs: no ``--disable-rack-aware`` (a broker may have a ``broker.rack``, but replica placement ignores it); a bad input or a reassignment already running is a one-line error with exit code 2
         (the input) or 1 (the cluster's state) where Kafka prints a stack trace and exits 0;
         ``--verify`` exits 1 when a partition's reassignment failed.

Three actions, as Kafka's tool::

    kafka-lite reassign-partitions --zookeeper Z --topics-to-move-json-file topics.json --broker-list 1,2 --generate
    kafka-lite reassign-partitions --zookeeper Z --reassignment-json-file plan.json --execute [--throttle B]
    kafka-lite reassign-partitions --zookeeper Z --reassignment-json-file plan.json --verify

``--generate`` only proposes (the replicas of the topics' partitions spread over the listed
brokers, as topic creation spreads them); ``--execute`` checks the plan and writes it, and the
controller does the rest; ``--verify`` reads where each partition is now.

``--execute --throttle B`` (KIP-73) first bounds the copy the reassignment starts: it sets
``leader.replication.throttled.rate`` and ``follower.replication.throttled.rate`` to B bytes/s on
every broker of the partitions' old and new replicas, and on each topic moved
``leader.replication.throttled.replicas`` to the current replicas of its moving partitions (any of
them may be the leader the new ones copy from) and ``follower.replication.throttled.replicas`` to the
replicas being added. Run again with ``--throttle`` while the reassignment runs, it changes the rate
only. The throttle stays until a ``--verify`` finds every partition of the plan moved: then it
removes the rates from every broker and the lists from the plan's topics ("Throttle was removed.").
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from kafka_lite.cli import CliError

# the replication throttle's configs (KIP-73), as the broker reads them: a broker's two rates
# (``config_handler.BROKER_CONFIG_DEF``), a topic's two replica lists (``log_config.CONFIG_DEF``)
LEADER_RATE = "leader.replication.throttled.rate"
FOLLOWER_RATE = "follower.replication.throttled.rate"
LEADER_REPLICAS = "leader.replication.throttled.replicas"
FOLLOWER_REPLICAS = "follower.replication.throttled.replicas"

ZK_TIMEOUT_MS = 30_000  # Kafka's tool's session and connection timeouts


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "reassign-partitions",
        help="move partitions' replicas between brokers (kafka-reassign-partitions.sh)",
        description="This command moves topic partitions between replicas.",
    )
    parser.add_argument(
        "--zookeeper", required=True, metavar="HOST:PORT[/CHROOT]",
        help="REQUIRED: the connection string for the zookeeper connection",
    )  # fmt: skip
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument(
        "--generate", action="store_true",
        help="Generate a candidate partition reassignment configuration. Note that this only generates "
        "a candidate assignment, it does not execute it.",
    )  # fmt: skip
    action.add_argument(
        "--execute", action="store_true",
        help="Kick off the reassignment as specified by the --reassignment-json-file option.",
    )  # fmt: skip
    action.add_argument(
        "--verify", action="store_true",
        help="Verify if the reassignment completed as specified by the --reassignment-json-file option.",
    )  # fmt: skip
    parser.add_argument(
        "--reassignment-json-file", metavar="FILE",
        help='the partition reassignment configuration: {"partitions": [{"topic": "foo", "partition": 1, '
        '"replicas": [1,2,3]}], "version": 1}',
    )  # fmt: skip
    parser.add_argument(
        "--topics-to-move-json-file", metavar="FILE",
        help='with --generate, the topics to move: {"topics": [{"topic": "foo"}, {"topic": "foo1"}], "version": 1}',
    )  # fmt: skip
    parser.add_argument(
        "--broker-list", metavar="0,1,2",
        help="with --generate, the brokers to which the partitions need to be reassigned",
    )  # fmt: skip
    parser.add_argument(
        "--throttle", type=int, metavar="BYTES/S",
        help="with --execute, the movement of partitions will be throttled to this value (bytes/sec). "
        "Rerunning with this option, whilst a rebalance is in progress, will alter the throttle value. "
        "The throttle rate should be at least 1 KB/s.",
    )  # fmt: skip
    parser.set_defaults(handler=run)


def _check_args(args: argparse.Namespace) -> None:
    """Kafka's ``validateAndParseArgs``: each action's required and refused options."""
    if args.verify:
        used, invalid = "--verify", {"--throttle": args.throttle is not None,
                                     "--topics-to-move-json-file": args.topics_to_move_json_file,
                                     "--broker-list": args.broker_list}  # fmt: skip
        if not args.reassignment_json_file:
            raise CliError(
                "If --verify option is used, command must include --reassignment-json-file that was used "
                "during the --execute option",
                exit_code=2,
            )
    elif args.generate:
        used, invalid = "--generate", {"--throttle": args.throttle is not None,
                                       "--reassignment-json-file": args.reassignment_json_file}  # fmt: skip
        if not (args.topics_to_move_json_file and args.broker_list):
            raise CliError(
                "If --generate option is used, command must include both --topics-to-move-json-file and "
                "--broker-list options",
                exit_code=2,
            )
    else:
        used, invalid = "--execute", {"--topics-to-move-json-file": args.topics_to_move_json_file,
                                      "--broker-list": args.broker_list}  # fmt: skip
        if not args.reassignment_json_file:
            raise CliError(
                "If --execute option is used, command must include --reassignment-json-file that was output "
                "during the --generate option",
                exit_code=2,
            )
    for option, value in invalid.items():
        if value:
            raise CliError(f'Option "{used}" can\'t be used with option "{option}"', exit_code=2)
    if args.throttle is not None and args.throttle < 0:
        raise CliError(f"--throttle {args.throttle}: the rate is bytes per second, at least 0", exit_code=2)


def read_file(path: str, option: str) -> str:
    try:
        return Path(path).read_text()
    except OSError as e:
        raise CliError(f"{option} {path}: {e.strerror or e}", exit_code=2) from None


def say(console, text: str) -> None:
    """One line (or block) as it is: no rich markup (``[t,0]`` would read as a tag), no wrapping."""
    console.print(text, markup=False, highlight=False, soft_wrap=True)


def tp_str(tp) -> str:
    """Kafka's ``TopicAndPartition.toString``."""
    return f"[{tp[0]},{tp[1]}]"


def connect(zookeeper: str):
    from kafka_lite.common.errors import KafkaException
    from kafka_lite.zk.zk_utils import ZkUtils

    try:
        return ZkUtils(zookeeper, ZK_TIMEOUT_MS, 10_000)
    except KafkaException as e:
        raise CliError(str(e)) from None


def run(args: argparse.Namespace, console) -> int:
    _check_args(args)
    if args.generate:
        broker_list = _parse_broker_list(args.broker_list)
        topics = _parse_topics(read_file(args.topics_to_move_json_file, "--topics-to-move-json-file"))
        zk = connect(args.zookeeper)
        try:
            return generate(zk, broker_list, topics, console)
        finally:
            zk.close()
    plan_text = read_file(args.reassignment_json_file, "--reassignment-json-file")
    zk = connect(args.zookeeper)
    try:
        if args.execute:
            return execute(zk, plan_text, console, -1 if args.throttle is None else args.throttle)
        return verify(zk, plan_text, console)
    finally:
        zk.close()


# -- --generate ----------------------------------------------------------------------------------------------


def _parse_broker_list(text: str) -> list[int]:
    try:
        brokers = [int(b) for b in text.split(",")]
    except ValueError:
        raise CliError(f"--broker-list {text!r}: expected broker ids like 0,1,2", exit_code=2) from None
    duplicates = sorted(b for b, n in Counter(brokers).items() if n > 1)
    if duplicates:
        raise CliError(
            f"Broker list contains duplicate entries: {','.join(map(str, duplicates))}", exit_code=2
        )
    return brokers


def _parse_topics(text: str) -> list[str]:
    """Kafka's ``ZkUtils.parseTopicsData``: ``{"topics": [{"topic": "foo"}], "version": 1}``."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise CliError(f"--topics-to-move-json-file: not JSON: {e}", exit_code=2) from None
    entries = value.get("topics", []) if isinstance(value, dict) else None
    if not isinstance(entries, list) or not all(
        isinstance(e, dict) and isinstance(e.get("topic"), str) for e in entries
    ):
        raise CliError(
            '--topics-to-move-json-file: expected {"topics": [{"topic": "foo"}, ...], "version": 1}',
            exit_code=2,
        )
    topics = [e["topic"] for e in entries]
    duplicates = sorted(t for t, n in Counter(topics).items() if n > 1)
    if duplicates:
        raise CliError(
            f"List of topics to reassign contains duplicate entries: {','.join(duplicates)}", exit_code=2
        )
    return topics


def generate(zk, broker_list: list[int], topics: list[str], console) -> int:
    """Kafka's ``generateAssignment``: each topic's partitions assigned afresh over the listed brokers
    (those that exist), with the topic's replication factor. Nothing is written."""
    from kafka_lite.common.errors import KafkaException
    from kafka_lite.zk.admin_utils import assign_replicas_to_brokers
    from kafka_lite.zk.zk_utils import format_as_reassignment_json

    current = {}
    for topic in topics:
        for partition, replicas in zk.get_partition_assignment(topic).items():
            current[(topic, partition)] = replicas
    existing = set(zk.get_all_broker_ids())
    brokers = [b for b in broker_list if b in existing]
    proposed = {}
    for topic in sorted({t for t, _ in current}):
        partitions = {p: r for (t, p), r in current.items() if t == topic}
        try:
            assignment = assign_replicas_to_brokers(
                brokers, len(partitions), len(next(iter(partitions.values())))
            )
        except KafkaException as e:
            raise CliError(f"Partitions reassignment failed due to {e}") from None
        proposed.update({(topic, p): r for p, r in assignment.items()})
    say(console, f"Current partition replica assignment\n{format_as_reassignment_json(current)}\n")
    say(console, f"Proposed partition reassignment configuration\n{format_as_reassignment_json(proposed)}")
    return 0


# -- --execute -----------------------------------------------------------------------------------------------


def parse_and_validate(zk, text: str) -> dict:
    """Kafka's ``parseAndValidate``: the plan's partitions must exist, each only once, each with a
    non-empty list of distinct brokers that exist."""
    from kafka_lite.zk.zk_utils import parse_partition_reassignment_data_without_dedup

    try:
        pairs = parse_partition_reassignment_data_without_dedup(text)
    except ValueError as e:
        raise CliError(f"--reassignment-json-file: {e}", exit_code=2) from None
    if not pairs:
        raise CliError("Partition reassignment data file is empty", exit_code=2)
    if any(not replicas for _, replicas in pairs):
        raise CliError("Partition replica list cannot be empty", exit_code=2)
    duplicate_partitions = sorted(tp for tp, n in Counter(tp for tp, _ in pairs).items() if n > 1)
    if duplicate_partitions:
        raise CliError(
            "Partition reassignment contains duplicate topic partitions: "
            + ",".join(tp_str(tp) for tp in duplicate_partitions),
            exit_code=2,
        )
    duplicate_entries = [
        (tp, sorted(r for r, n in Counter(replicas).items() if n > 1))
        for tp, replicas in pairs
        if len(set(replicas)) != len(replicas)
    ]
    if duplicate_entries:
        raise CliError(
            "Partition replica lists may not contain duplicate entries: "
            + ". ".join(
                f"{tp_str(tp)} contains multiple entries for {','.join(map(str, d))}"
                for tp, d in duplicate_entries
            ),
            exit_code=2,
        )
    existing_partitions = {
        (topic, p) for topic in {tp[0] for tp, _ in pairs} for p in zk.get_partition_assignment(topic)
    }
    missing = [tp for tp, _ in pairs if tp not in existing_partitions]
    if missing:
        raise CliError(
            "The proposed assignment contains non-existent partitions: "
            + ",".join(tp_str(tp) for tp in missing)
        )
    brokers = set(zk.get_all_broker_ids())
    unknown = sorted({r for _, replicas in pairs for r in replicas if r not in brokers})
    if unknown:
        raise CliError(
            "The proposed assignment contains non-existent brokerIDs: " + ",".join(map(str, unknown))
        )
    return dict(pairs)


def execute(zk, text: str, console, throttle: int = -1) -> int:
    """Kafka's ``executeAssignment``: ``throttle`` -1 sets no throttle."""
    from kazoo.exceptions import NodeExistsError

    from kafka_lite.zk.zk_utils import REASSIGN_PARTITIONS_PATH, format_as_reassignment_json

    plan = parse_and_validate(zk, text)
    current = existing_assignment(zk, plan)
    if zk.client.exists(REASSIGN_PARTITIONS_PATH):
        if throttle < 0:
            raise CliError("There is an existing assignment running.")
        # Kafka: rerun with --throttle while a reassignment runs, the tool changes the rate only
        say(console, "There is an existing assignment running.")
        maybe_limit(zk, plan, current, throttle, console)
        return 0
    # Printed before the write, so that a rollback plan is at hand whatever happens next.
    say(
        console,
        f"Current partition replica assignment\n\n{format_as_reassignment_json(current)}\n\n"
        "Save this to use as the --reassignment-json-file option during rollback",
    )
    if throttle >= 0:
        say(
            console,
            "Warning: You must run Verify periodically, until the reassignment completes, to ensure the "
            "throttle is removed. You can also alter the throttle by rerunning the Execute command passing "
            "a new value.",
        )
        maybe_limit(zk, plan, current, throttle, console)
        assign_throttled_replicas(zk, current, plan)
    try:
        zk.create_partition_reassignment_data(plan)
    except NodeExistsError:
        in_progress = ", ".join(tp_str(tp) for tp in sorted(zk.get_partitions_being_reassigned()))
        raise CliError(
            f"Partition reassignment currently in progress for {in_progress}. Aborting operation"
        ) from None
    say(console, "Successfully started reassignment of partitions.")
    return 0


def existing_assignment(zk, plan: dict) -> dict:
    """The current replicas of every partition of the plan's topics."""
    current = {}
    for topic in sorted({tp[0] for tp in plan}):
        for partition, replicas in zk.get_partition_assignment(topic).items():
            current[(topic, partition)] = replicas
    return current


def maybe_limit(zk, plan: dict, current: dict, throttle: int, console) -> None:
    """Kafka's ``maybeLimit``: the rate on every broker of the old and the new replicas, both sides,
    kept beside whatever else the broker's dynamic configs hold."""
    from kafka_lite.zk.zk_utils import CONFIG_TYPE_BROKER

    brokers = dict.fromkeys([b for replicas in current.values() for b in replicas])
    brokers.update(dict.fromkeys(b for replicas in plan.values() for b in replicas))
    for broker_id in brokers:
        configs = zk.fetch_entity_config(CONFIG_TYPE_BROKER, str(broker_id))
        configs[LEADER_RATE] = str(throttle)
        configs[FOLLOWER_RATE] = str(throttle)
        zk.change_broker_config([broker_id], configs)
    say(console, f"The throttle limit was set to {throttle} B/s")


def assign_throttled_replicas(zk, current: dict, plan: dict) -> None:
    """Kafka's ``assignThrottledReplicas``, per topic: the leader side throttles every current replica
    of a partition that gains replicas (any of them may be the leader the new ones copy from), the
    follower side the replicas it gains."""
    for topic in sorted({tp[0] for tp in plan}):
        moving = {tp: replicas for tp, replicas in plan.items() if tp[0] == topic}
        leader = [
            (tp[1], b) for tp, new in moving.items() if set(new) - set(current[tp]) for b in current[tp]
        ]
        follower = [(tp[1], b) for tp, new in moving.items() for b in new if b not in current[tp]]
        configs = zk.get_topic_config(topic)
        configs[LEADER_REPLICAS] = ",".join(f"{p}:{b}" for p, b in leader)
        configs[FOLLOWER_REPLICAS] = ",".join(f"{p}:{b}" for p, b in follower)
        zk.change_topic_config(topic, configs)


def remove_throttle(zk, plan: dict, console) -> None:
    """Kafka's ``removeThrottle``, once every partition completed: the rates from every broker (which
    ones the reassignment touched is no longer known) and the lists from the plan's topics."""
    from kafka_lite.zk.zk_utils import CONFIG_TYPE_BROKER

    changed = False
    for broker_id in zk.get_all_broker_ids():
        configs = zk.fetch_entity_config(CONFIG_TYPE_BROKER, str(broker_id))
        if LEADER_RATE in configs or FOLLOWER_RATE in configs:
            configs.pop(LEADER_RATE, None)
            configs.pop(FOLLOWER_RATE, None)
            zk.change_broker_config([broker_id], configs)
            changed = True
    for topic in sorted({tp[0] for tp in plan}):
        configs = zk.get_topic_config(topic)
        if LEADER_REPLICAS in configs or FOLLOWER_REPLICAS in configs:
            configs.pop(LEADER_REPLICAS, None)
            configs.pop(FOLLOWER_REPLICAS, None)
            zk.change_topic_config(topic, configs)
            changed = True
    if changed:
        say(console, "Throttle was removed.")


# -- --verify ------------------------------------------------------------------------------------------------


def verify(zk, text: str, console) -> int:
    """Kafka's ``verifyAssignment``: a partition still in ``/admin/reassign_partitions`` is in
    progress; otherwise it completed if its replicas are the plan's, and failed if not (the
    controller refused it, or another reassignment moved it since)."""
    from kafka_lite.zk.zk_utils import parse_partition_reassignment_data

    try:
        plan = parse_partition_reassignment_data(text)
    except ValueError as e:
        raise CliError(f"--reassignment-json-file: {e}", exit_code=2) from None
    say(console, "Status of partition reassignment: ")
    try:
        in_progress = zk.get_partitions_being_reassigned()
    except ValueError:
        in_progress = {}
    failed = completed = 0
    for tp, new_replicas in plan.items():
        if tp in in_progress:
            say(console, f"Reassignment of partition {tp_str(tp)} is still in progress")
            continue
        assigned = zk.get_partition_assignment(tp[0]).get(tp[1], [])
        if assigned == new_replicas:
            completed += 1
            say(console, f"Reassignment of partition {tp_str(tp)} completed successfully")
        else:
            failed += 1
            say(
                console,
                f"ERROR: Assigned replicas ({','.join(map(str, assigned))}) don't match the list of replicas "
                f"for reassignment ({','.join(map(str, new_replicas))}) for partition {tp_str(tp)}",
            )
            say(console, f"Reassignment of partition {tp_str(tp)} failed")
    if completed == len(plan):
        remove_throttle(zk, plan, console)
    return 1 if failed else 0
