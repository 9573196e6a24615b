#!/usr/bin/env bash
# Builds the manylinux wheel(s) of reqwest-client (bindings/reqwest) into dist/ and prints their paths.
#
#   scripts/build-reqwest-wheel.sh                 # cp39-abi3 (with .venv's CPython 3.11) and, if built, cp313t
#   REQWEST_WHEEL_PYTHONS="/path/python3.12 ..." scripts/build-reqwest-wheel.sh
#
# How: maturin (pinned, in the cached tools venv of scripts/wheel-tools.sh, shared with build-beast-wheel.sh)
# with `--zig`: zig's clang toolchain (`pip install ziglang`) is the C compiler (aws-lc-sys's C code) and the
# linker, for x86_64-linux-gnu.2.28, i.e. against glibc 2.28's symbol versions whatever the build machine's
# glibc is; the library is stripped (`strip = true` in pyproject.toml). The `abi3` cargo feature (PyO3's abi3-py39) makes one cp39-abi3
# wheel for every CPython >= 3.9; for a free-threaded interpreter PyO3 ignores it (the free-threaded build has
# no stable ABI) and the wheel is version-specific (cp313t). TLS is rustls + aws-lc-rs, compiled in: the wheel
# needs nothing but glibc >= 2.28. `auditwheel show` checks every wheel; one that does not fit
# manylinux_2_28 (or, for the GIL build, is not tagged cp39-abi3) is an error.
#
# Cargo's output goes to build/wheel/cargo-target (reused by the next run). Needs: a Rust toolchain, network
# access to PyPI (maturin, ziglang, auditwheel) and crates.io (or cargo's cache). The wheels are rebuilt, and
# dist/reqwest_client-*.whl replaced, on every run.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
W=$ROOT/build/wheel
DIST=$ROOT/dist
GLIBC=2.28
LOGS=$W/logs
mkdir -p "$W" "$LOGS" "$DIST"

log() { printf '[build-reqwest-wheel] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

command -v cargo >/dev/null || die "cargo is not on PATH (a Rust toolchain builds the wheel)"

# ---- tools: maturin, zig, auditwheel (pinned, in the per-user cache: scripts/wheel-tools.sh) ----------
TOOLS=$("$ROOT/scripts/wheel-tools.sh")
# maturin finds zig through `python3 -m ziglang`: the tools venv comes first on PATH
export PATH="$TOOLS/bin:$PATH"
log "toolchain: $(maturin --version), zig $(python3 -m ziglang version), target x86_64-linux-gnu.$GLIBC"

# ---- the wheels ---------------------------------------------------------------------------------------
if [ -n "${REQWEST_WHEEL_PYTHONS:-}" ]; then
    read -r -a PYTHONS <<< "$REQWEST_WHEEL_PYTHONS"
else
    PYTHONS=("$ROOT/.venv/bin/python")
    [ -x "$ROOT/build/cpython/venv-3.13t/bin/python" ] && PYTHONS+=("$ROOT/build/cpython/venv-3.13t/bin/python")
fi

OUT=$W/reqwest-wheels
rm -rf "$OUT"
mkdir -p "$OUT"
export CARGO_TARGET_DIR=$W/cargo-target
for py in "${PYTHONS[@]}"; do
    [ -x "$py" ] || die "no Python interpreter at $py"
    tag=$("$py" -c 'import sys, sysconfig; print(f"cp{sys.version_info[0]}{sys.version_info[1]}" + ("t" if sysconfig.get_config_var("Py_GIL_DISABLED") else ""))')
    log "wheel: $tag ($py); log: $LOGS/reqwest-wheel-$tag.log"
    start=$(date +%s)
    maturin build --release --zig --compatibility "manylinux_${GLIBC/./_}" --features abi3 \
        --manifest-path "$ROOT/bindings/reqwest/Cargo.toml" --interpreter "$py" --out "$OUT/$tag" \
        > "$LOGS/reqwest-wheel-$tag.log" 2>&1 || die "the $tag wheel build failed (see $LOGS/reqwest-wheel-$tag.log)"
    log "wheel: $tag done in $(( $(date +%s) - start )) s"
done

rm -f "$DIST"/reqwest_client-*.whl
for whl in "$OUT"/*/reqwest_client-*.whl; do
    auditwheel show "$whl" > "$LOGS/auditwheel-show-reqwest.log" 2>&1 \
        || { cat "$LOGS/auditwheel-show-reqwest.log" >&2; die "auditwheel show failed on $whl"; }
    grep -q 'manylinux_2_28_x86_64\|manylinux_2_2[0-7]_x86_64\|manylinux_2_1[0-9]_x86_64\|manylinux2014' \
        "$LOGS/auditwheel-show-reqwest.log" || { cat "$LOGS/auditwheel-show-reqwest.log" >&2; die "$whl is not manylinux_2_28"; }
    case "$(basename "$whl")" in
        *-cp3[0-9]*-cp3[0-9]*t-*) ;;  # free-threaded: version-specific
        *-cp39-abi3-*) ;;
        *) die "$whl is neither cp39-abi3 nor free-threaded" ;;
    esac
    cp "$whl" "$DIST/"
    echo "$DIST/$(basename "$whl")"
done
