"""Chapter 13's guide: each small history on the page yields the classes the page names for it, every
class the checker can report has one, the allowed set and the client_id table are the code's, and
the page's commands run as written.

Cheap on purpose: the histories are checked in process, the check command runs on one of the page's
own histories, and the run command is parsed, not run (the chapter's notebook runs that same
workload against a cluster, and ``tests/jepsen/test_run.py`` runs one in each mode)."""

from __future__ import annotations

import ast
import inspect
import json
import re
import shlex
import textwrap
from pathlib import Path

import pytest

from kafka_lite.jepsen import checker
from kafka_lite.jepsen.checker import allowed_error_types, analysis
from kafka_lite.jepsen.fault_proxy import NODE_CLIENT_IDS
from kafka_lite.jepsen.history import op_from_json

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "chapters" / "ch13_jepsen" / "index.md"
# A history the page checks: its marker (hidden on the rendered page) names the classes it yields,
# and the checker's options in brackets, right above the JSON lines; in a content tab (`=== "..."`)
# marker and block are indented alike.
MARKED = re.compile(
    r"^( *)<!-- history yields(?: \((\w+)\))?: ([^>]+?) -->\n\n\1```json\n(.*?\n)\1```", re.S | re.M
)


def text() -> str:
    return GUIDE.read_text(encoding="utf-8")


def section(heading: str) -> str:
    return text().split(f"\n{heading}\n", 1)[1].split("\n#", 1)[0]


def marked_histories() -> list[tuple[str, set[str], str]]:
    return [
        (option or "", {name.strip() for name in names.split(",")}, textwrap.dedent(block))
        for _, option, names, block in MARKED.findall(text())
    ]


def classes_the_checker_reports() -> set[str]:
    """Every class name ``analysis`` can put in its ``errors``, read from the checker's source: the
    keys of the ``errors`` dict ``_analysis`` builds, of the dicts the helpers it unpacks there
    return, the classes it adds by name, and the cycle classes of ``CYCLE_SPECS``."""
    module = ast.parse(inspect.getsource(checker))
    functions = {node.name: node for node in module.body if isinstance(node, ast.FunctionDef)}

    def keys(d: ast.Dict) -> set[str]:
        names = {k.value for k in d.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
        for k, v in zip(d.keys, d.values, strict=True):
            if k is None:  # **helper(...): the keys of the dict it returns
                assert isinstance(v, ast.Call) and isinstance(v.func, ast.Name), ast.unparse(v)
                returned = [r.value for r in ast.walk(functions[v.func.id]) if isinstance(r, ast.Return)]
                assert returned and all(isinstance(r, ast.Dict) for r in returned), v.func.id
                names |= set().union(*map(keys, returned))
        return names

    names = {name for name, _, _ in checker.CYCLE_SPECS}  # cycle_cases's, one per spec
    for node in ast.walk(functions["_analysis"]):
        if isinstance(node, ast.AnnAssign) and ast.unparse(node.target) == "errors":
            assert isinstance(node.value, ast.Dict)
            names |= keys(node.value)
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
            if ast.unparse(node.value) == "errors":
                names.add(node.slice.value)
        elif isinstance(node, ast.Call) and ast.unparse(node.func) == "errors.update":
            (call,) = node.args
            assert ast.unparse(call.func) == "cycle_cases", "a class from elsewhere: read it here"
    return names


def ops_of(block: str) -> list:
    ops = [op_from_json(json.loads(line)) for line in block.strip().splitlines()]
    assert [op.index for op in ops] == list(range(len(ops))), "the lines are a whole history, in order"
    return ops


def test_the_checkers_classes_are_read_whole_from_its_source():
    # Every class the checker allows or condenses is among those read, and a few it only reports.
    reported = classes_the_checker_reports()
    assert allowed_error_types(ww_deps=True, subscribe=True) | set(checker._CONDENSE) <= reported
    assert {"unseen", "lost-write", "G1a", "precommitted-read", "empty-transaction-graph"} <= reported


def test_the_page_shows_a_history_for_each_class_it_teaches_by_example():
    shown = set().union(*(names for _, names, _ in marked_histories()))
    assert classes_the_checker_reports() - shown == set()


@pytest.mark.parametrize(
    "option,names,block",
    [
        pytest.param(option, names, block, id=",".join(sorted(names)) + (f"({option})" if option else ""))
        for option, names, block in marked_histories()
    ],
)
def test_each_history_yields_exactly_the_classes_the_page_names(option, names, block):
    assert option in ("", "ww_deps"), option
    errors = analysis(ops_of(block), ww_deps=option == "ww_deps")["errors"]
    assert set(errors) == names


def test_the_real_lines_are_operations_the_history_reader_accepts():
    block = section("## The history").split("```json\n", 1)[1].split("```", 1)[0]
    ops = [op_from_json(json.loads(line)) for line in block.strip().splitlines()]
    assert {op.f for op in ops} == {"send", "poll", "kill"}
    assert {op.type for op in ops} == {"invoke", "ok", "info"}
    assert any(op.rebalance_log for op in ops)


def test_the_allowed_set_is_the_checkers():
    allowed = section("### What is allowed, and why")
    items = allowed.split("\n- ")[1:]

    def named(item: str) -> set[str]:
        # The bold names before the colon, but the one that says when ("when consumers **subscribe**").
        return set(re.findall(r"\*\*([\w-]+)\*\*", item.split(":", 1)[0])) - {"subscribe"}

    always = set().union(*(named(i) for i in items if ", always" in i.split(":", 1)[0]))
    assert always == allowed_error_types()
    under = {
        "subscribe": set().union(*(named(i) for i in items if "**subscribe**" in i.split(":", 1)[0])),
        "ww_deps": set().union(*(named(i) for i in items if "ww edges are inferred" in i.split(":", 1)[0])),
    }
    assert always | under["subscribe"] == allowed_error_types(subscribe=True)
    assert always | under["ww_deps"] == allowed_error_types(ww_deps=True)


def test_the_client_id_table_is_the_proxys():
    rows = re.findall(r"^\| `(.+?)` \| (.+?) \|$", section("### Cutting the network without root"), re.M)
    assert rows == [(pattern.pattern, who) for pattern, who in NODE_CLIENT_IDS]


def test_the_delay_findings_commands_parse_as_written():
    """The commands of the delay's finding: the same run, under 0.11's protocol and with KIP-890, each
    the command a row of the finding's table records, with the verdict the page gives it."""
    import json

    from kafka_lite.cli.main import build_parser

    blocks = re.findall(r"```sh\n(.*?)```", section("### A finding: Kafka's own transactions, delayed"), re.S)
    commands = [block.strip() for block in blocks if block.startswith("kafka-lite jepsen run")]
    old, kip_890 = (build_parser().parse_args(shlex.split(command)[1:]) for command in commands)
    for args in (old, kip_890):
        assert (args.jepsen_command, args.txn, sorted(args.faults), args.seed) == ("run", True, ["delay"], 1)
    assert (old.kip_890, kip_890.kip_890) == (False, True)
    rows = json.loads((ROOT / "benchmarks" / "results" / "jepsen_delay.json").read_text())["rows"]
    verdicts = {row["command"]: (row["valid"], row["bad_error_types"]) for row in rows}
    assert [verdicts[command] for command in commands] == [(False, ["G1a"]), (True, [])]


def commands() -> list[str]:
    blocks = re.findall(r"```sh\n(.*?)```", section("## Running it"), re.S)
    return [line for block in blocks for line in block.strip().splitlines()]


def test_the_run_command_parses_as_written_and_writes_where_check_reads():
    from kafka_lite.cli.main import build_parser

    run, check, _ = commands()
    args = build_parser().parse_args(shlex.split(run)[1:])
    # tests/jepsen/test_run.py runs it as written, on the Jepsen tests' ZooKeeper-mode cluster
    assert (args.jepsen_command, args.mode, sorted(args.faults), args.seconds, args.seed) == (
        "run", "zookeeper", ["kill", "pause"], 16, 13
    )  # fmt: skip
    checked = build_parser().parse_args(shlex.split(check)[1:])
    assert checked.history == args.dir / "history.jsonl"


def test_the_check_command_runs_as_written_and_a_subscribe_in_the_history_allows_a_step_back(
    tmp_path, monkeypatch, capsys
):
    # The page's nonmonotonic-poll history, saved where the run leaves its history and checked as
    # the page says: not valid as it stands (nobody subscribed), valid with --subscribe, and valid as
    # written once the history itself holds a subscribe.
    from kafka_lite.cli.main import main

    (block,) = [b for _, names, b in marked_histories() if names == {"nonmonotonic-poll"}]
    monkeypatch.chdir(tmp_path)
    saved = tmp_path / ".kafka-lite-jepsen" / "history.jsonl"
    saved.parent.mkdir()
    _, check, _ = commands()
    argv = shlex.split(check)[1:]
    assert shlex.split(check)[0] == "kafka-lite" and "--subscribe" not in argv

    saved.write_text(block, encoding="utf-8")
    assert main(argv) == 1
    assert "not valid: nonmonotonic-poll" in capsys.readouterr().out
    assert main([*argv, "--subscribe"]) == 0
    capsys.readouterr()

    subscribe = [{"process": 1, "type": t, "f": "subscribe", "value": [0]} for t in ("invoke", "ok")]
    ops = subscribe + [json.loads(line) for line in block.strip().splitlines()]
    saved.write_text("".join(json.dumps({**op, "index": i, "time": i}) + "\n" for i, op in enumerate(ops)))
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "nonmonotonic-poll" in out and "valid: no anomaly outside the allowed set" in out


def test_the_cut_command_runs_as_written_on_the_runs_history(tmp_path, monkeypatch, capsys):
    # A history of keys 1 and 3 where the run leaves it: the cut keeps key 3's send and the poll's
    # record of it, drops the send to key 1, and says how many operations it kept.
    from kafka_lite.cli.main import main

    monkeypatch.chdir(tmp_path)
    _, check, cut = commands()
    argv = shlex.split(cut)[1:]
    saved = tmp_path / shlex.split(check)[-1]
    saved.parent.mkdir()
    ops = [
        ("invoke", 0, "send", [["send", 1, 10]]), ("ok", 0, "send", [["send", 1, [0, 10]]]),
        ("invoke", 1, "send", [["send", 3, 30]]), ("ok", 1, "send", [["send", 3, [0, 30]]]),
        ("invoke", 2, "poll", [["poll"]]), ("ok", 2, "poll", [["poll", {"1": [[0, 10]], "3": [[0, 30]]}]]),
    ]  # fmt: skip
    saved.write_text("".join(json.dumps({"index": i, "type": t, "process": p, "f": f, "value": v, "time": i}) + "\n"
                             for i, (t, p, f, v) in enumerate(ops)))  # fmt: skip
    assert main(argv) == 0
    assert "4 of 6 operations, keys 3" in capsys.readouterr().out
    kept = [
        json.loads(line)["value"]
        for line in (tmp_path / argv[argv.index("--out") + 1]).read_text().splitlines()
    ]
    assert kept == [[["send", 3, 30]], [["send", 3, [0, 30]]], [["poll"]], [["poll", {"3": [[0, 30]]}]]]


def test_the_book_map_has_the_chapter_and_its_notebook_but_none_of_its_modules():
    # The page's "Beyond the book" note (the hook's, for a tool) says so: of the modules only lab 20's
    # carries a Book line, the chapter does count.
    from mkdocs_hooks.book_map import build_book_map, render_beyond_the_book

    book_map = build_book_map()
    assert book_map.guides[13] == "chapters/ch13_jepsen/index.md"
    assert [n.path for n in book_map.notebooks if n.chapter == 13] == [
        "chapters/ch13_jepsen/jepsen_run.ipynb"
    ]
    assert [path for path in book_map.modules if path.startswith("kafka_lite/jepsen/")] == [
        "kafka_lite/jepsen/checker.py"
    ]  # lab 20's
    assert [lab.files for lab in book_map.labs if lab.number == 20] == [["kafka_lite/jepsen/checker.py"]]
    assert "<!-- beyond-the-book: a tool -->" in text()
    note = " ".join(render_beyond_the_book(book_map.book, "../../", tool=True).split())
    assert "the book map lists only the one a lab has you write" in note and "ends with chapter 10" in note
