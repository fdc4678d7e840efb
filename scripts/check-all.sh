#!/bin/sh
# Every test: the suite in the source tree, again under AddressSanitizer and
# UBSan in a separate build, the program fuzz target under libFuzzer for a
# bounded time, and make distcheck (a release tarball that builds and passes
# on its own).
#
# The output of every step (setup, the builds, the tests) goes to one log,
# build/check-all.log (its path is printed first); the terminal gets one line
# per stage with its counts, and for a failing stage the names of its failing
# tests and the tail of each one's log (or the tail of the stage's output
# when it failed before its tests). Ends with one line
# "check-all: N passed, M failed".
set -u
cd "$(dirname "$0")/.."
top=$(pwd)
jobs=$(nproc 2>/dev/null || echo 2)
mkdir -p "$top/build"
log="$top/build/check-all.log"
: >"$log"
echo "check-all: the full log is $log"

tail_lines=${SG_CHECK_TAIL:-25}
pass=0
fail=0

# step LABEL: a banner in the log
step() { printf '\n===== %s (%s)\n' "$1" "$(date '+%H:%M:%S')" >>"$log"; }

# shows_tail FILE: the last lines of FILE, indented
show_tail() { tail -n "$tail_lines" "$1" | sed 's/^/    | /'; }

step "setup"
if ! sh scripts/setup.sh >>"$log" 2>&1; then
    echo "check-all: setup failed; its output ends:"
    show_tail "$log"
    echo "check-all: 0 passed, 1 failed"
    exit 1
fi

# field LOGFILE KEY: the number of the automake summary line "# KEY: N"
field() { sed -n "s/^# $2: *//p" "$1" | head -n1; }

# stage NAME DIR SUITE MAKE-ARGS...: run make in DIR with its output in the
# log, then print one line for it; counts the tests of SUITE (the
# test-suite.log the run writes, relative to DIR; a glob), and a stage that
# fails without a test failing as one failure.
stage() {
    name=$1
    dir=$2
    suite_glob=$3
    shift 3
    step "$name: make $*"
    start=$(date +%s)
    rm -f "$dir/test-suite.log"
    part="$log.part"
    if (cd "$dir" && make -j"$jobs" "$@") >"$part" 2>&1; then ok=1; else ok=0; fi
    cat "$part" >>"$log"
    secs=$(($(date +%s) - start))
    suite=""
    for c in $dir/$suite_glob; do [ -f "$c" ] && suite=$c; done
    tdir=$(dirname "${suite:-$dir/x}")
    if [ -n "$suite" ]; then
        p=$(field "$suite" PASS); f=$(field "$suite" FAIL); e=$(field "$suite" ERROR)
        s=$(field "$suite" SKIP); x=$(field "$suite" XPASS)
        p=${p:-0}; f=$((${f:-0} + ${e:-0} + ${x:-0})); s=${s:-0}
    else
        p=0; f=0; s=0
    fi
    [ "$ok" = 0 ] && [ "$f" = 0 ] && f=1
    pass=$((pass + p))
    fail=$((fail + f))
    if [ "$ok" = 1 ] && [ -z "$suite" ]; then
        echo "check-all: $name: ok (${secs} s)"
    elif [ "$ok" = 1 ]; then
        echo "check-all: $name: $p passed, $f failed, $s skipped (${secs} s)"
    else
        echo "check-all: $name: FAILED: $p passed, $f failed, $s skipped (${secs} s)"
        names=""
        # the title of each failed test's section: "FAIL: tests/x" over a line of =
        [ -n "$suite" ] && names=$(awk '/^=+$/ && prev ~ /^(FAIL|ERROR|XPASS): / { sub(/^[A-Z]+: /, "", prev); print prev }
                                        { prev = $0 }' "$suite" | sort -u)
        if [ -n "$names" ]; then
            for t in $names; do
                echo "  failed: $t (log: $tdir/$t.log)"
                if [ -f "$tdir/$t.log" ]; then show_tail "$tdir/$t.log"; fi
            done
        else
            echo "  make failed before or outside the tests; its output ends:"
            show_tail "$part"
        fi
    fi
    rm -f "$part"
    [ "$ok" = 1 ]
}

build="$top/build"
stage "make check" "$build" test-suite.log check

asan="$top/build-asan"
mkdir -p "$asan"
step "configure the ASan+UBSan build"
(cd "$asan" && { [ -f Makefile ] || "$top/configure" -q --enable-asan; }) >>"$log" 2>&1
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}; export ASAN_OPTIONS
stage "make check (ASan+UBSan)" "$asan" test-suite.log check

# The program language's libFuzzer target (tests/fuzz/fuzz_front.c: parse,
# print, parse the printed text again) under ASan and UBSan for a bounded
# time, SG_FUZZ_SECONDS (default 90), from tests/fuzz/corpus_front, whose
# seeds include chains of thousands of links (chain_*). It counts as one
# test: a crash, a sanitizer report or a mismatch fails it, and leaves its
# input in build-fuzz/ (crash-*, listed below).
fuzz_secs=${SG_FUZZ_SECONDS:-90}
step "libFuzzer: the front target for $fuzz_secs s"
start=$(date +%s)
if sh tests/fuzz/libfuzzer.sh front "$fuzz_secs" "$top/build-fuzz" >"$top/build-fuzz.log" 2>&1; then
    pass=$((pass + 1))
    runs=$(grep -E "^Done [0-9]+ runs" "$top/build-fuzz.log" | tail -n 1)
    echo "check-all: libFuzzer front: ok, ${runs:-done} ($(($(date +%s) - start)) s)"
else
    echo "check-all: libFuzzer front: FAILED (the log: $top/build-fuzz.log); it ends:"
    show_tail "$top/build-fuzz.log"
    ls "$top/build-fuzz"/crash-* "$top/build-fuzz"/leak-* "$top/build-fuzz"/timeout-* 2>/dev/null | sed 's/^/  input: /'
    fail=$((fail + 1))
fi
cat "$top/build-fuzz.log" >>"$log"

# distcheck removes its build (and its test-suite.log) when it succeeds: it
# counts as one test, and its own tests are not counted again
before_pass=$pass
before_fail=$fail
stage "make distcheck" "$build" 'shapeguard-*/_build/sub/test-suite.log' distcheck
pass=$before_pass
if [ "$fail" = "$before_fail" ]; then pass=$((pass + 1)); else fail=$((before_fail + 1)); fi

echo "check-all: $pass passed, $fail failed"
[ "$fail" = 0 ]
