#!/usr/bin/env bash
# Carries an SPRT in progress to another machine (more cores for a while) and back. The
# other machine needs a copy of this checkout, the packed folder runs/devc, python3 and xz;
# nothing need be built there.
#
#   tools/remote-sprt.sh pack NAME [CONCURRENCY]   here: makes runs/devc/ from runs/sprt/NAME.json
#   tools/remote-sprt.sh play NAME SECONDS         there: plays on for SECONDS, state to $OUT
#   tools/remote-sprt.sh merge NAME DIR            here: takes the state back from DIR
#
# `pack` puts into runs/devc/ the two engines, fastchess and every net an engine loads by
# EvalFile that git does not track (one xz archive: the engines embed the same net, which
# the archive stores once, about 11 MB for the three; each untracked net adds about 9 MB,
# none where it equals the embedded one), a 20,000-line sample of the book and a copy of
# the fastchess state with its paths, EvalFile paths and concurrency (default 15)
# changed. Copy runs/devc into the other machine's checkout and run `OUT=<folder>
# tools/remote-sprt.sh play NAME 450` there; bring OUT's files back and `merge` them.
# `merge` keeps this machine's paths and concurrency and takes the results, so
# `tools/sprt.sh NAME …` continues from the sum; the games' PGN and log are kept beside as
# runs/sprt/NAME-remote-N.{pgn,log}.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:?pack, play or merge} name=${2:?the SPRT name}
dev=runs/devc
state=runs/sprt/$name.json

case $what in
pack)
    concurrency=${3:-15}
    [ -f "$state" ] || { echo "no $state: start the SPRT with tools/sprt.sh first" >&2; exit 1; }
    rm -rf "$dev" && mkdir -p "$dev/bin"
    book=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["opening"]["file"])' "$state")
    shuf -n 20000 "$book" >"$dev/book.epd"
    # The engines, by the paths the state names, and fastchess, under fixed names.
    mapfile -t cmds < <(python3 -c 'import json,sys; [print(e["cmd"]) for e in json.load(open(sys.argv[1]))["engines"]]' "$state")
    cp "${cmds[0]}" "$dev/bin/engine0" && cp "${cmds[1]}" "$dev/bin/engine1"
    cp "$(command -v "${FASTCHESS:-fastchess}")" "$dev/bin/fastchess"
    # A net an engine loads by EvalFile travels in the archive too, unless git tracks it
    # (then it travels with the working tree at the same path).
    mapfile -t nets < <(python3 -c 'import json,sys; [print(v) for e in json.load(open(sys.argv[1]))["engines"] for k, v in e["options"] if k == "EvalFile"]' "$state")
    for net in "${nets[@]}"; do
        git ls-files --error-unmatch "$net" >/dev/null 2>&1 || cp "$net" "$dev/bin/$(basename "$net")"
    done
    tar -C "$dev" -c bin | xz -9e -T2 >"$dev/bin.tar.xz" && rm -rf "$dev/bin"
    python3 - "$state" "$dev" "$name" "$concurrency" <<'EOF'
import json, os, subprocess, sys
state, dev, name, concurrency = sys.argv[1:]
c = json.load(open(state))
c["opening"]["file"] = f"{dev}/book.epd"
c["pgn"]["file"] = f"{dev}/{name}.pgn"
c["config_name"] = f"{dev}/{name}.json"
c["concurrency"] = int(concurrency)
tracked = set(subprocess.run(["git", "ls-files"], capture_output=True, text=True).stdout.split())
for i, e in enumerate(c["engines"]):
    e["cmd"] = f"{dev}/bin/engine{i}"
    e["options"] = [
        [k, v if k != "EvalFile" or v in tracked else f"{dev}/bin/{os.path.basename(v)}"]
        for k, v in e["options"]
    ]
json.dump(c, open(f"{dev}/{name}.json", "w"), indent=4)
EOF
    du -sh "$dev"
    ;;
play)
    seconds=${3:?seconds to play}
    (cd "$dev" && xz -dc bin.tar.xz | tar x)
    echo "cores: $(nproc)"
    # SIGINT makes fastchess save its state and stop between games.
    rc=0
    timeout -s INT "$seconds" "$dev/bin/fastchess" -config file="$dev/$name.json" \
        >"$dev/$name.log" 2>&1 || rc=$?
    [ "$rc" = 0 ] || [ "$rc" = 124 ] || echo "fastchess ended with $rc"
    cp "$dev/$name.json" "$dev/$name.log" "${OUT:?}/"
    [ -f "$dev/$name.pgn" ] && cp "$dev/$name.pgn" "$OUT/"
    grep -E 'Games|LLR|^Elo|Ptnml' "$dev/$name.log" | tail -4
    ;;
merge)
    from=${3:?the folder the files of OUT came back to}
    n=1
    while [ -e "runs/sprt/$name-remote-$n.log" ]; do n=$((n + 1)); done
    cp "$from/$name.log" "runs/sprt/$name-remote-$n.log"
    [ -f "$from/$name.pgn" ] && cp "$from/$name.pgn" "runs/sprt/$name-remote-$n.pgn"
    python3 - "$state" "$from/$name.json" <<'EOF'
import json, sys
here, there = sys.argv[1:]
c = json.load(open(here))
c["stats"] = json.load(open(there))["stats"]
json.dump(c, open(here, "w"), indent=4)
for pair, s in c["stats"].items():
    games = s["wins"] + s["losses"] + s["draws"]
    print(f"{pair}: {games} games, W{s['wins']} L{s['losses']} D{s['draws']}")
EOF
    ;;
*)
    echo "usage: tools/remote-sprt.sh pack|play|merge NAME …" >&2
    exit 2
    ;;
esac
