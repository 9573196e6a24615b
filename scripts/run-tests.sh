#!/usr/bin/env bash
# `make test`, once system-deps, the venv and the compiler cache are there: the set-up (`make test-setup`), then
# every suite, in this order, each timed by scripts/step: cargo test, ctest, go vet + go test, node --test,
# pytest bindings, pytest python/tests, and last the aarch64 wheels' test under qemu
# (bindings/tests/test_wheels_aarch64.py).
# Why not one after the other only: the pytest suites mostly wait on sockets and timeouts (one core busy at most,
# often neither), and much of the set-up is single-core (configure scripts, links, pip). So pytest runs each
# suite on PYTEST_WORKERS processes (pytest-xdist), and the aarch64 wheels (`make wheels-aarch64`, a cross build
# that only needs the CPU, with scratch folders of its own) build in the background, from the start of the set-up
# on when their cache is cold (below); their test runs once they are there. The build is stopped on every path
# out of this script.
#
# Environment: MAKE, PYTEST_WORKERS (default 4), CPP_BUILD (default build/cpp-beast), CARGO, CMAKE.
set -euo pipefail
cd "$(dirname "$0")/.."
MAKE=${MAKE:-make}
WORKERS=${PYTEST_WORKERS:-4}
CPP_BUILD=${CPP_BUILD:-build/cpp-beast}
CARGO=${CARGO:-cargo}
CMAKE=${CMAKE:-cmake}
VPY=.venv/bin/python
STEP=scripts/step
AARCH64_LOG=build/wheel/logs/wheels-aarch64.log
PYTEST=("$VPY" -m pytest -q -rs -n "$WORKERS" --durations=10)

BG=""
stop_background() {
    # setsid made the build a process group of its own: stop all of it (make, cargo, zig, rustc)
    [ -z "$BG" ] || kill -TERM -- "-$BG" 2>/dev/null || true
}
trap stop_background EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

start_background() {
    mkdir -p "$(dirname "$AARCH64_LOG")"
    echo "the aarch64 wheels build in the background meanwhile; log: $AARCH64_LOG" >&2
    setsid "$STEP" wheels-aarch64 "$MAKE" --no-print-directory wheels-aarch64 > "$AARCH64_LOG" 2>&1 < /dev/null &
    BG=$!
}
# From a cold per-user cache the aarch64 wheels take about 14 min on 2 cores (their static OpenSSL, zig's libc++
# for arm64, every crate): they start with the set-up, to end with the suites. From a warm one (their OpenSSL
# cached) they take about 4 min, which the suites' idle time covers: they start with the suites, and the set-up
# keeps the whole machine.
CACHE=${CLIENTBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/clientbench}
if ! compgen -G "$CACHE/openssl-*-aarch64-*/lib/libssl.a" > /dev/null; then
    start_background
fi
"$MAKE" --no-print-directory test-setup
[ -n "$BG" ] || start_background
$STEP cargo-test "$CARGO" test --release --workspace
$STEP ctest-build "$CMAKE" --build "$CPP_BUILD"
$STEP ctest ctest --test-dir "$CPP_BUILD" --output-on-failure
$STEP go-test bash -c 'cd examples/go-nethttp && go vet ./... && go test ./...'
$STEP node-test bash -c 'cd examples/node-fetch && node --test'
$STEP pytest-bindings "${PYTEST[@]}" --ignore=bindings/tests/test_wheels_aarch64.py bindings
$STEP pytest-runner "${PYTEST[@]}" python/tests

echo "waiting for the aarch64 wheels ($AARCH64_LOG)" >&2
status=0
wait "$BG" || status=$?
BG=""
grep -h '^\[step\]\|\[build-.*done in' "$AARCH64_LOG" >&2 || true
if [ "$status" != 0 ]; then
    tail -n 30 "$AARCH64_LOG" >&2
    echo "run-tests: the aarch64 wheels failed to build (exit $status; see $AARCH64_LOG)" >&2
    exit 1
fi
$STEP pytest-aarch64 "$VPY" -m pytest -q -rs bindings/tests/test_wheels_aarch64.py
