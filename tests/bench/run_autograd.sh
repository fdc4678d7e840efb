#!/bin/sh
# Autograd benchmark (issue 21): the training program of
# tests/bench/bench_autograd.c traced and compiled by shapeguard
# (sg_aot_compile: functionalization, the joint graph of the forward and
# its backward, the partition) and, in the same run, PyTorch 1.13's
# aot_function(f, nop, nop, partition_fn=min_cut_rematerialization_partition)
# on the same source (tests/bench/bench_autograd.py; 1.13's min-cut needs
# python3-networkx):
#  1. the long program at SG_AUTOGRAD_OPS program ops (default 600), both
#     sides: time per node of the joint graph (forward and backward nodes,
#     each side counting its own graphs) and per program op, the ratios,
#     our gradients' checksums against PyTorch eager's, and what each
#     side's partition saves;
#  2. the growth: ours at 1x to 16x SG_AUTOGRAD_BASE ops (default 1520),
#     median of 3 runs each; with SG_AUTOGRAD_COUNT=1 also the compile's
#     instructions (callgrind) at 1x and 16x (about a minute more);
#  2b. the --hidden program (a chain of layout changes under no_grad every
#     block's gradient crosses) at SG_AUTOGRAD_HIDDEN_OPS ops (default
#     1000), both sides, its checksums compared, then ours at 1x to 16x;
#  3. the bytes each partition saves for the backward over the training
#     programs of the batteries (SRCDIR/tests/batteries/*.battery whose
#     cases have a program of tensor parameters one of which requires
#     grad): ours (bench_autograd --saved: sg_aot_saved) against 1.13's
#     min-cut, per program and in total, and where ours saves more.
# Exit status 1 when our gradients differ from PyTorch eager's (relative
# difference above 1e-9) or a side fails. That ours saves more than
# PyTorch somewhere is reported ("goal not met"), not an error. A program
# that 1.13's aot_function computes otherwise than 1.13's eager run
# (outputs, inputs after the call and after the backward, gradients: it
# mishandles input mutations, a backward's writes, non-leaf inputs), and
# a torch.cond program (1.13 has none: the oracle's stand-in traces one
# branch), is left out of the comparison: its partition is of another
# program, and says nothing.
# `uptime` is printed before and after: the wall clock moves with the
# machine's load.
#
#   run_autograd.sh BUILDDIR SRCDIR
#
# SG_AUTOGRAD_BATTERIES: the battery files of step 3 instead (generated
# training programs: tests/diff/prog_gen.py --grad).
# SG_AUTOGRAD_OPS, SG_AUTOGRAD_BASE, SG_AUTOGRAD_RUNS (ours, default 5),
# SG_AUTOGRAD_TORCH_RUNS (default 3), SG_AUTOGRAD_COUNT; SG_BENCH_CPU, SG_BENCH_PYTHON,
# SG_BENCH_KEEP as for the other benchmarks.
set -u
ME=run_autograd.sh
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"
sg_args $# 2 "BUILDDIR SRCDIR"
BUILD=$1
SRC=$2
BIN=$BUILD/tests/bench/bench_autograd
sg_need_bench "$BIN" "$BUILD" bench-autograd
OPS=${SG_AUTOGRAD_OPS:-600}
BASE=${SG_AUTOGRAD_BASE:-1520}
RUNS=${SG_AUTOGRAD_RUNS:-5}
TRUNS=${SG_AUTOGRAD_TORCH_RUNS:-3}
sg_python
sg_pin
if [ "${SG_AUTOGRAD_COUNT:-0}" = 1 ]; then
    if ! command -v valgrind >/dev/null 2>&1 || ! command -v callgrind_annotate >/dev/null 2>&1; then
        sg_die "SG_AUTOGRAD_COUNT=1 needs valgrind (callgrind_annotate)"
    fi
fi
sg_tmpdir sg_autograd
echo "uptime before: $(uptime)"
key() { echo "$1" | sed -n "s/^$2 //p"; }
HAVE_TORCH=0
"$PY" -c 'import torch, functorch, networkx' 2>/dev/null && HAVE_TORCH=1

# 1. the long program
ours=$($PIN "$BIN" "$OPS" "$RUNS") || { echo "$ME: bench_autograd $OPS $RUNS failed" >&2; exit 1; }
n=$(key "$ours" ops)
echo "shapeguard, $n program ops (sg_walk_trace, sg_aot_compile):"
echo "$ours" | sed 's/^/  /'
if [ $HAVE_TORCH = 1 ]; then
    "$BIN" --source "$OPS" >"$TMP/long.py" || { echo "$ME: bench_autograd --source failed" >&2; exit 1; }
    theirs=$($PIN "$PY" "$SRC/tests/bench/bench_autograd.py" long "$TMP/long.py" "$n" "$TRUNS") ||
        { echo "$ME: bench_autograd.py long failed" >&2; exit 1; }
    echo "PyTorch 1.13 aot_function(f, nop, nop, partition_fn=min_cut_rematerialization_partition), first call:"
    echo "$theirs" | sed 's/^/  /'
    echo "gradients (shapeguard's compiled backward against PyTorch eager):"
    for k in checksum_o0 checksum_o1 checksum_grad_x checksum_grad_y; do
        awk -v k=$k -v a="$(key "$ours" $k)" -v b="$(key "$theirs" $k)" 'BEGIN { d = a - b; if (d < 0) d = -d
            m = b < 0 ? -b : b; if (m < 1) m = 1
            printf "  %s: shapeguard %s, PyTorch eager %s (difference %.3g)\n", k, a, b, d; exit !(d <= 1e-9 * m) }' ||
            { echo "$ME: the results differ ($k)" >&2; exit 1; }
    done
    [ "$(key "$theirs" aot_gradients_agree_with_eager)" = yes ] ||
        echo "  (PyTorch's compiled gradients differ from its eager ones)"
    awk -v c="$(key "$ours" compile_ns_per_joint_node_median)" \
        -v tc="$(key "$ours" trace_compile_ns_per_joint_node_median)" \
        -v co="$(key "$ours" compile_ns_per_op_median)" -v to="$(key "$ours" trace_compile_ns_per_op_median)" \
        -v b="$(key "$theirs" aot_ns_per_joint_node_median)" -v bo="$(key "$theirs" aot_ns_per_op_median)" 'BEGIN {
        printf "ratio per joint node (PyTorch per node of its forward + backward / our compile per node of ours): %.0fx\n", b / c
        printf "ratio per joint node, our trace + compile: %.0fx (%s)\n", b / tc, (b / tc >= 1000) ? "at least 1,000x" : "below 1,000x"
        printf "ratio per program op: compile %.0fx; trace + compile %.0fx\n", bo / co, bo / to }'
    echo "saved for the backward, long program: shapeguard $(key "$ours" saved_values) values," \
        "$(key "$ours" saved_bytes) bytes; PyTorch min-cut $(key "$theirs" saved_values) values," \
        "$(key "$theirs" saved_bytes) bytes"
else
    echo "PyTorch: torch, functorch and networkx cannot all be imported by $PY: shapeguard side only"
fi

# 2. growth
echo "growth (shapeguard, median of 3 runs):"
first=
for k in 1 2 4 8 16; do
    out=$($PIN "$BIN" $((BASE * k)) 3) || { echo "$ME: bench_autograd $((BASE * k)) failed" >&2; exit 1; }
    ms=$(key "$out" compile_ms_median)
    [ -n "$first" ] || first=$ms
    echo "  ${k}x ($(key "$out" ops) ops, $(key "$out" joint_nodes) joint nodes): compile" \
        "$(key "$out" compile_ns_per_joint_node_median) ns per joint node, $ms ms in all" \
        "($(awk -v a="$ms" -v b="$first" 'BEGIN { printf "%.2fx", a / b }') the 1x time);" \
        "trace $(key "$out" trace_ms_median) ms"
done
awk -v a="$ms" -v b="$first" 'BEGIN { r = a / b; printf "16x the ops took %.2fx the compile time: %s\n", r,
    r <= 17 ? "within 17x" : "above 17x" }'
# The --hidden program: a chain of layout changes under no_grad that every block's gradient crosses
HOPS=${SG_AUTOGRAD_HIDDEN_OPS:-1000}
hid=$($PIN "$BIN" --hidden "$HOPS" "$RUNS") || { echo "$ME: bench_autograd --hidden $HOPS failed" >&2; exit 1; }
echo "the --hidden program (t laid out anew under no_grad and back, read with grad between), $(key "$hid" ops) ops:"
echo "  shapeguard: compile $(key "$hid" compile_ns_per_joint_node_median) ns per joint node" \
    "($(key "$hid" joint_nodes) joint nodes), $(key "$hid" compile_ms_median) ms"
if [ $HAVE_TORCH = 1 ]; then
    "$BIN" --source --hidden "$HOPS" >"$TMP/hidden.py" || { echo "$ME: bench_autograd --source --hidden failed" >&2; exit 1; }
    htheirs=$($PIN "$PY" "$SRC/tests/bench/bench_autograd.py" long "$TMP/hidden.py" "$(key "$hid" ops)" "$TRUNS") ||
        { echo "$ME: bench_autograd.py long (hidden) failed" >&2; exit 1; }
    for k in checksum_o0 checksum_o1 checksum_grad_x checksum_grad_y; do
        awk -v k=$k -v a="$(key "$hid" $k)" -v b="$(key "$htheirs" $k)" 'BEGIN { d = a - b; if (d < 0) d = -d
            m = b < 0 ? -b : b; if (m < 1) m = 1; exit !(d <= 1e-9 * m) }' ||
            { echo "$ME: the --hidden program's results differ ($k)" >&2; exit 1; }
    done
    awk -v c="$(key "$hid" compile_ns_per_joint_node_median)" -v b="$(key "$htheirs" aot_ns_per_joint_node_median)" \
        -v n="$(key "$htheirs" joint_nodes)" 'BEGIN {
        printf "  PyTorch 1.13 aot_function (min-cut): %.0f ns per joint node (%d joint nodes): %.0fx; checksums agree\n", b, n, b / c }'
fi
hfirst=
for k in 1 2 4 8 16; do
    out=$($PIN "$BIN" --hidden $((HOPS * k)) 3) || { echo "$ME: bench_autograd --hidden $((HOPS * k)) failed" >&2; exit 1; }
    ms=$(key "$out" compile_ms_median)
    [ -n "$hfirst" ] || hfirst=$ms
    echo "  ${k}x ($(key "$out" ops) ops, $(key "$out" joint_nodes) joint nodes): compile $ms ms" \
        "($(awk -v a="$ms" -v b="$hfirst" 'BEGIN { printf "%.2fx", a / b }') the 1x time)"
done
awk -v a="$ms" -v b="$hfirst" 'BEGIN { r = a / b; printf "  --hidden: 16x the ops took %.2fx the compile time: %s\n", r,
    r <= 17 ? "within 17x" : "above 17x" }'

if [ "${SG_AUTOGRAD_COUNT:-0}" = 1 ]; then
    echo "compile instructions (callgrind, --toggle-collect=compile_body):"
    for k in 1 16; do
        valgrind --tool=callgrind --callgrind-out-file="$TMP/cg.$k" --toggle-collect=compile_body \
            "$BIN" $((BASE * k)) 1 >"$TMP/cg.$k.out" 2>&1 || { echo "$ME: callgrind failed" >&2; exit 1; }
        i=$(callgrind_annotate "$TMP/cg.$k" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }')
        n=$(key "$(cat "$TMP/cg.$k.out")" joint_nodes)
        echo "  ${k}x ($n joint nodes): $i instructions, $(awk -v i="$i" -v n="$n" 'BEGIN { printf "%.0f", i / n }') per joint node"
        eval "I$k=$i"
    done
    awk -v a="$I16" -v b="$I1" 'BEGIN { printf "  16x / 1x: %.2fx\n", a / b }'
fi

# 3. saved bytes over the batteries' training programs
[ $HAVE_TORCH = 1 ] || { echo "uptime after: $(uptime)"; exit 0; }
mkdir -p "$TMP/progs"
: >"$TMP/pairs"
# shellcheck disable=SC2046
list=$("$PY" "$SRC/tests/bench/bench_autograd.py" battery "$TMP/progs" ${SG_AUTOGRAD_BATTERIES:-$(grep -l requires_grad "$SRC"/tests/batteries/*.battery)}) ||
    { echo "$ME: bench_autograd.py battery failed" >&2; exit 1; }
echo "saved for the backward, training programs of the batteries (values/bytes; '-': no backward built):"
printf '  %-80s %10s %16s\n' "program" "shapeguard" "PyTorch min-cut"
echo "$list" | while read -r _ num name rest; do
    decls=${rest% torch *}
    torch=${rest##* torch }
    # shellcheck disable=SC2086
    o=$("$BIN" --saved "$TMP/progs/$num.py" $decls) || { echo "$ME: bench_autograd --saved $num ($name) failed" >&2; exit 1; }
    case $o in
    refused* | error*) ov=-; ob=-; why=$(echo "$o" | cut -c1-60) ;;
    *) ov=$(key "$o" saved_values); ob=$(key "$o" saved_bytes); why= ;;
    esac
    mode=
    [ "$(key "$o" mode)" != inference ] || mode="(ours: an inference graph)"
    case $torch in
    refused*) tv=-; tb=- ;;
    *) tv=${torch% *}; tb=${torch#* } ;;
    esac
    note=
    if [ "$ob" != - ] && [ "$tb" != - ]; then
        if [ "$ob" -gt "$tb" ]; then note="ours saves more"; elif [ "$ob" -lt "$tb" ]; then note="ours saves less"; fi
    elif [ "$ob" = - ] && [ "$tb" != - ]; then
        note="ours: $why"
    elif [ "$tb" = - ]; then
        note="PyTorch: $(echo "${torch#refused }" | cut -c1-60)"
    fi
    printf '  %-80s %10s %16s  %s\n' "$name" "$ov/$ob" "$tv/$tb" "$note$mode"
    echo "$ob $tb" >>"$TMP/pairs"
done || exit 1
awk '$1 != "-" && $2 != "-" { n++; o += $1; t += $2; if ($1 > $2) more++; else if ($1 < $2) less++; else same++ }
    $1 == "-" && $2 != "-" { ours_none++ }
    $1 != "-" && $2 == "-" { theirs_none++ }
    END { printf "measured on both sides: %d programs; shapeguard saves %d bytes in all, PyTorch min-cut %d\n", n, o, t
          printf "  ours saves more in %d, as much in %d, less in %d\n", more, same, less
          printf "  only PyTorch built one in %d (ours refused or failed), only shapeguard in %d\n", ours_none, theirs_none
          printf "never more than PyTorch saves: %s\n", more ? "goal not met" : "met" }' "$TMP/pairs"
echo "uptime after: $(uptime)"
