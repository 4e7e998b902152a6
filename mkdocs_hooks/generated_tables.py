"""MkDocs hook: fill ``<!-- generated: NAME -->`` markers in guides with tables drawn from the code.

No Kafka twin: docs tooling. A table of what the code supports (API versions, config defaults) is
generated at build time from the code's own data, so the docs cannot fall out of step with it.
"""

from __future__ import annotations

import io
import tokenize
from pathlib import Path

from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.types import walk
from kafka_lite.log.log_config import CONFIG_DEF
from kafka_lite.raft import quorum_state
from kafka_lite.security.auth.request_acls import request_acls_table
from kafka_lite.spark.options import OPTIONS as SPARK_OPTIONS
from mkdocs_hooks.generated_pages import cli_reference, kafka_classes, layer_table


def api_versions() -> str:
    rows = ["| key | API | versions | used by | request fields (newest version) |", "|---|---|---|---|---|"]
    for api in ApiKeys:
        fields = [
            path
            for path, _ in walk(api.request_schema(api.latest_version))
            if "." not in path and "[]" not in path
        ]
        who = "brokers" if api.inter_broker else "clients"
        rows.append(
            f"| {api.value} | {api.api_name} | {api.oldest_version}-{api.latest_version} | {who} | {', '.join(fields) or '(empty)'} |"
        )
    return "\n".join(rows)


def log_configs() -> str:
    return CONFIG_DEF.to_markdown()


WHERE = {
    "both": "source and sink",
    "source": "source",
    "sink": "sink",
    "streaming": "source (streaming)",
    "batch": "source (batch)",
}


def spark_options() -> str:
    rows = ["| option | where | in kafka_lite | what it does here |", "|---|---|---|---|"]
    for option in SPARK_OPTIONS:
        where = WHERE[option.applies_to]
        status = "yes" if option.implemented else "**no**: rejected"
        note = option.note.replace("|", "\\|")
        rows.append(f"| `{option.name}` | {where} | {status} | {note} |")
    return "\n".join(rows)


def request_acls() -> str:
    """Which ACL each request needs and what a caller without it gets, from the table the authorizer
    walk test holds equal to ``KafkaApis``'s checks."""
    rows = ["| API | needs | refused with | what is refused |", "|---|---|---|---|"]
    previous = None
    for api, check, error, refused in request_acls_table():
        shown = api if api != previous else ""  # an API's later checks continue its row group
        previous = api
        rows.append(f"| {shown} | {check} | {'`' + error + '`' if error != '-' else error} | {refused} |")
    return "\n".join(rows)


# How each epoch rule reads in a cell of the transition tables, against the node's current epoch e:
# short, so seven columns fit a phone. The guide gives the legend.
EPOCH_CELLS = {
    quorum_state.EpochRule.SAME: "= e",
    quorum_state.EpochRule.HIGHER: "> e",
    quorum_state.EpochRule.SAME_OR_HIGHER: "≥ e",
    quorum_state.EpochRule.NEXT: "e + 1",
}


def transition_table(table: dict[str, dict[str, quorum_state.EpochRule]]) -> str:
    """A Raft transition table as a grid: a row per state a node is in, a column per state it may move
    to, each cell the epoch in which the move may land (empty: never)."""
    targets = [s for s in quorum_state.STATE_NAMES if any(s in moves for moves in table.values())]
    rows = ["| from \\ to | " + " | ".join(targets) + " |", "|---|" + "---|" * len(targets)]
    for source in quorum_state.STATE_NAMES:
        if source in table:
            cells = [EPOCH_CELLS[table[source][t]] if t in table[source] else "" for t in targets]
            rows.append(f"| **{source}** | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def raft_voter_transitions() -> str:
    return transition_table(quorum_state.VOTER_TRANSITIONS)


def raft_observer_transitions() -> str:
    return transition_table(quorum_state.OBSERVER_TRANSITIONS)


GOLDEN = Path(__file__).resolve().parents[1] / "tests" / "common" / "protocol" / "test_raft_golden.py"


def golden_chunks(name: str) -> list[tuple[str, str]]:
    """The byte chunks of one golden message in ``tests/common/protocol/test_raft_golden.py`` and the
    comment written beside each: ``h("03 6162",  # cluster_id ...)`` gives ``("03 6162", "cluster_id
    ...")``. Read from the test's source, so the page shows the bytes the test holds the codec to."""
    tokens = list(tokenize.generate_tokens(io.StringIO(GOLDEN.read_text(encoding="utf-8")).readline))
    start = next(
        i for i, t in enumerate(tokens) if t.type == tokenize.NAME and t.string == name and t.start[1] == 0
    )
    call = next(
        i for i in range(start, len(tokens)) if tokens[i].string == "h" and tokens[i + 1].string == "("
    )
    chunks: list[tuple[str, str]] = []
    depth = 0
    pending: list[str] = []  # the strings of one line, waiting for the comment that follows them
    for token in tokens[call + 1 :]:
        if token.string == "(":
            depth += 1
        elif token.string == ")":
            depth -= 1
            if depth == 0:
                break
        elif token.type == tokenize.STRING:
            pending.append(token.string.strip("\"'"))
        elif token.type == tokenize.COMMENT:
            chunks.append((" ".join(pending), token.string.lstrip("# ")))
            pending = []
    if pending:
        chunks.append((" ".join(pending), ""))
    return chunks


def raft_vote_request_bytes() -> str:
    rows = ["| bytes | what they are |", "|---|---|"]
    for chunk, comment in golden_chunks("VOTE_REQUEST"):
        escaped = comment.replace("|", "\\|")
        rows.append(f"| `{chunk}` | {escaped} |")
    return "\n".join(rows)


# The reference pages' tables (the layers, Kafka class -> file, the command) are built in generated_pages.py.
TABLES = {
    "api-versions": api_versions,
    "log-configs": log_configs,
    "spark-options": spark_options,
    "request-acls": request_acls,
    "raft-voter-transitions": raft_voter_transitions,
    "raft-observer-transitions": raft_observer_transitions,
    "raft-vote-request-bytes": raft_vote_request_bytes,
    "layer-table": layer_table,
    "kafka-classes": kafka_classes,
    "cli-reference": cli_reference,
}


def on_page_markdown(markdown: str, page, config, files) -> str:
    for name, make in TABLES.items():
        marker = f"<!-- generated: {name} -->"
        if marker in markdown:
            markdown = markdown.replace(marker, make())
    return markdown
