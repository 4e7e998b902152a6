"""Windows: how a windowed aggregation or a stream-stream join cuts time into pieces.

Mirrors: org.apache.kafka.streams.kstream.Windows, TimeWindows, JoinWindows, Window, Windowed and
         internals.TimeWindow, internals.UnlimitedWindow
         (streams/src/main/java/org/apache/kafka/streams/kstream/, Kafka 0.10.1)
Book:    chapter 9, 9.2.4 (windows)
Differs: ``SessionWindows`` and ``SessionWindow`` are 0.10.2's (sessions begin there), and
         ``SessionWindows.with_`` is Kafka's ``with``, a Python keyword. ``Windowed`` and the windows are frozen dataclasses, so
         ``until`` returns a new object where Kafka's mutates and returns ``this``.

A window is ``[start, end)``. ``TimeWindows.of(size)`` is tumbling: windows of ``size`` ms, each
starting where the last ends, so a record falls in exactly one. ``advance_by(advance)`` makes them
hopping: a new window every ``advance`` ms, so a record falls in ``size / advance`` of them.
``windows_for(timestamp)`` lists them, keyed by start: the first start is the earliest multiple of
``advance`` whose window still reaches ``timestamp``.

``until(ms)`` is how long a window is kept (``maintain_ms``, one day by default). It becomes the
retention of the window store's segments: once a window's segment is dropped, a late record for it
finds no aggregate and its update is lost, which is what bounds a windowed store's size.

``SessionWindows.with_(gap)`` has no fixed windows either: a key's session is its records until a
silence longer than ``gap``, so a record within ``gap`` of two sessions merges them into one.

``JoinWindows`` is not cut into windows at all: a record of one stream joins the other's records
from ``before`` ms earlier to ``after`` ms later (``of(ms)`` sets both).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

DEFAULT_NUM_SEGMENTS = 3
DEFAULT_MAINTAIN_DURATION = 24 * 60 * 60 * 1000  # one day


@dataclass(frozen=True)
class Window:
    """``[start, end)``, in ms."""

    start: int
    end: int

    def overlap(self, other: Window) -> bool:
        return self.start < other.end and other.start < self.end


class TimeWindow(Window):
    """A window of ``TimeWindows``: it overlaps only another ``TimeWindow``."""

    def overlap(self, other: Window) -> bool:
        return type(other) is TimeWindow and super().overlap(other)


class SessionWindow(Window):
    """``[first record, last record]`` of a session; both ends inclusive."""

    def overlap(self, other: Window) -> bool:
        return type(other) is SessionWindow and not (self.end < other.start or other.end < self.start)


class UnlimitedWindow(Window):
    """A window with a start and no end: what ``WindowedDeserializer`` reads, since the bytes hold
    only the start."""

    def __init__(self, start: int) -> None:
        super().__init__(start, 2**63 - 1)


@dataclass(frozen=True)
class Windowed:
    """A key of a windowed table: the record's key and its window."""

    key: Any
    window: Window

    def __str__(self) -> str:
        return f"[{self.key}@{self.window.start}]"


@dataclass(frozen=True)
class Windows:
    """What every kind of window has: how long it is kept and in how many store segments."""

    maintain_duration_ms: int = DEFAULT_MAINTAIN_DURATION
    segments: int = DEFAULT_NUM_SEGMENTS

    def until(self, duration_ms: int) -> Windows:
        """Keep each window ``duration_ms`` ms (the window store's retention)."""
        return dataclasses.replace(self, maintain_duration_ms=duration_ms)

    def maintain_ms(self) -> int:
        return self.maintain_duration_ms

    def windows_for(self, timestamp: int) -> dict[int, Window]:
        raise NotImplementedError

    def size(self) -> int:
        raise NotImplementedError


@dataclass(frozen=True)
class TimeWindows(Windows):
    """Fixed-size windows, ``advance`` ms apart: tumbling if ``advance == size``, else hopping."""

    window_size: int = 0
    advance: int = 0

    def __post_init__(self) -> None:
        if self.window_size <= 0:
            raise ValueError(f"window size must be > 0 (you provided {self.window_size})")
        if not 0 < self.advance <= self.window_size:
            raise ValueError(
                f"advance interval ({self.advance}) must lie within interval (0, {self.window_size}]"
            )

    @staticmethod
    def of(size: int) -> TimeWindows:
        """Tumbling windows of ``size`` ms."""
        return TimeWindows(window_size=size, advance=size)

    def advance_by(self, interval: int) -> TimeWindows:
        """Hopping windows: a new one every ``interval`` ms."""
        return dataclasses.replace(self, advance=interval)

    # --8<-- [start:windows_for]
    def windows_for(self, timestamp: int) -> dict[int, Window]:
        window_start = (max(0, timestamp - self.window_size + self.advance) // self.advance) * self.advance
        windows: dict[int, Window] = {}
        while window_start <= timestamp:
            windows[window_start] = TimeWindow(window_start, window_start + self.window_size)
            window_start += self.advance
        return windows

    # --8<-- [end:windows_for]

    def size(self) -> int:
        return self.window_size


@dataclass(frozen=True)
class JoinWindows(Windows):
    """A record joins the other stream's records from ``before`` ms earlier to ``after`` ms later."""

    before_ms: int = 0
    after_ms: int = 0

    def __post_init__(self) -> None:
        if self.before_ms + self.after_ms < 0:
            raise ValueError("Window interval (ie, before+after) must not be negative")

    @staticmethod
    def of(time_difference: int) -> JoinWindows:
        return JoinWindows(before_ms=time_difference, after_ms=time_difference)

    def before(self, time_difference: int) -> JoinWindows:
        return dataclasses.replace(self, before_ms=time_difference)

    def after(self, time_difference: int) -> JoinWindows:
        return dataclasses.replace(self, after_ms=time_difference)

    def windows_for(self, timestamp: int) -> dict[int, Window]:
        raise NotImplementedError("windowsFor() is not supported in JoinWindows")

    def size(self) -> int:
        return self.before_ms + self.after_ms


@dataclass(frozen=True)
class SessionWindows:
    """Sessions of activity separated by more than ``inactivity_gap`` ms of silence."""

    inactivity_gap: int
    maintain_duration_ms: int = DEFAULT_MAINTAIN_DURATION

    def __post_init__(self) -> None:
        if self.inactivity_gap < 1:
            raise ValueError("Gap time (inactivityGapMs) cannot be zero or negative.")

    @staticmethod
    def with_(inactivity_gap_ms: int) -> SessionWindows:
        return SessionWindows(inactivity_gap_ms)

    def until(self, duration_ms: int) -> SessionWindows:
        if duration_ms < self.inactivity_gap:
            raise ValueError("Window retention time (durationMs) cannot be smaller than window gap.")
        return dataclasses.replace(self, maintain_duration_ms=duration_ms)

    def maintain_ms(self) -> int:
        return max(self.maintain_duration_ms, self.inactivity_gap)
