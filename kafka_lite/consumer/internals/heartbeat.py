"""The member's heartbeat clock: when to send the next heartbeat, and when the member is lost.

Mirrors: org.apache.kafka.clients.consumer.internals.Heartbeat
         (clients/src/main/java/org/apache/kafka/clients/consumer/internals/Heartbeat.java, Kafka 0.10.1)
Book:    chapter 4, 4.3.2 (the heartbeat state: when the next heartbeat is due, when the session
         is lost)
Differs: the book (0.10.0) keeps only the session timeout and the interval here; Kafka 0.10.1 adds
         ``max.poll.interval.ms`` and the time of the last ``poll`` (KIP-62), because heartbeats moved
         to their own thread and so no longer prove that the application is still polling.

Pure bookkeeping on timestamps the caller passes in (its ``Time``'s milliseconds), so a test or a
notebook can drive it with ``MockTime``. Three clocks run against each other:

- the heartbeat interval (``heartbeat.interval.ms``): a heartbeat is due that long after the last one
  was sent, or after the session was last reset (a coordinator found, a join completed); after a
  failed heartbeat, the retry back-off instead;
- the session timeout (``session.timeout.ms``): with no heartbeat answered for that long, the
  coordinator has surely dropped this member, so the member treats its coordinator as dead;
- the poll timeout (``max.poll.interval.ms``): with no ``poll`` for that long, the application is
  stuck, and the member leaves the group so that its partitions go to someone who reads them.

The heartbeat thread reads and updates it under the coordinator's lock; the consumer's thread
records its polls through the coordinator (``poll_heartbeat``), under the same lock.
"""

from __future__ import annotations

from kafka_lite.common.errors import IllegalArgumentException


class Heartbeat:
    def __init__(
        self, session_timeout: int, heartbeat_interval: int, max_poll_interval: int, retry_backoff_ms: int
    ) -> None:
        if heartbeat_interval >= session_timeout:
            raise IllegalArgumentException(
                f"Heartbeat must be set lower than the session timeout (heartbeat.interval.ms "
                f"{heartbeat_interval} >= session.timeout.ms {session_timeout})"
            )
        self.session_timeout = session_timeout
        self.heartbeat_interval = heartbeat_interval
        self.max_poll_interval = max_poll_interval
        self.retry_backoff_ms = retry_backoff_ms
        self.last_heartbeat_send = 0
        self.last_heartbeat_receive = 0
        self.last_session_reset = 0
        self.last_poll = 0
        self.heartbeat_failed = False

    def poll(self, now: int) -> None:
        """The application called ``poll``: it is alive."""
        self.last_poll = now

    def sent_heartbeat(self, now: int) -> None:
        self.last_heartbeat_send = now
        self.heartbeat_failed = False

    def fail_heartbeat(self) -> None:
        """A heartbeat failed: the next one is due after the retry back-off, not the interval."""
        self.heartbeat_failed = True

    def receive_heartbeat(self, now: int) -> None:
        self.last_heartbeat_receive = now

    def should_heartbeat(self, now: int) -> bool:
        return self.time_to_next_heartbeat(now) == 0

    # --8<-- [start:timing]
    def time_to_next_heartbeat(self, now: int) -> int:
        """0 when a heartbeat is due; otherwise how many ms until it is. The wait is counted from the
        later of the last heartbeat sent and the last session reset, and is the heartbeat interval,
        or the retry back-off after a failed heartbeat; once that much has passed, a heartbeat is
        due."""
        # BEGIN SOLUTION
        time_since_last_heartbeat = now - max(self.last_heartbeat_send, self.last_session_reset)
        delay_to_next_heartbeat = self.retry_backoff_ms if self.heartbeat_failed else self.heartbeat_interval
        if time_since_last_heartbeat > delay_to_next_heartbeat:
            return 0
        return delay_to_next_heartbeat - time_since_last_heartbeat
        # END SOLUTION

    def session_timeout_expired(self, now: int) -> bool:
        """No heartbeat answered (and no reset) for longer than the session timeout: more than
        ``session_timeout`` ms since the later of the last answer and the last reset."""
        # BEGIN SOLUTION
        return now - max(self.last_session_reset, self.last_heartbeat_receive) > self.session_timeout
        # END SOLUTION

    def interval(self) -> int:
        return self.heartbeat_interval

    def reset_timeouts(self, now: int) -> None:
        """Start all three clocks afresh: a coordinator was found, or the heartbeat thread resumes
        after a join."""
        self.last_session_reset = now
        self.last_poll = now
        self.heartbeat_failed = False

    def poll_timeout_expired(self, now: int) -> bool:
        """No ``poll`` for longer than ``max.poll.interval.ms``: more than ``max_poll_interval`` ms
        since the last ``poll`` (or reset)."""
        # BEGIN SOLUTION
        return now - self.last_poll > self.max_poll_interval
        # END SOLUTION

    # --8<-- [end:timing]
