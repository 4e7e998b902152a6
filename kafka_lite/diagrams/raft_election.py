"""A KRaft election as a sequence diagram: three voters as lanes, each Vote, BeginQuorumEpoch and
Fetch an arrow between two of them, in the order the simulated network delivered them.

No Kafka twin: a picture of one run of chapter 12's Raft simulation (``kafka_lite.raft.simulation``),
recorded by its ``MessageRouter``'s ``trace``.
Book:    beyond the book: chapter 12 (KRaft)

Nothing here is drawn by hand: ``election_timeline`` runs the simulation on one seed, on simulated
time (so every build draws the same run), from three voters starting Unattached until each of the
first leader's followers has learnt from a Fetch answer that the leader's first entry is committed,
and keeps the messages; ``timeline_diagram`` (chapter 10's) draws them. Each row is what the receiver
read, at the simulated time it arrived.
"""

from __future__ import annotations

import graphviz

from kafka_lite.common.protocol.raft_messages import RaftApiKeys
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.diagrams.transaction_timeline import timeline_diagram
from kafka_lite.raft import raft_util
from kafka_lite.raft.simulation import scenarios

SEED = 3  # a run whose first election is won at the first try, as most are
VOTERS = 3
METADATA = TopicPartition("__cluster_metadata", 0)


def election_timeline(seed: int = SEED) -> dict:
    """The messages of the run's first election, as a timeline (``timeline_diagram``'s
    shape, times in ms from the run's start): from the first Vote until each follower has learnt,
    in a Fetch answer, that the new leader's first entry (its LeaderChange record) is committed."""
    sim = scenarios.setup("election picture", seed, VOTERS)
    start = sim.cluster.time.milliseconds()
    sim.router.trace = trace = []
    sim.scheduler.run_until(sim.cluster.has_consistent_leader, "a leader", scenarios.ELECTION_BOUND_MS)
    leader = sim.cluster.latest_leader()
    followers = set(sim.cluster.voters) - {leader}

    def knows_the_commit(message: tuple) -> bool:
        _, _, _, api, kind, data = message
        if api != RaftApiKeys.FETCH or kind != "response":
            return False
        partition = raft_util.single_partition(data, METADATA, "responses") or {}
        return partition.get("high_watermark", -1) >= 1

    def each_follower_knows() -> bool:
        return followers <= {message[2] for message in trace if knows_the_commit(message)}

    sim.scheduler.run_until(
        each_follower_knows, "each follower told of the commit", scenarios.PROGRESS_BOUND_MS
    )
    rows = []
    told: set[int] = set()
    for message in trace:
        t, sender, receiver, api, kind, data = message
        if api == RaftApiKeys.FETCH and (receiver if kind == "response" else sender) in told:
            continue  # a follower's Fetches after it learnt of the commit: the picture ends there
        text, error = _describe(RaftApiKeys(api), kind, data)
        rows.append({"t": t - start, "from": f"voter {sender}", "to": f"voter {receiver}", "text": text,
                     "kind": "error" if error else "answer" if kind == "response" else "request"})  # fmt: skip
        if knows_the_commit(message):
            told.add(receiver)
    return {
        "title": f"A first election: {VOTERS} voters, the simulation's seed {seed}; voter {leader} wins",
        "parties": [f"voter {n}" for n in sorted(sim.cluster.voters)],
        "rows": rows,
    }


def _describe(api: RaftApiKeys, kind: str, data: dict) -> tuple[str, bool]:
    """A message in a few words, and whether it is an answer with an error."""
    key = "responses" if api == RaftApiKeys.FETCH and kind == "response" else "topics"
    p = raft_util.single_partition(data, METADATA, key) or {}
    error = bool(data.get("error_code") or p.get("error_code"))
    if api == RaftApiKeys.VOTE and kind == "request":
        return (f"Vote: candidate {p['candidate_id']}, epoch {p['candidate_epoch']}, its log ends at "
                f"{p['last_offset']} (epoch {p['last_offset_epoch']})"), False  # fmt: skip
    if api == RaftApiKeys.VOTE:
        return f"{'granted' if p.get('vote_granted') else 'refused'} (epoch {p.get('leader_epoch')})", error
    if api == RaftApiKeys.BEGIN_QUORUM_EPOCH and kind == "request":
        return f"BeginQuorumEpoch: leader {p['leader_id']}, epoch {p['leader_epoch']}", False
    if api == RaftApiKeys.BEGIN_QUORUM_EPOCH:
        return "acknowledged", error
    if api == RaftApiKeys.FETCH and kind == "request":
        return f"Fetch from offset {p['fetch_offset']}, last epoch {p['last_fetched_epoch']}", False
    if api == RaftApiKeys.FETCH:
        records = len(p.get("records") or b"")
        high_watermark = p.get("high_watermark", -1)
        known = f"high watermark {high_watermark}" if high_watermark >= 0 else "high watermark not known yet"
        return (f"{records} bytes of records, " if records else "no records, ") + known, error
    return f"{api.name} {kind}", error


def raft_election() -> graphviz.Digraph:
    """The first election of the simulation's seed ``SEED``, as a sequence diagram."""
    legend = "blue: a request; green: its answer; orange: an answer with an error"
    return timeline_diagram(
        election_timeline(), name="raft_election", time_header="ms", time_format="{:.0f}", legend=legend
    )
