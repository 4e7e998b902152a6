"""The distributed herder: one thread per worker that keeps the group's work running on this worker.

Mirrors: org.apache.kafka.connect.runtime.distributed.DistributedHerder, with its HerderRequest,
         ConfigUpdateListener and RebalanceListener
         (connect/runtime/src/main/java/org/apache/kafka/connect/runtime/distributed/DistributedHerder.java,
         Kafka 0.10.1)
Book:    chapter 8, 8.3
Differs: the request methods take the 0.11 Herder interface's arguments; ``task.class`` is
         written to the config topic as Kafka's class name, and found again from the connector's
         class.

Every Connect worker of a group runs one of these. Its thread calls ``tick`` in a loop, and does
all the herder's work there, so nothing here needs more than one lock:

1. **Stay in the group** (``member.ensure_active``): a rebalance runs inside, and calls back
   ``on_revoked`` (stop every connector and task, each source task committing its offsets) and
   ``on_assigned`` (note the new assignment).
2. **Act on the assignment** (``handle_rebalance_completed``): read the config topic up to the
   assignment's offset (the leader assigned from that state, so the tasks it names exist there),
   then start the assigned connectors and tasks. A worker that cannot catch up within
   ``worker.sync.timeout.ms`` leaves the group and backs off for ``worker.unsync.backoff.ms``.
3. **Run the requests** other threads queued (``add_request``): the REST API's calls, and retries.
   Each is an action run here, answering its caller's callback. Only the leader writes configs; a
   follower answers ``NotLeaderException`` with the leader's URL, and the REST layer forwards.
4. **Apply config changes** the config store's thread reported: a changed connector is restarted
   where it runs; a new or deleted connector, or new task configs, need a rebalance, so the worker
   asks to rejoin; a target state (pause, resume) goes to the worker.
5. **Poll the group** until the next request is due, or something wakes the member up.

A connector's task configs are generated where the connector runs, but written by the leader: a
follower sends them to the leader's ``POST /connectors/{name}/tasks``. New task configs always
rebalance the group, because every task of the connector is then stopped (committing its offsets)
before any starts with its new config.

This module is long because it mirrors one Java file and its inner classes (the request, the
config store's listener and the group's listener), which are read together.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import urllib.parse
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from kafka_lite.common.errors import WakeupException
from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.common.utils import LONG_MAX
from kafka_lite.connect.errors import AlreadyExistsException, ConnectException, NotFoundException
from kafka_lite.connect.runtime import connector_factory
from kafka_lite.connect.runtime.abstract_herder import AbstractHerder
from kafka_lite.connect.runtime.connector_config import (
    CONNECTOR_CLASS_CONFIG,
    NAME_CONFIG,
    TASK_CLASS_CONFIG,
    TASKS_MAX_CONFIG,
    TOPICS_CONFIG,
    ConnectorConfig,
    SinkConnectorConfig,
)
from kafka_lite.connect.runtime.distributed.cluster_config_state import EMPTY, ClusterConfigState
from kafka_lite.connect.runtime.distributed.connect_protocol import Assignment
from kafka_lite.connect.runtime.distributed.distributed_config import (
    WORKER_SYNC_TIMEOUT_MS_CONFIG,
    WORKER_UNSYNC_BACKOFF_MS_CONFIG,
    DistributedConfig,
)
from kafka_lite.connect.runtime.distributed.request_target_exception import (
    NotAssignedException,
    NotLeaderException,
    RebalanceNeededException,
    RequestTargetException,
)
from kafka_lite.connect.runtime.distributed.worker_group_member import WorkerGroupMember
from kafka_lite.connect.runtime.distributed.worker_rebalance_listener import WorkerRebalanceListener
from kafka_lite.connect.runtime.herder import Created
from kafka_lite.connect.runtime.rest import rest_client
from kafka_lite.connect.runtime.rest.entities import ConnectorInfo, TaskInfo
from kafka_lite.connect.runtime.rest.errors.connect_rest_exception import BadRequestException
from kafka_lite.connect.runtime.standalone.standalone_herder import HerderConnectorContext
from kafka_lite.connect.runtime.target_state import TargetState
from kafka_lite.connect.runtime.worker import Worker
from kafka_lite.connect.storage.config_backing_store import ConfigBackingStore
from kafka_lite.connect.storage.status_backing_store import StatusBackingStore
from kafka_lite.connect.util.callback import Callback
from kafka_lite.connect.util.connector_task_id import ConnectorTaskId

log = logging.getLogger(__name__)

# A failed task reconfiguration (the leader unreachable, say) is retried after this, as a request due
# later, so the herder's one thread never sleeps on a retry.
RECONFIGURE_CONNECTOR_TASKS_BACKOFF_MS = 250


@dataclass(order=True)
class HerderRequest:
    """An action for the herder's thread, due at ``at``; ``seq`` keeps requests due together in order."""

    at: int
    seq: int
    action: Callable[[], None] = field(compare=False)
    callback: Callback = field(compare=False)


class DistributedHerder(AbstractHerder):
    """A worker's member of the Connect group: it learns its share of the work from the group's
    leader, and keeps its worker running exactly that share of the config topic's connectors."""

    def __init__(
        self,
        config: DistributedConfig,
        worker: Worker,
        worker_id: str,
        status_backing_store: StatusBackingStore,
        config_backing_store: ConfigBackingStore,
        rest_url: str,
        time: Time = SYSTEM,
    ) -> None:
        super().__init__(worker, worker_id, status_backing_store)
        self.time = time
        self.config_backing_store = config_backing_store
        self.config_backing_store.set_update_listener(ConfigUpdateListener(self))
        self.worker_sync_timeout_ms = config.get(WORKER_SYNC_TIMEOUT_MS_CONFIG)
        self.worker_unsync_backoff_ms = config.get(WORKER_UNSYNC_BACKOFF_MS_CONFIG)
        self.member = WorkerGroupMember(config, rest_url, config_backing_store, RebalanceListener(self), time)
        # Task configs a follower sends to the leader go out on this thread: an HTTP call may take
        # longer than the herder's thread can go without polling the group.
        self.forward_request_executor = ThreadPoolExecutor(1, thread_name_prefix="connect-forward")
        self.herder_thread: threading.Thread | None = None
        self.failure: Exception | None = None  # what ended the herder's thread, if anything did
        self.stopping = threading.Event()
        # Kafka's synchronized (this): what the store's and the REST threads share with the herder's.
        self._lock = threading.RLock()
        self.requests: list[HerderRequest] = []  # a heap, soonest first
        self._request_seq = itertools.count()
        # The herder thread's own state.
        self.assignment: Assignment | None = None
        self.generation_id = -1
        self.rebalance_resolved = True  # no assignment to act on yet
        self.can_read_configs = True
        # A snapshot, not the store itself: the store's thread applies records as they are read, and
        # the herder acts on one consistent view between two ticks.
        self.config_state: ClusterConfigState = EMPTY
        # Changes the config store reported, for the next tick.
        self.needs_reconfig_rebalance = False
        self.connector_config_updates: set[str] = set()
        self.connector_target_state_changes: set[str] = set()

    # -- the herder's thread --------------------------------------------------------------------------

    def start(self) -> None:
        self.herder_thread = threading.Thread(target=self.run, name=f"DistributedHerder-{self.worker_id}",
                                              daemon=True)  # fmt: skip
        self.herder_thread.start()

    def run(self) -> None:
        try:
            log.info("Herder starting")
            self.start_services()
            log.info("Herder started")
            while not self.stopping.is_set():
                self.tick()
            self.halt()
            log.info("Herder stopped")
        except Exception as e:
            # Kafka's herder then ends the process (System.exit(1)); here the thread ends, and the
            # command that runs the worker (kafka-lite connect distributed) exits with the error.
            log.exception("Uncaught exception in herder work thread, exiting: ")
            self.failure = e
            raise

    def start_services(self) -> None:
        super().start_services()  # the worker and the status store
        self.config_backing_store.start()

    def stop(self) -> None:
        log.info("Herder stopping")
        self.stopping.set()
        # The herder's thread may be asleep in the group member's poll until its next request.
        self.member.wakeup()
        if self.herder_thread is not None:
            self.herder_thread.join()
        self.forward_request_executor.shutdown(wait=True)
        log.info("Herder stopped")

    def halt(self) -> None:
        """Stop every connector and task, leave the group, fail what is still queued, stop the stores."""
        # Tasks first: they commit their offsets while their connector still exists.
        self.worker.stop_and_await_tasks()
        for connector in list(self.worker.connector_names()):
            self.worker.stop_connector(connector)
        self.member.stop()
        with self._lock:
            requests, self.requests = self.requests, []
        for request in requests:
            request.callback(ConnectException("Worker is shutting down"), None)
        # Not under the lock: the config store's thread may be waiting for it to report an update.
        self.config_backing_store.stop()
        self.stop_services()  # the status store, then the worker

    # --8<-- [start:tick]
    def tick(self) -> None:
        """One turn of the herder's loop. All of the herder's work happens here, on its one thread, so
        the group member, the worker and the config snapshot are never touched by two threads; the
        REST and config store threads only queue requests or note changes, then wake the poll."""
        try:
            # Having failed to read the configs, catch up before joining: a member that joins and
            # leaves at once makes the whole group rebalance twice.
            if not self.can_read_configs and not self.read_config_to_end(self.worker_sync_timeout_ms):
                return  # read_config_to_end backed off
            self.member.ensure_active()
            if not self.handle_rebalance_completed():
                return
        except WakeupException:
            # A request, or stop(): the next tick sees which. Requests wait until the worker is in the group.
            return

        now = self.time.milliseconds()
        next_request_timeout_ms = LONG_MAX
        while True:
            with self._lock:
                if not self.requests:
                    break
                if now < self.requests[0].at:
                    next_request_timeout_ms = self.requests[0].at - now
                    break
                request = heapq.heappop(self.requests)
            try:
                request.action()
            except Exception as e:
                request.callback(e, None)

        config_updates: set[str] = set()
        target_state_changes: set[str] = set()
        with self._lock:
            if (
                self.needs_reconfig_rebalance
                or self.connector_config_updates
                or self.connector_target_state_changes
            ):
                self.config_state = self.config_backing_store.snapshot()
                if self.needs_reconfig_rebalance:
                    # Connectors or tasks added or removed: the work is dealt again. The rebalance
                    # applies the config updates and target states too.
                    self.member.request_rejoin()
                    self.connector_config_updates.clear()
                    self.connector_target_state_changes.clear()
                    self.needs_reconfig_rebalance = False
                    return
                # Taken out of the lock: restarting a connector may write task configs, whose
                # update comes back through the store's thread and needs this lock.
                config_updates, self.connector_config_updates = self.connector_config_updates, set()
                target_state_changes, self.connector_target_state_changes = (
                    self.connector_target_state_changes,
                    set(),
                )
        if config_updates:
            self.process_connector_config_updates(config_updates)
        if target_state_changes:
            self.process_target_state_changes(target_state_changes)

        try:
            self.member.poll(next_request_timeout_ms)
            self.handle_rebalance_completed()
        except WakeupException:
            pass  # a request, a config update, or stop(): the next tick looks

    # --8<-- [end:tick]

    def process_connector_config_updates(self, connector_config_updates: set[str]) -> None:
        # A changed config needs no other worker: restart the connector where it runs.
        local_connectors = set(self.assignment.connectors) if self.assignment is not None else set()
        for connector_name in sorted(connector_config_updates & local_connectors):
            remains = self.config_state.contains(connector_name)
            log.info("Handling connector-only config update by %s connector %s",
                     "restarting" if remains else "stopping", connector_name)  # fmt: skip
            self.worker.stop_connector(connector_name)
            if remains:  # the update may be a deletion
                self.start_connector(connector_name)

    def process_target_state_changes(self, connector_target_state_changes: set[str]) -> None:
        for connector in sorted(connector_target_state_changes):
            if not self.config_state.contains(connector):
                log.debug("Received target state change for unknown connector: %s", connector)
                continue
            target_state = self.config_state.target_state(connector)
            # The worker pauses or resumes the connector and its tasks that run here.
            self.worker.set_target_state(connector, target_state)
            # A config changed while paused takes effect on resume.
            if target_state is TargetState.STARTED:
                self.reconfigure_connector_tasks_with_retry(connector)

    # --8<-- [start:handle_rebalance_completed]
    def handle_rebalance_completed(self) -> bool:
        """Act on a new assignment: catch up with its config offset, then start its work; False if
        the worker must rejoin instead."""
        if self.rebalance_resolved:
            return True
        needs_read_to_end = False
        needs_rejoin = False
        if self.assignment.failed():
            needs_rejoin = True
            if self.is_leader():
                log.warning("Join group completed, but assignment failed and we are the leader. Reading to end of "
                            "config and retrying.")  # fmt: skip
                needs_read_to_end = True
            elif self.config_state.offset < self.assignment.offset:
                log.warning("Join group completed, but assignment failed and we are lagging. Reading to end of "
                            "config and retrying.")  # fmt: skip
                needs_read_to_end = True
            else:
                log.warning(
                    "Join group completed, but assignment failed. We were up to date, so just retrying."
                )
        elif self.config_state.offset < self.assignment.offset:
            log.warning("Catching up to assignment's config offset.")
            needs_read_to_end = True

        if needs_read_to_end and not self.read_config_to_end(self.worker_sync_timeout_ms):
            # Out of the group now; the next tick catches up before joining again.
            self.can_read_configs = False
            needs_rejoin = True
        if needs_rejoin:
            self.member.request_rejoin()
            return False
        # Past the assignment's offset is no good either: the assignment may name tasks that are gone.
        if self.config_state.offset != self.assignment.offset:
            log.info("Current config state offset %d does not match group assignment %d. Forcing rebalance.",
                     self.config_state.offset, self.assignment.offset)  # fmt: skip
            self.member.request_rejoin()
            return False
        self.start_work()
        # Resolved only once the work runs: on_revoked stops only work that was started.
        self.rebalance_resolved = True
        return True

    # --8<-- [end:handle_rebalance_completed]

    def read_config_to_end(self, timeout_ms: int) -> bool:
        """Read the config topic to its end within ``timeout_ms``; else leave the group and back off."""
        log.info("Current config state offset %d is behind group assignment %s, reading to end of config log",
                 self.config_state.offset, self.assignment.offset if self.assignment else None)  # fmt: skip
        try:
            self.config_backing_store.refresh(timeout_ms)
            self.config_state = self.config_backing_store.snapshot()
            self.can_read_configs = True
            log.info("Finished reading to end of log and updated config snapshot, new config log offset: %d",
                     self.config_state.offset)  # fmt: skip
            return True
        except Exception as e:
            # Out of the group at once (the session would drop the worker anyway), and wait before
            # rejoining, so that a worker that cannot keep up does not rebalance the group over and over.
            log.warning("Didn't reach end of config log quickly enough: %s", e)
            self.member.maybe_leave_group()
            self.time.sleep(self.worker_unsync_backoff_ms)
            return False

    def start_work(self) -> None:
        log.info("Starting connectors and tasks using config offset %d", self.assignment.offset)
        for connector_name in self.assignment.connectors:
            self.start_connector(connector_name)
        for task_id in self.assignment.tasks:
            self.start_task(task_id)
        log.info("Finished starting connectors and tasks")

    def start_task(self, task_id: ConnectorTaskId) -> bool:
        log.info("Starting task %s", task_id)
        conn_props = self.config_state.connector_config(task_id.connector)
        task_config = dict(self.config_state.task_config(task_id))
        # The topic holds the class's name, as any worker of the group may read it; the class is
        # found again from the connector's.
        task_config[TASK_CLASS_CONFIG] = task_class(conn_props, task_config.get(TASK_CLASS_CONFIG))
        return self.worker.start_task(task_id, conn_props, task_config, self,
                                      self.config_state.target_state(task_id.connector))  # fmt: skip

    def start_connector(self, connector_name: str) -> bool:
        log.info("Starting connector %s", connector_name)
        initial_state = self.config_state.target_state(connector_name)
        ctx = HerderConnectorContext(self, connector_name)
        started = self.worker.start_connector(connector_name, self.config_state.connector_config(connector_name),
                                              ctx, self, initial_state)  # fmt: skip
        # A new connector has no task configs yet; an old one's are written again only if they changed.
        if started and initial_state is TargetState.STARTED:
            self.reconfigure_connector_tasks_with_retry(connector_name)
        return started

    # -- task configs -----------------------------------------------------------------------------------

    def reconfigure_connector_tasks_with_retry(self, conn_name: str) -> None:
        def on_done(error: BaseException | None, _: Any) -> None:
            # Retry until it works, or the connector would think its tasks exist when none were written.
            # Through a request: this may run on the forwarding thread.
            if error is not None:
                log.error("Failed to reconfigure connector's tasks, retrying after backoff: %s", error)
                self.add_request(lambda: self.reconfigure_connector_tasks_with_retry(conn_name),
                                 _log_error(f"Task reconfiguration for {conn_name} failed unexpectedly"),
                                 RECONFIGURE_CONNECTOR_TASKS_BACKOFF_MS)  # fmt: skip

        self.reconfigure_connector(conn_name, on_done)

    def reconfigure_connector(self, conn_name: str, callback: Callback) -> None:
        """Ask the connector for its task configs; if they differ from the config topic's, write them
        (the leader) or send them to the leader (a follower)."""
        try:
            if not self.worker.is_running(conn_name):
                log.info("Skipping reconfiguration of connector %s since it is not running", conn_name)
                return
            configs = self.config_state.connector_config(conn_name)
            sink_topics = None
            if self.worker.is_sink_connector(conn_name):
                conn_config: ConnectorConfig = SinkConnectorConfig(configs)
                sink_topics = conn_config.get(TOPICS_CONFIG)
            else:
                conn_config = ConnectorConfig(configs)
            task_props = [
                {**props, TASK_CLASS_CONFIG: task_class_name(configs, props[TASK_CLASS_CONFIG])}
                for props in self.worker.connector_task_configs(conn_name, conn_config.get(TASKS_MAX_CONFIG), sink_topics)
            ]  # fmt: skip
            current = [self.config_state.task_config(ConnectorTaskId(conn_name, i))
                       for i in range(self.config_state.task_count(conn_name))]  # fmt: skip
            # Unchanged configs are not written again: each write of task configs rebalances the group.
            if task_props == current:
                return
            log.debug("Change in task configurations of %s, writing updated task configurations", conn_name)
            if self.is_leader():
                self.config_backing_store.put_task_configs(conn_name, task_props)
                callback(None, None)
            else:
                # Not on this thread: waiting here for the leader could outlast this worker's session.
                leader_url = self.leader_url()
                self.forward_request_executor.submit(
                    self._forward, leader_url, conn_name, task_props, callback
                )
        except Exception as e:
            callback(e, None)

    @staticmethod
    def _forward(
        leader_url: str | None, conn_name: str, task_props: list[dict[str, str]], callback: Callback
    ) -> None:
        try:
            forward_task_configs(leader_url, conn_name, task_props)
            callback(None, None)
        except ConnectException as e:
            log.error("Request to leader to reconfigure connector tasks failed: %s", e)
            callback(e, None)

    # -- requests -------------------------------------------------------------------------------------

    def add_request(self, action: Callable[[], None], callback: Callback, delay_ms: int = 0) -> HerderRequest:
        # Every request runs on the herder's thread, in tick: the REST threads never touch the group
        # member, the worker or the config snapshot, which belong to that thread alone.
        request = HerderRequest(
            self.time.milliseconds() + delay_ms, next(self._request_seq), action, callback
        )
        with self._lock:
            heapq.heappush(self.requests, request)
            first = self.requests[0] is request
        if first:
            self.member.wakeup()  # the herder may be asleep in its poll until a later request
        return request

    def check_rebalance_needed(self, callback: Callback) -> bool:
        # Not to forward on leadership or an assignment that is about to change: the caller gets a
        # 409 and retries once the group has settled.
        if self.needs_reconfig_rebalance:
            callback(
                RebalanceNeededException("Request cannot be completed because a rebalance is expected"), None
            )
            return True
        return False

    def check_known_connector(self, conn_name: str, callback: Callback) -> bool:
        """False, with the callback answered, if a rebalance is due or the connector is unknown."""
        if self.check_rebalance_needed(callback):
            return False
        if not self.config_state.contains(conn_name):
            callback(NotFoundException(f"Connector {conn_name} not found"), None)
            return False
        return True

    def connectors(self, callback: Callback) -> None:
        def action() -> None:
            if not self.check_rebalance_needed(callback):
                callback(None, sorted(self.config_state.connectors()))

        self.add_request(action, forward_error_callback(callback))

    def connector_info(self, conn_name: str, callback: Callback) -> None:
        def action() -> None:
            if not self.check_known_connector(conn_name, callback):
                return
            callback(None, ConnectorInfo(conn_name, self.config_state.connector_config(conn_name),
                                         self.config_state.tasks(conn_name)))  # fmt: skip

        self.add_request(action, forward_error_callback(callback))

    def connector_config(self, conn_name: str, callback: Callback) -> None:
        def on_info(error: BaseException | None, info: ConnectorInfo | None) -> None:
            callback(error, None if error is not None else info.config)

        self.connector_info(conn_name, on_info)

    def put_connector_config(
        self, conn_name: str, config: dict[str, str] | None, allow_replace: bool, callback: Callback
    ) -> None:
        def action() -> None:
            if self.check_rebalance_needed(callback):
                return
            # One writer for the config topic: the log's order is then the order the leader decided,
            # and two workers' writes cannot interleave half-way through a connector's task configs.
            if not self.is_leader():
                callback(
                    NotLeaderException("Only the leader can set connector configs.", self.leader_url()), None
                )
                return
            if config is None:
                callback(BadRequestException(f"Connector {conn_name} has no config"), None)
                return
            if config.get(NAME_CONFIG) != conn_name:
                callback(BadRequestException(f"Connector name configuration ({config.get(NAME_CONFIG)}) doesn't "
                                             f"match connector name {conn_name}"), None)  # fmt: skip
                return
            # Refused whole, before anything is written, if any setting is wrong.
            if self.maybe_add_config_errors(self.validate_connector_config(config), callback):
                return
            exists = self.config_state.contains(conn_name)
            if exists and not allow_replace:
                callback(AlreadyExistsException(f"Connector {conn_name} already exists"), None)
                return
            self.config_backing_store.put_connector_config(conn_name, config)
            # The tasks are the ones before this write: new ones come after the connector starts.
            info = ConnectorInfo(conn_name, dict(config), self.config_state.tasks(conn_name))
            callback(None, Created(not exists, info))

        self.add_request(action, forward_error_callback(callback))

    def delete_connector_config(self, conn_name: str, callback: Callback) -> None:
        def action() -> None:
            if self.check_rebalance_needed(callback):
                return
            if not self.is_leader():
                callback(
                    NotLeaderException("Only the leader can delete connector configs.", self.leader_url()),
                    None,
                )
                return
            if not self.config_state.contains(conn_name):
                callback(NotFoundException(f"Connector {conn_name} not found"), None)
                return
            # A null record for the connector's key: compaction then drops its config for good.
            self.config_backing_store.remove_connector_config(conn_name)
            callback(None, Created(False, None))

        self.add_request(action, forward_error_callback(callback))

    def request_task_reconfiguration(self, conn_name: str) -> None:
        self.add_request(lambda: self.reconfigure_connector_tasks_with_retry(conn_name),
                         _log_error(f"Task reconfiguration for {conn_name} failed"))  # fmt: skip

    def task_configs(self, conn_name: str, callback: Callback) -> None:
        def action() -> None:
            if not self.check_known_connector(conn_name, callback):
                return
            callback(
                None,
                [
                    TaskInfo(id, self.config_state.task_config(id))
                    for id in self.config_state.tasks(conn_name)
                ],
            )

        self.add_request(action, forward_error_callback(callback))

    def put_task_configs(self, conn_name: str, configs: list[dict[str, str]], callback: Callback) -> None:
        # The route a follower's reconfigure_connector posts to: its connector generated the configs,
        # and the leader, the config topic's one writer, writes them.
        def action() -> None:
            if not self.is_leader():
                callback(
                    NotLeaderException("Only the leader may write task configurations.", self.leader_url()),
                    None,
                )
            elif not self.config_state.contains(conn_name):
                callback(NotFoundException(f"Connector {conn_name} not found"), None)
            else:
                self.config_backing_store.put_task_configs(conn_name, configs)
                callback(None, None)

        self.add_request(action, forward_error_callback(callback))

    def restart_connector(self, conn_name: str, callback: Callback) -> None:
        def action() -> None:
            if not self.check_known_connector(conn_name, callback):
                return
            # Only the worker running it can restart it; others point the caller there.
            if self.assignment is not None and conn_name in self.assignment.connectors:
                self.worker.stop_connector(conn_name)
                if self.start_connector(conn_name):
                    callback(None, None)
                else:
                    callback(ConnectException(f"Failed to start connector: {conn_name}"), None)
            else:
                callback(self.not_assigned_here("connector", conn_name), None)

        self.add_request(action, forward_error_callback(callback))

    def restart_task(self, id: ConnectorTaskId, callback: Callback) -> None:
        def action() -> None:
            if self.check_rebalance_needed(callback):
                return
            if id not in self.config_state.tasks(id.connector):
                callback(NotFoundException(f"Unknown task: {id}"), None)
            elif self.assignment is not None and id in self.assignment.tasks:
                # Awaited: the old instance commits and releases its consumer or producer before the
                # new one starts from those offsets.
                self.worker.stop_and_await_tasks([id])
                if self.start_task(id):
                    callback(None, None)
                else:
                    callback(ConnectException(f"Failed to start task: {id}"), None)
            else:
                callback(self.not_assigned_here("task", id), None)

        self.add_request(action, forward_error_callback(callback))

    def not_assigned_here(self, what: str, id: str | ConnectorTaskId) -> RequestTargetException:
        """Where to send a restart of work that runs elsewhere: the leader knows the owner; a
        follower knows only the leader, which forwards it once more."""
        message = f"Cannot restart {what} since it is not assigned to this member"
        if self.is_leader():
            return NotAssignedException(message, self.member.owner_url(id))
        return NotLeaderException(message, self.leader_url())

    def pause_connector(self, conn_name: str) -> None:
        # Any worker may write a target state: every worker reads it from the config topic.
        if not self.config_backing_store.contains(conn_name):
            raise NotFoundException(f"Unknown connector {conn_name}")
        self.config_backing_store.put_target_state(conn_name, TargetState.PAUSED)

    def resume_connector(self, conn_name: str) -> None:
        if not self.config_backing_store.contains(conn_name):
            raise NotFoundException(f"Unknown connector {conn_name}")
        self.config_backing_store.put_target_state(conn_name, TargetState.STARTED)

    # -- the group ------------------------------------------------------------------------------------

    def generation(self) -> int:
        return self.generation_id

    def is_leader(self) -> bool:
        return self.assignment is not None and self.member.member_id() == self.assignment.leader

    def leader_url(self) -> str | None:
        return self.assignment.leader_url if self.assignment is not None else None

    def update_deleted_connector_status(self) -> None:
        """DESTROYED statuses for connectors deleted before this rebalance (the leader's job)."""
        connectors = self.config_backing_store.snapshot().connectors()
        for connector in self.status_backing_store.connectors() - connectors:
            log.debug("Cleaning status information for connector %s", connector)
            self.on_deletion(connector)


class ConfigUpdateListener(ConfigBackingStore.UpdateListener):
    """Runs on the config store's thread: notes what changed and wakes the herder's thread."""

    def __init__(self, herder: DistributedHerder) -> None:
        self.herder = herder

    def on_connector_config_remove(self, connector: str) -> None:
        log.info("Connector %s config removed", connector)
        h = self.herder
        with h._lock:
            # Its tasks go: deal the remaining work again.
            if h.config_state.contains(connector):
                h.needs_reconfig_rebalance = True
            h.connector_config_updates.add(connector)
        h.member.wakeup()

    def on_connector_config_update(self, connector: str) -> None:
        log.info("Connector %s config updated", connector)
        h = self.herder
        with h._lock:
            # A changed connector is only restarted where it runs; a new one must be assigned.
            if not h.config_state.contains(connector):
                h.needs_reconfig_rebalance = True
            h.connector_config_updates.add(connector)
        h.member.wakeup()

    def on_task_config_update(self, tasks: list[ConnectorTaskId]) -> None:
        log.info("Tasks %s configs updated", [str(t) for t in tasks])
        h = self.herder
        with h._lock:
            # Always a rebalance: every old task stops (committing its offsets) before new ones start.
            h.needs_reconfig_rebalance = True
        h.member.wakeup()

    def on_connector_target_state_change(self, connector: str) -> None:
        log.info("Connector %s target state change", connector)
        h = self.herder
        with h._lock:
            h.connector_target_state_changes.add(connector)
        h.member.wakeup()


class RebalanceListener(WorkerRebalanceListener):
    """Runs on the herder's thread, inside its poll of the group member."""

    def __init__(self, herder: DistributedHerder) -> None:
        self.herder = herder

    def on_assigned(self, assignment: Assignment, generation: int) -> None:
        # Only noted here: acting on it (catching up, starting work, perhaps leaving) is tick's job,
        # outside the group member's own call.
        log.info("Joined group and got assignment: %s", assignment)
        h = self.herder
        with h._lock:
            h.assignment = assignment
            h.generation_id = generation
            h.rebalance_resolved = False
        # After the rebalance, so the old owners' last UNASSIGNED statuses are written first.
        if h.is_leader():
            h.update_deleted_connector_status()
        h.member.wakeup()  # the poll this runs in may otherwise sleep long

    def on_revoked(self, leader: str, connectors: list[str], tasks: list[ConnectorTaskId]) -> None:
        log.info("Rebalance started")
        h = self.herder
        # Revoke before the rebalance completes: each task stops here, a source task committing its
        # offsets and a sink task its consumer's, and the new owner starts only once every member has
        # rejoined, so it resumes from those commits. Every rebalance revokes all of a worker's work.
        # The assignment stays: during the rebalance the leader is still the one to write configs.
        if h.rebalance_resolved:
            for connector in connectors:
                h.worker.stop_connector(connector)
            h.worker.stop_and_await_tasks(list(tasks))
            # Written before the rebalance ends, so no stale status lands after the next owner's.
            h.status_backing_store.flush()
            log.info("Finished stopping tasks in preparation for rebalance")
        else:
            log.info(
                "Wasn't able to resume work after last rebalance, can skip stopping connectors and tasks"
            )


def forward_error_callback(callback: Callback) -> Callback:
    """A request's own callback: the action answers on success; an error it raised goes to the caller."""

    def on_completion(error: BaseException | None, _: Any) -> None:
        if error is not None:
            callback(error, None)

    return on_completion


def _log_error(what: str) -> Callback:
    def on_completion(error: BaseException | None, _: Any) -> None:
        if error is not None:
            log.error("%s: %s", what, error)

    return on_completion


def task_class_name(conn_props: dict[str, str], cls: type | str) -> str:
    """``task.class`` as Kafka writes it: the connector's package and the task class's name
    (``org.apache.kafka.connect.file.FileStreamSourceTask``)."""
    if isinstance(cls, str):
        return cls
    connector_cls = connector_factory.connector_class(conn_props[CONNECTOR_CLASS_CONFIG])
    for full_name, known in connector_factory.CONNECTORS.items():
        if known is connector_cls:
            return f"{full_name.rsplit('.', 1)[0]}.{cls.__name__}"
    return f"{cls.__module__}.{cls.__qualname__}"


def task_class(conn_props: dict[str, str], name: str | None) -> type:
    """The task class a ``task.class`` names: the connector's own task class, checked by name."""
    cls = connector_factory.new_connector(conn_props[CONNECTOR_CLASS_CONFIG]).task_class()
    if name is not None and task_class_name(conn_props, cls) != name:
        raise ConnectException(f"Task class {name} is not the task class of connector class "
                               f"{conn_props[CONNECTOR_CLASS_CONFIG]} ({cls.__name__})")  # fmt: skip
    return cls


def forward_task_configs(leader_url: str | None, conn_name: str, task_props: list[dict[str, str]]) -> None:
    """POST the task configs to the leader's ``/connectors/{name}/tasks``, as Kafka 0.10.1's
    ``reconfigureConnector`` does; a ConnectException names what failed."""
    if leader_url is None:
        raise ConnectException("No leader is known to forward the task configurations to")
    url = f"{leader_url.rstrip('/')}/connectors/{urllib.parse.quote(conn_name, safe='')}/tasks"
    rest_client.http_request(url, "POST", task_props)
