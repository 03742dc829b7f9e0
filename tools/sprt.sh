#!/usr/bin/env bash
# An SPRT between two builds of Nue, as this project runs them: fastchess, UHO openings
# in random order, each opening played with colours reversed, Threads 1, Hash 16,
# logistic Elo bounds. Resumable: a second run with the same name continues from the
# saved state (fastchess's -config).
#
#   tools/sprt.sh NAME NEW BASE [ELO0 ELO1 [TC [CONCURRENCY]]]
#
# NEW and BASE are paths to `nue` binaries. Results go to runs/sprt/NAME.{log,pgn,json}.
# Defaults: bounds [0, 5] (a gainer; use -5 0 for a fix or simplification), 5+0.05,
# concurrency 2. FASTCHESS names the fastchess binary (default: on PATH) and BOOK the
# openings (default: ../shared/books/UHO_4060_v4.epd).
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/fastchess-common.sh
name=$1 new=$2 base=$3
elo0=${4:-0} elo1=${5:-5} tc=${6:-5+0.05} concurrency=${7:-2}
fastchess_match runs/sprt "$name" "$book" epd 50000 "$concurrency" 20 \
    -engine cmd="$new" name="$name" \
    -engine cmd="$base" name=base \
    -each tc="$tc" option.Threads=1 option.Hash=16 \
    -- -sprt elo0="$elo0" elo1="$elo1" alpha=0.05 beta=0.05 model=logistic
