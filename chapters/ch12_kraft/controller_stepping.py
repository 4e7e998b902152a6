"""What the notebook ``metadata_records.ipynb`` steps: a broker's requests to the quorum controllers of
a ``QuorumControllerTestEnv``, tables of the metadata log, the controllers, the brokers and a
topic's partitions as the controllers hold them, and one broker's ACLs as it replays the log.

No Kafka twin: notebook tooling over ``kafka_lite.testing.quorum_controller_test_env`` (Kafka's
``QuorumControllerTest`` asserts on the same state; it prints none).
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from kafka_lite.common.metadata import (
    AccessControlEntryRecord,
    ConfigRecord,
    FeatureLevelRecord,
    FenceBrokerRecord,
    PartitionChangeRecord,
    PartitionRecord,
    RegisterBrokerRecord,
    RemoveAccessControlEntryRecord,
    TopicRecord,
    UnfenceBrokerRecord,
)
from kafka_lite.common.security.auth.acl import Operation, Resource, ResourceType
from kafka_lite.common.security.auth.kafka_principal import KafkaPrincipal
from kafka_lite.metadata.authorizer.standard_acl import StandardAcl
from kafka_lite.metadata.authorizer.standard_authorizer import StandardAuthorizer
from kafka_lite.metadata.image.metadata_delta import MetadataDelta
from kafka_lite.metadata.image.metadata_image import MetadataImage
from kafka_lite.metadata.leader_constants import NO_LEADER, NO_LEADER_CHANGE
from kafka_lite.network.request_channel import Session
from kafka_lite.server.metadata.broker_metadata_publisher import publish_acls
from kafka_lite.testing.quorum_controller_test_env import QuorumControllerTestEnv

console = Console(width=100, force_jupyter=False, force_terminal=True, color_system="standard")


class ControllerSteps:
    """The notebook's requests and tables over ``env``; times are counted from ``start_ms``."""

    def __init__(self, env: QuorumControllerTestEnv, start_ms: int) -> None:
        self.env = env
        self.start_ms = start_ms
        self.epochs: dict[int, int] = {}  # broker id -> the epoch its registration was given
        self.topic_names: dict = {}  # topic id -> name, as the log's TopicRecords say (ids read worse)

    def seconds(self) -> int:
        return (self.env.time.milliseconds() - self.start_ms) // 1000

    # -- what a broker sends (BrokerRegistration and BrokerHeartbeat, as dicts of their fields) --------

    def register(self, broker_id: int, start: int = 1):
        """``start``: the broker process's start, counted; each start has a new incarnation id."""
        return self.env.register_broker(broker_id, incarnation=100 * broker_id + start)

    def heartbeat(self, broker_id: int, metadata_offset: int | None = None, want_shut_down: bool = False):
        """One heartbeat with the broker's epoch, sent and answered (``env.heartbeat``)."""
        return self.env.heartbeat(broker_id, self.epochs[broker_id], metadata_offset, want_shut_down)

    def create_topic(
        self, name: str, num_partitions: int, replication_factor: int, configs: dict | None = None
    ):
        return self.env.active().create_topics({
            "create_topic_requests": [{
                "topic": name, "num_partitions": num_partitions, "replication_factor": replication_factor,
                "replica_assignment": [],
                "config_entries": [{"config_name": k, "config_value": v} for k, v in (configs or {}).items()],
            }],
            "timeout": 30_000, "validate_only": False,
        })  # fmt: skip

    # -- the log -----------------------------------------------------------------------------------------

    def describe(self, m) -> str:
        """A record's fields, in brief."""
        if isinstance(m, FeatureLevelRecord):
            return f"{m.name} = {m.feature_level}"
        if isinstance(m, RegisterBrokerRecord):
            endpoint = m.end_points[0]
            return (f"broker {m.broker_id}, epoch {m.broker_epoch}, {endpoint.name}://{endpoint.host}:{endpoint.port}, "
                    f"fenced={m.fenced}")  # fmt: skip
        if isinstance(m, FenceBrokerRecord | UnfenceBrokerRecord):
            return f"broker {m.id}, epoch {m.epoch}"
        if isinstance(m, TopicRecord):
            self.topic_names[m.topic_id] = m.name
            return f"topic {m.name}"
        if isinstance(m, ConfigRecord):
            kind = {2: "topic", 4: "broker"}[m.resource_type]
            return f"{kind} {m.resource_name}: {m.name} = {m.value}"
        if isinstance(m, PartitionRecord):
            return (f"{self.topic_names[m.topic_id]}-{m.partition_id}: replicas {m.replicas}, isr {m.isr}, "
                    f"leader {m.leader}, leader epoch {m.leader_epoch}, partition epoch {m.partition_epoch}")  # fmt: skip
        if isinstance(m, PartitionChangeRecord):
            changes = [] if m.isr is None else [f"isr -> {m.isr}"]
            if m.leader == NO_LEADER:
                changes.append("leader -> none")
            elif m.leader != NO_LEADER_CHANGE:
                changes.append(f"leader -> {m.leader}")
            return f"{self.topic_names[m.topic_id]}-{m.partition_id}: " + ", ".join(changes)
        if isinstance(m, AccessControlEntryRecord):
            acl = StandardAcl.from_record(m)
            return (f"id {str(m.id)[:8]}: {acl.principal} {acl.permission_type.name} {acl.operation.name} "
                    f"on {acl.resource_type.name} {acl.resource_name}")  # fmt: skip
        if isinstance(m, RemoveAccessControlEntryRecord):
            return f"id {str(m.id)[:8]}"
        return repr(m)

    def log_rows(self, start: int = 0) -> list[tuple]:
        """The shared log's records from offset ``start``: (offset, epoch, record, committed)."""
        committed = self.env.shared.high_watermark
        return [(offset, epoch, m, offset < committed) for offset, epoch, m in self.env.shared.entries(start)]

    def show_records(self, title: str, rows: list[tuple], first_column: str = "offset") -> None:
        table = Table(title=f"{title}  (t = {self.seconds()} s)")
        for column in (first_column, "epoch", "record", "what it says", "committed"):
            table.add_column(column)
        for offset, epoch, message, committed in rows:
            table.add_row(
                str(offset), str(epoch), type(message).__name__, self.describe(message),
                "yes" if committed else "no",
            )  # fmt: skip
        console.print(table)

    def show_log(self, title: str, start: int = 0) -> None:
        self.show_records(f"the metadata log from offset {start}: {title}", self.log_rows(start))

    # -- the controllers, the brokers, a topic's partitions ---------------------------------------------

    def show_controllers(self, title: str) -> None:
        table = Table(title=f"the controllers: {title}  (t = {self.seconds()} s)")
        for column in ("controller", "role", "claim epoch", "last committed offset", "replayed from the log",
                       "replayed from a snapshot", "brokers", "topics"):  # fmt: skip
            table.add_column(column)
        for node_id, c in sorted(self.env.controllers.items()):
            table.add_row(
                str(node_id), "active" if c.is_active() else "standby", str(c.cur_claim_epoch()),
                str(c.last_committed_offset()), str(c.records_replayed_from_log),
                str(c.records_replayed_from_snapshot), str(sorted(c.cluster_control.broker_registrations().keys())),
                str(sorted(c.replication_control.topics_by_name.keys())),
            )  # fmt: skip
        console.print(table)

    def show_brokers(self, title: str, controller) -> None:
        table = Table(title=f"the brokers, as controller {controller.node_id()} holds them: {title}")
        for column in ("broker", "epoch", "fenced", "in controlled shutdown", "leads"):
            table.add_column(column)
        for broker_id, registration in sorted(controller.cluster_control.broker_registrations().items()):
            table.add_row(str(broker_id), str(registration.epoch), str(registration.fenced),
                          str(controller.cluster_control.in_controlled_shutdown(broker_id)),
                          str(self.leads(controller, broker_id)))  # fmt: skip
        console.print(table)

    @staticmethod
    def partitions(controller, topic: str) -> dict:
        """partition id -> PartitionRegistration, in the controller's current (maybe uncommitted) state."""
        info = controller.replication_control.get_topic(controller.replication_control.get_topic_id(topic))
        return dict(sorted(info.parts.items()))

    @staticmethod
    def leads(controller, broker_id: int) -> list[str]:
        return [f"{info.name}-{p}" for info in controller.replication_control.topics.values()
                for p, part in sorted(info.parts.items()) if part.leader == broker_id]  # fmt: skip

    def show_partitions(self, title: str, controller, topic: str) -> None:
        table = Table(title=f"{topic}'s partitions, as controller {controller.node_id()} holds them: {title}")
        for column in ("partition", "replicas", "isr", "leader", "leader epoch", "partition epoch"):
            table.add_column(column)
        for p, part in self.partitions(controller, topic).items():
            leader = "none" if part.leader == NO_LEADER else str(part.leader)
            table.add_row(str(p), str(list(part.replicas)), str(list(part.isr)), leader, str(part.leader_epoch),
                          str(part.partition_epoch))  # fmt: skip
        console.print(table)


class BrokerAcls:
    """One KRaft broker's side of the ACLs: the metadata image it has published and the
    ``StandardAuthorizer`` it hands them to (super user ``User:admin``), fed the shared log's
    committed records as ``BrokerMetadataListener`` replays them into a ``MetadataDelta`` and
    ``BrokerMetadataPublisher`` publishes the image (``publish_acls``)."""

    def __init__(self, env: QuorumControllerTestEnv) -> None:
        self.env = env
        self.image = MetadataImage.EMPTY
        self.next_offset = 0
        self.authorizer = StandardAuthorizer()
        self.authorizer.configure({"super.users": "User:admin"})
        self.first_publish = True

    def catch_up(self) -> int:
        """Replay and publish every committed record not yet seen; how many there were."""
        shared = self.env.shared
        delta = MetadataDelta(self.image)
        if self.first_publish and shared.log_start_offset > 0:  # the log before it is gone: the snapshot
            snapshot = shared.latest_snapshot()
            for records in snapshot.batches:
                for record in records:
                    delta.replay(snapshot.snapshot_id.offset, snapshot.snapshot_id.epoch, record.message)
            delta.finish_snapshot()
            self.next_offset = snapshot.snapshot_id.offset  # the snapshot holds the offsets before it
        new = [(o, e, m) for o, e, m in shared.entries(self.next_offset) if o < shared.high_watermark]
        for offset, epoch, record in new:
            delta.replay(offset, epoch, record)
        self.image = delta.apply()
        publish_acls(self.authorizer, delta, self.image, self.first_publish)
        self.first_publish = False
        self.next_offset = new[-1][0] + 1 if new else self.next_offset
        return len(new)

    def may(self, user: str, operation: Operation, topic: str) -> bool:
        """What the broker's authorizer answers ``User:<user>`` asking ``operation`` on ``topic``."""
        session = Session(KafkaPrincipal("User", user), "127.0.0.1")
        return self.authorizer.authorize(session, operation, Resource(ResourceType.TOPIC, topic))
