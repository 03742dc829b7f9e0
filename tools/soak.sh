#!/usr/bin/env bash
# A soak: many fast games under the settings players and bot operators use (Threads 2,
# Ponder on, Hash 64), with the engines' resident memory sampled through the run.
#
#   tools/soak.sh NAME NUE [GAMES [TC [OPPONENT_CMD [CONCURRENCY]]]]
#
# OPPONENT_CMD defaults to NUE itself (a self-play soak); for Stockfish 15.1 pass
# /usr/games/stockfish (it gets the same Threads, Hash and Ponder). Defaults: 200 games
# at 1+0.01, concurrency 1. Writes runs/soak/NAME.{log,pgn,rss.tsv} and prints the
# anomalies cutechess-cli reported (time losses, illegal moves, crashes, warnings) and the
# memory of each engine process at the first sample, its peak and the end.
set -euo pipefail
cd "$(dirname "$0")/.."
name=$1 nue=$2
games=${3:-200} tc=${4:-1+0.01} opponent=${5:-$2} concurrency=${6:-1}
# fastchess does not ponder; cutechess-cli does (built from the cutechess/cutechess
# repository, outside ours: see tools/gui-check.sh).
cutechess=${CUTECHESS_CLI:-cutechess-cli}
book=${BOOK:-../shared/books/UHO_4060_v4.epd}
out=runs/soak
mkdir -p "$out"
rm -f "$out/$name".{log,pgn,rss.tsv}

"$cutechess" \
    -engine cmd="$nue" name=nue proto=uci \
    -engine cmd="$opponent" name=opponent proto=uci \
    -each tc="$tc" option.Threads=2 option.Hash=64 ponder \
    -openings file="$book" format=epd order=random \
    -repeat -games 2 -rounds $((games / 2)) -concurrency "$concurrency" \
    -pgnout "$out/$name.pgn" \
    >"$out/$name.log" 2>&1 &
match=$!

# Resident set size of every engine process the match started, every five seconds,
# with the number of games finished by then.
printf 'seconds\tgames\tpid\tcommand\trss_kib\n' >"$out/$name.rss.tsv"
start=$SECONDS
while kill -0 "$match" 2>/dev/null; do
    done_games=$(grep -c '^Finished game' "$out/$name.log" || true)
    for pid in $(pgrep -P "$match" || true); do
        if rss=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null) && [ -n "$rss" ]; then
            printf '%d\t%d\t%d\t%s\t%d\n' $((SECONDS - start)) "$done_games" "$pid" \
                "$(basename "$(readlink "/proc/$pid/exe" 2>/dev/null || echo '?')")" "$rss" \
                >>"$out/$name.rss.tsv"
        fi
    done
    sleep 5
done
wait "$match" || true

finished=$(grep -c '^Finished game' "$out/$name.log" || true)
echo "games finished: $finished"
echo "anomalies (time forfeits, illegal moves, disconnects, crashes, warnings):"
grep -iE 'on time|illegal|disconnect|crash|stall|warning|error' "$out/$name.log" |
    sort | uniq -c || echo "  none"
echo "results:"
grep -oE '\{[^}]*\}$' "$out/$name.log" | sort | uniq -c | sort -rn
echo "resident memory, each process's first sample after the first game, its peak and its last"
echo "sample but one (the very last can catch it exiting, its memory half freed):"
awk -F'\t' 'NR > 1 && $2 >= 1 {
        if (!($3 in first)) { first[$3] = $5; t0[$3] = $1; cmd[$3] = $4 }
        if ($5 > peak[$3]) peak[$3] = $5
        last[$3] = prev[$3]; t1[$3] = prevt[$3]
        prev[$3] = $5; prevt[$3] = $1
    }
    END {
        for (p in first) {
            printf "  %s (pid %s): %d KiB at %d s, peak %d KiB, %d KiB at %d s (%+.1f %%)\n",
                cmd[p], p, first[p], t0[p], peak[p], last[p], t1[p],
                100 * (last[p] - first[p]) / first[p]
        }
    }' "$out/$name.rss.tsv"
