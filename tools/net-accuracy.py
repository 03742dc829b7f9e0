#!/usr/bin/env python3
"""How well nets' static evaluations agree with a UCI engine's search scores.

    tools/net-accuracy.py --engine SF --nets NAME=NET... [--data FILE] [--count N]
                          [--depth D ...] [--nue NUE] [--seed S]

Takes N positions spread evenly over a `fen | score | result` data file (default
`../shared/data/sf15-d7-part2.txt.gz`), and two perturbed copies of each: one and two
uniformly random legal moves played from it (positions a search visits but a game
rarely reaches). Drops positions in check, finished games and mate scores. Labels every
position with the engine's score at each depth, then evaluates it with each net through
`nue`'s UCI `eval` command (`EvalFile` per net). Prints, per kind of position, depth and
net, the rank correlation (Spearman) between evaluation and score, and the mean KL
divergence between σ(eval/464.3) and σ(score/464.3) with the score converted to internal
units (×2.08), the measure the trainer's validation loss uses at λ 1.0.

Needs python-chess (`.ci/run` installs it in `target/ci-venv`).
"""

import argparse
import gzip
import math
import random

import chess
import chess.engine

from nue_nets import correlation, nue_evals, ranks

SCALE = 464.3


def sample(path, count):
    with gzip.open(path, "rt") as f:
        lines = f.readlines()
    step = max(1, len(lines) // count)
    return [line.split("|")[0].strip() for line in lines[::step][:count]]


def perturbed(fen, plies, rng):
    board = chess.Board(fen)
    for _ in range(plies):
        moves = list(board.legal_moves)
        if not moves:
            return None
        board.push(rng.choice(moves))
    if board.is_check() or board.is_game_over():
        return None
    return board.fen()


def sigmoid(x):
    return 1 / (1 + math.exp(-max(-5000.0, min(5000.0, x)) / SCALE))


def kl(p, t):
    p = min(max(p, 1e-7), 1 - 1e-7)
    t = min(max(t, 1e-7), 1 - 1e-7)
    return t * math.log(t / p) + (1 - t) * math.log((1 - t) / (1 - p))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--engine", required=True, help="the UCI engine that labels the positions")
    ap.add_argument("--nets", nargs="+", required=True, metavar="NAME=NET")
    ap.add_argument("--data", default="../shared/data/sf15-d7-part2.txt.gz")
    ap.add_argument("--count", type=int, default=500)
    ap.add_argument("--depth", type=int, nargs="+", default=[8])
    ap.add_argument("--nue", default="target/release/nue")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    nets = dict(spec.split("=", 1) for spec in args.nets)

    rng = random.Random(args.seed)
    kinds = {"game": [], "1 random move": [], "2 random moves": []}
    for fen in sample(args.data, args.count):
        if not chess.Board(fen).is_check():
            kinds["game"].append(fen)
        for plies, kind in ((1, "1 random move"), (2, "2 random moves")):
            p = perturbed(fen, plies, rng)
            if p:
                kinds[kind].append(p)

    engine = chess.engine.SimpleEngine.popen_uci(args.engine)
    engine.configure({"Threads": 1, "Hash": 16})
    for kind, fens in kinds.items():
        labels = {}
        for depth in args.depth:
            scores = []
            for fen in fens:
                score = engine.analyse(chess.Board(fen), chess.engine.Limit(depth=depth))["score"].white()
                scores.append(None if score.is_mate() else score.score())
            labels[depth] = scores
        keep = [
            i for i in range(len(fens)) if all(s[i] is not None and abs(s[i]) < 3000 for s in labels.values())
        ]
        kept = [fens[i] for i in keep]
        evals = {name: nue_evals(args.nue, net, kept) for name, net in nets.items()}
        for depth, scores in labels.items():
            target = [scores[i] for i in keep]
            print(f"{kind}, depth {depth}, {len(kept)} positions:")
            for name, values in evals.items():
                rho = correlation(ranks(target), ranks(values))
                loss = sum(kl(sigmoid(v), sigmoid(2.08 * s)) for v, s in zip(values, target)) / len(kept)
                print(f"  {name:>12}  rank correlation {rho:.4f}  KL {loss:.4f}")
    engine.quit()


if __name__ == "__main__":
    main()
