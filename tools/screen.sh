#!/usr/bin/env bash
# A free screen before an SPRT: a gauntlet of candidate builds against a base build at a
# fixed node count a move, so that the result does not depend on the machine's speed or
# load. fastchess, UHO openings in random order, each opening played with colours
# reversed, Threads 1, Hash 16, a fixed number of games for each candidate.
#
#   tools/screen.sh NAME NODES GAMES BASE CANDIDATE...
#
# BASE and each CANDIDATE are paths to `nue` binaries; a candidate may add UCI options
# after its path, as `path option.Name=Value` in one word-split argument. GAMES is the
# number of games each candidate plays against the base. Each candidate is named after
# its file. Results go to runs/screen/NAME.{log,pgn,json}; fastchess's last report gives
# each candidate's Elo against the base, from the base's side (negate it). CONCURRENCY
# (default 2), FASTCHESS and BOOK as in tools/sprt.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
name=$1 nodes=$2 games=$3 base=$4
shift 4
fastchess=${FASTCHESS:-fastchess}
book=${BOOK:-../shared/books/UHO_4060_v4.epd}
out=runs/screen
mkdir -p "$out"
engines=(-engine cmd="$base" name=base)
for candidate in "$@"; do
    read -r path options <<<"$candidate"
    # shellcheck disable=SC2086 # the options are words
    engines+=(-engine cmd="$path" name="$(basename "$path")" $options)
done
exec "$fastchess" "${engines[@]}" \
    -tournament gauntlet -seeds 1 \
    -each tc=inf nodes="$nodes" option.Threads=1 option.Hash=16 \
    -openings file="$book" format=epd order=random \
    -repeat -games 2 -rounds $((games / 2)) -concurrency "${CONCURRENCY:-2}" \
    -report penta=true -ratinginterval 50 \
    -pgnout file="$out/$name.pgn" \
    -config outname="$out/$name.json" \
    >>"$out/$name.log" 2>&1
