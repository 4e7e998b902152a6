"""One Jepsen-style run: a cluster, the workload for a while (with faults if asked), the final
phase, the history checked.

No Kafka twin: Jepsen's test runner (``jepsen.core/run!``) as its Kafka tests use it: set the
cluster up, run the generator's workers (and the nemesis) for ``seconds``, heal, run the final
generator, check the history, tear everything down. Beyond the book.

``run(config)`` starts a cluster of its own in ``config.directory`` (ZooKeeper or KRaft mode),
creates the topic (``config.topic``; ``replication.factor`` 3, ``min.insync.replicas`` 2: the
settings under which Kafka promises that an acknowledged write survives one broker's loss), runs
``processes`` worker threads, and writes the history as it goes to ``history.jsonl`` beside the
cluster, so an interrupted run leaves a history that can be checked. Everything it started stops,
also when it is interrupted.
"""

from __future__ import annotations

import contextlib
import random
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.jepsen import FAULTS
from kafka_lite.jepsen.clients import client_factory
from kafka_lite.jepsen.history import HistoryWriter, read_history
from kafka_lite.jepsen.workload import (
    TOPIC,
    FinalTargets,
    Generator,
    Worker,
    WorkloadConfig,
    check_topic,
    run_final_phase,
    run_main_phase,
)

MODES = ("zookeeper", "kraft")
VERIFICATION = "transaction.partition.verification.enable"  # KIP-890 part 1's broker setting
FINAL_LIMIT_S = 120.0  # the final phase gives up after this (Jepsen's is 200 s)
PHASES = ("cluster", "workload", "final", "check")


@dataclass(frozen=True)
class RunConfig:
    mode: str = "zookeeper"
    faults: frozenset = frozenset()
    seconds: float = 60.0
    seed: int = 0
    txn: bool = False
    client: str = "kafka_lite"
    directory: Path = Path(".kafka-lite-jepsen")
    processes: int = 4
    workload: WorkloadConfig | None = None  # the generator's settings; derived from the above if None
    final_limit_s: float = FINAL_LIMIT_S
    nemesis_interval_s: float = 10.0  # the nemesis's quiet time before each fault (``Nemesis``'s interval)
    topic: str = TOPIC  # created by the run: a cluster that runs again needs a new one each time
    # Both parts of KIP-890: the brokers verify a transactional write's partition with the coordinator
    # (``transaction.partition.verification.enable``) and kafka_lite's producers bump their epoch at
    # every transaction's end (``transaction.version=2``). A cluster given to ``run`` brings the first.
    kip_890: bool = False

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, not {self.mode!r}")
        unknown = set(self.faults) - set(FAULTS)
        if unknown:
            raise ValueError(f"unknown faults {sorted(unknown)}: choose from {', '.join(FAULTS)}")
        if self.seconds <= 0 or self.final_limit_s <= 0:
            raise ValueError(f"seconds and final_limit_s must be positive, not {self.seconds} and "
                             f"{self.final_limit_s}")  # fmt: skip
        if self.processes < 1:
            raise ValueError(f"processes must be at least 1, not {self.processes}")
        if self.nemesis_interval_s < 0:
            raise ValueError(f"nemesis_interval_s must be at least 0, not {self.nemesis_interval_s}")
        check_topic(self.topic)
        ours = (self.txn, self.client, self.topic, self.transaction_version)
        if self.workload is not None and (
            self.workload.txn, self.workload.client, self.workload.topic, self.workload.transaction_version
        ) != ours:  # fmt: skip
            raise ValueError("the workload's txn, client, topic and transaction version must be the run's")

    @property
    def transaction_version(self) -> int:
        return 2 if self.kip_890 else 0

    def workload_config(self) -> WorkloadConfig:
        return self.workload or WorkloadConfig(txn=self.txn, client=self.client, topic=self.topic,
                                               transaction_version=self.transaction_version)  # fmt: skip


@dataclass
class RunResult:
    history_path: Path
    ops: int  # client operations invoked
    faults: int  # faults the nemesis carried out
    result: dict | None  # the checker's result map; None when the checker is not there


class _PlainCluster:
    """The cluster without faults, with the faulty cluster's methods (``nemesis.FaultyCluster``):
    what a run uses while no nemesis is installed."""

    def __init__(self, directory: Path, *, kraft: bool, brokers: int = 3, time: Time = SYSTEM) -> None:
        self.directory = Path(directory)
        self.kraft = kraft
        self.brokers = brokers
        self.state: dict | None = None

    def start(self) -> None:
        from kafka_lite.testing import durability_checker

        self.state = durability_checker.start(self.directory, self.brokers, kraft=self.kraft)

    def stop(self) -> None:
        from kafka_lite.cli.cluster import load_state, stop_cluster

        if self.state is not None:
            stop_cluster(load_state(self.directory) or self.state)
            self.state = None

    @property
    def bootstrap_servers(self) -> str:
        from kafka_lite.cli.cluster import bootstrap_servers

        return bootstrap_servers(self.state)

    @property
    def node_ids(self) -> list[int]:
        return [b["id"] for b in self.state["brokers"]]

    def create_topic(self, topic: str, partitions: int, replication_factor: int = 3,
                     configs: dict | None = None) -> None:  # fmt: skip
        from kafka_lite.clients.admin import KafkaAdminClient, NewTopic

        admin = KafkaAdminClient(bootstrap_servers=self.bootstrap_servers)
        try:
            admin.create_topics([NewTopic(topic, partitions, replication_factor, configs=configs or {})])
        finally:
            admin.close()

    def __enter__(self) -> _PlainCluster:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def _cluster(config: RunConfig, time: Time):
    """The faulty cluster when the nemesis is installed (and faults asked for), else the plain one."""
    try:
        from kafka_lite.jepsen.nemesis import FaultyCluster
    except ImportError:
        if config.faults or config.kip_890:
            raise ValueError(
                "faults and kip_890 need kafka_lite.jepsen.nemesis, which is not installed"
            ) from None
        return _PlainCluster(config.directory / "cluster", kraft=config.mode == "kraft", time=time)
    overrides = [f"{VERIFICATION}=true"] if config.kip_890 else []
    return FaultyCluster(
        config.directory / "cluster", kraft=config.mode == "kraft", time=time, overrides=overrides
    )


def _check(history_path: Path, config: RunConfig) -> dict | None:
    try:
        from kafka_lite.jepsen.checker import check
    except ImportError:
        return None
    subscribe = "subscribe" in config.workload_config().sub_via
    return check(read_history(history_path), ww_deps=False, subscribe=subscribe, txn=config.txn)


def run(
    config: RunConfig,
    progress: Callable[[str, float], None] | None = None,
    time: Time = SYSTEM,
    cluster=None,
) -> RunResult:
    """Run the workload against a new cluster and check its history (see the module's docstring).
    ``progress(phase, fraction)`` hears of each phase (``PHASES``) as it goes. Given ``cluster``, a
    started ``FaultyCluster`` of ``config.mode``, the run uses it instead and leaves it running (a
    test's cluster, shared with other tests); its topic (``config.topic``) must not exist yet."""
    report = progress or (lambda phase, fraction: None)
    if cluster is not None and cluster.kraft != (config.mode == "kraft"):
        raise ValueError(f"the cluster given is not a {config.mode} mode cluster")
    workload = config.workload_config()
    config.directory.mkdir(parents=True, exist_ok=True)
    history_path = config.directory / "history.jsonl"
    rng = random.Random(config.seed)
    stopping = threading.Event()
    nemesis = None
    faults_done = 0
    report("cluster", 0.0)
    owned = _cluster(config, time) if cluster is None else contextlib.nullcontext(cluster)
    with owned as cluster, HistoryWriter(history_path, time) as history:
        cluster.create_topic(workload.topic, workload.partitions, 3, {"min.insync.replicas": "2"})
        cluster.groups.add(workload.consumer_group)
        report("cluster", 1.0)
        open_client = client_factory(workload, cluster.bootstrap_servers, time)
        # Each worker draws from its own generator of random numbers, seeded from the run's, so
        # that one thread's timing does not change what another's intentional aborts are.
        workers = [
            Worker(i, config.processes, open_client, history, workload, random.Random(rng.random()))
            for i in range(config.processes)
        ]
        generator = Generator(workload, random.Random(rng.random()), config.processes)
        try:
            if config.faults:
                from kafka_lite.jepsen.nemesis import Nemesis

                nemesis = Nemesis(cluster, set(config.faults), history, random.Random(rng.random()), time,
                                  interval_s=config.nemesis_interval_s)  # fmt: skip
                nemesis.start()
            start_ns = time.nanoseconds()
            end_ns = start_ns + int(config.seconds * 1e9)
            _in_threads(workers, lambda w: run_main_phase(w, generator, time, start_ns, end_ns, stopping),
                        lambda: report("workload", min(1.0, (time.nanoseconds() - start_ns) / (end_ns - start_ns))),
                        stopping)  # fmt: skip
            if nemesis is not None:
                nemesis, healed = None, nemesis
                healed.stop()  # heals everything before the final phase reads
                faults_done = healed.faults_done
            report("final", 0.0)
            targets = FinalTargets(generator.offsets)
            final_end_ns = time.nanoseconds() + int(config.final_limit_s * 1e9)
            keys = generator.keys_used()
            for worker in workers:
                worker.open_client = client_factory(workload, cluster.bootstrap_servers, time, reader=True)
            _in_threads(workers, lambda w: run_final_phase(w, keys, targets, time, final_end_ns, stopping, w.rng),
                        lambda: report("final", 1.0 - len(targets.remaining) / max(1, len(generator.offsets))),
                        stopping)  # fmt: skip
        finally:
            stopping.set()
            if nemesis is not None:
                nemesis.stop()
            for worker in workers:
                worker.close()
    report("check", 0.0)
    result = _check(history_path, config)
    report("check", 1.0)
    ops = sum(1 for op in read_history(history_path) if op.is_invoke and op.process != "nemesis")
    return RunResult(history_path, ops, faults_done, result)


def _in_threads(workers: list[Worker], body: Callable[[Worker], None], tick: Callable[[], None],
                stopping: threading.Event) -> None:  # fmt: skip
    """Run ``body`` for each worker in a thread of its own; call ``tick`` about twice a second until
    all are done. An interrupt (Ctrl-C) stops them: each finishes its operation and returns."""
    failures: list[BaseException] = []

    def guarded(worker: Worker) -> None:
        try:
            body(worker)
        except BaseException as e:  # a worker's bug ends the run, and is raised in the caller's thread
            failures.append(e)
            stopping.set()

    threads = [threading.Thread(target=guarded, args=(w,), name=f"jepsen-worker-{i}", daemon=True)
               for i, w in enumerate(workers)]  # fmt: skip
    for thread in threads:
        thread.start()
    try:
        for thread in threads:
            while thread.is_alive():
                thread.join(0.5)
                tick()
    except BaseException:
        stopping.set()
        for thread in threads:
            thread.join()
        raise
    if failures:
        raise RuntimeError(f"a worker failed: {failures[0]!r}") from failures[0]
