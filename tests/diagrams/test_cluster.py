"""The concepts page's cluster picture: drawn from a cluster description, which round-trips through
its JSON recording, with every replica, leader, ISR, HW and committed offset in the DOT."""

from __future__ import annotations

import pytest

from kafka_lite.diagrams.cluster import (
    IN_SYNC,
    LEADER,
    OUT_OF_SYNC,
    RECORDING,
    ClusterDescription,
    GroupDescription,
    PartitionDescription,
    cluster_diagram,
)

pytestmark = pytest.mark.unit


def _description() -> ClusterDescription:
    return ClusterDescription(
        brokers=[0, 2],
        controller=2,
        partitions=[
            PartitionDescription("orders", 0, [1, 2], 2, [2], 0, 15),
            PartitionDescription("orders", 1, [2, 0], 2, [2, 0], 3, 29),
        ],
        groups=[GroupDescription("billing", {"orders-0": 11})],
    )


def test_a_description_round_trips_through_json():
    d = _description()
    assert ClusterDescription.from_json(d.to_json()) == d


def test_the_recording_is_a_description_with_every_concept_in_it():
    d = ClusterDescription.from_json(RECORDING.read_text(encoding="utf-8"))
    assert d.controller in d.brokers and d.groups and d.partitions
    # The recording shows what the page explains: a broker down, an ISR smaller than the replicas.
    assert any(set(p.isr) < set(p.replicas) for p in d.partitions)
    assert any(b not in d.brokers for p in d.partitions for b in p.replicas)
    for p in d.partitions:
        assert p.leader in p.isr and set(p.isr) <= set(p.replicas)
        assert p.log_start_offset <= p.high_watermark


def test_every_replica_and_offset_is_drawn():
    source = cluster_diagram(_description()).source
    assert "broker 1<br/>(down)" in source  # a broker with replicas but not in the metadata
    assert "orders-0<br/>leader 2, ISR [2]" in source
    assert source.count(f'bgcolor="{LEADER}">leader') == 2
    assert source.count(f'bgcolor="{IN_SYNC}">follower') == 1
    assert source.count(f'bgcolor="{OUT_OF_SYNC}">follower') == 1
    assert "0-14<br/>HW 15" in source and "3-28<br/>HW 29" in source
    assert "11<br/>lag 4" in source  # the HW minus the committed offset
    assert "<td>none</td>" in source  # orders-1: the group has committed nothing there
