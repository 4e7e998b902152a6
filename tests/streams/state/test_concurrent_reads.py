"""An Interactive Query reads a cached store from its own thread while the stream thread writes it.

Kafka makes this safe with ``synchronized`` methods: ``CachingKeyValueStore``'s writes, ``get`` and
``flush``, every ``NamedCache`` method, ``ThreadCache``'s look-up of a store's cache, and the
stores below (the in-memory store's reads and writes, ``RocksDBStore``'s). Here a reader thread
does what a query does (``get``, ``range``, ``all``) while this thread, the one that initialised the
store and so its stream thread, writes through a cache small enough that most puts evict (and so
flush), deletes keys and puts them back, and commits.

The two threads hand the interpreter over every microsecond (``sys.setswitchinterval``), so a read
that is not atomic against the writes is cut by one within a few dozen reads; ``READS`` is several
times that. What every read must show: keys in order, each once, and every key that exists
throughout (written and flushed before the reader starts, then only overwritten) present.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator

import pytest

from tests.streams.state.test_caching_stores import cached_key_value_store

pytestmark = pytest.mark.unit

READS = 200  # the reader's reads; the stream thread writes until the reader is done
STABLE = [f"s{i:03d}" for i in range(100)]  # exist throughout: put and flushed first, then overwritten
CHURN = [f"c{i:03d}" for i in range(100)]  # deleted and put back, round after round
CACHE_BYTES = 2_000  # a few dozen entries: most puts evict, and an evicted dirty entry flushes the cache
SWITCH_INTERVAL_S = 1e-6


@pytest.fixture
def frequent_thread_switches() -> Iterator[None]:
    """The interpreter hands the GIL over every microsecond instead of every 5 ms."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    yield
    sys.setswitchinterval(before)


def run_reader_while_writing(
    read: Callable[[int], None], write: Callable[[int], None]
) -> list[BaseException]:
    """``read(i)`` for i in range(READS) on a reader thread, ``write(round)`` here until it is done;
    what the reader raised (a failed check or an error of the store's own) is returned."""
    failures: list[BaseException] = []

    def reader() -> None:
        try:
            for i in range(READS):
                read(i)
        except BaseException as e:
            failures.append(e)

    thread = threading.Thread(target=reader, name="interactive-query")
    thread.start()
    rounds = 0
    while thread.is_alive():
        write(rounds)
        rounds += 1
    thread.join()
    return failures


def check_keys(keys: list[str], expected: list[str], what: str) -> None:
    """``keys`` strictly increasing and holding every one of ``expected``."""
    for i in range(1, len(keys)):
        assert keys[i - 1] < keys[i], (
            f"{what}: {keys[i]!r} follows {keys[i - 1]!r} (out of order or repeated) at position {i} "
            f"of {len(keys)}: ... {keys[max(0, i - 3) : i + 3]} ..."
        )
    missing = sorted(set(expected) - set(keys))
    assert not missing, f"{what}: {len(missing)} keys that exist throughout are missing, from {missing[0]!r}"


def test_a_query_thread_reads_a_cached_key_value_store_while_the_stream_thread_flushes_and_evicts(
    tmp_path, frequent_thread_switches
):
    store, context, _ = cached_key_value_store(tmp_path, cache_bytes=CACHE_BYTES)
    context.at(0, 0)
    for key in STABLE:
        store.put(key, "0")
    store.flush()

    def read(i: int) -> None:
        key = STABLE[i % len(STABLE)]
        assert store.get(key) is not None, f"get({key!r}) found nothing, though {key} exists throughout"
        with store.all() as entries:
            check_keys([k for k, _ in entries], STABLE, "all()")
        with store.range("s000", "s049") as entries:
            check_keys([k for k, _ in entries], STABLE[:50], "range('s000', 's049')")

    def write(round_: int) -> None:
        context.at(round_ + 1, round_)
        for stable, churn in zip(STABLE, CHURN):
            store.put(stable, str(round_))
            if round_ % 2:
                store.delete(churn)
            else:
                store.put(churn, str(round_))
        store.flush()  # the task's commit

    failures = run_reader_while_writing(read, write)
    assert not failures, f"the query thread failed: {failures[0]!r}"
