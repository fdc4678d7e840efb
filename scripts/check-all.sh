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

# The program language's libFuzzer target (tests/fuzz/fuzz_front.c: parse,
# print, parse the printed text again) under ASan and UBSan for a bounded
# time, SG_FUZZ_SECONDS (default 90), from tests/fuzz/corpus_front, whose
# seeds include chains of thousands of links (chain_*). It counts as one
# test: a crash, a sanitizer report or a mismatch fails it, and leaves its
# input in build-fuzz/ (crash-*, printed below).
fuzz_secs=${SG_FUZZ_SECONDS:-90}
echo "=== libFuzzer: the front target for $fuzz_secs s"
if sh tests/fuzz/libfuzzer.sh front "$fuzz_secs" "$top/build-fuzz" >"$top/build-fuzz.log" 2>&1; then
    pass=$((pass + 1))
    grep -E "^(#[0-9]+[[:space:]]+DONE|Done [0-9]+ runs)" "$top/build-fuzz.log" | tail -n 2
else
    echo "=== libFuzzer front: FAILED (the log: build-fuzz.log)"
    tail -n 60 "$top/build-fuzz.log"
    ls "$top/build-fuzz"/crash-* "$top/build-fuzz"/leak-* "$top/build-fuzz"/timeout-* 2>/dev/null
    fail=$((fail + 1))
fi

# distcheck removes its build when it succeeds: it counts as one test
before=$fail
run "make distcheck" "$build" distcheck
[ "$fail" = "$before" ] && pass=$((pass + 1))

echo "check-all: $pass passed, $fail failed"
[ "$fail" = 0 ]
