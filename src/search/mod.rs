//! The search: iterative deepening with aspiration windows over a principal variation
//! search (PVS) alpha-beta, a quiescence search at the leaves, and Lazy SMP threads that
//! share the transposition table.
//!
//! This file holds what every thread shares and the thread's own state and bookkeeping;
//! `iterate.rs` the iterations and the root, `node.rs` the node and quiescence searches
//! (whose steps are numbered, each naming the idea and why it pays). What callers see of
//! a search (limits, control flags, reports, outcome) is in `crate::api`. Margins are in
//! internal units (a pawn is about 208, see `nnue::PAWN_VALUE`); the tunable numbers are
//! in [`params`].

//! The search's own parts:
//! - [`movepick`] orders a node's moves (staged, the stored move first, generating them
//!   with `crate::position::movegen`), [`history`] keeps the statistics
//!   that ordering, reductions and the eval correction learn from, [`see`] judges
//!   exchanges;
//! - [`pool`] runs one search from its root to its outcome, over its threads;
//! - [`tt`] is the transposition table every thread shares;
//! - [`time`] turns `go` limits into time budgets, [`params`] declares every tunable
//!   number, [`strength`] weakens play on request.

pub mod history;
mod iterate;
pub mod movepick;
mod node;
pub mod params;
pub mod pool;
pub mod see;
mod stack;
pub mod strength;
pub mod time;
pub mod tt;

use std::{
    sync::atomic::{
        AtomicU64,
        Ordering::{Acquire, Relaxed},
    },
    time::{Duration, Instant},
};

use shakmaty_syzygy::Wdl;

use self::{
    history::{context, Contexts, Histories},
    node::NodeType,
    stack::{Frame, PvTable},
    tt::{Hit, TranspositionTable},
};
use crate::{
    api::{Control, SearchLimits},
    board::Board,
    nnue::Network,
    position::{movegen::has_legal_move, Move},
    syzygy::Tablebases,
    types::{Bound, PackedMove, INFINITE, MATE_IN_MAX, MAX_PLY, TB_WIN},
};

/// A root move with what the last iterations learned about it.
#[derive(Clone, Debug)]
pub struct RootMove {
    /// The move.
    pub mv: Move,
    /// Score of the current iteration (`-INFINITE` until searched with a full window).
    pub score: i32,
    /// Score of the last completed iteration.
    pub previous: i32,
    /// Whether `score` is only a bound (the aspiration window failed).
    pub bound: Bound,
    /// Selective depth reached below this move.
    pub seldepth: usize,
    /// Principal variation, this move first.
    pub pv: Vec<Move>,
    /// Nodes this thread has searched below this move since the search began.
    pub nodes: u64,
}

/// State shared by every thread of one search.
pub struct Shared<'a> {
    /// The transposition table.
    pub tt: &'a TranspositionTable,
    /// The evaluation network.
    pub net: &'a Network,
    /// Stop and ponder flags.
    pub control: &'a Control,
    /// Limits of this search.
    pub limits: SearchLimits,
    /// Nodes searched per thread, published as the threads go.
    pub nodes: Vec<PaddedCounter>,
    /// When the search started.
    pub start: Instant,
    /// Endgame tablebases, and how to probe them.
    pub tablebases: Option<TablebaseProbing<'a>>,
    /// Tablebase probes per thread, published as the threads go.
    pub tbhits: Vec<PaddedCounter>,
}

/// Endgame tablebases as the search probes them.
#[derive(Clone, Copy, Debug)]
pub struct TablebaseProbing<'a> {
    /// The tables.
    pub tables: &'a Tablebases,
    /// Positions with at most this many pieces are probed.
    pub limit: usize,
    /// ... at this depth or deeper (or with fewer pieces than `limit`).
    pub depth: i32,
    /// Whether wins and losses that the fifty-move rule spoils count as draws.
    pub fifty_move_rule: bool,
    /// Probes made at the root before the search.
    pub root_hits: u64,
    /// The root's score from the tables (side to move), shown for lines without a mate.
    pub root_score: Option<i32>,
}

/// The score of a tablebase result at `ply` for the side to move, and what it bounds:
/// a win is worth at least `TB_WIN - ply` (a mate may be better), a loss at most its
/// negation, a draw exactly 0. With the fifty-move rule on, the wins and losses it
/// spoils are draws, a point off 0 so that the side that may still win prefers them.
pub fn tablebase_score(wdl: Wdl, ply: usize, fifty_move_rule: bool) -> (i32, Bound) {
    let win = TB_WIN - ply as i32;
    match wdl {
        Wdl::Win => (win, Bound::Lower),
        Wdl::CursedWin if !fifty_move_rule => (win, Bound::Lower),
        Wdl::CursedWin => (1, Bound::Exact),
        Wdl::Draw => (0, Bound::Exact),
        Wdl::BlessedLoss if fifty_move_rule => (-1, Bound::Exact),
        Wdl::BlessedLoss | Wdl::Loss => (-win, Bound::Upper),
    }
}

/// A node counter on its own cache line, so threads do not slow each other down.
#[derive(Debug, Default)]
#[repr(align(64))]
pub struct PaddedCounter(pub AtomicU64);

impl Shared<'_> {
    /// Nodes searched so far by every thread.
    pub fn total_nodes(&self) -> u64 {
        self.nodes.iter().map(|n| n.0.load(Relaxed)).sum()
    }

    /// The score to show for a root move: at a root the tables decide, their verdict,
    /// unless the search sees a mate.
    pub fn root_verdict(&self, score: i32, bound: Bound) -> (i32, Bound) {
        match self.tablebases.and_then(|tb| tb.root_score) {
            Some(tb) if score.abs() < MATE_IN_MAX => (tb, Bound::Exact),
            _ => (score, bound),
        }
    }

    /// Tablebase probes so far, at the root and by every thread.
    pub fn total_tbhits(&self) -> u64 {
        let root = self.tablebases.map_or(0, |tb| tb.root_hits);
        root + self.tbhits.iter().map(|n| n.0.load(Relaxed)).sum::<u64>()
    }

    /// Time on the clock: since the search started, or since `ponderhit` after a ponder.
    pub fn clock(&self) -> Duration {
        self.control.ponderhit_at().unwrap_or(self.start).elapsed()
    }
}

/// Data that a thread keeps from one search to the next.
#[derive(Default)]
pub struct ThreadData {
    /// Move-ordering statistics.
    pub hist: Histories,
    /// The score the last search by this thread ended with, from the side to move's view
    /// (the main thread's steers time management).
    pub previous_score: Option<i32>,
}

impl ThreadData {
    /// Forgets the game (`ucinewgame`).
    pub fn clear(&mut self) {
        self.hist.clear();
        self.previous_score = None;
    }
}

/// One search thread at work.
pub struct Thread<'a> {
    id: usize,
    shared: &'a Shared<'a>,
    data: &'a mut ThreadData,
    board: Board,
    stack: Vec<Frame>,
    pv: PvTable,
    /// Root moves of this thread, best first after each iteration.
    pub root_moves: Vec<RootMove>,
    /// Moves made by the search, null moves aside: Stockfish's node count, what `go
    /// nodes`, `info nodes` and the bench count.
    nodes: u64,
    /// Nodes entered (the root, every search and quiescence call, re-searches included):
    /// the draw score's noise.
    entered: u64,
    tbhits: u64,
    seldepth: usize,
    root_depth: i32,
    pv_index: usize,
    stopped: bool,
    /// Deepest completed iteration.
    pub completed_depth: i32,
    /// Node count of the last report (main thread).
    reported_nodes: u64,
}

/// Offset of the root in the stack: six sentinel frames below it let every node look six
/// plies back without a check.
const STACK_OFFSET: usize = 6;

impl<'a> Thread<'a> {
    /// A thread searching `board`'s root over `root_moves`.
    pub fn new(
        id: usize,
        shared: &'a Shared<'a>,
        data: &'a mut ThreadData,
        board: Board,
        root_moves: &[Move],
    ) -> Thread<'a> {
        Thread {
            id,
            shared,
            data,
            board,
            stack: vec![Frame::default(); MAX_PLY + STACK_OFFSET + 2],
            pv: PvTable::new(),
            root_moves: root_moves
                .iter()
                .map(|&mv| RootMove {
                    mv,
                    score: -INFINITE,
                    previous: -INFINITE,
                    bound: Bound::Upper,
                    seldepth: 0,
                    pv: vec![mv],
                    nodes: 0,
                })
                .collect(),
            nodes: 0,
            entered: 0,
            tbhits: 0,
            seldepth: 0,
            root_depth: 0,
            pv_index: 0,
            stopped: false,
            completed_depth: 0,
            reported_nodes: 0,
        }
    }

    #[inline]
    fn frame(&mut self, ply: usize) -> &mut Frame {
        &mut self.stack[ply + STACK_OFFSET]
    }

    #[inline]
    fn is_main(&self) -> bool {
        self.id == 0
    }

    /// Counts a move made and, every so often, checks whether the search must stop.
    #[inline(always)]
    fn count_node(&mut self) {
        self.nodes += 1;
        self.shared.nodes[self.id].0.store(self.nodes, Relaxed);
        if self.shared.limits.nodes.is_some() || self.nodes.is_multiple_of(1024) {
            self.check_limits();
        }
    }

    /// The node limit and the clock, out of line: without a node limit only one node in
    /// 1,024 comes here (with one, every node does, as every node did before).
    #[cold]
    #[inline(never)]
    fn check_limits(&mut self) {
        // Every thread watches the node limit, so that helpers running while the main
        // thread waits for a core stop too: the main thread at every node, helpers every
        // 64 (the sum reads every thread's counter).
        if let Some(limit) = self.shared.limits.nodes {
            if (self.is_main() || self.nodes.is_multiple_of(64))
                && self.shared.total_nodes() >= limit
            {
                self.shared.control.stop.store(true, Relaxed);
            }
        }
        if self.is_main()
            && self.nodes.is_multiple_of(1024)
            && self.completed_depth >= 1
            && self.out_of_time()
        {
            self.shared.control.stop.store(true, Relaxed);
        }
    }

    /// Whether the hard time limit has passed (never while pondering).
    fn out_of_time(&self) -> bool {
        let Some(budget) = self.shared.limits.budget else {
            return false;
        };
        !self.shared.control.pondering.load(Acquire) && self.shared.clock() >= budget.hard
    }

    #[inline]
    fn should_stop(&mut self) -> bool {
        if !self.stopped && self.shared.control.stop.load(Relaxed) {
            // The main thread finishes its first iteration (about a millisecond) before
            // it heeds a `stop`, so that the move it answers was searched; a node limit
            // still stops it at once, so that the count is exact.
            let first_iteration = self.is_main() && self.completed_depth == 0;
            self.stopped = !first_iteration || self.shared.limits.nodes.is_some();
        }
        self.stopped
    }

    /// A draw score with a little noise (±1) so that the search does not settle into
    /// repetitions it thinks are exactly equal to playing on.
    #[inline]
    fn draw_score(&self) -> i32 {
        1 - (self.entered & 2) as i32
    }

    /// What every node does first: count itself as entered, start its line (PV nodes),
    /// and end at once, with the score to return, when the search is stopping, or (below
    /// the root, which must find a move) when the position is a draw by repetition, the
    /// fifty-move rule (a mate on the hundredth half-move still counts) or insufficient
    /// material, or the ply limit is reached.
    #[inline]
    fn enter<N: NodeType>(&mut self, ply: usize, in_check: bool) -> Option<i32> {
        if self.should_stop() {
            return Some(0);
        }
        self.entered += 1;
        if N::PV {
            self.pv.clear(ply);
            self.seldepth = self.seldepth.max(ply);
        }
        if N::ROOT {
            return None;
        }
        let pos = self.board.pos();
        if self.board.is_repetition()
            || (pos.halfmoves() >= 100 && (!in_check || has_legal_move(pos)))
            || pos.is_insufficient_material()
        {
            return Some(self.draw_score());
        }
        if ply >= MAX_PLY - 1 {
            return Some(if in_check { 0 } else { self.board.evaluate(self.shared.net) });
        }
        None
    }

    /// Contexts of the moves one, two, four and six plies before `ply` (continuation
    /// history).
    #[inline]
    fn prev_contexts(&self, ply: usize) -> Contexts {
        let i = ply + STACK_OFFSET;
        [1, 2, 4, 6].map(|back| self.stack[i - back].ctx)
    }

    /// The table's entry for `key` at `ply`, its mate scores read against this position's
    /// fifty-move counter.
    #[inline]
    fn probe_tt(&self, key: u64, ply: usize) -> Option<Hit> {
        self.shared.tt.probe(key, ply, self.board.pos().halfmoves())
    }

    /// The stored move of a probe, if it has one.
    fn tt_move(&self, hit: Option<Hit>) -> Option<PackedMove> {
        hit.and_then(|h| h.mv.some())
    }

    /// Plays `m` and records it on the stack.
    #[inline]
    fn make(&mut self, m: Move, ply: usize) {
        let turn = self.board.turn();
        let frame = self.frame(ply);
        frame.mv = Some(m);
        frame.ctx = Some(context(turn, m));
        // A stopped search counts no more moves: a node limit is then exact.
        if !self.should_stop() {
            self.count_node();
        }
        self.board.make(m);
        self.shared.tt.prefetch(self.board.key());
    }
}
