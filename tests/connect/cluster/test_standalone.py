"""Kafka Connect standalone on the test cluster: a file through a topic into another file, offsets
that survive a restart, and chapter 8's quick start (``kafka-lite connect standalone`` with Kafka's quick-start files) run as
its guide shows it."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

from kafka_lite.cli.main import main
from kafka_lite.connect.runtime.standalone.standalone_herder import StandaloneHerder
from kafka_lite.connect.runtime.worker import Worker
from kafka_lite.connect.runtime.worker_config import StandaloneConfig
from kafka_lite.connect.storage.file_offset_backing_store import FileOffsetBackingStore
from kafka_lite.connect.util.callback import FutureCallback
from tests.support.processes import terminate
from tests.support.topics import read_topic, topic_name
from tests.support.waiting import wait_until

pytestmark = pytest.mark.integration

KAFKA_LITE = str(Path(sys.executable).parent / "kafka-lite")
ROOT = Path(__file__).resolve().parents[3]
CONFIG_DIR = ROOT / "kafka_lite" / "connect" / "config"
GUIDE = ROOT / "chapters" / "ch08_mirrormaker_connect" / "connect.md"
JSON = "org.apache.kafka.connect.json.JsonConverter"

# A test worker commits every 100 ms, and its sink consumers notice a lost member in 3 s.
FAST = {
    "offset.flush.interval.ms": "100",
    "consumer.session.timeout.ms": "3000",
    "consumer.heartbeat.interval.ms": "300",
}


def worker_config(bootstrap: str, offsets: Path) -> StandaloneConfig:
    return StandaloneConfig({
        "bootstrap.servers": bootstrap,
        "key.converter": JSON, "value.converter": JSON,
        "internal.key.converter": JSON, "internal.value.converter": JSON,
        "internal.key.converter.schemas.enable": "false", "internal.value.converter.schemas.enable": "false",
        "offset.storage.file.filename": str(offsets),
        **FAST,
    })  # fmt: skip


def file_connectors(name: str, source: Path, sink: Path, topic: str) -> list[dict[str, str]]:
    return [
        {"name": f"{name}-source", "connector.class": "FileStreamSource", "tasks.max": "1",
         "file": str(source), "topic": topic},
        {"name": f"{name}-sink", "connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector",
         "tasks.max": "1", "file": str(sink), "topics": topic},
    ]  # fmt: skip


@contextmanager
def standalone(bootstrap: str, offsets: Path, connectors: list[dict[str, str]]):
    """A started standalone herder running ``connectors``, stopped on the way out."""
    herder = StandaloneHerder(Worker("test", worker_config(bootstrap, offsets), FileOffsetBackingStore()))
    herder.start()
    try:
        for config in connectors:
            created = FutureCallback()
            herder.put_connector_config(config["name"], config, False, created)
            created.result(timeout=30)
        yield herder
    finally:
        herder.stop()


def lines_of(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def test_a_file_goes_through_a_topic_into_an_equal_file(cluster, tmp_path):
    topic = topic_name("connect-pipeline")
    cluster.create_topic(topic, partitions=1)
    source, sink = tmp_path / "in.txt", tmp_path / "out.txt"
    lines = [f"line {i}: {'é' * (i % 3)}" for i in range(50)]
    source.write_text("".join(line + "\n" for line in lines))
    with standalone(
        cluster.bootstrap_servers, tmp_path / "offsets", file_connectors("p", source, sink, topic)
    ) as h:
        wait_until(lambda: len(lines_of(sink)) >= len(lines), what="the sink file to hold every line")
        assert [task.state for task in h.connector_status("p-source").tasks] == ["RUNNING"]
    assert lines_of(sink) == lines
    # In the topic, each line as Kafka's JsonConverter writes it, with its schema, and a null key.
    record = read_topic(cluster.bootstrap_servers, topic)[0]
    assert record.value == b'{"schema":{"type":"string","optional":false},"payload":"line 0: "}'
    assert record.key == b'{"schema":null,"payload":null}'


def test_source_offsets_survive_a_restart_so_every_line_arrives_exactly_once(cluster, tmp_path):
    topic = topic_name("connect-restart")
    cluster.create_topic(topic, partitions=1)
    source, sink, offsets = tmp_path / "in.txt", tmp_path / "out.txt", tmp_path / "connect.offsets"
    connectors = file_connectors("r", source, sink, topic)
    first = [f"first {i}" for i in range(10)]
    source.write_text("".join(line + "\n" for line in first))
    with standalone(cluster.bootstrap_servers, offsets, connectors):
        wait_until(lambda: len(lines_of(sink)) >= len(first), what="the first lines in the sink file")
    # The stopped source task committed the position after its last line.
    assert f'"{{\\"position\\":{source.stat().st_size}}}"' in offsets.read_text()

    second = [f"second {i}" for i in range(10)]
    with source.open("a") as f:
        f.write("".join(line + "\n" for line in second))
    with standalone(cluster.bootstrap_servers, offsets, connectors):
        wait_until(lambda: len(lines_of(sink)) >= len(first + second), what="the new lines in the sink file")
    assert lines_of(sink) == first + second


def quick_start_files(directory: Path, bootstrap: str) -> list[Path]:
    """Kafka's three quick-start files, the bootstrap address changed; and, so that test runs share
    neither /tmp/connect.offsets nor port 8083, the offsets file and the REST port (0: any free one)."""
    worker = (CONFIG_DIR / "connect-standalone.properties").read_text()
    worker = worker.replace("bootstrap.servers=localhost:9092", f"bootstrap.servers={bootstrap}")
    worker = worker.replace("/tmp/connect.offsets", str(directory / "connect.offsets"))
    worker += "\nrest.host.name=127.0.0.1\nrest.port=0\n"
    (directory / "connect-standalone.properties").write_text(worker)
    paths = [directory / "connect-standalone.properties"]
    for name in ("connect-file-source.properties", "connect-file-sink.properties"):
        (directory / name).write_text((CONFIG_DIR / name).read_text())
        paths.append(directory / name)
    return paths


def quick_start_commands() -> list[str]:
    """The commands of 8.3.1's quick start, as the guide shows them (its first ``sh`` block), each
    on one line."""
    section = GUIDE.read_text(encoding="utf-8").split("## 8.3.1", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.DOTALL)
    assert block, f"{GUIDE.name}: no sh block in 8.3.1"
    return [line.strip() for line in block[1].replace("\\\n", " ").splitlines() if line.strip()]


def test_the_guides_quick_start_copies_test_txt_into_test_sink_txt_until_sigterm(cluster, tmp_path):
    """8.3.1's commands as the guide shows them, run in a fresh directory: the topic is not created
    first, and the sink's consumer is in its group before the source's first record creates the
    topic, so the sink copies anything only once its consumer looks again for the missing topic."""
    up, write_test_txt, run_worker = quick_start_commands()
    assert up == "kafka-lite cluster up --detach", "the quick start's cluster is the test session's"
    # The properties files where the command names them: Kafka's, with the session cluster's address,
    # an offsets file of this test's and any free REST port (see quick_start_files).
    config_dir = tmp_path / "kafka_lite" / "connect" / "config"
    config_dir.mkdir(parents=True)
    quick_start_files(config_dir, cluster.bootstrap_servers)
    # A cluster whose group coordinator answers at once: the sink's consumer joins its group, and its
    # leader assigns, before the source's producer has created connect-test.
    admin = cluster.admin()
    try:
        admin.find_coordinator("connect-local-file-sink")
        assert "connect-test" not in admin.list_topics(), "the quick start's topic must not exist yet"
    finally:
        admin.close()

    subprocess.run(["sh", "-c", write_test_txt], cwd=tmp_path, check=True)
    source, sink = tmp_path / "test.txt", tmp_path / "test.sink.txt"
    assert lines_of(source) == ["foo", "bar"]
    command = shlex.split(run_worker)
    assert command[0] == "kafka-lite"
    out = run_the_worker_and_append(command, source, sink, "Kafka Connect")
    assert "connector local-file-source (FileStreamSource): 1 task(s) running" in out
    assert re.search(r"REST API at http://127\.0\.0\.1:\d+/ \(try http://127\.0\.0\.1:\d+/docs\)", out), out
    # The clean stop committed the source's offset: the position after the last line.
    assert re.search(
        rf"\\\"position\\\":{source.stat().st_size}\b", (config_dir / "connect.offsets").read_text()
    )
    # The same command again, as a reader who runs the quick start a second time: the source carries
    # on from its offsets file and the sink from its group's offsets, so nothing is copied twice.
    run_the_worker_and_append(command, source, sink, "once more")
    assert lines_of(sink) == ["foo", "bar", "Kafka Connect", "once more"]


def run_the_worker_and_append(command: list[str], source: Path, sink: Path, line: str) -> str:
    """Run the quick start's worker until test.sink.txt equals test.txt, append ``line`` to test.txt
    ("lines appended to test.txt follow"), wait for it in test.sink.txt, then SIGTERM the worker;
    what the worker printed."""
    process = subprocess.Popen([KAFKA_LITE, *command[1:]], cwd=source.parent,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)  # fmt: skip
    try:
        wait_until(
            lambda: lines_of(sink) == lines_of(source), timeout_s=15, what="test.sink.txt to equal test.txt"
        )
        with source.open("a") as f:
            f.write(line + "\n")
        wait_until(lambda: lines_of(sink) == lines_of(source), timeout_s=15,
                   what=f"the appended line {line!r} in test.sink.txt")  # fmt: skip
    finally:
        out = terminate(process)
    assert process.returncode == 0, out
    assert out.rstrip().endswith("Kafka Connect stopped"), out
    return out


@pytest.mark.parametrize(
    ("connector", "message"),
    [("name=x\nconnector.class=NoSuchConnector\n", "known connectors: FileStreamSinkConnector, FileStreamSourceConnector"),
     ("name=x\nconnector.class=FileStreamSink\nfile=out.txt\n", "Missing required configuration 'topics'")],
)  # fmt: skip
def test_the_cli_names_a_bad_connector_config_in_one_line(tmp_path, capsys, connector, message):
    files = quick_start_files(tmp_path, "127.0.0.1:1")
    (tmp_path / "bad.properties").write_text(connector)
    assert (
        main(["connect", "standalone", str(files[0]), str(files[1]), str(tmp_path / "bad.properties")]) == 2
    )
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1, err
    assert str(tmp_path / "bad.properties") in err


def test_the_cli_names_a_missing_file(tmp_path, capsys):
    assert main(["connect", "standalone", str(tmp_path / "nope.properties"), "x"]) == 2
    assert "nope.properties does not exist" in capsys.readouterr().err
