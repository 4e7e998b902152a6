"""A watch on a directory of sequential notification znodes: each new one is handed to a handler, once.

Mirrors: kafka.common.ZkNodeChangeNotificationListener
         (core/src/main/scala/kafka/common/ZkNodeChangeNotificationListener.scala, Kafka 0.11.0)
Book:    beyond the book (Kafka 0.10.2–0.11's security: the authorizer's ACL-change notifications)
Differs: the notifications are processed on this listener's own thread (Kafka: ZkClient's event
         thread), since kazoo's watch thread must not wait on ZooKeeper calls; the ones already there
         at ``init`` too.

A writer that changes some state in ZooKeeper then creates ``<root>/<prefix><n>`` (a persistent
sequential znode) whose data names what changed. Every broker watches ``<root>``; for each child
newer than the last it processed it reads the data and calls ``handler(data)``, which re-reads the
state named there (the notification says "look", never what the new state is). Processed
notifications older than ``change_expiration_ms`` (15 minutes, Kafka's) are deleted by whichever
broker sees them, so the directory does not grow, while a broker briefly disconnected still finds
what it missed. ``SimpleAclAuthorizer`` uses it on ``/kafka-acl-changes``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.zk.zk_utils import ZkUtils

log = logging.getLogger(__name__)

CHANGE_EXPIRATION_MS = 15 * 60 * 1000  # ZkNodeChangeNotificationListener's changeExpirationMs


class ZkNodeChangeNotificationListener:
    def __init__(
        self,
        zk_utils: ZkUtils,
        seq_node_root: str,
        seq_node_prefix: str,
        notification_handler: Callable[[bytes], None],
        time: Time = SYSTEM,
        change_expiration_ms: int = CHANGE_EXPIRATION_MS,
    ) -> None:
        self.zk_utils = zk_utils
        self.seq_node_root = seq_node_root
        self.seq_node_prefix = seq_node_prefix
        self.notification_handler = notification_handler
        self.time = time
        self.change_expiration_ms = change_expiration_ms
        self.last_executed_change = -1
        self._changed = threading.Event()
        self._running = False
        self._thread = threading.Thread(
            target=self._run, name=f"{seq_node_root.strip('/')}-listener", daemon=True
        )

    def init(self) -> None:
        """Watch ``seq_node_root``: what is there now and every change after it is processed on the
        listener's thread (Kafka's ``init`` processes what is there on the caller's thread first;
        here the watch's first report does it, so ``init`` never waits on a handler)."""
        self.zk_utils.make_sure_persistent_path_exists(self.seq_node_root)
        self._running = True
        self._thread.start()
        self.zk_utils.watch_children(self.seq_node_root, self._on_children_change)

    def close(self) -> None:
        self._running = False
        self._changed.set()
        if self._thread.is_alive():
            self._thread.join(10)

    def _on_children_change(self, children: list[str]) -> bool:
        if not self._running:
            return False  # kazoo drops the watch
        self._changed.set()
        return True

    def _run(self) -> None:
        while True:
            self._changed.wait()
            self._changed.clear()
            if not self._running:
                return
            try:
                self.process_all_notifications()
            except Exception:  # ZooKeeper unreachable: the next change (or reconnect) retries
                log.exception("Error processing notifications under %s", self.seq_node_root)

    def process_all_notifications(self) -> None:
        children = [
            c for c in self.zk_utils.get_children(self.seq_node_root) if c.startswith(self.seq_node_prefix)
        ]
        self.process_notifications(children)

    def process_notifications(self, notifications: list[str]) -> None:
        """Each notification newer than the last processed one, in sequence order; then the purge."""
        for child in sorted(notifications):
            change_id = int(child[len(self.seq_node_prefix) :])
            if change_id <= self.last_executed_change:
                continue
            data, _, _ = self.zk_utils.read_data_maybe_null(f"{self.seq_node_root}/{child}")
            if data is not None:
                try:
                    self.notification_handler(data)
                except Exception as e:  # one bad notification must not stop the ones after it
                    log.error(
                        "Error processing notification %s/%s %r: %s", self.seq_node_root, child, data, e
                    )
            self.last_executed_change = change_id
        self.purge_obsolete_notifications(notifications)

    def purge_obsolete_notifications(self, notifications: list[str]) -> None:
        """Delete the processed notifications older than ``change_expiration_ms``."""
        now = self.time.milliseconds()
        for child in sorted(notifications):
            if int(child[len(self.seq_node_prefix) :]) > self.last_executed_change:
                break
            path = f"{self.seq_node_root}/{child}"
            _, _, ctime = self.zk_utils.read_data_maybe_null(path)
            if ctime != -1 and now - ctime > self.change_expiration_ms:
                log.debug("Purging expired notification %s", path)
                self.zk_utils.delete_path(path)
