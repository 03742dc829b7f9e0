//! The search: iterative deepening with aspiration windows over a principal variation
//! search (PVS) alpha-beta, a quiescence search at the leaves, and Lazy SMP threads that
//! share the transposition table.
//!
//! The steps of a node are numbered in [`Thread::search`]; each names the idea and why it
//! pays. Margins are in internal units (a pawn is about 208, see `nnue::PAWN_VALUE`).

mod stack;

use std::{
    sync::{
        atomic::{
            AtomicBool, AtomicU64,
            Ordering::{Acquire, Relaxed, Release},
        },
        OnceLock,
    },
    time::{Duration, Instant},
};

use arrayvec::ArrayVec;
use shakmaty::{Chess, Move, Position};
use shakmaty_syzygy::Wdl;

use self::stack::{Frame, PvTable};
use crate::{
    board::Board,
    history::{bonus, context, Histories},
    movepick::{is_noisy, MovePicker, OrderingHints},
    nnue::Network,
    params,
    see::{face_gain, see_ge},
    syzygy::Tablebases,
    time::{soft_scale, Budget},
    tt::{Hit, TranspositionTable},
    types::{
        mated_in, Bound, PackedMove, DEPTH_QS, DEPTH_UNSEARCHED, INFINITE, MATE, MATE_IN_MAX,
        MAX_PLY, TB_WIN, TB_WIN_IN_MAX,
    },
};

/// Static evaluations stay clear of the tablebase and mate range.
const EVAL_LIMIT: i32 = TB_WIN_IN_MAX - 1;

/// Limit on double extensions along one line, so singular lines cannot explode.
const MAX_DOUBLE_EXTENSIONS: u8 = 6;

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
        self.control.ponderhit_at.get().copied().unwrap_or(self.start).elapsed()
    }
}

/// Late move reductions by depth and move number, in plies:
/// `base + ln(depth)·ln(move)/divisor` (see `params::lmr_base`).
fn lmr_formula(depth: usize, moves: usize) -> i32 {
    if depth == 0 || moves == 0 {
        return 0;
    }
    let base = f64::from(params::lmr_base()) / 100.0;
    let divisor = f64::from(params::lmr_divisor()) / 100.0;
    (base + (depth as f64).ln() * (moves as f64).ln() / divisor) as i32
}

/// The reductions, looked up in a table built once (a tune build computes them each
/// time, since its parameters change).
#[inline]
fn reduction(depth: i32, moves: usize) -> i32 {
    let (depth, moves) = (depth.clamp(0, 63) as usize, moves.min(63));
    if cfg!(feature = "tune") {
        return lmr_formula(depth, moves);
    }
    static TABLE: OnceLock<[[i32; 64]; 64]> = OnceLock::new();
    TABLE.get_or_init(|| std::array::from_fn(|d| std::array::from_fn(|m| lmr_formula(d, m))))[depth]
        [moves]
}

/// Quiet moves searched before late move pruning skips the rest.
#[inline]
fn lmp_limit(depth: i32, improving: bool) -> usize {
    ((params::lmp_base() + depth * depth) / (2 - i32::from(improving))) as usize
}

/// Whether the side to move has a piece other than pawns and king (null-move guard:
/// zugzwang is common in pawn endings).
fn has_pieces(pos: &Chess) -> bool {
    let b = pos.board();
    (b.by_color(pos.turn()) & !b.pawns() & !b.kings()).any()
}

/// Data that a thread keeps from one search to the next.
#[derive(Default)]
pub struct ThreadData {
    /// Move-ordering statistics.
    pub hist: Histories,
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
    nodes: u64,
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

/// Offset of the root in the stack: two sentinel frames below it let every node look two
/// plies back without a check.
const STACK_OFFSET: usize = 2;

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
                })
                .collect(),
            nodes: 0,
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

    /// Counts a node and, every so often, checks whether the search must stop.
    #[inline]
    fn count_node(&mut self) {
        self.nodes += 1;
        self.shared.nodes[self.id].0.store(self.nodes, Relaxed);
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
            self.stopped = true;
        }
        self.stopped
    }

    /// A draw score with a little noise (±1) so that the search does not settle into
    /// repetitions it thinks are exactly equal to playing on.
    #[inline]
    fn draw_score(&self) -> i32 {
        1 - (self.nodes & 2) as i32
    }

    /// What every node does first: count itself, start its line (PV nodes), and end at
    /// once, with the score to return, when the search is stopping, the position is a
    /// draw by repetition, the fifty-move rule (a mate on the hundredth half-move still
    /// counts) or insufficient material, or the ply limit is reached.
    #[inline]
    fn enter<const PV: bool>(&mut self, ply: usize, in_check: bool) -> Option<i32> {
        // A stopped search counts no more nodes: a node limit is then exact.
        if self.should_stop() {
            return Some(0);
        }
        self.count_node();
        if PV {
            self.pv.clear(ply);
            self.seldepth = self.seldepth.max(ply);
        }
        let pos = self.board.pos();
        if self.board.is_repetition()
            || (pos.halfmoves() >= 100 && !(in_check && pos.legal_moves().is_empty()))
            || pos.is_insufficient_material()
        {
            return Some(self.draw_score());
        }
        if ply >= MAX_PLY - 1 {
            return Some(if in_check { 0 } else { self.board.evaluate(self.shared.net) });
        }
        None
    }

    /// Contexts of the moves one and two plies before `ply` (continuation history).
    #[inline]
    fn prev_contexts(&self, ply: usize) -> [Option<usize>; 2] {
        let i = ply + STACK_OFFSET;
        [self.stack[i - 1].ctx, self.stack[i - 2].ctx]
    }

    /// The stored move of a probe, if it has one.
    /// The tables' score and bound for the node at `ply`, probed only right after a
    /// capture or a pawn move (where the stored result is exact), with few enough pieces,
    /// and deep enough in the tree (see `SyzygyProbeDepth`).
    fn probe_wdl(&mut self, tb: &TablebaseProbing, ply: usize, depth: i32) -> Option<(i32, Bound)> {
        let pos = self.board.pos();
        if ply == 0 || pos.halfmoves() != 0 || !tb.tables.covers(pos, tb.limit) {
            return None;
        }
        let pieces = pos.board().occupied().count();
        if depth < tb.depth && pieces >= tb.limit.min(tb.tables.max_pieces()) {
            return None;
        }
        let wdl = tb.tables.wdl_after_zeroing(pos)?;
        self.tbhits += 1;
        self.shared.tbhits[self.id].0.store(self.tbhits, Relaxed);
        Some(tablebase_score(wdl, ply, tb.fifty_move_rule))
    }

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
        self.board.make(m);
        self.shared.tt.prefetch(self.board.key());
    }

    // ------------------------------------------------------------------------------------
    // Iterative deepening
    // ------------------------------------------------------------------------------------

    /// Searches deeper and deeper until a limit or `stop`. The main thread (id 0) reports
    /// through `report` and decides when to stop; helper threads just search.
    pub fn iterate(&mut self, report: &mut dyn FnMut(&Report)) {
        let limits = self.shared.limits.clone();
        let max_depth = limits.depth.unwrap_or(MAX_PLY as i32 - 1).clamp(1, MAX_PLY as i32 - 1);
        let multipv = limits.multipv.clamp(1, self.root_moves.len().max(1));
        let mut stable_iterations = 0u32;
        let mut last_best = None;
        let mut last_score = 0;
        if self.root_moves.is_empty() {
            return;
        }
        // Helper threads start one ply deeper every other thread, so the threads are
        // spread over two depths instead of racing through the same one.
        let first_depth = 1 + (self.id % 2) as i32;
        for depth in first_depth..=max_depth {
            self.root_depth = depth;
            for rm in &mut self.root_moves {
                rm.previous = rm.score;
            }
            for pv_index in 0..multipv {
                self.pv_index = pv_index;
                self.seldepth = 0;
                self.aspiration(depth, report);
                if self.should_stop() {
                    break;
                }
                // Keep the lines found so far in order.
                self.root_moves[..=pv_index].sort_by_key(|rm| -rm.score);
            }
            if self.should_stop() {
                break;
            }
            self.completed_depth = depth;
            if !self.is_main() {
                continue;
            }
            for i in 0..multipv {
                let line = self.report(depth, i);
                // The count the GUI saw, not a later one: helpers may add nodes meanwhile.
                self.reported_nodes = line.nodes;
                report(&line);
            }

            // Should another iteration start?
            let best = &self.root_moves[0];
            if let Some(mate) = limits.mate {
                if best.score >= MATE - 2 * mate as i32 {
                    break;
                }
            }
            if limits.soft_nodes.is_some_and(|n| self.shared.total_nodes() >= n) {
                break;
            }
            if last_best == Some(best.mv) {
                stable_iterations += 1;
            } else {
                stable_iterations = 0;
            }
            last_best = Some(best.mv);
            let drop = if depth > 1 { last_score - best.score } else { 0 };
            last_score = best.score;
            if let Some(budget) = limits.budget {
                if !self.shared.control.pondering.load(Acquire) {
                    // A mate seen with room to spare will not get shorter: move.
                    let mate_plies = MATE - best.score.abs();
                    if mate_plies <= MAX_PLY as i32 && depth >= 2 * mate_plies + 4 {
                        break;
                    }
                    let mut soft = budget.soft.as_secs_f64() * soft_scale(stable_iterations, drop);
                    if self.root_moves.len() == 1 {
                        soft *= 0.1; // one legal move: answer quickly
                    }
                    if self.shared.clock().as_secs_f64() >= soft {
                        break;
                    }
                }
            }
        }
    }

    /// After the search has stopped: one more report when the last is out of date (the
    /// search went on after it), so that the last lines a GUI sees show the moves to be
    /// played, their lines, and the final node count.
    pub fn report_final(&self, report: &mut dyn FnMut(&Report)) {
        if self.completed_depth == 0 || self.reported_nodes == self.shared.total_nodes() {
            return;
        }
        let multipv = self.shared.limits.multipv.clamp(1, self.root_moves.len().max(1));
        for i in 0..multipv {
            report(&self.report(self.completed_depth, i));
        }
    }

    /// One iteration for the current MultiPV line, re-searched with a widening window
    /// around the previous score until the score falls inside.
    fn aspiration(&mut self, depth: i32, report: &mut dyn FnMut(&Report)) {
        let previous = self.root_moves[self.pv_index].previous;
        let mut delta = params::aspiration_delta();
        let (mut alpha, mut beta) = if depth >= 4 && previous.abs() < TB_WIN_IN_MAX {
            ((previous - delta).max(-INFINITE), (previous + delta).min(INFINITE))
        } else {
            (-INFINITE, INFINITE)
        };
        loop {
            let score = self.search_root(alpha, beta, depth);
            self.root_moves[self.pv_index..].sort_by_key(|rm| -rm.score);
            if self.should_stop() {
                return;
            }
            let bound = if score <= alpha {
                Bound::Upper
            } else if score >= beta {
                Bound::Lower
            } else {
                Bound::Exact
            };
            if bound == Bound::Exact {
                return;
            }
            // Show long failing searches, so a GUI sees the score move.
            if self.is_main() && self.shared.start.elapsed() > Duration::from_secs(3) {
                let mut r = self.report(depth, self.pv_index);
                r.bound = bound;
                report(&r);
            }
            if bound == Bound::Upper {
                beta = (alpha + beta) / 2;
                alpha = (score - delta).max(-INFINITE);
            } else {
                beta = (score + delta).min(INFINITE);
            }
            delta += delta / 2;
        }
    }

    fn report(&self, depth: i32, index: usize) -> Report {
        let rm = &self.root_moves[index];
        let (score, bound) =
            if rm.score == -INFINITE { (rm.previous, Bound::Exact) } else { (rm.score, rm.bound) };
        let (score, bound) = self.shared.root_verdict(score, bound);
        Report {
            depth,
            seldepth: rm.seldepth.max(self.seldepth).max(depth as usize),
            multipv: index + 1,
            score,
            bound,
            nodes: self.shared.total_nodes(),
            elapsed: self.shared.start.elapsed(),
            hashfull: self.shared.tt.hashfull(),
            tbhits: self.shared.total_tbhits(),
            pv: rm.pv.clone(),
        }
    }

    /// The root: every root move from the current MultiPV index on, the first with the
    /// full window, the others with a null window (and a reduction when late and quiet)
    /// and a full re-search when they beat alpha.
    fn search_root(&mut self, mut alpha: i32, beta: i32, depth: i32) -> i32 {
        if self.should_stop() {
            return alpha;
        }
        let mut best = -INFINITE;
        self.count_node();
        let in_check = self.board.pos().is_check();
        let static_eval = if in_check { -INFINITE } else { self.board.evaluate(self.shared.net) };
        *self.frame(0) = Frame { static_eval, ..Frame::default() };
        self.frame(1).killers = [None; 2];
        self.frame(2).killers = [None; 2];
        let alpha_start = alpha;
        for i in self.pv_index..self.root_moves.len() {
            let m = self.root_moves[i].mv;
            self.make(m, 0);
            self.pv.clear(1);
            let gives_check = self.board.pos().is_check();
            let new_depth = depth - 1 + i32::from(gives_check);
            let quiet = !is_noisy(m);
            let first = i == self.pv_index;
            let mut score = -INFINITE;
            if !first {
                let r = if depth >= 3 && quiet && i - self.pv_index >= 3 {
                    (reduction(depth, i - self.pv_index) - 1).max(0)
                } else {
                    0
                };
                score = -self.search::<false>(-alpha - 1, -alpha, new_depth - r, true);
                if score > alpha && r > 0 {
                    score = -self.search::<false>(-alpha - 1, -alpha, new_depth, true);
                }
            }
            if first || score > alpha {
                score = -self.search::<true>(-beta, -alpha, new_depth, false);
            }
            self.board.unmake();
            if self.should_stop() {
                return best.max(alpha_start);
            }
            let seldepth = self.seldepth;
            let rm = &mut self.root_moves[i];
            if first || score > alpha {
                rm.score = score;
                rm.seldepth = seldepth;
                rm.bound = if score >= beta {
                    Bound::Lower
                } else if score <= alpha_start {
                    Bound::Upper
                } else {
                    Bound::Exact
                };
                rm.pv.clear();
                rm.pv.push(m);
                rm.pv.extend_from_slice(self.pv.line(1));
            } else {
                rm.score = -INFINITE;
            }
            best = best.max(score);
            if score > alpha {
                alpha = score;
                if score >= beta {
                    break;
                }
            }
        }
        best
    }

    // ------------------------------------------------------------------------------------
    // Alpha-beta
    // ------------------------------------------------------------------------------------

    /// Principal variation search below the root. `PV` nodes have an open window
    /// (`beta - alpha > 1`); the others are null-window probes, expected to fail high
    /// (`cut_node`) or low.
    fn search<const PV: bool>(
        &mut self,
        mut alpha: i32,
        mut beta: i32,
        mut depth: i32,
        cut_node: bool,
    ) -> i32 {
        let ply = self.board.ply();

        // 1. Leaves go to the quiescence search.
        if depth <= 0 {
            return self.qsearch::<PV>(alpha, beta);
        }
        // 2. Draws by repetition or the fifty-move rule, and the ply limit.
        let in_check = self.board.pos().is_check();
        if let Some(score) = self.enter::<PV>(ply, in_check) {
            return score;
        }

        // 3. Mate distance pruning: no line from here can beat a mate already found
        //    closer to the root.
        alpha = alpha.max(mated_in(ply));
        beta = beta.min(-mated_in(ply + 1));
        if alpha >= beta {
            return alpha;
        }

        // 4. Transposition table. A deep enough stored bound ends a non-PV node at once.
        //    The singular search (an excluded move) must not use or overwrite the entry of
        //    the full node.
        let excluded = self.frame(ply).excluded;
        let key = self.board.key();
        let hit = if excluded.is_none() { self.shared.tt.probe(key, ply) } else { None };
        let tt_move = self.tt_move(hit);
        let tt_pv = PV || hit.is_some_and(|h| h.pv);
        if let Some(h) = hit {
            if !PV && h.depth >= depth && h.cuts(alpha, beta) && self.board.pos().halfmoves() < 90 {
                return h.score;
            }
        }
        // 4b. Endgame tablebases, right after a capture or a pawn move: the exact result
        //     ends the node when it decides the window; at a PV node a win bounds the
        //     score from below and a loss from above.
        let mut max_score = INFINITE;
        let mut tb_floor = -INFINITE;
        if let Some(tb) = self.shared.tablebases.filter(|_| excluded.is_none()) {
            if let Some((score, bound)) = self.probe_wdl(&tb, ply, depth) {
                if bound == Bound::Exact
                    || (bound == Bound::Lower && score >= beta)
                    || (bound == Bound::Upper && score <= alpha)
                {
                    let stored_depth = (depth + 6).min(MAX_PLY as i32 - 1);
                    self.shared.tt.store(
                        key,
                        ply,
                        PackedMove::NONE,
                        score,
                        -INFINITE,
                        stored_depth,
                        bound,
                        tt_pv,
                    );
                    return score;
                }
                if PV && bound == Bound::Lower {
                    tb_floor = score;
                    alpha = alpha.max(score);
                } else if PV {
                    max_score = score;
                }
            }
        }
        let tt_capture = tt_move.is_some_and(|m| {
            self.board.pos().board().by_color(!self.board.turn()).contains(m.to())
        });

        // 5. Static evaluation, sharpened by a stored bound when one is tighter. A node is
        //    "improving" when its eval beats that of two plies ago: pruning can then be
        //    bolder, since the side to move is doing better.
        let static_eval = if in_check {
            -INFINITE
        } else if excluded.is_some() {
            self.frame(ply).static_eval
        } else if let Some(h) = hit.filter(|h| h.eval.abs() < EVAL_LIMIT) {
            h.eval
        } else {
            let e = self.board.evaluate(self.shared.net).clamp(-EVAL_LIMIT, EVAL_LIMIT);
            if hit.is_none() {
                self.shared.tt.store(
                    key,
                    ply,
                    PackedMove::NONE,
                    0,
                    e,
                    DEPTH_UNSEARCHED,
                    Bound::None,
                    tt_pv,
                );
            }
            e
        };
        let eval = hit.filter(|_| !in_check).map_or(static_eval, |h| h.refine(static_eval));
        let improving = !in_check && {
            let two_back = self.stack[ply + STACK_OFFSET - 2].static_eval;
            ply >= 2 && static_eval > two_back
        };
        self.frame(ply).static_eval = static_eval;
        self.frame(ply + 2).killers = [None; 2];
        let double_extensions =
            if ply > 0 { self.stack[ply + STACK_OFFSET - 1].double_ext } else { 0 };
        self.frame(ply).double_ext = double_extensions;

        // 6. Internal iterative reduction: without a stored move this node was never
        //    searched, so its ordering is poor; search it shallower first.
        if depth >= params::iir_min_depth() && tt_move.is_none() && (PV || cut_node) {
            depth -= 1;
        }

        if !PV && !in_check && excluded.is_none() {
            // 7. Razoring: far below alpha at low depth, only captures can save the node.
            if depth <= 2 && eval + params::razor_margin() * depth < alpha {
                let score = self.qsearch::<false>(alpha, alpha + 1);
                if score <= alpha {
                    return score;
                }
            }

            // 8. Reverse futility pruning: so far above beta that a shallow search will
            //    not fall below it.
            if depth <= params::rfp_max_depth()
                && eval - params::rfp_margin() * (depth - i32::from(improving)) >= beta
                && eval < TB_WIN_IN_MAX
            {
                return (eval + beta) / 2;
            }

            // 9. Null-move pruning: if passing still holds beta, a real move will too. Not
            //    twice in a row, and not without pieces (zugzwang).
            let last_was_null = ply > 0 && self.stack[ply + STACK_OFFSET - 1].mv.is_none();
            if depth >= params::nmp_min_depth()
                && eval >= beta
                && static_eval >= beta
                && !last_was_null
                && beta > -TB_WIN_IN_MAX
                && has_pieces(self.board.pos())
            {
                let r = params::nmp_base()
                    + depth / params::nmp_depth_divisor()
                    + ((eval - beta) / params::nmp_eval_divisor()).min(3);
                let frame = self.frame(ply);
                frame.mv = None;
                frame.ctx = None;
                self.board.make_null();
                let score = -self.search::<false>(-beta, -beta + 1, depth - r, !cut_node);
                self.board.unmake();
                if self.should_stop() {
                    return 0;
                }
                if score >= beta {
                    return if score >= TB_WIN_IN_MAX { beta } else { score };
                }
            }
        }

        // 10. The move loop.
        let prev = self.prev_contexts(ply);
        let hints = OrderingHints { tt_move, killers: self.frame(ply).killers, prev };
        let mut picker = MovePicker::new(self.board.pos(), hints, &self.data.hist, true);
        let tt_move = picker.tt_move();
        let turn = self.board.turn();
        let mut best_score = tb_floor;
        let mut best_move = None;
        let mut moves_searched = 0usize;
        let mut quiets_tried: ArrayVec<Move, 64> = ArrayVec::new();
        let mut noisy_tried: ArrayVec<Move, 32> = ArrayVec::new();
        let original_alpha = alpha;
        let may_prune = has_pieces(self.board.pos());

        while let Some(m) = picker.next(self.board.pos(), &self.data.hist) {
            if Some(m) == excluded {
                continue;
            }
            let quiet = !is_noisy(m);
            let history = if quiet {
                self.data.hist.quiet_score(turn, m, prev)
            } else {
                self.data.hist.capture(turn, m)
            };

            // 11. Shallow-depth pruning, once a move has been found that does not lose.
            if best_score > -TB_WIN_IN_MAX && may_prune {
                let lmr_depth = (depth - 1 - reduction(depth, moves_searched)).max(0);
                if quiet {
                    // Late move pruning: late quiet moves at low depth rarely matter.
                    if moves_searched >= lmp_limit(depth, improving) {
                        picker.skip_quiets();
                        continue;
                    }
                    // Futility pruning: a quiet move cannot lift a hopeless eval to alpha.
                    if !in_check
                        && lmr_depth <= 8
                        && static_eval
                            + params::futility_base()
                            + params::futility_margin() * lmr_depth
                            <= alpha
                    {
                        picker.skip_quiets();
                        continue;
                    }
                    // History pruning: moves that keep failing here are not worth a look.
                    if lmr_depth <= 3 && history < -params::history_prune() * depth {
                        continue;
                    }
                    // SEE pruning: a quiet move that hangs material.
                    let margin = -params::see_quiet_margin() * lmr_depth * lmr_depth;
                    if !see_ge(self.board.pos(), m, margin) {
                        continue;
                    }
                } else if depth <= 8
                    && !see_ge(self.board.pos(), m, -params::see_noisy_margin() * depth)
                {
                    // SEE pruning of captures that lose too much.
                    continue;
                }
            }

            // 12. Extensions. Singular: when the stored move is the only good one (every
            //     other move fails well below its score), it deserves a deeper look; when
            //     even without it the node beats beta, the node is cut (multi-cut).
            let mut extension = 0;
            if ply < 2 * self.root_depth as usize {
                if let Some(h) = hit.filter(|h| {
                    Some(m) == tt_move
                        && depth >= params::singular_min_depth()
                        && excluded.is_none()
                        && h.bound != Bound::Upper
                        && h.bound != Bound::None
                        && h.depth >= depth - 3
                        && h.score.abs() < TB_WIN_IN_MAX
                }) {
                    let singular_beta = h.score - params::singular_margin() * depth;
                    self.frame(ply).excluded = Some(m);
                    let score = self.search::<false>(
                        singular_beta - 1,
                        singular_beta,
                        (depth - 1) / 2,
                        cut_node,
                    );
                    self.frame(ply).excluded = None;
                    if self.should_stop() {
                        return 0;
                    }
                    if score < singular_beta {
                        extension = 1;
                        if !PV
                            && score < singular_beta - params::double_ext_margin()
                            && double_extensions < MAX_DOUBLE_EXTENSIONS
                        {
                            extension = 2;
                            self.frame(ply).double_ext = double_extensions + 1;
                        }
                    } else if singular_beta >= beta {
                        return singular_beta;
                    } else if h.score >= beta {
                        extension = -1;
                    }
                }
            }

            self.make(m, ply);
            if PV {
                // A child searched only with a null window leaves no line of its own; an
                // older sibling's must not be taken for it.
                self.pv.clear(ply + 1);
            }
            let gives_check = self.board.pos().is_check();
            // Check extension: a check must be answered, so the line stays forcing.
            if gives_check && extension == 0 && ply < 2 * self.root_depth as usize {
                extension = 1;
            }
            let new_depth = depth - 1 + extension;

            // 13. Late move reductions: moves late in the order are searched shallower
            //     with a null window, and again at full depth only if they beat alpha.
            let mut score;
            if depth >= 2 && moves_searched > usize::from(PV) && (quiet || !tt_pv) {
                let mut r = reduction(depth, moves_searched);
                r += i32::from(!PV);
                r -= i32::from(tt_pv);
                r += i32::from(cut_node);
                r -= i32::from(gives_check);
                r += i32::from(tt_capture && quiet);
                r -= i32::from(improving);
                r -= history / params::lmr_history_divisor();
                let reduced = (new_depth - r.max(0)).clamp(1, new_depth.max(1));
                score = -self.search::<false>(-alpha - 1, -alpha, reduced, true);
                if score > alpha && reduced < new_depth {
                    score = -self.search::<false>(-alpha - 1, -alpha, new_depth, !cut_node);
                }
            } else if !PV || moves_searched > 0 {
                score = -self.search::<false>(-alpha - 1, -alpha, new_depth, !cut_node);
            } else {
                score = -INFINITE;
            }
            // PVS: the first move of a PV node, and any later move that lands inside the
            // window, gets the full window.
            if PV && (moves_searched == 0 || (score > alpha && score < beta)) {
                score = -self.search::<true>(-beta, -alpha, new_depth, false);
            }
            self.board.unmake();
            moves_searched += 1;
            if self.should_stop() {
                return 0;
            }

            if score > best_score {
                best_score = score;
                if score > alpha {
                    best_move = Some(m);
                    if PV {
                        self.pv.update(ply, m);
                    }
                    if score >= beta {
                        break;
                    }
                    alpha = score;
                }
            }
            if Some(m) != best_move {
                if quiet {
                    let _ = quiets_tried.try_push(m);
                } else {
                    let _ = noisy_tried.try_push(m);
                }
            }
        }

        // 14. No legal move: checkmate or stalemate (or, in a singular search, only the
        //     excluded move).
        if moves_searched == 0 {
            if excluded.is_some() {
                return alpha;
            }
            return if in_check { mated_in(ply) } else { 0 };
        }

        // 15. Learn from a cutoff: reward the move that caused it, punish the ones tried
        //     before it.
        if let Some(best) = best_move.filter(|_| best_score >= beta) {
            let b =
                bonus(depth + i32::from(best_score > beta + params::history_bonus_extra_margin()));
            let hist = &mut self.data.hist;
            if !is_noisy(best) {
                let frame = &mut self.stack[ply + STACK_OFFSET];
                if frame.killers[0] != Some(best) {
                    frame.killers = [Some(best), frame.killers[0]];
                }
                hist.set_counter(prev[0], best);
                hist.update_quiet(turn, best, prev, b);
                for &q in &quiets_tried {
                    hist.update_quiet(turn, q, prev, -b);
                }
            } else {
                hist.update_capture(turn, best, b);
            }
            for &n in &noisy_tried {
                hist.update_capture(turn, n, -b);
            }
        }

        // 16. Store the result (within what the tables allow).
        if PV {
            best_score = best_score.min(max_score);
        }
        if excluded.is_none() {
            let bound = if best_score >= beta {
                Bound::Lower
            } else if PV && best_score > original_alpha {
                Bound::Exact
            } else {
                Bound::Upper
            };
            let mv = best_move.map_or(PackedMove::NONE, PackedMove::of);
            self.shared.tt.store(key, ply, mv, best_score, static_eval, depth, bound, tt_pv);
        }
        best_score
    }

    // ------------------------------------------------------------------------------------
    // Quiescence
    // ------------------------------------------------------------------------------------

    /// Searches captures (all moves when in check) until the position is quiet, so that
    /// no leaf is evaluated in the middle of an exchange. The side to move may "stand
    /// pat" on its static evaluation instead of capturing.
    fn qsearch<const PV: bool>(&mut self, mut alpha: i32, beta: i32) -> i32 {
        let ply = self.board.ply();
        let in_check = self.board.pos().is_check();
        if let Some(score) = self.enter::<PV>(ply, in_check) {
            return score;
        }

        let key = self.board.key();
        let hit = self.shared.tt.probe(key, ply);
        if let Some(h) = hit.filter(|_| !PV) {
            if h.cuts(alpha, beta) {
                return h.score;
            }
        }
        let tt_pv = PV || hit.is_some_and(|h| h.pv);

        // Stand pat.
        let static_eval;
        let mut best_score;
        if in_check {
            static_eval = -INFINITE;
            best_score = -INFINITE;
        } else {
            static_eval = match hit.filter(|h| h.eval.abs() < EVAL_LIMIT) {
                Some(h) => h.eval,
                None => self.board.evaluate(self.shared.net).clamp(-EVAL_LIMIT, EVAL_LIMIT),
            };
            best_score = static_eval;
            if let Some(h) = hit {
                best_score = h.refine(best_score);
            }
            if best_score >= beta {
                if hit.is_none() {
                    self.shared.tt.store(
                        key,
                        ply,
                        PackedMove::NONE,
                        best_score,
                        static_eval,
                        DEPTH_QS,
                        Bound::Lower,
                        false,
                    );
                }
                return best_score;
            }
            alpha = alpha.max(best_score);
        }

        let hints =
            OrderingHints { tt_move: self.tt_move(hit), killers: [None; 2], prev: [None; 2] };
        let mut picker = MovePicker::new(self.board.pos(), hints, &self.data.hist, in_check);
        let futility = static_eval + params::qs_futility_margin();
        let mut best_move = None;
        let mut moves_searched = 0;
        while let Some(m) = picker.next(self.board.pos(), &self.data.hist) {
            if best_score > -TB_WIN_IN_MAX {
                if !in_check {
                    // Losing captures cannot raise the score of a quiet position.
                    if !see_ge(self.board.pos(), m, 0) {
                        continue;
                    }
                    // Delta pruning: even winning the victim for free stays below alpha.
                    let gain = face_gain(m);
                    if futility + gain <= alpha && !m.is_promotion() {
                        best_score = best_score.max(futility + gain);
                        continue;
                    }
                } else if moves_searched >= params::qs_evasions() && !is_noisy(m) {
                    // In check, once a few evasions were tried, the quiet rest can go.
                    continue;
                }
            }
            self.make(m, ply);
            let score = -self.qsearch::<PV>(-beta, -alpha);
            self.board.unmake();
            moves_searched += 1;
            if self.should_stop() {
                return 0;
            }
            if score > best_score {
                best_score = score;
                if score > alpha {
                    best_move = Some(m);
                    if PV {
                        self.pv.update(ply, m);
                    }
                    if score >= beta {
                        break;
                    }
                    alpha = score;
                }
            }
        }
        if in_check && moves_searched == 0 && picker.legal_count() == 0 {
            return mated_in(ply);
        }
        let bound = if best_score >= beta { Bound::Lower } else { Bound::Upper };
        let mv = best_move.map_or(PackedMove::NONE, PackedMove::of);
        self.shared.tt.store(key, ply, mv, best_score, static_eval, DEPTH_QS, bound, tt_pv);
        best_score
    }
}
