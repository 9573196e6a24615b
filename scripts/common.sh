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

# lowest PID: gives the session PID leads (a background build started with `setsid`, so that one kill stops all of
# it) the lowest priority. With the kernel's autogroups (CONFIG_SCHED_AUTOGROUP, on in Debian's kernels and most
# others) a new session is a scheduling group of its own, which gets as much CPU as the group that started it
# whatever its processes' nice values (those only rank threads within a group: sched(7)); /proc/PID/autogroup sets
# the group's own. Waits (up to 2 s) for the child to have made its session: written earlier, the value would go
# to the parent's group.
lowest() {
    local pid=$1 i
    for i in $(seq 200); do
        if [ "$(ps -o sid= -p "$pid" 2>/dev/null | tr -d ' ')" = "$pid" ]; then
            [ ! -w "/proc/$pid/autogroup" ] || echo 19 > "/proc/$pid/autogroup" 2>/dev/null || true
            return 0
        fi
        sleep 0.01
    done
}

# background LOG COMMAND...: COMMAND in the background, in a session of its own (one `kill -- -PID` stops all of
# it), at the lowest priority (nice 19 and `lowest`), its output in LOG; its PID in BACKGROUND_PID (this shell's
# child: `wait` works on it)
background() {
    local log=$1
    shift
    setsid nice -n 19 "$@" > "$log" 2>&1 < /dev/null &
    BACKGROUND_PID=$!
    lowest "$BACKGROUND_PID"
}
