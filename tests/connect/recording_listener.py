"""A status listener for tests: it records every event it hears, in order."""

from __future__ import annotations

import threading

from kafka_lite.connect.runtime.abstract_status import ConnectorStatus, TaskStatus


class RecordingListener(ConnectorStatus.Listener, TaskStatus.Listener):
    def __init__(self) -> None:
        self.events: list[tuple[str, object]] = []
        self._lock = threading.Lock()

    def _record(self, event: str, id: object) -> None:
        with self._lock:
            self.events.append((event, id))

    def names(self) -> list[str]:
        with self._lock:
            return [event for event, _ in self.events]

    def on_startup(self, id) -> None:
        self._record("startup", id)

    def on_pause(self, id) -> None:
        self._record("pause", id)

    def on_resume(self, id) -> None:
        self._record("resume", id)

    def on_failure(self, id, cause) -> None:
        self._record("failure", id)

    def on_shutdown(self, id) -> None:
        self._record("shutdown", id)
