"""One ``FaultyCluster`` per mode (ZooKeeper and three brokers; three combined KRaft nodes), shared by
the nemesis's tests and the Jepsen run of that mode, in that order (files run in name order). Each
mode in an xdist group of its own, so that no other cluster's processes share its worker; the stop
test (``test_stop.py``, last in name order) stops the cluster."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kafka_lite.jepsen.nemesis import FaultyCluster
from kafka_lite.jepsen.run import VERIFICATION

# A follower out of the ISR after 2.5 s: the hold of a kill or a pause (1.5 times the longest
# timeout) is then under 4 s, so a short run has room for several faults.
OVERRIDES = ["replica.lag.time.max.ms=2500"]


ZOOKEEPER = pytest.param(False, id="zookeeper", marks=[pytest.mark.integration, pytest.mark.xdist_group("jepsen_zookeeper")])  # fmt: skip
KRAFT = pytest.param(
    True, id="kraft", marks=[pytest.mark.integration, pytest.mark.xdist_group("jepsen_kraft")]
)
# For a test of the ZooKeeper-mode cluster alone: the package's cluster of that mode, with its marks.
ZOOKEEPER_MODE = pytest.mark.parametrize("faulty_cluster", [ZOOKEEPER], indirect=True)
# Set to a folder to keep there the histories of the runs that lab 20 records (the planted bugs' and
# chapter 10's reproductions'): labs/lab20_jepsen_checker/histories/README.md.
KEEP_HISTORIES = "KAFKA_LITE_KEEP_HISTORIES"


@pytest.fixture(scope="package", params=[ZOOKEEPER, KRAFT])
def faulty_cluster(request, tmp_path_factory) -> Iterator[FaultyCluster]:
    """The KRaft cluster verifies transactional writes (KIP-890 part 1, a static setting there: its
    run is transactional with KIP-890 on); the ZooKeeper cluster's tests set it for themselves, as
    a dynamic broker setting."""
    directory = tmp_path_factory.mktemp("faulty-kraft" if request.param else "faulty-zookeeper")
    overrides = [*OVERRIDES, f"{VERIFICATION}=true"] if request.param else OVERRIDES
    with FaultyCluster(directory, kraft=request.param, overrides=overrides) as cluster:
        yield cluster
