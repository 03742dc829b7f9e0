//! Iterative deepening: one iteration after another, each within an aspiration window
//! around the last score, the root's record of each move, and the reports a GUI sees.
//! The root itself is searched by the node search (`node.rs`) as a node of kind `Root`.

use std::{sync::atomic::Ordering::Acquire, time::Duration};

use super::{
    movepick::{MovePicker, OrderingHints},
    node::Root,
    params,
    time::soft_scale,
    Thread,
};
use crate::{
    api::Report,
    types::{Bound, INFINITE, MATE, MAX_PLY, TB_WIN_IN_MAX},
};

impl Thread<'_> {
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
        // The score this side's last search ended with: a score well below it means the
        // game is turning, and the move deserves more time.
        let previous_move = self.data.previous_score.take();
        if self.root_moves.is_empty() {
            return;
        }
        self.order_root_moves();
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
            let mut drop = if depth > 1 { last_score - best.score } else { 0 };
            last_score = best.score;
            self.data.previous_score = Some(best.score);
            if let Some(previous) = previous_move {
                if previous.abs() < TB_WIN_IN_MAX && best.score.abs() < TB_WIN_IN_MAX {
                    drop += previous - best.score;
                }
            }
            if let Some(budget) = limits.budget {
                // A mate seen with room to spare will not get shorter: move, or, pondering,
                // wait quietly for `ponderhit`.
                let mate_plies = MATE - best.score.abs();
                if mate_plies <= MAX_PLY as i32 && depth >= 2 * mate_plies + 4 {
                    break;
                }
                if !self.shared.control.pondering.load(Acquire) {
                    if let Some(soft) = budget.soft {
                        let share = best.nodes as f64 / self.nodes.max(1) as f64;
                        let scale = soft_scale(stable_iterations, drop, share);
                        let mut soft = soft.as_secs_f64() * scale;
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
    }

    /// Puts the root moves in the order the move picker would try them (the stored move,
    /// good captures, quiets by history, bad captures last), so that the first iterations,
    /// and an iteration the clock cuts short, try the likeliest moves first instead of
    /// generation order. Later iterations keep this order behind their best moves.
    fn order_root_moves(&mut self) {
        let hit = self.probe_tt(self.board.key(), 0);
        let hints =
            OrderingHints { tt_move: self.tt_move(hit), killers: [None; 2], prev: [None; 4] };
        let pos = self.board.pos();
        let mut picker = MovePicker::new(pos, hints, &self.data.hist, true);
        let mut order = Vec::with_capacity(self.root_moves.len());
        while let Some(m) = picker.next(pos, &self.data.hist) {
            order.push(m);
        }
        self.root_moves.sort_by_key(|rm| order.iter().position(|&m| m == rm.mv));
    }

    /// After the search has stopped: one more report when the last is out of date (the
    /// search went on after it), so that the last lines a GUI sees show the moves to be
    /// played, their lines, and the final node count. `again` repeats it even when it is
    /// not, for a search that ended and then waited for `stop` or `ponderhit`: a client
    /// such as python-chess keeps only the lines that follow `ponderhit`.
    pub fn report_final(&self, report: &mut dyn FnMut(&Report), again: bool) {
        let current = self.reported_nodes == self.shared.total_nodes();
        if self.completed_depth == 0 || (current && !again) {
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
        // After each fail-high the re-search goes a ply shallower (Stockfish 12): the
        // move that failed high is usually good, and the shallower search confirms it sooner.
        let mut failed_high = 0;
        loop {
            let adjusted = (depth - failed_high).max(1);
            let score = self.search::<Root>(alpha, beta, adjusted, false);
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
                failed_high = 0;
            } else {
                beta = (score + delta).min(INFINITE);
                failed_high += 1;
            }
            delta += delta / 4 + 5;
        }
    }

    /// The `info` report of root line `index` (0-based) at `depth`.
    pub fn report(&self, depth: i32, index: usize) -> Report {
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
            pv: rm.pv.iter().map(|m| m.to_shakmaty()).collect(),
        }
    }

    /// Records what the root's search of root move `index` found: a move searched with the
    /// full window (the first of its MultiPV line, or one that beat `alpha`) gets its
    /// score, its bound against the window the root was searched with (`alpha_start`,
    /// `beta`), its selective depth and its line; any other is worth less than the best
    /// and is marked unsearched for this iteration.
    pub(super) fn update_root_move(
        &mut self,
        index: usize,
        score: i32,
        alpha_start: i32,
        alpha: i32,
        beta: i32,
    ) {
        let first = index == self.pv_index;
        let seldepth = self.seldepth;
        let child_line = self.pv.line(1);
        let rm = &mut self.root_moves[index];
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
            rm.pv.truncate(1);
            rm.pv.extend_from_slice(child_line);
        } else {
            rm.score = -INFINITE;
        }
    }
}
