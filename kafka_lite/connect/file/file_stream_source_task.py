"""The file source task: each new line of a file becomes a record; its offset is its end in the file.

Mirrors: org.apache.kafka.connect.file.FileStreamSourceTask
         (connect/file/src/main/java/org/apache/kafka/connect/file/FileStreamSourceTask.java, Kafka 0.10.1)
Book:    chapter 8, 8.3
Differs: the position counts bytes (Kafka's counts the characters a ``Reader`` returned, so a
         restart after a non-ASCII line skips to the wrong place); no standard input.

A record's source partition is ``{"filename": <file>}`` and its source offset
``{"position": <byte after its line>}``: the place to resume from. On its first ``poll`` the task
asks its context for the last committed offset and seeks there, so a restarted worker carries on
where the committed offsets say, and re-reads only lines whose offsets it had not committed.

A line is complete at ``\\n``, ``\\r\\n`` or ``\\r``; a ``\\r`` at the end of what has been read
waits for the next byte, which may be its ``\\n``. An unfinished last line waits in the buffer for
its end. When nothing new was read, ``poll`` waits up to a second (``stop`` cuts the wait short).
"""

from __future__ import annotations

import logging
import threading
from typing import IO

from kafka_lite.connect.data.schema import STRING_SCHEMA
from kafka_lite.connect.errors import ConnectException
from kafka_lite.connect.source.source_record import SourceRecord
from kafka_lite.connect.source.source_task import SourceTask

log = logging.getLogger(__name__)

FILENAME_FIELD = "filename"
POSITION_FIELD = "position"
VALUE_SCHEMA = STRING_SCHEMA
POLL_WAIT_S = 1.0  # Kafka's this.wait(1000) when nothing new was read
READ_SIZE = 1024


class FileStreamSourceTask(SourceTask):
    def __init__(self) -> None:
        super().__init__()
        self.filename: str | None = None
        self.topic: str | None = None
        self.stream: IO[bytes] | None = None
        self.buffer = bytearray()
        self.stream_offset: int | None = None
        self._stopped = threading.Event()  # Kafka waits on the task's monitor; stop() notifies it
        self._lock = threading.Lock()  # stop() closes the stream: never while poll() reads it

    def version(self) -> str:
        return "0.10.1.0"

    def start(self, props: dict[str, str]) -> None:
        self.filename = props.get("file")
        if not self.filename:
            raise ConnectException("FileStreamSourceTask config missing file setting")
        self.topic = props.get("topic")
        if self.topic is None:
            raise ConnectException("FileStreamSourceTask config missing topic setting")

    # --8<-- [start:poll]
    def poll(self) -> list[SourceRecord] | None:
        if self.stream is None and not self._open():
            return None
        records = []
        nread = 0
        while True:
            with self._lock:
                if self.stream.closed:
                    return None  # stopped
                chunk = self.stream.read(READ_SIZE)
            if not chunk:
                break
            nread += len(chunk)
            self.buffer += chunk
            while (line := self._extract_line()) is not None:
                records.append(SourceRecord(self._offset_key(), self._offset_value(), self.topic,
                                            None, None, None, VALUE_SCHEMA, line))  # fmt: skip
        if nread == 0:
            self._stopped.wait(POLL_WAIT_S)
        return records or None

    def _open(self) -> bool:
        """Open the file and seek to the committed position; False (after a wait) if it is missing."""
        try:
            self.stream = open(self.filename, "rb")  # held open across polls, closed by stop()
        except FileNotFoundError:
            log.warning("Couldn't find file %s for FileStreamSourceTask, sleeping to wait for it to be created",
                        self.filename)  # fmt: skip
            self._stopped.wait(POLL_WAIT_S)
            return False
        offset = self.context.offset_storage_reader().offset(self._offset_key())
        position = (offset or {}).get(POSITION_FIELD)
        if position is not None and (not isinstance(position, int) or isinstance(position, bool)):
            raise ConnectException("Offset position is the incorrect type")
        if position:
            log.debug("Found previous offset, trying to skip to file offset %d", position)
            self.stream.seek(position)
        self.stream_offset = position or 0
        return True

    # --8<-- [end:poll]
    def _extract_line(self) -> str | None:
        """The first complete line in the buffer, removed from it; the offset moves past its end."""
        for i, byte in enumerate(self.buffer):
            if byte == 0x0A:  # \n
                until, new_start = i, i + 1
                break
            if byte == 0x0D:  # \r: the end of a line, with or without a \n after it
                if i + 1 >= len(self.buffer):
                    return None  # wait for the next byte: it may be the \n of this \r
                until, new_start = i, (i + 2 if self.buffer[i + 1] == 0x0A else i + 1)
                break
        else:
            return None
        line = self.buffer[:until].decode("utf-8", "replace")
        del self.buffer[:new_start]
        self.stream_offset += new_start
        return line

    def stop(self) -> None:
        self._stopped.set()
        with self._lock:
            if self.stream is not None:
                self.stream.close()

    def _offset_key(self) -> dict[str, str]:
        return {FILENAME_FIELD: self.filename}

    def _offset_value(self) -> dict[str, int]:
        return {POSITION_FIELD: self.stream_offset}
