#!/usr/bin/env bash
# Builds the standalone source distributions of both bindings into dist/ and prints their paths.
#
#   scripts/build-sdists.sh
#
# beast-client: `python -m build --sdist bindings/beast` (scikit-build-core copies cpp-beast/ into it).
# reqwest-client: `maturin sdist` gives the binding, rust-reqwest and a workspace Cargo.toml reduced to those
# two members, but the Cargo.lock of the whole clientbench workspace (server crates included), on which
# `cargo build --locked` fails. So the lock is made here, at every build, from the workspace's Cargo.lock: it
# is copied into the unpacked sdist and cargo prunes the entries the two crates do not use, keeping every
# pinned version (no re-resolution, no network); `cargo metadata --locked` then checks that it is exact, and
# the tarball is written again with that Cargo.lock in place of the original. It also gains the workspace's
# .cargo/config.toml (maturin leaves it out), whose `--cfg reqwest_unstable` reqwest's `http3` feature needs:
# pip builds an sdist in its unpacked folder, where cargo finds that file.
#
# Uses the cached tools venv of the wheel scripts (scripts/wheel-tools.sh: maturin, build). Needs cargo.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
W=$ROOT/build/wheel
DIST=$ROOT/dist
LOGS=$W/logs
mkdir -p "$W" "$LOGS" "$DIST"

log() { printf '[build-sdists] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

command -v cargo >/dev/null || die "cargo is not on PATH (it makes the reqwest sdist's Cargo.lock)"
TOOLS=$("$ROOT/scripts/wheel-tools.sh")

OUT=$W/sdists
rm -rf "$OUT"
mkdir -p "$OUT/beast" "$OUT/reqwest"

# ---- beast-client -------------------------------------------------------------------------------------
"$TOOLS/bin/python" -I -m build --sdist --outdir "$OUT/beast" "$ROOT/bindings/beast" > "$LOGS/sdist-beast.log" 2>&1 \
    || die "the beast-client sdist failed (see $LOGS/sdist-beast.log)"

# ---- reqwest-client -----------------------------------------------------------------------------------
"$TOOLS/bin/maturin" sdist --manifest-path "$ROOT/bindings/reqwest/Cargo.toml" --out "$OUT/reqwest" \
    > "$LOGS/sdist-reqwest.log" 2>&1 || die "maturin sdist failed (see $LOGS/sdist-reqwest.log)"
tarball=$(ls "$OUT"/reqwest/reqwest_client-*.tar.gz)
top=$(basename "$tarball" .tar.gz)
mkdir -p "$OUT/unpacked"
tar xzf "$tarball" -C "$OUT/unpacked"
pkg=$OUT/unpacked/$top
[ -f "$pkg/Cargo.lock" ] || die "$tarball has no $top/Cargo.lock"
cp "$ROOT/Cargo.lock" "$pkg/Cargo.lock"  # the workspace's lock, as it is now
(
    cd "$pkg"
    # resolving against an existing lock keeps its versions and drops what is unused; offline first (the
    # crates are in cargo's cache after any workspace build)
    cargo metadata --format-version 1 --offline > /dev/null 2>&1 || cargo metadata --format-version 1 > /dev/null
    cargo metadata --format-version 1 --locked --offline > /dev/null
) 2>> "$LOGS/sdist-reqwest.log" || die "pruning the reqwest sdist's Cargo.lock failed (see $LOGS/sdist-reqwest.log)"
grep -q '^name = "clientbench-server"' "$pkg/Cargo.lock" && die "the pruned Cargo.lock still lists clientbench-server"
log "reqwest sdist: Cargo.lock $(grep -c '^\[\[package\]\]' "$ROOT/Cargo.lock") -> $(grep -c '^\[\[package\]\]' "$pkg/Cargo.lock") packages"
python3 - "$tarball" "$top/Cargo.lock" "$pkg/Cargo.lock" "$top/.cargo/config.toml" "$ROOT/.cargo/config.toml" <<'EOF'
import copy, io, sys, tarfile
path, member, lock = sys.argv[1], sys.argv[2], open(sys.argv[3], "rb").read()
config_member, config = sys.argv[4], open(sys.argv[5], "rb").read()
with tarfile.open(path) as src:
    members = [(m, src.extractfile(m).read() if m.isfile() else None) for m in src.getmembers()]
assert member in (m.name for m, _ in members), f"{member} not in {path}"
assert config_member not in (m.name for m, _ in members), f"{config_member} already in {path}"
with tarfile.open(path + ".new", "w:gz", format=tarfile.PAX_FORMAT) as dst:
    for m, data in members:
        if m.name == member:
            data = lock
            m.size = len(lock)
            # the config beside the lock, with its owner, mode and time
            c = copy.copy(m)
            c.name, c.size = config_member, len(config)
            dst.addfile(c, io.BytesIO(config))
        dst.addfile(m, io.BytesIO(data) if data is not None else None)
EOF
mv "$tarball.new" "$tarball"

rm -f "$DIST"/beast_client-*.tar.gz "$DIST"/reqwest_client-*.tar.gz
for f in "$OUT"/beast/*.tar.gz "$OUT"/reqwest/*.tar.gz; do
    cp "$f" "$DIST/"
    echo "$DIST/$(basename "$f")"
done
