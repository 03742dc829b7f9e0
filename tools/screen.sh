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
source tools/fastchess-common.sh
name=$1 nodes=$2 games=$3 base=$4
shift 4
engines=(-engine cmd="$base" name=base)
for candidate in "$@"; do
    read -r path options <<<"$candidate"
    # shellcheck disable=SC2086 # the options are words
    engines+=(-engine cmd="$path" name="$(basename "$path")" $options)
done
fastchess_match --fresh runs/screen "$name" "$book" epd $((games / 2)) "${CONCURRENCY:-2}" 50 \
    "${engines[@]}" \
    -tournament gauntlet -seeds 1 \
    -each tc=inf nodes="$nodes" option.Threads=1 option.Hash=16
