#!/bin/sh
# Shape environment benchmark (issue 4), counted instead of timed: the
# instructions executed inside sg_env_evaluate, sg_env_guard_or and
# sg_env_check over the stream of bench_env, by callgrind, for several
# scales and workload seeds. Instruction counts do not move with the load of
# the machine, so the growth from one scale to the next is exact for the
# workload; the sum over the seeds evens out the mix of one workload.
#
#   count_env.sh BUILDDIR
#
# Environment (all optional):
#   SG_BENCH_SCALES   scales (default "1 2 4 8")
#   SG_BENCH_SEEDS    workload seeds (default "4 5 6")
#   SG_BENCH_KEEP     a directory to keep the callgrind outputs in
#
# Prints one line per seed and scale, then the sums and their growth
# sum(k)/sum(k/2). Exit status 2 on a usage error or a missing valgrind.
set -u
ME=count_env.sh
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"
sg_args $# 1 BUILDDIR
B=$1
[ -x "$B/tests/bench/bench_env" ] || sg_die "run 'make tests/bench/bench_env' in $B first"
if ! command -v valgrind >/dev/null 2>&1 || ! command -v callgrind_annotate >/dev/null 2>&1; then
    sg_die "valgrind is missing (apt-get install valgrind)"
fi
SCALES=${SG_BENCH_SCALES:-1 2 4 8}
SEEDS=${SG_BENCH_SEEDS:-4 5 6}
sg_tmpdir sgcenv
echo "instructions in the stream calls (callgrind), bench_env -r 1 -V 0"
printf '%6s %6s %16s %8s\n' seed scale instructions growth
for seed in $SEEDS; do
    prev=
    for k in $SCALES; do
        "$B/libtool" --mode=execute valgrind --tool=callgrind --callgrind-out-file="$TMP/cg.$seed.$k" \
            --toggle-collect=sg_env_evaluate --toggle-collect=sg_env_guard_or --toggle-collect=sg_env_check \
            "$B/tests/bench/bench_env" -k "$k" -r 1 -s "$seed" -V 0 -t 0 >"$TMP/out.$seed.$k" 2>&1 || {
            echo "$ME: bench_env -k $k -s $seed failed (see $TMP/out.$seed.$k)" >&2
            exit 1
        }
        n=$(callgrind_annotate "$TMP/cg.$seed.$k" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }')
        echo "$seed $k $n" >>"$TMP/counts"
        g=-
        [ -n "$prev" ] && g=$(awk -v a="$n" -v b="$prev" 'BEGIN { printf "%.2fx", a / b }')
        printf '%6s %5sx %16s %8s\n' "$seed" "$k" "$n" "$g"
        prev=$n
    done
done
echo "sum over the seeds:"
awk -v scales="$SCALES" '
    { sum[$2] += $3 }
    END {
        n = split(scales, s, " ")
        for (i = 1; i <= n; i++) {
            g = i > 1 ? sprintf("%.2fx", sum[s[i]] / sum[s[i - 1]]) : "-"
            printf "%13sx %16.0f %8s\n", s[i], sum[s[i]], g
        }
        if (n > 1)
            printf "exponent of the sum over %sx..%sx: %.2f (1.00 is linear)\n", s[1], s[n],
                log(sum[s[n]] / sum[s[1]]) / log(s[n] / s[1])
    }' "$TMP/counts"
