//! The time budget for every `go` form ([`Limits`], from `crate::api`, turned into a
//! [`Budget`]).
//!
//! A clock game gets two budgets: a soft one, checked between iterations and stretched or
//! shrunk by how settled the search looks, and a hard one, checked inside the search,
//! which it never passes. `movetime` gets only the hard one: the search uses all of it.
//! `Move Overhead` (time lost to the GUI and the pipe) comes off the clock before anything
//! is planned.

use std::time::Duration;

use shakmaty::Color;

use super::params;
use crate::api::{Budget, Limits};

/// Moves planned for at most, even when a control is far away.
const MAX_MOVES_TO_GO: u64 = 50;
/// Overheads' worth of clock that planning never touches. With only the overhead kept
/// back, a long game with an increment drains the clock to the overhead itself, where a
/// single delay loses on time; this keeps a cushion of a few more.
const RESERVE_OVERHEADS: u64 = 4;

impl Limits {
    /// The budget for `side` to move, or `None` when time does not limit the search.
    pub fn budget(&self, side: Color, overhead_ms: u64) -> Option<Budget> {
        if let Some(t) = self.move_time {
            let t = Duration::from_millis(t.saturating_sub(overhead_ms).max(1));
            return Some(Budget { soft: None, hard: t });
        }
        let s = usize::from(side == Color::Black);
        let left = self.time[s]?;
        let inc = self.inc[s].unwrap_or(0);
        let kept = overhead_ms.saturating_mul(1 + RESERVE_OVERHEADS);
        let available = left.saturating_sub(kept).max(1);
        let sudden_death = params::tm_moves_left() as u64;
        let moves = self.moves_to_go.map_or(sudden_death, |m| m.clamp(1, MAX_MOVES_TO_GO));
        // The hard limit keeps a reserve: a quarter of the clock with several moves to
        // go, a tenth before the control.
        let hard_cap =
            if moves == 1 { available - available / 10 } else { available - available / 4 };
        let inc_share = inc / 4 * params::tm_increment_quarters() as u64;
        let ideal = (available / moves).saturating_add(inc_share).min(hard_cap);
        let hard = ideal.saturating_mul(params::tm_hard_factor() as u64).min(hard_cap).max(1);
        let soft = ideal.clamp(1, hard);
        Some(Budget { soft: Some(Duration::from_millis(soft)), hard: Duration::from_millis(hard) })
    }
}

/// How far the soft limit is stretched after an iteration: more time when the best move
/// just changed or the score fell, less when both have been steady; more when the best
/// move took a small share of the root's nodes (its rivals were hard to refute), less when
/// it took nearly all of them.
pub fn soft_scale(stable_iterations: u32, score_drop: i32, best_move_share: f64) -> f64 {
    let stability = [
        params::tm_stability_0,
        params::tm_stability_1,
        params::tm_stability_2,
        params::tm_stability_3,
        params::tm_stability_4,
        params::tm_stability_5,
    ][stable_iterations.min(5) as usize]();
    let stability = f64::from(stability) / 100.0;
    let drop_divisor = f64::from(params::tm_score_drop_divisor());
    let falling = (1.0 + f64::from(score_drop) / drop_divisor).clamp(0.85, 1.6);
    let base = f64::from(params::tm_node_base()) / 100.0;
    let effort =
        (base - best_move_share.clamp(0.0, 1.0)) * f64::from(params::tm_node_factor()) / 100.0;
    stability * falling * effort
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clock(ms: u64, inc: u64, mtg: Option<u64>) -> Limits {
        Limits {
            time: [Some(ms), Some(ms)],
            inc: [Some(inc), Some(inc)],
            moves_to_go: mtg,
            ..Limits::default()
        }
    }

    #[test]
    fn budgets_never_exceed_the_clock() {
        for ms in [0, 1, 5, 20, 100, 1_000, 10_000, 600_000, u64::MAX / 4] {
            for inc in [0, 10, 100, 5_000, u64::MAX] {
                for mtg in [None, Some(1), Some(2), Some(40), Some(1000)] {
                    let b = clock(ms, inc, mtg).budget(Color::White, 10).unwrap();
                    assert!(b.soft.unwrap() <= b.hard, "{ms} {inc} {mtg:?}");
                    let available = ms.saturating_sub(10).max(1);
                    assert!(b.hard.as_millis() as u64 <= available, "{ms} {inc} {mtg:?}: {b:?}");
                }
            }
        }
    }

    #[test]
    fn typical_budgets() {
        let b = clock(10_000, 100, None).budget(Color::Black, 10).unwrap();
        let ideal = (10_000 - 5 * 10) / 25 + 75;
        assert_eq!(b.soft, Some(Duration::from_millis(ideal)));
        assert_eq!(b.hard, Duration::from_millis(4 * ideal));
        let b = Limits { move_time: Some(1000), ..Limits::default() }.budget(Color::White, 10);
        assert_eq!(b, Some(Budget { soft: None, hard: Duration::from_millis(990) }));
        assert_eq!(Limits { depth: Some(5), ..Limits::default() }.budget(Color::White, 10), None);
        // White's clock is used for White.
        let mut l = clock(1000, 0, None);
        l.time[1] = Some(100_000);
        assert!(l.budget(Color::White, 0).unwrap().hard <= Duration::from_millis(750));
    }

    /// A game at 2+0.02 with a 30 ms overhead, in which every move takes its soft budget
    /// stretched by half plus 5 ms of latency: the clock settles above the overhead and
    /// the reserve instead of draining to the overhead.
    #[test]
    fn the_clock_keeps_a_reserve() {
        let (inc, overhead, latency) = (20u64, 30u64, 5u64);
        let mut left = 2_000u64;
        let mut lowest = left;
        for _ in 0..500 {
            let b = clock(left, inc, None).budget(Color::White, overhead).unwrap();
            let used = b.soft.unwrap().as_millis() as u64 * 3 / 2 + latency;
            assert!(used < left, "lost on time with {left} ms left");
            left = left - used + inc;
            lowest = lowest.min(left);
        }
        assert!(lowest >= (1 + RESERVE_OVERHEADS) * overhead, "the clock fell to {lowest} ms");
    }

    #[test]
    fn instability_buys_time() {
        assert!(soft_scale(0, 0, 0.8) > soft_scale(5, 0, 0.8));
        assert!(soft_scale(3, 100, 0.8) > soft_scale(3, 0, 0.8));
        assert!(soft_scale(3, -100, 0.8) < soft_scale(3, 0, 0.8));
        assert!(soft_scale(3, 0, 0.3) > soft_scale(3, 0, 0.95));
    }
}
