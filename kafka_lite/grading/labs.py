"""Find the labs: ``labs/labNN_slug/`` folders, each with a ``lab.toml`` naming the files students edit.

No Kafka twin: lab bookkeeping for kafka_lite's course material.

A lab folder holds ``lab.toml``, ``README.md`` (the handout) and graded tests ``test_*.py``, each
carrying ``pytest.mark.lab(N)``, ``pytest.mark.stage(S)`` and ``pytest.mark.points(k)``. ``lab.toml``
says::

    number = 1
    title = "Encode and decode a record batch v2"
    time = "2 to 3 hours"                  # what the handout says it takes
    builds_on = ["chapter 6: message formats"]
    files = ["kafka_lite/common/record/varint.py", ...]   # the modules whose solution regions you write

    [[stages]]                             # stage 1, 2, ... in this order
    name = "varints round-trip"
    regions = ["write_varint", "read_varint"]   # the solution regions, by their function's qualname
    passing = "the varint tests pass: 8/8 points"
    needs = []                             # earlier stages this one cannot work without

The lab's planted mistakes are kept apart from its folder, in a file of the self-check's
(``tests/labs/mistakes/labNN_slug.toml``, read by ``load_mistakes``): each quotes the reference's own
lines, and nothing a learner reads beside the handout may. It holds::

    [[mistakes]]                           # planted mistakes, each breaking one requirement of the handout
    name = "reassigned-leader-not-checked-alive"    # the self-check's case id, unique in the lab
    stage = 1                              # the stage that must lose points
    region = "ReassignedPartitionLeaderSelector.select_leader"  # a solution region of that stage
    description = "a dead new replica in the ISR is skipped"     # the requirement it breaks
    old = "r in live and r in current_leader_and_isr.isr"        # exactly once in the region ...
    new = "r in current_leader_and_isr.isr"                      # ... and what replaces it
    tests = ["test_reassigned_elects_..."] # optional: the graded tests that catch it (default: the stage's)

Every solution region of the lab's files belongs to exactly one stage. A planted mistake is the whole
reference with one edit inside one region: the lab self-check grades it and expects the stage to lose
points, so every requirement the handout states has a test that fails without it. Labs are numbered 1, 2, 3 ...
in the order they were added; discovery checks that the numbers are exactly that.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path

import kafka_lite
from kafka_lite.grading.starter import RegionError, region_qualnames

PACKAGE_ROOT = Path(kafka_lite.__file__).resolve().parent
REPO_ROOT = PACKAGE_ROOT.parent
LABS_ROOT = REPO_ROOT / "labs"


class LabError(Exception):
    """A lab that cannot be found, read or graded; the message says which and why."""


@dataclass(frozen=True)
class Stage:
    number: int  # 1, 2, ... in the order of lab.toml
    name: str
    regions: tuple[str, ...]  # qualnames of the functions whose solution regions this stage writes
    passing: str  # what passing looks like, as the handout says it
    needs: tuple[int, ...] = ()  # earlier stages this one cannot work without


@dataclass(frozen=True)
class Mistake:
    """One planted mistake: the reference with ``old`` replaced by ``new`` inside region ``region``."""

    name: str  # unique in the lab; the self-check's case id
    stage: int
    region: str  # the qualname of the function whose solution region the edit is in
    description: str  # the handout's requirement the mistake breaks
    old: str
    new: str
    tests: tuple[str, ...] = ()  # the graded tests that catch it; () means every test of the stage


@dataclass(frozen=True)
class Lab:
    number: int
    slug: str  # the folder name, e.g. lab01_record_batch
    title: str
    directory: Path
    files: tuple[str, ...]  # repo-relative paths of the modules the student edits
    time: str = ""
    builds_on: tuple[str, ...] = ()
    stages: tuple[Stage, ...] = ()
    mistakes: tuple[Mistake, ...] = ()  # the self-check's (load_mistakes); none as discovered

    @property
    def uses_spark(self) -> bool:
        """The student writes Spark code (a module under kafka_lite/spark/): its tests need a SparkSession."""
        return any(rel.startswith("kafka_lite/spark/") for rel in self.files)

    @property
    def handout(self) -> Path:
        return self.directory / "README.md"

    def tests(self) -> list[Path]:
        return sorted(self.directory.glob("test_*.py"))

    def stage(self, number: int) -> Stage:
        for stage in self.stages:
            if stage.number == number:
                return stage
        valid = ", ".join(str(s.number) for s in self.stages) or "none"
        raise LabError(f"lab {self.number} has no stage {number} (stages: {valid})")

    def with_needs(self, number: int) -> tuple[int, ...]:
        """Stage ``number`` and every stage it needs, directly or through another, in order."""
        wanted, todo = set(), [number]
        while todo:
            n = todo.pop()
            if n not in wanted:
                wanted.add(n)
                todo.extend(self.stage(n).needs)
        return tuple(sorted(wanted))


def discover(labs_root: Path = LABS_ROOT, repo_root: Path = REPO_ROOT) -> list[Lab]:
    """Every lab under ``labs_root``, by number; raises ``LabError`` naming a bad folder."""
    labs = []
    for directory in sorted(p for p in labs_root.glob("lab[0-9]*") if p.is_dir()):
        labs.append(_load(directory, repo_root))
    numbers = [lab.number for lab in labs]
    if numbers != list(range(1, len(labs) + 1)):
        raise LabError(f"labs must be numbered 1..{len(labs)} without gaps or repeats; found {numbers}")
    return labs


def _load(directory: Path, repo_root: Path) -> Lab:
    spec_path = directory / "lab.toml"
    if not spec_path.exists():
        raise LabError(f"{directory} has no lab.toml")
    try:
        spec = tomllib.loads(spec_path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise LabError(f"{spec_path}: {e}") from None
    missing = [key for key in ("number", "title", "files") if key not in spec]
    if missing:
        raise LabError(f"{spec_path} lacks {', '.join(missing)}")
    files = tuple(spec["files"])
    for f in files:
        if not (repo_root / f).is_file():
            raise LabError(f"{spec_path}: file {f} does not exist")
    builds_on = spec.get("builds_on", [])
    if not isinstance(builds_on, list) or not all(isinstance(b, str) for b in builds_on):
        raise LabError(f"{spec_path}: builds_on must be a list of strings")
    stages = _load_stages(spec_path, spec.get("stages", []), files, repo_root)
    if "mistakes" in spec:
        raise LabError(
            f"{spec_path}: planted mistakes quote the reference; keep them in the self-check's file "
            "(load_mistakes), not beside the handout"
        )
    return Lab(
        int(spec["number"]),
        directory.name,
        str(spec["title"]),
        directory,
        files,
        str(spec.get("time", "")),
        tuple(builds_on),
        stages,
    )


def _load_stages(spec_path: Path, raw: list, files: tuple[str, ...], repo_root: Path) -> tuple[Stage, ...]:
    """The ``[[stages]]`` tables, checked against the solution regions the lab's files really hold."""
    owners: dict[str, str] = {}  # region qualname -> the file holding it
    for rel in files:
        try:
            names = region_qualnames((repo_root / rel).read_text(encoding="utf-8"), rel)
        except RegionError as e:
            raise LabError(f"{spec_path}: {e}") from None
        for name in names:
            if name in owners:
                raise LabError(
                    f"{spec_path}: two solution regions are in functions named {name} "
                    f"({owners[name]} and {rel}); a stage could not say which it means"
                )
            owners[name] = rel
    stages: list[Stage] = []
    claimed: dict[str, int] = {}
    for number, table in enumerate(raw, start=1):
        where = f"{spec_path}: stage {number}"
        missing = [key for key in ("name", "regions", "passing") if key not in table]
        if missing:
            raise LabError(f"{where} lacks {', '.join(missing)}")
        regions = tuple(table["regions"])
        if not regions:
            raise LabError(f"{where} ({table['name']}) names no solution regions")
        for name in regions:
            if name not in owners:
                known = ", ".join(sorted(owners)) or "none"
                raise LabError(f"{where}: no solution region in a function {name} (regions: {known})")
            if name in claimed:
                raise LabError(f"{where}: region {name} already belongs to stage {claimed[name]}")
            claimed[name] = number
        needs = tuple(int(n) for n in table.get("needs", []))
        for n in needs:
            if not 1 <= n < number:
                raise LabError(f"{where} needs stage {n}, which is not an earlier stage")
        stages.append(Stage(number, str(table["name"]), regions, str(table["passing"]).strip(), needs))
    unclaimed = sorted(set(owners) - set(claimed))
    if raw and unclaimed:
        raise LabError(f"{spec_path}: solution regions in no stage: {', '.join(unclaimed)}")
    return tuple(stages)


_MISTAKE_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_MISTAKE_TEXT = ("name", "region", "description", "old", "new")


def load_mistakes(lab: Lab, path: Path) -> Lab:
    """``lab`` with the planted mistakes of the file ``path`` (its ``[[mistakes]]`` tables)."""
    try:
        spec = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise LabError(f"lab {lab.number} has no planted mistakes: {path} does not exist") from None
    except tomllib.TOMLDecodeError as e:
        raise LabError(f"{path}: {e}") from None
    unknown = sorted(set(spec) - {"mistakes"})
    if unknown:
        raise LabError(f"{path}: unknown keys {', '.join(unknown)} (it holds [[mistakes]] tables only)")
    return replace(lab, mistakes=_load_mistakes(path, spec.get("mistakes", []), lab.stages))


def _load_mistakes(spec_path: Path, raw: object, stages: tuple[Stage, ...]) -> tuple[Mistake, ...]:
    """The ``[[mistakes]]`` tables, each checked against the stages: its region must be one its stage
    writes. Whether ``old`` is in that region's text is checked when the mistake is planted
    (``starter.plant_mistake``), so a mistake whose reference moved on fails the self-check."""
    if not isinstance(raw, list) or not all(isinstance(t, dict) for t in raw):
        raise LabError(f"{spec_path}: mistakes must be [[mistakes]] tables")
    regions = {name: stage.number for stage in stages for name in stage.regions}
    mistakes: list[Mistake] = []
    for index, table in enumerate(raw, start=1):
        where = f"{spec_path}: mistake {index}" + (
            f" ({table['name']})" if isinstance(table.get("name"), str) else ""
        )
        missing = [key for key in (*_MISTAKE_TEXT, "stage") if key not in table]
        if missing:
            raise LabError(f"{where} lacks {', '.join(missing)}")
        unknown = sorted(set(table) - {*_MISTAKE_TEXT, "stage", "tests"})
        if unknown:
            raise LabError(f"{where}: unknown keys {', '.join(unknown)}")
        wrong = [key for key in _MISTAKE_TEXT if not isinstance(table[key], str)]
        wrong += [
            key for key in _MISTAKE_TEXT if key not in wrong and key != "new" and not table[key].strip()
        ]
        if wrong:  # ``new`` may be empty: a mistake can be a line left out
            raise LabError(f"{where}: {', '.join(wrong)} must be non-empty strings")
        if not _MISTAKE_NAME.match(table["name"]):
            raise LabError(f"{where}: name must be lower-case words joined by hyphens, as a test id")
        if table["name"] in {m.name for m in mistakes}:
            raise LabError(f"{where}: another mistake is named {table['name']}")
        if table["old"] == table["new"]:
            raise LabError(f"{where}: new is the same as old, so nothing would be planted")
        stage = table["stage"]
        if not isinstance(stage, int) or stage not in {s.number for s in stages}:
            valid = ", ".join(str(s.number) for s in stages) or "none"
            raise LabError(f"{where}: stage {stage!r} is not one of the lab's stages ({valid})")
        if table["region"] not in regions:
            raise LabError(f"{where}: no solution region in a function {table['region']}")
        if regions[table["region"]] != stage:
            raise LabError(
                f"{where}: region {table['region']} belongs to stage {regions[table['region']]}, not stage {stage}"
            )
        tests = table.get("tests", [])
        if not isinstance(tests, list) or not all(
            isinstance(t, str) and t.startswith("test_") for t in tests
        ):
            raise LabError(f"{where}: tests must be a list of graded tests' names (test_...)")
        mistakes.append(
            Mistake(
                table["name"],
                stage,
                table["region"],
                " ".join(table["description"].split()),
                table["old"],
                table["new"],
                tuple(tests),
            )
        )
    return tuple(mistakes)


def find(number: int, labs_root: Path = LABS_ROOT, repo_root: Path = REPO_ROOT) -> Lab:
    labs = discover(labs_root, repo_root)
    for lab in labs:
        if lab.number == number:
            return lab
    valid = ", ".join(str(lab.number) for lab in labs) or "none yet"
    raise LabError(f"there is no lab {number} (labs: {valid})")
