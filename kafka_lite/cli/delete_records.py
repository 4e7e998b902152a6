"""``kafka-lite delete-records``: delete a partition's records below an offset, from a JSON file.

No Kafka twin: modelled on bin/kafka-delete-records.sh (kafka.admin.DeleteRecordsCommand, Kafka
0.11), flag for flag, its ``--offset-json-file`` included::

    {"partitions": [{"topic": "orders", "partition": 0, "offset": 42}], "version": 1}

Book:    chapter 6, 6.1.5 (the log start offset); Kafka 0.11's DeleteRecords (KIP-107)

An offset of -1 deletes everything below the high watermark. The answer comes once every replica
has moved its log start offset: each partition's low watermark, or its error.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from kafka_lite.cli import CliError, admin_client
from kafka_lite.cli.security import add_command_config

REQUEST_TIMEOUT_MS = 30_000


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "delete-records", help="delete records below an offset, per partition (kafka-delete-records.sh)"
    )
    parser.add_argument(
        "--bootstrap-server", required=True, metavar="HOST:PORT[,...]", help="the brokers to connect to"
    )
    add_command_config(parser)
    parser.add_argument(
        "--offset-json-file",
        required=True,
        metavar="FILE",
        help='{"partitions": [{"topic": T, "partition": P, "offset": O}], "version": 1}',
    )
    parser.set_defaults(handler=run)


def parse_offset_json(text: str, source: str) -> dict[tuple[str, int], int]:
    """The file's partitions and offsets (Kafka's ``parseOffsetJsonStringWithoutDedup``, which then
    refuses duplicates); any mistake is a usage error naming what is wrong."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise CliError(f"--offset-json-file {source}: not JSON: {e}", exit_code=2) from None
    if not isinstance(value, dict) or not isinstance(value.get("partitions"), list):
        raise CliError(
            f'--offset-json-file {source}: expected an object with a "partitions" list', exit_code=2
        )
    offsets: dict[tuple[str, int], int] = {}
    for entry in value["partitions"]:
        ok = (
            isinstance(entry, dict)
            and isinstance(entry.get("topic"), str)
            and all(
                isinstance(entry.get(k), int) and not isinstance(entry.get(k), bool)
                for k in ("partition", "offset")
            )
        )
        if not ok:
            raise CliError(
                f'--offset-json-file {source}: expected {{"topic": <string>, "partition": <int>, '
                f'"offset": <int>}}, got {json.dumps(entry)}',
                exit_code=2,
            )
        tp = (entry["topic"], entry["partition"])
        if tp in offsets:
            raise CliError(
                f"--offset-json-file {source}: Offset json file contains duplicate topic partitions: "
                f"{tp[0]}-{tp[1]}",
                exit_code=2,
            )
        offsets[tp] = entry["offset"]
    if not offsets:
        raise CliError(f"--offset-json-file {source}: no partitions to delete records from", exit_code=2)
    return offsets


def run(args: argparse.Namespace, console) -> int:
    from kafka_lite.common.errors import ApiException
    from kafka_lite.common.topic_partition import TopicPartition

    path = Path(args.offset_json_file)
    try:
        text = path.read_text()
    except OSError as e:
        raise CliError(f"--offset-json-file {path}: {e.strerror}", exit_code=2) from None
    offsets = parse_offset_json(text, str(path))
    console.print("Executing records delete operation", highlight=False)
    failed = False
    results = []
    with admin_client(
        args.bootstrap_server, command_config=args.command_config, request_timeout_ms=REQUEST_TIMEOUT_MS
    ) as admin:
        # one partition at a time, so that one partition's error does not hide the others' results
        for (topic, partition), offset in offsets.items():
            tp = TopicPartition(topic, partition)
            try:
                low_watermark = admin.delete_records({tp: offset}, timeout_ms=REQUEST_TIMEOUT_MS)[tp]
                results.append(f"partition: {topic}-{partition}\tlow_watermark: {low_watermark}")
            except ApiException as e:
                failed = True
                results.append(f"partition: {topic}-{partition}\terror: {e}")
    console.print("Records delete operation completed:", highlight=False)
    for line in results:
        print(line)  # plain, tab and all, as Kafka's tool prints it (rich would expand the tab)
    return 1 if failed else 0
