"""The replication picture is drawn from live replica managers: each replica's offsets and LEO, the HW
line, who is in the ISR and since when, and where a consumer's and a follower's reads really end."""

from __future__ import annotations

import re

import pytest

from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.time import MockTime
from kafka_lite.diagrams import DIAGRAMS
from kafka_lite.diagrams.replication import HW_LINE, replication, replication_diagram
from kafka_lite.server.replica_manager import ReplicaManager
from kafka_lite.testing.in_process_replicas import (
    leader_and_isr,
    replicate,
    replicated_partition,
)

pytestmark = pytest.mark.unit
TP = ("orders", 0)
LAG_MS = 10_000


@pytest.fixture
def brokers(tmp_path):
    """Broker 0 leads ``TP``; brokers 1 and 2 follow; all three in the ISR; fetchers played by the test."""
    time = MockTime()
    with replicated_partition(tmp_path, time, TP, **{"replica.lag.time.max.ms": LAG_MS}) as managers:
        yield time, managers


def produce(leader: ReplicaManager, n: int, acks: int = 1) -> None:
    records = MemoryRecords.with_records([(1000, None, b"r") for _ in range(n)])
    leader.append_records(30_000, acks, False, {TP: records}, lambda answer: None)


def one_behind_one_out(time: MockTime, leader, f1, f2) -> None:
    """Offsets 0-7 on the leader; follower 1 has them all but the leader has learnt of 0-5 only;
    follower 2 stopped at 3 and left the ISR 11 s after it last caught up; HW 6."""
    produce(leader, 3)
    for _ in range(2):
        replicate(leader, f1, TP)
        replicate(leader, f2, TP)
    time.sleep(4_000)
    produce(leader, 3)
    replicate(leader, f1, TP)
    replicate(leader, f1, TP)
    time.sleep(7_000)
    leader.maybe_shrink_isr()
    produce(leader, 2, acks=-1)
    replicate(leader, f1, TP)


def text(cell: str) -> str:
    """A cell's text, its tags and line breaks as single spaces."""
    return " ".join(re.sub(r"<[^>]*>", "", cell.replace("<br/>", " ")).split())


def row(source: str, broker_id: int) -> list[tuple[str, str]]:
    """A replica's row as (background colour, text) per cell; the HW line is ("HW", "")."""
    tr = re.search(rf'<tr><td[^>]*port="b{broker_id}">.*?</tr>', source).group(0)
    cells = []
    for attrs, body in re.findall(r"<td([^>]*)>(.*?)</td>", tr):
        colour = re.search(r'bgcolor="([^"]+)"', attrs).group(1)
        cells.append(("HW", "") if colour == HW_LINE else (colour, text(body)))
    return cells


def offsets(cells: list[tuple[str, str]]) -> list[str]:
    """The offset cells of a row, in order, with "|" for the HW line and "." for an offset it lacks."""
    out = []
    for colour, body in cells[1:-1]:
        out.append("|" if colour == "HW" else body or ".")
    return out


def read_bar(source: str, who: str) -> str:
    """The text of a read's bar: the offsets the read returned."""
    return text(_bar(source, who).group(2))


def read_bar_columns(source: str, who: str) -> int:
    """How many of the replicas' columns a read's bar spans (the HW line is a column)."""
    return int(_bar(source, who).group(1))


def _bar(source: str, who: str) -> re.Match:
    tr = re.search(rf"<tr><td[^>]*>{who}<br/>.*?</tr>", source).group(0)
    return re.search(r'<td colspan="(\d+)" bgcolor="#dbeafe">(.*?)</td>', tr)


def test_a_follower_behind_and_one_out_of_the_isr_are_drawn_as_they_are(brokers):
    time, (leader, f1, f2) = brokers
    one_behind_one_out(time, leader, f1, f2)
    partition = leader.get_partition(TP)
    assert partition.isr == [0, 1] and partition.high_watermark() == 6  # the state the picture must show
    source = replication_diagram(partition, {1: f1, 2: f2}).source

    assert "ISR [0, 1], HW 6" in source
    assert offsets(row(source, 0)) == ["0", "1", "2", "3", "4", "5", "|", "6", "7"]
    assert offsets(row(source, 1)) == ["0", "1", "2", "3", "4", "5", "|", "6", "7"]
    assert offsets(row(source, 2)) == ["0", "1", "2", ".", ".", ".", "|", ".", "."]
    # below the HW green, above it yellow, on every replica that has the offset
    leader_cells = [c for c in row(source, 0)[1:-1] if c[0] != "HW"]
    assert [c[0] for c in leader_cells] == ["#dcfce7"] * 6 + ["#fde68a"] * 2

    assert row(source, 0)[-1][1] == "LEO 8, HW 6 in the ISR (the leader)"
    assert row(source, 1)[-1][1] == (
        "LEO 8, its own HW 6 the leader knows LEO 6, from its last fetch in the ISR, caught up 7,000 ms ago"
    )
    assert row(source, 2)[-1][1] == "LEO 3, its own HW 0 out of the ISR, caught up 11,000 ms ago"
    assert row(source, 2)[0][0] == "#fecaca" and row(source, 1)[0][0] == "white"

    assert read_bar(source, "consumer") == "offsets 0-5"
    assert read_bar(source, "follower") == "offsets 0-7"
    # the consumer's bar ends at the HW line, the follower's at the leader's last offset
    assert read_bar_columns(source, "consumer") == 6 and read_bar_columns(source, "follower") == 9
    assert "acks=all produces waiting: 1" in source
    replication_diagram(partition, {1: f1, 2: f2}).pipe(format="svg")  # valid DOT and HTML


def test_without_the_followers_rows_are_the_leaders_view(brokers):
    time, (leader, f1, f2) = brokers
    one_behind_one_out(time, leader, f1, f2)
    source = replication_diagram(leader.get_partition(TP)).source
    # the leader has learnt of offsets 0-5 on follower 1, not of the 6-7 it has appended since
    assert offsets(row(source, 1)) == ["0", "1", "2", "3", "4", "5", "|", ".", "."]
    assert row(source, 1)[-1][1] == "LEO 6 in the ISR, caught up 7,000 ms ago"


def test_the_hw_line_and_the_consumers_read_move_when_the_last_isr_follower_reports(brokers):
    time, (leader, f1, f2) = brokers
    one_behind_one_out(time, leader, f1, f2)
    replicate(leader, f1, TP)  # the fetch from 8 tells the leader follower 1 has 0-7
    partition = leader.get_partition(TP)
    source = replication_diagram(partition, {1: f1, 2: f2}).source
    assert "HW 8" in source and "acks=all produces waiting: 0" in source
    assert offsets(row(source, 0)) == ["0", "1", "2", "3", "4", "5", "6", "7", "|"]
    assert read_bar(source, "consumer") == "offsets 0-7"
    # follower 2 catches up to the HW and rejoins
    replicate(leader, f2, TP)
    replicate(leader, f2, TP)
    source = replication_diagram(partition, {1: f1, 2: f2}).source
    assert "ISR [0, 1, 2]" in source
    assert row(source, 2)[-1][1].endswith("in the ISR, caught up 0 ms ago")
    assert row(source, 2)[0][0] == "white"


def test_a_long_log_folds_its_first_offsets_into_one_cell(brokers):
    time, (leader, f1, f2) = brokers
    one_behind_one_out(time, leader, f1, f2)
    source = replication_diagram(leader.get_partition(TP), {1: f1, 2: f2}, max_offsets=4).source
    assert offsets(row(source, 0)) == ["offsets 0-3", "4", "5", "|", "6", "7"]
    assert offsets(row(source, 2)) == ["offsets 0-2", ".", ".", "|", ".", "."]
    svg = replication_diagram(leader.get_partition(TP), max_offsets=4).pipe(format="svg")
    assert b"offsets 0&#45;3" in svg


def test_a_new_leader_knows_no_follower_leo_until_it_fetches(brokers):
    _, (leader, f1, _) = brokers
    produce(leader, 2)
    replicate(leader, f1, TP)
    f1.become_leader_or_follower(leader_and_isr(TP, leader=1, isr=[1], replicas=[0, 1, 2], leader_epoch=2))
    source = replication_diagram(f1.get_partition(TP)).source
    assert "leader broker 1, leader epoch 2, ISR [1]" in source
    assert "the leader knows no LEO: no fetch yet" in row(source, 0)[-1][1]
    assert "out of the ISR" in row(source, 2)[-1][1]


def test_it_refuses_a_partition_this_broker_does_not_lead(brokers):
    _, (_, f1, _) = brokers
    with pytest.raises(ValueError, match="broker 1 does not lead orders-0 \\(its leader is 0\\)"):
        replication_diagram(f1.get_partition(TP))


def test_the_docs_picture_has_a_follower_behind_and_one_out_of_the_isr():
    source = replication().source
    assert DIAGRAMS["replication"] is replication
    assert "ISR [0, 1], HW 6" in source
    assert offsets(row(source, 2)) == ["0", "1", "2", ".", ".", ".", "|", ".", "."]
    assert "out of the ISR, caught up 11,000 ms ago" in row(source, 2)[-1][1]
    assert "the leader knows LEO 6" in row(source, 1)[-1][1]
    assert read_bar(source, "consumer") == "offsets 0-5" and read_bar(source, "follower") == "offsets 0-7"


def test_the_window_keeps_the_hw_in_view_when_followers_are_far_behind(brokers):
    _, (leader, f1, f2) = brokers
    for round_ in range(5):  # 20 offsets; the followers stop fetching after offset 4
        produce(leader, 4)
        if round_ < 2:
            replicate(leader, f1, TP)
            replicate(leader, f2, TP)
    partition = leader.get_partition(TP)
    assert partition.high_watermark() == 4 and partition.get_replica().log_end_offset == 20
    source = replication_diagram(partition, {1: f1, 2: f2}, max_offsets=8).source
    assert offsets(row(source, 0)) == ["0", "1", "2", "3", "|", "4", "5", "6", "7", "offsets 8-19"]
    assert offsets(row(source, 1)) == ["0", "1", "2", "3", "|", "4", "5", "6", "7", "."]
    assert row(source, 0)[-2][0] == "#fde68a", "offsets above the HW fold into a yellow cell"
    assert read_bar(source, "consumer") == "offsets 0-3"
    assert read_bar(source, "follower") == "offsets 0-19"
