"""ControllerPurgatory, as Kafka 3.3's ControllerPurgatoryTest."""

import pytest

from kafka_lite.metadata.controller.controller_purgatory import ControllerPurgatory

pytestmark = pytest.mark.unit


class SampleDeferredEvent:
    def __init__(self):
        self.done = False
        self.exception = None

    def complete(self, exception):
        self.done = True
        self.exception = exception


def test_complete_up_to_releases_events_at_or_below_the_offset_in_order():
    purgatory = ControllerPurgatory()
    e1, e2, e3 = SampleDeferredEvent(), SampleDeferredEvent(), SampleDeferredEvent()
    purgatory.add(1, e1)
    assert purgatory.highest_pending_offset() == 1
    purgatory.add(1, e2)
    purgatory.add(3, e3)
    assert purgatory.highest_pending_offset() == 3
    purgatory.complete_up_to(2)
    assert (e1.done, e2.done, e3.done) == (True, True, False)
    assert e1.exception is None
    purgatory.complete_up_to(3)
    assert e3.done
    assert purgatory.highest_pending_offset() is None


def test_fail_all_fails_every_event():
    purgatory = ControllerPurgatory()
    e1, e2 = SampleDeferredEvent(), SampleDeferredEvent()
    purgatory.add(1, e1)
    purgatory.add(3, e2)
    error = RuntimeError("resigned")
    purgatory.fail_all(error)
    assert e1.exception is error and e2.exception is error
    assert len(purgatory) == 0


def test_an_offset_lower_than_the_highest_is_refused():
    purgatory = ControllerPurgatory()
    purgatory.add(5, SampleDeferredEvent())
    with pytest.raises(RuntimeError, match="offset 5"):
        purgatory.add(4, SampleDeferredEvent())
