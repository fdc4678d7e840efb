#!/bin/sh
# Runs a fuzz target under libFuzzer with AddressSanitizer and UBSan.
#
#   sh tests/fuzz/libfuzzer.sh TARGET [SECONDS [WORKDIR]]
#
# TARGET is parse, guard or front (tests/fuzz/fuzz_TARGET.c). Builds the library
# with clang in WORKDIR (default a new directory under ${TMPDIR:-/tmp}, kept:
# its path is printed) with coverage instrumentation, links the target with
# -fsanitize=fuzzer, and fuzzes for SECONDS (default 300) from a copy of the
# target's corpus (tests/fuzz/corpus, corpus_guard or corpus_front) in
# WORKDIR/corpus. A crash leaves its input in WORKDIR (crash-*); add it to
# the corpus once fixed. Needs clang and its runtime (Debian: clang,
# libclang-rt-dev). Not part of make check, which replays the corpora.
set -eu
if [ $# -lt 1 ] || [ $# -gt 3 ]; then
    echo "usage: $0 parse|guard|front [SECONDS [WORKDIR]]" >&2
    exit 2
fi
maxlen=2048
case $1 in
parse) corpus=corpus ;;
guard) corpus=corpus_guard ;;
front) corpus=corpus_front maxlen=65536 ;; # its seeds include chains of 50 KB (chain_*)
*) echo "libfuzzer.sh: unknown target '$1' (parse, guard or front)" >&2; exit 2 ;;
esac
secs=${2:-300}
src=$(cd "$(dirname "$0")/../.." && pwd)
work=${3:-$(mktemp -d "${TMPDIR:-/tmp}/sgfuzz.XXXXXX")}
mkdir -p "$work/corpus"
command -v clang >/dev/null 2>&1 || { echo "libfuzzer.sh: clang not found" >&2; exit 2; }
[ -x "$src/configure" ] || (cd "$src" && autoreconf -fi)
cd "$work"
san="-fsanitize=address,undefined -fno-sanitize-recover=all"
if [ ! -f Makefile ]; then
    "$src/configure" -q CC=clang CFLAGS="-g -O1 -fsanitize=fuzzer-no-link $san" LDFLAGS="$san"
fi
make -j2 libsgcore.la >/dev/null
clang -g -O1 -fsanitize=fuzzer $san -I"$src/include" -I"$src/src" -I. -o "fuzz_$1" "$src/tests/fuzz/fuzz_$1.c" \
    .libs/libsgcore.a -lflint -lgmp
cp "$src/tests/fuzz/$corpus"/* corpus/
echo "libfuzzer.sh: fuzzing $1 for $secs s in $work"
# -timeout: an input of 30 bytes may expand to thousands of terms (a power of
# a sum), printed three times; under the sanitizers that takes seconds
"./fuzz_$1" -max_total_time="$secs" -max_len="$maxlen" -timeout=60 corpus
