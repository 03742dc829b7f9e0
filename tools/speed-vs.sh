#!/usr/bin/env bash
# Nodes per second of Nue beside a Stockfish, measured as this project measures speed:
# interleaved rounds (in each round `nue bench`, then the other engine's `bench`, one
# thread each), so that a machine whose speed drifts treats both alike, and the ratio taken
# within each round. Prints every round and the median of each column. Run it with the
# machine otherwise idle.
#
#   tools/speed-vs.sh [NUE [STOCKFISH [ROUNDS [BASE]]]]
#
# NUE defaults to target/release/nue, STOCKFISH to stockfish-12 on PATH (Stockfish 12 built
# from its tag sf_12 with `make build ARCH=x86-64-avx2`; any Stockfish's `bench` prints the
# `Nodes/second` line read here), ROUNDS to 9. BASE, another `nue` (an older build, say),
# joins each round too, and its column and NUE's speed over it are added.
#
# tools/speed-positions.py gives the same comparison over positions from real games.
set -euo pipefail
cd "$(dirname "$0")/.."
nue=${1:-target/release/nue}
stockfish=${2:-stockfish-12}
rounds=${3:-9}
base=${4:-}
command -v "$stockfish" >/dev/null || { echo "speed-vs: no $stockfish" >&2; exit 1; }

nue_nps() { "$1" bench 2>/dev/null | awk 'END { print $3 }'; }

if [ -n "$base" ]; then
    printf '%5s %12s %12s %12s %7s %7s\n' round nue stockfish base ratio vs-base
else
    printf '%5s %12s %12s %7s\n' round nue stockfish ratio
fi
results=()
for ((i = 1; i <= rounds; i++)); do
    n=$(nue_nps "$nue")
    # Stockfish prints its bench summary on stderr; the engine's own directory may hold
    # its net, so it runs from there.
    s=$(cd "$(dirname "$(command -v "$stockfish")")" &&
        "$stockfish" bench 2>&1 | awk '/Nodes\/second/ { print $3 }')
    ratio=$(awk -v n="$n" -v s="$s" 'BEGIN { printf "%.3f", n / s }')
    if [ -n "$base" ]; then
        b=$(nue_nps "$base")
        over=$(awk -v n="$n" -v b="$b" 'BEGIN { printf "%.3f", n / b }')
        printf '%5d %12d %12d %12d %7s %7s\n' "$i" "$n" "$s" "$b" "$ratio" "$over"
        results+=("$n $s $ratio $b $over")
    else
        printf '%5d %12d %12d %7s\n' "$i" "$n" "$s" "$ratio"
        results+=("$n $s $ratio")
    fi
done
printf '%s\n' "${results[@]}" | awk '
    { for (c = 1; c <= NF; c++) v[c, NR] = $c; cols = NF }
    function median(c, k,    i, j, t, a) {
        for (i = 1; i <= k; i++) a[i] = v[c, i]
        for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
        return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
    }
    END {
        if (cols == 5)
            printf "%5s %12d %12d %12d %7.3f %7.3f\n", "median", median(1, NR), median(2, NR), median(4, NR), median(3, NR), median(5, NR)
        else
            printf "%5s %12d %12d %7.3f\n", "median", median(1, NR), median(2, NR), median(3, NR)
    }'
