# shellcheck shell=bash
# What tools/sprt.sh, screen.sh, vs-sf12.sh and gauntlet.sh share, sourced by each from the
# repository root: the fastchess and book defaults, and the part of the fastchess command
# line that every match of this project has in common. Not meant to be run on its own.
#
# FASTCHESS names the fastchess binary (default: on PATH) and BOOK the openings (default:
# ../shared/books/UHO_4060_v4.epd; a script with another default book sets `book` again
# after sourcing this file).

fastchess=${FASTCHESS:-fastchess}
book=${BOOK:-../shared/books/UHO_4060_v4.epd}

# fastchess_match [--fresh] OUT NAME BOOK FORMAT ROUNDS CONCURRENCY INTERVAL HEAD... [-- TAIL...]
#
# Replaces the shell with fastchess, its output appended to OUT/NAME.log. When
# OUT/NAME.json exists it continues from that saved state (fastchess's -config) and the
# other arguments are ignored, unless --fresh is given (then every run starts anew).
# Otherwise the command line is HEAD (the engines and the mode: -engine, -each,
# -tournament, ...), then the openings (BOOK in FORMAT, epd or pgn, random order, each
# played with colours reversed: -repeat -games 2), ROUNDS rounds at CONCURRENCY, then TAIL
# (an -sprt, say), then the pentanomial report every INTERVAL games, the games to
# OUT/NAME.pgn and the state to OUT/NAME.json.
fastchess_match() {
    local resume=1
    if [ "$1" = --fresh ]; then
        resume=0
        shift
    fi
    local out=$1 name=$2 book=$3 format=$4 rounds=$5 concurrency=$6 interval=$7
    shift 7
    local head=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        head+=("$1")
        shift
    done
    [ $# -gt 0 ] && shift # the --
    mkdir -p "$out"
    if [ "$resume" = 1 ] && [ -f "$out/$name.json" ]; then
        exec "$fastchess" -config file="$out/$name.json" >>"$out/$name.log" 2>&1
    fi
    exec "$fastchess" "${head[@]}" \
        -openings file="$book" format="$format" order=random \
        -repeat -games 2 -rounds "$rounds" -concurrency "$concurrency" \
        "$@" \
        -report penta=true -ratinginterval "$interval" \
        -pgnout file="$out/$name.pgn" \
        -config outname="$out/$name.json" \
        >>"$out/$name.log" 2>&1
}
