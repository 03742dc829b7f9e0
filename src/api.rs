//! What a search is asked and what it answers: the limits of a `go` command and the time
//! budget made of them (`search::time` makes it), the limits as the search sees them, the
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

use crate::types::Bound;

/// Stack size of a thread that runs a search: every ply keeps a move list and a picker on
/// the stack.
pub const SEARCH_STACK_BYTES: usize = 64 << 20;

/// Everything a `go` command can ask for. Times in milliseconds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    /// Remaining clock time per side (White, Black).
    pub time: [Option<u64>; 2],
    /// Increment per move per side.
    pub inc: [Option<u64>; 2],
    /// Moves until the next time control.
    pub moves_to_go: Option<u64>,
    /// Search this many plies at most.
    pub depth: Option<u32>,
    /// Search this many nodes at most.
    pub nodes: Option<u64>,
    /// Start no iteration once this many nodes are searched (a soft limit for data
    /// generation; no `go` form sets it).
    pub soft_nodes: Option<u64>,
    /// Search exactly this long.
    pub move_time: Option<u64>,
    /// Look for a mate in this many moves.
    pub mate: Option<u32>,
    /// Search until `stop`.
    pub infinite: bool,
    /// Search in the opponent's time until `ponderhit` or `stop`.
    pub ponder: bool,
    /// Restrict the root to these moves.
    pub search_moves: Vec<Move>,
}

/// The time a search may use, measured from its start (or from `ponderhit`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// Don't start another iteration after this (before the stability scaling); `None`
    /// for `movetime`, which is searched to its end.
    pub soft: Option<Duration>,
    /// Stop the search at this point, whatever it is doing.
    pub hard: Duration,
}

impl Limits {
    /// Whether a search under these limits ends without a command: it has a depth, node,
    /// time or mate limit, and is neither `infinite` nor `ponder` (which wait for `stop`
    /// or `ponderhit`).
    pub fn ends_by_itself(&self) -> bool {
        let limited = self.depth.is_some()
            || self.nodes.is_some()
            || self.move_time.is_some()
            || self.mate.is_some()
            || self.time.iter().any(Option::is_some);
        limited && !self.infinite && !self.ponder
    }
}

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
