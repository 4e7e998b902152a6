"""A run's requests as a timeline: what a fault proxy's tap recorded, one row per request and per
answer, in the order they crossed the network, each said in a few words.

No Kafka twin: the sequence diagrams of Jepsen's write-ups, drawn from a capture of the wire, as a
packet capture read with Wireshark's Kafka dissector would give them. Beyond the book; chapter 10's
hanging transaction and aborted read are drawn from the reproductions' own captures
(``kafka_lite.diagrams.transaction_timeline``).

``timeline(exchanges, parties)`` turns a tap's exchanges into rows ``{"t", "from", "to", "kind",
"text"}`` (``t`` in seconds from the first request; ``kind`` request, held, answer or error),
naming each end by ``parties`` (a node id, or ``CLIENTS``, to the name the picture shows). A
request a hold kept back has two rows, held: when it was sent, and when it went on. ``write_timeline`` and ``read_timeline`` keep one
as JSON.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from kafka_lite.common.errors import Errors
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.requests import parse_request, parse_response
from kafka_lite.common.record import MemoryRecords
from kafka_lite.jepsen.fault_proxy import Exchange

HELD_S = 0.5  # a request that went on this long after it came in was held, not merely queued


def timeline(exchanges: Iterable[Exchange], parties: Mapping[int | str, str]) -> list[dict[str, Any]]:
    """The rows of ``exchanges`` between ``parties`` (others left out), in time order."""
    exchanges = [e for e in exchanges if e.source in parties and e.target in parties]
    if not exchanges:
        return []
    start = min(e.received_ns for e in exchanges)
    rows: list[tuple[int, int, dict[str, Any]]] = []

    def row(at_ns: int, sender, receiver, kind: str, text: str) -> None:
        rows.append((at_ns, len(rows), {"t": round((at_ns - start) / 1e9, 3), "from": parties[sender],
                                        "to": parties[receiver], "kind": kind, "text": text}))  # fmt: skip

    for e in exchanges:
        header, body = parse_request(e.request)
        api = ApiKeys(header.api_key)
        asked = describe_request(api, body)
        if (e.forwarded_ns - e.received_ns) / 1e9 >= HELD_S:
            row(e.received_ns, e.source, e.target, "held", f"{asked} (held in the network)")
            row(e.forwarded_ns, e.source, e.target, "held", f"{asked}, arriving late")
        else:
            row(e.received_ns, e.source, e.target, "request", asked)
        if e.answer is not None:
            _, answer = parse_response(api, header.api_version, e.answer)
            kind = "answer" if all(code == 0 for code in _error_codes(answer)) else "error"
            row(e.answered_ns, e.target, e.source, kind, describe_answer(api, answer))
    return [r for _, _, r in sorted(rows, key=lambda r: (r[0], r[1]))]


def describe_request(api: ApiKeys, body: dict[str, Any]) -> str:
    """A request of the transaction protocol in a few words."""
    if api is ApiKeys.PRODUCE:
        parts = []
        for topic in body["topic_data"]:
            for p in topic["data"]:
                for batch in MemoryRecords(p["record_set"] or b"").batches():
                    values = ", ".join(_text(r.value) for r in batch)
                    parts.append(
                        f"{topic['topic']}-{p['partition']} [{values}], epoch {batch.producer_epoch}"
                    )
        return "Produce " + "; ".join(parts)
    if api is ApiKeys.END_TXN:
        result = "commit" if body["transaction_result"] else "abort"
        return f"EndTxn({result}), epoch {body['producer_epoch']}"
    if api is ApiKeys.ADD_PARTITIONS_TO_TXN:
        if "transactions" in body:  # v4: a leader asking on a producer's behalf
            (txn,) = body["transactions"]
            what = "verify" if txn["verify_only"] else "add"
            return f"AddPartitionsToTxn({what}) {_partitions(txn['topics'])}, epoch {txn['producer_epoch']}"
        return f"AddPartitionsToTxn {_partitions(body['topics'])}, epoch {body['producer_epoch']}"
    if api is ApiKeys.WRITE_TXN_MARKERS:
        markers = []
        for m in body["transaction_markers"]:
            result = "COMMIT" if m["transaction_result"] else "ABORT"
            markers.append(f"{result} marker {_partitions(m['topics'])}, epoch {m['producer_epoch']}")
        return "WriteTxnMarkers " + "; ".join(markers)
    if api is ApiKeys.INIT_PRODUCER_ID:
        return "InitProducerId"
    return api.name


def describe_answer(api: ApiKeys, body: dict[str, Any]) -> str:
    """An answer of the transaction protocol in a few words: its errors, and what it gives."""
    if api is ApiKeys.PRODUCE:
        parts = []
        for topic in body["responses"]:
            for p in topic["partition_responses"]:
                error = Errors.for_code(p["error_code"])
                parts.append(f"offset {p['base_offset']}" if error is Errors.NONE else error.name)
        return "Produce: " + "; ".join(parts)
    if api is ApiKeys.END_TXN:
        error = Errors.for_code(body["error_code"])
        bumped = body.get("producer_epoch", -1)
        return f"EndTxn: {error.name}" + (f", next epoch {bumped}" if bumped >= 0 else "")
    if api is ApiKeys.INIT_PRODUCER_ID:
        return f"InitProducerId: epoch {body['producer_epoch']}"
    errors = {Errors.for_code(code).name for code in _error_codes(body)}
    if len(errors) > 1:  # a top-level NONE beside a partition's error says nothing more
        errors.discard("NONE")
    return f"{_name(api)}: {', '.join(sorted(errors)) or 'NONE'}"


def write_timeline(path: Path, title: str, parties: list[str], rows: list[dict[str, Any]]) -> None:
    path.write_text(json.dumps({"title": title, "parties": parties, "rows": rows}, indent=1) + "\n")


def read_timeline(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


def _name(api: ApiKeys) -> str:
    return "".join(part.capitalize() for part in api.name.split("_"))


def _partitions(topics: list[dict[str, Any]]) -> str:
    return ", ".join(f"{t['topic']}-{p}" for t in topics for p in t["partitions"])


def _error_codes(value: Any) -> Iterable[int]:
    if isinstance(value, dict):
        for k, v in value.items():
            if k == "error_code":
                yield v
            else:
                yield from _error_codes(v)
    elif isinstance(value, list):
        for v in value:
            yield from _error_codes(v)


def _text(value: bytes | None) -> str:
    if value is None:
        return "null"
    text = value.decode(errors="replace")
    return text if len(text) <= 24 else text[:21] + "..."
