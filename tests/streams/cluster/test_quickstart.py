"""Chapter 9's quick start, run as the guide writes it: its commands are read out of the guide's
code blocks (so the page and the test cannot drift apart) and run by bash, the word count demo in
the background as the reader's second terminal; what the consumer prints is the page's output.

One thing changes: the page's cluster is ``cluster up``'s, on 127.0.0.1:9092; the test's is the
session's, so that address becomes the session cluster's. The commands run in a directory of their
own, with ``.venv`` linked to the checkout's, so the page's relative paths (``.venv/bin/kafka-lite``,
``--state-dir .kafka-lite/streams``) mean what they mean to a reader in the checkout. The README's
word count section must hold the same commands."""

from __future__ import annotations

import re
import signal
import subprocess
from pathlib import Path

import pytest

from tests.support.waiting import wait_until

REPO = Path(__file__).resolve().parents[3]
GUIDE = REPO / "chapters" / "ch09_streams" / "index.md"
README = REPO / "README.md"
PAGE_BOOTSTRAP = "127.0.0.1:9092"
FENCE = re.compile(r"^```(\w+)\n(.*?)^```$", re.M | re.S)


def blocks(markdown: str, heading: str) -> list[tuple[str, str]]:
    """The fenced code blocks, ``(language, text)``, of the section under ``heading``."""
    start = markdown.index(f"\n{heading}\n")
    end = markdown.find("\n## ", start + len(heading) + 2)
    return FENCE.findall(markdown[start : end if end != -1 else None])


def bash(script: str, cwd: Path, timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout)  # fmt: skip


def run_the_demo_and_read_its_counts(here: dict[str, str], app: str, work: str, shown: str, cwd: Path) -> str:
    """The reader's second terminal (the demo) and first (producer and consumer), then Ctrl-C;
    what the demo said."""
    demo = subprocess.Popen(["bash", "-c", "exec " + here[app].strip()], cwd=cwd, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)  # fmt: skip
    try:
        try:
            ran = bash(here[work], cwd, timeout=90)
        except subprocess.TimeoutExpired as e:
            demo.kill()
            said, _ = demo.communicate()
            raise AssertionError(f"the consumer did not get its records; the demo said:\n{said}") from e
        assert ran.returncode == 0, ran.stderr
        # The page's output lines up its columns with spaces; the consumer separates them with a tab.
        printed = [line.split() for line in ran.stdout.splitlines()] + [ran.stderr.strip().split()]
        assert printed == [line.split() for line in shown.splitlines()]
        demo.send_signal(signal.SIGINT)  # the reader's Ctrl-C
        said, _ = demo.communicate(timeout=60)
    finally:
        if demo.poll() is None:
            demo.kill()
            demo.communicate()
    assert demo.returncode == 0, said
    assert "state REBALANCING -> RUNNING" in said and said.rstrip().endswith("closed"), said
    return said


@pytest.mark.integration
@pytest.mark.xdist_group("cluster")
def test_the_guides_word_count_quick_start_prints_the_counts_it_shows_twice(cluster, tmp_path):
    (setup_lang, setup), (app_lang, app), (work_lang, work), (out_lang, shown) = blocks(
        GUIDE.read_text(encoding="utf-8"), "## Quick start"
    )
    assert (setup_lang, app_lang, work_lang, out_lang) == ("sh", "sh", "sh", "text")
    (tmp_path / ".venv").symlink_to(REPO / ".venv")
    here = {block: block.replace(PAGE_BOOTSTRAP, cluster.bootstrap_servers) for block in (setup, app, work)}

    created = bash(here[setup], tmp_path, timeout=60)
    assert created.returncode == 0, created.stderr
    assert created.stdout.splitlines() == [
        'Created topic "streams-plaintext-input".',
        'Created topic "streams-wordcount-output".',
    ]
    run_the_demo_and_read_its_counts(here, app, work, shown, tmp_path)
    assert (tmp_path / ".kafka-lite" / "streams" / "streams-wordcount").is_dir(), (
        "the store under --state-dir"
    )

    # A second run against a new cluster: the topics gone, the internal ones too, as on a cluster
    # just made; the state directory is still there, its checkpoint past the new changelog's end.
    # The store is deleted and restored from the new changelog, so the counts are the page's again.
    admin = cluster.admin()
    try:
        ours = [t for t in admin.list_topics() if t.startswith("streams-")]
        admin.delete_topics(ours, timeout_ms=10_000)
        wait_until(lambda: not set(ours) & set(admin.list_topics()), 20, "the quick start's topics deleted")
    finally:
        admin.close()
    assert bash(here[setup], tmp_path, timeout=60).returncode == 0
    said = run_the_demo_and_read_its_counts(here, app, work, shown, tmp_path)
    assert "past its changelog's end" in said and "Deleting the store to restore it from scratch" in said, (
        said
    )


@pytest.mark.unit
def test_the_readmes_word_count_section_holds_the_guides_commands():
    guide = [
        text for lang, text in blocks(GUIDE.read_text(encoding="utf-8"), "## Quick start") if lang == "sh"
    ]
    readme = README.read_text(encoding="utf-8")
    heading = next(line for line in readme.splitlines() if line.startswith("## ") and "word" in line.lower())
    readme_commands = "".join(text for lang, text in blocks(readme, heading) if lang == "sh")
    for block in guide:
        for command in block.replace("\\\n", "").splitlines():
            assert " ".join(command.split()) in " ".join(readme_commands.replace("\\\n", "").split()), command
