#!/usr/bin/env bash
# A native build of Stockfish 15.1 for datagen: the same searches as Debian's SSE2 package
# (`bench` node counts equal), about 1.3–1.4 times as fast on this project's machines.
#
#   tools/sf15-native.sh SRC [ARCH]
#
# SRC is Stockfish's source at the tag `sf_15.1`, unpacked outside this repository (for
# example `git --git-dir=MIRROR archive sf_15.1 | tar x -C SRC`); ARCH a target of its
# Makefile (default x86-64-bmi2; x86-64-vnni512 where the CPU has AVX-512 VNNI). The net,
# nn-ad9b42354671.nnue, cannot be downloaded here: it is cut out of Debian's binary
# (STOCKFISH, default /usr/games/stockfish), 47,001,499 bytes from 12 bytes before the
# string "Network trained with", and checked against its SHA-256 prefix. The binary is
# SRC/src/stockfish; the script ends by comparing its bench node count with Debian's.
set -euo pipefail
src=$(realpath "$1")/src
arch=${2:-x86-64-bmi2}
debian=${STOCKFISH:-/usr/games/stockfish}
hash=ad9b42354671 size=47001499
net=nn-$hash.nnue
is_net() { sha256sum "$1" 2>/dev/null | grep -q "^$hash"; }

if ! is_net "$src/$net"; then
    marker=$(grep -m 1 -obUa "Network trained with" "$debian" | cut -d: -f1 || true)
    [ -n "$marker" ] || { echo "no net found in $debian" >&2; exit 1; }
    dd if="$debian" of="$src/$net" bs=1M iflag=skip_bytes,count_bytes \
        skip=$((marker - 12)) count="$size" status=none
    is_net "$src/$net" ||
        { echo "the bytes cut from $debian are not $net" >&2; rm -f "$src/$net"; exit 1; }
fi

make -C "$src" -j"$(nproc)" profile-build ARCH="$arch" COMP=gcc >"$src/build.log" 2>&1 ||
    { tail -n 20 "$src/build.log" >&2; exit 1; }

nodes() { "$1" bench 16 1 10 2>&1 | awk '/Nodes searched/ { print $4 }'; }
ours=$(nodes "$src/stockfish") theirs=$(nodes "$debian")
echo "bench nodes: $src/stockfish $ours, $debian $theirs"
[ "$ours" = "$theirs" ] || { echo "node counts differ: not the same search" >&2; exit 1; }
