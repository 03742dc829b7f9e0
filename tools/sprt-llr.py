#!/usr/bin/env python3
"""The Elo, error bar and SPRT log-likelihood ratio of a match's pentanomial counts.

An SPRT whose saved state was lost with its machine is continued by playing on with the
same command and adding the new games' pentanomial counts to the old ones: this script
gives the combined result, computed as fastchess computes it (the generalised SPRT of
Michel Van den Bergh's notes, "Comparing the approximations for the generalized log
likelihood ratio of a multinomial distribution" for the logistic model and "Comments on
normalized Elo" for the normalised one), so that the bounds mean what they meant.

    tools/sprt-llr.py [--elo0 0] [--elo1 10] [--model normalized|logistic] LL LD D WD WW [LL LD D WD WW ...]

The counts are fastchess's `Ptnml(0-2)` line: pairs scoring 0, 0.5, 1 (a win and a loss
or two draws), 1.5 and 2 for the first engine. Several groups of five are added together.
"""

import argparse
import math
import sys

SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)
Z95 = 1.959963984540054
NELO_UNIT = 800.0 / math.log(10.0)


def elo_of(score):
    return -400.0 * math.log10(1.0 / score - 1.0)


def solve(f, lo, hi, eps):
    """A root of the increasing-or-decreasing f in (lo, hi), by bisection to eps."""
    f_lo = f(lo)
    for _ in range(200):
        if hi - lo <= 2.0 * eps:
            break
        mid = (lo + hi) / 2.0
        f_mid = f(mid)
        if f_mid == 0.0:
            return mid
        if (f_mid < 0.0) == (f_lo < 0.0):
            lo, f_lo = mid, f_mid
        else:
            hi = mid
    return (lo + hi) / 2.0


def inside(lo, hi):
    """The open interval (lo, hi) shrunk by a hair, so that its ends are finite and valid."""
    width = hi - lo
    return lo + width * 1e-12, hi - width * 1e-12


def mle_logistic(probs, s):
    """The distribution closest to probs (in the likelihood sense) whose mean score is s."""
    lo, hi = inside(-1.0 / (SCORES[-1] - s), -1.0 / (SCORES[0] - s))
    theta = solve(
        lambda x: sum(p * (a - s) / (1.0 + x * (a - s)) for a, p in zip(SCORES, probs)),
        lo,
        hi,
        1e-3,
    )
    return [p / (1.0 + theta * (a - s)) for a, p in zip(SCORES, probs)]


def mle_normalized(probs, t_star):
    """The distribution closest to probs whose normalised score (mu - 0.5) / sigma is t_star."""
    p = [1.0 / len(SCORES)] * len(SCORES)
    for _ in range(10):
        mu = sum(a * q for a, q in zip(SCORES, p))
        sigma = math.sqrt(sum(q * (a - mu) ** 2 for a, q in zip(SCORES, p)))
        phi = [a - 0.5 - 0.5 * t_star * sigma * (1.0 + ((a - mu) / sigma) ** 2) for a in SCORES]
        lo, hi = inside(-1.0 / max(phi), -1.0 / min(phi))
        theta = solve(
            lambda x: sum(q * f / (1.0 + x * f) for q, f in zip(probs, phi)), lo, hi, 1e-7
        )
        new = [q / (1.0 + theta * f) for q, f in zip(probs, phi)]
        change = max(abs(a - b) for a, b in zip(new, p))
        p = new
        if change < 1e-4:
            break
    return p


def llr(counts, elo0, elo1, model):
    # As fastchess: an empty cell counts as 0.001 pairs, so that no probability is zero.
    cells = [c if c > 0 else 1e-3 for c in counts]
    total = sum(cells)
    probs = [c / total for c in cells]
    if model == "normalized":
        p0 = mle_normalized(probs, math.sqrt(2.0) * elo0 / NELO_UNIT)
        p1 = mle_normalized(probs, math.sqrt(2.0) * elo1 / NELO_UNIT)
    else:
        p0 = mle_logistic(probs, 1.0 / (1.0 + 10.0 ** (-elo0 / 400.0)))
        p1 = mle_logistic(probs, 1.0 / (1.0 + 10.0 ** (-elo1 / 400.0)))
    return total * sum(q * (math.log(b) - math.log(a)) for q, a, b in zip(probs, p0, p1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--elo0", type=float, default=0.0)
    parser.add_argument("--elo1", type=float, default=10.0)
    parser.add_argument("--model", choices=("normalized", "logistic"), default="normalized")
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--beta", type=float, default=0.05)
    parser.add_argument("counts", type=int, nargs="+", help="LL LD D WD WW, one or more groups")
    args = parser.parse_args()
    if len(args.counts) % 5 != 0:
        sys.exit("sprt-llr: the counts come in groups of five (LL LD D WD WW)")
    if any(c < 0 for c in args.counts):
        sys.exit("sprt-llr: a count cannot be negative")
    counts = [sum(args.counts[i::5]) for i in range(5)]
    pairs = sum(counts)
    if pairs == 0:
        sys.exit("sprt-llr: no pairs")

    share = [c / pairs for c in counts]
    score = sum(a * q for a, q in zip(SCORES, share))
    variance = sum(q * (a - score) ** 2 for a, q in zip(SCORES, share))
    half = Z95 * math.sqrt(variance / pairs)
    lower, upper = max(score - half, 1e-9), min(score + half, 1.0 - 1e-9)
    print(f"{2 * pairs} games ({pairs} pairs), pentanomial {', '.join(map(str, counts))}")
    if 0.0 < score < 1.0:
        elo = elo_of(score) + 0.0  # no "-0.0"
        error = (elo_of(upper) - elo_of(lower)) / 2.0
        print(f"Elo {elo:+.1f} ± {error:.1f} (score {100 * score:.2f} %)")
    else:
        print(f"score {100 * score:.0f} %: no finite Elo")
    if variance > 0.0:
        nelo = (score - 0.5) / math.sqrt(2.0 * variance) * NELO_UNIT
        nerror = half / math.sqrt(2.0 * variance) * NELO_UNIT
        print(f"nElo {nelo:+.1f} ± {nerror:.1f}")
    value = llr(counts, args.elo0, args.elo1, args.model)
    low = math.log(args.beta / (1.0 - args.alpha))
    high = math.log((1.0 - args.beta) / args.alpha)
    verdict = "H1 accepted" if value >= high else "H0 accepted" if value <= low else "continue"
    print(
        f"LLR {value:.2f} of [{low:.2f}, {high:.2f}] "
        f"({args.model}, [{args.elo0:g}, {args.elo1:g}]): {verdict}"
    )


if __name__ == "__main__":
    main()
