"""Three KRaft brokers following a real QuorumController through the metadata log (Kafka's test
RaftClient, LocalLogManager, stepped on MockTime): a created topic becomes leaders and followers on
the brokers, and the leader's ISR shrink and expansion go to the controller as AlterPartition
requests over the wire format the controller channel sends (v2, by topic id), come back through the
metadata log to every broker's cache, and end the leader's wait."""

from __future__ import annotations

import itertools
import uuid

import pytest

from kafka_lite.clients.network_client import ClientRequest, ClientResponse
from kafka_lite.common.protocol.controller_messages import (
    encode_controller_request,
    encode_controller_response,
    parse_controller_request,
    parse_controller_response,
)
from kafka_lite.common.protocol.requests import RequestHeader
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.server.alter_partition_manager import AlterPartitionManager
from kafka_lite.server.metadata.broker_metadata_listener import BrokerMetadataListener
from kafka_lite.server.metadata.broker_metadata_publisher import BrokerMetadataPublisher
from kafka_lite.server.metadata.kraft_metadata_cache import KRaftMetadataCache
from kafka_lite.testing.deterministic_event_queue import DeterministicEventQueue
from kafka_lite.testing.in_process_replicas import follower_fetch, in_process_replica_manager
from kafka_lite.testing.local_log_manager import LocalLogManager
from kafka_lite.testing.quorum_controller_test_env import CLUSTER_ID, QuorumControllerTestEnv

pytestmark = pytest.mark.unit

FOO0 = TopicPartition("foo", 0)
LAG_MS = 1_000  # well inside the controller's broker session timeout
VERSION = 2  # what BrokerToControllerChannelManager sends: the table's latest


class WireChannel:
    """The controller channel without sockets: each request is encoded and parsed at v2, handed to
    the active controller, and its answer encoded and parsed back, as the network would carry it.
    ``deliver`` hands over the answers the controller has completed."""

    def __init__(self, env: QuorumControllerTestEnv) -> None:
        self.env = env
        self.correlation_ids = itertools.count()
        self.in_flight = []

    def start(self) -> None:
        pass

    def shutdown(self) -> None:
        pass

    def send_request(self, api, body, callback) -> None:
        header = RequestHeader(int(api), VERSION, next(self.correlation_ids), "broker")
        _, parsed = parse_controller_request(encode_controller_request(header, body))
        self.in_flight.append((api, header, body, self.env.active().alter_partition(parsed), callback))

    def deliver(self) -> int:
        done = [entry for entry in self.in_flight if entry[3].done()]
        for entry in done:
            self.in_flight.remove(entry)
            api, header, body, future, callback = entry
            payload = encode_controller_response(int(api), VERSION, header.correlation_id, future.result())
            _, answer = parse_controller_response(int(api), VERSION, payload)
            request = ClientRequest("0", api, VERSION, body)
            callback.on_complete(ClientResponse(request, self.env.time.milliseconds(), answer))
        return len(done)


class NoCoordinator:
    """This test's brokers host no __consumer_offsets or __transaction_state partitions, so no
    groups whose offsets a deleted topic takes."""

    def on_elected(self, partition_id): ...
    def on_resigned(self, partition_id): ...
    def handle_deleted_partitions(self, topic_partitions): ...
    def handle_txn_immigration(self, partition_id, epoch): ...
    def handle_txn_emigration(self, partition_id, epoch): ...


def register_and_unfence(env, broker_id: int) -> int:
    active = env.active()
    registered = active.register_broker(
        {
            "broker_id": broker_id, "cluster_id": CLUSTER_ID, "incarnation_id": uuid.UUID(int=broker_id),
            "listeners": [{"name": "PLAINTEXT", "host": "127.0.0.1", "port": 9090 + broker_id, "security_protocol": 0}],
            "features": [{"name": "metadata.version", "min_supported_version": 1, "max_supported_version": 7}],
            "rack": None,
        }
    )  # fmt: skip
    env.poll()
    epoch = registered.result(timeout=0).epoch
    heartbeat = active.process_broker_heartbeat(
        {"broker_id": broker_id, "broker_epoch": epoch, "current_metadata_offset": active.last_committed_offset(),
         "want_fence": False, "want_shut_down": False}
    )  # fmt: skip
    env.poll()
    assert not heartbeat.result(timeout=0).is_fenced
    return epoch


@pytest.fixture
def cluster(tmp_path):
    env = QuorumControllerTestEnv(num_controllers=1)
    env.elect(0)
    channel = WireChannel(env)
    brokers = {}
    for broker_id in (1, 2, 3):
        epoch = register_and_unfence(env, broker_id)
        replica_manager = in_process_replica_manager(tmp_path, broker_id, env.time)
        replica_manager.alter_partition_manager = AlterPartitionManager(
            channel, replica_manager.scheduler, env.time, broker_id, lambda epoch=epoch: epoch
        )
        cache = KRaftMetadataCache(broker_id)
        publisher = BrokerMetadataPublisher(
            broker_id,
            cache,
            replica_manager.log_manager,
            replica_manager,
            NoCoordinator(),
            NoCoordinator(),
            {},
        )
        queue = env.queues[100 + broker_id] = DeterministicEventQueue(env.time)  # env.poll runs it
        listener = BrokerMetadataListener(broker_id, env.time, queue)
        LocalLogManager(100 + broker_id, env.shared).register(listener)
        listener.start_publishing(publisher)
        brokers[broker_id] = (replica_manager, cache)
    created = env.active().create_topics(
        {
            "create_topic_requests": [
                {"topic": "foo", "num_partitions": 1, "replication_factor": 3, "replica_assignment": [],
                 "config_entries": []}
            ],
            "timeout": 30_000, "validate_only": False,
        }
    )  # fmt: skip
    env.poll()
    assert created.result(timeout=0)["topic_errors"][0]["error_code"] == 0
    yield env, channel, brokers
    for replica_manager, _ in brokers.values():
        replica_manager.shutdown(checkpoint_hw=False)
        replica_manager.log_manager.shutdown()


def step(env, channel) -> None:
    """Run the controller and the brokers' listeners, hand back the answers, until quiet."""
    while env.poll() + channel.deliver():
        pass


def test_a_created_topic_is_led_and_followed_on_the_brokers(cluster):
    _, _, brokers = cluster
    state = brokers[1][1].partition_state("foo", 0)
    leader = brokers[state.leader][0].get_partition(FOO0)
    assert leader.is_leader() and leader.isr == [1, 2, 3]
    followers = [b for b in brokers if b != state.leader]
    for b in followers:
        partition = brokers[b][0].get_partition(FOO0)
        assert partition.leader_replica_id == state.leader
        assert brokers[b][0].replica_fetcher_manager.added[FOO0].port == 9090 + state.leader
    assert all(cache.partition_state("foo", 0) == state for _, cache in brokers.values())


def test_isr_changes_go_through_the_controller_and_back_through_the_log(cluster):
    env, channel, brokers = cluster
    leader_id = brokers[1][1].partition_state("foo", 0).leader
    leader_rm = brokers[leader_id][0]
    keeps_up, stuck = [b for b in brokers if b != leader_id]
    partition = leader_rm.get_partition(FOO0)
    follower_fetch(leader_rm, keeps_up, FOO0, 0)
    env.time.sleep(LAG_MS + 1)
    follower_fetch(leader_rm, keeps_up, FOO0, 0)
    partition.maybe_shrink_isr(LAG_MS)
    assert partition.isr == [1, 2, 3] and len(channel.in_flight) == 1, "asked, not yet changed"
    step(env, channel)
    assert partition.isr == sorted([leader_id, keeps_up]) and partition.pending_isr_change is None
    assert partition.zk_version == 1, "the partition epoch the controller's change gave"
    registration = env.active().replication_control.get_partition(
        env.active().replication_control.get_topic_id("foo"), 0
    )
    assert sorted(registration.isr) == sorted([leader_id, keeps_up])
    for _, cache in brokers.values():
        assert sorted(cache.partition_state("foo", 0).isr) == sorted([leader_id, keeps_up])
    # the stuck follower catches up (its fetch reaches the HW) and is asked back in
    follower_fetch(leader_rm, stuck, FOO0, 0)
    step(env, channel)
    assert partition.isr == [1, 2, 3] and partition.zk_version == 2
    assert sorted(brokers[stuck][1].partition_state("foo", 0).isr) == [1, 2, 3]
