"""The reference pages are generated from the project's data: the layer table from ``layers.toml``,
the "Kafka class -> kafka_lite file" page from every module's ``Mirrors:`` header (build-free: the
hook's functions are called directly)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from mkdocs_hooks.generated_pages import (
    api_pages,
    kafka_classes,
    layer_table,
    mirrored_modules,
    mirrors_text,
    parse_mirrors,
    shown_path,
)
from mkdocs_hooks.generated_tables import on_page_markdown

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[1]


def _section(page: str, title: str) -> str:
    start = page.index(f"### {title}")
    end = page.find("\n### ", start + 1)
    return page[start : end if end > 0 else None]


def test_the_layer_page_renders_the_data_file_row_by_row():
    data = tomllib.loads((ROOT / "kafka_lite" / "layers.toml").read_text(encoding="utf-8"))
    rows = [line for line in layer_table().splitlines() if line.startswith("| `")]
    assert len(rows) > len(data["layer"]) + len(data["exception"]), "the layers' rows come first, then others"
    for layer, row in zip(data["layer"], rows[: len(data["layer"])], strict=True):
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[0] == ", ".join(f"`{p}/`" for p in layer["packages"])
        expected = (
            "anything" if "*" in layer["may_import"] else ", ".join(f"`{p}/`" for p in layer["may_import"])
        )
        assert cells[1] == (expected or "nothing of ours")
    table = layer_table()
    for e in data["exception"]:
        assert f"| `{e['importer']}` | `{e['imports']}` | {e['reason']} |" in table
    assert "graphviz" in table


def test_the_layer_page_follows_the_data_file(tmp_path):
    data = (ROOT / "kafka_lite" / "layers.toml").read_text(encoding="utf-8")
    changed = tmp_path / "layers.toml"
    changed.write_text(data.replace('packages = ["controller"]', 'packages = ["controller", "reassigner"]'))
    assert "| `controller/`, `reassigner/` |" in layer_table(changed)


def test_the_kafka_class_page_lists_every_mirrors_entry_of_every_module():
    page = kafka_classes()
    every = _section(page, "Every mirrored class, by name")
    packages = _section(page, "Whole packages")
    modules = mirrored_modules()
    headers = [
        p for p in (ROOT / "kafka_lite").rglob("*.py") if "Mirrors:" in p.read_text(encoding="utf-8")[:3000]
    ]
    assert {m.path for m in modules} == {p.relative_to(ROOT).as_posix() for p in headers}
    for module in modules:
        assert module.twins or module.packages, (
            f"{module.path}: nothing read from 'Mirrors: {module.mirrors}'"
        )
        if module.path.endswith("__init__.py"):
            (row,) = [r for r in packages.splitlines() if f"`{shown_path(module)}`" in r]
            for name in [*module.packages, *(t.qualified for t in module.twins)]:
                assert f"`{name}`" in row
            continue
        for twin in module.twins:
            rows = [
                r
                for r in every.splitlines()
                if r.startswith(f"| `{twin.name}`") and f"`{shown_path(module)}`" in r
            ]
            assert rows, f"{twin.qualified} ({module.path}) is not on the page"


def test_the_classes_are_sorted_by_name():
    every = _section(kafka_classes(), "Every mirrored class, by name")
    names = re.findall(r"^\| `([^`]+)`", every, re.MULTILINE)
    assert len(names) > 50
    assert names == sorted(names, key=str.lower)


@pytest.mark.parametrize(
    ("kafka_class", "path", "why"),
    [
        ("Partition", "`server/partition.py`", "Kafka's `kafka.cluster`, here in `server/`"),
        ("OffsetCheckpoint", "`log/checkpoint.py`", "Kafka's `kafka.server`, here in `log/`"),
        ("LogValidator", "`log/log.py`", "in `log.py` with `Log`"),
    ],
)
def test_the_surprises_are_shown(kafka_class, path, why):
    surprises = _section(kafka_classes(), "Where you might not look")
    (row,) = [r for r in surprises.splitlines() if r.startswith(f"| `{kafka_class}`") and path in r]
    assert why in row


def test_a_module_on_an_api_page_links_to_it_and_the_others_name_their_path():
    page = kafka_classes()
    pages = api_pages()
    assert pages["kafka_lite.log.log"] == "api/log.md"
    assert "[`log/log.py`](../api/log.md#kafka_lite.log.log)" in page
    for module, api in pages.items():
        assert f"::: {module}" in (ROOT / "docs" / api).read_text(encoding="utf-8")
    assert "| `cli/broker.py` |" in page  # no API page: the path, unlinked


def test_a_header_is_read_class_by_class_with_its_file_and_version():
    twins, packages = parse_mirrors(
        "kafka.network.SocketServer, Acceptor, Processor and ConnectionQuotas "
        "(core/src/main/scala/kafka/network/SocketServer.scala, Kafka 0.10.1)"
    )
    assert [(t.qualified, t.kafka_file, t.version) for t in twins] == [
        (f"kafka.network.{n}", "core/src/main/scala/kafka/network/SocketServer.scala", "0.10.1")
        for n in ("SocketServer", "Acceptor", "Processor", "ConnectionQuotas")
    ]
    assert packages == []
    twins, _ = parse_mirrors(
        "kafka.log.LogCleaner (Cleaner, CleanerThread), LogCleanerManager and OffsetMap "
        "(core/src/main/scala/kafka/log/LogCleaner*.scala, OffsetMap.scala, Kafka 0.10.1)"
    )
    files = {t.name: t.kafka_file for t in twins}
    assert files["Cleaner"] == files["CleanerThread"] == "core/src/main/scala/kafka/log/LogCleaner.scala"
    assert [t.name for t in twins] == [
        "LogCleaner",
        "Cleaner",
        "CleanerThread",
        "LogCleanerManager",
        "OffsetMap",
    ]
    twins, _ = parse_mirrors(
        "kafka.controller.KafkaController (core/src/main/scala/kafka/controller/ KafkaController.scala, "
        "Kafka 0.10.1), and Kafka 0.11's ControllerEventManager"
    )
    assert [(t.qualified, t.kafka_file, t.version) for t in twins] == [
        (
            "kafka.controller.KafkaController",
            "core/src/main/scala/kafka/controller/KafkaController.scala",
            "0.10.1",
        ),
        ("ControllerEventManager", "", "0.11"),
    ]


def test_mirrors_text_joins_the_header_paragraphs():
    source = '"""Title.\n\nMirrors: kafka.log.Log (core/src/main/scala/kafka/log/Log.scala,\n         Kafka 0.10.1)\nBook:    chapter 6\n"""\n'
    assert mirrors_text(source) == "kafka.log.Log (core/src/main/scala/kafka/log/Log.scala, Kafka 0.10.1)"


def test_the_hook_fills_the_markers_of_the_reference_pages():
    for name, marker in (("layers.md", "layer-table"), ("kafka_classes.md", "kafka-classes")):
        markdown = (ROOT / "docs" / "reference" / name).read_text(encoding="utf-8")
        assert f"<!-- generated: {marker} -->" in markdown
        filled = on_page_markdown(markdown, None, None, None)
        assert "<!-- generated:" not in filled and "|---|" in filled


def test_the_command_page_shows_every_command_and_argument_with_its_help():
    import argparse

    from kafka_lite.cli.main import build_parser
    from mkdocs_hooks.generated_pages import cli_reference

    page = cli_reference()

    def leaves(parser, path):
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            yield path, parser
        for action in subs:
            for name, child in action.choices.items():
                yield from leaves(child, f"{path} {name}")

    commands = list(leaves(build_parser(), "kafka-lite"))
    assert len(commands) >= 15
    for path, parser in commands:
        assert f"### `{path}`" in page, f"{path} is missing from the command page"
        section = page[page.index(f"### `{path}`") :].split("\n### ", 1)[0]
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            name = ", ".join(action.option_strings) or action.metavar or action.dest
            assert action.help, f"{path}: {name} has no help text, so the page would show an empty cell"
            assert f"| `{name}` | " in section, f"{path}: {name} is missing from its section"


def test_the_command_page_follows_the_parser():
    import argparse

    from mkdocs_hooks.generated_pages import cli_reference

    def parser():
        top = argparse.ArgumentParser(prog="kafka-lite")
        sub = top.add_subparsers()
        tool = sub.add_parser("console-consumer", help="read a topic (kafka-console-consumer.sh)")
        tool.add_argument("--from-beginning", action="store_true", help="start at the earliest offset")
        return top

    page = cli_reference(parser)
    assert "### `kafka-lite console-consumer`" in page
    assert "Read a topic (kafka-console-consumer.sh)." in page
    assert "| `--from-beginning` | start at the earliest offset |" in page
