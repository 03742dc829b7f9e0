#!/usr/bin/env bash
# Nodes per second of Nue beside a Stockfish, measured as this project measures speed:
# interleaved rounds (in each round `nue bench`, then the other engine's `bench`, one
# thread each), so that a machine whose speed drifts treats both alike, and the ratio taken
# within each round. Prints every round and the median of each column. Run it with the
# machine otherwise idle.
#
#   tools/speed-vs.sh [NUE [STOCKFISH [ROUNDS]]]
#
# NUE defaults to target/release/nue, STOCKFISH to stockfish-12 on PATH (Stockfish 12 built
# from its tag sf_12 with `make build ARCH=x86-64-avx2`; any Stockfish's `bench` prints the
# `Nodes/second` line read here), ROUNDS to 9.
set -euo pipefail
cd "$(dirname "$0")/.."
nue=${1:-target/release/nue}
stockfish=${2:-stockfish-12}
rounds=${3:-9}
command -v "$stockfish" >/dev/null || { echo "speed-vs: no $stockfish" >&2; exit 1; }

printf '%5s %12s %12s %7s\n' round nue stockfish ratio
results=()
for ((i = 1; i <= rounds; i++)); do
    n=$("$nue" bench 2>/dev/null | awk 'END { print $3 }')
    # Stockfish prints its bench summary on stderr; the engine's own directory may hold
    # its net, so it runs from there.
    s=$(cd "$(dirname "$(command -v "$stockfish")")" &&
        "$stockfish" bench 2>&1 | awk '/Nodes\/second/ { print $3 }')
    ratio=$(awk -v n="$n" -v s="$s" 'BEGIN { printf "%.3f", n / s }')
    printf '%5d %12d %12d %7s\n' "$i" "$n" "$s" "$ratio"
    results+=("$n $s $ratio")
done
printf '%s\n' "${results[@]}" | awk '
    { n[NR] = $1; s[NR] = $2; r[NR] = $3 }
    function median(a, k,    i, j, t) {
        for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
        return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
    }
    END { printf "%5s %12d %12d %7.3f\n", "median", median(n, NR), median(s, NR), median(r, NR) }'
