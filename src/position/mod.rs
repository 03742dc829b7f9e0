//! The search's own position: what a node asks of the board, kept so that asking is cheap.
//!
//! shakmaty's `Chess` is a general-purpose position that answers every question from its
//! bitboards alone: who stands on a square (five bitboard tests), who gives check (worked
//! out at each call), which pieces are pinned (again). The search asks these questions
//! several times a node, so this position keeps the answers, as Stockfish's `Position`
//! and `StateInfo` do: a mailbox beside the bitboards, the Zobrist key, the checkers
//! (found once, when the move is made), and, worked out on first use and then kept, each
//! king's blockers and pinners and the squares from which each piece would give check.
//!
//! It is a leaf: squares, pieces and moves, built on shakmaty's attack tables, Zobrist
//! values and types, and nothing of the search, the net or the table. shakmaty stays the
//! referee: a position is made from a `Chess` and back, and the tests hold every field,
//! every generated list and every answer against shakmaty's along random games.
//!
//! Copy-make: [`Position::play`] changes a copy in place; the stack above keeps one
//! position a ply. En passant is kept only when a legal capture exists (so the key needs
//! no test), castling rights as the set of rooks that may still castle (Chess960's
//! included), each side found from its rook's file against its king's.

pub mod movegen;
mod moves;

use std::cell::OnceCell;

use shakmaty::{
    attacks,
    zobrist::{Zobrist64, ZobristValue},
    Bitboard, CastlingMode, CastlingSide, Chess, Color, EnPassantMode, FromSetup, Piece,
    Position as _, Rank, Role, Setup, Square,
};

pub use self::moves::{Move, MoveKind, MoveList, MAX_MOVES};

/// A king's blockers and their pinners, worked out on first use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pins {
    /// Pieces of either side that stand alone between the king and a slider of the other
    /// side: moving one of the king's own uncovers an attack on it, moving one of the
    /// other side's gives a discovered check.
    pub blockers: Bitboard,
    /// The other side's sliders that pin one of the king's own pieces.
    pub pinners: Bitboard,
}

/// What tells at a glance whether a move of the side to move gives check: the squares
/// from which each kind of piece would attack the other king, and the pieces whose
/// leaving their line uncovers a check by one of our sliders.
#[derive(Clone, Copy, Debug)]
pub struct CheckSquares {
    /// The other king.
    pub king: Square,
    /// By role, pawn first (the king's entry is empty).
    pub by_role: [Bitboard; 6],
    /// Our pieces alone between the other king and one of our sliders.
    pub discoverers: Bitboard,
}

/// The mailbox's code of a piece: its role's number, plus 8 for black. 0 is an empty
/// square.
#[inline(always)]
const fn piece_code(piece: Piece) -> u8 {
    piece.role as u8 | (piece.color as u8 ^ 1) << 3
}

/// Pieces by mailbox code.
const PIECES: [Option<Piece>; 16] = {
    let mut table = [None; 16];
    let roles = [Role::Pawn, Role::Knight, Role::Bishop, Role::Rook, Role::Queen, Role::King];
    let mut i = 0;
    while i < 6 {
        let role = roles[i];
        table[role as usize] = Some(Piece { color: Color::White, role });
        table[role as usize | 8] = Some(Piece { color: Color::Black, role });
        i += 1;
    }
    table
};

/// The Zobrist value of `piece` on `sq`.
#[inline(always)]
fn piece_key(sq: Square, piece: Piece) -> u64 {
    Zobrist64::zobrist_for_piece(sq, piece).0
}

/// The Zobrist value of the side to move (xored in when white is to move).
#[inline(always)]
fn turn_key() -> u64 {
    Zobrist64::zobrist_for_white_turn().0
}

/// The Zobrist value of an en passant square.
#[inline(always)]
fn en_passant_key(sq: Square) -> u64 {
    Zobrist64::zobrist_for_en_passant_file(sq.file()).0
}

/// A position of the search.
#[derive(Clone, Debug)]
pub struct Position {
    /// Pieces by role, pawn first.
    by_role: [Bitboard; 6],
    /// Pieces by colour, indexed by `Color as usize` (black 0, white 1, as shakmaty does).
    by_color: [Bitboard; 2],
    /// The piece on each square, by [`piece_code`].
    mailbox: [u8; 64],
    /// The Zobrist key (Polyglot's, as shakmaty computes it with `EnPassantMode::Legal`).
    key: u64,
    /// The pieces that give check to the side to move.
    checkers: Bitboard,
    /// The rooks that may still castle.
    castling: Bitboard,
    /// Plies since the last capture or pawn move.
    halfmoves: u32,
    /// The en passant square, only when a legal capture there exists.
    ep_square: Option<Square>,
    turn: Color,
    /// Each king's blockers and pinners, by colour, once asked for.
    pins: [OnceCell<Pins>; 2],
    /// The check squares of the side to move, once asked for.
    check_squares: OnceCell<Option<CheckSquares>>,
}

impl Position {
    /// The position of `pos`.
    pub fn from_chess(pos: &Chess) -> Position {
        let board = pos.board();
        let mut mailbox = [0; 64];
        for (sq, piece) in board.clone() {
            mailbox[sq as usize] = piece_code(piece);
        }
        let roles = [Role::Pawn, Role::Knight, Role::Bishop, Role::Rook, Role::Queen, Role::King];
        Position {
            by_role: roles.map(|r| board.by_role(r)),
            by_color: [board.by_color(Color::Black), board.by_color(Color::White)],
            mailbox,
            key: pos.zobrist_hash::<Zobrist64>(EnPassantMode::Legal).0,
            checkers: pos.checkers(),
            castling: pos.castles().castling_rights(),
            halfmoves: pos.halfmoves(),
            ep_square: pos.ep_square(EnPassantMode::Legal),
            turn: pos.turn(),
            pins: Default::default(),
            check_squares: OnceCell::new(),
        }
    }

    /// The same position as shakmaty's `Chess` (for the tablebases and the tests); the
    /// move number is lost (it reads 1). `None` only if shakmaty finds the position
    /// illegal, which a position reached by legal moves never is.
    pub fn to_chess(&self) -> Option<Chess> {
        let mut board = shakmaty::Board::empty();
        for sq in self.occupied() {
            board.set_piece_at(sq, self.piece_at(sq).expect("an occupied square"));
        }
        let setup = Setup {
            board,
            promoted: Bitboard(0),
            pockets: None,
            turn: self.turn,
            castling_rights: self.castling,
            ep_square: self.ep_square,
            remaining_checks: None,
            halfmoves: self.halfmoves,
            fullmoves: std::num::NonZeroU32::MIN,
        };
        Chess::from_setup(setup, CastlingMode::Chess960).ok()
    }

    // ------------------------------------------------------------------------------------
    // What stands where
    // ------------------------------------------------------------------------------------

    /// The side to move.
    #[inline(always)]
    pub fn turn(&self) -> Color {
        self.turn
    }

    /// The Zobrist key.
    #[inline(always)]
    pub fn key(&self) -> u64 {
        self.key
    }

    /// Plies since the last capture or pawn move.
    #[inline(always)]
    pub fn halfmoves(&self) -> u32 {
        self.halfmoves
    }

    /// The en passant square, when a legal capture there exists.
    #[inline(always)]
    pub fn ep_square(&self) -> Option<Square> {
        self.ep_square
    }

    /// The rooks that may still castle.
    #[inline(always)]
    pub fn castling_rights(&self) -> Bitboard {
        self.castling
    }

    /// Every piece.
    #[inline(always)]
    pub fn occupied(&self) -> Bitboard {
        self.by_color[0] | self.by_color[1]
    }

    /// The pieces of `color`.
    #[inline(always)]
    pub fn by_color(&self, color: Color) -> Bitboard {
        self.by_color[color as usize]
    }

    /// The pieces of `role`, both sides'.
    #[inline(always)]
    pub fn by_role(&self, role: Role) -> Bitboard {
        self.by_role[role as usize - 1]
    }

    /// The pieces of `role` and `color`.
    #[inline(always)]
    pub fn pieces(&self, color: Color, role: Role) -> Bitboard {
        self.by_role(role) & self.by_color(color)
    }

    /// The side to move's pieces.
    #[inline(always)]
    pub fn us(&self) -> Bitboard {
        self.by_color(self.turn)
    }

    /// The other side's pieces.
    #[inline(always)]
    pub fn them(&self) -> Bitboard {
        self.by_color(!self.turn)
    }

    /// The side to move's pieces of `role`.
    #[inline(always)]
    pub fn our(&self, role: Role) -> Bitboard {
        self.pieces(self.turn, role)
    }

    /// Bishops and queens, both sides'.
    #[inline(always)]
    pub fn diagonal_sliders(&self) -> Bitboard {
        self.by_role(Role::Bishop) | self.by_role(Role::Queen)
    }

    /// Rooks and queens, both sides'.
    #[inline(always)]
    pub fn straight_sliders(&self) -> Bitboard {
        self.by_role(Role::Rook) | self.by_role(Role::Queen)
    }

    /// The piece on `sq`.
    #[inline(always)]
    pub fn piece_at(&self, sq: Square) -> Option<Piece> {
        PIECES[usize::from(self.mailbox[sq as usize] & 15)]
    }

    /// The mailbox code of the piece on `sq` (0 for an empty square; the low three bits
    /// are the role's number).
    #[inline(always)]
    pub(crate) fn code_at(&self, sq: Square) -> u8 {
        self.mailbox[sq as usize]
    }

    /// The role of the piece on `sq`.
    #[inline(always)]
    pub fn role_at(&self, sq: Square) -> Option<Role> {
        self.piece_at(sq).map(|p| p.role)
    }

    /// The king of `color`.
    #[inline(always)]
    pub fn king_of(&self, color: Color) -> Square {
        self.pieces(color, Role::King).first().expect("a legal position has both kings")
    }

    /// The pieces of `attacker` that attack `sq` when the squares `occupied` are
    /// occupied (the pieces themselves are read from the board: a piece taken off
    /// `occupied` still attacks, as in shakmaty).
    #[inline(always)]
    pub fn attacks_to(&self, sq: Square, attacker: Color, occupied: Bitboard) -> Bitboard {
        self.by_color(attacker)
            & ((attacks::rook_attacks(sq, occupied) & self.straight_sliders())
                | (attacks::bishop_attacks(sq, occupied) & self.diagonal_sliders())
                | (attacks::knight_attacks(sq) & self.by_role(Role::Knight))
                | (attacks::king_attacks(sq) & self.by_role(Role::King))
                | (attacks::pawn_attacks(!attacker, sq) & self.by_role(Role::Pawn)))
    }

    /// Every piece of either side that attacks `sq`, given `occupied`.
    #[inline(always)]
    pub fn attackers(&self, sq: Square, occupied: Bitboard) -> Bitboard {
        ((attacks::rook_attacks(sq, occupied) & self.straight_sliders())
            | (attacks::bishop_attacks(sq, occupied) & self.diagonal_sliders())
            | (attacks::knight_attacks(sq) & self.by_role(Role::Knight))
            | (attacks::king_attacks(sq) & self.by_role(Role::King))
            | (attacks::pawn_attacks(Color::White, sq) & self.pieces(Color::Black, Role::Pawn))
            | (attacks::pawn_attacks(Color::Black, sq) & self.pieces(Color::White, Role::Pawn)))
            & occupied
    }

    /// The pieces that give check to the side to move.
    #[inline(always)]
    pub fn checkers(&self) -> Bitboard {
        self.checkers
    }

    /// Whether the side to move is in check.
    #[inline(always)]
    pub fn is_check(&self) -> bool {
        self.checkers.any()
    }

    fn find_checkers(&self) -> Bitboard {
        self.attacks_to(self.king_of(self.turn), !self.turn, self.occupied())
    }

    /// The blockers and pinners of the king of `color`.
    #[inline]
    pub fn pins(&self, color: Color) -> &Pins {
        self.pins[color as usize].get_or_init(|| self.find_pins(color))
    }

    /// The side to move's pieces pinned to its king.
    #[inline]
    pub fn pinned(&self) -> Bitboard {
        self.pins(self.turn).blockers & self.us()
    }

    fn find_pins(&self, color: Color) -> Pins {
        let king = self.king_of(color);
        let snipers = (attacks::rook_attacks(king, Bitboard(0)) & self.straight_sliders())
            | (attacks::bishop_attacks(king, Bitboard(0)) & self.diagonal_sliders());
        let occupied = self.occupied();
        let mut pins = Pins::default();
        for sniper in snipers & self.by_color(!color) {
            let between = attacks::between(king, sniper) & occupied;
            if between.count() == 1 {
                pins.blockers |= between;
                if (between & self.by_color(color)).any() {
                    pins.pinners |= Bitboard::from(sniper);
                }
            }
        }
        pins
    }

    /// The check squares of the side to move (`None` without another king, which a legal
    /// game never has).
    #[inline]
    pub fn check_squares(&self) -> Option<&CheckSquares> {
        self.check_squares.get_or_init(|| self.find_check_squares()).as_ref()
    }

    fn find_check_squares(&self) -> Option<CheckSquares> {
        let them = !self.turn;
        let king = self.pieces(them, Role::King).first()?;
        let occupied = self.occupied();
        let bishop = attacks::bishop_attacks(king, occupied);
        let rook = attacks::rook_attacks(king, occupied);
        let by_role = [
            attacks::pawn_attacks(them, king),
            attacks::knight_attacks(king),
            bishop,
            rook,
            bishop | rook,
            Bitboard(0),
        ];
        let discoverers = self.pins(them).blockers & self.us();
        Some(CheckSquares { king, by_role, discoverers })
    }

    /// Whether neither side can ever mate (shakmaty's rule, which counts a helpmate as
    /// possible: lone kings, a king and a knight against nothing but queens, bishops all
    /// on one colour without knights or pawns).
    pub fn is_insufficient_material(&self) -> bool {
        self.has_insufficient_material(Color::White) && self.has_insufficient_material(Color::Black)
    }

    fn has_insufficient_material(&self, color: Color) -> bool {
        let ours = self.by_color(color);
        if (ours & (self.by_role(Role::Pawn) | self.straight_sliders())).any() {
            return false;
        }
        if (ours & self.by_role(Role::Knight)).any() {
            return ours.count() <= 2
                && (self.by_color(!color)
                    & !self.by_role(Role::King)
                    & !self.by_role(Role::Queen))
                .is_empty();
        }
        if (ours & self.by_role(Role::Bishop)).any() {
            let bishops = self.by_role(Role::Bishop);
            let same_color = (bishops & Bitboard::DARK_SQUARES).is_empty()
                || (bishops & Bitboard::LIGHT_SQUARES).is_empty();
            return same_color
                && self.by_role(Role::Knight).is_empty()
                && self.by_role(Role::Pawn).is_empty();
        }
        true
    }

    /// The castling rook of `color` on `side`, if it may still castle.
    #[inline]
    pub fn castling_rook(&self, color: Color, side: CastlingSide) -> Option<Square> {
        let rooks = self.castling & Bitboard::from_rank(color.backrank());
        let king = self.king_of(color);
        match side {
            CastlingSide::QueenSide => rooks.first().filter(|r| r.file() < king.file()),
            CastlingSide::KingSide => rooks.last().filter(|r| r.file() > king.file()),
        }
    }

    // ------------------------------------------------------------------------------------
    // Making moves
    // ------------------------------------------------------------------------------------

    #[inline(always)]
    fn remove(&mut self, sq: Square, piece: Piece) {
        let bb = Bitboard::from(sq);
        self.by_role[piece.role as usize - 1] ^= bb;
        self.by_color[piece.color as usize] ^= bb;
        self.mailbox[sq as usize] = 0;
    }

    #[inline(always)]
    fn put(&mut self, sq: Square, piece: Piece) {
        let bb = Bitboard::from(sq);
        self.by_role[piece.role as usize - 1] |= bb;
        self.by_color[piece.color as usize] |= bb;
        self.mailbox[sq as usize] = piece_code(piece);
    }

    /// The Zobrist value of castling right `rook` of `color`, whose king stands on `king`.
    #[inline]
    fn castling_key(color: Color, king: Square, rook: Square) -> u64 {
        let side = CastlingSide::from_king_side(king.file() < rook.file());
        Zobrist64::zobrist_for_castling_right(color, side).0
    }

    /// Takes away the castling rights of the rooks in `lost`, given both kings' squares
    /// before the move.
    #[inline]
    fn lose_castling(&mut self, lost: Bitboard, kings: [Square; 2]) {
        self.castling ^= lost;
        for rook in lost {
            let color = if rook.rank() == Rank::First { Color::White } else { Color::Black };
            self.key ^= Position::castling_key(color, kings[color as usize], rook);
        }
    }

    /// Plays legal move `m` (on a copy of the position before it: see also
    /// [`Position::play_into`]).
    #[inline]
    pub fn play(&mut self, m: Move) {
        self.pins = Default::default();
        self.check_squares = OnceCell::new();
        self.apply(m);
    }

    /// Writes into `next` this position with legal move `m` played: copy-make without
    /// copying what this position worked out about itself (pins, check squares), which
    /// the next one must work out anew.
    #[inline]
    pub fn play_into(&self, m: Move, next: &mut Position) {
        next.by_role = self.by_role;
        next.by_color = self.by_color;
        next.mailbox = self.mailbox;
        next.key = self.key;
        next.castling = self.castling;
        next.halfmoves = self.halfmoves;
        next.ep_square = self.ep_square;
        next.turn = self.turn;
        next.pins = Default::default();
        next.check_squares = OnceCell::new();
        next.apply(m);
    }

    /// [`Position::play`] but for the caches, which the caller has emptied.
    #[inline(always)]
    fn apply(&mut self, m: Move) {
        let us = self.turn;
        let them = !us;
        let (from, to) = (m.from(), m.to());
        let mut key = self.key ^ turn_key();
        if let Some(ep) = self.ep_square.take() {
            key ^= en_passant_key(ep);
        }
        self.halfmoves += 1;
        if self.castling.any() {
            // A rook that moves or is taken loses its right, a king that moves both.
            let mut touched = Bitboard::from(from) | Bitboard::from(to);
            if m.role() == Role::King {
                touched |= Bitboard::from_rank(us.backrank());
            }
            let lost = self.castling & touched;
            if lost.any() {
                self.key = key;
                self.lose_castling(lost, [self.king_of(Color::Black), self.king_of(Color::White)]);
                key = self.key;
            }
        }
        match m.kind() {
            MoveKind::Normal => {
                let role = m.role();
                if let Some(captured) = m.capture() {
                    let piece = captured.of(them);
                    self.remove(to, piece);
                    key ^= piece_key(to, piece);
                    self.halfmoves = 0;
                }
                let piece = role.of(us);
                self.remove(from, piece);
                let placed = m.promotion().map_or(piece, |p| p.of(us));
                self.put(to, placed);
                key ^= piece_key(from, piece) ^ piece_key(to, placed);
                if role == Role::Pawn {
                    self.halfmoves = 0;
                    if (from as u32 ^ to as u32) == 16 {
                        let ep = Square::new((from as u32 + to as u32) / 2);
                        if self.en_passant_is_legal(ep, to, them) {
                            self.ep_square = Some(ep);
                            key ^= en_passant_key(ep);
                        }
                    }
                }
            }
            MoveKind::EnPassant => {
                let captured = Square::from_coords(to.file(), from.rank());
                let (pawn, theirs) = (us.pawn(), them.pawn());
                self.remove(captured, theirs);
                self.remove(from, pawn);
                self.put(to, pawn);
                key ^= piece_key(captured, theirs) ^ piece_key(from, pawn) ^ piece_key(to, pawn);
                self.halfmoves = 0;
            }
            MoveKind::Castle => {
                let side = CastlingSide::from_king_side(from < to);
                let (king_to, rook_to) = (side.king_to(us), side.rook_to(us));
                let (king, rook) = (us.king(), us.rook());
                self.remove(from, king);
                self.remove(to, rook);
                self.put(king_to, king);
                self.put(rook_to, rook);
                key ^= piece_key(from, king)
                    ^ piece_key(to, rook)
                    ^ piece_key(king_to, king)
                    ^ piece_key(rook_to, rook);
            }
        }
        self.key = key;
        self.turn = them;
        self.checkers = if m.is_plain() {
            self.checkers_after(m.role(), from, to)
        } else {
            self.find_checkers()
        };
    }

    /// The checkers of the side to move after a plain move of `role` (already made) from
    /// `from` to `to`: the moved piece itself, and a slider whose line to the king the
    /// move opened. Nothing else can check: the king was not in check before.
    #[inline(always)]
    fn checkers_after(&self, role: Role, from: Square, to: Square) -> Bitboard {
        let king = self.king_of(self.turn);
        let mover = !self.turn;
        let occupied = self.occupied();
        let direct = match role {
            Role::Pawn => attacks::pawn_attacks(mover, to).contains(king),
            Role::Knight => attacks::knight_attacks(to).contains(king),
            Role::Bishop => attacks::bishop_attacks(to, occupied).contains(king),
            Role::Rook => attacks::rook_attacks(to, occupied).contains(king),
            Role::Queen => attacks::queen_attacks(to, occupied).contains(king),
            Role::King => false,
        };
        let mut checkers = if direct { Bitboard::from(to) } else { Bitboard(0) };
        // A line through `from` to the king, unless the piece stayed on it.
        if attacks::ray(king, from).any() && !attacks::aligned(king, from, to) {
            let ours = self.by_color(mover);
            checkers |= attacks::rook_attacks(king, occupied) & self.straight_sliders() & ours;
            checkers |= attacks::bishop_attacks(king, occupied) & self.diagonal_sliders() & ours;
        }
        checkers
    }

    /// Whether `side`, to move after a double push to `pushed` over `ep`, can take en
    /// passant legally (the pieces already moved).
    fn en_passant_is_legal(&self, ep: Square, pushed: Square, side: Color) -> bool {
        let takers = attacks::pawn_attacks(!side, ep) & self.pieces(side, Role::Pawn);
        if takers.is_empty() {
            return false;
        }
        let king = self.king_of(side);
        let occupied = self.occupied();
        takers.into_iter().any(|from| {
            let after = occupied.without(from).without(pushed).with(ep);
            self.attacks_to(king, !side, after).without(pushed).is_empty()
        })
    }

    /// Passes the turn (the side to move must not be in check): the other side moves,
    /// any en passant right is gone, the fifty-move counter stays.
    #[inline]
    pub fn play_null(&mut self) {
        debug_assert!(!self.is_check(), "a null move in check");
        self.key ^= turn_key();
        if let Some(ep) = self.ep_square.take() {
            self.key ^= en_passant_key(ep);
        }
        self.turn = !self.turn;
        self.checkers = Bitboard(0);
        // The pins stay: the pieces have not moved.
        self.check_squares = OnceCell::new();
    }
}

#[cfg(test)]
mod tests;
