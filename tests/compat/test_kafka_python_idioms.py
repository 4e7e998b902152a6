"""A kafka-python program runs on kafka_lite's clients by changing only its imports.

The program (``kafka_python_program.py``, beside this file) uses kafka-python's documented idioms: the
admin client creating a topic, a producer with serializers and ``send(...).get()``, a consumer in a
group iterated and polled, ``assignment``, ``end_offsets``, ``position``, ``commit``, ``committed``
and ``seek_to_beginning``. It runs first on kafka-python, then with its imports rewritten to
kafka_lite's, each on a topic and group of its own on the same cluster; both must print the same.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.kraft_cluster import zookeeper_only
from tests.support.topics import topic_name

pytestmark = [pytest.mark.compat, pytest.mark.xdist_group("cluster")]

PROGRAM = Path(__file__).with_name("kafka_python_program.py")

# The three import lines of a kafka-python program, and kafka_lite's.
IMPORTS = {
    r"^from kafka import ": "from kafka_lite import ",
    r"^from kafka\.admin import ": "from kafka_lite.admin import ",
    r"^from kafka\.errors import ": "from kafka_lite.errors import ",
}


def kafka_lite_program() -> str:
    text = PROGRAM.read_text()
    for pattern, replacement in IMPORTS.items():
        text, count = re.subn(pattern, replacement, text, flags=re.MULTILINE)
        assert count == 1, f"the program has no line matching {pattern}"
    return text


def run(source: str, bootstrap: str, tmp_path: Path, name: str) -> dict:
    path = tmp_path / f"program_on_{name}.py"  # not kafka_lite.py, which would shadow the package
    path.write_text(source)
    topic, group = topic_name(f"idioms-{name}"), topic_name(f"idioms-{name}-group")
    done = subprocess.run(
        [sys.executable, str(path), bootstrap, topic, group], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, f"the program on {name} failed:\n{done.stderr[-3000:]}"
    return json.loads(done.stdout.splitlines()[-1])


# ZooKeeper only, to keep the tier short: the idioms are the clients'; their group and commit
# requests run on KRaft in test_consumer_groups.py's mixed group, kafka_lite's consumer among them
@zookeeper_only
def test_a_kafka_python_program_gives_the_same_results_on_kafka_lite(cluster, tmp_path):
    lite_source = kafka_lite_program()
    assert "from kafka import" not in lite_source and "kafka_lite" in lite_source
    expected = run(PROGRAM.read_text(), cluster.bootstrap_servers, tmp_path, "kafka_python")
    # The program's own checks first: kafka-python's results are what a kafka-python user sees.
    assert expected["created_twice"] is False
    assert len(expected["sent"]) == len(expected["received"]) == len(expected["received_again"]) == 30
    assert expected["committed"] == [end for _, end in expected["end_offsets"]]
    assert expected["committed_by_hand"] == [1, "by hand"]
    assert expected["positions_after_seek"] == [0, 0, 0]

    actual = run(lite_source, cluster.bootstrap_servers, tmp_path, "kafka_lite")
    for key in expected:
        assert actual[key] == expected[key], (
            f"{key}: kafka_lite gave {actual[key]}, kafka-python {expected[key]}"
        )
    assert actual == expected
