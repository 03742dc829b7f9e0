//! One search from its root to its outcome: the root moves (`searchmoves`, then the
//! tablebase filter), the limits as the search sees them, the threads (Lazy SMP: the main
//! thread and its helpers over one table), the wait that `infinite` and `ponder` searches
//! make for their command, the weaker pick of limited strength and the expected reply.

use std::{
    sync::atomic::Ordering::Relaxed,
    time::{Duration, Instant},
};

use shakmaty::{Chess, Move, Position};

use super::{
    strength::{self, Strength},
    tablebase_score,
    tt::TranspositionTable,
    PaddedCounter, RootMove, Shared, TablebaseProbing, Thread, ThreadData,
};
use crate::{
    api::{Control, Limits, Outcome, Report, SearchLimits, SEARCH_STACK_BYTES},
    board::{key_of, Board},
    nnue::{simd::Simd, Network},
    position::{movegen, Position as SearchPosition},
    rng::Rng,
    syzygy::Tablebases,
    types::INFINITE,
};

/// The tablebases and how the search is to probe them (the `Syzygy*` options).
#[derive(Clone, Copy, Debug)]
pub struct TablebaseSettings<'a> {
    /// The tables.
    pub tables: &'a Tablebases,
    /// Positions with at most this many pieces are probed.
    pub limit: usize,
    /// ... at this depth or deeper.
    pub depth: i32,
    /// Whether wins and losses that the fifty-move rule spoils count as draws.
    pub fifty_move_rule: bool,
}

/// Everything one search reads besides its limits and its threads' own data.
pub struct Search<'a> {
    /// The root.
    pub pos: &'a Chess,
    /// Keys of the game's positions before the root, oldest first.
    pub history: &'a [u64],
    /// The shared table.
    pub tt: &'a TranspositionTable,
    /// The net.
    pub net: &'a Network,
    /// The kernels.
    pub simd: Simd,
    /// Tablebases, when they are open.
    pub tablebases: Option<TablebaseSettings<'a>>,
    /// Weaker play, when it is asked for.
    pub strength: Option<Strength>,
    /// Principal variations the caller shows.
    pub multipv: usize,
    /// Milliseconds kept back from every move.
    pub move_overhead: u64,
}

impl Search<'_> {
    /// Searches within `limits` with one thread per entry of `threads`, calling `report`
    /// for every `info` line; returns when the search is over (for `infinite` and `ponder`
    /// searches not before `stop` or `ponderhit`). `rng` draws limited strength's choice.
    pub fn run(
        &self,
        threads: &mut [ThreadData],
        rng: &mut Rng,
        limits: &Limits,
        control: &Control,
        report: &mut dyn FnMut(&Report),
    ) -> Outcome {
        let start = Instant::now();
        let mut root_moves: Vec<Move> = self.pos.legal_moves().into_iter().collect();
        if !limits.search_moves.is_empty() {
            root_moves.retain(|m| limits.search_moves.contains(m));
        }
        let tablebases = self.tablebases.map(|tb| self.probe_root(tb, &mut root_moves));
        self.tt.new_search();
        let search_limits = self.search_limits(limits);
        let shown_lines = self.multipv;
        let lines = search_limits.multipv.min(root_moves.len());
        // Limited strength keeps several lines to choose from; the caller sees only the
        // lines it asked for.
        let report = &mut |r: &Report| {
            if r.multipv <= shown_lines {
                report(r);
            }
        };
        let shared = Shared {
            tt: self.tt,
            net: self.net,
            control,
            limits: search_limits,
            nodes: (0..threads.len()).map(|_| PaddedCounter::default()).collect(),
            start,
            tablebases,
            tbhits: (0..threads.len()).map(|_| PaddedCounter::default()).collect(),
        };
        let board = Board::new(self.pos.clone(), self.history, self.net, self.simd);
        let root_moves: Vec<_> = root_moves
            .into_iter()
            .map(|m| crate::position::Move::from_shakmaty(m).expect("chess has no drops"))
            .collect();
        let (main_data, helper_data) = threads.split_first_mut().expect("one thread");
        let strength = self.strength;

        let (best, depth) = std::thread::scope(|scope| {
            let shared = &shared;
            let mut helpers = Vec::new();
            for (i, data) in helper_data.iter_mut().enumerate() {
                let board = board.clone();
                let root_moves = &root_moves;
                let handle = std::thread::Builder::new()
                    .name(format!("search-{}", i + 1))
                    .stack_size(SEARCH_STACK_BYTES)
                    .spawn_scoped(scope, move || {
                        Thread::new(i + 1, shared, data, board, root_moves).iterate(&mut |_| {});
                    });
                match handle {
                    Ok(h) => helpers.push(h),
                    Err(e) => eprintln!("info string could not start a search thread: {e}"),
                }
            }
            let mut main = Thread::new(0, shared, main_data, board, &root_moves);
            main.iterate(report);
            // A finished infinite or ponder search waits for its `stop` or `ponderhit`.
            let mut waited = false;
            while !control.stop.load(Relaxed)
                && (limits.infinite || control.pondering.load(Relaxed))
            {
                waited = true;
                std::thread::sleep(Duration::from_millis(1));
            }
            control.stop.store(true, Relaxed);
            for h in helpers {
                let _ = h.join();
            }
            main.report_final(report, waited);
            let depth = main.completed_depth;
            if let Some(s) = strength.filter(|_| depth > 0) {
                let chosen = pick_weaker(s, &main.root_moves[..lines], rng);
                if chosen > 0 {
                    // The last line the caller sees starts with the move played.
                    let mut line = main.report(depth, chosen);
                    line.multipv = 1;
                    report(&line);
                    main.root_moves.swap(0, chosen);
                }
            }
            (main.root_moves.first().cloned(), depth)
        });

        let nodes = shared.total_nodes();
        let Some(best) = best else {
            return Outcome { nodes, ..Outcome::default() };
        };
        let best_move = best.mv.to_shakmaty();
        let ponder =
            best.pv.get(1).map(|m| m.to_shakmaty()).or_else(|| self.guess_reply(best_move));
        let (score, _) = shared.root_verdict(best.score, best.bound);
        Outcome { best: Some(best_move), ponder, score, depth, nodes }
    }

    /// How the search probes the tables; at a root they cover, `root_moves` keeps only
    /// the moves that keep the best result (and, when winning, make the fastest progress
    /// to it).
    fn probe_root<'t>(
        &self,
        tb: TablebaseSettings<'t>,
        root_moves: &mut Vec<Move>,
    ) -> TablebaseProbing<'t> {
        let mut probing = TablebaseProbing {
            tables: tb.tables,
            limit: tb.limit,
            depth: tb.depth,
            fifty_move_rule: tb.fifty_move_rule,
            root_hits: 0,
            root_score: None,
        };
        if tb.tables.covers(self.pos, probing.limit) {
            if let Some(probe) = tb.tables.root_moves(self.pos, probing.fifty_move_rule) {
                probing.root_hits = probe.probes as u64;
                let kept: Vec<Move> =
                    root_moves.iter().copied().filter(|m| probe.moves.contains(m)).collect();
                if !kept.is_empty() {
                    *root_moves = kept;
                    let (score, _) = tablebase_score(probe.wdl, 0, probing.fifty_move_rule);
                    probing.root_score = Some(score);
                }
            }
        }
        probing
    }

    /// The limits as the search sees them: the time budget, and limited strength's node
    /// counts and lines.
    fn search_limits(&self, limits: &Limits) -> SearchLimits {
        let mut search_limits = SearchLimits {
            budget: limits.budget(self.pos.turn(), self.move_overhead),
            depth: limits.depth.map(|d| d.min(i32::MAX as u32) as i32),
            nodes: limits.nodes,
            soft_nodes: limits.soft_nodes,
            mate: limits.mate,
            multipv: self.multipv,
        };
        if let Some(s) = self.strength {
            search_limits.multipv = self.multipv.max(strength::LINES);
            search_limits.soft_nodes =
                Some(search_limits.soft_nodes.map_or(s.soft_nodes(), |n| n.min(s.soft_nodes())));
            search_limits.nodes =
                Some(search_limits.nodes.map_or(s.hard_nodes(), |n| n.min(s.hard_nodes())));
        }
        search_limits
    }

    /// The stored best reply to `m`, if the table has one that is legal.
    fn guess_reply(&self, m: Move) -> Option<Move> {
        let mut after = self.pos.clone();
        after.play_unchecked(m);
        let hit = self.tt.probe(key_of(&after), 0, after.halfmoves())?;
        movegen::unpack(&SearchPosition::from_chess(&after), hit.mv).map(|m| m.to_shakmaty())
    }
}

/// The line limited-strength play chooses among `root` (best first): only lines with a
/// full score from the last iteration take part.
fn pick_weaker(strength: Strength, root: &[RootMove], rng: &mut Rng) -> usize {
    let scores: Vec<i32> =
        root.iter().map(|rm| rm.score).take_while(|&score| score > -INFINITE).collect();
    strength.pick(&scores, rng)
}
