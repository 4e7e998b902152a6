"""A client for the workload's unit tests: partitions as in-memory lists, a consumer position per
assigned key, and errors planted by the test (``fail_sends_with``), so that the workload's runner
is tested without a cluster."""

from __future__ import annotations

from kafka_lite.jepsen.clients import classify_kafka_lite
from kafka_lite.jepsen.workload import Failure


class Log:
    """The "cluster": per key, the values in offset order; shared by every client of a test."""

    def __init__(self) -> None:
        self.partitions: dict[int, list[int]] = {}
        self.opened = 0


class FakeClient:
    def __init__(self, log: Log, process: int) -> None:
        self.log = log
        self.process = process
        self.positions: dict[int, int] = {}
        self.rebalance_log: list = []
        self.subscribed = False
        self.reader = False
        self.closed = False
        self.calls: list[str] = []
        self.fail_sends_with: BaseException | None = None
        self.in_txn: list[tuple[int, int]] | None = None
        log.opened += 1

    def send(self, k: int, v: int) -> int | None:
        if self.fail_sends_with is not None:
            raise self.fail_sends_with
        if self.in_txn is not None:
            self.in_txn.append((k, v))  # written at the commit: enough for these tests
            return None
        values = self.log.partitions.setdefault(k, [])
        values.append(v)
        return len(values) - 1

    def poll(self, poll_ms: int) -> dict:
        polled = {}
        for k, position in sorted(self.positions.items()):
            values = self.log.partitions.get(k, [])
            if position < len(values):
                polled[k] = [(o, values[o]) for o in range(position, len(values))]
                self.positions[k] = len(values)
        return polled

    def assign(self, keys, seek_to_beginning: bool) -> None:
        self.calls.append(f"assign {sorted(keys)} {seek_to_beginning}")
        self.positions = {k: 0 if seek_to_beginning else self.positions.get(k, 0) for k in keys}

    def subscribe(self) -> None:
        self.subscribed = True
        self.positions = {k: self.positions.get(k, 0) for k in self.log.partitions}

    def seek(self, k: int, offset: int) -> None:
        self.calls.append(f"seek {k} {offset}")
        self.positions[k] = offset

    def commit_sync(self) -> None:
        self.calls.append("commit_sync")

    def begin_transaction(self) -> None:
        self.calls.append("begin")
        self.in_txn = []

    def send_offsets_to_transaction(self, offsets: dict) -> None:
        self.calls.append(f"offsets {offsets}")

    def commit_transaction(self) -> None:
        self.calls.append("commit")
        for k, v in self.in_txn:
            self.log.partitions.setdefault(k, []).append(v)
        self.in_txn = None

    def abort_transaction(self) -> None:
        self.calls.append("abort")
        self.in_txn = None

    def is_invalid_txn_state(self, e: BaseException) -> bool:
        return False

    def is_unabortable(self, e: BaseException) -> bool:
        return classify_kafka_lite(e).end_process and classify_kafka_lite(e).type == "fail"

    def is_indefinite(self, e: BaseException) -> bool:
        return classify_kafka_lite(e).type == "info"

    def classify(self, e: BaseException) -> Failure:
        return classify_kafka_lite(e)

    def close(self) -> None:
        self.closed = True
