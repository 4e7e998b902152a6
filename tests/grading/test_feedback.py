"""The grader teaches on every failure: a hint for a RecursionError, a timeout and a file that does
not import; the learner's frames only, capped; and every path the learner's, never the grader's copy."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from rich.console import Console

from kafka_lite.cli.lab import print_report
from kafka_lite.grading import feedback, grader
from kafka_lite.grading.labs import discover
from tests.grading.test_starter_and_grader import _toy_lab

pytestmark = pytest.mark.unit

RECURSES_AND_LOOPS = (
    "def add(a, b):\n    return add(a, b)\n\n\ndef double(x):\n    while True:\n        pass\n"
)
# The grader's temporary copy, by either name it goes by in pytest's output.
GRADERS_COPY = re.compile(r"kafka-lite-grade-|(^|[\s\"'])overlay/")


@pytest.fixture
def toy(tmp_path):
    repo = _toy_lab(tmp_path)
    (lab,) = discover(repo / "labs", repo)
    workspace = tmp_path / "ws"
    (workspace / "kafka_lite").mkdir(parents=True)
    return lab, repo, workspace, workspace / "kafka_lite" / "toy.py"


def _grade(toy):
    lab, repo, workspace, _ = toy
    return grader.grade(lab, workspace, repo_root=repo, package_root=repo / "kafka_lite")


def _texts(report) -> list[str]:
    texts = [report.output, report.hint]
    for r in report.results:
        texts += [r.error, r.traceback, r.output, r.hint, *(f["path"] for f in r.frames)]
    return texts


def test_a_recursion_and_a_timeout_get_a_hint_naming_the_learners_function(toy, monkeypatch):
    monkeypatch.setattr(grader, "TEST_TIMEOUT_S", 3)
    *_, mine = toy
    mine.write_text(RECURSES_AND_LOOPS)
    report = _grade(toy)
    by_name = {r.test: r for r in report.results}

    recursion = by_name["test_add"]
    assert recursion.error_type == "RecursionError"
    assert recursion.hint.startswith("Hint: RecursionError: a function of yours calls itself")
    assert f"it was in add at {mine}:2" in recursion.hint
    # the learner's frame once, with how often it repeated; the test's and pytest's frames hidden
    (frame,) = recursion.frames
    assert (frame["path"], frame["line"], frame["source"]) == (str(mine), 2, "return add(a, b)")
    assert frame["repeated"] > 100 and recursion.hidden_frames > 0

    timeout = by_name["test_double"]
    assert "Timeout" in timeout.error
    assert timeout.hint.startswith("Hint: the test ran over its 3 s and was stopped")
    assert f"it was in double at {mine}:6" in timeout.hint

    assert not by_name["test_where"].hint, "a passing test has no hint"
    for text in _texts(report):
        assert not GRADERS_COPY.search(text or ""), f"the grader's copy shows in: {text[:300]}"
    assert str(mine) in recursion.traceback, "pytest's own traceback names the learner's file"


def test_a_learners_file_that_does_not_parse_gets_a_hint_with_its_path_and_line(toy):
    *_, mine = toy
    mine.write_text("def add(a, b):\n    return a + b\n\n\ndef double(x) return\n")
    report = _grade(toy)
    assert report.collection_failed
    assert report.hint == (
        f"Hint: SyntaxError: {mine} does not import, and no test that uses it can run; Python stops "
        "at the first error (here line 5): fix it and grade again"
    )
    assert f'File "{mine}", line 5' in report.output
    assert not GRADERS_COPY.search(report.output)


def test_a_learners_file_whose_import_fails_gets_a_hint(toy):
    *_, mine = toy
    mine.write_text("from kafka_lite.nowhere import helper\n\n\ndef add(a, b):\n    return helper(a, b)\n")
    report = _grade(toy)
    assert report.collection_failed and report.hint.startswith("Hint: ModuleNotFoundError: ")
    assert str(mine) in report.hint


def test_verbose_shows_the_learners_frames_capped_and_the_rest_in_one_line(toy, monkeypatch):
    monkeypatch.setattr(grader, "TEST_TIMEOUT_S", 3)
    lab, _, workspace, mine = toy
    # Two functions calling each other: no line repeats, so the frames run to the recursion limit.
    mine.write_text("def add(a, b):\n    return double(a)\n\n\ndef double(x):\n    return add(x, x)\n")
    report = grader.grade(lab, workspace, repo_root=lab.directory.parents[1],
                          package_root=lab.directory.parents[1] / "kafka_lite", stages=[1])  # fmt: skip
    console = Console(record=True, width=200)
    print_report(report, console, str(workspace), verbose=True)
    out = console.export_text()
    block = out[out.index("FAIL test_add") :]
    frame_lines = [line for line in block.splitlines() if f"{mine}:" in line]
    assert frame_lines and all(" in add" in line or " in double" in line for line in frame_lines)
    assert len(frame_lines) <= feedback.FRAME_LINES
    assert re.search(r"\.\.\. \d+ more lines: \d+ more frames of your code", block)
    assert re.search(r"\(\d+ frames of the lab's tests, kafka_lite and pytest not shown\)", block)
    assert "test_toy.py" not in block.split("RecursionError")[0], "no frame of the grader's tests"
    assert "Hint: RecursionError" in block


def test_the_path_mapper_gives_the_learner_their_paths(tmp_path):
    run_dir = tmp_path / "run"
    overlay = run_dir / "overlay"
    package_root = tmp_path / "checkout" / "kafka_lite"
    workspace = tmp_path / "ws"
    learners = feedback.path_mapper(run_dir, overlay, package_root, workspace, ["kafka_lite/log/a.py"])
    text = (
        f'overlay/kafka_lite/log/a.py:12: in append\n  File "{overlay}/kafka_lite/log/a.py", line 3\n'
        f"{overlay}/kafka_lite/log/b.py:7: in read\n../checkout/labs/lab02/test_x.py:9: in test_x\n"
        "/usr/lib/python3.11/json/decoder.py:1: in decode\n"
    )
    assert learners(text) == (
        f'{workspace}/kafka_lite/log/a.py:12: in append\n  File "{workspace}/kafka_lite/log/a.py", line 3\n'
        f"{package_root}/log/b.py:7: in read\n{tmp_path}/checkout/labs/lab02/test_x.py:9: in test_x\n"
        "/usr/lib/python3.11/json/decoder.py:1: in decode\n"
    )


def test_a_failure_with_a_message_of_its_own_gets_no_hint():
    assert feedback.hint("AssertionError", "AssertionError: 7f, Kafka writes 01", [], 60) is None
    frames = [{"path": "/ws/kafka_lite/x.py", "line": 4, "function": "f", "source": "", "repeated": 0}]
    assert feedback.hint("ImportError", "ImportError: cannot import name 'g'", frames, 60) == (
        "Hint: ImportError: /ws/kafka_lite/x.py does not import, and no test that uses it can run; "
        "Python stops at the first error: fix it and grade again"
    )
    assert feedback.format_frames([], 3) == [
        "(no frame of your code: the failure is the test's own check of what your code returned)",
        "(3 frames of the lab's tests, kafka_lite and pytest not shown)",
    ]


def test_path_mapper_leaves_a_relative_path_it_does_not_own_absolute(tmp_path):
    learners = feedback.path_mapper(tmp_path, tmp_path / "overlay", Path("/c/kafka_lite"), None, [])
    assert learners("../x/test_y.py:3") == f"{tmp_path.parent}/x/test_y.py:3"


def test_a_frames_source_is_the_first_line_of_the_statement_that_holds_it(tmp_path):
    """The report shows each frame's statement as pytest's traceback does: where a call spread over
    several lines starts, the innermost statement when they nest, the line itself outside any."""
    from kafka_lite.grading import pytest_plugin

    path = tmp_path / "learner.py"
    path.write_text(
        "def f(batch):\n"
        "    for record in batch:\n"
        "        total = sum(\n"
        "            record.values,\n"
        "        )\n"
        "    # a comment\n"
        "    return total\n",
        encoding="utf-8",
    )
    statement = pytest_plugin._statement
    assert statement(str(path), 4) == "total = sum("
    assert statement(str(path), 2) == "for record in batch:"
    assert statement(str(path), 7) == "return total"
    assert statement(str(path), 6) == "def f(batch):"  # a comment line belongs to the function
    assert statement(str(tmp_path / "gone.py"), 3) == ""


def _frame(source: str, path: str = "/ws/kafka_lite/tools/verifiable_client.py", line: int = 124) -> dict:
    return {"path": path, "line": line, "function": "consume", "source": source, "repeated": 0}


@pytest.mark.parametrize(
    ("error", "source", "call"),
    [
        ("TypeError: unhashable type: 'list'", "consumer.seek_to_beginning(partitions)", "seek_to_beginning"),
        ("TypeError: unhashable type: 'list'", "self.consumer.seek_to_end([tp])", "seek_to_end"),
        ("TypeError: unhashable type: 'set'", "consumer.pause(consumer.assignment())", "pause"),
        ("TypeError: unhashable type: 'list'", "c.resume(tps)", "resume"),
    ],
)
def test_a_list_where_kafka_python_takes_varargs_gets_the_varargs_hint(error, source, call):
    hint = feedback.hint("TypeError", error, [_frame(source)], 60)
    assert hint == (
        f"Hint: {call} takes the partitions as separate arguments, as kafka-python's does: "
        f"{call}(*partitions), not {call}(partitions) (assign and end_offsets are the ones that take a list)"
    )


@pytest.mark.parametrize(
    ("error", "source"),
    [
        # the same error from a call that passes its partitions as separate arguments
        ("TypeError: unhashable type: 'list'", "consumer.seek_to_beginning(*partitions)"),
        # the same call with another error
        ("TypeError: 'NoneType' object is not iterable", "consumer.seek_to_beginning(partitions)"),
        # the same error from a line that calls none of the four
        ("TypeError: unhashable type: 'list'", "seen.add(record.key)"),
    ],
)
def test_the_varargs_hint_needs_both_the_error_and_the_call(error, source):
    assert feedback.hint("TypeError", error, [_frame(source)], 60) is None
    assert feedback.hint("TypeError", error, [], 60) is None, "no learner's line: no trap to name"


def test_an_undecodable_token_gets_the_decode_hint():
    error = "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff in position 1: invalid start byte"
    frame = _frame('tokens = bytes(response).decode("utf-8").split("\\x00")')
    hint = feedback.hint("UnicodeDecodeError", error, [frame], 60)
    assert hint.startswith("Hint: UnicodeDecodeError: bytes that are not UTF-8 reached a decode of yours")
    assert "try/except UnicodeDecodeError" in hint and "SaslException" in hint


def test_the_clients_connection_warnings_are_counted_not_shown():
    output = "\n".join(
        [
            "--- Captured stdout call ---",
            "healthy in 1.2 s",
            "--- Captured log call ---",
            "WARNING  kafka_lite.network.selector:selector.py:197 Connection with -1 disconnected: "
            "[Errno 111] connection to node -1 failed: Connection refused",
            "WARNING  kafka_lite.clients.network_client:network_client.py:149 Connection to node 2 failed: "
            "[Errno 111] Connection refused",
            "WARNING  kafka_lite.network.selector:selector.py:262 Connection to 2 established again",
            "WARNING  kafka.conn:conn.py:1527 <BrokerConnection node_id=bootstrap-0 host=127.0.0.1:9092 "
            "<connecting>>: connect attempt to 127.0.0.1:9092 returned error 111. Disconnecting.",
            "WARNING:kafka.client:Unable to connect to any of the names for 127.0.0.1:9092",
            "ERROR    aiokafka:client.py:210 Unable connect to node with id 0: [Errno 111] Connect call failed",
            "INFO     kafka_lite.tools.verifiable_client:verifiable_client.py:40 read 15 records",
            "WARNING  kafka_lite.clients.network_client:network_client.py:234 Disconnecting from node 1 "
            "due to request timeout.",
            "--- Captured stderr call ---",
            "%3|1700000000.123|FAIL|rdkafka#consumer-1| [thrd:127.0.0.1:9092/bootstrap]: 127.0.0.1:9092/"
            "bootstrap: Connect to ipv4#127.0.0.1:9092 failed: Connection refused (after 0ms in state CONNECT)",
            "%3|1700000000.456|ERROR|rdkafka#consumer-1| [thrd:app]: rdkafka#consumer-1: 1/1 brokers are down",
            "ERROR    confluent:conftest.py:12 FAIL [rdkafka#producer-2] [thrd:127.0.0.1:9092/bootstrap]: "
            "127.0.0.1:9092/bootstrap: Connect to ipv4#127.0.0.1:9092 failed: Connection refused",
            "ERROR: the producer's record was not acknowledged, rdkafka# said Connection refused twice",
        ]
    )
    assert feedback.quiet_clients(output).splitlines() == [
        "--- Captured stdout call ---",
        "healthy in 1.2 s",
        "--- Captured log call ---",
        "(9 connection warnings of the clients not shown: a broker not up yet, or stopped)",
        "INFO     kafka_lite.tools.verifiable_client:verifiable_client.py:40 read 15 records",
        # a timeout is the learner's to read: it may be their request the broker never answered
        "WARNING  kafka_lite.clients.network_client:network_client.py:234 Disconnecting from node 1 "
        "due to request timeout.",
        "--- Captured stderr call ---",
        "ERROR: the producer's record was not acknowledged, rdkafka# said Connection refused twice",
    ]
    assert feedback.quiet_clients("nothing to fold\n") == "nothing to fold"


# A toy consumer with kafka-python's signature, and a learner who passes it a list.
TOY_CONSUMER = """
class Consumer:
    def __init__(self):
        self.positions = {("t", 0): 5, ("t", 1): 7}

    def seek_to_beginning(self, *partitions):
        for tp in partitions:
            self.positions[tp] = 0
"""
PASSES_A_LIST = (
    "from kafka_lite.consumer import Consumer\n\n\n"
    "def add(a, b):\n"
    "    consumer = Consumer()\n"
    "    partitions = [('t', 0), ('t', 1)]\n"
    "    consumer.seek_to_beginning(partitions)\n"
    "    return a + b\n\n\n"
    "def double(x):\n"
    "    return add(x, x)\n"
)


def test_a_failure_names_the_learners_line_without_verbose_and_the_varargs_hint(toy):
    lab, repo, workspace, mine = toy
    (repo / "kafka_lite" / "consumer.py").write_text(TOY_CONSUMER)
    mine.write_text(PASSES_A_LIST)
    report = grader.grade(lab, workspace, repo_root=repo, package_root=repo / "kafka_lite", stages=[1])
    console = Console(record=True, width=200)
    print_report(report, console, str(workspace))
    out = console.export_text()
    block = out[out.index("FAIL test_add") :]
    assert f"    {mine}:7: in add\n        consumer.seek_to_beginning(partitions)\n" in block
    assert "TypeError: unhashable type: 'list'" in block
    assert "Hint: seek_to_beginning takes the partitions as separate arguments" in block
    assert "frames of the lab's tests" not in block, "without --verbose only the innermost frame"
    assert "consumer.py" not in block, "the toy consumer's own frame is not the learner's"
