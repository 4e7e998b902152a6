"""AlterPartitionManager (Kafka 3.3's DefaultAlterPartitionManager) and a KRaft leader's ISR path:
changes batched one request at a time, one per partition; the answers as a test gives them through a
channel that only records; a leader that adopts the controller's ISR, and waits for the metadata log
after INVALID_UPDATE_VERSION or FENCED_LEADER_EPOCH."""

from __future__ import annotations

import uuid

import pytest

from kafka_lite.clients.network_client import ClientRequest, ClientResponse
from kafka_lite.common.errors import Errors
from kafka_lite.common.protocol.controller_messages import ControllerApiKeys
from kafka_lite.common.time import MockTime
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.metadata.image import MetadataImage
from kafka_lite.server.alter_partition_manager import RETRY_BACKOFF_MS, AlterPartitionManager
from kafka_lite.testing.in_process_replicas import follower_fetch, in_process_replica_manager
from kafka_lite.utils.scheduler import MockScheduler
from kafka_lite.zk.zk_utils import LeaderAndIsr
from tests.server.metadata.records import change, delta_of, partition, register, topic

pytestmark = pytest.mark.unit

FOO = uuid.UUID(int=0xF00)
BAR = uuid.UUID(int=0xBA4)
FOO0, FOO1, BAR0 = TopicPartition("foo", 0), TopicPartition("foo", 1), TopicPartition("bar", 0)
LAG_MS = 10_000


class RecordingChannel:
    """A BrokerToControllerChannelManager that sends nothing: each request waits in ``sent`` until
    the test answers it."""

    def __init__(self, time: MockTime) -> None:
        self.time = time
        self.sent: list[tuple[dict, object]] = []

    def start(self) -> None:
        pass

    def shutdown(self) -> None:
        pass

    def send_request(self, api, body, callback) -> None:
        assert api is ControllerApiKeys.ALTER_PARTITION
        self.sent.append((body, callback))

    def answer(self, body: dict | None, version: int = 1, index: int = -1) -> None:
        request_body, callback = self.sent.pop(index)
        request = ClientRequest("0", ControllerApiKeys.ALTER_PARTITION, version, request_body)
        callback.on_complete(ClientResponse(request, self.time.milliseconds(), body))


def ok(tp, leader, leader_epoch, isr, partition_epoch, error=Errors.NONE) -> dict:
    return {
        "topic_name": tp.topic,
        "topic_id": FOO if tp.topic == "foo" else BAR,
        "partitions": [
            {
                "partition_index": tp.partition,
                "error_code": error.code,
                "leader_id": leader,
                "leader_epoch": leader_epoch,
                "isr": isr,
                "leader_recovery_state": 0,
                "partition_epoch": partition_epoch,
            }
        ],
    }


def response(*topics, error=Errors.NONE) -> dict:
    return {"throttle_time_ms": 0, "error_code": error.code, "topics": list(topics)}


@pytest.fixture
def time():
    return MockTime()


@pytest.fixture
def channel(time):
    return RecordingChannel(time)


@pytest.fixture
def manager(time, channel):
    scheduler = MockScheduler(time)
    scheduler.startup()
    epochs = iter(range(100, 200))
    return AlterPartitionManager(channel, scheduler, time, 0, lambda: next(epochs))


class Answers(list):
    def __call__(self, leader_and_isr, error):
        self.append((leader_and_isr, error))


def test_a_change_is_sent_by_name_and_id_with_the_partition_epoch(manager, channel):
    assert manager.submit(FOO0, FOO, LeaderAndIsr(0, 3, [0, 1], 7), Answers())
    ((body, _),) = channel.sent
    assert (body["broker_id"], body["broker_epoch"]) == (0, 100)
    (t,) = body["topics"]
    assert (t["topic_name"], t["topic_id"]) == ("foo", FOO)
    (p,) = t["partitions"]
    assert (p["partition_index"], p["leader_epoch"], p["new_isr"], p["partition_epoch"]) == (0, 3, [0, 1], 7)


def test_one_change_per_partition_and_one_request_in_flight(manager, channel):
    first = Answers()
    assert manager.submit(FOO0, FOO, LeaderAndIsr(0, 3, [0, 1], 7), first)
    assert not manager.submit(FOO0, FOO, LeaderAndIsr(0, 3, [0], 7), Answers()), "foo-0 already waits"
    assert manager.submit(FOO1, FOO, LeaderAndIsr(0, 1, [0], 2), Answers())
    assert manager.submit(BAR0, BAR, LeaderAndIsr(0, 1, [0], 2), Answers())
    assert len(channel.sent) == 1, "the others wait for the answer to the request in flight"
    channel.answer(response(ok(FOO0, 0, 3, [0, 1], 8)))
    assert first == [(LeaderAndIsr(0, 3, [0, 1], 8), Errors.NONE)]
    ((body, _),) = channel.sent
    sent = {(t["topic_name"], p["partition_index"]) for t in body["topics"] for p in t["partitions"]}
    assert sent == {("foo", 1), ("bar", 0)}, "both waiting changes in one request, grouped by topic"
    assert len(body["topics"]) == 2


def test_a_partition_left_out_of_the_answer_is_sent_again(manager, channel):
    foo0, foo1 = Answers(), Answers()
    manager.submit(FOO0, FOO, LeaderAndIsr(0, 3, [0, 1], 7), foo0)
    manager.submit(FOO1, FOO, LeaderAndIsr(0, 1, [0], 2), foo1)  # waits
    channel.answer(response(ok(FOO0, 0, 3, [0, 1], 8)))
    channel.answer(response())  # the answer to foo-1's request forgets it
    assert foo1 == []
    ((body, _),) = channel.sent
    assert body["topics"][0]["partitions"][0]["partition_index"] == 1


def test_a_partition_error_goes_to_its_callback(manager, channel):
    answers = Answers()
    manager.submit(FOO0, FOO, LeaderAndIsr(0, 3, [0, 1], 7), answers)
    channel.answer(response(ok(FOO0, 0, 0, [], 0, error=Errors.INVALID_UPDATE_VERSION)))
    assert answers == [(None, Errors.INVALID_UPDATE_VERSION)]
    assert manager.unsent_isr_updates == {} and channel.sent == []


def test_a_top_level_error_sends_again_after_the_backoff(manager, channel, time):
    answers = Answers()
    manager.submit(FOO0, FOO, LeaderAndIsr(0, 3, [0, 1], 7), answers)
    channel.answer(response(error=Errors.STALE_BROKER_EPOCH))
    assert answers == [] and channel.sent == []
    time.sleep(RETRY_BACKOFF_MS - 1)
    manager.scheduler.tick()
    assert channel.sent == []
    time.sleep(1)
    manager.scheduler.tick()
    ((body, _),) = channel.sent
    assert body["broker_epoch"] == 101, "the broker epoch is read again for each request"


def test_no_answer_at_all_is_sent_again(manager, channel, time):
    manager.submit(FOO0, FOO, LeaderAndIsr(0, 3, [0, 1], 7), Answers())
    channel.answer(None)
    time.sleep(RETRY_BACKOFF_MS)
    manager.scheduler.tick()
    assert len(channel.sent) == 1


def test_a_v2_answer_names_topics_by_id(manager, channel):
    answers = Answers()
    manager.submit(FOO0, FOO, LeaderAndIsr(0, 3, [0, 1], 7), answers)
    by_id = ok(FOO0, 0, 3, [0, 1], 8)
    del by_id["topic_name"]
    channel.answer(response(by_id), version=2)
    assert answers == [(LeaderAndIsr(0, 3, [0, 1], 8), Errors.NONE)]


# -- a KRaft leader's ISR path -----------------------------------------------------------------------------


@pytest.fixture
def leader(tmp_path, time, manager):
    """Broker 0 leads foo-0 (replicas 0, 1, 2; leader epoch 2, partition epoch 4), through ``manager``."""
    replica_manager = in_process_replica_manager(tmp_path, 0, time)
    replica_manager.alter_partition_manager = manager
    records = [register(0), register(1), register(2), topic("foo", FOO)]
    delta = delta_of(
        MetadataImage.EMPTY, *records, partition(FOO, 0, [0, 1, 2], leader_epoch=2, partition_epoch=4)
    )
    image = delta.apply()
    replica_manager.apply_delta(delta.topics_delta, image)
    yield replica_manager, image
    replica_manager.shutdown(checkpoint_hw=False)
    replica_manager.log_manager.shutdown()


def shrink_out_follower_2(replica_manager, time):
    follower_fetch(replica_manager, 1, FOO0, 0)  # follower 1 keeps up; follower 2 is stuck
    time.sleep(LAG_MS + 1)
    follower_fetch(replica_manager, 1, FOO0, 0)
    replica_manager.get_partition(FOO0).maybe_shrink_isr(LAG_MS)


def test_a_shrink_is_asked_of_the_controller_and_adopted_from_its_answer(leader, channel, time):
    replica_manager, _ = leader
    p = replica_manager.get_partition(FOO0)
    shrink_out_follower_2(replica_manager, time)
    ((body, _),) = channel.sent
    sent = body["topics"][0]["partitions"][0]
    assert (sent["new_isr"], sent["leader_epoch"], sent["partition_epoch"]) == ([0, 1], 2, 4)
    assert p.isr == [0, 1, 2], "nothing changes before the controller says so"
    p.maybe_shrink_isr(LAG_MS)
    assert len(channel.sent) == 1, "one change of a partition at a time"
    channel.answer(response(ok(FOO0, 0, 2, [0, 1], 5)))
    assert p.isr == [0, 1] and p.zk_version == 5 and p.pending_isr_change is None


@pytest.mark.parametrize("error", [Errors.INVALID_UPDATE_VERSION, Errors.FENCED_LEADER_EPOCH])
def test_a_stale_leader_waits_for_the_metadata_log(leader, channel, time, error):
    replica_manager, image = leader
    p = replica_manager.get_partition(FOO0)
    shrink_out_follower_2(replica_manager, time)
    channel.answer(response(ok(FOO0, 0, 0, [], 0, error=error)))
    assert p.isr == [0, 1, 2] and p.pending_isr_change is not None
    p.maybe_shrink_isr(LAG_MS)
    assert channel.sent == [], "no retry: the controller knows a newer state, which the log will bring"
    # the controller's change arrives through the metadata log
    delta = delta_of(image, change(FOO, 0, isr=[0, 2]))
    replica_manager.apply_delta(delta.topics_delta, delta.apply())
    assert p.isr == [0, 2] and p.zk_version == 5 and p.pending_isr_change is None
    p.maybe_shrink_isr(LAG_MS)
    ((body, _),) = channel.sent
    assert body["topics"][0]["partitions"][0]["partition_epoch"] == 5, "a new change, from the new state"


def test_an_answer_the_log_has_overtaken_is_ignored(leader, channel, time):
    replica_manager, image = leader
    p = replica_manager.get_partition(FOO0)
    shrink_out_follower_2(replica_manager, time)
    delta = delta_of(image, change(FOO, 0, isr=[0, 1]))
    replica_manager.apply_delta(delta.topics_delta, delta.apply())
    channel.answer(response(ok(FOO0, 0, 2, [0, 1, 2], 9)))
    assert p.isr == [0, 1] and p.zk_version == 5


def test_an_unexpected_error_sends_the_change_again(leader, channel, time):
    replica_manager, _ = leader
    shrink_out_follower_2(replica_manager, time)
    channel.answer(response(ok(FOO0, 0, 0, [], 0, error=Errors.UNKNOWN)))
    ((body, _),) = channel.sent
    assert body["topics"][0]["partitions"][0]["new_isr"] == [0, 1]


def test_an_expansion_is_asked_for_too(leader, channel, time):
    replica_manager, image = leader
    p = replica_manager.get_partition(FOO0)
    delta = delta_of(image, change(FOO, 0, isr=[0]))
    replica_manager.apply_delta(delta.topics_delta, delta.apply())
    follower_fetch(replica_manager, 2, FOO0, 0)  # at the HW: back in
    ((body, _),) = channel.sent
    assert body["topics"][0]["partitions"][0]["new_isr"] == [0, 2]
    assert p.isr == [0], "the follower counts towards the HW only once the controller answers"
    channel.answer(response(ok(FOO0, 0, 2, [0, 2], 6)))
    assert p.isr == [0, 2]
