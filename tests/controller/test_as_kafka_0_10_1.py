"""Where the controller does what Kafka 0.10.1 does rather than what later Kafkas do, and where a
later Kafka's behaviour is borrowed behind a named helper, that helper decides.

On the recording harness (real ZooKeeper, requests recorded): StopReplica goes out one request per
replica, as 0.10.1's ``sendRequestsToBrokers`` sends it; a broker's failure sends a whole
UpdateMetadata only when no partition needed a new leader (0.10.1's ``onBrokerFailure``); a broker
that registered again between two reads of ``/brokers/ids`` is handled by ``bounced_brokers``
(Kafka 2.2), and without it the controller sees no change at all, as 0.10.1 did.
"""

from __future__ import annotations

import pytest

from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.controller.kafka_controller import KafkaController
from kafka_lite.testing.controller_harness import running_controller
from kafka_lite.zk.zk_utils import BROKER_IDS_PATH

pytestmark = pytest.mark.integration


@pytest.fixture
def harness(zookeeper):
    with running_controller(zookeeper.connect_string, name="as_0_10_1") as h:
        yield h


def updated(h) -> set[tuple[str, int]]:
    return {
        (s["topic"], s["partition"])
        for r in h.requests(ApiKeys.UPDATE_METADATA)
        for s in r.body["partition_states"]
    }


def test_stop_replica_goes_out_one_request_per_replica(harness):
    """A broker that follows two partitions dies: each of its replicas goes Offline with its own
    StopReplica (delete=false), not one request naming both."""
    harness.create_topic("pair", {0: [1, 2], 1: [1, 2]})
    harness.next_step()
    harness.kill(2)
    bodies = [s.body for s in harness.requests(ApiKeys.STOP_REPLICA, 2)]
    assert [[(p["topic"], p["partition"]) for p in b["partitions"]] for b in bodies] == [
        [("pair", 0)],
        [("pair", 1)],
    ], f"one StopReplica per replica, as 0.10.1 sends them; sent {bodies}"
    assert all(b["delete_partitions"] is False for b in bodies)


def test_a_failure_that_moves_a_leader_sends_no_whole_update_metadata(harness):
    """Broker 1 led ``moved``-0: its election's LeaderAndIsr carries UpdateMetadata for that partition,
    and nothing is sent for ``still``-0, which broker 1 had no part in."""
    harness.create_topic("moved", {0: [1, 2]})
    harness.create_topic("still", {0: [3]})
    harness.next_step()
    harness.kill(1)
    assert harness.leader_and_isr("moved").leader == 2
    assert harness.sent_to(ApiKeys.UPDATE_METADATA) == {0, 2, 3}
    assert updated(harness) == {("moved", 0)}, f"UpdateMetadata named {sorted(updated(harness))}"


def test_a_failure_that_moves_no_leader_sends_every_partition_to_every_live_broker(harness):
    """Broker 3 led nothing and held no replica: nothing else would tell the brokers it died."""
    harness.create_topic("moved", {0: [1, 2]})
    harness.create_topic("still", {0: [2]})
    harness.next_step()
    harness.kill(3)
    assert harness.sent_to(ApiKeys.UPDATE_METADATA) == {0, 1, 2}
    assert updated(harness) == {("moved", 0), ("still", 0)}
    for r in harness.requests(ApiKeys.UPDATE_METADATA):
        assert sorted(b["id"] for b in r.body["live_brokers"]) == [0, 1, 2], r.broker_id


def test_update_metadata_keeps_a_map_per_broker(harness):
    """One batch asked to tell broker 1 about ``first``-0 and broker 2 about ``second``-0: each hears
    its own partition only, as 0.10.1's ``updateMetadataRequestMap`` (a map per broker) sends them,
    and a broker named with no partition still gets the live brokers."""
    harness.create_topic("first", {0: [1]})
    harness.create_topic("second", {0: [2]})
    harness.next_step()
    batch = harness.controller.new_batch()
    batch.add_update_metadata_request_for_brokers([1], [("first", 0)])
    batch.add_update_metadata_request_for_brokers([2], [("second", 0)])
    batch.add_update_metadata_request_for_brokers([3], [])
    batch.send_requests_to_brokers(harness.controller.epoch)
    assert set(harness.states_sent(ApiKeys.UPDATE_METADATA, 1)) == {("first", 0)}
    assert set(harness.states_sent(ApiKeys.UPDATE_METADATA, 2)) == {("second", 0)}
    [to_3] = harness.requests(ApiKeys.UPDATE_METADATA, 3)
    assert to_3.body["partition_states"] == [] and to_3.body["live_brokers"]


def _bounce(harness, broker_id: int) -> None:
    """Broker ``broker_id``'s znode deleted and created again in one transaction: the controller can
    only ever read the same ids before and after."""
    path = f"{BROKER_IDS_PATH}/{broker_id}"
    data, _ = harness.zk.client.get(path)
    transaction = harness.zk.client.transaction()
    transaction.delete(path)
    transaction.create(path, data, ephemeral=True)
    transaction.commit()


def test_a_bounced_broker_is_a_failure_then_a_startup_through_bounced_brokers(harness):
    harness.create_topic("bounce", {0: [1, 2]})
    harness.next_step()
    _bounce(harness, 2)
    harness.broker_change()
    assert harness.controller.context.live_brokers_by_id[2].epoch == harness.zk.get_broker(2).epoch
    replica = [(s, t) for k, s, t in harness.taken("replica") if k == ("bounce", 0, 2)]
    assert replica == [("OnlineReplica", "OfflineReplica"), ("OfflineReplica", "OnlineReplica")]
    assert 2 in harness.sent_to(ApiKeys.LEADER_AND_ISR), "the bounced broker gets its LeaderAndIsr"


def test_without_bounced_brokers_a_bounce_goes_unseen_as_in_0_10_1(harness, monkeypatch):
    """The helper is where the borrowing lives: answering none (0.10.1 compares ids only), the same
    bounce changes nothing and the broker hears nothing."""
    monkeypatch.setattr(KafkaController, "bounced_brokers", lambda self, registered: [])
    harness.create_topic("bounce", {0: [1, 2]})
    harness.next_step()
    _bounce(harness, 2)
    harness.broker_change()
    assert harness.taken("replica") == [] and harness.sent == []
