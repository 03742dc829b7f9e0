#!/usr/bin/env bash
# The release table: a gauntlet of one Nue build against Ethereal 12, Stockfish 15.1 (both
# from Debian's packages) and Stockfish 12, as a player would meet them. fastchess,
# 10+0.1, a balanced book (8moves_v3, random order, each opening played with colours
# reversed), 1 thread and 16 MB hash on every side, own books off. Resumable: a second run
# with the same name continues from the saved state.
#
#   tools/gauntlet.sh NAME NUE [GAMES [TC [CONCURRENCY]]]
#
# NUE is a path to a `nue` binary; GAMES the games against each opponent (default 100).
# Opponents: Ethereal (/usr/games/ethereal-chess) and Stockfish 15.1
# (/usr/games/stockfish), installed with `apt-get install ethereal-chess stockfish`, and
# Stockfish 12 with its own net, built from the tag `sf_12` outside this repository (`make
# build ARCH=x86-64-avx2` in its `src/`): SF12 names its binary (default: stockfish-12 on
# PATH) and SF12_NET its net (default: ../shared/reference/nn-82215d0fd0df.nnue;
# Stockfish's network server has it). Results go to runs/gauntlet/NAME.{log,pgn,json};
# fastchess's last report lists each opponent's Elo against Nue (negate it for Nue's).
# FASTCHESS names the fastchess binary (default: on PATH), BOOK the openings (default:
# ../shared/books/8moves_v3.pgn). Run it on an otherwise idle machine: no time losses is
# part of the result.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/fastchess-common.sh
name=$1 nue=$2
games=${3:-100} tc=${4:-10+0.1} concurrency=${5:-2}
book=${BOOK:-../shared/books/8moves_v3.pgn}
sf12=${SF12:-stockfish-12}
sf12_net=$(realpath "${SF12_NET:-../shared/reference/nn-82215d0fd0df.nnue}")
fastchess_match runs/gauntlet "$name" "$book" pgn $((games / 2)) "$concurrency" 20 \
    -engine cmd="$nue" name=nue option.Threads=1 \
    -engine cmd=/usr/games/ethereal-chess name=ethereal option.Threads=1 \
    -engine cmd=/usr/games/stockfish name=stockfish-15.1 option.Threads=1 \
    -engine cmd="$sf12" name=stockfish-12 option.Threads=1 option.EvalFile="$sf12_net" \
    -each tc="$tc" option.Hash=16 \
    -tournament gauntlet -seeds 1
