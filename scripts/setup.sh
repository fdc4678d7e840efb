#!/bin/sh
# Install what is missing (Debian packages), then configure and build in
# build/ and link the tool as ./shapeguard (build/local/shapeguard: the tool
# linked with the library's objects, which starts without libtool's wrapper). Safe to run again: it installs and
# reconfigures only as needed. SG_CONFIGURE_FLAGS adds configure options.
set -e
cd "$(dirname "$0")/.."

pkgs="build-essential autoconf automake libtool pkg-config libgmp-dev libflint-dev libcmocka-dev python3 python3-sympy groff-base python3-torch python3-networkx"
# libFuzzer (scripts/check-all.sh fuzzes the program target): clang and its runtime
pkgs="$pkgs clang libclang-rt-dev"
missing=""
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "setup: installing$missing"
    SUDO=""
    [ "$(id -u)" = 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi

[ -x configure ] || autoreconf -fi
mkdir -p build
(cd build && { [ -f Makefile ] || ../configure ${SG_CONFIGURE_FLAGS:-}; } && make -j"$(nproc 2>/dev/null || echo 2)")
ln -sfn build/local/shapeguard shapeguard
