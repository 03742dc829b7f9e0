#!/usr/bin/env python3
"""How long Nue takes to answer `stop` with `bestmove`.

    tools/stop-latency.py [NUE] [--searches N] [--threads T ...] [--hash MB] [--seed S]

For each thread count it starts the engine once, then runs N searches: a position
from a fixed set (openings, middlegames, endgames, a side in check, a mate in a few),
`go infinite`, a random wait of 5 to 100 ms, `stop`. The latency is the time from
writing `stop` to reading the `bestmove` line, measured here, so it includes the pipe
and this script's own reading. Prints the percentiles per thread count; exits 1 if a
search answered with no move or the 99th percentile is 10 ms or more.
"""

import argparse
import random
import subprocess
import sys
import time

POSITIONS = [
    "startpos",
    "fen r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
    "fen r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "fen r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
    "fen 3r3k/2r4p/1p1b3q/p4P2/P2Pp3/1B2P3/3BQ1RP/6K1 w - - 3 87",
    "fen 8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "fen 8/8/1p2k1p1/3p3p/1p1P1P1P/1P2PK2/8/8 w - - 3 54",
    "fen rnbqkbnr/ppp2ppp/8/3pp3/4P3/5Q2/PPPP1PPP/RNB1KBNR b KQkq - 1 3",
    "fen 4k3/8/8/8/8/8/4q3/4K3 w - - 0 1",
    "fen 6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1",
]


class Engine:
    def __init__(self, path):
        self.proc = subprocess.Popen(
            [path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
        )

    def send(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def read_until(self, prefix):
        while True:
            line = self.proc.stdout.readline()
            if not line:
                sys.exit(f"the engine closed its output while we waited for '{prefix}'")
            if line.startswith(prefix):
                return line.strip()

    def close(self):
        self.send("quit")
        self.proc.wait(timeout=10)


def percentile(sorted_values, p):
    index = min(len(sorted_values) - 1, round(p / 100 * (len(sorted_values) - 1)))
    return sorted_values[index]


def measure(path, threads, hash_mb, searches, rng):
    engine = Engine(path)
    engine.send("uci")
    engine.read_until("uciok")
    engine.send(f"setoption name Threads value {threads}")
    engine.send(f"setoption name Hash value {hash_mb}")
    engine.send("isready")
    engine.read_until("readyok")
    latencies = []
    for _ in range(searches):
        engine.send(f"position {rng.choice(POSITIONS)}")
        engine.send("go infinite")
        time.sleep(rng.uniform(0.005, 0.100))
        start = time.perf_counter()
        engine.send("stop")
        best = engine.read_until("bestmove")
        latencies.append((time.perf_counter() - start) * 1000)
        if best.split()[1] in ("0000", "(none)"):
            sys.exit(f"a search answered '{best}'")
    engine.close()
    return sorted(latencies)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("nue", nargs="?", default="target/release/nue")
    parser.add_argument("--searches", type=int, default=1000)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--hash", type=int, default=64)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    ok = True
    print("threads  searches   p50 ms   p90 ms   p99 ms   max ms")
    for threads in args.threads:
        lat = measure(args.nue, threads, args.hash, args.searches, rng)
        p50, p90, p99 = (percentile(lat, p) for p in (50, 90, 99))
        print(f"{threads:7}  {len(lat):8}  {p50:7.2f}  {p90:7.2f}  {p99:7.2f}  {lat[-1]:7.2f}")
        ok &= p99 < 10
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
