"""Find the labs: ``labs/labNN_slug/`` folders, each with a ``lab.toml`` naming the files students edit.

No Kafka twin: lab bookkeeping for kafka_lite's course material.

A lab folder holds ``lab.toml`` (``number``, ``title``, ``files``: the reference modules whose
``# BEGIN SOLUTION`` regions the student writes), ``README.md`` (the handout) and graded tests
``test_*.py`` carrying ``pytest.mark.lab(N)`` and ``pytest.mark.points(k)``. Labs are numbered
1, 2, 3 ... in the order they were added; discovery checks that the numbers are exactly that.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

import kafka_lite

PACKAGE_ROOT = Path(kafka_lite.__file__).resolve().parent
REPO_ROOT = PACKAGE_ROOT.parent
LABS_ROOT = REPO_ROOT / "labs"


class LabError(Exception):
    """A lab that cannot be found, read or graded; the message says which and why."""


@dataclass(frozen=True)
class Lab:
    number: int
    slug: str  # the folder name, e.g. lab01_record_batch
    title: str
    directory: Path
    files: tuple[str, ...]  # repo-relative paths of the modules the student edits

    @property
    def handout(self) -> Path:
        return self.directory / "README.md"

    def tests(self) -> list[Path]:
        return sorted(self.directory.glob("test_*.py"))


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
    return Lab(int(spec["number"]), directory.name, str(spec["title"]), directory, files)


def find(number: int, labs_root: Path = LABS_ROOT, repo_root: Path = REPO_ROOT) -> Lab:
    labs = discover(labs_root, repo_root)
    for lab in labs:
        if lab.number == number:
            return lab
    valid = ", ".join(str(lab.number) for lab in labs) or "none yet"
    raise LabError(f"there is no lab {number} (labs: {valid})")
