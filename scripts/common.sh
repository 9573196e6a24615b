# Sourced by the scripts (and read by the Makefile): what they share, defined once.
#
# CLIENTBENCH_CACHE: the per-user cache of the versioned tools every clone on the machine shares (the CPythons,
# each architecture's static OpenSSL, zig/maturin, the arm64 .debs, toxiproxy, sccache) and of cargo's build-dir.
# Set it to move the cache; the Makefile exports it to everything it runs.
export CLIENTBENCH_CACHE=${CLIENTBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/clientbench}

# strict: true under CI (CI=true) or with CLIENTBENCH_STRICT=1. A set-up step that could not install something
# then fails, naming it, instead of warning and leaving its tests to skip (conftest.py turns those skips into
# failures the same way).
strict() {
    [ "${CI:-}" = true ] || [ "${CLIENTBENCH_STRICT:-}" = 1 ]
}

# the lock this project's own apt runs take turns with (scripts/apt-locked says why)
export CLIENTBENCH_APT_LOCK=${CLIENTBENCH_APT_LOCK:-${TMPDIR:-/tmp}/clientbench-apt.lock}
