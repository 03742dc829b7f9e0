//! OpenBench's SPSA, one iteration at a time, every random choice drawn from the tune's
//! seed and the iteration's number.
//!
//! The schedule is OpenBench's (its SPSA run's creation and workload assignment, which
//! follow fishtest's). For N iterations and A = N/10, each parameter gets, once, when the
//! tune is created, c = c_end·N^γ and a = r_end·c_end²·(A + N)^α. Iteration k (counted
//! from 1) perturbs by c_k = max(c/k^γ, 0.5) and learns at r_k = a/(A + k)^α/c_k², so that
//! at k = N the perturbation is c_end and the rate r_end. The engines play
//! θ+ = θ + flip·c_k against θ− = θ − flip·c_k, flip = ±1 per parameter, both rounded with
//! one random offset u (⌊x + u⌋, which is x on average) and clamped to the range. After
//! the games θ moves by r_k·c_k·(W − L)·flip, W and L counted from θ+'s side, and is
//! clamped again.
//!
//! The flips and offsets of iteration k come from [`stream`]`(seed, k, …)` and its openings
//! from one seeded shuffle of the book, so a tune stopped after any iteration and resumed
//! plays what it would have played without the stop.

use sha2::{Digest, Sha256};

use crate::rng::Rng;

/// Decay of the learning rate over the iterations (OpenBench's and fishtest's α).
pub const ALPHA: f64 = 0.602;
/// Decay of the perturbation over the iterations (γ).
pub const GAMMA: f64 = 0.101;
/// A, the learning rate's offset, as a share of the planned iterations.
pub const A_RATIO: f64 = 0.1;
/// Smallest perturbation of an integer parameter: below half a unit, rounding would
/// mostly give θ+ and θ− the same value and the games would measure nothing.
pub const MIN_INTEGER_PERTURBATION: f64 = 0.5;

/// The constants of a tune's schedule.
#[derive(Clone, Debug, PartialEq)]
pub struct Schedule {
    /// Iterations planned, N.
    pub iterations: u64,
    /// Game pairs each iteration plays (each opening with colours reversed).
    pub pairs: u64,
    /// α.
    pub alpha: f64,
    /// γ.
    pub gamma: f64,
    /// A.
    pub big_a: f64,
}

impl Schedule {
    /// OpenBench's schedule for `iterations` iterations of `pairs` game pairs.
    pub fn new(iterations: u64, pairs: u64) -> Schedule {
        Schedule {
            iterations,
            pairs,
            alpha: ALPHA,
            gamma: GAMMA,
            big_a: A_RATIO * iterations as f64,
        }
    }

    /// The games the whole tune plays.
    pub fn planned_games(&self) -> u64 {
        self.iterations * self.games_per_iteration()
    }

    /// The games of one iteration.
    pub fn games_per_iteration(&self) -> u64 {
        2 * self.pairs
    }

    /// Iteration `k`'s perturbation of `p`.
    pub fn c_k(&self, p: &Tuned, k: u64) -> f64 {
        (p.c / (k as f64).powf(self.gamma)).max(MIN_INTEGER_PERTURBATION)
    }

    /// Iteration `k`'s learning rate for `p`.
    pub fn r_k(&self, p: &Tuned, k: u64) -> f64 {
        p.a / (self.big_a + k as f64).powf(self.alpha) / self.c_k(p, k).powi(2)
    }
}

/// One tuned parameter: where it stands and the constants of its schedule.
#[derive(Clone, Debug, PartialEq)]
pub struct Tuned {
    /// Its name, as a UCI option of the tuning build.
    pub name: String,
    /// The current value, θ.
    pub value: f64,
    /// The value the tune started from.
    pub start: f64,
    /// Smallest value the engine accepts.
    pub min: i32,
    /// Largest value the engine accepts.
    pub max: i32,
    /// Perturbation at the end of the tune (the table's `step`).
    pub c_end: f64,
    /// Learning rate at the end of the tune.
    pub r_end: f64,
    /// c = c_end·N^γ.
    pub c: f64,
    /// a = r_end·c_end²·(A + N)^α.
    pub a: f64,
}

impl Tuned {
    /// A parameter starting at `start`, its `c` and `a` worked out for `schedule`.
    pub fn new(
        name: &str,
        start: f64,
        (min, max): (i32, i32),
        (c_end, r_end): (f64, f64),
        schedule: &Schedule,
    ) -> Tuned {
        let n = schedule.iterations as f64;
        Tuned {
            name: name.to_string(),
            value: start,
            start,
            min,
            max,
            c_end,
            r_end,
            c: c_end * n.powf(schedule.gamma),
            a: r_end * c_end * c_end * (schedule.big_a + n).powf(schedule.alpha),
        }
    }

    /// The value an engine gets now: θ rounded to the nearest whole number and clamped.
    pub fn rounded(&self) -> i32 {
        (self.value.round() as i32).clamp(self.min, self.max)
    }
}

/// A generator for one purpose of iteration `k` of the tune seeded `seed`: its bits
/// depend on all three and on nothing else (SHA-256 of them seeds it).
pub fn stream(seed: u64, k: u64, purpose: &str) -> Rng {
    let digest = Sha256::new()
        .chain_update(b"nue tune")
        .chain_update(seed.to_le_bytes())
        .chain_update(k.to_le_bytes())
        .chain_update(purpose.as_bytes())
        .finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    Rng::new(u64::from_le_bytes(first))
}

/// The order in which a tune plays its book: one shuffle of the positions' numbers from
/// the seed. Iteration k plays the next `pairs` of them, so no opening comes twice before
/// the whole book has been played.
#[derive(Clone, Debug)]
pub struct Openings {
    order: Vec<u32>,
}

impl Openings {
    /// The order of a book of `positions` positions (at least one) for `seed`.
    pub fn new(seed: u64, positions: usize) -> Openings {
        assert!(positions > 0 && u32::try_from(positions).is_ok(), "a book of {positions}");
        let mut order: Vec<u32> = (0..positions as u32).collect();
        stream(seed, 0, "openings").shuffle(&mut order);
        Openings { order }
    }

    /// The book positions (numbered from 0) iteration `k` plays, one per pair.
    pub fn of_iteration(&self, k: u64, pairs: u64) -> Vec<usize> {
        let first = (k - 1) * pairs;
        (first..first + pairs)
            .map(|i| self.order[(i % self.order.len() as u64) as usize] as usize)
            .collect()
    }
}

/// What one iteration plays, and what its update needs.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// The iteration, from 1.
    pub k: u64,
    /// θ+'s values, in the order of the parameters.
    pub plus: Vec<i32>,
    /// θ−'s values.
    pub minus: Vec<i32>,
    /// Each parameter's direction, +1 or −1.
    pub flips: Vec<f64>,
    /// Each parameter's c_k.
    pub c_k: Vec<f64>,
    /// Each parameter's r_k.
    pub r_k: Vec<f64>,
    /// The book positions of the game pairs (numbered from 0), one per pair.
    pub openings: Vec<usize>,
}

impl Plan {
    /// Iteration `k` of a tune at `params` with `schedule` and `seed`.
    pub fn new(
        params: &[Tuned],
        schedule: &Schedule,
        seed: u64,
        k: u64,
        openings: &Openings,
    ) -> Plan {
        let mut rng = stream(seed, k, "perturbation");
        let mut plan = Plan {
            k,
            plus: Vec::new(),
            minus: Vec::new(),
            flips: Vec::new(),
            c_k: Vec::new(),
            r_k: Vec::new(),
            openings: openings.of_iteration(k, schedule.pairs),
        };
        for p in params {
            let flip = if rng.next_u64() & 1 == 1 { 1.0 } else { -1.0 };
            let offset = rng.unit_f64();
            let c_k = schedule.c_k(p, k);
            let side = |sign: f64| {
                let x = (p.value + sign * flip * c_k + offset).floor();
                x.clamp(f64::from(p.min), f64::from(p.max)) as i32
            };
            plan.plus.push(side(1.0));
            plan.minus.push(side(-1.0));
            plan.flips.push(flip);
            plan.c_k.push(c_k);
            plan.r_k.push(schedule.r_k(p, k));
        }
        plan
    }
}

/// Moves `params` after `plan`'s games, in which θ+ won `wins` and lost `losses`.
pub fn update(params: &mut [Tuned], plan: &Plan, wins: u64, losses: u64) {
    let result = wins as f64 - losses as f64;
    for (i, p) in params.iter_mut().enumerate() {
        let step = plan.r_k[i] * plan.c_k[i] * result * plan.flips[i];
        p.value = (p.value + step).clamp(f64::from(p.min), f64::from(p.max));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn param(schedule: &Schedule) -> Tuned {
        Tuned::new("rfp_margin", 180.0, (80, 300), (12.0, 0.002), schedule)
    }

    #[test]
    fn the_schedule_ends_at_c_end_and_r_end() {
        let schedule = Schedule::new(1250, 8);
        assert_eq!(schedule.big_a, 125.0);
        assert_eq!(schedule.planned_games(), 20_000);
        let p = param(&schedule);
        assert!((schedule.c_k(&p, 1250) - 12.0).abs() < 1e-9);
        assert!((schedule.r_k(&p, 1250) - 0.002).abs() < 1e-12);
        // The first iteration perturbs by c_end·N^γ, about twice c_end.
        assert!((schedule.c_k(&p, 1) - 12.0 * 1250f64.powf(0.101)).abs() < 1e-9);
        assert!(schedule.c_k(&p, 1) > schedule.c_k(&p, 600));
    }

    #[test]
    fn an_integer_parameter_is_perturbed_by_at_least_half_a_unit() {
        let schedule = Schedule::new(1250, 8);
        let p = Tuned::new("singular_margin", 2.0, (1, 6), (0.2, 0.002), &schedule);
        assert_eq!(schedule.c_k(&p, 1000), 0.5);
    }

    #[test]
    fn the_plan_rounds_both_sides_with_one_offset_and_clamps() {
        let schedule = Schedule::new(100, 4);
        let openings = Openings::new(7, 1000);
        let mut params = vec![param(&schedule)];
        for k in 1..=50 {
            let plan = Plan::new(&params, &schedule, 7, k, &openings);
            let (plus, minus) = (f64::from(plan.plus[0]), f64::from(plan.minus[0]));
            // ⌊x + c + u⌋ − ⌊x − c + u⌋ is 2c rounded down or up.
            let spread = (plus - minus) * plan.flips[0];
            let two_c = 2.0 * plan.c_k[0];
            assert!(spread == two_c.floor() || spread == two_c.ceil(), "{spread} {two_c}");
            assert_eq!(plan.openings.len(), 4);
        }
        params[0].value = 299.5;
        let plan = Plan::new(&params, &schedule, 7, 1, &openings);
        assert!(plan.plus[0] <= 300 && plan.minus[0] <= 300);
    }

    #[test]
    fn rounding_is_unbiased_on_average() {
        let schedule = Schedule::new(1000, 8);
        let openings = Openings::new(1, 10);
        let mut p = param(&schedule);
        p.value = 180.3;
        let (mut sum, n) = (0.0, 4000);
        for k in 1..=n {
            let plan = Plan::new(std::slice::from_ref(&p), &schedule, 3, k, &openings);
            sum += f64::from(plan.plus[0] + plan.minus[0]) / 2.0;
        }
        assert!((sum / n as f64 - 180.3).abs() < 0.03, "{}", sum / n as f64);
    }

    #[test]
    fn the_update_follows_the_winner_and_stays_in_range() {
        let schedule = Schedule::new(100, 4);
        let openings = Openings::new(7, 1000);
        let mut params = vec![param(&schedule)];
        let plan = Plan::new(&params, &schedule, 7, 1, &openings);
        update(&mut params, &plan, 6, 2);
        let moved = params[0].value - 180.0;
        assert!((moved - plan.r_k[0] * plan.c_k[0] * 4.0 * plan.flips[0]).abs() < 1e-12);
        assert_eq!(moved.signum(), plan.flips[0], "θ+ won, so θ moves toward it");
        update(&mut params, &plan, 1_000_000, 0);
        assert!(params[0].value == 80.0 || params[0].value == 300.0);
    }

    #[test]
    fn the_openings_go_through_the_book_before_repeating() {
        let openings = Openings::new(5, 100);
        let mut seen: Vec<usize> = (1..=25).flat_map(|k| openings.of_iteration(k, 4)).collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..100).collect::<Vec<_>>());
        assert_eq!(openings.of_iteration(26, 4), openings.of_iteration(1, 4));
        assert_ne!(Openings::new(6, 100).of_iteration(1, 4), openings.of_iteration(1, 4));
    }

    #[test]
    fn streams_differ_by_seed_iteration_and_purpose() {
        let first = |seed, k, purpose| stream(seed, k, purpose).next_u64();
        let a = first(1, 1, "x");
        assert_eq!(a, first(1, 1, "x"));
        assert_ne!(a, first(2, 1, "x"));
        assert_ne!(a, first(1, 2, "x"));
        assert_ne!(a, first(1, 1, "y"));
    }
}
