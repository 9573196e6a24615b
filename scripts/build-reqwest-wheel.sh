#!/usr/bin/env bash
# Builds the manylinux wheel(s) of reqwest-client (bindings/reqwest) into dist/ and prints their paths.
#
#   scripts/build-reqwest-wheel.sh                 # x86-64: cp39-abi3 (with .venv's CPython 3.11) and, if
#                                                  # built, cp313t; aarch64: cp39-abi3 (cross-built)
#   REQWEST_WHEEL_PYTHONS="/path/python3.12 ..." scripts/build-reqwest-wheel.sh   # the x86-64 interpreters
#   WHEEL_ARCHS=x86_64 scripts/build-reqwest-wheel.sh                             # one architecture only
#
# How: maturin (pinned, in the cached tools venv of scripts/wheel-tools.sh, shared with build-beast-wheel.sh)
# with `--target <arch>-unknown-linux-gnu` and zig's clang toolchain (scripts/wheel-toolchain.sh's zcc, as for
# the beast wheel and clientbench-native) the C compiler (aws-lc-sys's C code) and the linker, for
# <arch>-linux-gnu.2.28, i.e. against glibc 2.28's symbol versions whatever the build machine's glibc is; maturin
# checks the library against manylinux_2_28 and tags it; the library is stripped (`strip = true` in
# pyproject.toml). The `abi3` cargo feature (PyO3's abi3-py39) makes one cp39-abi3
# wheel for every CPython >= 3.9; for a free-threaded interpreter PyO3 ignores it (the free-threaded build has
# no stable ABI) and the wheel is version-specific (cp313t). TLS is rustls + aws-lc-rs, compiled in: the wheel
# needs nothing but glibc >= 2.28. `auditwheel show` checks every wheel; one that does not fit
# manylinux_2_28 (or, for the GIL build, is not tagged cp39-abi3) is an error.
#
# aarch64 is cross-compiled on this machine: `--target aarch64-unknown-linux-gnu` (the Rust standard library
# for it: `rustup target add aarch64-unknown-linux-gnu`, done here when rustup is there) with zig as the C
# compiler and linker for aarch64-linux-gnu.2.28. An abi3 wheel needs no target interpreter: PyO3 builds the
# stable ABI from its own definitions.
#
# Cargo's output goes to build/wheel/cargo-target-<architectures> (reused by the next run, and by
# build-native-wheel.sh's Rust build after it: wheel-toolchain.sh's rust_env). Needs: a Rust
# toolchain, network access to PyPI (maturin, ziglang, auditwheel) and crates.io (or cargo's cache). The wheels are rebuilt, and
# dist/reqwest_client-*.whl replaced, on every run.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
W=$ROOT/build/wheel
DIST=$ROOT/dist
GLIBC=2.28
LOGS=$W/logs
read -r -a ARCHS <<< "${WHEEL_ARCHS:-x86_64 aarch64}"
mkdir -p "$W" "$LOGS" "$DIST"

log() { printf '[build-reqwest-wheel] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

command -v cargo >/dev/null || die "cargo is not on PATH (a Rust toolchain builds the wheel)"
for arch in "${ARCHS[@]}"; do
    case "$arch" in x86_64|aarch64) ;; *) die "WHEEL_ARCHS: unknown architecture $arch (x86_64, aarch64)" ;; esac
done

# ---- tools: maturin, zig, auditwheel (pinned, in the per-user cache: scripts/wheel-tools.sh) ----------
TOOLS=$("$ROOT/scripts/wheel-tools.sh")
export PATH="$TOOLS/bin:$PATH"
. "$(dirname "$0")/wheel-toolchain.sh"
zig_toolchain "${ARCHS[@]}"
log "toolchain: $(maturin --version)"
if [[ " ${ARCHS[*]} " == *" aarch64 "* ]] && command -v rustup >/dev/null \
   && ! rustup target list --installed 2>/dev/null | grep -qx aarch64-unknown-linux-gnu; then
    log "rustup target add aarch64-unknown-linux-gnu"
    rustup target add aarch64-unknown-linux-gnu > "$LOGS/rustup-target.log" 2>&1 \
        || die "rustup target add aarch64-unknown-linux-gnu failed (see $LOGS/rustup-target.log)"
fi

# ---- the wheels ---------------------------------------------------------------------------------------
# NAME ARCH [maturin build arguments...]: one wheel for ARCH into $OUT/NAME
build_wheel() {
    local name=$1 arch=$2 start
    shift 2
    rust_env "$arch" "$SCRATCH"
    log "wheel: $name; log: $LOGS/reqwest-wheel-$name.log"
    start=$(date +%s)
    env "${RUST_ENV[@]}" maturin build --release --compatibility "manylinux_${GLIBC/./_}" --features abi3,native-share \
        --target "$arch-unknown-linux-gnu" --manifest-path "$ROOT/bindings/reqwest/Cargo.toml" --out "$OUT/$name" "$@" \
        > "$LOGS/reqwest-wheel-$name.log" 2>&1 || die "the $name wheel build failed (see $LOGS/reqwest-wheel-$name.log)"
    log "wheel: $name done in $(( $(date +%s) - start )) s"
}

# cargo reads the workspace's .cargo/config.toml (reqwest's `http3` feature needs its `--cfg reqwest_unstable`)
# from the folder it runs in: the checkout, wherever this script is run from
cd "$ROOT"

# scratch folders and cargo output of this architecture set: `make test` builds the aarch64 wheels while the
# x86-64 ones build (one cargo output folder would make either wait for the other's whole build)
SCRATCH=$(IFS=-; echo "${ARCHS[*]}")
OUT=$W/reqwest-wheels-$SCRATCH
rm -rf "$OUT"
mkdir -p "$OUT"
for arch in "${ARCHS[@]}"; do
    if [ "$arch" = aarch64 ]; then
        build_wheel abi3-aarch64 aarch64
        continue
    fi
    if [ -n "${REQWEST_WHEEL_PYTHONS:-}" ]; then
        read -r -a PYTHONS <<< "$REQWEST_WHEEL_PYTHONS"
    else
        PYTHONS=("$ROOT/.venv/bin/python")
        [ -x "$ROOT/build/cpython/venv-3.13t/bin/python" ] && PYTHONS+=("$ROOT/build/cpython/venv-3.13t/bin/python")
    fi
    for py in "${PYTHONS[@]}"; do
        [ -x "$py" ] || die "no Python interpreter at $py"
        tag=$("$py" -c 'import sys, sysconfig; print(f"cp{sys.version_info[0]}{sys.version_info[1]}" + ("t" if sysconfig.get_config_var("Py_GIL_DISABLED") else ""))')
        build_wheel "$tag-x86_64" x86_64 --interpreter "$py"
    done
done

for arch in "${ARCHS[@]}"; do rm -f "$DIST"/reqwest_client-*_"$arch".whl; done
for whl in "$OUT"/*/reqwest_client-*.whl; do
    case "$whl" in *_aarch64.whl) arch=aarch64 ;; *_x86_64.whl) arch=x86_64 ;; *) die "$whl: neither x86_64 nor aarch64" ;; esac
    auditwheel show "$whl" > "$LOGS/auditwheel-show-reqwest-$SCRATCH.log" 2>&1 \
        || { cat "$LOGS/auditwheel-show-reqwest-$SCRATCH.log" >&2; die "auditwheel show failed on $whl"; }
    tr -s ' \n' ' ' < "$LOGS/auditwheel-show-reqwest-$SCRATCH.log" \
        | grep -Eq "platform tag: \"(manylinux_2_(1[0-9]|2[0-8])|manylinux2014)_$arch\"" \
        || { cat "$LOGS/auditwheel-show-reqwest-$SCRATCH.log" >&2; die "$whl is not manylinux_2_28"; }
    case "$(basename "$whl")" in
        *-cp3[0-9]*-cp3[0-9]*t-*) ;;  # free-threaded: version-specific
        *-cp39-abi3-*) ;;
        *) die "$whl is neither cp39-abi3 nor free-threaded" ;;
    esac
    cp "$whl" "$DIST/"
    echo "$DIST/$(basename "$whl")"
done
