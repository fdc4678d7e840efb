#!/bin/sh
# Reasoning benchmark (issue 3): shapeguard's fact base vs Z3 on one corpus.
#
#   run_reason.sh BUILDDIR SRCDIR
#
# Generates the seeded corpus (tests/bench/reason_corpus.py: facts over
# symbols s0.., queries of which about 30% are not implied) into a temporary
# directory, runs tests/bench/bench_reason (shapeguard) and
# tests/bench/bench_reason_z3 (Z3 through libz3) on it, and prints the
# figures side by side: time per query, how many queries each proves, and
# every UNSOUND answer of shapeguard (true where Z3 finds the negation
# satisfiable, false where Z3 finds the query satisfiable; there must be
# none). Then the same at other sizes of the fact base (scaling).
#
# Without libz3 (or without the bench_reason_z3 program) only the shapeguard
# side runs; its answers are then checked against the corpus's model only.
#
# Environment (all optional):
#   SG_REASON_SEED        corpus seed (default 1)
#   SG_REASON_SYMS        symbols (default 50)
#   SG_REASON_FACTS       facts (default 100)
#   SG_REASON_QUERIES     queries (default 1000)
#   SG_REASON_RUNS        runs of the shapeguard side (default 11)
#   SG_REASON_Z3_RUNS     runs of the Z3 side (default 5)
#   SG_REASON_Z3_TIMEOUT  Z3 timeout per check, in ms (default 10000)
#   SG_REASON_SCALE       fact counts of the scaling table (default
#                         "25 50 100 200"; empty: no scaling table)
#   SG_BENCH_CPU          CPU to pin both sides to with taskset (default 0;
#                         empty: no pinning)
#   SG_BENCH_PYTHON       python3 for the generator (default /usr/bin/python3)
#   SG_BENCH_KEEP         a directory to keep the corpora and raw outputs in
#
# Wall-clock time moves with the machine's load; instruction counts do not.
# For those, run both programs on a kept corpus (SG_BENCH_KEEP) under
# callgrind and read the inclusive counts of the functions that hold one
# query each: iso_known (and cold_known) of bench_reason, z3_query of
# bench_reason_z3 (doc/performance.md gives the commands).
#
# Exit status: 0; 1 when an answer is unsound or a side fails its checks;
# 2 for a usage or setup error.
set -u
ME=run_reason.sh
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"

sg_args $# 2 "BUILDDIR SRCDIR"
BUILDDIR=$1
SRCDIR=$2
SG=$BUILDDIR/tests/bench/bench_reason
Z3=$BUILDDIR/tests/bench/bench_reason_z3
HERE=$SRCDIR/tests/bench
GEN=$HERE/reason_corpus.py

sg_python
sg_need_bench "$SG" "$BUILDDIR"

SEED=${SG_REASON_SEED:-1}
SYMS=${SG_REASON_SYMS:-50}
FACTS=${SG_REASON_FACTS:-100}
QUERIES=${SG_REASON_QUERIES:-1000}
RUNS=${SG_REASON_RUNS:-11}
ZRUNS=${SG_REASON_Z3_RUNS:-5}
ZTIMEOUT=${SG_REASON_Z3_TIMEOUT:-10000}
SCALE=${SG_REASON_SCALE-25 50 100 200}
sg_pin

have_z3=0
if [ -x "$Z3" ]; then
    have_z3=1
elif pkg-config --exists z3 2>/dev/null || [ -f /usr/include/z3.h ]; then
    echo "Z3: libz3 is installed but $Z3 is not built ('make tests/bench/bench_reason_z3'): shapeguard side only"
else
    echo "Z3: libz3 not found (Debian: apt-get install libz3-dev, then rebuild): shapeguard side only"
fi

sg_tmpdir sgreason

status=0

# one size: corpus, both sides, report (and a summary line for the scaling table)
run_size() {
    n=$1 quiet=$2
    corpus=$TMP/corpus-$n.txt
    "$PY" "$GEN" --seed "$SEED" --syms "$SYMS" --facts "$n" --queries "$QUERIES" -o "$corpus" || return 2
    $PIN "$SG" "$corpus" "$RUNS" >"$TMP/sg-$n.out" || status=1
    z3out=
    if [ $have_z3 = 1 ]; then
        $PIN "$Z3" "$corpus" "$ZRUNS" "$ZTIMEOUT" >"$TMP/z3-$n.out" || status=1
        z3out=$TMP/z3-$n.out
    fi
    if [ "$quiet" = 1 ]; then
        "$PY" "$GEN" --report "$corpus" "$TMP/sg-$n.out" $z3out --summary "$TMP/scale.txt" >"$TMP/report-$n.txt"
    else
        "$PY" "$GEN" --report "$corpus" "$TMP/sg-$n.out" $z3out --summary "$TMP/scale.txt"
    fi
    rc=$?
    if [ $rc -ne 0 ]; then
        [ "$quiet" = 1 ] && cat "$TMP/report-$n.txt"
        [ $rc -gt $status ] && status=$rc
    fi
    return 0
}

echo "shapeguard: $SG ($RUNS runs${PIN:+, $PIN})"
[ $have_z3 = 1 ] && echo "Z3: $Z3 ($ZRUNS runs, timeout ${ZTIMEOUT} ms per check${PIN:+, $PIN})"
echo
: >"$TMP/scale.txt"
run_size "$FACTS" 0 || exit 2

if [ -n "$SCALE" ]; then
    for n in $SCALE; do
        [ "$n" = "$FACTS" ] && continue
        run_size "$n" 1 || exit 2
    done
    echo
    echo "scaling: $SYMS symbols, $QUERIES queries, seed $SEED (one corpus per size); us per query, median / mean;"
    echo "  cold: first ask, with what earlier queries left in the fact base's caches; iso: each query of a fresh"
    echo "  copy of the fact base (nothing cached: like with like against Z3, which keeps no answers);"
    echo "  Z3/cold and Z3/iso: the ratios of the medians; share: of the queries Z3 proves, those shapeguard proves"
    sort -n "$TMP/scale.txt" | awk -v have_z3=$have_z3 '
    function r(z, a) { return (a + 0 > 0 && z != "-") ? sprintf("%.0fx", z / a) : "-" }
    BEGIN {
        if (have_z3)
            printf "%6s %10s %15s %15s %15s %7s %7s %9s %9s %7s %8s\n", "facts", "setup (us)", "sg cold",
                "sg iso", "Z3", "Z3/cold", "Z3/iso", "sg proves", "Z3 proves", "share", "unsound"
        else
            printf "%6s %10s %15s %15s %9s %8s\n", "facts", "setup (us)", "sg cold", "sg iso", "sg proves", "unsound"
    }
    {
        if (have_z3)
            printf "%6d %10s %15s %15s %15s %7s %7s %9d %9d %6s%% %8d\n", $1, $2, $3 " / " $4, $10 " / " $11,
                $7 " / " $8, r($7, $3), r($7, $10), $5, $6, $12, $9
        else
            printf "%6d %10s %15s %15s %9d %8d\n", $1, $2, $3 " / " $4, $10 " / " $11, $5, $9
    }'
fi
exit $status
