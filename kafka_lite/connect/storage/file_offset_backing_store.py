"""The standalone worker's offset store: the memory store, saved to a local file after every set.

Mirrors: org.apache.kafka.connect.storage.FileOffsetBackingStore
         (connect/runtime/src/main/java/org/apache/kafka/connect/storage/FileOffsetBackingStore.java, Kafka 0.10.1)
Book:    chapter 8, 8.3
Differs: the file is JSON (each key and value as its UTF-8 text), not a Java-serialized
         ``HashMap<ByteBuffer, ByteBuffer>``, so ``cat`` shows what a worker remembers; it is
         written to a temporary file and renamed over the old one, so a crash mid-write leaves
         the previous offsets, never half a file.

The file is read once, at ``start``, and rewritten whole on every ``set``: standalone mode has a
handful of source partitions, and the worker sets offsets once per ``offset.flush.interval.ms``.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

from kafka_lite.connect.errors import ConnectException
from kafka_lite.connect.storage.offset_backing_store import MemoryOffsetBackingStore

log = logging.getLogger(__name__)

OFFSET_STORAGE_FILE_FILENAME_CONFIG = "offset.storage.file.filename"


class FileOffsetBackingStore(MemoryOffsetBackingStore):
    def __init__(self) -> None:
        super().__init__()
        self.file: Path | None = None

    def configure(self, config: dict[str, Any]) -> None:
        super().configure(config)
        self.file = Path(config[OFFSET_STORAGE_FILE_FILENAME_CONFIG])

    def start(self) -> None:
        super().start()
        log.info("Starting FileOffsetBackingStore with file %s", self.file)
        self.load()

    def stop(self) -> None:
        super().stop()
        log.info("Stopped FileOffsetBackingStore")

    def load(self) -> None:
        try:
            text = self.file.read_text(encoding="utf-8")
        except FileNotFoundError:
            return  # a first run: no offsets yet, as Kafka ignores a missing file
        except OSError as e:
            raise ConnectException(f"Cannot read the offsets file {self.file}: {e}") from e
        try:
            stored = json.loads(text)
        except ValueError as e:
            raise ConnectException(f"The offsets file {self.file} is not JSON: {e}") from e
        self.data = {k.encode("utf-8", "surrogateescape"): v.encode("utf-8", "surrogateescape")
                     for k, v in stored.items()}  # fmt: skip

    def save(self) -> None:
        stored = {k.decode("utf-8", "surrogateescape"): v.decode("utf-8", "surrogateescape")
                  for k, v in self.data.items()}  # fmt: skip
        tmp = self.file.with_name(self.file.name + ".tmp")
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(stored, f, indent=1, ensure_ascii=False)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.file)  # atomic: a reader sees the old file or the new one
        except OSError as e:
            raise ConnectException(f"Cannot write the offsets file {self.file}: {e}") from e
