"""The lab machinery itself: starter generation, discovery errors, and grading a throwaway lab."""

from __future__ import annotations

import textwrap

import pytest

from kafka_lite.grading.grader import grade
from kafka_lite.grading.labs import LabError, discover, find
from kafka_lite.grading.starter import ENTERED, RegionError, make_starter, mark_entries

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


TOY_TOML = """number = {number}
title = "Toy"
time = "ten minutes"
builds_on = ["arithmetic"]
files = ["kafka_lite/toy.py"]

[[stages]]
name = "add"
regions = ["add"]
passing = "stage 1 shows 4/4"

[[stages]]
name = "double"
regions = ["double"]
passing = "stage 2 shows 2/2"
needs = [1]
"""

TOY_TESTS = """import pytest
import kafka_lite
from kafka_lite.toy import add, double
pytestmark = [pytest.mark.lab({number})]

@pytest.mark.stage(1)
@pytest.mark.points(3)
def test_add():
    assert add(2, 3) == 5, "add(2, 3) should be 5:\\n  first line of the explanation\\n  second line, kept too"

@pytest.mark.stage(1)
@pytest.mark.points(1)
def test_where():
    print("loaded from", kafka_lite.__file__)
    assert 'overlay' in kafka_lite.__file__

@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_double():
    assert double(4) == 8
"""


def _toy_lab(tmp_path, number=1, body="return a + b", toml=TOY_TOML):
    repo = tmp_path / "repo"
    (repo / "kafka_lite").mkdir(parents=True)
    (repo / "kafka_lite" / "__init__.py").write_text("")
    (repo / "kafka_lite" / "toy.py").write_text(
        f"def add(a, b):\n    # BEGIN SOLUTION\n    {body}\n    # END SOLUTION\n\n\n"
        "def double(x):\n    # BEGIN SOLUTION\n    return add(x, x)\n    # END SOLUTION\n"
    )
    lab_dir = repo / "labs" / f"lab{number:02d}_toy"
    lab_dir.mkdir(parents=True)
    (lab_dir / "lab.toml").write_text(toml.format(number=number))
    (lab_dir / "README.md").write_text("# Toy\n")
    (lab_dir / "test_toy.py").write_text(TOY_TESTS.format(number=number))
    (repo / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\nmarkers = ["lab(n): lab", "points(k): points", "stage(s): stage"]\n'
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
    assert lab.time == "ten minutes" and lab.builds_on == ("arithmetic",)
    assert [(s.number, s.name, s.regions, s.needs) for s in lab.stages] == [
        (1, "add", ("add",), ()),
        (2, "double", ("double",), (1,)),
    ]
    reference = grade(lab, None, repo_root=repo, package_root=repo / "kafka_lite")
    assert reference.full_marks and reference.earned == 6, reference.output
    student = tmp_path / "ws"
    (student / "kafka_lite").mkdir(parents=True)
    (student / "kafka_lite" / "toy.py").write_text(
        "def add(a, b):\n    return a - b\n\n\ndef double(x):\n    return 2 * x\n"
    )
    report = grade(lab, student, repo_root=repo, package_root=repo / "kafka_lite")
    assert report.earned == 3 and not report.full_marks
    assert [(s.number, s.earned, s.total) for s in report.stage_scores()] == [(1, 1, 4), (2, 2, 2)]
    (failed,) = [r for r in report.results if not r.passed]
    assert failed.test == "test_add" and failed.error_type == "AssertionError" and failed.stage == 1
    # the whole message, every line of the test's explanation, not just its first line
    lines = [line.strip() for line in failed.error.splitlines()]
    assert lines[:3] == [
        "AssertionError: add(2, 3) should be 5:",
        "first line of the explanation",
        "second line, kept too",
    ], failed.error
    assert "test_toy.py:9: in test_add" in failed.traceback
    (where,) = [r for r in report.results if r.test == "test_where"]
    # test_where passes: it checks that kafka_lite came from the overlay; what it printed names the
    # package as the learner knows it (the checkout's), not the grader's temporary copy.
    assert where.passed and "loaded from" in where.output
    assert str(repo / "kafka_lite" / "__init__.py") in where.output and "overlay" not in where.output
    (student / "kafka_lite" / "toy.py").write_text("def add(a, b) return\n")  # does not even parse
    broken = grade(lab, student, repo_root=repo, package_root=repo / "kafka_lite")
    assert broken.earned == 0


def test_grading_one_stage_or_a_keyword_runs_only_those_tests(tmp_path):
    repo = _toy_lab(tmp_path)
    (lab,) = discover(repo / "labs", repo)
    kwargs = {"repo_root": repo, "package_root": repo / "kafka_lite"}
    second = grade(lab, None, stages=[2], **kwargs)
    assert [r.test for r in second.results] == ["test_double"] and second.selection == "stage 2"
    keyword = grade(lab, None, keyword="where or double", **kwargs)
    assert sorted(r.test for r in keyword.results) == ["test_double", "test_where"]
    with pytest.raises(LabError, match=r"lab 1 has no stage 3 \(stages: 1, 2\)"):
        grade(lab, None, stages=[3], **kwargs)


def test_partial_starter_keeps_only_the_solved_regions():
    source = "def a():\n    # BEGIN SOLUTION\n    return 1\n    # END SOLUTION\n\n\n" + SOURCE
    partial = make_starter(source, 1, "README.md", solved=frozenset({"a", "Index.other.inner"}))
    assert "return 1" in partial and "implement a " not in partial
    assert "Lab 1: implement Index.lookup" in partial and "return target * 2" not in partial
    assert "Lab 1: implement free" in partial


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            ('regions = ["double"]', 'regions = ["triple"]'),
            r"stage 2: no solution region in a function triple",
        ),
        (('regions = ["double"]', 'regions = ["add"]'), r"stage 2: region add already belongs to stage 1"),
        (("needs = [1]", "needs = [2]"), r"stage 2 needs stage 2, which is not an earlier stage"),
        (('name = "double"\nregions = ["double"]\n', 'name = "double"\n'), r"stage 2 lacks regions"),
        (
            ('[[stages]]\nname = "double"', '[[nothing]]\nname = "double"'),
            r"solution regions in no stage: double",
        ),
    ],
)
def test_discovery_checks_stages_against_the_regions(tmp_path, edit, message):
    repo = _toy_lab(tmp_path, toml=TOY_TOML.replace(*edit))
    with pytest.raises(LabError, match=message):
        discover(repo / "labs", repo)


def test_a_marked_reference_keeps_its_lines_and_calls_in_at_each_region():
    source = "def add(a, b):\n    # BEGIN SOLUTION\n    return a + b\n    # END SOLUTION\n"
    marked = mark_entries(source, "toy.py")
    assert len(marked.splitlines()) == len(source.splitlines())
    assert marked.splitlines()[1] == f"    {ENTERED}('add')  # BEGIN SOLUTION"
    with pytest.raises(RegionError, match=r"toy\.py:3: a BEGIN SOLUTION marker must be indented"):
        mark_entries(
            "def add(a, b):\n        # BEGIN SOLUTION\n    return a + b\n    # END SOLUTION\n",
            "toy.py",
        )


def test_a_process_the_tests_started_notes_its_entries_in_the_file(tmp_path, monkeypatch):
    from kafka_lite.grading import region_entries

    monkeypatch.setattr(region_entries, "recorder", None)
    monkeypatch.setattr(region_entries, "_log", None)
    monkeypatch.setenv(region_entries.ENTRIES_ENV, str(tmp_path / "entries"))
    region_entries.entered("Processor.poll")
    region_entries.entered("Processor.poll")
    assert (tmp_path / "entries").read_text() == "Processor.poll\nProcessor.poll\n"


def test_a_marked_reference_names_the_regions_each_test_reached():
    """Lab 6's high watermark (stage 3) is all its tests reach; a follower's truncation (stage 4)
    moves the high watermark as well, so those tests reach stage 3's region too."""
    lab = find(6)
    report = grade(lab, None, stages=[3, 4], mark_entries=True)
    assert report.full_marks, report.output[-2000:]
    reached = {r.test: set(r.regions) for r in report.results}
    for r in report.results:
        if r.stage == 3:
            assert reached[r.test] == {"Partition.maybe_increment_leader_hw"}, r.test
    assert reached["test_a_follower_truncates_where_its_epoch_ends_on_the_new_leader"] == {
        "LeaderEpochFileCache.end_offset_for",
        "Partition.maybe_increment_leader_hw",
        "ReplicaFetcherThread.maybe_truncate",
    }
    assert report.reached_outside_tests == ()
