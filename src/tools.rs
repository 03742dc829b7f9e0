//! Small subcommands that print things: `nue eval`, `nue perft`, `nue tempo`.

use std::{
    io::Write,
    path::{Path, PathBuf},
};

use anyhow::{bail, ensure, Context, Result};
use shakmaty::{Board, CastlingMode, Chess, Color, Position};

use crate::{
    engine::parse_position,
    nnue::{default_net, default_network},
    nnue::{internal_to_cp, simd::Simd, to_internal, Network, RAW_PER_INTERNAL},
};

fn position(fen: Option<&str>) -> Result<Chess> {
    match fen {
        None => Ok(Chess::default()),
        Some(f) => parse_position(f, CastlingMode::Standard).map_err(anyhow::Error::msg),
    }
}

/// `nue eval`: the network's view of one position.
pub fn eval(fen: Option<&str>, net: Option<&Path>) -> Result<()> {
    let pos = position(fen)?;
    let net = match net {
        Some(p) => std::sync::Arc::from(Network::load(p)?),
        None => default_network(),
    };
    let raw = net.evaluate(Simd::detect(), pos.board(), pos.turn());
    let internal = to_internal(raw);
    let white = if pos.turn() == Color::White { internal } else { -internal };
    let mut out = std::io::stdout().lock();
    writeln!(out, "raw network output: {raw} (side to move)")?;
    writeln!(out, "NNUE value: {internal} internal units (side to move)")?;
    let pawns = f64::from(internal_to_cp(white)) / 100.0;
    writeln!(out, "evaluation: {pawns:+.2} pawns (White's view)")?;
    Ok(())
}

/// `nue perft`: leaf counts per root move and in total.
pub fn perft(depth: u32, fen: Option<&str>) -> Result<()> {
    let pos = position(fen)?;
    let never = std::sync::atomic::AtomicBool::new(false);
    let out = &mut std::io::stdout().lock();
    crate::perft::print_divide(&pos, depth, pos.castles().mode(), out, &never)?;
    Ok(())
}

/// `nue tempo`: what having the move is worth to a net, and a copy of the net with that
/// moved.
#[derive(Debug, clap::Args)]
pub struct TempoArgs {
    /// A .nnue file to measure instead of the default net.
    #[arg(long)]
    pub net: Option<PathBuf>,
    /// Measure over the positions of this data file (either layout of `nue train --data`)
    /// instead of the 50 bench positions.
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// At most this many of the data file's positions, spread evenly over it.
    #[arg(long, default_value_t = 20_000)]
    pub positions: usize,
    /// Also write a copy of the net with every evaluation this many internal units higher
    /// (negative: lower), which moves its side-to-move bias by as much.
    #[arg(long, allow_hyphen_values = true)]
    pub shift: Option<i32>,
    /// The folder the shifted net is written to, as `nn-<hash>.nnue`.
    #[arg(long, default_value = ".")]
    pub out: PathBuf,
}

/// A net's side-to-move bias over a set of positions, in internal units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SideToMoveBias {
    /// Positions measured.
    pub positions: usize,
    /// Mean over the positions.
    pub mean: f64,
    /// Median over the positions.
    pub median: f64,
}

/// Half the sum of a net's evaluations of each board with either side to move, each from
/// its own mover's point of view: how much better the net thinks it is to have the move.
/// Our nets learn it from search scores, which credit the side to move with its next move.
/// Boards on which either king is attacked (where one side could not be the one to move)
/// are skipped; `None` when none is left.
pub fn side_to_move_bias(
    net: &Network,
    simd: Simd,
    boards: impl IntoIterator<Item = Board>,
) -> Option<SideToMoveBias> {
    let quiet = |board: &Board| {
        [Color::White, Color::Black].into_iter().all(|side| {
            board
                .king_of(side)
                .is_some_and(|king| board.attacks_to(king, !side, board.occupied()).is_empty())
        })
    };
    let mut biases: Vec<f64> = boards
        .into_iter()
        .filter(quiet)
        .map(|board| {
            let white = net.evaluate(simd, &board, Color::White);
            let black = net.evaluate(simd, &board, Color::Black);
            f64::from(white + black) / f64::from(2 * RAW_PER_INTERNAL)
        })
        .collect();
    if biases.is_empty() {
        return None;
    }
    biases.sort_by(f64::total_cmp);
    let n = biases.len();
    let median = if n % 2 == 1 { biases[n / 2] } else { (biases[n / 2 - 1] + biases[n / 2]) / 2.0 };
    Some(SideToMoveBias { positions: n, mean: biases.iter().sum::<f64>() / n as f64, median })
}

/// The boards `nue tempo` measures on: every `len / wanted`-th position of a data file, or
/// the bench positions.
fn tempo_boards(data: Option<&Path>, wanted: usize) -> Result<Vec<Board>> {
    ensure!(wanted > 0, "--positions must be at least 1");
    let Some(path) = data else {
        return crate::bench::POSITIONS
            .iter()
            .map(|fen| position(Some(fen)).map(|pos| pos.board().clone()))
            .collect();
    };
    let (positions, _) = crate::train::data::read_text(path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    ensure!(!positions.is_empty(), "{} holds no positions", path.display());
    let step = positions.len().div_ceil(wanted);
    Ok(positions.iter().step_by(step).map(|p| p.board()).collect())
}

/// `nue tempo`: prints a net's side-to-move bias and, with `--shift`, writes the shifted
/// copy and prints its bias.
pub fn tempo(args: &TempoArgs) -> Result<()> {
    let (net, name) = match &args.net {
        Some(p) => (std::sync::Arc::from(Network::load(p)?), p.display().to_string()),
        None => (default_network(), default_net::NAME.to_string()),
    };
    let boards = tempo_boards(args.data.as_deref(), args.positions)?;
    let simd = Simd::detect();
    let measure = |net: &Network| {
        side_to_move_bias(net, simd, boards.iter().cloned())
            .context("no position could be evaluated with either side to move")
    };
    let report = |out: &mut dyn Write, what: &str, bias: SideToMoveBias| {
        writeln!(
            out,
            "{what}: side-to-move bias {:.1} internal units on average, {:.1} median, over {} positions",
            bias.mean, bias.median, bias.positions
        )
    };
    let mut out = std::io::stdout().lock();
    report(&mut out, &name, measure(&net)?)?;
    if let Some(by) = args.shift {
        let Some(shifted) = net.shifted(by) else {
            bail!("a shift of {by} internal units overflows the net's output bias");
        };
        let bytes = shifted.to_bytes();
        std::fs::create_dir_all(&args.out)
            .with_context(|| format!("cannot create {}", args.out.display()))?;
        let path = args.out.join(crate::train::net_name(&bytes));
        std::fs::write(&path, &bytes)
            .with_context(|| format!("cannot write {}", path.display()))?;
        report(&mut out, &path.display().to_string(), measure(&shifted)?)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bench_boards() -> Vec<Board> {
        tempo_boards(None, 1).expect("the bench positions parse")
    }

    #[test]
    fn shifting_moves_every_evaluation_and_the_bias_by_as_much() {
        let net = default_network();
        let simd = Simd::detect();
        let shifted = net.shifted(-60).expect("no overflow");
        for board in bench_boards() {
            for turn in [Color::White, Color::Black] {
                let (a, b) =
                    (net.evaluate(simd, &board, turn), shifted.evaluate(simd, &board, turn));
                assert_eq!(b, a - 60 * RAW_PER_INTERNAL);
            }
        }
        let before = side_to_move_bias(&net, simd, bench_boards()).expect("quiet boards");
        let after = side_to_move_bias(&shifted, simd, bench_boards()).expect("quiet boards");
        assert_eq!(after.positions, before.positions);
        assert!((after.mean - (before.mean - 60.0)).abs() < 1e-9);
        assert!((after.median - (before.median - 60.0)).abs() < 1e-9);
    }

    #[test]
    fn shifted_net_round_trips_and_overflow_is_refused() {
        let net = default_network();
        let shifted = net.shifted(25).expect("no overflow");
        assert_eq!(shifted.out_bias, net.out_bias + 25 * RAW_PER_INTERNAL);
        let back = Network::from_bytes(&shifted.to_bytes()).expect("a valid file");
        assert!(*back == shifted);
        assert!(net.shifted(i32::MAX).is_none());
        assert!(net.shifted(i32::MIN / RAW_PER_INTERNAL - 1).is_none());
    }

    #[test]
    fn boards_with_a_king_in_check_are_skipped() {
        let net = default_network();
        let simd = Simd::detect();
        let quiet = position(None).expect("start").board().clone();
        // Black's king on e8 is attacked by the rook on e1: White could not be to move.
        let check =
            position(Some("4k3/8/8/8/8/8/8/K3R3 b - - 0 1")).expect("legal").board().clone();
        let bias = side_to_move_bias(&net, simd, [quiet.clone(), check.clone()]).expect("one left");
        assert_eq!(bias.positions, 1);
        assert_eq!(Some(bias), side_to_move_bias(&net, simd, [quiet]));
        assert_eq!(side_to_move_bias(&net, simd, [check]), None);
    }
}
