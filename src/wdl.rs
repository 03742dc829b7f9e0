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
//! `nue wdl-fit` (`train::wdl_fit`) fits them by maximum likelihood to game results: to
//! the scores Nue's search gave in its own games (the model in use), or to a net's
//! evaluations of training positions. The coefficients below come from the command
//! recorded at [`FITTED`], which names the net they were fitted for: a test fails when the
//! default net is another, so each new default gets its own fit.

use shakmaty::{Board, Chess, Position, Role};

use crate::types::is_decisive;

/// Cubic coefficients of `a(m)` and `b(m)`, constant term first, internal units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WdlModel {
    /// The file name of the net whose play (or evaluations) the model was fitted to.
    pub net: &'static str,
    /// The score of an even chance of winning.
    pub a: [f64; 4],
    /// The spread around it.
    pub b: [f64; 4],
}

/// The model in use, fitted on 2026-12-06 to Nue 1.1.0's self-play with its default net:
/// `nue wdl-fit --pgn selfplay.pgn --iterations 2000` over 300 games at 5+0.05 (8moves_v3
/// openings with colours reversed; 187 drawn), the 40,574 moves with a score in their
/// comments. Mean log-likelihood −0.40928 against −0.82078 for the model before, which
/// was fitted to fast training games that are rarely drawn: the start position, searched
/// to depth 12 (+26 cp), now shows 26 % wins, 64 % draws and 10 % losses, where a level
/// start showed 14 % draws.
pub const FITTED: WdlModel = WdlModel {
    net: "nn-1f7c2a37363a.nnue",
    a: [423.9, -495.7, 201.5, 13.4],
    b: [32.9, 154.6, -198.1, 87.1],
};

/// The material measure of the model: pawns 1, minor pieces 3, rooks 5, queens 9.
pub fn material(pos: &Chess) -> u32 {
    board_material(pos.board())
}

/// The material measure of a board.
pub fn board_material(board: &Board) -> u32 {
    [(Role::Pawn, 1), (Role::Knight, 3), (Role::Bishop, 3), (Role::Rook, 5), (Role::Queen, 9)]
        .iter()
        .map(|&(role, value)| value * board.by_role(role).count() as u32)
        .sum()
}

/// The polynomials' argument for `material`.
pub(crate) fn material_scale(material: u32) -> f64 {
    f64::from(material.clamp(17, 78)) / 58.0
}

pub(crate) fn cubic(c: &[f64; 4], m: f64) -> f64 {
    ((c[3] * m + c[2]) * m + c[1]) * m + c[0]
}

pub(crate) fn sigmoid(x: f64) -> f64 {
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

    /// Part of making a net the default (CONTRIBUTING.md): the model is refitted to its
    /// play, and names it.
    #[test]
    fn the_model_is_fitted_for_the_default_net() {
        assert_eq!(
            FITTED.net,
            crate::nnue::default_net::NAME,
            "the WDL model was fitted for another net: refit it to the default's games \
             (`nue wdl-fit --pgn GAMES --player NAME`, docs/uci.md) and paste its output here"
        );
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
