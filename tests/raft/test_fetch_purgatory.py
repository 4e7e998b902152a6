"""The leader's fetch purgatory (Kafka 3.3's ThresholdPurgatory over an ExpirationService) and the
Raft thread's message queue: a Fetch with nothing to carry is held, and answered when the log end
passes it, when the high watermark moves, when its max wait expires (on MockTime), or with
NOT_LEADER_OR_FOLLOWER when the leader resigns; a Fetch that itself moves the high watermark is not
held."""

from __future__ import annotations

import threading

import pytest

from kafka_lite.common.protocol.raft_messages import RaftApiKeys
from kafka_lite.common.time import MockTime, SystemTime
from kafka_lite.raft import raft_util
from kafka_lite.raft.internals.threshold_purgatory import ThresholdPurgatory
from kafka_lite.raft.offset_and_epoch import OffsetAndEpoch
from kafka_lite.raft.raft_message_queue import BlockingMessageQueue
from kafka_lite.raft.raft_util import RaftErrors
from kafka_lite.raft.simulation.mock_expiration_service import MockExpirationService
from kafka_lite.testing.raft_client_test_context import METADATA_PARTITION, RaftClientTestContext, batch

pytestmark = pytest.mark.unit

LOCAL = 0
MAX_WAIT_MS = 500


def leader(voters: set[int]) -> tuple[RaftClientTestContext, int]:
    ctx = RaftClientTestContext(LOCAL, voters)
    if len(voters) == 3:
        return ctx, ctx.become_leader()
    # Five voters: stand, and win with the votes of nodes 1 and 2.
    ctx.expire_election_timeout()
    ctx.poll(2)
    epoch = ctx.quorum().epoch()
    for vote in ctx.drain_sent(RaftApiKeys.VOTE):
        if vote.destination_id in (1, 2):
            ctx.deliver_response(vote, ctx.vote_response(True, epoch))
    ctx.poll(3)
    assert ctx.state_name() == "Leader"
    return ctx, epoch


def fetch(
    ctx: RaftClientTestContext, replica_id: int, epoch: int, fetch_offset: int, last_fetched_epoch: int
):
    data = raft_util.fetch_request(
        raft_util.METADATA_TOPIC_ID, METADATA_PARTITION, None, replica_id, MAX_WAIT_MS, epoch, fetch_offset,
        last_fetched_epoch, 1 << 20,
    )  # fmt: skip
    request = ctx.deliver_request(RaftApiKeys.FETCH, data)
    ctx.poll()
    return request


def answer(ctx: RaftClientTestContext, request) -> dict:
    return ctx.partition_of(ctx.response_of(request), "responses")


def held_fetch(ctx: RaftClientTestContext, epoch: int, end: int):
    """Node 2's Fetch at the log end, held: node 1's comes first and, the leader and node 1 being a
    majority of three, moves the high watermark to the end, so it is answered at once with it."""
    first = fetch(ctx, 1, epoch, fetch_offset=end, last_fetched_epoch=epoch)
    assert answer(ctx, first)["high_watermark"] == end
    return fetch(ctx, 2, epoch, fetch_offset=end, last_fetched_epoch=epoch)


def test_a_fetch_with_records_to_carry_is_answered_at_once():
    ctx, epoch = leader({0, 1, 2})
    request = fetch(ctx, 1, epoch, fetch_offset=0, last_fetched_epoch=0)
    partition = answer(ctx, request)
    assert partition["error_code"] == 0 and partition["records"]  # the LeaderChange record
    assert ctx.client._fetch_purgatory.num_waiting() == 0


def test_a_held_fetch_is_answered_when_the_log_end_passes_it():
    ctx, epoch = leader({0, 1, 2})
    end = ctx.log.end_offset().offset
    request = held_fetch(ctx, epoch, end)
    assert not request.completion.done()
    assert ctx.client._fetch_purgatory.num_waiting() == 1
    ctx.client.schedule_append(epoch, ["a"])
    ctx.poll()  # the batch reaches the log: the held Fetch is queued back
    ctx.poll()  # and answered, with the new record
    partition = answer(ctx, request)
    assert partition["error_code"] == 0
    assert bytes(partition["records"]) and b"a" in bytes(partition["records"])
    assert ctx.client._fetch_purgatory.num_waiting() == 0


def test_a_held_fetch_is_answered_when_the_high_watermark_moves():
    # Five voters, so that one follower at the log end is not yet a majority.
    ctx, epoch = leader({0, 1, 2, 3, 4})
    end = ctx.log.end_offset().offset
    held = fetch(ctx, 1, epoch, fetch_offset=end, last_fetched_epoch=epoch)
    assert not held.completion.done()
    assert ctx.log.high_watermark().offset < end
    # Node 2 reaching the log end makes three of five: the high watermark moves to it.
    second = fetch(ctx, 2, epoch, fetch_offset=end, last_fetched_epoch=epoch)
    assert ctx.log.high_watermark().offset == end
    ctx.poll()  # node 1's Fetch, released by the move, is answered
    partition = answer(ctx, held)
    assert (partition["error_code"], partition["high_watermark"]) == (0, end)
    assert partition["records"] == b""
    # The Fetch that moved the high watermark is answered at once too, with the new one: held, its
    # follower would learn of the commit only when the wait ran out (Kafka 3.3 holds it).
    partition = answer(ctx, second)
    assert (partition["error_code"], partition["high_watermark"], partition["records"]) == (0, end, b"")
    assert ctx.client._fetch_purgatory.num_waiting() == 0


def test_a_held_fetch_expires_empty_after_its_max_wait_on_mock_time():
    ctx, epoch = leader({0, 1, 2})
    end = ctx.log.end_offset().offset
    request = held_fetch(ctx, epoch, end)
    expiration = ctx.expiration_service
    ctx.time.sleep(MAX_WAIT_MS - 1)
    expiration.tick()
    ctx.poll(2)
    assert not request.completion.done()
    ctx.time.sleep(1)
    expiration.tick()
    ctx.poll()
    partition = answer(ctx, request)
    assert (partition["error_code"], partition["records"]) == (0, b"")
    assert partition["high_watermark"] == ctx.log.high_watermark().offset
    assert ctx.client._fetch_purgatory.num_waiting() == 0


def test_a_held_fetch_gets_not_leader_when_the_leader_resigns():
    ctx, epoch = leader({0, 1, 2})
    end = ctx.log.end_offset().offset
    request = held_fetch(ctx, epoch, end)
    ctx.client.resign(epoch)
    ctx.poll()  # Resigned: the purgatory is emptied with NOT_LEADER_OR_FOLLOWER
    assert ctx.state_name() == "Resigned"
    ctx.poll()
    partition = answer(ctx, request)
    assert RaftErrors(partition["error_code"]) == RaftErrors.NOT_LEADER_OR_FOLLOWER
    assert partition["records"] == b""


def test_a_zero_max_wait_is_never_held():
    ctx, epoch = leader({0, 1, 2})
    end = ctx.log.end_offset().offset
    # Node 1's Fetch moves the high watermark to the end first, so node 2's, at the same offset, has
    # nothing to carry and moves nothing: only its zero max wait keeps it from being held.
    first = fetch(ctx, 1, epoch, fetch_offset=end, last_fetched_epoch=epoch)
    assert answer(ctx, first)["high_watermark"] == end
    request = ctx.deliver_fetch_request(2, epoch, fetch_offset=end, last_fetched_epoch=epoch)  # max wait 0
    ctx.poll()
    assert request.completion.done(), "a Fetch with a zero max wait was held"
    partition = answer(ctx, request)
    assert (partition["error_code"], partition["high_watermark"], partition["records"]) == (0, end, b"")
    assert ctx.client._fetch_purgatory.num_waiting() == 0


def test_a_fetch_told_to_truncate_is_answered_at_once():
    # Kafka 3.6's rule (KAFKA-15100): the answer carries no records, but the follower can do
    # nothing else until it has truncated. The leader's log: epoch 1 at 0-2, its LeaderChange at 3.
    ctx = RaftClientTestContext(LOCAL, {0, 1, 2}, log_batches=[batch(0, 1, ["a", "b", "c"])])
    epoch = ctx.become_leader()
    # Node 1 has an epoch-1 entry at offset 3 the leader never had; its offset is the leader's end,
    # so nothing the leader appends soon would release a held Fetch.
    request = fetch(ctx, 1, epoch, fetch_offset=4, last_fetched_epoch=1)
    assert request.completion.done(), "a Fetch answered with a diverging epoch was held"
    partition = answer(ctx, request)
    assert (partition["diverging_epoch"], partition["records"]) == ({"epoch": 1, "end_offset": 3}, b"")
    assert ctx.client._fetch_purgatory.num_waiting() == 0


def test_a_fetch_sent_to_a_snapshot_is_answered_at_once():
    # As above (KAFKA-15100): a follower sent to a snapshot fetches nothing else before it.
    ctx, epoch = leader({0, 1, 2})
    writer = ctx.log.store_snapshot(OffsetAndEpoch(1, epoch))
    writer.append(bytes(batch(0, epoch, ["s"]).buffer()))
    writer.freeze()
    # Node 1's last entry is of an epoch older than anything from the snapshot on.
    request = fetch(ctx, 1, epoch, fetch_offset=1, last_fetched_epoch=0)
    assert request.completion.done(), "a Fetch answered with a snapshot id was held"
    partition = answer(ctx, request)
    assert (partition["snapshot_id"], partition["records"]) == ({"end_offset": 1, "epoch": epoch}, b"")
    assert ctx.client._fetch_purgatory.num_waiting() == 0


def test_threshold_purgatory_completes_only_reached_thresholds():
    time = MockTime()
    expiration = MockExpirationService(time)
    purgatory = ThresholdPurgatory(expiration)
    low, high = purgatory.await_(5, 100), purgatory.await_(9, 100)
    purgatory.maybe_complete(5, time.milliseconds())
    assert low.done() and low.result() == time.milliseconds()
    assert not high.done() and purgatory.num_waiting() == 1
    time.sleep(100)
    expiration.tick()
    assert type(high.exception()).__name__ == "TimeoutException"
    assert purgatory.num_waiting() == 0


class _WaitSignalling:
    """A clock that says when a thread blocks on it, so a test knows the poller is waiting without
    guessing how long a loaded machine takes to get there. The poller still holds the queue's lock
    when it says so, and lets go of it only in the wait: an ``add`` or a ``wakeup`` made after the
    signal finds it waiting."""

    def __init__(self) -> None:
        super().__init__()
        self.waiting = threading.Event()

    def _wait(self, condition: threading.Condition, remaining_ms: int) -> None:
        self.waiting.set()
        super()._wait(condition, remaining_ms)


class _WaitSignallingTime(_WaitSignalling, MockTime):
    pass


class _WaitSignallingSystemTime(_WaitSignalling, SystemTime):
    pass


# A bound for a thread to reach a point it reaches at once when the code is right; only a bug (or a
# hang) spends it.
_THREAD_DEADLINE_S = 10


def _poll_in_thread(
    queue: BlockingMessageQueue, time: _WaitSignalling, timeout_ms: int, result: list
) -> threading.Thread:
    def run() -> None:
        result.append(queue.poll(timeout_ms))
        time.waiting.set()  # a poll that never waited must not leave the test waiting for it

    poller = threading.Thread(target=run, daemon=True)
    poller.start()
    return poller


def _finish(poller: threading.Thread) -> None:
    poller.join(_THREAD_DEADLINE_S)
    assert not poller.is_alive(), f"the poll did not return within {_THREAD_DEADLINE_S} s"


def test_blocking_queue_waits_until_its_timeout_on_mock_time():
    time = _WaitSignallingTime()
    queue = BlockingMessageQueue(time)
    result: list = []
    poller = _poll_in_thread(queue, time, 1_000, result)
    # The poller blocks on the clock having found nothing, or returns: only a wrong poll returns.
    assert time.waiting.wait(_THREAD_DEADLINE_S), "the poll neither waited on the clock nor returned"
    assert result == [], "the poll returned before mock time moved or a message came"
    queue.add("vote")
    _finish(poller)
    assert result == ["vote"] and queue.is_empty()
    # A wakeup ends the wait with nothing; a timeout on mock time ends it once the clock passes it.
    queue.wakeup()
    assert queue.poll(1_000) is None
    time.waiting.clear()
    poller = _poll_in_thread(queue, time, 1_000, result)
    assert time.waiting.wait(_THREAD_DEADLINE_S), "the poll neither waited on the clock nor returned"
    time.sleep(1_000)
    _finish(poller)
    assert result == ["vote", None]


@pytest.mark.parametrize("end_the_wait", ["add", "wakeup"])
def test_blocking_queue_ends_a_long_wait_on_the_system_clock_at_an_add_or_a_wakeup(end_the_wait):
    # A ten-minute poll: only the add or the wakeup ends it within the deadline. On the system
    # clock, as a real node polls: a MockTime re-checks on its own every 50 ms of real time.
    time = _WaitSignallingSystemTime()
    queue = BlockingMessageQueue(time)
    result: list = []
    poller = _poll_in_thread(queue, time, 600_000, result)
    assert time.waiting.wait(_THREAD_DEADLINE_S), "the poll neither waited on the clock nor returned"
    assert result == []
    if end_the_wait == "add":
        queue.add("vote")
    else:
        queue.wakeup()
    _finish(poller)
    assert result == (["vote"] if end_the_wait == "add" else [None])
    assert queue.is_empty()
