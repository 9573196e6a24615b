#!/usr/bin/env bash
# Build two CPython interpreters from ONE upstream source tree and ONE set of configure flags:
# a default (GIL) build and a free-threaded one (--disable-gil), so that the GIL is the only difference.
#
#   scripts/build-cpython.sh [--refresh] [BUILD_DIR]
#
# BUILD_DIR defaults to the per-user cache, $CLIENTBENCH_CACHE/cpython (~/.cache/clientbench/cpython): the
# interpreters do not depend on the checkout, so every clone on the machine shares one build.
#
# The source is the upstream tarball (the .orig.tar.* of Debian's python3.14 or python3.13 source package,
# Debian patches NOT applied: one of them disables ensurepip), fetched with `apt-get source` through a
# private apt configuration under BUILD_DIR/apt (deb-src lines only, for unstable/testing/stable, signed
# by the archive keyring). The system's apt configuration is not touched; only missing bookworm -dev
# build dependencies are installed system-wide (sudo when not root).
#
# Layout of BUILD_DIR: apt/ (private apt state), downloads/, src/Python-X.Y.Z/, obj-gil/ obj-ft/
# (out-of-tree builds), gil/ ft/ (install prefixes), logs/, stamp (the cache key and the result).
#
# Cached: when both interpreters are installed for the recorded source and the same flags, it prints the
# result and exits 0 without touching the network. --refresh re-reads the archive's index and rebuilds
# only if a different source version is picked.
#
# Environment:
#   CPYTHON_SERIES            series to try, in order of preference (default "3.14 3.13")
#   CPYTHON_CONFIGURE_EXTRA   extra configure flags, given to BOTH builds (default none)
#   CPYTHON_JOBS              make -j (default: number of CPUs)
#   CPYTHON_APT_MIRROR        Debian mirror URI (default: the one the system's apt sources use)
#
# Output: progress on stderr; stdout gets exactly one line, the last one, e.g.
#   {"version": "3.13.15", "source": "python3.13 3.13.15-1", "configure": "...", "gil": "/.../python3.13", "ft": "/.../python3.13t"}
# Exit status: 0 built or cached; 3 the source cannot be fetched here (one-line reason on stderr; tests
# skip with it); 1 any other failure (one-line reason on stderr, details in BUILD_DIR/logs/).
set -euo pipefail

RECIPE=2  # bump when the way the interpreters are built changes: invalidates every cache
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
SUITES="unstable testing stable"

log() { echo "build-cpython: $*" >&2; }
die() { echo "build-cpython: error: $*" >&2; exit 1; }
unavailable() { echo "build-cpython: CPython source unavailable: $*" >&2; exit 3; }

REFRESH=0
BUILD=""
for arg in "$@"; do
    case "$arg" in
        --refresh) REFRESH=1 ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        -*) die "unknown option $arg (usage: $0 [--refresh] [BUILD_DIR])" ;;
        *) [ -z "$BUILD" ] || die "one build folder only (usage: $0 [--refresh] [BUILD_DIR])"; BUILD=$arg ;;
    esac
done
. "$(dirname "$0")/common.sh"
BUILD=${BUILD:-$CLIENTBENCH_CACHE/cpython}
mkdir -p "$BUILD" || die "cannot create the build folder $BUILD"
BUILD=$(cd "$BUILD" && pwd)

SERIES=${CPYTHON_SERIES:-"3.14 3.13"}
EXTRA=${CPYTHON_CONFIGURE_EXTRA:-}
JOBS=${CPYTHON_JOBS:-$(nproc 2>/dev/null || echo 2)}
# The flags both builds share (the prefix aside); the free-threaded build adds --disable-gil, nothing else.
# No --enable-optimizations (PGO) and no --with-lto: upstream's plain ./configure (OPT=-O3), like pyenv's
# default builds, and a few minutes for both builds instead of most of an hour. --disable-test-modules:
# no _testcapi & co. and no Lib/test (147 MB): less to compile and install, nothing the benchmark runs.
# OPT=-O3: configure's default optimisation without its -g (debug info is a quarter of the compile time and
# changes no generated code); configure still adds -DNDEBUG
COMMON_FLAGS="--with-ensurepip=install --disable-test-modules OPT=-O3${EXTRA:+ $EXTRA}"
FT_FLAG="--disable-gil"
KEY="recipe=$RECIPE build=$BUILD configure=$COMMON_FLAGS"
STAMP=$BUILD/stamp
LOGS=$BUILD/logs

# One run at a time per build folder (a second one waits for the first, then finds the cache).
if command -v flock >/dev/null; then
    exec 9>"$BUILD/.lock"
    flock -w 3600 9 || die "another build-cpython.sh has held $BUILD/.lock for an hour"
fi

in_series() { local s; for s in $SERIES; do [ "$s" = "$1" ] && return 0; done; return 1; }
stamp_get() { sed -n "s/^$1=//p" "$STAMP" 2>/dev/null | head -1; }

# ---- the cache: same key, a source of an allowed series, both interpreters there and running ----------
cached_ok() {
    [ -f "$STAMP" ] && [ "$(stamp_get key)" = "$KEY" ] || return 1
    local series gil ft
    series=$(stamp_get series); gil=$(stamp_get gil); ft=$(stamp_get ft)
    in_series "$series" && [ -x "$gil" ] && [ -x "$ft" ] || return 1
    "$gil" -I -c '' 2>/dev/null && "$ft" -I -c '' 2>/dev/null
}
if [ "$REFRESH" = 0 ] && cached_ok; then
    log "cached: $(stamp_get source) in $BUILD (--refresh to look for a newer source)"
    stamp_get json
    exit 0
fi

T0=$SECONDS
mkdir -p "$LOGS" "$BUILD/downloads" "$BUILD/src"

# ---- the source -------------------------------------------------------------------------------------
# $BUILD/src/current: "<source package> <Debian version> <tree>" of the last extracted source.
SRC_PKG="" SRC_VER="" SRC_TREE=""
if [ "$REFRESH" = 0 ] && [ -f "$BUILD/src/current" ]; then
    read -r p v t < "$BUILD/src/current" || true
    if [ -n "${t:-}" ] && [ -f "$BUILD/src/$t/.extracted" ] && in_series "${p#python}"; then
        SRC_PKG=$p SRC_VER=$v SRC_TREE=$t
        log "source: reusing $SRC_PKG $SRC_VER ($BUILD/src/$SRC_TREE)"
    fi
fi

setup_private_apt() {
    command -v apt-get >/dev/null || unavailable "apt-get not found (the source is fetched from Debian's archive)"
    [ -r "$KEYRING" ] || unavailable "$KEYRING missing (apt-get install debian-archive-keyring)"
    local mirror=${CPYTHON_APT_MIRROR:-} codename=""
    if [ -z "$mirror" ]; then
        codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
        # the URI of the system's main Debian suite (not -security/-updates/-backports)
        mirror=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE) $(TARGET_OF)' 2>/dev/null \
                 | awk -v c="$codename" '$3 == "deb" && $2 == c { print $1; exit }')
    fi
    [ -n "$mirror" ] || unavailable "no Debian mirror in the system's apt sources (set CPYTHON_APT_MIRROR)"
    mirror=${mirror%/}
    APT_DIR=$BUILD/apt
    mkdir -p "$APT_DIR/etc/sources.list.d" "$APT_DIR/etc/preferences.d" "$APT_DIR/state/lists/partial" \
             "$APT_DIR/cache/archives/partial"
    : > "$APT_DIR/etc/sources.list.new"
    local s
    for s in $SUITES; do
        echo "deb-src [signed-by=$KEYRING] $mirror $s main" >> "$APT_DIR/etc/sources.list.new"
    done
    mv "$APT_DIR/etc/sources.list.new" "$APT_DIR/etc/sources.list"
    APT_OPTS=(-q -o "Dir::State=$APT_DIR/state" -o "Dir::State::status=/var/lib/dpkg/status"
              -o "Dir::Cache=$APT_DIR/cache" -o "Dir::Etc::SourceList=$APT_DIR/etc/sources.list"
              -o "Dir::Etc::SourceParts=$APT_DIR/etc/sources.list.d"
              -o "Dir::Etc::Preferences=$APT_DIR/etc/preferences"
              -o "Dir::Etc::PreferencesParts=$APT_DIR/etc/preferences.d"
              -o "Acquire::http::Timeout=20" -o "Acquire::https::Timeout=20" -o "Acquire::Retries=1")
}

# newest first, by Debian version order
sort_versions_desc() {
    local -a vs=("$@") out=()
    local v i placed
    for v in "${vs[@]}"; do
        placed=0
        for i in "${!out[@]}"; do
            if dpkg --compare-versions "$v" gt "${out[$i]}"; then
                out=("${out[@]:0:$i}" "$v" "${out[@]:$i}"); placed=1; break
            fi
        done
        [ "$placed" = 1 ] || out+=("$v")
    done
    [ "${#out[@]}" = 0 ] || printf '%s\n' "${out[@]}"
}

fetch_source() {
    setup_private_apt
    log "source: apt-get update of the private deb-src index ($SUITES)"
    if ! timeout 300 apt-get "${APT_OPTS[@]}" --allow-releaseinfo-change update > "$LOGS/apt-update.log" 2>&1; then
        unavailable "apt-get update of the private deb-src index failed: $(grep -E '^(E|W):' "$LOGS/apt-update.log" | head -1 || tail -1 "$LOGS/apt-update.log")"
    fi
    local s pkg v tried="" dl tmp reason upd
    # apt-get update exits 0 when an index could not be fetched: keep its first complaint for the reason
    upd=$(grep -m1 -E '^(E|W): ' "$LOGS/apt-update.log" | cut -c1-200 || true)
    for s in $SERIES; do
        pkg=python$s
        local -a vers=()
        mapfile -t vers < <(apt-cache "${APT_OPTS[@]}" showsrc "$pkg" 2>/dev/null \
                            | awk -v p="$pkg" '/^Package: /{ok = ($2 == p)} ok && /^Version: /{print $2}' | sort -u)
        [ "${#vers[@]}" -gt 0 ] || { tried+=" $pkg:not-listed"; continue; }
        for v in $(sort_versions_desc "${vers[@]}"); do
            dl=$BUILD/downloads/${pkg}_${v}
            if [ -f "$dl/.complete" ]; then SRC_PKG=$pkg SRC_VER=$v; return 0; fi
            tmp=$(mktemp -d "$BUILD/downloads/.try.XXXXXX")
            # apt's download sandbox user must be able to write here
            if [ "$(id -u)" = 0 ] && id _apt >/dev/null 2>&1; then chown _apt "$tmp"; fi
            log "source: trying $pkg $v"
            if (cd "$tmp" && timeout 900 apt-get "${APT_OPTS[@]}" source --download-only "$pkg=$v") \
                    > "$LOGS/apt-source-${pkg}_$v.log" 2>&1; then
                rm -rf "$dl"; mv "$tmp" "$dl"; chown -R "$(id -u)" "$dl"; touch "$dl/.complete"
                SRC_PKG=$pkg SRC_VER=$v
                return 0
            fi
            reason=$(grep -oE '[0-9]{3} +[A-Za-z ]+' "$LOGS/apt-source-${pkg}_$v.log" | head -1 | tr -s ' ' || true)
            tried+=" $pkg=$v:${reason:-failed}"
            rm -rf "$tmp"
        done
    done
    unavailable "no python$(echo "$SERIES" | sed 's/ /|python/g') source package could be downloaded (tried:${tried:- nothing})${upd:+; apt-get update said: $upd}"
}

extract_source() {
    local dl=$BUILD/downloads/${SRC_PKG}_${SRC_VER} dsc orig sum want top
    local f
    dsc="" orig=""
    for f in "$dl"/*.dsc; do [ -f "$f" ] && dsc=$f && break; done
    [ -n "$dsc" ] || die "no .dsc in $dl"
    for f in "$dl"/*.orig.tar.*; do [ -f "$f" ] && [[ "$f" != *.asc ]] && orig=$f && break; done
    [ -n "$orig" ] || die "no upstream tarball (.orig.tar.*) in $dl"
    # apt checked every file against the signed index; check the tarball against the .dsc once more
    want=$(awk -v f="$(basename "$orig")" '/^Checksums-Sha256:/{c=1; next} /^[^ ]/{c=0} c && $3 == f {print $1}' "$dsc")
    sum=$(sha256sum "$orig" | cut -d' ' -f1)
    [ -n "$want" ] && [ "$sum" = "$want" ] || die "checksum of $(basename "$orig") does not match its .dsc"
    top=$(tar tf "$orig" 2>/dev/null | head -1 || true); top=${top%%/*}
    [[ "$top" == Python-* ]] || die "unexpected top folder '$top' in $(basename "$orig")"
    if [ ! -f "$BUILD/src/$top/.extracted" ]; then
        log "source: extracting $(basename "$orig") (upstream tree, Debian patches not applied)"
        rm -rf "$BUILD/src/.tmp" "$BUILD/src/$top"; mkdir -p "$BUILD/src/.tmp"
        tar xf "$orig" -C "$BUILD/src/.tmp" || die "cannot extract $orig"
        mv "$BUILD/src/.tmp/$top" "$BUILD/src/$top"; rmdir "$BUILD/src/.tmp"
        touch "$BUILD/src/$top/.extracted"
    fi
    SRC_TREE=$top
    echo "$SRC_PKG $SRC_VER $SRC_TREE" > "$BUILD/src/current"
}

if [ -z "$SRC_TREE" ]; then
    fetch_source
    extract_source
    log "source: $SRC_PKG $SRC_VER -> $BUILD/src/$SRC_TREE ($((SECONDS - T0)) s)"
fi
SRC=$BUILD/src/$SRC_TREE
SERIES_BUILT=${SRC_PKG#python}

# ---- bookworm build dependencies (only the missing ones) -----------------------------------------------
DEPS="build-essential pkg-config libssl-dev libffi-dev zlib1g-dev libbz2-dev liblzma-dev libsqlite3-dev
      libreadline-dev uuid-dev libncurses-dev libgdbm-dev libgdbm-compat-dev libexpat1-dev"
# (no libmpdec-dev in bookworm: _decimal uses the copy of libmpdec bundled with CPython, in both builds)
if dpkg --compare-versions "$SERIES_BUILT" ge 3.14; then DEPS+=" libzstd-dev"; fi  # compression.zstd
missing=""
for p in $DEPS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=" $p"
done
if [ -n "$missing" ]; then
    SUDO=""
    if [ "$(id -u)" != 0 ]; then
        command -v sudo >/dev/null || die "not root and no sudo: install$missing"
        if [ -t 0 ]; then SUDO=sudo; else SUDO="sudo -n"; fi
    fi
    log "deps: apt-get install$missing"
    # this project's apt runs take turns (scripts/apt-locked): lint's set-up may be installing beside this one
    exec 6>"$CLIENTBENCH_APT_LOCK"
    flock -w 1800 6 || die "another set-up step held $CLIENTBENCH_APT_LOCK for 30 min"
    timeout 600 $SUDO apt-get -q update > "$LOGS/deps-update.log" 2>&1 \
        || die "apt-get update failed (see $LOGS/deps-update.log)"
    # shellcheck disable=SC2086
    timeout 1800 $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
        -o DPkg::Lock::Timeout=600 $missing > "$LOGS/deps-install.log" 2>&1 \
        || die "apt-get install$missing failed: $(grep -m1 '^E: ' "$LOGS/deps-install.log" || tail -1 "$LOGS/deps-install.log") (see $LOGS/deps-install.log)"
    exec 6>&-
fi

# ---- two builds from the same tree, same flags but --disable-gil --------------------------------------
# A clean environment: CFLAGS, PYTHON*, PIP_* (PIP_FIND_LINKS would reach ensurepip) etc. stay out.
clean_env=(env -i "PATH=$PATH" "HOME=${HOME:-/root}" "TMPDIR=${TMPDIR:-/tmp}" LC_ALL=C)
build_one() {
    local v=$1 flags prefix=$BUILD/$1 obj=$BUILD/obj-$1 t=$SECONDS want
    flags="--prefix=$prefix $COMMON_FLAGS"
    [ "$v" = ft ] && flags+=" $FT_FLAG"
    want="$KEY source=$SRC_PKG $SRC_VER flags=$flags"
    if [ -f "$prefix/.built" ] && [ "$(cat "$prefix/.built")" = "$want" ]; then
        log "$v: already installed in $prefix"; return 0
    fi
    rm -rf "$obj" "$prefix"; mkdir -p "$obj"
    log "$v: configure $flags"
    # shellcheck disable=SC2086
    (cd "$obj" && "${clean_env[@]}" "$SRC/configure" $flags) > "$LOGS/$v-configure.log" 2>&1 \
        || die "configure failed for $v: $(tail -1 "$LOGS/$v-configure.log") (see $LOGS/$v-configure.log)"
    log "$v: make -j$JOBS"
    "${clean_env[@]}" make -C "$obj" -j"$JOBS" > "$LOGS/$v-make.log" 2>&1 \
        || die "make failed for $v: $(grep -m1 -E 'error|Error' "$LOGS/$v-make.log" || tail -1 "$LOGS/$v-make.log") (see $LOGS/$v-make.log)"
    local summary notbuilt
    summary=$(grep -m1 -E '^Checked [0-9]+ modules' "$LOGS/$v-make.log" || true)
    [ -z "$summary" ] || log "$v: $summary"
    notbuilt=$(awk '/were not found:|Failed to build these modules:|failed on import:|could not be imported/{f=1; next}
                    f && (/^$/ || /^(To find|Checked|Following|The necessary|Failed|Custom)/){f=0} f' "$LOGS/$v-make.log" \
               | tr -s ' \n' ' ' | sed 's/^ //; s/ $//')
    [ -z "$notbuilt" ] || log "$v: note: modules not built: $notbuilt"
    log "$v: make install"
    "${clean_env[@]}" make -C "$obj" install > "$LOGS/$v-install.log" 2>&1 \
        || die "make install failed for $v: $(tail -1 "$LOGS/$v-install.log") (see $LOGS/$v-install.log)"
    echo "$want" > "$prefix/.built"
    log "$v: built and installed in $((SECONDS - t)) s"
}
# Side by side: each build has long single-core stretches (configure, the links, make install) that the other
# fills on a small machine. They share only the read-only source tree; a failure in either fails the script.
build_one gil & gil_job=$!
build_one ft & ft_job=$!
trap 'kill "$gil_job" "$ft_job" 2>/dev/null || true' EXIT
failed=""
wait "$gil_job" || failed+=" gil"
wait "$ft_job" || failed+=" ft"
trap - EXIT
[ -z "$failed" ] || die "the build failed for:$failed (its error is above; logs in $LOGS)"

# ---- verification ---------------------------------------------------------------------------------------
GIL_PY=$BUILD/gil/bin/python$SERIES_BUILT
FT_PY=$BUILD/ft/bin/python${SERIES_BUILT}t
[ -x "$GIL_PY" ] || die "$GIL_PY missing after make install"
[ -x "$FT_PY" ] || die "$FT_PY missing after make install"
CHECK='import sys, ssl, sqlite3, ctypes, zlib, bz2, lzma, _ctypes, _decimal, _hashlib, readline
print(getattr(sys, "_is_gil_enabled", lambda: True)(), sys.version.replace(chr(10), " "))'
verify() {
    local v=$1 py=$2 expect=$3 out gil venv=$BUILD/.verify-venv-$1
    out=$("${clean_env[@]}" "$py" -I -c "$CHECK" 2>&1) || die "$v: $py cannot import the stdlib modules: $(echo "$out" | tail -1)"
    gil=${out%% *}
    [ "$gil" = "$expect" ] || die "$v: sys._is_gil_enabled() is $gil after the imports, expected $expect"
    rm -rf "$venv"
    "${clean_env[@]}" "$py" -m venv "$venv" > "$LOGS/$v-venv.log" 2>&1 \
        || die "$v: $py -m venv failed (see $LOGS/$v-venv.log)"
    "${clean_env[@]}" "$venv/bin/python" -m pip --version > /dev/null 2>> "$LOGS/$v-venv.log" \
        || die "$v: pip does not run in a venv of $py (see $LOGS/$v-venv.log)"
    rm -rf "$venv"
    log "$v: ok, GIL enabled: $gil, ${out#* }"
}
verify gil "$GIL_PY" True
verify ft "$FT_PY" False

JSON=$("$GIL_PY" -I -c '
import json, platform, sys
print(json.dumps({"version": platform.python_version(), "source": sys.argv[1], "configure": sys.argv[2],
                  "gil": sys.argv[3], "ft": sys.argv[4]}))' "$SRC_PKG $SRC_VER" "$COMMON_FLAGS" "$GIL_PY" "$FT_PY")
{
    echo "key=$KEY"
    echo "series=$SERIES_BUILT"
    echo "source=$SRC_PKG $SRC_VER"
    echo "gil=$GIL_PY"
    echo "ft=$FT_PY"
    echo "json=$JSON"
} > "$STAMP.new"
mv "$STAMP.new" "$STAMP"
log "done in $((SECONDS - T0)) s"
echo "$JSON"
