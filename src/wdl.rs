//! Win/draw/loss estimates for `UCI_ShowWDL`: how often a position with a given score
//! is won, drawn and lost.
//!
//! The model is the one Stockfish uses, fitted to our own data and net: with `m` the
//! material on the board (pawn 1, knight and bishop 3, rook 5, queen 9; clamped to
//! 17..=78, divided by 58), a score `s` in internal units wins with probability
//! `σ((s − a(m)) / b(m))` and loses with probability `σ((−s − a(m)) / b(m))`, where `a`
//! and `b` are cubic polynomials. `a` is the score at which a win becomes as likely as
//! not, `b` how sharply the chance rises around it; both shrink as material comes off.
//!
//! `nue wdl-fit` fits them: it draws positions from the training data, evaluates each
//! with the net and maximises the likelihood of the game results. The coefficients
//! below come from the command recorded at [`FITTED`].

use std::path::PathBuf;

use anyhow::{bail, Result};
use shakmaty::{Board, Chess, Position, Role};

use crate::{
    nnue::{default_network, simd::Simd, to_internal, Network},
    rng::Rng,
    train::data::{load_all, Filter},
    types::is_decisive,
};

/// Cubic coefficients of `a(m)` and `b(m)`, constant term first, internal units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WdlModel {
    /// The score of an even chance of winning.
    pub a: [f64; 4],
    /// The spread around it.
    pub b: [f64; 4],
}

/// The model in use, from `nue wdl-fit --positions 400000 --iterations 2000` (400,000
/// positions of `../shared/data`, seed 1) with `nn-de5cc0bbdda6`, the default before
/// `nn-7fa111bea920`. Refitted with each later default it gains nothing (log-likelihood
/// −0.59206 against −0.59207 with `nn-7fa1`, −0.59651 both with `nn-cc6ebeae1867`, −0.59803
/// against −0.59802 with `nn-3a9b0bc3845e`, −0.59965 against −0.59964 with `nn-3073bd0cd07a`,
/// −0.60065 against −0.60064 with `nn-32dec0e43266`), so it is kept. The data's games are fast
/// and begin with random moves, so they are rarely drawn: so is the model (a level start position
/// shows about 43 % wins, 14 % draws, 43 % losses).
pub const FITTED: WdlModel =
    WdlModel { a: [595.7, -553.9, -196.3, 255.9], b: [210.4, 116.0, 54.1, -18.4] };

/// The material measure of the model: pawns 1, minor pieces 3, rooks 5, queens 9.
pub fn material(pos: &Chess) -> u32 {
    board_material(pos.board())
}

fn board_material(board: &Board) -> u32 {
    [(Role::Pawn, 1), (Role::Knight, 3), (Role::Bishop, 3), (Role::Rook, 5), (Role::Queen, 9)]
        .iter()
        .map(|&(role, value)| value * board.by_role(role).count() as u32)
        .sum()
}

/// The polynomials' argument for `material`.
fn material_scale(material: u32) -> f64 {
    f64::from(material.clamp(17, 78)) / 58.0
}

fn cubic(c: &[f64; 4], m: f64) -> f64 {
    ((c[3] * m + c[2]) * m + c[1]) * m + c[0]
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

impl WdlModel {
    /// Probabilities of a win and of a loss for the side whose score is `score`.
    pub fn win_loss(&self, score: f64, material: u32) -> (f64, f64) {
        let m = material_scale(material);
        let (a, b) = (cubic(&self.a, m), cubic(&self.b, m).max(1.0));
        (sigmoid((score - a) / b), sigmoid((-score - a) / b))
    }

    /// Win, draw and loss in per mille for a search score (mates and tablebase wins
    /// are certain), summing to 1000.
    pub fn per_mille(&self, score: i32, material: u32) -> [u32; 3] {
        if is_decisive(score) {
            return if score > 0 { [1000, 0, 0] } else { [0, 0, 1000] };
        }
        let (w, l) = self.win_loss(f64::from(score), material);
        let w = (w * 1000.0).round() as u32;
        let l = ((l * 1000.0).round() as u32).min(1000 - w);
        [w, 1000 - w - l, l]
    }
}

/// One observation for the fit: a score (side to move), the material, and the result
/// for the side to move (0, 0.5 or 1).
#[derive(Clone, Copy, Debug)]
pub struct Sample {
    /// Score in internal units.
    pub score: f64,
    /// Material on the board.
    pub material: u32,
    /// The game's result for the side to move.
    pub result: f64,
}

/// Mean log-likelihood of `samples` under `model`.
pub fn log_likelihood(model: &WdlModel, samples: &[Sample]) -> f64 {
    let total: f64 = samples
        .iter()
        .map(|s| {
            let (w, l) = model.win_loss(s.score, s.material);
            let p = if s.result > 0.75 {
                w
            } else if s.result < 0.25 {
                l
            } else {
                1.0 - w - l
            };
            p.max(1e-12).ln()
        })
        .sum();
    total / samples.len().max(1) as f64
}

/// The gradient of the mean log-likelihood with respect to the eight coefficients
/// (`a` then `b`).
fn gradient(model: &WdlModel, samples: &[Sample]) -> [f64; 8] {
    let mut g = [0.0; 8];
    for s in samples {
        let m = material_scale(s.material);
        let (a, b) = (cubic(&model.a, m), cubic(&model.b, m).max(1.0));
        let u = (s.score - a) / b;
        let v = (-s.score - a) / b;
        let (w, l) = (sigmoid(u), sigmoid(v));
        // d(log p)/da and d(log p)/db for the observed outcome.
        let (da, db) = if s.result > 0.75 {
            ((w - 1.0) / b, (w - 1.0) * u / b)
        } else if s.result < 0.25 {
            ((l - 1.0) / b, (l - 1.0) * v / b)
        } else {
            let d = (1.0 - w - l).max(1e-12);
            let (dw, dl) = (w * (1.0 - w), l * (1.0 - l));
            ((dw + dl) / b / d, (dw * u + dl * v) / b / d)
        };
        let mut power = 1.0;
        for k in 0..4 {
            g[k] += da * power;
            g[4 + k] += db * power;
            power *= m;
        }
    }
    let n = samples.len().max(1) as f64;
    g.map(|x| x / n)
}

/// Fits the model to `samples` by maximum likelihood (Adam on the coefficients, in
/// steps of a pawn's hundredth), from a flat start. Deterministic.
pub fn fit(samples: &[Sample], iterations: usize) -> WdlModel {
    let mut model = WdlModel { a: [300.0, 0.0, 0.0, 0.0], b: [150.0, 0.0, 0.0, 0.0] };
    let (lr, beta1, beta2) = (2.0, 0.9, 0.999);
    let mut first = [0.0; 8];
    let mut second = [0.0; 8];
    for t in 1..=iterations {
        let g = gradient(&model, samples);
        for k in 0..8 {
            // Ascend: the likelihood is maximised.
            first[k] = beta1 * first[k] + (1.0 - beta1) * g[k];
            second[k] = beta2 * second[k] + (1.0 - beta2) * g[k] * g[k];
            let m_hat = first[k] / (1.0 - beta1.powi(t as i32));
            let v_hat = second[k] / (1.0 - beta2.powi(t as i32));
            let step = lr * m_hat / (v_hat.sqrt() + 1e-12);
            if k < 4 {
                model.a[k] += step;
            } else {
                model.b[k - 4] += step;
            }
        }
    }
    model
}

/// A uniform number in [0, 1).
fn unit(rng: &mut Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// Outcomes drawn from `model` at the given scores and materials (for tests).
pub fn simulate(model: &WdlModel, points: &[(f64, u32)], rng: &mut Rng) -> Vec<Sample> {
    points
        .iter()
        .map(|&(score, material)| {
            let (w, l) = model.win_loss(score, material);
            let x = unit(rng);
            let result = if x < w {
                1.0
            } else if x < w + l {
                0.0
            } else {
                0.5
            };
            Sample { score, material, result }
        })
        .collect()
}

/// `nue wdl-fit`: fits the model to the game results of training positions.
#[derive(clap::Args, Debug)]
pub struct FitArgs {
    /// Training data (files or folders), read through the trainer's caches and filters.
    #[arg(long, num_args = 1.., required = true)]
    pub data: Vec<PathBuf>,
    /// Folder of the binary caches (shared with `nue train`).
    #[arg(long, default_value = "runs/cache")]
    pub cache: PathBuf,
    /// Positions drawn at random from the data.
    #[arg(long, default_value_t = 400_000)]
    pub positions: usize,
    /// Seed of the draw.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// The net whose evaluations are fitted (default: the embedded net).
    #[arg(long)]
    pub net: Option<PathBuf>,
    /// Optimiser steps.
    #[arg(long, default_value_t = 1000)]
    pub iterations: usize,
}

/// Runs `nue wdl-fit`: prints the fitted coefficients and how well they match the data.
pub fn run_fit(args: &FitArgs) -> Result<WdlModel> {
    let net = match &args.net {
        Some(p) => std::sync::Arc::from(Network::load(p)?),
        None => default_network(),
    };
    let files = load_all(&args.data, &args.cache, &Filter::default())?;
    let all: Vec<_> = files.into_iter().flatten().collect();
    if all.is_empty() {
        bail!("no positions in the data");
    }
    let mut rng = Rng::new(args.seed);
    let simd = Simd::detect();
    let samples: Vec<Sample> = (0..args.positions)
        .map(|_| {
            let p = &all[rng.below(all.len())];
            let board = p.board();
            let score = to_internal(net.evaluate(simd, &board, p.turn()));
            Sample {
                score: f64::from(score),
                material: board_material(&board),
                result: f64::from(p.result()),
            }
        })
        .collect();
    eprintln!("fitting {} positions drawn from {} ...", samples.len(), all.len());
    let model = fit(&samples, args.iterations);
    println!(
        "mean log-likelihood: {:.5} fitted, {:.5} in use",
        log_likelihood(&model, &samples),
        log_likelihood(&FITTED, &samples)
    );
    println!("pub const FITTED: WdlModel = WdlModel {{");
    println!(
        "    a: [{:.1}, {:.1}, {:.1}, {:.1}],",
        model.a[0], model.a[1], model.a[2], model.a[3]
    );
    println!(
        "    b: [{:.1}, {:.1}, {:.1}, {:.1}],",
        model.b[0], model.b[1], model.b[2], model.b[3]
    );
    println!("}};");
    // Calibration: observed against predicted, by score and material.
    println!("material  score   positions  observed W/D/L %   predicted W/D/L %");
    for (low, high) in [(0, 30), (31, 55), (56, 78)] {
        for centre in (-600..=600).step_by(150) {
            let bin: Vec<&Sample> = samples
                .iter()
                .filter(|s| (low..=high).contains(&s.material.min(78)))
                .filter(|s| (s.score - f64::from(centre)).abs() < 40.0)
                .collect();
            if bin.len() < 50 {
                continue;
            }
            let n = bin.len() as f64;
            let share = |pred: fn(f64) -> bool| {
                bin.iter().filter(|s| pred(s.result)).count() as f64 / n * 100.0
            };
            let (w, l) = (share(|r| r > 0.75), share(|r| r < 0.25));
            let (pw, pl) = bin.iter().fold((0.0, 0.0), |(a, b), s| {
                let (w, l) = model.win_loss(s.score, s.material);
                (a + w / n * 100.0, b + l / n * 100.0)
            });
            println!(
                "{low:>3}-{high:<3} {centre:>7} {:>11}  {w:>4.0} {:>4.0} {l:>4.0}     {pw:>4.0} {:>4.0} {pl:>4.0}",
                bin.len(),
                100.0 - w - l,
                100.0 - pw - pl
            );
        }
    }
    Ok(model)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::MATE_IN_MAX;

    #[test]
    fn per_mille_sums_to_1000_and_is_symmetric() {
        for material in [10, 30, 50, 78] {
            let mut last_win = 0;
            for score in (-1500..=1500).step_by(50) {
                let [w, d, l] = FITTED.per_mille(score, material);
                assert_eq!(w + d + l, 1000);
                assert!(w >= last_win, "win rate falls as the score rises");
                last_win = w;
                let [w2, d2, l2] = FITTED.per_mille(-score, material);
                assert_eq!((w, d, l), (l2, d2, w2), "{score} {material}");
            }
        }
        assert_eq!(FITTED.per_mille(MATE_IN_MAX + 3, 40), [1000, 0, 0]);
        assert_eq!(FITTED.per_mille(-MATE_IN_MAX - 3, 40), [0, 0, 1000]);
    }

    #[test]
    fn the_fit_recovers_a_known_model() {
        let truth = WdlModel { a: [150.0, 200.0, -60.0, 20.0], b: [60.0, 40.0, 20.0, 5.0] };
        let mut rng = Rng::new(7);
        let points: Vec<(f64, u32)> = (0..60_000)
            .map(|_| ((unit(&mut rng) - 0.5) * 1600.0, 17 + rng.below(62) as u32))
            .collect();
        let samples = simulate(&truth, &points, &mut rng);
        let fitted = fit(&samples, 1500);
        // The fitted curves match the true ones where the data is (win rates within 2 %).
        for material in [20, 40, 60, 78] {
            for score in [-400.0, -100.0, 0.0, 150.0, 300.0, 600.0] {
                let (tw, tl) = truth.win_loss(score, material);
                let (fw, fl) = fitted.win_loss(score, material);
                assert!(
                    (tw - fw).abs() < 0.02 && (tl - fl).abs() < 0.02,
                    "{score} {material}: {truth:?} vs {fitted:?}"
                );
            }
        }
        assert!(log_likelihood(&fitted, &samples) >= log_likelihood(&truth, &samples) - 1e-3);
    }

    #[test]
    fn material_counts_every_piece_but_kings() {
        assert_eq!(material(&Chess::default()), 78);
        let pos: Chess = "4k3/8/8/8/8/8/4P3/4K2R w K - 0 1"
            .parse::<shakmaty::fen::Fen>()
            .unwrap()
            .into_position(shakmaty::CastlingMode::Standard)
            .unwrap();
        assert_eq!(material(&pos), 6);
    }
}
