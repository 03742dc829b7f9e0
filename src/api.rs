//! What a search is asked and what it answers: the limits as the search sees them, the
//! flags that steer a running search, the `info` reports and the final outcome. The
//! engine, the UCI loop, `bench`, datagen and the tests speak to the search in these
//! types; the search's insides stay in `search/`.

use std::{
    sync::{
        atomic::{AtomicBool, Ordering::Release},
        OnceLock,
    },
    time::{Duration, Instant},
};

use shakmaty::Move;

use crate::{search::time::Budget, types::Bound};

/// One line of `info` output.
#[derive(Clone, Debug)]
pub struct Report {
    /// Iteration depth.
    pub depth: i32,
    /// Deepest ply reached.
    pub seldepth: usize,
    /// 1-based index of the line (MultiPV).
    pub multipv: usize,
    /// Score from the side to move's view, internal units or mate.
    pub score: i32,
    /// `Exact`, or the direction of an aspiration failure.
    pub bound: Bound,
    /// Nodes searched by every thread.
    pub nodes: u64,
    /// Time since the search began.
    pub elapsed: Duration,
    /// Permille of the hash table filled.
    pub hashfull: usize,
    /// Tablebase probes so far.
    pub tbhits: u64,
    /// The line.
    pub pv: Vec<Move>,
}

/// What a finished search recommends.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// Best move, `None` in checkmate or stalemate.
    pub best: Option<Move>,
    /// Expected reply, for pondering.
    pub ponder: Option<Move>,
    /// Score of the best move.
    pub score: i32,
    /// Last completed depth.
    pub depth: i32,
    /// Nodes searched by every thread.
    pub nodes: u64,
}

/// Flags the UCI thread uses to steer a running search.
#[derive(Debug, Default)]
pub struct Control {
    /// Set to stop every thread as soon as possible.
    pub stop: AtomicBool,
    /// Set while pondering; cleared by [`Control::ponderhit`], which starts the clock.
    pub pondering: AtomicBool,
    /// When `ponderhit` arrived: the time budget counts from here, not from the `go`.
    ponderhit_at: OnceLock<Instant>,
}

impl Control {
    /// When `ponderhit` arrived, if it has.
    pub fn ponderhit_at(&self) -> Option<Instant> {
        self.ponderhit_at.get().copied()
    }

    /// The opponent played the expected move: the search goes on, now on the clock.
    pub fn ponderhit(&self) {
        let _ = self.ponderhit_at.set(Instant::now());
        // Release, paired with the search's Acquire: a search that sees the ponder over
        // sees when it ended.
        self.pondering.store(false, Release);
    }
}

/// Limits as the search itself sees them.
#[derive(Clone, Debug, Default)]
pub struct SearchLimits {
    /// Time budget, from the start of the search (or from `ponderhit`).
    pub budget: Option<Budget>,
    /// Deepest iteration.
    pub depth: Option<i32>,
    /// Node limit over all threads.
    pub nodes: Option<u64>,
    /// No new iteration once this many nodes are searched.
    pub soft_nodes: Option<u64>,
    /// Stop once a mate in at most this many moves is found.
    pub mate: Option<u32>,
    /// Number of principal variations.
    pub multipv: usize,
}
