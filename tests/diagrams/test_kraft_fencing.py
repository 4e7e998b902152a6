"""Chapter 12's fencing picture: a recorded run of the quorum controller, the same on every build,
and a fencing as KRaft does it (registered fenced, unfenced by a caught-up heartbeat, fenced once the
session has passed, its partitions changed first)."""

from __future__ import annotations

import pytest

from kafka_lite.diagrams import DIAGRAMS
from kafka_lite.diagrams.kraft_fencing import SESSION_TIMEOUT_MS, fencing_timeline, kraft_fencing

pytestmark = pytest.mark.unit


def test_the_recorded_fencing_is_the_same_on_every_build_and_reads_as_kraft_does_it():
    timeline = fencing_timeline()
    assert timeline == fencing_timeline(), "on simulated time: drawn the same each time"
    texts = [row["text"] for row in timeline["rows"]]
    records = [text.split(": ", 1)[1] for text in texts if text[0].isdigit()]
    assert records.index("RegisterBroker 2 (epoch 2, fenced)") < records.index("UnfenceBroker 2"), (
        "a broker registers fenced and is unfenced by a heartbeat once it has caught up"
    )
    fence = next(row for row in timeline["rows"] if row["text"].endswith("FenceBroker 2"))
    assert fence["t"] * 1000 > SESSION_TIMEOUT_MS, "fenced only once its session has passed"
    changes = [r for r in records if r.startswith("PartitionChange")]
    assert len(changes) == 2 and records.index(changes[-1]) < records.index("FenceBroker 2"), (
        "out of every ISR and leadership first, then the fence"
    )
    assert all("ISR [1], leader 1" in change for change in changes), changes
    assert "broker 2" not in {row["from"] for row in timeline["rows"] if row["t"] > 0}, "broker 2 is silent"


def test_the_picture_has_a_row_per_event_and_is_one_of_the_sites_diagrams():
    assert kraft_fencing().source.count("<tr>") == len(fencing_timeline()["rows"]) + 3
    assert DIAGRAMS["kraft_fencing"] is kraft_fencing
