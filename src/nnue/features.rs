//! HalfKP feature indexing (docs/net-format.md §3).
//!
//! A feature is the pair (own king square, non-king piece on a square), seen from one
//! perspective. Black's view is the board rotated by 180° (`sq ^ 63`), applied to the
//! king square and the piece square alike. Each of the 64 king blocks holds 641 slots:
//! slot 0 is unused and slots 1..=640 are 10 piece kinds × 64 squares.

use arrayvec::ArrayVec;
use shakmaty::{Bitboard, Board, Color, Piece, Role, Square};

use crate::position::Position;

/// Number of HalfKP inputs: 64 king squares × 641 slots.
pub const INPUTS: usize = 64 * BLOCK;
/// Slots per king block (one unused slot plus 10 × 64 piece-squares).
pub const BLOCK: usize = 641;
/// Piece-square slots per king block, excluding the unused slot 0.
pub const PIECE_SQUARES: usize = 640;
/// At most this many features are active per perspective (32 pieces minus two kings).
pub const MAX_ACTIVE: usize = 30;

/// The active feature indices of one perspective.
pub type FeatureList = ArrayVec<usize, MAX_ACTIVE>;

/// Maps a square into `perspective`'s frame: identity for White, 180° rotation for Black.
#[inline]
pub fn orient(perspective: Color, sq: Square) -> usize {
    match perspective {
        Color::White => sq.to_usize(),
        Color::Black => sq.to_usize() ^ 63,
    }
}

/// The piece-square slot (0..640) of a non-king `piece` on `sq`, seen from `perspective`,
/// without the king block and without the unused slot:
/// `64 * (2 * (role - 1) + enemy) + orient(sq)`.
#[inline]
pub fn piece_square(perspective: Color, piece: Piece, sq: Square) -> usize {
    debug_assert!(piece.role != Role::King, "kings are not HalfKP features");
    let enemy = usize::from(piece.color != perspective);
    64 * (2 * (piece.role as usize - 1) + enemy) + orient(perspective, sq)
}

/// The HalfKP index of a non-king `piece` on `sq` for `perspective`, whose own king is on `king`.
#[inline]
pub fn index(perspective: Color, king: Square, piece: Piece, sq: Square) -> usize {
    BLOCK * orient(perspective, king) + 1 + piece_square(perspective, piece, sq)
}

/// Where the features are read from: which pieces stand where. Both shakmaty's board
/// (tests, tools, the trainer) and the search's own position provide it.
pub trait PieceSets {
    /// The king of `color`, if there is one.
    fn king_of(&self, color: Color) -> Option<Square>;
    /// The squares of `piece`.
    fn by_piece(&self, piece: Piece) -> Bitboard;
}

impl PieceSets for Board {
    #[inline]
    fn king_of(&self, color: Color) -> Option<Square> {
        Board::king_of(self, color)
    }

    #[inline]
    fn by_piece(&self, piece: Piece) -> Bitboard {
        Board::by_piece(self, piece)
    }
}

impl PieceSets for Position {
    #[inline]
    fn king_of(&self, color: Color) -> Option<Square> {
        self.pieces(color, Role::King).first()
    }

    #[inline]
    fn by_piece(&self, piece: Piece) -> Bitboard {
        self.pieces(piece.color, piece.role)
    }
}

/// The pieces that are features (kings are not), by colour and role.
pub const FEATURE_PIECES: [Piece; 10] = {
    use Color::{Black, White};
    [
        White.pawn(),
        White.knight(),
        White.bishop(),
        White.rook(),
        White.queen(),
        Black.pawn(),
        Black.knight(),
        Black.bishop(),
        Black.rook(),
        Black.queen(),
    ]
};

/// The active features of `board` from `perspective`: every non-king piece, paired with
/// that side's king square (piece by piece; the sums they feed do not depend on the
/// order). Empty without a king of `perspective`; at most [`MAX_ACTIVE`].
pub fn active<B: PieceSets + ?Sized>(board: &B, perspective: Color) -> FeatureList {
    let mut list = FeatureList::new();
    let Some(king) = board.king_of(perspective) else {
        return list;
    };
    for piece in FEATURE_PIECES {
        for sq in board.by_piece(piece) {
            if list.try_push(index(perspective, king, piece, sq)).is_err() {
                return list;
            }
        }
    }
    list
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::fen::Fen;

    /// The board of a FEN, legal or not: the features only read pieces.
    fn board(fen: &str) -> Board {
        fen.parse::<Fen>().unwrap().into_setup().board
    }

    fn sorted(mut v: FeatureList) -> Vec<usize> {
        v.sort_unstable();
        v.to_vec()
    }

    // The worked examples of docs/net-format.md §3.4, computed by hand there.
    #[test]
    fn start_position_indices() {
        let b = board("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
        let mut white: Vec<usize> = (2573..=2580).chain(2677..=2684).collect();
        white.extend([
            2694, 2699, 2814, 2819, 2823, 2826, 2943, 2946, 2949, 2956, 3069, 3076, 3080, 3200,
        ]);
        assert_eq!(sorted(active(&b, Color::White)), white);
        let mut black: Vec<usize> = (1932..=1939).chain(2036..=2043).collect();
        black.extend([
            2053, 2058, 2173, 2178, 2182, 2185, 2302, 2305, 2308, 2315, 2428, 2435, 2440, 2560,
        ]);
        assert_eq!(sorted(active(&b, Color::Black)), black);
    }

    #[test]
    fn small_position_indices() {
        let b = board("8/8/8/8/8/2k5/3p4/4K2R b K - 0 1");
        assert_eq!(sorted(active(&b, Color::White)), vec![2640, 2956]);
        assert_eq!(sorted(active(&b, Color::Black)), vec![28898, 29350]);
    }

    #[test]
    fn rotation_not_flip() {
        // h8 seen by Black is a1; a rank-only mirror would give h1.
        assert_eq!(orient(Color::Black, Square::H8), 0);
        assert_eq!(orient(Color::Black, Square::E8), 3);
        assert_eq!(orient(Color::White, Square::E8), 60);
    }

    #[test]
    fn indices_stay_in_range_and_skip_slot_zero() {
        for king in Square::ALL {
            for sq in Square::ALL {
                for role in [Role::Pawn, Role::Knight, Role::Bishop, Role::Rook, Role::Queen] {
                    for color in Color::ALL {
                        for persp in Color::ALL {
                            let i = index(persp, king, Piece { color, role }, sq);
                            assert!(i < INPUTS);
                            assert_ne!(i % BLOCK, 0);
                        }
                    }
                }
            }
        }
    }
}
