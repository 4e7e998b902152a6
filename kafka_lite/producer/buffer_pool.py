"""The producer's memory budget (``buffer.memory``): appends take from it, finished batches give back.

Mirrors: org.apache.kafka.clients.producer.internals.BufferPool
         (clients/src/main/java/.../producer/internals/BufferPool.java, Kafka 0.11.0)
Book:    chapter 2, 2.1.2 (the accumulator's memory, and why send blocks)
Differs: the pool hands out reservations of bytes, not ByteBuffers, and keeps no free list. Kafka
         pools ``batch.size`` buffers so the JVM's garbage collector never sees them; a batch's bytes
         here live in its MemoryRecordsBuilder's bytearray, which takes no buffer from outside, and
         Python frees and reuses that memory as soon as the batch is done. What matters for the
         reader is kept exactly: the total, the accounting, and the FIFO of blocked appenders.

Why a budget at all: the sender can fall behind (a slow broker, a partition without a leader). The
accumulator then grows until ``send`` must stop the application, or the process runs out of memory.
Kafka chooses to block ``send`` for up to ``max.block.ms`` and then fail it.

Waiting is first come, first served: each blocked ``allocate`` queues its own condition, and memory
given back wakes only the oldest waiter, which takes what it needs (possibly in several pieces, as
memory trickles back) before passing the wake-up on. A big request is therefore never starved by a
stream of small ones behind it.
"""

from __future__ import annotations

import threading
from collections import deque

from kafka_lite.common.errors import KafkaException, TimeoutException
from kafka_lite.common.time import SYSTEM, Time


class _Waiter:
    """One blocked ``allocate``: its condition (on the pool's lock) and whether it was signalled."""

    def __init__(self, lock: threading.Lock) -> None:
        self.condition = threading.Condition(lock)
        self.signalled = False

    def signal(self) -> None:
        self.signalled = True
        self.condition.notify()


class BufferPool:
    def __init__(self, memory: int, poolable_size: int, time: Time = SYSTEM) -> None:
        self.total_memory = memory
        self.poolable_size = poolable_size  # batch.size: Kafka pools buffers of this size
        self.time = time
        self._lock = threading.Lock()
        self._available_memory = memory
        self.waiters: deque[_Waiter] = deque()
        self.wait_time_ns = 0  # time appenders spent blocked (Kafka's bufferpool-wait-time sensor)

    def allocate(self, size: int, max_time_to_block_ms: int) -> int:
        """Reserve ``size`` bytes, blocking up to ``max_time_to_block_ms`` for memory; return ``size``.

        Raises ``TimeoutException`` when the memory does not come back in time.
        """
        if size > self.total_memory:
            raise KafkaException(
                f"Attempt to allocate {size} bytes, but there is a hard limit of {self.total_memory} on "
                "memory allocations (buffer.memory)."
            )
        with self._lock:
            try:
                # Enough on hand: take it at once.
                if self._available_memory >= size:
                    self._available_memory -= size
                    return size
                return self._allocate_blocking(size, max_time_to_block_ms)
            finally:
                # Memory may be left over for the next waiter in line: pass the wake-up on.
                if self._available_memory > 0 and self.waiters:
                    self.waiters[0].signal()

    def _allocate_blocking(self, size: int, max_time_to_block_ms: int) -> int:
        accumulated = 0
        waiter = _Waiter(self._lock)
        self.waiters.append(waiter)
        remaining_ns = max_time_to_block_ms * 1_000_000
        try:
            # Loop until enough memory is reserved; each round takes what is there.
            while accumulated < size:
                start_ns = self.time.nanoseconds()
                signalled = self.time.wait_for(
                    waiter.condition, lambda: waiter.signalled, max(remaining_ns // 1_000_000, 0)
                )
                waited_ns = max(0, self.time.nanoseconds() - start_ns)
                self.wait_time_ns += waited_ns
                if not signalled:
                    raise TimeoutException(
                        f"Failed to allocate memory within the configured max blocking time "
                        f"{max_time_to_block_ms} ms. The producer's buffer.memory ({self.total_memory} bytes) "
                        f"is used up by records not yet sent; max.block.ms ({max_time_to_block_ms}) passed "
                        "waiting for some to be freed."
                    )
                waiter.signalled = False
                remaining_ns -= waited_ns
                got = min(size - accumulated, self._available_memory)
                self._available_memory -= got
                accumulated += got
            accumulated = size  # reserved in full: nothing to give back below
            return size
        finally:
            if accumulated < size:
                self._available_memory += accumulated  # failed: do not lose what was reserved
            self.waiters.remove(waiter)

    def deallocate(self, size: int) -> None:
        """Give ``size`` bytes back, and wake the oldest blocked ``allocate``."""
        with self._lock:
            self._available_memory += size
            if self.waiters:
                self.waiters[0].signal()

    def available_memory(self) -> int:
        with self._lock:
            return self._available_memory

    def unallocated_memory(self) -> int:
        """Kafka's ``unallocatedMemory``; with no free list it is the same as ``available_memory``."""
        return self.available_memory()

    def queued(self) -> int:
        """How many appenders are blocked waiting for memory (the accumulator's "exhausted" signal)."""
        with self._lock:
            return len(self.waiters)
