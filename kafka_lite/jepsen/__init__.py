"""Kafka's promises checked the way Jepsen checks them, beyond the book.

No Kafka twin: a Python port of Jepsen's Kafka workload (``jepsen/src/jepsen/tests/kafka.clj``),
in one module per part of Jepsen's design: ``history`` (operations as clients saw them), ``workload``
(the generator and the clients), ``nemesis`` (the faults), ``checker`` (the analysis) and
``pictures`` (what each process saw of each key, with the anomalies marked). Nothing in the runtime
imports this package: it checks a cluster from the outside, as a user's clients see it.
"""

# The nemesis's faults (``nemesis.py`` says what each does), here so that the command line and the
# run's settings name them without importing the nemesis and the cluster launcher behind it.
FAULTS = ("kill", "pause", "partition", "delay")
