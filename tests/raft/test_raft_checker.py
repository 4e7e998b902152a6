"""The kill/restart checker against a real voter's log: a quorum of one (which elects itself) writes
records to disk; the checker finds the ones named in a committed file, reports a committed record the
log does not hold as lost, one missing only past a voter's log end (while a majority holds it) as
behind, and two different committed records at one offset as conflicting."""

from __future__ import annotations

import pytest

from kafka_lite.raft.raft_config import InetAddressSpec, RaftConfig
from kafka_lite.raft.tools import raft_checker
from kafka_lite.raft.tools.raft_checker import check, read_voter_log
from kafka_lite.raft.tools.raft_manager import KafkaRaftManager
from kafka_lite.raft.tools.test_raft_server import ByteArraySerde
from kafka_lite.utils.ports import free_ports
from tests.support.waiting import wait_until

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def voter_dir(tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("raft-checker") / "voter-1"
    config = RaftConfig({1: InetAddressSpec("127.0.0.1", free_ports(1))}, 2_000, 20, 1_000, 1_000, 2_000, 1)
    manager = KafkaRaftManager(1, data_dir, config, ByteArraySerde())
    manager.startup()
    try:
        wait_until(lambda: manager.client.quorum().is_leader(), 10, "the single voter to lead")
        epoch = manager.client.quorum().epoch()
        last = manager.client.schedule_append(epoch, [b"k0 pad", b"k1 pad", b"k2 pad"])
        wait_until(lambda: manager.log.high_watermark().offset > last, 10, "the records to commit")
    finally:
        manager.shutdown()
    return data_dir, last


def test_the_voters_log_is_read_from_its_segments(voter_dir):
    data_dir, last = voter_dir
    log = read_voter_log(data_dir)
    assert [log[o] for o in range(last - 2, last + 1)] == [b"k0", b"k1", b"k2"]


def test_committed_records_held_by_the_log_are_found(voter_dir, tmp_path):
    data_dir, last = voter_dir
    committed = tmp_path / "committed.txt"
    committed.write_text(f"{last - 2} k0\n{last - 1} k1\n{last} k2\n")
    report = check([data_dir], [committed])
    assert (report.committed, report.lost_count, report.ok) == (3, 0, True)


def test_a_committed_record_the_log_lacks_is_lost_and_a_disagreement_conflicts(voter_dir, tmp_path):
    data_dir, last = voter_dir
    first, second = tmp_path / "a.txt", tmp_path / "b.txt"
    first.write_text(f"{last} k2\n{last + 1} k3\n")  # k3 was never written
    second.write_text(f"{last - 1} k9\n{last} k2\n")  # another leader's k9 where the log has k1
    report = check([data_dir], [first, second])
    assert report.lost == {str(data_dir): [last - 1, last + 1]}
    assert report.ok is False
    assert any("lost: 2" == line for line in report.lines())
    # Different keys reported at one offset by two committed files.
    third = tmp_path / "c.txt"
    third.write_text(f"{last} other\n")
    assert check([data_dir], [first, third]).conflicts == [f"offset {last}: k2 and other"]


def test_a_voter_stopped_early_is_behind_not_lost_while_a_majority_holds_the_record(tmp_path, monkeypatch):
    # Three voters' logs as the checker reads them: 3 stopped while 1 and 2 went on committing
    # offsets 2 and 3; at offset 1, voter 2 holds another record (overwritten: a loss on voter 2).
    logs = {"1": {0: b"a", 1: b"b", 2: b"c", 3: b"d"}, "2": {0: b"a", 1: b"x", 2: b"c", 3: b"d"},
            "3": {0: b"a", 1: b"b"}}  # fmt: skip
    monkeypatch.setattr(raft_checker, "read_voter_log", lambda data_dir: logs[data_dir.name])
    committed = tmp_path / "committed.txt"
    committed.write_text("0 a\n1 b\n2 c\n3 d\n")
    report = check([tmp_path / v for v in ("1", "2", "3")], [committed])
    assert report.behind == {str(tmp_path / "3"): [2, 3]}
    assert report.lost == {str(tmp_path / "2"): [1]}
    assert f"{tmp_path / '3'}: found 2, lost 0, behind 2 (its log ends before offset 2)" in report.lines()
    # With voter 1 alone holding offset 3, no majority holds it: lost wherever it is missing.
    del logs["2"][3]
    assert check([tmp_path / v for v in ("1", "2", "3")], [committed]).lost == {
        str(tmp_path / "2"): [1, 3],
        str(tmp_path / "3"): [3],
    }
