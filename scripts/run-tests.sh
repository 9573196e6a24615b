#!/usr/bin/env bash
# `make test`, once system-deps, the venv and the compiler cache are there: the set-up (`make -k test-setup`),
# then every suite, in this order, each timed by scripts/step: cargo test, ctest, go vet + go test, node --test,
# pytest bindings, pytest python/tests, the bench gate (scripts/bench-gate), and last the aarch64 wheels' test under qemu
# (bindings/tests/test_wheels_aarch64.py: the bindings' wheels and clientbench-native's).
# Every suite runs whatever the set-up and the suites before it did (a failure stops nothing: each suite
# reports), then a summary says each one's outcome and time, and the exit status is 1 when any failed.
# Why not one after the other only: the pytest suites mostly wait on sockets and timeouts (one core busy at most,
# often neither), and much of the set-up is single-core (configure scripts, links, pip). So pytest runs each
# suite on PYTEST_WORKERS processes (pytest-xdist), and the aarch64 wheels (`make wheels-aarch64
# native-wheel-aarch64`, cross builds that only need the CPU, with scratch folders of their own) build in the
# background, from the start of the set-up on when their cache is cold (below); their test runs once they are
# there. The build is stopped on every path out of this script.
#
# Environment: MAKE, PYTEST_WORKERS (default 4), CPP_BUILD (default build/cpp-beast), CARGO, CMAKE; CI=true or
# CLIENTBENCH_STRICT=1 (strict mode: scripts/common.sh, conftest.py).
# One compound command, read whole before it runs: bash reads a script as it goes, and this one runs for half an
# hour in a tree where files are edited meanwhile (an edit to it once ended a run with a syntax error).
{
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh
MAKE=${MAKE:-make}
WORKERS=${PYTEST_WORKERS:-4}
CPP_BUILD=${CPP_BUILD:-build/cpp-beast}
CARGO=${CARGO:-cargo}
CMAKE=${CMAKE:-cmake}
VPY=.venv/bin/python
STEP=scripts/step
AARCH64_LOG=build/wheel/logs/wheels-aarch64.log
# the bindings' aarch64 wheels and clientbench-native's, one after the other
AARCH64_TARGETS=(wheels-aarch64 native-wheel-aarch64)
PYTEST=("$VPY" -m pytest -q -rfEs -n "$WORKERS" --durations=10)

# the outcome of every step run so far: "NAME STATUS SECONDS" (STATUS: an exit status, or "-" for not run)
RESULTS=()
INTERRUPTED=""
elapsed() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }
summary() {
    [ "${#RESULTS[@]}" -gt 0 ] || return 0
    local line name status secs failed=()
    echo "run-tests: summary" >&2
    for line in "${RESULTS[@]}"; do
        read -r name status secs <<< "$line"
        case "$status" in
            0) printf '  %-18s %-7s %8s s\n' "$name" pass "$secs" >&2 ;;
            -) printf '  %-18s %-7s %8s\n' "$name" "not run" "" >&2; failed+=("$name") ;;
            *) printf '  %-18s %-7s %8s s  (exit %s)\n' "$name" FAIL "$secs" "$status" >&2; failed+=("$name") ;;
        esac
    done
    if [ -n "$INTERRUPTED" ]; then
        echo "run-tests: interrupted: the steps after these did not run" >&2
    elif [ "${#failed[@]}" -gt 0 ]; then
        echo "run-tests: ${#failed[@]} of ${#RESULTS[@]} failed: ${failed[*]}" >&2
    else
        echo "run-tests: all ${#RESULTS[@]} passed" >&2
    fi
    RESULTS=()
}
# NAME COMMAND...: one step, timed by scripts/step; its outcome is recorded and the script goes on
run() {
    local name=$1 start=$EPOCHREALTIME status=0
    shift
    "$STEP" "$name" "$@" || status=$?
    RESULTS+=("$name $status $(elapsed "$start")")
}

BG=""
PREBUILD_BG=""
stop_background() {
    # setsid made each build a process group of its own: stop all of it (make, cargo, zig, rustc; make, cc1)
    [ -z "$BG" ] || kill -TERM -- "-$BG" 2>/dev/null || true
    [ -z "$PREBUILD_BG" ] || kill -TERM -- "-$PREBUILD_BG" 2>/dev/null || true
}
# The compiler cache's server runs every compile it is sent at its own priority, so one that the background build
# (nice 19, below) happened to start would run the set-up's C and C++ compiles at nice 19 too. It is restarted here
# at the normal priority, to last the whole run (the set-up has stretches longer than its idle timeout without a
# compile), and stopped at the end.
SCCACHE=${CMAKE_CXX_COMPILER_LAUNCHER:-}
SCCACHE_OURS=""
if [ -n "$SCCACHE" ] && [ -x "$SCCACHE" ]; then
    "$SCCACHE" --stop-server > /dev/null 2>&1 || true
    if SCCACHE_IDLE_TIMEOUT=0 "$SCCACHE" --start-server > /dev/null 2>&1; then
        SCCACHE_OURS=1
    else
        echo "run-tests: the compiler cache's server did not start here; the first compile starts it" >&2
    fi
fi
stop_compiler_cache() { [ -z "$SCCACHE_OURS" ] || "$SCCACHE" --stop-server > /dev/null 2>&1 || true; }
# on every path out: the background build and the compiler cache's server stopped, what ran so far summed up
trap 'stop_background; stop_compiler_cache; summary' EXIT
trap 'INTERRUPTED=1; exit 130' INT
trap 'INTERRUPTED=1; exit 143' TERM HUP

start_background() {
    mkdir -p "$(dirname "$AARCH64_LOG")"
    echo "the aarch64 wheels build in the background meanwhile; log: $AARCH64_LOG" >&2
    BG_START=$EPOCHREALTIME
    # nice 19: the build takes only the CPU that the set-up and the suites leave idle (their single-core
    # stretches: configure scripts, links, pip; the suites' waits on sockets) instead of half of it, so it slows
    # neither their critical path nor their timings (docs/testing.md)
    # (its C and C++ compiles go through the compiler cache's server, at that server's priority: without it, the
    # native wheel's C++ compiled the Beast library again, and a cold CI took 51.5 min against 50.0)
    background "$AARCH64_LOG" "$STEP" wheels-aarch64 "$MAKE" --no-print-directory "${AARCH64_TARGETS[@]}"
    BG=$BACKGROUND_PID
}
# From a cold per-user cache the aarch64 wheels take about 14 min on 2 cores (their static OpenSSL, zig's libc++
# for arm64, every crate), and clientbench-native's up to 20 more (the server's and the drivers' crates, the C++
# drivers, toxiproxy): they start with the set-up, to end with the suites. From a warm one (their OpenSSL cached,
# the compiler cache full) they take a few minutes, which the suites' idle time covers: they start with the
# suites, and the set-up keeps the whole machine.
if ! compgen -G "$CLIENTBENCH_CACHE/openssl-*-aarch64-*/lib/libssl.a" > /dev/null; then
    start_background
fi
# The two CPythons of `make freethreaded` (about 7 min of both cores from a cold cache) and inferno build in the
# background from here (scripts/prebuild), at the lowest priority too: they take the CPU the steps before theirs
# leave idle. The set-up's steps wait for them (their locks) and find them built; with both cached this ends at once.
PREBUILD_LOG=build/prebuild.log
mkdir -p build
background "$PREBUILD_LOG" scripts/prebuild
PREBUILD_BG=$BACKGROUND_PID
# -k: every set-up step that can be made is, so that the suites run as far as they can and say what is missing
run test-setup "$MAKE" --no-print-directory -k test-setup
# done by now (the set-up waited for it); its failure, if any, is the freethreaded step's to report
wait "$PREBUILD_BG" 2>/dev/null || true
PREBUILD_BG=""
[ -n "$BG" ] || start_background
# From here the suites time requests, and the compiler cache's server compiles for the background build alone: it
# goes to the lowest priority too (its nice and its session's group's, as `lowest` sets a background job's), or the
# aarch64 wheels' C and C++ compiles take the CPU from under the suites' timings (CI saw a test server's 40 ms pause
# read as 59 ms during ctest). The suites' own compiles through it (test_wheels' sdists) are cache hits.
for pid in $(pgrep -u "$(id -u)" -x sccache 2>/dev/null); do
    renice -n 19 -p "$pid" > /dev/null 2>&1 || true
    [ ! -w "/proc/$pid/autogroup" ] || echo 19 > "/proc/$pid/autogroup" 2>/dev/null || true
done
# --no-fail-fast: a failing test binary does not keep the other crates' tests from running and reporting
run cargo-test "$CARGO" test --release --workspace --no-fail-fast
run ctest bash -c '"$1" --build "$2" && ctest --test-dir "$2" --output-on-failure' ctest "$CMAKE" "$CPP_BUILD"
run go-test bash -c 'cd examples/go-nethttp && go vet ./... && go test ./...'
run node-test bash -c 'cd examples/node-fetch && node --test'
run pytest-bindings "${PYTEST[@]}" --ignore=bindings/tests/test_wheels_aarch64.py bindings
run pytest-runner "${PYTEST[@]}" python/tests
# the regression gate on our own clients' counts per request (valgrind and strace: single-core, its counts blind
# to the load of the aarch64 build beside it)
run bench-gate scripts/bench-gate

echo "waiting for the aarch64 wheels ($AARCH64_LOG)" >&2
status=0
wait "$BG" || status=$?
BG=""
# the build's own time, as its step printed it last in the log (not the time until the suites were done with it)
secs=$(sed -n 's/^\[step\] wheels-aarch64  *\([0-9][0-9.]*\) s.*/\1/p' "$AARCH64_LOG" | tail -1)
RESULTS+=("wheels-aarch64 $status ${secs:-$(elapsed "$BG_START")}")
grep -h '^\[step\]\|\[build-.*done in' "$AARCH64_LOG" >&2 || true
if [ "$status" = 0 ]; then
    run pytest-aarch64 "$VPY" -m pytest -q -rfEs bindings/tests/test_wheels_aarch64.py
else
    tail -n 30 "$AARCH64_LOG" >&2
    echo "run-tests: the aarch64 wheels failed to build (exit $status; see $AARCH64_LOG): their test cannot run" >&2
    RESULTS+=("pytest-aarch64 - -")
fi
failed=0
for line in "${RESULTS[@]}"; do
    read -r _ status _ <<< "$line"
    [ "$status" = 0 ] || failed=1
done
exit "$failed"
}
