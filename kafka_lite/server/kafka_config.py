"""The broker's settings (``server.properties``), with Kafka's names, defaults and checks.

Mirrors: kafka.server.KafkaConfig (core/src/main/scala/kafka/server/KafkaConfig.scala, Kafka 0.10.1,
         with 0.11.0's transaction, group and inter-broker protocol settings)
Book:    chapter 2 (socket server settings), 5 (group.* and offsets.*, the coordinator's), 6.1 (log.*),
         7 (zookeeper.*, controller settings) (beyond the book: KRaft's settings)
Differs: only the settings kafka_lite implements are defined (a real ``server.properties``'s others
         are logged and ignored); listeners speak PLAINTEXT or SASL_PLAINTEXT (no TLS);
         ``offsets.commit.required.acks`` takes -1 or 1; ``metric.reporters`` takes Python classes.
         KRaft's settings and their checks (``_kraft_settings``, ``_validate_kraft``) are Kafka
         3.3.0's (KIP-500, KIP-631), for chapter 12's KRaft nodes; ``log.initial.task.delay.ms`` is
         Kafka 3.8's, so that tests need not wait the 30 s Kafka 0.11 always waits;
         ``transaction.partition.verification.enable`` is Kafka 3.6's (KIP-890 part 1), off here.

kafka_lite's own settings: ``fetch.sendfile.enable`` switches between the two fetch paths, and
``request.metrics.reporter.*`` configure its request metrics reporter. ``metric.reporters`` names
classes as ``package.module:Class``. ``inter.broker.protocol.version`` (Kafka 0.11's values) decides
only whether followers truncate by leader epoch (``api_version.py``), and is the default and the
ceiling of ``log.message.format.version`` (Kafka's default is the latest format, which an older
protocol version then refuses). ``offsets.load.buffer.size``
is not defined, since the group manager reads a partition's log segment by segment.

Listeners (Kafka 0.10.2, KIP-103): ``listeners`` is a list of ``NAME://host:port``; a name that is
not a security protocol (``INTERNAL``) takes its protocol from ``listener.security.protocol.map``, and
``inter.broker.listener.name`` picks the brokers' own listener (or ``security.inter.broker.protocol``
names it by protocol, not both). ``_listener_settings`` checks them with Kafka's messages.

Security (beyond the book; Kafka 0.10.2-0.11): a listener may be ``SASL_PLAINTEXT://host:port``;
``sasl.enabled.mechanisms`` (PLAIN, SCRAM-SHA-256) and each mechanism's JAAS entries, read at start-up
from ``listener.name.<listener>.<mechanism>.sasl.jaas.config`` or the ``KafkaServer`` section of
the file ``java.security.auth.login.config`` names (a JVM system property in Kafka, a setting here);
``security.inter.broker.protocol`` and ``sasl.mechanism.inter.broker.protocol`` for the broker's own
connections, which log in as the JAAS entry's ``username``/``password``. Kafka's default mechanism is
GSSAPI, which kafka_lite lacks, so the default here is PLAIN.

KRaft (beyond the book: chapter 12): ``process.roles`` empty (the
default) is ZooKeeper mode, as chapters 1-11 run; ``broker``, ``controller`` or ``broker,controller``
is KRaft mode, where ``node.id`` names the node (``broker.id`` follows it), the controllers are the
voters of ``controller.quorum.voters`` and listen on ``controller.listener.names``, and
``zookeeper.connect`` is not needed. ``_kraft_settings`` and ``_validate_kraft`` hold the rules for
which roles need which of these, with Kafka's messages. The ``controller.quorum.*`` settings are defined once, in
``raft/raft_config.py``, and added here as the request metrics reporter's are.

The ``log.*`` settings are the broker-wide defaults of the topic settings in ``log_config.py``;
``log_config_props`` hands them over under the names ``LogConfig.from_broker`` expects. As in Kafka,
``log.retention.ms`` wins over ``log.retention.minutes``, which wins over ``log.retention.hours``
(and the same for ``log.roll.*``).
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kazoo.hosts import collect_hosts

from kafka_lite.common.config import ConfigDef, Importance, Range, Type, ValidList, ValidString
from kafka_lite.common.errors import ConfigException, KafkaException
from kafka_lite.common.security.jaas_config import (
    JAVA_LOGIN_CONFIG_PARAM,
    AppConfigurationEntry,
    load_server_context,
)
from kafka_lite.common.security.sasl import MECHANISMS as SASL_MECHANISMS
from kafka_lite.common.security.sasl import SCRAM_SHA_256
from kafka_lite.common.utils import INT32_MAX, LONG_MAX
from kafka_lite.log.log_config import CONFIG_DEF as LOG_CONFIG_DEF
from kafka_lite.log.log_config import SERVER_DEFAULT_NAMES
from kafka_lite.network.channel_builders import (
    PLAINTEXT_CHANNEL_BUILDER,
    SASL_PLAINTEXT,
    ChannelBuilder,
    client_channel_builder,
)
from kafka_lite.raft.raft_config import CONFIG_DEF as RAFT_CONFIG_DEF
from kafka_lite.raft.raft_config import QUORUM_VOTERS_CONFIG, parse_voter_connections
from kafka_lite.security.auth.authorizer import STANDARD_AUTHORIZER, authorizer_class
from kafka_lite.server.api_version import (
    LATEST_VERSION,
    ApiVersion,
    ApiVersionValidator,
    api_version,
    uses_leader_epochs_for_truncation,
)
from kafka_lite.server.metrics_reporter import CONFIG_DEF as REPORTER_CONFIG_DEF
from kafka_lite.server.metrics_reporter import load_reporter_classes
from kafka_lite.zk.zk_utils import EndPoint

log = logging.getLogger(__name__)

# Kafka's default map names each security protocol after itself; kafka_lite's listeners speak only
# the first and the third (it has no TLS), which a listener naming SSL or SASL_SSL is told.
DEFAULT_LISTENER_SECURITY_PROTOCOL_MAP = (
    "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL"
)
_SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
_LISTENER_PROTOCOLS = ("PLAINTEXT", "SASL_PLAINTEXT")

# KRaft's process roles (Kafka's ProcessRole: BrokerRole, ControllerRole), as process.roles spells them.
BROKER_ROLE = "broker"
CONTROLLER_ROLE = "controller"
# node.id's default: no node id, which only ZooKeeper mode accepts (Kafka's Defaults.EmptyNodeId).
EMPTY_NODE_ID = -1

H = Importance.HIGH
M = Importance.MEDIUM
L = Importance.LOW


def _zookeeper_connect(name: str, value: str) -> None:
    """``host:port[,host:port...][/chroot]``, checked with the ZooKeeper client's own parser, so that a
    bad string is a configuration error here rather than an exception at the first connection."""
    expected = "expected host:port[,host:port...][/chroot]"
    try:
        hosts, _ = collect_hosts(value)
    except ValueError as e:
        raise ConfigException(name, value, f"{expected} ({e})") from None
    if not all(host.strip() for host, _ in hosts):
        raise ConfigException(name, value, f"{expected} (a host is empty)")


# --8<-- [start:config_def]
CONFIG_DEF = (
    ConfigDef()
    # ZooKeeper
    .define("zookeeper.connect", Type.STRING, None, _zookeeper_connect, H,
            "host:port[,host:port...][/chroot] of the ZooKeeper ensemble; required.")
    .define("zookeeper.session.timeout.ms", Type.INT, 6000, Range.at_least(1), H,
            "A broker whose ZooKeeper session is silent this long is considered dead.")
    .define("zookeeper.connection.timeout.ms", Type.INT, 6000, Range.at_least(1), H,
            "How long to wait for the first ZooKeeper connection.")
    # General
    .define("broker.id", Type.INT, None, Range.at_least(0), H, "This broker's id, unique in the cluster.")
    .define("broker.rack", Type.STRING, None, None, M, "The broker's rack (Metadata v1+ reports it).")
    .define("listeners", Type.STRING, "PLAINTEXT://127.0.0.1:9092", None, H,
            "The listeners, comma-separated NAME://host:port (port 0 picks a free port); a name that is "
            "not a security protocol must be in listener.security.protocol.map.")
    .define("advertised.listeners", Type.STRING, None, None, H,
            "The listeners registered in ZooKeeper for clients and brokers, if not those of listeners; "
            "their names must be among the listeners'.")
    .define("listener.security.protocol.map", Type.STRING, DEFAULT_LISTENER_SECURITY_PROTOCOL_MAP, None, L,
            "NAME:PROTOCOL pairs: the security protocol of each listener name (Kafka 0.10.2, KIP-103).")
    .define("inter.broker.listener.name", Type.STRING, None, None, M,
            "The listener the brokers use among themselves (replica fetchers, the controller, the "
            "transaction markers); not to be set with security.inter.broker.protocol.")
    .define("message.max.bytes", Type.INT, 1000012, Range.at_least(0), H, "The largest record batch accepted.")
    .define("num.network.threads", Type.INT, 3, Range.at_least(1), H, "Processor threads (one selector each).")
    .define("num.io.threads", Type.INT, 8, Range.at_least(1), H, "Request handler threads.")
    .define("queued.max.requests", Type.INT, 500, Range.at_least(1), H,
            "Requests that may wait for a handler before the processors stop reading sockets.")
    .define("auto.create.topics.enable", Type.BOOLEAN, True, None, H,
            "Create a topic when a client asks for metadata of one that does not exist.")
    .define("num.partitions", Type.INT, 1, Range.at_least(1), M, "Partitions of an auto-created topic.")
    .define("default.replication.factor", Type.INT, 1, Range.at_least(1), M,
            "Replication factor of an auto-created topic.")
    .define("delete.topic.enable", Type.BOOLEAN, False, None, H,
            "Whether the controller deletes topics marked for deletion; while false, the marks wait.")
    # Socket server
    .define("socket.send.buffer.bytes", Type.INT, 102400, None, H, "SO_SNDBUF of accepted sockets (-1: OS default).")
    .define("socket.receive.buffer.bytes", Type.INT, 102400, None, H, "SO_RCVBUF of accepted sockets (-1: OS default).")
    .define("socket.request.max.bytes", Type.INT, 104857600, Range.at_least(1), H,
            "The largest request frame; a larger size prefix closes the connection.")
    .define("max.connections.per.ip", Type.INT, INT32_MAX, Range.at_least(1), M,
            "Connections one address may hold open.")
    .define("max.connections.per.ip.overrides", Type.STRING, "", None, M,
            "Per-address exceptions, 'host:count,host:count'.")
    .define("connections.max.idle.ms", Type.LONG, 600000, None, M, "Close connections idle this long.")
    .define("fetch.sendfile.enable", Type.BOOLEAN, False, None, M,
            "kafka_lite: send fetched records with os.sendfile (zero-copy) instead of read-and-send; "
            "the benchmark page compares the two.")
    # Security: SASL authentication (Kafka 0.10.2-0.11); KafkaConfig._sasl_server_contexts reads the JAAS
    .define("security.inter.broker.protocol", Type.STRING, "PLAINTEXT",
            ValidString.in_("PLAINTEXT", "SASL_PLAINTEXT"), M,
            "What the broker's own connections to other brokers speak: replica fetchers, the controller "
            "and the transaction markers; SASL_PLAINTEXT needs a SASL_PLAINTEXT listener.")
    .define("sasl.mechanism.inter.broker.protocol", Type.STRING, "PLAIN", ValidString.in_(*SASL_MECHANISMS), M,
            "The SASL mechanism of the broker's own connections (Kafka's default is GSSAPI, which "
            "kafka_lite does not have).")
    .define("sasl.mechanism.controller.protocol", Type.STRING, "PLAIN", ValidString.in_(*SASL_MECHANISMS), M,
            "KRaft: the SASL mechanism of the connections to the controllers' listener, the "
            "Raft voters' and the brokers' (Kafka's default is GSSAPI, which kafka_lite does not have).")
    .define("sasl.enabled.mechanisms", Type.LIST, ["PLAIN"], None, M,
            "The SASL mechanisms a SASL listener accepts: PLAIN, SCRAM-SHA-256 (Kafka's default is GSSAPI).")
    .define(JAVA_LOGIN_CONFIG_PARAM, Type.STRING, None, None, M,
            "A JAAS file whose KafkaServer section configures the SASL login modules, when no "
            "listener.name.<listener>.<mechanism>.sasl.jaas.config is set (a Java system property in Kafka).")
    # Log
    .define("log.dirs", Type.STRING, None, None, H, "Comma-separated log directories.")
    .define("log.dir", Type.STRING, "/tmp/kafka-logs", None, H, "The log directory, when log.dirs is not set.")
    .define("log.retention.hours", Type.INT, 168, None, H, "Retention in hours (lowest precedence).")
    .define("log.retention.minutes", Type.INT, None, None, H, "Retention in minutes.")
    .define("log.roll.hours", Type.INT, 168, Range.at_least(1), H, "Segment age in hours (lowest precedence).")
    .define("log.roll.jitter.hours", Type.INT, 0, Range.at_least(0), H, "Segment age jitter in hours.")
    .define("log.retention.check.interval.ms", Type.LONG, 300000, Range.at_least(1), M,
            "How often the retention task runs.")
    .define("log.initial.task.delay.ms", Type.LONG, 30000, Range.at_least(0), M,
            "How long after start-up the retention and flush tasks first run; tests shorten it "
            "(Kafka 0.11 always waits 30 s).")
    .define("log.flush.scheduler.interval.ms", Type.LONG, LONG_MAX, None, H, "How often the flusher runs.")
    .define("log.flush.offset.checkpoint.interval.ms", Type.INT, 60000, Range.at_least(0), H,
            "How often recovery points are checkpointed.")
    .define("log.cleaner.enable", Type.BOOLEAN, True, None, M, "Run the log cleaner (compaction).")
    .define("log.cleaner.backoff.ms", Type.LONG, 15000, Range.at_least(0), M,
            "How long the cleaner sleeps when there is nothing to clean.")
    # Message timestamps (book 10.2): the defaults of every topic's message.timestamp.* settings
    .define("log.message.timestamp.type", Type.STRING, "CreateTime", ValidString.in_("CreateTime", "LogAppendTime"),
            M, "Who stamps a topic's records: the producer (CreateTime) or this broker (LogAppendTime).")
    .define("log.message.timestamp.difference.max.ms", Type.LONG, LONG_MAX, Range.at_least(0), M,
            "With CreateTime, refuse a record whose timestamp is further than this from the broker's time "
            "(INVALID_TIMESTAMP); the default accepts any.")
    # Replication
    .define("replica.lag.time.max.ms", Type.LONG, 10000, Range.at_least(1), H,
            "A follower that has not caught up with the leader for this long leaves the ISR.")
    .define("replica.fetch.wait.max.ms", Type.INT, 500, Range.at_least(0), M,
            "How long the leader may hold a follower's fetch when there is nothing new.")
    .define("replica.fetch.min.bytes", Type.INT, 1, Range.at_least(1), M,
            "The data a follower's fetch waits for, up to replica.fetch.wait.max.ms.")
    .define("replica.fetch.max.bytes", Type.INT, 1048576, Range.at_least(0), M,
            "Bytes a follower asks for per partition (a larger first batch still comes whole).")
    .define("replica.fetch.response.max.bytes", Type.INT, 10485760, Range.at_least(0), M,
            "Bytes a follower asks for per fetch, over all its partitions.")
    .define("replica.fetch.backoff.ms", Type.INT, 1000, Range.at_least(0), M,
            "How long a follower waits before fetching a partition again after an error.")
    .define("replica.socket.timeout.ms", Type.INT, 30000, Range.at_least(1), H,
            "How long a follower waits for its leader to answer a fetch.")
    .define("num.replica.fetchers", Type.INT, 1, Range.at_least(1), H,
            "Fetcher threads per leader broker; partitions are spread over them.")
    .define("replica.high.watermark.checkpoint.interval.ms", Type.LONG, 5000, Range.at_least(1), H,
            "How often each replica's high watermark is written to replication-offset-checkpoint.")
    .define("replication.quota.window.num", Type.INT, 11, Range.at_least(1), L,
            "Windows the replication throttle's byte rate is measured over (KIP-73).")
    .define("replication.quota.window.size.seconds", Type.INT, 1, Range.at_least(1), L,
            "The length of each of the replication throttle's windows.")
    # Client quotas (book 10.1): the static defaults, and the windows a client's rate is measured over
    .define("quota.producer.default", Type.LONG, LONG_MAX, Range.at_least(1), H,
            "Bytes/s each client id may produce when ZooKeeper sets no quota for it or for <default>.")
    .define("quota.consumer.default", Type.LONG, LONG_MAX, Range.at_least(1), H,
            "Bytes/s each client id may fetch when ZooKeeper sets no quota for it or for <default>.")
    .define("quota.window.num", Type.INT, 11, Range.at_least(1), L,
            "Windows a client's byte rate and request time are measured over.")
    .define("quota.window.size.seconds", Type.INT, 1, Range.at_least(1), L,
            "The length of each of the client quotas' windows.")
    # Controller
    .define("controller.socket.timeout.ms", Type.INT, 30000, None, M,
            "Timeout of the controller's requests to brokers.")
    .define("controlled.shutdown.enable", Type.BOOLEAN, True, None, M,
            "Ask the controller to move leadership away before shutting down.")
    .define("auto.leader.rebalance.enable", Type.BOOLEAN, True, None, H,
            "The controller moves leadership back to preferred replicas when a broker leads too few.")
    .define("leader.imbalance.check.interval.seconds", Type.LONG, 300, Range.at_least(1), H,
            "How often the controller checks the leader imbalance (the first check 5 s after it starts).")
    .define("leader.imbalance.per.broker.percentage", Type.INT, 10, Range.at_least(0), H,
            "The share of a broker's preferred partitions led elsewhere above which the controller rebalances.")
    .define("controlled.shutdown.max.retries", Type.INT, 3, None, M,
            "How many times a broker asks the controller before it shuts down without a controlled "
            "shutdown (a failed request, or partitions it still leads, count as a failed attempt).")
    .define("controlled.shutdown.retry.backoff.ms", Type.LONG, 5000, None, M,
            "How long a broker waits after a failed controlled-shutdown attempt before the next, "
            "to let the cluster's state settle (a follower catching up, a controller elected).")
    # KRaft (beyond the book: chapter 12). The controller.quorum.* settings are added below.
    .define("process.roles", Type.LIST, [], ValidList.in_(BROKER_ROLE, CONTROLLER_ROLE), H,
            "The roles that this process plays: 'broker', 'controller', or 'broker,controller' if it is "
            "both. Only for clusters in KRaft (Kafka Raft) mode; leave it empty (the default) for a "
            "ZooKeeper cluster, as chapters 1-11 run.")
    .define("node.id", Type.INT, EMPTY_NODE_ID, None, H,
            "The node id of the roles this process plays when process.roles is not empty; required in "
            "KRaft mode, where broker.id takes its value.")
    .define("controller.listener.names", Type.STRING, None, None, H,
            "Comma-separated names of the controller's listeners; required in KRaft mode. A broker "
            "talks to the controller quorum over the first. A ZooKeeper-mode broker leaves it unset.")
    .define("initial.broker.registration.timeout.ms", Type.INT, 60000, None, M,
            "How long a KRaft broker waits for its first registration with the controller quorum before "
            "it gives up and exits.")
    .define("broker.heartbeat.interval.ms", Type.INT, 2000, None, M,
            "How often a KRaft broker sends the controller a heartbeat.")
    .define("broker.session.timeout.ms", Type.INT, 9000, None, M,
            "How long a KRaft broker's lease lasts without a heartbeat; after it the controller fences "
            "the broker.")
    .define("metadata.log.dir", Type.STRING, None, None, H,
            "Where a KRaft node keeps the metadata log (__cluster_metadata); if unset, in the first "
            "directory of log.dirs.")
    .define("metadata.log.max.record.bytes.between.snapshots", Type.LONG, 20 * 1024 * 1024, Range.at_least(1),
            H, "The bytes of metadata log between the latest snapshot and the high watermark after which "
            "a new snapshot is written.")
    .define("metadata.max.idle.interval.ms", Type.INT, 500, Range.at_least(0), L,
            "How often the active controller writes a no-op record to the metadata log when nothing "
            "else is written; 0 writes none.")
    # Group coordinator
    .define("group.min.session.timeout.ms", Type.INT, 6000, None, M,
            "The shortest session timeout a group member may ask for.")
    .define("group.max.session.timeout.ms", Type.INT, 300000, None, M,
            "The longest session timeout a group member may ask for.")
    .define("group.initial.rebalance.delay.ms", Type.INT, 3000, None, M,
            "How long the first rebalance of an empty group waits for more members to join "
            "(Kafka 0.11's setting and default).")
    # Offset management
    .define("offset.metadata.max.bytes", Type.INT, 4096, None, H,
            "The longest metadata string an offset commit may carry.")
    .define("offsets.topic.num.partitions", Type.INT, 50, Range.at_least(1), H,
            "Partitions of __consumer_offsets (never change it once the topic exists).")
    .define("offsets.topic.replication.factor", Type.SHORT, 3, Range.at_least(1), H,
            "Replication factor of __consumer_offsets; created with fewer while fewer brokers are alive.")
    .define("offsets.topic.segment.bytes", Type.INT, 104857600, Range.at_least(1), H,
            "Segment size of __consumer_offsets, small so that compaction and loading stay fast.")
    .define("offsets.retention.minutes", Type.INT, 24 * 60, Range.at_least(1), H,
            "Committed offsets older than this are deleted.")
    .define("offsets.retention.check.interval.ms", Type.LONG, 600000, Range.at_least(1), H,
            "How often expired offsets are looked for.")
    .define("offsets.commit.timeout.ms", Type.INT, 5000, Range.at_least(1), H,
            "How long an offset commit waits for the replicas of __consumer_offsets.")
    .define("offsets.commit.required.acks", Type.SHORT, -1, None, H,
            "The acks an offset commit waits for: -1 (every in-sync replica) or 1 (the leader).")
    # Transaction management (Kafka 0.11, KIP-98)
    .define("transaction.state.log.num.partitions", Type.INT, 50, Range.at_least(1), H,
            "Partitions of __transaction_state (never change it once the topic exists).")
    .define("transaction.state.log.replication.factor", Type.SHORT, 3, Range.at_least(1), H,
            "Replication factor of __transaction_state; created with fewer while fewer brokers are alive.")
    .define("transaction.state.log.min.isr", Type.INT, 2, Range.at_least(1), H,
            "min.insync.replicas of __transaction_state.")
    .define("transaction.state.log.segment.bytes", Type.INT, 104857600, Range.at_least(1), H,
            "Segment size of __transaction_state, small so that compaction and loading stay fast.")
    .define("transaction.max.timeout.ms", Type.INT, 900000, Range.at_least(1), H,
            "The longest transaction timeout a producer may ask for (InitProducerId); a longer one "
            "gets INVALID_TRANSACTION_TIMEOUT.")
    .define("transactional.id.expiration.ms", Type.INT, 604800000, Range.at_least(1), H,
            "How long a transactional id may stay idle before its coordinator forgets it.")
    .define("transaction.abort.timed.out.transaction.cleanup.interval.ms", Type.INT, 60000,
            Range.at_least(1), L, "How often the coordinator aborts transactions open beyond their timeout.")
    .define("transaction.remove.expired.transaction.cleanup.interval.ms", Type.INT, 3600000,
            Range.at_least(1), L, "How often the coordinator removes expired transactional ids.")
    .define("transaction.partition.verification.enable", Type.BOOLEAN, False, None, L,
            "A partition leader asks the transaction coordinator whether a "
            "partition is in the producer's transaction before its first transactional write there, so "
            "that a write delayed past the transaction's end is refused (INVALID_TXN_STATE) instead of "
            "opening a transaction no marker closes. Kafka's default is true; kafka_lite's false keeps "
            "Kafka 0.11's protocol.")
    # Metrics reporters (the request.metrics.reporter.* settings are added below)
    .define("metric.reporters", Type.LIST, [], None, L,
            "Classes (package.module:Class) told of every completed request, e.g. "
            "kafka_lite.server.metrics_reporter:RequestMetricsTopicReporter.")
    # Replication
    .define("inter.broker.protocol.version", Type.STRING, LATEST_VERSION.version, ApiVersionValidator(), M,
            "The protocol brokers speak among themselves, for rolling upgrades: from 0.11.0-IV2 a "
            "follower truncates by leader epoch, below it to its high watermark.")
    .define("log.message.format.version", Type.STRING, None, ApiVersionValidator(), M,
            "The record format logs write unless a topic sets message.format.version (0.10.0: message "
            "sets v1; 0.11.0: record batches v2); at most inter.broker.protocol.version, its default.")
    # Authorization (Kafka 0.10.2-0.11's SimpleAclAuthorizer; security/auth/)
    .define("authorizer.class.name", Type.STRING, "", None, L,
            "The authorizer: empty for none (every request allowed), or SimpleAclAuthorizer "
            "(also kafka.security.auth.SimpleAclAuthorizer, or any package.module:Class).")
    .define("super.users", Type.STRING, "", None, L,
            "Principals allowed everything, separated by ';' (e.g. User:admin;User:ANONYMOUS).")
    .define("allow.everyone.if.no.acl.found", Type.BOOLEAN, False, None, L,
            "Whether a resource with no ACL at all is open to everyone (else only to super users).")
)  # fmt: skip
# --8<-- [end:config_def]

# The broker-level defaults of the topic settings (log.segment.bytes, ...), with the topic's default
# values and checks: one definition each, shared with LogConfig.
for _topic_name, _server_name in SERVER_DEFAULT_NAMES.items():
    if _server_name in CONFIG_DEF.keys:
        continue
    _key = LOG_CONFIG_DEF.keys[_topic_name]
    _default = (
        None if _server_name in ("log.retention.ms", "log.roll.ms", "log.roll.jitter.ms") else _key.default
    )
    CONFIG_DEF.define(_server_name, _key.type, _default, _key.validator, _key.importance, _key.doc)

# The request metrics reporter's settings (request.metrics.reporter.*): defined with the reporter,
# as Cruise Control's reporter defines its own, and set in server.properties like any broker setting.
for _key in REPORTER_CONFIG_DEF.keys.values():
    CONFIG_DEF.define(_key.name, _key.type, _key.default, _key.validator, _key.importance, _key.doc)

# The Raft quorum's settings (controller.quorum.voters, controller.quorum.election.timeout.ms, ...):
# defined with RaftConfig, as Kafka's KafkaConfig takes RaftConfig's names, defaults and docs.
for _key in RAFT_CONFIG_DEF.keys.values():
    CONFIG_DEF.define(_key.name, _key.type, _key.default, _key.validator, _key.importance, _key.doc)

# Per-listener settings (``listener.name.sasl_plaintext.plain.sasl.jaas.config``) are not in CONFIG_DEF:
# their names are built from the listener's and the mechanism's. KafkaConfig keeps them aside.
LISTENER_PREFIX = "listener.name."


class KafkaConfig:
    """Parsed broker settings; ``values`` holds every setting by its dotted name."""

    def __init__(self, props: Mapping[str, Any]) -> None:
        self.values = CONFIG_DEF.parse(populate_synonyms(props), allow_unknown=True)
        self.listener_configs = {k: v for k, v in props.items() if k.startswith(LISTENER_PREFIX)}
        # what the file set, as given: DescribeConfigs tells a broker's own setting from a default
        self.originals = {k: v for k, v in props.items() if k in CONFIG_DEF.keys}
        unknown = sorted(
            k for k in self.values if k not in CONFIG_DEF.keys and k not in self.listener_configs
        )
        if unknown:
            log.info("Ignoring settings kafka_lite does not implement: %s", ", ".join(unknown))
            for k in unknown:
                del self.values[k]
        v = self.values
        self._kraft_settings()
        self.broker_id: int = v["broker.id"]
        self.zk_connect: str | None = v["zookeeper.connect"]  # None in KRaft mode
        self._listener_settings()
        self.sasl_jaas_entries_by_listener = self._sasl_server_contexts()
        # the inter-broker listener's entries if it is a SASL one, else the first SASL listener's
        self.sasl_jaas_entries = self.sasl_jaas_entries_by_listener.get(
            self.inter_broker_listener_name, next(iter(self.sasl_jaas_entries_by_listener.values()), {})
        )
        dirs = v["log.dirs"] or v["log.dir"]
        self.log_dirs = [Path(d.strip()) for d in dirs.split(",") if d.strip()]
        if not self.log_dirs:
            raise ConfigException(f"Invalid value {dirs!r} for configuration log.dirs: no directory given")
        self.max_connections_per_ip_overrides = _parse_overrides(v["max.connections.per.ip.overrides"])
        # A follower's fetch held up to replica.fetch.wait.max.ms must neither time out nor make the
        # follower look stuck (Kafka's own checks).
        for limit in ("replica.socket.timeout.ms", "replica.lag.time.max.ms"):
            if v["replica.fetch.wait.max.ms"] > v[limit]:
                raise ConfigException(
                    f"replica.fetch.wait.max.ms ({v['replica.fetch.wait.max.ms']}) should always be at most "
                    f"{limit} ({v[limit]}) to prevent unnecessary follower timeouts and ISR changes"
                )
        # Kafka's checks of the group and offset settings
        if v["group.max.session.timeout.ms"] < v["group.min.session.timeout.ms"]:
            raise ConfigException(
                f"group.max.session.timeout.ms ({v['group.max.session.timeout.ms']}) must be at least "
                f"group.min.session.timeout.ms ({v['group.min.session.timeout.ms']})"
            )
        acks, rf = v["offsets.commit.required.acks"], v["offsets.topic.replication.factor"]
        if not -1 <= acks <= rf:
            raise ConfigException(
                f"offsets.commit.required.acks ({acks}) must be greater or equal -1 and less or equal to "
                f"offsets.topic.replication.factor ({rf})"
            )
        if acks not in (-1, 1):
            # Kafka also takes 0 and 2..RF; the group manager waits for the leader or for the ISR
            raise ConfigException(
                f"offsets.commit.required.acks ({acks}): kafka_lite takes -1 (every in-sync replica) or 1 "
                f"(the leader only)"
            )
        self.inter_broker_protocol_version: ApiVersion = api_version(v["inter.broker.protocol.version"])
        # Kafka's default is the latest version, which an older inter.broker.protocol.version then
        # refuses; here the format follows the protocol version unless set, so one setting suffices.
        fmt = v["log.message.format.version"] or self.inter_broker_protocol_version.version
        self.log_message_format_version: ApiVersion = api_version(fmt)
        if self.log_message_format_version > self.inter_broker_protocol_version:
            # a follower on the older protocol could not read the records the leader would write
            raise ConfigException(
                f"log.message.format.version {fmt} cannot be used when inter.broker.protocol.version is "
                f"set to {v['inter.broker.protocol.version']}"
            )
        # Kafka checks a class list when it parses the config: a bad name stops the broker at once.
        self.metric_reporter_classes = load_reporter_classes(v["metric.reporters"])
        # The authorizer's class, found now: a bad name stops the broker before it serves anyone.
        self.authorizer_class = (
            authorizer_class(v["authorizer.class.name"]) if v["authorizer.class.name"] else None
        )
        cls = self.authorizer_class
        if (
            self.process_roles
            and cls is not None
            and f"{cls.__module__}:{cls.__qualname__}" != STANDARD_AUTHORIZER
        ):
            # Kafka refuses it too, as its AclAuthorizer finds no zookeeper.connect; this says why.
            raise ConfigException(
                "authorizer.class.name", v["authorizer.class.name"],
                "a KRaft node has no ZooKeeper to keep ACLs in: its ACLs are metadata records, which "
                "org.apache.kafka.metadata.authorizer.StandardAuthorizer reads (KIP-801)",
            )  # fmt: skip

    # -- KRaft (chapter 12) -----------------------------------------------------------------------------

    # --8<-- [start:kraft]
    def _kraft_settings(self) -> None:
        """``process.roles`` and the ids, with the first checks of Kafka 3.3's ``validateValues``: which
        of ``node.id``, ``broker.id`` and ``zookeeper.connect`` each mode needs. The checks that need
        the listeners are ``_validate_kraft``'s."""
        v = self.values
        self.process_roles: frozenset[str] = _parse_process_roles(v["process.roles"])
        self.node_id: int = v["node.id"]
        self.controller_listener_names: list[str] = [
            name.strip().upper()  # normalised, as kafka_lite's listener names are
            for name in (v["controller.listener.names"] or "").split(",")
            if name.strip()
        ]
        self.quorum_voters: list[str] = v[QUORUM_VOTERS_CONFIG]
        self.initial_registration_timeout_ms: int = v["initial.broker.registration.timeout.ms"]
        self.broker_heartbeat_interval_ms: int = v["broker.heartbeat.interval.ms"]
        self.broker_session_timeout_ms: int = v["broker.session.timeout.ms"]
        self.metadata_snapshot_max_new_record_bytes: int = v[
            "metadata.log.max.record.bytes.between.snapshots"
        ]
        self.metadata_max_idle_interval_ms: int = v["metadata.max.idle.interval.ms"]
        # populate_synonyms gave each id the other's value when only one was set
        both_unset = v["broker.id"] is None and self.node_id == EMPTY_NODE_ID
        if not both_unset and self.node_id != v["broker.id"]:
            raise ConfigException("You must set `node.id` to the same value as `broker.id`.")
        if self.requires_zookeeper:
            if v["zookeeper.connect"] is None:
                raise ConfigException(
                    "Missing required configuration 'zookeeper.connect', which has no default value "
                    "(a ZooKeeper-mode broker needs it; a KRaft node sets process.roles instead)."
                )
            if v["broker.id"] is None:
                raise ConfigException(
                    "Missing required configuration 'broker.id' (kafka_lite does not generate ids)."
                )
            if self.controller_listener_names:
                raise ConfigException(
                    f"controller.listener.names must be empty when not running in KRaft mode: "
                    f"{self.controller_listener_names}"
                )
        elif self.node_id < 0:
            raise ConfigException(
                "Missing configuration `node.id` which is required when `process.roles` is defined (i.e. "
                "when running in KRaft mode)."
            )

    def _validate_kraft(self) -> None:
        """Kafka 3.3's rules for a KRaft node's voters and listeners, by its roles. A controller is a
        voter and listens on a controller listener; a broker is not a voter, reaches the controllers
        over ``controller.listener.names``' first name, and never advertises a controller listener
        to clients (they talk to brokers only)."""
        roles = self.process_roles
        if not roles:
            return
        voters = parse_voter_connections(self.quorum_voters)
        if not voters:
            raise ConfigException(
                f"If using process.roles, {QUORUM_VOTERS_CONFIG} must contain a parseable set of voters."
            )
        controller_names = self.controller_listener_names
        listener_names = {e.listener_name for e in self.listeners}
        voter_ids = "{" + ", ".join(str(i) for i in sorted(voters)) + "}"
        if BROKER_ROLE in roles and {e.listener_name for e in self.advertised_listeners} & set(
            controller_names
        ):
            raise ConfigException(
                "The advertised.listeners config must not contain KRaft controller listeners from "
                "controller.listener.names when process.roles contains the broker role because Kafka "
                "clients that send requests via advertised listeners do not send requests to KRaft "
                "controllers -- they only send requests to KRaft brokers."
            )
        if roles == {BROKER_ROLE}:
            if self.node_id in voters:
                raise ConfigException(
                    f"If process.roles contains just the 'broker' role, the node id {self.node_id} must not "
                    f"be included in the set of voters {QUORUM_VOTERS_CONFIG}={voter_ids}"
                )
            if not controller_names:
                raise ConfigException(
                    "controller.listener.names must contain at least one value when running KRaft with "
                    "just the broker role"
                )
            if self.controller_listeners:
                raise ConfigException(
                    "controller.listener.names must not contain a value appearing in the 'listeners' "
                    "configuration when running KRaft with just the broker role"
                )
            for name in controller_names:
                if name not in self.listener_security_protocol_map:
                    raise ConfigException(
                        f"Controller listener with name {name} defined in controller.listener.names not "
                        f"found in listener.security.protocol.map (an explicit security mapping for each "
                        f"controller listener is required if listener.security.protocol.map is non-empty, "
                        f"or if there are security protocols other than PLAINTEXT in use)"
                    )
            if len(controller_names) > 1:
                log.warning(
                    "controller.listener.names has multiple entries; only the first will be used since "
                    "process.roles=broker: %s", controller_names,
                )  # fmt: skip
            return
        if roles == {CONTROLLER_ROLE} and self.advertised_listeners:
            source = "advertised.listeners" if self.values["advertised.listeners"] else "listeners"
            raise ConfigException(
                f"The {source} config must only contain KRaft controller listeners from "
                f"controller.listener.names when process.roles=controller"
            )
        if self.node_id not in voters:
            raise ConfigException(
                f"If process.roles contains the 'controller' role, the node id {self.node_id} must be "
                f"included in the set of voters {QUORUM_VOTERS_CONFIG}={voter_ids}"
            )
        if not self.controller_listeners:
            raise ConfigException(
                "controller.listener.names must contain at least one value appearing in the 'listeners' "
                "configuration when running the KRaft controller role"
            )
        if not set(controller_names) <= listener_names:
            raise ConfigException(
                "controller.listener.names must only contain values appearing in the 'listeners' "
                "configuration when running the KRaft controller role"
            )

    # --8<-- [end:kraft]

    def _effective_listener_security_protocol_map(self) -> dict[str, str]:
        """``listener.security.protocol.map``, to which a KRaft node that leaves it unset and uses
        neither SASL nor TLS adds ``NAME:PLAINTEXT`` for each controller listener name, so that
        ``CONTROLLER://:9093`` needs no mapping (Kafka 3.3's ``effectiveListenerSecurityProtocolMap``)."""
        protocols = _protocol_map(self.values["listener.security.protocol.map"])
        if self.requires_zookeeper or "listener.security.protocol.map" in self.originals:
            return protocols
        listener_names = [
            item.strip().partition("://")[0].upper()
            for item in self.values["listeners"].split(",")
            if item.strip()
        ]
        secure = {"SSL", "SASL_SSL", "SASL_PLAINTEXT"}
        if secure & {*self.controller_listener_names, *listener_names}:
            return protocols
        return {**protocols, **{name: "PLAINTEXT" for name in self.controller_listener_names}}

    @property
    def requires_zookeeper(self) -> bool:
        """ZooKeeper mode: no process roles (Kafka's ``requiresZookeeper``)."""
        return not self.process_roles

    @property
    def uses_self_managed_quorum(self) -> bool:
        """KRaft mode: the metadata lives in the controllers' Raft quorum, not in ZooKeeper."""
        return bool(self.process_roles)

    @property
    def is_kraft_co_resident_mode(self) -> bool:
        """One process both broker and controller (``process.roles=broker,controller``)."""
        return self.process_roles == {BROKER_ROLE, CONTROLLER_ROLE}

    @property
    def controller_listeners(self) -> list[EndPoint]:
        """The listeners named in ``controller.listener.names``: where a controller takes requests."""
        return [e for e in self.listeners if e.listener_name in self.controller_listener_names]

    @property
    def metadata_log_dir(self) -> Path:
        """Where the metadata log lives: ``metadata.log.dir``, else the first of ``log.dirs``."""
        configured = self.values["metadata.log.dir"]
        return Path(configured) if configured else self.log_dirs[0]

    # -- security ------------------------------------------------------------------------------------------

    # --8<-- [start:listeners]
    def _listener_settings(self) -> None:
        """``listeners``, ``advertised.listeners``, ``listener.security.protocol.map`` and the
        inter-broker listener, checked as Kafka 0.10.2's ``KafkaConfig`` checks them (KIP-103).
        ``security_protocol``, ``host`` and ``port`` are the first listener's."""
        v = self.values
        self.listener_security_protocol_map = self._effective_listener_security_protocol_map()
        self.listeners = _parse_listeners("listeners", v["listeners"], self.listener_security_protocol_map)
        advertised = v["advertised.listeners"]
        self.advertised_listeners = (
            _parse_listeners("advertised.listeners", advertised, self.listener_security_protocol_map)
            if advertised
            else [e for e in self.listeners if e.listener_name not in self.controller_listener_names]
        )
        first = self.listeners[0]
        self.security_protocol, self.host, self.port = first.security_protocol, first.host, first.port
        self.inter_broker_listener_name, self.inter_broker_security_protocol = self._inter_broker_listener()
        self._validate_kraft()
        if self.process_roles and BROKER_ROLE not in self.process_roles:
            return  # a KRaft controller alone serves no clients and no replicas: it advertises nothing
        if not self.advertised_listeners:
            raise ConfigException(
                "There must be at least one advertised listener. Perhaps all listeners appear in "
                "controller.listener.names?"
            )
        names = [e.listener_name for e in self.listeners]
        advertised_names = [e.listener_name for e in self.advertised_listeners]
        if not set(advertised_names) <= set(names):
            raise ConfigException(
                f"advertised.listeners listener names must be equal to or a subset of the ones defined in "
                f"listeners. Found {','.join(advertised_names)}. The valid options based on the current "
                f"configuration are {','.join(names)}"
            )
        if self.inter_broker_listener_name not in advertised_names:
            if v["inter.broker.listener.name"] is None:  # named by security.inter.broker.protocol
                raise ConfigException(
                    f"security.inter.broker.protocol ({self.inter_broker_security_protocol}) must be the "
                    f"protocol of a listener in listeners ({v['listeners']}), or set inter.broker.listener.name"
                )
            raise ConfigException(
                f"inter.broker.listener.name must be a listener name defined in advertised.listeners. The "
                f"valid options based on currently configured listeners are {','.join(advertised_names)}"
            )

    def _inter_broker_listener(self) -> tuple[str, str]:
        """Kafka's ``getInterBrokerListenerNameAndSecurityProtocol``: ``inter.broker.listener.name``
        with its protocol from the map, or else the listener named by ``security.inter.broker.protocol``
        (a protocol is its own listener name by default). Setting both is refused."""
        name = self.values["inter.broker.listener.name"]
        if name is None:
            protocol = self.values["security.inter.broker.protocol"]
            return protocol, protocol
        if "security.inter.broker.protocol" in self.originals:
            raise ConfigException(
                "Only one of inter.broker.listener.name and security.inter.broker.protocol should be set."
            )
        name = name.strip().upper()  # Kafka's ListenerName.normalised
        protocol = self.listener_security_protocol_map.get(name)
        if protocol is None:
            raise ConfigException(
                f"Listener with name {name} defined in inter.broker.listener.name not found in "
                f"listener.security.protocol.map."
            )
        return name, protocol

    # --8<-- [end:listeners]

    # -- security ------------------------------------------------------------------------------------------

    def _sasl_server_contexts(self) -> dict[str, dict[str, list[AppConfigurationEntry]]]:
        """The JAAS entries of each enabled mechanism on each SASL listener, by listener name, read now
        so that a missing or malformed JAAS configuration stops the broker at start-up with a message
        naming it. Each listener reads its own ``listener.name.<name>.<mechanism>.sasl.jaas.config``.
        A KRaft node refuses SCRAM: Kafka 3.3 keeps SCRAM credentials in ZooKeeper only, and nothing
        writes a ``UserScramCredentialRecord`` before Kafka 3.5."""
        v = self.values
        sasl_listeners = [e.listener_name for e in self.listeners if e.security_protocol == SASL_PLAINTEXT]
        if not sasl_listeners:
            return {}  # a real server.properties may name GSSAPI for a listener it does not have
        mechanisms = v["sasl.enabled.mechanisms"]
        if not mechanisms or any(m not in SASL_MECHANISMS for m in mechanisms):
            raise ConfigException(
                "sasl.enabled.mechanisms",
                ",".join(mechanisms),
                f"kafka_lite's SASL mechanisms are {', '.join(SASL_MECHANISMS)}",
            )
        inter_broker_sasl = self.inter_broker_security_protocol == SASL_PLAINTEXT
        if (
            inter_broker_sasl
            and v["sasl.mechanism.inter.broker.protocol"] not in v["sasl.enabled.mechanisms"]
        ):
            raise ConfigException(
                f"sasl.mechanism.inter.broker.protocol ({v['sasl.mechanism.inter.broker.protocol']}) must be "
                f"included in sasl.enabled.mechanisms ({','.join(v['sasl.enabled.mechanisms'])})"
            )
        if self.process_roles and SCRAM_SHA_256 in mechanisms:
            # Ours, not Kafka's: a 3.3 KRaft node starts with SCRAM enabled, and refuses every login.
            raise ConfigException(
                "sasl.enabled.mechanisms", ",".join(mechanisms),
                f"{SCRAM_SHA_256} on a KRaft node: Kafka 3.3 keeps SCRAM credentials in ZooKeeper only "
                "(UserScramCredentialRecord has no writer before Kafka 3.5's KIP-554), so no login "
                "could succeed; use PLAIN",
            )  # fmt: skip
        configs = {**self.listener_configs, JAVA_LOGIN_CONFIG_PARAM: v[JAVA_LOGIN_CONFIG_PARAM]}
        contexts = {
            name: {mechanism: load_server_context(name, mechanism, configs) for mechanism in mechanisms}
            for name in sasl_listeners
        }
        if inter_broker_sasl:
            mechanism = v["sasl.mechanism.inter.broker.protocol"]
            options = {k for e in contexts[self.inter_broker_listener_name][mechanism] for k in e.options}
            if not {"username", "password"} <= options:
                raise ConfigException(
                    f"security.inter.broker.protocol is SASL_PLAINTEXT: the JAAS entry of the listener's "
                    f'{mechanism} mechanism needs the broker\'s own username="..." and password="..."'
                )
        return contexts

    def controller_login(self) -> tuple[str, str, str] | None:
        """How this node logs in to the controllers (the Raft client to the other voters, a broker's
        heartbeats and forwarded requests), as ``(mechanism, username, password)``, or None on a
        PLAINTEXT controller listener: the first of ``controller.listener.names``, its protocol
        from ``listener.security.protocol.map``, and on SASL_PLAINTEXT
        ``sasl.mechanism.controller.protocol`` with the ``username``/``password`` of that listener's
        JAAS entry (Kafka 3.3's ``RaftManager`` and ``BrokerToControllerChannelManager`` log in
        alike). A broker-only node reads the entry though it does not listen there. SCRAM is refused:
        a Kafka 3.3 controller has no SCRAM credentials (Kafka 3.5 writes them into the metadata log)."""
        name = self.controller_listener_names[0]
        if self.listener_security_protocol_map.get(name, "PLAINTEXT") != SASL_PLAINTEXT:
            return None
        mechanism = self.values["sasl.mechanism.controller.protocol"]
        if mechanism == SCRAM_SHA_256:
            raise ConfigException(
                "sasl.mechanism.controller.protocol", mechanism,
                "a KRaft controller has no SCRAM credentials before Kafka 3.5: use PLAIN",
            )  # fmt: skip
        configs = {**self.listener_configs, JAVA_LOGIN_CONFIG_PARAM: self.values[JAVA_LOGIN_CONFIG_PARAM]}
        entries = load_server_context(name, mechanism, configs)
        username, password = _own_login(entries)
        if username is None or password is None:
            raise ConfigException(
                f"listener.name.{name.lower()}.{mechanism.lower()}.sasl.jaas.config",
                None,
                f"the controller listener {name} is SASL_PLAINTEXT: its {mechanism} JAAS entry needs this "
                'node\'s own username="..." and password="..." to log in to the controllers',
            )
        return mechanism, username, password

    def controller_channel_builder(self) -> ChannelBuilder:
        """The channel builder of this node's connections to the controllers (``controller_login``)."""
        login = self.controller_login()
        if login is None:
            return PLAINTEXT_CHANNEL_BUILDER
        return client_channel_builder(SASL_PLAINTEXT, *login, f"node-{self.node_id}")

    def inter_broker_channel_builder(self) -> ChannelBuilder:
        """How this broker's own connections to brokers authenticate: the inter-broker listener's
        protocol with ``sasl.mechanism.inter.broker.protocol``, as the ``username``/``password`` options
        of that listener's JAAS entry for the mechanism (Kafka's broker logs in with its KafkaServer entry)."""
        v = self.values
        if self.inter_broker_security_protocol != SASL_PLAINTEXT:
            return PLAINTEXT_CHANNEL_BUILDER
        mechanism = v["sasl.mechanism.inter.broker.protocol"]
        entries = self.sasl_jaas_entries_by_listener[self.inter_broker_listener_name][mechanism]
        username, password = _own_login(entries)
        return client_channel_builder(
            SASL_PLAINTEXT, mechanism, username, password, f"broker-{self.broker_id}"
        )

    def __getitem__(self, name: str) -> Any:
        return self.values[name]

    @property
    def uses_leader_epochs_for_truncation(self) -> bool:
        """Whether this broker's followers truncate by leader epoch (``inter.broker.protocol.version``
        at least ``0.11.0-IV2``, KIP-101) rather than to their high watermark; the leader stamps and
        records epochs either way. Kafka's ``ReplicaFetcherThread.shouldSendLeaderEpochRequest``."""
        return uses_leader_epochs_for_truncation(self.inter_broker_protocol_version)

    def log_retention_ms(self) -> int:
        v = self.values
        if v["log.retention.ms"] is not None:
            return v["log.retention.ms"]
        if v["log.retention.minutes"] is not None:
            return v["log.retention.minutes"] * 60_000
        return v["log.retention.hours"] * 3_600_000

    def log_config_props(self) -> dict[str, Any]:
        """The broker's log defaults under their broker names, resolved (for ``LogConfig.from_broker``)."""
        props = {
            name: self.values[name]
            for name in SERVER_DEFAULT_NAMES.values()
            if self.values.get(name) is not None
        }
        props["log.retention.ms"] = self.log_retention_ms()
        props["log.message.format.version"] = self.log_message_format_version.version
        props.setdefault("log.roll.ms", self.values["log.roll.hours"] * 3_600_000)
        props.setdefault("log.roll.jitter.ms", self.values["log.roll.jitter.hours"] * 3_600_000)
        return props

    @classmethod
    def from_file(cls, path: str | Path, overrides: Mapping[str, Any] | None = None) -> KafkaConfig:
        return cls({**read_properties(path), **(overrides or {})})


def populate_synonyms(props: Mapping[str, Any]) -> dict[str, Any]:
    """``broker.id`` and ``node.id`` name one thing: when only one is set, the other takes its value
    (Kafka 3.3's ``KafkaConfig.populateSynonyms``). A ``node.id`` of -1 means unset."""
    output = dict(props)
    broker_key = next((k for k in output if k.replace("_", ".") == "broker.id"), None)
    node_key = next((k for k in output if k.replace("_", ".") == "node.id"), None)
    if broker_key is None and node_key is not None and str(output[node_key]).strip() != str(EMPTY_NODE_ID):
        output["broker.id"] = output[node_key]
    elif broker_key is not None and node_key is None:
        output["node.id"] = output[broker_key]
    return output


def _parse_process_roles(roles: list[str]) -> frozenset[str]:
    """``process.roles`` as a set; ``ValidList`` has refused unknown roles, so only duplicates remain."""
    if len(set(roles)) != len(roles):
        raise ConfigException(f"Duplicate role names found in `process.roles`: {roles}")
    return frozenset(roles)


def _protocol_map(value: str) -> dict[str, str]:
    """``listener.security.protocol.map``: ``NAME:PROTOCOL`` pairs, each name once (Kafka's ``getMap``)."""
    protocols: dict[str, str] = {}
    for pair in (p.strip() for p in value.split(",") if p.strip()):
        name, sep, protocol = pair.partition(":")
        name, protocol = name.strip().upper(), protocol.strip().upper()
        if not sep or not name:
            raise ConfigException(
                f"Invalid value {value!r} for configuration listener.security.protocol.map: "
                f"expected NAME:PROTOCOL pairs, found {pair!r}"
            )
        if name in protocols:
            raise ConfigException(
                f"Invalid value {value!r} for configuration listener.security.protocol.map: "
                f"listener name {name} appears more than once"
            )
        if protocol not in _SECURITY_PROTOCOLS:
            raise ConfigException(
                f"Invalid security protocol `{protocol}` defined in listener.security.protocol.map"
            )
        protocols[name] = protocol
    return protocols


def _parse_listeners(setting: str, value: str, protocol_map: Mapping[str, str]) -> list[EndPoint]:
    """Kafka's ``CoreUtils.listenerListToEndPoints``: comma-separated ``NAME://host:port``, each
    name and each non-zero port once. An empty host binds every interface (``0.0.0.0``)."""
    endpoints = []
    for item in (i.strip() for i in value.split(",") if i.strip()):
        try:
            endpoint = EndPoint.create(item, protocol_map)
        except KafkaException as e:
            raise ConfigException(
                f"Error creating broker listeners from {value!r} ({setting}): {e}; each is NAME://host:port "
                f"and a NAME that is not a protocol needs an entry in listener.security.protocol.map"
            ) from None
        if endpoint.security_protocol not in _LISTENER_PROTOCOLS:
            raise ConfigException(
                f"Invalid value {item!r} for configuration {setting}: {endpoint.listener_name} is "
                f"{endpoint.security_protocol}, and kafka_lite's listeners are PLAINTEXT://host:port or "
                f"SASL_PLAINTEXT://host:port (or names mapped to those protocols)"
            )
        if not 0 <= endpoint.port <= 65535:
            raise ConfigException(
                f"Invalid value {item!r} for configuration {setting}: port {endpoint.port} is not in 0..65535"
            )
        endpoints.append(dataclasses.replace(endpoint, host=endpoint.host or "0.0.0.0"))
    if not endpoints:
        raise ConfigException(f"Invalid value {value!r} for configuration {setting}: no listener given")
    names = [e.listener_name for e in endpoints]
    if len(set(names)) != len(names):
        raise ConfigException(f"Each listener must have a different name, {setting}: {value}")
    ports = [e.port for e in endpoints if e.port != 0]  # port 0 picks a free port, different each time
    if len(set(ports)) != len(ports):
        raise ConfigException(f"Each listener must have a different port, {setting}: {value}")
    return endpoints


def _parse_overrides(value: str) -> dict[str, int]:
    result = {}
    for item in filter(None, (s.strip() for s in value.split(","))):
        host, _, count = item.rpartition(":")
        if not host or not count.isdigit():
            raise ConfigException(
                f"Invalid value {value!r} for configuration max.connections.per.ip.overrides: "
                f"'{item}' is not host:count"
            )
        result[host] = int(count)
    return result


def read_properties(path: str | Path) -> dict[str, str]:
    """A Java ``.properties`` file as a dict (``key=value`` or ``key: value``; ``#``/``!`` comments)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigException(f"Config file {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigException(f"Cannot read config file {path}: {e}") from None
    props: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line[0] in "#!":
            continue
        m = re.match(r"^([^=:\s]+)\s*[=:\s]\s*(.*)$", line)
        if m is None:
            raise ConfigException(f"{path}:{number}: cannot read {raw!r} as key=value")
        props[m[1]] = m[2]
    return props


def _own_login(entries: list[AppConfigurationEntry]) -> tuple[str | None, str | None]:
    """The ``username`` and ``password`` options of a listener's JAAS entries: the node's own login
    when it connects out (Kafka's broker logs in with its KafkaServer entry); None where unset."""
    username = next((e.options["username"] for e in entries if "username" in e.options), None)
    password = next((e.options["password"] for e in entries if "password" in e.options), None)
    return username, password
