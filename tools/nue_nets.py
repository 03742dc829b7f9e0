"""What the net scripts of tools/ (net-accuracy.py, net-consistency.py, net-moves.py) share:
starting `nue` with a net, reading its static evaluations, and rank correlation. A module,
not a script: each of them imports it from its own folder.

A net is a path to a `.nnue` file, or `default` for the net embedded in `nue`.
"""

import math
import os
import statistics
import subprocess

import chess.engine


def open_nue(nue, net):
    """`nue` as a python-chess engine, Threads 1, Hash 16, running `net`."""
    engine = chess.engine.SimpleEngine.popen_uci(nue)
    options = {"Hash": 16, "Threads": 1}
    if net != "default":
        options["EvalFile"] = os.path.abspath(net)
    engine.configure(options)
    return engine


def nue_evals(nue, net, fens):
    """White's-view internal units of each position, by `nue`'s UCI `eval`."""
    lines = [] if net == "default" else [f"setoption name EvalFile value {os.path.abspath(net)}"]
    for fen in fens:
        lines += [f"position fen {fen}", "eval"]
    out = subprocess.run(
        [nue], input="\n".join(lines + ["quit"]) + "\n", capture_output=True, text=True, check=True
    ).stdout
    values = [
        int(line.split("(")[1].split(";")[1].split()[0])
        for line in out.splitlines()
        if "NNUE evaluation" in line
    ]
    if len(values) != len(fens):
        raise SystemExit(f"{net}: {len(values)} evaluations for {len(fens)} positions:\n{out[-500:]}")
    return values


def ranks(values):
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0] * len(values)
    for rank, i in enumerate(order):
        out[i] = rank
    return out


def correlation(a, b):
    """Pearson's correlation of `a` and `b` (of their ranks: Spearman's); 0 when one is flat."""
    ma, mb = statistics.fmean(a), statistics.fmean(b)
    cov = sum((x - ma) * (y - mb) for x, y in zip(a, b))
    norm = math.sqrt(sum((x - ma) ** 2 for x in a) * sum((y - mb) ** 2 for y in b))
    return cov / norm if norm else 0.0
