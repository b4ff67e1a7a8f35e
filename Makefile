# acpwire: one entry point for every task. `make help` lists them.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
CODE   := codegen generated adapter tests bench examples

.DEFAULT_GOAL := help
.PHONY: help install run demo regen check-generated schema-update lint type pytest test bench hermes-venv gptme-venv agents-python check-agents interop-deps clean

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-16s %s\n", $$1, $$2}'

# Its output goes to stderr: `make run` starts with it, and its stdout is the protocol's.
$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV) >&2
	@echo "make: installing acpwire and its dependencies into $(VENV)" >&2
	@$(BIN)/python -m pip install --quiet --upgrade pip >&2
	@$(BIN)/python -m pip install --quiet -e '.[backend,dev]' >&2
	@touch $(STAMP)

# Bytecode for the editable install, as pip writes it for a wheel: with
# PYTHONDONTWRITEBYTECODE set, every start would otherwise compile every module.
install: $(STAMP) ## Create or refresh the virtualenv (.venv) with every dependency
	@$(BIN)/python -m compileall -q adapter generated >/dev/null

run: install ## Start the stdio ACP backend (what an editor launches)
	@exec $(BIN)/acpwire

demo: $(STAMP) ## Replay a whole editor conversation offline against a loopback model
	$(BIN)/python -m acpwire.cli.demo

regen: $(STAMP) ## Rebuild generated/ from schema/
	$(BIN)/python -m codegen

check-generated: $(STAMP) ## Fail when generated/ differs from what `make regen` produces
	$(BIN)/python -m codegen --check

schema-update: $(STAMP) ## Vendor a newer published schema (VERSION=x.y.z), regenerate, print the protocol changelog
	$(BIN)/python -m codegen.update $(if $(VERSION),--version $(VERSION),)

lint: $(STAMP) ## ruff check + format check
	$(BIN)/ruff check $(CODE)
	$(BIN)/ruff format --check $(CODE)

type: $(STAMP) ## mypy --strict on all code, generated included
	$(BIN)/mypy $(CODE)

pytest: $(STAMP) ## Only the test suite
	$(BIN)/pytest -q

test: check-generated lint type pytest ## Everything CI runs: generated/ current, lint, types, tests

bench: $(STAMP) ## Benchmarks side by side with the anchors; writes docs/BENCHMARKS.md
	$(BIN)/python -m bench

HERMES_VENV := bench/.venvs/hermes-acpwire

hermes-venv: ## A virtualenv with the real Hermes agent and this checkout (for its end-to-end tests)
	@test -x $(HERMES_VENV)/bin/python || $(PYTHON) -m venv $(HERMES_VENV)
	$(HERMES_VENV)/bin/python -m pip install --quiet 'hermes-agent[acp]==0.19.0'
	$(HERMES_VENV)/bin/python -m pip install --quiet -e '.[backend]'
	$(HERMES_VENV)/bin/python -c "import acpwire.hermes.modules as h; assert h.available(); print('hermes venv ready')"

gptme-venv: $(STAMP) ## A virtualenv with gptme-acp 0.35.1 (for the tap's real-agent tests)
	$(BIN)/python -m bench.agents.real --install-only --only gptme

agents-python: ## Python 3.13 from Debian's source package, for the agents that need >= 3.12
	bench/agents/build_python.sh

check-agents: $(STAMP) hermes-venv agents-python ## Install the six real ACP agents, run each behind the tap and `acpwire check` (bench/results/agents/)
	$(BIN)/python -m bench.agents.real --install
	$(BIN)/python -m bench.agents.real --check

ACPX_VERSION := 0.19.1
ACPX_PREFIX  := tests/interop/.npm

interop-deps: ## acpx (npm, pinned) for tests/interop, into tests/interop/.npm
	npm install --prefix $(ACPX_PREFIX) --no-audit --no-fund --ignore-scripts --loglevel=error acpx@$(ACPX_VERSION)

clean: ## Remove the virtualenv and caches
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
