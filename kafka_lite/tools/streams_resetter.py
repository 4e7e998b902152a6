"""Reset a Kafka Streams application so that it processes its input again from the beginning.

Mirrors: kafka.tools.StreamsResetter (core/src/main/scala/kafka/tools/StreamsResetter.java,
         Kafka 0.10.1), run by bin/kafka-streams-application-reset.sh
Book:    chapter 9, 9.1.3 (internal topics: changelogs and repartition topics)
Differs: every step goes through ``KafkaAdminClient`` over the wire: the group's offsets are
         committed from outside it (OffsetCommit, generation -1), where Kafka's tool subscribes a
         consumer per topic, seeks and commits; the topics are deleted with DeleteTopics, where
         Kafka's tool writes ``/admin/delete_topics`` in ZooKeeper (so ``--zookeeper`` is not
         needed, as in Kafka 1.0). Its output is Kafka's, line for line.

A Streams application's progress lives in three places in the cluster, all named after its
``application.id``, which is also its consumer group's id:

    what                                   the reset
    the group's offsets of input topics    to the beginning: every input record is read again
    ... of intermediate topics             to the end: what the last run wrote through a user
      (a user topic written with             topic it also reads (``through``) is not read twice,
       ``through``, read back)               since the input is processed again and writes it anew
    internal topics: <id>-...-changelog,   deleted: a changelog would restore the old counts into
      <id>-...-repartition                   the stores; the application creates them again

Output topics are left alone, and so is each instance's local state directory (the application
removes it with ``KafkaStreams.cleanUp()`` before it starts again). The tool refuses to run while
the group has members: a running instance would commit its own offsets over the reset ones.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from kafka_lite.clients.admin import KafkaAdminClient, OffsetSpec
from kafka_lite.clients.metadata import Cluster
from kafka_lite.common.errors import IllegalStateException
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.consumer.offset_and_metadata import OffsetAndMetadata

INTERNAL_TOPIC_SUFFIXES = ("-changelog", "-repartition")


def is_internal_topic(application_id: str, topic: str) -> bool:
    """A topic Kafka Streams made for the application: ``<application.id>-<name>-changelog`` or
    ``...-repartition`` (ProcessorStateManager's and the DSL's names)."""
    return topic.startswith(application_id + "-") and topic.endswith(INTERNAL_TOPIC_SUFFIXES)


def java_list(items: Sequence[str]) -> str:
    """A list as Java's ``List.toString`` prints it, which Kafka's messages show: ``[a, b]``."""
    return "[" + ", ".join(items) + "]"


class StreamsResetter:
    """Kafka's ``StreamsResetter``: three steps, each printed as it goes, through an admin client."""

    def __init__(self, admin: KafkaAdminClient, out: Callable[[str], None]) -> None:
        self.admin = admin
        self.out = out  # one line of the tool's output

    def run(
        self, application_id: str, input_topics: Sequence[str], intermediate_topics: Sequence[str]
    ) -> None:
        """Check that the group is inactive, then reset the offsets and delete the internal topics."""
        (group,) = self.admin.describe_consumer_groups([application_id])
        if group.members:
            raise IllegalStateException(
                f"Consumer group '{application_id}' is still active. "
                "Make sure to stop all running application instances before running the reset tool."
            )
        cluster = self.admin.describe_cluster()
        all_topics = sorted(cluster.topics())
        self.reset_input_and_internal_topic_offsets(application_id, input_topics, all_topics, cluster)
        self.seek_to_end_intermediate_topics(application_id, intermediate_topics, all_topics, cluster)
        self.delete_internal_topics(application_id, all_topics)

    def reset_input_and_internal_topic_offsets(
        self, application_id: str, input_topics: Sequence[str], all_topics: list[str], cluster: Cluster
    ) -> None:
        if not input_topics:
            self.out("No input topics specified.")
        else:
            self.out(
                f"Resetting offsets to zero for input topics {java_list(input_topics)} and all internal topics."
            )
        for topic in input_topics:
            if topic not in all_topics:
                self.out(f"Input topic {topic} not found. Skipping.")
        for topic in all_topics:
            # The internal topics are deleted next; their offsets are reset first all the same, as
            # Kafka's tool does, so that the topics made again are read from their start, not from
            # offsets the old topics had reached.
            if topic in input_topics or is_internal_topic(application_id, topic):
                self.out(f"Topic: {topic}")
                self._commit(application_id, cluster, topic, OffsetSpec.earliest())
        self.out("Done.")

    def seek_to_end_intermediate_topics(
        self, application_id: str, intermediate_topics: Sequence[str], all_topics: list[str], cluster: Cluster
    ) -> None:
        if not intermediate_topics:
            self.out("No intermediate user topics specified, skipping seek-to-end for user topic offsets.")
            return
        self.out(f"Seek-to-end for intermediate user topics {java_list(intermediate_topics)}")
        for topic in intermediate_topics:
            if topic in all_topics:
                self.out(f"Topic: {topic}")
                self._commit(application_id, cluster, topic, OffsetSpec.latest())
            else:
                self.out(f"Topic {topic} not found. Skipping.")
        self.out("Done.")

    def delete_internal_topics(self, application_id: str, all_topics: list[str]) -> None:
        self.out(f"Deleting all internal/auto-created topics for application {application_id}")
        internal_topics = [topic for topic in all_topics if is_internal_topic(application_id, topic)]
        if internal_topics:
            self.admin.delete_topics(internal_topics)
        for topic in internal_topics:
            self.out(f"Topic {topic} is marked for deletion.")  # what Kafka's TopicCommand prints
        self.out("Done.")

    def _commit(self, group_id: str, cluster: Cluster, topic: str, spec: OffsetSpec) -> None:
        """Commit, for every partition of ``topic``, the offset ``spec`` names: the log start offset
        (Kafka's ``seekToBeginning``: "zero" unless retention has removed the start) or the log end."""
        partitions = [TopicPartition(topic, info.partition) for info in cluster.partitions_for_topic(topic)]
        found = self.admin.list_offsets(dict.fromkeys(partitions, spec))
        self.admin.alter_consumer_group_offsets(
            group_id, {tp: OffsetAndMetadata(info.offset) for tp, info in found.items()}
        )
