#!/usr/bin/env bash
# The release table: a gauntlet of one Nue build against engines from Debian's packages,
# as a player would meet them. fastchess, 10+0.1, a balanced book (8moves_v3, random order,
# each opening played with colours reversed), 1 thread and 16 MB hash on every side, own
# books off (Toga II has one thread and no Threads option). Resumable: a second run with
# the same name continues from the saved state.
#
#   tools/gauntlet.sh NAME NUE [GAMES [TC [CONCURRENCY]]]
#
# NUE is a path to a `nue` binary; GAMES the games against each opponent (default 100).
# Opponents: Ethereal (/usr/games/ethereal-chess), Stockfish 15.1 (/usr/games/stockfish)
# and Toga II (/usr/games/toga2); install them with `apt-get install ethereal-chess
# stockfish toga2`. Results go to runs/gauntlet/NAME.{log,pgn,json}; fastchess's last
# report lists each opponent's Elo against Nue (negate it for Nue's). FASTCHESS names the
# fastchess binary (default: on PATH), BOOK the openings (default:
# ../shared/books/8moves_v3.pgn). Run it on an otherwise idle machine: no time losses is
# part of the result.
set -euo pipefail
cd "$(dirname "$0")/.."
name=$1 nue=$2
games=${3:-100} tc=${4:-10+0.1} concurrency=${5:-2}
fastchess=${FASTCHESS:-fastchess}
book=${BOOK:-../shared/books/8moves_v3.pgn}
out=runs/gauntlet
mkdir -p "$out"
if [ -f "$out/$name.json" ]; then
    exec "$fastchess" -config file="$out/$name.json" >>"$out/$name.log" 2>&1
fi
exec "$fastchess" \
    -engine cmd="$nue" name=nue option.Threads=1 \
    -engine cmd=/usr/games/ethereal-chess name=ethereal option.Threads=1 \
    -engine cmd=/usr/games/stockfish name=stockfish-15.1 option.Threads=1 \
    -engine cmd=/usr/games/toga2 name=toga2 option.OwnBook=false \
    -each tc="$tc" option.Hash=16 \
    -tournament gauntlet -seeds 1 \
    -openings file="$book" format=pgn order=random \
    -repeat -games 2 -rounds $((games / 2)) -concurrency "$concurrency" \
    -report penta=true -ratinginterval 20 \
    -pgnout file="$out/$name.pgn" \
    -config outname="$out/$name.json" \
    >>"$out/$name.log" 2>&1
