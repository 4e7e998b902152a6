"""Planted bugs: broker processes with one of Kafka's rules broken, for the Jepsen checker to catch.

Python imports ``sitecustomize`` as it starts, from the first directory on its path that has one.
The planted-bug tests (``test_run_with_planted_bugs.py``) put this directory first on ``PYTHONPATH`` and
name a file in ``KAFKA_LITE_PLANTED_BUG_FILE`` before they restart the brokers; each broker process
then patches kafka_lite's classes with pytest's ``MonkeyPatch`` before it runs, one method per bug
in ``BUGS``. A patched method does what the bug does while the file names that bug, and calls
kafka_lite's own method otherwise, so the tests plant one bug after another by writing the file,
with one restart of the brokers for them all. kafka_lite itself has no switch for any of these.
Without the variable (or imported under another name, as the tests import it) this module changes
nothing.

Each bug breaks one rule, in a few lines, and says which.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path

BUG_FILE_VARIABLE = "KAFKA_LITE_PLANTED_BUG_FILE"


def acks_before_isr(planted: Callable) -> list:
    """Kafka answers an acks=all produce once every replica in the ISR has the records (the high
    watermark has passed them). This leader answers as soon as it has them itself."""
    from kafka_lite.common.errors import Errors
    from kafka_lite.server.partition import Partition

    enough = Partition.check_enough_replicas_reach_offset
    broken = lambda self, offset: (True, Errors.NONE) if self.is_leader() else enough(self, offset)  # noqa: E731
    return [(Partition, "check_enough_replicas_reach_offset", planted(enough, broken))]


def no_epoch_truncation(planted: Callable) -> list:
    """KIP-101: a replica that becomes a follower first truncates its log where its latest leader
    epoch ends in the new leader's log, dropping what it wrote or copied under a leader that was
    replaced. This follower keeps its whole log and fetches from its end."""
    from kafka_lite.server.replica_fetcher_thread import ReplicaFetcherThread

    def maybe_truncate(self) -> None:
        with self.partition_map_cond:
            for tp, state in self.partition_states.items():
                if state.truncating_log:
                    state.fetch_offset = self.replica_manager.get_partition(tp).get_replica().log_end_offset
                    state.truncating_log = False

    return [
        (ReplicaFetcherThread, "maybe_truncate", planted(ReplicaFetcherThread.maybe_truncate, maybe_truncate))
    ]


def fetch_past_hw(planted: Callable) -> list:
    """A consumer reads only below the high watermark, what every in-sync replica has (Kafka's
    ``fetchOnlyCommitted``, true for every fetch but a follower's). Here a consumer's fetch reads up
    to the leader's log end, as a follower's does."""
    from kafka_lite.server.replica_manager import FetchMetadata

    committed = FetchMetadata.fetch_only_committed.fget
    return [(FetchMetadata, "fetch_only_committed", property(planted(committed, lambda self: False)))]


def read_committed_ignores_lso(planted: Callable) -> list:
    """KIP-98: a read_committed consumer reads only below the last stable offset, the first offset
    of a transaction still open. Here the LSO is the high watermark, open transactions or not."""
    from kafka_lite.server.partition import Partition

    def last_stable_offset(self, high_watermark: int | None = None) -> int:
        return self.high_watermark() if high_watermark is None else high_watermark

    return [(Partition, "last_stable_offset", planted(Partition.last_stable_offset, last_stable_offset))]


def marker_missing(planted: Callable) -> list:
    """KIP-98: a transaction ends with its marker (COMMIT or ABORT) in every partition it wrote to.
    Here a transaction coordinator sends no marker to the last of a topic's partitions in a
    transaction over several, and counts that marker written: that partition's transaction stays
    open until the producer's next marker there, whatever that one decides."""
    from kafka_lite.common.topic import is_internal
    from kafka_lite.coordinator.transaction.transaction_marker_channel_manager import (
        TransactionMarkerChannelManager as Manager,
    )

    send = Manager.add_txn_markers_to_send

    def add_txn_markers_to_send(
        self, transactional_id, coordinator_epoch, is_commit, txn_metadata, new_metadata
    ):
        with txn_metadata.lock:
            written = sorted(tp for tp in txn_metadata.topic_partitions if not is_internal(tp[0]))
            if len(written) > 1:
                txn_metadata.remove_partition(written[-1])
        send(self, transactional_id, coordinator_epoch, is_commit, txn_metadata, new_metadata)

    return [(Manager, "add_txn_markers_to_send", planted(send, add_txn_markers_to_send))]


def sequence_check_off(planted: Callable) -> list:
    """KIP-98's idempotent producer: the leader checks each batch's sequence number against the
    producer's last, answers a retry of a batch it has with that batch's offsets and writes nothing,
    and refuses a gap. Here it checks a client's batches as it checks its own (Kafka's
    ``validateSequenceNumbers`` false): the producer's epoch only, so a retry is written again."""
    from kafka_lite.log.producer_state_manager import ProducerStateManager

    check = ProducerStateManager.check
    broken = lambda self, batches, is_from_client=True, *rest: check(self, batches, False, *rest)  # noqa: E731
    return [(ProducerStateManager, "check", planted(check, broken))]


BUGS = {
    "acks-before-isr": acks_before_isr,
    "no-epoch-truncation": no_epoch_truncation,
    "fetch-past-hw": fetch_past_hw,
    "read-committed-ignores-lso": read_committed_ignores_lso,
    "marker-missing": marker_missing,
    "sequence-check-off": sequence_check_off,
}


class BugFile:
    """The file naming the bug in force (empty: none), read again whenever it changes. Writers
    replace it whole (``write``), so a reader never sees it half written."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._seen: tuple | None = None
        self._bug = ""

    def write(self, bug: str) -> None:
        if bug and bug not in BUGS:
            raise ValueError(f"no planted bug {bug!r}: the planted bugs are {', '.join(BUGS)}")
        partial = self.path.with_name(self.path.name + ".partial")
        partial.write_text(bug)
        os.replace(partial, self.path)

    def in_force(self) -> str:
        try:
            stat = os.stat(self.path)
        except FileNotFoundError:
            return ""
        if (stat.st_ino, stat.st_mtime_ns, stat.st_size) != self._seen:
            bug = self.path.read_text().strip()
            if bug and bug not in BUGS:
                raise ValueError(
                    f"{self.path} names no planted bug: {bug!r}; the planted bugs are {', '.join(BUGS)}"
                )
            self._seen, self._bug = (stat.st_ino, stat.st_mtime_ns, stat.st_size), bug
        return self._bug


def plant_all(bug_file: BugFile):
    """Patch every bug's method to switch on ``bug_file``; return the ``MonkeyPatch`` holding them."""
    import pytest

    patch = pytest.MonkeyPatch()
    for name, bug in BUGS.items():

        def planted(original: Callable, broken: Callable, name: str = name) -> Callable:
            @functools.wraps(original)
            def method(*args, **kwargs):
                return (broken if bug_file.in_force() == name else original)(*args, **kwargs)

            return method

        for owner, attribute, replacement in bug(planted):
            patch.setattr(owner, attribute, replacement)
    return patch


if __name__ == "sitecustomize" and os.environ.get(BUG_FILE_VARIABLE):
    try:
        plant_all(BugFile(Path(os.environ[BUG_FILE_VARIABLE])))
    except Exception as e:
        # site.py would print the error and start the process without its bugs: a process meant to
        # run them must not run without, so it ends here, saying why.
        raise SystemExit(f"{BUG_FILE_VARIABLE}={os.environ[BUG_FILE_VARIABLE]}: {e!r}") from e
