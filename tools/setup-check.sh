#!/usr/bin/env bash
# Plays the command lines of docs/setups.md as a user who pastes them would: for each of
# cutechess-cli and fastchess that is on PATH, its documented line with the paths
# replaced (this build of Nue; Stockfish from Debian's package as the opponent, or Nue
# again without it; the book), 5+0.05 instead of 10+0.1 and one round of two games.
# Checks that both games end on the board (no time loss, crash or illegal move).
#
#   tools/setup-check.sh [NUE [OUT]]
#
# NUE defaults to target/release/nue, OUT (the logs and PGNs) to runs/setup-check; BOOK
# names the book (default ../shared/books/8moves_v3.pgn, from official-stockfish/books).
# A program that is not installed is skipped with a note, as is every line when the book
# is missing (unless NUE_REQUIRE_ALL is set, as .ci/run sets it beside ../shared).
set -euo pipefail
cd "$(dirname "$0")/.."
nue=$(realpath "${1:-target/release/nue}")
out=${2:-runs/setup-check}
book=$(realpath -m "${BOOK:-../shared/books/8moves_v3.pgn}")
opponent=/usr/games/stockfish
[ -x "$opponent" ] || opponent=$nue
mkdir -p "$out"
out=$(realpath "$out")
fail() { echo "setup-check: $*" >&2; exit 1; }

# The code block after `<!-- setup: NAME -->`, joined into one line.
block() {
    awk -v marker="<!-- setup: $1 -->" '
        $0 == marker { found = 1; next }
        found && /^```/ { if (inside) exit; inside = 1; next }
        found && inside { sub(/\\$/, ""); printf "%s ", $0 }' docs/setups.md
}

for tool in cutechess-cli fastchess; do
    if ! command -v "$tool" >/dev/null; then
        echo "setup-check: $tool is not on PATH; its line was not played"
        continue
    fi
    if [ ! -f "$book" ]; then
        [ -z "${NUE_REQUIRE_ALL:-}" ] || fail "no book at $book"
        echo "setup-check: $tool's line needs the book $book (8moves_v3.pgn, from" \
            "https://github.com/official-stockfish/books); not played"
        continue
    fi
    line=$(block "$tool")
    [ -n "$line" ] || fail "docs/setups.md has no $tool block"
    line=${line//\/usr\/local\/bin\/nue/$nue}
    line=${line//\/usr\/games\/stockfish/$opponent}
    line=${line//tc=10+0.1/tc=5+0.05}
    line=${line//-rounds 50/-rounds 1}
    line=${line//8moves_v3.pgn/$book}
    line=${line//games.pgn/$out/$tool.pgn}
    rm -f "$out/$tool.pgn"
    # In OUT, where fastchess leaves its config.json.
    (cd "$out" && eval "$line") >"$out/$tool.log" 2>&1 || fail "$tool failed; see $out/$tool.log"
    games=$(grep -c '^\[Result "\(1-0\|0-1\|1/2-1/2\)"\]' "$out/$tool.pgn" || true)
    [ "$games" = 2 ] || fail "$tool: $games finished games of 2; see $out/$tool.log"
    if grep -qiE 'loses on time|time forfeit|illegal|disconnect|crash|stall' "$out/$tool.pgn"; then
        fail "$tool: a game did not end on the board; see $out/$tool.pgn"
    fi
    echo "setup-check: $tool played its documented line: 2 games ended on the board"
done
