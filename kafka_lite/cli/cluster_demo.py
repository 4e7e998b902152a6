"""The cluster half of ``kafka-lite demo``: ZooKeeper + 3 brokers, a topic, records in and out, the files.

No Kafka twin: Kafka's quick start (book 1.4): kafka_lite's console producer writes the records;
kcat, a real Kafka client, reads them back, and so does kafka_lite's console consumer, in a group
whose committed offsets ``kafka-lite consumer-groups --describe`` then shows.
"""

from __future__ import annotations

import io
import shlex
import shutil
import subprocess
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from kafka_lite.cli import CliError
from kafka_lite.cli.cluster import bootstrap_servers, start_cluster, status_table, stop_cluster, wait_healthy
from kafka_lite.utils.ports import free_ports

TOPIC = "page-views"
GROUP = "page-readers"
RECORDS = [(f"user-{i % 4}", f'{{"page": "/item/{i}", "n": {i}}}') for i in range(12)]


def _kcat(*args: str, input: bytes | None = None) -> str:
    kcat = shutil.which("kcat") or shutil.which("kafkacat")
    if kcat is None:
        raise CliError("kcat is not installed (scripts/bootstrap installs it: apt-get install kcat)")
    result = subprocess.run([kcat, *args], input=input, capture_output=True, timeout=60)
    if result.returncode != 0:
        raise CliError(f"kcat {' '.join(args)} failed: {result.stderr.decode(errors='replace').strip()}")
    return result.stdout.decode()


def _console_producer(argv: list[str], lines: bytes, console: Console) -> None:
    """``kafka-lite console-producer ...`` run in this process, with ``lines`` as its stdin."""
    from kafka_lite.cli import console_producer
    from kafka_lite.cli.main import build_parser

    console_producer.run(build_parser().parse_args(argv), console, stdin=io.BytesIO(lines))


def _console_consumer(argv: list[str], console: Console) -> tuple[list[str], str]:
    """``kafka-lite console-consumer ...`` run in this process; its stdout's lines and its stderr."""
    from kafka_lite.cli import console_consumer
    from kafka_lite.cli.main import build_parser

    stdout, stderr = io.BytesIO(), io.StringIO()
    code = console_consumer.run(build_parser().parse_args(argv), console, stdout=stdout, stderr=stderr)
    if code != 0:
        raise CliError(f"kafka-lite {argv[0]} exited with {code}: {stderr.getvalue().strip()}")
    return stdout.getvalue().decode().splitlines(), stderr.getvalue()


def _consumer_groups(argv: list[str], console: Console) -> list[str]:
    """``kafka-lite consumer-groups ...`` run in this process; the lines it printed."""
    from kafka_lite.cli import consumer_groups
    from kafka_lite.cli.main import build_parser

    with console.capture() as capture:
        consumer_groups.run(build_parser().parse_args(argv), console)
    return capture.get().splitlines()


def _reads(lines: list[str], partitions: list) -> list[tuple]:
    """Each partition with the number of its records among ``lines`` (``Partition:P|key|value``): the
    offset its group's commit should be at, the records having been the first in each partition."""
    return [(p, sum(1 for line in lines if line.startswith(f"Partition:{p.partition}|"))) for p in partitions]


def cluster_demo(directory: Path, console: Console) -> int:
    console.rule("[bold]1. A local cluster: ZooKeeper and three brokers, each its own process")
    started = time.monotonic()
    try:
        zookeeper_port = free_ports(4)  # ZooKeeper's, then the three brokers'
    except OSError as e:
        raise CliError(f"no ports for the demo's cluster: {e}") from None
    state = start_cluster(directory / "cluster", 3, zookeeper_port, zookeeper_port + 1, [])
    try:
        health = wait_healthy(state)
        console.print(status_table(state, health))
        bootstrap = bootstrap_servers(state)
        console.print(
            f"healthy in {time.monotonic() - started:.1f} s (kafka-lite cluster up does the same)",
            highlight=False,
        )

        console.rule(
            f"[bold]2. kafka-lite topics --create --topic {TOPIC} --partitions 3 --replication-factor 1"
        )
        from kafka_lite.clients.admin import KafkaAdminClient, NewTopic

        admin = KafkaAdminClient(bootstrap)
        try:
            admin.create_topics([NewTopic(TOPIC, 3, 1)])
            deadline = time.monotonic() + 15
            while True:  # CreateTopics answers once leaders exist; metadata may lag a moment behind
                partitions = admin.describe_cluster().partitions_for_topic(TOPIC)
                if (
                    len(partitions) == 3 and all(p.leader for p in partitions)
                ) or time.monotonic() > deadline:
                    break
                time.sleep(0.1)  # polling the brokers' metadata; bounded by the deadline
        finally:
            admin.close()
        table = Table("partition", "leader (broker)", "replicas")
        for p in partitions:
            table.add_row(str(p.partition), str(p.leader.id if p.leader else "none"), str(list(p.replicas)))
        console.print(table)
        console.print(
            "The controller chose the leaders (AR[0] of Kafka's round-robin assignment) and told every broker."
        )

        argv = ["console-producer", "--bootstrap-server", bootstrap, "--topic", TOPIC,
                "--property", "parse.key=true", "--property", "key.separator=|",
                "--request-required-acks", "all", "--compression-codec", "gzip"]  # fmt: skip
        console.rule("[bold]3. kafka-lite console-producer: 12 keyed records (acks=all, gzip)")
        lines = "".join(f"{k}|{v}\n" for k, v in RECORDS)
        console.print(f"$ kafka-lite {shlex.join(argv)}", highlight=False, markup=False, soft_wrap=True)
        console.print(f"  stdin: {len(RECORDS)} lines of key|value, the first: {lines.splitlines()[0]}",
                      highlight=False, markup=False)  # fmt: skip
        _console_producer(argv, lines.encode(), console)
        console.print(
            f"sent {len(RECORDS)} records through kafka_lite's KafkaProducer; "
            "records with the same key go to the same partition"
        )

        console.rule("[bold]4. kcat -C: consume them back from every partition")
        out = _kcat("-b", bootstrap, "-C", "-t", TOPIC, "-o", "beginning", "-e", "-q", "-f", "%p\t%o\t%k\t%s\n",
                    "-c", str(len(RECORDS)))  # fmt: skip
        rows = sorted(tuple(line.split("\t")) for line in out.splitlines())
        table = Table("partition", "offset", "key", "value")
        for row in rows:
            table.add_row(*row)
        console.print(table)
        got = sorted((k, v) for _, _, k, v in rows)
        if got != sorted(RECORDS):
            raise CliError(f"read back {len(got)} records that differ from the {len(RECORDS)} written")

        argv = ["console-consumer", "--bootstrap-server", bootstrap, "--topic", TOPIC, "--group", GROUP,
                "--from-beginning", "--max-messages", str(len(RECORDS)),
                "--property", "print.partition=true", "--property", "print.key=true",
                "--property", "key.separator=|"]  # fmt: skip
        console.rule(f"[bold]5. kafka-lite console-consumer: the same records, read in the group {GROUP}")
        console.print(f"$ kafka-lite {shlex.join(argv)}", highlight=False, markup=False, soft_wrap=True)
        lines, report = _console_consumer(argv, console)
        for line in lines:
            console.print(f"  {line}", highlight=False, markup=False, soft_wrap=True)
        console.print(f"  (stderr) {report.strip()}", highlight=False, markup=False)
        got = sorted(tuple(line.split("|", 1)[1].split("|", 1)) for line in lines)
        if got != sorted(RECORDS):
            raise CliError(
                f"console-consumer read {len(got)} records that differ from the {len(RECORDS)} written"
            )

        argv = ["consumer-groups", "--bootstrap-server", bootstrap, "--describe", "--group", GROUP]
        console.rule(
            f"[bold]6. kafka-lite consumer-groups --describe --group {GROUP}: what the group committed"
        )
        console.print(f"$ kafka-lite {shlex.join(argv)}", highlight=False, markup=False, soft_wrap=True)
        described = _consumer_groups(argv, console)
        for line in described:
            console.print(line, highlight=False, markup=False, soft_wrap=True)
        # GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG ...: a row per partition of the topic
        rows = {int(r[2]): (r[3], r[5]) for r in (line.split() for line in described[1:]) if r[1] == TOPIC}
        expected = {p.partition: (str(read), "0") for p, read in _reads(lines, partitions)}
        if rows != expected:
            raise CliError(
                f"{GROUP} committed (offset, lag) {rows}, expected {expected} from the records read"
            )
        console.print(
            f"The console consumer joined {GROUP}, was assigned all 3 partitions, and on closing committed "
            "its positions to the group's coordinator (which keeps them in __consumer_offsets) and left "
            "the group: it has no active members, a lag of 0, and a second run reads only newer records."
        )

        console.rule("[bold]7. On disk: each partition is a directory of segment files on its leader")
        for p in partitions:
            d = Path(state["dir"]) / f"broker-{p.leader.id}" / "data" / f"{TOPIC}-{p.partition}"
            files = sorted(f.name for f in d.iterdir()) if d.exists() else []
            console.print(
                f"broker-{p.leader.id}/data/{TOPIC}-{p.partition}/: {', '.join(files)}", highlight=False
            )
        console.print(
            "kafka-lite dump-log FILE prints the batches; kafka-lite demo --layers shows the layers."
        )
    finally:
        console.rule("[bold]8. kafka-lite cluster down")
        stop_cluster(state)
    console.print("[bold green]cluster OK[/]: brokers stopped cleanly, then ZooKeeper; no process left.")
    console.print(
        "Next: [bold]source .venv/bin/activate[/] puts [bold]kafka-lite[/] on your PATH "
        "(it is .venv/bin/kafka-lite); then [bold]kafka-lite cluster up[/], [bold]kafka-lite lab list[/]."
    )
    return 0
