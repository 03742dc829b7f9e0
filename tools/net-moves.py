#!/usr/bin/env python3
"""What nets' moves are worth: each net plays one move per position inside Nue's search at
a fixed node count, and a stronger engine (the oracle) scores every move some net chose.

    tools/net-moves.py --oracle ENGINE [--oracle-option NAME=VALUE ...] --nets NAME=NET ...
                       --positions FILE [--count N] [--nodes N] [--oracle-nodes N]
                       [--nue NUE] [--cache DIR]

The positions are the first N lines of FILE (default 600): FENs, or `fen | score | result` training
lines (the part before the first `|` is read). Each net (`NAME=PATH`, or a path named by its file; `default`
is the embedded net) searches each position from an empty table with `go nodes`; the oracle
then searches each position once with MultiPV over the moves the nets chose
(`searchmoves`), which scores them all in one search. A move's loss is the drop in
expected score from the best of those moves, 1 / (1 + 10^(-cp / 400)) in percent. Prints,
per net, the mean loss, its paired difference from the first net with two standard errors,
and how often the net chose the best of the moves scored.

Results are kept in DIR (default `runs/net-moves`), one JSON file per net and oracle, keyed
by the settings, so a rerun with another net adds only that net's searches and the
oracle's searches of positions where it chose a new move.

Needs python-chess (`.ci/run` installs it in `target/ci-venv`).
"""

import argparse
import hashlib
import json
import math
import os
import statistics

import chess
import chess.engine

from nue_nets import open_nue


def read_positions(path, count):
    fens = []
    with open(path) as f:
        for line in f:
            fen = line.split("|")[0].strip()
            if fen:
                fens.append(fen)
            if len(fens) == count:
                break
    return fens


def cached(path, compute):
    if os.path.exists(path):
        with open(path) as f:
            return json.load(f)
    value = compute()
    with open(path, "w") as f:
        json.dump(value, f)
    return value


def net_moves(nue, net, fens, nodes):
    with open_nue(nue, net) as engine:
        moves = []
        for i, fen in enumerate(fens):
            result = engine.play(chess.Board(fen), chess.engine.Limit(nodes=nodes), game=i)
            moves.append(result.move.uci())
        return moves


def oracle_scores(args, fens, picks, store):
    """Scores (centipawns, mover's view) of every chosen move, added to `store`."""
    with chess.engine.SimpleEngine.popen_uci(args.oracle) as engine:
        options = dict(option.split("=", 1) for option in args.oracle_option)
        engine.configure({"Threads": 1, "Hash": 64, **options})
        for i, fen in enumerate(fens):
            wanted = sorted({moves[i] for moves in picks})
            known = store.get(fen, {})
            if all(m in known for m in wanted):
                continue
            board = chess.Board(fen)
            infos = engine.analyse(
                board,
                chess.engine.Limit(nodes=args.oracle_nodes),
                multipv=len(wanted),
                root_moves=[chess.Move.from_uci(m) for m in wanted],
                game=i,
            )
            # One search scores all the moves: earlier scores of this position are dropped.
            store[fen] = {
                info["pv"][0].uci(): info["score"].relative.score(mate_score=10000)
                for info in infos
                if "pv" in info
            }
    return store


def expected(cp):
    return 100.0 / (1.0 + 10.0 ** (-cp / 400.0))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--oracle", required=True)
    parser.add_argument("--oracle-option", action="append", default=[])
    parser.add_argument("--nets", nargs="+", required=True, metavar="NAME=NET")
    parser.add_argument("--positions", required=True)
    parser.add_argument("--count", type=int, default=600)
    parser.add_argument("--nodes", type=int, default=100_000)
    parser.add_argument("--oracle-nodes", type=int, default=1_000_000)
    parser.add_argument("--nue", default="target/release/nue")
    parser.add_argument("--cache", default="runs/net-moves")
    args = parser.parse_args()

    fens = read_positions(args.positions, args.count)
    os.makedirs(args.cache, exist_ok=True)
    tag = hashlib.sha256("\n".join(fens).encode()).hexdigest()[:12]
    nets = [
        spec.split("=", 1) if "=" in spec else (os.path.basename(spec).removesuffix(".nnue"), spec)
        for spec in args.nets
    ]
    picks = {}
    for name, net in nets:
        path = f"{args.cache}/{tag}-{args.nodes}-{name}.json"
        picks[name] = cached(path, lambda: net_moves(args.nue, net, fens, args.nodes))

    oracle_tag = hashlib.sha256(
        " ".join([args.oracle, *args.oracle_option, str(args.oracle_nodes)]).encode()
    ).hexdigest()[:12]
    oracle_path = f"{args.cache}/{tag}-oracle-{oracle_tag}.json"
    store = {}
    if os.path.exists(oracle_path):
        with open(oracle_path) as f:
            store = json.load(f)
    store = oracle_scores(args, fens, list(picks.values()), store)
    with open(oracle_path, "w") as f:
        json.dump(store, f)

    losses = {}
    for name, _ in nets:
        losses[name] = []
        for i, fen in enumerate(fens):
            scores = store[fen]
            losses[name].append(expected(max(scores.values())) - expected(scores[picks[name][i]]))
    first = nets[0][0]
    print(f"{len(fens)} positions, nets at {args.nodes} nodes, oracle at {args.oracle_nodes}")
    print(f"{'net':24} {'loss %':>7} {'vs ' + first:>24} {'best':>6}")
    for name, _ in nets:
        diff = [a - b for a, b in zip(losses[name], losses[first])]
        half = 2 * statistics.stdev(diff) / math.sqrt(len(diff)) if name != first else 0.0
        best = sum(loss == 0 for loss in losses[name]) / len(fens)
        print(
            f"{name:24} {statistics.mean(losses[name]):7.3f} "
            f"{statistics.mean(diff):+14.3f} ± {half:.3f} {best:6.3f}"
        )


if __name__ == "__main__":
    main()
