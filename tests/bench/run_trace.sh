#!/bin/sh
# Graph capture benchmark (issue 13): the program of tests/bench/bench_trace.c
# traced by shapeguard and, in the same run, by PyTorch 1.13's
# make_fx(f, tracing_mode="symbolic") (tests/bench/bench_trace.py), at
# SG_TRACE_OPS program ops (default 6000: PyTorch takes about 1.7 ms a node, so
# 10 s a run), then shapeguard alone at 1x to 16x SG_TRACE_BASE ops (default
# 6000) for the growth. Prints time per op, the ratio, bytes per op and minor
# page faults per node (bench_trace.c: by one tracer reset between traces,
# the figure compared; and by a new tracer per trace, the fresh_ lines).
#
#   run_trace.sh BUILDDIR SRCDIR
set -u
ME=run_trace.sh
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"
sg_args $# 2 "BUILDDIR SRCDIR"
BUILD=$1
SRC=$2
BIN=$BUILD/tests/bench/bench_trace
sg_need_bench "$BIN" "$BUILD" bench-trace
OPS=${SG_TRACE_OPS:-6000}
BASE=${SG_TRACE_BASE:-6000}
sg_python
sg_pin
ours=$($PIN "$BIN" "$OPS" 5) || { echo "$ME: bench_trace failed" >&2; exit 1; }
echo "shapeguard, $OPS program ops:"
echo "$ours" | sed 's/^/  /'
if "$PY" -c 'import torch' 2>/dev/null; then
    theirs=$($PIN "$PY" "$SRC/tests/bench/bench_trace.py" "$OPS" 3) || { echo "$ME: bench_trace.py failed" >&2; exit 1; }
    echo "PyTorch make_fx (symbolic), $OPS program ops:"
    echo "$theirs" | sed 's/^/  /'
    a=$(echo "$ours" | sed -n 's/^trace_ns_per_op_median //p')
    b=$(echo "$theirs" | sed -n 's/^trace_ns_per_op_median //p')
    awk -v a="$a" -v b="$b" 'BEGIN { printf "ratio (PyTorch / shapeguard, per program op): %.0fx\n", b / a }'
    c=$(echo "$ours" | sed -n 's/^fresh_trace_ns_per_op_median //p')
    awk -v c="$c" -v b="$b" 'BEGIN { printf "ratio with a new shapeguard tracer per trace: %.0fx\n", b / c }'
else
    echo "PyTorch: torch cannot be imported by $PY: shapeguard side only"
fi
echo "growth (shapeguard):"
prev=""
for k in 1 2 4 8 16; do
    n=$((BASE * k))
    line=$($PIN "$BIN" "$n" 3 reused | sed -n 's/^trace_ns_per_op_median //p')
    total=$(awk -v t="$line" -v n="$n" 'BEGIN { printf "%.3f", t * n / 1e6 }')
    echo "  ${k}x ($n ops): $line ns per op, $total ms in all"
done
