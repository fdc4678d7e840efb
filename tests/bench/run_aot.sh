#!/bin/sh
# AOT pipeline benchmark (issue 20): the programs of tests/bench/bench_aot.c
# traced and compiled by shapeguard (sg_aot_compile: functionalization and
# the analysis) and, in the same run, PyTorch 1.13's
# make_fx(functionalize(f), tracing_mode="symbolic") on the same source
# (tests/bench/bench_aot.py):
#  1. the "common" program (what 1.13's symbolic mode traces) at SG_AOT_OPS
#     program ops (default 1600; PyTorch takes about 3 ms a node, 15 s a
#     run), both sides, the ratios, PyTorch's eager checksums against our
#     compiled run's;
#  2. the "full" program (slices, select, narrow, diagonal, copy_, zero_,
#     t_ too: 1.13's symbolic make_fx refuses it) at SG_AOT_OPS, ours, and
#     PyTorch eager's checksums against ours;
#  3. the growth: the full program at 1x to 16x SG_AOT_BASE ops (default
#     1536), median of 3 runs each; with SG_AOT_COUNT=1 also the compile's
#     instructions (callgrind) at 1x and 16x;
#  4. the runtime wrapper's cost per call (bench_aot --wrapper).
# bench_aot itself exits 1 when the compiled run and our eager run differ;
# this script exits 1 when they differ from PyTorch eager (relative
# difference above 1e-9) or a side fails. `uptime` is printed before and
# after: the wall clock moves with the machine's load.
#
#   run_aot.sh BUILDDIR SRCDIR
#
# SG_AOT_OPS, SG_AOT_BASE, SG_AOT_RUNS (ours, default 5), SG_AOT_TORCH_RUNS
# (default 3), SG_AOT_CALLS (wrapper calls per round, default 2000),
# SG_AOT_COUNT; SG_BENCH_CPU, SG_BENCH_PYTHON, SG_BENCH_KEEP as for the
# other benchmarks.
set -u
ME=run_aot.sh
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"
sg_args $# 2 "BUILDDIR SRCDIR"
BUILD=$1
SRC=$2
BIN=$BUILD/tests/bench/bench_aot
sg_need_bench "$BIN" "$BUILD" bench-aot
OPS=${SG_AOT_OPS:-1600}
BASE=${SG_AOT_BASE:-1536}
RUNS=${SG_AOT_RUNS:-5}
TRUNS=${SG_AOT_TORCH_RUNS:-3}
CALLS=${SG_AOT_CALLS:-2000}
sg_python
sg_pin
if [ "${SG_AOT_COUNT:-0}" = 1 ]; then
    if ! command -v valgrind >/dev/null 2>&1 || ! command -v callgrind_annotate >/dev/null 2>&1; then
        sg_die "SG_AOT_COUNT=1 needs valgrind (callgrind_annotate)"
    fi
fi
sg_tmpdir sg_aot
echo "uptime before: $(uptime)"
key() { echo "$1" | sed -n "s/^$2 //p"; }
# ir CALLGRIND_OUT: the instructions it counted
ir() { callgrind_annotate "$1" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }'; }
# compare_sums OURS THEIRS: the four checksums within 1e-9 (relative)
compare_sums() {
    for k in checksum_o0 checksum_o1 checksum_o2 checksum_x; do
        a=$(key "$1" $k)
        b=$(key "$2" $k)
        awk -v k=$k -v a="$a" -v b="$b" 'BEGIN { d = a - b; if (d < 0) d = -d; m = b < 0 ? -b : b; if (m < 1) m = 1
            printf "  %s: shapeguard compiled %s, PyTorch eager %s (difference %.3g)\n", k, a, b, d; exit !(d <= 1e-9 * m) }' ||
            { echo "$ME: the results differ ($k)" >&2; exit 1; }
    done
}
HAVE_TORCH=0
"$PY" -c 'import torch, functorch' 2>/dev/null && HAVE_TORCH=1
for kind in common full; do
    ours=$($PIN "$BIN" "$OPS" "$RUNS" $kind) || { echo "$ME: bench_aot $OPS $RUNS $kind failed" >&2; exit 1; }
    n=$(key "$ours" ops)
    echo "shapeguard, $kind program, $n program ops:"
    echo "$ours" | sed 's/^/  /'
    [ $HAVE_TORCH = 1 ] || { echo "PyTorch: torch and functorch cannot be imported by $PY: shapeguard side only"; continue; }
    "$BIN" --source "$OPS" $kind >"$TMP/$kind.py" || { echo "$ME: bench_aot --source failed" >&2; exit 1; }
    theirs=$($PIN "$PY" "$SRC/tests/bench/bench_aot.py" "$TMP/$kind.py" "$n" "$TRUNS") ||
        { echo "$ME: bench_aot.py failed" >&2; exit 1; }
    echo "PyTorch 1.13 make_fx(functionalize(f), tracing_mode=\"symbolic\"), $kind program:"
    echo "$theirs" | sed 's/^/  /'
    echo "results (the compiled run against PyTorch eager):"
    compare_sums "$ours" "$theirs"
    b=$(key "$theirs" make_fx_ns_per_node_median)
    [ -n "$b" ] || continue
    bo=$(key "$theirs" make_fx_ns_per_op_median)
    awk -v c="$(key "$ours" compile_ns_per_functional_node_median)" \
        -v tc="$(key "$ours" trace_compile_ns_per_functional_node_median)" \
        -v co="$(key "$ours" compile_ns_per_op_median)" -v to="$(key "$ours" trace_ns_per_op_median)" \
        -v b="$b" -v bo="$bo" 'BEGIN {
        printf "ratio per node (PyTorch per node of its graph / our compile per node of the functional graph): %.0fx\n", b / c
        printf "ratio per node, our trace + compile: %.0fx\n", b / tc
        printf "ratio per program op (compile alone): %.0fx; trace + compile: %.0fx\n", bo / co, bo / (co + to) }'
done
echo "growth (shapeguard, full program, median of 3 runs):"
first=
for k in 1 2 4 8 16; do
    out=$($PIN "$BIN" $((BASE * k)) 3 full) || { echo "$ME: bench_aot $((BASE * k)) failed" >&2; exit 1; }
    n=$(key "$out" ops)
    ms=$(key "$out" compile_ms_median)
    [ -n "$first" ] || first=$ms
    echo "  ${k}x ($n ops): compile $(key "$out" compile_ns_per_op_median) ns per op, $ms ms in all" \
        "($(awk -v a="$ms" -v b="$first" 'BEGIN { printf "%.2fx", a / b }') the 1x time);" \
        "trace $(key "$out" trace_ns_per_op_median) ns per op"
done
awk -v a="$ms" -v b="$first" 'BEGIN { r = a / b; printf "16x the ops took %.2fx the compile time: %s\n", r,
    r <= 17 ? "within 17x" : "above 17x" }'
if [ "${SG_AOT_COUNT:-0}" = 1 ]; then
    echo "compile instructions (callgrind, --toggle-collect=compile_body: keep_input_mutations=1):"
    for k in 1 16; do
        valgrind --tool=callgrind --callgrind-out-file="$TMP/cg.$k" --toggle-collect=compile_body \
            "$BIN" $((BASE * k)) 1 full >"$TMP/cg.$k.out" 2>&1 || { echo "$ME: callgrind failed" >&2; exit 1; }
        i=$(ir "$TMP/cg.$k")
        n=$(key "$(cat "$TMP/cg.$k.out")" ops)
        echo "  ${k}x ($n ops): $i instructions, $(awk -v i="$i" -v n="$n" 'BEGIN { printf "%.0f", i / n }') per op"
        eval "I$k=$i"
    done
    awk -v a="$I16" -v b="$I1" 'BEGIN { printf "  16x / 1x: %.2fx\n", a / b }'
fi
echo "runtime wrapper (bench_aot --wrapper $CALLS):"
w=$($PIN "$BIN" --wrapper "$CALLS") || { echo "$ME: bench_aot --wrapper failed" >&2; exit 1; }
echo "$w" | sed 's/^/  /'
awk -v a="$(key "$w" wrapper_keep0_overhead_ns)" -v b="$(key "$w" wrapper_keep1_overhead_ns)" 'BEGIN {
    printf "wrapper overhead per call beyond the same kernels: %.0f ns (epilogue), %.0f ns (in-graph copy): %s\n", a, b,
        (a <= 1000 && b <= 1000) ? "within 1 us" : "above 1 us" }'
if [ "${SG_AOT_COUNT:-0}" = 1 ]; then
    echo "runtime wrapper, instructions per call (callgrind, --toggle-collect=call_aot and call_traced; 100 calls a round):"
    for p in keep0 keep1 pure; do
        valgrind --tool=callgrind --callgrind-out-file="$TMP/cgw.$p.a" --toggle-collect=call_aot \
            "$BIN" --wrapper 100 $p >"$TMP/cgw.$p.out" 2>&1 || { echo "$ME: callgrind failed" >&2; exit 1; }
        valgrind --tool=callgrind --callgrind-out-file="$TMP/cgw.$p.t" --toggle-collect=call_traced \
            "$BIN" --wrapper 100 $p >/dev/null 2>&1 || { echo "$ME: callgrind failed" >&2; exit 1; }
        awk -v p=$p -v a="$(ir "$TMP/cgw.$p.a")" -v b="$(ir "$TMP/cgw.$p.t")" \
            -v n="$(key "$(cat "$TMP/cgw.$p.out")" wrapper_calls_each_side)" 'BEGIN {
            printf "  %s: sg_aot_call %.0f, without the wrapper %.0f, overhead %.0f instructions a call\n", p, a / n, b / n, (a - b) / n }'
    done
fi
echo "uptime after: $(uptime)"
