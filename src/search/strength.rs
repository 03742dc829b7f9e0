//! Playing strength on request (`UCI_LimitStrength`, `UCI_Elo`): a weaker Nue that still
//! plays chess. Two things weaken it, both chosen by the requested rating:
//!
//! - **Fewer nodes.** Each move gets a node budget that halves for every
//!   `ELO_PER_DOUBLING` rating points less; the search starts no iteration after it,
//!   so every line it reports was searched to the same depth. This is nearly all of the
//!   weakening, and it was calibrated in games against Stockfish 15.1's own `UCI_Elo`
//!   (the README's table).
//! - **A little noise at the bottom of the range.** The search keeps `LINES` lines (as
//!   with MultiPV) and picks one with probability `exp(score / T)`. The temperature `T`
//!   is 30 cp at 1320 and falls with the square of the rating to 0 at 2400, so weak
//!   play varies among moves of nearly equal score, and never throws away material on
//!   purpose: a line a pawn worse is picked about 4 % as often as the best at 1320.

use crate::{nnue::PAWN_VALUE, rng::Rng};

/// Lowest rating offered (the `UCI_Elo` option's minimum and default).
pub const MIN_ELO: u32 = 1320;
/// Highest rating offered.
pub const MAX_ELO: u32 = 3000;
/// Lines searched for the noisy choice.
pub const LINES: usize = 4;

/// A rating measured for a fixed node budget: Nue searching one line at 300 nodes a move
/// scored even against Stockfish 15.1 at `UCI_Elo` 1385 (see the README's calibration).
const ANCHOR_ELO: f64 = 1385.0;
/// The node budget of [`ANCHOR_ELO`], in moves made: the calibration's 300 nodes were
/// counted as nodes entered, and the same searches make 0.9 times as many moves (bench
/// 2,240,761 against 2,501,189).
const ANCHOR_NODES: f64 = 270.0;
/// Rating points per doubling of the node budget (about 120 measured from 300 to
/// 80,000 nodes).
const ELO_PER_DOUBLING: f64 = 120.0;
/// Rating lost by searching [`LINES`] lines instead of one within the same budget, and
/// to the noise: 179, 147 and 191 measured at 1500, 2000 and 2500 (40 games each).
const LINES_COST: f64 = 170.0;
/// Temperature at [`MIN_ELO`], centipawns.
const TEMPERATURE_AT_MIN_CP: f64 = 30.0;
/// No noise from this rating up.
const NOISELESS_ELO: f64 = 2400.0;
/// The search may overrun its soft budget (to finish an iteration) by this factor at most.
const HARD_NODE_FACTOR: u64 = 8;

/// How a limited-strength search is set up for one rating.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Strength {
    elo: u32,
}

impl Strength {
    /// The strength of `elo`, clamped into the offered range.
    pub fn new(elo: u32) -> Strength {
        Strength { elo: elo.clamp(MIN_ELO, MAX_ELO) }
    }

    /// The rating asked for.
    pub fn elo(self) -> u32 {
        self.elo
    }

    /// Nodes after which no new iteration starts.
    pub fn soft_nodes(self) -> u64 {
        let doublings = (f64::from(self.elo) + LINES_COST - ANCHOR_ELO) / ELO_PER_DOUBLING;
        (ANCHOR_NODES * doublings.exp2()).round() as u64
    }

    /// Nodes at which the search stops, whatever it is doing.
    pub fn hard_nodes(self) -> u64 {
        self.soft_nodes() * HARD_NODE_FACTOR
    }

    /// Temperature of the choice among lines, in internal units (0: always the best).
    pub fn temperature(self) -> f64 {
        let below = (NOISELESS_ELO - f64::from(self.elo)).max(0.0);
        let span = NOISELESS_ELO - f64::from(MIN_ELO);
        TEMPERATURE_AT_MIN_CP * (below / span).powi(2) * f64::from(PAWN_VALUE) / 100.0
    }

    /// The index of the line to play among `scores` (best first, internal units, side
    /// to move), drawn by the temperature. Lines scored as mates or tablebase results
    /// take part like any other: a mate's score is so far above that it is nearly
    /// always kept, and a line that gets mated nearly never chosen.
    pub fn pick(self, scores: &[i32], rng: &mut Rng) -> usize {
        let t = self.temperature();
        let Some(&best) = scores.first() else {
            return 0;
        };
        if t < 1e-9 || scores.len() == 1 {
            return 0;
        }
        // Weights relative to the best line, so that exp never overflows.
        let weights: Vec<f64> = scores.iter().map(|&s| (f64::from(s - best) / t).exp()).collect();
        let total: f64 = weights.iter().sum();
        let mut x = f64::from(rng.unit_f32()) * total;
        for (i, w) in weights.iter().enumerate() {
            if x < *w {
                return i;
            }
            x -= w;
        }
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::MATE;

    #[test]
    fn more_rating_means_more_nodes_and_less_noise() {
        let ladder: Vec<Strength> = (MIN_ELO..=MAX_ELO).step_by(20).map(Strength::new).collect();
        for pair in ladder.windows(2) {
            assert!(pair[1].soft_nodes() >= pair[0].soft_nodes());
            assert!(pair[1].temperature() <= pair[0].temperature());
        }
        let anchor = (ANCHOR_ELO - LINES_COST) as u32;
        let doubling = ELO_PER_DOUBLING as u32;
        assert_eq!(Strength::new(anchor + 2 * doubling).soft_nodes(), 4 * ANCHOR_NODES as u64);
        assert_eq!(Strength::new(anchor + 3 * doubling).soft_nodes(), 8 * ANCHOR_NODES as u64);
        assert_eq!(Strength::new(MAX_ELO).temperature(), 0.0);
        assert_eq!(Strength::new(0).elo(), MIN_ELO);
        assert_eq!(Strength::new(99_999).elo(), MAX_ELO);
    }

    /// How often each line is picked in `n` draws.
    fn histogram(strength: Strength, scores: &[i32], n: usize) -> Vec<usize> {
        let mut rng = Rng::new(7);
        let mut counts = vec![0; scores.len()];
        for _ in 0..n {
            counts[strength.pick(scores, &mut rng)] += 1;
        }
        counts
    }

    #[test]
    fn weak_play_varies_among_close_lines_and_keeps_away_from_bad_ones() {
        let pawn = PAWN_VALUE;
        let scores = [0, -pawn / 4, -pawn, -9 * pawn];
        let low = histogram(Strength::new(MIN_ELO), &scores, 10_000);
        // Every close line is played sometimes, the best most often, a queen never.
        assert!(low[0] > low[1] && low[1] > low[2], "{low:?}");
        assert!(low[1] > 1_000 && low[2] > 100, "{low:?}");
        assert!(low[3] < 10, "{low:?}");
        // At 2500 a line a pawn worse is all but never played.
        let strong = histogram(Strength::new(2500), &scores, 10_000);
        assert!(strong[2] + strong[3] < 10, "{strong:?}");
        // Without noise, the best line always.
        assert_eq!(histogram(Strength::new(MAX_ELO), &scores, 1_000)[0], 1_000);
    }

    #[test]
    fn a_mate_is_kept_and_a_mated_line_avoided() {
        let weakest = Strength::new(MIN_ELO);
        assert_eq!(histogram(weakest, &[MATE - 5, 300, 250], 2_000)[0], 2_000);
        assert_eq!(histogram(weakest, &[20, 10, -MATE + 4], 2_000)[2], 0);
        assert_eq!(weakest.pick(&[], &mut Rng::new(1)), 0);
    }
}
