//! The search's move: everything shakmaty's `Move` says, in 32 bits whose low 16 are the
//! transposition table's [`PackedMove`].
//!
//! shakmaty's `Move` is an enum of five bytes, matched at every `to()`, `role()` or
//! `capture()`; here each of those is a shift and a mask. The fields are the same (kind,
//! moving piece, origin, target, captured piece, promotion piece), so two moves are equal
//! exactly when their shakmaty forms are: killers, countermoves and the excluded move keep
//! the identity they had, and the search its tree.
//!
//! Layout, low bit first: origin (6), target (6; the rook's square for castling, as in
//! shakmaty), promotion role (3; 0 for none), a spare bit — those 16 are the stored move —
//! then the moving role (3), the captured role (3; a pawn for en passant) and the kind (2).

use std::num::NonZeroU32;

use arrayvec::ArrayVec;
use shakmaty::{CastlingSide, Role, Square};

use crate::types::PackedMove;

/// What kind of move a [`Move`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MoveKind {
    /// A piece moves, maybe capturing, maybe promoting.
    Normal = 0,
    /// A pawn takes a pawn that just passed it.
    EnPassant = 1,
    /// The king castles: from its square "to" the rook's.
    Castle = 2,
}

/// A move of the search (see the module header for its bits). Never zero, so that an
/// `Option<Move>` is four bytes.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Move(NonZeroU32);

/// Roles by their shakmaty number (1 to 6), `None` at 0 and beyond.
const ROLES: [Option<Role>; 8] = [
    None,
    Some(Role::Pawn),
    Some(Role::Knight),
    Some(Role::Bishop),
    Some(Role::Rook),
    Some(Role::Queen),
    Some(Role::King),
    None,
];

/// Roles by number for a field that always holds one (the moving piece): the unused
/// numbers 0 and 7 read as pawn and king, so that the lookup needs no test.
const MOVER: [Role; 8] = [
    Role::Pawn,
    Role::Pawn,
    Role::Knight,
    Role::Bishop,
    Role::Rook,
    Role::Queen,
    Role::King,
    Role::King,
];

const ROLE_SHIFT: u32 = 16;
const CAPTURE_SHIFT: u32 = 19;
const KIND_SHIFT: u32 = 22;

impl Move {
    /// A piece of role `role` from `from` to `to`, capturing `capture` and promoting to
    /// `promotion`.
    #[inline(always)]
    pub const fn normal(
        role: Role,
        from: Square,
        to: Square,
        capture: Option<Role>,
        promotion: Option<Role>,
    ) -> Move {
        let capture = match capture {
            Some(r) => r as u32,
            None => 0,
        };
        let promotion = match promotion {
            Some(r) => r as u32,
            None => 0,
        };
        Move::assemble(MoveKind::Normal, role, from, to, capture, promotion)
    }

    /// A capture by `role` of the piece whose mailbox code is `victim` (its low three
    /// bits are the captured role's number), promoting to `promotion`: the generator's
    /// way, reading the victim straight from the board.
    #[inline(always)]
    pub(super) const fn capture_code(
        role: Role,
        from: Square,
        to: Square,
        victim: u8,
        promotion: Option<Role>,
    ) -> Move {
        let promotion = match promotion {
            Some(r) => r as u32,
            None => 0,
        };
        Move::assemble(MoveKind::Normal, role, from, to, (victim & 7) as u32, promotion)
    }

    /// A quiet move of `role`: no capture, no promotion.
    #[inline(always)]
    pub const fn quiet(role: Role, from: Square, to: Square) -> Move {
        Move::assemble(MoveKind::Normal, role, from, to, 0, 0)
    }

    /// The pawn on `from` takes en passant on `to`.
    #[inline(always)]
    pub const fn en_passant(from: Square, to: Square) -> Move {
        Move::assemble(MoveKind::EnPassant, Role::Pawn, from, to, Role::Pawn as u32, 0)
    }

    /// The king on `king` castles with the rook on `rook`.
    #[inline(always)]
    pub const fn castle(king: Square, rook: Square) -> Move {
        Move::assemble(MoveKind::Castle, Role::King, king, rook, 0, 0)
    }

    #[inline(always)]
    const fn assemble(
        kind: MoveKind,
        role: Role,
        from: Square,
        to: Square,
        capture: u32,
        promotion: u32,
    ) -> Move {
        let bits = from as u32
            | (to as u32) << 6
            | promotion << 12
            | (role as u32) << ROLE_SHIFT
            | capture << CAPTURE_SHIFT
            | (kind as u32) << KIND_SHIFT;
        // The role is never 0, so neither are the bits.
        match NonZeroU32::new(bits) {
            Some(bits) => Move(bits),
            None => panic!("a move has a role"),
        }
    }

    #[inline(always)]
    const fn bits(self) -> u32 {
        self.0.get()
    }

    /// The origin square (the king's, for castling).
    #[inline(always)]
    pub const fn from(self) -> Square {
        Square::new(self.bits() & 63)
    }

    /// The target square (the rook's, for castling).
    #[inline(always)]
    pub const fn to(self) -> Square {
        Square::new((self.bits() >> 6) & 63)
    }

    /// The moving piece's role (the king, for castling).
    #[inline(always)]
    pub fn role(self) -> Role {
        MOVER[((self.bits() >> ROLE_SHIFT) & 7) as usize]
    }

    /// The moving piece's role as shakmaty numbers it, 1 (pawn) to 6 (king): an index
    /// without a lookup.
    #[inline(always)]
    pub const fn role_number(self) -> usize {
        ((self.bits() >> ROLE_SHIFT) & 7) as usize
    }

    /// The captured piece's role as shakmaty numbers it, 0 for none (a pawn, 1, for en
    /// passant).
    #[inline(always)]
    pub const fn capture_number(self) -> usize {
        ((self.bits() >> CAPTURE_SHIFT) & 7) as usize
    }

    /// The captured piece's role (a pawn, for en passant).
    #[inline(always)]
    pub fn capture(self) -> Option<Role> {
        ROLES[((self.bits() >> CAPTURE_SHIFT) & 7) as usize]
    }

    /// The role a pawn promotes to.
    #[inline(always)]
    pub fn promotion(self) -> Option<Role> {
        ROLES[((self.bits() >> 12) & 7) as usize]
    }

    /// The kind of move.
    #[inline(always)]
    pub const fn kind(self) -> MoveKind {
        match (self.bits() >> KIND_SHIFT) & 3 {
            0 => MoveKind::Normal,
            1 => MoveKind::EnPassant,
            _ => MoveKind::Castle,
        }
    }

    /// Whether the move captures (en passant included).
    #[inline(always)]
    pub const fn is_capture(self) -> bool {
        self.bits() & (7 << CAPTURE_SHIFT) != 0
    }

    /// Whether the move promotes.
    #[inline(always)]
    pub const fn is_promotion(self) -> bool {
        self.bits() & (7 << 12) != 0
    }

    /// Whether this is a plain move: neither castling nor en passant nor a promotion (one
    /// piece leaves one square for another).
    #[inline(always)]
    pub const fn is_plain(self) -> bool {
        self.bits() & (3 << KIND_SHIFT | 7 << 12) == 0
    }

    /// Whether the move promotes to a queen.
    #[inline(always)]
    pub const fn is_queen_promotion(self) -> bool {
        self.bits() & (7 << 12) == (Role::Queen as u32) << 12
    }

    /// Whether this is castling.
    #[inline(always)]
    pub const fn is_castle(self) -> bool {
        self.bits() & (3 << KIND_SHIFT) == (MoveKind::Castle as u32) << KIND_SHIFT
    }

    /// Whether this is an en passant capture.
    #[inline(always)]
    pub const fn is_en_passant(self) -> bool {
        self.bits() & (3 << KIND_SHIFT) == (MoveKind::EnPassant as u32) << KIND_SHIFT
    }

    /// Whether the move resets the fifty-move counter (a capture or a pawn move).
    #[inline(always)]
    pub const fn is_zeroing(self) -> bool {
        self.is_capture() || (self.bits() >> ROLE_SHIFT) & 7 == Role::Pawn as u32
    }

    /// The side castled toward, for castling.
    #[inline]
    pub fn castling_side(self) -> Option<CastlingSide> {
        self.is_castle().then(|| CastlingSide::from_king_side(self.from() < self.to()))
    }

    /// The move as the transposition table stores it.
    #[inline(always)]
    pub fn packed(self) -> PackedMove {
        PackedMove::from_bits((self.bits() & 0x7fff) as u16)
    }

    /// The same move as shakmaty writes it.
    pub fn to_shakmaty(self) -> shakmaty::Move {
        match self.kind() {
            MoveKind::Normal => shakmaty::Move::Normal {
                role: self.role(),
                from: self.from(),
                capture: self.capture(),
                to: self.to(),
                promotion: self.promotion(),
            },
            MoveKind::EnPassant => shakmaty::Move::EnPassant { from: self.from(), to: self.to() },
            MoveKind::Castle => shakmaty::Move::Castle { king: self.from(), rook: self.to() },
        }
    }

    /// A shakmaty move in this form; `None` for a drop, which chess has not.
    pub fn from_shakmaty(m: shakmaty::Move) -> Option<Move> {
        Some(match m {
            shakmaty::Move::Normal { role, from, capture, to, promotion } => {
                Move::normal(role, from, to, capture, promotion)
            }
            shakmaty::Move::EnPassant { from, to } => Move::en_passant(from, to),
            shakmaty::Move::Castle { king, rook } => Move::castle(king, rook),
            shakmaty::Move::Put { .. } => return None,
        })
    }
}

impl std::fmt::Debug for Move {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.to_shakmaty())
    }
}

impl std::fmt::Display for Move {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.to_shakmaty())
    }
}

/// Room for every legal move of a position (at most 218) and then some.
pub const MAX_MOVES: usize = 256;

/// A list of moves on the stack.
pub type MoveList = ArrayVec<Move, MAX_MOVES>;

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::{fen::Fen, CastlingMode, Chess, Position};

    /// Every legal move of positions rich in captures, promotions, en passant and castling
    /// (Chess960 included) comes back from its 32 bits as the same shakmaty move, reads
    /// the same through every accessor, and packs as the table always packed it; two
    /// moves are equal exactly when their shakmaty forms are.
    #[test]
    fn moves_keep_every_field_and_equality() {
        let fens = [
            ("r3k2r/1P6/8/3pP3/8/8/8/R3K2R w KQkq d6 0 1", CastlingMode::Standard),
            (
                "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
                CastlingMode::Standard,
            ),
            ("1r2k1r1/8/8/8/8/8/6p1/1R2K1R1 b KQkq - 0 1", CastlingMode::Chess960),
        ];
        let mut all = Vec::new();
        for (fen, mode) in fens {
            let pos: Chess = fen.parse::<Fen>().unwrap().into_position(mode).unwrap();
            for m in pos.legal_moves() {
                let ours = Move::from_shakmaty(m).unwrap();
                assert_eq!(ours.to_shakmaty(), m);
                assert_eq!(Some(ours.from()), m.from());
                assert_eq!(ours.to(), m.to());
                assert_eq!(ours.role(), m.role());
                assert_eq!(ours.role_number(), m.role() as usize);
                assert_eq!(ours.capture_number(), m.capture().map_or(0, |r| r as usize));
                assert_eq!(ours.capture(), m.capture());
                assert_eq!(ours.promotion(), m.promotion());
                assert_eq!(ours.is_capture(), m.is_capture());
                assert_eq!(ours.is_promotion(), m.is_promotion());
                assert_eq!(ours.is_queen_promotion(), m.promotion() == Some(Role::Queen));
                assert_eq!(ours.is_castle(), m.is_castle());
                assert_eq!(ours.is_en_passant(), m.is_en_passant());
                assert_eq!(ours.is_zeroing(), m.is_zeroing());
                assert_eq!(ours.castling_side(), m.castling_side());
                let plain = matches!(m, shakmaty::Move::Normal { promotion: None, .. });
                assert_eq!(ours.is_plain(), plain);
                assert_eq!(ours.packed(), PackedMove::of(m));
                all.push((ours, m));
            }
        }
        assert!(
            all.iter().any(|(m, _)| m.is_castle()) && all.iter().any(|(m, _)| m.is_en_passant())
        );
        for &(a, sa) in &all {
            for &(b, sb) in &all {
                assert_eq!(a == b, sa == sb, "{sa:?} {sb:?}");
            }
        }
        assert_eq!(std::mem::size_of::<Option<Move>>(), 4);
    }
}
