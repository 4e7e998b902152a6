"""``kafka-lite consumer-groups`` without a real cluster: every bad argument is one line naming what is
wrong (exit code 2, no traceback); the --describe table built from given data; the reset scenarios'
arithmetic; and the whole command against a scripted broker (tests/clients/test_admin_groups.py's),
whose answers the test sets. Against real brokers and real consumer groups:
tests/cli/test_consumer_groups.py."""

from __future__ import annotations

import datetime

import pytest

from kafka_lite.cli import CliError
from kafka_lite.cli.consumer_groups import (
    DESCRIBE_HEADER,
    TopicSpec,
    check_offset_range,
    collect_group_assignment,
    format_table,
    group_note,
    parse_datetime,
    parse_topic_spec,
)
from kafka_lite.cli.main import main
from kafka_lite.clients.admin import ConsumerGroupDescription, MemberDescription
from kafka_lite.clients.metadata import Node
from kafka_lite.common.errors import Errors
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.consumer.offset_and_metadata import OffsetAndMetadata
from kafka_lite.utils.ports import free_port
from tests.clients.test_admin_groups import STABLE, GroupBroker

pytestmark = pytest.mark.unit


@pytest.fixture
def nowhere() -> str:
    """A loopback address nothing listens on; these tests fail before anything connects."""
    return f"127.0.0.1:{free_port()}"


def _run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["consumer-groups", *args])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


# -- arguments ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--describe"], "--describe needs --group"),
        (["--reset-offsets", "--all-topics", "--to-earliest"], "--reset-offsets needs --group"),
        (["--list", "--group", "g"], "--group cannot be used with --list"),
        (["--describe", "--group", " "], "--group: the group id cannot be empty"),
        (["--describe", "--group", "g", "--topic", "t"], "--topic goes only with --reset-offsets, not with --describe"),
        (["--list", "--to-earliest"], "--to-earliest goes only with --reset-offsets, not with --list"),
        (["--describe", "--group", "g", "--to-offset", "0"], "--to-offset goes only with --reset-offsets"),
        (["--describe", "--group", "g", "--execute"], "--execute goes only with --reset-offsets"),
        (["--reset-offsets", "--group", "g", "--to-earliest"],
         "One of the reset scopes should be defined: --all-topics, --topic."),
        (["--reset-offsets", "--group", "g", "--all-topics"],
         "--reset-offsets needs one of the reset scenarios: --to-earliest, --to-latest, --to-current, "
         "--to-offset, --shift-by, --to-datetime"),
        (["--reset-offsets", "--group", "g", "--topic", "orders:a", "--to-earliest"],
         "--topic 'orders:a': partitions must be numbers separated by commas, as in orders:0,1"),
        (["--reset-offsets", "--group", "g", "--topic", ":0", "--to-earliest"], "--topic ':0': the topic name is missing"),
        (["--reset-offsets", "--group", "g", "--all-topics", "--to-datetime", "yesterday"],
         "--to-datetime 'yesterday': expected an ISO 8601 time such as 2026-11-23T08:00:00.000"),
    ],
)  # fmt: skip
def test_a_bad_combination_is_named(capsys, nowhere, args, message):
    code, out, err = _run(capsys, "--bootstrap-server", nowhere, *args)
    assert code == 2 and out == ""
    assert err.startswith("kafka-lite consumer-groups: ") and message in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "one of the arguments --list --describe --reset-offsets is required"),
        (["--list", "--describe"], "argument --describe: not allowed with argument --list"),
        (["--reset-offsets", "--to-earliest", "--to-latest"], "argument --to-latest: not allowed with argument --to-earliest"),
        (["--reset-offsets", "--dry-run", "--execute"], "argument --execute: not allowed with argument --dry-run"),
        (["--reset-offsets", "--topic", "t", "--all-topics"], "argument --all-topics: not allowed with argument --topic"),
        (["--reset-offsets", "--to-offset", "ten"], "argument --to-offset: invalid int value: 'ten'"),
        (["--reset-offsets", "--shift-by", "1.5"], "argument --shift-by: invalid int value: '1.5'"),
        (["--list", "--timeout", "0"], "argument --timeout: 0 ms: give a timeout of at least 1 ms"),
        (["--list", "--timeout", "soon"], "argument --timeout: 'soon' is not a whole number of milliseconds"),
    ],
)  # fmt: skip
def test_options_of_the_wrong_kind_are_named_by_argparse(capsys, nowhere, args, message):
    with pytest.raises(SystemExit) as e:
        main(["consumer-groups", "--bootstrap-server", nowhere, *args])
    assert e.value.code == 2 and message in capsys.readouterr().err


def test_a_bad_bootstrap_server_is_named(capsys):
    code, _, err = _run(capsys, "--bootstrap-server", "localhost", "--list")
    assert code == 2 and "Invalid bootstrap server 'localhost': expected host:port" in err


def test_brokers_that_do_not_answer_fail_in_one_line_naming_them(capsys, nowhere):
    code, out, err = _run(capsys, "--bootstrap-server", nowhere, "--list", "--timeout", "200")
    assert (code, out) == (1, "")
    assert err == (f"kafka-lite consumer-groups: Timed out after 200 ms waiting for metadata (from "
                   f"--bootstrap-server {nowhere}: are the brokers up?)\n")  # fmt: skip


def test_topic_specs_name_a_topic_or_some_of_its_partitions():
    assert parse_topic_spec("orders") == TopicSpec("orders", None)
    assert parse_topic_spec("orders:2,0,2") == TopicSpec("orders", (0, 2))
    with pytest.raises(CliError, match="partitions must be numbers") as e:
        parse_topic_spec("orders:")
    assert e.value.exit_code == 2


def test_a_datetime_with_a_zone_is_that_instant_and_one_without_is_local_time():
    assert parse_datetime("2026-11-23T08:00:00Z") == 1_795_420_800_000
    assert parse_datetime("2026-11-23T09:30:00.250+01:30") == 1_795_420_800_250
    local = datetime.datetime(2026, 11, 23, 8, 0).astimezone()  # this machine's zone, as Kafka reads it
    assert parse_datetime("2026-11-23T08:00:00.000") == int(local.timestamp() * 1000)


# -- the describe table from given data ------------------------------------------------------------------------


def _description(state: str, *members: MemberDescription, protocol_type: str = "consumer"):
    return ConsumerGroupDescription(
        "billing", state, protocol_type, "range", members, Node(1, "127.0.0.1", 9093)
    )


def test_describe_rows_show_offsets_lag_and_owners_with_dashes_for_what_is_unknown():
    description = _description(
        "Stable",
        MemberDescription("consumer-1-aa", "alpha", "/127.0.0.1", (("orders", 1), ("orders", 0))),
        MemberDescription("consumer-2-bb", "beta", "/10.0.0.2", ()),
        MemberDescription("consumer-3-cc", "gamma", "/127.0.0.1", (("audit", 0),)),
    )
    committed = {
        ("orders", 0): OffsetAndMetadata(40),
        ("orders", 1): OffsetAndMetadata(7),
        ("orders", 2): OffsetAndMetadata(3),
    }
    log_end = {("orders", 0): 52, ("orders", 1): 7, ("orders", 2): 3, ("audit", 0): 9}
    rows = collect_group_assignment(description, committed, log_end)
    assert [r.lag for r in rows] == [None, 12, 0, 0, None]
    assert format_table(DESCRIBE_HEADER, [r.cells() for r in rows]) == [
        "GROUP   TOPIC  PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID   HOST       CLIENT-ID",
        "billing audit  0         -              9              -   consumer-3-cc /127.0.0.1 gamma",
        "billing orders 0         40             52             12  consumer-1-aa /127.0.0.1 alpha",
        "billing orders 1         7              7              0   consumer-1-aa /127.0.0.1 alpha",
        "billing orders 2         3              3              0   -             -          -",
        "billing -      -         -              -              -   consumer-2-bb /10.0.0.2  beta",
    ]  # fmt: skip


def test_a_partition_whose_topic_is_gone_shows_no_log_end_offset_and_no_lag():
    rows = collect_group_assignment(_description("Empty"), {("gone", 0): OffsetAndMetadata(5)}, {})
    assert [r.cells() for r in rows] == [("billing", "gone", "0", "5", "-", "-", "-", "-", "-")]


def test_format_table_pads_every_column_but_the_last():
    assert format_table(("A", "LONG-HEADER", "Z"), [("wide cell", "x", "last"), ("b", "y", "")]) == [
        "A         LONG-HEADER Z",
        "wide cell x           last",
        "b         y           ",
    ]


@pytest.mark.parametrize(
    ("state", "note"),
    [
        ("Stable", None),
        ("Empty", "Consumer group 'billing' has no active members."),
        ("PreparingRebalance", "Warning: Consumer group 'billing' is rebalancing."),
        ("AwaitingSync", "Warning: Consumer group 'billing' is rebalancing."),
    ],
)
def test_the_note_on_the_groups_state_is_kafkas(state, note):
    assert group_note("billing", state, "consumer") == note


def test_a_dead_or_non_consumer_group_cannot_be_described():
    with pytest.raises(CliError, match=r"^Consumer group 'billing' does not exist\.$"):
        group_note("billing", "Dead", "")
    with pytest.raises(
        CliError, match="Consumer Group 'billing' with protocol type 'connect' is not a valid consumer group"
    ):
        group_note("billing", "Stable", "connect")


def test_an_offset_outside_the_log_is_moved_to_its_edge_with_kafkas_warning():
    warnings: list[str] = []
    assert check_offset_range(("orders", 0), 5, 2, 10, warnings.append) == 5
    assert check_offset_range(("orders", 0), 0, 2, 10, warnings.append) == 2
    assert check_offset_range(("orders", 0), 99, 2, 10, warnings.append) == 10
    assert warnings == [
        "New offset (0) is lower than earliest offset for topic partition orders-0. Value will be set to 2",
        "New offset (99) is higher than latest offset for topic partition orders-0. Value will be set to 10",
    ]


# -- the whole command against a scripted broker ---------------------------------------------------------------


@pytest.fixture
def broker():
    server = GroupBroker()
    yield server
    server.close()


def _cli(capsys, broker: GroupBroker, *args: str) -> tuple[int, str, str]:
    return _run(capsys, "--bootstrap-server", f"127.0.0.1:{broker.port}", "--timeout", "3000", *args)


def test_list_prints_consumer_groups_and_leaves_out_other_kinds(capsys, broker):
    broker.groups = {"billing": STABLE, "stored": {**STABLE, "protocol_type": ""},
                     "connect-cluster": {**STABLE, "protocol_type": "connect"}}  # fmt: skip
    assert _cli(capsys, broker, "--list") == (0, "billing\nstored\n", "")


def test_describe_prints_one_row_per_partition(capsys, broker, monkeypatch):
    monkeypatch.setenv("COLUMNS", "40")  # a narrow terminal wraps nothing
    broker.groups = {"billing": STABLE}
    broker.committed = {"billing": {("orders", 0): 4, ("orders", 2): 10}}
    code, out, err = _cli(capsys, broker, "--describe", "--group", "billing")
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        "GROUP   TOPIC  PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST       CLIENT-ID",
        "billing orders 0         4              10             6   c-1         /127.0.0.1 alpha",
        "billing orders 1         -              10             -   c-1         /127.0.0.1 alpha",
        "billing orders 2         10             10             0   c-2         /127.0.0.1 beta",
    ]  # fmt: skip


def test_describe_notes_a_group_without_members_on_stderr(capsys, broker):
    broker.groups = {"billing": {**STABLE, "state": "Empty", "protocol": "", "members": []}}
    broker.committed = {"billing": {("orders", 1): 3}}
    code, out, err = _cli(capsys, broker, "--describe", "--group", "billing")
    assert code == 0 and err == "Consumer group 'billing' has no active members.\n"
    assert out.splitlines()[1].split() == ["billing", "orders", "1", "3", "10", "7", "-", "-", "-"]


def test_describe_of_an_unknown_group_fails_in_one_line(capsys, broker):
    code, out, err = _cli(capsys, broker, "--describe", "--group", "nobody")
    assert (code, out) == (1, "")
    assert err == "kafka-lite consumer-groups: Consumer group 'nobody' does not exist.\n"


def test_a_reset_is_refused_while_the_group_has_active_members(capsys, broker):
    broker.groups = {"billing": STABLE}
    code, out, err = _cli(capsys, broker, "--reset-offsets", "--group", "billing", "--all-topics",
                          "--to-earliest", "--execute")  # fmt: skip
    assert (code, out) == (1, "")
    assert (
        "Assignments can only be reset if the group 'billing' is inactive, but the current state is Stable."
        in err
    )
    assert broker.sent(ApiKeys.OFFSET_COMMIT) == []


def test_a_dry_run_shows_the_new_offsets_and_commits_nothing(capsys, broker):
    broker.groups = {"billing": {**STABLE, "state": "Empty", "members": []}}
    code, out, err = _cli(capsys, broker, "--reset-offsets", "--group", "billing", "--topic", "orders:1,2",
                          "--to-offset", "99", "--dry-run")  # fmt: skip
    assert code == 0
    assert out.splitlines() == [
        "GROUP   TOPIC  PARTITION NEW-OFFSET",
        "billing orders 1         10",
        "billing orders 2         10",
    ]
    assert (
        "New offset (99) is higher than latest offset for topic partition orders-1. Value will be set to 10"
        in err
    )
    assert broker.sent(ApiKeys.OFFSET_COMMIT) == []


def test_execute_commits_the_new_offsets_from_outside_the_group(capsys, broker):
    broker.committed = {
        "billing": {("orders", 0): 7, ("orders", 2): 9}
    }  # a group the coordinator forgot: Dead
    code, out, err = _cli(capsys, broker, "--reset-offsets", "--group", "billing", "--all-topics",
                          "--shift-by", "-6", "--execute")  # fmt: skip
    assert (code, err) == (0, "New offset (1) is lower than earliest offset for topic partition orders-0. "
                              "Value will be set to 2\n")  # fmt: skip
    (commit,) = broker.sent(ApiKeys.OFFSET_COMMIT)
    assert (commit["group_id"], commit["group_generation_id"], commit["member_id"]) == ("billing", -1, "")
    assert commit["topics"] == [{"topic": "orders", "partitions": [
        {"partition": 0, "offset": 2, "metadata": ""}, {"partition": 2, "offset": 3, "metadata": ""}]}]  # fmt: skip
    assert out.splitlines()[1:] == ["billing orders 0         2", "billing orders 2         3"]


def test_without_dry_run_or_execute_a_reset_warns_and_commits_nothing(capsys, broker):
    code, out, err = _cli(
        capsys, broker, "--reset-offsets", "--group", "billing", "--topic", "orders", "--to-latest"
    )
    assert code == 0 and err.startswith(
        "WARN: No action will be performed as the --execute option is missing"
    )
    assert len(out.splitlines()) == 4 and broker.sent(ApiKeys.OFFSET_COMMIT) == []


def test_to_datetime_with_no_record_after_the_time_resets_to_the_log_end(capsys, broker):
    broker.at_time = -1
    code, out, _ = _cli(capsys, broker, "--reset-offsets", "--group", "billing", "--topic", "orders:0",
                        "--to-datetime", "2030-01-01T00:00:00Z", "--execute")  # fmt: skip
    assert code == 0 and out.splitlines()[1].split() == ["billing", "orders", "0", "10"]
    (lookup,) = [
        b for b in broker.sent(ApiKeys.LIST_OFFSETS) if b["topics"][0]["partitions"][0]["timestamp"] >= 0
    ]
    assert lookup["topics"][0]["partitions"] == [{"partition": 0, "timestamp": 1_893_456_000_000}]


def test_to_current_keeps_committed_offsets_and_takes_the_log_end_elsewhere(capsys, broker):
    broker.committed = {"billing": {("orders", 0): 4}}
    code, out, _ = _cli(capsys, broker, "--reset-offsets", "--group", "billing", "--topic", "orders",
                        "--to-current", "--dry-run")  # fmt: skip
    assert code == 0 and [line.split()[-1] for line in out.splitlines()] == ["NEW-OFFSET", "4", "10", "10"]


def test_shift_by_without_a_committed_offset_is_refused_naming_the_partition(capsys, broker):
    code, _, err = _cli(capsys, broker, "--reset-offsets", "--group", "billing", "--topic", "orders:1",
                        "--shift-by", "1", "--execute")  # fmt: skip
    assert code == 1
    assert "Cannot shift offset for partition orders-1 since there is no current committed offset" in err


def test_a_topic_or_partition_that_does_not_exist_is_named(capsys, broker):
    args = ("--reset-offsets", "--group", "billing", "--to-earliest", "--execute")
    code, _, err = _cli(capsys, broker, *args, "--topic", "nothing")
    assert code == 1 and "--topic nothing: the topic does not exist" in err
    code, _, err = _cli(capsys, broker, *args, "--topic", "orders:1,5,7")
    assert code == 1 and "--topic orders: no partition 5, 7 (orders has partitions 0-2)" in err
    assert broker.sent(ApiKeys.OFFSET_COMMIT) == []


def test_a_commit_the_coordinator_refuses_fails_in_one_line(capsys, broker):
    broker.commit_error = Errors.UNKNOWN_MEMBER_ID  # a member joined between the check and the commit
    code, _, err = _cli(capsys, broker, "--reset-offsets", "--group", "billing", "--topic", "orders:0",
                        "--to-earliest", "--execute")  # fmt: skip
    assert code == 1
    assert err.startswith("kafka-lite consumer-groups: The coordinator of group 'billing' refused the commit")
