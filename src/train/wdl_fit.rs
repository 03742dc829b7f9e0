//! `nue wdl-fit`: fits the win/draw/loss model of `UCI_ShowWDL` ([`crate::wdl`]) by
//! maximum likelihood to game results, from one of two sources:
//!
//! - PGN games (`--pgn`): the score a player's search gave at each of its moves, as a
//!   tournament manager writes it into the move's comment, against the game's result. This
//!   is what the model is for (a search's score shown in a GUI), and the source of the
//!   model in use: Nue's self-play with its default net.
//! - Training data (`--data`): positions drawn from it, each evaluated by a net, against
//!   their games' results. Cheap, but the data's fast games are rarely drawn, so the
//!   model it gives is too.

use std::path::PathBuf;

use anyhow::{bail, Result};
use shakmaty::{Color, Position};

use crate::{
    chain::Lines,
    nnue::{default_net, default_network, simd::Simd, to_internal, Network, PAWN_VALUE},
    rng::Rng,
    train::data::{load_all, Filter},
    wdl::{board_material, cubic, material_scale, sigmoid, WdlModel, FITTED},
};

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
/// steps of a pawn's hundredth), from a flat start, and names `net` as the net it is for.
/// Deterministic.
pub fn fit(samples: &[Sample], iterations: usize, net: &'static str) -> WdlModel {
    let mut model = WdlModel { net, a: [300.0, 0.0, 0.0, 0.0], b: [150.0, 0.0, 0.0, 0.0] };
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

/// `nue wdl-fit`: fits the model to game results.
#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["pgn", "data"])))]
pub struct FitArgs {
    /// PGN files of games whose moves carry the searches' scores in their comments
    /// (`{+0.35/14 0.51s}`, as fastchess and cutechess-cli write them).
    #[arg(long, num_args = 1..)]
    pub pgn: Vec<PathBuf>,
    /// With `--pgn`: only the moves of this player (its `White` or `Black` tag).
    #[arg(long, requires = "pgn")]
    pub player: Option<String>,
    /// Training data (files or folders), read through the trainer's caches and filters;
    /// each drawn position is evaluated by the net.
    #[arg(long, num_args = 1..)]
    pub data: Vec<PathBuf>,
    /// Folder of the binary caches (shared with `nue train`).
    #[arg(long, default_value = "runs/cache")]
    pub cache: PathBuf,
    /// With `--data`: positions drawn at random from the data.
    #[arg(long, default_value_t = 400_000)]
    pub positions: usize,
    /// With `--data`: seed of the draw.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// With `--data`: the net whose evaluations are fitted (default: the embedded net).
    #[arg(long)]
    pub net: Option<PathBuf>,
    /// Optimiser steps.
    #[arg(long, default_value_t = 1000)]
    pub iterations: usize,
}

/// Centipawns as a tournament manager shows them, back to internal units.
fn cp_to_internal(cp: i32) -> f64 {
    f64::from(cp) * f64::from(PAWN_VALUE) / 100.0
}

/// The samples of PGN games: every move of `player` (of both sides without one) whose
/// comment holds a score, with the material before it and the mover's result. Games
/// without a result are skipped.
pub fn pgn_samples(games: &[crate::pgn::PgnGame], player: Option<&str>) -> Vec<Sample> {
    let mut samples = Vec::new();
    for game in games {
        let Some(white_result) = game.result else { continue };
        let mut pos = game.start.clone();
        for (m, comment) in &game.moves {
            let side = usize::from(pos.turn() == Color::Black);
            let theirs = player.is_none_or(|p| game.players[side] == p);
            if let Some(cp) = comment.as_deref().and_then(crate::pgn::comment_score) {
                if theirs {
                    let result = if side == 0 { white_result } else { 1.0 - white_result };
                    samples.push(Sample {
                        score: cp_to_internal(cp),
                        material: board_material(pos.board()),
                        result: f64::from(result),
                    });
                }
            }
            pos.play_unchecked(*m);
        }
    }
    samples
}

/// Positions drawn from training data, each evaluated by `net`.
fn data_samples(args: &FitArgs) -> Result<Vec<Sample>> {
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
    let samples = (0..args.positions)
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
    eprintln!("drew {} positions from {}", args.positions, all.len());
    Ok(samples)
}

/// Runs `nue wdl-fit`: prints the fitted coefficients and how well they match the data.
pub fn run_fit(args: &FitArgs) -> Result<WdlModel> {
    let (samples, net) = if args.pgn.is_empty() {
        let net = match &args.net {
            Some(p) => p.file_name().map_or("?".into(), |n| n.to_string_lossy().into_owned()),
            None => default_net::NAME.to_string(),
        };
        (data_samples(args)?, net)
    } else {
        let mut games = Vec::new();
        for path in &args.pgn {
            let read = crate::pgn::games(Lines::open(path)?)
                .map_err(|e| e.context(format!("reading {}", path.display())))?;
            games.extend(read);
        }
        let samples = pgn_samples(&games, args.player.as_deref());
        eprintln!("{} scored moves from {} games", samples.len(), games.len());
        // The games are assumed to be this build's: its default net played them.
        (samples, default_net::NAME.to_string())
    };
    if samples.len() < 1000 {
        bail!("{} scored positions are too few to fit eight coefficients", samples.len());
    }
    eprintln!("fitting {} samples ...", samples.len());
    let net: &'static str = Box::leak(net.into_boxed_str());
    let model = fit(&samples, args.iterations, net);
    println!(
        "mean log-likelihood: {:.5} fitted, {:.5} in use",
        log_likelihood(&model, &samples),
        log_likelihood(&FITTED, &samples)
    );
    println!("pub const FITTED: WdlModel = WdlModel {{");
    println!("    net: {:?},", model.net);
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

    #[test]
    fn the_fit_recovers_a_known_model() {
        let truth =
            WdlModel { net: "test", a: [150.0, 200.0, -60.0, 20.0], b: [60.0, 40.0, 20.0, 5.0] };
        let mut rng = Rng::new(7);
        let points: Vec<(f64, u32)> = (0..60_000)
            .map(|_| ((unit(&mut rng) - 0.5) * 1600.0, 17 + rng.below(62) as u32))
            .collect();
        let samples = simulate(&truth, &points, &mut rng);
        let fitted = fit(&samples, 1500, "test");
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
    fn pgn_moves_give_the_movers_score_material_and_result() {
        let pgn = "[White \"nue\"]\n[Black \"other\"]\n[Result \"1-0\"]\n\n\
                   1. e4 {book} e5 {-0.35/12 0.5s} 2. Nf3 {+0.50/14 0.4s} Nc6 {-M3/20 0.1s} 1-0\n\
                   [White \"other\"]\n[Black \"nue\"]\n[Result \"*\"]\n\n1. d4 {+0.10/9 1s} *\n";
        let games = crate::pgn::games(pgn.lines().map(String::from)).unwrap();
        let all = pgn_samples(&games, None);
        assert_eq!(all.len(), 2, "{all:?}");
        assert_eq!((all[0].score, all[0].material, all[0].result), (-72.8, 78, 0.0));
        let nue = pgn_samples(&games, Some("nue"));
        assert_eq!(nue.len(), 1);
        assert_eq!((nue[0].score, nue[0].result), (104.0, 1.0));
    }
}
