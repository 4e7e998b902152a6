"""The lab self-check: for every lab, the reference scores 100 %, the untouched starter 0 % (every
graded test failing on that lab's own NotImplementedError, not an import error), and each stage's
points appear when only that stage is solved.

The partial solutions are assembled from the reference: a workspace whose solution regions hold the
reference's code for the stage's functions (and the stages it ``needs``, as lab.toml says) and the
starter's stubs everywhere else.

Each grading is a pytest run of its own, and some start clusters or Spark jobs, so a lab's reference
and starter are graded once per run and read by every test that asks (a lab's cases go to one xdist
worker, which keeps them). The reference is graded with each region's BEGIN SOLUTION line made a call
that notes the region entered (``starter.mark_entries``: nothing else changes, not even a line
number), so each of its results names the regions its test reached. A stage's check then grades only
what those two runs do not already prove:

- a solved stage's test that reached no region outside the solved ones runs here exactly as it ran
  in the reference (the two workspaces differ only inside regions it never entered), so it passes
  here too; a stage with every such test is read from the reference's run (as is a stage solved with
  every stage it needs, when that is the whole lab); any other solved stage's tests run;
- a test of an unsolved stage that failed on the starter at a region this workspace leaves unsolved
  reaches that stub here too: up to that stub the two workspaces run the same code. A stage whose
  tests all fail so is read as zero from the starter's run; any other stage's tests run as well.

Regions a reference's run reached outside every test's call (in a shared fixture's set-up, say)
count for every test.

A lab's ``[[mistakes]]`` (``mistakes/labNN_slug.toml``, beside this file) each plant one mistake in the whole reference, one per requirement
of the handout's Behaviour section; graded on the tests the mistake names (or its stage's), the
mistaken reference must lose points there: a requirement whose mistake scores full marks is one the
graded tests do not check. A lab's mistakes are graded together where the same argument allows, in
one run: mistakes in distinct regions, none of whose tests reached another's region in the
reference's run, are planted in one workspace with its regions marked. A mistake is judged from that
run when its tests again reached no other planted region (then each ran as it would with that
mistake alone) and each of its failing tests reached its own; otherwise, and whenever it loses no
points there, it is graded alone.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from kafka_lite.grading.grader import GradeReport, grade
from kafka_lite.grading.labs import REPO_ROOT, Lab, Mistake, discover, load_mistakes
from kafka_lite.grading.starter import find_regions, write_mistaken, write_starter
from tests.labs import pytest_forks

pytestmark = pytest.mark.labs
# Each lab with its planted mistakes, which live here (``mistakes/``), away from the lab's folder.
MISTAKES = Path(__file__).parent / "mistakes"
LABS = [load_mistakes(lab, MISTAKES / f"{lab.slug}.toml") for lab in discover()]


def _params(cases, ids):
    """All of a lab's cases go to one worker, which grades its reference and starter once for them; a
    Spark lab's go where the run's one JVM is (the grading subprocesses connect to it)."""
    return [
        pytest.param(
            *case,
            id=ids(case),
            marks=[pytest.mark.xdist_group("spark" if case[0].uses_spark else f"lab{case[0].number}")],
        )
        for case in cases
    ]


LAB_CASES = _params([(lab,) for lab in LABS], lambda case: case[0].slug)
STAGE_CASES = _params(
    [(lab, stage) for lab in LABS for stage in lab.stages],
    lambda case: f"{case[0].slug}-stage{case[1].number}",
)

MISTAKE_CASES = _params(
    [(lab, mistake) for lab in LABS for mistake in lab.mistakes],
    lambda case: f"{case[0].slug}-{case[1].name}",
)

_graded: dict[tuple[int, str], GradeReport] = {}
_groups: dict[int, list[list[Mistake]]] = {}  # a lab's mistakes, in the groups planted together
_group_runs: dict[tuple[int, str], GradeReport] = {}  # a group's run, by lab and its first mistake


def _reference(lab: Lab) -> GradeReport:
    if (lab.number, "reference") not in _graded:
        _graded[lab.number, "reference"] = grade(lab, None, mark_entries=True, run=pytest_forks.run)
    return _graded[lab.number, "reference"]


def _starter(lab: Lab, tmp_path_factory) -> GradeReport:
    if (lab.number, "starter") not in _graded:
        workspace = tmp_path_factory.mktemp(f"{lab.slug}-starter")
        write_starter(lab, REPO_ROOT, workspace)
        _graded[lab.number, "starter"] = grade(lab, workspace, run=pytest_forks.run)
    return _graded[lab.number, "starter"]


def _stub_reached(lab: Lab, error: str) -> str | None:
    """The function whose stub a starter's failure came from (``Lab N: implement Class.method``)."""
    found = re.search(rf"Lab {lab.number}: implement (\S+) \(see ", error)
    return found.group(1) if found else None


@pytest.fixture(autouse=True)
def _spark_for_spark_labs(request):
    lab = request.node.callspec.params.get("lab") if hasattr(request.node, "callspec") else None
    if lab is not None and lab.uses_spark:
        request.getfixturevalue("spark")  # starts the run's JVM, which the grading subprocess joins


def test_there_are_labs_numbered_from_one():
    assert LABS, "no labs found under labs/"
    assert [lab.number for lab in LABS] == list(range(1, len(LABS) + 1))


@pytest.mark.parametrize("lab", LAB_CASES)
def test_reference_scores_full_marks(lab):
    report = _reference(lab)
    assert not report.collection_failed, report.output[-3000:]
    failed = [(r.test, r.error) for r in report.results if not r.passed]
    assert report.full_marks, f"reference fails: {failed}"


@pytest.mark.parametrize("lab", LAB_CASES)
def test_starter_scores_zero_with_the_labs_own_error(lab, tmp_path_factory):
    report = _starter(lab, tmp_path_factory)
    assert not report.collection_failed, report.output[-3000:]
    assert report.earned == 0
    # A stub fails on any input: Hypothesis shrinks the example and stops, without its explain phase
    # (which would run each property test hundreds of times more, conftest.PHASES).
    said = report.output + "".join(r.output + r.traceback for r in report.results)
    assert "varied together" not in said and "or any other generated value" not in said
    for r in report.results:
        assert r.error_type == "NotImplementedError" and f"Lab {lab.number}:" in r.error, (
            f"{r.test} should fail on the starter with Lab {lab.number}'s NotImplementedError, got: {r.error}"
        )


@pytest.mark.parametrize(("lab", "stage"), STAGE_CASES)
def test_solving_one_stage_earns_exactly_its_points(lab, stage, tmp_path_factory):
    solved = lab.with_needs(stage.number)
    regions = frozenset(name for n in solved for name in lab.stage(n).regions)
    starter, reference = _starter(lab, tmp_path_factory), _reference(lab)
    assert not starter.collection_failed, starter.output[-3000:]
    totals = {s.number: s.total for s in starter.stage_scores()}
    outside = set(reference.reached_outside_tests)
    from_reference = {
        s.number
        for s in lab.stages
        if s.number in solved
        and all(outside | set(r.regions) <= regions for r in reference.results if r.stage == s.number)
    }
    from_starter = {
        s.number
        for s in lab.stages
        if s.number not in solved
        and all(
            _stub_reached(lab, r.error) not in (None, *regions)
            for r in starter.results
            if r.stage == s.number
        )
    }
    if len(solved) == len(lab.stages):
        from_reference = set(solved)  # this stage with the stages it needs is the whole lab
    to_grade = [n for n in totals if n not in from_reference | from_starter]
    got = {n: 0 for n in from_starter}
    got |= {s.number: s.earned for s in reference.stage_scores() if s.number in from_reference}
    failing = [
        (r.test, r.error.splitlines()[0])
        for r in reference.results
        if not r.passed and r.stage in from_reference
    ]
    if to_grade:
        workspace = tmp_path_factory.mktemp(f"{lab.slug}-stage{stage.number}")
        write_starter(lab, REPO_ROOT, workspace, solved=regions)
        report = grade(lab, workspace, stages=to_grade, run=pytest_forks.run)
        assert not report.collection_failed, report.output[-3000:]
        got |= {s.number: s.earned for s in report.stage_scores()}
        failing += [
            (r.test, r.error.splitlines()[0]) for r in report.results if not r.passed and r.stage in solved
        ]
    expected = {n: (total if n in solved else 0) for n, total in totals.items()}
    assert got == expected, (
        f"lab {lab.number} with only stages {list(solved)} solved ({sorted(regions)}): points per stage "
        f"{got}, expected {expected}; failing in the solved stages: {failing}"
    )
    heading = f"### Stage {stage.number}: {stage.name} ({totals[stage.number]} points)"
    assert heading in lab.handout.read_text(encoding="utf-8"), (
        f"{lab.handout} should have the heading {heading!r}"
    )


HANDOUT_SECTIONS = (
    "## Overview",
    "## Time and what it builds on",
    "## Commands",
    "## Related files",
    "## Specification",
    "## Stages",
    "## What the tests check",
    "## Hints",
    "## Differs from Kafka",
)


@pytest.mark.parametrize("lab", LAB_CASES)
def test_handout_has_its_sections_and_commands_that_work(lab):
    text = lab.handout.read_text(encoding="utf-8")
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert [h for h in headings if h in HANDOUT_SECTIONS] == list(HANDOUT_SECTIONS), (
        f"{lab.handout}: sections {headings}, expected these in order: {list(HANDOUT_SECTIONS)}"
    )
    assert lab.time and lab.time.lower() in text.replace("**", "").lower(), (
        f"{lab.handout} should say it takes {lab.time}"
    )
    for stage in lab.stages:
        assert f"### Stage {stage.number}: {stage.name} (" in text, (
            f"{lab.handout}: no section for stage {stage.number}"
        )
    # kafka-lite is in .venv/bin, not on PATH: a command line must say so
    assert "source .venv/bin/activate" in text
    in_block, bare = False, []
    for line in text.splitlines():
        if line.startswith("```"):
            in_block = line.strip() == "```sh"
        elif in_block and line.startswith("kafka-lite"):
            bare.append(line)
    assert not bare, f"{lab.handout}: write .venv/bin/kafka-lite, as the handout says: {bare}"


def _section(text: str, heading: str) -> str:
    """The text under a ``## `` heading, up to the next one."""
    start = text.index(heading + "\n") + len(heading) + 1
    following = re.search(r"^## ", text[start:], re.MULTILINE)
    return text[start : start + following.start()] if following else text[start:]


FOLDED_STEPS = re.compile(
    r'^<details markdown="1">\n<summary>Stage (?P<stage>\d+), step by step</summary>\n(?P<body>.*?)^</details>$',
    re.MULTILINE | re.DOTALL,
)


@pytest.mark.parametrize("lab", LAB_CASES)
def test_handout_gives_the_behaviour_and_folds_the_steps(lab):
    """A handout at two levels: the Specification states the behaviour the tests check, and only then,
    folded a stage at a time, the steps that get there; a learner can work from the behaviour alone."""
    spec = _section(lab.handout.read_text(encoding="utf-8"), "## Specification")
    subsections = re.findall(r"^### (.+)$", spec, re.MULTILINE)
    assert subsections == ["Behaviour", "Step by step"], (
        f"{lab.handout}: the Specification's subsections are {subsections}, "
        "expected '### Behaviour' then '### Step by step'"
    )
    behaviour, steps = spec.split("### Step by step\n")
    assert "<details" not in behaviour and len(behaviour.split()) > 40, (
        f"{lab.handout}: the Behaviour subsection should state, unfolded, what the tests check"
    )
    folded = [(int(m["stage"]), m["body"]) for m in FOLDED_STEPS.finditer(steps)]
    assert [n for n, _ in folded] == [s.number for s in lab.stages], (
        f"{lab.handout}: the step-by-step blocks are for stages {[n for n, _ in folded]}, expected one "
        f'per stage, in order, each opened by <details markdown="1"> and <summary>Stage N, step by step</summary>'
    )
    for number, body in folded:
        assert body.startswith("\n") and len(body.split()) > 15, (
            f"{lab.handout}: stage {number}'s steps are empty, or lack the blank line after the summary "
            "that lets Markdown inside the block render"
        )


def _stage_marks(decorators: list[ast.expr]) -> list[str]:
    return [ast.unparse(d) for d in decorators if ast.unparse(d).startswith("pytest.mark.stage(")]


@pytest.mark.parametrize("lab", LAB_CASES)
def test_every_graded_test_has_one_lab_marker_one_stage_and_points(lab):
    """Each test: one lab marker (the module's), one stage marker of a stage lab.toml declares
    (its own, or the module's), one points marker; and every stage has tests."""
    assert lab.stages, f"{lab.directory / 'lab.toml'} declares no [[stages]]"
    declared = {s.number for s in lab.stages}
    used: dict[int, int] = {}
    for path in lab.tests():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module_marks = ast.unparse(tree).count(f"pytest.mark.lab({lab.number})")
        assert module_marks == 1, f"{path.name} must set pytestmark = [pytest.mark.lab({lab.number})] once"
        assert ast.unparse(tree).count("pytest.mark.lab(") == 1, f"{path.name} names another lab"
        module_stage = _module_stage_marks(tree)
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                marks = [ast.unparse(d) for d in node.decorator_list]
                where = f"{path.name}::{node.name}"
                assert sum(m.startswith("pytest.mark.points(") for m in marks) == 1, (
                    f"{where} needs one points marker"
                )
                assert not any(m.startswith("pytest.mark.lab(") for m in marks), (
                    f"{where}: lab marker set twice"
                )
                stages = _stage_marks(node.decorator_list) + module_stage
                assert len(stages) == 1, f"{where} needs exactly one stage marker, has {stages or 'none'}"
                number = int(ast.literal_eval(stages[0].removeprefix("pytest.mark.stage(").removesuffix(")")))
                assert number in declared, (
                    f"{where}: stage {number} is not in lab.toml (stages {sorted(declared)})"
                )
                used[number] = used.get(number, 0) + 1
    assert sorted(used) == sorted(declared), (
        f"lab {lab.number}: stages without a test: {sorted(declared - set(used))}"
    )


@pytest.mark.parametrize("lab", LAB_CASES)
def test_lab_files_have_well_formed_regions(lab):
    for rel in lab.files:
        assert find_regions((REPO_ROOT / rel).read_text(encoding="utf-8"), rel), (
            f"{rel} has no solution region"
        )


def _module_stage_marks(tree: ast.Module) -> list[str]:
    """The stage marks a test module's ``pytestmark`` sets for all its tests."""
    return [
        m
        for node in tree.body
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "pytestmark" for t in node.targets)
        for m in _stage_marks(getattr(node.value, "elts", [node.value]))
    ]


def _graded_tests(lab: Lab) -> dict[str, int]:
    """Each graded test's name and stage, read from the lab's test files (its own stage marker, or the
    module's)."""
    found: dict[str, int] = {}
    for path in lab.tests():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module_stage = _module_stage_marks(tree)
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                (mark,) = _stage_marks(node.decorator_list) + module_stage
                found[node.name] = int(mark.removeprefix("pytest.mark.stage(").removesuffix(")"))
    return found


@pytest.mark.parametrize("lab", LAB_CASES)
def test_every_lab_plants_mistakes_its_stages_tests_can_catch(lab):
    """At least one planted mistake per lab, and the tests each one names are graded tests of its stage."""
    assert lab.mistakes, f"{MISTAKES / lab.slug}.toml plants no [[mistakes]]"
    graded = _graded_tests(lab)
    for mistake in lab.mistakes:
        for test in mistake.tests:
            assert graded.get(test) == mistake.stage, (
                f"lab {lab.number}, mistake {mistake.name}: {test} is not a graded test of stage "
                f"{mistake.stage} (stage {mistake.stage}'s tests: "
                f"{sorted(t for t, n in graded.items() if n == mistake.stage)})"
            )


def _mistake_tests(lab: Lab, mistake: Mistake) -> set[str]:
    """The graded tests (function names) a mistake is judged on: those it names, or its stage's."""
    return set(mistake.tests) or {t for t, n in _graded_tests(lab).items() if n == mistake.stage}


def _reached(report: GradeReport, test: str) -> set[str]:
    """The regions the runs of graded test ``test`` (each of its parameters) reached, with those
    reached outside every test's call, which count for every test."""
    runs = [set(r.regions) for r in report.results if r.test.split("[")[0] == test]
    return set(report.reached_outside_tests).union(*runs)


def _planted_together(lab: Lab) -> list[list[Mistake]]:
    """The lab's mistakes in groups to plant together: distinct regions, and no test of one reached
    another's region in the reference's run (in the mistakes file's order, each into the first group it fits)."""
    if lab.number in _groups:
        return _groups[lab.number]
    reference = _reference(lab)
    groups: list[list[Mistake]] = []
    for mistake in lab.mistakes:
        for group in groups:
            regions = {m.region for m in group}
            if mistake.region not in regions and not any(
                _reached(reference, t) & (regions if m is mistake else {mistake.region})
                for m in (mistake, *group)
                for t in _mistake_tests(lab, m)
            ):
                group.append(mistake)
                break
        else:
            groups.append([mistake])
    _groups[lab.number] = groups
    return groups


def _grade_mistakes(lab: Lab, mistakes: list[Mistake], tmp_path_factory, mark: bool) -> GradeReport:
    workspace = tmp_path_factory.mktemp(f"{lab.slug}-{mistakes[0].name}")
    write_mistaken(lab, mistakes, REPO_ROOT, workspace, mark=mark)
    tests = sorted(set().union(*(_mistake_tests(lab, m) for m in mistakes)))
    return grade(
        lab, workspace, stages={m.stage for m in mistakes}, keyword=" or ".join(tests), run=pytest_forks.run
    )


def _judged_together(lab: Lab, mistake: Mistake, tmp_path_factory) -> GradeReport | None:
    """The run of the mistake's group, if it proves what grading the mistake alone would: its tests
    reached no other planted region, and each that failed reached its own."""
    (group,) = [group for group in _planted_together(lab) if mistake in group]
    if len(group) == 1:
        return None
    key = (lab.number, group[0].name)
    if key not in _group_runs:
        _group_runs[key] = _grade_mistakes(lab, group, tmp_path_factory, mark=True)
    report = _group_runs[key]
    others = {m.region for m in group} - {mistake.region}
    for r in report.results:
        if r.test.split("[")[0] in _mistake_tests(lab, mistake):
            reached = set(r.regions) | set(report.reached_outside_tests)
            if reached & others or (not r.passed and mistake.region not in reached):
                return None
    return report


@pytest.mark.parametrize(("lab", "mistake"), MISTAKE_CASES)
def test_a_planted_mistake_loses_points_in_its_stage(lab, mistake, tmp_path_factory):
    """The reference with one mistake planted must lose points in the mistake's stage, graded on the
    tests the mistake names (or every test of the stage)."""
    report = _judged_together(lab, mistake, tmp_path_factory)
    mine = _mistake_tests(lab, mistake)
    if report is None or all(r.passed for r in report.results if r.test.split("[")[0] in mine):
        report = _grade_mistakes(lab, [mistake], tmp_path_factory, mark=False)
    assert not report.collection_failed, report.output[-3000:]
    results = [r for r in report.results if r.test.split("[")[0] in mine]
    assert {r.test.split("[")[0] for r in results} == mine, (
        f"graded {sorted(r.test for r in results)}, but the mistake is judged on {sorted(mine)}"
    )
    earned = sum(r.points for r in results if r.passed)
    passed = [r.test for r in results if r.passed]
    assert earned < sum(r.points for r in results), (
        f"lab {lab.number}, stage {mistake.stage}: the reference with mistake {mistake.name!r} planted in "
        f"{mistake.region} scores {earned}/{sum(r.points for r in results)} on {sorted(mine)}, so no graded test checks that "
        f"{mistake.description}\n  planted: {mistake.old!r} -> {mistake.new!r}\n  passing: {passed}"
    )
