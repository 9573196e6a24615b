#!/usr/bin/env bash
# `make freethreaded`: the two interpreters of scripts/build-cpython.sh (one CPython source, one set of flags,
# with and without the GIL), a venv for each with the Python clients (python/requirements-ft.txt) and both
# bindings, and build/cpython/interpreters.json ({"3.13": ".../bin/python", "3.13t": ...}), which
# `clientbench --interpreters` reads.
#
#   scripts/freethreaded.sh [--no-bindings | --bindings-from DIR]
#
# --no-bindings: the interpreters and the venvs with the Python clients only (the Makefile then builds the
# x86-64 wheels with them). --bindings-from DIR: only the bindings, into the venvs made before, from the
# manylinux wheels in DIR (`make wheels-x86_64`: beast cp313 and cp313t, reqwest abi3 and cp313t), so both
# venvs run one compiler's build, the one users install; a binding without its wheel there is built as
# `make bindings` builds it. Without either: everything, the bindings built from the sources.
#
# The interpreters are built once per machine into the user's cache ($CLIENTBENCH_CACHE/cpython, default
# ~/.cache/clientbench/cpython; build-cpython.sh keys them by source version and recipe and checks that they run
# before reusing them); the venvs hold this checkout's bindings, so they live in build/cpython.
#
# Where the CPython source cannot be fetched, it writes the reason to build/cpython/unavailable and exits 0:
# the free-threaded tests then skip with that reason, and everything else still runs. Under CI (CI=true, or
# CLIENTBENCH_STRICT=1: scripts/common.sh) it exits 1 with the reason instead, and so does a binding that does
# not build in one of the venvs.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=build/cpython
MODE=all WHEELS=""
case "${1:-}" in
    "") ;;
    --no-bindings) MODE=venvs ;;
    --bindings-from) MODE=bindings WHEELS=${2:?--bindings-from needs a folder of wheels} ;;
    *) echo "freethreaded: unknown argument $1 (usage: $0 [--no-bindings | --bindings-from DIR])" >&2; exit 2 ;;
esac
# the bindings' source lists, from the Makefile (scripts/install-binding keys its build cache by them)
[ "$MODE" = venvs ] || : "${BEAST_SRC:?run through make freethreaded}" "${REQWEST_SRC:?run through make freethreaded}"
. "$(dirname "$0")/common.sh"
CACHE=$CLIENTBENCH_CACHE
SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
mkdir -p "$BUILD"

# KIND (gil or ft) LABEL VENV: both bindings into the venv, from $WHEELS when a wheel for it is there
install_bindings() {
    local kind=$1 label=$2 venv=$3 binding sources
    for binding in beast reqwest; do
        if [ -n "$WHEELS" ] && "$venv/bin/python" -m pip install -q --no-deps --force-reinstall --no-index \
                --only-binary :all: --find-links "$WHEELS" "${binding}_client" 2>/dev/null; then
            echo "freethreaded: $label: the $binding binding, from its wheel in $WHEELS" >&2
            continue
        fi
        echo "freethreaded: $label: the $binding binding" >&2
        sources=$BEAST_SRC
        [ "$binding" = beast ] || sources=$REQWEST_SRC
        # shellcheck disable=SC2086  # a list of paths without spaces, from the Makefile
        if ! scripts/install-binding "$venv/bin/python" "$binding" $sources; then
            strict && { echo "freethreaded: $label: the $binding binding did not build (strict mode, CI)" >&2; return 1; }
            echo "freethreaded: $label: the $binding binding did not build; its rows will fail with the reason" >&2
        fi
    done
}

if [ "$MODE" = bindings ]; then
    # the venvs of --no-bindings, unless CPython was unavailable there (then nothing to install into)
    [ ! -f "$BUILD/unavailable" ] || { echo "freethreaded: skipped: $(cat "$BUILD/unavailable")" >&2; exit 0; }
    pids=() failed=""
    for kind in gil ft; do
        [ -f "$BUILD/.venv-$kind" ] || { echo "freethreaded: no venv for $kind: run scripts/freethreaded.sh --no-bindings first" >&2; exit 1; }
        read -r label py < "$BUILD/.venv-$kind"
        install_bindings "$kind" "$label" "${py%/bin/python}" & pids+=($!)
    done
    for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
    [ -z "$failed" ] || { echo "freethreaded: installing a binding failed (see above)" >&2; exit 1; }
    exit 0
fi
rm -f "$BUILD/unavailable"

set +e
line=$(scripts/build-cpython.sh "$CACHE/cpython" 2> >(tee "$BUILD/build.err" >&2))
status=$?
set -e
if [ "$status" = 3 ]; then
    grep 'source unavailable' "$BUILD/build.err" | tail -1 > "$BUILD/unavailable"
    rm -f "$BUILD/interpreters.json"
    if strict; then
        echo "freethreaded: failed (strict mode, CI): $(cat "$BUILD/unavailable")" >&2
        exit 1
    fi
    echo "freethreaded: skipped: $(cat "$BUILD/unavailable")" >&2
    exit 0
fi
[ "$status" = 0 ] || { echo "freethreaded: building CPython failed (see $CACHE/cpython/logs)" >&2; exit 1; }

# pycurl has no free-threaded wheel: its source build needs libcurl's headers
if ! dpkg-query -W -f='${Status}' libcurl4-openssl-dev 2>/dev/null | grep -q 'ok installed'; then
    # waits for another apt or dpkg run (another clone's set-up) instead of failing
    $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq libcurl4-openssl-dev >/dev/null
fi

json() { python3 -c "import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])" "$line" "$1"; }
# KIND (gil or ft): the venv of that interpreter, with the Python clients and both bindings; writes
# "LABEL PYTHON" to $BUILD/.venv-KIND
setup_venv() {
    local kind=$1 py label venv binding
    py=$(json "$kind")
    label=$("$py" -c "import sys, sysconfig; v = sys.version_info; print(f'{v[0]}.{v[1]}' + ('t' if sysconfig.get_config_var('Py_GIL_DISABLED') else ''))")
    venv="$BUILD/venv-$label"
    [ -x "$venv/bin/python" ] || "$py" -m venv "$venv"
    echo "freethreaded: $label: the Python clients" >&2
    "$venv/bin/python" -m pip install -q --upgrade pip
    "$venv/bin/python" -m pip install -q --no-binary aiohttp,yarl,propcache -r python/requirements-ft.txt
    # as `make bindings` installs them (from the build cache when another clone built the same sources)
    [ "$MODE" = venvs ] || install_bindings "$kind" "$label" "$venv"
    echo "$label $PWD/$venv/bin/python" > "$BUILD/.venv-$kind"
}

# The two venvs side by side: most of their set-up is single-core (pip, the C extensions built from source, one
# at a time); cargo's lock on target/ orders their reqwest builds.
rm -f "$BUILD/.venv-gil" "$BUILD/.venv-ft"
setup_venv gil & gil_job=$!
setup_venv ft & ft_job=$!
trap 'kill "$gil_job" "$ft_job" 2>/dev/null || true' EXIT
failed=""
wait "$gil_job" || failed+=" gil"
wait "$ft_job" || failed+=" ft"
trap - EXIT
[ -z "$failed" ] || { echo "freethreaded: setting up the venv failed for:$failed (see above)" >&2; exit 1; }
interps=$(python3 -c '
import json, sys
print(json.dumps(dict(line.split(" ", 1) for line in (open(f).read().strip() for f in sys.argv[1:]))))' \
    "$BUILD/.venv-gil" "$BUILD/.venv-ft")
echo "$interps" > "$BUILD/interpreters.json"
echo "freethreaded: $interps" >&2
