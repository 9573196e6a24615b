# Sourced by the wheel scripts that compile C and C++ with zig (build-beast-wheel.sh, build-native-wheel.sh):
# the toolchain for glibc 2.28, each architecture's static OpenSSL, the Boost headers and auditwheel's checks,
# defined once. The caller sets ROOT (the checkout), CACHE (the per-user cache, scripts/common.sh) and LOGS, and
# defines log and die; then:
#
#   zig_toolchain ARCH...       # ZIG, and $ZBIN/zcc-ARCH, $ZBIN/zc++-ARCH: zig cc/c++ for ARCH-linux-gnu.2.28
#   static_openssl ARCH...      # SSL_PREFIX[ARCH]: OpenSSL 3.0, static, built with that toolchain (cached)
#   boost_include               # BOOST_INCLUDE: a folder holding boost/ alone
#   auditwheel_repair ARCH WHEEL OUTDIR LOG    # checks WHEEL and tags it manylinux_2_28_ARCH into OUTDIR
#   auditwheel_show_ok WHEEL LOG               # auditwheel show: manylinux_2_28 or older, the wheel's own arch
#
# zig compiles against glibc 2.28's symbol versions whatever the build machine's glibc is, and links libc++
# statically. Scratch (the wrappers, the OpenSSL source, the Boost link) is shared in build/wheel: the wrappers
# are replaced atomically and the OpenSSL source is fetched under a lock, so two scripts may run at once.

GLIBC=2.28
OPENSSL_SERIES=3.0
# bump when the Configure line below changes: the cached builds are keyed by it
OPENSSL_RECIPE=1
TOOLCHAIN_SCRATCH=$ROOT/build/wheel
ZBIN=$TOOLCHAIN_SCRATCH/zig-bin
declare -A SSL_PREFIX

zig_toolchain() {
    TOOLS=${TOOLS:-$("$ROOT/scripts/wheel-tools.sh")}
    ZIG=$("$TOOLS/bin/python" -I -c 'import ziglang, os; print(os.path.join(os.path.dirname(ziglang.__file__), "zig"))')
    [ -x "$ZIG" ] || die "zig not found at $ZIG"
    mkdir -p "$ZBIN"
    local arch t
    for arch in "$@"; do
        # one executable per compiler (CMake, OpenSSL's Configure, cargo's linker); the Rust target triple that
        # cc-rs adds (--target=x86_64-unknown-linux-gnu), which zig does not parse, is dropped: -target is zig's
        for t in cc c++; do
            printf '#!/bin/sh\nn=$#\nwhile [ "$n" -gt 0 ]; do\n    a=$1; shift; n=$((n - 1))\n    case "$a" in --target=*) ;; *) set -- "$@" "$a" ;; esac\ndone\nexec "%s" %s -target %s-linux-gnu.%s "$@"\n' \
                "$ZIG" "$t" "$arch" "$GLIBC" > "$ZBIN/z$t-$arch.new.$$"
            chmod +x "$ZBIN/z$t-$arch.new.$$"
            mv "$ZBIN/z$t-$arch.new.$$" "$ZBIN/z$t-$arch"
        done
    done
    log "toolchain: zig $("$ZIG" version), targets ${*/%/-linux-gnu.$GLIBC}"
}

# Debian bookworm's upstream OpenSSL source (`apt-get source` through a private deb-src configuration, only the
# .orig.tarball: the Debian patches are not applied); prints the tarball's path, fetched once into scratch
fetch_openssl_source() {
    local W=$TOOLCHAIN_SCRATCH
    mkdir -p "$W"
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
        # a missing .debian.tar.xz (superseded security upload) is no error as long as the .orig.tar.gz arrived
        (cd "$W/src" && apt-get "${APT_OPTS[@]}" source --download-only openssl) > "$LOGS/apt-source.log" 2>&1 || true
        # shellcheck disable=SC2012
        tarball=$(ls -t "$W"/src/openssl_"$OPENSSL_SERIES".*.orig.tar.gz 2>/dev/null | head -1 || true)
        [ -n "$tarball" ] || die "no openssl_$OPENSSL_SERIES.*.orig.tar.gz could be fetched (see $LOGS/apt-source.log)"
    fi
    echo "$tarball"
}

# Built once per machine into the per-user cache, keyed by the series, the target, its glibc, zig's version and
# the recipe; reused only when both libraries and the key are there. OPENSSLDIR is /etc/ssl: the compiled-in
# default verify paths (/etc/ssl/cert.pem, /etc/ssl/certs) and openssl.cnf on the machine where it runs.
static_openssl() {
    local arch key prefix tarball start src
    for arch in "$@"; do
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
        src=$TOOLCHAIN_SCRATCH/openssl-src-$arch
        log "openssl: building $(basename "$tarball") for $arch (static, no-shared) with zig cc; log: $LOGS/openssl-$arch.log"
        start=$(date +%s)
        rm -rf "$src" "$prefix"
        mkdir -p "$src"
        tar xzf "$tarball" -C "$src" --strip-components=1
        (
            cd "$src"
            # GNU ar reads any ELF's symbols
            ./Configure "linux-$arch" no-shared no-tests no-module --prefix="$prefix" --libdir=lib \
                --openssldir=/etc/ssl CC="$ZBIN/zcc-$arch" AR=ar RANLIB=ranlib
            make -j"$(nproc)" build_libs
            make install_dev
        ) > "$LOGS/openssl-$arch.log" 2>&1 || die "the OpenSSL build for $arch failed (see $LOGS/openssl-$arch.log)"
        echo "$key" > "$prefix/.key"
        rm -rf "$src"
        log "openssl: $arch done in $(( $(date +%s) - start )) s"
        flock -u 8
    done
}

# -I/usr/include would put the build machine's glibc headers ahead of zig's glibc 2.28 ones
boost_include() {
    local hdr
    hdr=$(echo '#include <boost/version.hpp>' | cpp -H -o /dev/null 2>&1 | grep -m1 'boost/version.hpp' | sed 's/^\.* *//') \
        || true
    [ -n "$hdr" ] && [ -f "$hdr" ] || hdr=/usr/include/boost/version.hpp
    [ -f "$hdr" ] || die "Boost headers not found (apt-get install libboost-dev)"
    BOOST_INCLUDE=$TOOLCHAIN_SCRATCH/boost-include
    mkdir -p "$BOOST_INCLUDE"
    ln -sfn "$(dirname "$hdr")" "$BOOST_INCLUDE/boost"
}

# auditwheel's --plat accepts the tags of the machine it runs on only (its choices come from platform.machine());
# the wheel's own analysis reads the architecture from the wheel: for a cross-built wheel it runs with
# platform.machine() answering the wheel's architecture
auditwheel_repair() {
    local arch=$1 whl=$2 out=$3 logfile=$4
    PATH="$TOOLS/bin:$PATH" "$TOOLS/bin/python" -I -c '
import platform, sys
platform.machine = lambda: sys.argv.pop(1)
from auditwheel.main import main
sys.exit(main())' "$arch" repair --plat "manylinux_${GLIBC/./_}_$arch" -w "$out" "$whl" \
        > "$logfile" 2>&1 || die "auditwheel repair failed for $whl (see $logfile)"
}

auditwheel_show_ok() {
    local whl=$1 logfile=$2 arch
    case "$whl" in *_aarch64.whl) arch=aarch64 ;; *_x86_64.whl) arch=x86_64 ;; *) return 1 ;; esac
    "$TOOLS/bin/auditwheel" show "$whl" > "$logfile" 2>&1 || return 1
    tr -s ' \n' ' ' < "$logfile" | grep -Eq "platform tag: \"(manylinux_2_(1[0-9]|2[0-8])|manylinux2014)_$arch\""
}
