# kafka_lite's commands. The README's two commands are `make run` and `make test`; both set up
# whatever is missing first (scripts/bootstrap is idempotent and takes about a second when all is there).
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
PYTEST := $(PY) -m pytest
export NO_MKDOCS_2_WARNING := 1
export SPARK_LOCAL_IP := 127.0.0.1
# Python keeps its bytecode cache (__pycache__), even where the environment turns it off: a test run
# starts hundreds of Python processes (brokers, lab gradings, notebook kernels, Spark's Python
# workers), and without the cache each one compiles every module it imports again, a second or more
# of CPU apiece.
unexport PYTHONDONTWRITEBYTECODE
# pytest-xdist workers: one more than the cores (`make test WORKERS=4` to choose). A worker whose test
# waits on a cluster (a session expiring, an election, a rebalance) leaves its core idle, and the
# extra worker's tests take it. The tests that share a cluster, a Spark session or the docs site
# carry an xdist_group mark and run on one worker.
WORKERS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 2) + 1 )))

.PHONY: bootstrap run test quick lint unit integration compat spark notebooks docs browser labs docs-serve clean bench

bootstrap:
	@scripts/bootstrap

run: bootstrap
	$(VENV)/bin/kafka-lite demo

# PYTEST_ARGS: more of pytest's options, as `make test PYTEST_ARGS="-p randomly"` (shuffled order).
test: bootstrap lint
	$(PYTEST) -n $(WORKERS) --dist loadgroup --durations=30 $(PYTEST_ARGS)

# The inner loop: lint and every test that needs no cluster, Spark, browser or docs site (the unit
# tier), on every core. `make test` is still what CI runs.
quick: bootstrap lint
	$(PYTEST) -m unit -n $(WORKERS) --durations=10

lint: bootstrap
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

# One tier at a time: `make unit`, `make docs`, ... A tier with no tests yet (pytest's exit code 5)
# says so and succeeds, so the targets exist before the layers they test.
unit integration compat spark notebooks docs browser labs: bootstrap
	@$(PYTEST) -m $@; rc=$$?; if [ $$rc = 5 ]; then echo "no $@ tests yet"; else exit $$rc; fi

# Every benchmark in its short form, one after another (about a quarter of an hour on two cores), then
# the benchmark page's "At a glance" table and chart from that run (benchmarks/README.md).
bench: bootstrap
	$(PY) benchmarks/run_all.py

docs-serve: bootstrap
	$(VENV)/bin/kafka-lite docs serve

clean:
	rm -rf site .cache .pytest_cache .hypothesis kafka-lite-labs
