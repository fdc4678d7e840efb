# Shared by the benchmark drivers in tests/bench (run.sh, run_reason.sh,
# run_env.sh, run_guard.sh, count_env.sh, run_trace.sh): argument check, the benchmark
# program, python3, CPU pinning and the scratch directory. POSIX sh; sourced,
# not run. A driver sets ME to its own name (for its messages) and sources it
# from its own directory, which works in-tree and from a build directory:
#
#   ME=run.sh
#   . "$(dirname "$0")/common.sh"
#
# The functions set the variables named below (PY, PIN, TMP) for the driver;
# on a usage or setup error they print "usage: ..." or "$ME: ..." on stderr
# and exit the driver with status 2.
# shellcheck shell=sh disable=SC2034

# sg_die MESSAGE: "$ME: MESSAGE" on stderr, exit 2
sg_die() {
    echo "$ME: $*" >&2
    exit 2
}

# sg_args NARGS WANT USAGE: exit 2 with "usage: $0 USAGE" unless NARGS = WANT
sg_args() {
    if [ "$1" -ne "$2" ]; then
        echo "usage: $0 $3" >&2
        exit 2
    fi
}

# sg_need_bench PROGRAM BUILDDIR [TARGET]: exit 2 unless PROGRAM (a program
# BUILDDIR/tests/bench/NAME) is built; TARGET: another make target that
# builds it, for the message
sg_need_bench() {
    [ -x "$1" ] && return 0
    how="'make tests/bench/${1##*/}'"
    [ $# -lt 3 ] || how="$how (or 'make $3')"
    sg_die "$1 is missing: run $how in $2"
}

# sg_python: in PY, the python3 of the corpus generators: SG_BENCH_PYTHON,
# else /usr/bin/python3, else python3 on PATH
sg_python() {
    PY=${SG_BENCH_PYTHON:-/usr/bin/python3}
    if [ ! -x "$PY" ]; then
        PY=$(command -v python3 || true)
    fi
    [ -n "$PY" ] || sg_die "no python3 found: the corpus generator needs one"
}

# sg_pin: in PIN, the taskset command that pins to CPU SG_BENCH_CPU (default
# 0); empty when SG_BENCH_CPU is set and empty or there is no taskset
sg_pin() {
    PIN=
    if [ -n "${SG_BENCH_CPU-0}" ] && command -v taskset >/dev/null 2>&1; then
        PIN="taskset -c ${SG_BENCH_CPU-0}"
    fi
}

# sg_mktemp PREFIX: in TMP, a new directory ${TMPDIR:-/tmp}/PREFIX.XXXXXX,
# removed when the driver exits (INT or TERM: exit 130, removed too)
sg_mktemp() {
    TMP=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX") || exit 2
    trap 'rm -rf "$TMP"' EXIT
    trap 'exit 130' INT TERM
}

# sg_tmpdir PREFIX: in TMP, SG_BENCH_KEEP (created if need be, and kept) when
# set, else as sg_mktemp PREFIX
sg_tmpdir() {
    if [ -n "${SG_BENCH_KEEP:-}" ]; then
        TMP=$SG_BENCH_KEEP
        mkdir -p "$TMP" || exit 2
    else
        sg_mktemp "$1"
    fi
}
