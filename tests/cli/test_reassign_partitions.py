"""``kafka-lite reassign-partitions`` and ``kafka-lite preferred-replica-election`` (Kafka 0.11's tools,
writing ZooKeeper): their arguments, the checks that refuse a plan before anything is written, and
``--generate``/``--execute``/``--verify`` and an election on a running cluster.

The checks run against a ZooKeeper chroot holding only a topic and broker registrations (no
controller acts on it, so what the tool wrote stays there to be read); the last tests use the
session's 3-broker cluster."""

from __future__ import annotations

import json
import uuid

import pytest

from kafka_lite.cli.main import main
from kafka_lite.zk.zk_utils import PREFERRED_REPLICA_ELECTION_PATH, REASSIGN_PARTITIONS_PATH, ZkUtils
from tests.support.topics import topic_name
from tests.support.waiting import wait_until

pytestmark = pytest.mark.integration


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _json_file(tmp_path, value, name: str = "plan.json") -> str:
    path = tmp_path / name
    path.write_text(value if isinstance(value, str) else json.dumps(value))
    return str(path)


def _plan(*entries: tuple[str, int, list[int]]) -> dict:
    return {"version": 1, "partitions": [{"topic": t, "partition": p, "replicas": r} for t, p, r in entries]}


@pytest.fixture
def zk_only(zookeeper):
    """A chroot with topic ``orders`` ({0: [0, 1], 1: [1, 2]}) and brokers 0, 1, 2 registered."""
    connect = f"{zookeeper.connect_string}/reassign-cli-{uuid.uuid4().hex[:8]}"
    zk = ZkUtils(connect)
    zk.setup_common_paths()
    zk.create_topic("orders", {0: [0, 1], 1: [1, 2]})
    for b in (0, 1, 2):
        zk.register_broker(b, "127.0.0.1", 9000 + b)
    yield connect, zk
    zk.close()


# -- arguments ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--verify"], "If --verify option is used, command must include --reassignment-json-file"),
        (["--execute"], "If --execute option is used, command must include --reassignment-json-file"),
        (["--generate", "--broker-list", "1"], "command must include both --topics-to-move-json-file and"),
        (
            ["--generate", "--broker-list", "1", "--topics-to-move-json-file", "t.json", "--reassignment-json-file", "p.json"],
            "Option \"--generate\" can't be used with option \"--reassignment-json-file\"",
        ),
        (["--execute", "--reassignment-json-file", "p.json", "--broker-list", "1"], "can't be used with option \"--broker-list\""),
        (["--execute", "--reassignment-json-file", "/nonexistent/plan.json"], "--reassignment-json-file /nonexistent/plan.json"),
    ],
)  # fmt: skip
def test_wrong_arguments_are_one_line_with_exit_code_2(capsys, argv, message):
    code, _, err = _run(capsys, "reassign-partitions", "--zookeeper", "127.0.0.1:1", *argv)
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1, err


def test_exactly_one_action_is_required(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["reassign-partitions", "--zookeeper", "127.0.0.1:1", "--verify", "--execute"])
    assert exit_info.value.code == 2


# -- --execute's checks: nothing written ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "plan, code, message",
    [
        ("{not json", 2, "--reassignment-json-file: not JSON"),
        ('{"partitions": [{"topic": "orders", "partition": "0", "replicas": [1]}]}', 2, "expected"),
        ({"version": 1, "partitions": []}, 2, "Partition reassignment data file is empty"),
        (_plan(("orders", 0, [])), 2, "Partition replica list cannot be empty"),
        (_plan(("orders", 0, [1, 2]), ("orders", 0, [2, 1])), 2,
         "Partition reassignment contains duplicate topic partitions: [orders,0]"),
        (_plan(("orders", 0, [1, 1])), 2,
         "Partition replica lists may not contain duplicate entries: [orders,0] contains multiple entries for 1"),
        (_plan(("orders", 5, [1, 2])), 1, "The proposed assignment contains non-existent partitions: [orders,5]"),
        (_plan(("nope", 0, [1, 2])), 1, "The proposed assignment contains non-existent partitions: [nope,0]"),
        (_plan(("orders", 0, [1, 9])), 1, "The proposed assignment contains non-existent brokerIDs: 9"),
    ],
    ids=["not-json", "bad-field", "empty", "no-replicas", "duplicate-partition", "duplicate-replica",
         "unknown-partition", "unknown-topic", "unknown-broker"],
)  # fmt: skip
def test_execute_refuses_a_bad_plan_and_writes_nothing(zk_only, tmp_path, capsys, plan, code, message):
    connect, zk = zk_only
    result = _run(
        capsys, "reassign-partitions", "--zookeeper", connect, "--execute",
        "--reassignment-json-file", _json_file(tmp_path, plan),
    )  # fmt: skip
    assert result[0] == code
    assert message in result[2], result[2]
    assert not zk.client.exists(REASSIGN_PARTITIONS_PATH)


def test_execute_writes_the_plan_and_refuses_a_second_while_one_runs(zk_only, tmp_path, capsys):
    connect, zk = zk_only
    plan = _json_file(tmp_path, _plan(("orders", 0, [2, 1])))
    code, out, _ = _run(
        capsys, "reassign-partitions", "--zookeeper", connect, "--execute", "--reassignment-json-file", plan
    )
    assert code == 0
    assert "Current partition replica assignment\n\n" in out
    rollback = json.loads(out.split("\n\n")[1])
    assert {(p["topic"], p["partition"]): p["replicas"] for p in rollback["partitions"]} == {
        ("orders", 0): [0, 1],
        ("orders", 1): [1, 2],
    }
    assert "Save this to use as the --reassignment-json-file option during rollback" in out
    assert out.rstrip().endswith("Successfully started reassignment of partitions.")
    assert zk.get_partitions_being_reassigned() == {("orders", 0): [2, 1]}

    other = _json_file(tmp_path, _plan(("orders", 1, [0, 1])), "other.json")
    code, _, err = _run(
        capsys, "reassign-partitions", "--zookeeper", connect, "--execute", "--reassignment-json-file", other
    )
    assert (code, err.split(": ", 1)[1].strip()) == (1, "There is an existing assignment running.")
    assert zk.get_partitions_being_reassigned() == {("orders", 0): [2, 1]}

    # --verify while it runs (no controller here to complete it)
    code, out, _ = _run(
        capsys, "reassign-partitions", "--zookeeper", connect, "--verify", "--reassignment-json-file", plan
    )
    assert (code, out.splitlines()) == (
        0, ["Status of partition reassignment: ", "Reassignment of partition [orders,0] is still in progress"]
    )  # fmt: skip


def test_verify_reports_a_partition_whose_replicas_are_not_the_plans_as_failed(zk_only, tmp_path, capsys):
    connect, _ = zk_only
    plan = _json_file(tmp_path, _plan(("orders", 0, [2, 1]), ("orders", 1, [1, 2])))
    code, out, _ = _run(
        capsys, "reassign-partitions", "--zookeeper", connect, "--verify", "--reassignment-json-file", plan
    )
    assert code == 1
    assert out.splitlines() == [
        "Status of partition reassignment: ",
        "ERROR: Assigned replicas (0,1) don't match the list of replicas for reassignment (2,1) for partition [orders,0]",
        "Reassignment of partition [orders,0] failed",
        "Reassignment of partition [orders,1] completed successfully",
    ]


# -- --throttle (KIP-73) -----------------------------------------------------------------------------------------


def test_execute_with_a_throttle_sets_the_rates_and_the_moving_replicas_and_verify_removes_them(
    zk_only, tmp_path, capsys
):
    """[0, 1] -> [2, 1] and [1, 2] unchanged: the leader side throttles partition 0's current replicas,
    the follower side the one it gains (broker 2); the rate goes on brokers 0, 1 and 2. A --verify
    while the move runs keeps it; once the assignment is the plan's, it removes all of it."""
    connect, zk = zk_only
    zk.change_topic_config("orders", {"retention.ms": "60000"})
    zk.change_broker_config([0], {"some.other.config": "kept"})
    plan = _json_file(tmp_path, _plan(("orders", 0, [2, 1]), ("orders", 1, [1, 2])))
    code, out, _ = _run(
        capsys, "reassign-partitions", "--zookeeper", connect, "--execute", "--reassignment-json-file", plan,
        "--throttle", "1000",
    )  # fmt: skip
    assert code == 0
    assert "Warning: You must run Verify periodically, until the reassignment completes" in out
    assert "The throttle limit was set to 1000 B/s" in out
    assert zk.get_topic_config("orders") == {
        "retention.ms": "60000",
        "leader.replication.throttled.replicas": "0:0,0:1",
        "follower.replication.throttled.replicas": "0:2",
    }
    rates = {"leader.replication.throttled.rate": "1000", "follower.replication.throttled.rate": "1000"}
    assert zk.fetch_all_entity_configs("brokers") == {
        "0": {"some.other.config": "kept", **rates},
        "1": rates,
        "2": rates,
    }

    # rerun while it runs: only the rate changes
    code, out, _ = _run(
        capsys, "reassign-partitions", "--zookeeper", connect, "--execute", "--reassignment-json-file", plan,
        "--throttle", "5000",
    )  # fmt: skip
    assert (code, out.splitlines()) == (
        0, ["There is an existing assignment running.", "The throttle limit was set to 5000 B/s"]
    )  # fmt: skip
    assert zk.fetch_entity_config("brokers", "2")["follower.replication.throttled.rate"] == "5000"

    code, out, _ = _run(
        capsys, "reassign-partitions", "--zookeeper", connect, "--verify", "--reassignment-json-file", plan
    )
    assert "Throttle was removed." not in out, "partition 0 is still moving"
    assert zk.fetch_entity_config("brokers", "1") != {}

    # what the controller does when the move completes
    zk.client.delete(REASSIGN_PARTITIONS_PATH)
    zk.update_partition_assignment("orders", {0: [2, 1], 1: [1, 2]})
    code, out, _ = _run(
        capsys, "reassign-partitions", "--zookeeper", connect, "--verify", "--reassignment-json-file", plan
    )
    assert (code, out.splitlines()[-1]) == (0, "Throttle was removed.")
    assert zk.get_topic_config("orders") == {"retention.ms": "60000"}
    assert zk.fetch_all_entity_configs("brokers") == {"0": {"some.other.config": "kept"}, "1": {}, "2": {}}
    code, out, _ = _run(
        capsys, "reassign-partitions", "--zookeeper", connect, "--verify", "--reassignment-json-file", plan
    )
    assert "Throttle was removed." not in out, "nothing left to remove"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--verify", "--reassignment-json-file", "p.json", "--throttle", "10"],
         'Option "--verify" can\'t be used with option "--throttle"'),
        (["--generate", "--broker-list", "1", "--topics-to-move-json-file", "t.json", "--throttle", "10"],
         'Option "--generate" can\'t be used with option "--throttle"'),
        (["--execute", "--reassignment-json-file", "p.json", "--throttle", "-5"], "--throttle -5"),
    ],
)  # fmt: skip
def test_throttle_goes_only_with_execute(capsys, argv, message):
    code, _, err = _run(capsys, "reassign-partitions", "--zookeeper", "127.0.0.1:1", *argv)
    assert code == 2
    assert message in err


# -- --generate ----------------------------------------------------------------------------------------------


def test_generate_proposes_the_topics_partitions_over_the_listed_brokers_and_writes_nothing(
    zk_only, tmp_path, capsys
):
    connect, zk = zk_only
    topics = _json_file(tmp_path, {"topics": [{"topic": "orders"}], "version": 1}, "topics.json")
    code, out, _ = _run(
        capsys, "reassign-partitions", "--zookeeper", connect, "--generate",
        "--topics-to-move-json-file", topics, "--broker-list", "1,2,7",
    )  # fmt: skip
    assert code == 0
    current_block, proposed_block = out.split("\n\n")[:2]
    current_lines, proposed_lines = current_block.splitlines(), proposed_block.splitlines()
    assert current_lines[0] == "Current partition replica assignment"
    assert proposed_lines[0] == "Proposed partition reassignment configuration"
    current = json.loads(current_lines[1])
    assert current == _plan(("orders", 0, [0, 1]), ("orders", 1, [1, 2]))
    proposed = json.loads(proposed_lines[1])
    replicas = [p["replicas"] for p in proposed["partitions"]]
    assert [(p["topic"], p["partition"]) for p in proposed["partitions"]] == [("orders", 0), ("orders", 1)]
    assert all(sorted(r) == [1, 2] for r in replicas), "broker 7 does not exist: only 1 and 2 are used"
    assert not zk.client.exists(REASSIGN_PARTITIONS_PATH)


@pytest.mark.parametrize(
    "topics, brokers, code, message",
    [
        ({"topics": [{"topic": "orders"}]}, "1,1", 2, "Broker list contains duplicate entries: 1"),
        ({"topics": [{"topic": "orders"}]}, "1,x", 2, "--broker-list '1,x'"),
        ({"topics": [{"topic": "orders"}, {"topic": "orders"}]}, "1,2", 2,
         "List of topics to reassign contains duplicate entries: orders"),
        ({"topics": [{"topic": "orders"}]}, "2", 1, "Replication factor: 2 larger than available brokers: 1."),
    ],
)  # fmt: skip
def test_generate_refuses_bad_input(zk_only, tmp_path, capsys, topics, brokers, code, message):
    connect, _ = zk_only
    result = _run(
        capsys, "reassign-partitions", "--zookeeper", connect, "--generate",
        "--topics-to-move-json-file", _json_file(tmp_path, topics), "--broker-list", brokers,
    )  # fmt: skip
    assert result[0] == code
    assert message in result[2], result[2]


# -- preferred-replica-election --------------------------------------------------------------------------------


def test_preferred_election_writes_the_existing_partitions_and_skips_the_others(zk_only, tmp_path, capsys):
    connect, zk = zk_only
    parts = _json_file(
        tmp_path, {"partitions": [{"topic": "orders", "partition": 1}, {"topic": "orders", "partition": 4}]}
    )
    code, out, _ = _run(
        capsys, "preferred-replica-election", "--zookeeper", connect, "--path-to-json-file", parts
    )
    assert code == 0
    assert out.splitlines() == [
        'Created preferred replica election path with {"version":1,"partitions":[{"topic":"orders","partition":1}]}',
        "Successfully started preferred replica election for partitions Set([orders,1])",
        "Skipping preferred replica leader election for partition [orders,4] since it doesn't exist.",
    ]
    assert zk.get_partitions_undergoing_preferred_replica_election() == {("orders", 1)}

    code, _, err = _run(capsys, "preferred-replica-election", "--zookeeper", connect)
    assert code == 1
    assert (
        "Preferred replica leader election currently in progress for Set([orders,1]). Aborting operation"
        in err
    )


def test_preferred_election_without_a_file_covers_every_partition(zk_only, capsys):
    connect, zk = zk_only
    assert _run(capsys, "preferred-replica-election", "--zookeeper", connect)[0] == 0
    assert zk.get_partitions_undergoing_preferred_replica_election() == {("orders", 0), ("orders", 1)}


@pytest.mark.parametrize(
    "content, code, message",
    [
        ("{not json", 2, "Preferred replica election data is empty"),
        ('{"version": 1}', 2, "Preferred replica election data is empty"),
        ('{"partitions": [{"topic": "orders", "partition": 0}, {"topic": "orders", "partition": 0}]}', 2,
         "Preferred replica election data contains duplicate partitions: [orders,0]"),
        ('{"partitions": [{"topic": "orders", "partition": 9}]}', 1, "Set([orders,9]) do not exist"),
    ],
)  # fmt: skip
def test_preferred_election_refuses_bad_input_and_writes_nothing(
    zk_only, tmp_path, capsys, content, code, message
):
    connect, zk = zk_only
    result = _run(
        capsys,
        "preferred-replica-election",
        "--zookeeper",
        connect,
        "--path-to-json-file",
        _json_file(tmp_path, content),
    )
    assert result[0] == code
    assert message in result[2], result[2]
    assert not zk.client.exists(PREFERRED_REPLICA_ELECTION_PATH)


# -- on a running cluster ---------------------------------------------------------------------------------------


def test_generate_execute_verify_move_a_topic_on_the_cluster(cluster, tmp_path, capsys):
    topic = topic_name("cli-moved")
    cluster.create_topic(topic, partitions=2, replication_factor=1)
    connect = cluster.zk_connect
    topics = _json_file(tmp_path, {"topics": [{"topic": topic}], "version": 1}, "topics.json")
    code, out, _ = _run(
        capsys, "reassign-partitions", "--zookeeper", connect, "--generate",
        "--topics-to-move-json-file", topics, "--broker-list", "2",
    )  # fmt: skip
    assert code == 0
    proposed = out.split("Proposed partition reassignment configuration\n")[1].strip()
    assert json.loads(proposed) == _plan((topic, 0, [2]), (topic, 1, [2]))
    plan = _json_file(tmp_path, proposed)
    assert (
        _run(
            capsys,
            "reassign-partitions",
            "--zookeeper",
            connect,
            "--execute",
            "--reassignment-json-file",
            plan,
        )[0]
        == 0
    )

    def verified() -> bool:
        code, out, _ = _run(
            capsys,
            "reassign-partitions",
            "--zookeeper",
            connect,
            "--verify",
            "--reassignment-json-file",
            plan,
        )
        return code == 0 and out.count("completed successfully") == 2

    wait_until(verified, what="--verify to report both partitions moved")
    wait_until(lambda: all(cluster.leader_of(topic, p) == 2 for p in (0, 1)), what="broker 2 to lead both")


def test_the_election_tool_gives_leadership_back_on_the_cluster(cluster, tmp_path, capsys):
    topic = topic_name("cli-preferred")
    cluster.create_topic(topic, partitions=1, replication_factor=2)
    zk = next(s for s in cluster.servers if s.running).zk
    preferred = zk.get_partition_assignment(topic)[0][0]
    wait_until(
        lambda: len(zk.get_partition_state(topic, 0).leader_and_isr.isr) == 2, what="both replicas in sync"
    )
    cluster.move_leader(topic, 0)
    assert cluster.leader_of(topic, 0) != preferred
    parts = _json_file(tmp_path, {"partitions": [{"topic": topic, "partition": 0}]})
    code, _, _ = _run(
        capsys, "preferred-replica-election", "--zookeeper", cluster.zk_connect, "--path-to-json-file", parts
    )
    assert code == 0
    wait_until(lambda: cluster.leader_of(topic, 0) == preferred, what="the preferred replica to lead again")
    wait_until(lambda: not zk.client.exists(PREFERRED_REPLICA_ELECTION_PATH), what="the path to be deleted")
