"""The state directory: one folder per task under ``<state.dir>/<application.id>/``, each locked.

Mirrors: org.apache.kafka.streams.processor.internals.StateDirectory
         (streams/src/main/java/.../processor/internals/StateDirectory.java, Kafka 0.11.0)
Book:    chapter 9, 9.1.4 (a task's state lives in its directory, handed over on rebalance)
Differs: kept beside the stores in ``streams/state/``. The lock is ``fcntl.flock`` on the ``.lock``
         file (Java's ``FileChannel.tryLock``); the wait between retries is a ``Time``'s sleep.
         No global-store directory.

Why a lock: after a rebalance, task 0_3 may move between two threads (or two instances sharing a
disk) while the old owner still has its RocksDB open. The new owner must not open the same files,
so it takes the task directory's lock first, and retries until the old owner lets go.
``flock`` locks belong to the open file, so two threads of one process holding their own
``StateDirectory`` exclude each other too, as Java's locks do between processes.
"""

from __future__ import annotations

import fcntl
import logging
import os
import re
import shutil
from pathlib import Path
from typing import Any

from kafka_lite.common.time import Time
from kafka_lite.streams.errors import LockException, ProcessorStateException

log = logging.getLogger(__name__)

LOCK_FILE_NAME = ".lock"
LOCK_RETRY_BACKOFF_MS = 200
_TASK_DIR_NAME = re.compile(r"\d+_\d+")


class StateDirectory:
    def __init__(self, application_id: str, state_dir_config: str | os.PathLike, time: Time) -> None:
        self._time = time
        base_dir = Path(state_dir_config)
        self.state_dir = base_dir / application_id
        try:
            self.state_dir.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise ProcessorStateException(
                f"state directory [{self.state_dir}] doesn't exist and couldn't be created: {e}"
            ) from e
        self._locks: dict[str, Any] = {}  # task id (as str) -> the open .lock file holding the lock
        self._state_dir_lock: Any = None  # the application directory's own .lock, while held

    def lock_state_directory(self) -> bool:
        """Take the lock of the application's directory itself (Kafka 2.8's ``lockStateDirectory``),
        which a ``KafkaStreams`` instance holds while it runs: True if taken (or already held),
        False if another instance on this machine holds it. Without it, a second instance with the
        same ``state.dir`` would start, and only fail later, on some task's lock."""
        if self._state_dir_lock is not None:
            return True
        lock_file = open(self.state_dir / LOCK_FILE_NAME, "a")
        if not self._try_lock(lock_file):
            lock_file.close()
            return False
        self._state_dir_lock = lock_file
        return True

    def unlock_state_directory(self) -> None:
        if self._state_dir_lock is not None:
            fcntl.flock(self._state_dir_lock, fcntl.LOCK_UN)
            self._state_dir_lock.close()
            self._state_dir_lock = None

    def directory_for_task(self, task_id: Any) -> Path:
        """``<state.dir>/<application.id>/<task id>``, created if missing."""
        task_dir = self.state_dir / str(task_id)
        try:
            task_dir.mkdir(exist_ok=True)
        except OSError as e:
            raise ProcessorStateException(
                f"task directory [{task_dir}] doesn't exist and couldn't be created: {e}"
            ) from e
        return task_dir

    def lock(self, task_id: Any, retry: int = 0) -> bool:
        """Take the task directory's lock, trying ``retry`` more times ``LOCK_RETRY_BACKOFF_MS`` apart.

        True if this instance holds it (already held counts); False if another holder keeps it.
        """
        key = str(task_id)
        if key in self._locks:
            return True
        # The file stays open while the lock is held: an flock lives as long as its open file.
        lock_file = open(self.directory_for_task(task_id) / LOCK_FILE_NAME, "a")
        while not self._try_lock(lock_file):
            if retry <= 0:
                lock_file.close()
                return False
            retry -= 1
            self._time.sleep(LOCK_RETRY_BACKOFF_MS)
        self._locks[key] = lock_file
        log.debug("Acquired state dir lock for task %s", key)
        return True

    def lock_or_raise(self, task_id: Any, retry: int = 0) -> None:
        """``lock``, raising ``LockException`` with what to do when another holder keeps it."""
        if not self.lock(task_id, retry):
            raise LockException(
                f"task [{task_id}] Failed to lock the state directory "
                f"{self.state_dir / str(task_id)}: another thread or instance holds {LOCK_FILE_NAME}. "
                "Two instances of one application need different state.dir settings on one machine."
            )

    @staticmethod
    def _try_lock(lock_file: Any) -> bool:
        try:
            fcntl.flock(lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            return False

    def unlock(self, task_id: Any) -> None:
        lock_file = self._locks.pop(str(task_id), None)
        if lock_file is not None:
            fcntl.flock(lock_file, fcntl.LOCK_UN)
            lock_file.close()
            log.debug("Released state dir lock for task %s", task_id)

    def list_task_directories(self) -> list[Path]:
        return sorted(p for p in self.state_dir.iterdir() if p.is_dir() and _TASK_DIR_NAME.fullmatch(p.name))

    def clean_removed_tasks(self, cleanup_delay_ms: int) -> list[str]:
        """Delete the task directories nobody holds that were last modified more than
        ``cleanup_delay_ms`` ago (tasks moved to other instances); returns their names."""
        removed = []
        for task_dir in self.list_task_directories():
            task_id = task_dir.name
            # Read before locking: taking the lock may create the .lock file, which touches the directory.
            last_modified_ms = int(task_dir.stat().st_mtime * 1000)
            if task_id in self._locks or not self.lock(task_id):
                continue
            try:
                if self._time.milliseconds() > last_modified_ms + cleanup_delay_ms:
                    log.info(
                        "Deleting obsolete state directory %s for task %s as cleanup delay of %d ms has passed",
                        task_dir.name,
                        task_id,
                        cleanup_delay_ms,
                    )
                    shutil.rmtree(task_dir)
                    removed.append(task_id)
            finally:
                self.unlock(task_id)
        return removed
