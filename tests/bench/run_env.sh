#!/bin/sh
# Shape environment benchmark (issue 4): a trace-shaped workload at several
# scales, and how its cost grows.
#
#   run_env.sh BUILDDIR SRCDIR
#
# Runs tests/bench/bench_env (BUILDDIR/tests/bench/bench_env) at each scale
# (k = 8 is the full workload of issue 4: 1,000 symbols, 100,000 evaluate
# calls, 500 checks; k = 1 is an eighth of it) and prints: the workload and
# its outcome (guards, assertions, calls answered statically), the time of
# the stream, its growth total(k)/total(k/2), the time per call by class,
# where the time went, and the cost per tenth of the stream at the largest
# scale (a per-call cost that grows with the guards shows there).
#
# Environment (all optional):
#   SG_BENCH_SCALES      scales to run (default "1 2 4 8")
#   SG_BENCH_RUNS        runs per scale, best (smallest stream time) kept
#                        (default 3)
#   SG_BENCH_TIMEOUT     seconds after which a run gives up (default 600);
#                        a scale that times out is reported and the larger
#                        ones are skipped
#   SG_BENCH_SEED        workload seed (default 4)
#   SG_BENCH_ENV_FLAGS   more options for bench_env (e.g. "-a": no
#                        Max(x, y) == x questions)
#   SG_BENCH_CPU         CPU to pin to with taskset (default 0; empty: none)
#   SG_BENCH_KEEP        a directory to keep the raw outputs in
#
# Exit status: 0, or 1 when a scale fails its correctness checks (see
# bench_env.c; the first failures of each kind are shown), 2 for a usage
# error. Timeouts and slow figures do not fail the run; they are reported.
set -u
ME=run_env.sh
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"

sg_args $# 2 "BUILDDIR SRCDIR"
BUILDDIR=$1
BENCH=$BUILDDIR/tests/bench/bench_env
sg_need_bench "$BENCH" "$BUILDDIR"

SCALES=${SG_BENCH_SCALES:-1 2 4 8}
RUNS=${SG_BENCH_RUNS:-3}
TIMEOUT=${SG_BENCH_TIMEOUT:-600}
SEED=${SG_BENCH_SEED:-4}
FLAGS=${SG_BENCH_ENV_FLAGS:-}
sg_pin
sg_tmpdir sgbenv

status=0
files=
for k in $SCALES; do
    echo "bench_env -k $k -r $RUNS -s $SEED -t $TIMEOUT $FLAGS${PIN:+ ($PIN)}" >&2
    # shellcheck disable=SC2086
    $PIN "$BENCH" -k "$k" -r "$RUNS" -s "$SEED" -t "$TIMEOUT" $FLAGS >"$TMP/k$k.out" 2>"$TMP/k$k.err"
    rc=$?
    files="$files $TMP/k$k.out"
    if [ $rc -eq 2 ] || ! grep -Eq '^checks (ok|FAILED|skipped)' "$TMP/k$k.out"; then
        echo "$ME: bench_env -k $k failed:" >&2
        cat "$TMP/k$k.err" >&2
        exit 2
    fi
    if grep -q '^checks FAILED' "$TMP/k$k.out"; then
        status=1
    fi
    if grep -q '^timeout 1' "$TMP/k$k.out"; then
        echo "$ME: scale $k gave up after ${TIMEOUT}s: larger scales skipped" >&2
        break
    fi
done

# shellcheck disable=SC2086
awk '
FNR == 1 { n++ }
{ key = $1; $1 = ""; v[n, key] = substr($0, 2) }
function us(ns, cnt) { return cnt > 0 ? sprintf("%.2f", ns / cnt / 1000) : "-" }
function sec(ns) { return sprintf("%.2f", ns / 1e9) }
function pct(a, b) { return b > 0 ? sprintf("%.0f%%", 100 * a / b) : "-" }
END {
    printf "Shape environment, trace-shaped workload (issue 4): %s, seed %s, best of %s run(s)%s\n",
        v[1, "engine"], v[1, "seed"], v[1, "runs"], v[1, "avoid_max_eq"] == 1 ? ", -a (no Max(x, y) == x)" : ""
    print ""
    printf "%5s %7s %8s %8s %7s %7s %7s %8s %8s %10s %9s %7s %7s\n", "scale", "symbols", "distinct", "evals",
        "checks", "guards", "asserts", "static", "datadep", "stream(s)", "cpu(s)", "growth", "(cpu)"
    for (i = 1; i <= n; i++) {
        to = v[i, "timeout"] == 1
        g = "-"; gc = "-"
        if (i > 1 && !to && v[i - 1, "timeout"] != 1 && v[i - 1, "scale"] * 2 == v[i, "scale"]) {
            g = sprintf("%.2fx", v[i, "stream_ns"] / v[i - 1, "stream_ns"])
            gc = sprintf("%.2fx", v[i, "stream_cpu_ns"] / v[i - 1, "stream_cpu_ns"])
        }
        printf "%4sx %7s %8s %8s %7s %7s %7s %8s %8s %10s %9s %7s %7s%s\n", v[i, "scale"], v[i, "symbols"],
            v[i, "distinct"], v[i, "evals"], v[i, "check_calls"], v[i, "guards"], v[i, "asserts"],
            v[i, "static_evals"], v[i, "datadep_distinct"] == "" ? "-" : v[i, "datadep_distinct"],
            sec(v[i, "stream_ns"]), sec(v[i, "stream_cpu_ns"]), g, gc,
            to ? sprintf("  TIMEOUT after %s/%s calls", v[i, "done_evals"], v[i, "evals"]) : ""
    }
    print "  static: evaluate calls that recorded no guard; datadep: distinct backed questions that failed with SG_EDATADEP;"
    print "  growth: stream time at this scale / at half of it (wall clock, then process CPU time)"
    print ""
    print "time per call (us): mean [median]"
    printf "%5s %22s %19s %19s %19s %15s %19s %13s %13s\n", "scale", "evaluate cold+guard", "cold, static",
        "repeat", "replay (cached)", "guard_or fb", "replay guard_or", "check", "datadep"
    for (i = 1; i <= n; i++) {
        printf "%4sx %12s [%7s] %10s %8s [%5s] %10s [%5s] %15s %10s [%5s] %13s %13s\n", v[i, "scale"],
            us(v[i, "cold_guard_ns"], v[i, "cold_guard_n"]), us(v[i, "cold_guard_median_ns"], 1),
            us(v[i, "cold_static_ns"], v[i, "cold_static_n"]),
            us(v[i, "warm_static_ns"] + v[i, "warm_guard_ns"], v[i, "warm_static_n"] + v[i, "warm_guard_n"]),
            us(v[i, "warm_median_ns"], 1),
            us(v[i, "replay_eval_ns"], v[i, "replay_eval_n"]), us(v[i, "replay_eval_median_ns"], 1),
            us(v[i, "gor_fallback_ns"], v[i, "gor_fallback_n"]),
            us(v[i, "replay_gor_ns"], v[i, "replay_gor_n"]), us(v[i, "replay_gor_median_ns"], 1),
            us(v[i, "check_ns"], v[i, "check_n"]),
            us(v[i, "datadep_ns"], v[i, "datadep_n"])
    }
    printf "  (each call timed alone: a clock read of %s ns is included; replay: the evaluate and guard_or calls of the stream again, after it)\n", v[1, "clock_ns"]
    print ""
    print "where the stream time goes: share [calls]"
    printf "%5s %17s %15s %17s %15s %15s %15s %15s\n", "scale", "eval cold+guard", "eval cold static",
        "eval repeat", "guard_or proved", "guard_or fb", "check", "datadep"
    for (i = 1; i <= n; i++) {
        t = v[i, "stream_ns"]
        printf "%4sx %8s [%6s] %6s [%6s] %7s [%7s] %6s [%6s] %6s [%6s] %6s [%5s] %6s [%6s]\n", v[i, "scale"],
            pct(v[i, "cold_guard_ns"], t), v[i, "cold_guard_n"], pct(v[i, "cold_static_ns"], t), v[i, "cold_static_n"],
            pct(v[i, "warm_static_ns"] + v[i, "warm_guard_ns"], t), v[i, "warm_static_n"] + v[i, "warm_guard_n"],
            pct(v[i, "gor_proved_ns"], t), v[i, "gor_proved_n"], pct(v[i, "gor_fallback_ns"], t),
            v[i, "gor_fallback_n"], pct(v[i, "check_ns"], t), v[i, "check_n"], pct(v[i, "datadep_ns"], t),
            v[i, "datadep_n"]
    }
    print ""
    last = 0
    for (i = 1; i <= n; i++) if (v[i, "timeout"] != 1) last = i
    if (last) {
        printf "stream time per tenth of the calls at %sx (ms):", v[last, "scale"]
        for (d = 0; d < 10; d++) printf " %.0f", v[last, "decile" d "_ns"] / 1e6
        print ""
        print ""
    }
    print "other figures:"
    for (i = 1; i <= n; i++)
        if (v[i, "produce_ns"] != "")
            printf "  %sx: symbol creation %.2f ms (%s inputs); facts %s, symbols replaced %s; produce_guards %.2f ms (%s guards); guards recorded twice %s\n",
                v[i, "scale"], v[i, "setup_ns"] / 1e6, v[i, "inputs"], v[i, "facts"], v[i, "replaced_symbols"],
                v[i, "produce_ns"] / 1e6, v[i, "produced"], v[i, "duplicate_guards"]
    print ""
    print "checks:"
    for (i = 1; i <= n; i++) {
        if (v[i, "guards_false"] == "") { printf "  %sx: skipped (timeout)\n", v[i, "scale"]; continue }
        printf "  %sx: %s; guards false at the hints %s (not evaluable %s), asserts false %s, wrong answers %s, changed answers %s, guard_or wrong %s, produced guards false %s (not evaluable %s), data-dependent backed questions %s, inconsistent after event %s\n",
            v[i, "scale"], v[i, "checks"], v[i, "guards_false"], v[i, "guards_unverified"],
            v[i, "asserts_false"], v[i, "answers_wrong"], v[i, "answer_mismatch"] + v[i, "replay_mismatch"],
            v[i, "guard_or_wrong"], v[i, "produced_false"], v[i, "produced_unverified"], v[i, "datadep_distinct"],
            v[i, "inconsistent_at"] == -1 ? "never" : v[i, "inconsistent_at"]
    }
}' $files || status=2

for k in $SCALES; do
    if [ -s "$TMP/k$k.err" ]; then
        echo
        echo "first failures at ${k}x (bench_env stderr):"
        head -n 12 "$TMP/k$k.err" | cut -c1-200
    fi
done
exit $status
