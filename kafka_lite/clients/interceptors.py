"""What the producer's and the consumer's chains of interceptors share: made from
``interceptor.classes``, called in order, closed one by one.

Mirrors: the common part of org.apache.kafka.clients.producer.internals.ProducerInterceptors and
         org.apache.kafka.clients.consumer.internals.ConsumerInterceptors (Kafka 0.10.1; KIP-42),
         which each spell it out
Book:    chapter 2, 2.1.1 and chapter 4, 4.1.3 (the interceptors of ``send`` and of ``poll``: Kafka
         0.10.0 has them, KIP-42, and the book does not describe them)
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Self

from kafka_lite.common.config import configured_instances

log = logging.getLogger(__name__)


class Interceptors:
    """The configured interceptors of one client, in order. A subclass names its client
    (``CLIENT``) and the methods an interceptor must have (``METHODS``), and calls them, containing
    each one's failure."""

    CLIENT: ClassVar[str]  # "producer"
    METHODS: ClassVar[tuple[str, ...]]  # ("on_send", "on_acknowledgement")

    def __init__(self, interceptors: Sequence[Any]) -> None:
        self.interceptors = list(interceptors)

    @classmethod
    def from_config(cls, classes: Sequence[object], configs: Mapping[str, Any]) -> Self | None:
        """An instance of each class in ``interceptor.classes``, configured with the client's configs
        (Kafka's ``getConfiguredInstances``); ``None`` when there are none, as Kafka's clients keep
        it, so that a client without interceptors spends nothing on them."""
        if not classes:
            return None
        kind = f"{cls.CLIENT.capitalize()}Interceptor"
        return cls(configured_instances("interceptor.classes", classes, configs, kind, cls.METHODS))

    def close(self) -> None:
        """Close every interceptor that has a ``close``; a failure is logged, the others still close."""
        for interceptor in self.interceptors:
            close = getattr(interceptor, "close", None)
            if callable(close):
                try:
                    close()
                except Exception:
                    log.error("Failed to close %s interceptor ", self.CLIENT, exc_info=True)
