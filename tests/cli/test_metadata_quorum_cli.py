"""kafka-lite metadata-quorum describe: the status and the replication table of a real quorum of three
``kafka-lite raft test-server`` processes (one quorum for the module), checked against what the
leader itself answers to DescribeQuorum; and every bad argument is one line and exit code 1, as
Kafka's tool exits on a TerseFailure."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kafka_lite.cli.main import main
from kafka_lite.raft.tools.quorum_client import describe_quorum, find_leader
from kafka_lite.tools.metadata_quorum_command import QuorumInfo, handle_describe_status
from kafka_lite.utils.ports import free_ports
from tests.support.waiting import wait_until

VOTERS = (1, 2, 3)
# Quick elections, a short linger and a light workload: the leader's high watermark moves, and the
# followers fetch (and so are caught up) every few milliseconds. The fetch timeout leaves room for a
# loaded machine, so that the one leader stays leader through the module.
PROFILE = ["--election-timeout-ms", "250", "--fetch-timeout-ms", "1000", "--linger-ms", "5",
           "--throughput", "50", "--record-size", "32", "--duration", "60"]  # fmt: skip


@pytest.fixture(scope="module")
def quorum(tmp_path_factory):
    """The voters' addresses by id, once a leader has committed some of its workload."""
    root = tmp_path_factory.mktemp("metadata-quorum")
    port = free_ports(len(VOTERS))
    addresses = {v: ("127.0.0.1", port + i) for i, v in enumerate(VOTERS)}
    voters = ",".join(f"{v}@{h}:{p}" for v, (h, p) in addresses.items())
    processes = []
    for v in VOTERS:
        out = open(root / f"voter-{v}.txt", "w")
        processes.append(subprocess.Popen(
            [sys.executable, "-m", "kafka_lite.cli.main", "raft", "test-server", "--node-id", str(v),
             "--voters", voters, "--data-dir", str(root / f"voter-{v}"), *PROFILE],
            stdout=out, stderr=subprocess.STDOUT, cwd=Path(__file__).resolve().parents[2],
        ))  # fmt: skip
        out.close()
    try:
        wait_until(
            lambda: (answer := find_leader(addresses)) is not None
            and answer["high_watermark"] > 5
            and all(v["log_end_offset"] > 0 for v in answer["current_voters"]),
            30, "a leader whose followers have fetched some of its workload",
        )  # fmt: skip
        yield addresses
    finally:
        # Killed, not stopped: nothing of their logs is read afterwards, and a graceful stop (a
        # leader resigning, each voter closing its log) would only cost the suite time.
        for process in processes:
            process.kill()
        for process in processes:
            process.wait(timeout=10)


def _run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["metadata-quorum", *args])
    out, err = capsys.readouterr()
    return code, out, err


def _bootstrap(addresses) -> str:
    return ",".join(f"{h}:{p}" for h, p in addresses)


@pytest.mark.integration
def test_status_names_the_leader_its_epoch_and_the_voters(quorum, capsys):
    code, out, err = _run(capsys, "--bootstrap-server", _bootstrap(quorum.values()), "describe", "--status")
    assert code == 0, err
    status = dict(line.split(":", 1) for line in out.splitlines())
    status = {key: value.strip() for key, value in status.items()}
    assert list(status) == ["ClusterId", "LeaderId", "LeaderEpoch", "HighWatermark", "MaxFollowerLag",
                            "MaxFollowerLagTimeMs", "CurrentVoters", "CurrentObservers"]  # fmt: skip
    # Asked again after the command: the same leader in the same epoch, unless an election came
    # between (a later epoch), and a high watermark at least as far as the command saw.
    leader = find_leader(quorum)
    assert int(status["LeaderEpoch"]) <= leader["leader_epoch"]
    if int(status["LeaderEpoch"]) == leader["leader_epoch"]:
        assert int(status["LeaderId"]) == leader["leader_id"]
        assert 5 < int(status["HighWatermark"]) <= leader["high_watermark"]
    assert status["CurrentVoters"] == "[1,2,3]" and status["CurrentObservers"] == "[]"
    assert int(status["MaxFollowerLag"]) >= 0 and int(status["MaxFollowerLagTimeMs"]) >= 0
    # The test-server's voters answer only the quorum's requests: no DescribeCluster, no cluster id.
    assert status["ClusterId"] == "null"


@pytest.mark.integration
def test_replication_lists_the_leader_then_the_followers(quorum, capsys):
    leader_id = find_leader(quorum)["leader_id"]
    # Only the leader's own address, through Kafka 3.7's option.
    code, out, err = _run(
        capsys, "--bootstrap-controller", _bootstrap([quorum[leader_id]]), "describe", "--replication"
    )
    assert code == 0, err
    header, *rows = [line.split("\t") for line in out.splitlines()]
    # prettyPrintTable ends every column with a tab: the last field of a split line is empty.
    assert [h.strip() for h in header] == ["NodeId", "LogEndOffset", "Lag", "LastFetchTimestamp",
                                           "LastCaughtUpTimestamp", "Status", ""]  # fmt: skip
    assert len({len(h) for h in header[:-1]}) > 1 and all(len(r[0]) == len(header[0]) for r in rows), (
        "padded columns"
    )
    table = [[cell.strip() for cell in row[:-1]] for row in rows]
    assert (int(table[0][0]), table[0][5]) == (leader_id, "Leader")
    assert sorted((int(r[0]), r[5]) for r in table[1:]) == [(v, "Follower") for v in VOTERS if v != leader_id]
    leader_end = int(table[0][1])
    for node_id, log_end_offset, lag, last_fetch, last_caught_up, _ in table:
        assert int(lag) == leader_end - int(log_end_offset) >= 0
        if int(node_id) != leader_id:
            # A follower fetches all the time: the leader has heard from it and seen it caught up.
            assert int(last_fetch) > 0 and int(last_caught_up) > 0


@pytest.mark.integration
def test_a_follower_alone_cannot_answer(quorum, capsys):
    leader_id = find_leader(quorum)["leader_id"]
    follower = next(v for v in VOTERS if v != leader_id)
    host, port = quorum[follower]
    assert describe_quorum((host, port))["error_code"] != 0, "a follower refuses DescribeQuorum"
    code, out, err = _run(capsys, "--bootstrap-server", f"{host}:{port}", "describe", "--status")
    assert (code, out) == (1, "")
    assert f"{host}:{port}: NOT_LEADER_OR_FOLLOWER" in err


@pytest.mark.unit
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["describe", "--status"], "one of --bootstrap-server or --bootstrap-controller is required"),
        (["--bootstrap-server", "h:1", "--bootstrap-controller", "h:2", "describe", "--status"],
         "--bootstrap-server and --bootstrap-controller"),
        (["--bootstrap-controller", "localhost", "describe", "--status"],
         "--bootstrap-controller: 'localhost' is not HOST:PORT"),
        (["--bootstrap-server", "h:1,h:99999", "describe", "--status"], "--bootstrap-server: 'h:99999' is not HOST:PORT"),
        (["--bootstrap-server", "h:1"], "a command is required: describe"),
        (["--bootstrap-server", "h:1", "describe"],
         "One of --status or --replication must be specified with describe sub-command"),
        (["--bootstrap-server", "h:1", "describe", "--status", "--replication"],
         "Only one of --status or --replication should be specified with describe sub-command"),
    ],
)  # fmt: skip
def test_a_bad_argument_is_one_line_and_exit_code_1(capsys, args, message):
    code, out, err = _run(capsys, *args)
    assert (code, out) == (1, "")
    assert message in " ".join(err.split()), err


class _Answer:
    """A DescribeQuorum answer as data, to work the status arithmetic by hand."""

    def __init__(self, partition: dict) -> None:
        self.partition = partition

    def describe_metadata_quorum(self) -> QuorumInfo:
        return QuorumInfo.from_partition(self.partition)

    def cluster_id(self) -> str:
        return "abc"


def _voter(replica_id: int, end: int, last_caught_up: int = -1) -> dict:
    return {"replica_id": replica_id, "log_end_offset": end, "last_fetch_timestamp": -1,
            "last_caught_up_timestamp": last_caught_up}  # fmt: skip


@pytest.mark.unit
@pytest.mark.parametrize(
    ("voters", "lag", "lag_time"),
    [
        # Voter 3 trails the leader (2) by 30 offsets and was caught up 250 ms before it.
        ([_voter(1, 95, 900), _voter(2, 100, 1000), _voter(3, 70, 750)], 30, 250),
        # Voter 3 trails, but one of the two times is unknown (-1 on the wire): -1.
        ([_voter(1, 95, 900), _voter(2, 100, 1000), _voter(3, 70)], 30, -1),
        # Nobody trails the leader: the first voter of the lowest end offset is the leader itself, 0.
        ([_voter(2, 100), _voter(1, 100), _voter(3, 100)], 0, 0),
    ],
)
def test_max_follower_lag_is_the_furthest_voter_behind_the_leader(voters, lag, lag_time):
    answer = {
        "leader_id": 2,
        "leader_epoch": 4,
        "high_watermark": 90,
        "current_voters": voters,
        "observers": [],
    }
    lines = handle_describe_status(_Answer(answer))
    assert lines[0] == "ClusterId:              abc"
    assert lines[4:6] == [f"MaxFollowerLag:         {lag}", f"MaxFollowerLagTimeMs:   {lag_time}"]
