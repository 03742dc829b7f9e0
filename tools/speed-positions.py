#!/usr/bin/env python3
"""Nodes per second of Nue beside a Stockfish over positions from real games: the figure
that decides games, where `tools/speed-vs.sh` gives the one of the engines' own `bench`
positions (Stockfish 12's favour its cheap evaluation: docs/performance.md).

Each position is searched by both engines from a fresh game (`ucinewgame`), one thread,
16 MiB of hash, to a fixed node count; one round searches every position with Nue and
then with the other engine, in turn, so that a machine whose speed drifts treats both
alike. A position's ratio is taken within its round; the script prints each round's
median ratio and total nodes per second, then the medians over the rounds. Run it with
the machine otherwise idle.

    tools/speed-positions.py [--nue PATH] [--stockfish PATH] [--positions EPD]
                             [--nodes N] [--rounds R]

The positions default to tools/speed-positions.epd (see its first lines for how it was
made). `--make OUT --pgn GAMES --book EPD` writes such a file instead: `--book-count`
positions drawn from an opening book and `--game-count` middlegames (a position between
plies 30 and 60, out of check, of a different game each) drawn from games in PGN.
"""

import argparse
import os
import random
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


class Engine:
    """A UCI engine in its own process, started in its binary's folder (Stockfish 12 reads
    its net from there)."""

    def __init__(self, path):
        path = os.path.abspath(path)
        self.proc = subprocess.Popen(
            [path], cwd=os.path.dirname(path), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True, bufsize=1)
        self.send("uci")
        self.wait("uciok")
        self.send("setoption name Threads value 1")
        self.send("setoption name Hash value 16")

    def send(self, line):
        self.proc.stdin.write(line + "\n")

    def wait(self, word):
        lines = []
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise SystemExit(f"engine ended before '{word}'")
            lines.append(line)
            if line.startswith(word):
                return lines

    def search(self, fen, nodes):
        """Nodes searched and seconds taken, from the last `info` line with both."""
        self.send("ucinewgame")
        self.send("isready")
        self.wait("readyok")
        self.send(f"position fen {fen}")
        start = time.perf_counter()
        self.send(f"go nodes {nodes}")
        lines = self.wait("bestmove")
        wall = time.perf_counter() - start
        searched = None
        for line in lines:
            words = line.split()
            if "nodes" in words:
                searched = int(words[words.index("nodes") + 1])
        if searched is None:
            raise SystemExit(f"no node count in the search of {fen}")
        return searched, wall

    def close(self):
        self.send("quit")
        self.proc.wait(timeout=10)


def read_epd(path):
    fens = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                fens.append(" ".join(line.split()[:4]) + " 0 1")
    return fens


def make(args):
    import chess.pgn

    rng = random.Random(args.seed)
    book = read_epd(args.book)
    chosen = rng.sample(book, args.book_count)
    games = []
    with open(args.pgn) as f:
        while (game := chess.pgn.read_game(f)) is not None:
            games.append(game)
    rng.shuffle(games)
    middlegames = []
    for game in games:
        if len(middlegames) == args.game_count:
            break
        board = game.board()
        candidates = []
        for ply, move in enumerate(game.mainline_moves(), start=1):
            board.push(move)
            if 30 <= ply <= 60 and not board.is_check() and not board.is_game_over():
                candidates.append(board.epd())
        if candidates:
            middlegames.append(rng.choice(candidates))
    if len(middlegames) < args.game_count:
        raise SystemExit(f"only {len(middlegames)} games with a middlegame position")
    with open(args.make, "w") as out:
        out.write(f"# {args.book_count} positions of {os.path.basename(args.book)}, then "
                  f"{args.game_count} middlegames (plies 30 to 60) of different games,\n")
        out.write(f"# drawn with seed {args.seed} by tools/speed-positions.py --make.\n")
        for fen in chosen + middlegames:
            out.write(" ".join(fen.split()[:4]) + "\n")
    print(f"wrote {args.make}: {len(chosen)} book positions, {len(middlegames)} middlegames")


def measure(args):
    fens = read_epd(args.positions)
    nue, other = Engine(args.nue), Engine(args.stockfish)
    print(f"{len(fens)} positions, {args.nodes:,} nodes each, {args.rounds} rounds")
    print(f"{'round':>5} {'nue nps':>10} {'other nps':>10} {'median':>7} {'range':>13}")
    medians, totals = [], []
    for r in range(1, args.rounds + 1):
        ratios, sums = [], [[0, 0.0], [0, 0.0]]
        for fen in fens:
            speeds = []
            for i, engine in enumerate((nue, other)):
                nodes, seconds = engine.search(fen, args.nodes)
                sums[i][0] += nodes
                sums[i][1] += seconds
                speeds.append(nodes / seconds)
            ratios.append(speeds[0] / speeds[1])
        nps = [n / s for n, s in sums]
        median = statistics.median(ratios)
        medians.append(median)
        totals.append(nps[0] / nps[1])
        print(f"{r:>5} {nps[0]:>10.0f} {nps[1]:>10.0f} {median:>7.3f} "
              f"{min(ratios):>6.2f}..{max(ratios):<5.2f}")
        sys.stdout.flush()
    nue.close()
    other.close()
    print(f"median of the rounds' median ratios: {statistics.median(medians):.3f} "
          f"(rounds {min(medians):.3f} to {max(medians):.3f}); "
          f"of their total-speed ratios: {statistics.median(totals):.3f}")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--nue", default=os.path.join(HERE, "..", "target", "release", "nue"))
    p.add_argument("--stockfish", default="stockfish-12")
    p.add_argument("--positions", default=os.path.join(HERE, "speed-positions.epd"))
    p.add_argument("--nodes", type=int, default=1_000_000)
    p.add_argument("--rounds", type=int, default=9)
    p.add_argument("--make", help="write a positions file instead of measuring")
    p.add_argument("--pgn", help="games to draw middlegames from (with --make)")
    p.add_argument("--book", help="opening book, EPD (with --make)")
    p.add_argument("--book-count", type=int, default=20)
    p.add_argument("--game-count", type=int, default=20)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    if args.make:
        if not (args.pgn and args.book):
            p.error("--make needs --pgn and --book")
        make(args)
    else:
        if not os.path.sep in args.stockfish:
            from shutil import which
            found = which(args.stockfish)
            if not found:
                raise SystemExit(f"speed-positions: no {args.stockfish} on PATH")
            args.stockfish = os.path.realpath(found)
        measure(args)


if __name__ == "__main__":
    main()
