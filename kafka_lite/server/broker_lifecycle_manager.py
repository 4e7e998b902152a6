"""The broker's side of its lifecycle in a KRaft cluster: registering with the active controller,
heartbeating, and the broker state those answers move.

Mirrors: kafka.server.BrokerLifecycleManager
         (core/src/main/scala/kafka/server/BrokerLifecycleManager.scala, Kafka 3.3.0), with
         org.apache.kafka.common.utils.ExponentialBackoff (clients/.../common/utils/)
Book:    beyond the book: chapter 12 (KRaft)
Differs: the event queue is passed in (Kafka's builds its own KafkaEventQueue), so that a test or
         the chapter's notebook can step it on a MockTime; the controller's answers are handled on
         that queue, as Kafka 3.7 does (``_on_queue`` says why). A failed exchange is an answer
         without a body (kafka_lite's controller channel has no authentication or version errors).

What a KRaft broker is to the controller (KIP-631). In ZooKeeper mode a broker announced itself by
writing an ephemeral znode, and ZooKeeper's session said whether it was alive. In KRaft mode the
broker sends the active controller a BrokerRegistration (its id, cluster id, a fresh incarnation id,
its listeners, features and rack) and gets back a *broker epoch*; from then on it sends a
BrokerHeartbeat every ``broker.heartbeat.interval.ms``, and a broker whose heartbeats stop for
``broker.session.timeout.ms`` is fenced by the controller: it keeps its registration, but leads
nothing and is in no ISR.

The heartbeat is also how the broker and the controller agree on the broker's state. It carries
the metadata offset the broker has applied (``current_metadata_offset``), ``want_fence`` while the
broker is not ready to serve, and ``want_shut_down`` once a controlled shutdown begins; the answer
says whether the broker ``is_caught_up`` with the metadata log, whether it ``is_fenced``, and
whether it ``should_shut_down``. The lifecycle manager turns those answers into the broker's state::

    NOT_RUNNING --start--> STARTING --is_caught_up--> RECOVERY --not is_fenced--> RUNNING
    RUNNING --begin_controlled_shutdown--> PENDING_CONTROLLED_SHUTDOWN --should_shut_down--> SHUTTING_DOWN

One thread, one queue. Every input (``start``, ``set_ready_to_unfence``,
``begin_controlled_shutdown``, an answer from the controller) becomes an event on the manager's
event queue, and the queue's one thread runs them in order: the fields below are touched only
there, except ``state`` and ``broker_epoch``, which any thread may read. The next message to the
controller is always one deferred event tagged ``communication``; scheduling it again replaces the
one pending, so there is never more than one registration or heartbeat on its way, and a heartbeat
goes out at the interval and no faster.

Failures. Whatever goes wrong with one message (no answer before the channel's retry timeout, an
answer with an error such as STALE_BROKER_EPOCH or NOT_CONTROLLER) is handled the same way: try the
same kind of message again after an exponential backoff (100 ms doubling, at most the session
timeout, 2% jitter), the next success resetting it. In particular a broker whose heartbeat is
refused as stale does not register again: 3.3 keeps its epoch and keeps heartbeating (the channel
manager has already moved to a new controller on NOT_CONTROLLER or a lost connection). Only the
first registration has a deadline: if no controller has given the broker an epoch within
``initial.broker.registration.timeout.ms``, the manager shuts down.
"""

from __future__ import annotations

import logging
import math
import random
import uuid
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from typing import TYPE_CHECKING, ClassVar

from kafka_lite.clients.network_client import ClientResponse
from kafka_lite.common.errors import Errors, TimeoutException
from kafka_lite.common.protocol.controller_messages import ControllerApiKeys
from kafka_lite.common.time import Time
from kafka_lite.metadata.broker_state import BrokerState
from kafka_lite.metadata.version_range import VersionRange
from kafka_lite.queue.event_queue import Event, EventQueue, RejectedExecutionException
from kafka_lite.server.broker_to_controller_channel_manager import ControllerRequestCompletionHandler

if TYPE_CHECKING:
    from kafka_lite.server.broker_to_controller_channel_manager import BrokerToControllerChannelManager
    from kafka_lite.server.kafka_config import KafkaConfig

log = logging.getLogger(__name__)

NS_PER_MS = 1_000_000

# The tag of the one deferred event that sends the next registration or heartbeat.
COMMUNICATION = "communication"
INITIAL_REGISTRATION_TIMEOUT = "initialRegistrationTimeout"

# After the first answer while STARTING, the next heartbeat goes after only 10 ms, so that a
# broker with nothing to recover reaches RECOVERY quickly; after the first answer in
# PENDING_CONTROLLED_SHUTDOWN, after 50 ms, since a controlled shutdown often completes at once.
STARTING_HEARTBEAT_MS = 10
FIRST_CONTROLLED_SHUTDOWN_HEARTBEAT_MS = 50


class ExponentialBackoff:
    """Kafka's ExponentialBackoff: ``random(1 - jitter, 1 + jitter) * initial * multiplier ** attempts``,
    with the exponent capped where the term reaches ``max_interval``."""

    def __init__(
        self,
        initial_interval: int,
        multiplier: int,
        max_interval: int,
        jitter: float,
        rng: random.Random | None = None,
    ) -> None:
        self._initial_interval = initial_interval
        self._multiplier = multiplier
        self._jitter = jitter
        self._exp_max = (
            math.log(max_interval / max(initial_interval, 1)) / math.log(multiplier)
            if max_interval > initial_interval
            else 0.0
        )
        self._random = rng or random.Random()

    def backoff(self, attempts: int) -> int:
        if self._exp_max == 0:
            return self._initial_interval
        exp = min(attempts, self._exp_max)
        term = self._initial_interval * self._multiplier**exp
        random_factor = 1.0 if self._jitter <= 0 else self._random.uniform(1 - self._jitter, 1 + self._jitter)
        return int(random_factor * term)


class _Event(Event):
    """One of the manager's events: a step to run on the queue's thread, named for the log (Kafka
    writes one small class per event; their bodies are the manager's methods here)."""

    def __init__(self, run: Callable[[], None], name: str) -> None:
        self._run = run
        self._name = name

    def run(self) -> None:
        self._run()

    def handle_exception(self, exc: BaseException) -> None:
        # A closing queue rejects new events and times out the deferred ones (the next heartbeat):
        # that is shutdown, not a failure.
        if isinstance(exc, (RejectedExecutionException, TimeoutException)):
            log.debug("Not processing %s because the event queue is closed.", self._name)
        else:
            log.error("Unexpected error handling %s", self._name, exc_info=exc)

    def __repr__(self) -> str:
        return self._name


class BrokerLifecycleManager:
    def __init__(
        self, config: KafkaConfig, time: Time, event_queue: EventQueue, rng: random.Random | None = None
    ) -> None:
        """``event_queue`` is the manager's own (a KafkaEventQueue in a broker); ``rng`` draws the
        backoff's jitter."""
        self._node_id: int = config["node.id"]
        self._rack: str | None = config["broker.rack"]
        self._time = time
        self._heartbeat_interval_ms: int = config["broker.heartbeat.interval.ms"]
        # How long to wait for the first registration before failing the broker's start-up.
        self._initial_timeout_ns = config["initial.broker.registration.timeout.ms"] * NS_PER_MS
        # The backoff for resending after a failure: 100 ms doubling, at most the session timeout.
        self._resend_exponential_backoff = ExponentialBackoff(
            100, 2, config["broker.session.timeout.ms"], 0.02, rng
        )
        self._prefix = f"[BrokerLifecycleManager id={self._node_id}] "
        self.event_queue = event_queue

        # Which start of this broker process this is; the controller tells a restarted broker from
        # a second broker claiming the same id by it.
        self.incarnation_id = uuid.uuid4()
        # Completed when the controller first says the broker has caught up with the metadata log.
        self.initial_catch_up_future: Future[None] = Future()
        # Completed when the controller first unfences the broker.
        self.initial_unfence_future: Future[None] = Future()
        # Completed when the broker may stop: the controller said should_shut_down, or it never ran.
        self.controlled_shutdown_future: Future[None] = Future()

        # Written only by the queue's thread, read by any.
        self._broker_epoch = -1
        self._state = BrokerState.NOT_RUNNING

        # Read and written only by the queue's thread.
        self._failed_attempts = 0
        self._highest_metadata_offset_provider: Callable[[], int] | None = None
        self._ready_to_unfence = False
        self._got_controlled_shutdown_response = False
        self._registered = False
        self._initial_registration_succeeded = False
        self._cluster_id: str | None = None
        self._advertised_listeners: list[dict] = []
        self._supported_features: dict[str, VersionRange] = {}
        self._channel_manager: BrokerToControllerChannelManager | None = None

    # -- what other threads call ------------------------------------------------------------------------

    @property
    def broker_epoch(self) -> int:
        return self._broker_epoch

    @property
    def state(self) -> BrokerState:
        return self._state

    def start(
        self,
        highest_metadata_offset_provider: Callable[[], int],
        channel_manager: BrokerToControllerChannelManager,
        cluster_id: str,
        advertised_listeners: list[dict],
        supported_features: Mapping[str, VersionRange],
    ) -> None:
        """Register with the controller quorum and begin heartbeating.

        ``advertised_listeners`` are BrokerRegistration's listener entries (``name``, ``host``,
        ``port``, ``security_protocol`` as its id); ``supported_features`` maps a feature's name to
        the levels this broker supports."""
        self.event_queue.append(
            _Event(
                lambda: self._startup(
                    highest_metadata_offset_provider, channel_manager, cluster_id, advertised_listeners,
                    supported_features,
                ),
                "StartupEvent",
            )
        )  # fmt: skip

    def set_ready_to_unfence(self) -> Future[None]:
        """Stop asking to stay fenced (the broker has caught up and recovered its logs); the future
        completes once the controller has unfenced the broker."""
        self.event_queue.append(_Event(self._set_ready_to_unfence, "SetReadyToUnfenceEvent"))
        return self.initial_unfence_future

    def begin_controlled_shutdown(self) -> None:
        """Enter PENDING_CONTROLLED_SHUTDOWN if RUNNING; shut down at once otherwise."""
        self.event_queue.append(_Event(self._begin_controlled_shutdown, "BeginControlledShutdownEvent"))

    def begin_shutdown(self) -> None:
        """Start shutting the manager down, without waiting."""
        self.event_queue.begin_shutdown("beginShutdown", _Event(self._shutdown, "ShutdownEvent"))

    def close(self) -> None:
        """Shut the manager down and wait for its queue's thread."""
        self.begin_shutdown()
        self.event_queue.close()

    # -- events (on the queue's thread) -----------------------------------------------------------------

    def _startup(
        self,
        highest_metadata_offset_provider: Callable[[], int],
        channel_manager: BrokerToControllerChannelManager,
        cluster_id: str,
        advertised_listeners: list[dict],
        supported_features: Mapping[str, VersionRange],
    ) -> None:
        self._highest_metadata_offset_provider = highest_metadata_offset_provider
        self._channel_manager = channel_manager
        self._channel_manager.start()
        self._state = BrokerState.STARTING
        self._cluster_id = cluster_id
        self._advertised_listeners = [dict(listener) for listener in advertised_listeners]
        self._supported_features = dict(supported_features)
        self.event_queue.schedule_deferred(
            INITIAL_REGISTRATION_TIMEOUT,
            self._time.nanoseconds() + self._initial_timeout_ns,
            _Event(self._registration_timeout, "RegistrationTimeoutEvent"),
        )
        self._send_broker_registration()
        log.info("%sIncarnation %s of broker %d in cluster %s is now STARTING.", self._prefix,
                 self.incarnation_id, self._node_id, cluster_id)  # fmt: skip

    def _set_ready_to_unfence(self) -> None:
        self._ready_to_unfence = True
        self._schedule_next_communication_immediately()

    def _begin_controlled_shutdown(self) -> None:
        if self._state == BrokerState.PENDING_CONTROLLED_SHUTDOWN:
            log.info("%sAttempted to enter pending controlled shutdown state, but we are already in that state.",
                     self._prefix)  # fmt: skip
        elif self._state == BrokerState.RUNNING:
            log.info("%sBeginning controlled shutdown.", self._prefix)
            self._state = BrokerState.PENDING_CONTROLLED_SHUTDOWN
            # Heartbeat now, so that the controller starts moving leaderships away at once.
            self._schedule_next_communication_immediately()
        else:
            log.info(
                "%sSkipping controlled shutdown because we are in state %s.", self._prefix, self._state.name
            )
            self.begin_shutdown()

    def _registration_timeout(self) -> None:
        if not self._initial_registration_succeeded:
            log.error(
                "%sShutting down because we were unable to register with the controller quorum.", self._prefix
            )
            self.event_queue.begin_shutdown("registrationTimeout", _Event(self._shutdown, "ShutdownEvent"))

    def _communicate(self) -> None:
        if self._registered:
            self._send_broker_heartbeat()
        else:
            self._send_broker_registration()

    def _shutdown(self) -> None:
        log.info(
            "%sTransitioning from %s to %s.", self._prefix, self._state.name, BrokerState.SHUTTING_DOWN.name
        )
        self._state = BrokerState.SHUTTING_DOWN
        _complete(self.controlled_shutdown_future)
        self.initial_catch_up_future.cancel()
        self.initial_unfence_future.cancel()
        if self._channel_manager is not None:
            self._channel_manager.shutdown()
            self._channel_manager = None

    # -- registration -----------------------------------------------------------------------------------

    def _send_broker_registration(self) -> None:
        data = {
            "broker_id": self._node_id,
            "cluster_id": self._cluster_id,
            "incarnation_id": self.incarnation_id,
            "listeners": self._advertised_listeners,
            "features": [
                {"name": name, "min_supported_version": r.min, "max_supported_version": r.max}
                for name, r in self._supported_features.items()
            ],
            "rack": self._rack,
        }
        log.debug("%sSending broker registration %s", self._prefix, data)
        self._channel_manager.send_request(
            ControllerApiKeys.BROKER_REGISTRATION,
            data,
            self._on_queue(self._handle_registration_response, "BrokerRegistrationResponse"),
        )

    def _handle_registration_response(self, response: ClientResponse | None) -> None:
        if response is None:
            log.info("%sUnable to register the broker because the RPC got timed out before it could be sent.",
                     self._prefix)  # fmt: skip
            self._schedule_next_communication_after_failure()
        elif response.body is None:
            log.warning("%sUnable to register broker %d.", self._prefix, self._node_id)
            self._schedule_next_communication_after_failure()
        else:
            error = Errors.for_code(response.body["error_code"])
            if error == Errors.NONE:
                self._failed_attempts = 0
                self._broker_epoch = response.body["broker_epoch"]
                self._registered = True
                self._initial_registration_succeeded = True
                log.info("%sSuccessfully registered broker %d with broker epoch %d", self._prefix,
                         self._node_id, self._broker_epoch)  # fmt: skip
                self._schedule_next_communication_immediately()  # heartbeat at once
            else:
                log.info("%sUnable to register broker %d because the controller returned error %s",
                         self._prefix, self._node_id, error.name)  # fmt: skip
                self._schedule_next_communication_after_failure()

    # -- heartbeats -------------------------------------------------------------------------------------

    def _send_broker_heartbeat(self) -> None:
        data = {
            "broker_id": self._node_id,
            "broker_epoch": self._broker_epoch,
            "current_metadata_offset": self._highest_metadata_offset_provider(),
            "want_fence": not self._ready_to_unfence,
            "want_shut_down": self._state == BrokerState.PENDING_CONTROLLED_SHUTDOWN,
        }
        log.debug("%sSending broker heartbeat %s", self._prefix, data)
        self._channel_manager.send_request(
            ControllerApiKeys.BROKER_HEARTBEAT,
            data,
            self._on_queue(self._handle_heartbeat_response, "BrokerHeartbeatResponse"),
        )

    def _handle_heartbeat_response(self, response: ClientResponse | None) -> None:
        if response is None:
            log.info("%sUnable to send a heartbeat because the RPC got timed out before it could be sent.",
                     self._prefix)  # fmt: skip
            self._schedule_next_communication_after_failure()
            return
        if response.body is None:
            log.warning("%sUnable to send broker heartbeat for %d. Retrying.", self._prefix, self._node_id)
            self._schedule_next_communication_after_failure()
            return
        error = Errors.for_code(response.body["error_code"])
        if error != Errors.NONE:
            log.warning("%sBroker %d sent a heartbeat request but received error %s.", self._prefix,
                        self._node_id, error.name)  # fmt: skip
            self._schedule_next_communication_after_failure()
            return
        self._failed_attempts = 0
        handler = self._HEARTBEAT_ANSWER_BY_STATE.get(
            self._state, BrokerLifecycleManager._answer_in_unexpected_state
        )
        handler(self, response.body)

    # --8<-- [start:heartbeat_answers]
    # What a successful heartbeat answer does in each state, in 3.3's order.

    def _answer_while_starting(self, body: dict) -> None:
        if body["is_caught_up"]:
            log.info("%sThe broker has caught up. Transitioning from STARTING to RECOVERY.", self._prefix)
            self._state = BrokerState.RECOVERY
            _complete(self.initial_catch_up_future)
        else:
            log.debug(
                "%sThe broker is STARTING. Still waiting to catch up with cluster metadata.", self._prefix
            )
        self._schedule_next_communication(STARTING_HEARTBEAT_MS * NS_PER_MS)

    def _answer_in_recovery(self, body: dict) -> None:
        """A successful heartbeat answer while the broker is caught up but not yet serving: the
        broker serves once the controller has unfenced it, and keeps heartbeating either way."""
        # BEGIN SOLUTION
        # Unfenced: RUNNING, and initial_unfence_future completed, which the broker's start-up waits
        # on before it serves. Still fenced: stay, and ask again at the heartbeat interval.
        if not body["is_fenced"]:
            log.info("%sThe broker has been unfenced. Transitioning from RECOVERY to RUNNING.", self._prefix)
            _complete(self.initial_unfence_future)
            self._state = BrokerState.RUNNING
        else:
            log.info("%sThe broker is in RECOVERY.", self._prefix)
        self._schedule_next_communication_after_success()
        # END SOLUTION

    def _answer_while_running(self, body: dict) -> None:
        log.debug("%sThe broker is RUNNING. Processing heartbeat response.", self._prefix)
        self._schedule_next_communication_after_success()

    def _answer_in_pending_controlled_shutdown(self, body: dict) -> None:
        """A successful heartbeat answer while the broker waits to be let go: it stops only when
        the controller says it should, and until then keeps asking."""
        # BEGIN SOLUTION
        # Kafka 3.3: the first "not yet" in this state comes from the heartbeat that made the
        # controller move the broker's leaderships; those records are often committed and replayed
        # within milliseconds, so the next heartbeat goes after 50 ms rather than a whole interval.
        # Any later "not yet" means a slower wait (a broker behind on the metadata log): the usual
        # interval. _got_controlled_shutdown_response marks that an answer in this state has come,
        # whatever it said.
        if not body["should_shut_down"]:
            log.info("%sThe broker is in PENDING_CONTROLLED_SHUTDOWN state, still waiting for the active "
                     "controller.", self._prefix)  # fmt: skip
            if not self._got_controlled_shutdown_response:
                self._schedule_next_communication(FIRST_CONTROLLED_SHUTDOWN_HEARTBEAT_MS * NS_PER_MS)
            else:
                self._schedule_next_communication_after_success()
        else:
            log.info("%sThe controller has asked us to exit controlled shutdown.", self._prefix)
            self.begin_shutdown()
        self._got_controlled_shutdown_response = True
        # END SOLUTION

    def _answer_while_shutting_down(self, body: dict) -> None:
        log.info("%sThe broker is SHUTTING_DOWN. Ignoring heartbeat response.", self._prefix)

    def _answer_in_unexpected_state(self, body: dict) -> None:
        log.error("%sUnexpected broker state %s", self._prefix, self._state.name)
        self._schedule_next_communication_after_success()

    _HEARTBEAT_ANSWER_BY_STATE: ClassVar[
        dict[BrokerState, Callable[[BrokerLifecycleManager, dict], None]]
    ] = {
        BrokerState.STARTING: _answer_while_starting,
        BrokerState.RECOVERY: _answer_in_recovery,
        BrokerState.RUNNING: _answer_while_running,
        BrokerState.PENDING_CONTROLLED_SHUTDOWN: _answer_in_pending_controlled_shutdown,
        BrokerState.SHUTTING_DOWN: _answer_while_shutting_down,
    }

    # --8<-- [end:heartbeat_answers]

    # -- when to talk to the controller next ------------------------------------------------------------

    # --8<-- [start:schedule_next_communication]
    def _schedule_next_communication_immediately(self) -> None:
        self._schedule_next_communication(0)

    def _schedule_next_communication_after_failure(self) -> None:
        delay_ms = self._resend_exponential_backoff.backoff(self._failed_attempts)
        self._failed_attempts += 1
        self._schedule_next_communication(delay_ms * NS_PER_MS)

    def _schedule_next_communication_after_success(self) -> None:
        self._schedule_next_communication(self._heartbeat_interval_ms * NS_PER_MS)

    def _schedule_next_communication(self, interval_ns: int) -> None:
        log.debug(
            "%sScheduling next communication at %d ms from now.", self._prefix, interval_ns // NS_PER_MS
        )
        # The same tag replaces the communication already scheduled: one message at a time.
        self.event_queue.schedule_deferred(
            COMMUNICATION,
            self._time.nanoseconds() + interval_ns,
            _Event(self._communicate, "CommunicationEvent"),
        )

    # --8<-- [end:schedule_next_communication]

    def _on_queue(
        self, handle: Callable[[ClientResponse | None], None], name: str
    ) -> ControllerRequestCompletionHandler:
        """A completion handler that hands the answer (None for a timeout) to ``handle`` on the
        queue's thread, ahead of the events waiting there.

        Kafka 3.3 runs its response handlers on the channel's thread, which then reads and writes
        fields the queue's thread owns (``_state``, ``_failed_attempts``); Kafka 3.7 prepends the
        answer to the queue as an event instead. kafka_lite does as 3.7, for the whole handler, so
        that the rule in the module's docstring holds without exception."""
        return ControllerRequestCompletionHandler(
            on_complete=lambda response: self.event_queue.prepend(_Event(lambda: handle(response), name)),
            on_timeout=lambda: self.event_queue.prepend(_Event(lambda: handle(None), name)),
        )


def _complete(future: Future[None]) -> None:
    if not future.done():
        future.set_result(None)
