#!/usr/bin/env bash
# Builds the clientbench-native wheel(s) (native/: the runner's executables, `pip install "clientbench[native]"`)
# into dist/ and prints their paths.
#
#   scripts/build-native-wheel.sh                      # manylinux_2_28 x86-64 and aarch64
#   WHEEL_ARCHS=x86_64 scripts/build-native-wheel.sh   # one architecture only
#
# Each wheel's clientbench_native/bin/ holds eight executables, built on this machine for <arch>-linux-gnu against
# glibc 2.28's symbol versions (aarch64 cross-built) and stripped:
# - clientbench-server, reqwest-driver, reqwest-soak, udp-relay: `cargo build --release --target <arch>-unknown-linux-gnu`,
#   zig cc (scripts/wheel-toolchain.sh, as for the beast wheel) the linker and the C compiler of aws-lc-sys and
#   zstd-sys; TLS is rustls + aws-lc-rs, compiled in. Cargo's output goes to build/wheel/cargo-target-<arch>, apart
#   from `make build`'s target/, where build-reqwest-wheel.sh built the binding with the same environment just
#   before (wheel-toolchain.sh's rust_env): the crates both use are compiled once.
# - beast-driver, floor-driver, beast-soak: CMake (cpp-beast/, drivers on, tests off) with zig c++, libc++ linked
#   statically, against the static OpenSSL 3.0 and brotli/zstd decoders of that architecture that
#   build-beast-wheel.sh links too (one cached build per machine): beast_client is the wheel's, compiled with the
#   same flags, so the compiler cache gives its objects back.
# - toxiproxy-server: Go with CGO_ENABLED=0 (no libc at all), the version python/clientbench/network.py pins
#   (`make toxiproxy`'s), from that module's source, stamped with its version as its own releases are; cached
#   per architecture and Go version in the per-user cache.
# The wheel is built by setuptools (build, isolated: setuptools from PyPI) from a copy of native/ with the
# executables, the licenses of what is linked in and _version.py (the runner's version, its one source:
# python/clientbench/__init__.py), tagged py3-none-linux_<arch>, then `auditwheel repair` checks every
# executable (symbol versions, libraries) and tags it manylinux_2_28 (a wheel that needs a library outside the
# manylinux set is an error, not a wheel with the library grafted in), and `auditwheel show` must agree.
#
# Needs: cargo with the aarch64-unknown-linux-gnu standard library (`rustup target add`, done here when rustup
# is there), go, cmake, ninja, the Boost headers; network access to PyPI, crates.io and the Go module proxy (or
# their caches). The wheels are rebuilt, and dist/clientbench_native-*_<arch>.whl replaced, on every run; the
# builds under build/native-wheel and build/wheel/cargo-target-* are incremental.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
W=$ROOT/build/native-wheel
DIST=$ROOT/dist
. "$(dirname "$0")/common.sh"
CACHE=$CLIENTBENCH_CACHE
LOGS=$W/logs
read -r -a ARCHS <<< "${WHEEL_ARCHS:-x86_64 aarch64}"
# scratch of this architecture set: `make test` builds the aarch64 wheel while the x86-64 one builds
SCRATCH=$(IFS=-; echo "${ARCHS[*]}")
mkdir -p "$W" "$LOGS" "$DIST" "$CACHE"
EXECUTABLES=(clientbench-server reqwest-driver reqwest-soak udp-relay beast-driver floor-driver beast-soak toxiproxy-server)

log() { printf '[build-native-wheel] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
. "$(dirname "$0")/wheel-toolchain.sh"

for arch in "${ARCHS[@]}"; do
    case "$arch" in x86_64|aarch64) ;; *) die "WHEEL_ARCHS: unknown architecture $arch (x86_64, aarch64)" ;; esac
done
for tool in cargo go cmake ninja readelf; do
    command -v "$tool" >/dev/null || die "$tool is not on PATH"
done
VERSION=$(sed -n 's/^__version__ = "\([^"]*\)"$/\1/p' "$ROOT/python/clientbench/__init__.py")
[ -n "$VERSION" ] || die "python/clientbench/__init__.py has no __version__ = \"...\" line"
TOXIPROXY_VERSION=$(sed -n 's/^TOXIPROXY_VERSION = "\(.*\)"/\1/p' "$ROOT/python/clientbench/network.py")
[ -n "$TOXIPROXY_VERSION" ] || die "python/clientbench/network.py pins no TOXIPROXY_VERSION"

TOOLS=$("$ROOT/scripts/wheel-tools.sh")
zig_toolchain "${ARCHS[@]}"
static_openssl "${ARCHS[@]}"
static_codecs "${ARCHS[@]}"
boost_include
if [[ " ${ARCHS[*]} " == *" aarch64 "* ]] && command -v rustup >/dev/null \
   && ! rustup target list --installed 2>/dev/null | grep -qx aarch64-unknown-linux-gnu; then
    log "rustup target add aarch64-unknown-linux-gnu"
    rustup target add aarch64-unknown-linux-gnu > "$LOGS/rustup-target.log" 2>&1 \
        || die "rustup target add aarch64-unknown-linux-gnu failed (see $LOGS/rustup-target.log)"
fi

# ARCH OUT: the server, the Rust driver and probe, the UDP relay into OUT
build_rust() {
    local arch=$1 out=$2 triple=$1-unknown-linux-gnu pkg strip=()
    rust_env "$arch" "$SCRATCH"
    # stripped: a profile override of the four packages alone, so that every crate below them keeps the
    # fingerprint the reqwest wheel's build gave it in the same target folder (CARGO_PROFILE_RELEASE_STRIP
    # would change all of them)
    for pkg in clientbench-server reqwest-drivers reqwest-probes udp-relay; do
        strip+=(--config "profile.release.package.$pkg.strip=\"symbols\"")
    done
    log "rust: $triple; log: $LOGS/rust-$arch.log"
    env "${RUST_ENV[@]}" cargo build --release --target "$triple" --manifest-path "$ROOT/Cargo.toml" "${strip[@]}" \
            -p clientbench-server -p reqwest-drivers -p reqwest-probes -p udp-relay \
            --bin clientbench-server --bin reqwest-driver --bin reqwest-soak --bin udp-relay \
        > "$LOGS/rust-$arch.log" 2>&1 || die "the Rust build for $arch failed (see $LOGS/rust-$arch.log)"
    cp "$TOOLCHAIN_SCRATCH/cargo-target-$SCRATCH/$triple/release/"{clientbench-server,reqwest-driver,reqwest-soak,udp-relay} "$out/"
}

# ARCH: GNU binutils' strip for that architecture (Debian's binutils-aarch64-linux-gnu for aarch64, installed when
# missing, as root or with sudo)
strip_tool() {
    case "$1" in
    x86_64) STRIP=strip ;;
    *)
        STRIP=$1-linux-gnu-strip
        if ! command -v "$STRIP" >/dev/null; then
            log "installing binutils-$1-linux-gnu (its strip)"
            "$ROOT/scripts/apt-locked" $([ "$(id -u)" = 0 ] || echo sudo) env DEBIAN_FRONTEND=noninteractive sh -c \
                "apt-get update -qq && apt-get -o DPkg::Lock::Timeout=600 install -y -qq binutils-$1-linux-gnu" \
                > "$LOGS/apt-binutils-$1.log" 2>&1 \
                || die "cannot install binutils-$1-linux-gnu (see $LOGS/apt-binutils-$1.log)"
        fi ;;
    esac
    command -v "$STRIP" >/dev/null || die "$STRIP is not on PATH"
}

# ARCH OUT: the C++ drivers and probe into OUT, stripped after the link: linked with -s, they would have zig build
# a stripped libc++ for them alone (zig builds its libc++ once per architecture and way of linking, a minute on 2
# cores each; the beast wheel's links, plain and -flto, made the two this one reuses)
build_cpp() {
    local arch=$1 out=$2 dir=$W/cmake-$1 cross=() exe
    [ "$arch" = x86_64 ] || cross=(-DCMAKE_SYSTEM_NAME=Linux -DCMAKE_SYSTEM_PROCESSOR="$arch")
    strip_tool "$arch"
    log "c++: $arch; log: $LOGS/cpp-$arch.log"
    {
        cmake -S "$ROOT/cpp-beast" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "${cross[@]}" \
            -DCMAKE_CXX_COMPILER="$ZBIN/zc++-$arch" -DCMAKE_EXE_LINKER_FLAGS= \
            -DBEAST_CLIENT_BUILD_DRIVER=ON -DBEAST_CLIENT_BUILD_TESTS=OFF \
            -DOPENSSL_ROOT_DIR="${SSL_PREFIX[$arch]}" -DOPENSSL_USE_STATIC_LIBS=ON \
            -DBEAST_CLIENT_CODECS_ROOT="${CODECS_PREFIX[$arch]}" -DBEAST_CLIENT_CODECS_STATIC=ON \
            -DBoost_NO_BOOST_CMAKE=ON -DBoost_INCLUDE_DIR="$BOOST_INCLUDE" \
            && cmake --build "$dir" --target beast-driver floor-driver beast-soak
    } > "$LOGS/cpp-$arch.log" 2>&1 || die "the C++ build for $arch failed (see $LOGS/cpp-$arch.log)"
    for exe in beast-driver floor-driver beast-soak; do
        "$STRIP" --strip-all -o "$out/$exe" "$dir/$exe" || die "$STRIP could not strip $dir/$exe"
    done
}

# ARCH OUT LICENSES: toxiproxy-server into OUT and its license into LICENSES, built once per version,
# architecture and Go version
build_toxiproxy() {
    local arch=$1 out=$2 licenses=$3 goarch key dir mod
    case "$arch" in x86_64) goarch=amd64 ;; aarch64) goarch=arm64 ;; esac
    key="toxiproxy=$TOXIPROXY_VERSION goarch=$goarch cgo=0 $(go version) recipe=1"
    dir=$CACHE/toxiproxy-$TOXIPROXY_VERSION-static-$arch-$(echo "$key" | sha256sum | cut -c1-12)
    exec 6>"$CACHE/.toxiproxy-static-$arch.lock"
    flock -w 1800 6 || die "$CACHE/.toxiproxy-static-$arch.lock held for 30 min"
    if ! (cd "$dir" 2>/dev/null && sha256sum --status -c toxiproxy-server.sha256); then
        log "toxiproxy $TOXIPROXY_VERSION: go build for linux/$goarch into $dir; log: $LOGS/toxiproxy-$arch.log"
        rm -rf "$dir" && mkdir -p "$dir"
        {
            # the module's source as `go install ...@version` fetches it, built as its releases are (its go.sum)
            mod=$(go mod download -json "github.com/Shopify/toxiproxy/v2@$TOXIPROXY_VERSION" \
                  | python3 -c 'import json, sys; print(json.load(sys.stdin)["Dir"])') \
            && (cd "$mod" && CGO_ENABLED=0 GOOS=linux GOARCH=$goarch go build -trimpath \
                    -ldflags "-s -w -X github.com/Shopify/toxiproxy/v2.Version=${TOXIPROXY_VERSION#v}" \
                    -o "$dir/toxiproxy-server" ./cmd/server) \
            && cp "$mod/LICENSE" "$dir/LICENSE" \
            && (cd "$dir" && sha256sum toxiproxy-server > toxiproxy-server.sha256)
        } > "$LOGS/toxiproxy-$arch.log" 2>&1 || { rm -rf "$dir"; die "the toxiproxy build for $arch failed (see $LOGS/toxiproxy-$arch.log)"; }
    fi
    flock -u 6
    cp "$dir/toxiproxy-server" "$out/"
    cp "$dir/LICENSE" "$licenses/toxiproxy-LICENSE.txt"
}

# ARCH FILE: an executable for ARCH, stripped
check_executable() {
    local arch=$1 file=$2 machine
    case "$arch" in x86_64) machine='Advanced Micro Devices X86-64' ;; aarch64) machine=AArch64 ;; esac
    [ -x "$file" ] || die "$file is not an executable"
    readelf -h "$file" | grep -q "Machine: *$machine\$" || die "$file is not an $arch executable"
    if readelf -S --wide "$file" | grep -q ' \.symtab '; then die "$file is not stripped"; fi
}

OUT=$W/wheels-$SCRATCH
rm -rf "$OUT"
mkdir -p "$OUT"
for arch in "${ARCHS[@]}"; do
    start=$(date +%s)
    stage=$W/stage-$arch
    rm -rf "$stage"
    mkdir -p "$stage/licenses" "$stage/clientbench_native/bin"
    (cd "$ROOT/native" && tar cf - --exclude=__pycache__ --exclude='*.egg-info' --exclude=build .) | tar xf - -C "$stage"
    printf '__version__ = "%s"\n' "$VERSION" > "$stage/clientbench_native/_version.py"
    bin=$stage/clientbench_native/bin
    build_rust "$arch" "$bin"
    build_cpp "$arch" "$bin"
    build_toxiproxy "$arch" "$bin" "$stage/licenses"
    cp "$ROOT/bindings/beast/licenses/"{OpenSSL,brotli,zstd}-LICENSE.txt "$stage/licenses/"
    cp "$(go env GOROOT)/LICENSE" "$stage/licenses/Go-LICENSE.txt"
    for exe in "${EXECUTABLES[@]}"; do check_executable "$arch" "$bin/$exe"; done
    [ "$(find "$bin" -type f | wc -l)" = "${#EXECUTABLES[@]}" ] || die "$bin holds more than the ${#EXECUTABLES[@]} executables"

    log "wheel: $arch; log: $LOGS/wheel-$arch.log"
    rm -rf "$W/raw-$arch"
    "$TOOLS/bin/python" -I -m build --wheel --outdir "$W/raw-$arch" -C--build-option=--plat-name="linux_$arch" "$stage" \
        > "$LOGS/wheel-$arch.log" 2>&1 || die "the $arch wheel build failed (see $LOGS/wheel-$arch.log)"
    auditwheel_repair "$arch" "$W/raw-$arch/clientbench_native-$VERSION-py3-none-linux_$arch.whl" "$OUT" \
        "$LOGS/auditwheel-$arch.log"
    log "wheel: $arch done in $(( $(date +%s) - start )) s"
done

for arch in "${ARCHS[@]}"; do rm -f "$DIST"/clientbench_native-*_"$arch".whl; done
for whl in "$OUT"/clientbench_native-*.whl; do
    auditwheel_show_ok "$whl" "$LOGS/auditwheel-show-$SCRATCH.log" \
        || { cat "$LOGS/auditwheel-show-$SCRATCH.log" >&2; die "$whl is not manylinux_2_28"; }
    # what pip installs: the eight executables, executable, and nothing auditwheel grafted in (.libs)
    "$TOOLS/bin/python" -I - "$whl" "${EXECUTABLES[@]}" <<'EOF' || die "$whl does not hold what it must"
import sys, zipfile
whl, names = sys.argv[1], sys.argv[2:]
with zipfile.ZipFile(whl) as z:
    infos = {i.filename: i for i in z.infolist()}
missing = [n for n in names if f"clientbench_native/bin/{n}" not in infos]
not_exec = [n for n in names if n not in missing and not (infos[f"clientbench_native/bin/{n}"].external_attr >> 16) & 0o111]
grafted = [f for f in infos if ".libs/" in f]
for what, bad in (("missing", missing), ("not executable", not_exec), ("grafted libraries", grafted)):
    if bad:
        sys.exit(f"{whl}: {what}: {bad}")
EOF
    cp "$whl" "$DIST/"
    echo "$DIST/$(basename "$whl")"
done
