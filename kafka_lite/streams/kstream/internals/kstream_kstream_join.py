"""Joining two streams within a time window: each side keeps its recent records in a window store,
and each new record joins the other side's records that are close enough in time.

Mirrors: org.apache.kafka.streams.kstream.internals.KStreamJoinWindow and KStreamKStreamJoin
         (streams/src/main/java/.../kstream/internals/, Kafka 0.10.1)
Book:    chapter 9, 9.2.3 (joins)
Differs: the joiner is a Python callable ``joiner(value, other_value)`` (Kafka's ``ValueJoiner``).
         Each store is connected to the node that writes it and the join node that reads it
         (0.10.1 connects both to the two windowed nodes), as kafka_lite's context requires.

``KStreamImpl.join`` builds, for ``this.join(other, joiner, JoinWindows.of(...).before(b).after(a))``::

    this  -> KSTREAM-WINDOWED (put into this-store)  -> KSTREAM-JOINTHIS  (fetch other-store) -+
    other -> KSTREAM-WINDOWED (put into other-store) -> KSTREAM-JOINOTHER (fetch this-store)  -+-> KSTREAM-MERGE

A record of ``this`` at time t joins the records of ``other`` with timestamps in
``[t - before, t + after]``; a record of ``other`` at t joins ``this``'s in ``[t - after, t + before]``
(the same pairs, seen from the other side, which is why ``join_other`` swaps before and after and
the joiner's arguments). Each record looks up the other side's store and is then put into its own,
so whichever of a pair arrives second finds the first: the pair is joined once.

Outer joins emit ``joiner(value, None)`` when a record finds nothing on the other side, and
``left_join`` does so on ``this`` side only; its ``other`` side joins nothing, it only fills
``other``'s store. Kafka 0.10.1 emits these nulls at once, so a record whose partner arrives later
produces both the null result and, later, the joined one.

The stores keep duplicates (two records of one key at one time are both kept), and their retention
is the windows' ``until``: a record older than that cannot be joined. Both streams must be
co-partitioned, which the partition assignor checks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kafka_lite.streams.errors import TopologyBuilderException
from kafka_lite.streams.processor.processor import AbstractProcessor, Processor
from kafka_lite.streams.processor.processor_context import ProcessorContext


class KStreamJoinWindow:
    """Put each keyed record into the window store ``window_name`` and forward it."""

    def __init__(self, window_name: str, window_size_ms: int, retention_period_ms: int) -> None:
        self.window_name = window_name
        if window_size_ms > retention_period_ms:
            raise TopologyBuilderException(
                f"The retention period of the join window {window_name} must be no smaller than its window size."
            )

    def __call__(self) -> Processor:
        return _KStreamJoinWindowProcessor(self.window_name)


class _KStreamJoinWindowProcessor(AbstractProcessor):
    def __init__(self, window_name: str) -> None:
        super().__init__()
        self.window_name = window_name
        self.window: Any = None

    def init(self, context: ProcessorContext) -> None:
        super().init(context)
        self.window = context.get_state_store(self.window_name)

    def process(self, key: Any, value: Any) -> None:
        # A record with a null key can never be joined, so it is not kept.
        if key is not None:
            self.context().forward(key, value)
            self.window.put(key, value)


class KStreamKStreamJoin:
    """Join each record with the other side's records in ``[t - join_before_ms, t + join_after_ms]``
    of the window store ``other_window_name``; if ``outer`` and there are none, with None."""

    def __init__(
        self,
        other_window_name: str,
        join_before_ms: int,
        join_after_ms: int,
        joiner: Callable[[Any, Any], Any],
        outer: bool,
    ) -> None:
        self.other_window_name = other_window_name
        self.join_before_ms = join_before_ms
        self.join_after_ms = join_after_ms
        self.joiner = joiner
        self.outer = outer

    def __call__(self) -> Processor:
        return _KStreamKStreamJoinProcessor(self)


# --8<-- [start:process]
class _KStreamKStreamJoinProcessor(AbstractProcessor):
    def __init__(self, supplier: KStreamKStreamJoin) -> None:
        super().__init__()
        self.supplier = supplier
        self.other_window: Any = None

    def init(self, context: ProcessorContext) -> None:
        super().init(context)
        self.other_window = context.get_state_store(self.supplier.other_window_name)

    def process(self, key: Any, value: Any) -> None:
        if key is None:
            return
        supplier = self.supplier
        need_outer_join = supplier.outer
        time_from = max(0, self.context().timestamp() - supplier.join_before_ms)
        time_to = max(0, self.context().timestamp() + supplier.join_after_ms)
        with self.other_window.fetch(key, time_from, time_to) as found:
            for entry in found:
                need_outer_join = False
                self.context().forward(key, supplier.joiner(value, entry.value))
        if need_outer_join:
            self.context().forward(key, supplier.joiner(value, None))


# --8<-- [end:process]


def reverse_joiner(joiner: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """The joiner for the other side: it receives ``(other_value, value)`` and calls
    ``joiner(value, other_value)``, so the result reads the same from both sides."""
    return lambda value2, value1: joiner(value1, value2)
