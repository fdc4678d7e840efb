#!/bin/sh
# Expression building benchmark (issue 2): shapeguard vs sympy on one corpus.
#
#   run.sh BUILDDIR SRCDIR        (what `make bench` runs)
#
# Generates the seeded corpus (tests/bench/corpus.py) into a temporary
# directory, runs tests/bench/bench_expr (shapeguard) and
# tests/bench/bench_expr_sympy.py (sympy) on it, and prints the figures side
# by side, the ratios (sympy time per expression / shapeguard time per
# expression) and whether the goals of issue 2 are met: at least 1000x
# faster, at most 64 bytes per interned node.
#
# Environment (all optional):
#   SG_BENCH_PYTHON       Python with sympy (default /usr/bin/python3: Debian's
#                         python3-sympy 1.11.1; the python3 on PATH may differ)
#   SG_BENCH_SEED         corpus seed (default 2)
#   SG_BENCH_DISTINCT     distinct expressions (default 400)
#   SG_BENCH_STREAM       queries in the stream (default 100000)
#   SG_BENCH_RUNS         runs of the shapeguard side (default 11)
#   SG_BENCH_SYMPY_RUNS   runs of the sympy side (default 5)
#   SG_BENCH_SYMPY_WARM   queries of the stream that sympy builds (default 5000)
#   SG_BENCH_CPU          CPU to pin both sides to with taskset (default 0;
#                         empty: no pinning)
#   SG_BENCH_KEEP         a directory to keep the corpus and raw outputs in
#
# Exit status: 0, or 1 when a side's correctness checks fail (values at
# the check points, same pointer for the same expression). Missing goals do
# not fail the run; they are reported.
set -u
ME=run.sh
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"

sg_args $# 2 "BUILDDIR SRCDIR"
BUILDDIR=$1
SRCDIR=$2
BENCH=$BUILDDIR/tests/bench/bench_expr
HERE=$SRCDIR/tests/bench

sg_python
sg_need_bench "$BENCH" "$BUILDDIR" bench

SEED=${SG_BENCH_SEED:-2}
DISTINCT=${SG_BENCH_DISTINCT:-400}
STREAM=${SG_BENCH_STREAM:-100000}
RUNS=${SG_BENCH_RUNS:-11}
SYRUNS=${SG_BENCH_SYMPY_RUNS:-5}
SYWARM=${SG_BENCH_SYMPY_WARM:-5000}
sg_pin
sg_tmpdir sgbench
CORPUS=$TMP/corpus.txt

"$PY" "$HERE/corpus.py" --seed "$SEED" --distinct "$DISTINCT" --stream "$STREAM" -o "$CORPUS" || exit 2

status=0
echo "shapeguard: $BENCH (${RUNS} runs${PIN:+, $PIN})"
$PIN "$BENCH" "$CORPUS" "$RUNS" >"$TMP/sg.out" || status=1
if ! grep -q '^checks ok' "$TMP/sg.out"; then
    echo "$ME: the shapeguard side failed its checks" >&2
    status=1
fi

have_sympy=0
if "$PY" -c 'import sympy' 2>/dev/null; then
    have_sympy=1
    echo "sympy: $PY (${SYRUNS} runs, warm stream of ${SYWARM}${PIN:+, $PIN})"
    $PIN "$PY" "$HERE/bench_expr_sympy.py" "$CORPUS" --runs "$SYRUNS" --warm "$SYWARM" >"$TMP/sympy.out" || status=1
    if ! grep -q '^checks ok' "$TMP/sympy.out"; then
        echo "$ME: the sympy side failed its checks" >&2
        status=1
        have_sympy=0
    fi
else
    echo "sympy: not installed for $PY (install python3-sympy or set SG_BENCH_PYTHON): shapeguard side only"
    : >"$TMP/sympy.out"
fi
echo

awk -v have_sympy="$have_sympy" -v seed="$SEED" '
FILENAME == ARGV[1] { if ($1 == "engine") sgname = substr($0, 8); else sg[$1] = $2; next }
                    { if ($1 == "engine") syname = substr($0, 8); else sy[$1] = $2; next }
function us(ns) { return sprintf("%.3f", ns / 1000) }
function ratio(k) { return sg[k] > 0 ? sy[k] / sg[k] : 0 }
function row(label, k, n) {
    if (have_sympy)
        printf "%-22s %10s %14s %10.0fx   %s\n", label, us(sg[k]), us(sy[k]), ratio(k), n
    else
        printf "%-22s %10s   %s\n", label, us(sg[k]), n
}
END {
    print "Expression building and canonicalization: " sgname (have_sympy ? " vs " syname : "")
    printf "corpus: seed %s, %s distinct expressions (%s canonical forms in shapeguard%s), stream of %s queries%s\n",
        seed, sg["distinct"], sg["distinct_forms"],
        have_sympy ? ", " sy["distinct_forms"] " in sympy" : "", sg["stream"],
        have_sympy ? " (sympy: the first " sy["stream"] ")" : ""
    print ""
    if (have_sympy)
        printf "%-22s %10s %14s %11s   %s\n", "pass (us per expr)", "shapeguard", "sympy", "ratio", "items"
    else
        printf "%-22s %10s   %s\n", "pass (us per expr)", "shapeguard", "items"
    row("cold, median", "cold_ns_median", sg["distinct"])
    row("cold, best", "cold_ns_best", "")
    row("warm, median", "warm_ns_median", sg["stream"] (have_sympy ? " / " sy["stream"] : ""))
    row("warm, best", "warm_ns_best", "")
    print "by category (each item timed alone; medians):"
    split("sum floordiv mod max", cats, " ")
    for (w = 1; w <= 2; w++) {
        pass = w == 1 ? "cold" : "warm"
        for (i = 1; i <= 4; i++) {
            c = cats[i]
            n = sg[pass "_n_" c] (have_sympy && pass == "warm" ? " / " sy[pass "_n_" c] : "")
            row("  " pass " " c, pass "_ns_" c, n)
        }
    }
    print ""
    printf "memory after the cold pass: %d nodes (%d before it: constants and symbols), %.2f new nodes per expression\n",
        sg["nodes"], sg["nodes_initial"], sg["nodes_per_expr"]
    printf "  arena %d B = %.1f B/node; arena + intern table (%d B) = %.1f B/node\n",
        sg["arena_bytes"], sg["arena_per_node"], sg["table_bytes"], sg["total_per_node"]
    print ""
    print "goals (issue 2):"
    if (have_sympy) {
        rc = ratio("cold_ns_median"); rw = ratio("warm_ns_median")
        printf "  >= 1000x faster, cold (median):  %7.0fx  %s\n", rc, (rc >= 1000 ? "met" : "NOT met")
        printf "  >= 1000x faster, warm (median):  %7.0fx  %s\n", rw, (rw >= 1000 ? "met" : "NOT met")
    } else {
        print "  >= 1000x faster: not measured (no sympy)"
    }
    a = sg["arena_per_node"]; t = sg["total_per_node"]
    printf "  <= 64 B per node, arena:          %7.1f   %s\n", a, (a <= 64 ? "met" : "NOT met")
    printf "  <= 64 B per node, arena + table:  %7.1f   %s\n", t, (t <= 64 ? "met" : "NOT met")
}' "$TMP/sg.out" "$TMP/sympy.out" || status=2

exit $status
