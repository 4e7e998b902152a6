"""Stopping the package's cluster of each mode leaves no process and no listening port behind. Last
of the package's files in name order, since it ends the shared cluster (``conftest.py``)."""

from __future__ import annotations

import contextlib

from kafka_lite.common.time import wait_until
from kafka_lite.utils.ports import port_free
from tests.support.processes import processes_under


def test_stop_leaves_no_process_and_no_listening_port(faulty_cluster):
    faulty = faulty_cluster
    directory = faulty.directory
    state = faulty.state
    ports = [port for ports in faulty.fronts.values() for port in ports.values()]
    for node in state["brokers"]:
        ports += [node[k] for k in ("port", "controller_port") if k in node]
    if "zookeeper" in state:
        ports.append(state["zookeeper"]["port"])
    assert processes_under(directory) and not any(port_free(p) for p in ports)
    faulty.stop()
    assert processes_under(directory) == []
    # A socket of a killed process lingers a moment in the kernel, in a closing state, until its
    # peer's end (the proxy's, the tool's) is gone too: a leftover listener would never free its port.
    busy = lambda: [p for p in ports if not port_free(p)]  # noqa: E731
    with contextlib.suppress(TimeoutError):
        wait_until(lambda: not busy(), "the cluster's ports to be free", 10, time=faulty.time)
    assert busy() == []
    assert faulty.proxy.closed
    faulty.stop()  # a second stop (the fixture's) is harmless
