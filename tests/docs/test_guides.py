"""What the guides state about the code, checked against the code, and pages that point nowhere
outside the project."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kafka_lite.server.kafka_config import CONFIG_DEF

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[2]
PAGES = [
    *sorted((ROOT / "chapters").glob("ch*_*/index.md")),
    *sorted((ROOT / "docs").glob("*.md")),
    ROOT / "README.md",
]


def test_pages_point_nowhere_outside_the_project():
    outside = re.compile(r"\bDESIGN\b|\bSTYLE\b|\.\./shared|\bshared/|project's book map")
    for page in PAGES:
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            assert not outside.search(line), f"{page.relative_to(ROOT)}:{number} points outside: {line}"


def test_ch01_times_a_leader_move_with_the_brokers_session_timeout():
    guide = (ROOT / "chapters" / "ch01_introduction" / "index.md").read_text(encoding="utf-8")
    timeout_ms = CONFIG_DEF.parse({"zookeeper.connect": "127.0.0.1:2181"})["zookeeper.session.timeout.ms"]
    assert f"`zookeeper.session.timeout.ms`, {timeout_ms} ms by" in " ".join(guide.split())
    assert f"about {timeout_ms // 1000} s" in " ".join(guide.split())
    # "which `cluster up` leaves as it is", and the ZooKeeper it starts grants that timeout.
    cluster = (ROOT / "kafka_lite" / "cli" / "cluster.py").read_text(encoding="utf-8")
    assert "zookeeper.session.timeout.ms=" not in cluster
    assert "tickTime=500" in cluster and "`tickTime=500`" in guide
    embedded = (ROOT / "kafka_lite" / "zk" / "embedded.py").read_text(encoding="utf-8")
    assert "maxSessionTimeout=60000" in embedded and "`maxSessionTimeout=60000`" in guide
    assert 2 * 500 <= timeout_ms <= 60000


def test_whatever_is_missing_is_in_the_last_section_of_a_guide():
    # The last section of the guide's own text; only its questions (included from questions.md,
    # tests/docs/test_exercises.py) come after it on the page.
    for guide in sorted((ROOT / "chapters").glob("ch*_*/index.md")):
        text = guide.read_text(encoding="utf-8")
        body, _, missing = text.partition("\n## Not yet in kafka_lite")
        assert missing, f"{guide.parent.name}: no 'Not yet in kafka_lite' section"
        assert "\n## " not in missing, f"{guide.parent.name}: a section after 'Not yet in kafka_lite'"
        questions = guide.parent / "questions.md"
        if questions.exists():
            body += questions.read_text(encoding="utf-8")
        for phrase in ("to come", "still to come", "(written)", ", written)", "comes with", "later)"):
            assert phrase not in body, f"{guide.parent.name}: {phrase!r} outside 'Not yet in kafka_lite'"
