#!/bin/sh
# Lifting benchmark (issue 14): tests/bench/bench_cond.c at growing sizes.
#   closures: one cond whose branches take N closed-over tensors of distinct
#             symbolic sizes, N in SG_COND_NS (default 100 1000 10000)
#   shared:   the same, every tensor of the same sizes (symbols lifted once)
#   unbacked: N nonzero results taken by one branch (their sizes read by
#             sym_size nodes)
#   depth:    SG_COND_K (default 10) closures used at depth D, D in
#             SG_COND_DEPTHS (default 1 10 25 50 100) nested conds
# Prints the cost per lift (per lift and level for depth) at each size, and
# the growth: the ratio of that cost at the largest size to the one at the
# size before (linear growth of the total keeps it near 1; the goal is at
# most 1.5). SG_COND_RUNS (default 5) runs per size, median. A failed run
# (a wrong graph) exits 1; a missed goal does not.
#
#   run_cond.sh BUILDDIR SRCDIR
set -u
ME=run_cond.sh
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"
sg_args $# 2 "BUILDDIR SRCDIR"
BUILD=$1
BIN=$BUILD/tests/bench/bench_cond
sg_need_bench "$BIN" "$BUILD" bench-cond
NS=${SG_COND_NS:-100 1000 10000}
DEPTHS=${SG_COND_DEPTHS:-1 10 25 50 100}
K=${SG_COND_K:-10}
RUNS=${SG_COND_RUNS:-5}
sg_pin

# run MODE SIZE KEY...: bench_cond's values of KEYs, space separated
run() {
    mode=$1 size=$2
    shift 2
    if [ "$mode" = depth ]; then
        out=$($PIN "$BIN" depth "$size" "$K" "$RUNS") || { echo "$ME: bench_cond depth $size failed" >&2; exit 1; }
    else
        out=$($PIN "$BIN" "$mode" "$size" "$RUNS") || { echo "$ME: bench_cond $mode $size failed" >&2; exit 1; }
    fi
    vals=''
    for key in "$@"; do
        vals="$vals $(echo "$out" | sed -n "s/^$key //p")"
    done
    echo "$vals"
}

# series MODE TITLE UNIT SIZES KEY LABEL...: a table over SIZES, and the growth
# ratio of the first KEY between the last two sizes
series() {
    mode=$1 title=$2 unit=$3 sizes=$4
    shift 4
    echo "$title"
    keys='' labels=''
    while [ $# -gt 0 ]; do
        keys="$keys $1"
        labels="$labels | $2"
        shift 2
    done
    echo "  $unit$labels (ns)"
    prev='' last=''
    for s in $sizes; do
        # shellcheck disable=SC2086
        vals=$(run "$mode" "$s" $keys) || exit 1
        echo "  $s$(echo "$vals" | sed 's/ / | /g')"
        prev=$last
        last=$(echo "$vals" | awk '{ print $1 }')
        lastsize=$s
        [ -n "$prev" ] && prevsize=$psize
        psize=$s
    done
    if [ -n "$prev" ]; then
        awk -v a="$prev" -v b="$last" -v p="$prevsize" -v q="$lastsize" -v u="$unit" 'BEGIN {
            r = b / a
            printf "  growth: cost per lift at %s %s / at %s: %.2fx (%s)\n", u, q, p, r,
                   r <= 1.5 ? "linear: within 1.5x" : "NOT within 1.5x"
        }'
    fi
}

echo "shapeguard lifting into cond branches ($RUNS runs per size, median)"
series closures "(a) closures: N tensors of distinct symbolic sizes, taken by both branches" N "$NS" \
    lift_true_ns_per_lift_median "true branch, per lift" lift_false_ns_per_lift_median "false branch, per lift" \
    cond_ns_per_input_median "sg_tracer_cond, per input" print_ns_per_input_median "print, per input" || exit 1
series shared "(c) shared: N tensors all [s0, s1] (the symbols lifted once per branch)" N "$NS" \
    lift_true_ns_per_lift_median "true branch, per lift" lift_false_ns_per_lift_median "false branch, per lift" \
    cond_ns_per_input_median "sg_tracer_cond, per input" print_ns_per_input_median "print, per input" || exit 1
series unbacked "(a') unbacked: N nonzero results taken by one branch" N "$NS" \
    lift_ns_per_lift_median "per lift" cond_ns_per_input_median "sg_tracer_cond, per closure" || exit 1
series depth "(b) depth: $K closures used at depth D (every level takes them)" D "$DEPTHS" \
    lift_ns_per_lift_level_median "lift, per closure and level" unwind_ns_per_level_median \
    "close + false branch + cond, per level" build_ns_per_level_median "whole build, per level" \
    print_ns_per_level_median "print, per level" || exit 1
