"""``kafka-lite dump-log [--deep] [--print-data-log] [--cluster-metadata-decoder] FILE...``: Kafka's
``kafka-dump-log.sh``.

No Kafka twin for this module itself: the command-line face of
``kafka_lite.tools.dump_log_segments``, flag for flag with Kafka's tool where one exists
(``--files`` may be omitted; ``--deep-iteration`` is also spelled ``--deep``). The KRaft metadata
log and its snapshots dump as Kafka 3.3's tool dumps them::

    kafka-lite dump-log --cluster-metadata-decoder data/__cluster_metadata-0/00000000000000000000.log
    kafka-lite dump-log --cluster-metadata-decoder \
        data/__cluster_metadata-0/00000000000000000120-0000000003.checkpoint
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from kafka_lite.cli import CliError
from kafka_lite.tools.dump_log_segments import DumpError, dump


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "dump-log",
        help="print segment files (.log, .index, .timeindex, .txnindex) and Raft snapshots (.checkpoint) and check them",
    )
    parser.add_argument(
        "files",
        nargs="*",
        type=Path,
        metavar="FILE",
        help="segment (.log), index (.index, .timeindex, .txnindex) or snapshot (.checkpoint) files",
    )
    parser.add_argument(
        "--files", dest="more_files", nargs="+", type=Path, default=[], help="as Kafka's tool"
    )
    parser.add_argument(
        "--deep", "--deep-iteration", dest="deep", action="store_true", help="also print every record"
    )
    parser.add_argument(
        "--print-data-log", action="store_true", help="print keys and values (implies --deep)"
    )
    parser.add_argument(
        "--cluster-metadata-decoder",
        action="store_true",
        help="decode values as KRaft metadata records (__cluster_metadata, Kafka 3.3; implies --print-data-log)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, console: Console) -> int:
    files = list(args.files) + list(args.more_files)
    if not files:
        raise CliError("no files given: kafka-lite dump-log [--deep] FILE...", exit_code=2)
    for path in files:
        try:
            for line in dump(
                path,
                deep=args.deep,
                print_data=args.print_data_log,
                cluster_metadata=args.cluster_metadata_decoder,
            ):
                console.print(line, highlight=False, markup=False, soft_wrap=True)
        except DumpError as e:
            raise CliError(str(e)) from None
    return 0
