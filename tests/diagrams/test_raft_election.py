"""Chapter 12's election picture: a recorded run of the Raft simulation, the same on every build, and
an election as Raft has it (votes asked and granted, the new leader announced, then fetched from)."""

from __future__ import annotations

import re

import pytest

from kafka_lite.diagrams import DIAGRAMS
from kafka_lite.diagrams.raft_election import election_timeline, raft_election

pytestmark = pytest.mark.unit


def test_the_recorded_election_is_the_same_on_every_build_and_reads_as_raft_has_it():
    timeline = election_timeline()
    assert timeline == election_timeline(), (
        "the run is on simulated time and one seed: drawn the same each time"
    )
    rows = timeline["rows"]
    leader = re.search(r"voter (\d+) wins", timeline["title"]).group(1)
    followers = [p for p in timeline["parties"] if p != f"voter {leader}"]
    times = [row["t"] for row in rows]
    assert times == sorted(times), "in the order the network delivered them"
    votes = [row for row in rows if row["text"].startswith("Vote:")]
    assert {row["to"] for row in votes} == set(followers) and all(
        row["from"] == f"voter {leader}" for row in votes
    )
    grants = [row for row in rows if row["text"].startswith("granted")]
    assert {row["from"] for row in grants} == set(followers), "a majority (here both others) granted the vote"
    begins = [row for row in rows if row["text"].startswith("BeginQuorumEpoch")]
    assert rows.index(begins[0]) > rows.index(grants[0]), "the leader announces itself once it has won"
    for follower in followers:
        last = [row for row in rows if follower in (row["from"], row["to"])][-1]
        assert last["to"] == follower and re.search(r"high watermark [1-9]", last["text"]), (
            f"{follower}'s last row tells it the LeaderChange record is committed: {last}"
        )


def test_the_picture_has_a_row_per_message_and_is_one_of_the_sites_diagrams():
    source = raft_election().source
    assert source.count("<tr>") == len(election_timeline()["rows"]) + 3  # title, lanes, legend
    assert DIAGRAMS["raft_election"] is raft_election
