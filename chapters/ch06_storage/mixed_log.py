"""A partition whose topic's ``message.format.version`` went 0.11.0 -> 0.10.0 -> 0.11.0, dumped.

No Kafka twin: the example of chapter 6's message-formats page, modelled on what Kafka's
``DumpLogSegments --deep-iteration`` prints for such a log. It drives a real ``Log`` on a
``MockTime``: a producer's v2 batches go to the topic at each of its formats, and one old producer
sends a v1 message set. ``python chapters/ch06_storage/mixed_log.py`` prints the dump;
``mixed_log_dump.txt`` beside it is that output, which the page shows, and
``tests/docs/test_mixed_log_example.py`` runs this file and holds the two equal.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from kafka_lite.common.record import CompressionType, MemoryRecords
from kafka_lite.common.time import MockTime
from kafka_lite.log.log import Log
from kafka_lite.log.log_config import LogConfig
from kafka_lite.tools.dump_log_segments import dump

NOW = 1_500_000_000_000


# --8<-- [start:mixed_log]
def write_mixed_log(directory: Path) -> Log:
    """Six appends to partition 0 of ``orders``, the topic's format changed twice between them."""
    time = MockTime(start_ms=NOW)
    log = Log(directory / "orders-0", LogConfig({"message.format.version": "0.11.0"}), time=time)

    def records(*values: bytes, magic: int = 2, codec=CompressionType.NONE) -> MemoryRecords:
        time.advance(1000)
        return MemoryRecords.with_records(
            [(time.milliseconds(), b"alice", v) for v in values], magic=magic, compression=codec
        )

    log.append(records(b"10", b"20"))  # v2, kept as sent
    # AlterConfigs sets message.format.version=0.10.0; the broker hands the log its new config
    log.config = LogConfig({"message.format.version": "0.10.0"})
    log.append(records(b"30", b"40"))  # v2 down to v1: one message per record
    log.append(records(b"50", b"60", codec=CompressionType.GZIP))  # one v1 wrapper
    log.config = LogConfig({"message.format.version": "0.11.0"})
    log.append(records(b"70", magic=1))  # an old producer's v1 message set, up to v2
    log.append(records(b"80", b"90"))  # v2 again
    return log


# --8<-- [end:mixed_log]


def dump_lines(directory: Path) -> list[str]:
    """``kafka-lite dump-log --deep-iteration`` of the log's one segment, the directory left out."""
    log = write_mixed_log(directory)
    (segment,) = log.log_segments()
    path = segment.log.path
    lines = [line.replace(str(path.parent) + "/", "") for line in dump(path, deep=True)]
    log.close()
    return lines


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        print("\n".join(dump_lines(Path(tmp))))
