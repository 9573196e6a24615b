#!/usr/bin/env bash
# scripts/sanitize.sh: build cpp-beast with AddressSanitizer + UndefinedBehaviorSanitizer
# (BEAST_CLIENT_SANITIZE=ON, RelWithDebInfo, in build/cpp-beast-asan), run the GoogleTest suite, then run
# the sanitized beast-driver, floor-driver and beast-soak against the real axum server.
# Fails (non-zero, with the offending log) on a build or test failure, a non-zero exit, a failed request,
# or any sanitizer report on stderr.
#
#   cargo build --release -p clientbench-server && scripts/sanitize.sh       (or: make sanitize)
#
# Environment: BUILD_DIR (default build/cpp-beast-asan), SERVER_BIN (default
# target/release/clientbench-server), ASAN_OPTIONS / UBSAN_OPTIONS (appended to ours, so they win).
# LeakSanitizer needs ptrace-like access to the process; where it cannot run (under a debugger, strace, or a
# sandbox such as gVisor) the script says so and continues with detect_leaks=0.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BUILD="${BUILD_DIR:-build/cpp-beast-asan}"
SERVER_BIN="${SERVER_BIN:-target/release/clientbench-server}"
LOGS="$BUILD/sanitize-logs"
USER_ASAN="${ASAN_OPTIONS:-}"
USER_UBSAN="${UBSAN_OPTIONS:-}"
SANITIZER_RE='ERROR: AddressSanitizer|runtime error:|LeakSanitizer|ERROR: UndefinedBehaviorSanitizer|SUMMARY: (Address|UndefinedBehavior|Leak)Sanitizer'
LSAN_UNSUPPORTED_RE='LeakSanitizer does not work under ptrace|LeakSanitizer has encountered a fatal error'

SECONDS=0
SUMMARY=()
SERVER_PID=""

say() { printf 'sanitize: %s\n' "$*"; }
die() {
    printf '\nsanitize: FAILED: %s\n' "$1" >&2
    if [ $# -ge 2 ] && [ -f "$2" ]; then
        printf -- '----- %s (last 60 lines) -----\n' "$2" >&2
        tail -n 60 "$2" >&2
        printf -- '-----\n' >&2
    fi
    exit 1
}

cleanup() {
    if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    SERVER_PID=""
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

set_sanitizer_env() {  # $1: detect_leaks (0/1)
    export ASAN_OPTIONS="detect_leaks=$1:abort_on_error=1${USER_ASAN:+:$USER_ASAN}"
    export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${USER_UBSAN:+:$USER_UBSAN}"
}

# True when the sanitizer report regex matches the file.
has_report() { grep -Eq "$SANITIZER_RE" "$1"; }

[ -x "$SERVER_BIN" ] || die "server binary $SERVER_BIN not found (cargo build --release -p clientbench-server)"
command -v python3 >/dev/null || die "python3 is needed to read the drivers' JSON output"

# ---- 1. configure and build ------------------------------------------------------------------------
say "configuring $BUILD (ASan + UBSan, RelWithDebInfo)"
cmake -S cpp-beast -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBEAST_CLIENT_SANITIZE=ON -DBEAST_CLIENT_WERROR=ON >/dev/null
say "building (library, beast-driver, floor-driver, beast-soak, beast_client_tests)"
cmake --build "$BUILD"
rm -rf "$LOGS"
mkdir -p "$LOGS"

# ---- 2. can LeakSanitizer run here? --------------------------------------------------------------
LEAKS=1
set_sanitizer_env 1
probe="$LOGS/lsan-probe.err"
# (in a subshell whose stderr is dropped: bash's "Aborted" notice is not news here)
( "$BUILD/beast-driver" --help >/dev/null 2>"$probe"; exit $? ) 2>/dev/null || true
if grep -Eq "$LSAN_UNSUPPORTED_RE" "$probe"; then
    LEAKS=0
    say "NOTICE: LeakSanitizer cannot run in this environment ($(grep -Eo "$LSAN_UNSUPPORTED_RE" "$probe" | head -n1));"
    say "NOTICE: continuing with ASAN_OPTIONS detect_leaks=0 (AddressSanitizer and UBSan stay on)"
    set_sanitizer_env 0
elif has_report "$probe"; then
    die "sanitizer report from 'beast-driver --help'" "$probe"
fi
say "ASAN_OPTIONS=$ASAN_OPTIONS UBSAN_OPTIONS=$UBSAN_OPTIONS"

# ---- 3. the GoogleTest suite ------------------------------------------------------------------------
say "ctest"
ctest_log="$LOGS/ctest.log"
if ! ctest --test-dir "$BUILD" --output-on-failure >"$ctest_log" 2>&1; then
    die "ctest failed" "$ctest_log"
fi
has_report "$ctest_log" && die "sanitizer report in the ctest output" "$ctest_log"
ctest_line="$(grep -E 'tests passed' "$ctest_log" | tail -n1)"
SUMMARY+=("ctest: $ctest_line")
say "  $ctest_line"

# ---- 4. the axum server -------------------------------------------------------------------------------
server_out="$LOGS/server.out"
"$SERVER_BIN" --host 127.0.0.1 --port 0 >"$server_out" 2>"$LOGS/server.err" </dev/null &
SERVER_PID=$!
URL=""
for _ in $(seq 1 200); do  # up to 20 s
    line="$(head -n1 "$server_out" 2>/dev/null || true)"
    case "$line" in
        *'"listening"'*)
            URL="$(printf '%s' "$line" | sed -n 's/.*"url":"\([^"]*\)".*/\1/p')"
            break ;;
    esac
    kill -0 "$SERVER_PID" 2>/dev/null || die "the server exited before listening" "$LOGS/server.err"
    sleep 0.1
done
[ -n "$URL" ] || die "the server printed no listening line within 20 s" "$LOGS/server.err"
URL="${URL%/}"
say "server $URL (pid $SERVER_PID)"

# ---- 5. the sanitized programs against it -------------------------------------------------------------
# run NAME KIND EXPECT CMD...: stdout -> NAME.out, stderr -> NAME.err; checks the exit status, the stderr
# and the JSON on stdout (KIND: raw = a clientbench.raw/2 document, soak = beast-soak's line). EXPECT: ok =
# no request may fail; fail = every request must fail (the error paths: timeouts, refused, non-200).
run() {
    local name="$1" kind="$2" expect="$3"
    shift 3
    local out="$LOGS/$name.out" err="$LOGS/$name.err" rc=0 t0=$SECONDS counts
    say "$name: $*"
    "$@" >"$out" 2>"$err" || rc=$?
    has_report "$err" && die "$name: sanitizer report (exit status $rc)" "$err"
    [ "$rc" -eq 0 ] || die "$name exited with status $rc" "$err"
    counts="$(python3 - "$kind" "$out" <<'EOF'
import json, sys
kind, path = sys.argv[1], sys.argv[2]
with open(path) as f:
    doc = json.loads(f.read())
if kind == "raw":
    requests = sum(w["count"] for w in doc["workers"])
    failures = sum(w["failure_count"] for w in doc["workers"])
    body = sum(w["bytes"] for w in doc["workers"])
    reasons = sorted({x["reason"] for w in doc["workers"] for x in w["failures"]})
    print(requests, failures, body, "; ".join(reasons)[:300])
else:
    print(doc["requests"], doc["failures"], "-", json.dumps(doc["reasons"])[:300] if doc["reasons"] else "")
EOF
)" || die "$name: unreadable output" "$out"
    local requests failures body reasons
    read -r requests failures body reasons <<<"$counts"
    [ "$requests" -gt 0 ] || die "$name: no request was made" "$out"
    if [ "$expect" = ok ]; then
        [ "$failures" -eq 0 ] || die "$name: $failures of $requests requests failed: $reasons" "$err"
    else
        [ "$failures" -eq "$requests" ] || die "$name: expected every request to fail, $failures of $requests did" "$out"
    fi
    local line
    line="$(printf '%-22s %7s requests, %6s failed (expected: %s), %ss' \
        "$name" "$requests" "$failures" "$([ "$expect" = ok ] && echo none || echo all)" "$((SECONDS - t0))")"
    SUMMARY+=("$line")
    if [ "$expect" = ok ]; then
        say "  ok: $requests requests, none failed ($((SECONDS - t0))s)"
    else
        say "  ok: all $requests requests failed, as expected: $reasons ($((SECONDS - t0))s)"
    fi
}

CLOSED_PORT="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"

B="$BUILD/beast-driver" F="$BUILD/floor-driver"
# the workload, W=4 N=200
run beast-driver           raw ok   "$B" --url "$URL/" --workers 4 --requests 200 --warmup 10
run beast-driver-bytes     raw ok   "$B" --url "$URL/bytes/100000" --workers 4 --requests 200 --warmup 10
run floor-driver           raw ok   "$F" --url "$URL/" --workers 4 --requests 200 --warmup 10
run floor-driver-bytes     raw ok   "$F" --url "$URL/bytes/100000" --workers 4 --requests 200 --warmup 10
# connection handling: a new connection per request; the server closing after each response
run beast-driver-new-conn  raw ok   "$B" --url "$URL/" --workers 2 --requests 50 --connection new
run beast-driver-close     raw ok   "$B" --url "$URL/close" --workers 2 --requests 50
run floor-driver-close     raw ok   "$F" --url "$URL/close" --workers 2 --requests 50
# the open loop (samples; histograms), uploads whose /upload line the drivers check
run beast-driver-open      raw ok   "$B" --url "$URL/" --workers 4 --rate 400 --duration 1 --arrival poisson
run floor-driver-open      raw ok   "$F" --url "$URL/" --workers 4 --rate 400 --duration 1 --record histogram
run beast-driver-post      raw ok   "$B" --url "$URL/upload" --workers 2 --requests 50 --method POST --body-size 1000
run beast-driver-shared    raw ok   "$B" --url "$URL/bytes/10000" --workers 8 --requests 200 --warmup 10 \
    --client-scope shared
run beast-driver-shared-up raw ok   "$B" --url "$URL/upload" --workers 4 --requests 50 --method PUT --body-size 5000 \
    --client-scope shared
run floor-driver-put       raw ok   "$F" --url "$URL/upload" --workers 2 --requests 50 --method PUT --body-size 2000000
# error paths: timeout (the pending read is aborted and drained), refused connect, non-200 status
run beast-driver-timeout   raw fail "$B" --url "$URL/delay/300" --timeout 0.1 --workers 2 --requests 3
run floor-driver-timeout   raw fail "$F" --url "$URL/delay/300" --timeout 0.1 --workers 2 --requests 3
run beast-shared-timeout   raw fail "$B" --url "$URL/delay/300" --timeout 0.1 --workers 4 --requests 3 \
    --client-scope shared
run beast-driver-refused   raw fail "$B" --url "http://127.0.0.1:$CLOSED_PORT/" --workers 2 --requests 3
run floor-driver-refused   raw fail "$F" --url "http://127.0.0.1:$CLOSED_PORT/" --workers 2 --requests 3
run beast-driver-status    raw fail "$B" --url "$URL/status/503" --workers 2 --requests 10
# many requests from 4 threads
run beast-soak             soak ok  "$BUILD/beast-soak" --url "$URL/" --requests 20000 --warmup 1000 --workers 4 \
                                    --max-seconds 600

cleanup

# ---- summary ----------------------------------------------------------------------------------------------
echo
echo "sanitize: clean (AddressSanitizer + UBSan$([ "$LEAKS" = 1 ] && echo ' + LeakSanitizer' || echo '; LeakSanitizer unavailable here, detect_leaks=0'))"
for line in "${SUMMARY[@]}"; do
    echo "  $line"
done
echo "  logs: $LOGS/    total ${SECONDS}s"
