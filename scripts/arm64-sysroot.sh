#!/usr/bin/env bash
# An arm64 (aarch64) Debian bookworm CPython 3.11, unpacked into a sysroot under the build folder, to build the
# aarch64 wheels against (its headers and sysconfig) and to test them under qemu-user:
#
#   SYSROOT=$(scripts/arm64-sysroot.sh [--refresh])      # prints the sysroot's folder (build/arm64-sysroot)
#   qemu-aarch64-static -L "$SYSROOT" "$SYSROOT/usr/bin/python3.11" -c 'import platform; print(platform.machine())'
#
# What: python3.11 and everything it depends on (libc6 included); alone, without their dependencies,
# libpython3.11-dev (the headers and pyconfig.h that a cross-compiled extension is built against; compilers and
# C headers are not needed) and python3-pip-whl (Debian's pip wheel, unpacked into SYSROOT/opt/pip: with
# PYTHONPATH=SYSROOT/opt/pip the arm64 interpreter runs `-m pip`; ensurepip cannot, since it starts an arm64
# subprocess, which needs binfmt_misc, not used here). The .debs are fetched with
# `apt-get download` through a private apt configuration (Architecture arm64, deb lines for bookworm,
# bookworm-updates and bookworm-security, signed by the archive keyring) and unpacked with `dpkg -x`: nothing
# is installed, and neither the system's apt configuration, its dpkg architectures nor its Python change.
#
# Cached in the per-user cache ($CLIENTBENCH_CACHE, ~/.cache/clientbench/arm64-debs): the private apt lists
# (read again only with --refresh, or when missing) and the .debs, whose file names carry their versions and
# whose SHA-256 is checked against the archive's index before one is reused; a second clone resolves the same
# versions from the cached lists and downloads nothing. The sysroot is unpacked again only when the resolved
# set of .debs (the stamp's key) changes; while the cached lists are the ones it was made from, it is reused
# without asking apt.
#
# Output: progress on stderr; stdout gets exactly one line, the sysroot's absolute path.
set -euo pipefail

RECIPE=2  # bump when the package set or the way the sysroot is unpacked changes
SERIES=3.11
# resolved with their dependencies
PACKAGES=("python$SERIES")
# unpacked alone (their dependencies: build tools and C headers the cross-compiler brings itself; the pip wheel
# runs on the interpreter above)
ALONE=("libpython$SERIES-dev" python3-pip-whl)
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
MIRROR=${CLIENTBENCH_APT_MIRROR:-http://deb.debian.org}

ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$(dirname "$0")/common.sh"
CACHE=$CLIENTBENCH_CACHE
C=$CACHE/arm64-debs
A=$C/apt
DEBS=$C/debs

log() { printf '[arm64-sysroot] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

REFRESH=0
SYSROOT=""
for arg in "$@"; do
    case "$arg" in
        --refresh) REFRESH=1 ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        -*) die "unknown option $arg (usage: $0 [--refresh] [SYSROOT])" ;;
        *) SYSROOT=$arg ;;
    esac
done
SYSROOT=${SYSROOT:-$ROOT/build/arm64-sysroot}
if ! command -v apt-get >/dev/null || ! command -v dpkg >/dev/null; then die "apt-get and dpkg are needed (Debian)"; fi
[ -r "$KEYRING" ] || die "$KEYRING missing (apt-get install debian-archive-keyring)"
mkdir -p "$A/etc/sources.list.d" "$A/etc/preferences.d" "$A/state/lists/partial" "$A/cache/archives/partial" \
         "$DEBS" "$(dirname "$SYSROOT")"

# one run at a time per cache (the lists and the .debs), and per sysroot
exec 8>"$C/.lock"
flock -w 1800 8 || die "$C/.lock held for 30 min"

# resolve the whole closure: nothing counts as installed (made once: its mtime is part of apt's cache key)
[ -f "$A/empty-status" ] || : > "$A/empty-status"
{
    for s in "debian bookworm" "debian bookworm-updates" "debian-security bookworm-security"; do
        read -r path suite <<< "$s"
        echo "deb [arch=arm64 signed-by=$KEYRING] $MIRROR/$path $suite main"
    done
} > "$A/etc/sources.list.new"
cmp -s "$A/etc/sources.list.new" "$A/etc/sources.list" || { mv "$A/etc/sources.list.new" "$A/etc/sources.list"; REFRESH=1; }
rm -f "$A/etc/sources.list.new"
APT_OPTS=(-q -o "APT::Architecture=arm64" -o "APT::Architectures=arm64"
          -o "Dir::State=$A/state" -o "Dir::State::status=$A/empty-status" -o "Dir::Cache=$A/cache"
          -o "Dir::Etc::SourceList=$A/etc/sources.list" -o "Dir::Etc::SourceParts=$A/etc/sources.list.d"
          -o "Dir::Etc::Preferences=$A/etc/preferences" -o "Dir::Etc::PreferencesParts=$A/etc/preferences.d"
          -o "Acquire::Languages=none" -o "Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false"
          -o "Dir::Cache::pkgcache=pkgcache.bin" -o "Dir::Cache::srcpkgcache=srcpkgcache.bin"
          -o "APT::Sandbox::User=root")
UPDATED=0
if [ "$REFRESH" = 1 ] || ! compgen -G "$A/state/lists/*_Packages*" >/dev/null; then
    log "apt-get update (arm64, bookworm) into $A"
    apt-get "${APT_OPTS[@]}" update > "$C/apt-update.log" 2>&1 || die "apt-get update failed (see $C/apt-update.log)"
    UPDATED=1
fi
# cached lists name versions the archive may have superseded since (a security upload): when resolving or
# downloading fails with them, run once more with lists read anew
stale() {
    [ "$UPDATED" = 0 ] || die "$1"
    log "$1: reading the index anew"
    exec 8>&-
    exec "$0" --refresh "$SYSROOT"
}
PY=$SYSROOT/usr/bin/python$SERIES
# what the sysroot was made from: this recipe and package set, and the lists' Release files
LISTS=$( (echo "$RECIPE ${PACKAGES[*]} ${ALONE[*]}"; cat "$A"/state/lists/*Release) | sha256sum | cut -c1-16)
if [ "$(cat "$SYSROOT/.lists" 2>/dev/null)" = "$LISTS" ] && [ -f "$SYSROOT/.key" ] && [ -x "$PY" ]; then
    echo "$SYSROOT"
    exit 0
fi

# ---- the set: name, version and SHA-256 of every .deb, from the (cached) index ---------------------------
# --print-uris with an empty dpkg status: the dependency closure, resolved by apt, downloaded by nothing;
# lines: 'URI' NAME_VERSION_ARCH.deb SIZE HASH (the version's epoch colon written %3a)
uris=$(apt-get "${APT_OPTS[@]}" -qq install --print-uris --no-install-recommends -y "${PACKAGES[@]}" 2>"$C/resolve.log") \
    || stale "cannot resolve ${PACKAGES[*]} for arm64 (see $C/resolve.log)"
alone=$(apt-get "${APT_OPTS[@]}" -qq download --print-uris "${ALONE[@]}" 2>>"$C/resolve.log") \
    || stale "cannot resolve ${ALONE[*]} for arm64 (see $C/resolve.log)"
mapfile -t wanted < <(printf '%s\n%s\n' "$uris" "$alone" \
    | awk 'NF >= 3 { split($2, f, "_"); gsub(/%3a/, ":", f[2]); print f[1] "=" f[2] }' | sort -u)
[ "${#wanted[@]}" -gt 0 ] || die "apt resolved no .debs for ${PACKAGES[*]} (see $C/resolve.log)"
# manifest lines: FILE SHA256, FILE named as `apt-get download` names it
manifest=$(apt-cache "${APT_OPTS[@]}" show --no-all-versions "${wanted[@]}" 2>>"$C/resolve.log" | awk '
    /^Package: /      { p = $2 }
    /^Version: /      { v = $2; gsub(/:/, "%3a", v) }
    /^Architecture: / { a = $2 }
    /^SHA256: /       { h = $2 }
    /^$/              { if (p != "") print p "_" v "_" a ".deb", h; p = "" }
    END               { if (p != "") print p "_" v "_" a ".deb", h }' | sort -u)
[ "$(wc -l <<< "$manifest")" = "${#wanted[@]}" ] \
    || die "the index does not describe every resolved package (see $C/resolve.log)"
# the Python itself must be in the set (a resolver that chose nothing would make an empty sysroot)
grep -q "^python${SERIES}_.*_arm64\.deb " <<< "$manifest" || die "python$SERIES (arm64) is not in the resolved set"

missing=()
while read -r file sha; do
    if [ -f "$DEBS/$file" ] && [ "$(sha256sum < "$DEBS/$file" | cut -d' ' -f1)" = "$sha" ]; then
        continue
    fi
    rm -f "$DEBS/$file"
    # FILE is NAME_VERSION_ARCH.deb, the version's epoch colon written %3a
    name=${file%%_*}; rest=${file#*_}; version=${rest%_*}
    missing+=("$name=${version//%3a/:}")
done <<< "$manifest"
if [ "${#missing[@]}" -gt 0 ]; then
    log "apt-get download: ${#missing[@]} arm64 .debs into $DEBS"
    (cd "$DEBS" && apt-get "${APT_OPTS[@]}" download "${missing[@]}") > "$C/download.log" 2>&1 \
        || stale "apt-get download failed (see $C/download.log)"
    while read -r file sha; do
        [ "$(sha256sum < "$DEBS/$file" | cut -d' ' -f1)" = "$sha" ] || die "$DEBS/$file: SHA-256 is not the index's"
    done <<< "$manifest"
else
    log "all $(wc -l <<< "$manifest") arm64 .debs cached in $DEBS"
fi

# ---- the sysroot --------------------------------------------------------------------------------------
KEY="recipe=$RECIPE $(sha256sum <<< "$manifest" | cut -c1-16)"
if [ "$(cat "$SYSROOT/.key" 2>/dev/null)" != "$KEY" ] || [ ! -x "$PY" ]; then
    log "unpacking $(wc -l <<< "$manifest") .debs into $SYSROOT"
    rm -rf "$SYSROOT"
    mkdir -p "$SYSROOT"
    while read -r file _; do
        dpkg -x "$DEBS/$file" "$SYSROOT"
    done <<< "$manifest"
    # the headers' pyconfig.h includes <aarch64-linux-gnu/python3.11/pyconfig.h>: one folder that has both
    inc=$SYSROOT/usr/include/python$SERIES
    if [ ! -f "$inc/Python.h" ] || [ ! -f "$SYSROOT/usr/include/aarch64-linux-gnu/python$SERIES/pyconfig.h" ]; then
        die "libpython$SERIES-dev did not provide Python.h and the aarch64 pyconfig.h"
    fi
    pipwhl=$(compgen -G "$SYSROOT/usr/share/python-wheels/pip-*.whl" | head -1) \
        || die "python3-pip-whl did not provide a pip wheel"
    python3 -m zipfile -e "$pipwhl" "$SYSROOT/opt/pip" || die "cannot unpack $pipwhl"
    printf '%s\n' "$manifest" > "$SYSROOT/.manifest"
    echo "$KEY" > "$SYSROOT/.key"
fi
echo "$LISTS" > "$SYSROOT/.lists"
echo "$SYSROOT"
