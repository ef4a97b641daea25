# sendledger — every target bootstraps .venv from the requirements files when it is missing
# or older than them, so a fresh clone needs nothing but python3.11 and node.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export JSII_SILENCE_WARNING_UNTESTED_NODE_VERSION := 1
# The CI machine has Node 20 (end of life for jsii); the banner is noise there. Deploy with Node >= 22.
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION := 20
CONTEXT ?=

.PHONY: run test check system-packages lint imports typecheck unit pytest synth cfn-lint checkov bench bench-docs soak reliability-report mutation deploy clean openapi

$(STAMP): requirements.txt requirements-dev.txt client/pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements-dev.txt
	$(BIN)/pip install --quiet --no-deps -e client  # the sendledger command: .venv/bin/sendledger
	touch $(STAMP)

run: $(STAMP)  ## the local stack: moto server, HTTP API, scheduler, simulator
	$(BIN)/python -m local

test: system-packages lint imports typecheck synth cfn-lint checkov pytest  ## everything CI runs

# The fast tier (docs/testing.md): the unit tests (in-memory fakes) and the integration tests
# (in-process moto): no CDK synthesis, no local stack, no browser. Under 90 s on two cores.
# tests/providers mirrors the slices; its pure tests (parsers, signatures, simulations, the
# provider-name grep) belong to the fast tier too, its moto worlds to `make pytest`.
PURE_PROVIDER_TESTS := tests/providers/test_provider_names.py $(wildcard \
	$(foreach name,simulation events parsing signature rules test_outcomes,tests/providers/*/test_$(name).py))
# The API fuzzer's pytest plugin serves the reliability suite alone: not loaded here (its ~150
# modules cost each worker about a second of its start).
NO_FUZZER := -p no:schemathesis
check: $(STAMP)  ## the fast loop: unit + integration tests
	$(BIN)/pytest -q -n 2 $(NO_FUZZER) tests/unit tests/integration $(PURE_PROVIDER_TESTS)

# Debian's chromium + chromium-driver for the console's browser test: installed when missing, or a
# stop in the first seconds with the command to run (SENDLEDGER_SKIP_BROWSER=1 needs neither).
system-packages:
	scripts/system-packages.sh

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# The layers of functions/sendledger and who may import whom: pyproject.toml's import contracts
# (scripts/import_layers.py counts the upward imports and cycles).
imports: $(STAMP)
	cd functions && ../$(BIN)/lint-imports --no-cache ../pyproject.toml

# Python 3.11 here and in CI; the Lambda runtime is Python 3.14, so the Lambda code is checked for both.
typecheck: $(STAMP)
	$(BIN)/mypy functions infra client
	$(BIN)/mypy --python-version 3.14 functions

unit: $(STAMP)  ## the unit tests alone: the domain, the use cases on in-memory fakes, the import contract
	$(BIN)/pytest -q -n 2 $(NO_FUZZER) tests/unit

pytest: $(STAMP)  ## every test (CDK, the local stack, the browser, the reliability suite): the last step of make test
	$(BIN)/pytest -q -n 2

openapi: $(STAMP)  ## regenerate the committed OpenAPI document
	$(BIN)/python -c "import sys; sys.path.insert(0, 'functions'); from sendledger.handlers.api_routes import openapi_json; open('docs/openapi.json', 'w').write(openapi_json() + '\\n')"

synth: $(STAMP)  ## python app.py writes cdk.out/ (cdk-nag runs as part of synthesis)
	rm -f cdk.out/*.template.json
	$(BIN)/python app.py $(CONTEXT)

cfn-lint: synth
	$(BIN)/cfn-lint cdk.out/*.template.json

# checkov has its own venv: it pins boto3/botocore 1.35, which would downgrade the project's SDK.
CHECKOV_STAMP := .venv-checkov/.installed
$(CHECKOV_STAMP): requirements-checkov.txt
	test -x .venv-checkov/bin/python || $(PYTHON) -m venv .venv-checkov
	.venv-checkov/bin/pip install --quiet -r requirements-checkov.txt
	touch $(CHECKOV_STAMP)

checkov: synth $(CHECKOV_STAMP)  ## checkov's CloudFormation checks; skips are in each resource's metadata
	BC_SKIP_MAPPING=TRUE .venv-checkov/bin/checkov -f cdk.out/*.template.json --framework cloudformation \
		--quiet --compact --skip-download

bench: $(STAMP)  ## every figure and bar (exits non-zero when a bar is not met); copies figures into docs/
	$(BIN)/python -m benchmarks

bench-docs: $(STAMP)  ## copy the committed benchmarks/results.json's figures into docs/benchmarks.md
	$(BIN)/python -m benchmarks.docs_figures

# The state machine's 1,000 examples run as 10 processes of 100 (see test_stateful_ledger.py),
# all under the seed of this run, which the first line prints.
SOAK_JOBS ?= 2

soak: $(STAMP)  ## the reliability suite in soak mode, then 1,000 state-machine examples (10 runs of 100, SOAK_JOBS at a time)
	@seed=$${SENDLEDGER_HYPOTHESIS_SEED:-$$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}; echo "soak seed $$seed"; \
	mkdir -p build/soak; \
	SENDLEDGER_SOAK=1 SENDLEDGER_HYPOTHESIS_SEED=$$seed $(BIN)/pytest -q -n 2 tests/reliability \
		--ignore=tests/reliability/test_stateful_ledger.py || exit $$?; \
	printf '%s\n' 0 1 2 3 4 5 6 7 8 9 | xargs -P $(SOAK_JOBS) -I{} sh -c \
		'SENDLEDGER_SOAK=1 SENDLEDGER_SOAK_RUN={} SENDLEDGER_HYPOTHESIS_SEED='$$seed' \
		$(BIN)/pytest -q tests/reliability/test_stateful_ledger.py > build/soak/run-{}.log 2>&1 \
		&& echo "soak run {}: passed" || { echo "soak run {}: FAILED, see build/soak/run-{}.log"; exit 255; }'

reliability-report: $(STAMP)
	$(BIN)/python -m tests.reliability.report

mutation: $(STAMP)  ## mutmut over the domain + named sabotages vs the reliability suite: docs/reliability.md
	$(BIN)/python -m tests.reliability.mutation_report

deploy: synth  ## needs AWS credentials: bootstraps the account/region (a no-op once done), then deploys; docs/operations.md "Deploy"
	npx --yes aws-cdk@2 bootstrap --app cdk.out
	npx --yes aws-cdk@2 deploy --app cdk.out --all

clean:  ## keeps build/ (the arm64 dependency cache)
	rm -rf cdk.out .pytest_cache .mypy_cache .ruff_cache
