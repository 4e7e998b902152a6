"""Chapter 10's timelines: the hanging transaction's and the aborted read's requests as the
reproductions' taps recorded them, and the sequence diagrams drawn from them."""

from __future__ import annotations

import re

import pytest

from kafka_lite.diagrams import DIAGRAMS
from kafka_lite.diagrams.transaction_timeline import (
    TIMELINES,
    hanging_0_11,
    hanging_kip_890,
    timeline_diagram,
)
from kafka_lite.jepsen.timeline import read_timeline
from tests.jepsen.test_aborted_read import record
from tests.jepsen.test_hanging_transaction import LATE
from tests.jepsen.transactions import abort_marker, late_answer

pytestmark = pytest.mark.unit


def epoch_of(text: str) -> int:
    return int(re.search(r"epoch (\d+)", text).group(1))


def test_the_kept_timelines_show_what_the_chapter_says():
    """Written by ``tests/jepsen/test_aborted_read.py`` (``KAFKA_LITE_WRITE_TIMELINES=1``), which holds
    each run to the same: the late Produce lands after the ABORT marker under 0.11's epoch rule,
    and is refused as a fenced epoch's with KIP-890."""
    old = read_timeline(TIMELINES / "aborted_read_0_11.json")["rows"]
    index, answer = late_answer(old, record(1))
    marker = abort_marker(old)
    assert index > marker and answer.startswith("Produce: offset")
    assert epoch_of(old[marker]["text"]) == 0, "0.11: the marker keeps the epoch the late write has"
    new = read_timeline(TIMELINES / "aborted_read_kip_890.json")["rows"]
    index, answer = late_answer(new, record(1))
    marker = abort_marker(new)
    assert index > marker and answer == "Produce: INVALID_PRODUCER_EPOCH"
    assert epoch_of(new[marker]["text"]) == 1, "KIP-890: the marker carries the bumped epoch"
    assert any(r["text"] == "EndTxn: NONE, next epoch 1" for r in new)


def test_the_kept_hanging_transactions_show_what_the_chapter_says():
    """Written by ``tests/jepsen/test_hanging_transaction.py`` (``KAFKA_LITE_WRITE_TIMELINES=1``), which
    holds each run to the same. Kafka 0.11: the late Produce arrives after the ABORT marker, with the
    epoch the marker has, and the leader writes it (an offset, NONE) without asking anyone; no marker
    follows. Both parts of KIP-890: the EndTxn's answer names epoch 1, the marker carries it, the
    leader asks the coordinator about the late Produce, and it is refused as an older epoch's."""
    old = read_timeline(TIMELINES / "hanging_0_11.json")["rows"]
    index, answer = late_answer(old, LATE)
    marker = abort_marker(old)
    assert index > marker and answer == "Produce: offset 1"
    late = [r for r in old if "[late]" in r["text"]]
    assert epoch_of(old[marker]["text"]) == 0 and {epoch_of(r["text"]) for r in late} == {0}
    assert [r["kind"] for r in late] == ["held"] * 4, "the Produce and its retry, held, then let go"
    assert not any("marker" in r["text"] or "(verify)" in r["text"] for r in old[marker + 1 :])
    new = read_timeline(TIMELINES / "hanging_kip_890.json")["rows"]
    index, answer = late_answer(new, LATE)
    marker = abort_marker(new)
    assert index > marker and answer == "Produce: INVALID_PRODUCER_EPOCH"
    assert "EndTxn: NONE, next epoch 1" in [r["text"] for r in new[:marker]]
    assert epoch_of(new[marker]["text"]) == 1, "KIP-890: the marker carries the bumped epoch"
    asked = [i for i, r in enumerate(new) if r["text"].startswith("AddPartitionsToTxn(verify)")]
    assert asked and marker < asked[0] < index, "the leader asks the coordinator before it answers"
    assert not any(r["text"].startswith("Produce: offset") for r in new), "the late record is never written"


def test_the_hanging_transactions_pictures_are_the_docs():
    assert DIAGRAMS["hanging_0_11"] is hanging_0_11 and DIAGRAMS["hanging_kip_890"] is hanging_kip_890
    source = hanging_0_11().source
    assert "A hanging transaction: Kafka 0.11" in source and "Produce: offset 1" in source
    assert "INVALID_PRODUCER_EPOCH" in hanging_kip_890().source


def test_each_row_is_an_arrow_across_the_lanes_from_its_sender_to_its_receiver():
    timeline = {
        "title": "t",
        "parties": ["producer", "leader", "coordinator"],
        "rows": [
            {"t": 0.0, "from": "producer", "to": "coordinator", "kind": "request", "text": "EndTxn(abort)"},
            {"t": 0.5, "from": "coordinator", "to": "leader", "kind": "request", "text": "WriteTxnMarkers"},
            {"t": 1.0, "from": "leader", "to": "producer", "kind": "error", "text": "Produce: X"},
            {"t": 2.0, "from": "producer", "to": "leader", "kind": "held", "text": "Produce, arriving late"},
        ],
    }
    rows = re.findall(r"<tr>(.*?)</tr>", timeline_diagram(timeline).source)
    body = rows[2:-1]
    assert len(body) == 4
    assert 'colspan="3" bgcolor="#dbeafe">EndTxn(abort) →' in body[0]
    assert body[1].startswith("<td>0.50</td><td></td><td") and "← WriteTxnMarkers" in body[1]
    assert 'colspan="2" bgcolor="#fed7aa">← Produce: X' in body[2] and body[2].endswith("<td></td>")
    assert 'bgcolor="#fecaca"' in body[3]
