#!/usr/bin/env bash
# Nue in desktop GUIs, as a new user meets it, on a virtual X display (Xvfb):
#
#   1. xboard, which runs a UCI engine through polyglot: a game against Glaurung 2.2 at
#      20 s + 0.2 s (PGN), then an analysis of an opening position with MultiPV 3
#      (screenshot of the board and the engine output window);
#   2. CuteChess, when CUTECHESS names its GUI binary: a game against Glaurung at 1 min +
#      1 s with pondering, Nue set to three lines (MultiPV) and WDL (screenshots during and
#      after the game, PGN through the clipboard). CuteChess is not packaged by Debian:
#      build its GUI outside this repository from the public source (github.com/cutechess/cutechess, tag
#      v1.3.1: `cmake -B build -DCMAKE_BUILD_TYPE=Release && make -C build -j2`, with
#      Debian's qtbase5-dev, libqt5svg5-dev, qttools5-dev and cmake).
#
#   tools/gui-check.sh [NUE] [OUT]
#
# NUE is the engine binary (default target/release/nue), OUT the folder for the PGNs,
# screenshots and logs (default runs/gui). Installs what it needs from Debian's packages.
# Every step checks its result: a game must end by the rules, not by a fault, and the
# analysis must show three lines. Run it with the machine otherwise idle: a GUI's clock
# counts the time an engine waits for a core.
set -euo pipefail
cd "$(dirname "$0")/.."
nue=$(realpath "${1:-target/release/nue}")
out=$(mkdir -p "${2:-runs/gui}" && realpath "${2:-runs/gui}")
export PATH="$PATH:/usr/games" # polyglot and the engines live there; xboard needs polyglot on PATH

need=()
for tool in Xvfb:xvfb xboard:xboard polyglot:polyglot glaurung:glaurung import:imagemagick \
    xdotool:xdotool xwininfo:x11-utils xclip:xclip; do
    command -v "${tool%%:*}" >/dev/null || need+=("${tool#*:}")
done
if [ ${#need[@]} -gt 0 ]; then
    apt-get update -qq && apt-get install -y -qq "${need[@]}" >/dev/null
fi

display=:$((90 + RANDOM % 9))
Xvfb "$display" -screen 0 1280x900x24 >"$out/xvfb.log" 2>&1 &
xvfb=$!
trap 'kill $xvfb 2>/dev/null; pkill -f "xboard -fcp $nue" 2>/dev/null || true' EXIT
export DISPLAY=$display
sleep 2

# The id of the first window whose name matches $1, once it exists.
# A game's PGN must record a result and no fault: `ended PGN NAME FAULTS` prints the
# result and the last comment, and stops the script if the game did not end or FAULTS
# (a grep pattern) appears in it.
ended() {
    local result ending
    result=$(sed -n 's/^\[Result "\(.*\)"\]/\1/p' "$1")
    ending=$(grep -o '{[^}]*}' "$1" | tail -1)
    echo "  $result $ending"
    case "$result" in 1-0|0-1|1/2-1/2) ;; *) echo "the $2 game did not end: $result"; exit 1 ;; esac
    if grep -qi "$3" "$1"; then
        echo "the $2 game ended by a fault"; exit 1
    fi
}

window() {
    for _ in $(seq 100); do
        id=$(xwininfo -root -tree | awk -v name="$1" 'index($0, "\"" name) {print $1; exit}')
        [ -n "$id" ] && { echo "$id"; return; }
        sleep 0.2
    done
    echo "no window named $1" >&2
    return 1
}

# 1. xboard: a game, then an analysis.
echo "xboard: Nue against Glaurung, 20+0.2"
rm -f "$out/xboard-game.pgn"
timeout 600 xboard -fcp "$nue" -fUCI -fd "$out" -fn Nue -scp glaurung -sUCI -sd "$out" \
    -matchMode T -matchGames 1 -tc 0:20 -inc 0.2 -saveGameFile "$out/xboard-game.pgn" \
    -xexit -popupExitMessage false >"$out/xboard-game.log" 2>&1 || true
grep -q '\[White "Nue' "$out/xboard-game.pgn"
ended "$out/xboard-game.pgn" xboard "forfeit\|time\b.*lost\|illegal"

echo "xboard: analysis with MultiPV 3"
fen="r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"
echo "$fen" >"$out/position.fen"
xboard -fcp "$nue" -fUCI -fd "$out" -initialMode Analysis -lpf "$out/position.fen" \
    -firstOptions "MultiPV=3" -engineOutputUp true -showThinking true \
    -engineOutputW 850 -engineOutputH 300 -debug -nameOfDebugFile "$out/xboard-analysis.debug" \
    >"$out/xboard-analysis.log" 2>&1 &
board=$(window "$out/position.fen")
xdotool windowmove "$board" 0 305 # no window manager: put the board below the output
sleep 15
import -window root "$out/xboard-analysis.png"
pkill -f "xboard -fcp $nue" || true
# Polyglot passes each MultiPV line on as a thinking line of the same depth: the deepest
# depth with three different first moves shows that the three lines reached xboard.
lines=$(awk '$2 == "<first" && $4 ~ /^[0-9]+$/ && $5 ~ /^[-+]?[0-9]+$/ {
        split($0, t, "\t"); split(t[2], pv, " "); seen[$4 " " pv[1]] = 1 }
    END { for (k in seen) { split(k, p, " "); n[p[1]]++ }
          best = 0; for (d in n) if (n[d] >= 3 && d + 0 > best) best = d + 0; print best }' \
    "$out/xboard-analysis.debug")
[ "$lines" -gt 0 ] || { echo "xboard showed no three lines of one depth"; exit 1; }
echo "  three lines at depth $lines, screenshot $out/xboard-analysis.png"

# 2. CuteChess.
if [ -z "${CUTECHESS:-}" ]; then
    echo "CuteChess: skipped (set CUTECHESS to its GUI binary)"
    exit 0
fi
echo "CuteChess: Nue against Glaurung, 1 min + 1 s, pondering, analysis shown"
config="$out/cutechess-config"
rm -rf "$config" && mkdir -p "$config/cutechess"
cat >"$config/cutechess/engines.json" <<EOF2
[
    {"command": "$nue", "name": "Nue", "protocol": "uci", "workingDirectory": "$out",
     "options": [{"name": "MultiPV", "value": 3}, {"name": "UCI_ShowWDL", "value": true}]},
    {"command": "/usr/games/glaurung", "name": "Glaurung", "protocol": "uci",
     "workingDirectory": "$out"}
]
EOF2
XDG_CONFIG_HOME="$config" "$CUTECHESS" >"$out/cutechess.log" 2>&1 &
cutechess=$!
trap 'kill $xvfb $cutechess 2>/dev/null || true' EXIT
main=$(window "Human vs Human")
xdotool windowsize "$main" 1280 900
sleep 2

# Clicks at offsets inside a window (no window manager runs, so keyboard focus follows
# the pointer and dialogs are placed by Qt alone). The offsets are CuteChess 1.3.1's.
click() {
    eval "$(xdotool getwindowgeometry --shell "$1")"
    xdotool mousemove $((X + $2)) $((Y + $3)) click "${4:-1}"
    sleep 0.5
}
type_into() { # window, x, y, text: replaces a field's text
    click "$1" "$2" "$3"
    xdotool key ctrl+a type "$4"
}
click "$main" 28 10 # Game
click "$main" 53 34 # New...
dialog=$(window "New Game")
click "$dialog" 30 83   # White: CPU
click "$dialog" 235 83  # Black: CPU (its list starts at Glaurung)
click "$dialog" 152 113 # White's engine list...
click "$dialog" 61 151  # ...Nue (the list is in alphabetical order)
click "$dialog" 259 187 # Time Control
times=$(window "Time Controls")
type_into "$times" 170 184 0 # moves: the whole game
type_into "$times" 125 216 1 # minutes
type_into "$times" 170 248 1 # increment, seconds
click "$times" 142 375       # OK
click "$dialog" 18 765       # Thinking on opponent's time
import -window root "$out/cutechess-newgame.png"
click "$dialog" 288 795      # OK: the game starts
sleep 60
import -window root "$out/cutechess-analysis.png"
# The game ends within about five minutes; Game > Copy PGN then gives the whole game.
pgn="$out/cutechess-game.pgn"
for _ in $(seq 60); do
    sleep 10
    click "$main" 28 10  # Game
    click "$main" 65 163 # Copy PGN
    xclip -o -selection clipboard >"$pgn" 2>/dev/null || true
    grep -q '^\[Result "\(1-0\|0-1\|1/2-1/2\)"\]' "$pgn" && break
done
import -window root "$out/cutechess-game.png"
ended "$pgn" CuteChess "forfeit\|loses on time\|illegal\|disconnect\|stall"
echo "  screenshots $out/cutechess-analysis.png, $out/cutechess-game.png; PGN $pgn"
