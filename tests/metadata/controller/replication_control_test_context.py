"""What the cluster- and replication-control tests share: Kafka's MockRandom, and a context that
holds the managers, runs an operation, replays its records as the quorum controller does, and
registers, unfences and fences brokers (Kafka's ReplicationControlTestContext).
"""

from __future__ import annotations

import random

_MASK64 = (1 << 64) - 1


class MockRandom(random.Random):
    """Kafka's MockRandom (a fixed linear congruential generator), with ``java.util.Random``'s
    ``nextInt(bound)`` as ``randrange`` and ``Collections.shuffle`` as ``shuffle``, so a placer
    driven by it places exactly as Kafka's tests expect."""

    def __init__(self) -> None:
        super().__init__(0)
        self.state = 17

    def _next(self, bits: int) -> int:
        self.state = (self.state * 2862933555777941757 + 3037000493) & _MASK64
        value = self.state >> (64 - bits)
        return value - (1 << 32) if bits == 32 and value >= 1 << 31 else value

    def randrange(self, bound: int) -> int:  # type: ignore[override]
        r = self._next(31)
        m = bound - 1
        if bound & m == 0:
            return (bound * r) >> 31
        u = r
        r = u % bound
        while u - r + m >= 1 << 31:  # Java's int overflow test ``u - r + m < 0``
            u = self._next(31)
            r = u % bound
        return r

    def shuffle(self, x: list) -> None:  # type: ignore[override]
        for i in range(len(x), 1, -1):
            j = self.randrange(i)
            x[i - 1], x[j] = x[j], x[i - 1]
