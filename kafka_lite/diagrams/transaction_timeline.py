"""A transaction's requests as a sequence diagram: the producer, the partition's leader and the
transaction coordinator as lanes, each request and answer an arrow between two of them, in the
order the network carried them.

No Kafka twin: the timelines of the 2024 analysis of Kafka's transactions, drawn for chapter 10.
Book:    beyond the book (Kafka 0.11's transactions; KIP-890)

Nothing here is drawn by hand. ``tests/jepsen/test_hanging_transaction.py`` and
``tests/jepsen/test_aborted_read.py`` run the hanging transaction and the aborted read on a cluster
behind the fault proxy, each twice (Kafka 0.11's protocol, then both parts of KIP-890), tap the
transaction's requests (``FaultProxy.tap``) and keep each run's timeline
(``kafka_lite.jepsen.timeline``) in ``chapters/ch10_advanced/timelines/``; this module draws one.
A row is one request (blue; red when it was held in the network) or one answer (green; orange when
it is an error), its arrow spanning the lanes from the sender to the receiver. ``timeline_diagram``
draws any run so recorded: chapter 12's election and fencing (``raft_election.py``,
``kraft_fencing.py``) are drawn with it too.
"""

from __future__ import annotations

import html
from pathlib import Path

import graphviz

from kafka_lite.diagrams.style import new_graph, wrapped
from kafka_lite.jepsen.timeline import read_timeline

TIMELINES = Path(__file__).resolve().parents[2] / "chapters" / "ch10_advanced" / "timelines"
COLOURS = {"request": "#dbeafe", "held": "#fecaca", "answer": "#dcfce7", "error": "#fed7aa"}
HEAD = "#f3f4f6"
TABLE = '<<table border="0" cellborder="1" cellspacing="0" cellpadding="2">{}</table>>'
WIDTH = 34  # characters a lane's text is wrapped at


LEGEND = "blue: a request; red: one held in the network; green: an answer; orange: an answer with an error"


def timeline_diagram(
    timeline: dict,
    name: str = "transaction_timeline",
    time_header: str = "s",
    time_format: str = "{:.2f}",
    legend: str = LEGEND,
) -> graphviz.Digraph:
    """``timeline`` (``read_timeline``'s shape: a title, the parties, and rows of a time, a sender, a
    receiver, a text and a kind) as a table named ``name``: the time (in ``time_header``'s unit,
    written with ``time_format``), then one column per party; ``legend`` below it says what the
    colours are."""
    parties = timeline["parties"]
    lanes = len(parties)
    rows = [
        f'<tr><td colspan="{lanes + 1}" bgcolor="{HEAD}"><b>{html.escape(timeline["title"])}</b></td></tr>',
        f'<tr><td bgcolor="{HEAD}">{time_header}</td>'
        + "".join(f'<td bgcolor="{HEAD}">{html.escape(p)}</td>' for p in parties)
        + "</tr>",
    ]
    for row in timeline["rows"]:
        sender, receiver = parties.index(row["from"]), parties.index(row["to"])
        low, high = sorted((sender, receiver))
        text = row["text"]
        colour = COLOURS[row["kind"]]
        arrow = "→" if receiver > sender else "←" if receiver < sender else "↺"
        label = f"{text} {arrow}" if arrow == "→" else f"{arrow} {text}"
        cells = ["<td></td>"] * low
        cells.append(
            f'<td colspan="{high - low + 1}" bgcolor="{colour}">{wrapped(label, WIDTH * (high - low + 1))}</td>'
        )
        cells += ["<td></td>"] * (lanes - 1 - high)
        rows.append(f"<tr><td>{time_format.format(row['t'])}</td>{''.join(cells)}</tr>")
    rows.append(f'<tr><td colspan="{lanes + 1}" border="0">{html.escape(legend)}</td></tr>')
    g = new_graph(name, fontsize=9)
    g.attr("node", shape="plain")
    g.node("timeline", TABLE.format("".join(rows)))
    return g


def hanging_0_11() -> graphviz.Digraph:
    """The docs' picture: the hanging transaction under Kafka 0.11's protocol."""
    return timeline_diagram(read_timeline(TIMELINES / "hanging_0_11.json"))


def hanging_kip_890() -> graphviz.Digraph:
    """The docs' picture: the same script with both parts of KIP-890."""
    return timeline_diagram(read_timeline(TIMELINES / "hanging_kip_890.json"))


def aborted_read_0_11() -> graphviz.Digraph:
    """The docs' picture: the aborted read under Kafka 0.11's epoch rule (KIP-890 part 1 on)."""
    return timeline_diagram(read_timeline(TIMELINES / "aborted_read_0_11.json"))


def aborted_read_kip_890() -> graphviz.Digraph:
    """The docs' picture: the same script with both parts of KIP-890."""
    return timeline_diagram(read_timeline(TIMELINES / "aborted_read_kip_890.json"))
