"""Planted mistakes: a self-check file's [[mistakes]] read and checked against the lab, never lab.toml's;
and a mistaken workspace written and graded."""

from __future__ import annotations

import shutil

import pytest

from kafka_lite.grading import region_entries
from kafka_lite.grading.grader import grade
from kafka_lite.grading.labs import LabError, discover, load_mistakes
from kafka_lite.grading.starter import RegionError, plant_mistake, write_mistaken
from tests.grading.test_starter_and_grader import TOY_TOML, _toy_lab

pytestmark = pytest.mark.unit

MISTAKE = """
[[mistakes]]
name = "add-subtracts"
stage = 1
region = "add"
description = "add returns the sum"
old = "a + b"
new = "a - b"
tests = ["test_add"]
"""


def _lab(tmp_path, mistakes=MISTAKE):
    repo = _toy_lab(tmp_path, toml=TOY_TOML)
    (lab,) = discover(repo / "labs", repo)
    (tmp_path / "mistakes.toml").write_text(mistakes, encoding="utf-8")
    return repo, load_mistakes(lab, tmp_path / "mistakes.toml")


def test_a_mistake_is_read_from_the_self_checks_file(tmp_path):
    _, lab = _lab(tmp_path)
    (mistake,) = lab.mistakes
    assert (mistake.name, mistake.stage, mistake.region, mistake.old, mistake.new, mistake.tests) == (
        "add-subtracts",
        1,
        "add",
        "a + b",
        "a - b",
        ("test_add",),
    )
    assert mistake.description == "add returns the sum"


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (('region = "add"\n', ""), r"mistake 1 \(add-subtracts\) lacks region"),
        (("stage = 1", "stage = 3"), r"stage 3 is not one of the lab's stages \(1, 2\)"),
        (('region = "add"', 'region = "double"'), r"region double belongs to stage 2, not stage 1"),
        (('region = "add"', 'region = "triple"'), r"no solution region in a function triple"),
        (('new = "a - b"', 'new = "a + b"'), r"new is the same as old"),
        (('name = "add-subtracts"', 'name = "Add subtracts"'), r"name must be lower-case words"),
        (('tests = ["test_add"]', 'tests = "test_add"'), r"tests must be a list of graded tests' names"),
        (('tests = ["test_add"]', 'test = ["test_add"]'), r"unknown keys test"),
        (('description = "add returns the sum"', 'description = " "'), r"description must be non-empty"),
        (
            (MISTAKE, MISTAKE + MISTAKE),
            r"mistake 2 \(add-subtracts\): another mistake is named add-subtracts",
        ),
    ],
)
def test_discovery_checks_each_mistake(tmp_path, edit, message):
    mistakes = edit[1] if edit[0] == MISTAKE else MISTAKE.replace(*edit)
    with pytest.raises(LabError, match=message):
        _lab(tmp_path, mistakes)


def test_mistakes_must_be_tables(tmp_path):
    with pytest.raises(LabError, match=r"mistakes must be \[\[mistakes\]\] tables"):
        _lab(tmp_path, "mistakes = 1\n")


def test_a_mistakes_file_holds_mistakes_only_and_must_be_there(tmp_path):
    with pytest.raises(LabError, match=r"unknown keys title \(it holds \[\[mistakes\]\] tables only\)"):
        _lab(tmp_path, 'title = "x"\n' + MISTAKE)
    repo = _toy_lab(tmp_path / "again", toml=TOY_TOML)
    (lab,) = discover(repo / "labs", repo)
    with pytest.raises(LabError, match=r"has no planted mistakes: .*nowhere.toml does not exist"):
        load_mistakes(lab, tmp_path / "nowhere.toml")


def test_lab_toml_may_not_plant_mistakes_beside_the_handout(tmp_path):
    """A mistake quotes the reference's lines: lab.toml, which sits beside the handout, may not hold one."""
    repo = _toy_lab(tmp_path, toml=TOY_TOML + MISTAKE)
    with pytest.raises(
        LabError, match=r"planted mistakes quote the reference; keep them in the self-check's file"
    ):
        discover(repo / "labs", repo)


SOURCE = "def f(a):\n    x = 1\n    # BEGIN SOLUTION\n    y = a + 1\n    return y + 1\n    # END SOLUTION\n"


def test_a_mistake_is_planted_only_inside_its_region():
    assert plant_mistake(SOURCE, "f", "y + 1", "y + 2") == SOURCE.replace("y + 1", "y + 2")
    # ``x = 1`` is outside the region: the mistake's text must be inside it, exactly once
    with pytest.raises(
        RegionError, match=r"mod\.py:3: the mistake's old text is not found in the region of f"
    ):
        plant_mistake(SOURCE, "f", "x = 1", "x = 2", "mod.py")
    with pytest.raises(RegionError, match=r"found 2 times in the region of f"):
        plant_mistake(SOURCE, "f", "+ 1", "+ 2", "mod.py")
    with pytest.raises(RegionError, match=r"no solution region in a function g"):
        plant_mistake(SOURCE, "g", "y", "z", "mod.py")
    with pytest.raises(RegionError, match=r"the mistake planted in f does not parse"):
        plant_mistake(SOURCE, "f", "return y + 1", "return (", "mod.py")


def test_a_mistaken_workspace_is_the_reference_with_the_mistake_and_loses_its_points(tmp_path):
    repo, lab = _lab(tmp_path)
    workspace = tmp_path / "ws"
    (written,) = write_mistaken(lab, lab.mistakes, repo, workspace)
    reference = (repo / "kafka_lite" / "toy.py").read_text()
    assert written.read_text() == reference.replace("return a + b", "return a - b")
    report = grade(
        lab, workspace, repo_root=repo, package_root=repo / "kafka_lite", stages=[1], keyword="test_add"
    )
    assert [(r.test, r.passed) for r in report.results] == [("test_add", False)]


def test_mistakes_in_two_regions_are_planted_together_and_marked(tmp_path):
    second = MISTAKE.replace('"add-subtracts"', '"double-triples"').replace("stage = 1", "stage = 2")
    second = second.replace('region = "add"', 'region = "double"').replace(
        'description = "add returns the sum"', 'description = "double adds x to itself"'
    )
    second = (
        second.replace('"a + b"', '"add(x, x)"')
        .replace('"a - b"', '"3 * x"')
        .replace('["test_add"]', '["test_double"]')
    )
    repo, lab = _lab(tmp_path, MISTAKE + second)
    # the marks call kafka_lite's region_entries, which the toy package then needs too
    (repo / "kafka_lite" / "grading").mkdir()
    (repo / "kafka_lite" / "grading" / "__init__.py").write_text("")
    shutil.copyfile(region_entries.__file__, repo / "kafka_lite" / "grading" / "region_entries.py")
    workspace = tmp_path / "ws"
    write_mistaken(lab, lab.mistakes, repo, workspace, mark=True)
    report = grade(lab, workspace, repo_root=repo, package_root=repo / "kafka_lite", keyword="add or double")
    got = {r.test: (r.passed, r.regions) for r in report.results}
    # Each test failed on its own region's mistake, and the marks show which regions it reached.
    assert got == {"test_add": (False, ("add",)), "test_double": (False, ("double",))}, got
