#!/bin/sh
# Guards at call time benchmark (issue 6): a compiled guard program vs the
# same guards as C compiled with cc -O2 vs three Python lambdas (timeit): the
# PyTorch-style one over L (L['x0'].size()[0], size() a builtin returning a
# tuple), and two over the sizes already flattened, as the program gets them
# (like with like): over a list (v[0]) and with one parameter per size
# (lambda a0, a1, ...: called as f(*v), sympy's lambdify form).
#
#   run_guard.sh BUILDDIR SRCDIR
#
# Environment (all optional): SG_BENCH_GUARD_SIZES (default
# "10,100,1000,4355"), SG_BENCH_RUNS (rounds, best kept; default 7),
# SG_BENCH_SEED (default 42), SG_BENCH_CPU (CPU to pin to with taskset;
# default 0, empty: none), PYTHON3 (default python3), CC (default cc).
set -u
ME=run_guard.sh
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"
sg_args $# 2 "BUILDDIR SRCDIR"
BENCH=$1/tests/bench/bench_guard
sg_need_bench "$BENCH" "$1"
sg_pin
sg_mktemp sgbguard
echo "Guards at call time: program vs C (cc -O2) vs Python lambdas; every guard holds (best of ${SG_BENCH_RUNS:-7})"
echo "  prog/c: program time / time of the emitted C (exact, overflow-tested); prog/h: the same against the guards"
echo "  hand-written in plain C, return (G0) && (G1) && ... (the floor); both cc -O2 (goal <= 2)"
echo "  pt/prog: PyTorch-style lambda (lambda L: ... L['x0'].size()[0] ...) time / program time (goal >= 50);"
echo "  it reads the sizes out of its inputs, which the program is handed flattened. Like with like, over the"
echo "  flattened sizes: py/prog (lambda v: ... v[0] ...) and fl/prog (lambda a0, a1, ...: ... a0 ..., called f(*v));"
echo "  comp_us/g: compile time per guard (goal < 10); interp_ns, int/c: the program interpreted (SG_GUARD_INTERPRET),"
echo "  the path where there is no native code; native_B: bytes of native code (0: none)"
# shellcheck disable=SC2086
$PIN "$BENCH" -n "${SG_BENCH_GUARD_SIZES:-10,100,1000,4355}" -r "${SG_BENCH_RUNS:-7}" -s "${SG_BENCH_SEED:-42}" \
    -k "$TMP" -p "${PYTHON3:-python3}" -c "${CC:-cc}"
