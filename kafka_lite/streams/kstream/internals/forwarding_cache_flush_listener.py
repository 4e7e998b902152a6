"""What a DSL processor gives its cached store: forward each flushed entry as ``Change(new, old)``.

Mirrors: org.apache.kafka.streams.kstream.internals.ForwardingCacheFlushListener
         (streams/src/main/java/.../kstream/internals/ForwardingCacheFlushListener.java, Kafka 0.10.1)
Book:    chapter 9, 9.1.4 (the record cache), 9.2.2 (aggregation)
Differs: the listener remembers the node of the processor that made it and forwards from there, as
         0.11's does; 0.10.1's state manager instead makes the store's first processor current
         before flushing each store. Either way the flushed entries go to that processor's children.

The old value is the one the store under the cache held, and is sent only when a downstream
operator asked for old values (``enable_sending_old_values``), as the processors did before the
cache. Between two flushes a key's old value is the one of the last flush, not of the last update:
downstream sees one change per key per flush, from the value it saw last to the value now.
"""

from __future__ import annotations

from typing import Any

from kafka_lite.streams.kstream.internals.change import Change


class ForwardingCacheFlushListener:
    def __init__(self, context: Any, send_old_values: bool) -> None:
        self.context = context
        self.send_old_values = send_old_values
        self.my_node = context.current_node  # set by the task while it inits the processor

    def __call__(self, key: Any, new_value: Any, old_value: Any) -> None:
        previous = self.context.current_node
        self.context.set_current_node(self.my_node)
        try:
            self.context.forward(key, Change(new_value, old_value if self.send_old_values else None))
        finally:
            self.context.set_current_node(previous)
