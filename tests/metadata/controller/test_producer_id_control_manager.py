"""ProducerIdControlManager, as Kafka 3.3's ProducerIdControlManagerTest: blocks of 1000, the log's
record as the counter, the broker epoch checked."""

import pytest

from kafka_lite.common.errors import Errors
from kafka_lite.common.metadata import ProducerIdsRecord
from kafka_lite.metadata.controller.producer_id_control_manager import (
    LONG_MAX,
    ProducerIdControlManager,
    ProducerIdsBlock,
)
from kafka_lite.metadata.timeline import SnapshotRegistry

pytestmark = pytest.mark.unit


class EpochCheckingClusterControl:
    """The one call ProducerIdControlManager makes of ClusterControlManager, over known epochs."""

    def __init__(self, epochs):
        self.epochs = epochs

    def check_broker_epoch(self, broker_id, broker_epoch):
        if self.epochs.get(broker_id) != broker_epoch:
            raise Errors.STALE_BROKER_EPOCH.exception(f"Expected broker epoch {self.epochs.get(broker_id)}")


@pytest.fixture
def manager():
    return ProducerIdControlManager(EpochCheckingClusterControl({1: 100, 2: 200}), SnapshotRegistry())


def _generate_and_replay(manager, broker_id, broker_epoch):
    result = manager.generate_next_producer_id(broker_id, broker_epoch)
    for record in result.records:
        manager.replay(record.message)
    return result.response


def test_blocks_of_1000_follow_each_other_whoever_asks(manager):
    assert _generate_and_replay(manager, 1, 100) == ProducerIdsBlock(1, 0, 1000)
    assert _generate_and_replay(manager, 2, 200) == ProducerIdsBlock(2, 1000, 1000)
    block = _generate_and_replay(manager, 1, 100)
    assert (block.first_producer_id, block.last_producer_id(), block.next_block_first_id()) == (
        2000,
        2999,
        3000,
    )
    assert manager.next_producer_id() == 3000


def test_generating_changes_nothing_until_replayed(manager):
    result = manager.generate_next_producer_id(1, 100)
    assert result.records[0].message == ProducerIdsRecord(
        broker_id=1, broker_epoch=100, next_producer_id=1000
    )
    assert manager.generate_next_producer_id(2, 200).response.first_producer_id == 0


def test_a_stale_broker_epoch_is_refused(manager):
    with pytest.raises(Errors.STALE_BROKER_EPOCH.exception_class):
        manager.generate_next_producer_id(1, 99)


def test_replay_refuses_to_move_the_counter_back(manager):
    manager.replay(ProducerIdsRecord(broker_id=1, broker_epoch=100, next_producer_id=5000))
    with pytest.raises(RuntimeError, match="not greater than current next Producer ID \\(5000\\)"):
        manager.replay(ProducerIdsRecord(broker_id=1, broker_epoch=100, next_producer_id=4000))


def test_the_ids_run_out_before_they_overflow(manager):
    manager.replay(ProducerIdsRecord(broker_id=1, broker_epoch=100, next_producer_id=LONG_MAX - 999))
    with pytest.raises(Errors.UNKNOWN.exception_class, match="Exhausted all producerIds"):
        manager.generate_next_producer_id(1, 100)
