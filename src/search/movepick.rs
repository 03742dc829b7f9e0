//! Staged move ordering and generation.
//!
//! Out of check the picker generates the noisy moves (captures and queen promotions)
//! first and the quiet ones only when their stage is reached (`crate::position::movegen`),
//! so a cutoff by the TT move or a good capture never pays for generating or scoring the
//! quiets; killers and the countermove are checked against the board on their own. The
//! moves come out as if all were generated at once and split into the two parts (see
//! `split`), which is what happens in check, with shakmaty's evasions. A noisy-only picker
//! (quiescence) never generates quiets. The transposition-table move is checked on its
//! own and tried before anything is generated: when it cuts, the node never generates
//! its moves at all.
//!
//! Order: TT move; captures that do not lose much material for their score (by victim
//! value and capture history), best first; the two killers; the countermove; quiets by butterfly plus
//! continuation history; the other captures, in the order they were found.

use arrayvec::ArrayVec;
use shakmaty::Color;

use super::{
    history::{Contexts, Histories},
    params,
    see::{see_ge, value},
};
use crate::{
    position::{
        movegen::{
            is_legal, is_noisy, legal_moves, noisy_moves, quiet_checks, quiet_moves, split, unpack,
        },
        Move, MoveList, Position,
    },
    types::PackedMove,
};

/// The exchange result a capture with ordering score `score` must reach to be tried with
/// the good ones (a fraction of its score, `params::good_capture_see_scale`).
#[inline]
fn good_capture_threshold(score: i32) -> i32 {
    -score * params::good_capture_see_scale() / 1024
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Stage {
    TtMove,
    ScoreNoisy,
    GoodNoisy,
    Killer1,
    Killer2,
    Counter,
    ScoreQuiets,
    Quiets,
    BadNoisy,
    QuietChecks,
    Done,
}

/// What the picker needs to know about the search state.
#[derive(Clone, Copy, Default)]
pub struct OrderingHints {
    /// Move from the transposition table, packed, if any (it may be from another
    /// position that shares the key: the picker only uses it if it is legal here).
    pub tt_move: Option<PackedMove>,
    /// Quiet moves that caused cutoffs at this ply.
    pub killers: [Option<Move>; 2],
    /// Contexts of the moves one, two, four and six plies earlier (continuation history).
    pub prev: Contexts,
}

/// Yields each legal move of a position once, best guesses first.
pub struct MovePicker {
    /// The legal moves, empty until the stage after the TT move generates them.
    moves: MoveList,
    /// Ordering scores, parallel to `moves` as far as a stage has scored them.
    scores: ArrayVec<i32, 256>,
    stage: Stage,
    /// Next index to select from in the current stage.
    cur: usize,
    /// `moves[..noisy]` are noisy after the split.
    noisy: usize,
    /// `moves[..bad]` are noisy moves that failed SEE, kept for the last stage.
    bad: usize,
    tt_move: Option<Move>,
    /// Whether the last move yielded is known to win at least nothing in the exchange
    /// (`see_ge(pos, m, 0)`), from the exchange test that sorted it into the good or the
    /// bad captures; `None` where no test said.
    see_nonneg: Option<bool>,
    killers: [Option<Move>; 2],
    counter: Option<Move>,
    /// Quiet moves are left out (quiescence, or late move pruning said so).
    skip_quiets: bool,
    /// Only noisy moves were asked for, out of check: only they are generated.
    noisy_only: bool,
    /// After the noisy moves, the quiet moves that give check (quiescence's first ply).
    quiet_checks: bool,
    /// `moves[noisy..]` holds the quiet moves (generated with the noisy ones in check, on
    /// their own stage otherwise).
    quiets_generated: bool,
    prev: Contexts,
    turn: Color,
}

impl MovePicker {
    /// A picker over every legal move (`with_quiets`), or over the noisy ones only. In check
    /// every evasion counts, so a picker there must be made `with_quiets`.
    pub fn new(pos: &Position, hints: OrderingHints, hist: &Histories, with_quiets: bool) -> Self {
        let tt_move = hints.tt_move.and_then(|code| unpack(pos, code));
        let tt_move = tt_move.filter(|&m| with_quiets || is_noisy(m));
        MovePicker::build(pos, hints, hist, with_quiets, tt_move, false)
    }

    /// The quiescence search's picker: as [`MovePicker::new`], but the stored move is
    /// tried even when it is quiet (it was best here before), and with `quiet_checks` a
    /// noisy-only picker then yields the quiet moves that give check, unordered: as the
    /// quiet list has them (the first ply of quiescence).
    pub fn quiescence(
        pos: &Position,
        hints: OrderingHints,
        hist: &Histories,
        with_quiets: bool,
        quiet_checks: bool,
    ) -> Self {
        let tt_move = hints.tt_move.and_then(|code| unpack(pos, code));
        MovePicker::build(pos, hints, hist, with_quiets, tt_move, quiet_checks)
    }

    /// The picker itself, built where the caller keeps it: it holds two move-sized
    /// arrays of 256 entries (3 KB), which a builder taking and returning it by value
    /// would copy.
    #[inline(always)]
    fn build(
        pos: &Position,
        hints: OrderingHints,
        hist: &Histories,
        with_quiets: bool,
        tt_move: Option<Move>,
        quiet_checks: bool,
    ) -> Self {
        MovePicker {
            moves: MoveList::new(),
            scores: ArrayVec::new(),
            stage: Stage::TtMove,
            cur: 0,
            noisy: 0,
            bad: 0,
            tt_move,
            killers: hints.killers,
            prev: hints.prev,
            counter: hist.counter(hints.prev[0]),
            skip_quiets: !with_quiets,
            noisy_only: !with_quiets,
            quiet_checks: quiet_checks && !with_quiets,
            quiets_generated: false,
            turn: pos.turn(),
            see_nonneg: None,
        }
    }

    /// Generates the noisy moves of `pos`, or in check every legal move, noisy ones first.
    /// Called once, by the stage that scores the noisy moves.
    fn generate(&mut self, pos: &Position) {
        debug_assert!(self.moves.is_empty());
        if self.noisy_only || !pos.is_check() {
            noisy_moves(pos, &mut self.moves);
            self.noisy = self.moves.len();
            return;
        }
        legal_moves(pos, &mut self.moves);
        self.noisy = split(&mut self.moves);
        self.quiets_generated = true;
    }

    /// Appends the quiet moves, unless `generate` already did, in the order the split of
    /// every legal move would leave them (see [`quiet_moves`]).
    fn generate_quiets(&mut self, pos: &Position) {
        if self.quiets_generated {
            return;
        }
        quiet_moves(pos, &mut self.moves);
        self.quiets_generated = true;
    }

    /// Number of legal moves in `pos`, the picker's position (noisy and quiet).
    pub fn legal_count(&mut self, pos: &Position) -> usize {
        if self.noisy_only || self.stage <= Stage::ScoreNoisy {
            let mut moves = MoveList::new();
            legal_moves(pos, &mut moves);
            return moves.len();
        }
        self.generate_quiets(pos);
        self.moves.len()
    }

    /// The transposition-table move, if it is legal here (and noisy, for a noisy-only
    /// picker).
    pub fn tt_move(&self) -> Option<Move> {
        self.tt_move
    }

    /// Whether the move last yielded wins at least nothing in the exchange it starts
    /// (`see_ge(pos, m, 0)`), when the test that sorted it among the captures already
    /// says so: a capture that won at least a threshold of zero or more, or lost more than
    /// one of zero or less.
    #[inline]
    pub fn see_nonneg(&self) -> Option<bool> {
        self.see_nonneg
    }

    /// Stops yielding quiet moves (late move pruning). Already yielded ones stay yielded.
    pub fn skip_quiets(&mut self) {
        self.skip_quiets = true;
    }

    /// Index of the best-scored move in `moves[from..to]`, swapped to `from`.
    fn select(&mut self, from: usize, to: usize) -> Move {
        // The first of the highest scores, as the stages' tie-breaking expects: the highest
        // found first (a reduction the compiler vectorises), then its first place.
        let scores = &self.scores[from..to];
        let high = scores.iter().copied().max().unwrap_or(i32::MIN);
        let best = from + scores.iter().position(|&s| s == high).unwrap_or(0);
        self.moves.swap(from, best);
        self.scores.swap(from, best);
        self.moves[from]
    }

    #[inline]
    fn is_special(&self, m: Move) -> bool {
        Some(m) == self.tt_move
    }

    /// A killer or countermove is yielded in its own stage only if it is a legal quiet
    /// move that no earlier stage yielded.
    fn usable_quiet(
        &self,
        pos: &Position,
        m: Option<Move>,
        earlier: &[Option<Move>],
    ) -> Option<Move> {
        let m = m?;
        let fresh = !is_noisy(m) && Some(m) != self.tt_move && !earlier.contains(&Some(m));
        (fresh && is_legal(pos, m)).then_some(m)
    }

    // The stages that generate and score run once a picker, so they are kept out of
    // `next`, which runs once a move: inlined, their set-up (the position's and the
    // histories' fields, a move list on the stack in check) became `next`'s, paid on
    // every call.

    /// Generates the noisy moves (every move in check) and scores the noisy ones.
    #[inline(never)]
    fn score_noisy(&mut self, pos: &Position, hist: &Histories) {
        self.generate(pos);
        for i in 0..self.noisy {
            let m = self.moves[i];
            let victim = m.capture().map_or(0, value);
            let promo = m.promotion().map_or(0, value);
            self.scores.push(16 * (victim + promo) + hist.capture(self.turn, m));
        }
        self.cur = 0;
        self.stage = Stage::GoodNoisy;
    }

    /// Generates the quiet moves unless that was done, and scores them.
    #[inline(never)]
    fn score_quiets(&mut self, pos: &Position, hist: &Histories) {
        self.generate_quiets(pos);
        self.scores.truncate(self.noisy);
        let score = hist.quiet_scorer(self.turn, self.prev);
        self.scores.extend(self.moves[self.noisy..].iter().map(|&m| score(m)));
    }

    /// Generates the quiet moves that give check, in the order of the quiet list. Only a
    /// noisy-only picker does this, whose `legal_count` counts afresh.
    #[inline(never)]
    fn prepare_quiet_checks(&mut self, pos: &Position) {
        debug_assert!(self.noisy_only && !self.quiets_generated);
        quiet_checks(pos, &mut self.moves);
    }

    /// The next move, or `None` when every move was yielded.
    pub fn next(&mut self, pos: &Position, hist: &Histories) -> Option<Move> {
        self.see_nonneg = None;
        loop {
            match self.stage {
                Stage::TtMove => {
                    self.stage = Stage::ScoreNoisy;
                    if let Some(m) = self.tt_move {
                        return Some(m);
                    }
                }
                Stage::ScoreNoisy => self.score_noisy(pos, hist),
                Stage::GoodNoisy => {
                    if self.cur == self.noisy {
                        self.stage = Stage::Killer1;
                        continue;
                    }
                    let m = self.select(self.cur, self.noisy);
                    self.cur += 1;
                    if self.is_special(m) {
                        continue;
                    }
                    let threshold = good_capture_threshold(self.scores[self.cur - 1]);
                    if !see_ge(pos, m, threshold) {
                        // Park it at the front for the last stage, with its score.
                        self.moves.swap(self.bad, self.cur - 1);
                        self.scores.swap(self.bad, self.cur - 1);
                        self.bad += 1;
                        continue;
                    }
                    // It wins at least `threshold`: at least nothing, if that is not less.
                    self.see_nonneg = (threshold >= 0).then_some(true);
                    return Some(m);
                }
                Stage::Killer1 => {
                    self.stage = Stage::Killer2;
                    if self.skip_quiets {
                        continue;
                    }
                    if let Some(m) = self.usable_quiet(pos, self.killers[0], &[]) {
                        return Some(m);
                    }
                }
                Stage::Killer2 => {
                    self.stage = Stage::Counter;
                    if self.skip_quiets {
                        continue;
                    }
                    if let Some(m) = self.usable_quiet(pos, self.killers[1], &[self.killers[0]]) {
                        return Some(m);
                    }
                }
                Stage::Counter => {
                    self.stage = Stage::ScoreQuiets;
                    if self.skip_quiets {
                        continue;
                    }
                    if let Some(m) = self.usable_quiet(pos, self.counter, &self.killers) {
                        return Some(m);
                    }
                    self.counter = None;
                }
                Stage::ScoreQuiets => {
                    self.stage = Stage::Quiets;
                    self.cur = self.noisy;
                    if !self.skip_quiets {
                        self.score_quiets(pos, hist);
                    }
                }
                Stage::Quiets => {
                    if self.skip_quiets || self.cur == self.moves.len() {
                        self.stage = Stage::BadNoisy;
                        self.cur = 0;
                        continue;
                    }
                    let m = self.select(self.cur, self.moves.len());
                    self.cur += 1;
                    let already = self.is_special(m)
                        || Some(m) == self.killers[0]
                        || Some(m) == self.killers[1]
                        || Some(m) == self.counter;
                    if !already {
                        return Some(m);
                    }
                }
                Stage::BadNoisy => {
                    if self.cur == self.bad {
                        self.stage = Stage::QuietChecks;
                        self.cur = self.noisy;
                        if self.quiet_checks {
                            self.prepare_quiet_checks(pos);
                        }
                        continue;
                    }
                    self.cur += 1;
                    // It lost more than its threshold: it loses, if that is not more than
                    // nothing.
                    let threshold = good_capture_threshold(self.scores[self.cur - 1]);
                    self.see_nonneg = (threshold <= 0).then_some(false);
                    return Some(self.moves[self.cur - 1]);
                }
                Stage::QuietChecks => {
                    if !self.quiet_checks || self.cur == self.moves.len() {
                        self.stage = Stage::Done;
                        continue;
                    }
                    let m = self.moves[self.cur];
                    self.cur += 1;
                    if !self.is_special(m) {
                        return Some(m);
                    }
                }
                Stage::Done => return None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::{fen::Fen, CastlingMode, Chess};

    fn position(fen: &str) -> Position {
        let pos: Chess = fen.parse::<Fen>().unwrap().into_position(CastlingMode::Standard).unwrap();
        Position::from_chess(&pos)
    }

    fn all_moves(pos: &Position) -> MoveList {
        let mut moves = MoveList::new();
        legal_moves(pos, &mut moves);
        moves
    }

    /// Staged generation leaves the moves as generating them all at once and splitting
    /// them would: the noisy ones in generation order, then the quiet ones in the order the
    /// split's swaps leave them (equal-scored quiets are tried in it).
    #[test]
    fn staged_generation_orders_as_one_split() {
        let fens = [
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
            "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
            "r3k2r/1P4P1/8/8/8/8/1p4p1/R3K2R b KQkq - 0 1",
            "r3k2r/8/8/8/4q3/8/8/R3K2R w KQkq - 0 1",
        ];
        let hist = Histories::default();
        for fen in fens {
            let pos = position(fen);
            let mut expected = all_moves(&pos);
            let noisy = split(&mut expected);
            let mut picker = MovePicker::new(&pos, OrderingHints::default(), &hist, true);
            picker.generate(&pos);
            assert_eq!(picker.noisy, noisy, "{fen}");
            assert_eq!(picker.moves[..noisy], expected[..noisy], "{fen}");
            picker.generate_quiets(&pos);
            assert_eq!(picker.moves, expected, "{fen}");
        }
    }

    /// Every legal move comes out exactly once and nothing else, whatever the hints (killers
    /// from another position included).
    #[test]
    fn yields_every_move_once() {
        let fens = [
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
            "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
            // In check: the evasions are generated at once.
            "r3k2r/8/8/8/4q3/8/8/R3K2R w KQkq - 0 1",
        ];
        let hist = Histories::default();
        for (i, fen) in fens.iter().enumerate() {
            let pos = position(fen);
            let other = position(fens[(i + 1) % fens.len()]);
            let legal = all_moves(&pos);
            let quiet: Vec<Move> = legal.iter().copied().filter(|&m| !is_noisy(m)).collect();
            let elsewhere: Vec<Move> =
                all_moves(&other).into_iter().filter(|&m| !is_noisy(m)).collect();
            let hint_sets = [
                OrderingHints::default(),
                OrderingHints {
                    tt_move: Some(legal[legal.len() / 2].packed()),
                    killers: [quiet.first().copied(), quiet.last().copied()],
                    prev: [None; 4],
                },
                OrderingHints {
                    tt_move: quiet.get(1).map(|m| m.packed()),
                    killers: [quiet.get(1).copied(), quiet.get(1).copied()],
                    prev: [Some(3), Some(700), Some(9), None],
                },
                // Killers from another position, likely illegal here.
                OrderingHints {
                    tt_move: None,
                    killers: [elsewhere.first().copied(), elsewhere.last().copied()],
                    prev: [None; 4],
                },
            ];
            for hints in hint_sets {
                let mut picker = MovePicker::new(&pos, hints, &hist, true);
                let mut seen = Vec::new();
                while let Some(m) = picker.next(&pos, &hist) {
                    assert!(legal.contains(&m), "{fen}: {m:?} is not legal");
                    assert!(!seen.contains(&m), "{fen}: {m:?} twice");
                    seen.push(m);
                }
                assert_eq!(seen.len(), legal.len(), "{fen}");
                if let Some(tt) = hints.tt_move {
                    assert_eq!(seen[0].packed(), tt);
                }
                if pos.is_check() {
                    continue; // a noisy-only picker is for positions out of check
                }
                let mut noisy_only = MovePicker::new(&pos, hints, &hist, false);
                let mut count = 0;
                while let Some(m) = noisy_only.next(&pos, &hist) {
                    assert!(is_noisy(m));
                    count += 1;
                }
                assert_eq!(count, legal.len() - quiet.len());
                assert_eq!(noisy_only.legal_count(&pos), legal.len(), "{fen}");
            }
        }
    }

    /// What the picker says of a capture's exchange is what `see_ge(pos, m, 0)` says, for
    /// every move it yields with a claim, good captures and bad ones, whatever the capture
    /// history (which moves the threshold across zero).
    #[test]
    fn the_pickers_exchange_claims_hold() {
        let fens = [
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
            "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
            "2r2rk1/pp1bqpp1/2nppn1p/8/2PNP3/2N1B3/PP2BPPP/R2Q1RK1 w - - 0 12",
            "r1b1k2r/ppq2ppp/2n1pn2/2bp4/2P5/P1N1PN2/1PQ2PPP/R1B1KB1R w KQkq - 0 8",
        ];
        let mut rng = crate::rng::Rng::new(11);
        let (mut good, mut bad) = (0, 0);
        for fen in fens {
            let pos = position(fen);
            for round in 0..20 {
                let mut hist = Histories::default();
                if round > 0 {
                    for m in all_moves(&pos).into_iter().filter(|&m| is_noisy(m)) {
                        let bonus = rng.below(20_000) as i32 - 16_000;
                        for _ in 0..3 {
                            hist.update_capture(pos.turn(), m, bonus);
                        }
                    }
                }
                for with_quiets in [true, false] {
                    let hints = OrderingHints::default();
                    let mut picker = MovePicker::new(&pos, hints, &hist, with_quiets);
                    while let Some(m) = picker.next(&pos, &hist) {
                        if let Some(claim) = picker.see_nonneg() {
                            assert_eq!(claim, see_ge(&pos, m, 0), "{fen} {m}");
                            good += usize::from(claim);
                            bad += usize::from(!claim);
                        }
                    }
                }
            }
        }
        assert!(good > 20 && bad > 20, "{good} good and {bad} bad claims");
    }
}
