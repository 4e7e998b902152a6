"""A controller whose ZooKeeper session expires (a long pause, a stalled machine) resigns before it hears
its watches again (Kafka's ``SessionExpirationListener.handleNewSession``).

When the session ends, ZooKeeper deletes its ephemeral znodes: ``/controller`` and, here, the
brokers' registrations (the harness registers every broker with the controller's session). Once
kazoo has a new session, the brokers watch fires with the emptied list. A controller that still
thought itself active would count every broker dead and write each partition leaderless into
ZooKeeper, over what the next controller decides: the next controller's cache would then name a
leader that ZooKeeper does not, and no event would ever set it right.

The session is expired for real: a second client opens the same session (its id and password) and
closes it, as ZooKeeper's own tests do.
"""

from __future__ import annotations

import threading
import time

import pytest
from kazoo.client import KazooClient

from kafka_lite.testing.controller_harness import running_controller

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("controller_session_expiration")]


def _expire_session(connect_string: str, client: KazooClient) -> None:
    session_id, password = client.client_id
    other = KazooClient(hosts=connect_string, client_id=(session_id, password))
    other.start(timeout=10)
    other.stop()
    other.close()


def test_an_expired_controller_resigns_before_handling_what_its_watches_report(zookeeper):
    with running_controller(zookeeper.connect_string, name="expiry", brokers=(0, 1, 2)) as cluster:
        controller = cluster.controller
        controller.register_session_expiration_listener()
        cluster.create_topic("t", {0: [1, 2], 1: [2, 1]})
        led = {p: cluster.leader_and_isr("t", p) for p in (0, 1)}
        assert [led[p].leader for p in (0, 1)] == [1, 2]

        while controller.take_event() is not None:
            pass  # what the watches queued so far (the harness handed the controller those itself)

        emptied = threading.Event()
        cluster.zk.client.ChildrenWatch("/brokers/ids", lambda children: children or emptied.set())
        _expire_session(zookeeper.connect_string, cluster.zk.client)

        # Run the events in the order the controller's thread would, until the new session's
        # brokers watch has reported the emptied list (a probe watch of the test's own says when).
        ran: list[str] = []
        deadline = time.monotonic() + 20
        while True:
            event = controller.take_event(0.05)
            if event is not None:
                ran.append(event[0])
                event[1]()
            elif emptied.is_set():
                break
            else:
                assert time.monotonic() < deadline, (
                    f"the new session's watch did not report in 20 s; ran {ran}"
                )

        assert ran[:1] == ["SessionExpiration"], ran
        assert not controller.is_active()
        assert (controller.epoch, controller.context.live_brokers_by_id) == (0, {})
        assert cluster.zk.get_children("/brokers/ids") == [], "the session's registrations went with it"
        # Nothing written over the partitions: each keeps its leader, ISR and zkVersion.
        for p in (0, 1):
            assert cluster.leader_and_isr("t", p) == led[p], p
