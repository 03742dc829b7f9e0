#!/usr/bin/env python3
"""How a net's static evaluation agrees with its own search: the figures of `nets/log.md`,
"Measures against play", for any set of nets, measured the same way each time.

    tools/net-consistency.py --nets NAME=NET... [--data FILE] [--count N] [--depth D]
                             [--siblings D] [--nue NUE]

The positions: every 997th line of a `fen | score | result` data file (default
`../shared/data/sf15-d7-part2.txt.gz`), shuffled with seed 7, keeping those not in check,
with |score| at most 1,200 cp and at least 8 pieces; the first N of them (default 400).
Each net (`NAME=PATH`; `default` is the embedded net) evaluates every position with
`nue`'s UCI `eval` and searches it to depth D (default 12) from an empty table
(`ucinewgame`). Printed for each net:

- gap: the mean distance between the evaluation and the search's score in expected score,
  1 / (1 + 10^(-cp / 400)), in per mille;
- slope: the least-squares slope of the search's score on the evaluation;
- nodes: the geometric mean of the nodes the search took to reach depth D;
- quiet change: where the search's best move is quiet (no capture, promotion or check), the
  mean change of the evaluation over that move, from the mover's side, in internal units
  (negative: the net favours the side to move; half of it is its side-to-move bias).

With `--siblings D`, two more figures on how the net orders a position's quiet moves
(no capture, promotion or check; positions with 3 or more of them): a MultiPV search to
depth D over those moves only, against the order of the net's static evaluations of the
positions after them (from the mover's side):
- sibling rank: the mean rank correlation (Spearman) of the two orders;
- sibling top: how often the statically best move is the searched best.

Needs python-chess (`.ci/run` installs it in `target/ci-venv`).
"""

import argparse
import gzip
import math
import random
import statistics

import chess
import chess.engine

from nue_nets import correlation, nue_evals, open_nue, ranks

PAWN = 208  # internal units per pawn, as `eval` prints them


def positions(path, count):
    with gzip.open(path, "rt") as f:
        lines = f.readlines()[::997]
    random.Random(7).shuffle(lines)
    out = []
    for line in lines:
        fen, score = (part.strip() for part in line.split("|")[:2])
        board = chess.Board(fen)
        if board.is_check() or len(board.piece_map()) < 8:
            continue
        if score.startswith("#") or abs(int(score)) > 1200:
            continue
        out.append(fen)
        if len(out) == count:
            break
    return out


def expected(cp):
    return 1 / (1 + 10 ** (-max(-4000, min(4000, cp)) / 400))


def measure(nue, net, fens, depth):
    static = nue_evals(nue, net, fens)
    scores, nodes, children = [], [], []
    with open_nue(nue, net) as engine:
        for i, fen in enumerate(fens):
            board = chess.Board(fen)
            info = engine.analyse(board, chess.engine.Limit(depth=depth), game=object())
            score = info["score"].white()
            scores.append(None if score.is_mate() else score.score())
            nodes.append(info.get("nodes", 1))
            move = info["pv"][0]
            if not (board.is_capture(move) or move.promotion or board.gives_check(move)):
                side = 1 if board.turn == chess.WHITE else -1
                board.push(move)
                children.append((i, side, board.fen()))
    after = nue_evals(nue, net, [fen for _, _, fen in children]) if children else []
    pairs = [(e * 100 / PAWN, s) for e, s in zip(static, scores) if s is not None]
    gap = statistics.fmean(abs(expected(e) - expected(s)) for e, s in pairs) * 1000
    me = statistics.fmean(e for e, _ in pairs)
    ms = statistics.fmean(s for _, s in pairs)
    slope = sum((e - me) * (s - ms) for e, s in pairs) / sum((e - me) ** 2 for e, _ in pairs)
    tree = math.exp(statistics.fmean(math.log(max(n, 1)) for n in nodes))
    # White's view before and after, turned to the mover's.
    change = statistics.fmean((a - static[i]) * side for (i, side, _), a in zip(children, after))
    return gap, slope, tree, change


def siblings(nue, net, fens, depth):
    rhos, tops = [], []
    with open_nue(nue, net) as engine:
        for fen in fens:
            board = chess.Board(fen)
            moves = [
                m
                for m in board.legal_moves
                if not (board.is_capture(m) or m.promotion or board.gives_check(m))
            ]
            if len(moves) < 3:
                continue
            infos = engine.analyse(
                board, chess.engine.Limit(depth=depth), multipv=len(moves), root_moves=moves, game=object()
            )
            searched = {i["pv"][0]: i["score"].relative.score(mate_score=30000) for i in infos if "pv" in i}
            children = []
            for m in moves:
                board.push(m)
                children.append(board.fen())
                board.pop()
            side = 1 if board.turn == chess.WHITE else -1
            static = [side * e for e in nue_evals(nue, net, children)]
            search = [searched.get(m, -10**6) for m in moves]
            rhos.append(correlation(ranks(static), ranks(search)))
            best = max(range(len(moves)), key=lambda i: static[i])
            tops.append(search[best] == max(search))
    return statistics.fmean(rhos), statistics.fmean(tops)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nets", nargs="+", required=True, metavar="NAME=NET")
    ap.add_argument("--data", default="../shared/data/sf15-d7-part2.txt.gz")
    ap.add_argument("--count", type=int, default=400)
    ap.add_argument("--depth", type=int, default=12)
    ap.add_argument("--siblings", type=int, metavar="D", help="also measure the order of quiet siblings at depth D")
    ap.add_argument("--nue", default="target/release/nue")
    args = ap.parse_args()
    fens = positions(args.data, args.count)
    print(f"{len(fens)} positions, depth {args.depth}")
    head = f"{'net':>16}  {'gap ‰':>7}  {'slope':>6}  {'nodes':>8}  {'quiet change':>12}"
    print(head + ("  sibling rank  sibling top" if args.siblings else ""))
    for spec in args.nets:
        name, net = spec.split("=", 1) if "=" in spec else (spec, spec)
        gap, slope, tree, change = measure(args.nue, net, fens, args.depth)
        line = f"{name:>16}  {gap:7.1f}  {slope:6.3f}  {tree:8.0f}  {change:12.1f}"
        if args.siblings:
            rho, top = siblings(args.nue, net, fens, args.siblings)
            line += f"  {rho:12.4f}  {top:11.3f}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
