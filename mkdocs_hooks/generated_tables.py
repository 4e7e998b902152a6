"""MkDocs hook: fill ``<!-- generated: NAME -->`` markers in guides with tables drawn from the code.

No Kafka twin: docs tooling. A table of what the code supports (API versions, config defaults) is
generated at build time from the code's own data, so the docs cannot fall out of step with it.
"""

from __future__ import annotations

from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.types import walk
from kafka_lite.log.log_config import CONFIG_DEF
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


# The reference pages' tables (the layers, Kafka class -> file, the command) are built in generated_pages.py.
TABLES = {
    "api-versions": api_versions,
    "log-configs": log_configs,
    "spark-options": spark_options,
    "request-acls": request_acls,
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
