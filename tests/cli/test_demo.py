"""``kafka-lite demo --layers``: the record and storage layers at work, without a cluster."""

from __future__ import annotations

import pytest

from kafka_lite.cli.main import main

pytestmark = pytest.mark.unit


def test_demo_writes_checks_corrupts_and_converts(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # rich wraps long lines at the terminal width otherwise
    assert main(["demo", "--layers", "--dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "5 batches, 1000 records, offsets 0..999: all CRCs valid" in out
    assert "CorruptRecordException" in out
    assert "message set v0" in out and "record layer OK" in out
    assert (tmp_path / "00000000000000000000.log").stat().st_size > 0
