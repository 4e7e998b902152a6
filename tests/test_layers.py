"""Every import in kafka_lite/ points down the layers of ``kafka_lite/layers.toml``, lazy ones included.

The checker reads each module's syntax tree: ``import x`` and ``from x import y`` anywhere (top level,
inside functions, under ``TYPE_CHECKING``), relative imports, ``importlib.import_module`` and
``__import__`` calls, and the lazy-export tables a package's ``__getattr__`` reads (``_EXPORTS``:
name -> module). A failure names the file, the line and the rule the import breaks.
"""

from __future__ import annotations

import ast
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "kafka_lite"
LAYERS_FILE = ROOT / PACKAGE / "layers.toml"
ANYTHING = "*"


# -- the rules -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Layer:
    packages: tuple[str, ...]
    may_import: tuple[str, ...]

    @property
    def name(self) -> str:
        return ", ".join(f"{p}/" for p in self.packages)

    def describe(self) -> str:
        if ANYTHING in self.may_import:
            return f"layer '{self.name}' may import anything"
        allowed = ", ".join(f"{p}/" for p in self.may_import) or "nothing of ours"
        return f"layer '{self.name}' may import {allowed} (and itself) only"


@dataclass(frozen=True)
class Exception_:
    importer: str
    imports: str
    reason: str


def _within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


@dataclass(frozen=True)
class Rules:
    layers: tuple[Layer, ...]
    front_door: str
    front_door_may_import: tuple[str, ...]
    exceptions: tuple[Exception_, ...]
    top_only_dependencies: tuple[str, ...] = ()
    confined_dependencies: tuple[
        tuple[str, str], ...
    ] = ()  # (third-party module, the package that may import it)

    @classmethod
    def load(cls, path: Path = LAYERS_FILE) -> Rules:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        return cls.from_dict(data)

    @classmethod
    def from_dict(cls, data: dict) -> Rules:
        layers = tuple(Layer(tuple(d["packages"]), tuple(d["may_import"])) for d in data["layer"])
        door = data["front_door"]
        exceptions = tuple(
            Exception_(e["importer"], e["imports"], e["reason"]) for e in data.get("exception", [])
        )
        return cls(
            layers,
            door["module"],
            tuple(door["may_import"]),
            exceptions,
            tuple(data.get("top_only_dependencies", ())),
            tuple(data.get("confined_dependencies", {}).items()),
        )

    def layer_of(self, package: str) -> Layer | None:
        return next((layer for layer in self.layers if package in layer.packages), None)

    @staticmethod
    def package_of(module: str) -> str:
        """``kafka_lite.log.log`` -> ``log``; the front door ``kafka_lite`` itself -> ``""``."""
        parts = module.split(".")
        return parts[1] if len(parts) > 1 else ""

    def _may(self, importer_package: str, target_package: str) -> bool:
        if importer_package == target_package:
            return True
        if importer_package == "":
            return target_package in self.front_door_may_import
        layer = self.layer_of(importer_package)
        if layer is None:
            return False
        if ANYTHING in layer.may_import:
            return True
        if target_package == "":  # the front door loads its exports: it counts as all of them
            return all(p in layer.may_import for p in self.front_door_may_import)
        return target_package in layer.may_import

    def broken_rule(self, importer: str, target: str) -> str | None:
        """None when ``importer`` may import ``target`` (dotted module names); else the rule it breaks."""
        source, dest = self.package_of(importer), self.package_of(target)
        if self._may(source, dest):
            return None
        if any(_within(importer, e.importer) and _within(target, e.imports) for e in self.exceptions):
            return None
        if source == "":
            allowed = ", ".join(f"{p}/" for p in self.front_door_may_import)
            return f"the front door {self.front_door} may import {allowed} only"
        layer = self.layer_of(source)
        if layer is None:
            return f"package {source}/ is in no layer of {LAYERS_FILE.name}"
        if dest == "":
            return f"{layer.describe()}; importing the front door {self.front_door} loads its client exports"
        return layer.describe()


# -- the imports of one module ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Import:
    line: int
    target: str  # a dotted module name inside kafka_lite, or an error text for what cannot be resolved
    how: str
    unresolved: bool = False


class ModuleImports:
    """The kafka_lite modules one source file imports, however it imports them."""

    def __init__(self, source: str, module: str, is_package: bool, modules: set[str]) -> None:
        self.tree = ast.parse(source)
        self.module = module
        self.package = module if is_package else module.rpartition(".")[0]
        self.modules = modules  # every module and package name of the tree, to tell one from a name

    def _ours(self, name: str) -> bool:
        return _within(name, PACKAGE)

    def _from_root(self, names: list[str], exports: dict[str, str]) -> list[str]:
        """``from kafka_lite import X``: a subpackage, an exported name (its module), or the door itself."""
        targets = []
        for name in names:
            if f"{PACKAGE}.{name}" in self.modules:
                targets.append(f"{PACKAGE}.{name}")
            elif name in exports:
                targets.append(exports[name])
            else:
                targets.append(PACKAGE)
        return targets

    @staticmethod
    def _relative(package: str, level: int, module: str | None) -> str:
        """What ``from {'.' * level}{module} import ...`` names, written in ``package``."""
        parts = package.split(".")
        return ".".join([*parts[: len(parts) - (level - 1)], *([module] if module else [])])

    def _call_target(self, call: ast.Call) -> tuple[str | None, bool]:
        """The module an ``import_module(...)``/``__import__(...)`` call names: (name, resolved)."""
        if not call.args:
            return None, False
        arg = call.args[0]
        package = next((k.value for k in call.keywords if k.arg == "package"), None)
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            name = arg.value
            if name.startswith("."):
                base = (
                    package.value
                    if isinstance(package, ast.Constant)
                    else self.package
                    if isinstance(package, ast.Name) and package.id in ("__name__", "__package__")
                    else None
                )
                if base is None:
                    return name, False
                level = len(name) - len(name.lstrip("."))
                name = self._relative(base, level, name.lstrip("."))
            return name, True
        if isinstance(arg, ast.JoinedStr):  # f"{__name__}.{module}": resolvable up to the first unknown part
            prefix = ""
            for part in arg.values:
                if isinstance(part, ast.Constant):
                    prefix += part.value
                elif isinstance(part.value, ast.Name) and part.value.id == "__name__":
                    prefix += self.module
                elif isinstance(part.value, ast.Name) and part.value.id == "__package__":
                    prefix += self.package
                else:
                    break
            return prefix.rstrip("."), False
        return None, False

    def lazy_tables(self) -> dict[str, ast.Dict]:
        """Module-level ``{name: "module"}`` dicts that a module-level ``__getattr__`` reads."""
        getattr_fn = next(
            (n for n in self.tree.body if isinstance(n, ast.FunctionDef) and n.name == "__getattr__"), None
        )
        if getattr_fn is None:
            return {}
        read = {n.id for n in ast.walk(getattr_fn) if isinstance(n, ast.Name)}
        tables = {}
        for node in self.tree.body:
            targets = (
                node.targets
                if isinstance(node, ast.Assign)
                else [node.target]
                if isinstance(node, ast.AnnAssign)
                else []
            )
            value = getattr(node, "value", None)
            if not isinstance(value, ast.Dict) or not value.values:
                continue
            if not all(isinstance(v, ast.Constant) and isinstance(v.value, str) for v in value.values):
                continue
            for t in targets:
                if isinstance(t, ast.Name) and t.id in read:
                    tables[t.id] = value
        return tables

    def lazy_exports(self) -> dict[str, tuple[str, int]]:
        """name -> (module, line) of every lazy table; a value not under kafka_lite is relative to this package."""
        exports = {}
        for table in self.lazy_tables().values():
            for key, value in zip(table.keys, table.values, strict=True):
                module = value.value
                if not self._ours(module):
                    module = f"{self.package}.{module.lstrip('.')}"
                name = key.value if isinstance(key, ast.Constant) else "?"
                exports[name] = (module, value.lineno)
        return exports

    def imports(self, root_exports: dict[str, str]) -> list[Import]:
        found: list[Import] = []
        has_tables = bool(self.lazy_tables())
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if self._ours(alias.name):
                        found.append(Import(node.lineno, alias.name, f"import {alias.name}"))
            elif isinstance(node, ast.ImportFrom):
                names = [a.name for a in node.names]
                if node.level:
                    base = self._relative(self.package, node.level, node.module)
                    how = f"from {'.' * node.level}{node.module or ''} import {', '.join(names)}"
                else:
                    base = node.module or ""
                    how = f"from {base} import {', '.join(names)}"
                if not self._ours(base):
                    continue
                targets = self._from_root(names, root_exports) if base == PACKAGE else [base]
                found.extend(Import(node.lineno, t, how) for t in targets)
            elif isinstance(node, ast.Call):
                func = node.func
                name = (
                    func.attr
                    if isinstance(func, ast.Attribute)
                    else func.id
                    if isinstance(func, ast.Name)
                    else ""
                )
                if name not in ("import_module", "__import__"):
                    continue
                target, resolved = self._call_target(node)
                how = f"{name}(...)"
                if resolved:
                    if target and self._ours(target):
                        found.append(Import(node.lineno, target, how))
                elif target and Rules.package_of(target) and target not in (self.module, self.package):
                    if self._ours(target):  # f"kafka_lite.server.{name}": at least that package
                        found.append(Import(node.lineno, target, how))
                elif target and target == self.package != self.module:
                    # f"kafka_lite.cli.{name}" in kafka_lite.cli.main: a module of its own package
                    found.append(Import(node.lineno, target, how))
                elif has_tables:
                    continue  # it reads this module's lazy table, checked entry by entry below
                elif not target or self._ours(target):
                    found.append(
                        Import(node.lineno, "a module the check cannot resolve", how, unresolved=True)
                    )
        for name, (module, line) in self.lazy_exports().items():
            found.append(Import(line, module, f"lazy export {name!r} -> {module}"))
        return found


# -- the whole tree --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Violation:
    path: str
    line: int
    importer: str
    target: str
    how: str
    rule: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.importer} -> {self.target} ({self.how}): {self.rule}"


def module_name(package_dir: Path, path: Path) -> tuple[str, bool]:
    rel = path.relative_to(package_dir.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


def check_tree(package_dir: Path, rules: Rules) -> list[Violation]:
    """Every import in the package at ``package_dir`` (a ``kafka_lite`` directory) checked against ``rules``."""
    files = sorted(package_dir.rglob("*.py"))
    names = {path: module_name(package_dir, path) for path in files}
    modules = {name for name, _ in names.values()}
    front = package_dir / "__init__.py"
    root_exports = {}
    if front.exists():
        door = ModuleImports(front.read_text(encoding="utf-8"), PACKAGE, True, modules)
        root_exports = {k: m for k, (m, _) in door.lazy_exports().items()}
    violations = []
    for path in files:
        module, is_package = names[path]
        rel = str(path.relative_to(package_dir.parent))
        package = Rules.package_of(module)
        if package and rules.layer_of(package) is None:
            violations.append(Violation(rel, 1, module, "-", "package", f"package {package}/ is in no layer"))
        found = ModuleImports(path.read_text(encoding="utf-8"), module, is_package, modules)
        for imp in found.imports(root_exports):
            if imp.unresolved:
                violations.append(
                    Violation(
                        rel, imp.line, module, imp.target, imp.how, "a dynamic import must name its module"
                    )
                )
                continue
            rule = rules.broken_rule(module, imp.target)
            if rule is not None:
                violations.append(Violation(rel, imp.line, module, imp.target, imp.how, rule))
    return violations


def _absolute_imports(path: Path) -> list[tuple[int, str]]:
    """``(line, dotted name)`` for each absolute import in the file, third-party ones included."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = (
            [a.name for a in node.names]
            if isinstance(node, ast.Import)
            else [node.module or ""]
            if isinstance(node, ast.ImportFrom) and not node.level
            else []
        )
        found += [(node.lineno, name) for name in names]
    return found


def _runtime_modules(package_dir: Path, rules: Rules) -> list[tuple[Path, str]]:
    """Every module outside the top layers, with its dotted name."""
    modules = []
    for path in sorted(package_dir.rglob("*.py")):
        module, _ = module_name(package_dir, path)
        layer = rules.layer_of(Rules.package_of(module))
        if layer is None or ANYTHING not in layer.may_import:
            modules.append((path, module))
    return modules


def top_only_imports(package_dir: Path, rules: Rules) -> list[str]:
    """``file:line: module`` for each import of a top-only dependency (graphviz) outside the top layers."""
    found = []
    for path, _ in _runtime_modules(package_dir, rules):
        for line, name in _absolute_imports(path):
            if name.split(".")[0] in rules.top_only_dependencies:
                found.append(f"{path.relative_to(package_dir.parent)}:{line}: {name}")
    return found


def confined_imports(package_dir: Path, rules: Rules) -> list[str]:
    """``file:line: module`` for each import of a confined dependency (fastapi) outside the top layers
    and the one package named for it."""
    confined = dict(rules.confined_dependencies)
    found = []
    for path, module in _runtime_modules(package_dir, rules):
        for line, name in _absolute_imports(path):
            owner = confined.get(name.split(".")[0])
            if owner is not None and not _within(module, owner):
                found.append(f"{path.relative_to(package_dir.parent)}:{line}: {name} (only {owner} may)")
    return found


# -- the tests -------------------------------------------------------------------------------------------


def test_every_import_in_kafka_lite_points_down_the_layers():
    violations = check_tree(ROOT / PACKAGE, Rules.load())
    assert not violations, "imports the layers do not allow:\n" + "\n".join(map(str, violations))


def test_no_runtime_module_imports_graphviz():
    rules = Rules.load()
    assert "graphviz" in rules.top_only_dependencies
    found = top_only_imports(ROOT / PACKAGE, rules)
    assert not found, "only cli/, diagrams/ and grading/ may import these:\n" + "\n".join(found)


def test_the_rest_apis_web_framework_is_imported_only_by_the_rest_package():
    rules = Rules.load()
    assert dict(rules.confined_dependencies)["fastapi"] == "kafka_lite.connect.runtime.rest"
    found = confined_imports(ROOT / PACKAGE, rules)
    assert not found, "imports of a dependency outside the package it is confined to:\n" + "\n".join(found)


def test_the_confined_check_finds_fastapi_elsewhere_in_connect(upward_tree):
    (upward_tree / "connect" / "runtime" / "rest").mkdir(parents=True)
    (upward_tree / "connect" / "runtime" / "rest" / "app.py").write_text("import fastapi\n")
    (upward_tree / "connect" / "runtime" / "worker.py").write_text("x = 1\nfrom fastapi import FastAPI\n")
    assert confined_imports(upward_tree, Rules.load()) == [
        "kafka_lite/connect/runtime/worker.py:2: fastapi (only kafka_lite.connect.runtime.rest may)"
    ]


def test_the_top_only_check_finds_graphviz_in_a_runtime_layer(upward_tree):
    (upward_tree / "log" / "pictures.py").write_text("def f():\n    import graphviz.backend\n")
    assert top_only_imports(upward_tree, Rules.load()) == ["kafka_lite/log/pictures.py:2: graphviz.backend"]


def test_the_layer_table_is_well_formed():
    rules = Rules.load()
    listed = [p for layer in rules.layers for p in layer.packages]
    assert len(listed) == len(set(listed)), "a package is in two layers"
    for layer in rules.layers:
        for target in layer.may_import:
            assert target == ANYTHING or target in listed, f"{layer.name} may import unknown {target}/"
        # each line may import only lines above it
        above = {p for other in rules.layers[: rules.layers.index(layer)] for p in other.packages}
        if ANYTHING not in layer.may_import:
            assert set(layer.may_import) <= above, f"{layer.name} imports sideways or up"
    top = {p for layer in rules.layers if ANYTHING in layer.may_import for p in layer.packages}
    assert top == {"cli", "diagrams", "grading", "testing", "jepsen"}
    for layer in rules.layers:
        assert not top & set(layer.may_import), f"the runtime layer {layer.name} may import {top}"
    for e in rules.exceptions:
        assert e.reason.strip(), f"the exception {e.importer} -> {e.imports} gives no reason"
        assert Rules.package_of(e.imports) not in top


def test_every_package_of_kafka_lite_is_in_a_layer():
    rules = Rules.load()
    packages = {p.name for p in (ROOT / PACKAGE).iterdir() if (p / "__init__.py").exists()}
    packages |= {p.stem for p in (ROOT / PACKAGE).glob("*.py") if p.name != "__init__.py"}
    assert {p for p in packages if rules.layer_of(p) is None} == set()


# A synthetic kafka_lite with every kind of upward import; each must be reported at its line.
UPWARD = {
    "__init__.py": '_EXPORTS = {"KafkaServer": "kafka_lite.server.kafka_server", "Admin": "kafka_lite.clients.admin"}\n'
    "def __getattr__(name):\n"
    "    import importlib\n"
    "    return getattr(importlib.import_module(_EXPORTS[name]), name)\n",
    "common/__init__.py": "",
    "common/time.py": "import kafka_lite.log.log\n",
    "common/config.py": "",
    "utils/__init__.py": "",
    "utils/scheduler.py": "from kafka_lite.common.time import Time\nfrom kafka_lite.common.config import ConfigDef\n",
    "log/__init__.py": "",
    "log/log.py": "import os\n"
    "from kafka_lite.common.time import Time\n"
    "from kafka_lite.server.partition import Partition\n"
    "def f():\n"
    "    from ..controller import kafka_controller\n"
    "    import importlib\n"
    "    return importlib.import_module('kafka_lite.diagrams.log')\n"
    "def g():\n"
    "    from kafka_lite import KafkaServer\n"
    "    return __import__('kafka_lite.cli.main')\n",
    "log/dynamic.py": "import importlib\ndef h(name):\n    return importlib.import_module(f'kafka_lite.{name}')\n",
    "log/siblings.py": "import importlib\ndef s(name):\n    return importlib.import_module(f'kafka_lite.log.{name}')\n",
    "clients/__init__.py": "",
    "clients/admin.py": "from kafka_lite.log.log import Log\nfrom . import network_client\n",
    "clients/network_client.py": "from kafka_lite.network.selector import Selector\n",
    "network/__init__.py": "",
    "network/selector.py": "",
    "zk/__init__.py": "import importlib\n"
    "_EXPORTS = {\n"
    '    "ZkUtils": "zk_utils",\n'
    '    "KafkaApis": "kafka_lite.server.kafka_apis",\n'
    "}\n"
    "def __getattr__(name):\n"
    "    return getattr(importlib.import_module(f'{__name__}.{_EXPORTS[name]}'), name)\n",
    "zk/zk_utils.py": "",
    "controller/__init__.py": "",
    "controller/kafka_controller.py": "",
    "server/__init__.py": "",
    "server/partition.py": "from kafka_lite.controller import kafka_controller\nfrom kafka_lite.log.log import Log\n",
    "server/kafka_server.py": "",
    "server/kafka_apis.py": "",
    "diagrams/__init__.py": "import graphviz\nfrom kafka_lite.server.partition import Partition\n",
    "diagrams/log.py": "",
    "cli/__init__.py": "",
    "cli/main.py": "from kafka_lite.diagrams import log\n",
}


@pytest.fixture
def upward_tree(tmp_path):
    package = tmp_path / PACKAGE
    for name, text in UPWARD.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(text, encoding="utf-8")
    return package


def test_the_checker_reports_every_kind_of_upward_import_at_its_line(upward_tree):
    found = {(v.path, v.line, v.target) for v in check_tree(upward_tree, Rules.load())}
    expected = {
        ("kafka_lite/__init__.py", 1, "kafka_lite.server.kafka_server"),  # the front door's lazy table
        ("kafka_lite/common/time.py", 1, "kafka_lite.log.log"),  # import x
        ("kafka_lite/utils/scheduler.py", 2, "kafka_lite.common.config"),  # beyond the stated exception
        ("kafka_lite/log/log.py", 3, "kafka_lite.server.partition"),  # from x import y
        ("kafka_lite/log/log.py", 5, "kafka_lite.controller"),  # relative, inside a function
        ("kafka_lite/log/log.py", 7, "kafka_lite.diagrams.log"),  # importlib.import_module
        ("kafka_lite/log/log.py", 9, "kafka_lite.server.kafka_server"),  # a name through the front door
        ("kafka_lite/log/log.py", 10, "kafka_lite.cli.main"),  # __import__
        ("kafka_lite/log/dynamic.py", 3, "a module the check cannot resolve"),
        ("kafka_lite/clients/admin.py", 1, "kafka_lite.log.log"),  # clients never reach into log/
        ("kafka_lite/zk/__init__.py", 4, "kafka_lite.server.kafka_apis"),  # a package's lazy table
    }
    assert found == expected


def test_a_violation_names_file_line_and_rule(upward_tree):
    (v,) = [v for v in check_tree(upward_tree, Rules.load()) if v.path == "kafka_lite/common/time.py"]
    assert str(v) == (
        "kafka_lite/common/time.py:1: kafka_lite.common.time -> kafka_lite.log.log (import kafka_lite.log.log): "
        "layer 'common/, utils/' may import nothing of ours (and itself) only"
    )
    (v,) = [v for v in check_tree(upward_tree, Rules.load()) if v.path == "kafka_lite/clients/admin.py"]
    assert "layer 'clients/' may import common/, utils/, network/ (and itself) only" in str(v)


def test_a_package_in_no_layer_is_reported(upward_tree):
    (upward_tree / "mystery").mkdir()
    (upward_tree / "mystery" / "__init__.py").write_text("")
    assert any("mystery/ is in no layer" in str(v) for v in check_tree(upward_tree, Rules.load()))


def test_an_exception_allows_exactly_what_it_names():
    rules = Rules.load()
    assert rules.broken_rule("kafka_lite.utils.scheduler", "kafka_lite.common.time") is None
    assert rules.broken_rule("kafka_lite.utils.scheduler", "kafka_lite.common.config") is not None
    assert rules.broken_rule("kafka_lite.tools.dump_log_segments", "kafka_lite.log.log_segment") is None
    assert rules.broken_rule("kafka_lite.tools.perf", "kafka_lite.log.log_segment") is not None
    assert rules.broken_rule("kafka_lite.tools.dump_log_segments", "kafka_lite.server.partition") is not None
