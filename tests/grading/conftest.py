"""Every grading test records lab workspaces in a state directory of its own, never the user's."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _own_state_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("KAFKA_LITE_STATE_DIR", str(tmp_path / "kafka-lite-state"))
    monkeypatch.delenv("KAFKA_LITE_LAB_CODE", raising=False)
