# kafka_lite's commands. The README's two commands are `make run` and `make test`; both set up
# whatever is missing first (scripts/bootstrap is idempotent and takes about a second when all is there).
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
PYTEST := $(PY) -m pytest
export NO_MKDOCS_2_WARNING := 1
export SPARK_LOCAL_IP := 127.0.0.1
# pytest-xdist workers: the machine has 2 cores, and most tests wait on I/O or subprocesses.
WORKERS ?= 2

.PHONY: bootstrap run test lint unit integration compat spark notebooks docs browser labs docs-serve clean

bootstrap:
	@scripts/bootstrap

run: bootstrap
	$(VENV)/bin/kafka-lite demo

test: bootstrap lint
	$(PYTEST) -n $(WORKERS) --dist loadgroup --durations=30

lint: bootstrap
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

# One tier at a time: `make unit`, `make docs`, ... A tier with no tests yet (pytest's exit code 5)
# says so and succeeds, so the targets exist before the layers they test.
unit integration compat spark notebooks docs browser labs: bootstrap
	@$(PYTEST) -m $@; rc=$$?; if [ $$rc = 5 ]; then echo "no $@ tests yet"; else exit $$rc; fi

docs-serve: bootstrap
	$(VENV)/bin/kafka-lite docs serve

clean:
	rm -rf site .cache .pytest_cache .hypothesis kafka-lite-labs
