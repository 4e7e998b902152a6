"""The lab self-check: for every lab, the reference scores 100 % and the untouched starter 0 %,
with every graded test failing on that lab's own NotImplementedError (not an import error)."""

from __future__ import annotations

import ast

import pytest

from kafka_lite.grading.grader import grade
from kafka_lite.grading.labs import REPO_ROOT, discover
from kafka_lite.grading.starter import find_regions, write_starter

pytestmark = pytest.mark.labs
LABS = discover()


def test_there_are_labs_numbered_from_one():
    assert LABS, "no labs found under labs/"
    assert [lab.number for lab in LABS] == list(range(1, len(LABS) + 1))


@pytest.mark.parametrize("lab", LABS, ids=lambda lab: lab.slug)
def test_reference_scores_full_marks(lab):
    report = grade(lab, None)
    assert not report.collection_failed, report.output[-3000:]
    failed = [(r.test, r.error) for r in report.results if not r.passed]
    assert report.full_marks, f"reference fails: {failed}"


@pytest.mark.parametrize("lab", LABS, ids=lambda lab: lab.slug)
def test_starter_scores_zero_with_the_labs_own_error(lab, tmp_path):
    write_starter(lab, REPO_ROOT, tmp_path)
    report = grade(lab, tmp_path)
    assert not report.collection_failed, report.output[-3000:]
    assert report.earned == 0
    for r in report.results:
        assert r.error_type == "NotImplementedError" and f"Lab {lab.number}:" in r.error, (
            f"{r.test} should fail on the starter with Lab {lab.number}'s NotImplementedError, got: {r.error}"
        )


@pytest.mark.parametrize("lab", LABS, ids=lambda lab: lab.slug)
def test_every_graded_test_has_one_lab_marker_and_points(lab):
    tests = 0
    for path in lab.tests():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module_marks = ast.unparse(tree).count(f"pytest.mark.lab({lab.number})")
        assert module_marks == 1, f"{path.name} must set pytestmark = [pytest.mark.lab({lab.number})] once"
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                tests += 1
                marks = [ast.unparse(d) for d in node.decorator_list]
                assert sum("pytest.mark.points(" in m for m in marks) == 1, (
                    f"{path.name}::{node.name} needs one points marker"
                )
                assert not any("pytest.mark.lab(" in m for m in marks), (
                    f"{path.name}::{node.name}: lab marker set twice"
                )
    assert tests > 0, f"lab {lab.number} has no graded tests"


@pytest.mark.parametrize("lab", LABS, ids=lambda lab: lab.slug)
def test_lab_files_have_well_formed_regions(lab):
    for rel in lab.files:
        assert find_regions((REPO_ROOT / rel).read_text(encoding="utf-8"), rel), (
            f"{rel} has no solution region"
        )
