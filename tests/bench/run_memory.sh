#!/bin/sh
# Memory benchmark (issue 19, item 6): the program of tests/bench/bench_memory.c
# (64x64 float32 tensors, names reused as a Python program would) at 1x, 2x,
# 4x and 8x SG_MEMORY_BASE ops (default 1000): the most tensor bytes live at
# once beyond the inputs, in shapeguard's eager run and its compiled run
# (exec's own count), the same with every value kept to the end of the run
# (--keep: what both held before issue 19), and PyTorch 1.13 eager on the
# same source and inputs (tests/bench/bench_memory.py: the profiler's
# memory records of the CPU allocator; the max RSS growth beside it).
#
#   run_memory.sh BUILDDIR SRCDIR
set -u
ME=run_memory.sh
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"
sg_args $# 2 "BUILDDIR SRCDIR"
BUILD=$1
SRC=$2
BIN=$BUILD/tests/bench/bench_memory
sg_need_bench "$BIN" "$BUILD" bench-memory
BASE=${SG_MEMORY_BASE:-1000}
sg_python
sg_tmpdir sg_memory
torch=0
"$PY" -c 'import torch' 2>/dev/null && torch=1
[ $torch = 1 ] || echo "PyTorch: torch cannot be imported by $PY: shapeguard side only"
printf '%-6s %14s %14s %14s %14s %14s %12s\n' ops eager compiled eager_kept compiled_kept torch torch_rss_kb
for k in 1 2 4 8; do
    n=$((BASE * k))
    ours=$("$BIN" "$n") || { echo "$ME: bench_memory failed" >&2; exit 1; }
    kept=$("$BIN" "$n" --keep) || { echo "$ME: bench_memory --keep failed" >&2; exit 1; }
    e=$(echo "$ours" | sed -n 's/^eager_peak_bytes //p')
    c=$(echo "$ours" | sed -n 's/^compiled_peak_bytes //p')
    ek=$(echo "$kept" | sed -n 's/^eager_peak_bytes //p')
    ck=$(echo "$kept" | sed -n 's/^compiled_peak_bytes //p')
    tp=-
    tr=-
    if [ $torch = 1 ]; then
        "$BIN" --source "$n" >"$TMP/program.py" || { echo "$ME: bench_memory --source failed" >&2; exit 1; }
        theirs=$("$PY" "$SRC/tests/bench/bench_memory.py" "$TMP/program.py" "$n") ||
            { echo "$ME: bench_memory.py failed" >&2; exit 1; }
        tp=$(echo "$theirs" | sed -n 's/^torch_peak_bytes //p')
        tr=$(echo "$theirs" | sed -n 's/^torch_maxrss_growth_kb //p')
        ca=$(echo "$ours" | sed -n 's/^checksum //p')
        cb=$(echo "$theirs" | sed -n 's/^checksum //p')
        awk -v a="$ca" -v b="$cb" 'BEGIN { d = a - b; if (d < 0) d = -d; m = b < 0 ? -b : b; exit !(d <= 1e-4 * (m + 1)) }' ||
            { echo "$ME: the results differ ($ca, PyTorch $cb)" >&2; exit 1; }
    fi
    printf '%-6s %14s %14s %14s %14s %14s %12s\n' "$n" "$e" "$c" "$ek" "$ck" "$tp" "$tr"
done
echo "bytes: the most tensor bytes live at once beyond the inputs (shapeguard: storages with their"
echo "elements and tensor headers; PyTorch: the CPU allocator's bytes by its profiler's memory records)"
