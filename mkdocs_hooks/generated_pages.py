"""The reference pages' tables, built from the project's own data (``generated_tables.py`` fills them in).

No Kafka twin: docs tooling. Three references are generated at build time, so none can drift from
the code:

- ``layer-table``: the layers of ``kafka_lite/layers.toml`` (the file the layer test reads), with
  its stated exceptions and their reasons;
- ``kafka-classes``: every Kafka class a kafka_lite module mirrors, read from the modules' header
  docstrings (their ``Mirrors:`` lines), sorted by Kafka class, each with the kafka_lite file that
  holds it, linked to its API page where one exists;
- ``cli-reference``: every ``kafka-lite`` command with its usage and arguments, read from the
  argument parser the command builds (``kafka_lite.cli.main.build_parser``).
"""

from __future__ import annotations

import ast
import functools
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_DIR = ROOT / "kafka_lite"
DOCS_DIR = ROOT / "docs"

# -- the layers ------------------------------------------------------------------------------------------


def _packages(names: list[str]) -> str:
    return ", ".join(f"`{n}/`" for n in names)


def layer_table(layers_file: Path = PACKAGE_DIR / "layers.toml") -> str:
    """The layer table, its front door and its exceptions, as Markdown."""
    data = tomllib.loads(layers_file.read_text(encoding="utf-8"))
    rows = ["| layer | may import | note |", "|---|---|---|"]
    for layer in data["layer"]:
        allowed = layer["may_import"]
        may = "anything" if "*" in allowed else _packages(allowed) or "nothing of ours"
        rows.append(f"| {_packages(layer['packages'])} | {may} | {layer.get('note', '')} |")
    door = data["front_door"]
    rows.append(
        f"| `{door['module']}` itself (`kafka_lite/__init__.py`) | {_packages(door['may_import'])} | {door.get('note', '')} |"
    )
    out = ["\n".join(rows)]
    top_only = data.get("top_only_dependencies", [])
    if top_only:
        top = [p for layer in data["layer"] if "*" in layer["may_import"] for p in layer["packages"]]
        out.append(
            f"Only {_packages(top)} import {', '.join(f'`{d}`' for d in top_only)}: "
            "the broker and the clients run without it installed."
        )
    confined = data.get("confined_dependencies", {})
    if confined:
        owners: dict[str, list[str]] = {}
        for dependency, owner in confined.items():
            owners.setdefault(owner, []).append(f"`{dependency}`")
        out += [
            f"Of the runtime, only `{owner}` imports {', '.join(deps)}: the rest runs without it installed."
            for owner, deps in owners.items()
        ]
    exceptions = data.get("exception", [])
    if exceptions:
        rows = ["| importer | may also import | why |", "|---|---|---|"]
        rows += [f"| `{e['importer']}` | `{e['imports']}` | {e['reason']} |" for e in exceptions]
        out.append("Stated exceptions, each as narrow as its reason:\n\n" + "\n".join(rows))
    return "\n\n".join(out)


# -- Kafka class -> kafka_lite file ----------------------------------------------------------------------

QUALIFIED = re.compile(r"\b((?:org\.apache\.kafka|kafka)(?:\.[a-z_][a-z0-9_]*)*)\.([A-Z]\w*)((?:\.\w+)?)")
PACKAGE_NAME = re.compile(r"\b((?:org\.apache\.kafka|kafka)(?:\.[a-z_][a-z0-9_]*)+)\b(?!\.[A-Za-z])")
SCRIPT = re.compile(r"\bbin/[\w-]+\.sh\b")
KAFKA_FILE = re.compile(r"\b(?:core|clients)/[\w./{},*-]*\w(?:\.scala|\.java|/)")
VERSION = re.compile(r"\bKafka (\d+\.\d+(?:\.\d+)?)")
# "Kafka 0.11's ControllerEventManager", "from Kafka 0.11, kafka....": a version naming what follows it.
VERSION_BEFORE = re.compile(r"(?:\bfrom )?\bKafka (\d+\.\d+(?:\.\d+)?)(?:'s|,)\s*(?:and\s+)?$")
BARE_AFTER_VERSION = re.compile(r"\bKafka (\d+\.\d+(?:\.\d+)?)'s ([A-Z]\w*)\b")
CLASS_LIST = re.compile(r"^[A-Z]\w*(?:(?:, | and |, and )[A-Z]\w*)*$")
NESTED = re.compile(r"\s*\(([A-Z]\w*(?:(?:, | and |, and )[A-Z]\w*)*)\)")
LEADING_CLASSES = re.compile(r"^\s*\(([A-Z]\w*(?:, [A-Z]\w*)*)[,;)]")
CONTINUE = re.compile(r"\s*(?:,\s*and\s+|,\s*|\s+and\s+|\s*/\s*)([A-Z]\w*)\b(?!'s| \d)")


@dataclass(frozen=True)
class Twin:
    """One Kafka class (or script) a kafka_lite module mirrors."""

    package: str  # "kafka.log", "org.apache.kafka.common.record"; "" when the header names none
    name: str  # "Log", "bin/kafka-topics.sh"
    kafka_file: str  # the header's path, else the file Kafka's layout puts the class in
    version: str  # "0.10.1"

    @property
    def qualified(self) -> str:
        return f"{self.package}.{self.name}" if self.package else self.name


@dataclass(frozen=True)
class MirroredModule:
    path: str  # "kafka_lite/log/log.py"
    module: str  # "kafka_lite.log.log"
    mirrors: str  # the header's Mirrors: text, on one line
    twins: tuple[Twin, ...]
    packages: tuple[str, ...]  # Kafka packages named without a class (a package's __init__)


@functools.cache
def module_tree(source: str) -> ast.Module:
    """A module's source parsed, once per build: the pages and captions ask of the same files again
    and again. The tree is shared, so it is read and never changed."""
    return ast.parse(source)


def mirrors_text(source: str) -> str:
    """The ``Mirrors:`` paragraphs of a module's docstring, joined on one line ("" without one)."""
    doc = ast.get_docstring(module_tree(source)) or ""
    parts, taking = [], False
    for line in doc.splitlines():
        if line.startswith("Mirrors:"):
            taking = True
            parts.append(line.removeprefix("Mirrors:").strip())
        elif taking and line.startswith(" ") and line.strip():
            parts.append(line.strip())
        else:
            taking = False
    return " ".join(parts)


def _derived_file(package: str, name: str) -> str:
    if package.startswith("org.apache.kafka"):
        return "clients/src/main/java/" + package.replace(".", "/") + f"/{name}.java"
    return "core/src/main/scala/" + package.replace(".", "/") + f"/{name}.scala"


def _strip_groups(text: str) -> str:
    """Parenthesised groups out, except lists of class names (``LogCleaner (Cleaner, CleanerThread)``),
    whose names read as more names of the list."""

    def replace(m: re.Match) -> str:
        inner = m.group(1).strip()
        return ", " + inner.replace(" and ", ", ") + " " if CLASS_LIST.match(inner) else " "

    previous = None
    while previous != text:
        previous, text = text, re.sub(r"\s*\(([^()]*)\)", replace, text)
    return text.replace("``", "")


def _normalise(text: str) -> str:
    """A path the docstring wrapped (``kafka/controller/ KafkaController.scala``) made whole again."""
    return re.sub(r"(?<=/) (?=[\w.]+/|\w+\.(?:scala|java)\b)", "", text)


def parse_mirrors(text: str) -> tuple[list[Twin], list[str]]:
    """The Kafka classes (and scripts) a ``Mirrors:`` text names, and the packages it names alone.

    A class's Kafka file is the path the header gives after it (before the next qualified name) when
    that path is a directory, is the class's own file, holds the class the name was listed with
    (``SocketServer, Acceptor (.../SocketServer.scala)``), or is introduced with "in"; otherwise it
    is where Kafka's layout puts the class. Its version is the one the header gives after it, or a
    "Kafka 0.11's" / "from Kafka 0.11," before it, or the header's first.
    """
    text = _normalise(text)
    versions = VERSION.findall(text)
    default_version = versions[0] if versions else ""
    qualified = list(QUALIFIED.finditer(text))
    starts = [m.start() for m in qualified] + [len(text)]
    twins: dict[tuple[str, str], Twin] = {}

    def add(package: str, name: str, lead: str, at: int, end: int, in_file_of: str = "") -> None:
        segment = text[at:end]
        paths = list(KAFKA_FILE.finditer(segment))
        path = next((f for f in paths if Path(f.group(0)).stem == name), paths[0] if paths else None)
        file = path.group(0) if path else ""
        if file and not file.endswith("/"):
            introduced = segment[: path.start()].rstrip().endswith("(in")
            if Path(file).stem not in (name, lead) and not introduced:
                file = ""
        if in_file_of and (not file or file.endswith("/")):
            file = _derived_file(package, in_file_of)
        if not file and package:
            file = _derived_file(package, name)
        before = VERSION_BEFORE.search(text[max(0, at - 24) : at])
        after = next(
            (v for v in VERSION.finditer(segment) if not VERSION_BEFORE.search(segment[: v.end() + 2])), None
        )
        version = before.group(1) if before else after.group(1) if after else default_version
        twins.setdefault((package, name), Twin(package, name, file, version))

    for i, m in enumerate(qualified):
        package, lead = m.group(1), m.group(2)
        end = starts[i + 1]
        add(package, lead, lead, m.start(), end)
        nested = NESTED.match(text, m.end())  # "LogCleaner (Cleaner, CleanerThread)": in LogCleaner's file
        for name in nested.group(1).replace(" and ", ", ").split(", ") if nested else []:
            add(package, name, lead, m.start(), end, in_file_of=lead)
        rest = _strip_groups(text[nested.end() if nested else m.end() : end])
        while (c := CONTINUE.match(rest)) and c.group(1) != "Kafka":
            add(package, c.group(1), lead, m.start(), end)
            rest = rest[c.end() :]
    for m in PACKAGE_NAME.finditer(text):  # "org.apache.kafka.common.protocol.types (Type, Schema, ...; ...)"
        listed = LEADING_CLASSES.match(text[m.end() :])
        if listed:
            end = next(s for s in starts if s > m.start())
            for name in listed.group(1).split(", "):
                add(m.group(1), name, name, m.start(), end)
    for m in BARE_AFTER_VERSION.finditer(text):
        if not QUALIFIED.match(text, m.start(2)):
            twins.setdefault(("", m.group(2)), Twin("", m.group(2), "", m.group(1)))
    for m in SCRIPT.finditer(text):
        twins.setdefault(("", m.group(0)), Twin("", m.group(0), "", default_version))
    named = {t.package for t in twins.values()}
    packages = [
        p
        for p in dict.fromkeys(m.group(1) for m in PACKAGE_NAME.finditer(text))
        if p not in named and not any(t.qualified.startswith(p + ".") for t in twins.values())
    ]
    return list(twins.values()), packages


def mirrored_modules(package_dir: Path = PACKAGE_DIR) -> list[MirroredModule]:
    """Every module of kafka_lite with a ``Mirrors:`` header, with what it mirrors."""
    modules = []
    for path in sorted(package_dir.rglob("*.py")):
        text = mirrors_text(path.read_text(encoding="utf-8"))
        if not text:
            continue
        rel = path.relative_to(package_dir.parent)
        dotted = ".".join(rel.with_suffix("").parts).removesuffix(".__init__")
        twins, packages = parse_mirrors(text)
        modules.append(MirroredModule(rel.as_posix(), dotted, text, tuple(twins), tuple(packages)))
    return modules


def api_pages(docs_dir: Path = DOCS_DIR) -> dict[str, str]:
    """kafka_lite module -> the API page (relative to docs/) that renders it with ``::: module``."""
    pages = {}
    for page in sorted((docs_dir / "api").glob("*.md")):
        for m in re.finditer(r"^:::\s*(kafka_lite[\w.]*)", page.read_text(encoding="utf-8"), re.MULTILINE):
            pages.setdefault(m.group(1), page.relative_to(docs_dir).as_posix())
    return pages


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


def _expected_packages(kafka_package: str, ours: set[str]) -> set[str]:
    """The kafka_lite packages a reader would look in for a class of ``kafka_package``: the longest
    prefix of its path that is one of ours (``kafka.server`` -> ``server``, ``org.apache.kafka.common.config``
    -> ``common``), and for ``org.apache.kafka.common.X`` also ``X`` (``common.network`` -> ``network``)."""
    parts = kafka_package.removeprefix("org.apache.kafka").removeprefix("kafka").strip(".").split(".")
    parts = [p for p in parts if p]
    found = set()
    for n in range(len(parts), 0, -1):
        if "/".join(parts[:n]) in ours:
            found.add("/".join(parts[:n]))
            break
    if kafka_package.startswith("org.apache.kafka.common.") and len(parts) > 1 and parts[1] in ours:
        found.add(parts[1])
    return found


def where_you_might_not_look(module: MirroredModule, twin: Twin, ours: set[str]) -> str:
    """Why a class is not where its Kafka name suggests, or "" when it is.

    Either its Kafka package has no counterpart holding it (``kafka.cluster.Partition`` in ``server/``,
    ``kafka.server.OffsetCheckpoint`` in ``log/``), or it lives in a module named after another class
    (``LogValidator`` in ``log.py``, Log's module) although Kafka gives it a file of its own.
    """
    if not twin.package or module.path.endswith("__init__.py"):
        return ""
    here = "/".join(module.module.split(".")[1:-1])
    expected = _expected_packages(twin.package, ours)
    if not any(here == e or here.startswith(e + "/") for e in expected):
        return f"Kafka's `{twin.package}`, here in `{here}/`"
    stem = module.path.rsplit("/", 1)[-1].removesuffix(".py")
    named_after = next((t for t in module.twins if _snake(t.name) == stem), None)
    if named_after is None or _snake(twin.name) == stem:
        return ""
    kafka_stem = Path(twin.kafka_file).stem if twin.kafka_file.endswith((".scala", ".java")) else twin.name
    if kafka_stem == twin.name:
        return f"in `{stem}.py` with `{named_after.name}`; Kafka gives it a file of its own"
    return ""


def shown_path(module: MirroredModule) -> str:
    """A module's path as the page shows it, inside ``kafka_lite/``: ``log/log.py``."""
    return module.path.removeprefix("kafka_lite/")


def _module_cell(module: MirroredModule, pages: dict[str, str], page_dir: str) -> str:
    page = pages.get(module.module)
    if page is None:
        return f"`{shown_path(module)}`"
    up = "../" * page_dir.count("/") if page_dir else ""
    return f"[`{shown_path(module)}`]({up}{page}#{module.module})"


def kafka_classes(
    package_dir: Path = PACKAGE_DIR, docs_dir: Path = DOCS_DIR, page_dir: str = "reference/"
) -> str:
    """The "Kafka class -> kafka_lite file" tables, as Markdown: the surprises first, then every class
    sorted by its name, then the packages that mirror a whole Kafka package."""
    modules = mirrored_modules(package_dir)
    pages = api_pages(docs_dir)
    ours = {
        p.relative_to(package_dir).as_posix() for p in package_dir.rglob("*") if (p / "__init__.py").exists()
    }
    rows = []
    for module in modules:
        if module.path.endswith("__init__.py"):
            continue
        for twin in module.twins:
            rows.append((twin, module, where_you_might_not_look(module, twin, ours)))
    rows.sort(key=lambda r: (r[0].name.lower(), r[0].package, r[1].path))

    def line(twin: Twin, module: MirroredModule, note: str) -> str:
        kafka = f"`{twin.name}`" + (f" <small>`{twin.package}`</small>" if twin.package else "")
        # The file's name: the package under the class says which directory; a directory alone says nothing more.
        file = f"`{Path(twin.kafka_file).name}`" if twin.kafka_file.endswith((".scala", ".java")) else ""
        version = twin.version or ""
        return f"| {kafka} | {file} | {version} | {_module_cell(module, pages, page_dir)} | {note} |"

    head = ["| Kafka class | Kafka file | Kafka | kafka_lite file | where |", "|---|---|---|---|---|"]
    surprises = [r for r in rows if r[2]]
    out = [
        "### Where you might not look\n\n" + "\n".join(head + [line(*r) for r in surprises]),
        "### Every mirrored class, by name\n\n" + "\n".join(head + [line(*r) for r in rows]),
    ]
    package_rows = ["| Kafka package | kafka_lite package | its header |", "|---|---|---|"]
    for module in modules:
        if module.path.endswith("__init__.py"):
            named = [*module.packages, *(t.qualified for t in module.twins)]
            kafka = ", ".join(f"`{n}`" for n in named)
            package_rows.append(f"| {kafka} | {_module_cell(module, pages, page_dir)} | {module.mirrors} |")
    out.append("### Whole packages\n\n" + "\n".join(package_rows))
    return "\n\n".join(out)


# -- the kafka-lite command -------------------------------------------------------------------------------


def _subcommands(parser) -> list[tuple[str, object, str]]:
    """``(name, parser, help)`` for each sub-command of ``parser``, in the order ``--help`` lists them."""
    import argparse

    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            found += [(name, sub, helps.get(name, "")) for name, sub in action.choices.items()]
    return found


def _option_rows(parser) -> list[str]:
    import argparse

    rows = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction | argparse._HelpAction):
            continue
        if action.help == argparse.SUPPRESS:
            continue
        name = ", ".join(action.option_strings) or action.metavar or action.dest
        default = action.default
        text = (action.help or "").replace("%(default)s", str(default)).replace("|", "\\|")
        unstated = (
            default in (None, False, [], argparse.SUPPRESS) or "default" in text or not action.option_strings
        )
        shown = "" if unstated else f" (default: `{default}`)"
        rows.append(f"| `{name}` | {text}{shown} |")
    return rows


def cli_reference(build_parser=None) -> str:
    """Every ``kafka-lite`` command, drawn from the argument parser the command itself uses: the usage
    line, what it does (with the Kafka script it mirrors) and its options."""
    if build_parser is None:
        from kafka_lite.cli.main import build_parser
    out = []

    def visit(path: str, parser, help_text: str) -> None:
        children = _subcommands(parser)
        rows = _option_rows(parser)
        if not children or rows:
            usage = " ".join(parser.format_usage().split()).removeprefix("usage: ")
            section = [f"### `{path}`", "", help_text[:1].upper() + help_text[1:] + "." if help_text else ""]
            section += ["", "```text", usage, "```"]
            if rows:
                section += ["", "| argument | meaning |", "|---|---|", *rows]
            out.append("\n".join(section))
        for name, child, child_help in children:
            visit(f"{path} {name}", child, child_help)

    top = build_parser()
    for name, child, help_text in _subcommands(top):
        visit(f"kafka-lite {name}", child, help_text)
    return "\n\n".join(out)
