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

Every solution region of the lab's files belongs to exactly one stage. Labs are numbered 1, 2, 3 ...
in the order they were added; discovery checks that the numbers are exactly that.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
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
class Lab:
    number: int
    slug: str  # the folder name, e.g. lab01_record_batch
    title: str
    directory: Path
    files: tuple[str, ...]  # repo-relative paths of the modules the student edits
    time: str = ""
    builds_on: tuple[str, ...] = ()
    stages: tuple[Stage, ...] = ()

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


def find(number: int, labs_root: Path = LABS_ROOT, repo_root: Path = REPO_ROOT) -> Lab:
    labs = discover(labs_root, repo_root)
    for lab in labs:
        if lab.number == number:
            return lab
    valid = ", ".join(str(lab.number) for lab in labs) or "none yet"
    raise LabError(f"there is no lab {number} (labs: {valid})")
