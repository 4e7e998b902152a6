"""``kafka-lite raft``'s arguments: a bad one is refused with exit code 2 and a message naming it,
before anything is created."""

from __future__ import annotations

import pytest

from kafka_lite.cli.main import main

pytestmark = pytest.mark.unit

ONE_VOTER = ["--voters", "1@127.0.0.1:9990", "--data-dir", "d"]


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["--node-id", "1", "--voters", "1@127.0.0.1", "--data-dir", "d"], "--voters"),
        (["--node-id", "1", "--voters", "one@127.0.0.1:9990", "--data-dir", "d"], "--voters"),
        (["--node-id", "4", "--voters", "1@127.0.0.1:9990,2@127.0.0.1:9991", "--data-dir", "d"], "--node-id"),
    ],
    ids=["voter-without-port", "voter-id-not-a-number", "node-not-a-voter"],
)
def test_a_bad_quorum_argument_is_named(argv, named, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["raft", "test-server", *argv]) == 2
    assert named in capsys.readouterr().err
    assert not (tmp_path / "d").exists()


@pytest.mark.parametrize(
    ("extra", "named"),
    [(["--throughput", "0"], "--throughput"), (["--linger-ms", "-1"], "--linger-ms")],
    ids=["zero-throughput", "negative-linger"],
)
def test_a_bad_number_is_named(extra, named, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_info:
        main(["raft", "test-server", "--node-id", "1", *ONE_VOTER, *extra])
    assert exit_info.value.code == 2
    assert named in capsys.readouterr().err
    assert not (tmp_path / "d").exists()


def test_check_of_a_missing_directory_is_named(capsys, tmp_path):
    assert main(["raft", "check", str(tmp_path / "nowhere")]) == 2
    assert "nowhere is not a directory" in capsys.readouterr().err
