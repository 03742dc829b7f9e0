//! The scalar vocabulary every layer shares: plies, scores and mates, score bounds,
//! named depths, and the 16-bit move the transposition table stores. The search, the
//! table and the protocol all speak it; none of them owns it.

use shakmaty::{Move, Square};

/// Deepest ply the search reaches (the stacks are this deep).
pub const MAX_PLY: usize = 128;

/// Score of a checkmate on the board; mate in n plies scores `MATE - n`.
pub const MATE: i32 = 32_000;
/// Scores beyond this (in absolute value) are mates.
pub const MATE_IN_MAX: i32 = MATE - 2 * MAX_PLY as i32;
/// Larger than every score.
pub const INFINITE: i32 = MATE + 1;
/// Score of a tablebase win at the root; a win found `ply` plies below it scores
/// `TB_WIN - ply`. Below every mate, above every evaluation.
pub const TB_WIN: i32 = MATE_IN_MAX - 1;
/// Scores beyond this (in absolute value) are tablebase wins or mates: decided games.
pub const TB_WIN_IN_MAX: i32 = TB_WIN - MAX_PLY as i32;

/// Score of being mated at `ply`.
#[inline]
pub fn mated_in(ply: usize) -> i32 {
    -MATE + ply as i32
}

/// Score of mating at `ply`.
#[inline]
pub fn mate_in(ply: usize) -> i32 {
    MATE - ply as i32
}

/// Whether `score` announces a forced mate, for either side.
#[inline]
pub fn is_mate(score: i32) -> bool {
    score.abs() >= MATE_IN_MAX
}

/// Depth stored for a quiescence-search result that tried quiet checks (or was in
/// check): it answers a quiescence search with or without them.
pub const DEPTH_QS_CHECKS: i32 = 0;
/// Depth stored for a quiescence-search result of captures alone.
pub const DEPTH_QS: i32 = -1;
/// Depth stored for an entry that holds only a static evaluation.
pub const DEPTH_UNSEARCHED: i32 = -2;

/// A ply in the units late move reductions are counted in, so that history, node type
/// and the other adjustments can reduce by fractions of a ply.
pub const ONE_PLY: i32 = 1024;

/// How a score relates to the true value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// No score (only a move or a static evaluation is known).
    None = 0,
    /// The true score is at most this (the search failed low).
    Upper = 1,
    /// The true score is at least this (the search failed high).
    Lower = 2,
    /// The true score.
    Exact = 3,
}

/// Whether `score` announces a decided game (a mate or a tablebase win), for either side.
#[inline]
pub fn is_decisive(score: i32) -> bool {
    score.abs() >= TB_WIN_IN_MAX
}

/// Converts a score from root-relative to node-relative before storing it: a mate (or
/// tablebase win) found `ply` plies below the root is that much closer seen from the node.
#[inline]
pub fn score_to_tt(score: i32, ply: usize) -> i32 {
    if score >= TB_WIN_IN_MAX {
        score + ply as i32
    } else if score <= -TB_WIN_IN_MAX {
        score - ply as i32
    } else {
        score
    }
}

/// Converts a stored node-relative score back to root-relative at `ply`. A mate farther
/// from the node than the fifty-move rule still allows (`halfmoves` plies have gone by
/// without a capture or a pawn move) may be a draw: it comes back as the best score short
/// of a mate, a win the search has not proven (Stockfish's reading).
#[inline]
pub fn score_from_tt(score: i32, ply: usize, halfmoves: u32) -> i32 {
    let fifty_move_plies_left = 99 - halfmoves as i32;
    if score >= TB_WIN_IN_MAX {
        if score >= MATE_IN_MAX && MATE - score > fifty_move_plies_left {
            return TB_WIN;
        }
        score - ply as i32
    } else if score <= -TB_WIN_IN_MAX {
        if score <= -MATE_IN_MAX && MATE + score > fifty_move_plies_left {
            return -TB_WIN;
        }
        score + ply as i32
    } else {
        score
    }
}

/// A move in 16 bits: from (6), to (6; the rook's square for castling), promotion piece
/// (3). Zero is no move. A stored move may come from another position with the same key,
/// so it is used only when a legal move of the position packs to it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PackedMove(u16);

impl PackedMove {
    /// No move.
    pub const NONE: PackedMove = PackedMove(0);

    /// Packs `m`.
    #[inline]
    pub fn of(m: Move) -> PackedMove {
        let from = m.from().map_or(0, |s| s as u16);
        let promo = m.promotion().map_or(0, |r| r as u16);
        PackedMove(from | (m.to() as u16) << 6 | promo << 12)
    }

    /// The 16 bits, as stored.
    #[inline]
    pub fn bits(self) -> u16 {
        self.0
    }

    /// A move from its 16 stored bits.
    #[inline]
    pub fn from_bits(bits: u16) -> PackedMove {
        PackedMove(bits)
    }

    /// Whether this is no move.
    #[inline]
    pub fn is_none(self) -> bool {
        self.0 == 0
    }

    /// `Some(self)` unless this is no move.
    #[inline]
    pub fn some(self) -> Option<PackedMove> {
        (!self.is_none()).then_some(self)
    }

    /// The origin square.
    #[inline]
    pub fn from(self) -> Square {
        Square::new(u32::from(self.0 & 63))
    }

    /// The destination square (the rook's, for castling).
    #[inline]
    pub fn to(self) -> Square {
        Square::new(u32::from((self.0 >> 6) & 63))
    }

    /// The move among `moves` that packs to this, if any.
    #[inline]
    pub fn find_in(self, moves: &[Move]) -> Option<Move> {
        moves.iter().copied().find(|&m| PackedMove::of(m) == self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::{Chess, Position};

    #[test]
    fn every_legal_move_packs_apart_and_unpacks_to_itself() {
        let pos: Chess = "r3k2r/1P6/8/3pP3/8/8/8/R3K2R w KQkq d6 0 1"
            .parse::<shakmaty::fen::Fen>()
            .unwrap()
            .into_position(shakmaty::CastlingMode::Standard)
            .unwrap();
        let moves = pos.legal_moves();
        for &m in &moves {
            let p = PackedMove::of(m);
            assert!(!p.is_none());
            assert_eq!(p.find_in(&moves), Some(m));
            assert_eq!(Some(p.from()), m.from());
            assert_eq!(p.to(), m.to());
        }
        assert_eq!(PackedMove::NONE.find_in(&moves), None);
        assert_eq!(
            PackedMove::from_bits(PackedMove::of(moves[3]).bits()),
            PackedMove::of(moves[3])
        );
    }

    #[test]
    fn mate_scores_keep_their_distance_through_the_table() {
        // Mate in 5 plies from the root, found at ply 3: mate in 2 from the node; read
        // back at ply 7 it is mate in 9 from the root.
        assert_eq!(score_from_tt(score_to_tt(mate_in(5), 3), 7, 0), mate_in(9));
        assert_eq!(score_from_tt(score_to_tt(mated_in(6), 2), 4, 0), mated_in(8));
        assert_eq!(score_to_tt(123, 9), 123);
        assert!(is_mate(mated_in(MAX_PLY)) && !is_mate(MATE_IN_MAX - 1));
    }

    #[test]
    fn stored_mates_beyond_the_fifty_move_rule_are_only_wins() {
        // Mate in 9 plies from the node: sure while 9 plies remain before the rule's 100th.
        let stored = score_to_tt(mate_in(12), 3);
        assert_eq!(score_from_tt(stored, 3, 90), mate_in(12));
        // One ply fewer left: the mate may come too late, so it is a win, not a mate.
        assert_eq!(score_from_tt(stored, 3, 91), TB_WIN);
        assert!(!is_mate(score_from_tt(stored, 3, 91)));
        let stored = score_to_tt(mated_in(12), 3);
        assert_eq!(score_from_tt(stored, 5, 90), mated_in(14));
        assert_eq!(score_from_tt(stored, 5, 91), -TB_WIN);
        // Tablebase wins and plain scores are read as before.
        assert_eq!(score_from_tt(score_to_tt(TB_WIN - 20, 4), 6, 99), TB_WIN - 22);
        assert_eq!(score_from_tt(-345, 6, 99), -345);
    }
}
