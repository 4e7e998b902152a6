"""The factory for state stores: ``Stores.create(name).with_keys(...).with_values(...)...build()``.

Mirrors: org.apache.kafka.streams.state.Stores and the suppliers it builds,
         InMemoryKeyValueStoreSupplier, RocksDBKeyValueStoreSupplier, RocksDBWindowStoreSupplier
         (streams/src/main/java/org/apache/kafka/streams/state/, Kafka 0.11.0)
Book:    chapter 9, 9.1.4 (a topology names its stores by supplier; each task gets its own instance)
Differs: no LRU in-memory store (``max_entries``), no session stores in the factory (the DSL
         builds its in-memory session store directly). ``enable_caching()`` is offered after
         ``in_memory()`` too (0.10.1 has it on ``persistent()`` only), for the DSL's table stores,
         which kafka_lite keeps in memory.

What ``build()`` returns is a supplier, not a store: the topology holds it, and every task that runs
the processor calls ``get()`` for a store of its own, since a task owns one partition's state.
Each store is the same stack (see ``internals/``)::

    MeteredKeyValueStore             typed keys and values <-> bytes, with the serdes
      ChangeLoggingKeyValueBytesStore  each write also to <application.id>-<name>-changelog (if logged)
        InMemoryKeyValueStore | RocksDBStore   the bytes, ordered by key bytes

    RocksDBWindowStore               typed, (key, timestamp, seqnum) <-> binary key
      ChangeLoggingSegmentedBytesStore (if logged)
        RocksDBSegmentedBytesStore     segments of RocksDB by time

Logging is on unless ``disable_logging()``: without a changelog a store's state is lost with its
instance. ``enable_logging(config)`` passes topic configs for the changelog (e.g. ``retention.ms``).

``enable_caching()`` (KIP-63, 0.10.1) puts the thread's record cache in front, as 0.10.1's suppliers
do: the store below then holds bytes (``Serdes.ByteArray``) and the caching store does the serdes::

    CachingKeyValueStore           typed; puts wait in the ThreadCache until a flush or an eviction
      MeteredKeyValueStore           bytes
        ChangeLoggingKeyValueBytesStore (if logged)
          InMemoryKeyValueStore | RocksDBStore

    CachingWindowStore             typed, one cache entry per key and window
      RocksDBWindowStore             bytes
        ChangeLoggingSegmentedBytesStore (if logged)
          RocksDBSegmentedBytesStore
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kafka_lite.streams.processor.state_store import StateStore
from kafka_lite.streams.serialization import Serde, Serdes
from kafka_lite.streams.state.internals.caching_key_value_store import CachingKeyValueStore
from kafka_lite.streams.state.internals.caching_window_store import CachingWindowStore
from kafka_lite.streams.state.internals.change_logging_key_value_bytes_store import (
    ChangeLoggingKeyValueBytesStore,
)
from kafka_lite.streams.state.internals.change_logging_segmented_bytes_store import (
    ChangeLoggingSegmentedBytesStore,
)
from kafka_lite.streams.state.internals.in_memory_key_value_store import InMemoryKeyValueStore
from kafka_lite.streams.state.internals.metered_key_value_store import MeteredKeyValueStore
from kafka_lite.streams.state.internals.rocksdb_segmented_bytes_store import RocksDBSegmentedBytesStore
from kafka_lite.streams.state.internals.rocksdb_store import RocksDBStore
from kafka_lite.streams.state.internals.rocksdb_window_store import RocksDBWindowStore

DEFAULT_NUM_SEGMENTS = 3
DEFAULT_RETENTION_MS = 24 * 60 * 60 * 1000  # Windows.maintainMs's default: one day


@dataclass
class AbstractStoreSupplier:
    """What every supplier knows: the store's name, its serdes, and whether and how it is logged."""

    name: str
    key_serde: Serde
    value_serde: Serde
    logged: bool = True
    _log_config: dict[str, str] = field(default_factory=dict)
    enable_caching: bool = False

    def logging_enabled(self) -> bool:
        return self.logged

    def log_config(self) -> dict[str, str]:
        return self._log_config

    def _key_value_stack(self, inner: StateStore) -> StateStore:
        logged = ChangeLoggingKeyValueBytesStore(inner) if self.logged else inner
        if not self.enable_caching:
            return MeteredKeyValueStore(logged, self.key_serde, self.value_serde)
        # 0.10.1's cached stack: the typed caching store over a store of bytes.
        metered = MeteredKeyValueStore(logged, Serdes.ByteArray(), Serdes.ByteArray())
        return CachingKeyValueStore(metered, self.key_serde, self.value_serde)


class InMemoryKeyValueStoreSupplier(AbstractStoreSupplier):
    def get(self) -> StateStore:
        return self._key_value_stack(InMemoryKeyValueStore(self.name, logged=self.logged))


class RocksDBKeyValueStoreSupplier(AbstractStoreSupplier):
    def get(self) -> StateStore:
        return self._key_value_stack(RocksDBStore(self.name, logged=self.logged))


@dataclass
class RocksDBWindowStoreSupplier(AbstractStoreSupplier):
    window_size: int = 0
    retention_period: int = DEFAULT_RETENTION_MS
    num_segments: int = DEFAULT_NUM_SEGMENTS
    retain_duplicates: bool = False

    def get(self) -> StateStore:
        inner = RocksDBSegmentedBytesStore(
            self.name, self.retention_period, self.num_segments, logged=self.logged
        )
        logged = ChangeLoggingSegmentedBytesStore(inner) if self.logged else inner
        if not self.enable_caching:
            return RocksDBWindowStore(
                logged, self.key_serde, self.value_serde, self.retain_duplicates, self.window_size
            )
        # As 0.10.1: a cached window store never retains duplicates (one cache entry per window).
        window_bytes = RocksDBWindowStore(
            logged, Serdes.ByteArray(), Serdes.ByteArray(), False, self.window_size
        )
        return CachingWindowStore(window_bytes, self.key_serde, self.value_serde, self.window_size)


class _StoreFactory:
    """One builder for the whole chain: Kafka's StoreFactory, ValueFactory, KeyValueFactory,
    InMemoryKeyValueFactory and PersistentKeyValueFactory, each step returning the builder."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._key_serde: Serde | None = None
        self._value_serde: Serde | None = None
        self._persistent: bool | None = None
        self._windowed: dict | None = None
        self._logged = True
        self._log_config: dict[str, str] = {}
        self._caching = False

    def with_keys(self, key_serde: Serde) -> _StoreFactory:
        self._key_serde = key_serde
        return self

    def with_values(self, value_serde: Serde) -> _StoreFactory:
        self._value_serde = value_serde
        return self

    def in_memory(self) -> _StoreFactory:
        self._persistent = False
        return self

    def persistent(self) -> _StoreFactory:
        self._persistent = True
        return self

    def windowed(
        self,
        window_size: int,
        retention_period: int = DEFAULT_RETENTION_MS,
        num_segments: int = DEFAULT_NUM_SEGMENTS,
        retain_duplicates: bool = False,
    ) -> _StoreFactory:
        """A window store (persistent only, as in Kafka), its segments spanning ``retention_period``."""
        if not self._persistent:
            raise ValueError(f"store {self._name}: windowed() follows persistent(), as in Kafka's Stores")
        if num_segments < 2:
            raise ValueError(
                f"store {self._name}: a window store needs at least 2 segments, got {num_segments}"
            )
        self._windowed = dict(
            window_size=window_size,
            retention_period=retention_period,
            num_segments=num_segments,
            retain_duplicates=retain_duplicates,
        )
        return self

    def enable_logging(self, config: dict[str, str] | None = None) -> _StoreFactory:
        self._logged = True
        self._log_config = dict(config or {})
        return self

    def disable_logging(self) -> _StoreFactory:
        self._logged = False
        self._log_config = {}
        return self

    def enable_caching(self) -> _StoreFactory:
        """Put the thread's record cache in front of the store (KIP-63): see the module's docstring."""
        self._caching = True
        return self

    def build(self) -> AbstractStoreSupplier:
        if self._key_serde is None or self._value_serde is None or self._persistent is None:
            raise ValueError(
                f"store {self._name}: give with_keys(serde), with_values(serde) and in_memory() or "
                "persistent() before build()"
            )
        common = (
            self._name,
            self._key_serde,
            self._value_serde,
            self._logged,
            self._log_config,
            self._caching,
        )
        if self._windowed is not None:
            return RocksDBWindowStoreSupplier(*common, **self._windowed)
        if self._persistent:
            return RocksDBKeyValueStoreSupplier(*common)
        return InMemoryKeyValueStoreSupplier(*common)


class Stores:
    @staticmethod
    def create(name: str) -> _StoreFactory:
        return _StoreFactory(name)
