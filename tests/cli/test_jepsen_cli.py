"""``kafka-lite jepsen``: the result map as a table and an exit code; a history it cannot read, and
arguments it cannot use, named in one line."""

from __future__ import annotations

import json
import types

import pytest

import kafka_lite.jepsen
from kafka_lite.cli import jepsen as jepsen_cli
from kafka_lite.cli.main import main
from kafka_lite.common.time import MockTime
from kafka_lite.jepsen.history import HistoryWriter

pytestmark = pytest.mark.unit


def _run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["jepsen", *args])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


@pytest.fixture
def history_file(tmp_path):
    """A history of one send and one poll that read it."""
    path = tmp_path / "history.jsonl"
    time = MockTime()
    with HistoryWriter(path, time) as writer:
        send = writer.invoke(0, "send", [("send", 0, 1)])
        writer.complete(send, "ok", [("send", 0, (0, 1))])
        poll = writer.invoke(1, "poll", [("poll",)])
        writer.complete(poll, "ok", [("poll", {0: [(0, 1), (1, 1)]})])
    return path


@pytest.fixture
def checker(monkeypatch):
    """A checker that answers with the result map a test sets, and records how it was asked."""
    fake = types.SimpleNamespace(result=None, calls=[])

    def check(history, **options):
        fake.calls.append((len(history), options))
        return fake.result

    def analysis(history, **options):
        fake.calls.append(("analysis", len(history), options))
        return {}

    fake.check = check
    fake.analysis = analysis
    monkeypatch.setattr(kafka_lite.jepsen, "checker", fake, raising=False)
    return fake


def _result(valid: bool, errors: dict, bad: list) -> dict:
    return {
        "valid": valid,
        "error_types": sorted(errors),
        "bad_error_types": bad,
        "errors": errors,
        "stats": {"ops": 2, "ok": 2, "info": 0, "fail": 0, "nemesis": 0},
        "worst_realtime_lag": {"process": 1, "key": 0, "lag_s": 0.25, "time_s": 1.5},
        "info_txn_causes": [],
    }


def test_an_invalid_history_prints_each_class_with_its_worst_example_and_exits_1(
    capsys, history_file, checker
):
    checker.result = _result(False, {
        "duplicate": {"count": 1, "errs": [{"key": 0, "value": 1, "count": 2, "offsets": [0, 1]}]},
        "poll-skip": {"count": 2, "errs": [{"key": 0, "delta": 2, "skipped": [5], "ops": [3, 9]},
                                           {"key": 0, "delta": 4, "skipped": [5, 6, 7], "ops": [11, 13]}]},
    }, ["duplicate"])  # fmt: skip

    code, out, _ = _run(capsys, "check", str(history_file), "--subscribe")

    assert code == 1
    assert checker.calls == [(4, {"ww_deps": False, "subscribe": True, "txn": False})]
    lines = out.splitlines()
    [duplicate] = [line for line in lines if "│ duplicate" in line]
    assert [cell.strip() for cell in duplicate.split("│")[1:-1]] == [
        "duplicate", "1", "no", "key 0, value 1, offsets 0, 1, count 2"
    ]  # fmt: skip
    [skip] = [
        line for line in lines if "│ poll-skip" in line
    ]  # allowed under subscribe; its largest gap shown
    assert [cell.strip() for cell in skip.split("│")[1:-1]] == [
        "poll-skip", "2", "yes", "key 0, delta 4, skipped 5, 6, 7, ops #11, #13"
    ]  # fmt: skip
    assert "worst realtime lag: 0.250 s (process 1, key 0, at 1.500 s)" in out
    assert lines[-1] == "not valid: duplicate"


def test_a_valid_history_exits_0(capsys, history_file, checker):
    checker.result = _result(True, {}, [])

    code, out, _ = _run(capsys, "check", str(history_file), "--ww-deps", "--txn")

    assert code == 0
    assert checker.calls == [(4, {"ww_deps": True, "subscribe": False, "txn": True})]
    assert "anomalies" not in out  # no table without anomalies
    assert out.splitlines()[-1] == "valid: no anomaly outside the allowed set"


def test_pictures_are_drawn_into_the_directory_asked_for(capsys, history_file, checker, tmp_path):
    checker.result = _result(False, {"duplicate": {"count": 1, "errs": [{"key": 0, "value": 1, "offsets": [0, 1]}]}},
                             ["duplicate"])  # fmt: skip

    code, out, _ = _run(capsys, "check", str(history_file), "--pictures", str(tmp_path / "pics"), "--ww-deps")

    page = tmp_path / "pics" / "pictures.html"
    assert code == 1 and f"pictures: {page}" in out
    assert checker.calls[1] == ("analysis", 4, {"ww_deps": True})  # the analysis the check made
    assert 'class="cell read marked"' in page.read_text(encoding="utf-8")


def _op(index: int, **fields) -> str:
    op = {"index": index, "type": "invoke", "process": 0, "time": index, "f": "poll", "value": [["poll"]]}
    return json.dumps({**op, **fields})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (_op(0) + "\n" + _op(1)[:30], "line 2: cut short (the run stopped while writing it?)"),
        (_op(0) + "\nnot json\n" + _op(2) + "\n", "line 2: not JSON (Expecting value)"),
        (_op(0) + "\n" + json.dumps({"index": 1, "type": "ok", "f": "poll"}) + "\n",
         "line 2: missing 'process', 'time'"),
        (_op(0, value="x") + "\n", "line 1: a poll's value should be a list of micro-operations, not 'x'"),
    ],
)  # fmt: skip
def test_a_history_that_cannot_be_read_is_named_in_one_line(capsys, tmp_path, text, message):
    path = tmp_path / "history.jsonl"
    path.write_text(text, encoding="utf-8")

    code, out, err = _run(capsys, "check", str(path))

    assert (code, out) == (2, "")
    assert err == f"kafka-lite jepsen: {path} {message}\n"


def test_a_missing_history_is_named(capsys, tmp_path):
    code, _, err = _run(capsys, "check", str(tmp_path / "nowhere.jsonl"))
    assert code == 2
    assert (
        err
        == f"kafka-lite jepsen: {tmp_path / 'nowhere.jsonl'}: cannot read the history: No such file or directory\n"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--mode", "raft"], "argument --mode: invalid choice: 'raft'"),
        (["--faults", "kill,flood"], "argument --faults: 'flood': choose from kill, pause, partition, delay"),
        (["--seconds", "0"], "argument --seconds: 0 seconds: give at least 1"),
        (["--seconds", "soon"], "argument --seconds: 'soon' is not a whole number of seconds"),
        (["--seed", "-1"], "argument --seed: -1 seed: cannot be negative"),
        (["--client", "java"], "argument --client: invalid choice: 'java'"),
    ],
)
def test_run_names_the_argument_it_cannot_use(capsys, monkeypatch, args, message):
    def started(args, console):
        raise AssertionError(f"the run started with {args}")

    monkeypatch.setattr(jepsen_cli, "run_run", started)  # arguments it cannot use never start a cluster
    with pytest.raises(SystemExit) as exit:
        main(["jepsen", "run", *args])
    _, err = capsys.readouterr()
    assert exit.value.code == 2
    assert f"kafka-lite jepsen run: error: {message}" in err


@pytest.mark.parametrize(
    ("keys", "message"),
    [
        ("x", "'x': a key is a partition number"),
        ("1,-2", "'-2': a key is a partition number"),
        (",", "nothing: a key"),
    ],
)
def test_cut_names_keys_it_cannot_use(capsys, history_file, tmp_path, keys, message):
    with pytest.raises(SystemExit) as exit:
        main(["jepsen", "cut", str(history_file), "--keys", keys, "--out", str(tmp_path / "cut.jsonl")])
    assert exit.value.code == 2
    assert f"kafka-lite jepsen cut: error: argument --keys: {message}" in capsys.readouterr().err
    assert not (tmp_path / "cut.jsonl").exists()


def test_cut_names_a_history_it_cannot_read_and_a_file_it_cannot_write(capsys, history_file, tmp_path):
    code, _, err = _run(
        capsys, "cut", str(tmp_path / "nowhere.jsonl"), "--keys", "0", "--out", str(tmp_path / "c")
    )
    assert (code, err) == (
        2,
        f"kafka-lite jepsen: {tmp_path / 'nowhere.jsonl'}: cannot read the history: No such file or directory\n",
    )
    out = tmp_path / "no-such-dir" / "cut.jsonl"
    code, _, err = _run(capsys, "cut", str(history_file), "--keys", "0", "--out", str(out))
    assert (code, err) == (
        2,
        f"kafka-lite jepsen: {out}: cannot write the history: No such file or directory\n",
    )


def test_faults_read_as_a_set():
    fault_list = jepsen_cli.fault_list
    assert fault_list("kill, pause,kill") == {"kill", "pause"}
    assert fault_list("none") == fault_list("") == frozenset()


def test_the_checker_itself_finds_a_duplicate_and_passes_a_clean_history(capsys, tmp_path):
    pytest.importorskip("kafka_lite.jepsen.checker")
    time = MockTime()
    with (
        HistoryWriter(tmp_path / "dup.jsonl", time) as dup,
        HistoryWriter(tmp_path / "clean.jsonl", time) as clean,
    ):
        for writer, offsets in ((dup, (0, 1, 2)), (clean, (0, 1))):
            for value, offset in zip((1, 2, 1), offsets, strict=False):  # the retry of 1 lands a second time
                send = writer.invoke(0, "send", [("send", 0, value)])
                writer.complete(send, "ok", [("send", 0, (offset, value))])
            poll = writer.invoke(1, "poll", [("poll",)])
            writer.complete(poll, "ok", [("poll", {0: [(o, (1, 2, 1)[o]) for o in offsets]})])

    code, out, _ = _run(capsys, "check", str(tmp_path / "dup.jsonl"))
    [duplicate] = [line for line in out.splitlines() if "│ duplicate" in line]
    assert code == 1 and [cell.strip() for cell in duplicate.split("│")[1:4]] == ["duplicate", "1", "no"]

    code, out, _ = _run(capsys, "check", str(tmp_path / "clean.jsonl"))
    assert code == 0 and out.splitlines()[-1] == "valid: no anomaly outside the allowed set"


def test_a_history_whose_consumers_subscribed_is_checked_as_its_run_checked_it(capsys, tmp_path, checker):
    """The run allows what a rebalance does to a subscriber's polls, and so does a check of its
    history without flags: the subscribe (and the txn) ops in the history say how it was made."""
    path = tmp_path / "history.jsonl"
    with HistoryWriter(path, MockTime()) as writer:
        subscribe = writer.invoke(0, "subscribe", [0])
        writer.complete(subscribe, "ok")
        txn = writer.invoke(0, "txn", [("send", 0, 1), ("poll",)])
        writer.complete(txn, "ok", [("send", 0, (0, 1)), ("poll", {0: [(0, 1)]})])
    checker.result = _result(True, {}, [])

    code, _, _ = _run(capsys, "check", str(path))

    assert code == 0
    assert checker.calls == [(4, {"ww_deps": False, "subscribe": True, "txn": True})]
