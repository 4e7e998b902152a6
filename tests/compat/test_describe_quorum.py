"""DescribeQuorum sent to a broker, as ``kafka-metadata-quorum.sh --bootstrap-server`` sends it (Kafka
3.3): a KRaft broker advertises it in ApiVersions and forwards it to the active controller, whose
answer it hands back; a ZooKeeper broker has no quorum, neither advertises nor takes it, and closes
the connection, as 3.3's ZooKeeper broker's SocketServer refuses an API its listener does not enable.
"""

from __future__ import annotations

import pytest

from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.raft_messages import RaftApiKeys
from kafka_lite.raft.tools.quorum_client import describe_quorum
from tests.support.kraft_cluster import KRaftCluster
from tests.support.wire import WireClient

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("cluster")]

# An admin client's request.timeout.ms (Kafka's default): a forwarded request's round trip on a
# loaded machine stays well inside it.
REQUEST_TIMEOUT_S = 30


def _advertised(port: int) -> dict[int, tuple[int, int]]:
    client = WireClient(port, timeout_s=REQUEST_TIMEOUT_S)
    try:
        answer = client.call(ApiKeys.API_VERSIONS, 0, {})
    finally:
        client.close()
    return {v["api_key"]: (v["min_version"], v["max_version"]) for v in answer["api_versions"]}


def test_a_broker_forwards_describe_quorum_in_kraft_mode_and_refuses_it_in_zookeeper_mode(cluster):
    kraft = isinstance(cluster, KRaftCluster)
    for address in cluster.bootstrap_servers.split(","):
        host, _, port = address.rpartition(":")
        advertised = _advertised(int(port))
        if kraft:
            assert advertised[RaftApiKeys.DESCRIBE_QUORUM] == (0, 1), address
            answer = describe_quorum((host, int(port)), timeout_s=REQUEST_TIMEOUT_S)
            assert answer.get("error_code") == 0, f"{address} answered {answer}"
            assert answer["leader_id"] in (0, 1, 2) and answer["high_watermark"] > 0, answer
            assert sorted(r["replica_id"] for r in answer["current_voters"]) == [0, 1, 2], answer
        else:
            assert RaftApiKeys.DESCRIBE_QUORUM not in advertised, address
            with pytest.raises(ConnectionError, match="takes no DescribeQuorum"):
                describe_quorum((host, int(port)), timeout_s=REQUEST_TIMEOUT_S)
