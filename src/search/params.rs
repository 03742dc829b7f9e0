//! Every number that shapes the search and the time management, declared once.
//!
//! In a normal build each parameter is a function returning a constant, which the compiler
//! folds into the code that uses it. Built with `--features tune`, each is also a UCI spin
//! option (`setoption name <name> value <v>`, its range as below) and `nue spsa` prints the
//! table as the SPSA input of OpenBench, so that a tuner can move the numbers without
//! anyone editing the code. Search margins are in internal units (a pawn is about 208).
//!
//! Below the table are the search's fixed numbers: depth limits, counts and the like,
//! plain constants in every build. They are no UCI options and `nue spsa` does not list
//! them; to tune one, move it into the table.

#[cfg(feature = "tune")]
use std::sync::atomic::{AtomicI32, Ordering::Relaxed};

/// One tunable number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Param {
    /// Its name, as a UCI option and in the SPSA input.
    pub name: &'static str,
    /// The value of a normal build.
    pub default: i32,
    /// Smallest value a tuner may try.
    pub min: i32,
    /// Largest value a tuner may try.
    pub max: i32,
    /// SPSA's perturbation at the end of a run (OpenBench's `c_end`): about the change
    /// that games can tell apart.
    pub step: i32,
}

/// SPSA's learning rate at the end of a run (OpenBench's `r_end`), the same for all.
pub const SPSA_LEARNING_RATE: f64 = 0.002;

macro_rules! params {
    ($(
        $(#[doc = $doc:literal])+
        $name:ident = $value:literal, $min:literal..=$max:literal, step $step:literal;
    )+) => {
        #[cfg(feature = "tune")]
        #[allow(non_camel_case_types, clippy::upper_case_acronyms)]
        #[derive(Clone, Copy)]
        enum Index { $($name),+ }

        /// The table, in the order of the code that uses it.
        pub const PARAMS: &[Param] = &[$(
            Param { name: stringify!($name), default: $value, min: $min, max: $max, step: $step },
        )+];

        #[cfg(feature = "tune")]
        static VALUES: [AtomicI32; PARAMS.len()] = [$(AtomicI32::new($value)),+];

        $(
            $(#[doc = $doc])+
            #[inline(always)]
            pub fn $name() -> i32 {
                #[cfg(not(feature = "tune"))]
                {
                    $value
                }
                #[cfg(feature = "tune")]
                {
                    VALUES[Index::$name as usize].load(Relaxed)
                }
            }
        )+
    };
}

params! {
    // Iterative deepening.
    /// Half-width of the first aspiration window.
    aspiration_delta = 17, 8..=60, step 2;

    // Pruning before the move loop.
    /// Razoring: below alpha by this much per ply (depths 1 and 2), only captures can help.
    razor_margin = 480, 200..=800, step 30;
    /// Reverse futility pruning: deepest node it applies to.
    rfp_max_depth = 8, 4..=12, step 1;
    /// Reverse futility pruning: margin per ply of depth.
    rfp_margin = 180, 80..=300, step 12;
    /// Null-move pruning: shallowest node it applies to.
    nmp_min_depth = 3, 2..=5, step 1;
    /// Null-move pruning: the reduction's constant part.
    nmp_base = 3, 2..=5, step 1;
    /// Null-move pruning: one more ply of reduction per this many plies of depth.
    nmp_depth_divisor = 3, 2..=6, step 1;
    /// Null-move pruning: one more ply of reduction per this much eval above beta.
    nmp_eval_divisor = 200, 100..=400, step 15;
    /// ProbCut: a capture must beat beta by this much in the shallower search.
    probcut_margin = 200, 80..=400, step 15;
    /// ProbCut: the margin is this much smaller when the eval is improving.
    probcut_improving = 50, 0..=120, step 8;
    /// Internal iterative reduction: shallowest node it applies to.
    iir_min_depth = 4, 2..=8, step 1;

    // Pruning in the move loop.
    /// Late move pruning: quiet moves searched before the rest are skipped are
    /// `(lmp_base + depth²) / 2`, twice that when improving.
    lmp_base = 3, 1..=8, step 1;
    /// Futility pruning of quiet moves: the margin's constant part.
    futility_base = 220, 80..=400, step 15;
    /// Futility pruning of quiet moves: the margin per ply of (reduced) depth.
    futility_margin = 170, 80..=300, step 12;
    /// History pruning: quiet moves whose history is below minus this per ply are skipped.
    history_prune = 3000, 1000..=6000, step 250;
    /// SEE pruning of quiet moves: material they may lose, per squared ply.
    see_quiet_margin = 50, 20..=120, step 5;
    /// SEE pruning of captures: material they may lose, per ply.
    see_noisy_margin = 200, 80..=300, step 12;

    // Extensions.
    /// Singular extensions: shallowest node they apply to.
    singular_min_depth = 7, 4..=10, step 1;
    /// Singular extensions: the margin below the stored score, per ply of depth.
    singular_margin = 2, 1..=6, step 1;
    /// Double extensions: how far below the singular bound the other moves must stay.
    double_ext_margin = 40, 10..=100, step 5;

    // Late move reductions.
    /// Reductions are `lmr_base/100 + ln(depth)·ln(move)/(lmr_divisor/100)` plies.
    lmr_base = 80, 0..=150, step 8;
    /// See `lmr_base`.
    lmr_divisor = 230, 150..=350, step 12;
    /// One ply less of reduction per this much history.
    lmr_history_divisor = 8192, 4096..=16384, step 512;
    /// More reduction off the principal variation, in 1/1024 ply.
    lmr_non_pv = 1024, 0..=2048, step 128;
    /// Less reduction at a node that was once on a principal variation, in 1/1024 ply.
    lmr_tt_pv = 1024, 0..=2048, step 128;
    /// More reduction at an expected cut node, in 1/1024 ply.
    lmr_cut_node = 1024, 0..=2048, step 128;
    /// Less reduction for a move that gives check, in 1/1024 ply.
    lmr_gives_check = 1024, 0..=2048, step 128;
    /// More reduction for a quiet move when the stored move is a capture, in 1/1024 ply.
    lmr_tt_capture = 1024, 0..=2048, step 128;
    /// Less reduction when the static eval is improving, in 1/1024 ply.
    lmr_improving = 1024, 0..=2048, step 128;

    // Move ordering.
    /// History bonus per square of the depth of the cutoff.
    history_bonus_quadratic = 26, 0..=60, step 3;
    /// History bonus per ply of depth of the cutoff.
    history_bonus_per_ply = 205, 0..=500, step 20;
    /// Taken off the history bonus.
    history_bonus_offset = 205, 0..=500, step 25;
    /// Largest history bonus.
    history_bonus_max = 6850, 1500..=12000, step 300;
    /// A cutoff this far above beta counts as one ply deeper for the history bonus.
    history_bonus_extra_margin = 150, 50..=300, step 12;
    /// A capture is ordered with the good ones when its exchange loses no more than this
    /// many 1024ths of its ordering score (victim and capture history): a bishop for a
    /// defended knight stays good, a queen for a defended pawn does not.
    good_capture_see_scale = 26, 0..=60, step 3;
    /// Static exchange values of pawn, knight, bishop, rook and queen.
    see_pawn = 200, 150..=250, step 8;
    /// See `see_pawn`.
    see_knight = 650, 500..=800, step 20;
    /// See `see_pawn`.
    see_bishop = 700, 500..=850, step 20;
    /// See `see_pawn`.
    see_rook = 1050, 850..=1300, step 30;
    /// See `see_pawn`.
    see_queen = 2000, 1700..=2400, step 50;

    // Quiescence.
    /// Delta pruning: captures that cannot reach alpha with this much to spare are skipped.
    qs_futility_margin = 300, 100..=500, step 20;
    /// In check, evasions searched before the quiet rest is skipped.
    qs_evasions = 3, 1..=8, step 1;

    // Static-evaluation correction.
    /// Largest correction of the static eval by one table entry, internal units.
    correction_max = 64, 16..=160, step 8;
    /// Weight of one search result in a correction entry, per ply of depth, in 1/256.
    correction_weight = 16, 4..=48, step 2;
    /// Weight of each side's piece correction beside the pawn correction's, percent.
    correction_pieces = 50, 0..=100, step 5;

    // Time management.
    /// Moves assumed left in a game without `movestogo`.
    tm_moves_left = 25, 15..=40, step 2;
    /// Quarters of the increment added to each move's planned time.
    tm_increment_quarters = 3, 1..=4, step 1;
    /// The hard limit is this many times the planned time.
    tm_hard_factor = 4, 2..=8, step 1;
    /// Soft limit stretch, in hundredths, after 0, 1, … 5 iterations with the same best move.
    tm_stability_0 = 180, 100..=250, step 10;
    /// See `tm_stability_0`.
    tm_stability_1 = 135, 80..=200, step 8;
    /// See `tm_stability_0`.
    tm_stability_2 = 110, 70..=160, step 6;
    /// See `tm_stability_0`.
    tm_stability_3 = 95, 60..=140, step 5;
    /// See `tm_stability_0`.
    tm_stability_4 = 85, 50..=130, step 5;
    /// See `tm_stability_0`.
    tm_stability_5 = 75, 40..=120, step 5;
    /// The soft limit grows by the score's fall over this many units (and shrinks by a rise).
    tm_score_drop_divisor = 400, 150..=800, step 30;
    /// The soft limit is multiplied by `(tm_node_base - share) · tm_node_factor`, both in
    /// hundredths, where `share` is the best move's fraction of the root's nodes.
    tm_node_base = 150, 100..=200, step 5;
    /// See `tm_node_base`.
    tm_node_factor = 135, 50..=250, step 10;
}

// The fixed numbers of the node search (`node.rs`), in the order of its steps.

// 4. Transposition table.
/// A stored bound ends a non-PV node only while the fifty-move counter is below this:
/// nearer the rule, a stored score may no longer hold.
pub const TT_CUTOFF_MAX_HALFMOVES: u32 = 90;

// 4b. Tablebases.
/// A tablebase result is stored this many plies deeper than the node's depth (it is
/// exact, whatever depth asks for it).
pub const TB_STORE_EXTRA_DEPTH: i32 = 6;

// Pruning before the move loop.
/// Razoring: deepest node it applies to.
pub const RAZOR_MAX_DEPTH: i32 = 2;
/// Null-move pruning: most plies of reduction for the eval's lead over beta.
pub const NMP_MAX_EVAL_REDUCTION: i32 = 3;
/// ProbCut: plies by which its search is shallower than the node; a node must be deeper
/// than this to try it.
pub const PROBCUT_REDUCTION: i32 = 4;
/// ProbCut: its result is stored at the node's depth less this many plies, and a stored
/// bound at least that deep tells whether to try it.
pub const PROBCUT_STORED_REDUCTION: i32 = 3;
/// ProbCut: captures searched at most (past those the exchange rules out).
pub const PROBCUT_TRIES: usize = 2;
/// ProbCut: captures searched more at an expected cut node.
pub const PROBCUT_CUT_NODE_TRIES: usize = 2;

// Pruning in the move loop.
/// SEE pruning of captures and quiet checks: deepest node it applies to.
pub const SEE_NOISY_MAX_DEPTH: i32 = 8;
/// Futility pruning of quiet moves: deepest (reduced) depth it applies to.
pub const FUTILITY_MAX_DEPTH: i32 = 8;
/// History pruning: deepest (reduced) depth it applies to.
pub const HISTORY_PRUNE_MAX_DEPTH: i32 = 3;

// Extensions.
/// Moves are extended (singular or check) only at plies below this many times the
/// iteration's depth, so that extensions cannot run the line away.
pub const EXTENSION_PLY_FACTOR: usize = 2;
/// Singular extensions: the stored bound may be at most this many plies shallower than
/// the node.
pub const SINGULAR_TT_DEPTH_MARGIN: i32 = 3;
/// Most double extensions along one line, so that singular lines cannot explode.
pub const MAX_DOUBLE_EXTENSIONS: u8 = 6;

// Late move reductions.
/// Shallowest node that reduces its late moves.
pub const LMR_MIN_DEPTH: i32 = 2;
/// Shallowest node that reduces a capture or promotion.
pub const LMR_NOISY_MIN_DEPTH: i32 = 3;
/// The root: shallowest iteration that reduces its late quiet moves.
pub const ROOT_LMR_MIN_DEPTH: i32 = 3;
/// The root: moves searched before the first reduced one.
pub const ROOT_LMR_MIN_MOVES: usize = 3;
/// The root: plies it reduces less than the table says.
pub const ROOT_LMR_RELIEF: i32 = 1;

/// The index of the parameter called `name` (any case).
pub fn find(name: &str) -> Option<usize> {
    PARAMS.iter().position(|p| p.name.eq_ignore_ascii_case(name))
}

/// Sets parameter `index` to `value`, which must lie in its range. Only a build with the
/// `tune` feature has values to set; the others refuse.
pub fn set(index: usize, value: i32) -> Result<(), String> {
    let p = PARAMS.get(index).ok_or_else(|| format!("no parameter number {index}"))?;
    if !(p.min..=p.max).contains(&value) {
        return Err(format!("{} {value} is out of range {}..{}", p.name, p.min, p.max));
    }
    #[cfg(feature = "tune")]
    {
        VALUES[index].store(value, Relaxed);
        Ok(())
    }
    #[cfg(not(feature = "tune"))]
    {
        Err(format!("{} is a constant in this build (build with --features tune)", p.name))
    }
}

/// The current value of parameter `index`.
pub fn get(index: usize) -> i32 {
    #[cfg(feature = "tune")]
    {
        VALUES[index].load(Relaxed)
    }
    #[cfg(not(feature = "tune"))]
    {
        PARAMS[index].default
    }
}

/// The table in OpenBench's SPSA input format, one parameter a line:
/// `name, int, value, min, max, c_end, r_end`.
pub fn spsa_input() -> String {
    PARAMS
        .iter()
        .enumerate()
        .map(|(i, p)| {
            format!(
                "{}, int, {:.1}, {:.1}, {:.1}, {:.1}, {}\n",
                p.name,
                f64::from(get(i)),
                f64::from(p.min),
                f64::from(p.max),
                f64::from(p.step),
                SPSA_LEARNING_RATE
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_default_lies_in_its_range_and_every_name_is_unique() {
        for (i, p) in PARAMS.iter().enumerate() {
            assert!(p.min <= p.default && p.default <= p.max, "{p:?}");
            assert!(p.step > 0 && p.step <= p.max - p.min, "{p:?}");
            assert_eq!(find(p.name), Some(i), "{p:?}");
            assert_eq!(find(&p.name.to_uppercase()), Some(i));
        }
        assert_eq!(find("no_such_parameter"), None);
    }

    #[test]
    fn the_functions_give_the_table_values() {
        // In a tune build nothing in this process sets a value, so both builds agree.
        assert_eq!(razor_margin(), PARAMS[find("razor_margin").unwrap()].default);
        assert_eq!(tm_score_drop_divisor(), 400);
        assert_eq!(get(find("lmr_divisor").unwrap()), lmr_divisor());
    }

    #[test]
    fn spsa_input_lists_every_parameter() {
        let text = spsa_input();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), PARAMS.len());
        assert_eq!(
            lines[find("rfp_margin").unwrap()],
            "rfp_margin, int, 180.0, 80.0, 300.0, 12.0, 0.002"
        );
        for (line, p) in lines.iter().zip(PARAMS) {
            let fields: Vec<&str> = line.split(", ").collect();
            assert_eq!(fields.len(), 7, "{line}");
            assert_eq!(fields[0], p.name);
            assert_eq!(fields[3].parse::<f64>().unwrap(), f64::from(p.min));
        }
    }

    #[test]
    fn out_of_range_values_are_refused() {
        let i = find("nmp_base").unwrap();
        assert!(set(i, 99).unwrap_err().contains("out of range 2..5"));
        assert!(set(PARAMS.len(), 1).is_err());
        assert_eq!(get(i), 3);
    }

    #[cfg(feature = "tune")]
    #[test]
    fn a_tune_build_sets_values() {
        let i = find("qs_evasions").unwrap();
        set(i, 5).unwrap();
        assert_eq!(qs_evasions(), 5);
        assert!(spsa_input().contains("qs_evasions, int, 5.0, 1.0, 8.0, 1.0, 0.002"));
        set(i, 3).unwrap();
        assert_eq!(qs_evasions(), 3);
    }

    #[cfg(not(feature = "tune"))]
    #[test]
    fn a_normal_build_keeps_its_constants() {
        let i = find("qs_evasions").unwrap();
        assert!(set(i, 5).unwrap_err().contains("--features tune"));
        assert_eq!(qs_evasions(), 3);
    }
}
