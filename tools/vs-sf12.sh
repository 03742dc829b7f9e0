#!/usr/bin/env bash
# The search yardstick: Nue running Stockfish 12's own net against Stockfish 12,
# so that only the search, time management and speed differ. fastchess, UHO openings in
# random order, each opening played with colours reversed, Threads 1, Hash 16, a fixed
# number of games (no SPRT). Resumable: a second run with the same name continues from
# the saved state (fastchess's -config).
#
#   tools/vs-sf12.sh NAME NUE [GAMES [LIMIT [CONCURRENCY]]]
#
# NUE is a path to a `nue` binary. LIMIT is a time control (8+0.08), a node count a move
# (nodes=200000: both searches at equal nodes, so that speed does not count) or a fixed
# time a move (st=0.15, seconds). Defaults: 400 games at 8+0.08, concurrency 2. SF12 names
# Stockfish 12's binary, built from the tag `sf_12` outside this repository (`make build
# ARCH=x86-64-avx2` in its `src/`; default: stockfish-12 on PATH); NET its net (default:
# ../shared/reference/nn-82215d0fd0df.nnue), which both engines load. FASTCHESS and BOOK as
# in tools/sprt.sh. Results go to runs/vs-sf12/NAME.{log,pgn,json}; the Elo line of the log
# is Nue's against Stockfish 12.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/fastchess-common.sh
name=$1 nue=$2
games=${3:-400} limit=${4:-8+0.08} concurrency=${5:-2}
case $limit in
nodes=*) limit="tc=inf $limit" ;;
st=*) ;;
*) limit="tc=$limit" ;;
esac
sf12=${SF12:-stockfish-12}
net=$(realpath "${NET:-../shared/reference/nn-82215d0fd0df.nnue}")
# shellcheck disable=SC2086 # $limit is one or two words
fastchess_match runs/vs-sf12 "$name" "$book" epd $((games / 2)) "$concurrency" 20 \
    -engine cmd="$nue" name="$name" option.EvalFile="$net" \
    -engine cmd="$sf12" name=sf12 option.EvalFile="$net" \
    -each $limit option.Threads=1 option.Hash=16
