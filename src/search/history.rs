//! Move-ordering statistics learned during the search: which quiet moves caused cutoffs
//! (butterfly history, by side and from/to squares), which captures did (capture history,
//! by moving piece, target square and captured kind), which quiet moves did after a given
//! move one and two plies earlier (continuation history), and the countermove that last
//! refuted each move.
//!
//! Every table is updated by the same "gravity" rule, `h += b - h·|b| / MAX`: a bonus
//! pulls the entry toward +MAX and a malus toward −MAX, with steps that shrink as it nears
//! the bound, so entries stay in range and recent results weigh more than old ones.

use shakmaty::Color;

use super::params;
use crate::{board::CorrectionKeys, position::Move};

/// Bound of every history entry.
pub const HISTORY_MAX: i32 = 16384;
/// Number of (piece, square) contexts: 12 pieces × 64 squares.
pub const CONTEXTS: usize = 12 * 64;

/// The bonus for a move that caused (or malus for one that failed before) a cutoff at
/// `depth`: deeper cutoffs say more, growing with the square of the depth (Stockfish
/// 12's `17d² + 134d − 134`, scaled to our table bound) up to a cap.
#[inline]
pub fn bonus(depth: i32) -> i32 {
    let b = params::history_bonus_quadratic() * depth * depth
        + params::history_bonus_per_ply() * depth
        - params::history_bonus_offset();
    b.clamp(50, params::history_bonus_max())
}

#[inline]
fn gravity(entry: &mut i16, bonus: i32) {
    let e = i32::from(*entry);
    *entry = (e + bonus - e * bonus.abs() / HISTORY_MAX) as i16;
}

/// The index of the piece of `turn` whose role has the number `role` (1 to 6, as a move
/// gives it) among the twelve: white's pawn to king, then black's.
#[inline(always)]
fn moved_piece_index(turn: Color, role: usize) -> usize {
    usize::from(turn == Color::Black) * 6 + role - 1
}

/// The context of a move for continuation history and countermoves: the piece that
/// moved (a castling king for castling) and its destination.
#[inline]
pub fn context(turn: Color, m: Move) -> usize {
    let to = match m.castling_side() {
        Some(side) => side.king_to(turn),
        None => m.to(),
    };
    moved_piece_index(turn, m.role_number()) * 64 + to as usize
}

/// Contexts of the moves one, two, four and six plies before a node (`None` where there
/// was no move, or a null move): the rows of continuation history it reads and updates.
pub type Contexts = [Option<usize>; 4];

/// Entries of the correction history, per side to move.
const CORRECTION_SIZE: usize = 1 << 14;
/// Fixed-point scale of correction entries: an entry holds 256 times the correction.
const CORRECTION_GRAIN: i32 = 256;

/// All the statistics of one search thread.
pub struct Histories {
    /// How far the static eval missed the search result, by side to move and pawn
    /// structure (fixed point, see `CORRECTION_GRAIN`).
    correction: Box<[[i16; CORRECTION_SIZE]]>,
    /// The same by side to move and one side's pieces other than pawns: `[turn][side]`.
    piece_correction: Box<[[[i16; CORRECTION_SIZE]; 2]]>,
    butterfly: Box<[[i16; 64 * 64]]>,
    capture: Box<[[[i16; 6]; 64]]>,
    continuation: Box<[[i16; CONTEXTS]]>,
    counter: Box<[Option<Move>]>,
}

impl Default for Histories {
    fn default() -> Self {
        Histories {
            correction: vec![[0; CORRECTION_SIZE]; 2].into_boxed_slice(),
            piece_correction: vec![[[0; CORRECTION_SIZE]; 2]; 2].into_boxed_slice(),
            butterfly: vec![[0; 64 * 64]; 2].into_boxed_slice(),
            capture: vec![[[0; 6]; 64]; 12].into_boxed_slice(),
            continuation: vec![[0; CONTEXTS]; CONTEXTS].into_boxed_slice(),
            counter: vec![None; CONTEXTS].into_boxed_slice(),
        }
    }
}

#[inline]
fn correction_index(pawn_key: u64) -> usize {
    (pawn_key >> (64 - CORRECTION_SIZE.trailing_zeros())) as usize
}

#[inline]
fn from_to(m: Move) -> usize {
    m.from() as usize * 64 + m.to() as usize
}

/// A move's [`context`] and butterfly index ([`from_to`]) together, a plain move's piece
/// and squares read once (the general helpers would decode it twice); castling takes the
/// general path.
#[inline]
fn quiet_indices(turn: Color, m: Move) -> (usize, usize) {
    if m.is_castle() {
        return (context(turn, m), from_to(m));
    }
    let (from, to) = (m.from() as usize, m.to() as usize);
    (moved_piece_index(turn, m.role_number()) * 64 + to, from * 64 + to)
}

impl Histories {
    /// Forgets everything (new game).
    pub fn clear(&mut self) {
        *self = Histories::default();
    }

    /// The static eval `raw` corrected by what searches of positions with the same pawn
    /// structure, and with the same pieces of either side, found, within `limit`. The
    /// pawn entry counts in full, each piece entry by `params::correction_pieces`.
    #[inline]
    pub fn corrected_eval(&self, turn: Color, keys: CorrectionKeys, raw: i32, limit: i32) -> i32 {
        let t = turn as usize;
        let pawn = i32::from(self.correction[t][correction_index(keys.pawn)]);
        let pieces: i32 = (0..2)
            .map(|side| {
                i32::from(self.piece_correction[t][side][correction_index(keys.pieces[side])])
            })
            .sum();
        let total = pawn + pieces * params::correction_pieces() / 100;
        (raw + total / CORRECTION_GRAIN).clamp(-limit, limit)
    }

    /// Moves every correction entry of the position toward `error` (search result minus
    /// static eval), by a weight that grows with the depth of the search.
    pub fn update_correction(&mut self, turn: Color, keys: CorrectionKeys, error: i32, depth: i32) {
        let max = params::correction_max() * CORRECTION_GRAIN;
        let target = (error * CORRECTION_GRAIN).clamp(-max, max);
        let weight = (depth * params::correction_weight()).min(128);
        let update = |entry: &mut i16| {
            let updated = (i32::from(*entry) * (256 - weight) + target * weight) / 256;
            *entry = updated.clamp(-max, max) as i16;
        };
        let t = turn as usize;
        update(&mut self.correction[t][correction_index(keys.pawn)]);
        for side in 0..2 {
            update(&mut self.piece_correction[t][side][correction_index(keys.pieces[side])]);
        }
    }

    /// Butterfly score of a quiet move (the tests read entries with it; the search's
    /// scores decode the move once, through `quiet_indices`).
    #[cfg(test)]
    pub fn quiet(&self, turn: Color, m: Move) -> i32 {
        i32::from(self.butterfly[turn as usize][from_to(m)])
    }

    /// History score of a quiet move, as reductions and pruning weigh it: its butterfly
    /// entry plus its continuation entries after the moves one and two plies earlier.
    #[inline]
    pub fn quiet_score(&self, turn: Color, m: Move, prev: Contexts) -> i32 {
        let (ctx, from_to) = quiet_indices(turn, m);
        let butterfly = i32::from(self.butterfly[turn as usize][from_to]);
        butterfly + self.continuation(prev[0], ctx) + self.continuation(prev[1], ctx)
    }

    /// The ordering score of quiet moves at a node (Stockfish 12's weights): the butterfly
    /// entry, twice the continuation entries after the moves one, two and four plies
    /// earlier, and the entry after the move six plies earlier. The tables that do not
    /// depend on the move are looked up once.
    #[inline]
    pub fn quiet_scorer(&self, turn: Color, prev: Contexts) -> impl Fn(Move) -> i32 + '_ {
        let butterfly = &self.butterfly[turn as usize];
        let rows = prev.map(|p| self.continuation_row(p));
        move |m| {
            let (ctx, from_to) = quiet_indices(turn, m);
            let [one, two, four, six] = rows.map(|row| i32::from(row[ctx]));
            i32::from(butterfly[from_to]) + 2 * (one + two + four) + six
        }
    }

    /// Continuation score of a move with context `ctx` after a move with context `prev`.
    #[inline]
    pub fn continuation(&self, prev: Option<usize>, ctx: usize) -> i32 {
        i32::from(self.continuation_row(prev)[ctx])
    }

    /// The continuation entries after a move with context `prev`; a missing context reads
    /// a row of zeros, so a lookup needs no test.
    #[inline]
    fn continuation_row(&self, prev: Option<usize>) -> &[i16; CONTEXTS] {
        static NO_CONTEXT: [i16; CONTEXTS] = [0; CONTEXTS];
        prev.map_or(&NO_CONTEXT, |p| &self.continuation[p])
    }

    /// Capture-history score of a capture (or promotion).
    #[inline]
    pub fn capture(&self, turn: Color, m: Move) -> i32 {
        let captured = m.capture_number().saturating_sub(1);
        i32::from(self.capture[moved_piece_index(turn, m.role_number())][m.to() as usize][captured])
    }

    /// Adds `bonus` (negative for a malus) to a quiet move's butterfly and continuation
    /// entries, given the contexts of the moves one, two, four and six plies earlier.
    pub fn update_quiet(&mut self, turn: Color, m: Move, prev: Contexts, bonus: i32) {
        gravity(&mut self.butterfly[turn as usize][from_to(m)], bonus);
        let ctx = context(turn, m);
        for p in prev.into_iter().flatten() {
            gravity(&mut self.continuation[p][ctx], bonus);
        }
    }

    /// Adds `bonus` to a capture's entry.
    pub fn update_capture(&mut self, turn: Color, m: Move, bonus: i32) {
        let captured = m.capture_number().saturating_sub(1);
        gravity(
            &mut self.capture[moved_piece_index(turn, m.role_number())][m.to() as usize][captured],
            bonus,
        );
    }

    /// The move that last refuted the move with context `prev`.
    #[inline]
    pub fn counter(&self, prev: Option<usize>) -> Option<Move> {
        prev.and_then(|p| self.counter[p])
    }

    /// Records `m` as the refutation of the move with context `prev`.
    pub fn set_counter(&mut self, prev: Option<usize>, m: Move) {
        if let Some(p) = prev {
            self.counter[p] = Some(m);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::{Role, Square};

    #[test]
    fn gravity_stays_bounded() {
        let mut h = Histories::default();
        let m = Move::quiet(Role::Knight, Square::G1, Square::F3);
        for _ in 0..1000 {
            h.update_quiet(Color::White, m, [Some(5), None, None, None], bonus(20));
        }
        assert!(h.quiet(Color::White, m) <= HISTORY_MAX);
        assert!(h.quiet(Color::White, m) > HISTORY_MAX * 9 / 10);
        for _ in 0..1000 {
            h.update_quiet(Color::White, m, [Some(5), None, None, None], -bonus(20));
        }
        assert!(h.quiet(Color::White, m) >= -HISTORY_MAX);
        assert!(h.continuation(Some(5), context(Color::White, m)) < 0);
        assert_eq!(h.quiet(Color::Black, m), 0);
    }

    /// Repeated results pull a position's correction entries toward their error, never
    /// past `correction_max` each; the entries belong to that side to move and those keys
    /// alone, each piece entry counts by `correction_pieces`, and the corrected eval stays
    /// within the limit it is given.
    #[test]
    fn the_correction_follows_the_search_and_stays_bounded() {
        let mut h = Histories::default();
        let key = CorrectionKeys {
            pawn: 0x0123_4567_89ab_cdef,
            pieces: [0x0f1e_2d3c_4b5a_6978, 0x7766_5544_3322_1100],
        };
        let other = CorrectionKeys {
            pawn: 0xfedc_ba98_7654_3210,
            pieces: [0x1111_2222_3333_4444, 0x5555_6666_7777_8888],
        };
        let same_pawns = CorrectionKeys { pawn: key.pawn, ..other };
        let pieces_weight = params::correction_pieces();
        assert_eq!(h.corrected_eval(Color::White, key, 50, 1000), 50);
        for _ in 0..50 {
            h.update_correction(Color::White, key, 20, 8);
        }
        let corrected = h.corrected_eval(Color::White, key, 50, 1000);
        let full = 50 + 20 + 2 * 20 * pieces_weight / 100;
        assert!((full - 2..=full).contains(&corrected), "{corrected}, {full}");
        let pawn_only = h.corrected_eval(Color::White, same_pawns, 50, 1000);
        assert!((68..=70).contains(&pawn_only), "{pawn_only}");
        assert_eq!(h.corrected_eval(Color::Black, key, 50, 1000), 50);
        assert_eq!(h.corrected_eval(Color::White, other, 50, 1000), 50);

        let max = params::correction_max();
        for _ in 0..200 {
            h.update_correction(Color::White, key, -10_000, 30);
        }
        // Within a unit per entry of the cap: the division toward zero leaves each entry
        // just short.
        let cap = max + 2 * max * pieces_weight / 100;
        let floor = h.corrected_eval(Color::White, key, 0, 1000);
        assert!((-cap..=-cap + 2).contains(&floor), "{floor}, {cap}");
        assert_eq!(h.corrected_eval(Color::White, key, -990, 1000), -1000);
        // A shallow result moves the entries less than a deep one.
        let (mut shallow, mut deep) = (Histories::default(), Histories::default());
        shallow.update_correction(Color::White, key, 40, 1);
        deep.update_correction(Color::White, key, 40, 6);
        let at = |h: &Histories| h.corrected_eval(Color::White, key, 0, 1000);
        assert!(0 < at(&shallow) && at(&shallow) < at(&deep), "{} {}", at(&shallow), at(&deep));
    }
}
