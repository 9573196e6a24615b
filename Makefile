# clientbench: `make run` and `make test` install what is missing, build, and run.
# Everything a fresh Debian 12 machine lacks (Boost headers, the venv, pip and cargo deps) is installed here.

SHELL       := /bin/bash
PYTHON      ?= python3
VENV        := .venv
VPY         := $(VENV)/bin/python
CPP_BUILD   := build/cpp-beast
CARGO       ?= cargo
CMAKE       ?= cmake
SUDO        := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
ARGS        ?=

# stamps: rebuild/reinstall only when the sources changed
STAMPS      := build/.stamps
BEAST_SRC   := $(shell find cpp-beast bindings/beast -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' \
                 -o -name 'CMakeLists.txt' -o -name '*.toml' -o -name '*.py' -o -name '*.pyi' \) \
                 -not -path '*/build/*' -not -path '*/tests/*' 2>/dev/null)
REQWEST_SRC := $(shell find rust-reqwest/src bindings/reqwest -type f \( -name '*.rs' -o -name '*.toml' \
                 -o -name '*.py' -o -name '*.pyi' \) -not -path '*/tests/*' 2>/dev/null) rust-reqwest/Cargo.toml rust-reqwest/build.rs Cargo.lock

.PHONY: help run run-all stability gil sweep soak sanitize test lint build system-deps venv peers rust cpp bindings wheels toxiproxy freethreaded clean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F ':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

run: build bindings  ## set up everything, run the benchmark, print the table (ARGS="..." passes flags)
	$(VPY) -m clientbench run $(ARGS)

run-all: build bindings peers  ## every row: the default set, peers from PyPI, more native rows, the floor
	$(VPY) -m clientbench run --all $(ARGS)

stability: build bindings  ## two consecutive runs, compared: how far each row's median Bench moves between them
	$(VPY) -m clientbench run $(ARGS) --out results
	@readlink -f results/latest > results/.stability-a
	$(VPY) -m clientbench run $(ARGS) --out results
	$(VPY) -m clientbench compare "$$(cat results/.stability-a)" results/latest
	@rm -f results/.stability-a

gil: build bindings toxiproxy  ## the GIL report: serial baseline, GIL held vs released, timeline, generated reading
	$(VPY) -m clientbench gil $(ARGS)

sweep: build bindings toxiproxy  ## one dimension (DIM=workers|payload|delay|connection|rtt)
	$(VPY) -m clientbench sweep $(or $(DIM),workers) $(ARGS)

soak: build bindings  ## 1,000,000 requests through each binding and native client: failures and RSS growth
	$(VPY) -m clientbench soak $(ARGS)

sanitize: system-deps  ## cpp-beast under ASan + UBSan (+ LSan): ctest, the drivers and beast-soak against the server
	$(CARGO) build --release -p clientbench-server
	cpp-beast/sanitize.sh

test: build bindings peers freethreaded wheels toxiproxy  ## set up everything and run every test (cargo, ctest, pytest)
	$(CARGO) test --release -p clientbench-server -p reqwest-bench
	$(CMAKE) --build $(CPP_BUILD) --target beast_client_tests
	ctest --test-dir $(CPP_BUILD) --output-on-failure
	$(VPY) -m pytest -q bindings/beast/tests
	$(VPY) -m pytest -q bindings/reqwest/tests
	$(VPY) -m pytest -q python/tests

# what `make lint` checks: every Python file of ours, and the C++ of the client and its binding
PY_LINT     := python bindings/beast/src bindings/beast/tests bindings/reqwest/python bindings/reqwest/tests
CPP_LINT    := $(shell find cpp-beast bindings/beast/src -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' \) \
                 -not -path '*/build/*' 2>/dev/null)

lint: venv bindings system-deps  ## ruff, mypy, stubtest of both bindings, clippy, rustfmt, clang-format (CI runs it)
	$(VPY) -m ruff check --config python/pyproject.toml $(PY_LINT)
	$(VPY) -m ruff format --check --config python/pyproject.toml $(PY_LINT)
	cd python && ../$(VPY) -m mypy clientbench
	@# stubtest imports the installed packages: run it outside the source tree
	cd build && ../$(VPY) -m mypy.stubtest beast_client._core --allowlist ../bindings/beast/stubtest-allowlist.txt
	cd build && ../$(VPY) -m mypy.stubtest reqwest_client._core
	$(CARGO) clippy --release --workspace --all-targets -- -D warnings
	@# the published reqwest-client wheel is abi3 (PyO3's limited API, CPython >= 3.9): the binding must compile under it
	$(CARGO) clippy --release -p reqwest-client --all-targets --features abi3 -- -D warnings
	$(CARGO) fmt --all --check
	clang-format --dry-run --Werror $(CPP_LINT)

build: system-deps venv rust cpp  ## release builds of the server and the native drivers

system-deps:  ## Boost headers, OpenSSL, CMake, ninja, GoogleTest, clang-format from apt when missing (sudo when not root)
	@missing=""; \
	echo '#include <boost/beast/version.hpp>' | $(CXX) -x c++ -std=c++17 -fsyntax-only - 2>/dev/null \
	  || missing="$$missing libboost1.81-dev"; \
	command -v ninja >/dev/null || missing="$$missing ninja-build"; \
	command -v $(CMAKE) >/dev/null || missing="$$missing cmake"; \
	[ -e /usr/include/gtest/gtest.h ] || missing="$$missing libgtest-dev"; \
	command -v clang-format >/dev/null || missing="$$missing clang-format"; \
	[ -e /usr/include/openssl/ssl.h ] || missing="$$missing libssl-dev"; \
	if [ -n "$$missing" ]; then \
	  echo "installing system packages:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

venv: $(VENV)/.installed  ## .venv with the pinned Python deps and the clientbench runner

$(VENV)/.installed: python/requirements.txt python/pyproject.toml
	@[ -x $(VPY) ] || $(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install -q --upgrade pip
	$(VPY) -m pip install -q -r python/requirements.txt
	$(VPY) -m pip install -q -e python
	@touch $@

peers: $(VENV)/.peers  ## install the peer clients from PyPI (one by one: one that fails is reported, not fatal)

$(VENV)/.peers: python/requirements-peers.txt $(VENV)/.installed
	@failed=""; while read -r req; do \
	  case "$$req" in ""|\#*) continue;; esac; \
	  $(VPY) -m pip install -q "$$req" || failed="$$failed $$req"; \
	done < python/requirements-peers.txt; \
	if [ -n "$$failed" ]; then echo "could not install:$$failed (their rows will be skipped)"; fi
	@touch $@

rust:  ## cargo release build: axum server and reqwest driver
	$(CARGO) build --release -p clientbench-server -p reqwest-bench

cpp: system-deps  ## CMake release build of the Beast client, driver and tests
	@[ -f $(CPP_BUILD)/CMakeCache.txt ] || \
	  $(CMAKE) -S cpp-beast -B $(CPP_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release
	$(CMAKE) --build $(CPP_BUILD)

bindings: $(STAMPS)/beast-client $(STAMPS)/reqwest-client  ## pip install both bindings into .venv (PEP 517)

$(STAMPS)/beast-client: $(VENV)/.installed $(BEAST_SRC) | system-deps
	$(VPY) -m pip install -q ./bindings/beast
	@mkdir -p $(STAMPS) && touch $@

$(STAMPS)/reqwest-client: $(VENV)/.installed $(REQWEST_SRC)
	$(VPY) -m pip install -q ./bindings/reqwest
	@mkdir -p $(STAMPS) && touch $@

# manylinux wheels of both bindings (CPython 3.11; and 3.13t when `make freethreaded` built it) and both sdists:
# scripts/build-{beast,reqwest}-wheel.sh (zig toolchain for glibc 2.28; the static OpenSSL and the cargo
# output are cached in build/wheel) and scripts/build-sdists.sh; python/tests/test_wheels.py checks them
WHEEL_SCRIPTS := scripts/build-beast-wheel.sh scripts/build-reqwest-wheel.sh scripts/build-sdists.sh
FT_PYTHON   := build/cpython/venv-3.13t/bin/python

wheels: $(STAMPS)/wheels  ## manylinux wheels (beast per CPython, reqwest abi3; + 3.13t) and sdists in dist/ (again when dist/ lost them)
	@ls dist/beast_client-*manylinux*.whl dist/reqwest_client-*-abi3-manylinux*.whl \
	    dist/beast_client-*.tar.gz dist/reqwest_client-*.tar.gz >/dev/null 2>&1 \
	  && { [ ! -x $(FT_PYTHON) ] || ls dist/beast_client-*-cp313t-*.whl dist/reqwest_client-*-cp313t-*.whl >/dev/null 2>&1; } || \
	  { rm -f $(STAMPS)/wheels && $(MAKE) --no-print-directory $(STAMPS)/wheels; }

$(STAMPS)/wheels: $(VENV)/.installed $(BEAST_SRC) $(REQWEST_SRC) $(WHEEL_SCRIPTS) | system-deps
	scripts/build-beast-wheel.sh
	scripts/build-reqwest-wheel.sh
	scripts/build-sdists.sh
	@ls -1 dist/beast_client-* dist/reqwest_client-*
	@mkdir -p $(STAMPS) && touch $@

# toxiproxy (network emulation in user space: the kernel here has no netem), pinned; its version is the one
# the runner records (python/clientbench/run/network.py)
TOXIPROXY_VERSION := $(shell sed -n 's/^TOXIPROXY_VERSION = "\(.*\)"/\1/p' python/clientbench/run/network.py)
TOXIPROXY   := build/bin/toxiproxy-server

toxiproxy: $(TOXIPROXY)  ## build toxiproxy (pinned) into build/bin with the Go toolchain

$(TOXIPROXY): python/clientbench/run/network.py
	@command -v go >/dev/null || { echo "make toxiproxy: the Go toolchain (go) is not on PATH; it builds toxiproxy"; exit 1; }
	@mkdir -p build/bin
	GOBIN=$(abspath build/bin) go install github.com/Shopify/toxiproxy/v2/cmd/server@$(TOXIPROXY_VERSION)
	mv build/bin/server $@

freethreaded: $(STAMPS)/freethreaded  ## CPython with and without the GIL (one source, one set of flags) and their venvs

$(STAMPS)/freethreaded: scripts/freethreaded.sh scripts/build-cpython.sh python/requirements-ft.txt $(BEAST_SRC) $(REQWEST_SRC) | system-deps
	scripts/freethreaded.sh
	@mkdir -p $(STAMPS) && touch $@

clean:  ## remove build outputs (keeps results/)
	rm -rf build target dist $(VENV) bindings/beast/build
