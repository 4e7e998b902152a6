"""An admin client: create topics, list topics, describe the cluster, over the Kafka protocol.

Mirrors: org.apache.kafka.clients.admin.AdminClient (KIP-117, Kafka 0.11.0): createTopics,
         listTopics, describeCluster
Book:    chapter 7 (topic creation goes to the controller, which writes the assignment to ZooKeeper)
Differs: calls block until done or ``request.timeout.ms`` (Kafka's return futures); one request at a
         time. Create goes to the controller named in the latest metadata, as Kafka 0.11 sends it.

Usage::

    admin = KafkaAdminClient(bootstrap_servers="127.0.0.1:9092")
    admin.create_topics([NewTopic("orders", num_partitions=3, replication_factor=1)])
    admin.list_topics()
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kafka_lite.clients.metadata import Cluster, Metadata, Node
from kafka_lite.clients.network_client import ClientRequest, ClientResponse, NetworkClient
from kafka_lite.common.errors import Errors, KafkaException, TimeoutException
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.network.selector import Selector


@dataclass
class NewTopic:
    name: str
    num_partitions: int = -1
    replication_factor: int = -1
    replica_assignment: dict[int, list[int]] = field(default_factory=dict)
    configs: dict[str, str] = field(default_factory=dict)

    def to_request(self) -> dict:
        return {
            "topic": self.name,
            "num_partitions": self.num_partitions,
            "replication_factor": self.replication_factor,
            "replica_assignment": [
                {"partition_id": p, "replicas": r} for p, r in sorted(self.replica_assignment.items())
            ],
            "config_entries": [
                {"config_name": k, "config_value": v} for k, v in sorted(self.configs.items())
            ],
        }


def parse_bootstrap(servers: str | list[str]) -> list[tuple[str, int]]:
    """``"host:port,host:port"`` (or a list) into addresses; a bad entry names itself."""
    entries = servers.split(",") if isinstance(servers, str) else list(servers)
    addresses = []
    for entry in (e.strip() for e in entries if e.strip()):
        host, sep, port = entry.rpartition(":")
        if not sep or not host or not port.isdigit():
            raise KafkaException(f"Invalid bootstrap server '{entry}': expected host:port")
        addresses.append((host, int(port)))
    if not addresses:
        raise KafkaException("No bootstrap servers given")
    return addresses


class KafkaAdminClient:
    def __init__(
        self,
        bootstrap_servers: str | list[str],
        client_id: str = "kafka-lite-admin",
        request_timeout_ms: int = 30_000,
        time: Time = SYSTEM,
    ) -> None:
        self.time = time
        self.request_timeout_ms = request_timeout_ms
        self.metadata = Metadata(time=time)
        self.metadata.bootstrap(parse_bootstrap(bootstrap_servers), time.milliseconds())
        self.client = NetworkClient(
            Selector(time=time),
            client_id,
            request_timeout_ms=request_timeout_ms,
            time=time,
            metadata=self.metadata,
        )

    # -- the calls ------------------------------------------------------------------------------------------

    def describe_cluster(self) -> Cluster:
        """The cluster as the latest metadata says: brokers, controller, cluster id, partitions."""
        self._refresh_metadata()
        return self.metadata.cluster

    def list_topics(self) -> list[str]:
        return sorted(self.describe_cluster().topics())

    def create_topics(
        self, topics: list[NewTopic], timeout_ms: int = 30_000, validate_only: bool = False
    ) -> None:
        """Create topics through the controller; raise the first per-topic error, named."""
        controller = self.describe_cluster().controller
        if controller is None:
            raise KafkaException("The cluster has no controller right now; retry later")
        body = {
            "create_topic_requests": [t.to_request() for t in topics],
            "timeout": timeout_ms,
            "validate_only": validate_only,
        }
        response = self._call(controller, ApiKeys.CREATE_TOPICS, 2, body)
        for result in response["topic_errors"]:
            error = Errors.for_code(result["error_code"])
            if error is not Errors.NONE:
                raise error.exception(
                    f"{result['topic']}: {result.get('error_message') or error.description}"
                )

    def close(self) -> None:
        self.client.close_all()

    # -- plumbing --------------------------------------------------------------------------------------------

    def _refresh_metadata(self) -> None:
        version = self.metadata.request_update()
        self._poll_until(lambda: self.metadata.version > version, "metadata")

    def _call(self, node: Node, api: ApiKeys, version: int, body: dict) -> dict:
        node_id = node.id_string
        self._poll_until(
            lambda: self.client.ready(node_id, self.time.milliseconds()), f"a connection to node {node_id}"
        )
        done: list[ClientResponse] = []
        self.client.send(
            ClientRequest(node_id, api, version, body, callback=done.append), self.time.milliseconds()
        )
        self._poll_until(lambda: bool(done), f"the {api.api_name} response")
        if done[0].disconnected:
            raise KafkaException(f"node {node_id} disconnected before answering {api.api_name}")
        return done[0].body

    def _poll_until(self, condition, what: str) -> None:
        deadline = self.time.milliseconds() + self.request_timeout_ms
        while not condition():
            now = self.time.milliseconds()
            if now >= deadline:
                raise TimeoutException(f"Timed out after {self.request_timeout_ms} ms waiting for {what}")
            self.client.poll(min(100, deadline - now), now)
