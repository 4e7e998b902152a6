"""The record-at-a-time KStream operators: each a processor supplier with a function in it.

Mirrors: org.apache.kafka.streams.kstream.internals.KStreamFilter, KStreamMap, KStreamMapValues,
         KStreamFlatMap, KStreamFlatMapValues, KStreamBranch, KStreamPassThrough, KStreamForeach
         (streams/src/main/java/org/apache/kafka/streams/kstream/internals/, Kafka 0.10.1)
Book:    chapter 9, 9.2.2 (KStream's stateless operations)
Differs: one module for eight classes of a few lines each, so they read side by side. The
         functions are Python callables standing for Kafka's functional interfaces (``Predicate``,
         ``KeyValueMapper``, ``ValueMapper``, ``ForeachAction``); a mapper that returns a pair
         returns a ``KeyValue`` (any 2-tuple unpacks the same way).

Each supplier is what ``KStreamImpl`` hands to ``TopologyBuilder.add_processor``: calling it
(Kafka's ``get()``) makes a new processor for each task, sharing the supplier's function. None of
them keeps state, so none needs a store: a record in gives zero, one or many records out, forwarded
to the node's children in the order made.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from kafka_lite.streams.processor.processor import AbstractProcessor, Processor


class _FunctionProcessor(AbstractProcessor):
    """A processor whose ``process`` is its supplier's ``apply`` (Kafka's inner processor classes)."""

    def __init__(self, apply: Callable[[AbstractProcessor, Any, Any], None]) -> None:
        super().__init__()
        self._apply = apply

    def process(self, key: Any, value: Any) -> None:
        self._apply(self, key, value)


class KStreamFilter:
    """Forward a record if ``predicate(key, value)`` holds (if it does not, with ``filter_not``)."""

    def __init__(self, predicate: Callable[[Any, Any], bool], filter_not: bool) -> None:
        self.predicate = predicate
        self.filter_not = filter_not

    def __call__(self) -> Processor:
        return _FunctionProcessor(self._process)

    def _process(self, processor: AbstractProcessor, key: Any, value: Any) -> None:
        if self.filter_not ^ bool(self.predicate(key, value)):
            processor.context().forward(key, value)


class KStreamMap:
    """Forward ``mapper(key, value)``, a new key and a new value."""

    def __init__(self, mapper: Callable[[Any, Any], tuple[Any, Any]]) -> None:
        self.mapper = mapper

    def __call__(self) -> Processor:
        return _FunctionProcessor(self._process)

    def _process(self, processor: AbstractProcessor, key: Any, value: Any) -> None:
        new_key, new_value = self.mapper(key, value)
        processor.context().forward(new_key, new_value)


class KStreamMapValues:
    """Forward the key with ``mapper(value)``: the key cannot change, so no repartition follows."""

    def __init__(self, mapper: Callable[[Any], Any]) -> None:
        self.mapper = mapper

    def __call__(self) -> Processor:
        return _FunctionProcessor(self._process)

    def _process(self, processor: AbstractProcessor, key: Any, value: Any) -> None:
        processor.context().forward(key, self.mapper(value))


class KStreamFlatMap:
    """Forward each pair of ``mapper(key, value)``, zero or more records with new keys."""

    def __init__(self, mapper: Callable[[Any, Any], Iterable[tuple[Any, Any]]]) -> None:
        self.mapper = mapper

    def __call__(self) -> Processor:
        return _FunctionProcessor(self._process)

    def _process(self, processor: AbstractProcessor, key: Any, value: Any) -> None:
        for new_key, new_value in self.mapper(key, value):
            processor.context().forward(new_key, new_value)


class KStreamFlatMapValues:
    """Forward the key with each value of ``mapper(value)``."""

    def __init__(self, mapper: Callable[[Any], Iterable[Any]]) -> None:
        self.mapper = mapper

    def __call__(self) -> Processor:
        return _FunctionProcessor(self._process)

    def _process(self, processor: AbstractProcessor, key: Any, value: Any) -> None:
        for new_value in self.mapper(value):
            processor.context().forward(key, new_value)


class KStreamBranch:
    """Forward a record to the child of the *first* predicate that holds, and to no other; a record
    no predicate takes is dropped. The children are added in predicate order, so child ``i`` is
    branch ``i``."""

    def __init__(self, predicates: tuple[Callable[[Any, Any], bool], ...]) -> None:
        self.predicates = predicates

    def __call__(self) -> Processor:
        return _FunctionProcessor(self._process)

    def _process(self, processor: AbstractProcessor, key: Any, value: Any) -> None:
        for i, predicate in enumerate(self.predicates):
            if predicate(key, value):
                processor.context().forward(key, value, i)
                break


class KStreamPassThrough:
    """Forward every record unchanged: each branch's own node, so each branch has a name to grow from."""

    def __call__(self) -> Processor:
        return _FunctionProcessor(_forward)


class KStreamForeach:
    """Call ``action(key, value)`` for every record; a terminal node, it forwards nothing."""

    def __init__(self, action: Callable[[Any, Any], None]) -> None:
        self.action = action

    def __call__(self) -> Processor:
        return _FunctionProcessor(self._process)

    def _process(self, processor: AbstractProcessor, key: Any, value: Any) -> None:
        self.action(key, value)


def _forward(processor: AbstractProcessor, key: Any, value: Any) -> None:
    processor.context().forward(key, value)
