# Sourced by the wheel scripts that compile with zig (build-beast-wheel.sh, build-reqwest-wheel.sh, build-native-wheel.sh):
# the toolchain for glibc 2.28, each architecture's static OpenSSL, the Boost headers and auditwheel's checks,
# defined once. The caller sets ROOT (the checkout), CACHE (the per-user cache, scripts/common.sh) and LOGS, and
# defines log and die; then:
#
#   zig_toolchain ARCH...       # ZIG, and $ZBIN/zcc-ARCH, $ZBIN/zc++-ARCH: zig cc/c++ for ARCH-linux-gnu.2.28
#   static_openssl ARCH...      # SSL_PREFIX[ARCH]: OpenSSL 3.0, static, built with that toolchain (cached)
#   static_codecs ARCH...       # CODECS_PREFIX[ARCH]: libbrotlidec and libzstd, static, with that toolchain (cached)
#   rust_env ARCH SCRATCH       # RUST_ENV: cargo's environment for ARCH with that toolchain, and its target folder
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
# bump when static_codecs' compile lines change
CODECS_RECIPE=2
declare -A CODECS_PREFIX

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

# Debian bookworm's upstream source of PACKAGE (`apt-get source` through a private deb-src configuration, only the
# .orig tarball: the Debian patches are not applied), the newest file matching GLOB in scratch; fetched once into
# scratch. Prints the tarball's path (never the upstream signature, foo.orig.tar.xz.asc, which such a GLOB matches
# too and which `ls -t` may list first when both arrived in the same second).
# RUST_ENV (array, for `env`): cargo's environment for <ARCH>-unknown-linux-gnu with zig's toolchain: zig cc the
# linker and the C/C++ compiler of the -sys crates (aws-lc-sys, zstd-sys), GNU ar (it reads any ELF), and one
# target folder per set of architectures SCRATCH. The reqwest wheel (maturin) and clientbench-native's executables
# (cargo) build with this same environment in this same folder, one after the other, so the second build reuses
# every crate the first compiled with the same features (tokio, rustls, aws-lc-rs and its C, most of the tree)
# instead of compiling it again: cargo's fingerprints include the linker and these variables. No RUSTFLAGS: it
# would replace the workspace's own (.cargo/config.toml). The build-dir is that folder too, not the Makefile's
# per-machine one for the host's builds: the aarch64 build runs beside those, and would wait on their lock.
rust_env() {
    local arch=$1 scratch=$2 triple=$1-unknown-linux-gnu var
    var=${triple//-/_}
    [ -x "$ZBIN/zcc-$arch" ] || die "rust_env $arch: run zig_toolchain $arch first"
    RUST_ENV=("CARGO_TARGET_${var^^}_LINKER=$ZBIN/zcc-$arch" "CC_$var=$ZBIN/zcc-$arch" "CXX_$var=$ZBIN/zc++-$arch"
              "AR_$var=ar" "CARGO_TARGET_DIR=$TOOLCHAIN_SCRATCH/cargo-target-$scratch"
              "CARGO_BUILD_BUILD_DIR=$TOOLCHAIN_SCRATCH/cargo-target-$scratch")
}

fetch_debian_source() {
    local package=$1 glob=$2 W=$TOOLCHAIN_SCRATCH
    mkdir -p "$W"
    exec 7>"$W/.debian-src.lock"  # held until this subshell ends: one fetch per clone at a time
    flock -w 3600 7 || die "$W/.debian-src.lock held for an hour"
    local tarball
    # shellcheck disable=SC2012,SC2086  # Debian's file names; the newest first
    tarball=$(ls -t "$W"/src/$glob 2>/dev/null | grep -v "\.asc$" | head -1 || true)
    if [ -z "$tarball" ]; then
        log "$package: apt-get source $package (bookworm, bookworm-security) into $W/src"
        local KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg A=$W/apt
        [ -r "$KEYRING" ] || die "$KEYRING missing (apt-get install debian-archive-keyring)"
        if [ ! -f "$A/etc/sources.list" ]; then
            mkdir -p "$A/etc/sources.list.d" "$A/etc/preferences.d" "$A/state/lists/partial" \
                     "$A/cache/archives/partial" "$W/src"
            local s path suite
            rm -f "$A/etc/sources.list.new"
            for s in "debian bookworm" "debian bookworm-updates" "debian-security bookworm-security"; do
                read -r path suite <<< "$s"
                echo "deb-src [signed-by=$KEYRING] http://deb.debian.org/$path $suite main" >> "$A/etc/sources.list.new"
            done
            mv "$A/etc/sources.list.new" "$A/etc/sources.list"
        fi
        mkdir -p "$W/src"
        local APT_OPTS=(-q -o "Dir::State=$A/state" -o "Dir::State::status=/var/lib/dpkg/status"
                  -o "Dir::Cache=$A/cache" -o "Dir::Etc::SourceList=$A/etc/sources.list"
                  -o "Dir::Etc::SourceParts=$A/etc/sources.list.d" -o "Dir::Etc::Preferences=$A/etc/preferences"
                  -o "Dir::Etc::PreferencesParts=$A/etc/preferences.d")
        apt-get "${APT_OPTS[@]}" update > "$LOGS/apt-update-$package.log" 2>&1 \
            || die "apt-get update failed (see $LOGS/apt-update-$package.log)"
        # a missing .debian.tar.xz (superseded security upload) is no error as long as the .orig tarball arrived
        (cd "$W/src" && apt-get "${APT_OPTS[@]}" source --download-only "$package") > "$LOGS/apt-source-$package.log" 2>&1 || true
        # shellcheck disable=SC2012,SC2086
        tarball=$(ls -t "$W"/src/$glob 2>/dev/null | grep -v "\.asc$" | head -1 || true)
        # a security upload's .orig tarball may sit in the main pool only (404 in the security one): the other
        # versions the sources list, newest first
        if [ -z "$tarball" ]; then
            local v
            for v in $(apt-cache "${APT_OPTS[@]}" showsrc "$package" 2>/dev/null | sed -n 's/^Version: //p'); do
                (cd "$W/src" && apt-get "${APT_OPTS[@]}" source --download-only "$package=$v") \
                    >> "$LOGS/apt-source-$package.log" 2>&1 || true
                # shellcheck disable=SC2012,SC2086
                tarball=$(ls -t "$W"/src/$glob 2>/dev/null | grep -v "\.asc$" | head -1 || true)
                [ -z "$tarball" ] || break
            done
        fi
        [ -n "$tarball" ] || die "no $glob could be fetched (see $LOGS/apt-source-$package.log)"
    fi
    echo "$tarball"
}

fetch_openssl_source() { fetch_debian_source openssl "openssl_$OPENSSL_SERIES.*.orig.tar.gz"; }

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

# CODECS_PREFIX[ARCH]: libbrotlidec + libbrotlicommon and libzstd as static archives with their headers (include/,
# lib/), the br and zstd decoders beast_client links into the wheels (cpp-beast/cmake/codecs.cmake's
# BEAST_CLIENT_CODECS_ROOT): Debian bookworm's upstream sources compiled with zig cc, -fPIC, cached per machine as
# OpenSSL is. Brotli's C files are compiled directly (its CMake names the static archives *-static.a).
static_codecs() {
    local arch key prefix brotli zstd start src
    for arch in "$@"; do
        exec 8>"$CACHE/.codecs-$arch.lock"
        flock -w 3600 8 || die "$CACHE/.codecs-$arch.lock held for an hour"
        brotli=$(fetch_debian_source brotli 'brotli_*.orig.tar.gz')
        zstd=$(fetch_debian_source libzstd 'libzstd_*.orig.tar.*')
        key="$(basename "$brotli") $(basename "$zstd") target=$arch-linux-gnu glibc=$GLIBC zig=$("$ZIG" version) recipe=$CODECS_RECIPE"
        prefix=$CACHE/codecs-$arch-glibc$GLIBC-$(echo "$key" | sha256sum | cut -c1-12)
        CODECS_PREFIX[$arch]=$prefix
        if [ -f "$prefix/lib/libbrotlidec.a" ] && [ -f "$prefix/lib/libzstd.a" ] \
           && [ "$(cat "$prefix/.key" 2>/dev/null)" = "$key" ]; then
            flock -u 8
            continue
        fi
        src=$TOOLCHAIN_SCRATCH/codecs-src-$arch
        log "codecs: building $(basename "$brotli") and $(basename "$zstd") for $arch (static) with zig cc; log: $LOGS/codecs-$arch.log"
        start=$(date +%s)
        rm -rf "$src" "$prefix"
        mkdir -p "$src/brotli" "$src/zstd" "$prefix/include" "$prefix/lib"
        (
            set -e
            tar xzf "$brotli" -C "$src/brotli" --strip-components=1
            tar xf "$zstd" -C "$src/zstd" --strip-components=1
            cd "$src/brotli"
            for part in common dec; do
                mkdir -p "obj/$part"
                for c in c/"$part"/*.c; do
                    "$ZBIN/zcc-$arch" -O2 -fPIC -Ic/include -c "$c" -o "obj/$part/$(basename "$c" .c).o"
                done
            done
            ar rcs "$prefix/lib/libbrotlicommon.a" obj/common/*.o
            ar rcs "$prefix/lib/libbrotlidec.a" obj/dec/*.o
            cp -r c/include/brotli "$prefix/include/"
            cd "$src/zstd"
            make -C lib -j"$(nproc)" libzstd.a CC="$ZBIN/zcc-$arch" AR=ar CFLAGS="-O2 -fPIC -DZSTD_TRACE=0" ZSTD_LEGACY_SUPPORT=0
            cp lib/libzstd.a "$prefix/lib/"
            cp lib/zstd.h lib/zstd_errors.h "$prefix/include/"
        ) > "$LOGS/codecs-$arch.log" 2>&1 || die "the brotli/zstd build for $arch failed (see $LOGS/codecs-$arch.log)"
        echo "$key" > "$prefix/.key"
        rm -rf "$src"
        log "codecs: $arch done in $(( $(date +%s) - start )) s"
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
