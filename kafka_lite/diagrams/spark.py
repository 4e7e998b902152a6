"""A micro-batch of the ``kafka_lite`` Spark source: its offsets, its Spark tasks, their fetches.

No Kafka twin: a picture of Spark's Kafka source at work (KafkaMicroBatchStream plans offset
ranges on the driver; each range is one Spark task whose consumer fetches from the partition's
leader), drawn from kafka_lite's own planning code.
Book:    chapter 8 and 9 (where the data pipeline meets Spark); chapter 4, 4.1.4 (fetching from
         the leader)

Nothing in it is computed here. ``micro_batch_diagram`` takes what the driver knows when a trigger
fires (where the last micro-batch ended, each partition's high watermark, ``maxOffsetsPerTrigger``)
and calls the source's own functions: ``rate_limit`` for this micro-batch's end offsets,
``plan_micro_batch`` for its ranges, ``get_ranges`` for the Spark tasks (``minPartitions`` splits a
large range into several). Each task then fetches its range from the partition's leader, the broker
that ``leaders`` names.

``micro_batch`` draws the picture of the data-pipeline guide: three partitions of ``flights`` on
three brokers, a backlog larger than the trigger's limit, shared out in proportion to each
partition's backlog.
"""

from __future__ import annotations

from collections.abc import Mapping

import graphviz

from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.diagrams.style import new_graph
from kafka_lite.spark.offsets import get_ranges, plan_micro_batch, rate_limit

HEAD = "#f3f4f6"
READ = "#dbeafe"  # this micro-batch's offsets
DONE = "#dcfce7"  # read by earlier micro-batches
LATER = "#fde68a"  # below the high watermark, left for the next micro-batch
TABLE = '<<table border="0" cellborder="1" cellspacing="0" cellpadding="4">{}</table>>'


def micro_batch_diagram(
    start: Mapping[TopicPartition, int],
    high_watermarks: Mapping[TopicPartition, int],
    leaders: Mapping[TopicPartition, int],
    max_offsets_per_trigger: int | None = None,
    min_partitions: int | None = None,
) -> graphviz.Digraph:
    """One micro-batch from ``start`` (the last one's end offsets) towards ``high_watermarks``:
    the driver's offsets per partition, the Spark tasks its ranges become, and each task's Fetch to
    the partition's leader (``leaders``: partition -> broker id)."""
    missing = sorted(set(high_watermarks) - set(leaders))
    if missing:
        raise ValueError(f"no leader given for {', '.join(f'{t}-{p}' for t, p in missing)}")
    if max_offsets_per_trigger is None:
        end = dict(high_watermarks)
    else:
        end = rate_limit(max_offsets_per_trigger, start, high_watermarks, {})
    ranges = plan_micro_batch(start, end, {}, fail_on_data_loss=True)
    tasks = get_ranges(ranges, min_partitions)

    g = new_graph("micro_batch", rankdir="LR", nodesep="0.25", ranksep="0.35")
    g.attr("node", shape="plaintext")
    limit = "no maxOffsetsPerTrigger" if max_offsets_per_trigger is None else (
        f"maxOffsetsPerTrigger {max_offsets_per_trigger:,}"
    )  # fmt: skip
    rows = [
        f'<tr><td bgcolor="{HEAD}" colspan="4"><b>driver: latestOffset</b></td></tr>',
        f'<tr><td bgcolor="{HEAD}" colspan="4">{limit}</td></tr>',
        f'<tr><td bgcolor="{HEAD}">partition</td><td bgcolor="{DONE}">start</td>'
        f'<td bgcolor="{READ}">end</td><td bgcolor="{LATER}">HW</td></tr>',
    ]
    for tp in sorted(high_watermarks):
        rows.append(
            f"<tr><td>{tp[0]}-{tp[1]}</td><td>{start.get(tp, 0):,}</td><td>{end[tp]:,}</td>"
            f"<td>{high_watermarks[tp]:,}</td></tr>"
        )
    g.node("driver", TABLE.format("".join(rows)))

    with g.subgraph(name="cluster_brokers") as brokers:
        brokers.attr(label="the cluster", style="dashed", fontsize="10")
        for broker in sorted(set(leaders.values())):
            led = ", ".join(f"{t}-{p}" for (t, p), b in sorted(leaders.items()) if b == broker)
            brokers.node(
                f"broker{broker}",
                TABLE.format(
                    f'<tr><td bgcolor="{HEAD}"><b>broker {broker}</b></td></tr><tr><td>leads {led}</td></tr>'
                ),
            )
    with g.subgraph(name="cluster_executors") as executors:
        executors.attr(label="executors (Python workers)", style="dashed", fontsize="10")
        for i, task in enumerate(tasks):
            executors.node(
                f"task{i}",
                TABLE.format(
                    f'<tr><td bgcolor="{HEAD}"><b>Spark task {i}</b></td></tr>'
                    f'<tr><td bgcolor="{READ}">{task.topic}-{task.partition} [{task.from_offset:,}, '
                    f"{task.until_offset:,})</td></tr><tr><td>{task.size:,} offsets</td></tr>"
                ),
            )
    for i, task in enumerate(tasks):
        g.edge("driver", f"task{i}")
        g.edge(
            f"task{i}",
            f"broker{leaders[task.topic_partition]}",
            label=f"Fetch @{task.from_offset:,}",
        )
    return g


def micro_batch() -> graphviz.Digraph:
    """The guide's picture: a backlog of 2,700 offsets over three partitions, 1,500 per trigger."""
    topic = "flights"
    start = {(topic, 0): 1_200, (topic, 1): 800, (topic, 2): 950}
    high_watermarks = {(topic, 0): 2_400, (topic, 1): 1_100, (topic, 2): 2_150}
    leaders = {(topic, 0): 1, (topic, 1): 2, (topic, 2): 0}
    return micro_batch_diagram(start, high_watermarks, leaders, max_offsets_per_trigger=1_500)
