"""A lint: a module reads as the Kafka version its header names, and a later version's behaviour is
named where it lives.

For each module of the packages below, its own versions are those its header's ``Mirrors:`` lines
name (``Kafka 0.10.1``, ``Kafka 0.11.0``). Every mention of a later version (``Kafka 2.2``, ``1.1's``,
``since 2.0``, or a KIP or a JIRA issue fixed in a later version) must lie in the header's ``Differs:`` paragraph, or inside
a function or class whose own docstring names that version: a named helper, whose docstring says
which version and why. Anything else is a later Kafka's behaviour inline, printed as
``path:line: text``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.docs

ROOT = Path(__file__).resolve().parents[2]

# A few KIPs the code names, with the Kafka version that shipped them.
KIP_VERSIONS = {
    "KIP-32": "0.10.0",
    "KIP-73": "0.10.1",
    "KIP-74": "0.10.1",
    "KIP-79": "0.10.1",
    "KIP-103": "0.10.2",
    "KIP-98": "0.11.0",
    "KIP-101": "0.11.0",
    "KIP-82": "0.11.0",
    "KIP-195": "1.0",
    "KIP-226": "1.1",
    "KIP-380": "2.2",
    "KIP-890": "3.6",
}

# The JIRA issues the code names, with the Kafka version that fixed them: a ``KAFKA-n`` written
# without its version still says which Kafka the behaviour is from.
JIRA_VERSIONS = {
    "KAFKA-4561": "0.10.2",
    "KAFKA-4843": "0.11.0",
    "KAFKA-6502": "3.2",
}

# A Kafka version's minor number has one or two digits: "MIT 6.5840's" is a course, not a Kafka.
_VERSION = r"(\d+\.\d{1,2}(?:\.\d+){0,2})(?![\d.]*\d)"
MENTION = re.compile(
    rf"Kafka {_VERSION}|\b{_VERSION}'s\b|\bsince {_VERSION}\b(?!\s*(?:s|ms|%))|\b(KIP-\d+|KAFKA-\d+)\b"
)
ISSUE_VERSIONS = {**KIP_VERSIONS, **JIRA_VERSIONS}
HEADER_KEY = re.compile(r"^(Mirrors|Book|Differs|Labs|No Kafka twin):")


def version(text: str) -> tuple[int, ...]:
    """``2.2`` -> (2, 2, 0); a bug-fix release's fourth number (``0.10.1.1``) is its minor's."""
    parts = [int(p) for p in text.split(".")][:3]
    return tuple(parts + [0] * (3 - len(parts)))


def mentions(line: str) -> list[str]:
    """The Kafka versions a line names (as written: ``2.2``, ``0.10.1``)."""
    found = []
    for m in MENTION.finditer(line):
        issue = m.group(4)
        text = ISSUE_VERSIONS.get(issue) if issue else next(g for g in m.groups()[:3] if g)
        if text is not None and version(text) >= (0, 8, 0):
            found.append(text)
    return found


def header_paragraphs(tree: ast.Module) -> dict[str, range]:
    """The lines of each ``Key:`` paragraph of the module docstring (up to the next key or blank)."""
    doc = tree.body[0] if tree.body and isinstance(tree.body[0], ast.Expr) else None
    if doc is None or not isinstance(doc.value, ast.Constant) or not isinstance(doc.value.value, str):
        return {}
    paragraphs: dict[str, range] = {}
    key, start = None, 0
    lines = doc.value.value.splitlines()
    for i, line in enumerate([*lines, ""]):
        lineno = doc.lineno + i
        m = HEADER_KEY.match(line)
        if m or not line.strip():
            if key is not None:
                paragraphs[key] = range(start, lineno)
            key, start = (m.group(1), lineno) if m else (None, 0)
    return paragraphs


def own_versions(source: list[str], paragraphs: dict[str, range]) -> list[tuple[int, ...]]:
    return [version(v) for n in paragraphs.get("Mirrors", ()) for v in mentions(source[n - 1])]


def named_helpers(tree: ast.Module) -> list[tuple[range, str]]:
    """Each function's and class's lines and its own docstring, innermost last."""
    helpers = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            helpers.append((range(node.lineno, node.end_lineno + 1), ast.get_docstring(node) or ""))
    return helpers


def offenders(path: Path, root: Path = ROOT) -> list[str]:
    text = path.read_text()
    source = text.splitlines()
    tree = ast.parse(text)
    paragraphs = header_paragraphs(tree)
    own = own_versions(source, paragraphs)
    if not own:
        return []  # no Kafka twin: nothing to be later than
    newest = max(own)
    differs = paragraphs.get("Differs", range(0))
    helpers = named_helpers(tree)
    found = []
    for lineno, line in enumerate(source, 1):
        later = [v for v in mentions(line) if version(v) > newest]
        if not later or lineno in differs:
            continue
        enclosing = [(lines, doc) for lines, doc in helpers if lineno in lines]
        innermost = min(enclosing, key=lambda h: len(h[0]), default=None)
        if innermost is not None and all(v in innermost[1] or _issue_named(v, innermost[1]) for v in later):
            continue
        found.append(f"{path.relative_to(root)}:{lineno}: {line.strip()}")
    return found


def _issue_named(v: str, docstring: str) -> bool:
    return any(issue in docstring for issue, iv in ISSUE_VERSIONS.items() if iv == v)


def package_offenders(package: str) -> list[str]:
    return [o for path in sorted((ROOT / package).rglob("*.py")) for o in offenders(path)]


@pytest.mark.parametrize(
    "package",
    [
        "kafka_lite/controller",
        "kafka_lite/coordinator/transaction",
        "kafka_lite/connect",
        "kafka_lite/raft",
        "kafka_lite/metadata",
        "kafka_lite/server",  # the KRaft broker too: server/metadata, broker_server.py, controller_server.py
        "kafka_lite/streams",
    ],
)
def test_a_later_kafka_version_is_named_only_in_differs_or_a_named_helper(package):
    found = package_offenders(package)
    assert not found, (
        "a later Kafka version mentioned outside the header's Differs: paragraph and outside a function "
        "or class whose docstring names it:\n" + "\n".join(found)
    )


def test_the_lint_finds_an_inline_mention_and_spares_differs_and_helpers(tmp_path):
    module = tmp_path / "kafka_lite" / "m.py"
    module.parent.mkdir()
    module.write_text(
        '"""A module.\n\nMirrors: kafka.X (X.scala, Kafka 0.10.1)\nDiffers: does Kafka 2.2\'s thing.\n"""\n\n\n'
        "def helper():\n"
        '    """Kafka 1.1\'s rule, borrowed."""\n'
        "    return 1  # as 1.1's TopicChange does\n\n\n"
        "def inline():\n"
        '    """Nothing named."""\n'
        "    return 2  # as Kafka 2.0 does (KIP-380)\n"
    )
    assert offenders(module, tmp_path) == ["kafka_lite/m.py:15: return 2  # as Kafka 2.0 does (KIP-380)"]


def test_the_lint_reads_a_jira_issue_as_its_version_and_a_course_number_as_no_version(tmp_path):
    module = tmp_path / "kafka_lite" / "m.py"
    module.parent.mkdir()
    module.write_text(
        '"""A module.\n\nMirrors: kafka.X (X.scala, Kafka 0.10.1)\n"""\n\n\n'
        "def inline():\n"
        '    """Nothing named."""\n'
        "    a = 1  # as 0.10.1.1's bug-fix release has it\n"
        "    b = 2  # as MIT 6.5840's Raft lab tests it\n"
        "    return a + b  # committed past, as KAFKA-6502 does\n\n\n"
        "def helper():\n"
        '    """The fix of KAFKA-6502."""\n'
        "    return 3  # committed past, as KAFKA-6502 does\n"
    )
    assert offenders(module, tmp_path) == [
        "kafka_lite/m.py:11: return a + b  # committed past, as KAFKA-6502 does"
    ]


# The KRaft modules (chapter 12) read as Kafka 3.3, whatever the book's version.
KRAFT_MODULES = [
    "kafka_lite/raft",
    "kafka_lite/metadata",
    "kafka_lite/server/metadata",
    "kafka_lite/server/broker_server.py",
    "kafka_lite/server/controller_server.py",
    "kafka_lite/server/kafka_raft_server.py",
]


def test_the_kraft_modules_name_kafka_3_3_in_their_mirrors():
    wrong = []
    for entry in KRAFT_MODULES:
        path = ROOT / entry
        for module in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            text = module.read_text()
            paragraphs = header_paragraphs(ast.parse(text))
            if "No Kafka twin" in paragraphs:
                continue
            if (3, 3, 0) not in own_versions(text.splitlines(), paragraphs):
                wrong.append(str(module.relative_to(ROOT)))
    assert not wrong, "KRaft modules whose Mirrors: paragraph does not name Kafka 3.3:\n" + "\n".join(wrong)
