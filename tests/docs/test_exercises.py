"""Every chapter guide ends with 3-5 questions about its design, each with a collapsed answer.

A guide's questions live in ``questions.md`` beside it, included by one snippet line at the very end
of the guide, after "Not yet in kafka_lite". Each is a collapsed ``??? question "..."`` block (the
question its title, the answer its body, hidden until opened) whose answer names the code it points
to. A placeholder guide (only the book's sections and what is not yet in kafka_lite) has none.
The home page's learning path puts the guides, notebooks and labs in order, with each lab's hours."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[2]
GUIDES = sorted((ROOT / "chapters").glob("*/index.md"))
PLACEHOLDER_SECTIONS = {"The book's sections", "Not yet in kafka_lite"}
QUESTION = re.compile(r'^\?\?\? question "(?P<title>.+)"$')


def _sections(text: str) -> list[str]:
    return re.findall(r"^## (.+)$", text, re.MULTILINE)


def _has_content(guide: Path) -> bool:
    return not set(_sections(guide.read_text(encoding="utf-8"))) <= PLACEHOLDER_SECTIONS


def _include_line(guide: Path) -> str:
    return f'--8<-- "chapters/{guide.parent.name}/questions.md"'


def _questions(path: Path) -> list[tuple[str, list[str]]]:
    """The file's questions: each title with the lines of its answer (its indented body)."""
    found: list[tuple[str, list[str]]] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        match = QUESTION.match(line)
        if match:
            found.append((match["title"], []))
        elif found and (line.startswith("    ") or not line.strip()):
            found[-1][1].append(line)
        elif found and line.strip():
            raise AssertionError(f"{path.relative_to(ROOT)}: a line outside any answer: {line!r}")
    return [(title, [line for line in body if line.strip()]) for title, body in found]


def test_the_chapters_with_content_are_the_ones_expected():
    # So that a guide that loses its sections, or a new one, is noticed here.
    with_content = {g.parent.name for g in GUIDES if _has_content(g)}
    assert {
        "ch01_introduction",
        "ch02_producer",
        "ch06_storage",
        "ch07_controller",
        "ch09_streams",
        "data_pipeline",
    } <= with_content


@pytest.mark.parametrize("guide", [g for g in GUIDES if _has_content(g)], ids=lambda g: g.parent.name)
def test_every_guide_ends_with_three_to_five_questions_with_collapsed_answers(guide):
    text = guide.read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if line.strip()]
    assert lines[-1] == _include_line(guide), (
        f"{guide.parent.name}: the guide does not end by including its questions"
    )
    assert text.count("questions.md") == 1
    questions = guide.parent / "questions.md"
    source = questions.read_text(encoding="utf-8")
    assert source.startswith("## Questions\n")
    assert "???+" not in source and "!!!" not in source, "an answer shown open"
    found = _questions(questions)
    assert 3 <= len(found) <= 5, f"{guide.parent.name}: {len(found)} questions"
    for number, (title, answer) in enumerate(found, 1):
        assert title.startswith(f"{number}. ") and title.rstrip("`").endswith("?"), title
        assert "\\" not in title, title  # a title is shown as typed: no escapes
        assert len(answer) >= 2, f"{guide.parent.name} question {number}: the answer is too short"
        assert all(line.startswith("    ") for line in answer), "an answer not inside its block"
        assert "`" in " ".join(answer), f"{guide.parent.name} question {number}: the answer names no code"


def test_a_placeholder_guide_has_no_questions():
    # Every chapter has a guide now; the rule stays for a chapter started as a placeholder.
    for guide in (g for g in GUIDES if not _has_content(g)):
        assert "questions.md" not in guide.read_text(encoding="utf-8"), guide.parent.name
        assert not (guide.parent / "questions.md").exists(), guide.parent.name


def test_questions_files_are_parts_of_their_guides_not_pages_of_their_own():
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    excluded = re.search(r"^exclude_docs: \|\n((?:  .*\n)+)", config, re.MULTILINE)
    assert excluded and "questions.md" in excluded[1].split()


def test_the_learning_path_has_every_lab_with_its_hours():
    # The home page's path takes each lab's hours from its handout's lab.toml; a new lab, or a
    # changed estimate, must show there too.
    page = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    path = page.split("\n## The learning path\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in path.splitlines() if line.startswith("| ")]
    for lab in sorted((ROOT / "labs").glob("lab*/lab.toml")):
        spec = tomllib.loads(lab.read_text(encoding="utf-8"))
        link = f"(labs/{lab.parent.name}/README.md)"
        row = next((r for r in rows if link in r), None)
        assert row is not None, f"lab {spec['number']} is not on the learning path"
        assert f"{link}, {spec['time']} |" in row, (
            f"lab {spec['number']}: the path does not say {spec['time']!r}"
        )
    steps = [int(r.split("|")[1]) for r in rows[1:]]
    assert steps == list(range(1, len(steps) + 1))
    for row in rows[1:]:  # a step needs only steps before it
        step, needs = int(row.split("|")[1]), row.rstrip(" |").rsplit("|", 1)[1]
        assert all(int(n) < step for n in re.findall(r"\d+", needs)), row
