"""Helpers over a partition's replica lists (replicas, ISR, adding, removing).

Mirrors: org.apache.kafka.metadata.Replicas
         (metadata/src/main/java/org/apache/kafka/metadata/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: Kafka's work on ``int[]`` and convert to and from the records' ``List<Integer>``; here a
         registration holds tuples and a record lists, and every helper takes any sequence and
         returns a tuple. ``contains_all`` is Kafka's ``contains(List, int[])`` overload.

The order of ``replicas`` matters (the first is the preferred leader); the order of an ISR does not,
but is kept as written so that a record replays to the same bytes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

NONE: tuple[int, ...] = ()


def to_list(replicas: Iterable[int] | None) -> list[int] | None:
    return None if replicas is None else list(replicas)


def to_tuple(replicas: Iterable[int] | None) -> tuple[int, ...] | None:
    return None if replicas is None else tuple(replicas)


def validate(replicas: Sequence[int]) -> bool:
    """No negative broker ids and no duplicates."""
    return all(r >= 0 for r in replicas) and len(set(replicas)) == len(replicas)


def validate_isr(replicas: Sequence[int], isr: Sequence[int]) -> bool:
    """``isr`` is valid for ``replicas``: no negative ids, no duplicates, each one a replica."""
    return validate(isr) and set(isr) <= set(replicas)


def contains(replicas: Sequence[int], value: int) -> bool:
    return value in replicas


def contains_all(replicas: Iterable[int], values: Iterable[int]) -> bool:
    """Every one of ``values`` is among ``replicas`` (Kafka's ``contains(List<Integer>, int[])``)."""
    return set(values) <= set(replicas)


def copy_without(replicas: Sequence[int], values: int | Iterable[int]) -> tuple[int, ...]:
    """``replicas`` without ``values`` (one id or several), in their order."""
    removed = {values} if isinstance(values, int) else set(values)
    return tuple(r for r in replicas if r not in removed)


def copy_with(replicas: Sequence[int], value: int) -> tuple[int, ...]:
    """``replicas`` with ``value`` appended."""
    return (*replicas, value)


def to_set(replicas: Iterable[int]) -> set[int]:
    return set(replicas)
