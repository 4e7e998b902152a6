"""MkDocs hook: the API pages show the code a learner starts from, never a lab's answer.

No Kafka twin: docs tooling. A lab's reference code sits in ``kafka_lite/`` between solution markers;
``kafka-lite lab start`` (``kafka_lite.grading.starter``) turns each such region into the lab's
``NotImplementedError`` in a learner's workspace. At ``on_config`` this hook writes a copy of the
``kafka_lite`` package into ``SITE_SOURCE`` with every lab file replaced by that same starter, so
the API pages' source views show the signature, the docstring and the lab's stub in place of the
reference body. A guide's code blocks are filled by ``code_includes.py`` (a lab's code folded in a
``reference`` block); any other ``--8<--`` include reads this copy too. ``mkdocs.yml`` names the copy
first in ``pymdownx.snippets``' ``base_path`` and as the mkdocstrings python handler's ``paths``; the
hook checks that it does, so neither can quietly go back to reading the reference.

Only files whose text changed are written, so ``mkdocs serve`` does not see its own output as a change.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority

from kafka_lite.grading import labs, starter

SITE_SOURCE = ".cache/site-source"  # relative to mkdocs.yml, as the paths in mkdocs.yml are


def site_source(root: Path) -> dict[str, str]:
    """Repo-relative path -> text of every module of ``kafka_lite`` as the site shows it."""
    package = root / "kafka_lite"
    texts = {
        path.relative_to(root).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(package.rglob("*.py"))
        if "__pycache__" not in path.parts
    }
    # The starters exactly as ``kafka-lite lab start`` writes them into a learner's workspace.
    with tempfile.TemporaryDirectory() as tmp:
        for lab in labs.discover(root / "labs", root):
            for path in starter.write_starter(lab, root, Path(tmp)):
                texts[path.relative_to(tmp).as_posix()] = path.read_text(encoding="utf-8")
    return texts


def _sync(texts: dict[str, str], out: Path) -> None:
    for rel, text in texts.items():
        target = out / rel
        if not target.is_file() or target.read_text(encoding="utf-8") != text:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
    for stale in out.rglob("*.py"):
        if stale.relative_to(out).as_posix() not in texts:
            stale.unlink()


def _check_config(config) -> None:
    snippets = config.mdx_configs.get("pymdownx.snippets", {}).get("base_path", [])
    if not snippets or snippets[0] != SITE_SOURCE:
        raise PluginError(
            f"lab_starters: pymdownx.snippets' base_path must list {SITE_SOURCE!r} first "
            f"(found {snippets!r}); otherwise guides include the labs' reference code"
        )
    python = config.plugins["mkdocstrings"].config.handlers.get("python", {})
    if python.get("paths") != [SITE_SOURCE]:
        raise PluginError(
            f"lab_starters: the mkdocstrings python handler's paths must be [{SITE_SOURCE!r}] "
            f"(found {python.get('paths')!r}); otherwise the API pages show the labs' reference code"
        )


@event_priority(100)  # before mkdocstrings or any page reads the copy
def on_config(config):
    _check_config(config)
    root = Path(config.config_file_path).parent
    _sync(site_source(root), root / SITE_SOURCE)
    return config
