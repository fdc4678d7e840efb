#!/bin/sh
# Every test: the suite in the source tree, again under AddressSanitizer and
# UBSan in a separate build, and make distcheck (a release tarball that
# builds and passes on its own). Ends with one line "N passed, N failed".
set -u
cd "$(dirname "$0")/.."
top=$(pwd)
jobs=$(nproc 2>/dev/null || echo 2)
sh scripts/setup.sh || { echo "check-all: setup failed"; echo "check-all: 0 passed, 1 failed"; exit 1; }

pass=0
fail=0
count() { # count LOGFILE: add the automake summary of a test-suite.log
    p=$(sed -n 's/^# PASS: *//p' "$1" | head -n1)
    f=$(sed -n 's/^# FAIL: *//p' "$1" | head -n1)
    e=$(sed -n 's/^# ERROR: *//p' "$1" | head -n1)
    pass=$((pass + ${p:-0}))
    fail=$((fail + ${f:-0} + ${e:-0}))
}
run() { # run NAME DIR MAKE-ARGS...
    name=$1
    dir=$2
    shift 2
    echo "=== $name"
    if (cd "$dir" && make -j"$jobs" "$@"); then :; else
        echo "=== $name: FAILED"
        [ -f "$dir/test-suite.log" ] && cat "$dir/test-suite.log"
        fail=$((fail + 1))
    fi
}

build="$top/build"
rm -f "$build/test-suite.log"
run "make check" "$build" check
[ -f "$build/test-suite.log" ] && count "$build/test-suite.log"

asan="$top/build-asan"
mkdir -p "$asan"
(cd "$asan" && { [ -f Makefile ] || "$top/configure" -q --enable-asan; }) >/dev/null
rm -f "$asan/test-suite.log"
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}; export ASAN_OPTIONS
run "make check (ASan+UBSan)" "$asan" check
[ -f "$asan/test-suite.log" ] && count "$asan/test-suite.log"

# distcheck removes its build when it succeeds: it counts as one test
before=$fail
run "make distcheck" "$build" distcheck
[ "$fail" = "$before" ] && pass=$((pass + 1))

echo "check-all: $pass passed, $fail failed"
[ "$fail" = 0 ]
