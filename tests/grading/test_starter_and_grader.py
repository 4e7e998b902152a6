"""The lab machinery itself: starter generation, discovery errors, and grading a throwaway lab."""

from __future__ import annotations

import textwrap

import pytest

from kafka_lite.grading.grader import grade
from kafka_lite.grading.labs import LabError, discover
from kafka_lite.grading.starter import RegionError, make_starter

pytestmark = pytest.mark.unit

SOURCE = textwrap.dedent(
    '''
    class Index:
        def lookup(self, target):
            """Docstring stays."""
            # BEGIN SOLUTION
            return target * 2
            # END SOLUTION

        def other(self):
            def inner():
                # BEGIN SOLUTION
                return 1
                # END SOLUTION
            return inner()


    def free(x):
        # BEGIN SOLUTION
        if x:
            return x
        return 0
        # END SOLUTION
    '''
)


def test_starter_replaces_each_region_with_the_labs_error():
    starter = make_starter(SOURCE, 3, "labs/lab03_x/README.md")
    assert "return target * 2" not in starter and "BEGIN SOLUTION" not in starter
    assert (
        "        raise NotImplementedError('Lab 3: implement Index.lookup (see labs/lab03_x/README.md)')"
        in starter
    )
    assert "Lab 3: implement Index.other.inner" in starter
    assert "    raise NotImplementedError('Lab 3: implement free" in starter
    assert '"""Docstring stays."""' in starter
    namespace = {}
    exec(compile(starter, "starter", "exec"), namespace)
    with pytest.raises(NotImplementedError, match=r"Lab 3: implement Index\.lookup"):
        namespace["Index"]().lookup(1)


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("def f():\n    # BEGIN SOLUTION\n    return 1\n", ":2: BEGIN SOLUTION is never closed"),
        ("def f():\n    return 1\n    # END SOLUTION\n", ":3: END SOLUTION without a BEGIN"),
        (
            "def f():\n    # BEGIN SOLUTION\n    # BEGIN SOLUTION\n",
            ":3: BEGIN SOLUTION inside the region opened at line 2",
        ),
        ("# BEGIN SOLUTION\nX = 1\n# END SOLUTION\n", ":1: a solution region must be inside a function body"),
    ],
)
def test_malformed_regions_name_file_and_line(source, message):
    with pytest.raises(RegionError, match=message):
        make_starter(source, 1, "README.md", "mod.py")


def _toy_lab(tmp_path, number=1, body="return a + b"):
    repo = tmp_path / "repo"
    (repo / "kafka_lite").mkdir(parents=True)
    (repo / "kafka_lite" / "__init__.py").write_text("")
    (repo / "kafka_lite" / "toy.py").write_text(
        f"def add(a, b):\n    # BEGIN SOLUTION\n    {body}\n    # END SOLUTION\n"
    )
    lab_dir = repo / "labs" / f"lab{number:02d}_toy"
    lab_dir.mkdir(parents=True)
    (lab_dir / "lab.toml").write_text(f'number = {number}\ntitle = "Toy"\nfiles = ["kafka_lite/toy.py"]\n')
    (lab_dir / "README.md").write_text("# Toy\n")
    (lab_dir / "test_toy.py").write_text(
        "import pytest\nimport kafka_lite\nfrom kafka_lite.toy import add\n"
        f"pytestmark = [pytest.mark.lab({number})]\n\n"
        "@pytest.mark.points(3)\ndef test_add():\n    assert add(2, 3) == 5\n\n"
        "@pytest.mark.points(1)\ndef test_where():\n    print(kafka_lite.__file__)\n    assert 'overlay' in kafka_lite.__file__\n"
    )
    (repo / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\nmarkers = ["lab(n): lab", "points(k): points"]\n'
    )
    return repo


def test_discovery_reports_gaps_and_missing_files(tmp_path):
    repo = _toy_lab(tmp_path, number=2)
    with pytest.raises(LabError, match=r"numbered 1\.\.1"):
        discover(repo / "labs", repo)
    (repo / "kafka_lite" / "toy.py").unlink()
    with pytest.raises(LabError, match=r"file kafka_lite/toy\.py does not exist"):
        discover(repo / "labs", repo)


def test_grading_uses_the_students_file_in_an_overlay(tmp_path):
    repo = _toy_lab(tmp_path)
    (lab,) = discover(repo / "labs", repo)
    reference = grade(lab, None, repo_root=repo, package_root=repo / "kafka_lite")
    assert reference.full_marks and reference.earned == 4, reference.output
    student = tmp_path / "ws"
    (student / "kafka_lite").mkdir(parents=True)
    (student / "kafka_lite" / "toy.py").write_text("def add(a, b):\n    return a - b\n")
    report = grade(lab, student, repo_root=repo, package_root=repo / "kafka_lite")
    assert report.earned == 1 and not report.full_marks
    (failed,) = [r for r in report.results if not r.passed]
    assert failed.test == "test_add" and failed.error_type == "AssertionError"
    (student / "kafka_lite" / "toy.py").write_text("def add(a, b) return\n")  # does not even parse
    broken = grade(lab, student, repo_root=repo, package_root=repo / "kafka_lite")
    assert broken.earned == 0
