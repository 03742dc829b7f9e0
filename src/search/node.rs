//! The node search: a principal variation search with its pruning, reductions and
//! extensions, the tablebase probe, and the quiescence search below it. The steps of a
//! node are numbered in [`Thread::search`], which reads as their list; the longer ones
//! are methods of their own, each under its step's number. Each names the idea and why
//! it pays.

use std::{
    ops::ControlFlow,
    sync::{atomic::Ordering::Relaxed, OnceLock},
};

use arrayvec::ArrayVec;
use shakmaty::{Color, Role};

use super::{
    history::{bonus, Contexts},
    movepick::{MovePicker, OrderingHints},
    params,
    see::{face_gain, see_ge},
    tablebase_score,
    tt::{singular_key, Hit, Record},
    TablebaseProbing, Thread, STACK_OFFSET,
};
use crate::{
    board::CorrectionKeys,
    position::{
        movegen::{gives_check, is_noisy, unpack},
        Move, Position,
    },
    types::{
        mated_in, Bound, PackedMove, DEPTH_QS, DEPTH_QS_CHECKS, DEPTH_UNSEARCHED, INFINITE,
        MAX_PLY, ONE_PLY, TB_WIN_IN_MAX,
    },
};

/// Static evaluations stay clear of the tablebase and mate range.
const EVAL_LIMIT: i32 = TB_WIN_IN_MAX - 1;

/// Late move reductions by depth and move number, in [`ONE_PLY`] units:
/// `base + ln(depth)·ln(move)/divisor` plies (see `params::lmr_base`).
fn lmr_formula(depth: usize, moves: usize) -> i32 {
    if depth == 0 || moves == 0 {
        return 0;
    }
    let base = f64::from(params::lmr_base()) / 100.0;
    let divisor = f64::from(params::lmr_divisor()) / 100.0;
    ((base + (depth as f64).ln() * (moves as f64).ln() / divisor) * f64::from(ONE_PLY)) as i32
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

/// What late move reductions weigh besides the depth and the move number.
#[derive(Clone, Copy, Debug, Default)]
struct LmrTerms {
    /// The node is on the principal variation (less reduction).
    pv: bool,
    /// The node is or was on a principal variation (less).
    tt_pv: bool,
    /// The node is expected to fail high (more).
    cut_node: bool,
    /// The move gives check (less).
    gives_check: bool,
    /// The move is quiet and the stored move a capture (more: the capture is the threat).
    quiet_after_tt_capture: bool,
    /// The static eval is improving (less).
    improving: bool,
    /// The move's history score (less for a good one, more for a bad one, by degrees).
    history: i32,
}

/// The late move reduction of the `moves`-th move (0-based) at `depth`, in [`ONE_PLY`]
/// units, never negative.
fn late_move_reduction(depth: i32, moves: usize, t: LmrTerms) -> i32 {
    let mut r = reduction(depth, moves);
    r += i32::from(!t.pv) * params::lmr_non_pv();
    r -= i32::from(t.tt_pv) * params::lmr_tt_pv();
    r += i32::from(t.cut_node) * params::lmr_cut_node();
    r -= i32::from(t.gives_check) * params::lmr_gives_check();
    r += i32::from(t.quiet_after_tt_capture) * params::lmr_tt_capture();
    r -= i32::from(t.improving) * params::lmr_improving();
    r -= t.history * ONE_PLY / params::lmr_history_divisor();
    r.max(0)
}

/// Quiet moves tried before late move pruning skips the rest.
#[inline]
fn lmp_limit(depth: i32, improving: bool) -> usize {
    ((params::lmp_base() + depth * depth) / (2 - i32::from(improving))) as usize
}

/// The kind of a node, fixed at compile time so that each kind gets its own code.
pub(super) trait NodeType {
    /// An open window (`beta - alpha > 1`): the node's line may become the principal
    /// variation.
    const PV: bool;
    /// The root: its moves come from the root-move list, in the order of the last
    /// iteration, and each one's score and line go back to it.
    const ROOT: bool;
}

/// The root of the search (a PV node).
pub(super) struct Root;
/// A node on the principal variation, searched with an open window.
pub(super) struct Pv;
/// A null-window node, expected to fail high (a cut node) or low.
pub(super) struct NonPv;

impl NodeType for Root {
    const PV: bool = true;
    const ROOT: bool = true;
}
impl NodeType for Pv {
    const PV: bool = true;
    const ROOT: bool = false;
}
impl NodeType for NonPv {
    const PV: bool = false;
    const ROOT: bool = false;
}

/// Whether the side to move has a piece other than pawns and king (null-move guard:
/// zugzwang is common in pawn endings).
fn has_pieces(pos: &Position) -> bool {
    (pos.us() & !pos.by_role(Role::Pawn) & !pos.by_role(Role::King)).any()
}

/// What a node knows of itself, gathered by steps 4 to 6 and read by the steps after.
#[derive(Clone, Copy)]
struct Node {
    /// Distance from the root.
    ply: usize,
    /// The depth to search to: as asked, less the ply that internal iterative reduction
    /// (step 6) may take.
    depth: i32,
    /// Whether the node is expected to fail high.
    cut_node: bool,
    /// Whether the side to move is in check.
    in_check: bool,
    /// The side to move.
    turn: Color,
    /// The move a singular search leaves out (step 12).
    excluded: Option<Move>,
    /// The table key (step 4): the position's, or its singular search's own.
    key: u64,
    /// What the table holds under `key`.
    hit: Option<Hit>,
    /// The stored move, before the move picker checks it.
    tt_move: Option<PackedMove>,
    /// Whether the node is or was on a principal variation.
    tt_pv: bool,
    /// The network's eval, as the table keeps it (step 5): `-INFINITE` in check and in a
    /// singular search.
    raw_eval: i32,
    /// The eval the search uses, corrected by the correction history: `-INFINITE` in check.
    static_eval: i32,
    /// The static eval, sharpened by a stored bound when one is tighter.
    eval: i32,
    /// Whether the static eval beats that of two plies before (or four).
    improving: bool,
    /// The correction history's keys, where it is read and written: not in check, not in
    /// a singular search, not at the root.
    correction_keys: Option<CorrectionKeys>,
    /// Double extensions on the line up to this node.
    double_extensions: u8,
}

/// What the tablebases leave of a node they do not end (step 4b): its score lies within
/// `floor..=ceiling`.
#[derive(Clone, Copy)]
struct TbBounds {
    /// A win's score at a PV node, `-INFINITE` otherwise.
    floor: i32,
    /// A loss's score at a PV node, `INFINITE` otherwise.
    ceiling: i32,
}

impl TbBounds {
    /// No bounds: no probe, or no bound the node can use.
    const NONE: TbBounds = TbBounds { floor: -INFINITE, ceiling: INFINITE };
}

/// The moves a node searched without their becoming its best, which a cutoff punishes
/// (step 15).
#[derive(Default)]
struct Tried {
    /// The quiet ones.
    quiets: ArrayVec<Move, 64>,
    /// The captures and promotions.
    noisy: ArrayVec<Move, 32>,
}

impl Thread<'_> {
    /// The tables' score and bound for the node at `ply`, probed only right after a
    /// capture or a pawn move (where the stored result is exact), with few enough pieces,
    /// and deep enough in the tree (see `SyzygyProbeDepth`).
    fn probe_wdl(&mut self, tb: &TablebaseProbing, ply: usize, depth: i32) -> Option<(i32, Bound)> {
        let pos = self.board.pos();
        let pieces = pos.occupied().count();
        if ply == 0 || pos.halfmoves() != 0 || !tb.tables.covers_counts(pieces, pos, tb.limit) {
            return None;
        }
        if depth < tb.depth && pieces >= tb.limit.min(tb.tables.max_pieces()) {
            return None;
        }
        // The tables read shakmaty's positions: one is built for the probe.
        let wdl = tb.tables.wdl_after_zeroing(&pos.to_chess()?)?;
        self.tbhits += 1;
        self.shared.tbhits[self.id].0.store(self.tbhits, Relaxed);
        Some(tablebase_score(wdl, ply, tb.fifty_move_rule))
    }

    // ------------------------------------------------------------------------------------
    // Alpha-beta
    // ------------------------------------------------------------------------------------

    /// The next move of a node's loop: at the root the next of the root list (counted by
    /// `root_index`), elsewhere the picker's.
    #[inline]
    fn next_move<N: NodeType>(
        &self,
        picker: &mut MovePicker,
        root_index: &mut usize,
    ) -> Option<Move> {
        if N::ROOT {
            let m = self.root_moves.get(*root_index)?.mv;
            *root_index += 1;
            Some(m)
        } else {
            picker.next(self.board.pos(), &self.data.hist)
        }
    }

    /// Principal variation search of the node at the current ply, of kind `N`: the root,
    /// a PV node with an open window (`beta - alpha > 1`), or a null-window probe expected
    /// to fail high (`cut_node`) or low. The root runs the steps of every PV node except
    /// where it differs: no draw or mate-distance exit, no reduction of its own depth, no
    /// pruning or singular extension, moves in the root list's order, each move's result
    /// recorded in that list rather than in the table or the histories, an uncorrected
    /// eval, and gentler late-move reductions (step 13).
    pub(super) fn search<N: NodeType>(
        &mut self,
        mut alpha: i32,
        mut beta: i32,
        depth: i32,
        cut_node: bool,
    ) -> i32 {
        let ply = self.board.ply();

        // 0. An upcoming repetition: the side to move can return to a position of this
        //    line, so the node is worth at least a draw to it.
        if !N::ROOT && alpha < 0 && self.board.upcoming_repetition() {
            alpha = self.draw_score();
            if alpha >= beta {
                return alpha;
            }
        }

        // 1. Leaves go to the quiescence search.
        if depth <= 0 {
            return self.qsearch::<N>(alpha, beta, true);
        }
        // 2. Draws by repetition or the fifty-move rule, and the ply limit.
        let in_check = self.board.pos().is_check();
        if let Some(score) = self.enter::<N>(ply, in_check) {
            return score;
        }

        // 3. Mate distance pruning: no line from here can beat a mate already found
        //    closer to the root.
        if !N::ROOT {
            alpha = alpha.max(mated_in(ply));
            beta = beta.min(-mated_in(ply + 1));
            if alpha >= beta {
                return alpha;
            }
        }

        // 4. Transposition table. A deep enough stored bound ends a non-PV node at once.
        //    The singular search (an excluded move) has an entry of its own, so that it
        //    neither uses nor overwrites the full node's, and yet keeps its best move
        //    and result for the next time the node asks the same question.
        let excluded = self.frame(ply).excluded;
        let key = excluded.map_or(self.board.key(), |m| singular_key(self.board.key(), m));
        let hit = self.probe_tt(key, ply);
        let tt_move = self.tt_move(hit);
        // The singular search at this ply keeps the full node's answer.
        let tt_pv = if excluded.is_some() {
            self.frame(ply).tt_pv
        } else {
            N::PV || hit.is_some_and(|h| h.pv)
        };
        self.frame(ply).tt_pv = tt_pv;
        if let Some(h) = hit {
            if !N::PV
                && h.depth >= depth
                && h.cuts(alpha, beta)
                && self.board.pos().halfmoves() < params::TT_CUTOFF_MAX_HALFMOVES
            {
                return h.score;
            }
        }
        let mut node = Node {
            ply,
            depth,
            cut_node,
            in_check,
            turn: self.board.turn(),
            excluded,
            key,
            hit,
            tt_move,
            tt_pv,
            // Set by step 5.
            raw_eval: -INFINITE,
            static_eval: -INFINITE,
            eval: -INFINITE,
            improving: false,
            correction_keys: None,
            double_extensions: 0,
        };

        // 4b. Endgame tablebases: a result that decides the window ends the node, and at
        //     a PV node one that does not bounds its score.
        let tb = match self.probe_tablebases::<N>(&node, alpha, beta) {
            ControlFlow::Break(score) => return score,
            ControlFlow::Continue(tb) => tb,
        };
        if N::PV {
            alpha = alpha.max(tb.floor);
        }

        // 5. Static evaluation, and what the node leaves on the stack for its children.
        self.evaluate_node::<N>(&mut node);
        node.double_extensions = self.ready_children::<N>(ply);

        // 6. Internal iterative reduction: without a stored move this node was never
        //    searched, so its ordering is poor; search it shallower first.
        if !N::ROOT
            && node.depth >= params::iir_min_depth()
            && tt_move.is_none()
            && (N::PV || cut_node)
        {
            node.depth -= 1;
        }
        let depth = node.depth;

        if !N::PV && !in_check && excluded.is_none() {
            let eval = node.eval;
            // 7. Razoring: far below alpha at low depth, only captures can save the node.
            if depth <= params::RAZOR_MAX_DEPTH && eval + params::razor_margin() * depth < alpha {
                let score = self.qsearch::<NonPv>(alpha, alpha + 1, true);
                if score <= alpha {
                    return score;
                }
            }

            // 8. Reverse futility pruning: so far above beta that a shallow search will
            //    not fall below it.
            if depth <= params::rfp_max_depth()
                && eval - params::rfp_margin() * (depth - i32::from(node.improving)) >= beta
                && eval < TB_WIN_IN_MAX
            {
                return (eval + beta) / 2;
            }

            // 9. Null-move pruning: if passing still holds beta, a real move will too.
            if let Some(score) = self.null_move_pruning(&node, beta) {
                return score;
            }

            // 9b. ProbCut: a capture that beats beta by a margin in a shallower search
            //     will very likely beat beta at full depth.
            if let Some(score) = self.probcut(&node, beta) {
                return score;
            }
        }

        // 10. The move loop. The root takes its moves from the root list, best of the last
        //     iteration first, from the current MultiPV line on.
        let prev = self.prev_contexts(ply);
        let hints = OrderingHints { tt_move, killers: self.frame(ply).killers, prev };
        let mut picker = MovePicker::new(self.board.pos(), hints, &self.data.hist, true);
        let tt_move = picker.tt_move();
        let tt_capture = tt_move.is_some_and(|m| m.is_capture() || m.is_promotion());
        let turn = node.turn;
        let mut best_score = tb.floor;
        let mut best_move = None;
        // Moves searched, and moves tried (searched or pruned): pruning counts the tried.
        let mut moves_searched = 0usize;
        let mut moves_tried = 0usize;
        let mut tried = Tried::default();
        let original_alpha = alpha;
        let may_prune = !N::ROOT && has_pieces(self.board.pos());
        let mut root_index = self.pv_index;

        while let Some(m) = self.next_move::<N>(&mut picker, &mut root_index) {
            if Some(m) == excluded {
                continue;
            }
            moves_tried += 1;
            let quiet = !is_noisy(m);
            let history = if quiet {
                self.data.hist.quiet_score(turn, m, prev)
            } else {
                self.data.hist.capture(turn, m)
            };

            // 11. Shallow-depth pruning, once a move has been found that does not lose.
            if best_score > -TB_WIN_IN_MAX
                && may_prune
                && self.prune_move(&node, &mut picker, m, history, moves_tried - 1, alpha)
            {
                continue;
            }

            // 12. Extensions: singular (with the multi-cut it may find), then check.
            let mut extension = match self.singular_extension::<N>(&node, m, tt_move, beta) {
                ControlFlow::Break(score) => return score,
                ControlFlow::Continue(extension) => extension,
            };

            let nodes_before = self.nodes;
            self.frame(ply).double_ext = node.double_extensions + u8::from(extension == 2);
            self.make(m, ply);
            if N::PV {
                // A child searched only with a null window leaves no line of its own; an
                // older sibling's must not be taken for it.
                self.pv.clear(ply + 1);
            }
            let checkers = self.board.pos().checkers();
            let gives_check = checkers.any();
            // Check extension: a check must be answered, so the line stays forcing. Not
            // for a check that loses material in the exchange, unless it is discovered
            // (then the moved piece is not what the opponent must answer).
            if gives_check
                && extension == 0
                && ply < params::EXTENSION_PLY_FACTOR * self.root_depth as usize
            {
                let discovered = checkers.without(m.to()).any();
                if discovered || see_ge(self.board.previous(), m, 0) {
                    extension = 1;
                }
            }
            let new_depth = depth - 1 + extension;
            // A capture or promotion is reduced only where it is likely to fail anyway (as
            // in Stockfish 12): at a node expected to cut, among the moves late move
            // pruning would skip were they quiet, or when even its victim for free leaves
            // the eval below alpha.
            let reducible_noisy = depth >= params::LMR_NOISY_MIN_DEPTH
                && (cut_node
                    || moves_tried > lmp_limit(depth, node.improving)
                    || (!in_check && node.static_eval + face_gain(m) <= alpha));

            // 13. Late move reductions: moves late in the order are searched shallower
            //     with a null window, and again at full depth only if they beat alpha.
            //     The root reduces only quiet moves from the fourth on, by a ply less.
            let mut score;
            if N::ROOT && moves_searched > 0 {
                let r = if depth >= params::ROOT_LMR_MIN_DEPTH
                    && quiet
                    && moves_searched >= params::ROOT_LMR_MIN_MOVES
                {
                    (reduction(depth, moves_searched) / ONE_PLY - params::ROOT_LMR_RELIEF).max(0)
                } else {
                    0
                };
                score = -self.search::<NonPv>(-alpha - 1, -alpha, new_depth - r, true);
                if score > alpha && r > 0 {
                    score = -self.search::<NonPv>(-alpha - 1, -alpha, new_depth, true);
                }
            } else if !N::ROOT
                && depth >= params::LMR_MIN_DEPTH
                && moves_searched > usize::from(N::PV)
                && (quiet || reducible_noisy)
            {
                let r = late_move_reduction(
                    depth,
                    moves_searched,
                    LmrTerms {
                        pv: N::PV,
                        tt_pv,
                        cut_node,
                        gives_check,
                        quiet_after_tt_capture: tt_capture && quiet,
                        improving: node.improving,
                        history,
                    },
                );
                let reduced = (new_depth - r / ONE_PLY).clamp(1, new_depth.max(1));
                score = -self.search::<NonPv>(-alpha - 1, -alpha, reduced, true);
                if score > alpha && reduced < new_depth {
                    score = -self.search::<NonPv>(-alpha - 1, -alpha, new_depth, !cut_node);
                }
            } else if !N::PV || moves_searched > 0 {
                score = -self.search::<NonPv>(-alpha - 1, -alpha, new_depth, !cut_node);
            } else {
                score = -INFINITE;
            }
            // PVS: the first move of a PV node, and any later move that lands inside the
            // window, gets the full window; at the root also one that fails high, so that
            // its line is whole.
            if N::PV && (moves_searched == 0 || (score > alpha && (N::ROOT || score < beta))) {
                score = -self.search::<Pv>(-beta, -alpha, new_depth, false);
            }
            self.board.unmake();
            moves_searched += 1;
            if self.should_stop() {
                return 0;
            }
            if N::ROOT {
                self.root_moves[root_index - 1].nodes += self.nodes - nodes_before;
                self.update_root_move(root_index - 1, score, original_alpha, alpha, beta);
            }

            if score > best_score {
                best_score = score;
                if score > alpha {
                    best_move = Some(m);
                    if N::PV {
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
                    let _ = tried.quiets.try_push(m);
                } else {
                    let _ = tried.noisy.try_push(m);
                }
            }
        }

        // 14. No legal move: checkmate or stalemate (or, in a singular search, only the
        //     excluded move). Moves that were all pruned are not that: pruning starts only
        //     once a score is in hand (a tablebase win may be one, before any move).
        if moves_tried == 0 {
            if excluded.is_some() {
                return alpha;
            }
            return if in_check { mated_in(ply) } else { 0 };
        }

        // 15. Learn from a cutoff. Not at the root, whose cutoffs are aspiration-window
        //     failures.
        if let Some(best) = best_move.filter(|_| !N::ROOT && best_score >= beta) {
            self.learn_from_cutoff(&node, best, best_score - beta, prev, &tried);
        }

        // 16. Store the result (within what the tables allow). Not the root's: the root
        //     records its moves' results in the root list.
        if N::PV {
            best_score = best_score.min(tb.ceiling);
        }
        if !N::ROOT {
            self.store_result::<N>(&node, best_move, best_score, original_alpha, beta);
        }
        best_score
    }

    /// Step 4b. Endgame tablebases, right after a capture or a pawn move (not in a
    /// singular search). The exact result ends the node when it decides the window
    /// (`Break`, with the node's score, stored in the table); otherwise, at a PV node, a
    /// win bounds the score from below and a loss from above (`Continue`).
    #[inline(always)]
    fn probe_tablebases<N: NodeType>(
        &mut self,
        node: &Node,
        alpha: i32,
        beta: i32,
    ) -> ControlFlow<i32, TbBounds> {
        let mut bounds = TbBounds::NONE;
        if let Some(tb) = self.shared.tablebases.filter(|_| node.excluded.is_none()) {
            if let Some((score, bound)) = self.probe_wdl(&tb, node.ply, node.depth) {
                if bound == Bound::Exact
                    || (bound == Bound::Lower && score >= beta)
                    || (bound == Bound::Upper && score <= alpha)
                {
                    let stored_depth =
                        (node.depth + params::TB_STORE_EXTRA_DEPTH).min(MAX_PLY as i32 - 1);
                    self.shared.tt.store(Record {
                        key: node.key,
                        ply: node.ply,
                        mv: PackedMove::NONE,
                        score,
                        eval: -INFINITE,
                        depth: stored_depth,
                        bound,
                        pv: node.tt_pv,
                    });
                    return ControlFlow::Break(score);
                }
                if N::PV && bound == Bound::Lower {
                    bounds.floor = score;
                } else if N::PV {
                    bounds.ceiling = score;
                }
            }
        }
        ControlFlow::Continue(bounds)
    }

    /// Step 5. Static evaluation, sharpened by a stored bound when one is tighter. A node
    /// is "improving" when its eval beats that of two plies ago (four when the side to
    /// move was in check then, and so had no eval): pruning can then be bolder, since the
    /// side to move is doing better.
    ///
    /// The table keeps the network's eval; the search uses it corrected by the correction
    /// history (how far evals of this pawn structure, and of these pieces of either side,
    /// missed lately). The root's eval serves only its grandchildren's "improving": it is
    /// the network's, uncorrected. Sets the node's evals and leaves its static eval on
    /// the stack.
    #[inline(always)]
    fn evaluate_node<N: NodeType>(&mut self, node: &mut Node) {
        let (ply, in_check, hit) = (node.ply, node.in_check, node.hit);
        let raw_eval = if in_check || node.excluded.is_some() {
            -INFINITE
        } else if N::ROOT {
            self.board.evaluate(self.shared.net)
        } else if let Some(h) = hit.filter(|h| h.eval.abs() < EVAL_LIMIT) {
            h.eval
        } else {
            let e = self.board.evaluate(self.shared.net).clamp(-EVAL_LIMIT, EVAL_LIMIT);
            if hit.is_none() {
                self.shared.tt.store(Record {
                    key: node.key,
                    ply,
                    mv: PackedMove::NONE,
                    score: 0,
                    eval: e,
                    depth: DEPTH_UNSEARCHED,
                    bound: Bound::None,
                    pv: node.tt_pv,
                });
            }
            e
        };
        let correction_keys = (!in_check && node.excluded.is_none() && !N::ROOT)
            .then(|| self.board.correction_keys());
        let static_eval = if in_check {
            -INFINITE
        } else if node.excluded.is_some() {
            self.frame(ply).static_eval
        } else {
            correction_keys.map_or(raw_eval, |keys| {
                self.data.hist.corrected_eval(node.turn, keys, raw_eval, EVAL_LIMIT)
            })
        };
        let eval = hit.filter(|_| !in_check).map_or(static_eval, |h| h.refine(static_eval));
        let improving = !in_check && ply >= 2 && {
            let back = |plies: usize| self.stack[ply + STACK_OFFSET - plies].static_eval;
            if back(2) != -INFINITE {
                static_eval > back(2)
            } else {
                ply >= 4 && (back(4) == -INFINITE || static_eval > back(4))
            }
        };
        self.frame(ply).static_eval = static_eval;
        node.raw_eval = raw_eval;
        node.static_eval = static_eval;
        node.eval = eval;
        node.improving = improving;
        node.correction_keys = correction_keys;
    }

    /// Readies the stack for the node's children (after step 5): no killers yet two
    /// plies on (nor, at the root, one ply on), and the double extensions of the line so
    /// far, which it returns.
    #[inline(always)]
    fn ready_children<N: NodeType>(&mut self, ply: usize) -> u8 {
        self.frame(ply + 2).killers = [None; 2];
        if N::ROOT {
            self.frame(ply + 1).killers = [None; 2];
        }
        let double_extensions =
            if ply > 0 { self.stack[ply + STACK_OFFSET - 1].double_ext } else { 0 };
        // What the children count: this for a null move's, raised by each move's own
        // double extension in the move loop.
        self.frame(ply).double_ext = double_extensions;
        double_extensions
    }

    /// Step 9. Null-move pruning: if passing still holds beta, a real move will too. Not
    /// twice in a row, and not without pieces (zugzwang). Returns the node's score when it
    /// is cut.
    #[inline(always)]
    fn null_move_pruning(&mut self, node: &Node, beta: i32) -> Option<i32> {
        let (ply, depth, eval) = (node.ply, node.depth, node.eval);
        let last_was_null = ply > 0 && self.stack[ply + STACK_OFFSET - 1].mv.is_none();
        if depth >= params::nmp_min_depth()
            && eval >= beta
            && node.static_eval >= beta
            && !last_was_null
            && beta > -TB_WIN_IN_MAX
            && has_pieces(self.board.pos())
        {
            let r = params::nmp_base()
                + depth / params::nmp_depth_divisor()
                + ((eval - beta) / params::nmp_eval_divisor()).min(params::NMP_MAX_EVAL_REDUCTION);
            let frame = self.frame(ply);
            frame.mv = None;
            frame.ctx = None;
            self.board.make_null();
            let score = -self.search::<NonPv>(-beta, -beta + 1, depth - r, !node.cut_node);
            self.board.unmake();
            if self.should_stop() {
                return Some(0);
            }
            if score >= beta {
                return Some(if score >= TB_WIN_IN_MAX { beta } else { score });
            }
        }
        None
    }

    /// Step 9b. ProbCut: a capture that beats beta by a margin in a search four plies
    /// shallower will very likely beat beta at full depth. A deep enough stored bound
    /// below that margin says not to try; one above it, for a capture, settles the node
    /// at once. Returns the node's score when it is cut.
    #[inline(always)]
    fn probcut(&mut self, node: &Node, beta: i32) -> Option<i32> {
        let (ply, depth, tt_move) = (node.ply, node.depth, node.tt_move);
        let probcut_beta = beta + params::probcut_margin()
            - params::probcut_improving() * i32::from(node.improving);
        let deep_hit = node.hit.filter(|h| {
            h.depth >= depth - params::PROBCUT_STORED_REDUCTION && h.bound != Bound::None
        });
        if depth <= params::PROBCUT_REDUCTION
            || beta.abs() >= TB_WIN_IN_MAX
            || deep_hit.is_some_and(|h| h.score < probcut_beta)
        {
            return None;
        }
        let pos = self.board.pos();
        if deep_hit.is_some_and(|h| h.bound != Bound::Upper)
            && tt_move
                .and_then(|m| unpack(pos, m))
                .is_some_and(|m| m.is_capture() || m.is_promotion())
        {
            return Some(probcut_beta);
        }
        let hints = OrderingHints { tt_move, killers: [None; 2], prev: [None; 4] };
        let mut picker = MovePicker::new(pos, hints, &self.data.hist, false);
        let threshold = probcut_beta - node.static_eval;
        let max_tries =
            params::PROBCUT_TRIES + params::PROBCUT_CUT_NODE_TRIES * usize::from(node.cut_node);
        let mut tries = 0;
        while let Some(m) = picker.next(self.board.pos(), &self.data.hist) {
            if tries >= max_tries {
                break;
            }
            if !see_ge(self.board.pos(), m, threshold) {
                continue;
            }
            tries += 1;
            self.make(m, ply);
            // A quiescence search first: only a capture that holds there is worth the
            // shallower full search.
            let mut score = -self.qsearch::<NonPv>(-probcut_beta, -probcut_beta + 1, true);
            if score >= probcut_beta {
                score = -self.search::<NonPv>(
                    -probcut_beta,
                    -probcut_beta + 1,
                    depth - params::PROBCUT_REDUCTION,
                    !node.cut_node,
                );
            }
            self.board.unmake();
            if self.should_stop() {
                return Some(0);
            }
            if score >= probcut_beta {
                if deep_hit.is_none() {
                    self.shared.tt.store(Record {
                        key: node.key,
                        ply,
                        mv: m.packed(),
                        score,
                        eval: node.raw_eval,
                        depth: depth - params::PROBCUT_STORED_REDUCTION,
                        bound: Bound::Lower,
                        pv: node.tt_pv,
                    });
                }
                return Some(score);
            }
        }
        None
    }

    /// Step 11. Shallow-depth pruning: whether to skip `m`, the move after `earlier` others
    /// were tried, whose history score is `history`. Late move pruning skips the rest of
    /// the quiet moves too.
    #[inline(always)]
    fn prune_move(
        &mut self,
        node: &Node,
        picker: &mut MovePicker,
        m: Move,
        history: i32,
        earlier: usize,
        alpha: i32,
    ) -> bool {
        let depth = node.depth;
        let lmr_depth = (depth - 1 - reduction(depth, earlier) / ONE_PLY).max(0);
        if is_noisy(m) {
            // SEE pruning of captures that lose too much.
            return depth <= params::SEE_NOISY_MAX_DEPTH
                && !see_ge(self.board.pos(), m, -params::see_noisy_margin() * depth);
        }
        // Late move pruning: late quiet moves at low depth rarely matter.
        if earlier >= lmp_limit(depth, node.improving) {
            picker.skip_quiets();
            return true;
        }
        if gives_check(self.board.pos(), m) {
            // A quiet check is forcing: only an exchange that loses too much prunes it, as
            // for captures.
            return depth <= params::SEE_NOISY_MAX_DEPTH
                && !see_ge(self.board.pos(), m, -params::see_noisy_margin() * depth);
        }
        // Futility pruning: a quiet move cannot lift a hopeless eval to alpha (one by one:
        // a later quiet move may check).
        if !node.in_check
            && lmr_depth <= params::FUTILITY_MAX_DEPTH
            && node.static_eval + params::futility_base() + params::futility_margin() * lmr_depth
                <= alpha
        {
            return true;
        }
        // History pruning: moves that keep failing here are not worth a look.
        if lmr_depth <= params::HISTORY_PRUNE_MAX_DEPTH
            && history < -params::history_prune() * depth
        {
            return true;
        }
        // SEE pruning: a quiet move that hangs material.
        let margin = -params::see_quiet_margin() * lmr_depth * lmr_depth;
        !see_ge(self.board.pos(), m, margin)
    }

    /// Step 12. Singular extension: when the stored move is the only good one (every other
    /// move fails well below its score), it deserves a deeper look (`Continue` with the
    /// extension: 1, or 2 when the others fail far below, or -1 when they beat beta but
    /// the singular bound does not); when even without it the node beats beta, the node
    /// is cut (multi-cut: `Break` with its score).
    #[inline(always)]
    fn singular_extension<N: NodeType>(
        &mut self,
        node: &Node,
        m: Move,
        tt_move: Option<Move>,
        beta: i32,
    ) -> ControlFlow<i32, i32> {
        let (ply, depth) = (node.ply, node.depth);
        let mut extension = 0;
        if !N::ROOT && ply < params::EXTENSION_PLY_FACTOR * self.root_depth as usize {
            if let Some(h) = node.hit.filter(|h| {
                Some(m) == tt_move
                    && depth >= params::singular_min_depth()
                    && node.excluded.is_none()
                    && h.bound != Bound::Upper
                    && h.bound != Bound::None
                    && h.depth >= depth - params::SINGULAR_TT_DEPTH_MARGIN
                    && h.score.abs() < TB_WIN_IN_MAX
            }) {
                let singular_beta = h.score - params::singular_margin() * depth;
                self.frame(ply).excluded = Some(m);
                let score = self.search::<NonPv>(
                    singular_beta - 1,
                    singular_beta,
                    (depth - 1) / 2,
                    node.cut_node,
                );
                self.frame(ply).excluded = None;
                if self.should_stop() {
                    return ControlFlow::Break(0);
                }
                if score < singular_beta {
                    extension = 1;
                    if !N::PV
                        && score < singular_beta - params::double_ext_margin()
                        && node.double_extensions < params::MAX_DOUBLE_EXTENSIONS
                    {
                        extension = 2;
                    }
                } else if singular_beta >= beta {
                    return ControlFlow::Break(singular_beta);
                } else if h.score >= beta {
                    extension = -1;
                }
            }
        }
        ControlFlow::Continue(extension)
    }

    /// Step 15. Learn from a cutoff by `best`, which beat beta by `margin`: reward it (as a
    /// killer, a countermove and in the histories), punish the moves tried before it.
    #[inline(always)]
    fn learn_from_cutoff(
        &mut self,
        node: &Node,
        best: Move,
        margin: i32,
        prev: Contexts,
        tried: &Tried,
    ) {
        let turn = node.turn;
        let b = bonus(node.depth + i32::from(margin > params::history_bonus_extra_margin()));
        let hist = &mut self.data.hist;
        if !is_noisy(best) {
            let frame = &mut self.stack[node.ply + STACK_OFFSET];
            if frame.killers[0] != Some(best) {
                frame.killers = [Some(best), frame.killers[0]];
            }
            hist.set_counter(prev[0], best);
            hist.update_quiet(turn, best, prev, b);
            for &q in &tried.quiets {
                hist.update_quiet(turn, q, prev, -b);
            }
        } else {
            hist.update_capture(turn, best, b);
        }
        for &n in &tried.noisy {
            hist.update_capture(turn, n, -b);
        }
    }

    /// Step 16. Stores the node's result, `best_score` from a search of the window
    /// `(original_alpha, beta)`, and corrects the static eval toward it (16b).
    #[inline(always)]
    fn store_result<N: NodeType>(
        &mut self,
        node: &Node,
        best_move: Option<Move>,
        best_score: i32,
        original_alpha: i32,
        beta: i32,
    ) {
        let bound = if best_score >= beta {
            Bound::Lower
        } else if N::PV && best_score > original_alpha {
            Bound::Exact
        } else {
            Bound::Upper
        };
        // 16b. Correct the static eval toward the result, when the result is exact or
        //      bounds it on the far side, and the best move was quiet (a capture's gain is
        //      not the eval's error).
        let static_eval = node.static_eval;
        let beyond_eval = match bound {
            Bound::Lower => best_score > static_eval,
            Bound::Upper => best_score < static_eval,
            _ => true,
        };
        let quiet_best = best_move.is_none_or(|m| !is_noisy(m));
        if let Some(keys) = node.correction_keys.filter(|_| beyond_eval && quiet_best) {
            let error = best_score - static_eval;
            self.data.hist.update_correction(node.turn, keys, error, node.depth);
        }
        self.shared.tt.store(Record {
            key: node.key,
            ply: node.ply,
            mv: best_move.map_or(PackedMove::NONE, Move::packed),
            score: best_score,
            eval: node.raw_eval,
            depth: node.depth,
            bound,
            pv: node.tt_pv,
        });
    }

    // ------------------------------------------------------------------------------------
    // Quiescence
    // ------------------------------------------------------------------------------------

    /// Searches captures (all moves when in check) until the position is quiet, so that
    /// no leaf is evaluated in the middle of an exchange. The side to move may "stand
    /// pat" on its static evaluation instead of capturing.
    /// Only `N::PV` matters here: the root is never a quiescence node. At its first ply
    /// (`checks`) it also tries the quiet moves that give check, as Stockfish 12 does: a
    /// mate or a fork by check is a tactic the captures alone do not see.
    pub(super) fn qsearch<N: NodeType>(&mut self, mut alpha: i32, beta: i32, checks: bool) -> i32 {
        let ply = self.board.ply();
        let in_check = self.board.pos().is_check();
        if let Some(score) = self.enter::<N>(ply, in_check) {
            return score;
        }

        // A result without quiet checks does not answer a search with them.
        let tt_depth = if in_check || checks { DEPTH_QS_CHECKS } else { DEPTH_QS };
        let key = self.board.key();
        let hit = self.probe_tt(key, ply);
        if let Some(h) = hit.filter(|_| !N::PV) {
            if h.depth >= tt_depth && h.cuts(alpha, beta) {
                return h.score;
            }
        }
        let tt_pv = N::PV || hit.is_some_and(|h| h.pv);

        // Stand pat, on the corrected eval (the table keeps the network's).
        let raw_eval;
        let static_eval;
        let mut best_score;
        if in_check {
            raw_eval = -INFINITE;
            static_eval = -INFINITE;
            best_score = -INFINITE;
        } else {
            raw_eval = match hit.filter(|h| h.eval.abs() < EVAL_LIMIT) {
                Some(h) => h.eval,
                None => self.board.evaluate(self.shared.net).clamp(-EVAL_LIMIT, EVAL_LIMIT),
            };
            let (turn, keys) = (self.board.turn(), self.board.correction_keys());
            static_eval = self.data.hist.corrected_eval(turn, keys, raw_eval, EVAL_LIMIT);
            best_score = static_eval;
            if let Some(h) = hit {
                best_score = h.refine(best_score);
            }
            if best_score >= beta {
                if hit.is_none() {
                    self.shared.tt.store(Record {
                        key,
                        ply,
                        mv: PackedMove::NONE,
                        score: best_score,
                        eval: raw_eval,
                        depth: DEPTH_QS,
                        bound: Bound::Lower,
                        pv: false,
                    });
                }
                return best_score;
            }
            alpha = alpha.max(best_score);
        }

        let hints =
            OrderingHints { tt_move: self.tt_move(hit), killers: [None; 2], prev: [None; 4] };
        let mut picker =
            MovePicker::quiescence(self.board.pos(), hints, &self.data.hist, in_check, checks);
        let futility = static_eval + params::qs_futility_margin();
        let mut best_move = None;
        let mut moves_searched = 0;
        while let Some(m) = picker.next(self.board.pos(), &self.data.hist) {
            if best_score > -TB_WIN_IN_MAX {
                if !in_check {
                    // Losing captures cannot raise the score of a quiet position (the
                    // picker's own exchange test may already have said).
                    let wins = picker.see_nonneg();
                    if !wins.unwrap_or_else(|| see_ge(self.board.pos(), m, 0)) {
                        continue;
                    }
                    // Delta pruning: even winning the victim for free stays below alpha
                    // (unless the move checks: the attack may win more).
                    let gain = face_gain(m);
                    if futility + gain <= alpha
                        && !m.is_promotion()
                        && !gives_check(self.board.pos(), m)
                    {
                        best_score = best_score.max(futility + gain);
                        continue;
                    }
                } else if moves_searched >= params::qs_evasions() && !is_noisy(m) {
                    // In check, once a few evasions were tried, the quiet rest can go.
                    continue;
                }
            }
            self.make(m, ply);
            let score = -self.qsearch::<N>(-beta, -alpha, false);
            self.board.unmake();
            moves_searched += 1;
            if self.should_stop() {
                return 0;
            }
            if score > best_score {
                best_score = score;
                if score > alpha {
                    best_move = Some(m);
                    if N::PV {
                        self.pv.update(ply, m);
                    }
                    if score >= beta {
                        break;
                    }
                    alpha = score;
                }
            }
        }
        if in_check && moves_searched == 0 && picker.legal_count(self.board.pos()) == 0 {
            return mated_in(ply);
        }
        let bound = if best_score >= beta { Bound::Lower } else { Bound::Upper };
        self.shared.tt.store(Record {
            key,
            ply,
            mv: best_move.map_or(PackedMove::NONE, Move::packed),
            score: best_score,
            eval: raw_eval,
            depth: tt_depth,
            bound,
            pv: tt_pv,
        });
        best_score
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reduction falls as the history score rises, by degrees: a history of a fraction
    /// of `lmr_history_divisor` already moves it, and it never goes below zero.
    #[test]
    fn the_reduction_falls_by_degrees_as_history_rises() {
        let divisor = params::lmr_history_divisor();
        let at = |history| {
            let terms = LmrTerms { cut_node: true, history, ..LmrTerms::default() };
            late_move_reduction(12, 20, terms)
        };
        let histories: Vec<i32> = (-8..=8).map(|i| i * divisor / 4).collect();
        let reductions: Vec<i32> = histories.iter().map(|&h| at(h)).collect();
        assert!(reductions.windows(2).all(|w| w[0] >= w[1]), "{reductions:?}");
        assert!(at(divisor / 4) < at(0) && at(0) < at(-divisor / 4), "{reductions:?}");
        assert!(reductions.iter().all(|&r| r >= 0), "{reductions:?}");
        assert_eq!(at(64 * divisor), 0);
    }
}
