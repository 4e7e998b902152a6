"""MkDocs hook: render kafka_lite's diagrams to ``site/diagrams/<name>.svg`` at build time.

No Kafka twin: docs tooling. Each diagram is drawn by a function of the ``kafka_lite.diagrams``
package from the code's own data (a header field table, a real segment's index, a state machine's
transition table), so a picture cannot drift from the code it shows. The diagrams are laid out to
fit the guides' column (``kafka_lite.diagrams.style``). Pages use
``![...](../../diagrams/<name>.svg)``; nothing is written into ``docs/``.
"""

from __future__ import annotations

from mkdocs.structure.files import File

from kafka_lite import diagrams


def on_files(files, config):
    for name, draw in diagrams.DIAGRAMS.items():
        svg = draw().pipe(format="svg").decode("utf-8")
        files.append(File.generated(config, f"diagrams/{name}.svg", content=svg))
    return files
