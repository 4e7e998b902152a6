"""A grading's overlay keeps the checkout's compiled modules, so its Python need not compile the
whole package again; a file the grading puts in place of the reference's loses its compiled copy,
even one written in the same second and of the same size (which Python's own check would miss).
The overlay's files are links to the checkout's, so a replaced file must leave the checkout's alone."""

from __future__ import annotations

import os
import py_compile
import subprocess
import sys

import pytest

from kafka_lite.grading.grader import copy_package, replace_file

pytestmark = pytest.mark.unit


def _value_imported(overlay) -> str:
    env = {**os.environ, "PYTHONPATH": str(overlay), "PYTHONDONTWRITEBYTECODE": "1"}
    code = "import toy.m; print(toy.m.X, toy.m.__cached__)"
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout


@pytest.fixture
def package(tmp_path):
    root = tmp_path / "checkout" / "toy"
    root.mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "m.py").write_text("X = 1\n")
    py_compile.compile(str(root / "m.py"), doraise=True)
    return root


def test_the_overlay_reads_the_checkouts_compiled_modules(package, tmp_path):
    overlay = tmp_path / "overlay"
    copy_package(package, overlay)
    # Python takes the copied one as valid: it names the copy's source time and size. (The
    # copy's source now says otherwise, behind Python's back, so the value tells which was run.)
    source = overlay / "toy" / "m.py"
    stat = source.stat()
    source.unlink()
    source.write_text("X = 3\n")
    os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert _value_imported(overlay).split()[0] == "1", "the overlay compiled its copy again"


def test_a_replaced_file_is_compiled_anew_even_in_the_same_second_and_size(package, tmp_path):
    overlay = tmp_path / "overlay"
    copy_package(package, overlay)
    replaced = overlay / "toy" / "m.py"
    stat = replaced.stat()
    replace_file(replaced, b"X = 2\n")  # the same size...
    os.utime(replaced, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # ...and the same time
    assert _value_imported(overlay).split()[0] == "2"


def test_a_replaced_file_leaves_the_checkouts_file_and_compiled_copy_as_they_were(package, tmp_path):
    overlay = tmp_path / "overlay"
    copy_package(package, overlay)
    compiled = sorted((package / "__pycache__").glob("m.*.pyc"))
    before = [c.read_bytes() for c in compiled]
    replace_file(overlay / "toy" / "m.py", b"X = 4\n")
    assert (package / "m.py").read_text() == "X = 1\n"
    assert compiled and [c.read_bytes() for c in compiled] == before
    assert _value_imported(package.parent).split()[0] == "1"
    assert _value_imported(overlay).split()[0] == "4"
