#!/usr/bin/env bash
# Checks the Makefile's contract with OpenBench, whose client builds engines with
# `make -j EXE=<name> [EVALFILE=<net>]` in the engine's build path:
#   - EVALFILE= embeds that net: the binary evaluates as the default binary does with
#     that net loaded;
#   - TUNE=1 (and tune/Makefile, the build path of a tuning engine) builds the binary
#     whose search parameters are UCI options, the ones `nue spsa` lists;
#   - `make bench` ends with OpenBench's `<nodes> nodes <nps> nps`, with EXE relative or
#     absolute.
# The net given to EVALFILE= is the default net shifted by `nue tempo --shift`, so the
# check needs nothing from outside the repository.
# The builds go to their own target folder, so the default build is left alone.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target/make-check}
out=$CARGO_TARGET_DIR/bins
mkdir -p "$out"
fen='r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4'
fail() { echo "make-check: $*" >&2; exit 1; }
# A make run, quiet unless it fails.
build() { make --no-print-directory "$@" >"$out/make.log" 2>&1 || { cat "$out/make.log"; fail "make $* failed"; }; }

build EXE="$out/plain"
"$out/plain" tempo --shift 100 --out "$out/shifted" >/dev/null
net=$(realpath "$out"/shifted/nn-*.nnue)
build EXE="$out/evalfile" EVALFILE="$net"
want=$("$out/plain" eval --fen "$fen" --net "$net")
got=$("$out/evalfile" eval --fen "$fen")
[ "$got" = "$want" ] || fail "EVALFILE= did not embed $net: $got, expected $want"
[ "$got" != "$("$out/plain" eval --fen "$fen")" ] || fail "the two nets evaluate alike"

build -C tune EXE="$(realpath "$out")/tune"
first=$("$out/plain" spsa 2>/dev/null | awk -F, 'NR == 1 { print $1 }')
[ -n "$first" ] || fail "nue spsa listed nothing"
uci() { printf 'uci\nquit\n' | "$1" | grep -c "^option name $first type spin" || true; }
[ "$(uci "$out/tune")" = 1 ] || fail "the tune/ build has no option $first"
[ "$(uci "$out/plain")" = 0 ] || fail "the plain build has the tuning option $first"
for exe in "$out/plain" "$(realpath "$out")/plain"; do
    last=$(make --no-print-directory bench EXE="$exe" 2>/dev/null | tail -n 1)
    [[ $last =~ ^[0-9]+\ nodes\ [0-9]+\ nps$ ]] || fail "make bench EXE=$exe ended with '$last'"
done
echo "make-check: EVALFILE=, the tuning build and make bench behave"
