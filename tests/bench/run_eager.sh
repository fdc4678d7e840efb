#!/bin/sh
# Eager execution benchmark (issue 13): the program of tests/bench/bench_eager.c
# (SG_EAGER_OPS program ops, default 4000, a multiple of 8) run eagerly by
# shapeguard's walker, against the kernels' work alone (a re-run of the graph
# it made; the same arithmetic as plain loops), and in the same run by
# PyTorch 1.13 eager (tests/bench/bench_eager.py) on the same source and
# inputs; then shapeguard alone at 1x to 8x SG_EAGER_BASE ops (default 1000)
# for the growth. Prints time per op, overhead per op, the ratio, and the
# checksums of both results.
#
#   run_eager.sh BUILDDIR SRCDIR
set -u
ME=run_eager.sh
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"
sg_args $# 2 "BUILDDIR SRCDIR"
BUILD=$1
SRC=$2
BIN=$BUILD/tests/bench/bench_eager
sg_need_bench "$BIN" "$BUILD" bench-eager
OPS=${SG_EAGER_OPS:-4000}
BASE=${SG_EAGER_BASE:-1000}
RUNS=${SG_EAGER_RUNS:-11}
sg_python
sg_pin
sg_tmpdir sg_eager
ours=$($PIN "$BIN" "$OPS" "$RUNS") || { echo "$ME: bench_eager failed" >&2; exit 1; }
echo "shapeguard eager, $OPS program ops:"
echo "$ours" | sed 's/^/  /'
if "$PY" -c 'import torch' 2>/dev/null; then
    "$BIN" --source "$OPS" >"$TMP/program.py" || { echo "$ME: bench_eager --source failed" >&2; exit 1; }
    theirs=$($PIN "$PY" "$SRC/tests/bench/bench_eager.py" "$TMP/program.py" "$OPS" "$RUNS") ||
        { echo "$ME: bench_eager.py failed" >&2; exit 1; }
    echo "PyTorch eager, $OPS program ops:"
    echo "$theirs" | sed 's/^/  /'
    a=$(echo "$ours" | sed -n 's/^eager_ns_per_op_median //p')
    b=$(echo "$theirs" | sed -n 's/^eager_ns_per_op_median //p')
    ca=$(echo "$ours" | sed -n 's/^checksum //p')
    cb=$(echo "$theirs" | sed -n 's/^checksum //p')
    awk -v a="$a" -v b="$b" 'BEGIN { printf "ratio (PyTorch / shapeguard, per program op): %.2fx\n", b / a }'
    awk -v a="$ca" -v b="$cb" 'BEGIN { d = a - b; if (d < 0) d = -d; printf "checksums differ by %.3g (relative %.3g)\n", d, d / (b < 0 ? -b : b); exit !(d <= 1e-9 * (b < 0 ? -b : b)) }' ||
        { echo "$ME: the results differ" >&2; exit 1; }
else
    echo "PyTorch: torch cannot be imported by $PY: shapeguard side only"
fi
echo "growth (shapeguard):"
for k in 1 2 4 8; do
    n=$((BASE * k))
    out=$($PIN "$BIN" "$n" 5) || exit 1
    e=$(echo "$out" | sed -n 's/^eager_ns_per_op_median //p')
    o=$(echo "$out" | sed -n 's/^overhead_ns_per_op_vs_rerun //p')
    echo "  ${k}x ($n ops): $e ns per op, overhead $o ns per op beyond the re-run"
done
