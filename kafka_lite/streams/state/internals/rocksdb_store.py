"""A key-value store on disk: a RocksDB database per store and task, bytes to bytes.

Mirrors: org.apache.kafka.streams.state.internals.RocksDBStore
         (streams/src/main/java/.../state/internals/RocksDBStore.java, Kafka 0.11.0)
Book:    chapter 9, 9.1.4
Differs: RocksDB through rocksdict (its Rust binding) in raw mode, where keys and values are bytes.
         Kafka's options are set where rocksdict exposes them; the info log level and a
         ``rocksdb.config.setter`` are not. ``close`` flushes first: with the write-ahead log off
         (as Kafka has it), a memtable not flushed is lost, and Kafka relies on its state manager
         to flush before every close.

The database lives in ``<state.dir>/<application.id>/<task>/rocksdb/<store>``. Kafka's settings, and
why: no compression (the CPU goes to processing; the changelog topic is what is kept long),
universal compaction (fewer rewrites of data that is mostly overwritten), a 16 MB write buffer, up to
three of them, a 50 MB block cache in 4 KB blocks, and no write-ahead log, because the changelog
topic already is one: after a crash the task replays it from the last checkpoint.

The store's reads, writes, ``flush`` and ``close`` hold its lock, and an iterator's steps and
``close`` hold the iterator's, as Kafka's are ``synchronized``: an Interactive Query reads from its
own thread, and a ``close`` must not free the database (or an iterator) under a read in progress.
``put_all`` writes one batch, which RocksDB applies atomically, and is not ``synchronized`` in Kafka
either.
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from rocksdict import (
    BlockBasedOptions,
    Cache,
    DBCompactionStyle,
    DBCompressionType,
    Options,
    Rdict,
    WriteBatch,
    WriteOptions,
)

from kafka_lite.streams.errors import InvalidStateStoreException, ProcessorStateException
from kafka_lite.streams.processor.state_store import StateStore
from kafka_lite.streams.state.key_value_store import KeyValue, KeyValueIterator, KeyValueStore

WRITE_BUFFER_SIZE = 16 * 1024 * 1024
BLOCK_CACHE_SIZE = 50 * 1024 * 1024
BLOCK_SIZE = 4096
MAX_WRITE_BUFFERS = 3
DB_FILE_DIR = "rocksdb"


def rocksdb_options() -> Options:
    """Kafka's RocksDB options (``RocksDBStore.openDB``), in rocksdict's raw (bytes) mode."""
    table_config = BlockBasedOptions()
    table_config.set_block_cache(Cache(BLOCK_CACHE_SIZE))
    table_config.set_block_size(BLOCK_SIZE)
    options = Options(raw_mode=True)
    options.set_block_based_table_factory(table_config)
    options.set_write_buffer_size(WRITE_BUFFER_SIZE)
    options.set_compression_type(DBCompressionType.none())
    options.set_compaction_style(DBCompactionStyle.universal())
    options.set_max_write_buffer_number(MAX_WRITE_BUFFERS)
    options.create_if_missing(True)
    options.set_error_if_exists(False)
    # RocksDB's advice for more parallelism; at least 2, as Kafka explains, since RocksDB takes one off.
    options.increase_parallelism(max(os.cpu_count() or 1, 2))
    return options


class RocksDBIterator(KeyValueIterator[bytes, bytes]):
    """Entries from a RocksDB iterator, up to ``to_key`` (inclusive) if given.

    RocksDB compares keys byte by byte, unsigned, which is the order of Python's ``bytes``; so the
    end of a range is a plain ``<=`` (Kafka's ``RocksDBRangeIterator`` with ``BYTES_LEXICO_COMPARATOR``).
    """

    def __init__(self, store: RocksDBStore, db: Rdict, from_key: bytes | None, to_key: bytes | None) -> None:
        self._store = store
        self._iter = db.iter()
        if from_key is None:
            self._iter.seek_to_first()
        else:
            self._iter.seek(from_key)
        self._to_key = to_key
        self._open = True
        self._lock = threading.Lock()  # Kafka's synchronized hasNext, next and close

    def __next__(self) -> KeyValue:
        with self._lock:
            if not self._open:
                raise InvalidStateStoreException(f"RocksDB store {self._store.name} has closed")
            if not self._iter.valid():
                raise StopIteration
            key = self._iter.key()
            if self._to_key is not None and key > self._to_key:
                raise StopIteration
            entry = KeyValue(key, self._iter.value())
            self._iter.next()
            return entry

    def close(self) -> None:
        with self._lock:
            if self._open:
                self._open = False
                self._iter = None
                self._store._open_iterators.discard(self)


class RocksDBStore(KeyValueStore[bytes, bytes]):
    def __init__(self, name: str, parent_dir: str = DB_FILE_DIR, logged: bool = False) -> None:
        self._name = name
        self._parent_dir = parent_dir
        # Passed to context.register: whether the task has a changelog to restore this store from.
        self._logged = logged
        self._open_iterators: set[RocksDBIterator] = set()
        self._db: Rdict | None = None
        self._open = False
        self.db_dir: Path | None = None
        self._lock = threading.RLock()  # Kafka's synchronized methods

    @property
    def name(self) -> str:
        return self._name

    def open_db(self, context: Any) -> None:
        """Open (or create) the database in ``<task dir>/<parent dir>/<name>``."""
        self.db_dir = Path(context.state_dir()) / self._parent_dir / self._name
        try:
            self.db_dir.parent.mkdir(parents=True, exist_ok=True)
            self._db = Rdict(str(self.db_dir), rocksdb_options())
        except Exception as e:
            raise ProcessorStateException(
                f"Error opening store {self._name} at location {self.db_dir}: {e}"
            ) from e
        write_options = WriteOptions()
        write_options.disable_wal = True
        self._db.set_write_options(write_options)
        self._open = True

    def init(self, context: Any, root: StateStore) -> None:
        self.open_db(context)
        context.register(root, self._logged, self._put_internal)

    def persistent(self) -> bool:
        return True

    def is_open(self) -> bool:
        return self._open

    def _validate_store_open(self) -> Rdict:
        if not self._open:
            raise InvalidStateStoreException(f"Store {self._name} is currently closed")
        return self._db

    def get(self, key: bytes) -> bytes | None:
        with self._lock:
            return self._validate_store_open().get(key)

    def put(self, key: bytes, value: bytes | None) -> None:
        with self._lock:
            self._validate_store_open()
            self._put_internal(key, value)

    def _put_internal(self, key: bytes, value: bytes | None) -> None:
        """A put, or a delete when ``value`` is None; also the restore callback."""
        if value is None:
            self._db.delete(key)
        else:
            self._db.put(key, value)

    def put_if_absent(self, key: bytes, value: bytes) -> bytes | None:
        with self._lock:
            return super().put_if_absent(key, value)

    def put_all(self, entries: Iterable[KeyValue | tuple[bytes, bytes]]) -> None:
        """All the entries in one write batch: RocksDB applies it whole."""
        db = self._validate_store_open()
        batch = WriteBatch(raw_mode=True)
        for key, value in entries:
            if value is None:
                batch.delete(key)
            else:
                batch.put(key, value)
        db.write(batch)

    def delete(self, key: bytes) -> bytes | None:
        with self._lock:
            value = self.get(key)
            self.put(key, None)
            return value

    def range(self, from_key: bytes, to_key: bytes) -> KeyValueIterator[bytes, bytes]:
        with self._lock:
            return self._new_iterator(from_key, to_key)

    def all(self) -> KeyValueIterator[bytes, bytes]:
        with self._lock:
            return self._new_iterator(None, None)

    def _new_iterator(self, from_key: bytes | None, to_key: bytes | None) -> RocksDBIterator:
        iterator = RocksDBIterator(self, self._validate_store_open(), from_key, to_key)
        self._open_iterators.add(iterator)
        return iterator

    def approximate_num_entries(self) -> int:
        """RocksDB's estimate (``rocksdb.estimate-num-keys``): an exact count would need a full scan."""
        value = self._validate_store_open().property_int_value("rocksdb.estimate-num-keys")
        return value or 0

    def flush(self) -> None:
        with self._lock:
            if self._db is not None and self._open:
                self._db.flush(True)

    def close(self) -> None:
        with self._lock:
            if not self._open:
                return
            self._open = False
            # An open iterator holds the database; close them first, as Kafka's closeOpenIterators does.
            for iterator in list(self._open_iterators):
                iterator.close()
            self._db.flush(True)
            self._db.close()
            self._db = None

    def destroy(self) -> None:
        """Delete the database's directory (a dropped window segment)."""
        if self.db_dir is not None:
            shutil.rmtree(self.db_dir, ignore_errors=True)
