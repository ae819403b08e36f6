# Parley: `make run` and `make test` are all a fresh Debian machine needs.
SHELL := /bin/bash
SWIFT ?= swift
BUILD_FLAGS ?=
PARLEY_BIN = .build/release/parley
# glib's .pc files carry -pthread, which SwiftPM drops with "warning: prohibited flag(s)" on every
# build of CVips and CPoppler: build, test and bench first write copies of vips.pc and poppler-glib.pc
# without it here (scripts/pkgconfig-without-pthread.sh says why that is safe), and every swift
# command below finds them first.
PKGCONFIG_DIR = $(CURDIR)/.build/pkgconfig
export PKG_CONFIG_PATH := $(PKGCONFIG_DIR)$(if $(PKG_CONFIG_PATH),:$(PKG_CONFIG_PATH))

# Build and run-time libraries (Debian 12 package names).
RUN_PACKAGES = pkg-config libsqlite3-dev libcmark-gfm-dev libcmark-gfm-extensions-dev \
               libmicrohttpd-dev libcurl4-openssl-dev libsodium-dev nettle-dev libvips-dev libpoppler-glib-dev libyajl-dev \
               libsimdjson-dev libpq-dev libhiredis-dev ca-certificates
# What the tests need on top: headless Chromium and its WebDriver for the page's browser tests, and
# python3-venv for the venvs of the Python test suites (OpenAI client, OpenAPI, browser).
# jansson: only parley-chunk-bench reads with it (measured against simdjson), built with the tests too.
# postgresql-15: the server scripts/postgres-test-server.sh runs for the PostgreSQL store's tests and bench.
# redis-server: ParleyRedisTests run against one (scripts/redis-test-server.sh, started and stopped here).
TEST_PACKAGES = $(RUN_PACKAGES) libjansson-dev procps chromium chromium-driver python3-venv postgresql-15 redis-server nginx-light
BENCH_PACKAGES = $(RUN_PACKAGES) libjansson-dev nginx-light wrk procps postgresql-15 redis-server
# `make docker-check`: the Dockerfile's stages without a Docker engine (debootstrap, chroot, namespaces).
DOCKER_CHECK_PACKAGES = debootstrap python3 python3-yaml util-linux iproute2 coreutils

.PHONY: run cluster test build bench docker-check deps test-deps bench-deps docker-check-deps clean

# Install only what dpkg says is missing; `apt-get update` once first because a fresh
# machine has stale package lists.
define install_missing
	@missing=""; for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi
endef

deps:
	$(call install_missing,$(RUN_PACKAGES))

test-deps:
	$(call install_missing,$(TEST_PACKAGES))

bench-deps:
	$(call install_missing,$(BENCH_PACKAGES))

docker-check-deps:
	$(call install_missing,$(DOCKER_CHECK_PACKAGES))

build: deps
	scripts/pkgconfig-without-pthread.sh $(PKGCONFIG_DIR)
	$(SWIFT) build -c release --product parley $(BUILD_FLAGS)
	$(SWIFT) build -c release --product parley-media-worker $(BUILD_FLAGS)

run: build
	$(PARLEY_BIN)

# Several nodes on this machine (issue 24; README "Running several nodes"): a throwaway PostgreSQL 15
# and Redis 7, three nodes and nginx round-robin in front at http://127.0.0.1:$(CLUSTER_PORT), in a
# temp dir, until Ctrl-C stops them all (scripts/cluster.sh). The environment's PARLEY_* settings go to
# every node (a provider, PARLEY_AUTH…); with none, the demo model answers.
CLUSTER_PORT ?= 8080
CLUSTER_PACKAGES = $(RUN_PACKAGES) postgresql-15 redis-server nginx-light
cluster: build
	$(call install_missing,$(CLUSTER_PACKAGES))
	@dir=$$(mktemp -d /tmp/parley-cluster.XXXXXX); \
	trap 'scripts/cluster.sh stop "$$dir"; rm -rf "$$dir"' EXIT; trap 'exit 0' INT TERM; \
	PARLEY_BIN=$(PARLEY_BIN) CLUSTER_PORT=$(CLUSTER_PORT) scripts/cluster.sh start "$$dir" 3 && \
	echo "Ctrl-C stops the cluster" && while :; do sleep 3600; done

# Time limits (seconds): one Swift test, all Swift tests, the browser tests. A run past a limit is
# killed and fails with the name of the test that hung (Tests/run-swift-tests.sh); XCTest on Linux
# has no per-test time allowance of its own.
PARLEY_TEST_TIME_LIMIT ?= 120
PARLEY_SUITE_TIME_LIMIT ?= 900
BROWSER_TIME_LIMIT ?= 900
OPENAI_TIME_LIMIT ?= 300
# ParleyMCPTests talk to real MCP servers made with the official Python SDK (`mcp` on PyPI,
# Tests/mcp/test_server.py), from a venv made here; the tests find it through PARLEY_MCP_PYTHON and fail
# (never skip) without it.
MCP_VENV = .build/mcp-venv
MCP_PACKAGES = mcp
# The OpenAI-compatible endpoint is tested with the official `openai` package (PyPI) as the client, its
# answers checked against OpenAI's schemas with `jsonschema`, and LangChain's `langchain-openai` as a
# second client, from a venv made here.
OPENAI_VENV = .build/openai-venv
# docs/openapi.json is checked against a live server: real answers validated with `jsonschema`, then
# schemathesis (PyPI) fuzzes it for OPENAPI_FUZZ_SECONDS in local and in team mode (no 5xx, no schema violation, no hang), from a
# venv made here.
OPENAPI_VENV = .build/openapi-venv
OPENAPI_FUZZ_SECONDS ?= 60
# Every A2UI message a real server sends and stores (issue 22) is validated against the official A2UI v0.9
# JSON schemas (Tests/a2ui/schemas, copied from the spec repository: no PyPI package ships them as JSON)
# with `jsonschema`, from a venv made here.
A2UI_VENV = .build/a2ui-venv
A2UI_TIME_LIMIT ?= 120
OPENAPI_TIME_LIMIT ?= 300
# The Swift tests run beside a throwaway PostgreSQL 15 and redis-server (scripts/with-test-services.sh:
# loopback, free ports, fresh directories in /tmp, stopped afterwards); tests that need one fail without it
# (PARLEY_REQUIRE_POSTGRES=1, PARLEY_REQUIRE_REDIS=1). The store suite then runs a second time on
# PostgreSQL (PARLEY_TEST_STORE_ENGINE=postgres), each test in a database of its own.
# The page's browser tests drive Debian's chromium with selenium and pytest, and check accessibility
# with axe-core, from a venv made here; Tests/browser/run.sh run by hand makes the same one. Both pins
# decide which rules judge the page: axe-selenium-python 2.1.6 (the newest PyPI serves) injects the
# script, but its own axe-core is 3.1.1 from 2018; axe-playwright-python 0.1.8 is installed without
# its dependencies (playwright) only for the axe-core 4.12.1 axe.min.js it ships, which
# Tests/browser/axe_check.py injects. A venv without that exact version is brought up to date.
BROWSER_VENV = .build/browser-venv
BROWSER_PACKAGES = selenium pytest axe-selenium-python==2.1.6
BROWSER_AXE_CORE = axe-playwright-python==0.1.8
BROWSER_VENV_OK = import selenium, pytest, axe_selenium_python, importlib.metadata as m; \
  assert "axe-playwright-python==" + m.version("axe-playwright-python") == "$(BROWSER_AXE_CORE)"

test: test-deps
	scripts/pkgconfig-without-pthread.sh $(PKGCONFIG_DIR)
	SWIFT=$(SWIFT) python3 Tests/structure/check_structure.py
	$(SWIFT) build --build-tests $(BUILD_FLAGS)
	@if ! $(MCP_VENV)/bin/python -c 'import mcp' 2>/dev/null; then \
	  python3 -m venv $(MCP_VENV) && $(MCP_VENV)/bin/pip install -q $(MCP_PACKAGES); \
	fi
	PARLEY_MCP_PYTHON=$(CURDIR)/$(MCP_VENV)/bin/python \
	PARLEY_TEST_TIME_LIMIT=$(PARLEY_TEST_TIME_LIMIT) PARLEY_SUITE_TIME_LIMIT=$(PARLEY_SUITE_TIME_LIMIT) \
	  SWIFT=$(SWIFT) scripts/with-test-services.sh Tests/run-swift-tests.sh $(BUILD_FLAGS)
	PARLEY_TEST_STORE_ENGINE=postgres \
	PARLEY_TEST_TIME_LIMIT=$(PARLEY_TEST_TIME_LIMIT) PARLEY_SUITE_TIME_LIMIT=$(PARLEY_SUITE_TIME_LIMIT) \
	  SWIFT=$(SWIFT) scripts/with-test-services.sh Tests/run-swift-tests.sh $(BUILD_FLAGS) --filter ParleyStoreTests
	@if ! $(OPENAI_VENV)/bin/python -c 'import openai, pytest, jsonschema, langchain_openai' 2>/dev/null; then \
	  python3 -m venv $(OPENAI_VENV) && $(OPENAI_VENV)/bin/pip install -q openai pytest jsonschema langchain-openai; \
	fi
	PARLEY_BIN=.build/debug/parley PYTHON=$(OPENAI_VENV)/bin/python timeout --kill-after=10 $(OPENAI_TIME_LIMIT) \
	  Tests/openai/run.sh \
	  || { status=$$?; [ $$status -ne 124 ] || echo "openai client tests: still running after $(OPENAI_TIME_LIMIT) s (OPENAI_TIME_LIMIT): stopped" >&2; exit $$status; }
	@if ! $(OPENAPI_VENV)/bin/python -c 'import schemathesis, jsonschema, pytest' 2>/dev/null; then \
	  python3 -m venv $(OPENAPI_VENV) && $(OPENAPI_VENV)/bin/pip install -q schemathesis jsonschema pytest; \
	fi
	PARLEY_BIN=.build/debug/parley PYTHON=$(OPENAPI_VENV)/bin/python OPENAPI_FUZZ_SECONDS=$(OPENAPI_FUZZ_SECONDS) \
	  timeout --kill-after=10 $(OPENAPI_TIME_LIMIT) Tests/openapi/run.sh \
	  || { status=$$?; [ $$status -ne 124 ] || echo "openapi tests: still running after $(OPENAPI_TIME_LIMIT) s (OPENAPI_TIME_LIMIT): stopped" >&2; exit $$status; }
	@if ! $(A2UI_VENV)/bin/python -c 'import jsonschema, referencing, pytest' 2>/dev/null; then \
	  python3 -m venv $(A2UI_VENV) && $(A2UI_VENV)/bin/pip install -q jsonschema pytest; \
	fi
	PARLEY_BIN=.build/debug/parley PYTHON=$(A2UI_VENV)/bin/python timeout --kill-after=10 $(A2UI_TIME_LIMIT) \
	  Tests/a2ui/run.sh \
	  || { status=$$?; [ $$status -ne 124 ] || echo "a2ui schema tests: still running after $(A2UI_TIME_LIMIT) s (A2UI_TIME_LIMIT): stopped" >&2; exit $$status; }
	@if ! $(BROWSER_VENV)/bin/python -c '$(BROWSER_VENV_OK)' 2>/dev/null; then \
	  python3 -m venv $(BROWSER_VENV) && $(BROWSER_VENV)/bin/pip install -q $(BROWSER_PACKAGES) \
	  && $(BROWSER_VENV)/bin/pip install -q --no-deps $(BROWSER_AXE_CORE); \
	fi
	PARLEY_BIN=.build/debug/parley PYTHON=$(BROWSER_VENV)/bin/python timeout --kill-after=10 $(BROWSER_TIME_LIMIT) \
	  Tests/browser/run.sh \
	  || { status=$$?; [ $$status -ne 124 ] || echo "browser tests: still running after $(BROWSER_TIME_LIMIT) s (BROWSER_TIME_LIMIT): stopped" >&2; exit $$status; }

# Parley's relay against nginx relaying the same stream, issue 10's scale figures, sign-in and search
# timing, and the time Parley adds around an MCP tool call (bench/run.sh); prints the tables kept in README.md. The load client runs on uvloop from a venv made here (pip, PyPI); if that
# cannot be installed the bench says so and runs on plain asyncio.
BENCH_VENV = .build/bench-venv
bench: bench-deps
	scripts/pkgconfig-without-pthread.sh $(PKGCONFIG_DIR)
	$(SWIFT) build -c release $(BUILD_FLAGS)
	.build/release/parley-markdown-bench | tee bench/markdown-results.md
	.build/release/parley-media-bench | tee bench/media-results.md
	.build/release/parley-a2ui-bench | tee bench/a2ui-results.md
	.build/release/parley-chunk-bench | tee bench/chunk-results.md
	@if [ ! -x $(BENCH_VENV)/bin/python ] || ! $(BENCH_VENV)/bin/python -c 'import uvloop' 2>/dev/null; then \
	  { python3 -m venv $(BENCH_VENV) && $(BENCH_VENV)/bin/pip install -q uvloop; } \
	  || echo "bench: could not install uvloop in $(BENCH_VENV) (python3-venv, PyPI?): the client runs on plain asyncio"; \
	fi
	@py=python3; [ -x $(BENCH_VENV)/bin/python ] && py=$(BENCH_VENV)/bin/python; \
	PARLEY_BIN=$(PARLEY_BIN) BENCH_PYTHON=$$py bench/run.sh

# Builds the image's two stages as the Dockerfile says (parsed, never repeated here) and runs it:
# page, health, HEALTHCHECK, a demo reply, backup, SIGTERM. Needs root; the runtime root file
# system is cached in .build/docker-check. See .ci/docker_check.py.
docker-check: docker-check-deps
	@SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; $$SUDO python3 .ci/docker_check.py

clean:
	rm -rf .build
